//! Noise: with a CPU hog pinned to the probe's CPU, `probe` must notice (context switches,
//! extra rounds, noisy flags and warnings) instead of printing a confident wrong figure.

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

#[test]
fn probe_notices_a_cpu_hog() {
    let _hog = Hog(Command::new("taskset")
        .args(["-c", "0", "sh", "-c", "while :; do :; done"])
        .spawn()
        .unwrap());
    let bin = tscope().get_program().to_owned();
    let out = Command::new("taskset")
        .args(["-c", "0"])
        .arg(bin)
        .args([
            "probe",
            "--quick",
            "--json",
            "--source",
            "rdtsc,vdso:monotonic,syscall:monotonic,syscall:getppid",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sources = v["sources"].as_array().unwrap();
    let switches: u64 = sources
        .iter()
        .map(|s| s["involuntary_switches"].as_u64().unwrap())
        .sum();
    assert!(
        switches > 0,
        "sharing a CPU with a hog must show up as context switches"
    );
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    for s in sources {
        let c = &s["cost_ns"];
        let (p, lo, hi) = (
            c["point"].as_f64().unwrap(),
            c["lower"].as_f64().unwrap(),
            c["upper"].as_f64().unwrap(),
        );
        assert!(lo <= p && p <= hi, "{s}");
        // Whatever stays wide is flagged, never passed off as confident.
        if (hi - lo) / p > 0.10 && hi - lo > 0.5 {
            assert_eq!(s["noisy"], true, "{s}");
            assert!(warnings.contains(&"noisy"), "{warnings:?}");
        }
    }
}
