//! Raw arguments become validated configurations: the rest of the code never sees an invalid
//! combination.

use std::time::Duration;

use crate::cli::{DetectArgs, OutputArgs, ProbeArgs, ReportArgs};
use crate::detect::{self, DetectConfig};
use crate::error::ConfigError;
use crate::export::Format;
use crate::gather::ReportConfig;
use crate::probe::{ProbeConfig, Source};

impl TryFrom<&ProbeArgs> for ProbeConfig {
    type Error = ConfigError;

    fn try_from(a: &ProbeArgs) -> Result<Self, ConfigError> {
        let mut sources = Vec::new();
        for s in &a.sources {
            let src: Source = s.trim().parse()?;
            if !sources.contains(&src) {
                sources.push(src);
            }
        }
        let mut cfg = ProbeConfig::new(sources, a.sampling.quick, a.sampling.seed);
        cfg.pin = !a.no_pin;
        Ok(cfg)
    }
}

impl From<&OutputArgs> for Format {
    fn from(o: &OutputArgs) -> Self {
        if o.json {
            Format::Json
        } else if o.csv {
            Format::Csv
        } else if o.markdown {
            Format::Markdown
        } else {
            Format::Table
        }
    }
}

impl TryFrom<&DetectArgs> for DetectConfig {
    type Error = ConfigError;

    fn try_from(a: &DetectArgs) -> Result<Self, ConfigError> {
        for name in &a.fail_on {
            let known = detect::VERDICT_NAMES.contains(&name.as_str())
                || name.strip_prefix("vdso_fallback:").is_some_and(|c| {
                    c == "gettimeofday" || detect::vdso_clocks().any(|k| k.name() == c)
                });
            if !known {
                return Err(ConfigError::UnknownVerdict(name.clone()));
            }
        }
        if a.sync_ms > 60_000 {
            return Err(ConfigError::OutOfRange {
                name: "sync-ms",
                what: "at most 60000",
                value: a.sync_ms.to_string(),
            });
        }
        Ok(DetectConfig {
            seed: a.seed,
            thorough: a.thorough,
            sync_budget: Duration::from_millis(a.sync_ms),
            emulate_trap: false,
            fail_on: a.fail_on.clone(),
        })
    }
}

impl TryFrom<&ReportArgs> for ReportConfig {
    type Error = ConfigError;

    fn try_from(a: &ReportArgs) -> Result<Self, ConfigError> {
        if a.sync_ms > 60_000 {
            return Err(ConfigError::OutOfRange {
                name: "sync-ms",
                what: "at most 60000",
                value: a.sync_ms.to_string(),
            });
        }
        let mut command = format!("tscope report --out {}", a.out.display());
        if a.sampling.quick {
            command += " --quick";
        }
        if a.sampling.seed != 1 {
            command += &format!(" --seed {}", a.sampling.seed);
        }
        if a.no_workloads {
            command += " --no-workloads";
        }
        if a.vm {
            command += " --vm";
        }
        Ok(ReportConfig {
            quick: a.sampling.quick,
            seed: a.sampling.seed,
            sync_budget: Duration::from_millis(a.sync_ms),
            emulate_trap: false,
            workloads: !a.no_workloads,
            vm: a.vm,
            command,
        })
    }
}
