//! A filesystem's entry in the profile (`filesystems[]`) from its live pairs: the terms
//! [`crate::price::solve()`] prices with the model's counts of each pair, and the reasons.

use super::counts::{model_of, pair_delta, pair_delta_in};
use crate::price::{known, solve, Costs, Term};
use crate::probe::update::FsUpdate;
use crate::workload::pair::PairResult;

/// An entry for `pairs`' filesystem, the pairs kept, nothing priced yet.
pub(crate) fn unpriced(pairs: &[&PairResult]) -> FsUpdate {
    let pair = pairs[0];
    let mut out = FsUpdate {
        dir: pair.dir.clone(),
        fs_type: pair.fs_type.clone(),
        mount_options: pair.mount_options.clone(),
        multigrain: pair.multigrain_observed,
        prices: Default::default(),
        query_pattern: None,
        priced_by: Default::default(),
        reason: String::new(),
        model: Some(model_of(pair).label()),
        reads_delta_ns: None,
        updates_delta: None,
        queries_delta: None,
        swaps_delta: None,
        pair: None,
        query_pair: None,
        floor_pair: None,
        floor_apart_pair: None,
        fine_pair: None,
        fine_base_pair: None,
        swap_pair: None,
        swap_apart_pair: None,
        first_pair: None,
        read_pair: None,
        sync_pair: None,
    };
    for p in pairs {
        out.keep_pair(p);
    }
    out
}

/// Prices one filesystem from its live `pairs` (the first write-stat, any of the others the
/// recipes name) with the reads at `costs` (the profile's, or a guest's own paired read costs
/// in `vm bench`).
pub fn price_at(pairs: &[&PairResult], costs: Costs) -> FsUpdate {
    let mut out = unpriced(pairs);
    let pair = pairs[0];
    if !pair.multigrain_observed {
        out.reason = format!(
            "not measurable here: the kernel showed no multigrain timestamps on {} ({}), so \
             the question changes no update; {}",
            pair.fs_type,
            pair.kernel_release.as_deref().unwrap_or("unknown kernel"),
            pair.check.as_deref().unwrap_or("")
        );
        return out;
    }
    let model = model_of(pair);
    let s = solve(model, costs, pairs, |p, part| {
        pair_delta_in(model, costs, p, part)
    });
    for step in &s.steps {
        let t = step.recipe.term;
        out.prices.set(t, Some(step.price));
        let against = match &step.against {
            Some(a) => format!(" against {a}"),
            None => String::new(),
        };
        out.priced_by.insert(
            t.field().to_string(),
            format!("{} pair{against}", step.pair),
        );
    }
    out.query_pattern = s.step(Term::Query).map(|q| q.recipe.pair.name());
    // The update's pair, or write-stat's where the update is not priced: what the model
    // counts between its sides.
    let main = s
        .step(Term::Update)
        .map(|u| (u.counts, u.reads_ns()))
        .or_else(|| {
            let d = pair_delta(model, costs, pair)?;
            let reads: f64 = Term::ALL
                .iter()
                .filter(|t| t.is_read())
                .map(|&t| d[t] * known(&s.steps, &costs, t, s.fs).map_or(0.0, |e| e.point))
                .sum();
            Some((d, d.reads_ns + reads))
        });
    if let Some((d, reads)) = main {
        out.reads_delta_ns = Some(reads);
        out.updates_delta = Some(d[Term::Update]);
        out.queries_delta = Some(d[Term::Query]);
        out.swaps_delta = Some(d[Term::CtimeSwap]);
    }
    out.reason = format!(
        "live pairs on {} ({} × ABBA of {} iterations each), {model}: {}",
        pair.dir,
        pair.repetitions,
        pair.iterations_per_block,
        s.words()
    );
    out
}

/// Prices one filesystem from its `pairs`, the reads priced from `profile`.
pub fn price(pairs: &[&PairResult], profile: &crate::probe::Profile) -> FsUpdate {
    use crate::sim::config::{LoopSource, SimulateConfig};
    let model = model_of(pairs[0]);
    let cfg = SimulateConfig::new(LoopSource::Scenario("write-stat".into()));
    match crate::sim::costs::resolve_as_measured(model, Some(profile), &cfg) {
        Ok((c, _)) => price_at(pairs, c),
        Err(e) => {
            let mut out = unpriced(pairs);
            out.reason = format!("the reads cannot be priced: {e}");
            out
        }
    }
}
