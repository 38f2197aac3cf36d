//! The store on real documents: idempotence, removal, a version-1 store migrated forward, and
//! the grouped report.

use super::*;

const PROFILE: &str = "tests/data/profile-kvm-xeon.json";
const DETECT: &str = "tests/data/compare/trapped-detect.json";
const HOST: &str = "tests/data/compare/host.json";

fn prepared(path: &str) -> store::Prepared {
    store::prepare(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn adding_twice_stores_once_and_the_document_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("f.db")).unwrap();
    let p = prepared(PROFILE);
    let a = s
        .add(std::slice::from_ref(&p), Some("lab"), PROFILE)
        .unwrap();
    assert_eq!((a.new, a.present), (1, 0));
    // The same content, pretty or compact, is one document.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(PROFILE).unwrap()).unwrap();
    let compact = serde_json::to_vec(&v).unwrap();
    let b = s
        .add(&[store::prepare(&compact).unwrap()], None, "-")
        .unwrap();
    assert_eq!((b.new, b.present), (0, 1));
    let rows = s.rows().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].label.as_deref(), Some("lab"));
    let back: serde_json::Value =
        serde_json::from_slice(&s.document(rows[0].id).unwrap().unwrap()).unwrap();
    assert_eq!(back, v);
    assert!(s.document(rows[0].id + 1).unwrap().is_none());
}

#[test]
fn rm_takes_ids_hash_prefixes_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("f.db")).unwrap();
    s.add(&[prepared(PROFILE)], Some("a"), "1").unwrap();
    s.add(&[prepared(DETECT)], Some("b"), "2").unwrap();
    s.add(&[prepared(HOST)], Some("b"), "3").unwrap();
    let rows = s.rows().unwrap();
    let hash = rows[0].hash[..8].to_string();
    let n = s
        .remove(&[Selector::Hash(hash.to_uppercase()), Selector::Id(999)])
        .unwrap();
    assert_eq!(n, vec![1, 0]);
    assert_eq!(s.remove(&[Selector::Label("b".into())]).unwrap(), vec![2]);
    assert!(s.rows().unwrap().is_empty());
}

#[test]
fn a_version_1_store_opens_and_is_migrated_with_its_facts_refilled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let old = Store::open_at(&path, 1).unwrap();
        assert_eq!(old.version().unwrap(), 1);
    }
    // A row as a version-1 tscope wrote it: no in_vm, counter_ns or tick_ns columns.
    let p = prepared(PROFILE);
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute(
            "INSERT INTO profile (hash, kind, schema_version, label, source, added_unix_s, \
             hypervisor, precise_read_ns) VALUES (?, 'probe', 1, 'old', 'x', 0, 'KVM', ?)",
            rusqlite::params![p.hash.to_vec(), p.facts.precise_read_ns],
        )
        .unwrap();
        c.execute(
            "INSERT INTO document (id, encoding, body) VALUES (1, ?, ?)",
            rusqlite::params![codec::ENCODING, p.body],
        )
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.version().unwrap(), schema::VERSION);
    let rows = s.rows().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].label.as_deref(), Some("old"));
    assert_eq!(
        rows[0].facts, p.facts,
        "every fact refilled from the document"
    );
    // A store newer than this build is refused, not written.
    drop(s);
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", schema::VERSION + 1)
        .unwrap();
    drop(c);
    let e = Store::open(&path).unwrap_err();
    assert!(e.to_string().contains("newer than this tscope"), "{e}");
}

#[test]
fn a_path_that_is_not_a_regular_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = Store::open(dir.path()).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
}

#[test]
fn the_report_groups_and_replays_each_machines_costs() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("f.db")).unwrap();
    for p in [PROFILE, DETECT, HOST] {
        s.add(&[prepared(p)], None, p).unwrap();
    }
    let rows = s.rows().unwrap();
    let cfg = ReportConfig {
        by: vec![GroupBy::Hypervisor],
        scenarios: vec!["write-stat".into()],
    };
    let r = decisions::report(&rows, &cfg).unwrap();
    assert_eq!(r.machines, 3);
    assert_eq!(r.groups.iter().map(|g| g.machines).sum::<usize>(), 3);
    let all = decisions::report(&rows, &ReportConfig { by: vec![], ..cfg }).unwrap();
    assert_eq!(all.groups.len(), 1);
    let g = &all.groups[0];
    let trapped = g
        .verdicts
        .iter()
        .find(|v| v.name == "rdtsc_trapped")
        .unwrap();
    assert_eq!((trapped.machines, trapped.yes), (1, 1));
    let coarse = g
        .speedups
        .iter()
        .find(|x| x.policy == "linux:coarse")
        .unwrap();
    assert!(coarse.spread.machines >= 2, "{coarse:?}");
    let (lo, mid, hi) = (
        coarse.spread.p10.unwrap(),
        coarse.spread.median.unwrap(),
        coarse.spread.p90.unwrap(),
    );
    assert!(lo <= mid && mid <= hi && lo > 0.0);
    assert!(g
        .speedups
        .iter()
        .filter(|x| x.stock)
        .all(|x| x.spread.median == Some(1.0)));
}

/// `path`'s document with `machine.host_id` set (in its profile) and its own `created_unix_s`.
fn on_host(path: &str, host: Option<&str>, created: i64) -> store::Prepared {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let p = if v.get("profile").is_some() {
        &mut v["profile"]
    } else {
        &mut v
    };
    p["machine"]["host_id"] = host.map_or(serde_json::Value::Null, serde_json::Value::from);
    p["created_unix_s"] = serde_json::Value::from(created);
    store::prepare_value(&v).unwrap()
}

const HOST_A: &str = "d331762e-21c0-4b8c-af92-5db03fbfd4fd";
const HOST_B: &str = "385b1de8-2df1-4f65-87b4-ecd23150f90f";

fn all(rows: &[Row]) -> FleetReport {
    let cfg = ReportConfig {
        by: vec![],
        scenarios: vec!["write-stat".into()],
    };
    decisions::report(rows, &cfg).unwrap()
}

#[test]
fn a_probe_and_a_detect_of_one_host_are_one_machine_with_both() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("f.db")).unwrap();
    s.add(&[on_host(PROFILE, Some(HOST_A), 10)], None, "p")
        .unwrap();
    s.add(&[on_host(DETECT, Some(HOST_A), 5)], None, "d")
        .unwrap();
    let rows = s.rows().unwrap();
    assert_eq!(rows[0].facts.host_id.as_deref(), Some(HOST_A));
    let back: serde_json::Value =
        serde_json::from_slice(&s.document(rows[0].id).unwrap().unwrap()).unwrap();
    assert_eq!(
        back["machine"]["host_id"], HOST_A,
        "the ID comes back from its column"
    );
    let r = all(&rows);
    assert_eq!((r.machines, r.documents), (1, 2));
    let g = &r.groups[0];
    assert_eq!(g.machines, 1);
    // Its costs are the probe's, its verdicts the detect's.
    let precise = &g.costs[0].spread;
    assert_eq!(precise.machines, 1);
    assert_eq!(precise.median, rows[0].facts.precise_read_ns);
    let trapped = g
        .verdicts
        .iter()
        .find(|v| v.name == "rdtsc_trapped")
        .unwrap();
    assert_eq!((trapped.machines, trapped.yes), (1, 1));
    // The newest probe speaks for the machine: a newer one of the same host replaces it.
    let mut newer = on_host(HOST, Some(HOST_A), 20);
    newer.facts.precise_read_ns = Some(1234.0);
    s.add(&[newer], None, "p2").unwrap();
    let r = all(&s.rows().unwrap());
    assert_eq!((r.machines, r.documents), (1, 3));
    assert_eq!(r.groups[0].costs[0].spread.median, Some(1234.0));
}

#[test]
fn two_hosts_are_two_machines_and_documents_without_a_host_one_each() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("f.db")).unwrap();
    s.add(&[on_host(PROFILE, Some(HOST_A), 1)], None, "a")
        .unwrap();
    s.add(&[on_host(PROFILE, Some(HOST_B), 1)], None, "b")
        .unwrap();
    let r = all(&s.rows().unwrap());
    assert_eq!((r.machines, r.documents), (2, 2));
    for (i, p) in [PROFILE, DETECT].iter().enumerate() {
        s.add(&[on_host(p, None, 100 + i as i64)], None, "none")
            .unwrap();
    }
    let r = all(&s.rows().unwrap());
    assert_eq!((r.machines, r.documents), (4, 4));
    assert_eq!(r.groups[0].costs[0].spread.machines, 4);
}

#[test]
fn a_version_2_store_gains_the_host_id_from_its_documents() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    drop(Store::open_at(&path, 2).unwrap());
    // A row as a version-2 tscope wrote it (no host_id column) of a document that has one,
    // the ID inside the stored text.
    let p = on_host(PROFILE, Some(HOST_A), 1);
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(PROFILE).unwrap()).unwrap();
    v["machine"]["host_id"] = serde_json::Value::from(HOST_A);
    v["created_unix_s"] = serde_json::Value::from(1);
    let v2_body = codec::encode(&codec::canonical(&v).unwrap()).unwrap();
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        let cols: Vec<String> = c
            .prepare("SELECT name FROM pragma_table_info('profile')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(!cols.iter().any(|c| c == "host_id"), "{cols:?}");
        c.execute(
            "INSERT INTO profile (hash, kind, schema_version, source, added_unix_s) \
             VALUES (?, 'probe', 1, 'x', 0)",
            [p.hash.to_vec()],
        )
        .unwrap();
        c.execute(
            "INSERT INTO document (id, encoding, body) VALUES (1, ?, ?)",
            rusqlite::params![codec::ENCODING, v2_body],
        )
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.version().unwrap(), schema::VERSION);
    let rows = s.rows().unwrap();
    assert_eq!(rows[0].facts.host_id.as_deref(), Some(HOST_A));
    assert_eq!(rows[0].facts, p.facts);
    let back: serde_json::Value =
        serde_json::from_slice(&s.document(rows[0].id).unwrap().unwrap()).unwrap();
    assert_eq!(back, v);
}
