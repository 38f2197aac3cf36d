//! The kernel A/B paragraph of `vm bench` for a commit message (72 columns).

use super::{joined, per_op, percent};
use crate::vm::bench::compare::{IntervalMethod, LEVEL};
use crate::vm::bench::BenchReport;

/// The A/B paragraph for a commit message: 72 columns, the environment, each kernel row of the
/// first clocksource with its change, the models' reads and the verdict.
pub fn commit_message(r: &BenchReport, command: &str) -> String {
    crate::export::commit::wrap(&paragraph(r, command), crate::export::commit::WIDTH)
}

fn paragraph(r: &BenchReport, command: &str) -> String {
    let kernels = r.kernel_names();
    let env = format!(
        "Measured with tscope vm bench in qemu guests ({}{}) on {} (host Linux {}), {} boot(s) \
         per kernel, {} round(s) per boot alternating clocksource {}, on {}.",
        r.accel.used.name(),
        if r.accel.emulation {
            ": TCG emulation, so these are emulated figures, not hardware figures"
        } else {
            ""
        },
        r.host_cpu.as_deref().unwrap_or("an unknown CPU"),
        r.host_kernel.as_deref().unwrap_or("?"),
        r.boots,
        r.rounds,
        joined(&r.clocksources, "/"),
        joined(&r.filesystems, ", ")
    );
    let mut parts = vec![
        env,
        format!(
        "Kernel A {} against B {}; change per op, each loop divided by the {} timed right before it:",
        kernels.first().map_or("?", String::as_str),
        kernels.get(1..).map_or("?".into(), |k| k.join(", ")),
        r.kernel_control
    ),
    ];
    let first_cs = r.clocksources.first().copied();
    let mut items = Vec::new();
    for c in r.comparisons.iter().filter(|c| {
        c.kind == crate::vm::bench::ComparisonKind::Kernel
            && first_cs.is_some_and(|f| c.clocksource == Some(f))
    }) {
        let change = c.percent_change.as_ref().map_or("?".into(), percent);
        let models =
            match (&c.model_from, &c.model_to) {
                (Some(a), Some(b)) => {
                    format!(
                ", models {} → {}: precise reads {:.2} → {:.2}, coarse {:.2} → {:.2} per op",
                a.model, b.model, a.precise_per_op, b.precise_per_op, a.coarse_per_op,
                b.coarse_per_op
            )
                }
                _ => String::new(),
            };
        let counted = match (&c.counted_from, &c.counted_to) {
            (Some(a), Some(b)) => format!(
                "; precise reads {} → {}, coarse {} → {} per op counted by kprobes",
                per_op(a.precise_per_op),
                per_op(b.precise_per_op),
                per_op(a.coarse_per_op),
                per_op(b.coarse_per_op)
            ),
            _ => String::new(),
        };
        let updates = match (&c.model_from, &c.model_to, c.update_price_ns) {
            (Some(a), Some(b), Some(u)) => format!(
                ", inode updates {:.2} → {:.2} per op at {:.0} ns each (the live knob pair in \
                 the {} guest)",
                a.updates_per_op,
                b.updates_per_op,
                u,
                c.update_priced_on.as_deref().unwrap_or("?")
            ),
            _ => String::new(),
        };
        let predicted = c
            .predicted_delta_ns
            .map_or(String::new(), |p| format!(", predicted {p:+.0} ns per op"));
        let models = models + &updates + &predicted + &counted;
        let to = if kernels.len() > 2 {
            format!(" ({})", c.to)
        } else {
            String::new()
        };
        let cs = c.clocksource.map_or("", |cs| cs.name());
        items.push(format!(
            "{} on {}{to}, {cs}, {change}{}{models}",
            c.workload,
            c.fs,
            if c.significant == Some(true) {
                ""
            } else {
                " (not significant)"
            }
        ));
    }
    parts.push(format!("{}.", items.join("; ")));
    let boots_t = r
        .comparisons
        .iter()
        .filter(|c| c.kind == crate::vm::bench::ComparisonKind::Kernel)
        .all(|c| c.interval_method == Some(IntervalMethod::BootsT));
    let how = if boots_t {
        format!(
            "Each boot's median; {:.0}% Welch t intervals over {} boots per kernel",
            LEVEL * 100.0,
            r.boots
        )
    } else {
        format!(
            "Medians with {:.0}% bootstrap intervals of one boot's rounds (seed {})",
            LEVEL * 100.0,
            r.seed
        )
    };
    parts.push(format!("{how}, from \"{command}\" ({}).", r.tool));
    parts.join(" ")
}
