//! A recorded loop's fine stamps call by call: the kernel's multigrain counters read around
//! every call of the live loop ([`crate::workload::replayed::count_calls`]) against what the
//! model's replay does at the same position of the loop. Where a recording's total disagrees
//! with the kernel's, this names the calls.

use std::path::Path;

use crate::kernel::ClockFn;
use crate::price::{Counts, Term};
use crate::sim::update_price::{counts_by_call, model_of};
use crate::sim::{estimate, Costs};
use crate::trace::Syscall;
use crate::workload::pair::PairResult;
use crate::workload::replayed::{self, LiveLoop, ROOT};

/// Passes of each side, counted call by call.
pub const PASSES: u64 = 20;
/// Fine stamps per pass by which a call's kernel count may differ from the model's before it
/// is named.
const SLACK: f64 = 0.25;
/// The most calls a note names.
const NAMED: usize = 12;

/// The model's fine stamps, updates and atime stores per pass at each call of `live`,
/// queried − control, each side replayed at `speed` (ns per pass, queried and control: the
/// speed at which the kernel ran the passes counted, so that the ticks fall as they fell
/// there).
pub fn model_by_call(
    p: &PairResult,
    costs: Costs,
    live: &LiveLoop,
    speed: (f64, f64),
) -> Vec<(f64, f64, f64)> {
    let model = model_of(p);
    let stock = &model.policies()[0];
    let table = model.table();
    let costs = costs.reads_only();
    let side = |queried: bool, ns: f64| {
        let sc = live.scenario(p.fs_kind(), queried);
        let n = crate::trace::scenario::bounded_iterations(20_000, sc.ops.len());
        let base = estimate::base_from_measured(model, stock, costs, &sc, ns, n);
        estimate::replay_by_position(&table, stock, costs, &sc, base, n, ClockFn::LinuxFineMg)
    };
    let (q, c) = (side(true, speed.0), side(false, speed.1));
    q.iter()
        .zip(&c)
        .map(|(a, b)| (a.0 - b.0, a.1 - b.1, a.2 - b.2))
        .collect()
}

/// The note naming the calls of `live` on `dir` whose fine stamps, queried − control, differ
/// between the kernel's count and the model's; `None` where the kernel's counters cannot be
/// read (the pair `p` says why).
pub fn note(p: &PairResult, costs: Costs, live: &LiveLoop, dir: &Path) -> Option<String> {
    p.kernel_counts.as_ref()?;
    let head = format!(
        "{} on {} ({}), call by call (the kernel's counters around every call, {PASSES} passes \
         of each side, back to back, the model at the counted passes' speed)",
        live.source,
        p.fs_type,
        dir.display()
    );
    let kernel = match replayed::count_calls(dir, live, PASSES) {
        Ok(k) => k,
        Err(e) => return Some(format!("{head}: not counted ({e})")),
    };
    let model = model_by_call(
        p,
        costs,
        live,
        (kernel.queried_ns_per_pass, kernel.control_ns_per_pass),
    );
    let kernel = kernel.calls;
    let delta = |c: &replayed::CallCounts, name: &str| {
        c.queried.get(name).copied().unwrap_or(0.0) - c.control.get(name).copied().unwrap_or(0.0)
    };
    let (mut kernel_total, mut model_total) = (0.0, 0.0);
    let (mut kernel_atime, mut model_atime) = (0.0, 0.0);
    let mut differ = Vec::new();
    for (k, (op, (kc, &(m_stamps, m_updates, m_atime)))) in
        live.ops.iter().zip(kernel.iter().zip(&model)).enumerate()
    {
        let stamps = delta(kc, "fine_stamps");
        let atime = delta(kc, replayed::ATIME_MOVES);
        kernel_total += stamps;
        model_total += m_stamps;
        kernel_atime += atime;
        model_atime += m_atime;
        let on = || {
            if op.node == ROOT {
                "the directory".to_string()
            } else {
                format!("node {}", op.node)
            }
        };
        if (stamps - m_stamps).abs() > SLACK {
            differ.push(format!(
                "call {k} {} on {}: kernel {stamps:+.2} fine stamps ({:+.2} ctime moves), \
                 model {m_stamps:+.2} ({m_updates:+.2} updates)",
                op.syscall.name(),
                on(),
                delta(kc, "ctime_swaps")
            ));
        }
        if (atime - m_atime).abs() > SLACK {
            differ.push(format!(
                "call {k} {} on {}: kernel {atime:+.2} atime moves, model {m_atime:+.2} atime \
                 stores",
                op.syscall.name(),
                on()
            ));
        }
    }
    let listed = differ.len().min(NAMED);
    Some(format!(
        "{head}: per pass, queried − control, fine stamps kernel {kernel_total:+.2} against \
         model {model_total:+.2}, atime moves (statx STATX_ATIME around each read) kernel \
         {kernel_atime:+.2} against model {model_atime:+.2}; {} of {} calls differ by more \
         than {SLACK}{}{}",
        differ.len(),
        live.ops.len(),
        if listed > 0 { ": " } else { "" },
        differ[..listed].join("; ") + if differ.len() > listed { "; …" } else { "" }
    ))
}

/// The note splitting `p`'s Δ by kind of call: the live replay's time in each kind per pass,
/// queried − control (each call timed where it is issued), against the model's Δ in the same
/// kind at `prices` on `p`'s filesystem (its counts at `costs`' reads, each side at its
/// measured speed). `None` where the pair was not timed by call.
pub fn kind_note(p: &PairResult, costs: Costs, prices: &Costs, live: &LiveLoop) -> Option<String> {
    if p.by_call.is_empty() {
        return None;
    }
    let model = model_of(p);
    let fs = p.fs_kind();
    let side =
        |queried: bool, ns: f64| counts_by_call(model, costs, &live.scenario(fs, queried), ns);
    let (q, c) = (
        side(true, p.queried_ns.point),
        side(false, p.control_ns.point),
    );
    let counts_of_kind = |name: &str| {
        let of = |v: &[(Syscall, Counts)]| {
            v.iter()
                .find(|(s, _)| s.name() == name)
                .map_or(Counts::default(), |&(_, n)| n)
        };
        of(&q) - of(&c)
    };
    let (mut live_sum, mut model_sum) = (0.0, 0.0);
    let kinds: Vec<String> = p
        .by_call
        .iter()
        .map(|k| {
            let n = counts_of_kind(&k.syscall);
            let m = n.priced_ns(prices, fs);
            live_sum += k.delta_ns.point;
            model_sum += m;
            format!(
                "{} ×{} {:+.0} [{:.0}, {:.0}] / {m:+.0}{}",
                k.syscall,
                k.calls_per_pass,
                k.delta_ns.point,
                k.delta_ns.lower,
                k.delta_ns.upper,
                units_said(&n)
            )
        })
        .collect();
    Some(format!(
        "{} on {}, Δ by kind of call (ns per pass, queried − control, live [95%] / model; \
         each call timed where the replay issues it): {}; sums {live_sum:+.0} / {model_sum:+.0}",
        live.source,
        p.fs_type,
        kinds.join(", ")
    ))
}

/// The model's units behind a kind's Δ, the ones that move: " (reads +12 ns, 1.00 updates, …)".
fn units_said(n: &Counts) -> String {
    let mut parts = Vec::new();
    if n.reads_ns.abs() >= 0.5 {
        parts.push(format!("reads {:+.0} ns", n.reads_ns));
    }
    for t in Term::LISTED {
        if n[t].abs() >= 0.005 {
            parts.push(format!("{:+.2} {}", n[t], t.units()));
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}
