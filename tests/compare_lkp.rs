//! `compare --lkp`: the 0-day test robot's layout and rule beside tscope's word, on recorded
//! `probe --repeat 5` profiles (tests/data/compare/noise/) and on what-if edits of them.

use crate::common::tscope;
use serde_json::Value;

const BASE: &str = "tests/data/compare/noise/repeat-1.json";
const SAME: &str = "tests/data/compare/noise/repeat-2.json";

/// `repeat-2.json` with `edit` applied to the document, written under `dir`.
fn edited(dir: &std::path::Path, name: &str, edit: impl Fn(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(SAME).unwrap()).unwrap();
    edit(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// Every run of `id` (its cost and its runs' points) made `k` times dearer; the noise between
/// runs, a spread of log points, stays what the points give.
fn dearer(v: &mut Value, id: &str, k: f64) {
    for s in v["sources"].as_array_mut().unwrap() {
        if s["id"] != id {
            continue;
        }
        for f in ["point", "lower", "upper"] {
            let x = s["cost_ns"][f].as_f64().unwrap();
            s["cost_ns"][f] = (x * k).into();
        }
        for p in s["between_runs"]["points_ns"].as_array_mut().unwrap() {
            *p = (p.as_f64().unwrap() * k).into();
        }
    }
}

fn text(args: &[&str]) -> String {
    let out = tscope().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The line of `metric` in LKP's table.
fn line<'a>(t: &'a str, metric: &str) -> &'a str {
    let needle = format!("  {metric}.cost_ns ");
    t.lines()
        .find(|l| l.contains(&needle))
        .unwrap_or_else(|| panic!("no {metric} line in\n{t}"))
}

#[test]
fn the_table_is_lkps_layout_with_both_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let after = edited(dir.path(), "after.json", |v| {
        dearer(v, "vdso:realtime", 1.15)
    });
    let t = text(&["compare", BASE, &after, "--lkp"]);
    let lines: Vec<&str> = t.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "---------------- ---------------------------")
        .unwrap_or_else(|| panic!("no LKP table in\n{t}"));
    let head = &lines[at - 1..at + 3];
    assert_eq!(head[0], "repeat-1         after");
    assert_eq!(head[1], "---------------- ---------------------------");
    assert!(
        head[2].starts_with("         %stddev     %change         %stddev  "),
        "{}",
        head[2]
    );
    assert!(
        head[2].ends_with("LKP        tscope (ns)  why they differ"),
        "{}",
        head[2]
    );
    assert_eq!(head[3], "             \\          |                \\");
    // 23.28 ns → 26.77 ns in every run: LKP's increase, tscope's slower, no note. The columns
    // fall where LKP puts them: the base mean in 10, `%change` ending at 27, the new mean at 38.
    let l = line(&t, "vdso:realtime");
    assert_eq!(&l[..10], "     23.28", "{l}");
    assert_eq!(&l[16..27], "     +15.0%", "{l}");
    assert_eq!(&l[27..38], "      26.77", "{l}");
    assert!(l.trim_end().ends_with("increase   slower"), "{l}");
    // An untouched source: no change on both sides.
    let l = line(&t, "rdtsc");
    assert!(l.trim_end().ends_with("no change  no change"), "{l}");
    // Where the two differ, a note says why: vdso:time's runs lie apart (−5.8%), but its
    // noise between runs holds the change.
    let l = line(&t, "vdso:time");
    assert!(l.contains("decrease   no change"), "{l}");
    assert!(
        l.contains(
            "LKP: the sample ranges lie apart and the ratio 1.061 is over 1.01; tscope: the \
             interval of the ratio, widened by the noise between runs,"
        ),
        "{l}"
    );
}

#[test]
fn the_json_carries_lkps_decision_per_source() {
    let dir = tempfile::tempdir().unwrap();
    let after = edited(dir.path(), "after.json", |v| {
        dearer(v, "vdso:realtime", 1.15)
    });
    let c = crate::common::json(&["compare", BASE, &after, "--lkp", "--json"]);
    let row = |id: &str| crate::common::source_row(&c, id);
    let r = row("vdso:realtime");
    // Every existing field stays.
    assert_eq!(r["change"][0], "slower");
    let l = &r["lkp"][0];
    assert_eq!(l["decision"], "increase");
    assert_eq!(l["agrees"], true);
    assert!(l.get("note").is_none(), "{l}");
    assert_eq!(l["base"]["samples"], 5);
    assert_eq!(l["base"]["trimmed"], 0);
    assert!(
        (l["change_pct"].as_f64().unwrap() - 15.0).abs() < 0.05,
        "{l}"
    );
    let l = &row("vdso:time")["lkp"][0];
    assert_eq!(l["decision"], "decrease");
    assert_eq!(l["agrees"], false);
    assert!(l["note"].as_str().unwrap().starts_with("LKP: "), "{l}");
    // Without --lkp there is no lkp field.
    let c = crate::common::json(&["compare", BASE, SAME, "--json"]);
    assert!(c["sources"][0].get("lkp").is_none());
}

#[test]
fn plain_probes_leave_lkp_undecided_and_say_why() {
    // One run per profile (no between_runs): LKP's rule has no range to compare.
    let dir = tempfile::tempdir().unwrap();
    let plain = |name: &str, k: f64| {
        edited(dir.path(), name, |v| {
            dearer(v, "vdso:realtime", k);
            v.as_object_mut().unwrap().remove("between_runs");
            for s in v["sources"].as_array_mut().unwrap() {
                s.as_object_mut().unwrap().remove("between_runs");
            }
        })
    };
    let (before, after) = (plain("before.json", 1.0), plain("after.json", 1.15));
    let t = text(&["compare", &before, &after, "--lkp"]);
    assert!(
        t.contains("These profiles hold one run each: LKP's rule needs repeated runs"),
        "{t}"
    );
    let l = line(&t, "vdso:realtime");
    // One run: no ± is printed, the change is still the ratio of the two points.
    assert_eq!(&l[16..27], "     +15.0%", "{l}");
    assert!(
        l.contains("undecided  slower       LKP: one run on a side: needs repeated runs"),
        "{l}"
    );
    let c = crate::common::json(&["compare", &before, &after, "--lkp", "--json"]);
    for r in c["sources"].as_array().unwrap() {
        assert_eq!(r["lkp"][0]["decision"], "too_few_samples", "{r}");
    }
}

#[test]
fn markdown_and_csv_carry_it_too() {
    let md = text(&["compare", BASE, SAME, "--lkp", "--markdown"]);
    assert!(
        md.contains("```text\nrepeat-1         repeat-2\n----------------"),
        "{md}"
    );
    let csv = text(&["compare", BASE, SAME, "--lkp", "--csv"]);
    let head = csv.lines().next().unwrap();
    assert!(
        head.ends_with(
            "repeat-2_lkp_base_mean_ns,repeat-2_lkp_mean_ns,repeat-2_lkp_change_pct,repeat-2_lkp"
        ),
        "{head}"
    );
}
