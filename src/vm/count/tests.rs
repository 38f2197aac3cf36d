//! Unit tests of `vm count`'s host side that need no guest: rows from a guest's raw counts
//! (baseline subtracted, absent functions null, the tolerance), the model picked per kernel
//! release, and the sweep of stale scratch.

use std::collections::BTreeMap;

use super::guest::{GuestCount, WorkloadCount};
use super::rows::{model_for, rows, RowKind, TOLERANCE, TOLERANCE_FRACTIONAL};
use crate::kernel::ModelId;
use crate::trace::FsKind;
use crate::workload::WorkloadName;

fn map(v: &[(&str, u64)]) -> BTreeMap<String, u64> {
    v.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

/// pipe1 on a 6.1 kernel as its guest reports it: 1000 iterations, a baseline with a few
/// hits of its own (the pipe's creation), `inode_needs_update_time` only as `.part.0`.
fn pipe1_6_1() -> GuestCount {
    GuestCount {
        release: "6.1.0-57-cloud-amd64".into(),
        probes: vec![
            (
                "ktime_get_coarse_real_ts64".into(),
                "ktime_get_coarse_real_ts64".into(),
            ),
            ("ktime_get_real_ts64".into(), "ktime_get_real_ts64".into()),
            (
                "inode_needs_update_time".into(),
                "inode_needs_update_time.part.0".into(),
            ),
        ],
        syscall_hist: true,
        runs: vec![WorkloadCount {
            workload: WorkloadName::Pipe1,
            fs: FsKind::Tmpfs,
            iterations: 1000,
            ns_per_op: 20_000.0,
            baseline_hits: map(&[("ktime_get_coarse_real_ts64", 3)]),
            hits: map(&[
                ("ktime_get_coarse_real_ts64", 2003),
                ("inode_needs_update_time", 1000),
            ]),
            baseline_syscalls: map(&[("pipe2", 1), ("close", 2)]),
            syscalls: map(&[
                ("pipe2", 1),
                ("close", 2),
                ("write", 1000),
                ("read", 1000),
                ("getpid", 700),
            ]),
            equal_mtime_share: None,
            ..WorkloadCount::default()
        }],
        ..GuestCount::default()
    }
}

#[test]
fn rows_subtract_the_baseline_and_mark_absent_functions_null() {
    let r = rows("linux-image-6.1.0-57-cloud-amd64", 250, &pipe1_6_1()).unwrap();
    let row = |f: &str| r.iter().find(|x| x.function == f).unwrap();
    let coarse = row("ktime_get_coarse_real_ts64");
    assert_eq!(coarse.kernel_per_op, Some(2.0));
    assert_eq!(coarse.kind, RowKind::Clock);
    assert_eq!(coarse.model, "linux@6.1");
    // The model is evaluated at 20 µs per op and HZ 250: a little over two reads per op.
    let m = coarse.model_per_op.unwrap();
    assert!((2.0..2.05).contains(&m), "{m}");
    assert_eq!(coarse.agrees, Some(true));
    // Not in this kernel: null, not 0; it agrees with a model that predicts none.
    let mg = row("ktime_get_coarse_real_ts64_mg");
    assert_eq!(mg.kernel_per_op, None);
    assert_eq!(mg.model_per_op, Some(0.0));
    // Context functions carry the copies probed and no model.
    let inut = row("inode_needs_update_time");
    assert_eq!(inut.kernel_per_op, Some(1.0));
    assert_eq!(inut.model_per_op, None);
    assert_eq!(inut.agrees, None);
    assert_eq!(inut.symbols, ["inode_needs_update_time.part.0"]);
    // Syscalls: the definition's, and any other that runs at least every other op.
    assert_eq!(row("syscall:write").kernel_per_op, Some(1.0));
    assert_eq!(row("syscall:write").agrees, Some(true));
    let extra = row("syscall:getpid");
    assert_eq!(extra.model_per_op, Some(0.0));
    assert_eq!(extra.agrees, Some(false));
    assert!(r.iter().all(|x| x.function != "syscall:pipe2"));
}

#[test]
fn fractional_kernel_counts_get_the_wider_tolerance() {
    let mut g = pipe1_6_1();
    g.runs[0]
        .hits
        .insert("ktime_get_coarse_real_ts64".into(), 2203); // 2.2 per op
    let r = rows("p", 250, &g).unwrap();
    let coarse = r
        .iter()
        .find(|x| x.function == "ktime_get_coarse_real_ts64")
        .unwrap();
    assert_eq!(coarse.tolerance, TOLERANCE_FRACTIONAL);
    assert_eq!(coarse.agrees, Some(true), "{coarse:?}");
    g.runs[0]
        .hits
        .insert("ktime_get_coarse_real_ts64".into(), 3003); // 3.0: a whole count
    let r = rows("p", 250, &g).unwrap();
    let coarse = r
        .iter()
        .find(|x| x.function == "ktime_get_coarse_real_ts64")
        .unwrap();
    assert_eq!(coarse.tolerance, TOLERANCE);
    assert_eq!(coarse.agrees, Some(false));
}

#[test]
fn the_model_follows_the_kernel_release() {
    // The kernel's own version picks the model's version (its counts change at 6.13, 6.15).
    assert_eq!(model_for("6.1.0-57-cloud-amd64").label(), "linux@6.1");
    assert_eq!(
        model_for("6.12.117+deb13-cloud-amd64").label(),
        "linux@6.12"
    );
    assert_eq!(model_for("6.13.0").label(), "linux@6.13");
    assert_eq!(model_for("7.2.13+deb14-cloud-amd64").label(), "linux@7.2");
    assert!(model_for("7.2.13").version >= crate::kernel::Version::new(6, 15));
    // No version in the release: the newest modelled.
    assert_eq!(
        model_for("garbage"),
        ModelId::newest(crate::kernel::Family::Linux)
    );
    // Context functions have no model count; clock reads do.
    let est = super::rows::model_estimate(
        "6.1.0",
        250,
        WorkloadName::WriteOnly,
        FsKind::Tmpfs,
        20_000.0,
        &[],
        None,
    )
    .ok();
    assert!(est.is_some());
    assert_eq!(super::rows::model_per_op(est.as_ref(), "touch_atime"), None);
    let (name, n) = super::rows::model_per_op(est.as_ref(), "ktime_get_real_ts64").unwrap();
    assert_eq!((name.as_str(), n), ("linux@6.1", 0.0));
}

#[test]
fn stale_scratch_of_dead_processes_is_swept() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path();
    let dead = 4_194_304 + 7; // above pid_max's limit: no such process
    let me = std::process::id();
    for d in [
        format!("run-{dead}"),
        format!("fetch-{dead}"),
        format!("run-{me}"),
    ] {
        std::fs::create_dir_all(c.join(&d)).unwrap();
        std::fs::write(c.join(d).join("initramfs.cpio"), "x").unwrap();
    }
    std::fs::create_dir_all(c.join("kernels/k")).unwrap();
    std::fs::create_dir_all(c.join("vmlinux")).unwrap();
    for f in [
        format!("kernels/k/vmlinuz.tmp{dead}"),
        format!("vmlinux/v.elf.tmp{dead}"),
        format!("vmlinux/v.elf.tmp{me}"),
        "kernels/k/vmlinuz".into(),
    ] {
        std::fs::write(c.join(f), "x").unwrap();
    }
    crate::vm::boot::scratch::sweep_stale(c);
    let exists = |p: String| c.join(p).exists();
    assert!(!exists(format!("run-{dead}")));
    assert!(!exists(format!("fetch-{dead}")));
    assert!(!exists(format!("kernels/k/vmlinuz.tmp{dead}")));
    assert!(!exists(format!("vmlinux/v.elf.tmp{dead}")));
    // A live process's scratch and finished entries stay.
    assert!(exists(format!("run-{me}")));
    assert!(exists(format!("vmlinux/v.elf.tmp{me}")));
    assert!(exists("kernels/k/vmlinuz".into()));
}

#[test]
fn the_timing_pass_travels_from_guest_to_rows() {
    // What a guest prints (its `count` section), timing fields included …
    let json = r#"{"release":"7.2.13+deb14-cloud-amd64","probes":[],"syscall_hist":false,
        "runs":[{"workload":"write-stat","fs":"tmpfs","iterations":100,"ns_per_op":3000000.0,
          "baseline_hits":{},"hits":{},"baseline_syscalls":{},"syscalls":{},
          "ns_by_position":[2900000.0,100000.0],"timing_iterations":100,
          "tick_moves_by_position":[50,0]}],
        "errors":[],"timing_clock_read_ns":850.0}"#;
    let g: GuestCount = serde_json::from_str(json).unwrap();
    assert_eq!(g.timing_clock_read_ns, Some(850.0));
    assert_eq!(g.runs[0].ns_by_position, [2_900_000.0, 100_000.0]);
    assert_eq!(g.runs[0].timing_iterations, 100);
    // … named by the scenario's ops in every row.
    let r = rows("p", 250, &g).unwrap();
    let want = [
        super::rows::SyscallTime {
            syscall: "write".into(),
            ns: 2_900_000.0,
            tick_moves_per_op: Some(0.5),
            stamp_offset: None,
            stamp_offsets: Vec::new(),
            stamp_reads: None,
        },
        super::rows::SyscallTime {
            syscall: "stat".into(),
            ns: 100_000.0,
            tick_moves_per_op: Some(0.0),
            stamp_offset: None,
            stamp_offsets: Vec::new(),
            stamp_reads: None,
        },
    ];
    assert!(!r.is_empty());
    assert!(r.iter().all(|x| x.guest_ns_by_syscall == want));
    // An older guest's count, without them, still parses: nothing timed, an even spread.
    let old = json
        .replace(
            r#""ns_by_position":[2900000.0,100000.0],"timing_iterations":100,
          "tick_moves_by_position":[50,0]"#,
            r#""x":0"#,
        )
        .replace(r#","timing_clock_read_ns":850.0"#, "");
    let g: GuestCount = serde_json::from_str(&old).unwrap();
    assert_eq!(g.timing_clock_read_ns, None);
    assert!(rows("p", 250, &g)
        .unwrap()
        .iter()
        .all(|x| x.guest_ns_by_syscall.is_empty()));
    // A timing pass of the wrong length is not used.
    let mut g = g;
    g.runs[0].ns_by_position = vec![1.0; 3];
    assert!(super::rows::ns_by_syscall(&g.runs[0]).is_empty());
}

#[test]
fn the_model_spreads_the_op_as_the_guest_timed_it() {
    // vfsmix on 7.2 at 3 ms per op, HZ 250: O_TRUNC's fine reads depend on whether the tick
    // moves between create and O_TRUNC. Fast create..close (the ext4 guests' shape): nearly
    // one; evenly: clearly fewer.
    let t = |ns: [f64; 11]| -> Vec<super::rows::SyscallTime> {
        crate::workload::def::positions(WorkloadName::Vfsmix)
            .iter()
            .zip(ns)
            .map(|(s, ns)| super::rows::SyscallTime {
                syscall: s.to_string(),
                ns,
                tick_moves_per_op: None,
                stamp_offset: None,
                stamp_offsets: Vec::new(),
                stamp_reads: None,
            })
            .collect()
    };
    let fine = |timing: &[super::rows::SyscallTime]| {
        let est = super::rows::model_estimate(
            "7.2.13",
            250,
            WorkloadName::Vfsmix,
            FsKind::Ext4,
            3e6,
            timing,
            None,
        )
        .ok();
        super::rows::model_per_op(est.as_ref(), "ktime_get_real_ts64_mg")
            .unwrap()
            .1
    };
    let fast_first = t([2e4, 1e4, 1e4, 1e4, 4e5, 1e5, 1e5, 4e5, 1e5, 5e5, 1e6]);
    let even = fine(&[]);
    let weighted = fine(&fast_first);
    assert!(weighted > 0.95, "{weighted}");
    assert!(even < 0.8, "{even}");
}

#[test]
fn the_traced_pass_travels_from_guest_to_rows_and_moves_the_models_stamps() {
    // A guest's vfsmix run with its traced pass (ext4 on 7.2, the shape measured there) …
    let ns = [7e5, 1e5, 3e4, 6e4, 5e5, 3e5, 3e5, 3e5, 2e5, 7e5, 1.7e6];
    let at = [
        Some(0.9),
        None,
        None,
        None,
        Some(0.9),
        Some(0.2),
        Some(0.4),
        None,
        None,
        None,
        Some(0.4),
    ];
    let (moves, reads) = ([0u64; 11], [Some(2.0); 11]);
    let stamps: Vec<Vec<f64>> = at.iter().map(|a| a.iter().copied().collect()).collect();
    let json = serde_json::json!({
        "release": "7.2.13+deb14-cloud-amd64", "probes": [], "syscall_hist": false,
        "runs": [{"workload": "vfsmix", "fs": "ext4", "iterations": 100,
            "ns_per_op": 5.2e6, "baseline_hits": {}, "hits": {}, "baseline_syscalls": {},
            "syscalls": {}, "ns_by_position": ns, "timing_iterations": 100,
            "tick_moves_by_position": moves, "stamp_offset_by_position": at,
            "stamp_offsets_by_position": stamps, "stamp_reads_by_position": reads,
            "traced_iterations": 50}],
        "errors": [], "trace_clock": "x86-tsc"});
    let g: GuestCount = serde_json::from_value(json).unwrap();
    assert_eq!(g.trace_clock.as_deref(), Some("x86-tsc"));
    let timing = super::rows::ns_by_syscall(&g.runs[0]);
    let got: Vec<Option<f64>> = timing.iter().map(|t| t.stamp_offset).collect();
    assert_eq!(got, at);
    assert_eq!(timing[0].stamp_reads, Some(2.0));
    // … puts the create's and the O_TRUNC's stamps late: the tick moves between them less
    // often than with every stamp at its syscall's start (0.71 ms of the 5.2 ms op between
    // the two stamps against 0.89 ms; a 4 ms tick: about 0.045 fewer moves per op), so more
    // O_TRUNCs take the fine read.
    let fine = |timing: &[super::rows::SyscallTime]| {
        let est = super::rows::model_estimate(
            "7.2.13",
            250,
            WorkloadName::Vfsmix,
            FsKind::Ext4,
            5.2e6,
            timing,
            None,
        )
        .ok();
        super::rows::model_per_op(est.as_ref(), "ktime_get_real_ts64_mg")
            .unwrap()
            .1
    };
    let at_start: Vec<_> = timing
        .iter()
        .cloned()
        .map(|t| super::rows::SyscallTime {
            stamp_offset: None,
            stamp_offsets: Vec::new(),
            ..t
        })
        .collect();
    let (late, start) = (fine(&timing), fine(&at_start));
    assert!(late > start + 0.03, "{late} against {start}");
    // Untraced (older guests, or a trace that dropped events): the op's start, as before.
    let mut g = g;
    g.runs[0].traced_iterations = 0;
    assert!(super::rows::ns_by_syscall(&g.runs[0])
        .iter()
        .all(|t| t.stamp_offset.is_none()));
}

#[test]
fn the_clocksource_and_the_kernels_own_counters_sit_beside_the_kprobes() {
    // write-stat on a 7.2 guest on tsc: 1000 iterations, every write a fine stamp; the tick
    // read the clock 150 more times than the leaves; the kernel's fine_stamps agree.
    let mut g = pipe1_6_1();
    g.release = "7.2.13+deb14-cloud-amd64".into();
    g.clocksource = Some("tsc".into());
    g.probes = vec![
        (
            "ktime_get_real_ts64_mg".into(),
            "ktime_get_real_ts64_mg".into(),
        ),
        (
            "inode_set_ctime_current".into(),
            "inode_set_ctime_current".into(),
        ),
        ("read_tsc".into(), "read_tsc".into()),
    ];
    let run = &mut g.runs[0];
    run.workload = WorkloadName::WriteStat;
    run.baseline_hits = map(&[("read_tsc", 40), ("ktime_get_real_ts64_mg", 1)]);
    run.hits = map(&[
        ("read_tsc", 1190),
        ("ktime_get_real_ts64_mg", 1001),
        ("inode_set_ctime_current", 1000),
    ]);
    run.baseline_multigrain = map(&[("fine_stamps", 1), ("ctime_updates", 1)]);
    run.multigrain = map(&[
        ("ctime_updates", 1001),
        ("ctime_swaps", 1001),
        ("fine_stamps", 1001),
        ("floor_swaps", 0),
    ]);
    let r = rows("p", 250, &g).unwrap();
    let row = |f: &str| r.iter().find(|x| x.function == f).unwrap();
    let cs = row("read_tsc");
    assert_eq!(cs.kind, RowKind::Clocksource);
    assert_eq!(cs.kernel_per_op, Some(1.15));
    assert_eq!(cs.model, "ktime_get_real_ts64+ktime_get_real_ts64_mg");
    assert_eq!(cs.model_per_op, Some(1.0));
    assert_eq!(cs.agrees, None);
    let fine = row("multigrain:fine_stamps");
    assert_eq!(fine.kind, RowKind::KernelCounter);
    assert_eq!(fine.model, "kprobe:ktime_get_real_ts64_mg");
    assert_eq!((fine.kernel_per_op, fine.agrees), (Some(1.0), Some(true)));
    assert_eq!(row("multigrain:ctime_updates").agrees, None);
    assert_eq!(row("multigrain:floor_swaps").model, "-");
    // A kernel without the counters or on an unknown clocksource adds no such rows.
    g.clocksource = Some("jiffies".into());
    g.runs[0].multigrain.clear();
    let r = rows("p", 250, &g).unwrap();
    assert!(r
        .iter()
        .all(|x| x.kind != RowKind::Clocksource && x.kind != RowKind::KernelCounter));
}

#[test]
fn the_plan_names_the_workloads_and_file_systems_and_the_command_line_the_clocksource() {
    use crate::vm::boot::plan::Plan;
    let mut cfg = super::CountConfig::new();
    let Plan::Count {
        workloads,
        filesystems,
        iterations,
    } = super::plan(&cfg)
    else {
        panic!("a count run's plan is a count plan");
    };
    let workloads: Vec<&str> = workloads.iter().map(|w| w.as_str()).collect();
    assert_eq!(
        workloads,
        [
            "pipe1",
            "pingpong",
            "write-only",
            "write-stat",
            "vfsmix",
            "fifo1"
        ]
    );
    assert_eq!(filesystems, [FsKind::Tmpfs]);
    assert_eq!(iterations, cfg.iterations);
    cfg.clocksource = Some(crate::vm::boot::clock::Clocksource::Hpet);
    cfg.filesystems = vec![FsKind::Ext4, FsKind::Xfs];
    let Plan::Count { filesystems, .. } = super::plan(&cfg) else {
        panic!("a count plan");
    };
    assert_eq!(filesystems, [FsKind::Ext4, FsKind::Xfs]);
    // The command line carries the kernel's own parameters, no word of tscope's.
    let line = crate::vm::boot::pipeline::cmdline(&cfg.boot, &cfg, 0);
    assert_eq!(line, "console=ttyS0 quiet panic=-1 clocksource=hpet");
}

#[test]
fn the_write_paths_update_functions_judge_the_models_inode_updates() {
    // A 6.12 guest: write-stat stores once per tick through generic_update_time (ext4 has no
    // ->update_time), as write-only on tmpfs does; btrfs is shown, not judged (its writes
    // store in btrfs_write_check). Then 7.2, where the kernel's ctime_updates counts them.
    let mut g = pipe1_6_1();
    g.release = "7.2.13+deb14-cloud-amd64".into();
    g.syscall_hist = false;
    g.probes = vec![("generic_update_time".into(), "generic_update_time".into())];
    let base = g.runs[0].clone();
    let run = |workload: &str, fs: &str, updates: u64| WorkloadCount {
        workload: WorkloadName::parse(workload).unwrap(),
        fs: FsKind::parse(fs).unwrap(),
        baseline_hits: map(&[("generic_update_time", 2)]),
        hits: map(&[("generic_update_time", 2 + updates)]),
        ..base.clone()
    };
    g.runs = vec![
        run("write-stat", "ext4", 1000),
        run("write-only", "tmpfs", 5),
        run("write-stat", "btrfs", 0),
    ];
    let r = rows("p", 250, &g).unwrap();
    let upd: Vec<_> = r.iter().filter(|x| x.kind == RowKind::Update).collect();
    assert_eq!(upd.len(), 3);
    assert!(upd.iter().all(|x| x.kind == RowKind::Update));
    let (ws, wo, bt) = (upd[0], upd[1], upd[2]);
    assert_eq!(ws.kernel_per_op, Some(1.0));
    assert!((ws.model_per_op.unwrap() - 1.0).abs() < 0.01, "{ws:?}");
    assert_eq!(ws.agrees, Some(true));
    // 20 µs per op, 4 ms tick: the model stores once per 200 writes.
    assert!(
        wo.model_per_op.unwrap() < 0.05 && wo.agrees == Some(true),
        "{wo:?}"
    );
    assert_eq!(bt.agrees, None);
    // A count that disagrees is caught.
    g.runs = vec![run("write-stat", "ext4", 10)];
    let r = rows("p", 250, &g).unwrap();
    let u = r.iter().find(|x| x.kind == RowKind::Update).unwrap();
    assert_eq!(u.agrees, Some(false));
}
