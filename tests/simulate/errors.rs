//! `tscope simulate` on bad input: every malformed scenario, profile or argument is one clear
//! error line and exit 2, never a panic.

use crate::common::{tscope, write_tmp, PROFILE};
use predicates::str::contains;

fn fails_with(args: &[&str], needle: &str) {
    tscope()
        .args(args)
        .assert()
        .code(2)
        .stderr(contains(needle));
}

#[test]
fn bad_scenarios_are_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ok = r#"{"schema_version":1,"name":"t","description":"d","base_ns_per_iteration":1,
    "iteration":[{"syscall":"write","inode":"p","fs":"pipefs"}]}"#;
    let cases = [
        (
            "unknown.json",
            ok.replace("\"name\"", "\"nmae\""),
            "unknown field `nmae`",
        ),
        (
            "newer.json",
            ok.replace(":1,\"name", ":2,\"name"),
            "schema_version 2",
        ),
        (
            "older.json",
            ok.replace(":1,\"name", ":0,\"name"),
            "schema_version 0",
        ),
        (
            "malformed.json",
            ok.replace("\"d\",", "\"d\"\n,,"),
            "line 2 column",
        ),
        (
            "syscall.json",
            ok.replace("\"write\"", "\"frobnicate\""),
            "unknown syscall 'frobnicate'",
        ),
        ("nofs.json", ok.replace("pipefs", "zfs"), "unknown fs 'zfs'"),
    ];
    for (name, text, needle) in cases {
        let p = write_tmp(d, name, &text);
        fails_with(
            &["simulate", p.to_str().unwrap(), "--profile", PROFILE],
            needle,
        );
    }
    fails_with(
        &["simulate", "no-such-scenario", "--profile", PROFILE],
        "bundled: fifo1, netbsd-seed",
    );
    fails_with(
        &[
            "simulate",
            "--run",
            "/no/such/run.json",
            "--profile",
            PROFILE,
        ],
        "cannot read run record '/no/such/run.json'",
    );
    fails_with(
        &["simulate", "pipe1", "--profile", "/no/such/profile.json"],
        "cannot read profile",
    );
}

#[test]
fn bad_arguments_are_one_clear_error() {
    fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut v = vec!["simulate", "pipe1", "--profile", PROFILE];
        v.extend_from_slice(extra);
        v
    }
    fails_with(&with(&["--set", "precise_read_ns=NaN"]), "finite number");
    fails_with(&with(&["--set", "precise_read_ns=-5"]), "finite number");
    fails_with(&with(&["--set", "precise_read_ns=1e12"]), "finite number");
    fails_with(&with(&["--set", "warp_ns=5"]), "unknown setting 'warp_ns'");
    fails_with(&with(&["--set", "precise_read_ns"]), "expected KEY=VALUE");
    // One value per setting: twice, or both set and swept, is refused naming the key.
    fails_with(
        &with(&["--set", "tick_ns=1e6", "--set", "tick_ns=2e6"]),
        "--set tick_ns is given more than once",
    );
    fails_with(
        &with(&["--set", "base_ns=5", "--sweep", "base_ns=10..100"]),
        "--set base_ns and --sweep base_ns",
    );
    fails_with(
        &with(&["--sweep", "precise_read_ns=1000..10"]),
        "0 < LO < HI",
    );
    fails_with(&with(&["--sweep", "precise_read_ns=10"]), "LO..HI");
    fails_with(
        &with(&["--model", "solaris"]),
        "--model 'solaris': expected one of",
    );
    fails_with(&with(&["--model", "linux@x"]), "--model 'linux@x'");
    fails_with(
        &["simulate", "--explain", "solaris"],
        "--explain 'solaris': expected one of",
    );
    fails_with(
        &with(&["--implied", "stock=1,patched=2,policy=freebsd:9"]),
        "unknown policy 'freebsd:9'",
    );
    fails_with(&with(&["--implied", "stock=1"]), "needs both");
    fails_with(&with(&["--counter", "hpet"]), "invalid value 'hpet'");
}
