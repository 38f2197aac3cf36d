//! One clocksource row of `vm bench`: the measured change between two clocksources in one
//! kernel, the model's prediction from the change of a read's price, and the verdict.

use super::{
    cost_of, counted_reads, median_of, observations, pairs_by_round, read_time_delta, release,
    BenchComparison, Obs,
};
use crate::stats::Estimate;
use crate::trace::FsKind;
use crate::vm::bench::compare::{self, ComparisonKind, Verdict, ZERO_READS};
use crate::vm::bench::predict::{model_reads, ModelReads};
use crate::vm::bench::readtime::ReadPath;
use crate::vm::bench::BenchKernel;
use crate::vm::boot::clock::Clocksource;
use crate::workload::WorkloadName;

/// The clocksource row of `workload` on `fs` in kernel `k`, `from` → `to`: the change in ns per
/// op measured round by round, against the model's reads per op × the change of a read's
/// price; `None` when no round has both slots.
pub(in crate::vm::bench) fn clocksource_row(
    k: &BenchKernel,
    from: Clocksource,
    to: Clocksource,
    fs: FsKind,
    workload: WorkloadName,
    seed: &mut impl FnMut() -> u64,
) -> Option<BenchComparison> {
    let a = observations(k, from, fs, workload);
    let b = observations(k, to, fs, workload);
    let pairs = pairs_by_round(&a, &b, |o| o.ns_per_op);
    let measured = compare::paired_delta(&pairs, seed())?;
    let CostDeltas {
        precise: d_precise,
        coarse: d_coarse,
        in_write: d_in_write,
        spin: d_spin,
        spin_tax,
    } = cost_deltas(&a, &b, seed);
    let model = model_reads(
        &release(k),
        k.hz,
        workload,
        fs,
        median_of(&a, |o| o.ns_per_op),
    );
    let in_path = read_time_delta(k, from, to, Some(fs), ReadPath::Loop(workload));
    let in_syscall = read_time_delta(k, from, to, None, ReadPath::Syscall);
    let price = read_price(d_precise, in_path, in_syscall);
    let in_path_priced = price != d_precise;
    let range = predict(model.as_ref(), price, d_coarse);
    let predicted = range.map(|r| r.point);
    let predicted_syscall = predict(model.as_ref(), d_precise, d_coarse).map(|r| r.point);
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
    let equivalence = if zero {
        compare::paired_delta_at(&pairs, seed(), compare::EQUIVALENCE_LEVEL)
            .and_then(|e| compare::equivalence(e, median_of(&a, |o| o.ns_per_op)))
    } else {
        None
    };
    let verdict = compare::verdict(
        &measured,
        predicted,
        zero,
        equivalence.is_some_and(|e| e.equivalent),
    );
    Some(BenchComparison {
        kind: ComparisonKind::Clocksource,
        kernel_release: Some(release(k)),
        kernels: None,
        clocksource: None,
        fs,
        workload,
        from: from.name().into(),
        to: to.name().into(),
        measured_delta_ns: measured,
        interval_method: Some(compare::IntervalMethod::of(&pairs)),
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
        delta_read_in_path_ns: in_path,
        delta_read_in_syscall_ns: in_syscall,
        predicted_syscall_delta_ns: predicted_syscall,
        precise_read_price: Some(if in_path_priced { "in-path" } else { "syscall" }.into()),
        delta_precise_read_price_ns: price,
        counted_reads_from: counted_from,
        counted_reads_to: counted_to,
        counted_predicted_delta_ns: counted_to.zip(d_precise).map(|(n, d)| n * d.point),
        counted_from: None,
        counted_to: None,
        delta_spin_ns: d_spin,
        spin_tax,
        diagnosis: (verdict == Verdict::Disagrees)
            .then(|| {
                let at = if in_path_priced {
                    "in the op's path"
                } else {
                    "as a syscall"
                };
                crate::vm::bench::diagnosis::diagnosis(
                    &measured,
                    model.as_ref(),
                    counted_to,
                    price,
                    at,
                )
            })
            .flatten(),
        equivalence,
        update_price_ns: None,
        update_priced_on: None,
        predicted_update_delta_ns: None,
        lkp: None,
        pairs: pairs.iter().map(Vec::len).sum(),
        noise_ns: compare::noise(&measured),
        verdict,
    })
}

/// The change of each cost the slots measured beside the loops, `a` → `b`, round by round.
struct CostDeltas {
    precise: Option<Estimate>,
    coarse: Option<Estimate>,
    in_write: Option<Estimate>,
    spin: Option<Estimate>,
    /// The spin's change as a share of its `a` median: what the clocksource costs all
    /// execution.
    spin_tax: Option<Estimate>,
}

/// [`CostDeltas`], each interval drawn with the next of `seed`'s seeds (precise, coarse, in
/// write, spin: the order the report's intervals depend on).
fn cost_deltas(a: &[Obs], b: &[Obs], seed: &mut impl FnMut() -> u64) -> CostDeltas {
    let delta = |f: &dyn Fn(&Obs) -> f64, seed: u64| {
        compare::paired_delta(&pairs_by_round(a, b, |o| f(o)), seed)
    };
    let precise = delta(&|o: &Obs| cost_of(o, |c| c.precise_read_ns), seed());
    let coarse = delta(&|o: &Obs| cost_of(o, |c| c.coarse_read_ns), seed());
    let in_write = delta(
        &|o: &Obs| cost_of(o, |c| c.precise_read_in_write_ns.unwrap_or(f64::NAN)),
        seed(),
    );
    let spin = delta(&|o: &Obs| cost_of(o, |c| c.spin_ns), seed());
    let spin_from = median_of(a, |o| cost_of(o, |c| c.spin_ns));
    let spin_tax = spin
        .filter(|_| spin_from.is_finite() && spin_from > 0.0)
        .map(|d| d.scale(1.0 / spin_from));
    CostDeltas {
        precise,
        coarse,
        in_write,
        spin,
        spin_tax,
    }
}

/// The price of a read: the syscall-derived change, plus what a read costs more in the op's
/// path than in the syscall when the tracer timed both (the tracer's own cost cancels in that
/// difference); else the syscall-derived change alone.
fn read_price(
    d_precise: Option<Estimate>,
    in_path: Option<Estimate>,
    in_syscall: Option<Estimate>,
) -> Option<Estimate> {
    match (d_precise, in_path, in_syscall) {
        (Some(p), Some(a), Some(s)) => Some(Estimate {
            point: p.point + a.point - s.point,
            lower: p.lower + a.lower - s.upper,
            upper: p.upper + a.upper - s.lower,
        }),
        _ => d_precise,
    }
}

/// The model's change in ns per op for a precise read's change `p` and a coarse read's `c`.
fn predict(
    model: Option<&ModelReads>,
    p: Option<Estimate>,
    c: Option<Estimate>,
) -> Option<Estimate> {
    let (m, p, c) = (model?, p?, c?);
    let at = |p: f64, c: f64| compare::predicted_delta(m.precise_per_op, m.coarse_per_op, p, c);
    Some(Estimate {
        point: at(p.point, c.point),
        lower: at(p.lower, c.lower),
        upper: at(p.upper, c.upper),
    })
}
