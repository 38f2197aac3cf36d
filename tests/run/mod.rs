//! `tscope run`: every workload briefly, through the CLI. Invariants only (ops counted, the JSON
//! contract, files cleaned up, the recorded syscall sequence, mtime equality on this kernel),
//! never wall-clock thresholds.

mod errors;
mod syscalls;

use crate::common::{empty, json, tscope};
use serde_json::Value;

/// Short sampling: 3 samples of 100 ms after a 100 ms warm-up.
const QUICK: [&str; 6] = [
    "--duration",
    "0.3",
    "--interval-ms",
    "100",
    "--warmup",
    "0.1",
];

fn run(args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&QUICK);
    all.push("--json");
    json(&all)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The JSON contract of every run, and ops counted.
fn check_runs(v: &Value, workload: &str, expect: &[(u64, &str)]) {
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["workload"], workload);
    assert_eq!(v["partial"], false);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), expect.len(), "{v}");
    for (r, (tasks, mode)) in runs.iter().zip(expect) {
        assert_eq!(r["tasks"], *tasks);
        assert_eq!(r["mode"], *mode);
        assert_eq!(r["partial"], false);
        let o = &r["ops_per_sec"];
        let (med, lo, hi) = (f(&o["median"]), f(&o["min"]), f(&o["max"]));
        // A 100 ms interval can complete no op at all when the disk stalls (vfsmix on the root
        // filesystem while other tests write): ordered, never negative, and not all zero.
        assert!(
            lo >= 0.0 && lo <= med && med <= hi && hi > 0.0,
            "{workload}: {o}"
        );
        let samples = r["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 3);
        assert!(samples.iter().all(|s| f(s) >= 0.0), "{workload}: {r}");
        assert!(samples.iter().any(|s| f(s) > 0.0), "{workload}: {r}");
        let per_task = r["per_task"].as_array().unwrap();
        assert_eq!(per_task.len() as u64, *tasks);
        for t in per_task {
            assert!(t["iterations"].as_u64().unwrap() > 0);
            // One task's slowest interval may complete nothing while the CPU is taken (the
            // other tests run beside it); its best one never does.
            assert!(f(&t["ops_per_sec"]["min"]) >= 0.0, "{workload}: {t}");
            assert!(f(&t["ops_per_sec"]["max"]) > 0.0, "{workload}: {t}");
        }
        assert_eq!(r["per_task_min"].as_array().unwrap().len(), 3);
        assert_eq!(r["per_task_max"].as_array().unwrap().len(), 3);
    }
}

fn ops(v: &Value) -> Vec<(String, Option<String>)> {
    v["iteration"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["syscall"].as_str().unwrap().to_string(),
                o["inode"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn seq(xs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    xs.iter()
        .map(|(s, i)| (s.to_string(), i.map(str::to_string)))
        .collect()
}

/// Runs with `--record` and returns (report, record).
fn recorded(args: &[&str]) -> (Value, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.json");
    let mut all = args.to_vec();
    all.extend(["--record", path.to_str().unwrap()]);
    let v = run(&all);
    let rec: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(rec["schema_version"], 1);
    assert_eq!(rec["kind"], "tscope-run-record");
    assert_eq!(rec["workload"], v["workload"]);
    assert_eq!(rec["tasks"], 1);
    assert!(f(&rec["ops_per_sec"]) > 0.0);
    assert_eq!(rec["iteration"], v["iteration"]);
    (v, rec)
}

#[test]
fn pipe1_honours_the_contract_in_both_modes() {
    let _cpu = crate::common::cpu_lock();
    let v = run(&["pipe1", "--tasks", "1,2", "--mode", "processes,threads"]);
    check_runs(
        &v,
        "pipe1",
        &[
            (1, "processes"),
            (1, "threads"),
            (2, "processes"),
            (2, "threads"),
        ],
    );
    assert_eq!(v["fs_type"], "pipefs");
    assert_eq!(v["syscalls_per_iteration"], 2);
}

#[test]
fn pipe1_record_has_one_pipe_inode() {
    let _cpu = crate::common::cpu_lock();
    let (_, rec) = recorded(&["pipe1", "--tasks", "1"]);
    assert_eq!(rec["fs_type"], "pipefs");
    assert_eq!(
        ops(&rec),
        seq(&[("write", Some("pipe:0")), ("read", Some("pipe:0"))])
    );
    assert!(rec["iteration"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["fs"] == "pipefs"));
}

#[test]
fn pingpong_runs_on_one_and_on_two_cpus() {
    let _cpu = crate::common::cpu_lock();
    let (v, rec) = recorded(&["pingpong", "--mode", "processes,threads"]);
    let runs = v["runs"].as_array().unwrap();
    let placements: Vec<&str> = runs
        .iter()
        .map(|r| r["placement"].as_str().unwrap())
        .collect();
    assert_eq!(
        placements,
        ["same_cpu", "different_cpus", "same_cpu", "different_cpus"]
    );
    check_runs(
        &v,
        "pingpong",
        &[
            (1, "processes"),
            (1, "processes"),
            (1, "threads"),
            (1, "threads"),
        ],
    );
    let same = &runs[0]["per_task"][0];
    assert_eq!(same["cpu"], same["peer_cpu"]);
    let diff = &runs[1]["per_task"][0];
    assert_ne!(diff["cpu"], diff["peer_cpu"]);
    assert_eq!(
        ops(&rec),
        seq(&[
            ("write", Some("pipe:0")),
            ("read", Some("pipe:0")),
            ("write", Some("pipe:1")),
            ("read", Some("pipe:1")),
        ])
    );
    let tasks: Vec<u64> = rec["iteration"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["task"].as_u64().unwrap())
        .collect();
    assert_eq!(tasks, [0, 1, 1, 0]);
}

#[test]
fn vfsmix_records_its_definition_and_cleans_up() {
    let _cpu = crate::common::cpu_lock();
    // In memory where it can be: what is checked is the record and the cleanup, and a disk
    // that another test keeps flushing can stall every 100 ms interval of the run.
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        tempfile::tempdir_in("/dev/shm").unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let d = dir.path().to_str().unwrap();
    let (v, rec) = recorded(&["vfsmix", "--tasks", "1,2", "--mode", "threads", "--dir", d]);
    check_runs(&v, "vfsmix", &[(1, "threads"), (2, "threads")]);
    assert!(empty(dir.path()), "files left in {d}");
    assert_eq!(rec["fs_type"], v["fs_type"]);
    let file = Some("file:0");
    assert_eq!(
        ops(&rec),
        seq(&[
            ("open", file),
            ("lstat", file),
            ("lseek", file),
            ("close", file),
            ("open", file),
            ("write", file),
            ("mmap", file),
            ("page_fault", file),
            ("munmap", file),
            ("close", file),
            ("unlink", file),
        ])
    );
    let it = rec["iteration"].as_array().unwrap();
    assert_eq!(it[0]["flags"], "O_RDWR|O_CREAT|O_EXCL");
    assert_eq!(it[4]["flags"], "O_RDWR|O_CREAT|O_TRUNC");
    assert_eq!(rec["syscalls_per_iteration"], 10);
    let inodes = rec["inodes"].as_array().unwrap();
    assert_eq!(inodes[0]["id"], "file:0");
    assert_eq!(inodes[0]["fresh_each_iteration"], true);
}

#[test]
fn vfsmix_on_tmpfs_in_processes() {
    let _cpu = crate::common::cpu_lock();
    if crate::skip::without("tmpfs") {
        return;
    }
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let v = run(&[
        "vfsmix",
        "--tasks",
        "1",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    check_runs(&v, "vfsmix", &[(1, "processes")]);
    assert_eq!(v["fs_type"], "tmpfs");
    assert!(empty(dir.path()), "files left in {}", dir.path().display());
}

#[test]
fn write_stat_sees_no_equal_mtimes_where_write_only_sees_many() {
    let _cpu = crate::common::cpu_lock();
    let mut dirs = vec![tempfile::tempdir().unwrap()];
    if !crate::skip::without("tmpfs") {
        dirs.push(tempfile::tempdir_in("/dev/shm").unwrap());
    }
    // Linux ≥ 6.13 has multigrain timestamps on ext4 and tmpfs; before, the "no equal mtimes
    // after a stat" half of this test has nothing to hold (recorded as a skip).
    let multigrain = !crate::skip::without("multigrain");
    for dir in &dirs {
        let d = dir.path().to_str().unwrap();
        let (stat, rec) = recorded(&["write-stat", "--tasks", "1", "--dir", d]);
        check_runs(&stat, "write-stat", &[(1, "processes")]);
        assert_eq!(
            ops(&rec),
            seq(&[("pwrite", Some("file:0")), ("fstat", Some("file:0"))])
        );
        let only = run(&["write-only", "--tasks", "1", "--dir", d]);
        check_runs(&only, "write-only", &[(1, "processes")]);
        assert_eq!(ops(&only), seq(&[("pwrite", Some("file:0"))]));
        assert!(empty(dir.path()), "files left in {d}");

        let ms = &stat["runs"][0]["mtimes"];
        let mo = &only["runs"][0]["mtimes"];
        assert_eq!(ms["source"], "fstat");
        assert_eq!(mo["source"], "realtime_coarse");
        // Whether the inference matched depends on what else runs (fine-grained stamps taken by
        // other processes move the multigrain floor): only that it was checked is asserted.
        assert!(mo["inference_checks"].as_u64().unwrap() >= 1, "{mo}");
        assert!(mo["inference_checked"].is_boolean());
        assert!(ms["pairs"].as_u64().unwrap() > 0);
        // Thousands of writes per coarse tick: most successive mtimes are equal.
        assert!(f(&mo["equal_share"]) > 0.5, "{mo}");
        let fs = stat["fs_type"].as_str().unwrap();
        if multigrain && (fs == "ext4" || fs == "tmpfs") {
            assert_eq!(ms["equal"], 0, "{fs}: {ms}");
        }
    }
}

#[test]
fn getppid_and_sched_yield() {
    let _cpu = crate::common::cpu_lock();
    let (g, rec) = recorded(&["getppid", "--tasks", "1"]);
    check_runs(&g, "getppid", &[(1, "processes")]);
    assert_eq!(ops(&rec), seq(&[("getppid", None)]));
    let (y, rec) = recorded(&["sched_yield", "--tasks", "1", "--mode", "threads"]);
    check_runs(&y, "sched_yield", &[(1, "threads")]);
    assert_eq!(ops(&rec), seq(&[("sched_yield", None)]));
    let s = &y["runs"][0]["sched_yield"];
    assert!(f(&s["yield_ns"]) > 0.0 && f(&s["getppid_ns"]) > 0.0, "{s}");
    assert!(s["summary"].as_str().unwrap().contains("sched_yield"));
    // Linux's sched_yield always goes through schedule(): more work than a null syscall.
    assert_eq!(s["entered_scheduler"], true, "{s}");
    assert!(y["runs"][0]["per_task"][0]["voluntary_switches"].is_u64());
}

#[test]
fn mem_reports_prefault_and_copy_per_thread() {
    let _cpu = crate::common::cpu_lock();
    for op in ["wr", "rd", "rw"] {
        let v = json(&[
            "run",
            "mem",
            "--op",
            op,
            "--size",
            "8m",
            "--block",
            "1k",
            "--threads",
            "1,2",
            "--json",
        ]);
        assert_eq!(v["workload"], "mem");
        assert_eq!(v["runs"].as_array().unwrap().len(), 0);
        let m = &v["mem"];
        assert_eq!(m["op"], op);
        assert_eq!(m["size_bytes"], 8 << 20);
        let runs = m["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        for (r, threads) in runs.iter().zip([1u64, 2]) {
            assert_eq!(r["threads"], threads);
            let lines = r["per_thread"].as_array().unwrap();
            assert_eq!(lines.len() as u64, threads);
            let share = (8u64 << 20) / threads;
            for l in lines {
                assert!(f(&l["prefault_ms"]) > 0.0);
                assert!(f(&l["copy_mib_per_sec"]) > 0.0);
                let bytes = l["bytes"].as_u64().unwrap();
                assert_eq!(bytes, if op == "rw" { share / 2 } else { share });
            }
            assert!(f(&r["total_mib_per_sec"]) > 0.0);
        }
    }
    let text = tscope()
        .args(["run", "mem", "--size", "4m", "--threads", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("Thread 2"), "{text}");
    assert!(text.contains("preflt=") && text.contains("Total transfer rate:"));
}

#[test]
fn pagezero_runs_every_variant_hot_and_cold() {
    let _cpu = crate::common::cpu_lock();
    let v = json(&["run", "pagezero", "--size", "4m", "--json"]);
    let z = &v["pagezero"];
    assert!(z["erms"].is_boolean());
    let results = z["results"].as_array().unwrap();
    for cache in ["hot", "cold"] {
        for variant in ["rep_stosq", "rep_stosb", "aligncheck", "memset"] {
            let r = results
                .iter()
                .find(|r| r["variant"] == variant && r["cache"] == cache)
                .unwrap_or_else(|| panic!("{variant} {cache} missing"));
            let (p, lo, hi) = (
                f(&r["ns_per_page"]),
                f(&r["ns_per_page_lower"]),
                f(&r["ns_per_page_upper"]),
            );
            assert!(p > 0.0 && lo <= p && p <= hi, "{r}");
            assert!(f(&r["gib_per_sec"]) > 0.0);
        }
    }
}

#[test]
fn tables_render() {
    let _cpu = crate::common::cpu_lock();
    let out = tscope()
        .args(["run", "getppid", "--tasks", "1", "--markdown"])
        .args(QUICK)
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("| tasks | mode |"), "{md}");
    let out = tscope()
        .args(["run", "pipe1", "--tasks", "1"])
        .args(QUICK)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("ops/s median") && text.contains("write(pipe:0)"),
        "{text}"
    );
    let out = tscope()
        .args(["run", "getppid", "--tasks", "1", "--csv"])
        .args(QUICK)
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("workload,tasks,mode,placement,ops_per_sec_median"));
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&row[..3], ["getppid", "1", "processes"]);
    assert!(row[4].parse::<f64>().unwrap() > 0.0, "{csv}");
}

#[test]
fn recorded_runs_feed_the_simulator() {
    let _cpu = crate::common::cpu_lock();
    for args in [&["pipe1", "--tasks", "1"][..], &["vfsmix", "--tasks", "1"]] {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("rec.json");
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&QUICK);
        all.extend(["--dir", dir.path().to_str().unwrap()]);
        all.extend(["--record", rec.to_str().unwrap()]);
        tscope().args(&all).assert().success();
        // The recorded profile prices the reads: a quick probe on a loaded machine can derive a
        // precise-read cost at or below 0, which simulate rightly refuses.
        let profile = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/profile-kvm-xeon.json"
        );
        let v = json(&[
            "simulate",
            "--run",
            rec.to_str().unwrap(),
            "--model",
            "linux@6.13",
            "--profile",
            profile,
            "--json",
        ]);
        assert_eq!(v["scenario"], format!("run:{}", args[0]));
        assert_eq!(v["model"], "linux@6.13", "{v}");
        // The multigrain model's policies, in its order (src/kernel/linux/mod.rs).
        let policies: Vec<&str> = v["estimates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["policy"].as_str().unwrap())
            .collect();
        assert_eq!(
            policies,
            ["linux:multigrain", "linux:coarse", "linux:precise"],
            "{v}"
        );
    }
}
