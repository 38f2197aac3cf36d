//! The kernel's own multigrain counters, read on the running machine.
//!
//! From 6.13 (the multigrain series, "fs: add percpu counters for significant multigrain
//! timestamp events"), with `CONFIG_DEBUG_FS`, fs/inode.c `mgts_show()` prints four per-CPU
//! sums to `/sys/kernel/debug/multigrain_timestamps`: `ctime_updates ctime_swaps fine_stamps
//! floor_swaps`:
//!
//! - `ctime_updates`: calls of `inode_set_ctime_current()` on a multigrain inode;
//! - `ctime_swaps`: of those, the ones that changed the stored `i_ctime_nsec` (a cmpxchg that
//!   succeeded): the ctime that was actually moved;
//! - `fine_stamps`: fine-grained stamps `inode_set_ctime_current()` took
//!   (`ktime_get_real_ts64_mg()`, because the ctime was queried and the coarse time was not
//!   later than it);
//! - `floor_swaps`: moves of the timekeeper's floor (kernel/time/timekeeping.c
//!   `timekeeping_get_mg_floor_swaps()`).
//!
//! The counters are global: every task's timestamps land in them. Read around a pinned loop of
//! many iterations, the rest of the machine adds a small fraction.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// The counters' debugfs file.
pub const FILE: &str = "/sys/kernel/debug/multigrain_timestamps";

/// The counters in the order `mgts_show()` prints them.
pub const COUNTERS: [&str; 4] = ["ctime_updates", "ctime_swaps", "fine_stamps", "floor_swaps"];

/// Bytes read from the file at most: four numbers on one line.
const READ_LIMIT: u64 = 256;

/// The counters in the file's text (four unsigned numbers, one line).
pub fn parse(text: &str) -> Result<BTreeMap<String, u64>> {
    let numbers: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse::<u64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| crate::failure!("{FILE}: '{}': {e}", text.trim()))?;
    crate::ensure!(
        numbers.len() == COUNTERS.len(),
        "{FILE}: {} numbers in '{}', 4 expected",
        numbers.len(),
        text.trim()
    );
    Ok(COUNTERS
        .iter()
        .map(|c| c.to_string())
        .zip(numbers)
        .collect())
}

/// The counters now; `Err` says why they cannot be read (debugfs not mounted, a kernel before
/// 6.13 or without `CONFIG_DEBUG_FS`, not root).
pub fn read() -> std::result::Result<BTreeMap<String, u64>, String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(FILE)
        .and_then(|f| f.take(READ_LIMIT).read_to_string(&mut text))
        .map_err(|e| format!("no {FILE} ({e})"))?;
    parse(&text).map_err(|e| format!("{e:#}"))
}

/// The counters a pair's two sides moved, per iteration of each task (`ctime_updates`,
/// `ctime_swaps`, `fine_stamps`, `floor_swaps`), read around every measured block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairCounts {
    /// Where they come from: [`FILE`].
    pub source: String,
    pub queried: BTreeMap<String, f64>,
    pub control: BTreeMap<String, f64>,
}

impl PairCounts {
    /// queried − control of one counter, per iteration.
    pub fn delta(&self, counter: &str) -> Option<f64> {
        Some(self.queried.get(counter)? - self.control.get(counter)?)
    }
}

/// Sums a pair's counter moves side by side while its blocks run; one failed read makes the
/// whole tally absent, with the reason.
#[derive(Debug, Clone)]
pub struct Tally {
    sums: [[u64; 4]; 2],
    iterations: [u64; 2],
    absent: Option<String>,
}

impl Tally {
    /// A tally that reads the counters, or one that says why it cannot.
    pub fn start() -> Tally {
        Tally {
            sums: [[0; 4]; 2],
            iterations: [0; 2],
            absent: read().err(),
        }
    }

    /// The counters before a block (`None` once absent).
    pub fn before(&mut self) -> Option<BTreeMap<String, u64>> {
        self.now()
    }

    /// Adds what a block of `iterations` (per task × tasks) moved since `before`.
    pub fn after(&mut self, before: Option<BTreeMap<String, u64>>, queried: bool, iterations: u64) {
        let (Some(b), Some(a)) = (before, self.now()) else {
            return;
        };
        let side = usize::from(!queried);
        for (k, c) in COUNTERS.iter().enumerate() {
            self.sums[side][k] += a[*c].saturating_sub(b[*c]);
        }
        self.iterations[side] += iterations;
    }

    /// The counters now; the first failed read makes the tally absent.
    fn now(&mut self) -> Option<BTreeMap<String, u64>> {
        if self.absent.is_some() {
            return None;
        }
        read().map_err(|e| self.absent = Some(e)).ok()
    }

    /// The counts per iteration, or why there are none.
    pub fn finish(self) -> std::result::Result<PairCounts, String> {
        if let Some(e) = self.absent {
            return Err(e);
        }
        if self.iterations.contains(&0) {
            return Err("no block was counted on one side".into());
        }
        let side = |s: usize| {
            COUNTERS
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    (
                        c.to_string(),
                        self.sums[s][k] as f64 / self.iterations[s] as f64,
                    )
                })
                .collect()
        };
        Ok(PairCounts {
            source: FILE.into(),
            queried: side(0),
            control: side(1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counters_parse_and_bad_text_is_an_error() {
        let c = parse("120 118 40 3\n").unwrap();
        assert_eq!(c["ctime_updates"], 120);
        assert_eq!(c["fine_stamps"], 40);
        assert_eq!(c["floor_swaps"], 3);
        assert!(parse("1 2 3").is_err());
        assert!(parse("1 2 x 4").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn a_tally_divides_each_side_by_its_own_iterations() {
        let mut t = Tally {
            sums: [[0; 4]; 2],
            iterations: [0; 2],
            absent: None,
        };
        // What after() adds, without reading the machine's file.
        t.sums[0] = [200, 100, 100, 100];
        t.iterations[0] = 100;
        t.sums[1] = [200, 1, 0, 0];
        t.iterations[1] = 200;
        let c = t.clone().finish().unwrap();
        assert_eq!(c.queried["fine_stamps"], 1.0);
        assert_eq!(c.control["ctime_updates"], 1.0);
        assert_eq!(c.delta("ctime_swaps"), Some(1.0 - 0.005));
        t.iterations[1] = 0;
        assert!(t.finish().is_err());
    }
}
