//! `tscope show`: a JSON document tscope wrote, parsed back into its result type, in any
//! format. [`Saved`] is every kind `show` reads; [`Saved::export`] is its one format match.

use crate::error::ConfigError;

use super::{export, json, Format, ReportDocument};

/// A document tscope wrote, as the result it was rendered from (boxed: the kinds differ in
/// size by kilobytes).
#[derive(Debug, Clone)]
pub enum Saved {
    Probe(Box<crate::probe::Profile>),
    Detect(Box<crate::detect::Detection>),
    Run(Box<crate::workload::RunReport>),
    VmGuest(Box<crate::vm::matrix::result::GuestMatrix>),
    VmExits(Box<crate::vm::exits::Exits>),
    /// `simulate --json`: estimates, sweeps, implied costs or a validation.
    Simulate(Box<crate::sim::result::Output>),
    Compare(Box<crate::compare::Comparison>),
    /// A report's `report.json`: its Markdown document in the table and Markdown formats.
    Report(Box<crate::report::Report>),
    /// `vm bench --json`.
    VmBench(Box<crate::vm::bench::BenchReport>),
    /// `vm count --json`.
    VmCount(Box<crate::vm::count::CountReport>),
}

impl Saved {
    /// Whether `format` is one this document has (a report has no CSV form; only probe,
    /// detect and report documents have an OpenMetrics form).
    pub fn check(&self, format: Format) -> Result<(), ConfigError> {
        if matches!(self, Saved::Report(_)) && format == Format::Csv {
            return Err(ConfigError::Invalid(
                "a report has no CSV form: use --markdown (report.md) or --json".into(),
            ));
        }
        let metrics = matches!(self, Saved::Probe(_) | Saved::Detect(_) | Saved::Report(_));
        if format == Format::OpenMetrics && !metrics {
            return Err(ConfigError::Invalid(super::NO_OPENMETRICS.into()));
        }
        Ok(())
    }

    /// The document in `format`, as the command that wrote it prints it.
    pub fn export(&self, format: Format) -> crate::error::Result<Vec<u8>> {
        self.check(format)?;
        match self {
            Saved::Probe(r) => export(r.as_ref(), format),
            Saved::Detect(r) => export(r.as_ref(), format),
            Saved::Run(r) => export(r.as_ref(), format),
            Saved::VmGuest(r) => export(r.as_ref(), format),
            Saved::VmExits(r) => export(r.as_ref(), format),
            Saved::Simulate(r) => export(r.as_ref(), format),
            Saved::Compare(r) => export(r.as_ref(), format),
            Saved::VmBench(r) => export(r.as_ref(), format),
            Saved::VmCount(r) => export(r.as_ref(), format),
            Saved::Report(r) if format == Format::Json => {
                json(&super::Tagged::new(crate::input::Kind::Report, r.as_ref()))
            }
            Saved::Report(r) if format == Format::OpenMetrics => {
                Ok(super::openmetrics::report(r).into_bytes())
            }
            Saved::Report(r) => Ok(ReportDocument(r).markdown()?.into_bytes()),
        }
    }
}
