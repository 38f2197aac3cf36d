//! strace ingestion throughput: bytes of `strace -f -tt -T -y` output turned into trace ops per
//! second on one core (parse, join unfinished/resumed halves, fd tables, path → inode).
//! Target: ≥ 200 MB/s. The input is the bundled real traces (`scenarios/traces/`: a
//! `make`/`cc` build and a `git status`), concatenated until it is about 32 MB, read from
//! memory through the same `BufRead` path `simulate --strace` uses for a file.
//!
//! Memory is flat in file size: the importer keeps the live fds, the distinct paths and the
//! calls in flight, never lines. Check with
//! `/usr/bin/time -v tscope simulate --strace BIG --model linux --set precise_read_ns=20 \
//!  --set coarse_read_ns=4 --set tick_ns=4000000` on the trace concatenated 10× and 100×.
//!
//! `cargo bench --bench strace`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

use tscope::trace::strace::import::{mounts::Mounts, ImportOptions, StraceImport};

const TARGET_BYTES: usize = 32 << 20;

fn input(name: &str) -> Vec<u8> {
    let path = format!("{}/scenarios/traces/{name}", env!("CARGO_MANIFEST_DIR"));
    let one = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut all = Vec::with_capacity(TARGET_BYTES + one.len());
    while all.len() < TARGET_BYTES {
        all.extend_from_slice(&one);
    }
    all
}

fn ingest(c: &mut Criterion) {
    let mut g = c.benchmark_group("strace_ingest");
    g.sample_size(10);
    let mounts = Mounts::from_system(None);
    for name in ["make-cc.strace", "git-status.strace"] {
        let data = input(name);
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                let opts = ImportOptions {
                    strict: false,
                    mounts: mounts.clone(),
                    fs_source: String::new(),
                };
                let mut n = 0u64;
                let s = StraceImport::new(black_box(&data[..]), "bench", opts)
                    .for_each(|op| n += op.inode as u64)
                    .unwrap();
                black_box((n, s.calls))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, ingest);
criterion_main!(benches);
