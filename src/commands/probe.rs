//! `tscope probe`: measure every timestamp source (or `--source` ones) and print the profile;
//! with `--histogram ID`, the distribution of one clock's back-to-back deltas instead.

use std::time::Duration;

use super::{Destination, Global};
use crate::cli::ProbeArgs;
use crate::error::ConfigError;
use crate::probe::histogram::{self, HistogramConfig};
use crate::probe::{self, ProbeConfig, Source};
use crate::sim::update_price::{self, FsUpdate};
use crate::workload::pair::{check_dir, PairConfig, Pattern};

/// Validates `args` into a probe configuration.
pub fn config(args: &ProbeArgs, global: &Global) -> Result<ProbeConfig, ConfigError> {
    let mut sources = Vec::new();
    for s in &args.sources {
        let src: Source = s.trim().parse()?;
        if !sources.contains(&src) {
            sources.push(src);
        }
    }
    let mut cfg = ProbeConfig::new(sources, args.sampling.quick, args.sampling.seed);
    cfg.pin = !args.no_pin;
    cfg.emulate_trap = global.emulate_trap;
    Ok(cfg)
}

/// Validates `--histogram ID` and its `--duration` and `--cutoff`.
pub fn histogram_config(
    id: &str,
    args: &ProbeArgs,
    global: &Global,
) -> Result<HistogramConfig, ConfigError> {
    let mut cfg = HistogramConfig::new(id.trim().parse()?)?;
    if let Some(s) = args.duration {
        if !(s.is_finite() && s > 0.0 && s <= 3600.0) {
            return Err(ConfigError::Invalid(format!(
                "--duration {s}: must be more than 0 and at most 3600 seconds"
            )));
        }
        cfg.duration = Duration::from_secs_f64(s);
    }
    if let Some(c) = args.cutoff {
        if !(0.0..=100.0).contains(&c) {
            return Err(ConfigError::Invalid(format!(
                "--cutoff {c}: must be a percentage from 0 to 100"
            )));
        }
        cfg.cutoff_percent = c;
    }
    cfg.pin = !args.no_pin;
    cfg.emulate_trap = global.emulate_trap;
    Ok(cfg)
}

/// `tscope probe`: the source list, a histogram, or a profile (with the live pairs of
/// `--dir` and the runs of `--repeat`).
#[derive(Debug)]
pub struct Probe;

/// What `tscope probe` does, checked.
#[derive(Debug)]
pub enum ProbeJob {
    List(Destination),
    Histogram(HistogramConfig, Destination),
    Profile(Box<ProfileJob>),
}

/// A profile to take.
#[derive(Debug)]
pub struct ProfileJob {
    cfg: ProbeConfig,
    pairs: Vec<PairConfig>,
    repeat: u32,
    /// The arguments and flags each `--repeat` child probe is started with.
    args: ProbeArgs,
    global: Global,
    output: Destination,
}

impl super::Command for Probe {
    type Args = ProbeArgs;
    type Config = ProbeJob;

    fn configure(args: &ProbeArgs, global: &Global) -> anyhow::Result<ProbeJob> {
        let output = Destination::new(&args.output)?
            .with_exports(&args.export)?
            .with_openmetrics(&args.metrics)?;
        if args.list {
            if !output.exports.is_empty() {
                return Err(ConfigError::Invalid(
                    "--export-* write a measurement; --list prints source ids only".into(),
                )
                .into());
            }
            return Ok(ProbeJob::List(output));
        }
        if let Some(id) = &args.histogram {
            return Ok(ProbeJob::Histogram(
                histogram_config(id, args, global)?,
                output,
            ));
        }
        let cfg = config(args, global)?;
        let pairs = pair_configs(args, &cfg)?;
        let repeat = match args.repeat {
            Some(n) if !(2..=probe::between::MAX_RUNS).contains(&n) => {
                return Err(ConfigError::Invalid(format!(
                    "--repeat {n}: must be 2 to {}",
                    probe::between::MAX_RUNS
                ))
                .into())
            }
            n => n.unwrap_or(1),
        };
        Ok(ProbeJob::Profile(Box::new(ProfileJob {
            cfg,
            pairs,
            repeat,
            args: args.clone(),
            global: *global,
            output,
        })))
    }

    fn while_running(job: &ProbeJob) -> super::OnSignal {
        match job {
            ProbeJob::List(_) => super::OnSignal::Default,
            _ => super::OnSignal::Stop,
        }
    }

    fn execute(job: ProbeJob, stop: &super::Stop) -> anyhow::Result<i32> {
        match job {
            ProbeJob::List(output) => {
                output.emit(crate::export::source_list(&Source::all()).as_bytes())?;
                Ok(0)
            }
            ProbeJob::Histogram(cfg, output) => {
                let h = histogram::run(&cfg)?;
                output.export(&h)?;
                Ok(stop.exit_code(0))
            }
            ProbeJob::Profile(job) => profile(*job, stop),
        }
    }
}

fn profile(job: ProfileJob, stop: &super::Stop) -> anyhow::Result<i32> {
    let ProfileJob {
        cfg,
        pairs,
        repeat,
        args,
        global,
        output,
    } = job;
    let (args, global) = (&args, &global);
    let mut profile = probe::run(&cfg);
    if repeat > 1 && !stop.requested() {
        let mut others = Vec::new();
        for k in 1..repeat {
            let progress = super::StderrProgress::new(format!("probe run {} of {repeat}", k + 1));
            let run = super::repeat::child_probe(args, global, stop);
            drop(progress);
            match run {
                Ok(Some(p)) => others.push(p),
                Ok(None) => break,
                Err(e) => return stop.nothing_written().ok_or(e),
            }
        }
        if let Some(code) = stop.nothing_written() {
            return Ok(code);
        }
        profile.attach_runs(&others);
    }
    let (priced, failed) = price_filesystems(&profile, &pairs, stop);
    profile.filesystems = priced;
    if let Some(code) = stop.nothing_written() {
        return Ok(code);
    }
    // A directory that failed is named, on stderr and in the profile; the others' prices and
    // the sources stay, and the exit code is 1.
    for (dir, e) in &failed {
        let message = format!(
            "--dir '{}' could not be priced: {}",
            crate::fmt::safe::cell(&dir.display().to_string()),
            crate::fmt::safe::cell(&format!("{e:#}"))
        );
        eprintln!("tscope: {}", crate::fmt::for_locale(&message));
        profile.warnings.push(probe::Notice {
            code: "dir_failed".into(),
            message,
        });
    }
    output.export(&profile)?;
    Ok(if failed.is_empty() { 0 } else { 1 })
}

/// The sources an update price needs: its reads are priced as every estimate prices them.
const PRICE_SOURCES: [&str; 3] = [
    "syscall:realtime",
    "syscall:realtime_coarse",
    crate::sim::costs::COARSE_SOURCE,
];

/// `--dir DIR`s checked into pair configurations (a directory, and the sources that price the
/// model's reads among those probed).
pub fn pair_configs(args: &ProbeArgs, cfg: &ProbeConfig) -> Result<Vec<PairConfig>, ConfigError> {
    let mut out: Vec<PairConfig> = Vec::new();
    for dir in &args.dirs {
        check_dir(dir).map_err(|e| ConfigError::Invalid(format!("--dir {e}")))?;
        if out.iter().any(|p| p.dir == *dir) {
            continue;
        }
        let mut p = PairConfig::for_price(dir.clone(), Pattern::Write { writes: 1 }, cfg.quick);
        p.pin = cfg.pin;
        p.seed = cfg.seed;
        out.push(p);
    }
    if !out.is_empty() {
        for id in PRICE_SOURCES {
            let s: Source = id.parse()?;
            if !cfg.sources.contains(&s) {
                return Err(ConfigError::Invalid(format!(
                    "--dir prices the model's reads with {}: add {id} to --source, or drop \
                     --source",
                    PRICE_SOURCES.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

/// Each `--dir` that could not be priced, with why.
pub type Unpriced = Vec<(std::path::PathBuf, crate::error::Error)>;

/// The live pair on each directory, priced against `profile`'s reads: the prices of the
/// directories that could be priced, and each one that could not with why; none after a stop
/// signal (the caller asks its `stop` and writes nothing).
pub fn price_filesystems(
    profile: &crate::probe::Profile,
    pairs: &[PairConfig],
    stop: &super::Stop,
) -> (Vec<FsUpdate>, Unpriced) {
    let mut out = Vec::new();
    let mut failed = Vec::new();
    for p in pairs {
        let progress = super::StderrProgress::new(format!(
            "pricing an inode update, a ctime query and a floored read on {} (live pairs)",
            p.dir.display()
        ));
        let priced = update_price::measure_and_price(p, profile);
        drop(progress);
        match priced {
            Ok(f) => out.push(f),
            Err(_) if stop.requested() => break,
            Err(e) => failed.push((p.dir.clone(), e)),
        }
    }
    (out, failed)
}
