//! The standard CPUID leaves, decoded by raw-cpuid for the live CPU and for a recorded dump
//! alike (a [`CpuidSource`] is replayed through [`raw_cpuid::CpuIdReader`]).

use serde::{Deserialize, Serialize};

use super::source::{CpuidSource, Replay};

/// What the standard CPUID leaves say. Field names are those of `tscope detect`'s `facts.cpu`
/// (a contract); the probe's [`Machine`](crate::probe::machine::Machine) and
/// [`TscFacts`](crate::probe::machine::TscFacts) show the same facts under the profile's names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StandardLeaves {
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
}

impl StandardLeaves {
    /// Decodes the standard leaves of `src`.
    pub fn read(src: &dyn CpuidSource) -> Self {
        StandardLeaves::decode(&raw_cpuid::CpuId::with_cpuid_reader(Replay(src)))
    }

    /// Decodes the standard leaves. raw-cpuid reports a leaf beyond its range's maximum
    /// (leaf 0 or 0x80000000) as absent: Intel CPUs answer those with the highest basic leaf's
    /// data, which would decode as garbage.
    pub fn decode<R: raw_cpuid::CpuIdReader>(c: &raw_cpuid::CpuId<R>) -> Self {
        let text = |s: &str| {
            let s = s.trim_matches(char::from(0)).trim();
            (!s.is_empty()).then(|| s.to_string())
        };
        let fi = c.get_feature_info();
        StandardLeaves {
            vendor: c.get_vendor_info().and_then(|v| text(v.as_str())),
            brand: c
                .get_processor_brand_string()
                .and_then(|b| text(b.as_str())),
            family: fi.as_ref().map(family),
            model: fi.as_ref().map(model),
            stepping: fi.as_ref().map(|f| u32::from(f.stepping_id())),
            hypervisor_bit: fi.as_ref().is_some_and(|f| f.has_hypervisor()),
            invariant_tsc: c
                .get_advanced_power_mgmt_info()
                .is_some_and(|p| p.has_invariant_tsc()),
            rdtscp: c
                .get_extended_processor_and_feature_identifiers()
                .is_some_and(|e| e.has_rdtscp()),
            rdpid: c.get_extended_feature_info().is_some_and(|e| e.has_rdpid()),
            // EAX = denominator, EBX = numerator, ECX = crystal Hz (0 when not enumerated).
            leaf_15_tsc_hz: c
                .get_tsc_info()
                .filter(|t| t.denominator() != 0 && t.numerator() != 0)
                .filter(|t| t.nominal_frequency() != 0)
                .map(|t| {
                    f64::from(t.nominal_frequency()) * f64::from(t.numerator())
                        / f64::from(t.denominator())
                }),
            leaf_16_base_mhz: c
                .get_processor_frequency_info()
                .map(|p| u32::from(p.processor_base_frequency()))
                .filter(|&m| m != 0),
        }
    }
}

// Intel SDM vol. 2A CPUID "Feature Information", whatever the vendor: the extended family is
// added only for family 0xF, the extended model is prepended for family 0x6 and 0xF. raw-cpuid's
// `family_id`/`model_id` switch to AMD's rule on an AMD vendor string, which misreads a CPU
// template that shows an Intel signature under an AMD vendor (Firecracker's T2A: model 0x3f,
// not 0xf) and disagrees with the model Linux prints in /proc/cpuinfo.
fn family(f: &raw_cpuid::FeatureInfo) -> u32 {
    let base = u32::from(f.base_family_id());
    if base == 0xf {
        base + u32::from(f.extended_family_id())
    } else {
        base
    }
}

fn model(f: &raw_cpuid::FeatureInfo) -> u32 {
    let base = u32::from(f.base_model_id());
    if matches!(f.base_family_id(), 0x6 | 0xf) {
        (u32::from(f.extended_model_id()) << 4) | base
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The live CPU replayed through [`CpuidSource`] decodes as raw-cpuid's own reader does.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn live_replay_decodes_as_the_native_reader() {
        assert_eq!(
            StandardLeaves::read(&super::super::LiveCpuid),
            StandardLeaves::decode(&raw_cpuid::CpuId::new())
        );
    }
}
