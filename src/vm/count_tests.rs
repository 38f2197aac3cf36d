//! Unit tests of `vm count`'s host side that need no guest: rows from a guest's raw counts
//! (baseline subtracted, absent functions null, the tolerance), the model picked per kernel
//! release, and the sweep of stale scratch.

use std::collections::BTreeMap;

use super::count_guest::{GuestCount, WorkloadCount};
use super::count_rows::{self, model_for, rows, TOLERANCE, TOLERANCE_FRACTIONAL};
use crate::kernel::ModelId;

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
            workload: "pipe1".into(),
            fs: "tmpfs".into(),
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
        }],
        ..GuestCount::default()
    }
}

#[test]
fn rows_subtract_the_baseline_and_mark_absent_functions_null() {
    let r = rows("linux-image-6.1.0-57-cloud-amd64", 250, &pipe1_6_1());
    let row = |f: &str| r.iter().find(|x| x.function == f).unwrap();
    let coarse = row("ktime_get_coarse_real_ts64");
    assert_eq!(coarse.kernel_per_op, Some(2.0));
    assert_eq!(coarse.kind, "clock");
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
    let r = rows("p", 250, &g);
    let coarse = r
        .iter()
        .find(|x| x.function == "ktime_get_coarse_real_ts64")
        .unwrap();
    assert_eq!(coarse.tolerance, TOLERANCE_FRACTIONAL);
    assert_eq!(coarse.agrees, Some(true), "{coarse:?}");
    g.runs[0]
        .hits
        .insert("ktime_get_coarse_real_ts64".into(), 3003); // 3.0: a whole count
    let r = rows("p", 250, &g);
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
    let est = count_rows::model_estimate("6.1.0", 250, "write-only", "tmpfs", 20_000.0);
    assert!(est.is_some());
    assert_eq!(count_rows::model_per_op(est.as_ref(), "touch_atime"), None);
    let (name, n) = count_rows::model_per_op(est.as_ref(), "ktime_get_real_ts64").unwrap();
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
    super::scratch::sweep_stale(c);
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
fn interruption_is_a_variant_even_under_context() {
    use crate::error::Context;
    let e: crate::error::Result<()> = Err(super::child::interrupted());
    let wrapped = e.context("fetching a kernel").unwrap_err();
    assert!(super::child::is_interrupted(&wrapped));
    // A failure that merely says the word is not an interruption.
    assert!(!super::child::is_interrupted(&crate::failure!(
        "interrupted"
    )));
}
