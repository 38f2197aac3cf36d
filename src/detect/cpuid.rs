//! CPUID facts, decoded from any [`CpuidSource`]: the live CPU, or a recorded dump (the files
//! under `tests/data/cpuid/`, format `leaf subleaf eax ebx ecx edx` in hex per line), so that
//! the decoding is tested against real hypervisors' values instead of invented ones.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::hypervisor::{self, HypervisorLeaves};

/// Something that answers CPUID queries. `None` means the leaf is absent (beyond the maximum,
/// or not recorded in a dump).
pub trait CpuidSource {
    fn leaf(&self, leaf: u32, subleaf: u32) -> Option<[u32; 4]>;
}

/// The CPU we run on. Basic and extended leaves beyond their maxima are reported absent (Intel
/// CPUs answer them with the highest basic leaf's data, which would decode as garbage).
#[derive(Debug, Default)]
pub struct LiveCpuid;

#[cfg(target_arch = "x86_64")]
impl CpuidSource for LiveCpuid {
    fn leaf(&self, leaf: u32, subleaf: u32) -> Option<[u32; 4]> {
        use crate::sys::tsc::cpuid_count;
        let max = match leaf {
            0..=0x3fff_ffff => cpuid_count(0, 0)[0],
            0x8000_0000..=0x8fff_ffff => cpuid_count(0x8000_0000, 0)[0],
            // Hypervisor leaves have no architectural maximum; callers validate signatures.
            _ => u32::MAX,
        };
        (leaf <= max).then(|| cpuid_count(leaf, subleaf))
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl CpuidSource for LiveCpuid {
    fn leaf(&self, _leaf: u32, _subleaf: u32) -> Option<[u32; 4]> {
        None
    }
}

/// A recorded CPUID dump.
#[derive(Debug, Clone, Default)]
pub struct CpuidDump {
    leaves: BTreeMap<(u32, u32), [u32; 4]>,
}

/// A line of a dump that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {what} (expected `leaf subleaf eax ebx ecx edx` in hex)")]
pub struct DumpError {
    pub line: usize,
    pub what: String,
}

impl CpuidDump {
    /// Parses a dump; `#` lines and blank lines are skipped.
    pub fn parse(text: &str) -> Result<Self, DumpError> {
        let mut leaves = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 6 {
                return Err(DumpError {
                    line: i + 1,
                    what: format!("{} fields", fields.len()),
                });
            }
            let mut v = [0u32; 6];
            for (slot, f) in v.iter_mut().zip(&fields) {
                let digits = f.trim_start_matches("0x").trim_start_matches("0X");
                *slot = u32::from_str_radix(digits, 16).map_err(|e| DumpError {
                    line: i + 1,
                    what: format!("'{f}': {e}"),
                })?;
            }
            leaves.insert((v[0], v[1]), [v[2], v[3], v[4], v[5]]);
        }
        Ok(CpuidDump { leaves })
    }
}

impl CpuidSource for CpuidDump {
    fn leaf(&self, leaf: u32, subleaf: u32) -> Option<[u32; 4]> {
        self.leaves.get(&(leaf, subleaf)).copied()
    }
}

/// What CPUID says, decoded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuidFacts {
    pub vendor: Option<String>,
    pub brand: Option<String>,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub stepping: Option<u32>,
    /// `CPUID.1:ECX[31]`.
    pub hypervisor_bit: bool,
    /// `CPUID.80000007H:EDX[8]`.
    pub invariant_tsc: bool,
    /// `CPUID.80000001H:EDX[27]`.
    pub rdtscp: bool,
    /// `CPUID.(7,0):ECX[22]`.
    pub rdpid: bool,
    /// Leaf 0x15: TSC/crystal ratio and crystal Hz, and the TSC Hz they give.
    pub leaf_15_tsc_hz: Option<f64>,
    /// Leaf 0x16: base frequency in MHz (the nominal core clock, not always the TSC rate).
    pub leaf_16_base_mhz: Option<u32>,
    /// The hypervisor leaves found from 0x40000000 in 0x100 steps.
    pub hypervisor: HypervisorLeaves,
    /// A confidential-computing guest named by CPUID: "Intel TDX" when leaf 0x21 carries the
    /// "IntelTDX    " signature.
    pub confidential_guest: Option<String>,
}

fn ascii(regs: &[u32]) -> String {
    let bytes: Vec<u8> = regs.iter().flat_map(|r| r.to_le_bytes()).collect();
    String::from_utf8_lossy(&bytes)
        .trim_matches(char::from(0))
        .trim()
        .to_string()
}

impl CpuidFacts {
    /// Decodes the facts from `src`.
    pub fn decode(src: &dyn CpuidSource) -> Self {
        let mut f = CpuidFacts::default();
        let max_basic = src.leaf(0, 0).map(|r| r[0]);
        if let Some(r) = src.leaf(0, 0) {
            f.vendor = Some(ascii(&[r[1], r[3], r[2]]));
        }
        let basic = |leaf: u32, sub: u32| {
            if max_basic.is_some_and(|m| leaf <= m) {
                src.leaf(leaf, sub)
            } else {
                None
            }
        };
        if let Some(r) = basic(1, 0) {
            let eax = r[0];
            let base_family = (eax >> 8) & 0xf;
            let ext_family = (eax >> 20) & 0xff;
            let base_model = (eax >> 4) & 0xf;
            let ext_model = (eax >> 16) & 0xf;
            // Intel SDM vol. 2A CPUID "Feature Information": the extended family is added only
            // for family 0xF, the extended model is prepended for family 0x6 and 0xF.
            f.family = Some(if base_family == 0xf {
                base_family + ext_family
            } else {
                base_family
            });
            f.model = Some(if base_family == 0x6 || base_family == 0xf {
                (ext_model << 4) | base_model
            } else {
                base_model
            });
            f.stepping = Some(eax & 0xf);
            f.hypervisor_bit = r[2] & (1 << 31) != 0;
        }
        if let Some(r) = basic(7, 0) {
            f.rdpid = r[2] & (1 << 22) != 0;
        }
        if let Some(r) = basic(0x15, 0) {
            // EAX = denominator, EBX = numerator, ECX = crystal Hz (0 when not enumerated).
            if r[0] != 0 && r[1] != 0 && r[2] != 0 {
                f.leaf_15_tsc_hz = Some(f64::from(r[2]) * f64::from(r[1]) / f64::from(r[0]));
            }
        }
        if let Some(r) = basic(0x21, 0) {
            if ascii(&[r[1], r[3], r[2]]) == "IntelTDX" {
                f.confidential_guest = Some("Intel TDX".into());
            }
        }
        if let Some(r) = basic(0x16, 0) {
            f.leaf_16_base_mhz = Some(r[0] & 0xffff).filter(|&m| m != 0);
        }
        let max_ext = src
            .leaf(0x8000_0000, 0)
            .map(|r| r[0])
            .filter(|&m| m >= 0x8000_0000);
        let ext = |leaf: u32| {
            if max_ext.is_some_and(|m| leaf <= m) {
                src.leaf(leaf, 0)
            } else {
                None
            }
        };
        if let Some(r) = ext(0x8000_0001) {
            f.rdtscp = r[3] & (1 << 27) != 0;
        }
        if let Some(r) = ext(0x8000_0007) {
            f.invariant_tsc = r[3] & (1 << 8) != 0;
        }
        if let (Some(a), Some(b), Some(c)) = (ext(0x8000_0002), ext(0x8000_0003), ext(0x8000_0004))
        {
            let brand = ascii(&[a, b, c].concat());
            f.brand = (!brand.is_empty()).then_some(brand);
        }
        // Hypervisor leaves are only meaningful when the hypervisor bit is set: on bare metal
        // Intel answers 0x40000000 with the highest basic leaf's data.
        if f.hypervisor_bit {
            f.hypervisor = hypervisor::scan(src);
        }
        f
    }
}
