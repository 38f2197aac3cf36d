//! A hostile user's inputs, second round (docs/reliability.md, "A hostile user, as root"):
//! every input a command reads is a regular file under a stated size, refused before it is
//! read otherwise; an strace log may be a FIFO, streamed, and a command waiting on one stops at
//! once on SIGINT or SIGTERM with exit 130. Device nodes are `mknod` copies in a temporary
//! directory, never `/dev` itself (skipped, saying so, when not root).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{tscope, PROFILE};

/// A FIFO at `dir/name`.
fn fifo(dir: &Path, name: &str) -> String {
    let p = dir.join(name);
    assert!(Command::new("mkfifo").arg(&p).status().unwrap().success());
    p.display().to_string()
}

/// A copy of `/dev/zero` at `dir/zero` (never /dev itself); `None` when mknod is not allowed.
fn zero(dir: &Path) -> Option<String> {
    let p = dir.join("zero");
    let ok = Command::new("mknod")
        .arg(&p)
        .args(["c", "1", "5"])
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| p.display().to_string())
}

/// Every command line that reads `input` as its one JSON input.
fn readers(input: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&["show", input]),
        v(&["compare", PROFILE, input]),
        v(&["simulate", "pipe1", "--profile", input]),
        v(&["simulate", input, "--profile", PROFILE]),
        v(&["simulate", "--run", input, "--profile", PROFILE]),
    ]
}

/// Runs `tscope args` (at most 60 s), expecting exit 2 with `needle` on stderr and no panic.
fn refused(args: &[String], needle: &str) {
    let out = tscope()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
}

#[test]
fn an_input_that_is_not_a_regular_file_is_refused_before_it_is_read() {
    let d = tempfile::tempdir().unwrap();
    // Nothing writes this FIFO: reading it would wait for ever.
    let mut cases = vec![(fifo(d.path(), "fifo"), "is a FIFO, not a regular file")];
    cases.push((d.path().display().to_string(), "is a directory"));
    match zero(d.path()) {
        // Reading it would fill memory until the OOM killer came.
        Some(z) => cases.push((z, "is a character device, not a regular file")),
        None => eprintln!("SKIPPED: mknod failed (not root): a /dev/zero copy not checked"),
    }
    for (input, says) in &cases {
        for args in readers(input) {
            refused(&args, says);
        }
    }
}

#[test]
fn an_input_over_the_limit_is_refused_before_it_is_read() {
    let d = tempfile::tempdir().unwrap();
    let big = d.path().join("big.json");
    // Sparse: 257 MiB long, no disk used, refused on its length alone.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(257 << 20)
        .unwrap();
    let big = big.display().to_string();
    for args in readers(&big) {
        refused(&args, "is 257 MiB, over the limit of 256 MiB");
    }
}

#[test]
fn an_strace_log_that_is_a_device_is_refused_and_a_fifo_is_streamed() {
    let d = tempfile::tempdir().unwrap();
    if let Some(z) = zero(d.path()) {
        refused(
            &["simulate", "--strace", &z, "--profile", PROFILE].map(String::from),
            "is a character device",
        );
    } else {
        eprintln!("SKIPPED: mknod failed (not root): a /dev/zero copy not checked");
    }
    refused(
        &["simulate", "--strace", "/", "--profile", PROFILE].map(String::from),
        "is a directory",
    );
    // `simulate --strace <(zcat log.gz)` reads a pipe: a FIFO is a log like any other.
    let f = fifo(d.path(), "log");
    let writer = {
        let f = f.clone();
        std::thread::spawn(move || {
            std::fs::write(
                f,
                "7 00:00:01.000000 openat(AT_FDCWD</var/tmp>, \"x\", O_RDONLY) = 3</var/tmp/x> \
                 <0.000010>\n7 00:00:01.000100 close(3</var/tmp/x>) = 0 <0.000001>\n",
            )
            .unwrap()
        })
    };
    let out = tscope()
        .args(["simulate", "--strace", &f, "--model", "linux", "--json"])
        .args(["--profile", PROFILE])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["strace"]["calls"], 2, "{v}");
}

/// `tscope args` started, given time to block, sent `sig`: it must exit 130, having printed
/// nothing on stdout.
fn stops_on(args: &[&str], sig: &str) {
    let bin = tscope().get_program().to_owned();
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "{args:?} ended before the signal"
    );
    assert!(Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    // Bounded wait: a child that ignored the signal is killed and the test fails.
    let mut waited = 0;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if waited >= 300 {
            child.kill().unwrap();
            panic!("{args:?} ignored {sig} for 30 s");
        }
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "{args:?} {sig}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "{args:?} {sig}: printed on stdout");
}

#[test]
fn a_command_waiting_on_a_fifo_stops_on_sigint_and_sigterm_with_exit_130() {
    let d = tempfile::tempdir().unwrap();
    let f = fifo(d.path(), "log");
    // Nothing ever writes: `simulate --strace` waits in open(2) for a writer.
    for sig in ["-INT", "-TERM"] {
        stops_on(
            &["simulate", "--strace", &f, "--profile", PROFILE, "--json"],
            sig,
        );
    }
    // A writer that opened the FIFO and never writes: it waits in read(2).
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&f)
        .unwrap();
    for sig in ["-INT", "-TERM"] {
        stops_on(
            &["simulate", "--strace", &f, "--profile", PROFILE, "--json"],
            sig,
        );
    }
    drop(held);
    // Nothing was left in the directory but the FIFO.
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn a_guest_binary_that_is_not_a_regular_file_is_refused_before_it_is_read() {
    // A FIFO nothing writes and a copy of /dev/zero (made here, never /dev itself): either
    // would block or fill memory if it were read.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mut specials = vec![(fifo, "is a FIFO")];
    let zero = dir.path().join("zero");
    let made = std::process::Command::new("mknod")
        .arg(&zero)
        .args(["c", "1", "5"])
        .status();
    if made.is_ok_and(|s| s.success()) {
        specials.push((zero, "is a character device"));
    }
    for (path, says) in specials {
        for room in ["guest", "count"] {
            tscope()
                .env("XDG_CACHE_HOME", crate::common::cache_home())
                .args(["vm", room, "--accel", "tcg"])
                .arg("--guest-bin")
                .arg(&path)
                .timeout(std::time::Duration::from_secs(60))
                .assert()
                .failure()
                .stderr(predicates::str::contains(says))
                .stderr(predicates::str::contains("not a regular file"));
        }
    }
}

#[test]
fn a_document_of_the_wrong_kind_is_named_as_what_it_is() {
    let d = tempfile::tempdir().unwrap();
    let p = "tests/data/profile-kvm-amd.json";
    let db = d.path().join("f.db");
    let db = db.to_str().unwrap();
    let write = |name: &str, args: &[&str]| {
        let out = crate::common::tscope().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let path = d.path().join(name);
        std::fs::write(&path, out.stdout).unwrap();
        path.to_str().unwrap().to_string()
    };
    crate::common::tscope()
        .args(["fleet", "--db", db, "add", p])
        .assert()
        .success();
    let fleet_report = write("fr.json", &["fleet", "--db", db, "report", "--json"]);
    let fleet_rows = write("fe.json", &["fleet", "--db", db, "export", "--json"]);
    let sim = write(
        "sim.json",
        &["simulate", "write-stat", "--profile", p, "--json"],
    );
    let report = "docs/example-report/report.json";
    for (args, says) in [
        (vec!["compare", p, &fleet_report], "is a fleet report"),
        (vec!["compare", p, &sim], "is a simulation"),
        (vec!["show", &fleet_report], "is a fleet report"),
        (vec!["show", &fleet_rows], "is fleet rows"),
        (vec!["simulate", "--run", p], "is a probe profile"),
        (vec!["simulate", "--run", &sim], "is a simulation"),
        (
            vec!["simulate", "write-stat", "--profile", report],
            "is a report",
        ),
    ] {
        let out = crate::common::tscope().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        for misleading in [
            "upgrade tscope",
            "missing field",
            "trailing characters",
            "invalid type",
        ] {
            assert!(!err.contains(misleading), "{args:?}: {err}");
        }
    }
}

#[test]
fn a_dangling_or_looping_link_is_named_as_such() {
    let d = tempfile::tempdir().unwrap();
    let dangling = d.path().join("dangling.json");
    std::os::unix::fs::symlink(d.path().join("gone.json"), &dangling).unwrap();
    let (a, b) = (d.path().join("a.json"), d.path().join("b.json"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    for (path, says) in [
        (&dangling, "which does not exist"),
        (&a, "a symbolic link that loops"),
    ] {
        tscope()
            .arg("show")
            .arg(path)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
        tscope()
            .args(["fleet", "--db"])
            .arg(d.path().join("f.db"))
            .arg("add")
            .arg(path)
            .assert()
            .code(1)
            .stderr(predicates::str::contains(says));
    }
}
