//! The guest side of the live knob ([`super::knob`]): the pair of [`crate::workload::pair`]
//! on every mounted file system, one and four writes per query, printed as the `pairs`
//! section after the rounds of the first boot.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::trace::FsKind;
use crate::vm::boot::clock::{Clocksource, ClocksourceName};
use crate::workload::pair::{self, PairConfig, PairResult, Pattern};

/// The calibration's pattern, then the one held to it.
pub(crate) const PATTERNS: [Pattern; 2] =
    [Pattern::Write { writes: 1 }, Pattern::Write { writes: 4 }];

/// ABBA repetitions of each pair in the guest.
pub(crate) const REPETITIONS: u32 = 6;

/// The `pairs` section the guest prints after its rounds (JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GuestPairs {
    /// The clocksource the pairs ran on, as `current_clocksource` read after the switch.
    pub clocksource: ClocksourceName,
    pub pairs: Vec<PairResult>,
    pub errors: Vec<String>,
}

/// In the guest: every pattern's pair on every `(fs, dir)`, `iterations` per block.
pub(crate) fn run_in_guest(
    clocksource: Clocksource,
    dirs: &[(FsKind, String)],
    iterations: u64,
) -> GuestPairs {
    let (used, error) = super::clocksource::switch(clocksource);
    let mut out = GuestPairs {
        clocksource: used,
        ..GuestPairs::default()
    };
    out.errors.extend(error);
    for (fs, dir) in dirs {
        for pattern in PATTERNS {
            let mut cfg = PairConfig::new(PathBuf::from(dir), pattern);
            cfg.iterations = iterations;
            cfg.block = None;
            cfg.repetitions = REPETITIONS;
            cfg.min_repetitions = REPETITIONS;
            match pair::measure(&cfg) {
                Ok(p) => out.pairs.push(p),
                Err(e) => out
                    .errors
                    .push(format!("{fs}: the {} pair: {e:#}", pattern.name())),
            }
        }
    }
    out
}
