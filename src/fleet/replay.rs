//! Each machine's speedups, replayed with its own costs through the same machinery as
//! `tscope simulate` ([`crate::sim::estimate::estimates`]): every bundled scenario asked for,
//! under every kernel family's newest model, priced as [`crate::sim::costs::resolve`] prices a
//! profile with no `--set` (Linux: the derived precise read; the BSDs: the `rdtscp` read;
//! both under `--emulate-trap`: the trapped counter; the coarse read: `vdso:realtime_coarse`;
//! the tick: the model's HZ, else the profile's coarse update period).
//!
//! A fleet has as many cost sets as machines, so costs are rounded to two significant figures
//! (the width of a typical probe interval) and each distinct set is replayed once, on every
//! CPU.

use std::collections::HashMap;

use crate::kernel::{Family, ModelId};
use crate::sim::costs::FALLBACK_LINUX_TICK_NS;
use crate::sim::Costs;
use crate::trace::{bundled, CompiledScenario, Scenario};

use super::normalise::Facts;

/// The scenarios `fleet report` replays unless told otherwise (those `tscope report` runs).
pub const DEFAULT_SCENARIOS: [&str; 3] = ["pipe1", "vfsmix", "write-stat"];

/// Iterations replayed per scenario (at most; fewer for long loops). A bundled loop takes
/// 0.4 to 22 µs, so a coarse tick (1 to 10 ms) spans hundreds of iterations or more and a
/// replay of the scenario's own 50,000 to 200,000 differs from this one only in the few ops
/// that straddle a tick: the speedups agree to 0.5% (tested on the recorded profile).
pub const ITERATIONS: u64 = 1_000;

/// `x` to two significant figures.
pub fn round2(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return x;
    }
    let step = 10f64.powf(x.log10().floor() - 1.0);
    (x / step).round() * step
}

/// The costs `model`'s reads have on a machine with these facts, or `None` when the profile
/// lacks one (a precise read at or below 0 is a disturbed probe and prices nothing).
pub fn costs(model: ModelId, f: &Facts) -> Option<Costs> {
    let positive = |x: Option<f64>| x.filter(|v| v.is_finite() && *v > 0.0);
    let precise = if model.is_linux() && !f.emulate_trap {
        positive(f.precise_read_ns)?
    } else {
        positive(f.counter_ns)?
    };
    let coarse = f.coarse_read_ns.filter(|v| v.is_finite())?;
    let tick = match model.default_tick_ns(f.in_vm.unwrap_or(false)) {
        Some((t, _)) => t,
        None => positive(f.tick_ns).unwrap_or(FALLBACK_LINUX_TICK_NS),
    };
    Some(Costs::reads(precise, coarse, tick))
}

/// The models replayed: each family's newest.
pub fn models() -> Vec<ModelId> {
    Family::ALL.iter().map(|&f| ModelId::newest(f)).collect()
}

/// A scenario ready to replay, with its base cost.
#[derive(Debug, Clone)]
pub struct Loop {
    pub name: String,
    compiled: CompiledScenario,
    base: f64,
    iterations: u64,
}

/// Compiles bundled scenario `name`; it must carry its own base cost.
pub fn scenario(name: &str) -> crate::error::Result<Loop> {
    let Some(text) = bundled::get(name) else {
        crate::fail!(
            "no bundled scenario '{name}' (bundled: {})",
            bundled::names().join(", ")
        )
    };
    let s = Scenario::from_json(text, &format!("bundled:{name}"))?;
    let compiled = s.compile();
    let Some(base) = compiled.base_ns_per_iteration else {
        crate::fail!(
            "scenario '{name}' has no base_ns_per_iteration (its base is solved from a \
             published figure): choose one of {}",
            bundled::names().join(", ")
        )
    };
    let iterations = crate::trace::scenario::bounded_iterations(
        ITERATIONS.min(s.iterations),
        compiled.ops.len(),
    );
    Ok(Loop {
        name: name.to_string(),
        compiled,
        base,
        iterations,
    })
}

/// A replay's key: scenario, model, and the rounded costs' bits.
type Key = (usize, usize, [u64; 3]);

fn key(scenario: usize, model: usize, c: &Costs) -> Key {
    (
        scenario,
        model,
        [
            round2(c.precise_read_ns).to_bits(),
            round2(c.coarse_read_ns).to_bits(),
            round2(c.tick_ns).to_bits(),
        ],
    )
}

/// Replays, memoised by rounded costs: `speedups(facts)[scenario][model]` is each policy's
/// speedup over stock (in `model.policies()` order), `None` where a cost is missing.
#[derive(Debug)]
pub struct Speedups {
    pub loops: Vec<Loop>,
    pub models: Vec<ModelId>,
    memo: HashMap<Key, Vec<f64>>,
}

impl Speedups {
    /// Replays every distinct rounded cost set of `machines`, on every CPU.
    pub fn new(loops: Vec<Loop>, machines: &[&Facts]) -> Speedups {
        let models = models();
        let mut keys: Vec<(Key, Costs)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for f in machines {
            for (mi, &m) in models.iter().enumerate() {
                let Some(c) = costs(m, f) else { continue };
                for si in 0..loops.len() {
                    let k = key(si, mi, &c);
                    if seen.insert(k) {
                        let rounded = Costs {
                            precise_read_ns: round2(c.precise_read_ns),
                            coarse_read_ns: round2(c.coarse_read_ns),
                            tick_ns: round2(c.tick_ns),
                            ..c
                        };
                        keys.push((k, rounded));
                    }
                }
            }
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(keys.len().max(1));
        let chunk = keys.len().div_ceil(threads).max(1);
        let (loops_ref, models_ref) = (&loops, &models);
        let memo: HashMap<Key, Vec<f64>> = std::thread::scope(|s| {
            let handles: Vec<_> = keys
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .map(|(k, c)| {
                                let l = &loops_ref[k.0];
                                let e = crate::sim::estimate::estimates(
                                    models_ref[k.1],
                                    *c,
                                    &l.compiled,
                                    l.base,
                                    l.iterations,
                                );
                                (*k, e.iter().map(|p| p.speedup).collect::<Vec<f64>>())
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        Speedups {
            loops,
            models,
            memo,
        }
    }

    /// Each policy's speedup for one machine, scenario and model.
    pub fn of(&self, f: &Facts, scenario: usize, model: usize) -> Option<&[f64]> {
        let c = costs(self.models[model], f)?;
        self.memo.get(&key(scenario, model, &c)).map(Vec::as_slice)
    }

    /// How many distinct cost sets were replayed.
    pub fn replays(&self) -> usize {
        self.memo.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{LoopSource, SimulateConfig};

    #[test]
    fn costs_match_what_simulate_resolves_for_the_same_profile() {
        let text = std::fs::read("tests/data/profile-kvm-xeon.json").unwrap();
        let profile: crate::probe::Profile = serde_json::from_slice(&text).unwrap();
        let v = serde_json::from_slice(&text).unwrap();
        let facts = super::super::normalise::normalise(&v).unwrap().facts;
        let cfg = SimulateConfig::new(LoopSource::Scenario("pipe1".into()));
        for m in models() {
            let (want, _) = crate::sim::costs::resolve(m, Some(&profile), &cfg).unwrap();
            assert_eq!(costs(m, &facts), Some(want), "{}", m.label());
        }
        let mut disturbed = facts.clone();
        disturbed.precise_read_ns = Some(-1.0);
        assert!(costs(ModelId::newest(Family::Linux), &disturbed).is_none());
    }

    #[test]
    fn the_short_replay_agrees_with_the_scenarios_own_length() {
        let v = serde_json::from_slice(&std::fs::read("tests/data/profile-kvm-xeon.json").unwrap())
            .unwrap();
        let facts = super::super::normalise::normalise(&v).unwrap().facts;
        for name in DEFAULT_SCENARIOS {
            let l = scenario(name).unwrap();
            for m in models() {
                let c = costs(m, &facts).unwrap();
                let short =
                    crate::sim::estimate::estimates(m, c, &l.compiled, l.base, l.iterations);
                let full = crate::sim::estimate::estimates(
                    m,
                    c,
                    &l.compiled,
                    l.base,
                    l.compiled.iterations,
                );
                for (a, b) in short.iter().zip(&full) {
                    let off = (a.speedup / b.speedup - 1.0).abs();
                    assert!(
                        off < 0.005,
                        "{name} {}: {} against {}",
                        a.policy,
                        a.speedup,
                        b.speedup
                    );
                }
            }
        }
    }

    #[test]
    fn rounding_keeps_two_figures() {
        assert_eq!(round2(54.328), 54.0);
        assert_eq!(round2(0.0456), 0.046);
        assert_eq!(round2(11159.26), 11000.0);
        assert_eq!(round2(0.0), 0.0);
    }

    #[test]
    fn a_scenario_without_its_own_base_is_refused() {
        assert!(scenario("pipe1").is_ok());
        assert!(scenario("netbsd-seed").is_err());
        assert!(scenario("nope").is_err());
    }
}
