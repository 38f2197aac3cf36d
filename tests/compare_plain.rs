//! `compare`'s default, honest and sensitive: eight plain probes of one unchanged machine
//! taken back to back (tests/data/compare/plain/), and the clocksource switched from tsc to
//! kvm-clock in one boot (tests/data/compare/clocksource/), with plain probes and with
//! `--repeat 3`.

use crate::common::tscope;
use serde_json::Value;

fn plain(i: usize) -> String {
    format!("tests/data/compare/plain/plain-{i}.json")
}

fn clocksource(name: &str) -> String {
    format!("tests/data/compare/clocksource/{name}.json")
}

fn compare_json(args: &[&str]) -> Value {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.push("--json");
    crate::common::json(&all)
}

fn word(c: &Value, id: &str) -> String {
    crate::common::source_row(c, id)["change"][0]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn two_plain_probes_of_an_unchanged_machine_flag_at_most_one_row_in_twenty() {
    let (mut flagged, mut rows) = (0, 0);
    for i in 1..8 {
        let c = compare_json(&[&plain(i), &plain(i + 1)]);
        assert_eq!(c["noise"]["kind"], "prior", "{}", c["noise"]);
        for r in c["sources"].as_array().unwrap() {
            rows += 1;
            if r["change"][0] != "no_change" {
                flagged += 1;
            }
            assert!(r["noise_pct"][0].as_f64().unwrap() >= 3.0, "{r}");
        }
    }
    assert!(rows >= 200, "{rows}");
    assert!(flagged * 20 <= rows, "{flagged} of {rows} rows flagged");
}

fn assert_clocksource_words(before: &str, after: &str) {
    let c = compare_json(&[&clocksource(before), &clocksource(after)]);
    for id in crate::common::TSC_READS {
        assert_eq!(word(&c, id), "slower", "{before} → {after}: {id}");
    }
    for id in ["rdtsc", "rdtscp", "syscall:getppid"] {
        assert_eq!(word(&c, id), "no_change", "{before} → {after}: {id}");
    }
    let vdso = crate::common::paths_with(&c, "vdso:realtime");
    assert_eq!(vdso.len(), 1, "{:?}", c["paths"]);
    assert_eq!(vdso[0]["change"], "slower");
    assert_eq!(vdso[0]["members"].as_array().unwrap().len(), 8);
    assert!(
        c["shifts"].as_array().unwrap().is_empty(),
        "{}",
        c["shifts"]
    );
    let out = tscope()
        .args(["compare", &clocksource(before), &clocksource(after)])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("One machine, another clocksource"), "{text}");
    assert!(!text.contains("Different machines"), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("Path:") && l.contains("vdso:realtime"))
            .count(),
        1,
        "{text}"
    );
    // Every TSC read's row carries the path's one word.
    for id in crate::common::TSC_READS {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap();
        assert!(line.ends_with("slower (path)"), "{line}");
    }
}

#[test]
fn a_clocksource_switch_is_slower_on_every_tsc_read_with_plain_probes() {
    assert_clocksource_words("tsc-plain-1", "kvm-clock-plain-1");
    assert_clocksource_words("tsc-plain-2", "kvm-clock-plain-2");
}

#[test]
fn a_clocksource_switch_is_slower_on_every_tsc_read_with_repeated_runs() {
    assert_clocksource_words("tsc-repeat3", "kvm-clock-repeat3");
    // The second tsc run shared the machine: named and set aside.
    let c = compare_json(&[
        &clocksource("tsc-repeat3"),
        &clocksource("kvm-clock-repeat3"),
    ]);
    let d = c["disturbed"].as_array().unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["label"], "tsc-repeat3");
    assert_eq!(d[0]["run"], 2);
    let out = tscope()
        .args([
            "compare",
            &clocksource("tsc-repeat3"),
            &clocksource("kvm-clock-repeat3"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Disturbed: tsc-repeat3 run 2 moved +"),
        "{text}"
    );
}
