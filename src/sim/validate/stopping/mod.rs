//! When the emulation's rounds stop: after every round from the second on, each injection's
//! error gets an interval; the rounds go on until every interval decides (is no wider than
//! the goal) with the same verdict as at the look before, or until the time budget or the
//! planned number of rounds runs out.
//!
//! Looking after every round and stopping at the first good look would make the intervals
//! lie: the rounds stop exactly when the spread happens to look small, so the printed ±
//! covers the true error less often than it says (optional stopping). Two guards:
//!
//! - **Repeated confidence intervals, Bonferroni split.** The number of looks is fixed before
//!   the first one (from the budget and the first round's duration), and each look's
//!   intervals are at level `1 − α/L` (α = 5%, L looks). By the union bound every look's
//!   intervals cover the true errors at once with probability at least 95%, so whatever the
//!   rule stops on, the interval printed at the stop is still a 95% interval. Stopping early
//!   (budget) only makes it more conservative.
//! - **The verdict must hold for two consecutive looks**: a row that reads `ok` at one look and
//!   `MISS` or undecided at the next is not taken; the point must stay on one side of the
//!   goal while the rounds accumulate.
//!
//! Pure: the tests feed it synthetic, seeded series.

/// The two-sided error rate shared by all looks.
pub const ALPHA: f64 = 0.05;

/// The round of the first look: two rounds give the first spread.
pub const FIRST_LOOK: usize = 2;

/// One injection's verdict at one look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The interval is no wider than the goal and the point is within it.
    Within,
    /// The interval is no wider than the goal and the point is outside it.
    Miss,
    /// The interval is wider than the goal (or there is none).
    Undecided,
}

impl Verdict {
    /// The verdict of an error `point` with interval half-width `half` (both in percent).
    pub fn of(point: f64, half: Option<f64>, goal: f64) -> Verdict {
        match half {
            Some(h) if h <= goal && point.is_finite() => {
                if point.abs() <= goal {
                    Verdict::Within
                } else {
                    Verdict::Miss
                }
            }
            _ => Verdict::Undecided,
        }
    }
}

/// Why the rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every injection decided, with the same verdict at two consecutive looks.
    Decided,
    /// The planned rounds (from the time budget) are done, or the next would not fit in it.
    Budget,
}

impl Stop {
    /// The name written into the JSON (`stopped`).
    pub fn name(self) -> &'static str {
        match self {
            Stop::Decided => "all_decided",
            Stop::Budget => "budget",
        }
    }
}

/// The plan: at most `max_rounds` rounds, so `max_rounds − 1` looks (the first after round
/// [`FIRST_LOOK`]), fixed before the first look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub max_rounds: usize,
    pub goal: f64,
}

impl Plan {
    /// The rounds that fit in `budget_s` when `spent_s` are gone and a round takes `round_s`
    /// (at least [`FIRST_LOOK`]: an interval needs two rounds; at most `cap`).
    pub fn from_budget(budget_s: f64, spent_s: f64, round_s: f64, cap: usize, goal: f64) -> Plan {
        let fit = if round_s > 0.0 && round_s.is_finite() {
            ((budget_s - spent_s) / round_s).floor().max(0.0) as usize
        } else {
            cap
        };
        Plan {
            max_rounds: fit.clamp(FIRST_LOOK, cap.max(FIRST_LOOK)),
            goal,
        }
    }

    /// The looks planned: one after every round from [`FIRST_LOOK`] to `max_rounds`.
    pub fn looks(&self) -> usize {
        self.max_rounds + 1 - FIRST_LOOK
    }

    /// Each look's two-sided confidence level, `1 − α/L`.
    pub fn confidence(&self) -> f64 {
        1.0 - ALPHA / self.looks() as f64
    }
}

/// The sequence of looks.
#[derive(Debug, Clone)]
pub struct Sequence {
    pub plan: Plan,
    previous: Option<Vec<Verdict>>,
}

impl Sequence {
    pub fn new(plan: Plan) -> Sequence {
        Sequence {
            plan,
            previous: None,
        }
    }

    /// Looks after round `rounds` at each injection's `(point, half-width)` (taken at
    /// [`Plan::confidence`]); `Some` when the rounds stop here. A look before
    /// [`FIRST_LOOK`] only stops at the planned end.
    pub fn look(&mut self, rounds: usize, estimates: &[(f64, Option<f64>)]) -> Option<Stop> {
        let verdicts: Vec<Verdict> = estimates
            .iter()
            .map(|&(p, h)| Verdict::of(p, h, self.plan.goal))
            .collect();
        let decided = !verdicts.contains(&Verdict::Undecided);
        let steady = self.previous.as_ref() == Some(&verdicts);
        self.previous = (rounds >= FIRST_LOOK).then_some(verdicts);
        if rounds >= FIRST_LOOK && decided && steady {
            Some(Stop::Decided)
        } else if rounds >= self.plan.max_rounds {
            Some(Stop::Budget)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests;
