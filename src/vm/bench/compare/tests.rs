use super::*;

fn est(point: f64, lower: f64, upper: f64) -> Estimate {
    Estimate {
        point,
        lower,
        upper,
    }
}

#[test]
fn verdict_rules() {
    // In the interval, clear of zero.
    assert_eq!(
        verdict(&est(600.0, 500.0, 700.0), Some(650.0), false, false),
        Verdict::Agrees
    );
    // Outside the interval but within 15% of the point.
    assert_eq!(
        verdict(&est(600.0, 590.0, 610.0), Some(680.0), false, false),
        Verdict::Agrees
    );
    // Ruled out.
    assert_eq!(
        verdict(&est(600.0, 590.0, 610.0), Some(300.0), false, false),
        Verdict::Disagrees
    );
    assert_eq!(
        verdict(&est(10.0, -50.0, 60.0), Some(600.0), false, false),
        Verdict::Disagrees
    );
    // Under the noise: the interval holds 0 and the prediction.
    assert_eq!(
        verdict(&est(100.0, -200.0, 400.0), Some(300.0), false, false),
        Verdict::Undecided
    );
    // No model.
    assert_eq!(
        verdict(&est(100.0, 50.0, 150.0), None, false, false),
        Verdict::Undecided
    );
    assert_eq!(
        verdict(&est(100.0, 50.0, 150.0), Some(f64::NAN), false, false),
        Verdict::Undecided
    );
    // Predicting zero: consistent with zero agrees, a clear change disagrees.
    assert_eq!(
        verdict(&est(5.0, -20.0, 30.0), Some(0.4), true, false),
        Verdict::Agrees
    );
    assert_eq!(
        verdict(&est(300.0, 200.0, 400.0), Some(0.4), true, false),
        Verdict::Disagrees
    );
    // A zero point never divides.
    assert_eq!(
        verdict(&est(0.0, 0.0, 0.0), Some(1.0), false, false),
        Verdict::Disagrees
    );
}

#[test]
fn a_zero_row_agrees_when_equivalent_within_the_margin() {
    // 6.1 pipe1's figures: the 95% interval excludes 0, by 4 ns of a 2.9 µs op.
    let m = est(-40.3, -93.8, -3.73);
    assert_eq!(verdict(&m, Some(0.56), true, false), Verdict::Disagrees);
    // 2% of 2,900 ns is ±58 ns: a 90% interval of [-80, -10] is not inside it …
    let e = equivalence(est(-40.3, -80.0, -10.0), 2900.0).unwrap();
    assert!((e.margin_ns - 58.0).abs() < 1e-9);
    assert!(!e.equivalent);
    // … one of [-55, -12] is, on both sides: the two one-sided tests pass.
    let e = equivalence(est(-40.3, -55.0, -12.0), 2900.0).unwrap();
    assert!(e.equivalent);
    assert_eq!(verdict(&m, Some(0.56), true, e.equivalent), Verdict::Agrees);
    // Both edges count: inside on the left only is not equivalent.
    assert!(
        !equivalence(est(30.0, -10.0, 58.5), 2900.0)
            .unwrap()
            .equivalent
    );
    assert!(
        equivalence(est(0.0, -58.0, 58.0), 2900.0)
            .unwrap()
            .equivalent
    );
    // The margin never rescues a row that predicts a change.
    assert_eq!(
        verdict(&est(10.0, 5.0, 15.0), Some(300.0), false, true),
        Verdict::Disagrees
    );
    // No op time, no margin.
    assert_eq!(equivalence(est(0.0, -1.0, 1.0), 0.0), None);
    assert_eq!(equivalence(est(0.0, -1.0, 1.0), f64::NAN), None);
}

#[test]
fn the_equivalence_interval_is_narrower() {
    let pairs: Vec<Vec<(f64, f64)>> = (0..3)
        .map(|b| {
            (0..12)
                .map(|r| (1000.0, 1000.0 + f64::from(b * 12 + r) - 18.0))
                .collect()
        })
        .collect();
    let wide = paired_delta(&pairs, 9).unwrap();
    let narrow = paired_delta_at(&pairs, 9, EQUIVALENCE_LEVEL).unwrap();
    assert_eq!(wide.point, narrow.point);
    assert!(wide.lower <= narrow.lower && narrow.upper <= wide.upper);
}

#[test]
fn intervals_hold_their_point_and_are_seeded() {
    // One boot: the rounds' median and a seeded bootstrap.
    let one = vec![vec![10.0, 11.0, 9.5, 10.2, 30.0, 10.1, 9.9]];
    let a = median_interval(&one, 7).unwrap();
    assert_eq!(a.point, 10.1);
    assert!(a.lower <= a.point && a.point <= a.upper);
    assert!(a.upper < 30.0, "{a:?}");
    assert_eq!(median_interval(&one, 7), Some(a));
    assert_eq!(IntervalMethod::of(&one), IntervalMethod::RoundsBootstrap);
    // Two boots: the mean of their medians (a stalled round moves neither).
    let two = vec![vec![10.0, 11.0, 9.5, 10.2], vec![30.0, 10.1, 9.9]];
    let b = median_interval(&two, 7).unwrap();
    assert!((b.point - 10.1).abs() < 1e-12);
    assert!(b.lower <= b.point && b.point <= b.upper);
    assert_eq!(IntervalMethod::of(&two), IntervalMethod::BootsT);
    assert_eq!(median_interval(&[vec![4.0]], 1), Some(Estimate::exact(4.0)));
    assert_eq!(median_interval(&[], 1), None);
    assert_eq!(median_interval(&[vec![], vec![]], 1), None);
    // An empty boot does not count as one.
    assert_eq!(
        IntervalMethod::of(&[vec![1.0], Vec::new()]),
        IntervalMethod::RoundsBootstrap
    );
}

#[test]
fn boots_are_the_replicates() {
    // 6.1 pipe1's boot medians: 48, 27, 50 → 41.67 ± 4.303 · s / √3.
    let boots: Vec<Vec<f64>> = [48.0, 27.0, 50.0]
        .iter()
        .map(|m| vec![m - 5.0, *m, m + 5.0])
        .collect();
    let e = median_interval(&boots, 1).unwrap();
    let s = ((48.0f64 - 125.0 / 3.0).powi(2)
        + (27.0f64 - 125.0 / 3.0).powi(2)
        + (50.0f64 - 125.0 / 3.0).powi(2))
        / 2.0;
    let half = 4.303 * (s / 3.0).sqrt();
    assert!((e.point - 125.0 / 3.0).abs() < 1e-9);
    assert!((e.upper - e.point - half).abs() < 0.01, "{e:?} vs ±{half}");
    assert!((e.point - e.lower - half).abs() < 0.01);
    // The rounds within each boot do not narrow it: only the boots' medians count.
    let tight: Vec<Vec<f64>> = [48.0, 27.0, 50.0].iter().map(|m| vec![*m; 40]).collect();
    assert_eq!(median_interval(&tight, 1), Some(e));
    // The 90% interval is narrower and holds the same point.
    let n = median_interval_at(&boots, 1, EQUIVALENCE_LEVEL).unwrap();
    assert_eq!(n.point, e.point);
    assert!(e.lower < n.lower && n.upper < e.upper);
}

#[test]
fn the_interval_carries_the_spread_between_boots() {
    // Within each boot the rounds agree closely; the boots do not.
    let boots: Vec<Vec<f64>> = [100.0, 130.0, 90.0]
        .iter()
        .map(|b| (0..12).map(|r| b + f64::from(r) * 0.1).collect())
        .collect();
    let pooled = vec![boots.concat()];
    let h = median_interval(&boots, 3).unwrap();
    let flat = median_interval(&pooled, 3).unwrap();
    assert!(
        h.upper - h.lower > flat.upper - flat.lower,
        "{h:?} {flat:?}"
    );
    assert!(h.lower <= 91.0 && h.upper >= 129.0, "{h:?}");
    // More spread between the boots, a wider interval; each holds its point.
    let wider: Vec<Vec<f64>> = [100.0, 160.0, 60.0]
        .iter()
        .map(|b| (0..12).map(|r| b + f64::from(r) * 0.1).collect())
        .collect();
    let w = median_interval(&wider, 3).unwrap();
    assert!(w.upper - w.lower > h.upper - h.lower);
    for e in [h, flat, w] {
        assert!(e.lower <= e.point && e.point <= e.upper);
    }
}

#[test]
fn paired_delta_cancels_what_both_sides_share() {
    // Each round's speed differs by 30%; the B side always costs 100 more.
    let pairs: Vec<(f64, f64)> = [1.0, 1.3, 0.9, 1.2, 1.1]
        .iter()
        .map(|s| (1000.0 * s, 1000.0 * s + 100.0))
        .collect();
    let d = paired_delta(&[pairs[..2].to_vec(), pairs[2..].to_vec()], 3).unwrap();
    assert_eq!(d, Estimate::exact(100.0));
    assert!(paired_delta(&[], 3).is_none());
}

#[test]
fn ratio_change_and_control() {
    // One boot on a side: the medians' ratio and a bootstrap.
    let base = vec![vec![100.0, 101.0], vec![99.0, 100.5]];
    let other = vec![vec![90.0, 91.0, 89.0, 90.5]];
    let r = ratio_change(&base, &other, 5).unwrap();
    assert!((r.point - (90.25 / 100.25 - 1.0)).abs() < 1e-12);
    assert!(r.upper < 0.0 && r.lower <= r.point);
    assert_eq!(ratio_method(&base, &other), IntervalMethod::RoundsBootstrap);
    assert_eq!(ratio_change(&[], &other, 5), None);
    assert_eq!(ratio_change(&[vec![0.0]], &other, 5), None);
    // A boot twice as slow in everything looks the same once divided by its control.
    let slow = controlled(&[vec![(200.0, 2.0), (100.0, 1.0)], vec![(5.0, 0.0)]]);
    assert_eq!(slow, vec![vec![100.0, 100.0], vec![]]);
}

#[test]
fn welch_on_the_logs_of_the_boots() {
    // Base boots 100, 110, 90; other 90, 99, 81: every boot 10% faster.
    let base: Vec<Vec<f64>> = [100.0, 110.0, 90.0].iter().map(|m| vec![*m; 5]).collect();
    let other: Vec<Vec<f64>> = base
        .iter()
        .map(|g| g.iter().map(|v| v * 0.9).collect())
        .collect();
    assert_eq!(ratio_method(&base, &other), IntervalMethod::BootsT);
    let r = ratio_change(&base, &other, 5).unwrap();
    assert!((r.point + 0.1).abs() < 1e-12, "{r:?}");
    // Equal spreads of the logs, n 3 and 3: df 4, t 2.776.
    let logs: Vec<f64> = [100.0f64, 110.0, 90.0].iter().map(|v| v.ln()).collect();
    let m = logs.iter().sum::<f64>() / 3.0;
    let v = logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0;
    let half = 2.776 * (2.0 * v / 3.0).sqrt();
    assert!(
        (r.upper - ((0.9f64).ln() + half).exp() + 1.0).abs() < 1e-3,
        "{r:?}"
    );
    assert!(
        (r.lower - ((0.9f64).ln() - half).exp() + 1.0).abs() < 1e-3,
        "{r:?}"
    );
    // The log scale: the interval is not symmetric about the point, and holds it.
    assert!(r.upper - r.point > r.point - r.lower);
    // No spread on either side: the point alone.
    let flat_b = vec![vec![100.0], vec![100.0]];
    let flat_o = vec![vec![80.0], vec![80.0]];
    let e = ratio_change(&flat_b, &flat_o, 1).unwrap();
    assert!((e.point + 0.2).abs() < 1e-12 && e.lower == e.upper);
}

#[test]
fn predicted_delta_is_reads_times_cost_change() {
    assert_eq!(predicted_delta(2.0, 1.0, 300.0, 1.5), 601.5);
    assert_eq!(predicted_delta(0.0, 2.0, 300.0, 0.0), 0.0);
    assert_eq!(noise(&est(0.0, -3.0, 5.0)), 4.0);
}
