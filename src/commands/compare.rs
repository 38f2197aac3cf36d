//! `tscope compare`: profiles side by side with ratios against the first.

use std::path::PathBuf;

use super::{Global, Output};
use crate::cli::CompareArgs;
use crate::compare;
use crate::error::ConfigError;

/// The validated inputs: each file with its column label (`None`: the file's own).
pub fn config(args: &CompareArgs) -> Result<Vec<(PathBuf, Option<String>)>, ConfigError> {
    if !args.labels.is_empty() && args.labels.len() != args.files.len() {
        return Err(ConfigError::range(
            "labels",
            "one label per file",
            format!(
                "{} labels for {} files",
                args.labels.len(),
                args.files.len()
            ),
        ));
    }
    Ok(args
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.clone(), args.labels.get(i).cloned()))
        .collect())
}

/// Runs `tscope compare`; returns the exit code.
pub fn run(args: &CompareArgs, _global: &Global) -> anyhow::Result<i32> {
    let files = config(args)?;
    let output = Output::new(&args.output)?;
    let mut inputs = Vec::with_capacity(files.len());
    for (path, label) in files {
        let mut input = compare::Input::load(&path)?;
        if let Some(l) = label {
            input.label = l;
        }
        inputs.push(input);
    }
    let cmp = compare::compare(&inputs);
    output.export(&cmp)?;
    let slower = cmp.slower();
    if args.fail_on.is_some() && !slower.is_empty() {
        eprintln!("tscope: decided slower: {}", slower.join(", "));
        return Ok(1);
    }
    Ok(0)
}
