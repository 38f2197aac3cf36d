//! The one way a test skips: for a named capability the machine lacks, recorded where the run
//! can count it, and turned into a failure when the machine declares it has the capability.
//!
//! A test that returns early looks like a pass. So a skip goes through [`without`]: it checks
//! the capability, and when it is missing it
//! - fails the test if `TSCOPE_TEST_REQUIRE` (a comma list, set by `.ci/run` for the machine it
//!   knows) names the capability: a declared machine never skips;
//! - otherwise appends `test: capability: reason` to the file `TSCOPE_TEST_SKIP_LOG` names
//!   (`./scripts/test` sets it and prints `skipped: N` with the reasons at the end), and writes
//!   the same line straight to stderr, past the test harness's capture.
//!
//! Shared by the integration tests (`tests/tests.rs`) and the library's unit tests (`lib.rs`
//! includes this file under `cfg(test)`), so it uses the standard library alone.

use std::io::Write;
use std::path::Path;

/// Detects one capability: `Err` says why it is missing.
type Detect = fn() -> Result<(), String>;

/// Every capability a test may skip for, and how it is detected.
const CAPABILITIES: &[(&str, Detect)] = &[
    ("qemu", qemu),
    ("kvm-device", kvm_device),
    ("strace", || runs("strace", "-V")),
    ("cpio", || runs("cpio", "--version")),
    ("gzip", || runs("gzip", "--version")),
    ("mkfs.ext4", || runs("mkfs.ext4", "-V")),
    ("mkfs.xfs", || runs("mkfs.xfs", "-V")),
    ("mkfs.btrfs", || runs("mkfs.btrfs", "-V")),
    ("rsvg-convert", || runs("rsvg-convert", "--version")),
    ("prometheus-node-exporter", || {
        runs("prometheus-node-exporter", "--version")
    }),
    ("promtool", || runs("promtool", "--version")),
    ("tmpfs", tmpfs),
    ("loop-mount", loop_mount),
    ("multigrain", multigrain),
    ("multigrain-counters", multigrain_counters),
    ("vdso-clocksource", vdso_clocksource),
    ("kvm-clocksource-switch", kvm_clocksource_switch),
    ("root", root),
    ("setpriv", || runs("setpriv", "--version")),
];

/// Whether the test must stop here because `capability` is missing; the skip is recorded (or
/// the test fails, when the machine declares the capability). Use as
/// `if skip::without("qemu") { return; }`.
pub fn without(capability: &str) -> bool {
    let declared = declared();
    let Some((_, detect)) = CAPABILITIES.iter().find(|(name, _)| *name == capability) else {
        panic!("skip::without: unknown capability '{capability}' (add it to CAPABILITIES)");
    };
    let Err(why) = detect() else {
        return false;
    };
    assert!(
        !declared.iter().any(|d| d == capability),
        "TSCOPE_TEST_REQUIRE declares '{capability}', but {why}"
    );
    record(capability, &why);
    true
}

/// The capabilities `TSCOPE_TEST_REQUIRE` declares; an unknown name fails (a typo must not turn
/// a declaration into nothing).
fn declared() -> Vec<String> {
    let list = std::env::var("TSCOPE_TEST_REQUIRE").unwrap_or_default();
    let names: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    for n in &names {
        assert!(
            CAPABILITIES.iter().any(|(c, _)| c == n),
            "TSCOPE_TEST_REQUIRE names '{n}', which no test knows; known: {}",
            CAPABILITIES
                .iter()
                .map(|(c, _)| *c)
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    names
}

/// Appends the skip to `TSCOPE_TEST_SKIP_LOG` and writes it to stderr uncaptured.
fn record(capability: &str, why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    let line = format!("{test}: {capability}: {why}\n");
    // Straight to the stderr handle: libtest captures `eprintln!`, not this.
    let _ = std::io::stderr().write_all(format!("SKIPPED {line}").as_bytes());
    if let Some(log) = std::env::var_os("TSCOPE_TEST_SKIP_LOG").filter(|v| !v.is_empty()) {
        // One write of one short line with O_APPEND: lines from parallel tests do not mix.
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap_or_else(|e| panic!("opening TSCOPE_TEST_SKIP_LOG {log:?}: {e}"));
        f.write_all(line.as_bytes())
            .unwrap_or_else(|e| panic!("writing TSCOPE_TEST_SKIP_LOG {log:?}: {e}"));
    }
}

/// `Ok` when `program arg` starts and exits 0.
fn runs(program: &str, arg: &str) -> Result<(), String> {
    match std::process::Command::new(program).arg(arg).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("'{program} {arg}' exits with {}", o.status)),
        Err(e) => Err(format!(
            "{program} does not run ({e}); ./scripts/test installs it"
        )),
    }
}

/// Root with loop devices: tests make and mount their own filesystem images.
fn loop_mount() -> Result<(), String> {
    // The effective uid is the second field of /proc/self/status's `Uid:` line.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        == Some("0");
    if !root {
        return Err("not root: mounting a loop image needs it".into());
    }
    if !std::path::Path::new("/dev/loop-control").exists() {
        return Err("no /dev/loop-control: the kernel has no loop devices".into());
    }
    runs("mount", "--version")
}

fn qemu() -> Result<(), String> {
    runs("qemu-system-x86_64", "--version")
}

/// `/dev/kvm` exists: `vm exits` runs its micro-VM on it (any backend, kvm_pvm included).
fn kvm_device() -> Result<(), String> {
    if Path::new("/dev/kvm").exists() {
        Ok(())
    } else {
        Err("/dev/kvm does not exist".into())
    }
}

/// The effective uid is 0 (from `/proc/self/status`): needed to drop to another user.
fn root() -> Result<(), String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .ok_or("no Uid line in /proc/self/status")?;
    if euid == "0" {
        Ok(())
    } else {
        Err(format!("running as uid {euid}, not root"))
    }
}

fn tmpfs() -> Result<(), String> {
    if Path::new("/dev/shm").is_dir() {
        Ok(())
    } else {
        Err("/dev/shm (tmpfs) is not a directory".into())
    }
}

/// The running kernel's (major, minor), from `uname -r` as /proc gives it.
pub fn kernel_release() -> Option<(u32, u32)> {
    let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let mut it = r.trim().split(['.', '-']);
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Multigrain timestamps (a fine-grained ctime/mtime once someone stat'ed the inode, on
/// `FS_MGTIME` filesystems such as tmpfs) came in Linux 6.13 (torvalds/linux, fs/inode.c
/// `inode_set_ctime_current`, Documentation/filesystems/multigrain-ts.rst; see src/kernel/).
fn multigrain() -> Result<(), String> {
    match kernel_release() {
        Some(v) if v >= (6, 13) => Ok(()),
        Some((a, b)) => Err(format!(
            "Linux {a}.{b} has no multigrain timestamps (6.13 or later)"
        )),
        None => Err("cannot read the kernel release from /proc/sys/kernel/osrelease".into()),
    }
}

/// The kernel's multigrain counters in debugfs (6.13+, `CONFIG_DEBUG_FS`, debugfs mounted,
/// root): `scripts/test` mounts debugfs for the run where it can.
fn multigrain_counters() -> Result<(), String> {
    let file = "/sys/kernel/debug/multigrain_timestamps";
    std::fs::read_to_string(file)
        .map(drop)
        .map_err(|e| format!("reading {file}: {e} (debugfs mounted? root?)"))
}

/// The clocksource the vDSO reads in user space (tsc, kvm-clock; arch_sys_counter on arm64):
/// only then is the vDSO path cheaper than the syscall. On hpet, acpi_pm or xen the vDSO falls
/// back to the syscall and the two cost the same.
fn vdso_clocksource() -> Result<(), String> {
    let path = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    let cs = std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))?;
    match cs.trim() {
        "tsc" | "kvm-clock" | "arch_sys_counter" => Ok(()),
        other => Err(format!(
            "clocksource '{other}' is not read by the vDSO (tsc, kvm-clock)"
        )),
    }
}

/// Root on a KVM guest that offers both `tsc` and `kvm-clock`: a test may switch the
/// clocksource between them within one boot (and puts the original back).
fn kvm_clocksource_switch() -> Result<(), String> {
    root()?;
    let path = "/sys/devices/system/clocksource/clocksource0/available_clocksource";
    let available = std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))?;
    let names: Vec<&str> = available.split_whitespace().collect();
    for want in ["tsc", "kvm-clock"] {
        if !names.contains(&want) {
            return Err(format!(
                "clocksource '{want}' is not available ({}): not a KVM guest with a usable TSC",
                available.trim()
            ));
        }
    }
    Ok(())
}
