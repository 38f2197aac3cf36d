//! `tscope vm count`: bookworm's 6.1 cloud kernel under TCG with kprobes, held to the Linux
//! model; bad arguments; an interrupted kernel fetch leaves nothing behind.

use crate::common::tscope;
use crate::skip;
use predicates::str::contains;

/// The CI-sized kernel check: bookworm's 6.1 cloud kernel under TCG, pipe1 and write-stat on
/// tmpfs. pipe1 takes two coarse clock reads per op on 6.1 (`file_update_time` on the write,
/// `touch_atime` on the read), write-stat one (the write; the stat reads no clock), neither a
/// fine-grained one; each issues exactly its syscalls; and the Linux model agrees on every row.
#[test]
fn count_holds_the_6_1_model_to_the_kernel() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("qemu") {
        return;
    }
    let out = tscope()
        .args(["vm", "count", "--kernel-package", "linux-image-cloud-amd64"])
        .args(["--workload", "pipe1,write-stat", "--iterations", "1000"])
        .args([
            "--accel",
            "tcg",
            "--timeout",
            "120",
            "--fail-on",
            "mismatch",
        ])
        .arg("--json")
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("run tscope vm count");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(out.status.success(), "vm count: {stderr}\n{v:#}");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], "tscope-vm-count");
    // `show` reads it back: the same JSON, and the table vm count prints.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("count.json");
    std::fs::write(&saved, &out.stdout).unwrap();
    let again = tscope()
        .arg("show")
        .arg(&saved)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(again.stdout, out.stdout, "show --json of vm count's JSON");
    tscope()
        .arg("show")
        .arg(&saved)
        .assert()
        .success()
        .stdout(contains("write-stat"));
    let k = &v["kernels"][0];
    assert!(k["error"].is_null(), "{k}");
    // CONFIG_HZ from the package's /boot/config-*, not assumed.
    assert_eq!(k["hz_source"], "config", "{k}");
    assert_eq!(k["hz"], 250, "{k}");
    assert!(k["kprobe_profile"]
        .as_str()
        .unwrap()
        .contains("tscope_ktime_get_coarse_real_ts64"));
    let rows = v["rows"].as_array().unwrap();
    let get = |w: &str, f: &str| {
        rows.iter()
            .find(|r| r["workload"] == w && r["function"] == f)
            .unwrap_or_else(|| panic!("no row {w} {f}"))
    };
    for r in rows {
        for key in [
            "kernel_release",
            "kernel_package",
            "fs",
            "workload",
            "function",
            "kernel_per_op",
            "model",
            "model_per_op",
            "guest_ns_per_op",
        ] {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
        assert!(
            r["kernel_release"].as_str().unwrap().starts_with("6.1."),
            "{r}"
        );
        assert_eq!(r["fs"], "tmpfs");
        assert!(r["guest_ns_per_op"].as_f64().unwrap() > 0.0);
        assert_ne!(r["agrees"], false, "{r}");
    }
    let per = |w: &str, f: &str| get(w, f)["kernel_per_op"].as_f64().unwrap();
    // pipe1 on 6.1: one coarse read in the write (file_update_time) and one in the read
    // (atime_needs_update), and touch_atime reads the clock again when the atime is stale,
    // once per 4 ms tick at most: 2 plus at most the op's share of a tick (fs/inode.c,
    // touch_atime, v6.1). TCG runs an op in tens of µs, a loaded host in more.
    let pipe1 = per("pipe1", "ktime_get_coarse_real_ts64");
    let op_ns = get("pipe1", "ktime_get_coarse_real_ts64")["guest_ns_per_op"]
        .as_f64()
        .unwrap();
    assert!(
        (1.995..=2.0 + op_ns / 4e6 + 0.01).contains(&pipe1),
        "{pipe1} reads per op at {op_ns} ns per op"
    );
    assert!((per("write-stat", "ktime_get_coarse_real_ts64") - 1.0).abs() < 0.05);
    assert_eq!(per("pipe1", "ktime_get_real_ts64"), 0.0);
    assert_eq!(per("write-stat", "ktime_get_real_ts64"), 0.0);
    assert!((per("pipe1", "touch_atime") - 1.0).abs() < 0.01);
    // 6.1 has no multigrain functions: absent (null), not zero.
    assert!(get("pipe1", "ktime_get_coarse_real_ts64_mg")["kernel_per_op"].is_null());
    assert!((per("pipe1", "syscall:write") - 1.0).abs() < 0.01);
    assert!((per("write-stat", "syscall:newfstatat") - 1.0).abs() < 0.01);
    // Judged by the versioned model of the kernel's own release.
    assert_eq!(
        get("pipe1", "ktime_get_coarse_real_ts64")["model"],
        "linux@6.1"
    );
    // Equal successive mtimes: on 6.1 nearly every write-stat mtime repeats the last one.
    let acc = &v["accuracy"][0];
    assert_eq!(acc["workload"], "write-stat");
    assert!(
        acc["equal_successive_share"].as_f64().unwrap() > 0.9,
        "{acc}"
    );
}

#[test]
fn count_bad_arguments_are_clear_errors() {
    for (args, text) in [
        (
            &["--workload", "pipe2"][..],
            "invalid value 'pipe2' for '--workload <NAME>'",
        ),
        (
            &["--fs", "zfs"][..],
            "[possible values: tmpfs, ext4, xfs, btrfs]",
        ),
        (&["--iterations", "0"][..], "--iterations must be"),
        (
            &["--kernel-package", "linux@"][..],
            "not a Debian package name",
        ),
        (
            &["--kernel", "/nonexistent/bzImage"][..],
            "--kernel: '/nonexistent/bzImage' is not a file",
        ),
    ] {
        tscope()
            .args(["vm", "count"])
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(text));
    }
}

/// SIGINT while the kernel is fetched into an empty cache: tscope exits 130 at once, and no
/// apt-get, dpkg-deb or tar, no `fetch-PID`, `run-PID` or `*.tmpPID` is left behind.
#[test]
fn count_interrupted_during_the_fetch_leaves_nothing() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("qemu") {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let bin = tscope().get_program().to_owned();
    let mut child = std::process::Command::new(bin)
        .args(["vm", "count", "--kernel-package", "linux-image-cloud-amd64"])
        .args(["--workload", "pipe1", "--accel", "tcg", "--json"])
        .env("XDG_CACHE_HOME", cache.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let fetch = cache.path().join(format!("tscope/fetch-{}", child.id()));
    // The fetch directory appears once the guest binary has been read.
    while !fetch.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "tscope ended before fetching"
        );
        assert!(start.elapsed().as_secs() < 300, "no fetch started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let me = child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-INT", &me])
        .status()
        .unwrap()
        .success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(std::time::Duration::from_millis(200));
    // No process whose parent was tscope, nor one in the process groups it made, survives.
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok())
        .filter(|c| c.contains(&cache.path().display().to_string()))
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
    let mut stale = Vec::new();
    for e in walk(&cache.path().join("tscope")) {
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("fetch-") || name.starts_with("run-") || name.contains(".tmp") {
            stale.push(e);
        }
    }
    assert!(stale.is_empty(), "{stale:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn a_kernel_image_is_checked_before_any_boot() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a kernel\n").unwrap();
    // The first 4 KiB of a bzImage whose header declares a 2 MiB kernel: cut short.
    let mut head = vec![0u8; 4096];
    head[0x1F1] = 27;
    head[0x1F4..0x1F8].copy_from_slice(&(131_072u32).to_le_bytes());
    head[0x1FE] = 0x55;
    head[0x1FF] = 0xAA;
    head[0x202..0x206].copy_from_slice(b"HdrS");
    head[0x206..0x208].copy_from_slice(&0x020fu16.to_le_bytes());
    let cut = dir.path().join("bzImage");
    std::fs::write(&cut, &head).unwrap();
    for (k, why) in [(&text, "no bzImage setup header"), (&cut, "truncated")] {
        for room in ["count", "guest", "bench"] {
            tscope()
                .args(["vm", room, "--kernel"])
                .arg(k)
                .assert()
                .code(2)
                .stderr(contains("is not a bootable kernel"))
                .stderr(contains(why));
        }
    }
}
