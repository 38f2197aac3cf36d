//! The noise of a repeated error: per group (one injection), the errors of its rounds; the
//! spread of every group's rounds about its own mean, pooled over the groups (one-way analysis
//! of variance: the groups share the machine and its noise, so one spread estimated from all of
//! them is steadier than each group's own from a handful of rounds), gives a Student-t 95%
//! interval on each group's mean, at 95% or at any other level (the sequential rule in
//! [`super::stopping`] looks at wider intervals).

/// Two-sided 95% Student-t quantile `t(0.975, df)`; `None` for `df == 0`. Table values for
/// df ≤ 30 (any statistics text, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2), then the
/// Cornish–Fisher expansion, within 0.001 of the exact value.
pub fn t975(df: usize) -> Option<f64> {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => None,
        1..=30 => Some(TABLE[df - 1]),
        _ => {
            let (z, n) = (1.959_964, df as f64);
            let z3 = z * z * z;
            let z5 = z3 * z * z;
            Some(z + (z3 + z) / (4.0 * n) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n))
        }
    }
}

/// `P(|T| ≤ t)` for Student's t with `df ≥ 1` degrees of freedom, exact for integer `df`
/// (Abramowitz & Stegun 26.7.3–26.7.4: with `θ = atan(t/√df)`, a finite series in `cos² θ`).
fn two_sided_cdf(t: f64, df: usize) -> f64 {
    let th = (t / (df as f64).sqrt()).atan();
    let (s, c2) = (th.sin(), th.cos() * th.cos());
    let (mut term, mut sum) = (1.0, 1.0);
    if df % 2 == 1 {
        for k in 1..=(df.saturating_sub(3) / 2) {
            term *= (2 * k) as f64 / (2 * k + 1) as f64 * c2;
            sum += term;
        }
        let series = if df == 1 { 0.0 } else { s * th.cos() * sum };
        2.0 / std::f64::consts::PI * (th + series)
    } else {
        for k in 1..=((df - 2) / 2) {
            term *= (2 * k - 1) as f64 / (2 * k) as f64 * c2;
            sum += term;
        }
        s * sum
    }
}

/// The two-sided Student-t quantile: the `t` with `P(|T| ≤ t) = confidence` for `df` degrees
/// of freedom (`t975(df)` is `t_two_sided(0.95, df)`); `None` for `df == 0` or a confidence
/// outside (0, 1). Bisection on the exact distribution function, to 1e-9 relative.
pub fn t_two_sided(confidence: f64, df: usize) -> Option<f64> {
    if df == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let mut hi = 1.0;
    while two_sided_cdf(hi, df) < confidence {
        hi *= 2.0;
        if hi > 1e12 {
            return Some(f64::INFINITY);
        }
    }
    let mut lo = 0.0;
    while hi - lo > 1e-9 * hi {
        let mid = 0.5 * (lo + hi);
        if two_sided_cdf(mid, df) < confidence {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

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
    fn t_quantiles_match_the_table_and_the_normal_limit() {
        assert_eq!(t975(0), None);
        assert_eq!(t975(1), Some(12.706));
        assert_eq!(t975(2), Some(4.303));
        // Exact t(0.975, 40) = 2.0211, t(0.975, 120) = 1.9799.
        assert!((t975(40).unwrap() - 2.0211).abs() < 1e-3);
        assert!((t975(120).unwrap() - 1.9799).abs() < 1e-3);
        assert!((t975(1_000_000).unwrap() - 1.96).abs() < 1e-3);
    }

    #[test]
    fn exact_quantiles_match_the_tables() {
        for df in 1..=30 {
            let t = t_two_sided(0.95, df).unwrap();
            assert!((t - t975(df).unwrap()).abs() < 1e-3, "df {df}: {t}");
        }
        // t(0.995, df): 63.657 (1), 9.925 (2), 3.169 (10), 2.845 (20); t(0.9975, 10) = 3.581.
        for (conf, df, want) in [
            (0.99, 1, 63.657),
            (0.99, 2, 9.925),
            (0.99, 10, 3.169),
            (0.99, 20, 2.845),
            (0.995, 10, 3.581),
        ] {
            let t = t_two_sided(conf, df).unwrap();
            assert!((t - want).abs() < 2e-3, "{conf} {df}: {t} vs {want}");
        }
        // A wider interval for a higher confidence; the normal limit for a large df.
        assert!(t_two_sided(0.995, 12).unwrap() > t_two_sided(0.95, 12).unwrap());
        assert!((t_two_sided(0.95, 2000).unwrap() - 1.961).abs() < 2e-3);
        assert_eq!(t_two_sided(0.95, 0), None);
        assert_eq!(t_two_sided(1.0, 5), None);
        assert_eq!(t_two_sided(f64::NAN, 5), None);
    }

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
