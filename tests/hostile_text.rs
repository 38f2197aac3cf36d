//! What a hostile file or argument can put on a terminal, and how numbers and symbols read in
//! errors and under a non-UTF-8 locale (docs/reliability.md, "A hostile user, as root").

use crate::common::{tscope, PROFILE};

/// ESC sequences (clear the screen, set the window title), BEL, a right-to-left override and a
/// newline: none may reach the output raw.
const HOSTILE: &str = "EPYC\x1b[2J\x1b]0;owned\x07\u{202e}evil\nrow";

/// The bundled profile with `machine.cpu_model` set to [`HOSTILE`], at `dir/name`.
fn hostile_profile(dir: &std::path::Path, name: &str) -> String {
    let text = std::fs::read_to_string(PROFILE).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["machine"]["cpu_model"] = HOSTILE.into();
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p.display().to_string()
}

/// `tscope args [fmt]`'s stdout, expecting success.
fn stdout(args: &[&str], fmt: Option<&str>) -> String {
    let out = tscope().args(args).args(fmt).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn assert_clean(what: &str, s: &str) {
    for bad in ['\x1b', '\x07', '\u{202e}', '\r'] {
        assert!(!s.contains(bad), "{what}: {bad:?} reached the output:\n{s}");
    }
}

#[test]
fn control_and_bidi_characters_from_a_file_or_label_are_escaped_in_human_forms() {
    let d = tempfile::tempdir().unwrap();
    let p = hostile_profile(d.path(), "p.json");
    // The table (the default) and Markdown.
    for fmt in [None, Some("--markdown")] {
        let s = stdout(&["show", &p], fmt);
        assert_clean(&format!("show {fmt:?}"), &s);
        // The newline is escaped too: the machine line stays one line.
        let line = s.lines().find(|l| l.contains("EPYC")).unwrap();
        assert!(
            line.contains("\\x1b[2J\\x1b]0;owned\\x07\\u{202e}evil\\nrow"),
            "{line}"
        );
    }
    // A file name and a --labels value with the same characters, in compare's header.
    let named = d.path().join("host\x1b[31m\u{202e}");
    std::fs::copy(PROFILE, &named).unwrap();
    let named = named.display().to_string();
    for fmt in [None, Some("--markdown")] {
        let s = stdout(&["compare", PROFILE, &named], fmt);
        assert_clean(&format!("compare (file name) {fmt:?}"), &s);
        assert!(s.contains("host\\x1b[31m\\u{202e}"), "{s}");
        let labels = format!("a,{HOSTILE}");
        let s = stdout(&["compare", PROFILE, PROFILE, "--labels", &labels], fmt);
        assert_clean(&format!("compare --labels {fmt:?}"), &s);
        // Every table row holds as many cells as the header: nothing split a row.
        if fmt.is_some() {
            let cells = |l: &str| l.matches(" | ").count();
            let mut header = None;
            for l in s.lines() {
                match (l.starts_with('|'), header) {
                    (false, _) => header = None,
                    (true, None) => header = Some(cells(l)),
                    (true, Some(n)) => assert_eq!(cells(l), n, "a split row: {l}\n{s}"),
                }
            }
        }
    }
    // JSON escapes every one of them (bidi overrides too) and keeps the text exact.
    let json = stdout(&["show", &p], Some("--json"));
    assert_clean("show --json", &json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["machine"]["cpu_model"], HOSTILE);
    // An error naming a hostile file prints it escaped too.
    let missing = d.path().join("gone\x1b[2J.json").display().to_string();
    let out = tscope().args(["show", &missing]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_clean("the error line", &err);
    assert!(err.contains("gone\\x1b[2J.json"), "{err}");
}

#[test]
fn huge_numbers_in_range_errors_are_printed_compactly() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(PROFILE).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["sources"][0]["cost_ns"] =
        serde_json::json!({"point": -1e308, "lower": -1e308, "upper": 1.0});
    let p = d.path().join("p.json");
    std::fs::write(&p, v.to_string()).unwrap();
    let p = p.display().to_string();
    for args in [
        vec!["simulate", "pipe1", "--profile", &p],
        vec!["compare", PROFILE, &p],
        vec![
            "simulate",
            "pipe1",
            "--profile",
            PROFILE,
            "--break-even=-1e308",
        ],
    ] {
        let out = tscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("got -1e308"), "{args:?}: {err}");
        assert!(!err.contains("00000000000"), "{args:?}: {err}");
    }
}

#[test]
fn a_c_locale_gets_ascii_output() {
    let args = ["show", PROFILE];
    let utf8 = tscope()
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&utf8.stdout).contains("µs"));
    for (var, value) in [("LC_ALL", "C"), ("LC_CTYPE", "POSIX"), ("LANG", "C")] {
        let out = tscope()
            .args(args)
            .env_remove("LC_ALL")
            .env_remove("LC_CTYPE")
            .env_remove("LANG")
            .env(var, value)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stdout.is_ascii(), "{var}={value}: not ASCII");
        assert!(String::from_utf8_lossy(&out.stdout).contains(" us"));
    }
    // The first variable set decides, as in the C library: LC_ALL=C wins over LANG=C.UTF-8.
    let out = tscope()
        .args(["compare", "/nonexistent/x.json", PROFILE])
        .env("LC_ALL", "C")
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.is_ascii());
}

#[test]
fn every_output_path_escapes_a_hostile_document() {
    let _cpu = crate::common::cpu_lock();
    let d = tempfile::tempdir().unwrap();
    let p = hostile_profile(d.path(), "p.json");
    // The forms of one document: table, Markdown, CSV, JSON, OpenMetrics.
    for fmt in [
        None,
        Some("--markdown"),
        Some("--csv"),
        Some("--json"),
        Some("--openmetrics"),
    ] {
        assert_clean(&format!("show {fmt:?}"), &stdout(&["show", &p], fmt));
    }
    // compare in every form.
    for fmt in [None, Some("--markdown"), Some("--csv"), Some("--json")] {
        let s = stdout(&["compare", PROFILE, &p], fmt);
        assert_clean(&format!("compare {fmt:?}"), &s);
    }
    // The fleet: stored, then listed, exported and reported in every form.
    let db = d.path().join("f.db");
    let db = db.to_str().unwrap();
    stdout(&["fleet", "--db", db, "add", &p, "--label", "lab"], None);
    for args in [
        &["fleet", "--db", db, "ls"][..],
        &["fleet", "--db", db, "ls", "--csv"],
        &["fleet", "--db", db, "ls", "--json"],
        &["fleet", "--db", db, "export"],
        &["fleet", "--db", db, "export", "--json"],
        &["fleet", "--db", db, "report", "--by", "cpu"],
        &["fleet", "--db", db, "report", "--by", "cpu", "--csv"],
        &["fleet", "--db", db, "report", "--by", "cpu", "--json"],
    ] {
        assert_clean(&format!("{args:?}"), &stdout(args, None));
    }
}
