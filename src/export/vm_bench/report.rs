//! The section of `tscope report --vm` on clock cost against throughput: what was run, the
//! clocksource rows and the notes of [`super::Render::blocks`], as Markdown.

use super::{clocksource_table, joined, notes};
use crate::vm::bench::{BenchComparison, BenchReport};

/// The report's section body (no heading): what was run and how to repeat it (`command`),
/// the clocksource rows with their verdicts, the live knob rows, and the notes.
pub fn report_section(r: &BenchReport, command: &str) -> String {
    let kernels = r.kernel_names();
    let mut out = format!(
        "`tscope vm bench` (docs/vm.md) in {} boot(s) of {} ({}), switching the clocksource \
         at run time between {} in {} round(s) (A B, then B A), {} on {}: the change in ns \
         per op when every precise timestamp gets dearer, against the Linux model's precise \
         reads per op × the change of the read's cost measured in the same guest. Repeat \
         with `{command}`.\n\n",
        r.boots,
        kernels.join(", "),
        r.accel.used.name(),
        joined(&r.clocksources, " and "),
        r.rounds,
        joined(&r.workloads, " and "),
        joined(&r.filesystems, ", "),
    );
    let rows: Vec<&BenchComparison> = r
        .comparisons
        .iter()
        .filter(|c| c.kind == crate::vm::bench::ComparisonKind::Clocksource)
        .collect();
    if rows.is_empty() {
        out += "No clocksource row: no pair of slots ran (see the warnings).\n";
    } else {
        out += &clocksource_table(&rows).markdown();
    }
    if !r.knob.is_empty() {
        out += "\nThe live knob in the guest: write + statx asking for the times against the \
                size only, the inode update priced on one write per query and held on four \
                (docs/vm.md, \"The live knob in the guest\"):\n\n";
        out += &super::knob::knob_table(&r.knob).markdown();
    }
    out += "\n";
    for n in notes(r) {
        out += &format!("- {n}\n");
    }
    out
}
