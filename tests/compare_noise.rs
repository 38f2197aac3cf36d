//! `compare` that does not cry wolf: recorded `probe --repeat 5` profiles of one unchanged
//! machine, taken back to back (tests/data/compare/noise/), compared in consecutive pairs; a
//! trapped probe; a what-if of a real change on one source; a machine-wide shift.

use crate::common::tscope;
use predicates::str::contains;
use serde_json::Value;

fn repeat(i: usize) -> String {
    format!("tests/data/compare/noise/repeat-{i}.json")
}
const TRAPPED: &str = "tests/data/compare/noise/trapped-repeat.json";

fn compare_json(args: &[&str]) -> Value {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.push("--json");
    crate::common::json(&all)
}

fn decided(c: &Value) -> Vec<String> {
    c["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["change"][0] != "no_change")
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn consecutive_runs_of_an_unchanged_machine_flag_at_most_one_row_in_twenty() {
    let (mut flagged, mut rows) = (0, 0);
    for i in 1..8 {
        let c = compare_json(&[&repeat(i), &repeat(i + 1)]);
        assert_eq!(c["noise"]["kind"], "repeat", "{}", c["noise"]);
        rows += c["sources"].as_array().unwrap().len();
        flagged += decided(&c).len();
        // The within-run intervals alone flag far more: that is what the noise is for.
        for r in c["sources"].as_array().unwrap() {
            assert!(r["noise_pct"][0].is_number(), "{r}");
        }
    }
    assert!(rows >= 200, "{rows}");
    assert!(flagged * 20 <= rows, "{flagged} of {rows} rows flagged");
}

#[test]
fn a_trapped_probe_is_still_slower_beyond_the_noise() {
    let out = tscope()
        .args(["compare", &repeat(1), TRAPPED, "--fail-on", "slower"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rdtsc (") && stderr.contains("rdtscp ("),
        "{stderr}"
    );
    // The machine's unchanged sources are not among them.
    assert!(!stderr.contains("syscall:getppid"), "{stderr}");
}

/// `repeat-2.json` with `edit` applied to every source's JSON.
fn edited(dir: &std::path::Path, name: &str, edit: impl Fn(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(repeat(2)).unwrap()).unwrap();
    for s in v["sources"].as_array_mut().unwrap() {
        edit(s);
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

fn scale(e: &mut Value, k: f64) {
    for f in ["point", "lower", "upper"] {
        if let Some(x) = e[f].as_f64() {
            e[f] = (x * k).into();
        }
    }
}

#[test]
fn a_change_of_a_few_percent_on_one_source_is_caught() {
    // What-if: vdso:monotonic 4% dearer (a clocksource read path made slower), and nothing
    // else changed.
    let dir = tempfile::tempdir().unwrap();
    let changed = edited(dir.path(), "changed.json", |s| {
        if s["id"] == "vdso:monotonic" {
            scale(&mut s["cost_ns"], 1.04);
            scale(&mut s["cost_cycles"], 1.04);
        }
    });
    let c = compare_json(&[&repeat(1), &changed]);
    assert_eq!(decided(&c), vec!["vdso:monotonic".to_string()]);
    tscope()
        .args(["compare", &repeat(1), &changed, "--fail-on", "slower"])
        .assert()
        .code(1)
        .stderr(contains(
            "decided slower beyond the noise: vdso:monotonic (",
        ));
}

#[test]
fn a_machine_wide_shift_is_named_once_and_moves_no_row() {
    // What-if: the core ran 2.7% slower for the whole second run: every ns cost moves, the
    // cycles do not.
    let dir = tempfile::tempdir().unwrap();
    let slow = edited(dir.path(), "slow.json", |s| scale(&mut s["cost_ns"], 1.027));
    let c = compare_json(&[&repeat(1), &slow]);
    let shifts = c["shifts"].as_array().unwrap();
    assert_eq!(shifts.len(), 1, "{shifts:?}");
    let s = &shifts[0];
    assert!(s["kind"].is_null());
    assert!((s["percent"].as_f64().unwrap() - 2.7).abs() < 0.1, "{s}");
    assert!(s["cycles_percent"].as_f64().unwrap().abs() < 0.5, "{s}");
    assert!(decided(&c).is_empty(), "{:?}", decided(&c));
    let text = tscope()
        .args(["compare", &repeat(1), &slow])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.matches("moved together by +2.7").count(), 1, "{text}");
}

#[test]
fn noise_profiles_need_three() {
    tscope()
        .args(["compare", &repeat(1), &repeat(2), "--noise"])
        .arg(format!("{},{}", repeat(3), repeat(4)))
        .assert()
        .code(2)
        .stderr(contains("--noise"));
    let c = compare_json(&[
        &repeat(1),
        &repeat(2),
        "--noise",
        &format!("{},{},{}", repeat(3), repeat(4), repeat(5)),
    ]);
    assert_eq!(c["noise"]["kind"], "noise_profiles");
}
