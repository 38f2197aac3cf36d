//! `tscope show FILE`: a saved result renders again in every format, and its JSON comes back
//! byte for byte (the file is read with the types that wrote it).

use crate::common::{run_ok, tscope, SHORT_RUN};

#[test]
fn saved_results_render_again_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let (probe, detect, run) = (p("probe.json"), p("detect.json"), p("run.json"));
    run_ok(&[
        "probe",
        "--quick",
        "--source",
        "rdtsc,vdso:monotonic",
        "--json",
        "-o",
        &probe,
    ]);
    run_ok(&["detect", "--sync-ms", "20", "--json", "-o", &detect]);
    run_ok(&SHORT_RUN);
    let mut args = SHORT_RUN.to_vec();
    args.extend(["--json", "-o", &run]);
    run_ok(&args);
    for (file, marker, kind) in [
        (&probe, "vdso:monotonic", "tscope-probe"),
        (&detect, "rdtsc_trapped", "tscope-detect"),
        (&run, "getppid", "tscope-run"),
    ] {
        let saved = std::fs::read(file).unwrap();
        // Every document names its kind, first, next to its schema_version.
        let v: serde_json::Value = serde_json::from_slice(&saved).unwrap();
        assert_eq!(v["kind"], kind, "{file}");
        let text = String::from_utf8_lossy(&saved);
        assert!(
            text.starts_with(&format!(
                "{{\n  \"kind\": \"{kind}\",\n  \"schema_version\""
            )),
            "{file}: {}",
            &text[..80.min(text.len())]
        );
        assert_eq!(
            run_ok(&["show", file, "--json"]),
            saved,
            "{file}: JSON round trip"
        );
        for format in ["--markdown", "--csv"] {
            let text = String::from_utf8(run_ok(&["show", file, format])).unwrap();
            assert!(text.contains(marker), "{file} {format}: {text}");
        }
        let table = String::from_utf8(run_ok(&["show", file])).unwrap();
        assert!(table.contains(marker), "{file}: {table}");
    }
}

#[test]
fn files_that_are_not_results_are_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\n  \"sources\": [,\n}").unwrap();
    for (file, needle) in [
        (junk.as_path(), "not a document tscope writes"),
        (bad.as_path(), "line 2"),
        (
            std::path::Path::new("tests/data/run-record-vfsmix-ext4.json"),
            "simulate --run",
        ),
        (std::path::Path::new("/nonexistent/x.json"), "cannot read"),
    ] {
        tscope()
            .arg("show")
            .arg(file)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(needle));
    }
}

#[test]
fn a_report_json_gives_back_its_report_md_and_simulate_json_round_trips() {
    let root = env!("CARGO_MANIFEST_DIR");
    let json = format!("{root}/docs/example-report/report.json");
    let md = std::fs::read(format!("{root}/docs/example-report/report.md")).unwrap();
    assert_eq!(run_ok(&["show", &json, "--markdown"]), md);
    assert_eq!(
        run_ok(&["show", &json, "--json"]),
        std::fs::read(&json).unwrap()
    );
    tscope()
        .args(["show", &json, "--csv"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no CSV form"));

    let dir = tempfile::tempdir().unwrap();
    let profile = format!("{root}/tests/data/profile-kvm-xeon.json");
    for extra in [
        &[][..],
        &["--sweep", "precise_read_ns=10..1000"],
        &["--implied", "stock=13889,patched=73477"],
    ] {
        let file = dir.path().join("sim.json").display().to_string();
        let mut args = vec!["simulate", "netbsd-seed-vfsmix", "--profile", &profile];
        args.extend_from_slice(extra);
        args.extend(["--json", "-o", &file]);
        run_ok(&args);
        let saved = std::fs::read(&file).unwrap();
        assert_eq!(run_ok(&["show", &file, "--json"]), saved, "{extra:?}");
        assert!(!run_ok(&["show", &file, "--csv"]).is_empty());
    }
}

#[test]
fn compare_output_shows_again_as_compare_printed_it() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("cmp.json").display().to_string();
    let files = [
        "tests/data/compare/host.json",
        "tests/data/compare/trapped-detect.json",
    ];
    let mut args = vec!["compare", files[0], files[1], "--json", "-o", &saved];
    run_ok(&args);
    args.truncate(3);
    for format in [None, Some("--json"), Some("--markdown"), Some("--csv")] {
        let mut compare = args.clone();
        let mut show = vec!["show", saved.as_str()];
        compare.extend(format);
        show.extend(format);
        assert_eq!(run_ok(&show), run_ok(&compare), "{format:?}");
    }
}

#[test]
fn a_documents_kind_tag_decides_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    // The fields of a probe profile, tagged a fleet report: the tag decides.
    let tagged = dir.path().join("tagged.json");
    std::fs::write(
        &tagged,
        r#"{"kind":"tscope-fleet-report","schema_version":1,"sources":[],"machine":{},
            "derived":{}}"#,
    )
    .unwrap();
    tscope()
        .args(["compare", "tests/data/profile-kvm-xeon.json"])
        .arg(&tagged)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "is a fleet report (`tscope fleet report --json`): compare reads",
        ));
    tscope()
        .args(["fleet", "--db"])
        .arg(dir.path().join("s.db"))
        .arg("add")
        .arg(&tagged)
        .assert()
        .failure()
        .stderr(predicates::str::contains("is a fleet report"));
    // simulate tags each object of an array.
    let v = crate::common::json(&[
        "simulate",
        "pipe1",
        "--profile",
        "tests/data/profile-kvm-xeon.json",
        "--json",
    ]);
    let all = v.as_array().map_or(vec![v.clone()], |a| a.clone());
    assert!(all.iter().all(|m| m["kind"] == "tscope-simulate"), "{v}");
}
