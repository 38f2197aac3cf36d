//! `tscope simulate`'s output: byte-identical across runs, snapshots of the bundled scenarios
//! under a fixed recorded profile, every format naming every policy, CSV one row per policy,
//! the quick probe when no profile is given, a real run record, and `--explain`.

use std::path::PathBuf;

use crate::common::{json, tscope, PROFILE};
use crate::simulate::{close, f};
use serde_json::Value;

#[test]
fn output_is_byte_identical_across_runs() {
    let run = || {
        tscope()
            .args(["simulate", "vfsmix", "--profile", PROFILE, "--json"])
            .output()
            .unwrap()
    };
    let (a, b) = (run(), run());
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
}

/// Compares every bundled scenario, all models, against tests/data/simulate/<name>.json.
/// Regenerate with `TSCOPE_UPDATE_SNAPSHOTS=1 cargo test snapshots`: that run rewrites the files
/// that differ and then fails (naming them), so an update can never pass for a comparison.
#[test]
fn snapshots_of_bundled_scenarios_under_the_recorded_profile() {
    let update = std::env::var_os("TSCOPE_UPDATE_SNAPSHOTS").is_some();
    let mut rewritten = Vec::new();
    for name in [
        "pipe1",
        "pingpong",
        "vfsmix",
        "write-stat",
        "write-only",
        "untar",
        "netbsd-seed",
        "netbsd-seed-vfsmix",
    ] {
        let out = tscope()
            .args(["simulate", name, "--profile", PROFILE, "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = PathBuf::from(format!(
            "{}/tests/data/simulate/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        ));
        if update && std::fs::read(&path).ok().as_deref() != Some(&out.stdout[..]) {
            std::fs::write(&path, &out.stdout).unwrap();
            rewritten.push(name);
            continue;
        }
        let expected = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            expected == out.stdout,
            "{name}: output differs from {}; rerun with TSCOPE_UPDATE_SNAPSHOTS=1 if intended",
            path.display()
        );
    }
    assert!(
        !update,
        "TSCOPE_UPDATE_SNAPSHOTS is set: rewrote {rewritten:?}; rerun without it to compare"
    );
}

#[test]
fn table_and_markdown_name_every_policy() {
    let out = tscope()
        .args(["simulate", "pipe1", "--profile", PROFILE, "--markdown"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for p in ["linux:coarse", "freebsd:3", "dragonfly:5", "netbsd-knob:1"] {
        assert!(text.contains(&format!("| {p} |")), "{p} missing:\n{text}");
    }
}

#[test]
fn csv_is_one_row_per_model_and_policy() {
    let args = ["simulate", "pipe1", "--profile", PROFILE];
    let out = tscope().args(args).arg("--csv").output().unwrap();
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header[..5],
        ["scenario", "model", "policy", "stock", "ns_per_op"],
        "{csv}"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == header.len()), "{csv}");
    // The same estimates as the JSON, in the same order, at full precision.
    let v = json(&[&args[..], &["--json"]].concat());
    let estimates: Vec<&Value> = v
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["estimates"].as_array().unwrap())
        .collect();
    assert_eq!(rows.len(), estimates.len());
    for (r, e) in rows.iter().zip(&estimates) {
        assert_eq!(r[0], "pipe1");
        assert_eq!(r[2], e["policy"].as_str().unwrap());
        close(r[4].parse().unwrap(), f(&e["ns_per_op"]));
    }
}

#[test]
fn without_a_profile_a_quick_probe_is_taken_and_recorded() {
    let v = json(&["simulate", "pipe1", "--model", "freebsd", "--json"]);
    let origin = v["profile"]["origin"].as_str().unwrap();
    assert!(origin.starts_with("quick probe taken now"), "{origin}");
    assert!(f(&v["costs"]["precise_read_ns"]) > 0.0);
    assert_eq!(v["costs"]["sources"]["precise_read"], "profile rdtscp");
    assert_eq!(v["estimates"].as_array().unwrap().len(), 4);
}

#[test]
fn a_real_run_record_of_the_workload_runner_is_read() {
    // Written by `tscope run vfsmix --tasks 1 --duration 1 --record FILE` on ext4 (Linux 6.18:
    // a multigrain kernel, so the base is what multigrain's stock work leaves).
    let v = json(&[
        "simulate",
        "--run",
        "tests/data/run-record-vfsmix-ext4.json",
        "--profile",
        PROFILE,
        "--model",
        "netbsd",
        "--json",
    ]);
    assert_eq!(v["scenario"], "run:vfsmix");
    let src = v["costs"]["base_source"].as_str().unwrap();
    assert!(src.contains("linux:multigrain (linux@6.18)"), "{src}");
    // On a BSD model, ext4 files take the deferred (UFS-like) path.
    assert!(f(&v["estimates"][0]["reads_per_op"]["counter"]) > 0.0);
}

#[test]
fn explain_prints_each_count_with_its_source() {
    let out = tscope()
        .args(["simulate", "--explain", "freebsd"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("freebsd@14.3"), "{text}");
    assert!(text.contains("sys/kern/sys_pipe.c"), "{text}");
    let v = json(&["simulate", "--explain", "linux@6.12", "--json"]);
    assert_eq!(v["model"], "linux@6.12");
    assert_eq!(v["stock_policy"], "linux:coarse");
    let pipe_write = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["syscall"] == "write" && r["filesystems"][0] == "pipefs")
        .unwrap();
    assert_eq!(pipe_write["source"]["file"], "fs/pipe.c");
    assert_eq!(pipe_write["reads"], "1-2");
}
