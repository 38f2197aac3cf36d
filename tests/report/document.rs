//! The report a kernel developer pastes: what-ifs named everywhere, the environment reviewers
//! ask for, a commit message at 72 columns, the knob's answer first, the reproduce command
//! complete, and an unwritable `--out` refused before anything is measured.

use std::time::Duration;

use crate::common::{quick_report, tscope};

#[test]
fn an_emulated_trap_is_named_in_every_part_of_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    quick_report(&["--emulate-trap"], &out);
    let what_if = "RDTSC trapped by tscope --emulate-trap, not by the hypervisor";

    let msg = std::fs::read_to_string(out.join("commit-message.txt")).unwrap();
    assert!(msg.lines().all(|l| l.chars().count() <= 72), "{msg}");
    let words = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains(what_if), "{msg}");
    // The reproduce command is the one given: the what-if and the sync budget included.
    assert!(
        words.contains("tscope --emulate-trap report --quick --no-workloads --sync-ms 20 --out"),
        "{msg}"
    );

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let title = md.lines().next().unwrap();
    assert!(title.contains(what_if), "{title}");
    for row in [
        "| **what-if** |",
        "| date (UTC) | 20",
        "| tscope | ",
        "| kernel command line |",
        "| mitigations |",
        "stepping",
        "microcode",
        "| HZ |",
    ] {
        assert!(md.contains(row), "report.md lacks {row:?}");
    }
    // The commit paragraph sits in report.md exactly as in commit-message.txt.
    assert!(md.contains(&format!("```text\n{msg}```")), "{md}");
    // The knob's compact answer comes before the per-policy tables.
    let summary = md
        .find("| scenario | model | stock | best | speedup |")
        .unwrap();
    let per_policy = md.find("| policy | ns/op |").unwrap();
    assert!(summary < per_policy);

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["environment"]["what_ifs"][0], what_if);
    assert_eq!(json["profile"]["emulate_trap"], true);
    let rev = json["environment"]["git_revision"].as_str().unwrap();
    assert!(!rev.is_empty());
}

#[test]
fn a_report_without_what_ifs_says_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    quick_report(&[], &out);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert_eq!(md.lines().next(), Some("# tscope report"));
    assert!(!md.contains("what-if"));
    let msg = std::fs::read_to_string(out.join("commit-message.txt")).unwrap();
    assert!(!msg.contains("What-if"), "{msg}");
    assert!(msg.lines().all(|l| l.chars().count() <= 72), "{msg}");
}

#[test]
fn an_unwritable_out_fails_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    for out in [std::path::PathBuf::from("/proc/tscope-nope"), file] {
        // Measuring would take over 60 s (the sync check alone); the refusal comes first, so
        // the command ends long before the timeout whatever the machine's load.
        tscope()
            .args(["report", "--sync-ms", "60000", "--out"])
            .arg(&out)
            .timeout(Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--out"));
    }
}

#[test]
fn every_quoted_speedup_sits_beside_its_price() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    quick_report(&["--emulate-trap"], &out);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let sims = json["simulation"].as_array().unwrap();
    // The what-if applied to every model: each priced at the trapped counter read, and says so.
    let trapped = json["profile"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "rdtscp")
        .unwrap()["cost_ns"]["point"]
        .as_f64()
        .unwrap();
    for m in sims {
        assert_eq!(m["costs"]["precise_read_ns"], trapped, "{}", m["model"]);
        let src = m["costs"]["sources"]["precise_read"].as_str().unwrap();
        assert!(src.starts_with("profile rdtscp (trapped"), "{src}");
    }
    let price_of = |policy: &str| {
        let m = sims
            .iter()
            .find(|m| {
                m["estimates"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e["policy"] == policy)
            })
            .unwrap_or_else(|| panic!("no model simulated {policy}"));
        tscope::fmt::ns(m["costs"]["precise_read_ns"].as_f64().unwrap())
    };

    let msg = std::fs::read_to_string(out.join("commit-message.txt")).unwrap();
    let words = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut quoted = 0;
    // Each "buys X× (policy)" clause (up to its ';') carries "priced at <its price> ns".
    for clause in words.split("; ") {
        let Some(at) = clause.find(" buys ") else {
            continue;
        };
        quoted += 1;
        let rest = &clause[at..];
        let policy = rest
            .split_once("× (")
            .and_then(|(_, p)| p.split_once(')'))
            .map(|(p, _)| p)
            .unwrap_or_else(|| panic!("no policy after the speedup: {clause}"));
        let price = format!("priced at {} ns (rdtscp, trapped)", price_of(policy));
        assert!(
            rest.contains(&price),
            "{price:?} not beside the speedup: {clause}"
        );
    }
    // vfsmix's sentence, and write-stat's on each filesystem the live pair priced.
    let priced = json["profile"]["filesystems"]
        .as_array()
        .map_or(0, |f| f.iter().filter(|f| f["pair"].is_object()).count());
    assert_eq!(quoted, 1 + priced, "{msg}");

    // The answer table: each row names the price its speedup was computed at.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let head = md
        .lines()
        .find(|l| l.starts_with("| scenario | model | stock | best | speedup |"))
        .unwrap();
    assert!(
        head.ends_with("| priced at (precise read) | inode update priced at |"),
        "{head}"
    );
    let rows: Vec<&str> = md
        .lines()
        .skip_while(|l| *l != head)
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(!rows.is_empty());
    let cell = format!("| {} ns (rdtscp, trapped) |", tscope::fmt::ns(trapped));
    for row in rows {
        assert!(row.contains(&cell), "{row}");
    }
    assert!(md.contains("Under the emulated trap every model is priced at the trapped"));
}
