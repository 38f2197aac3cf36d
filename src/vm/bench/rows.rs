//! From the boots' slots to what `vm bench` reports: one run per kernel × clocksource × file
//! system × workload (ns per op over boots and rounds), and the comparisons.
//!
//! - **clocksource** rows: within each round of each boot, the workload's ns per op on `to`
//!   less that on `from` (one pair per round: the boot's speed cancels), against the
//!   kernel's model reads per op × the change of the costs measured in the same rounds.
//! - **kernel** rows: every kernel against the first, per file system, workload and
//!   clocksource. Boots of two kernels cannot be paired, so each loop's ns per op is divided by
//!   the null syscall timed right before it ([`KERNEL_CONTROL`]), which moves with the boot's
//!   speed; the raw change is reported beside it.

use std::collections::BTreeSet;

use super::compare::{self, Verdict, ZERO_READS};
use super::guest::Slot;
use super::predict::{model_reads, ModelReads};
use super::{BenchKernel, BenchReport};
use crate::stats::{self, Estimate};

pub use super::result::{BenchComparison, BenchRun, RunCosts};

/// The control of kernel rows.
pub const KERNEL_CONTROL: &str = "syscall:getppid";

/// One slot's measurement of one workload.
struct Obs<'a> {
    boot: u32,
    slot: &'a Slot,
    ns_per_op: f64,
    /// The null syscall timed right before the loop (else the slot's).
    control_ns: f64,
}

fn release(k: &BenchKernel) -> String {
    k.kernel_release
        .clone()
        .unwrap_or_else(|| k.kernel_package.clone())
}

/// Every slot of kernel `k` that ran on `cs` and timed `fs`/`workload`.
fn observations<'a>(k: &'a BenchKernel, cs: &str, fs: &str, workload: &str) -> Vec<Obs<'a>> {
    let mut out = Vec::new();
    for b in &k.boots {
        for s in &b.slots {
            if s.clocksource_requested != cs || s.switch_error.is_some() {
                continue;
            }
            for r in &s.runs {
                if r.fs == fs && r.workload == workload && r.ns_per_op.is_finite() {
                    out.push(Obs {
                        boot: b.index,
                        slot: s,
                        ns_per_op: r.ns_per_op,
                        control_ns: r
                            .control_ns
                            .or(s.costs.map(|c| c.syscall_ns))
                            .unwrap_or(f64::NAN),
                    });
                }
            }
        }
    }
    out
}

fn median_of(obs: &[Obs], f: impl Fn(&Obs) -> f64) -> f64 {
    let v: Vec<f64> = obs.iter().map(f).filter(|x| x.is_finite()).collect();
    stats::median(&v).unwrap_or(f64::NAN)
}

fn costs(obs: &[Obs]) -> RunCosts {
    let c = |f: fn(&super::guest::SlotCosts) -> f64| {
        median_of(obs, |o| o.slot.costs.as_ref().map_or(f64::NAN, f))
    };
    RunCosts {
        precise_read_ns: c(|c| c.precise_read_ns),
        precise_read_in_write_ns: Some(c(|c| c.precise_read_in_write_ns.unwrap_or(f64::NAN)))
            .filter(|v| v.is_finite()),
        coarse_read_ns: c(|c| c.coarse_read_ns),
        syscall_ns: c(|c| c.syscall_ns),
        spin_ns: c(|c| c.spin_ns),
    }
}

/// Why kernel `k` ran no slot on `cs`: what it kept instead.
fn refusal(k: &BenchKernel, cs: &str) -> Option<(String, String)> {
    k.boots
        .iter()
        .flat_map(|b| &b.slots)
        .find(|s| s.clocksource_requested == cs && s.switch_error.is_some())
        .map(|s| {
            (
                s.clocksource_used.clone(),
                s.switch_error.clone().unwrap_or_default(),
            )
        })
}

/// A seed per row, from the run's.
fn row_seed(seed: u64, n: usize) -> u64 {
    seed ^ (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Fills `runs`, `comparisons` and `refused` from the kernels' boots.
pub fn fill(r: &mut BenchReport) {
    let mut n = 0usize;
    let mut next_seed = || {
        n += 1;
        row_seed(r.seed, n)
    };
    let (mut runs, mut comparisons, mut refused) = (Vec::new(), Vec::new(), BTreeSet::new());
    for k in &r.kernels {
        for cs in &r.clocksources {
            if let Some((used, why)) = refusal(k, cs) {
                refused.insert(format!(
                    "{}: clocksource {cs}: {why} (used {used})",
                    release(k)
                ));
            }
            for fs in &r.filesystems {
                for w in &r.workloads {
                    let obs = observations(k, cs, fs, w);
                    let ns = by_boot(&obs, |o| Some(o.ns_per_op));
                    let boots: BTreeSet<u32> = obs.iter().map(|o| o.boot).collect();
                    let refused = if obs.is_empty() { refusal(k, cs) } else { None };
                    runs.push(BenchRun {
                        kernel_release: release(k),
                        kernel_package: k.kernel_package.clone(),
                        clocksource_requested: cs.clone(),
                        clocksource_used: refused
                            .as_ref()
                            .map_or_else(|| cs.clone(), |(used, _)| used.clone()),
                        fs: fs.clone(),
                        workload: w.clone(),
                        ns_per_op: compare::median_interval(&ns, next_seed()),
                        samples: obs.len(),
                        boots: boots.len(),
                        costs: costs(&obs),
                        refused: refused.map(|(_, why)| why),
                    });
                }
            }
        }
    }
    for k in &r.kernels {
        let Some((from, rest)) = r.clocksources.split_first() else {
            break;
        };
        for to in rest {
            for fs in &r.filesystems {
                for w in &r.workloads {
                    if let Some(c) = clocksource_row(k, from, to, fs, w, &mut next_seed) {
                        comparisons.push(c);
                    }
                }
            }
        }
    }
    if let Some((base, others)) = r.kernels.split_first() {
        for k in others {
            for fs in &r.filesystems {
                for w in &r.workloads {
                    for cs in &r.clocksources {
                        if let Some(c) = kernel_row(base, k, cs, fs, w, &mut next_seed) {
                            comparisons.push(c);
                        }
                    }
                }
            }
        }
    }
    r.runs = runs;
    r.comparisons = comparisons;
    r.refused = refused.into_iter().collect();
}

/// The pairs (from, to) of `value` taken in the same round of the same boot.
fn pairs_by_round(from: &[Obs], to: &[Obs], value: impl Fn(&Obs) -> f64) -> Vec<Vec<(f64, f64)>> {
    by_boot(from, |a| {
        let b = to
            .iter()
            .find(|b| b.boot == a.boot && b.slot.round == a.slot.round)?;
        let (x, y) = (value(a), value(b));
        (x.is_finite() && y.is_finite()).then_some((x, y))
    })
}

/// `f` of each observation, grouped by boot (in boot order; observations `f` drops are left
/// out).
fn by_boot<T>(obs: &[Obs], f: impl Fn(&Obs) -> Option<T>) -> Vec<Vec<T>> {
    let boots: BTreeSet<u32> = obs.iter().map(|o| o.boot).collect();
    boots
        .into_iter()
        .map(|b| obs.iter().filter(|o| o.boot == b).filter_map(&f).collect())
        .collect()
}

fn cost_of(o: &Obs, f: fn(&super::guest::SlotCosts) -> f64) -> f64 {
    o.slot.costs.as_ref().map_or(f64::NAN, f)
}

/// Where a disagreeing clocksource row's difference comes from: the kernel's counted
/// clocksource reads against the model's (a read the model misses), or, when they match, the
/// change per counted read against the syscall-derived change of one read (an in-kernel read
/// that costs more or less than the syscall says). `None` without a model.
pub fn diagnosis(
    measured: &Estimate,
    model: Option<&ModelReads>,
    counted: Option<f64>,
    d_precise: Option<Estimate>,
) -> Option<String> {
    let m = model?;
    let Some(n) = counted else {
        return Some(
            "the clocksource reads were not counted (--count-reads 0, or the read callback \
             could not be probed): no diagnosis"
                .into(),
        );
    };
    if (n - m.precise_per_op).abs() > 0.25 {
        return Some(format!(
            "the kernel reads the clocksource {n:.2} times per op, the model {:.2}: a read the \
             model does not count",
            m.precise_per_op
        ));
    }
    let d = d_precise?;
    if n < ZERO_READS {
        return Some(format!(
            "no clocksource read per op, counted or modelled, yet a change of {} ns: a \
             difference the clocksource does not explain",
            crate::fmt::ns(measured.point)
        ));
    }
    Some(format!(
        "the kernel reads the clocksource {n:.2} times per op, as the model says ({:.2}): the \
         change per read is {} ns [{}, {}] in the workload against {} ns measured as a \
         syscall, so the in-kernel read costs {} than the syscall-derived read",
        m.precise_per_op,
        crate::fmt::ns(measured.point / n),
        crate::fmt::ns(measured.lower / n),
        crate::fmt::ns(measured.upper / n),
        crate::fmt::ns(d.point),
        if measured.point / n > d.point {
            "more"
        } else {
            "less"
        }
    ))
}

/// The median over kernel `k`'s boots of the clocksource reads per op counted on `cs`.
fn counted_reads(k: &BenchKernel, cs: &str, fs: &str, workload: &str) -> Option<f64> {
    let v: Vec<f64> = k
        .boots
        .iter()
        .filter_map(|b| b.reads.as_ref())
        .flat_map(|r| &r.counts)
        .filter(|c| c.clocksource == cs && c.fs == fs && c.workload == workload)
        .map(|c| c.reads_per_op)
        .collect();
    stats::median(&v)
}

fn clocksource_row(
    k: &BenchKernel,
    from: &str,
    to: &str,
    fs: &str,
    workload: &str,
    seed: &mut impl FnMut() -> u64,
) -> Option<BenchComparison> {
    let a = observations(k, from, fs, workload);
    let b = observations(k, to, fs, workload);
    let pairs = pairs_by_round(&a, &b, |o| o.ns_per_op);
    let measured = compare::paired_delta(&pairs, seed())?;
    let d_precise = compare::paired_delta(
        &pairs_by_round(&a, &b, |o| cost_of(o, |c| c.precise_read_ns)),
        seed(),
    );
    let d_coarse = compare::paired_delta(
        &pairs_by_round(&a, &b, |o| cost_of(o, |c| c.coarse_read_ns)),
        seed(),
    );
    let d_in_write = compare::paired_delta(
        &pairs_by_round(&a, &b, |o| {
            cost_of(o, |c| c.precise_read_in_write_ns.unwrap_or(f64::NAN))
        }),
        seed(),
    );
    let model = model_reads(
        &release(k),
        k.hz,
        workload,
        fs,
        median_of(&a, |o| o.ns_per_op),
    );
    let (predicted, range) = match (&model, d_precise, d_coarse) {
        (Some(m), Some(p), Some(c)) => (
            Some(compare::predicted_delta(
                m.precise_per_op,
                m.coarse_per_op,
                p.point,
                c.point,
            )),
            Some(Estimate {
                point: compare::predicted_delta(
                    m.precise_per_op,
                    m.coarse_per_op,
                    p.point,
                    c.point,
                ),
                lower: compare::predicted_delta(
                    m.precise_per_op,
                    m.coarse_per_op,
                    p.lower,
                    c.lower,
                ),
                upper: compare::predicted_delta(
                    m.precise_per_op,
                    m.coarse_per_op,
                    p.upper,
                    c.upper,
                ),
            }),
        ),
        _ => (None, None),
    };
    let zero = model
        .as_ref()
        .is_some_and(|m| m.precise_per_op < ZERO_READS);
    let in_write = model
        .as_ref()
        .zip(d_in_write)
        .zip(d_coarse)
        .map(|((m, p), c)| {
            compare::predicted_delta(m.precise_per_op, m.coarse_per_op, p.point, c.point)
        });
    let counted_from = counted_reads(k, from, fs, workload);
    let counted_to = counted_reads(k, to, fs, workload);
    let verdict = compare::verdict(&measured, predicted, zero);
    Some(BenchComparison {
        kind: "clocksource".into(),
        kernel_release: Some(release(k)),
        kernels: None,
        clocksource: None,
        fs: fs.into(),
        workload: workload.into(),
        from: from.into(),
        to: to.into(),
        measured_delta_ns: measured,
        predicted_delta_ns: predicted,
        predicted_range_ns: range,
        percent_change: None,
        raw_percent_change: None,
        significant: None,
        model_from: model.clone(),
        model_to: None,
        delta_precise_read_ns: d_precise,
        delta_coarse_read_ns: d_coarse,
        predicted_in_write_delta_ns: in_write,
        delta_precise_read_in_write_ns: d_in_write,
        counted_reads_from: counted_from,
        counted_reads_to: counted_to,
        counted_predicted_delta_ns: counted_to.zip(d_precise).map(|(n, d)| n * d.point),
        diagnosis: (verdict == Verdict::Disagrees)
            .then(|| diagnosis(&measured, model.as_ref(), counted_to, d_precise))
            .flatten(),
        pairs: pairs.iter().map(Vec::len).sum(),
        noise_ns: compare::noise(&measured),
        verdict,
    })
}

fn kernel_row(
    base: &BenchKernel,
    k: &BenchKernel,
    cs: &str,
    fs: &str,
    workload: &str,
    seed: &mut impl FnMut() -> u64,
) -> Option<BenchComparison> {
    let a = observations(base, cs, fs, workload);
    let b = observations(k, cs, fs, workload);
    let with_control = |obs: &[Obs]| by_boot(obs, |o| Some((o.ns_per_op, o.control_ns)));
    let ratio = compare::ratio_change(
        &compare::controlled(&with_control(&a)),
        &compare::controlled(&with_control(&b)),
        seed(),
    )?;
    let raw_ratio = compare::ratio_change(
        &by_boot(&a, |o| Some(o.ns_per_op)),
        &by_boot(&b, |o| Some(o.ns_per_op)),
        seed(),
    );
    let base_ns = median_of(&a, |o| o.ns_per_op);
    let measured = ratio.scale(base_ns);
    let c = costs(&a);
    let m_from = model_reads(&release(base), base.hz, workload, fs, base_ns);
    let m_to = model_reads(
        &release(k),
        k.hz,
        workload,
        fs,
        median_of(&b, |o| o.ns_per_op),
    );
    let (predicted, zero) = match (&m_from, &m_to) {
        (Some(f), Some(t)) => {
            let dp = t.precise_per_op - f.precise_per_op;
            let dc = t.coarse_per_op - f.coarse_per_op;
            (
                Some(dp * c.precise_read_ns + dc * c.coarse_read_ns),
                dp.abs() < ZERO_READS && dc.abs() < ZERO_READS,
            )
        }
        _ => (None, false),
    };
    Some(BenchComparison {
        kind: "kernel".into(),
        kernel_release: None,
        kernels: Some(vec![release(base), release(k)]),
        clocksource: Some(cs.into()),
        fs: fs.into(),
        workload: workload.into(),
        from: release(base),
        to: release(k),
        measured_delta_ns: measured,
        predicted_delta_ns: predicted,
        predicted_range_ns: None,
        percent_change: Some(ratio.scale(100.0)),
        raw_percent_change: raw_ratio.map(|e| e.scale(100.0)),
        significant: Some(!compare::holds(&ratio, 0.0)),
        model_from: m_from,
        model_to: m_to,
        delta_precise_read_ns: None,
        delta_coarse_read_ns: None,
        delta_precise_read_in_write_ns: None,
        predicted_in_write_delta_ns: None,
        counted_reads_from: None,
        counted_reads_to: None,
        counted_predicted_delta_ns: None,
        diagnosis: None,
        pairs: a.len().min(b.len()),
        noise_ns: compare::noise(&measured),
        verdict: compare::verdict(&measured, predicted, zero),
    })
}
