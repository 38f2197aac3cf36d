//! The noise of a repeated error: per group (one injection), the errors of its rounds; the
//! spread of every group's rounds about its own mean, pooled over the groups (one-way analysis
//! of variance: the groups share the machine and its noise, so one spread estimated from all of
//! them is steadier than each group's own from a handful of rounds), gives a Student-t 95%
//! interval on each group's mean, at 95% or at any other level (the sequential rule in
//! [`super::stopping`] looks at wider intervals).

use crate::stats::{t975, t_two_sided};

/// Each group's mean and the half-width of its 95% interval from the pooled within-group
/// spread: `t(0.975, Σ(nᵢ − 1)) · s_p / √nᵢ`. The half-width is `None` when no group has two
/// values (no spread to estimate) and infinite when that spread is not finite. Empty groups
/// give a NaN mean. NaN values are dropped.
pub fn pooled(groups: &[Vec<f64>]) -> Vec<(f64, Option<f64>)> {
    pooled_with(groups, t975)
}

/// [`pooled`] at a two-sided `confidence` other than 95%.
pub fn pooled_at(groups: &[Vec<f64>], confidence: f64) -> Vec<(f64, Option<f64>)> {
    pooled_with(groups, |df| t_two_sided(confidence, df))
}

fn pooled_with(
    groups: &[Vec<f64>],
    quantile: impl Fn(usize) -> Option<f64>,
) -> Vec<(f64, Option<f64>)> {
    let clean: Vec<Vec<f64>> = groups
        .iter()
        .map(|g| g.iter().copied().filter(|x| !x.is_nan()).collect())
        .collect();
    let mean = |g: &[f64]| g.iter().sum::<f64>() / g.len() as f64;
    let (mut ss, mut df) = (0.0, 0usize);
    for g in clean.iter().filter(|g| g.len() >= 2) {
        let m = mean(g);
        ss += g.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
        df += g.len() - 1;
    }
    let sp = (df > 0).then(|| (ss / df as f64).sqrt());
    clean
        .iter()
        .map(|g| {
            let half = match (sp, quantile(df)) {
                (Some(sp), Some(t)) if !g.is_empty() => Some(if sp.is_finite() {
                    t * sp / (g.len() as f64).sqrt()
                } else {
                    f64::INFINITY
                }),
                _ => None,
            };
            (mean(g), half)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_at_95_is_pooled() {
        let g = [vec![1.0, 2.0, 4.0], vec![8.0, 10.0, 13.0]];
        for ((m1, h1), (m2, h2)) in pooled(&g).into_iter().zip(pooled_at(&g, 0.95)) {
            assert_eq!(m1, m2);
            assert!((h1.unwrap() - h2.unwrap()).abs() < 1e-3 * h1.unwrap());
        }
        let wide = pooled_at(&g, 0.995);
        assert!(wide[0].1.unwrap() > pooled(&g)[0].1.unwrap());
    }

    #[test]
    fn pooled_interval_by_hand() {
        // Group a: mean 2, SS 2 (1, 2, 3); group b: mean 10, SS 8 (8, 10, 12). df 4,
        // s_p = sqrt(10 / 4), half = 2.776 · s_p / sqrt(3).
        let out = pooled(&[vec![1.0, 2.0, 3.0], vec![8.0, 10.0, 12.0]]);
        let half = 2.776 * (10.0f64 / 4.0).sqrt() / 3f64.sqrt();
        assert_eq!(out.len(), 2);
        assert!((out[0].0 - 2.0).abs() < 1e-12 && (out[1].0 - 10.0).abs() < 1e-12);
        for (_, h) in &out {
            assert!((h.unwrap() - half).abs() < 1e-9, "{h:?} vs {half}");
        }
    }

    #[test]
    fn edge_cases() {
        assert!(pooled(&[]).is_empty());
        // A single value per group: no spread, no interval.
        assert_eq!(pooled(&[vec![3.0]]), vec![(3.0, None)]);
        // No spread at all: a zero-width interval.
        assert_eq!(pooled(&[vec![1.0, 1.0]]), vec![(1.0, Some(0.0))]);
        // NaN dropped; an empty group has a NaN mean and no interval.
        let out = pooled(&[vec![1.0, f64::NAN, 3.0], vec![]]);
        assert_eq!(out[0].0, 2.0);
        assert!(out[0].1.unwrap() > 0.0);
        assert!(out[1].0.is_nan() && out[1].1.is_none());
        // An infinite value: the interval is infinite, not NaN.
        let out = pooled(&[vec![1.0, f64::INFINITY]]);
        assert_eq!(out[0].1, Some(f64::INFINITY));
    }
}
