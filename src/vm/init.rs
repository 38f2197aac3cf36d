//! Inside the guest: `tscope` is `/init` (PID 1). It mounts `/proc`, `/sys` and `/dev`,
//! measures with the same code as `tscope probe --quick --json` and `tscope detect --json`,
//! prints each result between [`serial`] markers on the console, reads back the
//! clocksource the kernel actually uses, and powers the machine off.
//!
//! Kernel messages are silenced first (`/proc/sys/kernel/printk` to 1) so they cannot land in
//! the middle of a JSON line. Any failure is printed as an `error` section; the machine powers
//! off whatever happens (PID 1 must never exit: the kernel would panic).

use std::io::Write;
use std::time::Duration;

use crate::detect::{self, DetectConfig};
use crate::probe::{self, ProbeConfig, Source};
use crate::sys;
use crate::vm::boot::plan::Plan;
use crate::vm::boot::serial;

/// The probe sources the guest measures unless its plan asks for all of them: the matrix's
/// sources plus what `derived.precise_read_ns` needs.
pub const GUEST_SOURCES: [&str; 10] = [
    "rdtsc",
    "rdtscp",
    "vdso:monotonic",
    "syscall:monotonic",
    "vdso:realtime_coarse",
    "syscall:realtime",
    "syscall:realtime_coarse",
    "cpuid",
    "syscall:getppid",
    "vdso:realtime",
];

/// Writes one result section to the console, flushed at once so that a crash later leaves what
/// was measured before it.
fn section(out: &mut dyn Write, name: &str, body: &str) {
    let _ = writeln!(
        out,
        "\n{}\n{}\n{}",
        serial::begin(name),
        body.trim_end(),
        serial::end(name)
    );
    let _ = out.flush();
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn measure(out: &mut dyn Write, all_sources: bool) -> crate::error::Result<()> {
    let sources: Vec<Source> = if all_sources {
        Vec::new()
    } else {
        GUEST_SOURCES
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, _>>()?
    };
    let profile = probe::run(&ProbeConfig::new(sources, true, 1));
    section(out, "probe", &serde_json::to_string(&profile)?);
    let detection = detect::run(&DetectConfig {
        seed: 1,
        thorough: false,
        sync_budget: Duration::from_millis(100),
        emulate_trap: false,
        fail_on: Vec::new(),
    });
    section(out, "detect", &serde_json::to_string(&detection)?);
    Ok(())
}

/// Runs the guest side, writing each section to `console` (the serial console: the command
/// passes stdout), and powers off; returns only if power-off failed.
pub fn guest_init(console: &mut dyn Write) -> crate::error::Result<i32> {
    let mounts = [
        ("proc", "/proc", "proc"),
        ("sysfs", "/sys", "sysfs"),
        ("devtmpfs", "/dev", "devtmpfs"),
    ];
    let mut errors = Vec::new();
    for (src, target, fs) in mounts {
        if let Err(e) = sys::guest::mount(src, target, fs) {
            errors.push(format!("mount {target}: {e}"));
        }
    }
    let _ = std::fs::write("/proc/sys/kernel/printk", "1");
    let cmdline = read("/proc/cmdline");
    section(console, "cmdline", &cmdline);
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match Plan::read_in_guest(
            std::path::Path::new("/"),
        )? {
            Some(Plan::Bench(b)) => crate::vm::bench::guest::run(&b, &mut *console),
            Some(Plan::Count {
                workloads,
                iterations,
                filesystems,
            }) => {
                let c = crate::vm::count::guest::run(crate::vm::count::guest::Asked {
                    workloads: &workloads,
                    iterations,
                    filesystems: &filesystems,
                });
                section(&mut *console, "count", &serde_json::to_string(&c)?);
                Ok(())
            }
            Some(Plan::Matrix { all_sources }) => measure(&mut *console, all_sources),
            None => measure(&mut *console, false),
        }));
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(e)) => errors.push(format!("{e:#}")),
        Err(_) => errors.push("tscope panicked inside the guest".into()),
    }
    // Read last: the kernel may have switched clocksource during the run (watchdog).
    section(
        console,
        "clocksource",
        &format!(
            "{}\n{}",
            read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            read("/sys/devices/system/clocksource/clocksource0/available_clocksource")
        ),
    );
    if !errors.is_empty() {
        section(console, "error", &errors.join("\n"));
    }
    let _ = writeln!(console, "{}", serial::DONE);
    let _ = console.flush();
    let e = sys::guest::power_off();
    crate::fail!("reboot(RB_POWER_OFF) failed: {e} (tscope vm guest-init runs as PID 1 only)")
}
