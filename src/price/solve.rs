//! The solver: walks the terms in order, prices each with the first recipe that isolates it,
//! and carries every interval through.

use super::recipe::Recipe;
use super::{Costs, Counts, Pattern, Term};
use crate::kernel::ModelId;
use crate::stats::Estimate;
use crate::trace::FsKind;

/// What the solver reads of a measured pair.
pub trait Pair {
    /// The loop it ran.
    fn pattern(&self) -> Pattern;
    /// Its name in words (`write-stat`).
    fn name(&self) -> &str;
    /// Queried − control ns per iteration, with its interval.
    fn delta(&self) -> Estimate;
    /// Queried − control ns per iteration in the calls of the pattern's [`super::Tail`],
    /// timed on their own, with its interval; `None` where they were not (a pattern without
    /// a tail, several tasks, a document from before they were).
    fn tail_delta(&self) -> Option<Estimate>;
    /// Whether the kernel showed multigrain timestamps on it.
    fn multigrain(&self) -> bool;
    /// The filesystem it ran on.
    fn fs_type(&self) -> &str;
    fn fs_kind(&self) -> FsKind;
}

/// The part of a pair's iteration a recipe reads: the whole iteration, or the calls of the
/// pattern's [`super::Tail`] timed on their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Whole,
    Tail,
}

/// A pair's name as a recipe reads it: `chmod-stat-read16`, or `chmod-stat-read16 [16 × read]`
/// for its tail.
fn part_name<P: Pair>(p: &P, part: Part) -> String {
    match (part, p.pattern().tail()) {
        (Part::Tail, Some(t)) => format!("{} [{} × {}]", p.name(), t.calls, t.syscall.name()),
        _ => p.name().to_string(),
    }
}

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
pub fn known(steps: &[Step], costs: &Costs, term: Term, fs: FsKind) -> Option<Estimate> {
    match steps.iter().find(|s| s.recipe.term == term) {
        Some(s) => Some(s.price),
        None if term.is_read() => Some(Estimate::exact(costs.on(term, fs))),
        None => None,
    }
}

/// `recipe` on `pairs` with the terms of `steps` priced, or why it does not price its term.
fn attempt<P: Pair>(
    recipe: &'static Recipe,
    model: ModelId,
    costs: Costs,
    pairs: &[&P],
    count: &impl Fn(&P, Part) -> Option<Counts>,
    steps: &[Step],
) -> Result<Step, String> {
    let find = |pattern| {
        pairs
            .iter()
            .copied()
            .find(|p| p.pattern() == pattern)
            .ok_or_else(|| format!("no {} pair", pattern.name()))
    };
    let pair = find(recipe.pair)?;
    let against = recipe.against.map(find).transpose()?;
    for p in std::iter::once(pair).chain(against) {
        if !p.multigrain() {
            return Err(format!(
                "the {} pair showed no multigrain ctimes on {}",
                p.name(),
                p.fs_type()
            ));
        }
    }
    let part = recipe.part;
    let delta_of = |p: &P| {
        let counts = count(p, part).ok_or_else(|| {
            format!(
                "a {} is not a loop the model replays as a pattern",
                part_name(p, part)
            )
        })?;
        let delta = match part {
            Part::Whole => Some(p.delta()),
            Part::Tail => p.tail_delta(),
        };
        let delta = delta.ok_or_else(|| {
            format!(
                "the {} pair's last calls were not timed on their own",
                p.name()
            )
        })?;
        Ok::<_, String>((counts, delta))
    };
    let (mut counts, mut delta) = delta_of(pair)?;
    if let Some(a) = against {
        let (c, d) = delta_of(a)?;
        counts = counts - c;
        delta = delta.minus_independent(d);
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
            part_name(pair, part),
            against
                .map(|a| format!(" against {}'s", part_name(a, part)))
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
    if let Some(t) = recipe
        .apart
        .iter()
        .find(|&&t| known(steps, &costs, t, fs).is_none() && counts[t].abs() >= recipe.tolerance)
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
        .filter_map(|&t| Some((t, counts[t], known(steps, &costs, t, fs)?)))
        .filter(|(_, _, e)| *e != Estimate::exact(0.0))
        .collect();
    let rest = known.iter().fold(
        delta.minus_independent(Estimate::exact(counts.reads_ns)),
        |acc, &(_, n, e)| acc.minus_independent(e * n),
    );
    Ok(Step {
        recipe,
        pair: part_name(pair, part),
        against: against.map(|a| part_name(a, part)),
        delta,
        counts,
        known,
        price: rest / counts[term],
    })
}

/// Prices every term it can from `pairs` (one filesystem's), the reads at `costs`' prices and
/// `count` giving the model's queried − control counts of a pair's part: each term in
/// [`Term::ALL`]'s order by the first of its recipes that isolates it, with the terms priced
/// before it taken out.
pub fn solve<P: Pair>(
    model: ModelId,
    costs: Costs,
    pairs: &[&P],
    count: impl Fn(&P, Part) -> Option<Counts>,
) -> Solution {
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
            let tried = attempt(recipe, model, costs, pairs, &count, &s.steps);
            match (tried, s.step(term).is_some()) {
                (Ok(step), false) => s.steps.push(step),
                (Ok(step), true) => s.checks.push((recipe, Ok(step.price))),
                (Err(e), true) if pairs.iter().any(|p| p.pattern() == recipe.pair) => {
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
