//! The bad-input matrix (docs/reliability.md), for the cases the per-command suites do not
//! already cover (those live in tests/simulate.rs `bad_*`, tests/run.rs
//! `bad_arguments_are_clear_errors`, tests/compare.rs, tests/fidelity.rs): every case exits 2
//! with one line on stderr naming the file or field, never panics, and leaves no partial
//! output file behind.

use std::path::Path;

use crate::common::tscope;

const SCENARIO: &str = r#"{
  "schema_version": 1,
  "name": "t",
  "description": "d",
  "tasks": 1,
  "iterations": 1000,
  "base_ns_per_iteration": 400.0,
  "iteration": [
    { "syscall": "write", "inode": "pipe", "fs": "pipefs" },
    { "syscall": "read", "inode": "pipe", "fs": "pipefs" }
  ]
}"#;

/// Runs `tscope args`, expecting exit 2, one stderr line containing `needle`, no panic.
fn fails(args: &[&str], needle: &str) {
    let out = tscope().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
    if err.starts_with("tscope: error:") {
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn empty_and_truncated_files() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let empty = write(dir, "empty.json", "");
    fails(&["simulate", &empty], "empty.json");
    let trunc = write(dir, "trunc.json", &SCENARIO[..60]);
    fails(&["simulate", &trunc], "line");
    let profile = "tests/data/profile-kvm-epyc.json";
    fails(&["simulate", "pipe1", "--profile", &empty], "empty.json");
    let text = std::fs::read_to_string(profile).unwrap();
    let half = write(dir, "half.json", &text[..text.len() / 2]);
    fails(&["simulate", "pipe1", "--profile", &half], "half.json");
    fails(
        &["compare", "tests/data/compare/host.json", &empty],
        "empty.json",
    );
    fails(
        &["compare", "tests/data/compare/host.json", &half],
        "half.json",
    );
    // The same scenario, whole, is fine: the failures above are the damage, not the content.
    let ok = write(dir, "ok.json", SCENARIO);
    tscope()
        .args(["simulate", &ok, "--profile", profile, "--json"])
        .assert()
        .success();
}

#[test]
fn older_schema_versions_and_negative_numbers() {
    let d = tempfile::tempdir().unwrap();
    let old = write(
        d.path(),
        "old.json",
        r#"{"schema_version": 0, "sources": []}"#,
    );
    fails(
        &["compare", "tests/data/compare/host.json", &old],
        "schema_version 0",
    );
    fails(&["run", "pipe1", "--duration", "-1"], "--duration");
}

#[test]
fn unwritable_outputs_leave_nothing_behind() {
    let d = tempfile::tempdir().unwrap();
    let file = write(d.path(), "a-file", "x");
    let under_file = format!("{file}/out.json");
    fails(
        &[
            "probe",
            "--quick",
            "--source",
            "rdtsc",
            "--json",
            "-o",
            &under_file,
        ],
        "out.json",
    );
    let profile = "tests/data/profile-kvm-epyc.json";
    fails(
        &[
            "simulate",
            "pipe1",
            "--profile",
            profile,
            "--json",
            "--out",
            &under_file,
        ],
        "out.json",
    );
    fails(
        &["report", "--quick", "--no-workloads", "--out", &under_file],
        "out.json",
    );
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["a-file"], "partial files left: {left:?}");
}
