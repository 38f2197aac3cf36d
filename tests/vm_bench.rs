//! `tscope vm bench`: bad arguments, and one tiny real run under TCG — bookworm's 6.1, tsc and
//! hpet alternated in two rounds of one boot, pipe1 and write-stat at a few hundred iterations —
//! whose JSON carries the contract's fields, the clocksource read back, and a verdict on every
//! clocksource row. Figures are not asserted (they are emulated and vary); invariants are.

use crate::common::tscope;
use crate::skip;
use predicates::str::contains;

#[test]
fn bench_bad_arguments_are_clear_errors() {
    for (args, text) in [
        (
            &["--workload", "pipe2"][..],
            "invalid value 'pipe2' for '--workload",
        ),
        (
            &["--clocksource", "jiffies"][..],
            "invalid value 'jiffies' for '--clocksource",
        ),
        (&["--fs", "zfs"][..], "invalid value 'zfs' for '--fs"),
        (&["--boots", "0"][..], "--boots must be"),
        (&["--rounds", "0"][..], "--rounds must be"),
        (&["--iterations", "0"][..], "--iterations must be"),
        (
            &["--pair-iterations", "2000000"][..],
            "--pair-iterations must be",
        ),
        (&["--kernel", "/nonexistent/bzImage"][..], "is not a file"),
        (
            &[
                "--kernel-package",
                "linux-image-cloud-amd64",
                "--commit-message",
                "c.txt",
            ][..],
            "--commit-message: the paragraph is a kernel A/B",
        ),
    ] {
        tscope()
            .args(["vm", "bench"])
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(text));
    }
}

#[test]
fn bench_times_tsc_against_hpet_in_one_boot() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("qemu") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("bench.svg");
    let out = tscope()
        .args(["vm", "bench", "--kernel-package", "linux-image-cloud-amd64"])
        .args([
            "--workload",
            "pipe1,write-stat",
            "--clocksource",
            "tsc,hpet",
        ])
        .args(["--boots", "1", "--rounds", "2", "--iterations", "300"])
        .args(["--pair-iterations", "300"])
        // The watchdog can mark an emulated TSC unstable on a loaded host and refuse the
        // switch back to it; this test is of the bench, not of that decision.
        .args(["--append", "tsc=reliable"])
        .args(["--accel", "tcg", "--timeout", "180", "--json", "--svg"])
        .arg(&svg)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("run tscope vm bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(out.status.success(), "vm bench: {stderr}\n{v:#}");
    assert_eq!(v["schema_version"], 1);
    assert!(v["seed"].is_u64());
    let boot = &v["kernels"][0]["boots"][0];
    assert!(boot["error"].is_null(), "{boot}");
    assert_eq!(boot["slots"].as_array().unwrap().len(), 4);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for r in runs {
        assert!(
            r["kernel_release"].as_str().unwrap().starts_with("6.1."),
            "{r}"
        );
        // The switch took: the run says what was used, and it is what was asked.
        assert_eq!(r["clocksource_used"], r["clocksource_requested"], "{r}");
        let e = &r["ns_per_op"];
        let (lo, p, hi) = (
            e["lower"].as_f64().unwrap(),
            e["point"].as_f64().unwrap(),
            e["upper"].as_f64().unwrap(),
        );
        assert!(0.0 < lo && lo <= p && p <= hi, "{r}");
        for key in ["precise_read_ns", "coarse_read_ns", "syscall_ns"] {
            assert!(r["costs"][key].as_f64().unwrap() > 0.0, "{key}: {r}");
        }
        // Two rounds; a round whose switch the kernel refused (its watchdog can mark the TSC
        // unstable on a loaded host) measures nothing and says why.
        assert!((1..=2).contains(&r["samples"].as_u64().unwrap()), "{r}");
    }
    for s in boot["slots"].as_array().unwrap() {
        assert!(
            s["clocksource_used"] == s["clocksource_requested"] || s["switch_error"].is_string(),
            "relabelled: {s}"
        );
    }
    let rows: Vec<&serde_json::Value> = v["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "clocksource")
        .collect();
    assert_eq!(rows.len(), 2);
    for c in &rows {
        assert_eq!(
            (c["from"].as_str(), c["to"].as_str()),
            (Some("tsc"), Some("hpet"))
        );
        assert!(["agrees", "disagrees", "undecided"].contains(&c["verdict"].as_str().unwrap()));
        assert!(c["predicted_delta_ns"].is_number(), "{c}");
        assert!((1..=2).contains(&c["pairs"].as_u64().unwrap()), "{c}");
        // 6.1 takes no clocksource read in either loop.
        assert_eq!(c["model_from"]["model"], "linux@6.1");
        assert_eq!(c["model_from"]["precise_per_op"], 0.0);
    }
    // The live knob pair ran in the guest: 6.1 has no multigrain, so it prices no update and
    // the pair is the kernel's check that both sides do the same work.
    let knob = v["knob"].as_array().expect("knob rows");
    assert_eq!(knob.len(), 1, "{knob:?}");
    let k = &knob[0];
    assert_eq!(k["fs"], "tmpfs");
    assert!(k["price"]["update_ns"].is_null(), "{k}");
    assert_eq!(k["price"]["pair"]["multigrain_observed"], false, "{k}");
    assert!(k["price"]["pair"]["check"].is_string(), "{k}");
    assert_eq!(k["rows"].as_array().unwrap().len(), 2, "{k}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") && text.contains("pipe1/tmpfs"),
        "{text}"
    );
}

#[test]
fn bench_count_puts_the_kprobe_counts_beside_the_rows() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("qemu") {
        return;
    }
    let out = tscope()
        .args(["vm", "bench", "--kernel-package", "linux-image-cloud-amd64"])
        .args(["--workload", "write-stat", "--count", "--count-reads", "0"])
        .args(["--boots", "1", "--rounds", "2", "--iterations", "300"])
        .args(["--accel", "tcg", "--timeout", "180", "--json"])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("run tscope vm bench --count");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(out.status.success(), "vm bench --count: {stderr}\n{v:#}");
    assert!(v.get("count_errors").is_none(), "{v:#}");
    let counted = v["counted"].as_array().expect("counted[]");
    assert_eq!(counted.len(), 1, "{v:#}");
    let c = &counted[0];
    assert_eq!(
        (c["fs"].as_str(), c["workload"].as_str()),
        (Some("tmpfs"), Some("write-stat"))
    );
    assert_eq!(c["clocksource"], "tsc");
    // 6.1 stamps a write with the coarse clock and never reads the clocksource for it.
    assert!(c["precise_per_op"].as_f64().unwrap() < 0.05, "{c}");
    assert!(c["coarse_per_op"].as_f64().unwrap() > 0.5, "{c}");
    let row = &v["comparisons"][0];
    assert_eq!(row["kind"], "clocksource");
    assert_eq!(row["counted_from"]["precise_per_op"], c["precise_per_op"]);
}

/// The recorded kernel A/B, written before kernel rows carried LKP's decision: `show` prints
/// them in LKP's layout from the boots the file holds, and the JSON carries the decisions.
#[test]
fn show_prints_the_recorded_kernel_ab_in_lkps_layout() {
    const AB: &str = "docs/figures/vm-bench-ab.json";
    let out = tscope().args(["show", AB]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("kernel A/B in LKP's layout"), "{text}");
    assert!(
        text.contains("6.12.117+deb13-c 7.2.13+deb14-cloud-amd64\n---------------- ---------------------------\n"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("  pipe1.tmpfs.tsc.ns_per_op  "))
        .unwrap();
    assert!(line.ends_with("decrease   faster"), "{line}");
    let v = crate::common::json(&["show", AB, "--json"]);
    let kernel_rows: Vec<&serde_json::Value> = v["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "kernel")
        .collect();
    assert_eq!(kernel_rows.len(), 12);
    for c in kernel_rows {
        assert_eq!(c["lkp"]["base"]["samples"], 3, "{c}");
        assert!(c["lkp"]["decision"].is_string(), "{c}");
    }
}
