//! `tscope vm guest`: boot one guest per clocksource with tscope as `/init` and gather the
//! results into a [`GuestMatrix`].

pub(crate) mod result;

pub use result::MATRIX_VERDICTS;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::Result;

use self::result::{
    Column, GuestMatrix, GuestRun, GuestStatus, KernelInfo, VM_GUEST_SCHEMA_VERSION,
};
use crate::detect::{self, DetectConfig, Detection};
use crate::probe::{self, ProbeConfig, Profile, Source};
use crate::progress::Progress;
use crate::vm::boot::clock::Clocksource;
use crate::vm::boot::qemu;
use crate::vm::boot::session::{BootConfig, Session};
use crate::vm::boot::{kernel, launch, serial};
use crate::vm::init;

/// A validated `vm guest` configuration.
#[derive(Debug, Clone)]
pub struct GuestConfig {
    pub clocksources: Vec<Clocksource>,
    pub boot: BootConfig,
    pub kernel: Option<PathBuf>,
    pub kernel_package: String,
    pub smp: u32,
    pub tsc_reliable: bool,
    pub all_sources: bool,
    pub pvh: bool,
    pub measure_host: bool,
    pub emulate_trap: bool,
}

/// The clocksources a guest matrix boots by default, one guest each.
pub const DEFAULT_CLOCKSOURCES: [Clocksource; 4] = [
    Clocksource::Tsc,
    Clocksource::KvmClock,
    Clocksource::Hpet,
    Clocksource::AcpiPm,
];

impl GuestConfig {
    /// The command line's defaults: one guest per [`DEFAULT_CLOCKSOURCES`], KVM if usable else
    /// TCG, 120 s per guest, Debian's cloud kernel, one CPU, 256 MiB, the host measured too.
    pub fn new() -> Self {
        GuestConfig {
            clocksources: DEFAULT_CLOCKSOURCES.to_vec(),
            boot: BootConfig::new(120),
            kernel: None,
            kernel_package: "linux-image-cloud-amd64".into(),
            smp: 1,
            tsc_reliable: false,
            all_sources: false,
            pvh: true,
            measure_host: true,
            emulate_trap: false,
        }
    }
}

impl Default for GuestConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// The guest kernel command line for `clocksource` (and `tsc=reliable` when asked).
pub fn cmdline(cfg: &GuestConfig, clocksource: Clocksource) -> String {
    let words: &[&str] = if cfg.tsc_reliable {
        &["tsc=reliable"]
    } else {
        &[]
    };
    cfg.boot.cmdline(Some(clocksource), words)
}

fn tail(console: &str, lines: usize) -> String {
    let all: Vec<&str> = console.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Section `name` of `t` as JSON; why it did not parse goes to `errors`.
fn read<T: serde::de::DeserializeOwned>(
    t: &serial::Transcript,
    name: &str,
    errors: &mut Vec<String>,
) -> Option<T> {
    match t.json(name)? {
        Ok(v) => Some(v),
        Err(e) => {
            errors.push(format!("the guest's {name} JSON did not parse: {e}"));
            None
        }
    }
}

/// Reads the results out of a finished boot: status, error, the column, the guest cmdline.
pub(crate) fn harvest(
    requested: &str,
    out: &qemu::QemuOutcome,
) -> (GuestStatus, Option<String>, Column, Option<String>) {
    let label = format!("guest:{requested}");
    let fail = |status, e: String| {
        (
            status,
            Some(e),
            Column::new(label.clone(), None, None),
            None,
        )
    };
    if out.timed_out {
        return fail(
            GuestStatus::Timeout,
            format!("killed after {:.0} s (--timeout)", out.wall.as_secs_f64()),
        );
    }
    let t = match serial::parse(&out.console) {
        Ok(t) => t,
        Err(e) => return fail(GuestStatus::Failed, e.to_string()),
    };
    let mut errors: Vec<String> = t.get("error").map(str::to_string).into_iter().collect();
    let probe: Option<Profile> = read(&t, "probe", &mut errors);
    let detect: Option<Detection> = read(&t, "detect", &mut errors);
    if t.get("probe").is_none() {
        errors.push(if out.console.trim().is_empty() {
            format!(
                "the guest printed nothing; qemu said: {}",
                out.stderr.trim()
            )
        } else {
            "the guest printed no probe result".into()
        });
    } else if t.get("detect").is_none() {
        errors.push("the guest printed no detect result".into());
    }
    let mut col = Column::new(label, probe, detect);
    if let Some(cs) = t.get("clocksource") {
        let mut lines = cs.lines();
        col.clocksource.current = lines.next().map(str::to_string).filter(|s| !s.is_empty());
        col.clocksource.available = lines
            .next()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_string)
            .collect();
    }
    let status = if col.probe.is_some() && col.detect.is_some() {
        GuestStatus::Ok
    } else {
        GuestStatus::Failed
    };
    let error = (!errors.is_empty()).then(|| errors.join("; "));
    (status, error, col, t.get("cmdline").map(str::to_string))
}

/// Measures the host with the same sources and settings the guests use.
fn measure_host(emulate_trap: bool) -> Result<Column> {
    let sources: Vec<Source> = init::GUEST_SOURCES
        .iter()
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let mut pcfg = ProbeConfig::new(sources, true, 1);
    pcfg.emulate_trap = emulate_trap;
    let profile = probe::run(&pcfg);
    let detection = detect::run(&DetectConfig {
        seed: 1,
        thorough: false,
        sync_budget: Duration::from_millis(100),
        emulate_trap,
        fail_on: Vec::new(),
    });
    Ok(Column::new("host".into(), Some(profile), Some(detection)))
}

/// Runs the whole matrix.
pub fn run(cfg: &GuestConfig, progress: &dyn Progress) -> Result<GuestMatrix> {
    let session = Session::open(&cfg.boot, &[], progress)?;
    let kernel = kernel::resolve(cfg.kernel.as_deref(), &cfg.kernel_package, progress)?;
    let plan = crate::vm::boot::plan::Plan::Matrix {
        all_sources: cfg.all_sources,
    };
    let guests = plan
        .initramfs(session.initramfs(), "matrix")
        .and_then(|initrd| boot_all(progress, cfg, &session, &kernel, &initrd))?;
    let accel = session.accel.clone();
    let bin = session.bin.path.clone();
    drop(session);
    let host = if cfg.measure_host {
        Some(measure_host(cfg.emulate_trap)?)
    } else {
        None
    };
    Ok(GuestMatrix {
        schema_version: VM_GUEST_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        created_unix_s: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        accel,
        kernel: KernelInfo {
            origin: kernel.origin.clone(),
            image: kernel.image.display().to_string(),
            vmlinux: kernel.vmlinux.as_ref().map(|p| p.display().to_string()),
            extract_note: kernel.extract_note.clone(),
        },
        guest_bin: bin.display().to_string(),
        host,
        guests,
    })
}

fn boot_all(
    progress: &dyn Progress,
    cfg: &GuestConfig,
    session: &Session,
    kernel: &kernel::Kernel,
    initrd: &Path,
) -> Result<Vec<GuestRun>> {
    let accel = &session.accel;
    let mut pvh = cfg.pvh && kernel.vmlinux.is_some();
    let mut guests = Vec::new();
    for &cs in &cfg.clocksources {
        let mut spec = session.qemu_spec(
            &cfg.boot,
            &kernel.image,
            initrd.to_path_buf(),
            cmdline(cfg, cs),
        );
        spec.smp = cfg.smp;
        let label = format!("guest clocksource={cs} ({})", accel.used.name());
        let out = launch::boot(&mut spec, kernel, &mut pvh, &label, progress)?;
        let (status, error, column, guest_cmdline) = harvest(cs.name(), &out);
        progress.note(&format!(
            "{label}: {} in {:.1} s",
            serde_json::to_value(status)?.as_str().unwrap_or("?"),
            out.wall.as_secs_f64()
        ));
        let honoured = column.clocksource.current.as_ref().map(|c| c == cs.name());
        guests.push(GuestRun {
            requested_clocksource: cs.name().to_string(),
            clocksource_honoured: honoured,
            status,
            console_tail: (status != GuestStatus::Ok).then(|| tail(&out.console, 30)),
            error,
            boot: if pvh { "pvh" } else { "bzimage" }.into(),
            wall_s: out.wall.as_secs_f64(),
            cmdline: guest_cmdline,
            qemu_args: spec.args(),
            column,
        });
    }
    Ok(guests)
}
