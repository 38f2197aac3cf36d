//! The host side of `vm bench`: every kernel resolved once, its initramfs (with the modules a
//! disk file system needs), then the boots — boot b of every kernel before boot b + 1 of any —
//! each parsed into a [`BenchBoot`] as it ends.

use std::path::PathBuf;

use super::{
    closed_part, cmdline, parse_console, BenchBoot, BenchConfig, BenchKernel, BenchReport,
};
use crate::error::{Context, Result};
use crate::progress::Progress;
use crate::vm::boot::session::Session;
use crate::vm::boot::{child, disk, kconfig, kernel, launch};

/// A kernel ready to boot: its image, its initramfs (with modules when a file system needs
/// them) and its disk images.
struct Prepared {
    kernel: kernel::Kernel,
    initrd: PathBuf,
    disks: Vec<PathBuf>,
}

pub(super) fn boot_all(
    cfg: &BenchConfig,
    session: &Session,
    report: &mut BenchReport,
    progress: &dyn Progress,
) -> Result<()> {
    let base = session.initramfs();
    let work = session.work();
    let mut prepared = Vec::new();
    for (i, source) in cfg.kernels.iter().enumerate() {
        let k = source.resolve(progress)?;
        let tag = i.to_string();
        let initrd = launch::initramfs_with_modules(&k, &cfg.filesystems, base, &tag, progress)?;
        let (hz, hz_source) = kconfig::kernel_hz(k.hz, None);
        report.kernels.push(BenchKernel {
            kernel_package: k.package.clone().unwrap_or_else(|| k.origin.clone()),
            kernel_release: k.release.clone(),
            hz,
            hz_source: hz_source.to_string(),
            boots: Vec::new(),
        });
        prepared.push(Prepared {
            kernel: k,
            initrd,
            disks: Vec::new(),
        });
    }
    let total = cfg.boots as usize * prepared.len();
    let mut done = 0;
    for b in 0..cfg.boots {
        for (i, p) in prepared.iter_mut().enumerate() {
            child::check_stop()?;
            // A fresh image per boot: what the last boot wrote must not change this one.
            for d in p.disks.drain(..) {
                let _ = std::fs::remove_file(d);
            }
            p.disks = disk::disk_filesystems(&cfg.filesystems)
                .into_iter()
                .map(|fs| disk::make_image(work, fs, &i.to_string()))
                .collect::<Result<Vec<_>>>()?;
            done += 1;
            let boot = boot_one(cfg, p, b, session, progress, (done, total))?;
            let k = &mut report.kernels[i];
            if let Some(h) = &boot.header {
                k.kernel_release = Some(h.release.clone());
                let (hz, source) = kconfig::kernel_hz(p.kernel.hz, h.coarse_res_ns);
                // A header without the resolution keeps what an earlier boot found.
                if source.known() {
                    k.hz = hz;
                    k.hz_source = source.to_string();
                }
            }
            k.boots.push(boot);
        }
    }
    Ok(())
}

fn boot_one(
    cfg: &BenchConfig,
    p: &Prepared,
    b: u32,
    session: &Session,
    progress: &dyn Progress,
    (done, total): (usize, usize),
) -> Result<BenchBoot> {
    let k = &p.kernel;
    let label = k.release.clone().unwrap_or_else(|| k.origin.clone());
    let append = cmdline(cfg, b);
    let first = super::boot_clocksource(cfg, b).name().to_string();
    progress.note(&format!(
        "[{done}/{total}] {label}: boot {} of {} on {first}, {} round(s) of {}",
        b + 1,
        cfg.boots,
        cfg.rounds,
        cfg.clocksource_names().join("/")
    ));
    let initrd = super::plan(cfg, b).initramfs(&p.initrd, &format!("boot{b}"))?;
    let mut spec = session.qemu_spec(&cfg.boot, &k.image, initrd, append);
    spec.disks = p.disks.clone();
    let out = launch::boot(&mut spec, k, &mut true, &label, progress)?;
    if let Some(dir) = &cfg.console_dir {
        let path = dir.join(format!("{label}-boot{}.console", b + 1));
        std::fs::write(&path, &out.console)
            .with_context(|| format!("writing '{}'", path.display()))?;
    }
    let mut boot = BenchBoot {
        index: b,
        boot_clocksource: first,
        wall_s: out.wall.as_secs_f64(),
        ..BenchBoot::default()
    };
    let tail = || {
        let lines: Vec<&str> = out.console.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    };
    // A console cut inside a section keeps the sections that closed before the cut.
    let parsed = parse_console(&out.console).map_err(|e| {
        (
            format!("{e:#}"),
            parse_console(closed_part(&out.console)).ok(),
        )
    });
    let kept = match parsed {
        Ok(c) => Some(c),
        Err((e, c)) => {
            boot.error = Some(e);
            c
        }
    };
    if let Some(c) = kept {
        (boot.header, boot.slots, boot.reads, boot.pairs) = (c.header, c.slots, c.reads, c.pairs);
    }
    let want = (cfg.rounds as usize) * cfg.clocksources.len();
    if out.timed_out {
        boot.error = Some(format!(
            "killed after {:.0} s (--timeout) with {} of {want} slot(s) measured",
            boot.wall_s,
            boot.slots.len()
        ));
    } else if boot.error.is_none() && (boot.header.is_none() || boot.slots.len() < want) {
        boot.error = Some(format!(
            "the guest printed {} of {want} slot(s){}; qemu said: {}",
            boot.slots.len(),
            if boot.header.is_none() {
                " and no header"
            } else {
                ""
            },
            out.stderr.trim()
        ));
    }
    if boot.error.is_some() {
        boot.console_tail = Some(tail());
    }
    progress.note(&format!(
        "[{done}/{total}] {label}: boot {}: {} in {:.1} s",
        b + 1,
        boot.error.as_deref().unwrap_or("ok"),
        boot.wall_s
    ));
    Ok(boot)
}
