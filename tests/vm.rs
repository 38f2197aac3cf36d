//! `tscope vm`: a real TCG guest end to end (kernel fetched once per test run into the tests'
//! own cache, see `common::cache_home`; the static guest binary built into target/guest), the
//! clocksource read back, the vDSO fallback under acpi_pm; a hung guest killed at the timeout;
//! `vm exits` measuring every exit kind wherever /dev/kvm exists (a non-zero exit fails).

use crate::common::tscope;
use crate::skip;
use predicates::str::contains;

#[test]
fn tcg_guest_with_acpi_pm_falls_back_to_the_syscall() {
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
    // acpi_pm cannot be read from user space: the vDSO falls back to the syscall.
    assert_eq!(
        g["verdicts"]["vdso_fallback:monotonic"], true,
        "{}",
        g["detect"]["verdicts"]
    );
    assert_eq!(
        g["detect"]["verdicts"]["vdso_fallback:monotonic"]["holds"],
        true
    );
}

#[test]
fn hung_guest_is_killed_and_reported() {
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
        .stderr(contains("not a clocksource name"));
}

#[test]
fn micro_vm_times_every_exit_kind_or_says_why_not() {
    if skip::without("kvm-device") {
        return;
    }
    let out = tscope()
        .args(["vm", "exits", "--iterations", "200", "--json"])
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
            assert_eq!(k["user_exits"].as_u64().unwrap(), 200 * runs, "{k}");
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
    let acpi = guests
        .iter()
        .find(|g| g["requested_clocksource"] == "acpi_pm")
        .unwrap();
    assert_eq!(acpi["verdicts"]["vdso_fallback:monotonic"], true, "{acpi}");
}
