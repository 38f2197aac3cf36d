//! `tscope simulate`: hand-computed counts and costs for each model, accuracy metrics on tiny
//! traces worked out by hand, sweeps, back-solves and run records. Output forms, determinism
//! and snapshots: `output.rs`; bad input: `errors.rs`; strace logs' per-filesystem multigrain
//! costs: `strace.rs`.

mod errors;
mod output;
mod strace;

use crate::common::{est, json, write_tmp, FREEBSD_PIPE1, PROFILE};
use serde_json::Value;

/// Costs that make the arithmetic easy: 100 ns per counter read, 10 ns per coarse read, a 1 ms
/// tick, 400 ns of base cost per iteration.
const EASY: [&str; 8] = [
    "--set",
    "precise_read_ns=100",
    "--set",
    "coarse_read_ns=10",
    "--set",
    "tick_ns=1000000",
    "--set",
    "base_ns=400",
];

/// `simulate SCENARIO --model MODEL --json` with [`EASY`]'s costs, less any setting `extra`
/// gives its own `--set` for (tscope refuses a setting given twice).
fn sim(scenario: &str, model: &str, extra: &[&str]) -> Value {
    let mut args = vec!["simulate", scenario, "--model", model, "--json"];
    let key = |kv: &str| kv.split('=').next().unwrap_or_default().to_string();
    let own: Vec<String> = extra
        .windows(2)
        .filter(|w| w[0] == "--set")
        .map(|w| key(w[1]))
        .collect();
    for pair in EASY.chunks(2) {
        if !own.contains(&key(pair[1])) {
            args.extend_from_slice(pair);
        }
    }
    args.extend_from_slice(extra);
    json(&args)
}

pub(crate) fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub(crate) fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} != {b}");
}

#[test]
fn freebsd_pipe1_takes_two_counter_reads_at_3_and_none_at_1() {
    // FreeBSD before pipe_timestamp(): pipe_write and pipe_read each call vfs_timestamp().
    let v = sim("pipe1", "freebsd@12.4", &[]);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["scenario"], "pipe1");
    assert_eq!(v["model"], "freebsd@12.4");
    let p3 = est(&v, "freebsd:3");
    close(f(&p3["reads_per_op"]["counter"]), 2.0);
    close(f(&p3["reads_per_op"]["coarse"]), 0.0);
    close(f(&p3["ns_per_op"]), 400.0 + 2.0 * 100.0);
    let p1 = est(&v, "freebsd:1");
    close(f(&p1["reads_per_op"]["counter"]), 0.0);
    close(f(&p1["reads_per_op"]["coarse"]), 2.0);
    close(f(&p1["ns_per_op"]), 420.0);
    // Stock is freebsd:2 (microtime, a counter read): 600 ns.
    let stock = est(&v, "freebsd:2");
    assert_eq!(stock["stock"], true);
    close(f(&stock["speedup"]), 1.0);
    close(f(&p1["speedup"]), 600.0 / 420.0);
    close(f(&p1["ops_per_sec"]), 1e9 / 420.0);
    close(f(&p1["accuracy"]["resolution_ns"]), 1e6);
    close(f(&v["estimates"][0]["timestamp_share"]), 200.0 / 600.0);
}

#[test]
fn newest_freebsd_pipes_use_getnanotime_at_every_setting() {
    // sys_pipe.c pipe_timestamp() -> getnanotime(): no counter read whatever the knob.
    let v = sim("pipe1", "freebsd", &[]);
    assert_eq!(v["model"], "freebsd@14.3");
    for e in v["estimates"].as_array().unwrap() {
        close(f(&e["reads_per_op"]["counter"]), 0.0);
        assert_eq!(
            e["reads_per_op_by_function"]["getnanotime"].as_f64(),
            Some(2.0)
        );
    }
}

#[test]
fn linux_6_15_and_later_take_no_anonymous_pipe_timestamps() {
    for model in ["linux@6.15", "linux@6.18"] {
        let v = sim("pipe1", model, &[]);
        assert_eq!(v["model"], model);
        for e in v["estimates"].as_array().unwrap() {
            close(f(&e["reads_per_op"]["counter"]), 0.0);
            close(f(&e["reads_per_op"]["coarse"]), 0.0);
        }
    }
}

#[test]
fn freebsd_ticks_at_100_hz_in_a_vm() {
    // The recorded profile is a KVM guest: subr_param.c HZ_VM (100), a 10 ms tick.
    let v = json(&[&FREEBSD_PIPE1[..], &["--json"]].concat());
    close(f(&v["costs"]["tick_ns"]), 1e7);
}

#[test]
fn netbsd_pipes_use_getnanotime_so_the_knob_changes_nothing_for_pipe1() {
    let v = sim("pipe1", "netbsd-knob", &[]);
    for e in v["estimates"].as_array().unwrap() {
        close(f(&e["reads_per_op"]["counter"]), 0.0);
        close(f(&e["speedup"]), 1.0);
        assert_eq!(
            e["reads_per_op_by_function"]["getnanotime"].as_f64(),
            Some(2.0)
        );
    }
}

#[test]
fn netbsd_vfsmix_takes_five_nanotime_reads_per_iteration() {
    // tmpfs: create 2 (tmpfs_newvnode + parent), O_TRUNC of the empty file 0 (tmpfs_chsize
    // returns early), write 1, store fault 1, unlink 1.
    let v = sim("vfsmix", "netbsd", &[]);
    let e = est(&v, "netbsd:nanotime");
    close(f(&e["reads_per_op"]["counter"]), 5.0);
    close(f(&e["ns_per_op"]), 400.0 + 500.0);
    let k = sim("vfsmix", "netbsd-knob", &[]);
    close(f(&est(&k, "netbsd-knob:1")["ns_per_op"]), 400.0 + 50.0);
    close(f(&est(&k, "netbsd-knob:1")["speedup"]), 900.0 / 450.0);
    // The seed's scenario (NetBSD libc mkstemp stats the directory first): still 5.
    let seed = sim("netbsd-seed-vfsmix", "netbsd", &[]);
    close(
        f(&est(&seed, "netbsd:nanotime")["reads_per_op"]["counter"]),
        5.0,
    );
}

#[test]
fn freebsd_vfsmix_defers_to_close_and_setattr() {
    // tmpfs_alloc_node 1, O_TRUNC of the empty file sets no flag and its flush finds none
    // pending, close after write and store flushes 1.
    let v = sim("vfsmix", "freebsd", &[]);
    close(f(&est(&v, "freebsd:3")["reads_per_op"]["counter"]), 2.0);
    // With BSD libc's directory stat before the create, that stat flushes what the previous
    // unlink left pending on the directory: one more (none before the first iteration).
    let b = sim("netbsd-seed-vfsmix", "freebsd", &[]);
    let n = 50_000.0;
    close(
        f(&est(&b, "freebsd:3")["reads_per_op"]["counter"]),
        (3.0 * n - 1.0) / n,
    );
    let d = sim("vfsmix", "dragonfly", &[]);
    let stock = &d["estimates"][0];
    assert_eq!(stock["policy"], "dragonfly:0");
    close(f(&stock["reads_per_op"]["counter"]), 0.0);
    close(f(&est(&d, "dragonfly:5")["reads_per_op"]["counter"]), 2.0);
}

#[test]
fn linux_pipe1_reads_the_coarse_clock_twice_and_updates_once_per_tick() {
    // A 10 s tick: the pipe's times are set on the first write and read, never again.
    // Before 6.15, anonymous pipes still call file_update_time()/file_accessed().
    let v = sim(
        "pipe1",
        "linux@6.12",
        &["--set", "tick_ns=1e10", "--iterations", "1000"],
    );
    assert_eq!(v["model"], "linux@6.12");
    let c = est(&v, "linux:coarse");
    // 2 current_time() reads per iteration, plus one more per update (2 updates in all).
    close(f(&c["reads_per_op"]["coarse"]), (2000.0 + 2.0) / 1000.0);
    close(f(&c["inode_updates_per_op"]), 2.0 / 1000.0);
    close(f(&c["accuracy"]["equal_successive_share"]), 1.0);
    let p = est(&v, "linux:precise");
    // Every call changes the time: current_time + update, on both ends.
    close(f(&p["reads_per_op"]["counter"]), 4.0);
    close(f(&p["accuracy"]["equal_successive_share"]), 0.0);
}

#[test]
fn multigrain_write_stat_takes_fine_reads_and_write_only_does_not() {
    // Stat marks the ctime queried; the next write then finds no apparent change and takes a
    // fine-grained read in current_time() and another in inode_set_ctime_current(). The first
    // write of the run sees an unqueried inode.
    let v = sim(
        "write-stat",
        "linux-multigrain",
        &["--set", "tick_ns=1e10", "--iterations", "1000"],
    );
    // The old name is an alias of linux@6.13, with a note.
    assert_eq!(v["model"], "linux@6.13");
    assert!(v["notes"].to_string().contains("alias"), "{}", v["notes"]);
    let mg = est(&v, "linux:multigrain");
    close(f(&mg["reads_per_op"]["counter"]), 2.0 * 999.0 / 1000.0);
    close(f(&mg["accuracy"]["equal_successive_share"]), 0.0);
    let coarse = est(&v, "linux:coarse");
    close(f(&coarse["reads_per_op"]["counter"]), 0.0);
    close(f(&coarse["accuracy"]["equal_successive_share"]), 1.0);
    let w = sim(
        "write-only",
        "linux-multigrain",
        &["--set", "tick_ns=1e10", "--iterations", "1000"],
    );
    close(
        f(&est(&w, "linux:multigrain")["reads_per_op"]["counter"]),
        0.0,
    );
}

#[test]
fn accuracy_of_microtime_on_five_pipe1_iterations_by_hand() {
    // Each op: 200 ns base + 100 ns microtime → an iteration is 600 ns; the write of
    // iteration i starts at 600·i: 0, 600, 1200, 1800, 2400 ns, stamped 0, 0, 1000, 1000, 2000.
    // Successive pairs 4, equal 2; staleness 0, 600, 200, 800, 400 → 800.
    let v = sim("pipe1", "freebsd@12.4", &["--iterations", "5"]);
    let a = &est(&v, "freebsd:2")["accuracy"];
    assert_eq!(a["successive_pairs"], 4);
    close(f(&a["equal_successive_share"]), 0.5);
    close(f(&a["max_staleness_ns"]), 800.0);
    close(f(&a["resolution_ns"]), 1000.0);
    assert_eq!(a["cross_inode_pairs"], 0);
}

#[test]
fn accuracy_across_two_pipes_by_hand() {
    // pingpong: ops cost 100 + 10 ns under getnanotime; writes to a at 0, 440, 880 and to b at
    // 220, 660, 1100 ns all fall in the first 1 ms tick: every stamp is 0.
    let v = sim("pingpong", "freebsd@12.4", &["--iterations", "3"]);
    let a = &est(&v, "freebsd:1")["accuracy"];
    assert_eq!(a["successive_pairs"], 4);
    close(f(&a["equal_successive_share"]), 1.0);
    assert_eq!(a["cross_inode_pairs"], 5);
    close(f(&a["cross_inode_equal_share"]), 1.0);
    close(f(&a["cross_inode_inverted_share"]), 0.0);
    close(f(&a["max_staleness_ns"]), 1100.0);
    // nanotime: all distinct and in order.
    let n = &est(&v, "freebsd:3")["accuracy"];
    close(f(&n["cross_inode_equal_share"]), 0.0);
    close(f(&n["cross_inode_inverted_share"]), 0.0);
}

#[test]
fn sweep_prints_speedup_and_break_even() {
    let v = json(&[
        "simulate",
        "pipe1",
        "--model",
        "freebsd@12.4",
        "--json",
        "--set",
        "coarse_read_ns=0",
        "--set",
        "base_ns=400",
        "--set",
        "tick_ns=1e6",
        "--sweep",
        "precise_read_ns=10..10000",
        "--sweep-points",
        "4",
    ]);
    assert_eq!(v["parameter"], "precise_read_ns");
    let values: Vec<f64> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| f(&p["value"]))
        .collect();
    assert_eq!(values, vec![10.0, 100.0, 1000.0, 10000.0]);
    // freebsd:1 against stock :2 at c: (400 + 2c) / 400; 1.05 at c = 10 ns exactly.
    let be = v["break_even"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["policy"] == "freebsd:1")
        .unwrap();
    let at = f(&be["value"]);
    assert!((at - 10.0).abs() < 1e-6, "{at}");
    let last = &v["points"][3]["estimates"];
    let s1 = last
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["policy"] == "freebsd:1")
        .unwrap();
    close(f(&s1["speedup"]), 20400.0 / 400.0);
}

#[test]
fn implied_back_solves_a_constructed_pair() {
    // Under freebsd@12.4 pipe1, stock :3 takes 2 counter reads, :1 two coarse ones (10 ns). A pair
    // made with base 300 ns and 50 ns reads: stock 400 ns, patched 320 ns.
    let v = json(&[
        "simulate",
        "pipe1",
        "--model",
        "freebsd@12.4",
        "--json",
        "--set",
        "coarse_read_ns=10",
        "--set",
        "tick_ns=1e6",
        "--set",
        "precise_read_ns=1",
        "--implied",
        "stock=2500000,patched=3125000,policy=freebsd:1,stock_policy=freebsd:3",
    ]);
    close(f(&v["precise_read_ns"]), 50.0);
    close(f(&v["base_ns_per_op"]), 300.0);
    assert!(v["verdict"].as_str().unwrap().starts_with("plain counter"));
    // NetBSD pipes take no counter reads: the pair says nothing under that model.
    let n = json(&[
        "simulate",
        "netbsd-seed",
        "--model",
        "netbsd-knob",
        "--json",
        "--profile",
        PROFILE,
        "--implied",
        "stock=2413901,patched=3147312",
    ]);
    assert!(n["precise_read_ns"].is_null());
    assert!(n["verdict"]
        .as_str()
        .unwrap()
        .starts_with("not identifiable"));
}

#[test]
fn run_records_give_the_base_cost() {
    let dir = tempfile::tempdir().unwrap();
    let rec = write_tmp(
        dir.path(),
        "run.json",
        r#"{"schema_version":1,"kind":"tscope-run-record","workload":"pipe1","fs_type":"ext4",
        "ops_per_sec":2000000.0,"tasks":1,"samples":[1,2,3],
        "iteration":[{"syscall":"write","inode":"pipe:0","fs":"pipefs"},
                     {"syscall":"read","inode":"pipe:0","fs":"pipefs"}]}"#,
    );
    let mut args = vec!["simulate", "--run", rec.to_str().unwrap(), "--json"];
    args.extend_from_slice(&["--model", "linux"]);
    args.extend_from_slice(&EASY[..6]);
    let v = json(&args);
    // No kernel release in the record: the newest Linux, whose anonymous pipes take no
    // timestamps, so the base is all of the 500 ns measured.
    close(f(&v["costs"]["base_ns_per_op"]), 500.0);
    close(f(&v["estimates"][0]["ns_per_op"]), 500.0);
    // Recorded on 6.12 (and `--model linux` follows the record's kernel): 500 ns less two coarse reads (10 ns each) and the rare updates.
    let text = std::fs::read_to_string(&rec).unwrap();
    let old = write_tmp(
        dir.path(),
        "run612.json",
        &text.replace(
            r#""tasks":1,"#,
            r#""tasks":1,"kernel_release":"6.12.0-1-amd64","#,
        ),
    );
    args[2] = old.to_str().unwrap();
    let v = json(&args);
    let base = f(&v["costs"]["base_ns_per_op"]);
    assert!((479.0..480.0).contains(&base), "{base}");
    close(f(&v["estimates"][0]["ns_per_op"]), 500.0);
}
