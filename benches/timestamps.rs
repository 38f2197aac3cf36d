//! Criterion benches of the primitives `probe` measures, so that the probe's figures can be
//! checked against an independent harness (docs/methodology.md puts them side by side).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use tscope::sys::clock::{self, id};
use tscope::sys::tsc;

fn timestamps(c: &mut Criterion) {
    let mut g = c.benchmark_group("timestamp");
    g.bench_function("rdtsc", |b| b.iter(tsc::rdtsc));
    // rdtscp raises #UD (SIGILL) where CPUID.80000001H:EDX[27] is clear: check it as probe
    // does (src/sys/tsc.rs), from the same decoded CPUID facts.
    let cpu = tscope::cpuid::StandardLeaves::decode(&raw_cpuid::CpuId::new());
    if cpu.rdtscp {
        g.bench_function("rdtscp", |b| b.iter(tsc::rdtscp));
    } else {
        println!("timestamp/rdtscp: skipped, CPUID.80000001H:EDX[27] (RDTSCP) is clear");
    }
    g.bench_function("vdso:monotonic", |b| {
        b.iter(|| clock::vdso_clock_gettime(black_box(id::MONOTONIC)))
    });
    g.bench_function("syscall:monotonic", |b| {
        b.iter(|| clock::syscall_clock_gettime(black_box(id::MONOTONIC)))
    });
    g.bench_function("vdso:realtime_coarse", |b| {
        b.iter(|| clock::vdso_clock_gettime(black_box(id::REALTIME_COARSE)))
    });
    g.finish();
}

criterion_group!(benches, timestamps);
criterion_main!(benches);
