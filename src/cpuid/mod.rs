//! CPUID, decoded in one place for everything that reads it: the probe's machine facts, the
//! detect command's facts and verdicts, and the report. Answers come from any [`CpuidSource`]:
//! the live CPU ([`LiveCpuid`]) or a recorded dump ([`CpuidDump`]), so the decoding is tested
//! against real hypervisors' values.
//!
//! - [`source`]: where answers come from.
//! - [`standard`]: the standard leaves, decoded by raw-cpuid ([`StandardLeaves`]).
//! - [`hypervisor`]: the hypervisor leaves from 0x40000000, which raw-cpuid does not decode:
//!   signatures, KVM, Hyper-V and Xen timing features, the 0x40000010 timing leaf.
//! - here: [`CpuidFacts`], all of them together, and TDX's leaf 0x21.

pub mod hypervisor;
pub mod source;
pub mod standard;

use serde::{Deserialize, Serialize};

pub use hypervisor::HypervisorLeaves;
pub use source::{CpuidDump, CpuidSource, DumpError, LiveCpuid};
pub use standard::StandardLeaves;

/// What CPUID says, decoded: the standard leaves (the same [`StandardLeaves`] the probe's
/// [`Machine`](crate::probe::machine::Machine) is built from) and the hypervisor leaves. The
/// JSON is flat (`facts.cpu` in docs/schema.md); in code the standard-leaf facts are reached
/// through `Deref`, so `facts.rdtscp` reads as it always did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuidFacts {
    #[serde(flatten)]
    pub standard: StandardLeaves,
    /// The hypervisor leaves found from 0x40000000 in 0x100 steps.
    pub hypervisor: HypervisorLeaves,
    /// A confidential-computing guest named by CPUID: "Intel TDX" when leaf 0x21 carries the
    /// "IntelTDX    " signature.
    pub confidential_guest: Option<String>,
}

impl std::ops::Deref for CpuidFacts {
    type Target = StandardLeaves;

    fn deref(&self) -> &StandardLeaves {
        &self.standard
    }
}

fn ascii(regs: &[u32]) -> String {
    String::from_utf8_lossy(&source::register_bytes(regs))
        .trim_matches(char::from(0))
        .trim()
        .to_string()
}

impl CpuidFacts {
    /// Decodes the facts from `src`.
    pub fn decode(src: &dyn CpuidSource) -> Self {
        let standard = StandardLeaves::read(src);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every recorded dump, by file name.
    fn dumps() -> Vec<(String, CpuidDump)> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cpuid");
        let mut out: Vec<(String, CpuidDump)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .map(|p| {
                let text = std::fs::read_to_string(&p).unwrap();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, CpuidDump::parse(&text).unwrap())
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The probe reads the timing leaf and the base signature by themselves, detect through the
    /// scan: on every recorded hypervisor they agree.
    #[test]
    fn probe_and_detect_read_the_hypervisor_leaves_alike() {
        let all = dumps();
        assert!(all.len() >= 10, "{} dumps", all.len());
        for (name, dump) in all {
            let facts = CpuidFacts::decode(&dump);
            if !facts.hypervisor_bit {
                continue;
            }
            assert_eq!(
                hypervisor::tsc_khz_40000010(&dump),
                facts.hypervisor.tsc_khz_40000010,
                "{name}"
            );
            let base = dump.leaf(0x4000_0000, 0).map(hypervisor::raw_signature);
            let scanned = facts
                .hypervisor
                .leaves
                .first()
                .filter(|l| l.base == 0x4000_0000);
            if let Some(l) = scanned {
                assert_eq!(
                    base.as_deref().map(str::trim),
                    Some(l.signature.as_str()),
                    "{name}"
                );
            }
        }
    }
}
