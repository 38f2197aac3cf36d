//! `tscope fleet`: add (idempotent, bad files skipped with exit 1, NDJSON on stdin, two at
//! once), report groups, rm, export; the store under damage and interruption in
//! [`integrity`].

use std::path::{Path, PathBuf};

use crate::common::tscope;

mod integrity;

const REAL: [&str; 4] = [
    "tests/data/profile-kvm-xeon.json",
    "tests/data/compare/host.json",
    "tests/data/compare/trapped-detect.json",
    "docs/example-report/report.json",
];

fn fleet(db: &Path) -> assert_cmd::Command {
    let mut c = tscope();
    c.arg("fleet").arg("--db").arg(db);
    c
}

fn rows(db: &Path) -> Vec<serde_json::Value> {
    let out = fleet(db).args(["ls", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// `n` distinct compact copies of the real profile (each its own `created_unix_s`).
fn copies(dir: &Path, n: usize) -> Vec<PathBuf> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(REAL[0]).unwrap()).unwrap();
    (0..n)
        .map(|i| {
            let mut d = v.clone();
            d["created_unix_s"] = serde_json::Value::from(i as u64);
            let p = dir.join(format!("p{i:05}.json"));
            std::fs::write(&p, serde_json::to_vec(&d).unwrap()).unwrap();
            p
        })
        .collect()
}

#[test]
fn add_skips_a_bad_file_exits_1_and_stores_the_rest_once() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    for (i, p) in REAL.iter().enumerate() {
        std::fs::copy(p, inputs.join(format!("{i}.json"))).unwrap();
    }
    std::fs::write(inputs.join("bad.json"), "{\"schema_version\": 1,").unwrap();
    std::fs::copy(
        "tests/data/run-record-vfsmix-ext4.json",
        inputs.join("run.json"),
    )
    .unwrap();
    std::fs::write(inputs.join("notes.txt"), "not read").unwrap();
    let db = dir.path().join("f.db");
    let out = fleet(&db)
        .arg("add")
        .arg(&inputs)
        .args(["--label", "lab"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json") && err.contains("is not JSON"),
        "{err}"
    );
    assert!(
        err.contains("run.json") && err.contains("run record"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let stored = rows(&db);
    assert_eq!(stored.len(), REAL.len());
    assert!(stored.iter().all(|r| r["label"] == "lab"));
    let kinds: Vec<&str> = stored.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["probe", "probe", "detect", "report"]);
    // Again: nothing new, and the good files alone exit 0.
    let again = fleet(&db).arg("add").args(REAL).output().unwrap();
    assert!(again.status.success());
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        text.contains("0 document(s) added, 4 already stored"),
        "{text}"
    );
    assert_eq!(rows(&db).len(), REAL.len());
}

#[test]
fn stdin_takes_ndjson_one_line_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let mut ndjson = Vec::new();
    for p in &REAL[..2] {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        serde_json::to_writer(&mut ndjson, &v).unwrap();
        ndjson.extend_from_slice(b"\n\n");
    }
    ndjson.extend_from_slice(b"{\"a\": 1}\n");
    let out = fleet(&db)
        .args(["add", "-"])
        .write_stdin(ndjson)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stdin:5") && err.contains("not a probe"),
        "{err}"
    );
    assert_eq!(rows(&db).len(), 2);
    assert!(rows(&db)
        .iter()
        .all(|r| r["source"].as_str().unwrap().starts_with("stdin:")));
}

#[test]
fn report_groups_exports_and_draws() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    fleet(&db).arg("add").args(REAL).assert().success();
    let svg = dir.path().join("fleet.svg");
    let out = fleet(&db)
        .args([
            "report",
            "--by",
            "hypervisor,clocksource",
            "--scenario",
            "write-stat",
            "--json",
        ])
        .arg("--export-svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["machines"], 4);
    let groups = r["groups"].as_array().unwrap();
    let sum: u64 = groups.iter().map(|g| g["machines"].as_u64().unwrap()).sum();
    assert_eq!(sum, 4);
    assert!(groups.iter().all(|g| g["key"]["hypervisor"].is_string()));
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&svg_text).unwrap();
    assert!(doc
        .descendants()
        .any(|n| n.text().is_some_and(|t| t.contains("precise read"))));
    let md = fleet(&db)
        .args([
            "report",
            "--by",
            "label",
            "--scenario",
            "write-stat",
            "--markdown",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("### label=unknown: 4 machine(s)") && md.contains("linux:coarse"),
        "{md}"
    );
    let csv = fleet(&db)
        .args(["report", "--scenario", "write-stat", "--csv"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&csv.stdout).starts_with("group,section,name,"));
    let bad = fleet(&db)
        .args(["report", "--scenario", "nope"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no bundled scenario 'nope'"));
}

#[test]
fn rm_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    fleet(&db)
        .arg("add")
        .args(&REAL[..2])
        .args(["--label", "a"])
        .assert()
        .success();
    fleet(&db)
        .arg("add")
        .args(&REAL[2..])
        .args(["--label", "b"])
        .assert()
        .success();
    let csv = fleet(&db).arg("export").output().unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(csv.starts_with("id,hash,kind,"), "{csv}");
    assert_eq!(csv.lines().count(), 5);
    let json = fleet(&db).args(["export", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let first = &v[0];
    assert_eq!(first["hypervisor"], "KVM");
    let hash = first["hash"].as_str().unwrap()[..10].to_string();
    fleet(&db).args(["rm", "2"]).arg(&hash).assert().success();
    fleet(&db).args(["rm", "--label", "b"]).assert().success();
    assert!(rows(&db).is_empty());
    let none = fleet(&db).args(["rm", "1"]).output().unwrap();
    assert_eq!(none.status.code(), Some(1));
    let bad = fleet(&db).args(["rm", "xyz"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("neither a row id"));
}

#[test]
fn a_store_path_that_is_not_a_regular_file_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = fleet(dir.path()).arg("add").arg(REAL[0]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"));
    assert!(dir.path().is_dir());
    let missing = fleet(&dir.path().join("none.db"))
        .arg("ls")
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no fleet store"));
}

#[test]
fn two_adds_at_once_both_land() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let all = copies(&a, 120);
    for p in &all[60..] {
        std::fs::rename(p, b.join(p.file_name().unwrap())).unwrap();
    }
    let db = dir.path().join("f.db");
    let spawn = |d: &Path| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("tscope"))
            .arg("fleet")
            .arg("--db")
            .arg(&db)
            .arg("add")
            .arg(d)
            .output()
    };
    let (ra, rb) = std::thread::scope(|s| {
        let ha = s.spawn(|| spawn(&a).unwrap());
        let hb = s.spawn(|| spawn(&b).unwrap());
        (ha.join().unwrap(), hb.join().unwrap())
    });
    for r in [&ra, &rb] {
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    assert_eq!(rows(&db).len(), 120);
}

#[test]
fn a_probe_and_a_detect_of_one_host_are_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let host = "d331762e-21c0-4b8c-af92-5db03fbfd4fd";
    let mut files = Vec::new();
    for (i, p) in [REAL[0], REAL[2]].iter().enumerate() {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        let profile = if v.get("profile").is_some() {
            &mut v["profile"]
        } else {
            &mut v
        };
        profile["machine"]["host_id"] = serde_json::Value::from(host);
        let f = dir.path().join(format!("{i}.json"));
        std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
        files.push(f);
    }
    let db = dir.path().join("f.db");
    fleet(&db).arg("add").args(&files).assert().success();
    // A third document without a host_id is a machine of its own.
    fleet(&db).arg("add").arg(REAL[1]).assert().success();
    let out = fleet(&db)
        .args(["report", "--scenario", "write-stat", "--json"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (r["machines"].as_u64(), r["documents"].as_u64()),
        (Some(2), Some(3))
    );
    let g = &r["groups"][0];
    let trapped = g["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "rdtsc_trapped")
        .unwrap();
    assert_eq!(trapped["machines"], 1);
    assert_eq!(g["costs"][0]["machines"], 2);
    let text = fleet(&db)
        .args(["report", "--scenario", "write-stat"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("2 machine(s) from 3 document(s)"), "{text}");
    let ls = fleet(&db).arg("ls").output().unwrap();
    let ls = String::from_utf8_lossy(&ls.stdout);
    assert_eq!(ls.matches("d331762e ").count(), 2, "{ls}");
    let stored = rows(&db);
    assert_eq!(stored[0]["host_id"], host);
    assert!(stored[2]["host_id"].is_null());
    let csv = fleet(&db).arg("export").output().unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert!(header.contains(&"host_id"), "{header:?}");
    assert!(csv
        .lines()
        .skip(1)
        .all(|l| l.split(',').count() >= header.len()));
}

#[test]
fn a_probe_names_its_host_as_systemd_would_and_the_store_keeps_it() {
    let out = tscope()
        .args(["probe", "--quick", "--json", "--source", "rdtsc"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = tscope::probe::host_id::host_id();
    assert_eq!(v["machine"]["host_id"].as_str(), want.as_deref());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    fleet(&db)
        .args(["add", "-"])
        .write_stdin(serde_json::to_vec(&v).unwrap())
        .assert()
        .success();
    assert_eq!(rows(&db)[0]["host_id"].as_str(), want.as_deref());
}

#[test]
fn a_host_id_that_is_not_a_uuid_is_refused_not_stored_as_null() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(REAL[0]).unwrap()).unwrap();
    v["machine"]["host_id"] = "db-primary-1".into();
    let bad = dir.path().join("bad-host.json");
    std::fs::write(&bad, v.to_string()).unwrap();
    fleet(&db)
        .arg("add")
        .arg(&bad)
        .arg(REAL[1])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "machine.host_id \"db-primary-1\" is not a UUID",
        ));
    assert_eq!(rows(&db).len(), 1);
}
