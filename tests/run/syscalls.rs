//! `tscope run` under `strace -f`: each worker's system calls are exactly the iteration the
//! workload defines (and records for the simulator), repeated.

use serde_json::Value;

/// The syscalls a worker really issues, from `strace -f`: the names of the pid with the most
/// lines (the worker; the parent mostly sleeps).
fn traced_worker_syscalls(args: &[&str]) -> Option<(Value, Vec<String>)> {
    if crate::skip::without("strace") {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("strace.log");
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(assert_cmd::cargo::cargo_bin("tscope"))
        .arg("run")
        .args(args)
        .args(["--tasks", "1", "--duration", "0.6", "--interval-ms", "200"])
        .args(["--warmup", "0.05", "--json", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    // The first line is tscope's own process: its workers are forked (write-stat's own
    // process runs the live knob pair after them, more calls than any worker).
    let parent = text
        .lines()
        .next()
        .and_then(|l| l.split_once(' '))
        .map(|(p, _)| p);
    let mut by_pid: std::collections::HashMap<&str, Vec<String>> = Default::default();
    for line in text.lines() {
        let Some((pid, rest)) = line.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        if Some(pid) == parent {
            continue;
        }
        if let Some(name) = rest
            .split('(')
            .next()
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            by_pid.entry(pid).or_default().push(name.to_string());
        }
    }
    let worker = by_pid.into_values().max_by_key(|v| v.len()).unwrap();
    Some((v, worker))
}

#[test]
fn workers_issue_exactly_the_defined_syscalls() {
    for args in [
        &["pipe1"][..],
        &["fifo1"],
        &["vfsmix"],
        &["write-only"],
        &["write-stat"],
        &["write-stat-control"],
        &["getppid"],
        &["sched_yield"],
    ] {
        let Some((v, calls)) = traced_worker_syscalls(args) else {
            return;
        };
        let cycle: Vec<String> = v["iteration"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["syscall"] != "page_fault")
            .map(|o| o["nr"].as_str().unwrap().to_string())
            .collect();
        // The measured loop is the longest stretch of calls that all belong to the cycle
        // (set-up, tear-down and sched_yield's getrusage between warm-up and measurement lie
        // outside it; how many calls the warm-up makes depends on the machine's load, so no
        // fixed offset); inside it, after a partial first cycle, the cycle repeats exactly.
        let (mut best, mut run_start) = ((0, 0), 0);
        for i in 0..=calls.len() {
            if i == calls.len() || !cycle.contains(&calls[i]) {
                if i - run_start > best.1 - best.0 {
                    best = (run_start, i);
                }
                run_start = i + 1;
            }
        }
        let (begin, end) = best;
        assert!(
            end - begin > 8 * cycle.len() + 2 * cycle.len(),
            "{args:?}: only {} calls in the loop ({begin}..{end} of {})",
            end - begin,
            calls.len()
        );
        let middle = &calls[begin + cycle.len()..end - cycle.len()];
        let start = (0..cycle.len())
            .find(|&k| middle[k..].starts_with(&cycle[..]))
            .unwrap_or_else(|| panic!("{args:?}: {cycle:?} not found in {:?}", &middle[..20]));
        for (i, c) in middle[start..].iter().enumerate() {
            assert_eq!(
                c,
                &cycle[i % cycle.len()],
                "{args:?} at {i}: {:?}",
                &middle[start..][i.saturating_sub(5)..i + 1]
            );
        }
    }
}
