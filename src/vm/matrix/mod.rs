//! `tscope vm guest`: boot one guest per clocksource with tscope as `/init` and gather the
//! results into a [`GuestMatrix`].

pub(crate) mod result;

pub use result::MATRIX_VERDICTS;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::Result;

use self::result::{
    Column, GuestMatrix, GuestRun, GuestStatus, KernelInfo, VM_GUEST_SCHEMA_VERSION,
};
use crate::detect::{self, DetectConfig, Detection};
use crate::probe::{self, ProbeConfig, Profile, Source};
use crate::progress::Progress;
use crate::trace::FsKind;
use crate::vm::boot::clock::Clocksource;
use crate::vm::boot::pipeline::{Pipeline, Prepared, Room};
use crate::vm::boot::plan::Plan;
use crate::vm::boot::qemu;
use crate::vm::boot::session::BootConfig;
use crate::vm::boot::{kernel, serial};
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
pub(crate) fn harvest(requested: &str, out: &qemu::QemuOutcome) -> Harvest {
    let label = format!("guest:{requested}");
    let fail = |status, e: String| {
        (
            status,
            Some(e),
            Column::new(label.clone(), None, None),
            None,
        )
    };
    if let Some(killed) = out.killed() {
        return fail(GuestStatus::Timeout, killed);
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

/// What one guest of the matrix gave: status, error, the column, the guest's `/proc/cmdline`.
pub(crate) type Harvest = (GuestStatus, Option<String>, Column, Option<String>);

impl Room for GuestConfig {
    type Reading = Harvest;

    fn filesystems(&self) -> &[FsKind] {
        &[]
    }

    fn plan(&self, _boot: u32) -> Plan {
        Plan::Matrix {
            all_sources: self.all_sources,
        }
    }

    /// One guest per clocksource, in order.
    fn clocksource(&self, boot: u32) -> Option<Clocksource> {
        self.clocksources.get(boot as usize).copied()
    }

    /// `tsc=reliable` when asked.
    fn words(&self) -> &'static [&'static str] {
        if self.tsc_reliable {
            &["tsc=reliable"]
        } else {
            &[]
        }
    }

    fn smp(&self) -> u32 {
        self.smp
    }

    fn read(&self, boot: u32, out: &qemu::QemuOutcome) -> Harvest {
        harvest(self.clocksource(boot).map_or("", |c| c.name()), out)
    }
}

/// Runs the whole matrix.
pub fn run(cfg: &GuestConfig, progress: &dyn Progress) -> Result<GuestMatrix> {
    let pipe = Pipeline::open(&cfg.boot, cfg, progress)?;
    let kernel = kernel::resolve(cfg.kernel.as_deref(), &cfg.kernel_package, progress)?;
    let mut p = pipe.prepare(cfg, kernel, "matrix", progress)?;
    p.pvh = cfg.pvh;
    let guests = boot_all(progress, cfg, &pipe, &mut p)?;
    let accel = pipe.accel().clone();
    let bin = pipe.guest_bin().to_path_buf();
    drop(pipe);
    let host = if cfg.measure_host {
        Some(measure_host(cfg.emulate_trap)?)
    } else {
        None
    };
    let kernel = &p.kernel;
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
    pipe: &Pipeline,
    p: &mut Prepared,
) -> Result<Vec<GuestRun>> {
    let accel = pipe.accel();
    let mut guests = Vec::new();
    for (b, &cs) in (0u32..).zip(&cfg.clocksources) {
        let label = format!("guest clocksource={cs} ({})", accel.used.name());
        let booted = pipe.boot(cfg, p, b, &label, progress)?;
        // A kernel whose ELF qemu refused boots its bzImage for every later clocksource.
        p.pvh = booted.pvh;
        let out = &booted.out;
        let (status, error, column, guest_cmdline) = booted.reading;
        progress.note(&format!(
            "{label}: {} in {:.1} s",
            serde_json::to_value(status)?.as_str().unwrap_or("?"),
            out.wall.as_secs_f64()
        ));
        let honoured = column.clocksource.current.as_ref().map(|c| c == cs.name());
        guests.push(GuestRun {
            requested_clocksource: cs.into(),
            clocksource_honoured: honoured,
            status,
            console_tail: (status != GuestStatus::Ok).then(|| out.console_tail()),
            error,
            boot: if booted.pvh { "pvh" } else { "bzimage" }.into(),
            wall_s: out.wall.as_secs_f64(),
            cmdline: guest_cmdline,
            qemu_args: booted.qemu_args,
            column,
        });
    }
    Ok(guests)
}
