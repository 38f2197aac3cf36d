//! The replays of one streaming pass: the importer on the calling thread hands ops in batches
//! to replay threads, each op to every replay in trace order. A replay can see the log as if
//! every regular path were on one filesystem ([`Fed::on`]), so that the per-filesystem rows
//! cost no second read of the log (a FIFO can be read only once).

use std::sync::mpsc::sync_channel;
use std::sync::Arc;

use crate::error::Context;
use crate::kernel::{table_index, Action, Policy, PolicyKind};
use crate::sim::replay::{Costs, Replay};
use crate::trace::strace::import::{ImportSummary, StraceImport};
use crate::trace::{FsKind, Op, Syscall, NO_INODE};

/// Ops per batch handed from the importer to the replays.
const BATCH: usize = 8192;

/// Batches in flight to each replay thread (with the one filling and the ones replaying, a
/// handful exist: memory stays flat).
const IN_FLIGHT: usize = 2;

/// Threads the replays are split over.
const REPLAY_THREADS: usize = 2;

/// One replay of the pass, and the filesystem it puts every regular path on.
#[derive(Debug)]
pub struct Fed<'t> {
    pub replay: Replay<'t>,
    /// `Some(fs)`: each op as the import with `--fs fs` gives it ([`on_fs`]); `None`: as
    /// imported.
    pub on: Option<FsKind>,
}

impl Fed<'_> {
    #[inline]
    fn step(&mut self, op: Op) {
        self.replay.step(match self.on {
            Some(fs) => on_fs(op, fs),
            None => op,
        });
    }

    /// Whether an op of `syscall` on `fs`, as imported, has no timestamp work here.
    fn effectless(&self, syscall: Syscall, fs: FsKind) -> bool {
        let moved = match self.on {
            // A file's op moves to `to`; one without an inode (on `other`) stays: both count.
            Some(to) if fs != FsKind::Pipefs => self.replay.effectless_at(table_index(syscall, to)),
            _ => true,
        };
        moved && self.replay.effectless_at(table_index(syscall, fs))
    }
}

/// `op` as an import with every regular path on `fs` (`--fs fs`) gives it. The importer
/// puts a file's op on its mount's filesystem, a pipe's on pipefs, and an op without an inode
/// (a pseudo file's, a socket's: no timestamp work) on `other`; `--fs` moves only the files'.
/// Everything else (inode identity, times) does not depend on the mounts, so that one import
/// serves every filesystem (`import_with_fs_is_the_import_moved_to_fs` checks it).
#[inline]
pub fn on_fs(mut op: Op, fs: FsKind) -> Op {
    if op.inode != NO_INODE && op.fs != FsKind::Pipefs {
        op.fs = fs;
    }
    op
}

/// Imports on this thread and replays on a second one, in batches of [`BATCH`] ops, so that
/// parsing and the per-policy replays overlap on two cores. Each replay sees every op in trace
/// order (but for the effectless ones, counted in bulk), as in a single loop: the totals are the
/// same to the bit.
pub fn pipelined<R: std::io::Read + Send>(
    import: StraceImport<R>,
    feds: &mut [Fed],
) -> crate::error::Result<ImportSummary> {
    let mut effectless = vec![false; Syscall::ALL.len() * FsKind::ALL.len()];
    for s in Syscall::ALL {
        for f in FsKind::ALL {
            effectless[table_index(s, f)] = feds.iter().all(|r| r.effectless(s, f));
        }
    }
    std::thread::scope(|scope| {
        // The replays on two threads (each replay on one, seeing every op in order), so that
        // the scheduler can pair each half with the parsing or the importing thread on two
        // cores: three unequal threads on two cores left one core idle part of the time.
        let per = feds.len().div_ceil(REPLAY_THREADS).max(1);
        let mut senders = Vec::new();
        let mut workers = Vec::new();
        for part in feds.chunks_mut(per) {
            let (tx, rx) = sync_channel::<Arc<Vec<Op>>>(IN_FLIGHT);
            senders.push(tx);
            workers.push(
                std::thread::Builder::new()
                    .name("tscope-replay".into())
                    .spawn_scoped(scope, move || {
                        for batch in rx {
                            // Replay by replay: each one's state stays in cache across the batch.
                            for r in part.iter_mut() {
                                for &op in batch.iter() {
                                    r.step(op);
                                }
                            }
                        }
                        part
                    })
                    .context("starting the replay threads")?,
            );
        }
        let mut batch = Vec::with_capacity(BATCH);
        let mut sent_all = true;
        let mut push = |op: Op| {
            if !sent_all {
                return;
            }
            batch.push(op);
            if batch.len() == BATCH {
                let full = Arc::new(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
                // Only fails if a worker is gone (it panicked): reported at the join.
                sent_all = senders.iter().all(|tx| tx.send(Arc::clone(&full)).is_ok());
            }
        };
        // Ops that no policy stamps, with a time of their own, are counted instead of sent
        // (most of a log): stepping one only counts it and sets the clock to its time, which
        // the next op with a time sets again. The last one is held back, and sent after all
        // when the op after it has no time.
        let (mut held, mut skipped) = (None::<Op>, 0u64);
        let imported = import.for_each(|op| {
            if op.time_ns.is_some()
                && !op.ends_iteration
                && effectless[table_index(op.syscall, op.fs)]
            {
                skipped += u64::from(held.replace(op).is_some());
                return;
            }
            if let Some(h) = held.take() {
                if op.time_ns.is_none() {
                    push(h);
                } else {
                    skipped += 1;
                }
            }
            push(op);
        });
        skipped += u64::from(held.is_some());
        if sent_all && !batch.is_empty() {
            let last = Arc::new(batch);
            for tx in &senders {
                let _ = tx.send(Arc::clone(&last));
            }
        }
        drop(senders);
        for w in workers {
            let part = w
                .join()
                .map_err(|_| crate::failure!("a replay thread panicked"))?;
            for r in part {
                r.replay.count_skipped(skipped);
            }
        }
        imported.map_err(|e| crate::error::Error::Other(Box::new(e)))
    })
}

/// A replay's inputs: its model's table, the policy's kind, the model's costs and the
/// filesystem its regular paths are put on.
pub type ReplayKey<'t> = (&'t [Action], PolicyKind, Costs, Option<FsKind>);

/// A group of replays: a model's table, its policies, its costs, and the filesystem its
/// regular paths are put on (`None`: as imported).
pub type Group<'t> = (&'t [Action], &'t [Policy], Costs, Option<FsKind>);

/// The distinct replays among every policy of `groups`, and for each policy in order the
/// index of its replay. Policies whose replays are the same computation (the same table,
/// policy kind, costs and filesystem: dragonfly:3, :4 and :5 all stamp with `nanotime()`) give
/// the same totals to the bit, so each distinct replay runs once and its totals serve every
/// policy that shares it.
pub fn distinct_replays<'t>(
    groups: impl Iterator<Item = Group<'t>>,
) -> (Vec<ReplayKey<'t>>, Vec<usize>) {
    let mut distinct: Vec<ReplayKey<'t>> = Vec::new();
    let mut which = Vec::new();
    for (table, policies, costs, on) in groups {
        for p in policies {
            let key = (table, p.kind, costs, on);
            which.push(match distinct.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    distinct.push(key);
                    distinct.len() - 1
                }
            });
        }
    }
    (distinct, which)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ModelId;
    use crate::trace::strace::import::mounts::Mounts;
    use crate::trace::strace::import::ImportOptions;

    #[test]
    fn identical_replays_run_once_and_distinct_ones_apart() {
        let costs = Costs::reads(100.0, 10.0, 4e6);
        let models: Vec<(ModelId, Vec<Action>, Vec<Policy>)> =
            ["linux", "freebsd", "dragonfly", "netbsd", "netbsd-knob"]
                .iter()
                .map(|n| {
                    let m = ModelId::parse(n).unwrap();
                    (m, m.table(), m.policies())
                })
                .collect();
        let (distinct, which) = distinct_replays(
            models
                .iter()
                .map(|(_, t, p)| (t.as_slice(), p.as_slice(), costs, None)),
        );
        let names: Vec<String> = models
            .iter()
            .flat_map(|(_, _, p)| p.iter().map(Policy::name))
            .collect();
        assert_eq!(which.len(), names.len());
        assert!(distinct.len() < names.len(), "{names:?}");
        let at = |n: &str| which[names.iter().position(|x| x == n).unwrap()];
        // nanotime() three times over.
        assert_eq!(at("dragonfly:3"), at("dragonfly:4"));
        assert_eq!(at("dragonfly:3"), at("dragonfly:5"));
        // Different clocks, different models: apart.
        assert_ne!(at("dragonfly:0"), at("dragonfly:3"));
        assert_ne!(at("linux:coarse"), at("linux:precise"));
        assert_ne!(at("linux:coarse"), at("freebsd:1"));
        // Other costs, or another filesystem, make another replay.
        let dearer = Costs {
            precise_read_ns: 200.0,
            ..costs
        };
        let (t, p) = (models[1].1.as_slice(), models[1].2.as_slice());
        let (d2, _) = distinct_replays(
            [
                (t, p, costs, None),
                (t, p, dearer, None),
                (t, p, costs, Some(FsKind::Ext4)),
                (t, p, costs, Some(FsKind::Ext4)),
            ]
            .into_iter(),
        );
        assert_eq!(d2.len(), 3 * p.len());
    }

    /// Every op of `log` imported with `mounts`.
    fn ops(log: &str, mounts: Mounts) -> Vec<Op> {
        let options = ImportOptions {
            mounts,
            ..ImportOptions::default()
        };
        let mut v = Vec::new();
        StraceImport::new(log.as_bytes(), "t", options)
            .for_each(|op| v.push(op))
            .unwrap();
        v
    }

    #[test]
    fn import_with_fs_is_the_import_moved_to_fs() {
        // Files on three filesystems, pseudo files, a pipe and a socket.
        const INFO: &str = "\
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw
26 27 0:5 / /proc rw - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
31 27 0:28 / /srv rw - xfs /dev/vdb rw
";
        let root = env!("CARGO_MANIFEST_DIR");
        for name in ["make-cc.strace", "git-status.strace"] {
            let log = std::fs::read_to_string(format!("{root}/scenarios/traces/{name}")).unwrap();
            let mine = ops(&log, Mounts::parse(INFO, None));
            if name == "make-cc.strace" {
                // The build's pipes, its tmpfs directory and the root's ext4 all show.
                for fs in [FsKind::Pipefs, FsKind::Tmpfs, FsKind::Ext4] {
                    assert!(mine.iter().any(|o| o.fs == fs), "{fs:?}");
                }
            }
            for fs in [FsKind::Tmpfs, FsKind::Ext4, FsKind::Btrfs, FsKind::Other] {
                let forced = ops(&log, Mounts::parse(INFO, Some(fs)));
                let moved: Vec<Op> = mine.iter().map(|&o| on_fs(o, fs)).collect();
                assert!(moved == forced, "{name} on {fs:?}");
            }
        }
    }
}
