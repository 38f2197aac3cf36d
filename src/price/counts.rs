//! What the model counts for a live pair's loops (each side replayed at its measured speed,
//! `crate::sim::update_price::counts_at`): its reads priced at the syscall pair's prices, and
//! how many units of each [`Term`] it takes.

use super::{Costs, Term};
use crate::trace::FsKind;

/// What the model counts for one side of a pair (or a difference of sides), per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Counts {
    /// The timestamp reads at the syscall pair's prices (`precise_read_ns`, `coarse_read_ns`),
    /// no term priced (ns).
    pub reads_ns: f64,
    /// Units of each term, indexed by `Term as usize`: coarse reads that returned the floor,
    /// fine reads (`ktime_get_real_ts64`, `ktime_get_real_ts64_mg`), stats that mark a
    /// ctime queried, inode timestamp updates.
    pub terms: [f64; Term::COUNT],
    /// Fine-grained ctime stamps (`ktime_get_real_ts64_mg` reads): what the kernel's
    /// `fine_stamps` counter counts ([`crate::probe::multigrain`]).
    pub fine_stamps: f64,
    /// Multigrain ctimes moved (`inode_set_ctime_current()` storing a new value): what the
    /// kernel's `ctime_swaps` counter counts.
    pub ctime_moves: f64,
}

impl std::ops::Index<Term> for Counts {
    type Output = f64;
    fn index(&self, t: Term) -> &f64 {
        &self.terms[t as usize]
    }
}

impl Counts {
    /// The reads and every term at `costs`' prices on `fs` (ns).
    pub fn priced_ns(&self, costs: &Costs, fs: FsKind) -> f64 {
        self.reads_ns + self.terms_ns(costs, fs, &Term::ALL)
    }

    /// The units of `terms` at `costs`' prices on `fs` (ns).
    pub fn terms_ns(&self, costs: &Costs, fs: FsKind, terms: &[Term]) -> f64 {
        terms.iter().map(|&t| self[t] * costs.on(t, fs)).sum()
    }

    fn map2(self, o: Counts, f: impl Fn(f64, f64) -> f64) -> Counts {
        let mut terms = self.terms;
        for (a, b) in terms.iter_mut().zip(o.terms) {
            *a = f(*a, b);
        }
        Counts {
            reads_ns: f(self.reads_ns, o.reads_ns),
            terms,
            fine_stamps: f(self.fine_stamps, o.fine_stamps),
            ctime_moves: f(self.ctime_moves, o.ctime_moves),
        }
    }
}

impl std::ops::Div<f64> for Counts {
    type Output = Counts;
    fn div(self, n: f64) -> Counts {
        self.map2(Counts::default(), |a, _| a / n)
    }
}

impl std::ops::Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        self.map2(o, |a, b| a + b)
    }
}

impl std::ops::Sub for Counts {
    type Output = Counts;
    fn sub(self, o: Counts) -> Counts {
        self.map2(o, |a, b| a - b)
    }
}
