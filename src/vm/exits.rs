//! `tscope vm exits`: placeholder.
use crate::report::{Exporter, Format};
use anyhow::Result;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Exits {}

#[derive(Debug)]
pub struct ExitsReport<'a>(pub &'a Exits);

impl Exporter for ExitsReport<'_> {
    fn export(&self, _format: Format) -> anyhow::Result<Vec<u8>> {
        Ok(Vec::new())
    }
}

pub fn run(_iterations: u32) -> Result<Exits> {
    anyhow::bail!("not yet")
}
