//! Range checks for every number a profile's readers (`simulate --profile`, `compare`) take
//! from it: a file edited by hand or by another tool must not turn into "coarse read -5 ns"
//! or "NaN×". Each failure names the field, so the user knows what to fix.

use crate::fmt::num;
use crate::probe::{between, Profile};
use crate::stats::Estimate;

/// The largest cost a timestamp read or syscall can plausibly have: one second.
pub const MAX_COST_NS: f64 = 1e9;
/// The largest TSC frequency accepted: 100 GHz.
pub const MAX_TSC_HZ: f64 = 1e11;
/// The largest clock period (update period, resolution) accepted: one hour.
pub const MAX_PERIOD_NS: f64 = 3.6e12;
/// The largest noise between two runs accepted, in percent: two runs 11× apart. Beyond it the
/// runs say nothing of the source, and such a noise would excuse any change.
pub const MAX_NOISE_PCT: f64 = 1000.0;

/// Checks an interval: `0 < point ≤ max`, `lower ≤ point ≤ upper ≤ max`, all finite. The
/// lower bound may dip below 0: a bootstrap interval of a sub-nanosecond source does.
pub fn check_estimate(field: &str, e: &Estimate, max: f64) -> Result<(), String> {
    let finite = [e.point, e.lower, e.upper].iter().all(|v| v.is_finite());
    if !(finite && e.point > 0.0 && e.point <= max) {
        return Err(format!(
            "{field}.point must be a finite number in (0, {max:e}], got {}",
            num(e.point)
        ));
    }
    if !(-max <= e.lower && e.lower <= e.point && e.point <= e.upper && e.upper <= max) {
        return Err(format!(
            "{field} needs lower <= point <= upper <= {max:e}, got lower {} point {} upper {}",
            num(e.lower),
            num(e.point),
            num(e.upper)
        ));
    }
    Ok(())
}

/// Checks a difference of two measured costs (`derived.precise_read_ns`): it may come out at
/// or below 0 on a disturbed probe (the probe warns, and `simulate` refuses to price reads
/// with it), so only finiteness, `|x| ≤ max` and `lower ≤ point ≤ upper` are required.
pub fn check_difference(field: &str, e: &Estimate, max: f64) -> Result<(), String> {
    let ok = |v: f64| v.is_finite() && v.abs() <= max;
    if !(ok(e.point) && ok(e.lower) && ok(e.upper) && e.lower <= e.point && e.point <= e.upper) {
        return Err(format!(
            "{field} needs finite lower <= point <= upper within ±{max:e}, got lower {} point {} \
             upper {}",
            num(e.lower),
            num(e.point),
            num(e.upper)
        ));
    }
    Ok(())
}

/// Checks an optional non-negative figure.
fn check_value(field: &str, v: Option<f64>, max: f64) -> Result<(), String> {
    match v {
        Some(x) if !(x.is_finite() && (0.0..=max).contains(&x)) => Err(format!(
            "{field} must be a finite number in [0, {max:e}], got {}",
            num(x)
        )),
        _ => Ok(()),
    }
}

/// Checks a source's `between_runs`: every point a cost ([`MAX_COST_NS`]), no more points
/// than the profile's runs, and a `noise_pct` in `[0, MAX_NOISE_PCT]` that is what those points
/// give ([`between::noise_pct`]): a noise the runs do not show would let a slower profile pass
/// as "no change".
fn check_source_runs(
    field: &str,
    b: &between::SourceRuns,
    runs: Option<&between::BetweenRuns>,
) -> Result<(), String> {
    let n = b.points_ns.len();
    let most = runs.map_or(between::MAX_RUNS, |r| r.runs) as usize;
    if !(3..=most).contains(&n) {
        return Err(format!(
            "{field}.points_ns must hold 3 to {most} points (one per run), got {n}"
        ));
    }
    for (i, x) in b.points_ns.iter().enumerate() {
        let ok = x.is_finite() && *x > 0.0 && *x <= MAX_COST_NS;
        if !ok {
            return Err(format!(
                "{field}.points_ns[{i}] must be a finite number in (0, {MAX_COST_NS:e}], got {}",
                num(*x)
            ));
        }
    }
    let x = b.noise_pct;
    if !(x.is_finite() && (0.0..=MAX_NOISE_PCT).contains(&x)) {
        return Err(format!(
            "{field}.noise_pct must be a finite number in [0, {MAX_NOISE_PCT}], got {}",
            num(x)
        ));
    }
    let given = between::noise_pct(&b.points_ns).unwrap_or(0.0);
    if (x - given).abs() > 1e-6 * given.max(1.0) {
        return Err(format!(
            "{field}.noise_pct is {}, but its points_ns give {}: the noise must be what the \
             runs show (regenerate the profile with `tscope probe --repeat`)",
            num(x),
            num(given)
        ));
    }
    Ok(())
}

/// Every number of `p` the simulator and `compare` use, in range; `Err` names the field.
pub fn check_profile(p: &Profile) -> Result<(), String> {
    for s in &p.sources {
        let f = |name: &str| format!("sources[{}].{name}", s.id);
        if let Some(e) = &s.cost_ns {
            check_estimate(&f("cost_ns"), e, MAX_COST_NS)?;
        }
        if let Some(e) = &s.cost_ticks {
            check_estimate(&f("cost_ticks"), e, MAX_COST_NS * 100.0)?;
        }
        check_value(&f("update_period_ns"), s.update_period_ns, MAX_PERIOD_NS)?;
        check_value(&f("resolution_ns"), s.resolution_ns, MAX_PERIOD_NS)?;
        check_value(&f("getres_ns"), s.getres_ns, MAX_PERIOD_NS)?;
        check_value(&f("implied_hz"), s.implied_hz, 1e9)?;
        check_value(&f("max_backwards_ns"), s.max_backwards_ns, MAX_PERIOD_NS)?;
        for (i, r) in s.round_points_ns.iter().enumerate() {
            check_value(&f(&format!("round_points_ns[{i}]")), Some(*r), MAX_COST_NS)?;
        }
        if let Some(b) = &s.between_runs {
            check_source_runs(&f("between_runs"), b, p.between_runs.as_ref())?;
        }
    }
    if let Some(b) = &p.between_runs {
        if !(2..=between::MAX_RUNS).contains(&b.runs) {
            return Err(format!(
                "between_runs.runs must be a whole number from 2 to {}, got {}",
                between::MAX_RUNS,
                b.runs
            ));
        }
    }
    let d = &p.derived;
    if let Some(e) = &d.precise_read_ns {
        check_difference("derived.precise_read_ns", e, MAX_COST_NS)?;
    }
    if let Some(e) = &d.syscall_floor_ns {
        check_estimate("derived.syscall_floor_ns", e, MAX_COST_NS)?;
    }
    if let Some(hz) = d.tsc_hz {
        if !(hz.is_finite() && hz > 0.0 && hz <= MAX_TSC_HZ) {
            return Err(format!(
                "derived.tsc_hz must be a finite number in (0, {MAX_TSC_HZ:e}], got {}",
                num(hz)
            ));
        }
    }
    check_value("wall_s", Some(p.wall_s), 1e7)?;
    if !(p.confidence_level > 0.0 && p.confidence_level < 1.0) {
        return Err(format!(
            "confidence_level must be in (0, 1), got {}",
            num(p.confidence_level)
        ));
    }
    check_value("cpu_share", p.cpu_share, 1e3)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(point: f64, lower: f64, upper: f64) -> Estimate {
        Estimate {
            point,
            lower,
            upper,
        }
    }

    #[test]
    fn bad_intervals_name_the_field() {
        assert!(check_estimate("c", &e(20.0, 19.0, 21.0), MAX_COST_NS).is_ok());
        for bad in [
            e(-5.0, -6.0, -4.0),
            e(0.0, 0.0, 0.0),
            e(1e308, 1e308, 1e308),
            e(f64::NAN, 1.0, 2.0),
            e(20.0, 25.0, 30.0),
            e(20.0, 10.0, 15.0),
        ] {
            let err = check_estimate("sources[x].cost_ns", &bad, MAX_COST_NS).unwrap_err();
            assert!(err.starts_with("sources[x].cost_ns"), "{err}");
        }
    }

    #[test]
    fn a_derived_difference_may_be_negative_but_not_absurd() {
        // A disturbed probe's own output: tscope must read back what it wrote.
        let d = |x: &Estimate| check_difference("derived.precise_read_ns", x, MAX_COST_NS);
        assert!(d(&e(-0.52, -395.1, 359.2)).is_ok());
        assert!(d(&e(18.8, 17.2, 21.0)).is_ok());
        for bad in [e(f64::NAN, 0.0, 1.0), e(2e9, 0.0, 3e9), e(5.0, 6.0, 7.0)] {
            assert!(d(&bad).unwrap_err().starts_with("derived.precise_read_ns"));
        }
    }

    #[test]
    fn the_bundled_profile_passes() {
        let text = std::fs::read_to_string("tests/data/profile-kvm-xeon.json").unwrap();
        let p: Profile = serde_json::from_str(&text).unwrap();
        check_profile(&p).unwrap();
    }
}
