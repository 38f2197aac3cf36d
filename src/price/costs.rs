//! What each kind of work costs a replay: the reads, the tick, and every [`Term`] per
//! filesystem where measured.

use super::Term;
use crate::kernel::ClockFn;
use crate::trace::FsKind;

/// A price per filesystem, indexed by `FsKind as usize`. The length is a literal (a constant
/// path in an array type inside this struct breaks rustc 1.95's MIR check); the assertion
/// below keeps it in step with [`FsKind::ALL`].
pub type ByFs = [Option<f64>; 7];
const _: () = assert!(crate::trace::FS_KINDS == 7);
const _: () = assert!(Term::COUNT == 8);

/// One term's price: on a filesystem with a price of its own, that; on any other, `default_ns`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TermPrice {
    pub default_ns: f64,
    pub by_fs: ByFs,
}

impl TermPrice {
    /// Nothing priced: 0 on every filesystem.
    pub const ZERO: TermPrice = TermPrice {
        default_ns: 0.0,
        by_fs: [None; 7],
    };

    /// `v` on every filesystem.
    pub const fn uniform(v: f64) -> TermPrice {
        TermPrice {
            default_ns: v,
            by_fs: [None; 7],
        }
    }

    /// The price on `fs`.
    #[inline]
    pub fn on(&self, fs: FsKind) -> f64 {
        self.by_fs[fs as usize].unwrap_or(self.default_ns)
    }
}

/// What each kind of work costs, in ns, and the tick of the coarse clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Costs {
    /// One counter read (Linux `ktime_get_real_ts64`, BSD `nanotime`/`microtime`).
    pub precise_read_ns: f64,
    /// One coarse read (`ktime_get_coarse_real_ts64`, `getnanotime`, `time_second`).
    pub coarse_read_ns: f64,
    /// Period of the coarse clock (the tick).
    pub tick_ns: f64,
    /// Each term's price, indexed by `Term as usize` (the length a literal, as [`ByFs`]'s).
    pub terms: [TermPrice; 8],
}

impl Costs {
    /// Reads at these prices and the coarse clock's tick, no term priced.
    pub const fn reads(precise_read_ns: f64, coarse_read_ns: f64, tick_ns: f64) -> Costs {
        Costs {
            precise_read_ns,
            coarse_read_ns,
            tick_ns,
            terms: [TermPrice::ZERO; Term::COUNT],
        }
    }

    /// The same costs without any term: the reads alone at the syscall pair's prices.
    pub fn reads_only(self) -> Costs {
        Costs::reads(self.precise_read_ns, self.coarse_read_ns, self.tick_ns)
    }

    /// The price of one `term` on `fs`.
    #[inline]
    pub fn on(&self, term: Term, fs: FsKind) -> f64 {
        self.terms[term as usize].on(fs)
    }

    /// `term`'s prices.
    #[inline]
    pub fn term(&self, term: Term) -> &TermPrice {
        &self.terms[term as usize]
    }

    /// The same costs with `term` at `price`.
    pub fn with(mut self, term: Term, price: TermPrice) -> Costs {
        self.terms[term as usize] = price;
        self
    }

    /// The same costs with `term` at `v` on `fs` only.
    pub fn with_on(mut self, term: Term, fs: FsKind, v: f64) -> Costs {
        self.terms[term as usize].by_fs[fs as usize] = Some(v);
        self
    }

    #[inline]
    pub(crate) fn read_cost(&self, clock: ClockFn) -> f64 {
        if clock.is_counter() {
            self.precise_read_ns
        } else {
            self.coarse_read_ns
        }
    }
}
