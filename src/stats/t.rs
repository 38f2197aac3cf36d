//! Student's t: the two-sided quantile (exact for integer degrees of freedom), and the
//! Welch–Satterthwaite degrees of freedom of a difference of two means with unequal variances
//! (Welch 1947). Used wherever a handful of replicates (boots, injections) carry an interval.

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

/// The Welch–Satterthwaite degrees of freedom of the difference of two means, from each
/// sample's variance `v` and size `n` (Welch 1947): `(v₁/n₁ + v₂/n₂)² / ((v₁/n₁)²/(n₁−1) +
/// (v₂/n₂)²/(n₂−1))`. `None` when a sample has fewer than two values or both variances are 0
/// (no spread: the interval is the point). Callers floor it for [`t_two_sided`], which is
/// conservative.
pub fn welch_df(v1: f64, n1: usize, v2: f64, n2: usize) -> Option<f64> {
    if n1 < 2 || n2 < 2 || !(v1 >= 0.0 && v2 >= 0.0) {
        return None;
    }
    let (a, b) = (v1 / n1 as f64, v2 / n2 as f64);
    let den = a * a / (n1 - 1) as f64 + b * b / (n2 - 1) as f64;
    (den > 0.0).then(|| (a + b) * (a + b) / den)
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
    fn the_few_boot_quantiles() {
        assert!((t_two_sided(0.95, 2).unwrap() - 4.303).abs() < 1e-3);
        assert!((t_two_sided(0.95, 5).unwrap() - 2.571).abs() < 1e-3);
        assert!((t_two_sided(0.90, 2).unwrap() - 2.920).abs() < 1e-3);
    }

    #[test]
    fn welch_df_by_hand() {
        // Equal variances and sizes: df = 2(n − 1).
        assert!((welch_df(4.0, 5, 4.0, 5).unwrap() - 8.0).abs() < 1e-12);
        // s² 1.0 (n 10) against 9.0 (n 10) gives
        // (0.1 + 0.9)² / (0.01/9 + 0.81/9) = 9 / 0.82 = 10.976.
        assert!((welch_df(1.0, 10, 9.0, 10).unwrap() - 9.0 / 0.82).abs() < 1e-9);
        // Unequal sizes: s² 2 (n 3), s² 8 (n 6): a = 2/3, b = 4/3, df = 4 / (2/9 + 16/45).
        let df = welch_df(2.0, 3, 8.0, 6).unwrap();
        assert!((df - 4.0 / (2.0 / 9.0 + 16.0 / 45.0)).abs() < 1e-9, "{df}");
        // The df lies between the smaller sample's and the pooled one's.
        assert!((2.0..=7.0).contains(&df));
        assert_eq!(welch_df(1.0, 1, 1.0, 5), None);
        assert_eq!(welch_df(0.0, 3, 0.0, 3), None);
        assert_eq!(welch_df(f64::NAN, 3, 1.0, 3), None);
    }
}
