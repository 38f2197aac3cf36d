//! The sampler on synthetic batches, and on spins of known relative cost.

use super::*;

fn round(ks: &[f64], ts: &[f64], switches: Option<u64>) -> Round {
    Round {
        ks: ks.to_vec(),
        ts: ts.to_vec(),
        involuntary_switches: switches,
        ghz: Vec::new(),
    }
}

/// Interference only adds time: batches inflated by bursts move the mean, not the lower
/// quartile, which stays on the undisturbed cost (10 ns/call, 50 ns fixed overhead).
#[test]
fn the_point_tracks_the_undisturbed_batches() {
    let cfg = SamplerConfig {
        overhead_ns: 50.0,
        ..SamplerConfig::full(1)
    };
    let ks: Vec<f64> = (1..=16).map(|i| f64::from(i) * 1000.0).collect();
    let clean: Vec<f64> = ks.iter().map(|k| 50.0 + 10.0 * k).collect();
    // Half the batches of the second round ran 8–30% slow.
    let slow: Vec<f64> = clean
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if i % 2 == 0 {
                t * (1.08 + 0.03 * (i % 8) as f64)
            } else {
                *t
            }
        })
        .collect();
    let m = estimate(
        &cfg,
        1000,
        &[round(&ks, &clean, Some(0)), round(&ks, &slow, Some(3))],
    )
    .unwrap();
    assert!((m.cost_ns.point - 10.0).abs() < 1e-9, "{m:?}");
    let mean = stats::mean(&slow.iter().zip(&ks).map(|(t, k)| t / k).collect::<Vec<_>>());
    assert!(mean.unwrap() > 10.5, "the mean would have moved");
    assert!(m.cost_ns.lower <= 10.0 && m.cost_ns.upper >= 10.0);
    assert_eq!(m.round_points.len(), 2);
    assert_eq!(
        (m.samples, m.batch_unit, m.involuntary_switches),
        (32, 1000, Some(3))
    );
    assert!((m.intercept_ns - 50.0).abs() < 1e-6, "{}", m.intercept_ns);
    assert!(m.settled(cfg.settle_width), "{m:?}");
}

/// Rounds that disagree widen the interval to hold each round's own point; a round whose
/// switch count is unknown makes the total unknown, not smaller; no batches, no estimate.
#[test]
fn disagreeing_rounds_widen_and_unknowns_stay_unknown() {
    let cfg = SamplerConfig::full(2);
    let ks = [1.0, 2.0, 3.0, 4.0, 5.0];
    let a = round(&ks, &[10.0, 20.0, 30.0, 40.0, 50.0], Some(1));
    let b = round(&ks, &[20.0, 40.0, 60.0, 80.0, 100.0], None);
    let m = estimate(&cfg, 1, &[a.clone(), b]).unwrap();
    assert!(m.cost_ns.lower <= 10.0 && m.cost_ns.upper >= 20.0, "{m:?}");
    assert!(!m.settled(cfg.settle_width));
    assert_eq!(m.involuntary_switches, None);
    assert!(estimate(&cfg, 1, &[]).is_none());
    assert!(estimate(&cfg, 1, &[Round::default()]).is_none());
    let one = estimate(&cfg, 1, &[a]).unwrap();
    assert_eq!(
        one.cost_ns,
        Estimate::exact(10.0),
        "zero spread, zero width"
    );
    assert!(one.settled(cfg.settle_width));
}

/// Cycles are each batch's per-call ns times the clock beside it, under the same estimator:
/// at one clock throughout they are the ns times that clock; batches at a slower clock cost
/// more ns but the same cycles; a round without a clock for every batch gives no cycles.
#[test]
fn cycles_follow_each_batch_and_need_every_clock() {
    let cfg = SamplerConfig {
        overhead_ns: 50.0,
        ..SamplerConfig::quick(3)
    };
    let ks = [100.0, 200.0, 300.0, 400.0];
    let clocked = |ts: &[f64], ghz: &[f64]| Round {
        ghz: ghz.to_vec(),
        ..round(&ks, ts, Some(0))
    };
    // 10 ns per call at 4 GHz: 40 cycles.
    let at4 = [1050.0, 2050.0, 3050.0, 4050.0];
    let m = estimate(&cfg, 100, &[clocked(&at4, &[4.0; 4])]).unwrap();
    let c = m.cost_cycles.unwrap();
    assert!(
        (c.point - 4.0 * m.cost_ns.point).abs() < 1e-9,
        "{c:?} {:?}",
        m.cost_ns
    );
    // The same 40 cycles at 2 GHz take 20 ns per call: the ns move, the cycles do not.
    let at2 = [2050.0, 4050.0, 6050.0, 8050.0];
    let m = estimate(
        &cfg,
        100,
        &[clocked(&at4, &[4.0; 4]), clocked(&at2, &[2.0; 4])],
    )
    .unwrap();
    let c = m.cost_cycles.unwrap();
    assert!(
        (c.point - 40.0).abs() < 1e-9 && (c.upper - c.lower).abs() < 1e-9,
        "{c:?}"
    );
    assert!(
        m.cost_ns.upper - m.cost_ns.lower >= 10.0 - 1e-9,
        "{:?}",
        m.cost_ns
    );
    // One batch without its clock: no cycles for the source.
    let m = estimate(&cfg, 100, &[clocked(&at4, &[4.0; 3])]).unwrap();
    assert!(m.cost_cycles.is_none());
    assert!(estimate(&cfg, 100, &[round(&ks, &at4, Some(0))])
        .unwrap()
        .cost_cycles
        .is_none());
}

/// A spin of known relative cost: the sampler must order them correctly and see the
/// larger one cost more per call, whatever this machine's speed.
#[test]
fn cost_scales_with_work() {
    let cfg = SamplerConfig::quick(7);
    let spin = |n: u64| {
        move || {
            let mut acc = 0u64;
            for i in 0..black_box(n) {
                acc = acc.wrapping_mul(31).wrapping_add(i);
            }
            acc
        }
    };
    let small = measure(&cfg, spin(50)).unwrap();
    let large = measure(&cfg, spin(500)).unwrap();
    for m in [&small, &large] {
        assert!(m.cost_ns.lower <= m.cost_ns.point && m.cost_ns.point <= m.cost_ns.upper);
        assert!(m.cost_ns.point > 0.0);
        assert!(m.round_points.len() >= cfg.rounds && m.round_points.len() <= cfg.max_rounds);
    }
    assert!(
        large.cost_ns.point > 3.0 * small.cost_ns.point,
        "{small:?} {large:?}"
    );
}
