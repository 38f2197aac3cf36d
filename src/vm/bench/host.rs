//! The host side of `vm bench`: every kernel resolved and prepared once (its initramfs with
//! the modules a disk file system needs), then the boots — boot b of every kernel before boot
//! b + 1 of any — through the run's [`Pipeline`], each read into a [`BenchBoot`] as it ends.

use super::{boot_clocksource, closed_part, parse_console, plan, BenchBoot, BenchConfig};
use super::{BenchKernel, BenchReport};
use crate::error::{Context, Result};
use crate::progress::Progress;
use crate::trace::FsKind;
use crate::vm::boot::child;
use crate::vm::boot::clock::Clocksource;
use crate::vm::boot::pipeline::{Pipeline, Prepared, Room};
use crate::vm::boot::plan::Plan;
use crate::vm::boot::qemu::QemuOutcome;

pub(super) fn boot_all(
    cfg: &BenchConfig,
    pipe: &Pipeline,
    report: &mut BenchReport,
    progress: &dyn Progress,
) -> Result<()> {
    let mut prepared = Vec::new();
    for (i, source) in cfg.kernels.iter().enumerate() {
        let k = source.resolve(progress)?;
        let p = pipe.prepare(cfg, k, &i.to_string(), progress)?;
        let (hz, hz_source) = p.hz();
        report.kernels.push(BenchKernel {
            kernel_package: p
                .kernel
                .package
                .clone()
                .unwrap_or_else(|| p.kernel.origin.clone()),
            kernel_release: p.kernel.release.clone(),
            hz,
            hz_source,
            boots: Vec::new(),
        });
        prepared.push(p);
    }
    let total = cfg.boots as usize * prepared.len();
    let mut done = 0;
    for b in 0..cfg.boots {
        for (i, p) in prepared.iter_mut().enumerate() {
            child::check_stop()?;
            done += 1;
            let boot = boot_one(cfg, pipe, p, b, progress, (done, total))?;
            let k = &mut report.kernels[i];
            if let Some(h) = &boot.header {
                k.kernel_release = Some(h.release.clone());
            }
            // A header without the resolution keeps what an earlier boot found.
            (k.hz, k.hz_source) = p.hz();
            k.boots.push(boot);
        }
    }
    Ok(())
}

fn boot_one(
    cfg: &BenchConfig,
    pipe: &Pipeline,
    p: &mut Prepared,
    b: u32,
    progress: &dyn Progress,
    (done, total): (usize, usize),
) -> Result<BenchBoot> {
    let k = &p.kernel;
    let label = k.release.clone().unwrap_or_else(|| k.origin.clone());
    progress.note(&format!(
        "[{done}/{total}] {label}: boot {} of {} on {}, {} round(s) of {}",
        b + 1,
        cfg.boots,
        boot_clocksource(cfg, b).name(),
        cfg.rounds,
        cfg.clocksource_list()
    ));
    let booted = pipe.boot(cfg, p, b, &label, progress)?;
    if let Some(dir) = &cfg.console_dir {
        let path = dir.join(format!("{label}-boot{}.console", b + 1));
        std::fs::write(&path, &booted.out.console)
            .with_context(|| format!("writing '{}'", path.display()))?;
    }
    let boot = booted.reading;
    progress.note(&format!(
        "[{done}/{total}] {label}: boot {}: {} in {:.1} s",
        b + 1,
        boot.error.as_deref().unwrap_or("ok"),
        boot.wall_s
    ));
    Ok(boot)
}

impl Room for BenchConfig {
    type Reading = BenchBoot;

    fn filesystems(&self) -> &[FsKind] {
        &self.filesystems
    }

    fn plan(&self, boot: u32) -> Plan {
        plan(self, boot)
    }

    /// The boot's first clocksource.
    fn clocksource(&self, boot: u32) -> Option<Clocksource> {
        Some(boot_clocksource(self, boot))
    }

    /// Every slot the guest printed, and why there are fewer than asked.
    fn read(&self, b: u32, out: &QemuOutcome) -> BenchBoot {
        read_boot(self, b, out)
    }

    fn coarse_res_ns(&self, boot: &BenchBoot) -> Option<u64> {
        boot.header.as_ref()?.coarse_res_ns
    }
}

/// Boot `b`'s console read into a [`BenchBoot`]: the sections that closed, and why there are
/// fewer slots than asked (killed at the timeout, cut short, silent).
fn read_boot(cfg: &BenchConfig, b: u32, out: &QemuOutcome) -> BenchBoot {
    let mut boot = BenchBoot {
        wall_s: out.wall.as_secs_f64(),
        ..BenchBoot::new(b, boot_clocksource(cfg, b))
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
    if let Some(killed) = out.killed() {
        boot.error = Some(format!(
            "{killed} with {} of {want} slot(s) measured",
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
        boot.console_tail = Some(out.console_tail());
    }
    boot
}
