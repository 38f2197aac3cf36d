//! The bad-input matrix (docs/reliability.md), for the cases the per-command suites do not
//! already cover (those live in tests/simulate/mod.rs `bad_*`, tests/run/mod.rs
//! `bad_arguments_are_clear_errors`, tests/compare.rs, tests/fidelity.rs): every case exits 2
//! with one line on stderr naming the file or field, never panics, and leaves no partial
//! output file behind.

use std::path::Path;

use crate::common::{tscope, PROFILE};

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
    let profile = "tests/data/profile-kvm-xeon.json";
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
    let profile = "tests/data/profile-kvm-xeon.json";
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

/// `mknod` copies of devices in a temporary directory (never /dev itself); `None` when this
/// is not root (mknod needs CAP_MKNOD): the caller skips, saying so.
fn node(dir: &Path, name: &str, kind: &str, major: u32, minor: u32) -> Option<String> {
    let p = dir.join(name);
    let ok = std::process::Command::new("mknod")
        .arg(&p)
        .args([kind, &major.to_string(), &minor.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| p.display().to_string())
}

fn kind(p: &str) -> std::fs::FileType {
    std::fs::symlink_metadata(p).unwrap().file_type()
}

/// `simulate pipe1 -o PATH` (0.4 s): the cheapest command with an `-o`.
fn simulate_to(path: &str) -> std::process::Output {
    let profile = "tests/data/profile-kvm-xeon.json";
    tscope()
        .args([
            "simulate",
            "pipe1",
            "--profile",
            profile,
            "--json",
            "-o",
            path,
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap()
}

#[test]
fn outputs_never_replace_devices_fifos_or_links() {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
    let d = tempfile::tempdir().unwrap();
    let (Some(full), Some(null), Some(block)) = (
        node(d.path(), "full", "c", 1, 7),
        node(d.path(), "null", "c", 1, 3),
        node(d.path(), "loop", "b", 7, 0),
    ) else {
        eprintln!("SKIPPED: mknod failed (not root): device-node outputs not checked");
        return;
    };
    // A full device: the write fails (ENOSPC), exit 2, and the node is still a device.
    let out = simulate_to(&full);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(kind(&full).is_char_device());
    // A null device is written in place.
    let out = simulate_to(&null);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(kind(&null).is_char_device());
    // A block device is refused before anything runs.
    fails(&["simulate", "pipe1", "-o", &block], "block device");
    assert!(kind(&block).is_block_device());
    // A FIFO nobody reads: refused, not a hang, still a FIFO.
    let fifo = d.path().join("fifo").display().to_string();
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = simulate_to(&fifo);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading"));
    assert!(kind(&fifo).is_fifo());
    // A regular file keeps its mode and its other names; a link stays a link.
    let file = write(d.path(), "file", "old");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o604)).unwrap();
    assert!(simulate_to(&file).status.success());
    assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o604);
    let other = d.path().join("other-name");
    std::fs::hard_link(&file, &other).unwrap();
    assert!(simulate_to(&file).status.success());
    assert_eq!(std::fs::metadata(&file).unwrap().nlink(), 2);
    let link = d.path().join("link").display().to_string();
    std::os::unix::fs::symlink(&other, &link).unwrap();
    assert!(simulate_to(&link).status.success());
    assert!(kind(&link).is_symlink());
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("schema_version"));
    // A 240-character name (the temporary name used to overflow NAME_MAX).
    let long = d.path().join("n".repeat(240)).display().to_string();
    assert!(simulate_to(&long).status.success());
    assert!(simulate_to(&long).status.success());
    let names = std::fs::read_dir(d.path()).unwrap().count();
    assert_eq!(names, 8, "a temporary file was left behind");
}

#[test]
fn record_never_deletes_or_reads_forever_a_special_file() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let Some(null) = node(d.path(), "null", "c", 1, 3) else {
        eprintln!("SKIPPED: mknod failed (not root): record on device nodes not checked");
        return;
    };
    let full = node(d.path(), "full", "c", 1, 7).unwrap();
    for dev in [&null, &full] {
        let out = tscope()
            .args(["record", "-o", dev, "--", "/nonexistent/cmd"])
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("regular file"));
        assert!(kind(dev).is_char_device(), "{dev} was replaced");
    }
    let dir = d.path().display().to_string();
    tscope()
        .args(["record", "-o", &dir, "--", "true"])
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(2);
    // A log file that was there before strace failed is the user's: kept.
    let mine = write(d.path(), "mine", "");
    let out = tscope()
        .args(["record", "-o", &mine, "--", "/nonexistent/cmd"])
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    if String::from_utf8_lossy(&out.stderr).contains("strace is not installed") {
        eprintln!("SKIPPED: strace not installed");
        return;
    }
    assert!(Path::new(&mine).exists());
}

/// The bundled profile with `edit` applied to its parsed JSON, written to `dir/name`.
fn edited_profile(dir: &Path, name: &str, edit: impl Fn(&mut serde_json::Value)) -> String {
    let text = std::fs::read_to_string("tests/data/profile-kvm-xeon.json").unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v);
    write(dir, name, &v.to_string())
}

#[test]
fn numbers_out_of_range_name_their_field() {
    let d = tempfile::tempdir().unwrap();
    let coarse = |v: &mut serde_json::Value| -> usize {
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .position(|s| s["id"] == "vdso:realtime_coarse")
            .unwrap()
    };
    for (i, point) in [-5.0, 0.0, 1e308].into_iter().enumerate() {
        let p = edited_profile(d.path(), &format!("p{i}.json"), |v| {
            let c = coarse(v);
            v["sources"][c]["cost_ns"] =
                serde_json::json!({"point": point, "lower": point, "upper": point});
        });
        fails(&["simulate", "pipe1", "--profile", &p], "cost_ns.point");
        fails(
            &["compare", "tests/data/compare/host.json", &p],
            "cost_ns.point",
        );
    }
    let inverted = edited_profile(d.path(), "inv.json", |v| {
        v["sources"][0]["cost_ns"] = serde_json::json!({"point": 8.0, "lower": 9.0, "upper": 7.0});
    });
    fails(
        &["simulate", "pipe1", "--profile", &inverted],
        "lower <= point <= upper",
    );
    let minus = edited_profile(d.path(), "minus.json", |v| {
        v["schema_version"] = (-1).into()
    });
    fails(
        &["compare", "tests/data/compare/host.json", &minus],
        "whole number",
    );
    let text = std::fs::read_to_string("tests/data/run-record-vfsmix-ext4.json").unwrap();
    let mut rec: serde_json::Value = serde_json::from_str(&text).unwrap();
    rec["ops_per_sec"] = 1e308.into();
    let rec = write(d.path(), "rec.json", &rec.to_string());
    fails(&["simulate", "--run", &rec], "ops_per_sec");
}

#[test]
fn a_huge_strace_line_is_malformed_not_held() {
    let d = tempfile::tempdir().unwrap();
    let huge = format!(
        "7 00:00:02.000000 write(1, \"{}\", 3000000) = 3000000 <0.000010>\n",
        "a".repeat(3_000_000)
    );
    let log = write(
        d.path(),
        "log",
        &format!(
            "7 00:00:01.000000 openat(AT_FDCWD</var/tmp>, \"x\", O_RDONLY) = 3</var/tmp/x> <0.000010>\n\
             {huge}7 00:00:03.000000 close(3</var/tmp/x>) = 0 <0.000001>\n"
        ),
    );
    let out = tscope()
        .args(["simulate", "--strace", &log, "--model", "linux", "--json"])
        // Costs from the recorded profile: this test is about the parser, not the probe.
        .args(["--profile", PROFILE])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["strace"];
    assert_eq!(s["malformed_lines"], 1, "{s}");
    assert!(s["malformed_examples"][0]
        .as_str()
        .unwrap()
        .starts_with("line 2: "));
    fails(
        &[
            "simulate",
            "--strace",
            &log,
            "--strict",
            "--profile",
            PROFILE,
        ],
        "1 MiB",
    );
}

#[test]
fn a_report_directory_is_replaced_whole_and_never_anything_else() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("workload-stale.svg"), "<svg/>").unwrap();
    crate::common::quick_report(&[], &out);
    assert!(out.join("report.json").exists());
    assert!(
        !out.join("workload-stale.svg").exists(),
        "a stale file of an earlier report survived"
    );
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "a temporary sibling was left: {left:?}");
    // A directory that is not a report, a link to a file: refused before measuring.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(out.join("notes.txt"), &link).unwrap();
    for p in [&out, &link] {
        tscope()
            .args(["report", "--quick", "--out"])
            .arg(p)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(p.display().to_string()));
    }
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
    // The current directory is never renamed away under the user's shell.
    std::fs::remove_file(out.join("notes.txt")).unwrap();
    tscope()
        .current_dir(&out)
        .args(["report", "--quick", "--out", "."])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("current directory"));
}

#[test]
fn an_empty_or_relative_home_never_puts_the_cache_in_the_current_directory() {
    for (home, says) in [
        (Some(""), "HOME is empty"),
        (Some("rel"), "HOME is 'rel', not an absolute path"),
        (None, "HOME is not set"),
    ] {
        let cwd = tempfile::tempdir().unwrap();
        let mut cmd = tscope();
        cmd.current_dir(cwd.path())
            .env_remove("XDG_CACHE_HOME")
            .args(["vm", "guest", "--accel", "tcg", "--no-host"])
            .args(["--guest-bin", "/nonexistent/tscope"]);
        match home {
            Some(h) => cmd.env("HOME", h),
            None => cmd.env_remove("HOME"),
        };
        cmd.assert()
            .code(2)
            .stderr(predicates::str::contains(says))
            .stderr(predicates::str::contains("set XDG_CACHE_HOME"));
        assert!(
            crate::common::empty(cwd.path()),
            "HOME={home:?} put something in the current directory"
        );
    }
}

#[test]
fn a_missing_tmpdir_is_named_not_a_dir_option_nobody_gave() {
    let d = tempfile::tempdir().unwrap();
    let gone = d.path().join("gone");
    let out = tscope()
        .args(["run", "vfsmix", "--duration", "1"])
        .env("TMPDIR", &gone)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("TMPDIR") && stderr.contains(&gone.display().to_string()),
        "{stderr}"
    );
    assert!(!stderr.contains("--dir '"), "blames --dir: {stderr}");
    // A --dir that was given is still named as such.
    tscope()
        .args(["run", "vfsmix", "--duration", "1", "--dir"])
        .arg(&gone)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--dir '"));
}

#[test]
fn a_closed_stdout_is_exit_2_not_silent_success() {
    let bin = tscope().get_program().to_owned();
    let shell = |redirect: &str, args: &[&str]| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec \"$0\" \"$@\" {redirect}"))
            .arg(&bin)
            .args(args)
            .env("XDG_CACHE_HOME", crate::common::cache_home())
            .output()
            .unwrap()
    };
    let sim = ["simulate", "pipe1", "--profile", PROFILE, "--json"];
    for args in [&sim[..], &["probe", "--quick", "--json"]] {
        let out = shell(">&-", args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("standard output is closed"), "{stderr}");
    }
    // Discarding it on purpose is fine.
    assert!(shell(">/dev/null", &sim).status.success());
}
