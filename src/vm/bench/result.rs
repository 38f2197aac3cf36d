//! What `vm bench` reports per run and per comparison: the JSON rows (a contract: field names
//! are kept, fields are added). Built by [`crate::vm::bench::rows`].

use serde::{Deserialize, Serialize};

use super::compare::Verdict;
use super::predict::ModelReads;
use crate::stats::Estimate;

/// The median costs measured in a run's slots, ns.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct RunCosts {
    pub precise_read_ns: f64,
    /// The precise read measured after a file write ([`crate::vm::bench::guest::SlotCosts`]).
    #[serde(default)]
    pub precise_read_in_write_ns: Option<f64>,
    pub coarse_read_ns: f64,
    pub syscall_ns: f64,
    /// The user-space spin (the emulator's speed).
    pub spin_ns: f64,
}

/// One kernel × clocksource × file system × workload.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchRun {
    pub kernel_release: String,
    pub kernel_package: String,
    pub clocksource_requested: String,
    /// What the guest read back after switching; differs from the request when the kernel
    /// refused it (then `ns_per_op` is `null` and `refused` says why).
    pub clocksource_used: String,
    pub fs: String,
    pub workload: String,
    /// Median over every slot of every boot, with its bootstrap interval; `null` when no slot
    /// ran on the requested clocksource.
    pub ns_per_op: Option<Estimate>,
    /// Slots behind it (boots × rounds).
    pub samples: usize,
    pub boots: usize,
    pub costs: RunCosts,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// One comparison row.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchComparison {
    /// `clocksource` or `kernel`.
    pub kind: String,
    /// The kernel of a clocksource row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_release: Option<String>,
    /// The two kernels of a kernel row, from first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<Vec<String>>,
    /// The clocksource of a kernel row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
    pub fs: String,
    pub workload: String,
    /// Clocksources (clocksource rows) or kernel releases (kernel rows).
    pub from: String,
    pub to: String,
    /// ns per op of `to` less `from`: paired within rounds (clocksource rows), or the
    /// controlled relative change × `from`'s ns per op (kernel rows).
    pub measured_delta_ns: Estimate,
    /// The model's change; `null` where no model applies.
    pub predicted_delta_ns: Option<f64>,
    /// The prediction's range from the intervals of the measured cost changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_range_ns: Option<Estimate>,
    /// Kernel rows: the controlled change in %, with its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_change: Option<Estimate>,
    /// Kernel rows: the change in % without the control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_percent_change: Option<Estimate>,
    /// Kernel rows: whether the controlled change's interval excludes 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub significant: Option<bool>,
    /// The model's reads per op (clocksource rows: the kernel's; kernel rows: `from`'s).
    pub model_from: Option<ModelReads>,
    /// Kernel rows: `to`'s model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_to: Option<ModelReads>,
    /// Clocksource rows: the change of the guest-measured precise and coarse read costs
    /// (paired within rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_precise_read_ns: Option<Estimate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_coarse_read_ns: Option<Estimate>,
    /// Clocksource rows: the change of the precise read measured after a file write, and the
    /// model's reads × it (the prediction with that cost instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_precise_read_in_write_ns: Option<Estimate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_in_write_delta_ns: Option<f64>,
    /// Clocksource rows: every clocksource read per op as the kernel counted it (a kprobe on
    /// each clocksource's read callback, [`crate::vm::bench::reads`]), on `from` and on `to`;
    /// absent when not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_reads_from: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_reads_to: Option<f64>,
    /// The counted reads on `to` × the change of the precise read's cost: what the change
    /// would be if every read the kernel really takes cost what the syscall-derived read costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_predicted_delta_ns: Option<f64>,
    /// Clocksource rows that disagree: where the difference comes from, from the counted reads
    /// ([`crate::vm::bench::rows::diagnosis`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<String>,
    /// Pairs (clocksource rows) or slots of each side (kernel rows: the smaller).
    pub pairs: usize,
    /// Half the measured interval's width, ns.
    pub noise_ns: f64,
    pub verdict: Verdict,
}
