//! Real traces and proof of fidelity: the strace importer on the bundled real traces and on
//! hand-written snippets (fd tracking through dup, pipe and fork; unfinished/resumed halves;
//! unknown syscalls; malformed lines; `--strict`), `tscope record`, and short runs of the three
//! validations with their output structure asserted (never the error figure, which is a
//! measurement: see docs/validation.md).

use std::path::Path;

use crate::common::{est, json, tscope, PROFILE};
use predicates::str::contains;
use serde_json::Value;

/// Costs given in full, so no probe runs.
const COSTS: [&str; 6] = [
    "--set",
    "precise_read_ns=100",
    "--set",
    "coarse_read_ns=10",
    "--set",
    "tick_ns=1000000",
];

fn strace_json(path: &Path, model: &str, extra: &[&str]) -> Value {
    let p = path.to_str().unwrap();
    let mut args = vec!["simulate", "--strace", p, "--model", model, "--json"];
    args.extend_from_slice(&COSTS);
    args.extend_from_slice(extra);
    json(&args)
}

fn write_trace(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("t.strace");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn bundled_git_status_trace_imports_cleanly() {
    let v = strace_json(
        Path::new("scenarios/traces/git-status.strace"),
        "linux-multigrain",
        &["--strict"],
    );
    let s = &v["strace"];
    assert!(s["calls"].as_u64().unwrap() > 100, "{s}");
    assert_eq!(s["malformed_lines"], 0);
    assert!(s["ops_by_syscall"]["stat"].as_u64().unwrap() > 5, "{s}");
    assert!(s["ops_by_syscall"]["open"].as_u64().unwrap() > 5, "{s}");
    assert_eq!(v["scenario"], "strace:git-status.strace");
    assert_eq!(v["iterations"], s["calls"]);
    for e in v["estimates"].as_array().unwrap() {
        let share = e["accuracy"]["equal_successive_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&share));
        assert!(e["ns_per_op"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn bundled_make_trace_follows_processes_pipes_and_new_files() {
    let v = strace_json(
        Path::new("scenarios/traces/make-cc.strace"),
        "freebsd",
        &["--strict", "--fs", "tmpfs"],
    );
    let s = &v["strace"];
    assert!(
        s["tasks"].as_u64().unwrap() >= 5,
        "make, sh, cc, cc1, as, ld: {s}"
    );
    assert!(s["inodes_by_fs"]["pipefs"].as_u64().unwrap() >= 1, "{s}");
    assert!(s["ops_by_syscall"]["create"].as_u64().unwrap() >= 1, "{s}");
    assert!(s["ops_by_syscall"]["write"].as_u64().unwrap() >= 1, "{s}");
    assert!(s["fs_source"].as_str().unwrap().starts_with("--fs tmpfs"));
    // Interleaved processes: every <unfinished ...> half found its <... resumed> half.
    assert_eq!(
        (
            s["unfinished_at_end"].as_u64(),
            s["orphan_resumes"].as_u64()
        ),
        (Some(0), Some(0)),
        "{s}"
    );
    assert_eq!(s["unknown_syscalls"], serde_json::json!({}), "{s}");
    assert_eq!(est(&v, "freebsd:2")["stock"], true);
}

#[test]
fn fds_are_followed_through_pipe_dup_and_fork() {
    let dir = tempfile::tempdir().unwrap();
    // Two writes into one pipe: through a dup'd fd in the parent and the inherited fd in a
    // forked child. One inode: one successive pair, no cross-inode pair.
    let t = write_trace(
        dir.path(),
        r#"100 00:00:01.000000 pipe2([3<pipe:[9]>, 4<pipe:[9]>], O_CLOEXEC) = 0 <0.000005>
100 00:00:01.000100 dup(4<pipe:[9]>) = 5<pipe:[9]> <0.000002>
100 00:00:01.000200 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD <unfinished ...>
101 00:00:01.000300 write(4, "a", 1) = 1 <0.000003>
100 00:00:01.000400 <... clone resumed>, child_tidptr=0x7f) = 101 <0.000100>
101 00:00:01.000500 +++ exited with 0 +++
100 00:00:01.002600 write(5, "b", 1) = 1 <0.000003>
100 00:00:01.002700 read(3, "ab", 2) = 2 <0.000003>
"#,
    );
    let v = strace_json(&t, "freebsd", &["--strict"]);
    let s = &v["strace"];
    assert_eq!(s["ops_by_syscall"]["write"], 2, "{s}");
    assert_eq!(s["ops_by_syscall"]["read"], 1, "{s}");
    assert_eq!(s["inodes_by_fs"]["pipefs"], 1, "{s}");
    assert_eq!(
        (s["tasks"].as_u64(), s["exits"].as_u64()),
        (Some(2), Some(1))
    );
    let a = &est(&v, "freebsd:3")["accuracy"];
    assert_eq!(a["successive_pairs"], 1, "{a}");
    assert_eq!(a["cross_inode_pairs"], 0, "{a}");
}

#[test]
fn unknown_syscalls_are_listed_and_malformed_lines_counted() {
    let dir = tempfile::tempdir().unwrap();
    let t = write_trace(
        dir.path(),
        "\
7 00:00:02.000000 openat(AT_FDCWD</var/tmp>, \"x\", O_RDONLY <unfinished ...>
8 00:00:02.000001 frobnicate(1) = 0
7 00:00:02.000002 <... openat resumed>) = 3</var/tmp/x> <0.000010>
this is not strace output
8 00:00:02.000003 frobnicate(2) = 0
8 00:00:02.000004 fallocate(3</var/tmp/x>, 0, 0, 4096) = 0
7 00:00:02.000005 read(3, \"\", 1
",
    );
    let v = strace_json(&t, "linux", &[]);
    let s = &v["strace"];
    assert_eq!(s["unknown_syscalls"]["frobnicate"], 2, "{s}");
    assert_eq!(s["unknown_syscalls"]["fallocate"], 1, "{s}");
    assert_eq!(s["ops_by_syscall"]["open"], 1, "the resumed openat: {s}");
    assert_eq!(s["malformed_lines"], 2, "{s}");
    assert!(s["malformed_examples"][0]
        .as_str()
        .unwrap()
        .starts_with("line 4: "));
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("frobnicate x2")));
    tscope()
        .args(["simulate", "--strace", t.to_str().unwrap(), "--strict"])
        .args(COSTS)
        .assert()
        .code(2)
        .stderr(contains("line 4: "))
        .stderr(contains("--strict"));
}

#[test]
fn strace_input_errors_are_one_line() {
    tscope()
        .args(["simulate", "--strace", "/nonexistent/x.strace"])
        .args(COSTS)
        .assert()
        .code(2)
        .stderr(contains("cannot read strace file '/nonexistent/x.strace'"));
    let dir = tempfile::tempdir().unwrap();
    let t = write_trace(dir.path(), "nothing\n");
    tscope()
        .args(["simulate", "--strace", t.to_str().unwrap()])
        .args(COSTS)
        .assert()
        .code(2)
        .stderr(contains("no syscalls in strace file"));
    tscope()
        .args(["simulate", "pipe1", "--strict"])
        .assert()
        .code(2)
        .stderr(contains("--strace"));
    tscope()
        .args(["simulate", "--strace", t.to_str().unwrap(), "--fs", "zfs"])
        .assert()
        .code(2)
        .stderr(contains("--fs 'zfs'"));
    tscope()
        .args(["simulate", "untar", "--validate"])
        .assert()
        .code(2)
        .stderr(contains("validations exist for pipe1 and vfsmix"));
}

#[test]
fn record_traces_a_command_and_simulate_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sh.strace");
    tscope()
        .current_dir(dir.path())
        .args(["record", "-o", out.to_str().unwrap(), "--"])
        .args(["sh", "-c", "echo hi > f; cat f"])
        .assert()
        .success()
        .stdout("hi\n")
        .stderr(contains("tscope simulate --strace"));
    let v = strace_json(&out, "linux", &["--strict"]);
    let s = &v["strace"];
    assert!(s["tasks"].as_u64().unwrap() >= 2, "sh forks cat: {s}");
    assert!(s["ops_by_syscall"]["write"].as_u64().unwrap() >= 1, "{s}");
    let opened = ["open", "open_trunc", "create"]
        .iter()
        .filter_map(|k| s["ops_by_syscall"][k].as_u64())
        .sum::<u64>();
    assert!(opened >= 2, "{s}");
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["f", "sh.strace"]);
}

#[test]
fn record_says_how_to_install_strace() {
    let dir = tempfile::tempdir().unwrap();
    tscope()
        .env("PATH", dir.path())
        .args([
            "record",
            "-o",
            dir.path().join("x").to_str().unwrap(),
            "--",
            "true",
        ])
        .assert()
        .code(2)
        .stderr(contains("apt-get install strace"));
    // A relative -o lands in a scratch directory, never the repository.
    let scratch = tempfile::tempdir().unwrap();
    tscope()
        .current_dir(scratch.path())
        .args(["record", "-o", "x"])
        .assert()
        .code(2);
    assert!(!scratch.path().join("x").exists());
}

#[test]
fn accuracy_validation_on_tmpfs() {
    let _cpu = crate::common::cpu_lock();
    // The measured share of equal successive mtimes after a stat is 0 only with multigrain
    // timestamps (Linux ≥ 6.13); tmpfs is where the test measures it.
    if crate::skip::without("tmpfs") || crate::skip::without("multigrain") {
        return;
    }
    let v = json(&[
        "simulate",
        "accuracy",
        "--validate",
        "--validate-dir",
        "/dev/shm",
        "--validate-secs",
        "0.4",
        "--profile",
        PROFILE,
        "--json",
    ]);
    assert_eq!(v["validation"], "accuracy");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    for r in rows {
        assert_eq!(r["metric"], "equal_successive_share");
        for k in ["predicted", "measured"] {
            let x = r[k].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&x), "{k} {x} in {r}");
        }
    }
    let ws = rows
        .iter()
        .find(|r| {
            r["case"]
                .as_str()
                .unwrap()
                .starts_with("write-stat on tmpfs")
        })
        .expect("write-stat row");
    // Linux ≥ 6.13 multigrain tmpfs: a stat makes the next change fine-grained.
    assert_eq!(ws["measured"], 0.0, "{ws}");
    assert_eq!(ws["predicted"], 0.0, "{ws}");
}

#[test]
fn emulation_validation_runs_each_injection() {
    let _cpu = crate::common::cpu_lock();
    let v = json(&[
        "simulate",
        "pipe1",
        "--validate",
        "--model",
        // The FreeBSD whose pipes still call vfs_timestamp(): each setting injects other reads.
        "freebsd@12.4",
        "--validate-secs",
        "0.3",
        "--validate-budget",
        "8",
        "--json",
    ]);
    assert_eq!(v["validation"], "emulation");
    assert_eq!(v["scenario"], "pipe1");
    // At least two rounds (an interval needs them); the rule says why it stopped.
    assert!(v["rounds"].as_u64().unwrap() >= 2, "{v}");
    let stopped = v["stopped"].as_str().unwrap();
    assert!(["all_decided", "budget"].contains(&stopped), "{v}");
    let level = v["look_confidence"].as_f64().unwrap();
    assert!((0.95..1.0).contains(&level), "{v}");
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["case"].as_str().unwrap()).collect();
    assert_eq!(names, ["freebsd:2", "freebsd:0", "freebsd:1", "freebsd:3"]);
    for r in rows {
        assert!(r["predicted"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["measured"].as_f64().unwrap() > 0.0, "{r}");
        // Every row has its error's point and noise; the error itself only when the noise is
        // within the goal (0.3 s runs on a busy machine are often too noisy: undecided).
        let point = r["point_error_pct"].as_f64().unwrap();
        let noise = r["noise_pct"].as_f64().unwrap();
        assert!(point.is_finite() && noise >= 0.0, "{r}");
        if r["undecided"].as_bool().unwrap() {
            assert!(noise > 5.0 && r["error_pct"].is_null(), "{r}");
            assert_eq!(r["within_goal"], false, "{r}");
        } else {
            assert!(noise <= 5.0, "{r}");
            assert_eq!(r["error_pct"].as_f64(), Some(point), "{r}");
            assert_eq!(r["within_goal"], point.abs() <= 5.0, "{r}");
        }
    }
    if stopped == "all_decided" {
        assert!(rows.iter().all(|r| r["undecided"] == false), "{v}");
    }
}

#[test]
fn seed_validation_reproduces_the_vfsmix_pair_and_shows_the_pipe1_gap() {
    let _cpu = crate::common::cpu_lock();
    let v = json(&[
        "simulate",
        "seed",
        "--validate",
        "--profile",
        PROFILE,
        "--json",
    ]);
    assert_eq!(v["validation"], "seed");
    let rows = v["rows"].as_array().unwrap();
    let row = |case: &str| {
        rows.iter()
            .find(|r| r["case"] == case)
            .unwrap_or_else(|| panic!("no {case} in {v}"))
    };
    // Deterministic arithmetic, not a measurement: the forward replay agrees with the solve.
    let vf = row("vfsmix, own back-solve");
    assert!(
        (vf["predicted"].as_f64().unwrap() - 5.29).abs() < 0.05,
        "{vf}"
    );
    assert_eq!(vf["within_goal"], true);
    let p1 = row("pipe1, NetBSD pipes, vfsmix's clock");
    assert!(
        (p1["predicted"].as_f64().unwrap() - 1.0).abs() < 1e-6,
        "{p1}"
    );
    assert_eq!(p1["within_goal"], false);
    let p2 = row("pipe1, vfs_timestamp pipes, own back-solve");
    assert!(
        (p2["predicted"].as_f64().unwrap() - 1.304).abs() < 0.01,
        "{p2}"
    );
}
