//! `tscope run`'s refusals: every bad argument is one clear line and exit 2, and a refused run
//! writes nothing.

use crate::common::{empty, tscope};
use predicates::str::contains;

#[test]
fn bad_arguments_are_clear_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["pipe1", "--tasks", "0"],
            "--tasks must be between 1 and 1024, got 0",
        ),
        (
            &["pipe1", "--tasks", "100000"],
            "--tasks must be between 1 and 1024",
        ),
        (&["pipe1", "--duration", "0"], "--duration must be"),
        (&["pipe1", "--duration", "nan"], "--duration must be"),
        (&["pipe1", "--duration", "1e12"], "--duration must be"),
        (
            &["pipe1", "--interval-ms", "5"],
            "--interval-ms must be from 10 to 60000",
        ),
        (
            &["pipe1", "--threads", "2"],
            "--threads applies to mem only",
        ),
        (
            &["pipe1", "--size", "1g"],
            "--size applies to mem and pagezero only",
        ),
        (&["mem", "--record", "x.json"], "--record applies to"),
        (&["mem", "--size", "lots"], "cannot read 'lots' as a size"),
        (&["mem", "--size", "1000t"], "more than the"),
        (
            &["mem", "--threads", "0"],
            "--threads must be between 1 and 1024",
        ),
        (
            &["mem", "--size", "4k", "--threads", "4"],
            "--size must be at least",
        ),
        (
            &["vfsmix", "--dir", "/nonexistent-tscope"],
            "--dir '/nonexistent-tscope' is not an existing directory",
        ),
        (
            &["getppid", "--placement", "same"],
            "--placement applies to pingpong only",
        ),
        (
            &["pingpong", "--no-pin", "--placement", "same"],
            "--placement applies to pinned runs only",
        ),
        (&["bogus"], "invalid value 'bogus'"),
        (&["pipe1", "--tasks", "x"], "invalid value 'x'"),
        (&["pipe1", "--json", "--markdown"], "cannot be used with"),
    ];
    // Relative paths (`--record x.json`) land in a scratch directory, never the repository.
    let scratch = tempfile::tempdir().unwrap();
    for (args, msg) in cases {
        tscope()
            .current_dir(scratch.path())
            .arg("run")
            .args(*args)
            .assert()
            .code(2)
            .stderr(contains(*msg));
    }
    assert!(empty(scratch.path()), "a refused run wrote a file");
}
