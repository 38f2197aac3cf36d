//! `--export-json/-markdown/-csv FILE`: several formats from one measurement, each file the same
//! bytes its format's flag prints, every path checked before anything is measured.

use std::path::Path;

use crate::common::{run_ok, tscope, FREEBSD_PIPE1, PROFILE, SHORT_RUN};

/// The three `--export-*` options into `dir` (x.json, x.md, x.csv).
fn exports(dir: &Path) -> Vec<String> {
    let p = |n: &str| dir.join(n).display().to_string();
    vec![
        "--export-json".into(),
        p("x.json"),
        "--export-markdown".into(),
        p("x.md"),
        "--export-csv".into(),
        p("x.csv"),
    ]
}

/// The three exported files: JSON that parses, Markdown with a table, CSV with a header.
fn read_exports(dir: &Path) -> [Vec<u8>; 3] {
    let json = std::fs::read(dir.join("x.json")).unwrap();
    let md = std::fs::read(dir.join("x.md")).unwrap();
    let csv = std::fs::read(dir.join("x.csv")).unwrap();
    serde_json::from_slice::<serde_json::Value>(&json).expect("--export-json is JSON");
    let md_text = String::from_utf8(md.clone()).unwrap();
    assert!(md_text.contains("| ---"), "--export-markdown: {md_text}");
    let csv_text = String::from_utf8(csv.clone()).unwrap();
    let header = csv_text.lines().next().unwrap_or("");
    assert!(
        header.contains(',') && csv_text.lines().count() > 1,
        "--export-csv: {csv_text}"
    );
    [json, md, csv]
}

#[test]
fn a_simulation_exports_what_each_format_flag_prints() {
    let dir = tempfile::tempdir().unwrap();
    let base = FREEBSD_PIPE1;
    let ex = exports(dir.path());
    let with: Vec<&str> = base
        .iter()
        .copied()
        .chain(ex.iter().map(String::as_str))
        .collect();
    let table = run_ok(&with);
    assert_eq!(table, run_ok(&base), "the printed form is unchanged");
    let [json, md, csv] = read_exports(dir.path());
    for (bytes, flag) in [(json, "--json"), (md, "--markdown"), (csv, "--csv")] {
        let printed = run_ok(&[&base[..], &[flag]].concat());
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            String::from_utf8(printed).unwrap(),
            "export for {flag}"
        );
    }
}

#[test]
fn measurements_export_one_result_in_three_formats() {
    let dir = tempfile::tempdir().unwrap();
    let measurements: [&[&str]; 2] = [
        &["probe", "--quick", "--source", "rdtsc,vdso:monotonic"],
        &SHORT_RUN,
    ];
    for args in measurements {
        let ex = exports(dir.path());
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        all.extend(ex.iter().map(String::as_str));
        let printed = run_ok(&all);
        let [json, md, csv] = read_exports(dir.path());
        assert_eq!(
            json, printed,
            "{args:?}: --export-json is what --json printed"
        );
        // One measurement: the other formats render that same result.
        let saved = dir.path().join("x.json").display().to_string();
        assert_eq!(md, run_ok(&["show", &saved, "--markdown"]), "{args:?}");
        assert_eq!(csv, run_ok(&["show", &saved, "--csv"]), "{args:?}");
    }
}

#[test]
fn export_paths_are_checked_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/x.csv");
    let out = tscope()
        .args(["run", "getppid", "--tasks", "1", "--duration", "60"])
        .arg("--export-csv")
        .arg(&missing)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--export-csv"), "{err}");

    let same = dir.path().join("same").display().to_string();
    // Two outputs naming one file: exit 2 naming the second option, nothing written, before
    // anything is measured (the run would take 60 s).
    let refused = |args: &[&str], option: &str| {
        let out = tscope()
            .args(args)
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(option) && err.contains("names it too"),
            "{err}"
        );
        assert!(!Path::new(&same).exists(), "nothing written");
    };
    refused(
        &[
            "probe",
            "--quick",
            "--source",
            "rdtsc",
            "-o",
            &same,
            "--export-json",
            &same,
        ],
        "--export-json",
    );
    refused(
        &[
            "run",
            "getppid",
            "--tasks",
            "1",
            "--duration",
            "60",
            "--export-json",
            &same,
            "--record",
            &same,
        ],
        "--record",
    );

    let out = tscope()
        .args(["probe", "--list", "--export-json", &same])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_export_through_a_symbolic_link_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.md");
    std::fs::write(&target, "old").unwrap();
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let link_arg = link.display().to_string();
    let mut args = FREEBSD_PIPE1.to_vec();
    args.extend(["--export-markdown", &link_arg]);
    run_ok(&args);
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link is still a link");
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.starts_with("###"), "written through the link: {text}");
}

#[test]
fn a_model_that_takes_no_timestamps_says_so() {
    // Linux 6.15+ no longer stamps pipe inodes: pipe1 stores no timestamp at all.
    let md = String::from_utf8(run_ok(&[
        "simulate",
        "pipe1",
        "--model",
        "linux@6.15",
        "--profile",
        PROFILE,
        "--markdown",
    ]))
    .unwrap();
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| linux:")).collect();
    assert!(!rows.is_empty(), "{md}");
    for row in rows {
        assert!(row.contains("no timestamps"), "{row}");
        assert!(!row.contains("0 ns |"), "no zero resolution: {row}");
    }
    let freebsd = String::from_utf8(run_ok(&FREEBSD_PIPE1)).unwrap();
    assert!(!freebsd.contains("no timestamps"), "{freebsd}");
}
