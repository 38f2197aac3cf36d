//! Raw arguments become validated configurations: the rest of the code never sees an invalid
//! combination.

use crate::cli::{OutputArgs, ProbeArgs};
use crate::error::ConfigError;
use crate::probe::{ProbeConfig, Source};
use crate::report::Format;

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
        } else if o.markdown {
            Format::Markdown
        } else {
            Format::Table
        }
    }
}
