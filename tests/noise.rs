//! Noise: with a CPU hog pinned to the probe's CPU, `probe` must notice (CPU share, context
//! switches, extra rounds, noisy flags and warnings) instead of printing a confident wrong
//! figure.

use std::process::{Child, Command};

use crate::common::tscope;

/// Kills the hog even if the test panics.
struct Hog(Child);

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The first CPU this process may run on (`Cpus_allowed_list`), not CPU 0, which a cpuset or
/// `taskset` may have taken away.
fn allowed_cpu() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list in /proc/self/status");
    let first = list.trim().split([',', '-']).next().unwrap();
    first.parse::<u32>().expect("a CPU number").to_string()
}

#[test]
fn probe_notices_a_cpu_hog() {
    let cpu = allowed_cpu();
    // `ulimit -t` bounds the hog (SIGXCPU after 20 s of CPU) even if this test process is
    // killed before Drop runs; the loop runs in that same shell, so Drop's kill reaches it.
    let hog = Command::new("taskset")
        .args(["-c", &cpu, "sh", "-c", "ulimit -t 20; while :; do :; done"])
        .spawn();
    let _hog = Hog(hog.unwrap());
    // Let the hog get going (setup, not a timing assertion).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let bin = tscope().get_program().to_owned();
    let sources = "rdtsc,vdso:monotonic,syscall:monotonic,syscall:getppid";
    let out = Command::new("taskset")
        .args(["-c", &cpu])
        .arg(bin)
        .args(["probe", "--quick", "--json", "--source", sources])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    // A CPU-bound hog pinned to the same CPU takes about half of it: the probe must see that
    // it did not have the CPU to itself, and say so.
    let share = v["cpu_share"].as_f64().unwrap();
    assert!(share < 0.8, "cpu_share {share} with a hog on the same CPU");
    assert!(v["involuntary_switches"].as_u64().unwrap() > 0);
    assert!(warnings.contains(&"cpu_shared"), "{warnings:?}");
    for s in v["sources"].as_array().unwrap() {
        let c = &s["cost_ns"];
        let (p, lo, hi) = (
            c["point"].as_f64().unwrap(),
            c["lower"].as_f64().unwrap(),
            c["upper"].as_f64().unwrap(),
        );
        assert!(lo <= p && p <= hi, "{s}");
        // Whatever stays wide is flagged, never passed off as confident: as noisy, or as
        // widened to hold the loop placements' points (the placements' own intervals, in core
        // cycles, do not overlap; the table names the range).
        if (hi - lo) / p > 0.10 && hi - lo > 0.5 {
            let placed = &s["placement"];
            if placed["widened"] == true {
                assert_eq!(placed["moves_cost"], true, "{s}");
                continue;
            }
            assert_eq!(s["noisy"], true, "{s}");
            assert!(warnings.contains(&"noisy"), "{warnings:?}");
        }
    }
}
