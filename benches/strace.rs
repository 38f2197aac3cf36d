//! strace ingestion throughput: bytes of `strace -f -tt -T -y` output turned into trace ops per
//! second (parse, join unfinished/resumed halves, fd tables, path → inode), with the parsing on
//! its own thread as `simulate --strace` runs it (`threads=2`), on one core (`threads=1`), and
//! the parsing half alone (`parse-only`); and the whole of `simulate --strace` on the same
//! bytes written to a file (`strace_simulate`: import and replays, one model and all models,
//! costs given with `--set` so that no probe runs).
//! Criterion reports it in MB/s (`Throughput::Bytes`). Target: `simulate --strace`
//! at ≥ 500 MB/s with one model and ≥ 400 MB/s with all (`scripts/strace-figures` measures the
//! whole command; docs/methodology.md, "Ingestion", has the figures). The input is the bundled real traces (`scenarios/traces/`: a
//! `make`/`cc` build and a `git status`), each copy varied until the whole is about 32 MB:
//! copy k runs under its own pids (+ k·32768) and its own tree (every absolute path under
//! `/vK/`), so the importer's pid, fd and path tables keep growing as they would on one long
//! trace, instead of timing the same warm entries hundreds of times. It is read from memory
//! through the same `BufRead` path `simulate --strace` uses for a file.
//!
//! Memory is flat in file size: the importer keeps the live fds, the distinct paths and the
//! calls in flight, never lines; `scripts/strace-figures [MB]` prints max RSS beside the rate.
//!
//! `cargo bench --bench strace`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

use tscope::trace::strace::chunks::Chunker;
use tscope::trace::strace::import::{mounts::Mounts, ImportOptions, StraceImport};

const TARGET_BYTES: usize = 32 << 20;

fn read(name: &str) -> String {
    let path = format!("{}/scenarios/traces/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Copy `k` of `trace`: each line's pid moved up by k·32768 and every absolute path (after
/// `"` or `<`) moved under `/vK/`.
fn vary(trace: &str, k: usize, out: &mut String) {
    for line in trace.lines() {
        let (pid, rest) = line.split_at(line.find(' ').unwrap_or(0));
        match pid.parse::<usize>() {
            Ok(p) => out.push_str(&(p + k * 32768).to_string()),
            Err(_) => out.push_str(pid),
        }
        let prefix = format!("/v{k}/");
        out.push_str(
            &rest
                .replace("\"/", &format!("\"{prefix}"))
                .replace("</", &format!("<{prefix}")),
        );
        out.push('\n');
    }
}

/// Varied copies of the bundled traces, `first` first, alternating, until about 32 MB.
fn input(first: &str) -> Vec<u8> {
    let names = ["make-cc.strace", "git-status.strace"];
    let traces: Vec<String> = names.iter().map(|n| read(n)).collect();
    let start = names.iter().position(|n| *n == first).unwrap();
    let mut all = String::with_capacity(TARGET_BYTES + traces[0].len() * 2);
    let mut k = 0;
    while all.len() < TARGET_BYTES {
        vary(&traces[(start + k) % traces.len()], k, &mut all);
        k += 1;
    }
    all.into_bytes()
}

fn ingest(c: &mut Criterion) {
    let mut g = c.benchmark_group("strace_ingest");
    g.sample_size(10);
    let mounts = Mounts::from_system(None);
    for name in ["make-cc.strace", "git-status.strace"] {
        let data = input(name);
        g.throughput(Throughput::Bytes(data.len() as u64));
        // Both threads (parsing beside the importer), as `simulate --strace` runs; then the
        // single-core rate (everything on this thread); then the parsing half alone.
        for threads in [2, 1] {
            g.bench_function(format!("{name}/threads={threads}"), |b| {
                b.iter(|| {
                    let opts = ImportOptions {
                        strict: false,
                        mounts: mounts.clone(),
                        fs_source: String::new(),
                    };
                    let mut n = 0u64;
                    let mut import = StraceImport::new(black_box(&data[..]), "bench", opts);
                    if threads == 1 {
                        import = import.on_one_thread();
                    }
                    let s = import.for_each(|op| n += op.inode as u64).unwrap();
                    black_box((n, s.calls))
                })
            });
        }
        g.bench_function(format!("{name}/parse-only"), |b| {
            b.iter(|| {
                let mut c = Chunker::new(black_box(&data[..]));
                let (mut lines, mut spare) = (0usize, None);
                while let Some(p) = c.next_chunk(spare.take()).unwrap() {
                    lines += p.items().count();
                    spare = Some(p);
                }
                black_box(lines)
            })
        });
    }
    g.finish();
}

/// `simulate --strace FILE` as the command runs it: the import on its two threads and a replay
/// per policy, with one model (`linux`) and all models (the default), on the varied make/cc
/// input written to a file under Cargo's scratch directory for benches (removed at the end).
fn simulate(c: &mut Criterion) {
    use tscope::kernel::ModelSpec;
    use tscope::sim::config::{Mode, Param, SimulateConfig, StraceLog};
    let data = input("make-cc.strace");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-simulate.strace");
    std::fs::write(&path, &data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut g = c.benchmark_group("strace_simulate");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(data.len() as u64));
    for (label, models) in [("linux", Some("linux")), ("all-models", None)] {
        let mut cfg = SimulateConfig::of(Mode::Strace(StraceLog {
            path: path.clone(),
            strict: false,
            fs: None,
        }));
        if let Some(m) = models {
            cfg.models = vec![ModelSpec::parse(m).unwrap()];
        }
        cfg.overrides = vec![
            (Param::PreciseReadNs, 100.0),
            (Param::CoarseReadNs, 10.0),
            (Param::TickNs, 4e6),
        ];
        g.bench_function(label, |b| {
            b.iter(|| black_box(tscope::sim::simulate(&cfg).unwrap()))
        });
    }
    g.finish();
    let _ = std::fs::remove_file(&path);
}

criterion_group!(benches, ingest, simulate);
criterion_main!(benches);
