//! Interruption: SIGINT during `run mem` and `vm guest` stops promptly, marks what was printed
//! partial, and leaves no child process (qemu) behind. SIGTERM during `run vfsmix` also removes
//! its scratch directory.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{empty, tscope};

/// Children of `pid` (from /proc/*/stat), with their command names.
fn children(pid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_string();
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if rest.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            if let Ok(child) = stat[..open].trim().parse() {
                out.push((child, comm));
            }
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

fn sigint(pid: u32) {
    assert!(Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success());
}

#[test]
fn sigint_stops_mem_promptly_and_marks_it_partial() {
    let _cpu = crate::common::cpu_lock();
    let bin = tscope().get_program().to_owned();
    let child = Command::new(bin)
        .args([
            "run",
            "mem",
            "--op",
            "wr",
            "--size",
            "4g",
            "--block",
            "1k",
            "--threads",
            "1",
        ])
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    sigint(child.id());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["partial"], true);
}

#[test]
fn sigint_during_a_guest_leaves_no_qemu_behind() {
    let _cpu = crate::common::cpu_lock();
    if crate::skip::without("qemu") {
        return;
    }
    let bin = tscope().get_program().to_owned();
    let mut child = Command::new(bin)
        .args([
            "vm",
            "guest",
            "--accel",
            "tcg",
            "--clocksource",
            "tsc",
            "--timeout",
            "120",
        ])
        .args(["--no-host", "--json"])
        .env("XDG_CACHE_HOME", crate::common::cache_home())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for qemu to start (the first run on a fresh machine fetches the kernel first); a
    // failed wait kills tscope (and so its qemu) rather than leaving it running.
    let start = Instant::now();
    let qemu_pid = loop {
        let kids = children(child.id());
        if let Some((pid, _)) = kids.iter().find(|(_, c)| c.starts_with("qemu")) {
            break *pid;
        }
        let exited = child.try_wait().unwrap().is_some();
        if exited || start.elapsed() > Duration::from_secs(240) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{}: {}",
                if exited {
                    "tscope exited before qemu started"
                } else {
                    "qemu never started"
                },
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    sigint(child.id());
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "an interrupted guest run is not a success"
    );
    // qemu dies with tscope (killed, then reaped, or PR_SET_PDEATHSIG).
    let gone = Instant::now();
    while alive(qemu_pid) && gone.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(qemu_pid), "qemu {qemu_pid} left running");
}

#[test]
fn sigterm_stops_cleans_up_and_prints_a_partial_result() {
    let _cpu = crate::common::cpu_lock();
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("tscope");
    let child = std::process::Command::new(bin)
        .args(["run", "vfsmix", "--tasks", "2", "--duration", "60"])
        .args(["--interval-ms", "100", "--warmup", "0.1", "--json", "--dir"])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the workers are at it (the scratch dir exists), then a little more.
    let start = Instant::now();
    while empty(dir.path()) && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(400));
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["partial"], true);
    assert_eq!(v["runs"][0]["partial"], true);
    assert!(empty(dir.path()), "scratch dir left behind");
}

/// Sends `sig` (`-TERM`, `-INT`) to `pid`.
fn signal(sig: &str, pid: u32) {
    assert!(Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success());
}

/// Every process below `pid`, through /proc's parent links.
fn descendants(pid: u32) -> Vec<(u32, String)> {
    let mut out = children(pid);
    let mut i = 0;
    while i < out.len() {
        let below = children(out[i].0);
        out.extend(below);
        i += 1;
    }
    out
}

/// Waits for `child` at most `secs`, killing it (and failing) past that.
fn wait_at_most(mut child: std::process::Child, secs: u64) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("tscope did not stop within {secs} s of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn sigterm_during_record_kills_strace_and_the_traced_command() {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIPPED: strace not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("log");
    let bin = tscope().get_program().to_owned();
    let child = Command::new(bin)
        .arg("record")
        .arg("-o")
        .arg(&log)
        .args(["--", "sh", "-c", "sleep 300; echo never"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let below = loop {
        let below = descendants(child.id());
        if below.iter().any(|(_, c)| c == "sleep") {
            break below;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "sleep never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    signal("-TERM", child.id());
    let out = wait_at_most(child, 10);
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    for (pid, comm) in below {
        let gone = Instant::now();
        while alive(pid) && gone.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "{comm} ({pid}) left running");
    }
    // The log is the user's output: kept, with what was traced.
    assert!(std::fs::read_to_string(&log).unwrap().contains("execve"));
}

/// Runs `tscope ARGS DIR` until its scratch appears in DIR, waits `settle`, sends `sig`, and
/// holds it to exit 130 with nothing printed and the scratch removed (`what` names the job).
fn stops_cleanly(args: &[&str], sig: &str, settle: Duration, what: &str) {
    let _cpu = crate::common::cpu_lock();
    let dir = tempfile::tempdir().unwrap();
    let bin = tscope().get_program().to_owned();
    let child = Command::new(bin)
        .args(args)
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while empty(dir.path()) && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        !empty(dir.path()),
        "{what} never made its scratch directory"
    );
    std::thread::sleep(settle);
    signal(sig, child.id());
    let out = wait_at_most(child, 15);
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(out.stdout.is_empty(), "a half-measured {what} was printed");
    assert!(empty(dir.path()), "scratch directory left behind");
}

#[test]
fn sigterm_during_validate_exits_130_and_leaves_no_scratch() {
    stops_cleanly(
        &[
            "simulate",
            "vfsmix",
            "--validate",
            "--validate-secs",
            "60",
            "--validate-dir",
        ],
        "-TERM",
        Duration::from_millis(300),
        "validation",
    );
}

#[test]
fn sigterm_during_report_exits_130_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("r");
    let bin = tscope().get_program().to_owned();
    let child = Command::new(bin)
        .args(["report", "--quick", "--sync-ms", "20", "--out"])
        .arg(&out_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    signal("-TERM", child.id());
    // The step under way may not watch the flag: the watchdog ends it 5 s after the signal.
    let out = wait_at_most(child, 20);
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    // Nothing at all: not the directory, not a temporary sibling.
    assert!(
        empty(dir.path()),
        "a report directory or its sibling was left"
    );
}

#[test]
fn a_run_stopped_before_its_first_sample_has_no_rate_not_zero() {
    // Stopped during a 30 s warm-up: no interval ended, so there is no rate at all.
    let bin = tscope().get_program().to_owned();
    for json in [true, false] {
        let mut cmd = Command::new(&bin);
        cmd.args(["run", "pipe1", "--tasks", "1", "--duration", "60"])
            .args(["--warmup", "30", "--interval-ms", "1000"]);
        if json {
            cmd.arg("--json");
        }
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        signal("-TERM", child.id());
        let out = wait_at_most(child, 15);
        assert_eq!(out.status.code(), Some(130), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        if json {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let run = &v["runs"][0];
            assert_eq!(run["samples"], serde_json::json!([]), "{run}");
            assert!(run["ops_per_sec"].is_null(), "0 samples gave a rate: {run}");
            assert!(run["ns_per_iteration"].is_null(), "{run}");
        } else {
            let row = text
                .lines()
                .find(|l| l.contains("(partial)"))
                .unwrap_or_else(|| panic!("no partial row in:\n{text}"));
            assert!(
                !row.split_whitespace().any(|c| c == "0" || c == "0.0"),
                "0 samples printed as a rate of 0: {row}"
            );
        }
    }
}

#[test]
fn sigint_during_a_histogram_prints_what_was_read() {
    let bin = assert_cmd::cargo::cargo_bin("tscope");
    let child = Command::new(bin)
        .args([
            "probe",
            "--histogram",
            "vdso:monotonic",
            "--duration",
            "60",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    signal("-INT", child.id());
    // Read while it writes: a histogram of a loaded run is larger than a pipe's buffer.
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    assert!(v["wall_s"].as_f64().unwrap() < 60.0);
    assert!(v["deltas"].as_u64().unwrap() > 0);
}

#[test]
fn sigint_during_the_live_pair_exits_130_and_leaves_no_scratch() {
    let sources = "syscall:realtime,syscall:realtime_coarse,vdso:realtime_coarse";
    stops_cleanly(
        &["probe", "--quick", "--source", sources, "--dir"],
        "-INT",
        Duration::ZERO,
        "profile",
    );
}

#[test]
fn sigterm_during_probe_repeat_kills_the_running_run_and_writes_nothing() {
    let _cpu = crate::common::cpu_lock();
    let bin = tscope().get_program().to_owned();
    let child = Command::new(bin)
        .args(["probe", "--repeat", "5", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait for the second run, a child process of its own.
    let start = Instant::now();
    while children(pid).is_empty() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let runs = children(pid);
    assert!(!runs.is_empty(), "no run of its own appeared");
    signal("-TERM", pid);
    let out = wait_at_most(child, 15);
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(out.stdout.is_empty(), "a half-repeated profile was printed");
    std::thread::sleep(Duration::from_millis(200));
    for (run, _) in runs {
        assert!(
            !std::path::Path::new(&format!("/proc/{run}")).exists()
                || std::fs::read_to_string(format!("/proc/{run}/stat"))
                    .is_ok_and(|s| s.contains(") Z ")),
            "run {run} outlived the probe"
        );
    }
}
