//! What tscope writes under directories it does not own, run as root against links and mounts
//! another user (nobody, uid 65534) planted in a world-writable sticky directory: the salvage
//! directory, the default fleet store, the scratch sweep; and the directories tscope refuses
//! for scratch (kernel interfaces, an empty or relative `TMPDIR`), the read-only store, and a
//! `probe --dir` that fails on one of its directories.

use std::os::unix::fs::{lchown, symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{cpu_lock, tscope};

const NOBODY: u32 = 65534;
const DOCS: [&str; 2] = [
    "tests/data/profile-kvm-xeon.json",
    "tests/data/compare/host.json",
];

/// A temporary directory any user may enter, with `shared/` in it: world-writable and sticky,
/// as `/tmp` is.
fn shared() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = t.path().join("shared");
    std::fs::create_dir(&s).unwrap();
    std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o1777)).unwrap();
    (t, s)
}

/// A symbolic link `link` -> `target`, owned by nobody (as if nobody had planted it).
fn plant(target: &Path, link: &Path) {
    symlink(target, link).unwrap();
    lchown(link, Some(NOBODY), Some(NOBODY)).unwrap();
}

fn fleet(db: &Path) -> assert_cmd::Command {
    let mut c = tscope();
    c.arg("fleet").arg("--db").arg(db);
    c
}

/// A store holding the two documents.
fn store(db: &Path) {
    fleet(db).arg("add").args(DOCS).assert().success();
}

/// A mount that is taken down when dropped, even when the test fails.
struct Mounted(PathBuf);

impl Mounted {
    fn new(args: &[&str], at: &Path) -> Mounted {
        let ok = Command::new("mount")
            .args(args)
            .arg(at)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount {args:?} {}", at.display());
        Mounted(at.to_path_buf())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn salvage_never_writes_through_a_planted_link() {
    if crate::skip::without("root") {
        return;
    }
    let (t, shared) = shared();
    let db = t.path().join("f.db");
    store(&db);
    let victim = t.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let victim_dir = t.path().join("victim-dir");
    std::fs::create_dir(&victim_dir).unwrap();
    // nobody's directory with a link to root's file and a dangling link, as document names.
    let rescued = shared.join("rescued");
    std::fs::create_dir(&rescued).unwrap();
    std::os::unix::fs::chown(&rescued, Some(NOBODY), Some(NOBODY)).unwrap();
    plant(&victim, &rescued.join("1.json"));
    plant(&t.path().join("created"), &rescued.join("2.json"));
    // A link as the directory itself, pointing at root's directory.
    let evil = shared.join("evil");
    plant(&victim_dir, &evil);
    for (dir, extra) in [
        (&rescued, &[][..]),
        (&rescued, &["--overwrite"][..]),
        (&evil, &[][..]),
        (&evil, &["--overwrite"][..]),
    ] {
        let out = fleet(&db)
            .args(["check", "--salvage"])
            .arg(dir)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"keep",
            "{extra:?}: {out:?}"
        );
        assert!(!t.path().join("created").exists(), "{extra:?}: {out:?}");
        assert!(crate::common::empty(&victim_dir), "{extra:?}: {out:?}");
        if dir == &evil {
            assert_eq!(out.status.code(), Some(2), "{out:?}");
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("symbolic link owned by uid"),
                "{out:?}"
            );
        } else if extra.is_empty() {
            assert_eq!(out.status.code(), Some(2), "{out:?}");
        } else {
            // Replaced: the links themselves, never their targets.
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            for n in ["1.json", "2.json"] {
                let m = std::fs::symlink_metadata(rescued.join(n)).unwrap();
                assert!(m.file_type().is_file(), "{n}");
            }
        }
    }
}

#[test]
fn salvage_into_a_directory_holding_files_is_refused_unless_overwrite() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("f.db");
    store(&db);
    let into = d.path().join("into");
    std::fs::create_dir(&into).unwrap();
    std::fs::write(into.join("notes.txt"), "mine").unwrap();
    std::fs::write(into.join("1.json"), "mine").unwrap();
    fleet(&db)
        .args(["check", "--salvage"])
        .arg(&into)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("already holds"))
        .stderr(predicates::str::contains("--overwrite"));
    assert_eq!(std::fs::read(into.join("1.json")).unwrap(), b"mine");
    fleet(&db)
        .args(["check", "--overwrite", "--salvage"])
        .arg(&into)
        .assert()
        .success();
    assert_eq!(std::fs::read(into.join("notes.txt")).unwrap(), b"mine");
    assert_ne!(std::fs::read(into.join("1.json")).unwrap(), b"mine");
    assert!(into.join("2.json").is_file());
    // A new directory, and an empty one, take a salvage without the flag.
    for fresh in [d.path().join("new/sub"), d.path().join("empty")] {
        if fresh.ends_with("empty") {
            std::fs::create_dir(&fresh).unwrap();
        }
        fleet(&db)
            .args(["check", "--salvage"])
            .arg(&fresh)
            .assert()
            .success();
        assert!(fresh.join("1.json").is_file() && fresh.join("2.json").is_file());
    }
}

#[test]
fn the_default_store_is_never_created_through_a_planted_link() {
    if crate::skip::without("root") {
        return;
    }
    let (t, shared) = shared();
    let elsewhere = t.path().join("elsewhere.db");
    plant(&elsewhere, &shared.join("tscope-fleet.db"));
    let out = tscope()
        .current_dir(&shared)
        .args(["fleet", "add"])
        .arg(std::fs::canonicalize(DOCS[0]).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        !elsewhere.exists(),
        "the store was created through the link"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"));
    // A link to root's existing file is refused too, the file untouched.
    std::fs::remove_file(shared.join("tscope-fleet.db")).unwrap();
    std::fs::write(&elsewhere, "keep").unwrap();
    plant(&elsewhere, &shared.join("tscope-fleet.db"));
    tscope()
        .current_dir(&shared)
        .args(["fleet", "ls"])
        .assert()
        .code(2);
    assert_eq!(std::fs::read(&elsewhere).unwrap(), b"keep");
    // Without the link, the store is made there, as a plain file.
    std::fs::remove_file(shared.join("tscope-fleet.db")).unwrap();
    store(&shared.join("tscope-fleet.db"));
    let m = std::fs::symlink_metadata(shared.join("tscope-fleet.db")).unwrap();
    assert!(m.file_type().is_file());
}

/// `tscope run vfsmix` briefly with `--dir dir` (its scratch creation sweeps `dir`).
fn short_vfsmix(dir: &Path) {
    tscope()
        .args(["run", "vfsmix", "--tasks", "1", "--duration", "0.1"])
        .args(["--interval-ms", "50", "--warmup", "0.05", "--dir"])
        .arg(dir)
        .assert()
        .success();
}

#[test]
fn the_sweep_leaves_a_locked_scratch_whose_pid_is_dead_here() {
    let _cpu = cpu_lock();
    let d = tempfile::tempdir().unwrap();
    // A run in another PID namespace (or on another host sharing the directory): its PID is
    // no process here (above pid_max), and it holds its directory's lock.
    let live = d.path().join("tscope-run.4194305.7");
    std::fs::create_dir(&live).unwrap();
    std::fs::write(live.join("f"), "measuring").unwrap();
    let held = tscope::dirfd::Dir::open(&live).unwrap();
    assert!(held.try_lock().unwrap());
    // A killed run's: nobody holds its lock.
    let stale = d.path().join("tscope-run.4194306.8");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("f"), "left").unwrap();
    short_vfsmix(d.path());
    assert_eq!(std::fs::read(live.join("f")).unwrap(), b"measuring");
    assert!(!stale.exists(), "a stale scratch directory was kept");
    drop(held);
    short_vfsmix(d.path());
    assert!(!live.exists(), "once its lock is free it is swept");
}

#[test]
fn the_sweep_never_crosses_a_mount_or_follows_a_link() {
    if crate::skip::without("root") {
        return;
    }
    let _cpu = cpu_lock();
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("data"), "keep").unwrap();
    let parent = d.path().join("parent");
    std::fs::create_dir(&parent).unwrap();
    let stale = parent.join("tscope-run.4194307.5");
    std::fs::create_dir_all(stale.join("m")).unwrap();
    symlink(&victim, stale.join("link")).unwrap();
    // A bind mount on the same device inside a stale-looking name, and one as the name itself.
    let _inside = Mounted::new(&["--bind", victim.to_str().unwrap()], &stale.join("m"));
    let whole = parent.join("tscope-run.4194308.6");
    std::fs::create_dir(&whole).unwrap();
    let _whole = Mounted::new(&["--bind", victim.to_str().unwrap()], &whole);
    short_vfsmix(&parent);
    assert_eq!(std::fs::read(victim.join("data")).unwrap(), b"keep");
    assert_eq!(std::fs::read(stale.join("m/data")).unwrap(), b"keep");
    assert_eq!(std::fs::read(whole.join("data")).unwrap(), b"keep");
    assert!(!stale.join("link").exists(), "the link itself is removed");
}

#[test]
fn a_kernel_interface_directory_is_refused_naming_its_file_system() {
    let sources = "syscall:realtime,syscall:realtime_coarse,vdso:realtime_coarse";
    let mut dirs = vec![("/proc".to_string(), "proc"), ("/sys".to_string(), "sysfs")];
    // A cgroup mount, where there is one (cgroup2, or a v1 hierarchy).
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let cgroup = mountinfo.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let dash = f.iter().position(|x| *x == "-")?;
        let fs = *f.get(dash + 1)?;
        let fs = ["cgroup2", "cgroup"].into_iter().find(|c| *c == fs)?;
        Some((f.get(4)?.to_string(), fs))
    });
    dirs.extend(cgroup.clone());
    for (dir, fs) in &dirs {
        let dir = dir.as_str();
        let said = |out: std::process::Output, what: &str| {
            assert_eq!(out.status.code(), Some(2), "{what} {dir}: {out:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(&format!("is on {fs}")), "{what}: {stderr}");
        };
        let probe = tscope()
            .args(["probe", "--quick", "--source", sources, "--dir", dir])
            .output()
            .unwrap();
        said(probe, "probe --dir");
        let run = tscope()
            .args(["run", "vfsmix", "--duration", "1", "--dir", dir])
            .output()
            .unwrap();
        said(run, "run --dir");
        let tmpdir = tscope()
            .args(["run", "vfsmix", "--duration", "1"])
            .env("TMPDIR", dir)
            .output()
            .unwrap();
        said(tmpdir, "TMPDIR");
        let validate = tscope()
            .args(["simulate", "vfsmix", "--validate", "--validate-dir", dir])
            .output()
            .unwrap();
        said(validate, "--validate-dir");
    }
    // A tscope that tried would have left a cgroup behind: take it away (rmdir only).
    if let Some((dir, _)) = cgroup {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().starts_with("tscope-run.") {
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
}

#[test]
fn an_empty_or_relative_tmpdir_gets_its_own_message() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir(cwd.path().join("rel")).unwrap();
    for (value, says) in [("", "TMPDIR is set but empty"), ("rel", "relative path")] {
        let out = tscope()
            .current_dir(cwd.path())
            .args(["run", "vfsmix", "--duration", "1"])
            .env("TMPDIR", value)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "TMPDIR={value:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "TMPDIR={value:?}: {stderr}");
        assert!(!stderr.contains("not set"), "TMPDIR={value:?}: {stderr}");
    }
    assert!(crate::common::empty(&cwd.path().join("rel")));
}

/// A store of the two documents with its last 1,000 bytes cut off.
fn truncated_store(dir: &Path) -> PathBuf {
    let db = dir.join("f.db");
    store(&db);
    let len = std::fs::metadata(&db).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    f.set_len(len - 1000).unwrap();
    db
}

#[test]
fn a_truncated_store_fails_its_check_and_is_never_written() {
    let d = tempfile::tempdir().unwrap();
    let db = truncated_store(d.path());
    let len = std::fs::metadata(&db).unwrap().len();
    fleet(&db)
        .arg("check")
        .assert()
        .code(1)
        .stdout(predicates::str::contains("truncated"));
    for read in [&["ls"][..], &["export"], &["report"]] {
        fleet(&db)
            .args(read)
            .assert()
            .code(1)
            .stderr(predicates::str::contains("truncated"));
    }
    fleet(&db)
        .arg("add")
        .arg(DOCS[0])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "does not write to a damaged store",
        ));
    fleet(&db)
        .args(["rm", "1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "does not write to a damaged store",
        ));
    assert_eq!(std::fs::metadata(&db).unwrap().len(), len, "written to");
}

/// `tscope ARGS` as nobody.
fn as_nobody(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("tscope"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_read_only_store_is_read() {
    if crate::skip::without("root") || crate::skip::without("setpriv") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = t.path().join("f.db");
    store(&db);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    // As nobody: the directory and the store are root's, readable by all.
    for sub in [&["ls", "--json"][..], &["check"], &["export"], &["report"]] {
        let mut args: Vec<&std::ffi::OsStr> = vec!["fleet".as_ref(), "--db".as_ref()];
        args.push(db.as_os_str());
        args.extend(sub.iter().map(std::ffi::OsStr::new));
        let out = as_nobody(&args);
        assert_eq!(out.status.code(), Some(0), "as nobody, {sub:?}: {out:?}");
        if sub[0] == "ls" {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v.as_array().unwrap().len(), 2);
        }
    }
    // On a read-only mount.
    let ro = t.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let _bind = Mounted::new(&["--bind", t.path().to_str().unwrap()], &ro);
    let _ro = Mounted::new(&["-o", "remount,bind,ro"], &ro);
    let rodb = ro.join("f.db");
    let v: serde_json::Value = serde_json::from_slice(
        &fleet(&rodb)
            .args(["ls", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    fleet(&rodb)
        .arg("check")
        .assert()
        .success()
        .stdout(predicates::str::contains("ok"));
}

#[test]
fn a_failing_dir_is_named_and_the_others_are_kept() {
    if crate::skip::without("root") || crate::skip::without("tmpfs") {
        return;
    }
    let _cpu = cpu_lock();
    let t = tempfile::tempdir().unwrap();
    let bad = t.path().join("ro");
    std::fs::create_dir(&bad).unwrap();
    // A read-only mount: a directory that passes every check and fails at the first mkdir.
    let _bind = Mounted::new(&["--bind", t.path().to_str().unwrap()], &bad);
    let _ro = Mounted::new(&["-o", "remount,bind,ro"], &bad);
    let sources = "syscall:realtime,syscall:realtime_coarse,vdso:realtime_coarse";
    let out = tscope()
        .args(["probe", "--quick", "--json", "--source", sources])
        .args(["--dir", "/dev/shm", "--dir"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("--dir '{}'", bad.display())),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fs = v["filesystems"].as_array().unwrap();
    assert_eq!(fs.len(), 1, "{v}");
    let warned = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "dir_failed");
    assert!(warned, "{}", v["warnings"]);
}

#[test]
fn an_output_through_another_users_link_is_refused() {
    if crate::skip::without("root") {
        return;
    }
    let (t, shared) = shared();
    let victim = t.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    plant(&victim, &shared.join("out.json"));
    tscope()
        .args(crate::common::FREEBSD_PIPE1)
        .arg("-o")
        .arg(shared.join("out.json"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("owned by uid 65534"));
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    // The same link made by this user is written through, as before.
    std::fs::remove_file(shared.join("out.json")).unwrap();
    symlink(&victim, shared.join("out.json")).unwrap();
    tscope()
        .args(crate::common::FREEBSD_PIPE1)
        .arg("-o")
        .arg(shared.join("out.json"))
        .assert()
        .success();
    assert_ne!(std::fs::read(&victim).unwrap(), b"keep");
}
