//! The bad-input matrix (docs/reliability.md): every case exits 2 with one line on stderr that
//! names the file, line or field, never panics, and leaves no partial output file behind.

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
fn scenario_files() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    fails(&["simulate", "/nonexistent/x.json"], "/nonexistent/x.json");
    let empty = write(dir, "empty.json", "");
    fails(&["simulate", &empty], "empty.json");
    let trunc = write(dir, "trunc.json", &SCENARIO[..60]);
    fails(&["simulate", &trunc], "line");
    let newer = write(
        dir,
        "newer.json",
        &SCENARIO.replace("\"schema_version\": 1", "\"schema_version\": 2"),
    );
    fails(&["simulate", &newer], "schema_version 2");
    let older = write(
        dir,
        "older.json",
        &SCENARIO.replace("\"schema_version\": 1", "\"schema_version\": 0"),
    );
    fails(&["simulate", &older], "schema_version 0");
    let unknown = write(
        dir,
        "unknown.json",
        &SCENARIO.replace("\"tasks\": 1", "\"taks\": 1, \"tasks\": 1"),
    );
    fails(&["simulate", &unknown], "taks");
    let bad_call = write(
        dir,
        "call.json",
        &SCENARIO.replace("\"syscall\": \"read\"", "\"syscall\": \"frobnicate\""),
    );
    fails(&["simulate", &bad_call], "frobnicate");
    let ok = write(dir, "ok.json", SCENARIO);
    let profile = "tests/data/profile-kvm-epyc.json";
    tscope()
        .args(["simulate", &ok, "--profile", profile, "--json"])
        .assert()
        .success();
}

#[test]
fn costs_and_parameters() {
    let profile = "tests/data/profile-kvm-epyc.json";
    for bad in [
        "precise_read_ns=-5",
        "precise_read_ns=NaN",
        "precise_read_ns=1e30",
        "nonsense=3",
    ] {
        fails(
            &["simulate", "pipe1", "--profile", profile, "--set", bad],
            bad.split('=').next().unwrap(),
        );
    }
    fails(
        &[
            "simulate",
            "pipe1",
            "--profile",
            profile,
            "--sweep",
            "precise_read_ns=100..10",
        ],
        "precise_read_ns",
    );
    fails(
        &["simulate", "pipe1", "--profile", "/nonexistent/p.json"],
        "/nonexistent/p.json",
    );
    let d = tempfile::tempdir().unwrap();
    let empty = write(d.path(), "p.json", "");
    fails(&["simulate", "pipe1", "--profile", &empty], "p.json");
}

#[test]
fn absurd_run_parameters() {
    fails(&["run", "pipe1", "--tasks", "0"], "--tasks");
    fails(&["run", "pipe1", "--tasks", "100000"], "--tasks");
    fails(&["run", "pipe1", "--duration", "-1"], "--duration");
    fails(&["run", "pipe1", "--duration", "1e12"], "--duration");
    fails(&["run", "mem", "--op", "wr", "--size", "100t"], "--size");
    fails(&["detect", "--fail-on", "nope"], "unknown verdict 'nope'");
    fails(
        &["probe", "--source", "vdso:nope"],
        "unknown source 'vdso:nope'",
    );
}

#[test]
fn strict_strace_names_the_line() {
    let d = tempfile::tempdir().unwrap();
    let log = write(
        d.path(),
        "t.strace",
        "1 14:00:00.000001 getpid() = 1 <0.000001>\nthis is not strace\n",
    );
    fails(
        &[
            "simulate",
            "--strace",
            &log,
            "--strict",
            "--profile",
            "tests/data/profile-kvm-epyc.json",
        ],
        "line 2",
    );
}

#[test]
fn compare_inputs() {
    let d = tempfile::tempdir().unwrap();
    let host = "tests/data/compare/host.json";
    let empty = write(d.path(), "empty.json", "");
    fails(&["compare", host, &empty], "empty.json");
    let text = std::fs::read_to_string(host).unwrap();
    let trunc = write(d.path(), "trunc.json", &text[..text.len() / 2]);
    fails(&["compare", host, &trunc], "trunc.json");
    let old = write(
        d.path(),
        "old.json",
        r#"{"schema_version": 0, "sources": []}"#,
    );
    fails(&["compare", host, &old], "schema_version 0");
    let new = write(
        d.path(),
        "new.json",
        r#"{"schema_version": 7, "sources": []}"#,
    );
    fails(&["compare", host, &new], "schema_version 7");
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
