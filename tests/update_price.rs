//! The inode update's price: the live knob pair on tmpfs through `probe --dir` and `run
//! write-stat`, simulate pricing each update on its filesystem, and bad `--dir` arguments.
//! (The arithmetic on recorded pairs of every filesystem is in src/sim/update_price/tests/mod.rs;
//! the whole check against a plain C loop on loop images is scripts/update-pair-check.)

use crate::common::{cpu_lock, json, tscope, write_tmp, SHORT_RUN};

/// `SHORT_RUN` of `workload` in /dev/shm, with `extra` arguments.
fn short_run(workload: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![SHORT_RUN[0], workload, "--dir", "/dev/shm"];
    args.extend_from_slice(&SHORT_RUN[2..]);
    args.extend_from_slice(extra);
    json(&args)
}
use predicates::str::contains;

fn f64_at(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number: {x}"))
}

#[test]
fn a_live_pair_on_tmpfs_prices_the_update_and_simulate_uses_it() {
    if crate::skip::without("tmpfs") || crate::skip::without("multigrain") {
        return;
    }
    let _cpu = cpu_lock();
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.json");
    let p = profile.to_str().unwrap();
    tscope()
        .args(["probe", "--quick", "--dir", "/dev/shm", "--json", "-o", p])
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    let f = &v["filesystems"][0];
    assert_eq!(f["fs_type"], "tmpfs");
    assert_eq!(f["multigrain"], true, "{f}");
    // The kernel's own evidence: every queried mtime differs, the control's stay equal.
    assert_eq!(f64_at(f, &["pair", "queried_equal_mtimes"]), 0.0);
    assert!(f64_at(f, &["pair", "control_equal_mtimes"]) > 0.9);
    // The knob's direction: the median Δ and most repetitions' Δ above 0 (one repetition
    // disturbed by another task may not be).
    assert!(f64_at(f, &["pair", "delta_ns", "point"]) > 0.0, "{f}");
    let deltas = f["pair"]["deltas_ns"].as_array().unwrap();
    let above = deltas.iter().filter(|d| d.as_f64().unwrap() > 0.0).count();
    assert!(2 * above > deltas.len(), "{f}");
    let u = f64_at(f, &["update_ns", "point"]);
    assert!(u.is_finite(), "{f}");
    assert!((f64_at(f, &["updates_delta"]) - 1.0).abs() < 0.01);
    // The query priced apart by the chmod-stat pair's statx timed on its own: its ctimes tell
    // the knob (fchmod moves no mtime); the update is write-stat against chmod-stat, less the
    // model's units between them (the same query, fine stamp and swap: the reads left).
    assert_eq!(f["query_pair"]["pattern"]["kind"], "chmod", "{f}");
    assert_eq!(f64_at(f, &["query_pair", "queried_equal_mtimes"]), 0.0);
    assert!(f64_at(f, &["query_pair", "control_equal_mtimes"]) > 0.9);
    let q = f64_at(f, &["query_ns", "point"]);
    assert_eq!(f["query_pair"]["by_call"][0]["syscall"], "stat", "{f}");
    assert!((q - f64_at(&f["query_pair"]["by_call"][0], &["delta_ns", "point"])).abs() < 1e-6);
    assert_eq!(f["query_pattern"], "chmod-stat", "{f}");
    assert_eq!(
        f["priced_by"]["update_ns"],
        "write-stat pair against chmod-stat"
    );
    let (d, dr) = (
        f64_at(f, &["pair", "delta_ns", "point"]) - f64_at(f, &["query_pair", "delta_ns", "point"]),
        f64_at(f, &["reads_delta_ns"]),
    );
    let (dq, du) = (f64_at(f, &["queries_delta"]), f64_at(f, &["updates_delta"]));
    // The ctime swap priced apart (chmods of 16 other files, each timed alone between an open
    // and a close of another file): write-stat and chmod-stat each take one, so none is left
    // between them.
    assert_eq!(
        f["swap_apart_pair"]["pattern"]["kind"], "chmod_others_apart",
        "{f}"
    );
    assert_eq!(
        f["swap_apart_pair"]["by_call"][0]["syscall"], "setattr",
        "{f}"
    );
    let (ds, s) = (
        f64_at(f, &["swaps_delta"]),
        f64_at(f, &["ctime_swap_ns", "point"]),
    );
    assert!(ds.abs() < 0.05, "{f}");
    assert!(dq.abs() < 0.01, "{f}");
    assert!(((d - dr - dq * q - ds * s) / du - u).abs() < 1e-6, "{f}");
    // The floored read priced by chmod-stat with 16 reads after it, each timed alone between
    // an open and a close of another file: a price of its own, which the reads above already
    // include (the query's and the update's are without it).
    assert_eq!(
        f["floor_apart_pair"]["pattern"]["kind"], "chmod_read_apart",
        "{f}"
    );
    assert_eq!(f["floor_apart_pair"]["pattern"]["reads"], 16, "{f}");
    assert_eq!(
        f["floor_apart_pair"]["by_call"][0]["calls_per_pass"], 16,
        "{f}"
    );
    assert_eq!(
        f["priced_by"]["floor_read_ns"], "chmod-stat-read16-apart [16 × read] pair",
        "{f}"
    );
    let floor = f64_at(f, &["floor_read_ns", "point"]);
    assert!(floor.is_finite(), "{f}");
    // A fine read's in-path excess, priced by 16 reads of the queried file against 1 (its
    // sign and size are the machine's).
    assert_eq!(f["fine_pair"]["pattern"]["kind"], "chmod_read_same", "{f}");
    let excess = f64_at(f, &["fine_excess_ns", "point"]);
    assert!(excess.is_finite(), "{f}");
    // The atime update, priced by the read after the write (write-read-stat), apart from the
    // write path's update that write-stat prices.
    assert_eq!(f["read_pair"]["pattern"]["kind"], "write_read", "{f}");
    assert!(f64_at(f, &["atime_update_ns", "point"]).is_finite(), "{f}");
    // A new inode's first update, priced by the second write of a file made in the same
    // iteration against write-stat's write (its sign and size are the machine's).
    assert_eq!(f["first_pair"]["pattern"]["kind"], "create_rewrite", "{f}");
    assert_eq!(f["first_pair"]["by_call"][0]["syscall"], "write", "{f}");
    assert_eq!(
        f["priced_by"]["first_update_ns"],
        "create-write-stat-write-unlink [1 × write] pair against write-stat [1 × write]",
        "{f}"
    );
    assert!(f64_at(f, &["first_update_ns", "point"]).is_finite(), "{f}");
    // The kernel's own counters: one fine ctime stamp per queried iteration, none on the
    // control's; the ctime moves at least once per queried iteration (the counters are the
    // machine's: other tests running beside this one add moves, never fine stamps of this
    // file).
    if !crate::skip::without("multigrain-counters") {
        let k = &f["pair"]["kernel_counts"];
        let at = |side: &str, c: &str| f64_at(k, &[side, c]);
        assert!((at("queried", "fine_stamps") - 1.0).abs() < 0.05, "{k}");
        assert!(at("control", "fine_stamps") < 0.05, "{k}");
        assert!(at("queried", "ctime_swaps") > 0.95, "{k}");
        // The 16 reads after the fine stamp take the floor, never a fine stamp of their own
        // (they would make 17 per iteration). The floor pair's iterations are long, so the
        // stamps of other tests' files, which the machine-wide counter also counts, are
        // bounded loosely.
        let k = &f["floor_apart_pair"]["kernel_counts"];
        let at = |side: &str, c: &str| f64_at(k, &[side, c]);
        assert!(at("queried", "fine_stamps") < 2.0, "{k}");
        assert!(
            at("queried", "fine_stamps") - at("control", "fine_stamps") > 0.5,
            "{k}"
        );
        // Reads of the queried file take plain fine reads in current_time(), never a ctime
        // stamp: still one stamp per queried iteration, loosely bounded as above.
        let k = &f["fine_pair"]["kernel_counts"];
        let at = |side: &str, c: &str| f64_at(k, &[side, c]);
        assert!(at("queried", "fine_stamps") < 2.0, "{k}");
    }
    // No scratch left behind by the pair.
    let left = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(&format!("tscope-run.{}.", std::process::id()))
        });
    assert!(!left);

    // simulate write-stat: the update on tmpfs priced from the profile, the base from the pair.
    let s = json(&[
        "simulate",
        "write-stat",
        "--profile",
        p,
        "--model",
        "linux",
        "--json",
    ]);
    let m = if s.is_array() { &s[0] } else { &s };
    assert_eq!(f64_at(m, &["costs", "update_ns_by_fs", "tmpfs"]), u);
    assert_eq!(f64_at(m, &["costs", "query_ns_by_fs", "tmpfs"]), q);
    let src = m["costs"]["sources"]["query"].as_str().unwrap();
    assert!(src.contains("chmod-stat"), "{src}");
    let src = m["costs"]["sources"]["update"].as_str().unwrap();
    assert!(src.contains("live pair"), "{src}");
    assert_eq!(f64_at(m, &["costs", "floor_read_ns_by_fs", "tmpfs"]), floor);
    assert_eq!(
        f64_at(m, &["costs", "fine_excess_ns_by_fs", "tmpfs"]),
        excess
    );
    assert_eq!(f64_at(m, &["costs", "floor_read_ns"]), floor);
    let src = m["costs"]["sources"]["floor_read"].as_str().unwrap();
    assert!(src.contains("chmod-stat pair with reads"), "{src}");
    assert!(
        m["costs"]["base_source"]
            .as_str()
            .unwrap()
            .contains("live pair"),
        "{m}"
    );
    let e = m["estimates"].as_array().unwrap();
    let stock = e.iter().find(|x| x["stock"] == true).unwrap();
    assert!(f64_at(stock, &["inode_updates_per_op"]) > 0.99);

    // A scenario on ext4, which this profile did not price: said so, with the estimate at
    // tmpfs's price, the nearest measured.
    let scen = write_tmp(
        dir.path(),
        "ext4.json",
        r#"{"schema_version":1,"name":"w-ext4","description":"d","base_ns_per_iteration":1000,
            "iteration":[{"syscall":"write","inode":"f","fs":"ext4"},
                         {"syscall":"stat","inode":"f","fs":"ext4"}]}"#,
    );
    let s = json(&[
        "simulate",
        scen.to_str().unwrap(),
        "--profile",
        p,
        "--model",
        "linux",
        "--json",
    ]);
    let notes = if s.is_array() { &s[0] } else { &s }["notes"].to_string();
    assert!(
        notes.contains("ext4: its inode updates are not priced") && notes.contains("tmpfs"),
        "{notes}"
    );
}

#[test]
fn run_write_stat_carries_the_live_pair() {
    if crate::skip::without("tmpfs") {
        return;
    }
    let _cpu = cpu_lock();
    let v = short_run("write-stat", &["--json"]);
    let pair = &v["pair"];
    assert_eq!(pair["fs_type"], "tmpfs");
    assert!(pair["mount_options"].is_array());
    for k in ["queried_ns", "control_ns", "delta_ns", "ratio"] {
        let (lo, pt, hi) = (
            f64_at(pair, &[k, "lower"]),
            f64_at(pair, &[k, "point"]),
            f64_at(pair, &[k, "upper"]),
        );
        assert!(lo <= pt && pt <= hi, "{k}: {pair}");
    }
    // Either the kernel showed multigrain, or the pair checked that both sides are equal.
    assert!(pair["multigrain_observed"] == true || pair["check"].is_string());
}

#[test]
fn bad_dirs_are_refused_before_measuring() {
    tscope()
        .args(["probe", "--quick", "--dir", "/nonexistent/tscope"])
        .assert()
        .code(2)
        .stderr(contains("--dir '/nonexistent/tscope'"));
    tscope()
        .args(["probe", "--quick", "--dir", "/etc/hostname"])
        .assert()
        .code(2)
        .stderr(contains("is not a directory"));
    tscope()
        .args(["probe", "--quick", "--dir", "/dev/shm", "--source", "rdtsc"])
        .assert()
        .code(2)
        .stderr(contains("add syscall:realtime to --source"));
}

#[test]
fn the_control_workload_records_a_stat_that_asks_no_time() {
    if crate::skip::without("tmpfs") {
        return;
    }
    let _cpu = cpu_lock();
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("ctl.json");
    let v = short_run(
        "write-stat-control",
        &["--record", rec.to_str().unwrap(), "--json"],
    );
    let it = v["iteration"].as_array().unwrap();
    assert_eq!(it[1]["nr"], "statx");
    assert_eq!(it[1]["flags"], "STATX_SIZE");
    assert_eq!(v["runs"][0]["mtimes"]["source"], "statx");
    // Replayed: the statx queries nothing, so the stock multigrain model stores no fine time.
    let s = json(&[
        "simulate",
        "--run",
        rec.to_str().unwrap(),
        "--model",
        "linux@6.18",
        "--set",
        "precise_read_ns=20",
        "--set",
        "coarse_read_ns=4",
        "--set",
        "tick_ns=4000000",
        "--json",
    ]);
    let m = if s.is_array() { &s[0] } else { &s };
    let stock = &m["estimates"][0];
    assert_eq!(stock["policy"], "linux:multigrain");
    assert_eq!(stock["reads_per_op"]["counter"], 0.0, "{stock}");
    assert!(f64_at(stock, &["inode_updates_per_op"]) < 0.01, "{stock}");
}

#[test]
fn update_validation_holds_several_tasks_and_a_recorded_program() {
    if crate::skip::without("tmpfs")
        || crate::skip::without("multigrain")
        || crate::skip::without("strace")
    {
        return;
    }
    let _cpu = cpu_lock();
    let scratch = || -> std::collections::BTreeSet<String> {
        std::fs::read_dir("/dev/shm")
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("tscope-run."))
            .collect()
    };
    let before = scratch();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sh.strace");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // A program that appends to a file and asks whether it is empty, 200 times, with the
    // shell's builtins only (no fork): a write and a stat per round, recorded by strace.
    tscope()
        .current_dir(&work)
        .args(["record", "-o", log.to_str().unwrap(), "--", "sh", "-c"])
        .arg("i=0; while [ $i -lt 200 ]; do echo x >> f; [ -s f ]; i=$((i+1)); done")
        .assert()
        .success();
    let v = json(&[
        "simulate",
        "update",
        "--validate",
        "--profile",
        "tests/data/profile-kvm-xeon.json",
        "--validate-dir",
        "/dev/shm",
        "--validate-strace",
        log.to_str().unwrap(),
        "--json",
    ]);
    let rows = v["rows"].as_array().unwrap_or_else(|| panic!("{v}"));
    let case = |prefix: &str| {
        rows.iter()
            .find(|r| r["case"].as_str().unwrap().starts_with(prefix))
            .unwrap_or_else(|| panic!("no row '{prefix}' in {v}"))
    };
    let notes = v["notes"].to_string();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus >= 2 {
        let t = case("write-stat × ");
        assert!(t["case"].as_str().unwrap().contains("tasks"), "{t}");
        // The kernel's knob is there with several tasks too: each pays its updates.
        assert!(f64_at(t, &["measured"]) > 0.0, "{t}");
    } else {
        assert!(notes.contains("no several-tasks row"), "{notes}");
    }
    let r = case("recorded sh.strace");
    // 200 rounds of a write after a stat that asked for the times: the model counts about
    // one more update per round, and the live replay shows the knob's cost.
    assert!(f64_at(r, &["predicted"]) > 0.0, "{r}");
    assert!(f64_at(r, &["measured"]) > 0.0, "{r}");
    assert!(
        notes.contains("sh.strace: ") && notes.contains("file calls per pass"),
        "{notes}"
    );
    // The Δ split by kind of call: every kind the loop issues, live beside the model.
    let kinds = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with("sh.strace on tmpfs, Δ by kind of call"))
        .unwrap_or_else(|| panic!("no by-kind note in {notes}"));
    for kind in ["write ×", "stat ×", "sums "] {
        assert!(kinds.contains(kind), "{kind} in {kinds}");
    }
    // Counted call by call with the kernel's counters: about one fine stamp per round, in the
    // kernel as in the model (the counters are the machine's, so the bound is loose).
    if !crate::skip::without("multigrain-counters") {
        let note = v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .find(|n| n.starts_with("sh.strace on tmpfs") && n.contains("call by call"))
            .unwrap_or_else(|| panic!("no call-by-call note in {notes}"));
        let num = |after: &str| -> f64 {
            let rest = note.split(after).nth(1).unwrap_or_else(|| panic!("{note}"));
            let n = rest.split_whitespace().next().unwrap();
            n.trim_matches(|c| c == '+' || c == ';' || c == ',')
                .parse()
                .unwrap_or_else(|e| panic!("{e}: '{n}' in {note}"))
        };
        let (kernel, model) = (num("fine stamps kernel "), num(" against model "));
        assert!(kernel > 100.0 && model > 100.0, "{note}");
        assert!((kernel - model).abs() < 0.2 * model, "{note}");
    }
    // No scratch left behind by the pairs and the replay.
    let after = scratch();
    assert!(after.is_subset(&before), "{after:?} against {before:?}");
}

#[test]
fn a_recording_for_the_update_validation_is_checked_first() {
    let dir = tempfile::tempdir().unwrap();
    let validate = |strace: &std::path::Path| {
        let mut c = tscope();
        c.args([
            "simulate",
            "update",
            "--validate",
            "--validate-dir",
            "/dev/shm",
        ])
        .args([
            "--profile",
            "tests/data/profile-kvm-xeon.json",
            "--validate-strace",
        ])
        .arg(strace);
        c
    };
    let missing = dir.path().join("missing.strace");
    validate(&missing)
        .assert()
        .failure()
        .stderr(contains("missing.strace"));
    let empty = write_tmp(dir.path(), "empty.strace", "");
    validate(&empty)
        .assert()
        .failure()
        .stderr(contains("no syscalls"));
    tscope()
        .args(["simulate", "vfsmix", "--validate", "--validate-strace"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(contains(
            "--validate-strace applies to `simulate update --validate` only",
        ));
}

mod loop_images;
