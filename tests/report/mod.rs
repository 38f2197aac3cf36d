//! `tscope report`: the files exist and parse; the SVG is XML with the expected series and
//! renders to a non-blank PNG with a standard converter (rsvg-convert).

mod document;

use std::path::Path;
use std::process::Command;

use crate::common::tscope;

fn non_blank_png(path: &Path) -> bool {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = &buf[..info.buffer_size()];
    let first = px[0];
    // Not one flat colour: some pixel differs from the first.
    px.iter().any(|&b| b != first)
}

#[test]
fn quick_report_writes_parseable_files() {
    let _cpu = crate::common::cpu_lock();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    let metrics = dir.path().join("report.prom");
    tscope()
        .args(["report", "--quick", "--sync-ms", "20", "--out"])
        .arg(&out)
        .arg("--export-openmetrics")
        .arg(&metrics)
        .args(["--strace", "scenarios/traces/make-cc.strace"])
        .assert()
        .success();
    // The metrics are the report's: what `show report.json --openmetrics` prints.
    let shown = tscope()
        .arg("show")
        .arg(out.join("report.json"))
        .arg("--openmetrics")
        .output()
        .unwrap();
    assert_eq!(std::fs::read(&metrics).unwrap(), shown.stdout);

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for heading in [
        "## Environment",
        "## Timestamp costs",
        "## Verdicts",
        "## For a commit message",
    ] {
        assert!(md.contains(heading), "{heading} missing");
    }
    assert!(
        md.contains(&format!(
            "tscope report --quick --sync-ms 20 --out {} --export-openmetrics {} --strace \
             scenarios/traces/make-cc.strace",
            out.display(),
            metrics.display()
        )),
        "the reproducing command, as given, is in the document"
    );

    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["profile"]["schema_version"], 1);
    assert!(v["profile"]["sources"].as_array().unwrap().len() >= 30);
    assert!(v["detect"]["verdicts"]["rdtsc_trapped"]["holds"].is_boolean());
    assert!(v["detect"]["facts"]["hypervisor"]["present"].is_boolean());
    // A probe disturbed by load can derive a precise-read cost at or below 0; simulate then
    // refuses to price reads with it, and the report must say so (warning + skipped parts)
    // instead of printing estimates. Both outcomes are asserted; neither passes silently.
    let disturbed = v["profile"]["derived"]["precise_read_ns"]["point"]
        .as_f64()
        .is_some_and(|x| x <= 0.0);
    if disturbed {
        let warned = v["profile"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "not_positive_derived");
        assert!(warned, "{}", v["profile"]["warnings"]);
        let skipped = v["skipped"].as_array().unwrap();
        assert!(!skipped.is_empty(), "a disturbed probe must leave a reason");
        for s in skipped {
            assert!(s.as_str().unwrap().contains("not above 0"), "{s}");
        }
        assert!(md.contains("not above 0"), "report.md must say why");
        return;
    }
    // The recorded program on each filesystem the report priced (/dev/shm and the one it is
    // written on), in the JSON, the document and the commit message.
    let programs = v["programs"].as_array().unwrap();
    assert_eq!(programs.len(), 1, "{}", v["skipped"]);
    assert_eq!(programs[0]["strace"], "scenarios/traces/make-cc.strace");
    let rows = programs[0]["by_filesystem"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["fs"] == "tmpfs"), "{rows:?}");
    for r in rows {
        assert!(r["multigrain_ns_per_pass"].is_number(), "{r}");
    }
    assert!(
        md.contains("## Recorded programs on each filesystem"),
        "{md}"
    );
    assert!(md.contains("### scenarios/traces/make-cc.strace ("), "{md}");
    let commit = std::fs::read_to_string(out.join("commit-message.txt")).unwrap();
    let flat = commit.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("to one pass of the recorded make-cc.strace"),
        "{commit}"
    );
    let sim = v["simulation"].as_array().unwrap();
    let has = |sc: &str, model: &str| {
        sim.iter()
            // Models are named `family@version` (docs/kernel-models.md).
            .any(|m| {
                m["scenario"] == sc
                    && m["model"]
                        .as_str()
                        .is_some_and(|s| s.starts_with(&format!("{model}@")))
            })
    };
    assert!(
        has("run:pipe1", "freebsd"),
        "simulation of the measured pipe1 missing"
    );
    assert!(has("write-stat", "linux"), "bundled scenario missing");
    for m in sim {
        for e in m["estimates"].as_array().unwrap() {
            assert!(e["ops_per_sec"].as_f64().unwrap() > 0.0);
            assert!(e["accuracy"]["equal_successive_share"].as_f64().unwrap() <= 1.0);
        }
    }
    // One sweep per model, over the vfsmix just measured (report::SWEEP_SCENARIO), and nothing
    // the report had to leave out.
    let sweep = v["sweep"].as_array().unwrap();
    let models: Vec<&str> = sweep.iter().map(|s| s["model"].as_str().unwrap()).collect();
    // Linux at this machine's kernel version (the profile's release), the BSDs at their newest.
    assert!(models[0].starts_with("linux@"), "{models:?}");
    assert_eq!(
        models[1..],
        [
            "freebsd@14.3",
            "dragonfly@6.4",
            "netbsd@10.1",
            "netbsd-knob@10.1"
        ]
    );
    assert!(
        sweep.iter().all(|s| s["scenario"] == "run:vfsmix"),
        "{sweep:?}"
    );
    assert_eq!(v["skipped"], serde_json::json!([]), "{}", v["skipped"]);
    let workloads = v["workloads"].as_array().unwrap();
    for name in ["pipe1", "vfsmix"] {
        let w = workloads
            .iter()
            .find(|w| w["workload"] == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert!(w["runs"][0]["ops_per_sec"]["median"].as_f64().unwrap() > 0.0);
        assert!(out.join(format!("workload-{name}.svg")).exists());
        // The knob estimates for this workload start from the run just measured.
        assert!(
            sim.iter().any(|m| m["scenario"] == format!("run:{name}")),
            "run:{name} not simulated"
        );
    }

    let sweep = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    let sdoc = roxmltree::Document::parse(&sweep).expect("sweep.svg is XML");
    let stexts: Vec<String> = sdoc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect();
    assert!(
        stexts.iter().any(|t| t.starts_with("netbsd-knob@")),
        "sweep series missing: {stexts:?}"
    );
    // This machine's cost is marked once, with its label; the break-even gain is drawn.
    let marks = stexts
        .iter()
        .filter(|t| t.starts_with("this machine: "))
        .count();
    assert_eq!(marks, 1, "{stexts:?}");
    assert!(
        stexts.iter().any(|t| t == "5% break-even"),
        "break-even line unlabelled: {stexts:?}"
    );

    let svg_path = out.join("costs.svg");
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("costs.svg is XML");
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect();
    for series in [
        "vDSO (libc)",
        "raw syscall",
        "counter / library",
        "reference",
    ] {
        assert!(
            texts.iter().any(|t| t == series),
            "legend '{series}' missing: {texts:?}"
        );
    }
    assert!(texts.iter().any(|t| t == "vdso:monotonic"));
    assert!(
        doc.descendants().filter(|n| n.has_tag_name("rect")).count() > 20,
        "bars drawn"
    );

    if !crate::skip::without("rsvg-convert") {
        for name in ["costs", "sweep", "workload-pipe1"] {
            let png_path = out.join(format!("{name}.png"));
            let svg = out.join(format!("{name}.svg"));
            let st = Command::new("rsvg-convert")
                .arg("-o")
                .arg(&png_path)
                .arg(&svg)
                .status()
                .unwrap();
            assert!(st.success());
            assert!(non_blank_png(&png_path), "{name}.png is blank");
        }
    }
}

#[test]
fn a_missing_recording_fails_before_measuring() {
    tscope()
        .args(["report", "--quick", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("r"))
        .args(["--strace", "/nonexistent/x.strace"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--strace '/nonexistent/x.strace': No such file",
        ));
}

#[test]
fn report_into_an_unwritable_place_fails_cleanly() {
    tscope()
        .args(["report", "--quick", "--out", "/proc/version/x"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("/proc/version/x"));
}

#[test]
fn a_report_can_be_compared() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    crate::common::quick_report(&[], &out);
    let json = out.join("report.json");
    let o = tscope()
        .arg("compare")
        .arg(&json)
        .arg("tests/data/compare/host.json")
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        !v["verdicts"].as_array().unwrap().is_empty(),
        "verdicts came from the report"
    );
}

#[test]
fn a_report_against_a_baseline_says_what_changed_since() {
    let _cpu = crate::common::cpu_lock();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let baseline = "tests/data/compare/clocksource/kvm-clock-plain-1.json";
    tscope()
        .args(["report", "--quick", "--no-workloads", "--sync-ms", "20"])
        .args(["--baseline", baseline, "--out"])
        .arg(&out)
        .assert()
        .success();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Since the baseline"), "{md}");
    assert!(md.contains(&format!("against `{baseline}`")), "{md}");
    assert!(md.contains("- Noise: "), "{md}");
    let commit = std::fs::read_to_string(out.join("commit-message.txt")).unwrap();
    assert!(commit.contains("\n\nSince the baseline"), "{commit}");
    assert!(commit.lines().all(|l| l.chars().count() <= 72), "{commit}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let s = &v["since_baseline"];
    assert_eq!(s["path"], baseline);
    assert!(s["of"].as_u64().unwrap() > 0, "{s}");
    // Every listed source changed; the rest are left out.
    for c in s["changed"].as_array().unwrap() {
        assert_ne!(c["change"], "no_change", "{c}");
    }
}

#[test]
fn an_unreadable_baseline_fails_before_measuring() {
    tscope()
        .args(["report", "--quick", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("r"))
        .args(["--baseline", "/nonexistent/old.json"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--baseline '/nonexistent/old.json'",
        ));
}
