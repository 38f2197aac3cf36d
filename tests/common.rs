//! Helpers shared by the integration tests.

use assert_cmd::Command;

/// A recorded probe profile (a 2-vCPU KVM guest on an Intel Xeon, recorded by
/// `scripts/record-fixture-profile`): costs for tests that are about
/// the replay, the parser or the output, not about this machine's probe (a quick probe on a
/// loaded machine can derive a precise read at or below 0, which `simulate` rightly refuses).
pub const PROFILE: &str = "tests/data/profile-kvm-xeon.json";

/// A simulation that needs no probe: pipe1 under FreeBSD, priced by the recorded profile.
pub const FREEBSD_PIPE1: [&str; 6] = [
    "simulate",
    "pipe1",
    "--model",
    "freebsd",
    "--profile",
    PROFILE,
];

/// The `tscope` binary built by cargo for these tests, with the tests' own cache directory.
pub fn tscope() -> Command {
    let mut c = Command::cargo_bin("tscope").expect("tscope binary");
    c.env("XDG_CACHE_HOME", cache_home());
    c
}

/// `XDG_CACHE_HOME` for every tscope a test runs (the guest kernel lands in `tscope/` below
/// it), never the real `$HOME/.cache`: `TSCOPE_TEST_CACHE`, which `./scripts/test` makes once
/// per run (so a kernel downloads once per run) and removes at the end; else, for a bare
/// `cargo test`, `xdg-cache` in cargo's scratch directory for integration tests.
pub fn cache_home() -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = match std::env::var_os("TSCOPE_TEST_CACHE").filter(|v| !v.is_empty()) {
            Some(d) => std::path::PathBuf::from(d),
            None => std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-cache"),
        };
        std::fs::create_dir_all(&dir).expect("creating the tests' cache directory");
        dir
    })
    .clone()
}

/// Runs `tscope ARGS` expecting success and parses stdout as JSON.
/// The row of source `id` in a `compare --json` document.
pub fn source_row(v: &serde_json::Value, id: &str) -> serde_json::Value {
    v["sources"]
        .as_array()
        .expect("a compare document has sources")
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no source {id}"))
        .clone()
}

/// The reads over the TSC through the vDSO, and the std clocks over them: one path, which a
/// change of clocksource moves together.
pub const TSC_READS: [&str; 8] = [
    "vdso:realtime",
    "vdso:monotonic",
    "vdso:monotonic_raw",
    "vdso:boottime",
    "vdso:tai",
    "vdso:gettimeofday",
    "std:instant",
    "std:systemtime",
];

/// The path groups of a `compare --json` document that hold source `member`.
pub fn paths_with<'a>(c: &'a serde_json::Value, member: &str) -> Vec<&'a serde_json::Value> {
    c["paths"]
        .as_array()
        .expect("a compare document has paths")
        .iter()
        .filter(|p| {
            p["members"]
                .as_array()
                .is_some_and(|m| m.iter().any(|x| x == member))
        })
        .collect()
}

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

/// The suite's CPU lock. Tests that boot a TCG guest (a CPU hog for seconds to minutes) and
/// tests whose assertions need every pinned task to make progress (the workload runs, the
/// report's measured workloads, the validations, the micro-VM's timings) hold it for their
/// whole body, so the suite never starves itself: with two TCG guests busy on a 2-vCPU machine,
/// a pinned pipe1 task completed 80 ops/s where its twin did 450 000. It also keeps apart the
/// runs that write files: on a multigrain kernel (Linux ≥ 6.13) every fine-grained timestamp a
/// write-stat loop takes moves the global floor, and with it the coarse mtimes another test
/// counts as equal. Not reentrant: take it once per test, at the top.
pub fn cpu_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that panicked while holding it poisoned nothing the lock protects.
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `tscope run getppid` for 0.2 s in 50 ms intervals, one task: the shortest real run whose
/// output has every part (samples, per-task figures).
pub const SHORT_RUN: [&str; 8] = [
    "run",
    "getppid",
    "--tasks",
    "1",
    "--duration",
    "0.2",
    "--interval-ms",
    "50",
];

/// Runs `tscope ARGS`, expecting success; its stdout.
pub fn run_ok(args: &[&str]) -> Vec<u8> {
    let out = tscope().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_tmp(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("writing a test file");
    p
}

/// `tscope [GLOBAL…] report --quick --no-workloads --sync-ms 20 --out OUT`: a short report
/// without workload runs, into `out`; asserts it succeeded.
pub fn quick_report(global: &[&str], out: &std::path::Path) {
    let _cpu = cpu_lock();
    tscope()
        .args(global)
        .args([
            "report",
            "--quick",
            "--no-workloads",
            "--sync-ms",
            "20",
            "--out",
        ])
        .arg(out)
        .assert()
        .success();
}
