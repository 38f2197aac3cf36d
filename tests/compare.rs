//! `tscope compare` on recorded profiles (a quick probe of the development machine and a
//! detection made under `--emulate-trap`), snapshot-tested; bad inputs.

use crate::common::tscope;
use predicates::str::contains;

const HOST: &str = "tests/data/compare/host.json";
const TRAPPED: &str = "tests/data/compare/trapped-detect.json";

#[test]
fn markdown_matches_the_snapshot() {
    let out = tscope()
        .args([
            "compare",
            HOST,
            TRAPPED,
            "--labels",
            "host,trapped",
            "--markdown",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = std::fs::read_to_string("tests/data/compare/expected.md").unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
}

#[test]
fn ratios_and_verdict_differences() {
    let out = tscope()
        .args(["compare", HOST, TRAPPED, "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rdtsc = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "rdtsc")
        .unwrap();
    assert!(
        rdtsc["ratio_to_first"][0].as_f64().unwrap() > 100.0,
        "{rdtsc}"
    );
    let trapped = v["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "rdtsc_trapped")
        .unwrap();
    assert_eq!(trapped["holds"][1], true);
    // CSV: one row per source, lower/upper columns per input.
    let out = tscope()
        .args(["compare", TRAPPED, TRAPPED, "--csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(csv.starts_with("source,trapped-detect_ns,"), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("rdtsc,")));
}

#[test]
fn bad_inputs_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    tscope()
        .args(["compare", HOST])
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(contains("missing.json"));
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\n  \"schema_version\": 1,\n  \"sources\": [\n").unwrap();
    tscope()
        .args(["compare", HOST])
        .arg(&broken)
        .assert()
        .code(2)
        .stderr(contains("line 4"));
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema_version": 99, "sources": []}"#).unwrap();
    tscope()
        .args(["compare", HOST])
        .arg(&newer)
        .assert()
        .code(2)
        .stderr(contains("schema_version 99"))
        .stderr(contains("upgrade"));
    tscope().args(["compare", HOST]).assert().code(2);
    tscope()
        .args(["compare", HOST, HOST, "--labels", "a"])
        .assert()
        .code(2)
        .stderr(contains("one label per file"));
}

#[test]
fn completions_and_man_page() {
    let out = tscope().args(["completions", "bash"]).output().unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().contains("tscope"));
    let out = tscope().arg("man").output().unwrap();
    let man = String::from_utf8(out.stdout).unwrap();
    assert!(
        man.contains(".TH tscope") || man.contains(".TH TSCOPE"),
        "{}",
        &man[..200.min(man.len())]
    );
}

#[test]
fn ratios_carry_an_interval_and_a_judgement() {
    let v = crate::common::json(&["compare", HOST, TRAPPED, "--json"]);
    let row = |id: &str| crate::common::source_row(&v, id);
    // A trapped rdtsc is three orders of magnitude slower: its intervals cannot overlap.
    let rdtsc = row("rdtsc");
    assert_eq!(rdtsc["change"][0], "slower");
    assert!(rdtsc["ratio_plus_minus"][0].as_f64().unwrap() > 0.0);
    // A coarse read does not touch the TSC: within noise in both profiles.
    assert_eq!(row("vdso:realtime_coarse")["change"][0], "no_change");
    // The same file against itself: every comparable row is "no change", ratio exactly 1.
    let same = crate::common::json(&["compare", HOST, HOST, "--json"]);
    for r in same["sources"].as_array().unwrap() {
        if let Some(x) = r["ratio_to_first"][0].as_f64() {
            assert_eq!(x, 1.0);
            assert_eq!(r["change"][0], "no_change", "{}", r["id"]);
        }
    }
    let text = String::from_utf8(
        crate::common::tscope()
            .args(["compare", HOST, TRAPPED])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(text.contains(" ± ") && text.contains("× slower"), "{text}");
}

/// Writes `HOST` with the listed sources' `cost_ns` replaced (`[point, lower, upper]`) and,
/// when given, another kernel release: a profile that differs from `HOST` only there.
fn adjusted(
    dir: &std::path::Path,
    name: &str,
    costs: &[(&str, [f64; 3])],
    kernel: Option<&str>,
) -> std::path::PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(HOST).unwrap()).unwrap();
    for s in v["sources"].as_array_mut().unwrap() {
        if let Some((_, [p, l, u])) = costs.iter().find(|(id, _)| s["id"] == *id) {
            s["cost_ns"] = serde_json::json!({"point": p, "lower": l, "upper": u});
        }
    }
    if let Some(k) = kernel {
        v["machine"]["kernel_release"] = k.into();
    }
    let path = dir.join(name);
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

/// The printed ratio cell of `id` (`0.98 ± 0.04× no change`), and the bounds it prints.
fn printed(text: &str, id: &str) -> (String, f64, f64, String) {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(id))
        .unwrap_or_else(|| panic!("no row {id} in\n{text}"));
    let cell = line
        .split_whitespace()
        .skip(3)
        .collect::<Vec<_>>()
        .join(" ");
    let (num, word) = cell.split_once('×').unwrap();
    let mut parts = num.split_whitespace();
    let x: f64 = parts.next().unwrap().parse().unwrap();
    let rest: Vec<&str> = parts.collect();
    let (lo, hi) = match rest.as_slice() {
        ["±", pm] => {
            let pm: f64 = pm.parse().unwrap();
            (x - pm, x + pm)
        }
        [sides] => {
            let (u, l) = sides.trim_start_matches('+').split_once("/−").unwrap();
            (x - l.parse::<f64>().unwrap(), x + u.parse::<f64>().unwrap())
        }
        _ => panic!("unexpected cell {cell:?}"),
    };
    // After the word: ` ~` (moved with the machine or within the noise), ` (path)` (the
    // path's word and interval) and `, x× before the shift`.
    let word = word
        .split(',')
        .next()
        .unwrap()
        .trim()
        .trim_end_matches(" (path)")
        .trim_end_matches(" ~");
    (cell.clone(), lo, hi, word.to_string())
}

/// The word a printed interval allows.
fn word_of(lo: f64, hi: f64) -> &'static str {
    if hi < 1.0 {
        "faster"
    } else if lo > 1.0 {
        "slower"
    } else {
        "no change"
    }
}

#[test]
fn the_word_follows_from_the_printed_interval() {
    let dir = tempfile::tempdir().unwrap();
    let ids = ["syscall:tai", "syscall:gettimeofday"];
    let base = adjusted(
        dir.path(),
        "base.json",
        &[
            (ids[0], [100.0, 97.1, 102.9]),
            (ids[1], [100.0, 97.1, 102.9]),
        ],
        None,
    );
    // Intervals of ±2.9% on both sides: ratios 0.98 and 0.99, each ± 0.04 within the runs and
    // ± 0.05 with the prior of 3% between two runs. Both hold 1.0.
    let near = adjusted(
        dir.path(),
        "near.json",
        &[
            (ids[0], [98.0, 95.16, 100.84]),
            (ids[1], [99.0, 96.13, 101.87]),
        ],
        None,
    );
    let out = tscope()
        .arg("compare")
        .args([&base, &near])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for (id, x) in [(ids[0], "0.98 ± 0.05×"), (ids[1], "0.99 ± 0.05×")] {
        let (cell, lo, hi, word) = printed(&text, id);
        assert_eq!(cell, format!("{x} no change"), "{text}");
        assert!(lo <= 1.0 && hi >= 1.0);
        assert_eq!(word, "no change");
    }
    // Lopsided intervals that do not overlap (the baseline tight below, the new cost tight
    // above) once printed "0.98 ± 0.04× faster": the printed interval is now the one the word
    // comes from, so it excludes 1.
    let lopsided = adjusted(
        dir.path(),
        "lopsided.json",
        &[(ids[0], [98.0, 93.0, 99.5]), (ids[1], [99.0, 94.0, 99.7])],
        None,
    );
    let tight_below = adjusted(
        dir.path(),
        "tight.json",
        &[
            (ids[0], [100.0, 99.8, 105.0]),
            (ids[1], [100.0, 99.9, 105.0]),
        ],
        None,
    );
    for (a, b) in [
        (&tight_below, &lopsided),
        (&base, &near),
        (&base, &lopsided),
    ] {
        let text = String::from_utf8(
            tscope()
                .arg("compare")
                .args([a, b])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        for id in ids {
            let (cell, lo, hi, word) = printed(&text, id);
            assert_eq!(word, word_of(lo, hi), "{id}: {cell}\n{text}");
        }
    }
    // And on every row of the recorded comparison.
    let text = String::from_utf8(
        tscope()
            .args(["compare", HOST, TRAPPED])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let v = crate::common::json(&["compare", HOST, TRAPPED, "--json"]);
    for r in v["sources"].as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        if let Some(i) = r["judged_interval"][0].as_object() {
            let (cell, lo, hi, word) = printed(&text, id);
            assert_eq!(word, word_of(lo, hi), "{id}: {cell}");
            let (l, u) = (i["lower"].as_f64().unwrap(), i["upper"].as_f64().unwrap());
            // The printed interval is the judged one; a shift may only take a word away.
            if word != "no change" {
                assert_eq!(word, word_of(l, u), "{id}: {cell} against {i:?}");
            }
        }
    }
}

#[test]
fn different_machines_are_named_above_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let other = adjusted(dir.path(), "other.json", &[], Some("6.1.0-28-cloud-amd64"));
    let out = tscope()
        .args(["compare", HOST])
        .arg(&other)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("Different machines (kernel 6.18.44-fc-v657 vs 6.1.0-28-cloud-amd64)")
            && first.contains("compare machines, not a change"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_slice(
        &tscope()
            .args(["compare", HOST])
            .arg(&other)
            .arg("--json")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let diffs = v["machine_differences"].as_array().unwrap();
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert_eq!(diffs[0]["field"], "kernel");
    assert_eq!(diffs[0]["values"][1], "6.1.0-28-cloud-amd64");
    // One machine, with and without the emulated trap: no notice, nothing listed.
    let same = crate::common::json(&["compare", HOST, TRAPPED, "--json"]);
    assert_eq!(same["machine_differences"], serde_json::json!([]));
    let text = String::from_utf8(
        tscope()
            .args(["compare", HOST, TRAPPED])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(!text.contains("Different machines"), "{text}");
}

#[test]
fn fail_on_slower_exits_1_only_on_a_decided_slowdown() {
    tscope()
        .args(["compare", HOST, TRAPPED, "--fail-on", "slower"])
        .assert()
        .code(1)
        .stderr(contains("decided slower"))
        .stderr(contains("rdtsc (trapped-detect)"));
    // The table is still written.
    tscope()
        .args(["compare", HOST, TRAPPED, "--fail-on", "slower", "--json"])
        .assert()
        .code(1)
        .stdout(contains("\"ratio_interval\""));
    tscope()
        .args(["compare", HOST, HOST, "--fail-on", "slower"])
        .assert()
        .code(0);
    // Faster is not a failure: the trapped profile as baseline.
    let dir = tempfile::tempdir().unwrap();
    let faster = adjusted(
        dir.path(),
        "faster.json",
        &[("cpuid", [1000.0, 990.0, 1010.0])],
        None,
    );
    tscope()
        .args(["compare", HOST])
        .arg(&faster)
        .args(["--fail-on", "slower"])
        .assert()
        .code(0);
    // Without the flag a slowdown is not an error.
    tscope().args(["compare", HOST, TRAPPED]).assert().code(0);
    tscope()
        .args(["compare", HOST, HOST, "--fail-on", "faster"])
        .assert()
        .code(2);
}

/// `--unit cycles` compares what a change of the core clock does not move. A real probe, and
/// the same probe as a clock a third slower would have read it (every ns × 1.5, the clock
/// ÷ 1.5, the cycles unchanged): in ns sources are decided slower and the note names the clocks,
/// by default the counter read is judged in cycles, and under `--unit cycles` nothing changed. A profile without `core_clock` cannot be compared in cycles.
#[cfg(target_arch = "x86_64")]
#[test]
fn unit_cycles_sees_through_a_clock_change() {
    // The same probe read as a clock this much slower reads it: far enough that a real
    // probe's ns intervals decide "slower" unless all three are wider than ±20%.
    const SLOWER: f64 = 1.5;
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    tscope()
        .args([
            "probe",
            "--quick",
            "--json",
            "--source",
            "rdtsc,vdso:monotonic,syscall:getppid",
            "-o",
        ])
        .arg(&a)
        .assert()
        .success();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    for s in v["sources"].as_array_mut().unwrap() {
        for k in ["point", "lower", "upper"] {
            let x = s["cost_ns"][k].as_f64().unwrap();
            s["cost_ns"][k] = (x * SLOWER).into();
        }
    }
    for k in ["ghz", "ghz_min", "ghz_max"] {
        let x = v["core_clock"][k].as_f64().unwrap();
        v["core_clock"][k] = (x / SLOWER).into();
    }
    let b = dir.path().join("b.json");
    std::fs::write(&b, v.to_string()).unwrap();

    let out = tscope()
        .arg("compare")
        .args([&a, &b])
        .args(["--fail-on", "slower"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Core clock") && text.contains("judged in core cycles"),
        "{text}"
    );
    // By default compare judges the counter read in cycles (its ns beside) and the others in ns.
    let out = tscope()
        .arg("compare")
        .args([&a, &b])
        .arg("--json")
        .output()
        .unwrap();
    let cmp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cmp["unit_choice"], "auto");
    let rdtsc = crate::common::source_row(&cmp, "rdtsc");
    assert_eq!(rdtsc["judged_unit"][0], "cycles", "{rdtsc}");
    assert_eq!(rdtsc["change"][0], "no_change", "{rdtsc}");
    assert!(rdtsc["ns_ratio_interval"][0]["point"].as_f64().unwrap() > 1.4);
    let getppid = crate::common::source_row(&cmp, "syscall:getppid");
    assert_eq!(getppid["judged_unit"][0], "ns", "{getppid}");

    let out = tscope()
        .arg("compare")
        .args([&a, &b])
        .args(["--unit", "cycles", "--fail-on", "slower", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let cmp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cmp["unit"], "cycles");
    for s in cmp["sources"].as_array().unwrap() {
        assert_eq!(s["change"][0], "no_change", "{s}");
        assert_eq!(s["ratio_to_first"][0].as_f64().unwrap(), 1.0, "{s}");
    }
    let ghz: Vec<f64> = cmp["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["core_ghz"].as_f64().unwrap())
        .collect();
    assert!((ghz[0] / ghz[1] - SLOWER).abs() < 1e-9, "{ghz:?}");

    tscope()
        .args(["compare", HOST])
        .arg(&a)
        .args(["--unit", "cycles"])
        .assert()
        .code(2)
        .stderr(contains("no core_clock in tests/data/compare/host.json"));
}
