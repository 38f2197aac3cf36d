//! The fleet store under damage and interruption: a killed or interrupted add, a full disk, a
//! locked store, random bytes over a page, and the backup before a migration.

use std::path::PathBuf;

use super::{copies, fleet, rows, REAL};

#[test]
fn a_killed_add_leaves_a_consistent_store() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    copies(&inputs, 600);
    let db = dir.path().join("f.db");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tscope"))
        .arg("fleet")
        .arg("--db")
        .arg(&db)
        .arg("add")
        .arg(&inputs)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the store exists (mid-way, or after it finished on a fast machine: either
    // way the store must open and hold whole documents only).
    let t = std::time::Instant::now();
    while !db.exists() && t.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(150));
    child.kill().unwrap();
    child.wait().unwrap();
    let c = rusqlite::Connection::open(&db).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let orphans: i64 = c
        .query_row(
            "SELECT (SELECT count(*) FROM profile WHERE id NOT IN (SELECT id FROM document)) + \
             (SELECT count(*) FROM document WHERE id NOT IN (SELECT id FROM profile))",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0);
    drop(c);
    let before = rows(&db).len();
    assert!(before <= 600);
    // Adding again completes the store.
    fleet(&db).arg("add").arg(&inputs).assert().success();
    assert_eq!(rows(&db).len(), 600);
}

#[test]
fn a_version_1_store_opens_in_this_tscope() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    drop(tscope::fleet::Store::open_at(&db, 1).unwrap());
    let c = rusqlite::Connection::open(&db).unwrap();
    let v: u32 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 1);
    drop(c);
    fleet(&db).arg("add").arg(REAL[0]).assert().success();
    let c = rusqlite::Connection::open(&db).unwrap();
    let v: u32 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, tscope::fleet::schema::VERSION);
    assert_eq!(rows(&db).len(), 1);
    // The version-1 store was copied whole before the migration changed it.
    let bak = dir.path().join("old.db.v1.bak");
    let c = rusqlite::Connection::open(&bak).unwrap();
    let v: u32 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 1);
}

#[test]
fn an_interrupted_add_says_what_it_committed() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(REAL[0]).unwrap()).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tscope"))
        .arg("fleet")
        .arg("--db")
        .arg(&db)
        .args(["add", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // 600 lines: one batch of 512 is committed, the rest waits for more input.
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..600u64 {
        let mut d = v.clone();
        d["created_unix_s"] = i.into();
        stdin.write_all(&serde_json::to_vec(&d).unwrap()).unwrap();
        stdin.write_all(b"\n").unwrap();
    }
    stdin.flush().unwrap();
    let t = std::time::Instant::now();
    while (!db.exists() || rows(&db).len() < 512) && t.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("interrupted; 512 document(s) were committed before it"),
        "{stderr}"
    );
    assert!(!stderr.contains("nothing written"), "{stderr}");
    assert_eq!(rows(&db).len(), 512);
}

#[test]
fn a_damaged_store_is_read_with_a_warning_never_written_and_can_be_salvaged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    fleet(&db).arg("add").args(REAL).assert().success();
    // Random bytes over the root page of the document table (found the way SQLite says).
    let (root, page): (i64, i64) = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let root = c
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'document'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let page = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        (root, page)
    };
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
        // From the page's first byte (its b-tree header; page 1 alone starts with the file
        // header), so the damage does not depend on where the page's cells happen to lie.
        let skip = if root == 1 { 100 } else { 0 };
        f.seek(SeekFrom::Start(((root - 1) * page + skip) as u64))
            .unwrap();
        let noise: Vec<u8> = (0..8192u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        f.write_all(&noise).unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    // Read: what can be, with a warning and exit 1.
    fleet(&db)
        .arg("ls")
        .assert()
        .code(1)
        .stderr(predicates::str::contains("is damaged"));
    // Written: never; the message names the way out, and the file is untouched.
    let out = fleet(&db)
        .arg("add")
        .arg("tests/data/profile-kvm-amd.json")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("does not write to a damaged store") && stderr.contains("--salvage"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("damaged store").count(),
        1,
        "said once: {stderr}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    // The full check says so; --salvage writes what can still be read, and a new store is
    // built from it.
    let rescued = dir.path().join("rescued");
    let out = fleet(&db)
        .args(["check", "--salvage"])
        .arg(&rescued)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("damaged (integrity_check)"), "{stdout}");
    let n = std::fs::read_dir(&rescued).unwrap().count();
    assert!(n < REAL.len(), "{stdout}");
    let new = dir.path().join("new.db");
    fleet(&new).arg("add").arg(&rescued).assert().success();
    assert_eq!(rows(&new).len(), n);
    fleet(&new).arg("check").assert().success();
}

#[test]
fn an_add_waiting_on_a_locked_store_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    fleet(&db).arg("add").arg(REAL[0]).assert().success();
    let mut holder = rusqlite::Connection::open(&db).unwrap();
    let tx = holder
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tscope"))
        .arg("fleet")
        .arg("--db")
        .arg(&db)
        .args(["add", REAL[1]])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    tx.commit().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("locked by another writer; waiting").count(),
        1,
        "{err}"
    );
    assert_eq!(rows(&db).len(), 2);
}

/// Unmounts its directory when dropped (a failed assertion included).
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_says_what_was_committed_before_it() {
    // Root only: a 1 MiB tmpfs holds the store.
    if crate::skip::without("loop-mount") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(ok.success());
    let _mounted = Mounted(mnt.clone());
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    copies(&inputs, 600);
    let db = mnt.join("f.db");
    let out = fleet(&db).arg("add").arg(&inputs).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("full"), "{err}");
    let n: usize = err
        .split("; ")
        .find_map(|p| {
            p.split(" document(s) were committed")
                .next()?
                .rsplit(['(', ' '])
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no committed count in: {err}"));
    assert!(n > 0 && n < 600, "{err}");
    assert_eq!(rows(&db).len(), n, "{err}");
}

#[test]
fn a_store_whose_schema_is_damaged_says_so_and_how_to_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    fleet(&db).arg("add").args(REAL).assert().success();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    }
    // Bytes over the b-tree header of page 1, the schema's own page.
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
        f.seek(SeekFrom::Start(100)).unwrap();
        f.write_all(&[0x41, 0, 0xff, 0x13, 0x37, 0, 0, 0x99])
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    for args in [&["ls"][..], &["add", "tests/data/profile-kvm-amd.json"][..]] {
        let out = fleet(&db).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("cannot be read: its header or schema is damaged")
                && stderr.contains("does not write to it")
                && stderr.contains("fleet --db NEW.db add"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
}
