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
    let row = |id: &str| {
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()
            .clone()
    };
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
