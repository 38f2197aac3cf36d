use super::*;

#[test]
fn quantiles_match_type_7() {
    let xs = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(median(&xs), Some(2.5));
    assert_eq!(quantile(&xs, 0.0), Some(1.0));
    assert_eq!(quantile(&xs, 1.0), Some(4.0));
    // numpy.percentile([1,2,3,4], 25) == 1.75
    assert_eq!(quantile(&xs, 0.25), Some(1.75));
}

#[test]
fn empty_single_and_nan_inputs() {
    assert_eq!(median(&[]), None);
    assert_eq!(mean(&[]), None);
    assert_eq!(mad(&[]), None);
    assert_eq!(median(&[7.0]), Some(7.0));
    assert_eq!(mad(&[7.0]), Some(0.0));
    assert_eq!(median(&[f64::NAN, 3.0, 1.0, f64::NAN]), Some(2.0));
    assert_eq!(median(&[f64::NAN]), None);
    assert_eq!(quantile(&[1.0], 1.5), None);
    assert_eq!(quantile(&[1.0], f64::NAN), None);
}

#[test]
fn zero_spread() {
    let xs = [5.0; 10];
    assert_eq!(mad(&xs), Some(0.0));
    assert_eq!(median(&xs), Some(5.0));
    let reps = [5.0; 100];
    let ci = percentile_interval(&reps, 5.0, 0.95).unwrap();
    assert_eq!((ci.lower, ci.point, ci.upper), (5.0, 5.0, 5.0));
}

#[test]
fn regression_needs_two_distinct_x() {
    assert_eq!(ols(&[1.0], &[2.0]), None);
    assert_eq!(ols(&[1.0, 1.0], &[2.0, 3.0]), None);
    assert_eq!(theil_sen(&[1.0, 1.0], &[2.0, 3.0]), None);
    assert_eq!(theil_sen(&[], &[]), None);
    assert_eq!(ols(&[1.0, f64::NAN], &[2.0, 3.0]), None);
    assert_eq!(theil_sen(&[1.0, 2.0], &[2.0, f64::NAN]), None);
}

#[test]
fn regressions_recover_a_line() {
    let x: Vec<f64> = (1..=20).map(f64::from).collect();
    let y: Vec<f64> = x.iter().map(|v| 40.0 + 9.5 * v).collect();
    let (a, b) = ols(&x, &y).unwrap();
    assert!((a - 40.0).abs() < 1e-9 && (b - 9.5).abs() < 1e-12);
    let (a, b) = theil_sen(&x, &y).unwrap();
    assert!((a - 40.0).abs() < 1e-9 && (b - 9.5).abs() < 1e-12);
}

#[test]
fn theil_sen_ignores_a_preempted_batch() {
    let x: Vec<f64> = (1..=20).map(f64::from).collect();
    let mut y: Vec<f64> = x.iter().map(|v| 40.0 + 9.5 * v).collect();
    y[7] += 50_000.0; // a context switch in one batch
    y[13] += 80_000.0;
    let (_, robust) = theil_sen(&x, &y).unwrap();
    let (_, plain) = ols(&x, &y).unwrap();
    assert!((robust - 9.5).abs() < 1e-9, "theil-sen slope {robust}");
    assert!(
        (plain - 9.5).abs() > 100.0,
        "ols is pulled by outliers: {plain}"
    );
}

#[test]
fn bootstrap_is_reproducible_from_its_seed() {
    let x: Vec<f64> = (1..=30).map(f64::from).collect();
    let mut rng = SplitMix64::new(1);
    let y: Vec<f64> = x
        .iter()
        .map(|v| 3.0 * v + (rng.below(100) as f64) / 10.0)
        .collect();
    let stat = |a: &[f64], b: &[f64]| theil_sen(a, b).map(|(_, s)| s);
    let r1 = bootstrap_pairs(&x, &y, 200, 42, stat);
    let r2 = bootstrap_pairs(&x, &y, 200, 42, stat);
    let r3 = bootstrap_pairs(&x, &y, 200, 43, stat);
    assert_eq!(r1, r2);
    assert_ne!(r1, r3);
    let point = theil_sen(&x, &y).unwrap().1;
    let ci = percentile_interval(&r1, point, 0.95).unwrap();
    assert!(ci.lower <= ci.point && ci.point <= ci.upper);
    assert!(ci.lower > 2.5 && ci.upper < 3.5, "{ci:?}");
}

#[test]
fn interval_rejects_bad_level_and_empty() {
    assert_eq!(percentile_interval(&[], 1.0, 0.95), None);
    assert_eq!(percentile_interval(&[1.0], 1.0, 1.0), None);
    assert_eq!(percentile_interval(&[1.0], 1.0, f64::NAN), None);
}

#[test]
fn below_stays_in_range() {
    let mut r = SplitMix64::new(0);
    assert!((0..10_000).all(|_| r.below(7) < 7));
    assert_eq!(r.below(0), 0);
}

#[test]
fn one_sample_bootstrap_is_seeded_and_brackets_the_quantile() {
    let xs: Vec<f64> = (0..50).map(f64::from).collect();
    let a = bootstrap(&xs, 200, 3, |v| quantile_in_place(v, 0.25));
    let b = bootstrap(&xs, 200, 3, |v| quantile_in_place(v, 0.25));
    assert_eq!(a, b, "same seed, same replicates");
    assert_eq!(a.len(), 200);
    let q = quantile(&xs, 0.25).unwrap();
    let ci = percentile_interval(&a, q, 0.95).unwrap();
    assert!(ci.lower < q && q < ci.upper, "{ci:?}");
    assert!(bootstrap(&[], 10, 1, |v| median(v)).is_empty());
    assert_eq!(quantile_in_place(&mut [3.0, f64::NAN, 1.0], 0.5), Some(2.0));
}

#[test]
fn independent_errors_add_in_quadrature() {
    let a = Estimate::new(10.0, 7.0, 14.0);
    let b = Estimate::new(4.0, 0.0, 8.0);
    let d = a.minus_independent(b);
    assert_eq!(d.point, 6.0);
    // Below: a's 3 below and b's 4 above; above: a's 4 above and b's 4 below.
    assert!((d.lower - (6.0 - 5.0)).abs() < 1e-12, "{d:?}");
    assert!((d.upper - (6.0 + 32f64.sqrt())).abs() < 1e-12, "{d:?}");
    // An exact estimate takes nothing away from the interval.
    assert_eq!(
        a.minus_independent(Estimate::exact(1.0)),
        Estimate::new(9.0, 6.0, 13.0)
    );
    // A negative factor swaps the bounds.
    assert_eq!(b * -2.0, Estimate::new(-8.0, -16.0, 0.0));
    assert_eq!(b / 2.0, Estimate::new(2.0, 0.0, 4.0));
}
