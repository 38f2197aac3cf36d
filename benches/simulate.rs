//! Replay throughput of `simulate`: trace operations per second on one core, for the smallest
//! loop (pipe1 under FreeBSD's microtime and Linux coarse) and the richest (vfsmix under the
//! multigrain model, with deferred BSD flags under FreeBSD). Target: ≥ 50 million ops/s.
//! Memory is flat in trace length: the scenario streams its loop and the replay keeps one
//! record per inode, so the same bench at 10× the ops allocates nothing more.
//!
//! `cargo bench --bench simulate`
//!
//! On the development machine (KVM guest, AMD EPYC, 2 vCPUs shared with other builds):
//! 117 M ops/s (pipe1, freebsd:2), 119 M (pipe1, linux:coarse), 114 M (vfsmix, multigrain),
//! 160 M (vfsmix, freebsd:3), 128 M (vfsmix, netbsd); under a load average of 4, 70–100 M.
//! Memory: `tscope simulate pipe1 --model freebsd --iterations N` peaks at 3.6 MB RSS for
//! N = 5e5 and 3.7 MB for N = 5e7 (4 × 1e8 ops replayed).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

use tscope::kernel::{ModelId, Policy};
use tscope::sim::{Costs, Replay};
use tscope::trace::{bundled, Scenario};

const OPS: u64 = 10_000_000;

fn replay(c: &mut Criterion) {
    let costs = Costs::reads(16.0, 4.0, 4e6);
    let mut g = c.benchmark_group("replay");
    g.throughput(Throughput::Elements(OPS));
    g.sample_size(10);
    for (scenario, policy) in [
        ("pipe1", "freebsd:2"),
        ("pipe1", "linux:coarse"),
        ("vfsmix", "linux-multigrain:multigrain"),
        ("vfsmix", "freebsd:3"),
        ("vfsmix", "netbsd:nanotime"),
    ] {
        let s = Scenario::from_json(bundled::get(scenario).unwrap(), scenario)
            .unwrap()
            .compile();
        let p = Policy::parse(policy).unwrap();
        let model: ModelId = p.model;
        let table = model.table();
        let iterations = OPS / s.ops.len() as u64;
        g.bench_function(format!("{scenario}/{policy}"), |b| {
            b.iter(|| {
                let stats = Replay::new(&table, p.kind, costs, 200.0, s.inodes)
                    .run(s.stream(black_box(iterations)));
                black_box(stats.total_ns)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
