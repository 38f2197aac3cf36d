//! CPUID facts, decoded from any [`CpuidSource`]: the live CPU, or a recorded dump (the files
//! under `tests/data/cpuid/`, format `leaf subleaf eax ebx ecx edx` in hex per line), so that
//! the decoding is tested against real hypervisors' values instead of invented ones. The
//! standard leaves are decoded by raw-cpuid, fed through `CpuId::with_cpuid_reader`; the
//! hypervisor leaves (`super::hypervisor`) and TDX's leaf 0x21, which raw-cpuid lacks, here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::hypervisor::{self, HypervisorLeaves};
use crate::probe::machine::CpuFacts;

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

/// Answers raw-cpuid's queries from a [`CpuidSource`]; an absent leaf reads as zeros, which
/// raw-cpuid's decoders treat as "not enumerated".
#[derive(Clone, Copy)]
struct Replay<'a>(&'a dyn CpuidSource);

impl raw_cpuid::CpuIdReader for Replay<'_> {
    fn cpuid2(&self, leaf: u32, subleaf: u32) -> raw_cpuid::CpuIdResult {
        let [eax, ebx, ecx, edx] = self.0.leaf(leaf, subleaf).unwrap_or_default();
        raw_cpuid::CpuIdResult { eax, ebx, ecx, edx }
    }
}

/// What CPUID says, decoded: the standard leaves (by raw-cpuid, shared with the probe's
/// [`Machine`](crate::probe::machine::Machine)) and the hypervisor leaves raw-cpuid does not
/// decode. The JSON is flat (`facts.cpu` in docs/schema.md); in code the standard-leaf facts
/// are reached through `Deref`, so `facts.rdtscp` reads as it always did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuidFacts {
    #[serde(flatten)]
    pub standard: CpuFacts,
    /// The hypervisor leaves found from 0x40000000 in 0x100 steps.
    pub hypervisor: HypervisorLeaves,
    /// A confidential-computing guest named by CPUID: "Intel TDX" when leaf 0x21 carries the
    /// "IntelTDX    " signature.
    pub confidential_guest: Option<String>,
}

impl std::ops::Deref for CpuidFacts {
    type Target = CpuFacts;

    fn deref(&self) -> &CpuFacts {
        &self.standard
    }
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
        let standard = CpuFacts::decode(&raw_cpuid::CpuId::with_cpuid_reader(Replay(src)));
        let max_basic = src.leaf(0, 0).map(|r| r[0]);
        // Leaf 0x21 (Intel TDX's signature) is one raw-cpuid does not know.
        let confidential_guest = max_basic
            .filter(|&m| m >= 0x21)
            .and_then(|_| src.leaf(0x21, 0))
            .filter(|r| ascii(&[r[1], r[3], r[2]]) == "IntelTDX")
            .map(|_| "Intel TDX".to_string());
        // Hypervisor leaves are only meaningful when the hypervisor bit is set: on bare metal
        // Intel answers 0x40000000 with the highest basic leaf's data.
        let hypervisor = if standard.hypervisor_bit {
            hypervisor::scan(src)
        } else {
            HypervisorLeaves::default()
        };
        CpuidFacts {
            standard,
            hypervisor,
            confidential_guest,
        }
    }
}
