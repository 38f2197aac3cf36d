//! Kernel rows of `vm bench` (comparison b): every kernel against the first, per file system,
//! workload and clocksource. Boots of two kernels cannot be paired, so each loop's ns per op
//! is divided by the null syscall timed right before it ([`super::rows::KERNEL_CONTROL`]),
//! and the change is Welch's t on the logs of each boot's median
//! ([`compare::ratio_change`]); the raw change is beside it, and the models' difference at the
//! first kernel's measured costs: the reads at the guest's read costs, and the updates at the
//! update price a guest's live knob pair gave on that file system ([`super::knob`]).

use super::compare::{self, ZERO_READS};
use super::predict::model_reads;
use super::rows::{by_boot, costs, median_of, observations, release, BenchComparison, Obs};
use super::BenchKernel;
use crate::trace::FsKind;
use crate::vm::boot::clock::Clocksource;
use crate::workload::WorkloadName;

pub(super) fn kernel_row(
    base: &BenchKernel,
    k: &BenchKernel,
    cs: Clocksource,
    fs: FsKind,
    workload: WorkloadName,
    knob: &[super::knob::KnobRow],
    seed: &mut impl FnMut() -> u64,
) -> Option<BenchComparison> {
    let a = observations(base, cs, fs, workload);
    let b = observations(k, cs, fs, workload);
    let with_control = |obs: &[Obs]| by_boot(obs, |o| Some((o.ns_per_op, o.control_ns)));
    let (ca, cb) = (
        compare::controlled(&with_control(&a)),
        compare::controlled(&with_control(&b)),
    );
    let ratio = compare::ratio_change(&ca, &cb, seed())?;
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
    let price = super::knob::update_price(knob, &release(base), &release(k), fs);
    let mut update_delta = None;
    let (predicted, zero) = match (&m_from, &m_to) {
        (Some(f), Some(t)) => {
            let dp = t.precise_per_op - f.precise_per_op;
            let dc = t.coarse_per_op - f.coarse_per_op;
            let du = t.updates_per_op - f.updates_per_op;
            update_delta = price.as_ref().map(|(u, _)| du * u);
            (
                Some(dp * c.precise_read_ns + dc * c.coarse_read_ns + update_delta.unwrap_or(0.0)),
                dp.abs() < ZERO_READS && dc.abs() < ZERO_READS && du.abs() < ZERO_READS,
            )
        }
        _ => (None, false),
    };
    Some(BenchComparison {
        kind: crate::vm::bench::ComparisonKind::Kernel,
        kernel_release: None,
        kernels: Some(vec![release(base), release(k)]),
        clocksource: Some(cs),
        fs,
        workload,
        from: release(base),
        to: release(k),
        measured_delta_ns: measured,
        interval_method: Some(compare::ratio_method(&ca, &cb)),
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
        delta_read_in_path_ns: None,
        delta_read_in_syscall_ns: None,
        precise_read_price: None,
        delta_precise_read_price_ns: None,
        predicted_syscall_delta_ns: None,
        counted_reads_from: None,
        counted_reads_to: None,
        counted_predicted_delta_ns: None,
        counted_from: None,
        counted_to: None,
        delta_spin_ns: None,
        spin_tax: None,
        diagnosis: None,
        equivalence: None,
        update_price_ns: price.as_ref().map(|(u, _)| *u),
        update_priced_on: price.map(|(_, k)| k),
        predicted_update_delta_ns: update_delta,
        lkp: None,
        pairs: a.len().min(b.len()),
        noise_ns: compare::noise(&measured),
        verdict: compare::verdict(&measured, predicted, zero, false),
    })
}
