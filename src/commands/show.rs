//! `tscope show FILE`: render a JSON file tscope wrote again, in any format — a measurement is
//! taken once and shown as many ways as needed. The kind is recognised from the document's
//! fields; the file is parsed with the same types that wrote it, so a field this build does
//! not know is ignored and a missing one is an error naming the file.
//!
//! The file is read whole, bounded ([`crate::input::read_document`]), then parsed twice from
//! its bytes, never as a `serde_json::Value` tree: its [outline](crate::input::Shape) says what
//! it is, then it parses into the type that wrote it.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::{Destination, Global};
use crate::cli::ShowArgs;
use crate::error::ConfigError;
use crate::export::Saved;
use crate::input::{Kind, Shape};
use crate::sim::result::Output;

/// Parses the bytes themselves (a `Value` would reorder maps) as the type that wrote it.
fn parse<T: DeserializeOwned>(text: &[u8], path: &Path, what: &str) -> anyhow::Result<T> {
    serde_json::from_slice(text).map_err(|e| {
        ConfigError::Invalid(format!(
            "'{}' looks like {what} output but does not parse as one ({e}): was it written by \
             another tscope version?",
            path.display()
        ))
        .into()
    })
}

/// What `tscope show` shows, and where.
#[derive(Debug, Clone)]
pub struct ShowJob {
    pub document: Saved,
    pub output: Destination,
}

/// Validates `args`: the output, then the file read, recognised and parsed as the type that
/// wrote it, in a format that kind has.
pub fn config(args: &ShowArgs, _global: &Global) -> anyhow::Result<ShowJob> {
    let output =
        Destination::new(&args.output)?.with_openmetrics(&crate::cli::OpenMetricsArgs {
            openmetrics: args.openmetrics,
            export_openmetrics: None,
        })?;
    let path = &args.file;
    let text = crate::input::read_document(path, "document")?;
    let v = Shape::of(&text).map_err(|e| {
        ConfigError::Invalid(format!(
            "'{}' is not JSON (line {}, column {}): {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    let Some(kind) = Kind::of(&v) else {
        return Err(ConfigError::Invalid(format!(
            "'{}' is not a document tscope writes (expected the JSON of probe, detect, run, \
             vm guest, vm exits, vm count, vm bench, simulate, compare or report.json)",
            path.display()
        ))
        .into());
    };
    let document = match kind {
        Kind::Probe => Saved::Probe(Box::new(parse(&text, path, "probe")?)),
        Kind::Detect => Saved::Detect(Box::new(parse(&text, path, "detect")?)),
        Kind::Run => Saved::Run(Box::new(parse(&text, path, "run")?)),
        Kind::VmGuest => Saved::VmGuest(Box::new(parse(&text, path, "vm guest")?)),
        Kind::VmExits => Saved::VmExits(Box::new(parse(&text, path, "vm exits")?)),
        Kind::Simulate => Saved::Simulate(Box::new(simulate_output(&v, &text, path)?)),
        Kind::Compare => Saved::Compare(Box::new(parse(&text, path, "compare")?)),
        Kind::Report => Saved::Report(Box::new(parse(&text, path, "report.json")?)),
        Kind::VmBench => {
            let mut r: crate::vm::bench::BenchReport = parse(&text, path, "vm bench")?;
            // Kernel rows of a document written before they carried LKP's decision: from the
            // boots the document holds, as `vm bench` now fills them.
            crate::vm::bench::lkp::apply(&mut r);
            Saved::VmBench(Box::new(r))
        }
        Kind::VmCount => Saved::VmCount(Box::new(parse(&text, path, "vm count")?)),
        other => {
            let how = match other {
                Kind::RunRecord => {
                    "it is input for `tscope simulate --run`; `tscope show` renders what \
                     `tscope run --json` writes"
                }
                Kind::FleetReport | Kind::FleetRows => {
                    "the store prints it again: `tscope fleet report` or `tscope fleet ls` \
                     in any format"
                }
                _ => "`tscope show` does not render this kind: read the JSON itself",
            };
            return Err(ConfigError::Invalid(format!(
                "'{}' is {}: {how}",
                path.display(),
                other.name()
            ))
            .into());
        }
    };
    document.check(output.format)?;
    Ok(ShowJob { document, output })
}

/// Renders the file in the chosen format; returns the exit code.
#[derive(Debug)]
pub struct Show;

impl super::Command for Show {
    type Args = ShowArgs;
    type Config = ShowJob;

    /// Reading the file is interruptible at once, a FIFO nobody writes included.
    fn while_configuring(_: &ShowArgs) -> super::OnSignal {
        super::OnSignal::Exit
    }

    fn configure(args: &ShowArgs, global: &Global) -> anyhow::Result<ShowJob> {
        config(args, global)
    }

    fn while_running(_: &ShowJob) -> super::OnSignal {
        super::OnSignal::Exit
    }

    fn execute(job: ShowJob, _stop: &super::Stop) -> anyhow::Result<i32> {
        job.output.emit(&job.document.export(job.output.format)?)?;
        Ok(0)
    }
}

/// One object or an array of them, as `simulate --json` writes; the outline says which, so
/// the parse goes straight into the type (an untagged enum would buffer the whole document).
fn one_or_many<T: DeserializeOwned>(
    v: &Shape,
    text: &[u8],
    path: &Path,
    what: &str,
) -> anyhow::Result<Vec<T>> {
    if v.object {
        Ok(vec![parse::<T>(text, path, what)?])
    } else {
        parse::<Vec<T>>(text, path, what)
    }
}

/// A `simulate --json` document as the result it was rendered from.
fn simulate_output(v: &Shape, text: &[u8], path: &Path) -> anyhow::Result<Output> {
    use crate::sim::result::{ImpliedReport, ModelReport, SweepReport, ValidationReport};
    let first = v.first_or_self();
    let what = "simulate";
    Ok(if first.has("estimates") {
        Output::Models(one_or_many::<ModelReport>(v, text, path, what)?)
    } else if first.has("break_even") {
        Output::Sweeps(one_or_many::<SweepReport>(v, text, path, what)?)
    } else if first.has("published_speedup") {
        Output::Implied(one_or_many::<ImpliedReport>(v, text, path, what)?)
    } else {
        Output::Validation(parse::<ValidationReport>(text, path, what)?)
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_output_is_recognised_before_a_profile() {
        let v =
            Shape::of(br#"{"schema_version": 1, "columns": [], "sources": [], "verdicts": []}"#)
                .unwrap();
        assert_eq!(Kind::of(&v), Some(Kind::Compare));
        let probe = Shape::of(br#"{"sources": [], "machine": {}, "derived": {}}"#).unwrap();
        assert_eq!(Kind::of(&probe), Some(Kind::Probe));
        assert_eq!(Kind::of(&Shape::of(br#"{"a": 1}"#).unwrap()), None);
        let bench = Shape::of(
            br#"{"accel": {}, "runs": [], "workloads": [], "comparisons": [],
                 "kernel_control": "syscall:getppid"}"#,
        )
        .unwrap();
        assert_eq!(Kind::of(&bench), Some(Kind::VmBench));
    }
}
