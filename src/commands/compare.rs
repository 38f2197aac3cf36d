//! `tscope compare`: profiles side by side with ratios against the first.

use sha2::{Digest, Sha256};

use super::{Destination, Global};
use crate::cli::{CompareArgs, CompareUnit};
use crate::compare;

/// What `tscope compare` compares, and where the comparison goes.
#[derive(Debug, Clone)]
pub struct CompareJob {
    /// Each file loaded, under its column label (`--labels`, else the file's own).
    pub inputs: Vec<compare::Input>,
    pub output: Destination,
    /// `--fail-on slower`: exit 1 when any source is decided slower than the first input.
    pub fail_on_slower: bool,
    /// `--unit`: the unit of every ratio; `None`: compare chooses per source.
    pub unit: Option<compare::Unit>,
    /// `--noise`: profiles whose spread is the noise between runs.
    pub noise: Vec<crate::probe::Profile>,
    /// `--lkp`: LKP's decision beside tscope's, in LKP's layout.
    pub lkp: bool,
}

/// Validates `args`: one label per file (when labels are given), the output, then each file
/// loaded and labelled.
pub fn config(args: &CompareArgs, _global: &Global) -> anyhow::Result<CompareJob> {
    if !args.labels.is_empty() && args.labels.len() != args.files.len() {
        return Err(crate::error::ConfigError::range(
            "labels",
            "one label per file",
            format!(
                "{} labels for {} files",
                args.labels.len(),
                args.files.len()
            ),
        )
        .into());
    }
    let output = Destination::new(&args.output)?;
    let mut inputs = Vec::with_capacity(args.files.len());
    for (i, path) in args.files.iter().enumerate() {
        let mut input = compare::Input::load(path)?;
        if let Some(l) = args.labels.get(i) {
            input.label = l.clone();
        }
        inputs.push(input);
    }
    let unit = args.unit.map(|u| match u {
        CompareUnit::Ns => compare::Unit::Ns,
        CompareUnit::Cycles => compare::Unit::Cycles,
    });
    let missing = compare::without_cycles(&inputs);
    if unit == Some(compare::Unit::Cycles) && !missing.is_empty() {
        return Err(crate::error::ConfigError::range(
            "unit",
            "cycles needs every file to carry core_clock (a probe by this version, on x86-64)",
            format!("no core_clock in {}", missing.join(", ")),
        )
        .into());
    }
    if !args.noise.is_empty() && args.noise.len() < 3 {
        return Err(crate::error::ConfigError::range(
            "noise",
            "three or more profiles (the spread of two runs says too little)",
            format!("{} given", args.noise.len()),
        )
        .into());
    }
    let mut noise = Vec::with_capacity(args.noise.len());
    for path in &args.noise {
        let bytes = crate::input::read_document(path, "noise profile")?;
        let profile = compare::Input::parse_bytes(&bytes, path)
            .map_err(crate::error::Error::from)?
            .profile;
        noise.push(compare::noise::NoiseInput {
            path: path.clone(),
            sha256: Sha256::digest(&bytes).into(),
            profile,
        });
    }
    compare::noise::check_noise(&inputs, &noise, args.noise_from_other_hosts)
        .map_err(crate::error::ConfigError::Invalid)?;
    let noise = noise.into_iter().map(|n| n.profile).collect();
    Ok(CompareJob {
        inputs,
        output,
        fail_on_slower: args.fail_on.is_some(),
        unit,
        noise,
        lkp: args.lkp,
    })
}

/// `tscope compare`: exit 1 under `--fail-on slower` when a source is decided slower.
#[derive(Debug)]
pub struct Compare;

impl super::Command for Compare {
    type Args = CompareArgs;
    type Config = CompareJob;

    /// Reading the inputs is interruptible at once, a FIFO nobody writes included.
    fn while_configuring(_: &CompareArgs) -> super::OnSignal {
        super::OnSignal::Exit
    }

    fn configure(args: &CompareArgs, global: &Global) -> anyhow::Result<CompareJob> {
        config(args, global)
    }

    fn while_running(_: &CompareJob) -> super::OnSignal {
        super::OnSignal::Exit
    }

    fn execute(job: CompareJob, _stop: &super::Stop) -> anyhow::Result<i32> {
        run(job)
    }
}

fn run(job: CompareJob) -> anyhow::Result<i32> {
    let mut cmp = compare::compare_with_noise(&job.inputs, job.unit, &job.noise);
    if job.lkp {
        compare::lkp::apply(&mut cmp, &job.inputs);
    }
    job.output.export(&cmp)?;
    let slower = cmp.slower();
    if job.fail_on_slower && !slower.is_empty() {
        eprintln!(
            "tscope: decided slower beyond the noise: {}",
            slower.join(", ")
        );
        return Ok(1);
    }
    Ok(0)
}
