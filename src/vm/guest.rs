//! `tscope vm guest`: boot one guest per clocksource with tscope as `/init` and gather the
//! results into a [`GuestMatrix`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Context, Result};
use crate::fail as bail;

use super::cpio::{self, Entry};
use super::matrix::{
    AccelChoice, Column, GuestMatrix, GuestRun, GuestStatus, KernelInfo, VM_GUEST_SCHEMA_VERSION,
};
use super::qemu::{self, Accel, QemuSpec};
use super::{init, kernel, serial};
use crate::detect::{self, host::KvmHost, DetectConfig, Detection};
use crate::probe::{self, ProbeConfig, Profile, Source};
use crate::progress::Progress;

/// A validated `vm guest` configuration.
#[derive(Debug, Clone)]
pub struct GuestConfig {
    pub clocksources: Vec<String>,
    pub accel: RequestedAccel,
    pub timeout: Duration,
    pub kernel: Option<PathBuf>,
    pub kernel_package: String,
    pub guest_bin: Option<PathBuf>,
    pub smp: u32,
    pub memory_mb: u32,
    pub tsc_reliable: bool,
    pub all_sources: bool,
    pub append: Option<String>,
    pub pvh: bool,
    pub qemu: String,
    pub measure_host: bool,
    pub emulate_trap: bool,
}

/// How qemu should run guest code, as asked (what it used is [`AccelChoice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RequestedAccel {
    /// KVM when /dev/kvm offers hardware virtualisation, else TCG (with a message).
    Auto,
    /// Hardware virtualisation (kvm_intel / kvm_amd).
    Kvm,
    /// qemu's binary translator: emulation, not virtualisation.
    Tcg,
}

/// The clocksources a guest matrix boots by default, one guest each.
pub const DEFAULT_CLOCKSOURCES: [&str; 4] = ["tsc", "kvm-clock", "hpet", "acpi_pm"];

impl GuestConfig {
    /// The command line's defaults: one guest per [`DEFAULT_CLOCKSOURCES`], KVM if usable else
    /// TCG, 120 s per guest, Debian's cloud kernel, one CPU, 256 MiB, the host measured too.
    pub fn new() -> Self {
        GuestConfig {
            clocksources: DEFAULT_CLOCKSOURCES.map(String::from).to_vec(),
            accel: RequestedAccel::Auto,
            timeout: Duration::from_secs(120),
            kernel: None,
            kernel_package: "linux-image-cloud-amd64".into(),
            guest_bin: None,
            smp: 1,
            memory_mb: 256,
            tsc_reliable: false,
            all_sources: false,
            append: None,
            pvh: true,
            qemu: "qemu-system-x86_64".into(),
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

/// Decides the accelerator from what was asked and what backs /dev/kvm.
pub fn choose_accel(requested: RequestedAccel, kvm: &KvmHost) -> Result<AccelChoice> {
    let pvm_note = "/dev/kvm is backed by kvm_pvm, a software hypervisor that runs only \
                    PVM-built guest kernels (stock kernels hit emulation failures)";
    let (used, note) = match requested {
        RequestedAccel::Tcg => (Accel::Tcg, None),
        RequestedAccel::Kvm if kvm.dev_kvm && kvm.hardware_virtualisation => (Accel::Kvm, None),
        RequestedAccel::Kvm if kvm.module.as_deref() == Some("kvm_pvm") => {
            bail!("--accel kvm: {pvm_note}; use --accel tcg (emulation) or a host with kvm_intel/kvm_amd")
        }
        RequestedAccel::Kvm if !kvm.dev_kvm => {
            bail!("--accel kvm: /dev/kvm does not exist; use --accel tcg")
        }
        RequestedAccel::Kvm => (Accel::Kvm, Some("module behind /dev/kvm unknown".into())),
        RequestedAccel::Auto if kvm.dev_kvm && kvm.hardware_virtualisation => (Accel::Kvm, None),
        RequestedAccel::Auto if kvm.module.as_deref() == Some("kvm_pvm") => {
            (Accel::Tcg, Some(format!("{pvm_note}: falling back to TCG")))
        }
        RequestedAccel::Auto => (
            Accel::Tcg,
            Some("no hardware virtualisation through /dev/kvm: falling back to TCG".into()),
        ),
    };
    Ok(AccelChoice {
        requested: format!("{requested:?}").to_lowercase(),
        used,
        emulation: used == Accel::Tcg,
        kvm_module: kvm.module.clone(),
        note,
    })
}

/// Whether an ELF file is statically linked (no `PT_INTERP` program header).
pub fn is_static_elf(bytes: &[u8]) -> bool {
    let u16_at = |o: usize| {
        bytes
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u64_at = |o: usize| {
        bytes
            .get(o..o + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    if !bytes.starts_with(b"\x7fELF\x02\x01") {
        return false;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return false;
    };
    (0..usize::from(phnum)).all(|i| {
        let at = phoff as usize + i * usize::from(phentsize);
        bytes.get(at..at + 4) != Some(&3u32.to_le_bytes()[..]) // PT_INTERP
    })
}

/// The static tscope for the guest: `--guest-bin`, else this binary if static, else built from
/// the source tree this binary was built from (`cargo build --release --target
/// x86_64-unknown-linux-gnu` with `+crt-static`, into `target/guest`).
pub fn guest_binary(given: Option<&Path>, progress: &dyn Progress) -> Result<PathBuf> {
    let check = |p: &Path| -> Result<PathBuf> {
        let bytes = std::fs::read(p).with_context(|| format!("reading '{}'", p.display()))?;
        if !is_static_elf(&bytes) {
            bail!(
                "'{}' is dynamically linked; the guest has no libraries: build it with \
                 RUSTFLAGS='-C target-feature=+crt-static'",
                p.display()
            );
        }
        Ok(p.to_path_buf())
    };
    if let Some(p) = given {
        return check(p);
    }
    if let Ok(me) = std::env::current_exe() {
        if std::fs::read(&me).is_ok_and(|b| is_static_elf(&b)) {
            return Ok(me);
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !src.join("Cargo.toml").exists() {
        bail!("this tscope is dynamically linked and its source tree is gone: pass --guest-bin PATH to a static build (see docs/vm.md)");
    }
    let target_dir = src.join("target/guest");
    // Said before it starts: it writes into the source tree and takes minutes the first time.
    progress.note(&format!(
        "no --guest-bin: building the static guest binary with cargo build --release \
         (+crt-static) in the source tree {}, into {} (minutes the first time); pass \
         --guest-bin PATH to use a static tscope instead",
        src.display(),
        target_dir.display()
    ));
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .current_dir(src)
        .args(["build", "--release", "--locked", "--bin", "tscope"])
        .args(["--target", "x86_64-unknown-linux-gnu", "--target-dir"])
        .arg(&target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_STRIP", "symbols");
    // Dies with tscope, and a stop signal kills it and its rustc children (its own group).
    let st = super::child::status(&mut cargo, "cargo to build the static guest binary")?;
    if !st.success() {
        bail!("building the static guest binary failed ({st}); pass --guest-bin PATH");
    }
    check(&target_dir.join("x86_64-unknown-linux-gnu/release/tscope"))
}

/// The initramfs: `/init` (the static tscope), `/dev/console` (the kernel opens it for init
/// before devtmpfs exists), and the mount points.
pub fn initramfs(tscope: &[u8]) -> std::io::Result<Vec<u8>> {
    cpio::write(&[
        Entry::dir("dev"),
        Entry::char_dev("dev/console", 0o600, 5, 1),
        Entry::dir("proc"),
        Entry::dir("sys"),
        Entry::file("init", 0o755, tscope.to_vec()),
    ])
}

/// The guest kernel command line for `clocksource`.
pub fn cmdline(cfg: &GuestConfig, clocksource: &str) -> String {
    let mut s = format!("console=ttyS0 clocksource={clocksource} quiet panic=-1");
    if cfg.tsc_reliable {
        s += " tsc=reliable";
    }
    if cfg.all_sources {
        s += " tscope.sources=all";
    }
    if let Some(extra) = &cfg.append {
        s += " ";
        s += extra;
    }
    s
}

fn tail(console: &str, lines: usize) -> String {
    let all: Vec<&str> = console.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
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
    let probe: Option<Profile> = t.get("probe").and_then(|s| serde_json::from_str(s).ok());
    let detect: Option<Detection> = t.get("detect").and_then(|s| serde_json::from_str(s).ok());
    let mut errors: Vec<String> = t.get("error").map(str::to_string).into_iter().collect();
    if probe.is_none() || detect.is_none() {
        errors.push(match t.get("probe") {
            None if out.console.trim().is_empty() => format!(
                "the guest printed nothing; qemu said: {}",
                out.stderr.trim()
            ),
            None => "the guest printed no probe result".into(),
            Some(_) => "the guest's probe or detect JSON did not parse".into(),
        });
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
    let host_facts = detect::host::gather();
    let accel = choose_accel(cfg.accel, &host_facts.kvm)?;
    if let Some(n) = &accel.note {
        progress.note(n);
    }
    if accel.emulation {
        progress.note(&crate::warnings::Warning::TcgEmulation.to_string());
    }
    // The cache first: an unusable one (HOME empty, read-only) fails before any build.
    let cache = kernel::cache_dir()?;
    let bin = guest_binary(cfg.guest_bin.as_deref(), progress)?;
    let kernel = kernel::resolve(cfg.kernel.as_deref(), &cfg.kernel_package, progress)?;
    super::scratch::sweep_stale(&cache);
    let work = cache.join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("creating '{}'", work.display()))?;
    let initrd = work.join("initramfs.cpio");
    let bytes = std::fs::read(&bin).with_context(|| format!("reading '{}'", bin.display()))?;
    let result = std::fs::write(&initrd, initramfs(&bytes)?)
        .with_context(|| format!("writing '{}'", initrd.display()))
        .and_then(|()| boot_all(progress, cfg, &accel, &kernel, &initrd));
    let _ = std::fs::remove_dir_all(&work);
    let guests = result?;
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
    accel: &AccelChoice,
    kernel: &kernel::Kernel,
    initrd: &Path,
) -> Result<Vec<GuestRun>> {
    let mut pvh = cfg.pvh && kernel.vmlinux.is_some();
    let mut guests = Vec::new();
    for cs in &cfg.clocksources {
        let mut spec = QemuSpec {
            binary: cfg.qemu.clone(),
            accel: accel.used,
            kernel: kernel.image.clone(),
            initrd: initrd.to_path_buf(),
            append: cmdline(cfg, cs),
            memory_mb: cfg.memory_mb,
            smp: cfg.smp,
            timeout: cfg.timeout,
            disks: Vec::new(),
        };
        let label = format!("guest clocksource={cs} ({})", accel.used.name());
        let mut out = None;
        if pvh {
            spec.kernel = kernel.vmlinux.clone().unwrap_or_default();
            let o = qemu::run(&spec)?;
            // qemu refusing the ELF (no PVH note) exits at once with nothing on the console.
            if !o.timed_out && !o.console.contains("=====TSCOPE-BEGIN") {
                progress.note(&format!(
                    "{label}: PVH boot failed ({}), retrying with the bzImage",
                    o.stderr.trim()
                ));
                pvh = false;
                spec.kernel = kernel.image.clone();
            } else {
                out = Some(o);
            }
        }
        let out = match out {
            Some(o) => o,
            None => qemu::run(&spec)?,
        };
        let (status, error, column, guest_cmdline) = harvest(cs, &out);
        progress.note(&format!(
            "{label}: {} in {:.1} s",
            serde_json::to_value(status)?.as_str().unwrap_or("?"),
            out.wall.as_secs_f64()
        ));
        let honoured = column.clocksource.current.as_ref().map(|c| c == cs);
        guests.push(GuestRun {
            requested_clocksource: cs.clone(),
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
