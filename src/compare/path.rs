//! One path, one word: sources that run the same code to the same clock move together, so
//! compare gives them one word, said once.
//!
//! The vDSO's clock reads (`vdso:realtime`, `monotonic`, `monotonic_raw`, `boottime`, `tai`,
//! `vdso:gettimeofday`) all read the clocksource and convert its count in user space;
//! `std:instant` and `std:systemtime` are `clock_gettime` over them. A change of the
//! clocksource or of that conversion moves every one of them by the same share. Judged one by
//! one, some would cross their interval's edge and some would not, and the table would call
//! the same change "slower" on one row and "no change" on the next. The kernel's clock reads by
//! syscall share their path likewise.
//!
//! Per path and input: the members' judged log ratios (net of any shift, widened by the noise)
//! and their median `m`; the members within their own judged half-width (at least
//! [`super::noise::MIN_TOLERANCE`]) of `m` move with the path. When two thirds of the members
//! or more do (two at least), the path's interval is `m ± h`, `h` the median of their judged
//! half-widths, and its word is every such member's word. A member outside moved apart from
//! its path: it keeps its own word and is named. As for a shift, the path's word must agree
//! with the one its members' ratios give without the shift, else it is `no change`.

use serde::{Deserialize, Serialize};

pub use super::paths::{Path, PATHS};

use super::noise::{MIN_TOLERANCE, SHIFT_SHARE};
use super::{Change, Comparison};
use crate::stats::Estimate;

/// One path's word for one input.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PathWord {
    /// The input (column label).
    pub label: String,
    /// The path, in words.
    pub path: String,
    /// The word every member moving with the path is given.
    pub change: Change,
    /// The members' median ratio − 1 (net of any shift), in percent.
    pub percent: f64,
    /// The path's judged ratio interval: the median ratio ± the median judged half-width.
    pub interval: Estimate,
    /// The members that moved with the path (their word is the path's).
    pub members: Vec<String>,
    /// The members that moved apart from it (judged alone, each keeps its own word).
    pub apart: Vec<String>,
    /// The line the table prints.
    pub summary: String,
}

/// Log ratio and log half-width (the larger side) of a judged interval.
fn log_of(e: &Estimate) -> Option<(f64, f64)> {
    (e.point > 0.0 && e.lower > 0.0 && e.upper > 0.0).then(|| {
        let half = (e.upper / e.point).ln().max((e.point / e.lower).ln());
        (e.point.ln(), half)
    })
}

/// The path's word over `members` (judged log ratio, judged log half-width, log ratio before
/// any shift): the median, the members with it (indices) and the interval; `None` when fewer
/// than two thirds of them (or fewer than two) move together.
pub fn word(members: &[(f64, f64, f64)]) -> Option<(Change, Estimate, Vec<usize>)> {
    if members.len() < 2 {
        return None;
    }
    let xs: Vec<f64> = members.iter().map(|m| m.0).collect();
    let m = crate::stats::median(&xs)?;
    let with: Vec<usize> = (0..members.len())
        .filter(|i| (members[*i].0 - m).abs() <= members[*i].1.max(MIN_TOLERANCE))
        .collect();
    if with.len() < 2 || (with.len() as f64) < SHIFT_SHARE * members.len() as f64 {
        return None;
    }
    let halves: Vec<f64> = with.iter().map(|i| members[*i].1).collect();
    let h = crate::stats::median(&halves)?;
    let interval = Estimate {
        point: m.exp(),
        lower: (m - h).exp(),
        upper: (m + h).exp(),
    };
    let unshifted: Vec<f64> = with.iter().map(|i| members[*i].2).collect();
    let u = crate::stats::median(&unshifted)?;
    let before = Estimate {
        point: u.exp(),
        lower: (u - h).exp(),
        upper: (u + h).exp(),
    };
    let change = match Change::of_interval(&interval) {
        c if c == Change::of_interval(&before) => c,
        _ => Change::NoChange,
    };
    Some((change, interval, with))
}

/// Gives each path's members one word per input after the first ([`word`]), records each path
/// that moved or had a member apart, and marks the rows.
pub fn apply(cmp: &mut Comparison) {
    for r in &mut cmp.sources {
        r.path_word = vec![false; r.change.len()];
    }
    for col in 0..cmp.columns.len().saturating_sub(1) {
        for p in PATHS {
            let rows: Vec<usize> = (0..cmp.sources.len())
                .filter(|i| p.sources.contains(&cmp.sources[*i].id.as_str()))
                .filter(|i| {
                    let r = &cmp.sources[*i];
                    r.judged_interval.get(col).copied().flatten().is_some()
                        && r.ratio_interval.get(col).copied().flatten().is_some()
                })
                .collect();
            let members: Vec<(f64, f64, f64)> = rows
                .iter()
                .filter_map(|i| {
                    let r = &cmp.sources[*i];
                    let (x, h) = log_of(&r.judged_interval[col]?)?;
                    let before = r.ratio_interval[col]?.point.ln();
                    Some((x, h, before))
                })
                .collect();
            if members.len() != rows.len() {
                continue;
            }
            let Some((change, interval, with)) = word(&members) else {
                continue;
            };
            let own_words_differ = with
                .iter()
                .any(|i| cmp.sources[rows[*i]].change[col] != Some(change));
            let ids = |keep: bool| -> Vec<String> {
                (0..rows.len())
                    .filter(|i| with.contains(i) == keep)
                    .map(|i| cmp.sources[rows[i]].id.clone())
                    .collect()
            };
            let (moved, apart) = (ids(true), ids(false));
            for i in &with {
                let r = &mut cmp.sources[rows[*i]];
                r.change[col] = Some(change);
                r.path_word[col] = true;
                if change != Change::NoChange {
                    r.with_machine[col] = false;
                }
            }
            if change == Change::NoChange && apart.is_empty() && !own_words_differ {
                continue;
            }
            let label = cmp.columns[col + 1].label.clone();
            let percent = 100.0 * (interval.point - 1.0);
            let mut summary = format!(
                "{label}: {} of {} sources on {} moved together by {percent:+.2}%: {}, one word \
                 for all ({})",
                moved.len(),
                rows.len(),
                p.name,
                change.as_str(),
                moved.join(", ")
            );
            if !apart.is_empty() {
                summary += &format!("; apart from it, judged alone: {}", apart.join(", "));
            }
            cmp.paths.push(PathWord {
                label,
                path: p.name.into(),
                change,
                percent,
                interval,
                members: moved,
                apart,
                summary,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(pct: f64, half_pct: f64) -> (f64, f64, f64) {
        let x = (1.0 + pct / 100.0).ln();
        (x, (1.0 + half_pct / 100.0).ln(), x)
    }

    #[test]
    fn a_path_that_moved_gets_one_word() {
        // +15% on every member, one member's interval wider than its move: one word, slower.
        let m = [at(15.0, 3.0), at(14.8, 3.0), at(15.2, 3.0), at(15.0, 20.0)];
        let (c, e, with) = word(&m).unwrap();
        assert_eq!(c, Change::Slower);
        assert_eq!(with.len(), 4);
        assert!((e.point - 1.15).abs() < 0.003, "{e:?}");
    }

    #[test]
    fn a_member_that_moved_alone_is_apart() {
        let m = [at(0.0, 3.0), at(0.1, 3.0), at(-0.1, 3.0), at(20.0, 3.0)];
        let (c, _, with) = word(&m).unwrap();
        assert_eq!(c, Change::NoChange);
        assert_eq!(with, vec![0, 1, 2]);
    }

    #[test]
    fn scattered_members_get_no_path_word() {
        let m = [at(0.0, 1.0), at(10.0, 1.0), at(-10.0, 1.0)];
        assert!(word(&m).is_none());
        assert!(word(&[at(5.0, 1.0)]).is_none());
    }

    #[test]
    fn a_shift_only_takes_the_path_word_away() {
        // Judged net of a +5% shift, the path reads −5%; before the shift it stood still.
        let x = (0.95f64).ln();
        let h = (1.03f64).ln();
        let m = [(x, h, 0.0), (x, h, 0.0), (x, h, 0.0)];
        assert_eq!(word(&m).unwrap().0, Change::NoChange);
    }
}
