//! `tscope simulate --strace FILE --profile P`: the multigrain cost of one pass of a recorded
//! program on each filesystem the profile priced (`by_filesystem`), in JSON, text and
//! Markdown, from a regular file and from a FIFO; none, and no error, for a profile without
//! priced filesystems.

use std::time::Duration;

use crate::common::{json, run_ok, tscope, write_tmp, PROFILE};
use crate::simulate::f;
use serde_json::Value;

/// A recorded profile with tmpfs, ext4 and xfs priced, and a btrfs entry whose update is not.
const PRICED: &str = "tests/data/update-priced-amd.json";
/// A `make` of two C files: it stats, writes and creates files.
const MAKE: &str = "scenarios/traces/make-cc.strace";

fn strace(log: &str, profile: &str, extra: &[&str]) -> Value {
    let mut args = vec!["simulate", "--strace", log, "--profile", profile, "--json"];
    args.extend_from_slice(extra);
    json(&args)
}

fn rows(v: &Value) -> &Vec<Value> {
    v["by_filesystem"]
        .as_array()
        .unwrap_or_else(|| panic!("no by_filesystem in {v}"))
}

fn row<'a>(v: &'a Value, fs: &str) -> &'a Value {
    rows(v)
        .iter()
        .find(|r| r["fs"] == fs)
        .unwrap_or_else(|| panic!("no {fs} row in {}", v["by_filesystem"]))
}

#[test]
fn one_row_per_priced_filesystem_with_its_cost_share_counts_and_prices() {
    let v = strace(MAKE, PRICED, &["--model", "linux"]);
    assert_eq!(v["model"], "linux@6.18");
    let kinds: Vec<&str> = rows(&v).iter().map(|r| r["fs"].as_str().unwrap()).collect();
    // btrfs's update is not priced in the profile: no row.
    assert_eq!(kinds, ["tmpfs", "ext4", "xfs"]);
    for r in rows(&v) {
        let (cost, pass, share) = (
            f(&r["multigrain_ns_per_pass"]),
            f(&r["pass_ns"]),
            f(&r["share_of_pass"]),
        );
        assert!(cost > 0.0, "{r}");
        assert!(share > 0.0 && share < 1.0, "{r}");
        assert!((share - cost / pass).abs() <= 1e-12, "{r}");
        // The stock pass: every call's base cost and its timestamp work.
        let calls = f(&v["strace"]["calls"]);
        assert!(pass > calls * f(&v["costs"]["base_ns_per_op"]), "{r}");
        let c = &r["counts"];
        assert!(f(&c["queries"]) > 0.0 && f(&c["fine_stamps"]) > 0.0, "{r}");
        // The counts times the prices make up the cost.
        let p = &r["prices_ns"];
        let made = f(&c["fine_reads"]) * (f(&p["precise_read_ns"]) + f(&p["fine_excess_ns"]))
            + f(&c["coarse_reads"]) * f(&p["coarse_read_ns"])
            + f(&c["floored_reads"]) * f(&p["floor_read_ns"])
            + f(&c["queries"]) * f(&p["query_ns"])
            + (f(&c["updates"]) - f(&c["atime_updates"])) * f(&p["update_ns"])
            + f(&c["atime_updates"]) * f(&p["atime_update_ns"])
            + f(&c["sync_commits"]) * f(&p["sync_commit_ns"]);
        assert!((made - cost).abs() <= 1e-6 * cost, "{made} != {cost}: {r}");
    }
    assert_eq!(row(&v, "ext4")["dir"], "mnt/ext4");
    assert_eq!(row(&v, "tmpfs")["mount_options"][2], "size=24683784k");
    // The prices are the profile's for that filesystem.
    assert!((f(&row(&v, "ext4")["prices_ns"]["update_ns"]) - 1129.757823898792).abs() < 1e-9);
    assert!((f(&row(&v, "tmpfs")["prices_ns"]["update_ns"]) - 159.86731219562313).abs() < 1e-9);
    // ext4's update is dearer than tmpfs's: so is the pass.
    let cost = |fs: &str| f(&row(&v, fs)["multigrain_ns_per_pass"]);
    assert!(cost("ext4") > cost("tmpfs"), "{}", v["by_filesystem"]);
}

#[test]
fn only_the_profiles_kernel_model_carries_the_rows() {
    let all = strace(MAKE, PRICED, &[]);
    for r in all.as_array().unwrap() {
        let linux = r["model"] == "linux@6.18";
        assert_eq!(r.get("by_filesystem").is_some(), linux, "{}", r["model"]);
    }
    // Another model only: no rows, and a note saying how to get them.
    let other = strace(MAKE, PRICED, &["--model", "freebsd"]);
    assert!(other.get("by_filesystem").is_none());
    assert!(
        other["notes"].to_string().contains("add --model linux"),
        "{}",
        other["notes"]
    );
    // --fs puts every path on one filesystem already: no rows, a note.
    let one = strace(MAKE, PRICED, &["--model", "linux", "--fs", "ext4"]);
    assert!(one.get("by_filesystem").is_none());
    assert!(
        one["notes"].to_string().contains("--fs ext4"),
        "{}",
        one["notes"]
    );
}

#[test]
fn a_profile_without_priced_filesystems_gives_no_rows_and_no_error() {
    let v = strace(MAKE, PROFILE, &["--model", "linux"]);
    assert!(v.get("by_filesystem").is_none(), "{v}");
    assert!(v["estimates"].as_array().is_some_and(|e| !e.is_empty()));
    assert!(
        !v["notes"].to_string().contains("per-filesystem"),
        "{}",
        v["notes"]
    );
    let text = run_ok(&[
        "simulate",
        "--strace",
        MAKE,
        "--profile",
        PROFILE,
        "--model",
        "linux",
    ]);
    assert!(!String::from_utf8(text)
        .unwrap()
        .contains("each filesystem the profile priced"));
}

#[test]
fn text_and_markdown_print_the_rows_under_a_heading() {
    let args = [
        "simulate",
        "--strace",
        MAKE,
        "--profile",
        PRICED,
        "--model",
        "linux",
    ];
    let markdown = [&args[..], &["--markdown"]].concat();
    for (args, line) in [
        (&args[..], "ext4 "),
        (&markdown[..], "| ext4 | mnt/ext4 (rw,relatime) |"),
    ] {
        let out = run_ok(args);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("multigrain cost per pass on each filesystem the profile priced"),
            "{text}"
        );
        for fs in ["tmpfs", "xfs"] {
            assert!(
                text.lines().any(|l| l.contains(fs) && l.contains('%')),
                "{fs}: {text}"
            );
        }
        assert!(text.lines().any(|l| l.starts_with(line)), "{line}: {text}");
    }
}

#[test]
fn a_fifo_gets_the_same_rows_as_the_file() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("log");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, std::fs::read(MAKE).unwrap()).unwrap())
    };
    let out = tscope()
        .args([
            "simulate",
            "--strace",
            fifo.to_str().unwrap(),
            "--model",
            "linux",
        ])
        .args(["--profile", PRICED, "--json"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "{out:?}");
    let piped: Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = strace(MAKE, PRICED, &["--model", "linux"]);
    assert_eq!(piped["strace"]["calls"], file["strace"]["calls"]);
    assert_eq!(piped["by_filesystem"], file["by_filesystem"]);
}

#[test]
fn a_kernel_before_multigrain_gives_a_note_and_no_rows() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(PRICED).unwrap();
    let old = write_tmp(
        d.path(),
        "p.json",
        &text.replace("6.18.44-fc-v1272", "6.12.9"),
    );
    let v = strace(MAKE, old.to_str().unwrap(), &["--model", "linux"]);
    assert_eq!(v["model"], "linux@6.12");
    assert!(v.get("by_filesystem").is_none(), "{v}");
    assert!(
        v["notes"].to_string().contains("predates multigrain"),
        "{}",
        v["notes"]
    );
}
