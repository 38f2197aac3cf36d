//! What the host asks the guest to do, typed: one [`Plan`] per boot, serialized as JSON into
//! the initramfs (`/tscope-plan.json`, an archive appended to the boot's own) and read back by
//! tscope running as PID 1. The kernel command line carries only the kernel's own parameters
//! (`console=`, `clocksource=`, what `--append` adds). Every default is the host's: the guest
//! has none of its own, so the two sides cannot disagree.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::clock::Clocksource;
use super::cpio;
use crate::error::{Context, Result};
use crate::trace::FsKind;
use crate::workload::WorkloadName;

/// Where the plan lies in the guest's root.
pub(crate) const PATH: &str = "tscope-plan.json";

/// One boot's work, by room.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "room", rename_all = "snake_case", deny_unknown_fields)]
pub enum Plan {
    /// `vm guest`: the probe and the verdicts, on the boot's clocksource.
    Matrix {
        /// Every probe source, not only the matrix's.
        all_sources: bool,
    },
    /// `vm count`: kernel counts of each workload on each filesystem.
    Count {
        workloads: Vec<WorkloadName>,
        iterations: u64,
        filesystems: Vec<FsKind>,
    },
    /// `vm bench`: throughput per clocksource, alternated.
    Bench(BenchPlan),
}

/// One `vm bench` boot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchPlan {
    pub workloads: Vec<WorkloadName>,
    /// In the order this boot's rounds start: the first is the boot's `clocksource=`.
    pub clocksources: Vec<Clocksource>,
    pub filesystems: Vec<FsKind>,
    pub rounds: u32,
    /// The length of one slot (calibrated to iterations in the guest).
    pub slot_ms: u64,
    /// Iterations per slot, or 0 to calibrate to `slot_ms`.
    pub iterations: u64,
    pub seed: u64,
    /// Reads per clocksource for the in-guest read count and timing (0: none).
    pub reads: u64,
    /// Iterations per block of the live knob pairs (0: none).
    pub pair_iterations: u64,
}

impl Plan {
    /// The plan as one file of an initramfs.
    pub(crate) fn entry(&self) -> Result<cpio::Entry> {
        let json = serde_json::to_vec(self).context("serializing the guest plan")?;
        Ok(cpio::Entry::file(PATH, 0o644, json))
    }

    /// `base` followed by an archive of the plan, written beside it as
    /// `initramfs-TAG-plan.cpio` (the kernel unpacks concatenated archives in order).
    pub(crate) fn initramfs(&self, base: &Path, tag: &str) -> Result<PathBuf> {
        let mut bytes =
            std::fs::read(base).with_context(|| format!("reading '{}'", base.display()))?;
        bytes.extend(cpio::write(&[self.entry()?])?);
        let path = base.with_file_name(format!("initramfs-{tag}-plan.cpio"));
        std::fs::write(&path, bytes).with_context(|| format!("writing '{}'", path.display()))?;
        Ok(path)
    }

    /// The plan in the guest's root (`root` is `/` there): `None` when the initramfs carries
    /// none.
    pub(crate) fn read_in_guest(root: &Path) -> Result<Option<Plan>> {
        let path = root.join(PATH);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading '{}'", path.display())),
        };
        serde_json::from_str(&text)
            .map(Some)
            .with_context(|| format!("the guest plan '{}' is not one this tscope writes", PATH))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_plan() -> Vec<Plan> {
        vec![
            Plan::Matrix { all_sources: true },
            Plan::Count {
                workloads: vec![WorkloadName::Pipe1, WorkloadName::WriteStat],
                iterations: 10_000,
                filesystems: vec![FsKind::Tmpfs, FsKind::Ext4],
            },
            Plan::Bench(BenchPlan {
                workloads: vec![WorkloadName::Vfsmix],
                clocksources: vec![Clocksource::Hpet, Clocksource::Tsc],
                filesystems: vec![FsKind::Xfs],
                rounds: 12,
                slot_ms: 60,
                iterations: 0,
                seed: 1001,
                reads: 0,
                pair_iterations: 2000,
            }),
        ]
    }

    #[test]
    fn every_plan_round_trips_through_the_initramfs() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("initramfs.cpio");
        let base_entries = vec![cpio::Entry::dir("dev")];
        std::fs::write(&base, cpio::write(&base_entries).unwrap()).unwrap();
        for (i, plan) in every_plan().into_iter().enumerate() {
            let path = plan.initramfs(&base, &i.to_string()).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            // The base archive first, untouched; then the plan's.
            let base_len = std::fs::metadata(&base).unwrap().len() as usize;
            assert_eq!(&bytes[..base_len], &std::fs::read(&base).unwrap()[..]);
            let appended = cpio::parse(&bytes[base_len..]).unwrap();
            let file = appended.iter().find(|e| e.name == PATH).unwrap();
            let root = dir.path().join(format!("root{i}"));
            std::fs::create_dir(&root).unwrap();
            std::fs::write(root.join(PATH), &file.data).unwrap();
            assert_eq!(Plan::read_in_guest(&root).unwrap(), Some(plan));
        }
    }

    #[test]
    fn no_plan_is_none_and_a_damaged_one_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Plan::read_in_guest(dir.path()).unwrap(), None);
        std::fs::write(dir.path().join(PATH), r#"{"room": "count", "rounds": 3}"#).unwrap();
        let e = Plan::read_in_guest(dir.path()).unwrap_err();
        assert!(
            format!("{e:#}").contains("not one this tscope writes"),
            "{e:#}"
        );
    }
}
