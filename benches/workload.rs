//! The runner must not be what `tscope run` measures: its per-iteration cost (a relaxed load of
//! the stop word, a load/add/store to the task's own counter) must stay below 1% of a pipe1
//! iteration. These benches put the runner's loop (`workload::runner::count_until_stop`, the
//! code the workers run) beside a bare loop of the same system calls.
//!
//! Both loops carry the same countdown (the bare loop's `for`, the runner body's `n -= 1` that
//! raises the stop word at zero), so the difference is the runner's own work.
//!
//! `cargo bench --bench workload`; figures in docs/workloads.md.

use std::hint::black_box;
use std::os::fd::AsFd;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use tscope::sys::mem::SharedBlock;
use tscope::sys::worker;
use tscope::workload::runner::count_until_stop;

fn pipe1(c: &mut Criterion) {
    let (r, w) = worker::pipe().expect("pipe");
    let (r, w) = (r.as_fd(), w.as_fd());
    let block = SharedBlock::new(1).expect("shared block");
    let (control, slot) = (block.control(), &block.slots()[0]);
    let _ = tscope::sys::cpu::pin_to_cpu(tscope::sys::cpu::current_cpu().unwrap_or(0));

    let mut g = c.benchmark_group("pipe1_iteration");
    g.bench_function("bare_loop", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                worker::write_byte(w, 0).expect("write");
                black_box(worker::read_byte(r).expect("read"));
            }
            start.elapsed()
        })
    });
    g.bench_function("runner_loop", |b| {
        b.iter_custom(|iters| {
            if iters == 0 {
                return Duration::ZERO;
            }
            control.stop.store(0, Relaxed);
            let mut n = iters;
            let start = Instant::now();
            count_until_stop(slot, control, || {
                worker::write_byte(w, 0).expect("write");
                black_box(worker::read_byte(r).expect("read"));
                n -= 1;
                if n == 0 {
                    control.stop.store(1, Relaxed);
                }
                Ok(())
            })
            .expect("loop");
            start.elapsed()
        })
    });
    g.finish();

    // The runner's work alone: the same two loops with an empty body.
    let mut g = c.benchmark_group("runner_overhead");
    g.bench_function("bare_loop", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for i in 0..iters {
                black_box(i);
            }
            start.elapsed()
        })
    });
    g.bench_function("runner_loop", |b| {
        b.iter_custom(|iters| {
            if iters == 0 {
                return Duration::ZERO;
            }
            control.stop.store(0, Relaxed);
            let mut n = iters;
            let start = Instant::now();
            count_until_stop(slot, control, || {
                black_box(n);
                n -= 1;
                if n == 0 {
                    control.stop.store(1, Relaxed);
                }
                Ok(())
            })
            .expect("loop");
            start.elapsed()
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = pipe1
}
criterion_main!(benches);
