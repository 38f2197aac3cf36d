//! Where CPUID answers come from: the live CPU, or a recorded dump (the files under
//! `tests/data/cpuid/`, format `leaf subleaf eax ebx ecx edx` in hex per line), so that the
//! decoding is tested against real hypervisors' values instead of invented ones.

use std::collections::BTreeMap;

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
pub(super) struct Replay<'a>(pub(super) &'a dyn CpuidSource);

impl raw_cpuid::CpuIdReader for Replay<'_> {
    fn cpuid2(&self, leaf: u32, subleaf: u32) -> raw_cpuid::CpuIdResult {
        let [eax, ebx, ecx, edx] = self.0.leaf(leaf, subleaf).unwrap_or_default();
        raw_cpuid::CpuIdResult { eax, ebx, ecx, edx }
    }
}

/// The bytes of `regs` in register order, little-endian: how CPUID spells a signature.
pub(super) fn register_bytes(regs: &[u32]) -> Vec<u8> {
    regs.iter().flat_map(|r| r.to_le_bytes()).collect()
}
