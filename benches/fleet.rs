//! The fleet store at scale: 100,000 profiles generated from the real documents in
//! tests/data (two probe profiles and a detection), each jittered with a seeded RNG (every
//! source's cost scaled by its own factor, e^(0.1·N(0,1)), with its ticks and relative width
//! derived from it as `probe` derives them; the precise read likewise; kernel,
//! clocksource and hypervisor drawn from short lists; a `host_id` of its own, random, the
//! worst case for the store's size), stored through `fleet add`'s NDJSON
//! path (one transaction per line), then `fleet report --by hypervisor,clocksource` over all
//! of them. Targets: add ≥ 2,000 profiles/s; report ≤ 5 s on 100,000; ≤ 4 KiB per profile.
//!
//! `cargo bench --bench fleet` prints the three figures, then criterion's timing of the
//! report on the full store and of adding 2,000 profiles to an empty one. Under `cargo test`
//! (no `--bench`), it runs once on 60 profiles and one scenario as a smoke test.

use std::io::Cursor;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;

use tscope::fleet::{decisions, ingest, AddSummary, GroupBy, ReportConfig, Store};
use tscope::stats::SplitMix64;

const REAL: [&str; 3] = [
    "tests/data/profile-kvm-xeon.json",
    "tests/data/compare/host.json",
    "tests/data/compare/trapped-detect.json",
];

/// Whether criterion was asked to measure (`cargo bench`), not to smoke-test (`cargo test`).
fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn normal(rng: &mut SplitMix64) -> f64 {
    // Box–Muller from two uniforms in (0, 1].
    let u = |r: &mut SplitMix64| (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64 + 1e-18;
    let (a, b) = (u(rng), u(rng));
    (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
}

fn scale(v: &mut Value, k: f64) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                *v = Value::from(x * k);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| scale(x, k)),
        Value::Object(o) => o.values_mut().for_each(|x| scale(x, k)),
        _ => {}
    }
}

/// `n` jittered documents, one per NDJSON line.
fn generate(n: usize, seed: u64) -> Vec<u8> {
    let bases: Vec<Value> = REAL
        .iter()
        .map(|p| serde_json::from_slice(&std::fs::read(p).expect(p)).unwrap())
        .collect();
    let kernels = ["6.1.0-28-amd64", "6.8.0-49-generic", "6.12.9", "6.18.44"];
    let clocksources = ["tsc", "tsc", "tsc", "kvm-clock", "hpet", "xen"];
    let hypervisors = ["KVMKVMKVM", "KVMKVMKVM", "XenVMMXenVMM", "Microsoft Hv"];
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    for i in 0..n {
        let mut doc = bases[i % bases.len()].clone();
        let p = if doc.get("profile").is_some() {
            doc.get_mut("profile").unwrap()
        } else {
            &mut doc
        };
        let ticks_per_ns = p["derived"]["tsc_hz"].as_f64().map(|hz| hz / 1e9);
        for s in p["sources"].as_array_mut().unwrap() {
            let k = (0.1 * normal(&mut rng)).exp();
            for field in ["cost_ns", "round_points_ns"] {
                scale(&mut s[field], k);
            }
            // What probe writes beside cost_ns, derived from it as probe derives it, so that a
            // generated profile is as consistent as a real one.
            let ns = |s: &Value, f: &str| s["cost_ns"][f].as_f64();
            if let (Some(t), true) = (ticks_per_ns, s["cost_ticks"].is_object()) {
                for f in ["point", "lower", "upper"] {
                    if let Some(x) = ns(s, f) {
                        s["cost_ticks"][f] = Value::from(x * t);
                    }
                }
            }
            if let (true, Some(u), Some(l), Some(p)) = (
                s["relative_ci_width"].is_f64(),
                ns(s, "upper"),
                ns(s, "lower"),
                ns(s, "point"),
            ) {
                s["relative_ci_width"] = Value::from((u - l) / p.abs());
            }
        }
        let k = (0.1 * normal(&mut rng)).exp();
        scale(&mut p["derived"]["precise_read_ns"], k);
        let pick =
            |r: &mut SplitMix64, xs: &[&str]| xs[r.below(xs.len() as u64) as usize].to_string();
        let m = &mut p["machine"];
        m["kernel_release"] = Value::from(pick(&mut rng, &kernels));
        m["clocksource"]["current"] = Value::from(pick(&mut rng, &clocksources));
        m["hypervisor_signature"] = Value::from(pick(&mut rng, &hypervisors));
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
        id[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
        id[6] = (id[6] & 0x0f) | 0x40;
        id[8] = (id[8] & 0x3f) | 0x80;
        m["host_id"] = Value::from(tscope::probe::host_id::format_uuid(&id));
        p["created_unix_s"] = Value::from(1_700_000_000 + i as u64);
        serde_json::to_writer(&mut out, &doc).unwrap();
        out.push(b'\n');
    }
    out
}

fn add(store: &mut Store, ndjson: &[u8]) -> AddSummary {
    let mut s = AddSummary::default();
    ingest::add_stream(store, Cursor::new(ndjson), Some("bench"), &mut s).unwrap();
    assert!(s.failed.is_empty(), "{:?}", s.failed.first());
    s
}

fn config() -> ReportConfig {
    // The smoke test replays one scenario; the measurement all that `fleet report` does.
    let scenarios: &[&str] = if measuring() {
        &tscope::fleet::replay::DEFAULT_SCENARIOS
    } else {
        &["write-stat"]
    };
    ReportConfig {
        by: vec![GroupBy::Hypervisor, GroupBy::Clocksource],
        scenarios: scenarios.iter().map(|s| s.to_string()).collect(),
    }
}

fn fleet(c: &mut Criterion) {
    let n = if measuring() { 100_000 } else { 60 };
    let dir = tempfile::tempdir().unwrap();
    let ndjson = generate(n, 42);
    let mut store = Store::open(&dir.path().join("fleet.db")).unwrap();
    let t = Instant::now();
    let s = add(&mut store, &ndjson);
    let add_s = t.elapsed().as_secs_f64();
    assert_eq!(s.added, n);
    store.checkpoint().unwrap();
    let bytes = store.bytes();
    let rows = store.rows().unwrap();
    let t = Instant::now();
    let r = decisions::report(&rows, &config()).unwrap();
    let report_s = t.elapsed().as_secs_f64();
    assert_eq!(r.machines, n);
    eprintln!(
        "fleet: {n} profiles added in {add_s:.1} s ({:.0} profiles/s); store {bytes} bytes \
         ({:.0} bytes per profile); report --by hypervisor,clocksource in {report_s:.2} s \
         ({} groups, {} distinct cost sets replayed)",
        n as f64 / add_s,
        bytes as f64 / n as f64,
        r.groups.len(),
        r.replays
    );
    let mut g = c.benchmark_group("fleet");
    g.sample_size(10);
    g.bench_function(format!("report_{n}"), |b| {
        b.iter(|| {
            let rows = store.rows().unwrap();
            decisions::report(&rows, &config()).unwrap()
        })
    });
    let batch = 2_000.min(n);
    let small = generate(batch, 7);
    g.throughput(Throughput::Elements(batch as u64));
    g.bench_function(format!("add_{batch}"), |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            for i in 0..iters {
                let mut s = Store::open(&dir.path().join(format!("add-{i}.db"))).unwrap();
                let t = Instant::now();
                add(&mut s, &small);
                total += t.elapsed();
                drop(s);
                let _ = std::fs::remove_file(dir.path().join(format!("add-{i}.db")));
            }
            total
        })
    });
    g.finish();
}

criterion_group!(benches, fleet);
criterion_main!(benches);
