//! `tscope vm bench`: arguments → [`BenchConfig`] → [`crate::vm::bench::run`] → export (and the
//! SVG and commit-message files) → exit code.

use super::boot::{boot_config, unique};
use crate::cli::vm::{BenchArgs, BenchFailOn};
use crate::commands::{check_output_file, Destination, Global, StderrProgress};
use crate::error::ConfigError;
use crate::vm::bench::{self, BenchConfig};

/// Validates `vm bench` arguments (the boot options with every room's own checks).
pub fn config(a: &BenchArgs, _global: &Global) -> Result<BenchConfig, ConfigError> {
    let bad = |m: String| Err(ConfigError::Invalid(m));
    let mut cfg = BenchConfig::new();
    if let Some(kernels) = super::boot::kernel_sources(&a.matrix.kernel_package, &a.matrix.kernel)?
    {
        cfg.kernels = kernels;
    }
    cfg.clocksources = unique(&a.clocksource, "--clocksource")?;
    cfg.filesystems = unique(&a.matrix.fs, "--fs")?;
    cfg.workloads = unique(&a.matrix.workload, "--workload")?;
    let range = |name: &'static str, what: &'static str, ok: bool, v: u64| {
        if ok {
            Ok(())
        } else {
            Err(ConfigError::range(name, what, v))
        }
    };
    range(
        "boots",
        "1..=100",
        (1..=100).contains(&a.boots),
        a.boots.into(),
    )?;
    range(
        "rounds",
        "1..=100",
        (1..=100).contains(&a.rounds),
        a.rounds.into(),
    )?;
    range(
        "slot-ms",
        "1..=60000",
        (1..=60_000).contains(&a.slot_ms),
        a.slot_ms,
    )?;
    if let Some(n) = a.iterations {
        range(
            "iterations",
            "1..=100000000",
            (1..=100_000_000).contains(&n),
            n,
        )?;
    }
    cfg.boot = boot_config(&a.boot, a.matrix.timeout)?;
    cfg.boots = a.boots;
    cfg.rounds = a.rounds;
    cfg.slot_ms = a.slot_ms;
    cfg.iterations = a.iterations.unwrap_or(0);
    cfg.seed = a.seed;
    range(
        "count-reads",
        "0..=1000000",
        a.count_reads <= 1_000_000,
        a.count_reads,
    )?;
    cfg.count_reads = a.count_reads;
    range(
        "pair-iterations",
        "0..=1000000",
        a.pair_iterations <= 1_000_000,
        a.pair_iterations,
    )?;
    cfg.pair_iterations = a.pair_iterations;
    if let Some(dir) = &a.console_dir {
        crate::commands::check_output_dir(dir, "console-dir")?;
    }
    cfg.console_dir = a.console_dir.clone();
    cfg.count = if a.count {
        bench::counted::COUNT_ITERATIONS
    } else {
        0
    };
    if a.commit_message.is_some() && cfg.kernels.len() < 2 {
        return bad(
            "--commit-message: the paragraph is a kernel A/B; name two or more kernels \
                    (--kernel-package, --kernel)"
                .into(),
        );
    }
    Ok(cfg)
}

/// What `vm bench` runs, and where everything it writes goes.
#[derive(Debug)]
pub struct BenchJob {
    cfg: BenchConfig,
    output: Destination,
    svg: Option<std::path::PathBuf>,
    commit_message: Option<std::path::PathBuf>,
    fail_on_disagree: bool,
}

/// Validates `a`: the configuration, the output, the SVG and commit-message paths.
pub fn job(a: &BenchArgs, global: &Global) -> anyhow::Result<BenchJob> {
    let cfg = config(a, global)?;
    let output = Destination::new(&a.output)?.with_exports(&a.export)?;
    for (path, option) in [(&a.svg, "svg"), (&a.commit_message, "commit-message")] {
        if let Some(p) = path {
            check_output_file(p, option)?;
            output.refuse_shared(p, option)?;
        }
    }
    Ok(BenchJob {
        cfg,
        output,
        svg: a.svg.clone(),
        commit_message: a.commit_message.clone(),
        fail_on_disagree: a.fail_on.contains(&BenchFailOn::Disagree),
    })
}

/// `vm bench`: 1 when `--fail-on disagree` holds or a boot failed, 130 when interrupted.
pub fn run(job: BenchJob, stop: &crate::commands::Stop) -> anyhow::Result<i32> {
    let BenchJob {
        cfg,
        output,
        svg,
        commit_message,
        fail_on_disagree,
    } = job;
    let progress = StderrProgress::new(format!(
        "vm bench: {} kernel(s) × {} boot(s), {} round(s) of {}",
        cfg.kernels.len(),
        cfg.boots,
        cfg.rounds,
        cfg.clocksource_list()
    ));
    let r = bench::run(&cfg, &progress);
    drop(progress);
    let r = r?;
    output.export(&r)?;
    if let Some(p) = &svg {
        crate::export::emit(crate::export::vm_bench::svg(&r)?.as_bytes(), Some(p))?;
    }
    if let Some(p) = &commit_message {
        let text = crate::export::vm_bench::commit_message(&r, &crate::commands::invocation());
        crate::export::emit(text.as_bytes(), Some(p))?;
    }
    let disagree = fail_on_disagree
        && r.comparisons.iter().any(|c| {
            c.kind == crate::vm::bench::ComparisonKind::Clocksource
                && c.verdict == bench::compare::Verdict::Disagrees
        });
    Ok(stop.exit_code(if disagree || r.failed() { 1 } else { 0 }))
}
