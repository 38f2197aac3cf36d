//! Helpers shared by the integration tests.

use assert_cmd::Command;

/// The `tscope` binary built by cargo for these tests.
pub fn tscope() -> Command {
    Command::cargo_bin("tscope").expect("tscope binary")
}

/// Runs `tscope ARGS` expecting success and parses stdout as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = tscope().args(args).output().expect("run tscope");
    assert!(
        out.status.success(),
        "tscope {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// The estimate for `policy` in a `simulate --json` model report.
pub fn est<'a>(v: &'a serde_json::Value, policy: &str) -> &'a serde_json::Value {
    v["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["policy"] == policy)
        .unwrap_or_else(|| panic!("no {policy} in {v}"))
}

/// Whether `dir` has no entries.
pub fn empty(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_tmp(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("writing a test file");
    p
}
