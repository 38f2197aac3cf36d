//! The sampler on synthetic batches, and on spins of known relative cost.

use super::*;

fn round(ks: &[f64], ts: &[f64], switches: Option<u64>) -> Round {
    Round {
        ks: ks.to_vec(),
        ts: ts.to_vec(),
        involuntary_switches: switches,
        ghz: Vec::new(),
        lanes: Vec::new(),
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

/// Batches whose lanes read slow shared their core: they are left out of the estimate when
/// enough others ran alone (the point is then the lone batches'), kept and counted when too
/// few did (and the measurement is not settled, so sampling goes on), and nothing is said
/// where the lanes were not timed.
#[test]
fn batches_that_shared_the_core_are_left_out_when_others_remain() {
    let cfg = SamplerConfig::quick(5);
    // 10 ns per call alone (lanes 0.25 cycles per add), 12 ns beside a busy sibling (0.375).
    let batch = |i: usize, shared: bool| {
        let k = 100.0 * (i % 4 + 1) as f64;
        (
            k,
            k * if shared { 12.0 } else { 10.0 },
            if shared { 0.375 } else { 0.25 },
        )
    };
    let make = |shared: &dyn Fn(usize) -> bool| {
        let b: Vec<(f64, f64, f64)> = (0..40).map(|i| batch(i, shared(i))).collect();
        Round {
            ks: b.iter().map(|x| x.0).collect(),
            ts: b.iter().map(|x| x.1).collect(),
            involuntary_switches: Some(0),
            ghz: Vec::new(),
            lanes: b.iter().map(|x| x.2).collect(),
        }
    };
    // 32 of 40 shared: the 8 alone decide, at 10 ns.
    let most = make(&|i| i % 5 != 0);
    let m = estimate(&cfg, 100, std::slice::from_ref(&most)).unwrap();
    assert_eq!(
        (m.contended_batches, m.contended_excluded, m.samples),
        (Some(32), true, 40)
    );
    assert!((m.cost_ns.point - 10.0).abs() < 1e-9, "{:?}", m.cost_ns);
    assert!(!m.contended_kept());
    // Without the lanes the lower quartile is a shared batch's 12 ns.
    let blind = Round {
        lanes: Vec::new(),
        ..most.clone()
    };
    let m = estimate(&cfg, 100, &[blind]).unwrap();
    assert_eq!((m.contended_batches, m.contended_excluded), (None, false));
    assert!((m.cost_ns.point - 12.0).abs() < 1e-9, "{:?}", m.cost_ns);
    // 36 of 40 shared: 4 alone are too few to leave the rest out; the cost keeps them, says
    // so, and is not settled.
    let m = estimate(&cfg, 100, &[make(&|i| i % 10 != 0)]).unwrap();
    assert_eq!(
        (m.contended_batches, m.contended_excluded),
        (Some(36), false)
    );
    assert!(m.contended_kept() && !m.settled(1.0));
    // None shared: nothing left out, settled as before.
    let m = estimate(&cfg, 100, &[make(&|_| false)]).unwrap();
    assert_eq!(
        (m.contended_batches, m.contended_excluded),
        (Some(0), false)
    );
    assert!(m.settled(1.0));
    // The run's fastest lanes decide, where given: against 0.375, nothing shared the core.
    let run = SamplerConfig {
        lanes_best: Some(0.375),
        ..cfg
    };
    let m = estimate(&run, 100, &[most]).unwrap();
    assert_eq!(m.contended_batches, Some(0));
}

/// The fastest lanes are a low quantile over a floor: a misread timing under 0.125 cycles per
/// add (more than eight adds a cycle) is not the best, nor is one lone fast timing among many.
#[test]
fn the_best_lanes_ignore_misreads() {
    let mut l = vec![0.32; 400];
    l.extend([0.01, 0.1, 0.33, 0.45]);
    assert_eq!(best_lanes(&l), Some(0.32));
    assert_eq!(best_lanes(&[0.05]), None);
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
