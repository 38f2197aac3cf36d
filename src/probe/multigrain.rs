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
/// `ctime_swaps`, `fine_stamps`, `floor_swaps`), read around every measured block, and the
/// machine's background rate, which [`PairCounts::delta`] takes out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairCounts {
    /// Where they come from: [`FILE`].
    pub source: String,
    pub queried: BTreeMap<String, f64>,
    pub control: BTreeMap<String, f64>,
    /// The machine's own rate of each counter, per second, read over idle windows before and
    /// after the blocks ([`BACKGROUND_WINDOW`] each); absent in files written before it was.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub background_per_s: BTreeMap<String, f64>,
    /// Seconds per iteration of each side's blocks: what the background adds to a side is its
    /// rate times these (0 in files written before they were kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub queried_s_per_iteration: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub control_s_per_iteration: f64,
    /// Why `journal_commits` is not among the counters (tracefs not mounted, no journal
    /// tracepoint); absent where it is, and in files written before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_absent: Option<String>,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl PairCounts {
    /// queried − control of one counter, per iteration, less what the machine's background
    /// adds to the longer side beyond the shorter (its rate times the sides' difference in
    /// time per iteration: a side's own count is left as read, the background in it being
    /// the same share of both wherever their times are).
    pub fn delta(&self, counter: &str) -> Option<f64> {
        let background = self.background_per_s.get(counter).copied().unwrap_or(0.0)
            * (self.queried_s_per_iteration - self.control_s_per_iteration);
        Some(self.queried.get(counter)? - self.control.get(counter)? - background)
    }
}

/// How long each idle window lasts that measures the machine's background rate of the
/// counters (one before a pair's blocks, one after).
pub const BACKGROUND_WINDOW: std::time::Duration = std::time::Duration::from_millis(50);

/// The counters before a block, and when they were read.
pub type Before = Option<(BTreeMap<String, u64>, std::time::Instant)>;

/// Sums a pair's counter moves side by side while its blocks run, with each side's time, and
/// the machine's background over idle windows; one failed read makes the whole tally absent,
/// with the reason. Beside the multigrain counters it counts journal commits
/// ([`super::journal`]) where tracefs lets it.
#[derive(Debug)]
pub struct Tally {
    /// The counters read: [`COUNTERS`], then [`super::journal::COUNTER`] where counted.
    names: Vec<&'static str>,
    sums: [Vec<u64>; 2],
    iterations: [u64; 2],
    /// Seconds each side's blocks took.
    seconds: [f64; 2],
    /// The counters moved over the idle windows, and their seconds.
    idle: (Vec<u64>, f64),
    absent: Option<String>,
    journal: Option<super::journal::Journal>,
    /// Why journal commits are not counted.
    pub journal_absent: Option<String>,
}

impl Tally {
    /// A tally that reads the counters (after a first idle window), or one that says why it
    /// cannot.
    pub fn start() -> Tally {
        let absent = read().err();
        let (journal, journal_absent) = match absent {
            Some(_) => (None, None),
            None => match super::journal::Journal::open() {
                Ok(j) => (Some(j), None),
                Err(e) => (None, Some(e)),
            },
        };
        let mut names = COUNTERS.to_vec();
        if journal.is_some() {
            names.push(super::journal::COUNTER);
        }
        let n = names.len();
        let mut t = Tally {
            names,
            sums: [vec![0; n], vec![0; n]],
            iterations: [0; 2],
            seconds: [0.0; 2],
            idle: (vec![0; n], 0.0),
            absent,
            journal,
            journal_absent,
        };
        t.idle_window();
        t
    }

    /// Reads the counters around [`BACKGROUND_WINDOW`] of sleep: the rest of the machine.
    fn idle_window(&mut self) {
        let Some((b, t0)) = self.before() else {
            return;
        };
        std::thread::sleep(BACKGROUND_WINDOW);
        let Some(a) = self.now() else {
            return;
        };
        for (k, c) in self.names.iter().enumerate() {
            self.idle.0[k] += a[*c].saturating_sub(b[*c]);
        }
        self.idle.1 += t0.elapsed().as_secs_f64();
    }

    /// The counters before a block, and the time (`None` once absent).
    pub fn before(&mut self) -> Before {
        Some((self.now()?, std::time::Instant::now()))
    }

    /// Adds what a block of `iterations` (per task × tasks) moved since `before`, and its time.
    pub fn after(&mut self, before: Before, queried: bool, iterations: u64) {
        let (Some((b, t0)), Some(a)) = (before, self.now()) else {
            return;
        };
        let side = usize::from(!queried);
        for (k, c) in self.names.iter().enumerate() {
            self.sums[side][k] += a[*c].saturating_sub(b[*c]);
        }
        self.iterations[side] += iterations;
        self.seconds[side] += t0.elapsed().as_secs_f64();
    }

    /// The counters now; the first failed read makes the tally absent.
    fn now(&mut self) -> Option<BTreeMap<String, u64>> {
        if self.absent.is_some() {
            return None;
        }
        let mut now = read().map_err(|e| self.absent = Some(e)).ok()?;
        if let Some(j) = &self.journal {
            let commits = j.read().map_err(|e| self.absent = Some(e)).ok()?;
            now.insert(super::journal::COUNTER.to_string(), commits);
        }
        Some(now)
    }

    /// The counts per iteration, less the background over each side's time (after a last
    /// idle window), or why there are none.
    pub fn finish(mut self) -> std::result::Result<PairCounts, String> {
        self.idle_window();
        self.counts()
    }

    /// The counts per iteration, less the background over each side's time.
    fn counts(&self) -> std::result::Result<PairCounts, String> {
        if let Some(e) = &self.absent {
            return Err(e.clone());
        }
        if self.iterations.contains(&0) {
            return Err("no block was counted on one side".into());
        }
        let rate = |k: usize| {
            if self.idle.1 > 0.0 {
                self.idle.0[k] as f64 / self.idle.1
            } else {
                0.0
            }
        };
        let side = |s: usize| {
            self.names
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
            background_per_s: self
                .names
                .iter()
                .enumerate()
                .map(|(k, c)| (c.to_string(), rate(k)))
                .collect(),
            queried_s_per_iteration: self.seconds[0] / self.iterations[0] as f64,
            control_s_per_iteration: self.seconds[1] / self.iterations[1] as f64,
            journal_absent: self.journal_absent.clone(),
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
            names: COUNTERS.to_vec(),
            sums: [vec![0; 4], vec![0; 4]],
            iterations: [0; 2],
            seconds: [2.0, 1.0],
            idle: (vec![0; 4], 0.0),
            absent: None,
            journal: None,
            journal_absent: None,
        };
        // What after() adds, without reading the machine's file.
        t.sums[0] = vec![200, 100, 100, 100];
        t.iterations[0] = 100;
        t.sums[1] = vec![200, 1, 0, 0];
        t.iterations[1] = 200;
        let c = t.counts().unwrap();
        assert_eq!(c.queried["fine_stamps"], 1.0);
        assert_eq!(c.control["ctime_updates"], 1.0);
        assert_eq!(c.delta("ctime_swaps"), Some(1.0 - 0.005));
        // The rest of the machine moved ctime_updates 10 times a second while idle: the
        // queried side's iterations take 2 s / 100, the control's 1 s / 200, so the queried
        // side's background is 10 × (0.02 − 0.005) more per iteration, taken out of Δ only.
        t.idle = (vec![20, 0, 0, 0], 2.0);
        let c = t.counts().unwrap();
        assert_eq!(c.background_per_s["ctime_updates"], 10.0);
        assert_eq!(c.queried["ctime_updates"], 2.0);
        let d = c.delta("ctime_updates").unwrap();
        assert!(
            (d - (2.0 - 1.0 - 10.0 * (0.02 - 0.005))).abs() < 1e-12,
            "{d}"
        );
        assert_eq!(c.delta("fine_stamps"), Some(1.0));
        t.iterations[1] = 0;
        assert!(t.counts().is_err());
    }
}
