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
    let r = report::report(&rows, &cfg).unwrap();
    assert_eq!(r.machines, 3);
    assert_eq!(r.groups.iter().map(|g| g.machines).sum::<usize>(), 3);
    let all = report::report(&rows, &ReportConfig { by: vec![], ..cfg }).unwrap();
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
