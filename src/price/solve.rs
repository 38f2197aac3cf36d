//! The solver: walks the terms in order, prices each with the first recipe that isolates it,
//! and carries every interval through.

use super::counts::{model_of, pair_delta};
use super::recipe::Recipe;
use super::{Costs, Counts, Term};
use crate::kernel::ModelId;
use crate::probe::update::FsUpdate;
use crate::stats::Estimate;
use crate::trace::FsKind;
use crate::workload::pair::PairResult;

/// One priced term: the recipe, what it measured, what the model counts between its sides,
/// and the priced terms it took out.
#[derive(Debug, Clone)]
pub struct Step {
    pub recipe: &'static Recipe,
    /// The pair's name, and its `against`'s.
    pub pair: String,
    pub against: Option<String>,
    /// The measured Δ (less `against`'s), ns per iteration.
    pub delta: Estimate,
    /// The model's counts between the sides (less `against`'s).
    pub counts: Counts,
    /// The priced terms taken out: each with its units between the sides and its price.
    pub known: Vec<(Term, f64, Estimate)>,
    /// `(delta − counts.reads_ns − Σ units × price) / units of the term`.
    pub price: Estimate,
}

impl Step {
    /// The reads and the read terms taken out, ns per iteration: what the model counts as
    /// reads between the sides.
    pub fn reads_ns(&self) -> f64 {
        self.counts.reads_ns
            + self
                .known
                .iter()
                .filter(|(t, ..)| t.is_read())
                .map(|(_, n, e)| n * e.point)
                .sum::<f64>()
    }

    fn words(&self) -> String {
        let r = self.recipe;
        let e = self.price;
        let against = match &self.against {
            Some(a) => format!(" against the {a} pair's"),
            None => String::new(),
        };
        let known: String = self
            .known
            .iter()
            .map(|(t, n, p)| format!(", {n:.3} {} at {:.1} ns", t.units(), p.point))
            .collect();
        format!(
            "{} {:.1} ns [{:.1}, {:.1}] ({} pair: Δ {:.1} ns{against}, less {:.1} ns of reads{known}, \
             over {:.3} {}; {})",
            r.term.label(),
            e.point,
            e.lower,
            e.upper,
            self.pair,
            self.delta.point,
            self.counts.reads_ns,
            self.counts[r.term],
            r.term.units(),
            r.why
        )
    }
}

/// What the solver found for one filesystem.
#[derive(Debug, Clone)]
pub struct Solution {
    pub model: ModelId,
    pub fs: FsKind,
    /// The priced terms, in the order priced.
    pub steps: Vec<Step>,
    /// Each priced term's other recipes that its pairs could run: a prediction of the price.
    pub checks: Vec<(&'static Recipe, Result<Estimate, String>)>,
    /// Each term not priced, and why each of its recipes did not.
    pub unpriced: Vec<(Term, Vec<String>)>,
    /// The costs the steps were solved with.
    costs: Costs,
}

impl Solution {
    /// `term`'s step, where priced.
    pub fn step(&self, term: Term) -> Option<&Step> {
        self.steps.iter().find(|s| s.recipe.term == term)
    }

    /// `term`'s price, where priced.
    pub fn price(&self, term: Term) -> Option<Estimate> {
        self.step(term).map(|s| s.price)
    }

    /// The costs solved with, every priced term at its price on this filesystem.
    pub fn costs(&self) -> Costs {
        self.steps.iter().fold(self.costs, |c, s| {
            c.with_on(s.recipe.term, self.fs, s.price.point)
        })
    }

    /// The steps, checks and unpriced terms in words.
    pub fn words(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for t in Term::ALL {
            if let Some(s) = self.step(t) {
                let mut w = s.words();
                for (r, c) in self.checks.iter().filter(|(r, _)| r.term == t) {
                    let name = r.pair.name();
                    w.push_str(&match c {
                        Ok(e) => format!(
                            "; {name} would price it at {:.1} ns [{:.1}, {:.1}]",
                            e.point, e.lower, e.upper
                        ),
                        Err(why) => format!("; {name} does not price it ({why})"),
                    });
                }
                parts.push(w);
            } else if let Some((_, why)) = self.unpriced.iter().find(|(u, _)| *u == t) {
                let held = if t.is_read() {
                    match self.costs.on(t, self.fs) {
                        0.0 => " (taken as 0)".to_string(),
                        v => format!(" (at the profile's {v:.1} ns)"),
                    }
                } else {
                    let holder = Term::ALL
                        .iter()
                        .find(|h| self.step(**h).is_some_and(|s| s.recipe.needs.contains(&t)));
                    match holder {
                        Some(h) => format!(", so the {} holds its work", h.label()),
                        None => String::new(),
                    }
                };
                parts.push(format!(
                    "the {} not priced apart ({}){held}",
                    t.label(),
                    why.join("; ")
                ));
            }
        }
        parts.join("; ")
    }
}

/// The price of `term` on `pairs`' filesystem known when solving the next: solved here, or a
/// read's from `costs`.
fn known(steps: &[Step], costs: &Costs, term: Term, fs: FsKind) -> Option<Estimate> {
    match steps.iter().find(|s| s.recipe.term == term) {
        Some(s) => Some(s.price),
        None if term.is_read() => Some(Estimate::exact(costs.on(term, fs))),
        None => None,
    }
}

/// `recipe` on `pairs` with the terms of `steps` priced, or why it does not price its term.
fn attempt(
    recipe: &'static Recipe,
    model: ModelId,
    costs: Costs,
    pairs: &[&PairResult],
    steps: &[Step],
) -> Result<Step, String> {
    let find = |pattern| {
        pairs
            .iter()
            .copied()
            .find(|p| p.pattern == pattern)
            .ok_or_else(|| format!("no {} pair", pattern.name()))
    };
    let pair = find(recipe.pair)?;
    let against = recipe.against.map(find).transpose()?;
    for p in std::iter::once(pair).chain(against) {
        if !p.multigrain_observed {
            return Err(format!(
                "the {} pair showed no multigrain ctimes on {}",
                p.pattern_name, p.fs_type
            ));
        }
    }
    let delta_of = |p: &PairResult| {
        pair_delta(model, costs, p).ok_or_else(|| {
            format!(
                "a {} is not a loop the model replays as a pattern",
                p.pattern_name
            )
        })
    };
    let (mut counts, mut delta) = (delta_of(pair)?, pair.delta_ns);
    if let Some(a) = against {
        counts = counts - delta_of(a)?;
        delta = delta - a.delta_ns;
    }
    let fs = pair.fs_kind();
    let term = recipe.term;
    let between = || {
        let others: String = Term::ALL
            .iter()
            .filter(|&&t| t != term)
            .map(|&t| format!(", {:+.3} {}", counts[t], t.units()))
            .collect();
        format!(
            "{model} counts {:+.3} {}{others} per iteration between the sides of {}{}",
            counts[term],
            term.units(),
            pair.pattern_name,
            against
                .map(|a| format!(" against {}'s", a.pattern_name))
                .unwrap_or_default()
        )
    };
    if counts[term] < recipe.min_units {
        return Err(format!(
            "{}: the {} does not move between them, so the pair cannot price it, and it is not \
             needed by the knob there (the knob changes only what moves)",
            between(),
            term.label()
        ));
    }
    let fs_costs = costs;
    if let Some(t) = recipe
        .apart
        .iter()
        .find(|&&t| known(steps, &fs_costs, t, fs).is_none() && counts[t].abs() >= recipe.tolerance)
    {
        return Err(format!(
            "{}: the {} moves too, so the pair does not isolate the {}",
            between(),
            t.label(),
            term.label()
        ));
    }
    let known: Vec<(Term, f64, Estimate)> = Term::ALL
        .iter()
        .filter(|&&t| t != term && counts[t] != 0.0)
        .filter_map(|&t| Some((t, counts[t], known(steps, &fs_costs, t, fs)?)))
        .filter(|(_, _, e)| *e != Estimate::exact(0.0))
        .collect();
    let rest = known.iter().fold(
        delta - Estimate::exact(counts.reads_ns),
        |acc, &(_, n, e)| acc - e * n,
    );
    Ok(Step {
        recipe,
        pair: pair.pattern_name.clone(),
        against: against.map(|a| a.pattern_name.clone()),
        delta,
        counts,
        known,
        price: rest / counts[term],
    })
}

/// Prices every term it can from `pairs` (one filesystem's, the first write-stat), the reads
/// at `costs`' prices: each term in [`Term::ALL`]'s order by the first of its recipes that
/// isolates it, with the terms priced before it taken out.
pub fn solve(model: ModelId, costs: Costs, pairs: &[&PairResult]) -> Solution {
    let fs = pairs.first().map_or(FsKind::Other, |p| p.fs_kind());
    let mut s = Solution {
        model,
        fs,
        steps: Vec::new(),
        checks: Vec::new(),
        unpriced: Vec::new(),
        costs,
    };
    for term in Term::ALL {
        let mut why = Vec::new();
        for recipe in Recipe::of(term) {
            let tried = attempt(recipe, model, costs, pairs, &s.steps);
            match (tried, s.step(term).is_some()) {
                (Ok(step), false) => s.steps.push(step),
                (Ok(step), true) => s.checks.push((recipe, Ok(step.price))),
                (Err(e), true) if pairs.iter().any(|p| p.pattern == recipe.pair) => {
                    s.checks.push((recipe, Err(e)))
                }
                (Err(_), true) => {}
                (Err(e), false) => why.push(format!("{}: {e}", recipe.pair.name())),
            }
        }
        if s.step(term).is_none() {
            s.unpriced.push((term, why));
        }
    }
    s
}

/// An entry for `pairs`' filesystem, the pairs kept, nothing priced yet.
fn unpriced(pairs: &[&PairResult]) -> FsUpdate {
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
        pair: None,
        query_pair: None,
        floor_pair: None,
        fine_pair: None,
        fine_base_pair: None,
        read_pair: None,
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
    let s = solve(model, costs, pairs);
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
    out.query_pattern = s.step(Term::Query).map(|q| q.pair.clone());
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
