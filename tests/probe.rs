//! `tscope probe`: the JSON contract on a real run of this machine, and bad arguments.

use crate::common::{json, tscope};
use predicates::str::contains;

#[test]
fn quick_json_honours_the_contract() {
    let v = json(&["probe", "--quick", "--json", "--seed", "9"]);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["seed"], 9);
    assert!(v["machine"].is_object());
    let listed = tscope().args(["probe", "--list"]).output().unwrap();
    let ids: Vec<String> = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert!(ids.len() >= 30, "{ids:?}");
    let sources = v["sources"].as_array().unwrap();
    for id in &ids {
        let s = sources
            .iter()
            .find(|s| s["id"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} missing"));
        if s["supported"] == true {
            let c = &s["cost_ns"];
            let (p, lo, hi) = (
                c["point"].as_f64().unwrap(),
                c["lower"].as_f64().unwrap(),
                c["upper"].as_f64().unwrap(),
            );
            assert!(p > 0.0, "{id}: cost {p}");
            assert!(lo <= p && p <= hi, "{id}: {lo} <= {p} <= {hi}");
            assert!(s["monotonic_violations"].is_u64(), "{id}");
            assert!(s["resolution_ns"].is_null() || s["resolution_ns"].as_f64().unwrap() > 0.0);
        } else {
            assert!(
                s["reason"].as_str().is_some_and(|r| !r.is_empty()),
                "{id}: no reason"
            );
            assert!(s["cost_ns"].is_null());
        }
    }
    for id in [
        "vdso:realtime_coarse",
        "vdso:monotonic_coarse",
        "syscall:realtime_coarse",
    ] {
        let s = sources.iter().find(|s| s["id"] == id).unwrap();
        let res = s["resolution_ns"].as_f64().unwrap();
        assert!(res >= 1000.0, "{id}: coarse resolution {res} ns");
        assert!(s["implied_hz"].as_f64().unwrap() > 0.0, "{id}");
    }
    let d = &v["derived"]["precise_read_ns"];
    assert!(d["lower"].as_f64().unwrap() <= d["point"].as_f64().unwrap());
    assert!(d["point"].as_f64().unwrap() <= d["upper"].as_f64().unwrap());
}

#[test]
fn monotonic_clocks_do_not_go_backwards_here() {
    let v = json(&[
        "probe",
        "--quick",
        "--json",
        "--source",
        "vdso:monotonic,syscall:monotonic_raw",
    ]);
    let sources = v["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2);
    for s in sources {
        assert_eq!(s["monotonic_violations"], 0, "{s}");
        assert!(s["reads_watched"].as_u64().unwrap() > 100);
    }
}

#[test]
fn syscall_path_costs_more_than_vdso_path() {
    // An invariant of every Linux with a vDSO-capable clocksource (tsc, kvm-clock), not a
    // wall-clock threshold: entering the kernel costs more than reading shared memory. On hpet,
    // acpi_pm or xen the vDSO falls back to the syscall and the two cost the same.
    if crate::skip::without("vdso-clocksource") {
        return;
    }
    let v = json(&[
        "probe",
        "--quick",
        "--json",
        "--source",
        "vdso:monotonic,syscall:monotonic",
    ]);
    let cost = |i: usize| v["sources"][i]["cost_ns"]["point"].as_f64().unwrap();
    assert!(cost(1) > cost(0), "syscall {} vs vdso {}", cost(1), cost(0));
}

#[test]
fn seed_is_recorded_and_tables_render() {
    // The seed given is the seed recorded, and the default is 1 (docs/schema.md).
    for (args, seed) in [(&["--seed", "42"][..], 42), (&[][..], 1)] {
        let mut a = vec!["probe", "--quick", "--json", "--source", "rdtsc"];
        a.extend_from_slice(args);
        assert_eq!(json(&a)["seed"], seed);
    }
    let out = tscope()
        .args(["probe", "--quick", "--source", "rdtsc"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("rdtsc") && text.contains("cost ns [95% CI]"),
        "{text}"
    );
    let md = tscope()
        .args(["probe", "--quick", "--markdown", "--source", "rdtsc"])
        .output()
        .unwrap();
    assert!(String::from_utf8(md.stdout).unwrap().contains("| rdtsc |"));
}

#[test]
fn unknown_source_is_a_clear_error() {
    tscope()
        .args(["probe", "--source", "vdso:bogus"])
        .assert()
        .code(2)
        .stderr(contains("unknown source 'vdso:bogus'"))
        .stderr(contains("vdso:monotonic"));
}

#[test]
fn json_and_markdown_conflict() {
    tscope()
        .args(["probe", "--json", "--markdown"])
        .assert()
        .code(2);
}

#[test]
fn unwritable_out_fails_cleanly() {
    tscope()
        .args([
            "probe",
            "--quick",
            "--source",
            "rdtsc",
            "-o",
            "/nonexistent-dir/p.json",
        ])
        .assert()
        .code(2)
        .stderr(contains("cannot write '/nonexistent-dir/p.json'"));
}

#[test]
fn out_file_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.json");
    tscope()
        .args(["probe", "--quick", "--json", "--source", "rdtsc", "-o"])
        .arg(&path)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(v["sources"][0]["id"], "rdtsc");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "temporary files left behind");
}

/// `probe --histogram`: the shape of every format on a short real run.
fn histogram(args: &[&str]) -> serde_json::Value {
    let mut a = vec!["probe", "--histogram"];
    a.extend_from_slice(args);
    a.push("--json");
    json(&a)
}

#[test]
fn histogram_counts_add_up() {
    for id in ["vdso:monotonic", "rdtsc", "syscall:monotonic_coarse"] {
        let v = histogram(&[id, "--duration", "0.2"]);
        assert_eq!(v["schema_version"], 1);
        assert_eq!(v["source"], id);
        let deltas = v["deltas"].as_u64().unwrap();
        assert!(deltas > 0, "{id}");
        let buckets = v["buckets"].as_array().unwrap();
        let sum: u64 = buckets.iter().map(|b| b["count"].as_u64().unwrap()).sum();
        assert_eq!(sum, deltas, "{id}: the buckets hold every delta");
        let pct: f64 = buckets.iter().map(|b| b["percent"].as_f64().unwrap()).sum();
        assert!((pct - 100.0).abs() < 1e-6, "{id}: {pct}");
        // pg_test_timing's buckets: 0, 1, 3, 7 … 2^i − 1, every one up to the highest used.
        for (i, b) in buckets.iter().enumerate() {
            assert_eq!(b["le_ns"].as_u64().unwrap(), (1u64 << i) - 1, "{id}");
        }
        let backwards = v["backwards"].as_u64().unwrap();
        assert_eq!(
            v["reads"].as_u64().unwrap(),
            deltas + backwards + reads_not_paired(&v)
        );
        // The exact list ascends and stops at the cutoff; the largest is always there.
        let obs = v["observed"].as_array().unwrap();
        let ns: Vec<u64> = obs.iter().map(|o| o["ns"].as_u64().unwrap()).collect();
        assert!(ns.windows(2).all(|w| w[0] < w[1]), "{id}");
        let last = obs.last().unwrap()["running_percent"].as_f64().unwrap();
        assert!(last >= 99.99 - 1e-9, "{id}: {last}");
        let largest = v["largest"]["ns"].as_u64().unwrap();
        assert!(largest >= *ns.last().unwrap(), "{id}");
    }
    let v = histogram(&["rdtsc", "--duration", "0.1"]);
    assert!(v["tsc_hz"].as_f64().unwrap() > 1e8, "ticks need a rate");
}

/// Reads that start a block of the loop (one per 1025) have no delta of their own.
fn reads_not_paired(v: &serde_json::Value) -> u64 {
    v["reads"].as_u64().unwrap() / 1025
}

#[test]
fn histogram_prints_as_pg_test_timing_does() {
    let out = tscope()
        .args([
            "probe",
            "--histogram",
            "vdso:monotonic",
            "--duration",
            "0.1",
        ])
        .args(["--cutoff", "90"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "Average loop time including overhead: ",
        "Histogram of timing durations:\n   <= ns   % of total  running %      count\n       0 ",
        "Observed timing durations up to 90.0000%:\n      ns   % of total  running %      count\n",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    let md = tscope()
        .args([
            "probe",
            "--histogram",
            "vdso:monotonic",
            "--duration",
            "0.1",
        ])
        .arg("--markdown")
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(
        md.contains("| <= ns | % of total | running % | count |"),
        "{md}"
    );
    let csv = tscope()
        .args([
            "probe",
            "--histogram",
            "rdtsc",
            "--duration",
            "0.1",
            "--csv",
        ])
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.starts_with("table,ns,percent,running_percent,count\nbucket_le,0,"));
    assert!(csv.contains("\nlargest,"), "{csv}");
}

#[test]
fn histogram_refuses_what_is_no_clock() {
    for (args, msg) in [
        (
            vec!["--histogram", "vdso:bogus"],
            "unknown source 'vdso:bogus'",
        ),
        (vec!["--histogram", "cpuid"], "reads no time"),
        (
            vec!["--histogram", "rdtsc", "--duration", "0"],
            "--duration 0",
        ),
        (
            vec!["--histogram", "rdtsc", "--cutoff", "101"],
            "--cutoff 101",
        ),
        (vec!["--duration", "1"], "--histogram"),
        (
            vec!["--histogram", "rdtsc", "--source", "rdtsc"],
            "cannot be used",
        ),
    ] {
        tscope()
            .arg("probe")
            .args(&args)
            .assert()
            .code(2)
            .stderr(contains(msg));
    }
}

/// The counter reads carry their cost at each loop placement (every 16th byte under
/// `--quick`), their interval holds every placement's point when placement moves the cost, and
/// other sources carry none; under `--emulate-trap`, where a read is a trap, none does.
#[test]
fn counter_reads_carry_their_placements() {
    let v = json(&[
        "probe",
        "--quick",
        "--json",
        "--source",
        "rdtsc,lfence_rdtsc,vdso:monotonic",
    ]);
    for s in v["sources"].as_array().unwrap() {
        let p = &s["placement"];
        if s["id"] == "vdso:monotonic" {
            assert!(p.is_null(), "{s}");
            continue;
        }
        assert_eq!(p["offsets"], serde_json::json!([0, 16, 32, 48]), "{s}");
        let points: Vec<f64> = p["cost_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["point"].as_f64().unwrap())
            .collect();
        assert_eq!(points.len(), 4);
        assert!(points.iter().all(|&x| x > 0.0), "{points:?}");
        let (lo, hi) = points
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        assert!((p["spread_ns"].as_f64().unwrap() - (hi - lo)).abs() < 1e-9);
        if p["moves_cost"] == true {
            let c = &s["cost_ns"];
            assert!(c["lower"].as_f64().unwrap() <= lo && hi <= c["upper"].as_f64().unwrap());
        }
    }
    let trapped = json(&[
        "--emulate-trap",
        "probe",
        "--quick",
        "--json",
        "--source",
        "rdtsc",
    ]);
    assert!(trapped["sources"][0]["placement"].is_null(), "{trapped}");
}

/// The probe reads the core clock between its batch slots and gives every sampled source its
/// cost in core cycles: cycles per ns within the clock's range over the run (each batch is
/// converted at the clock beside it, so the ratio can only come from those clocks), and the
/// table shows the clock and a cycles column.
#[cfg(target_arch = "x86_64")]
#[test]
fn sampled_sources_carry_their_cost_in_core_cycles() {
    let v = json(&[
        "probe",
        "--quick",
        "--json",
        "--source",
        "rdtsc,vdso:monotonic,syscall:getppid",
    ]);
    let c = &v["core_clock"];
    let (ghz, lo, hi) = (
        c["ghz"].as_f64().unwrap(),
        c["ghz_min"].as_f64().unwrap(),
        c["ghz_max"].as_f64().unwrap(),
    );
    assert!(0.2 < lo && lo <= ghz && ghz <= hi && hi < 8.0, "{c}");
    assert!(c["timings"].as_u64().unwrap() >= 2, "{c}");
    for s in v["sources"].as_array().unwrap() {
        let ns = s["cost_ns"]["point"].as_f64().unwrap();
        let cycles = s["cost_cycles"]["point"].as_f64().unwrap();
        let per_ns = cycles / ns;
        // Quantiles of per-batch products need not be the product of quantiles: allow 5%.
        assert!(
            lo * 0.95 <= per_ns && per_ns <= hi * 1.05,
            "{}: {cycles} cycles over {ns} ns is {per_ns} GHz, outside {lo}–{hi}",
            s["id"]
        );
    }
    let out = tscope()
        .args(["probe", "--quick", "--source", "rdtsc"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("core clock "), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("ticks") && l.contains("cycles")),
        "{text}"
    );
}

#[test]
fn repeat_keeps_every_runs_point_and_the_noise_between_runs() {
    let _cpu = crate::common::cpu_lock();
    let v = crate::common::json(&[
        "probe",
        "--quick",
        "--repeat",
        "3",
        "--source",
        "vdso:monotonic,syscall:getppid",
        "--json",
    ]);
    assert_eq!(v["between_runs"]["runs"], 3, "{}", v["between_runs"]);
    for s in v["sources"].as_array().unwrap() {
        let b = &s["between_runs"];
        let points = b["points_ns"].as_array().unwrap();
        assert_eq!(points.len(), 3, "{s}");
        // The profile's own figure is the first run's.
        assert_eq!(points[0], s["cost_ns"]["point"], "{s}");
        assert!(points.iter().all(|p| p.as_f64().unwrap() > 0.0), "{s}");
        assert!(b["noise_pct"].as_f64().unwrap() >= 0.0, "{s}");
    }
    for bad in ["1", "21", "x"] {
        tscope()
            .args(["probe", "--quick", "--repeat", bad])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--repeat"));
    }
}
