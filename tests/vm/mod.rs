//! `tscope vm`: a real TCG guest end to end (kernel fetched once per test run into the tests'
//! own cache, see `common::cache_home`; this test build of tscope as /init, with its libraries), the
//! clocksource read back, the vDSO fallback under acpi_pm; a hung guest killed at the timeout;
//! `vm exits` measuring every exit kind wherever /dev/kvm exists (a non-zero exit fails).

mod cache;
mod count;

use crate::common::tscope;
use crate::skip;
use predicates::str::contains;

#[test]
fn tcg_guest_with_acpi_pm_falls_back_to_the_syscall() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("qemu") {
        return;
    }
    let out = tscope()
        .args([
            "vm",
            "guest",
            "--accel",
            "tcg",
            "--clocksource",
            "acpi_pm",
            "--no-host",
            "--timeout",
            "120",
            "--json",
        ])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("run tscope vm guest");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "vm guest failed: {stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["accel"]["used"], "tcg");
    assert_eq!(v["accel"]["emulation"], true);
    assert!(v["host"].is_null());
    let g = &v["guests"][0];
    assert_eq!(g["status"], "ok", "{g}");
    assert_eq!(g["requested_clocksource"], "acpi_pm");
    // The clocksource is read back from the guest's sysfs.
    assert_eq!(
        g["clocksource"]["current"], "acpi_pm",
        "{}",
        g["clocksource"]
    );
    assert_eq!(g["clocksource_honoured"], true);
    assert!(g["cmdline"]
        .as_str()
        .unwrap()
        .contains("clocksource=acpi_pm"));
    // The profile came back whole.
    assert_eq!(g["probe"]["schema_version"], 1);
    assert!(g["costs_ns"]["syscall:getppid"].as_f64().unwrap() > 0.0);
    // acpi_pm cannot be read from user space: every precise clock falls back to the syscall.
    falls_back_everywhere(&g["detect"]["verdicts"]);
    assert_eq!(
        g["detect"]["verdicts"]["vdso_fallback:monotonic"]["holds"],
        true
    );
    // Both paths enter the kernel: they cannot disagree.
    assert_eq!(g["detect"]["verdicts"]["vdso_inconsistent"]["state"], "no");
}

/// `--append tsc=unstable`: the guest kernel marks its TSC unstable at boot, and detect finds
/// the line in the guest's kernel log.
#[test]
fn a_guest_booted_with_tsc_unstable_shows_the_line() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("qemu") {
        return;
    }
    let out = tscope()
        .args(["vm", "guest", "--accel", "tcg", "--clocksource", "hpet"])
        .args(["--append", "tsc=unstable", "--no-host", "--timeout", "120"])
        .arg("--json")
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("run tscope vm guest");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "vm guest failed: {stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let g = &v["guests"][0];
    assert_eq!(g["status"], "ok", "{g}");
    assert!(g["cmdline"].as_str().unwrap().contains("tsc=unstable"));
    let t = &g["detect"]["verdicts"]["tsc_marked_unstable"];
    assert_eq!(t["state"], "yes", "{t}");
    assert_eq!(
        t["evidence"]["lines"][0]["line"],
        "tsc: Marking TSC unstable due to boot parameter"
    );
    assert_eq!(g["verdicts"]["tsc_marked_unstable"], true);
    assert_eq!(t["evidence"]["boot_options"]["tsc"][0], "unstable");
    // The TSC was never in use: nothing was switched away from it.
    assert_eq!(
        g["detect"]["verdicts"]["clocksource_switched"]["state"],
        "no"
    );
    if g["clocksource"]["current"] == "hpet" {
        falls_back_everywhere(&g["detect"]["verdicts"]);
        assert_eq!(g["detect"]["verdicts"]["vdso_inconsistent"]["state"], "no");
    }
}

#[test]
fn hung_guest_is_killed_and_reported() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("qemu") {
        return;
    }
    let out = tscope()
        .args([
            "vm",
            "guest",
            "--accel",
            "tcg",
            "--clocksource",
            "tsc",
            "--no-host",
            "--timeout",
            "1",
            "--json",
        ])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("run tscope vm guest");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["guests"][0]["status"], "timeout");
    assert!(v["guests"][0]["error"]
        .as_str()
        .unwrap()
        .contains("--timeout"));
}

#[test]
fn bad_arguments_are_clear_errors() {
    tscope()
        .args(["vm", "guest", "--timeout", "0"])
        .assert()
        .code(2)
        .stderr(contains("--timeout must be 1..=3600"));
    tscope()
        .args(["vm", "guest", "--clocksource", "tsc;rm"])
        .assert()
        .code(2)
        .stderr(contains("invalid value 'tsc;rm' for '--clocksource"));
}

#[test]
fn micro_vm_times_every_exit_kind_or_says_why_not() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("kvm-device") {
        return;
    }
    let out = tscope()
        // The default 2000 iterations per block: under kvm_pvm every guest instruction is
        // emulated (≈ 6000 ticks each, varying run to run by more than cpuid's own ≈ 300), and
        // at 200 iterations the fastest cpuid block fell 212 ticks below the fastest loop one.
        .args(["vm", "exits", "--iterations", "2000", "--json"])
        .output()
        .expect("run tscope vm exits");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // /dev/kvm is there (declared as kvm-device where CI knows it): the micro-VM must run. A
    // backend that cannot run the payload fails this test, it does not pass it.
    assert!(out.status.success(), "vm exits failed: {stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["schema_version"], 1);
    assert!(v["backend"].as_str().unwrap().contains(':'));
    let kinds = v["kinds"].as_array().unwrap();
    let names: Vec<&str> = kinds.iter().map(|k| k["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["rdtsc", "rdtscp", "cpuid", "pio_out", "mmio_write", "hlt"]
    );
    let runs = v["runs"].as_u64().unwrap();
    for k in kinds {
        // Every kind is either timed or carries the reason it could not run.
        assert!(k["ns"].as_f64().is_some() != k["error"].is_string(), "{k}");
        if k["ns"].is_f64() && k["exits_to"] == "user space" {
            // One exit to this process per iteration, every run.
            assert_eq!(k["user_exits"].as_u64().unwrap(), 2000 * runs, "{k}");
        }
    }
    // The exits that leave the kernel must at least run somewhere.
    for name in ["cpuid", "pio_out", "mmio_write", "hlt"] {
        let k = kinds.iter().find(|k| k["name"] == name).unwrap();
        let ns = k["ns"]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} not measured: {k}"));
        assert!(ns > 0.0, "{k}");
    }
}

#[test]
fn report_with_vm_adds_the_guest_matrix() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("qemu") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    tscope()
        .args([
            "report",
            "--quick",
            "--no-workloads",
            "--vm",
            "--sync-ms",
            "10",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Inside guests, one per clocksource"), "{md}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let guests = v["vm"]["guests"].as_array().unwrap();
    assert!(
        guests
            .iter()
            .any(|g| g["requested_clocksource"] == "acpi_pm"),
        "no acpi_pm guest"
    );
    // Every guest that ran on a clocksource with no vDSO clock mode (acpi_pm; hpet when the
    // kernel honoured it) has every precise clock decided as falling back.
    let mut checked = 0;
    for g in guests {
        let current = g["clocksource"]["current"].as_str().unwrap_or("?");
        if ["acpi_pm", "hpet"].contains(&current) {
            // A guest that failed says why, with its console's last lines.
            assert_eq!(
                g["status"],
                "ok",
                "{current} guest: {}\n{}",
                g["error"],
                g["console_tail"].as_str().unwrap_or("")
            );
            falls_back_everywhere(&g["detect"]["verdicts"]);
            checked += 1;
        }
    }
    assert!(checked >= 1, "{guests:?}");
    // Clock cost against throughput: the bench's clocksource rows, each with its verdict.
    assert!(
        md.contains("## Clock cost against throughput, inside a guest"),
        "{md}"
    );
    assert!(md.contains("tscope vm bench --kernel-package"), "{md}");
    // The section's guest keeps the TSC whatever its watchdog would decide under TCG.
    assert!(md.contains("--append 'tsc=reliable'"), "{md}");
    let b = &v["vm_bench"];
    assert_eq!(b["boots"], 1, "{b}");
    let rows: Vec<&serde_json::Value> = b["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "clocksource")
        .collect();
    assert_eq!(rows.len(), 2, "{b}");
    for c in rows {
        assert_eq!(
            (c["from"].as_str(), c["to"].as_str()),
            (Some("tsc"), Some("hpet"))
        );
        assert!(
            ["agrees", "disagrees", "undecided"].contains(&c["verdict"].as_str().unwrap()),
            "{c}"
        );
        let m = &c["measured_delta_ns"];
        assert!(
            m["lower"].as_f64().unwrap() <= m["upper"].as_f64().unwrap(),
            "{c}"
        );
        assert!(c["predicted_delta_ns"].is_number(), "{c}");
        assert!(c["noise_ns"].is_number(), "{c}");
    }
}

/// acpi_pm and hpet have no vDSO clock mode: the vDSO cannot serve a clock that reads the
/// clocksource, so every precise clock is decided as falling back by that fact, whatever the
/// timing (which under TCG may straddle the band), and the evidence says so.
fn falls_back_everywhere(verdicts: &serde_json::Value) {
    for c in [
        "realtime",
        "monotonic",
        "monotonic_raw",
        "boottime",
        "tai",
        "gettimeofday",
    ] {
        let v = &verdicts[format!("vdso_fallback:{c}")];
        assert_eq!(v["state"], "yes", "{c}: {v}");
        assert_eq!(v["holds"], true, "{c}: {v}");
        assert_eq!(v["evidence"]["decided_by"], "clocksource", "{c}: {v}");
        assert_eq!(v["evidence"]["vdso_capability"], "none", "{c}: {v}");
        // The timing's own answer stays in the evidence; where it is not "yes" the conflict is
        // named.
        if v["evidence"]["timing_state"] != "yes" {
            assert!(v["evidence"]["disagreement"].is_string(), "{c}: {v}");
        }
    }
}
