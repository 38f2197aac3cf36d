//! A hostile user's inputs, fourth round: the readers (docs/reliability.md, "A hostile user, as
//! root"). No string length panics a reader or a format; every number `compare` takes from a
//! document is range-checked, `between_runs` included; `--noise` takes separate runs of the
//! machine compared only; the `kind` tag decides what a document is for every reader; output
//! that is lost (a full device, a pipe nobody reads) and a closed stdin are errors, exit 2.
//! Device nodes are `mknod` copies in a temporary directory, never `/dev` itself.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{tscope, PROFILE};
use crate::skip;

const DETECT: &str = "tests/data/compare/trapped-detect.json";

fn repeat(i: usize) -> String {
    format!("tests/data/compare/noise/repeat-{i}.json")
}

fn load(path: &str) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Writes `v` as `dir/name` (compact JSON) and returns the path.
fn put(dir: &Path, name: &str, v: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(v).unwrap()).unwrap();
    path.display().to_string()
}

/// Runs `tscope args`: no panic, and exit 0 or exit 2 with one `tscope: error:` line. Returns
/// the exit code, stdout and stderr.
fn survives<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (i32, String, String) {
    let out = tscope().args(args).output().unwrap();
    let shown: Vec<_> = args
        .iter()
        .map(|a| {
            let a = a.as_ref().to_string_lossy();
            a.chars().take(60).collect::<String>()
        })
        .collect();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code();
    assert!(!stderr.contains("panicked"), "{shown:?}: {stderr:.2000}");
    match code {
        Some(0) => {}
        Some(2) => assert!(
            stderr.starts_with("tscope: error:") && stderr.len() < 4096,
            "{shown:?}: {stderr:.2000}"
        ),
        _ => panic!("{shown:?}: exit {code:?}: {stderr:.2000}"),
    }
    (code.unwrap(), stdout, stderr)
}

/// Every line of a human form is bounded, whatever the length of a string in the input: a
/// long string is cut with a marker (4,096 characters a cell, a few long cells a row).
fn readable(what: &str, text: &str) {
    let longest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(longest < 65_536, "{what}: a line of {longest} characters");
    if longest > 4096 {
        assert!(
            text.contains(" characters)"),
            "{what}: no marker where a cell was cut"
        );
    }
}

#[test]
fn a_megabyte_string_goes_through_every_reader_and_format_without_a_panic() {
    let d = tempfile::tempdir().unwrap();
    // 1 MB of one letter, and 1 MB of ESC bytes (each escaped to four characters).
    let strings = [
        ("long", "A".repeat(1 << 20)),
        ("esc", "\u{1b}".repeat(1 << 20)),
    ];
    let formats: [&[&str]; 5] = [
        &[],
        &["--markdown"],
        &["--csv"],
        &["--json"],
        &["--openmetrics"],
    ];
    for (name, s) in &strings {
        let mut probe = load(PROFILE);
        for field in ["cpu_model", "kernel_release", "hypervisor_signature"] {
            probe["machine"][field] = s.as_str().into();
        }
        probe["tool"] = s.as_str().into();
        let probe = put(d.path(), &format!("{name}-probe.json"), &probe);
        let mut detect = load(DETECT);
        detect["profile"]["machine"]["cpu_model"] = s.as_str().into();
        let detect = put(d.path(), &format!("{name}-detect.json"), &detect);
        for f in formats {
            let human = f.is_empty() || f == ["--markdown"];
            let mut runs: Vec<Vec<&str>> = vec![
                [&["show", &probe], f].concat(),
                [&["show", &detect], f].concat(),
            ];
            if f != ["--openmetrics"] {
                runs.push([&["compare", PROFILE, &probe, &detect], f].concat());
                runs.push(
                    [
                        &[
                            "simulate",
                            "pipe1",
                            "--model",
                            "freebsd",
                            "--profile",
                            &probe,
                        ],
                        f,
                    ]
                    .concat(),
                );
            }
            for args in runs {
                let (code, stdout, _) = survives(&args);
                assert_eq!(code, 0, "{:?}", &args[..2]);
                if human {
                    readable(&format!("{:?} {f:?}", &args[..2]), &stdout);
                }
            }
        }
        // The store: the document, and a 70,000-character label (an argument is at most
        // 128 KiB).
        let db = d.path().join(format!("{name}.db"));
        let db = db.to_str().unwrap();
        let label: String = s.chars().take(70_000).collect();
        let (code, _, _) = survives(&["fleet", "--db", db, "add", &probe]);
        assert_eq!(code, 0);
        // A label of control characters is refused, with a clear error.
        let (code, _, _) = survives(&["fleet", "--db", db, "add", PROFILE, "--label", &label]);
        assert_eq!(code, if *name == "esc" { 2 } else { 0 });
        for f in &formats[..4] {
            for cmd in [&["ls"][..], &["export"], &["report", "--by", "label"]] {
                let args = [&["fleet", "--db", db][..], cmd, f].concat();
                let (code, stdout, _) = survives(&args);
                assert_eq!(code, 0, "{args:?}");
                // `fleet export` is CSV unless asked for JSON.
                if (f.is_empty() && cmd != ["export"]) || f == &["--markdown"] {
                    readable(&format!("{args:?}"), &stdout);
                }
            }
        }
        let svg = d.path().join(format!("{name}.svg"));
        let (code, _, _) = survives(&[
            "fleet",
            "--db",
            db,
            "report",
            "--by",
            "label",
            "--export-svg",
            svg.to_str().unwrap(),
        ]);
        assert_eq!(code, 0);
    }
}

/// `repeat-2.json` with `edit` applied to every source's JSON, written as `dir/name`.
fn edited(dir: &Path, name: &str, edit: impl Fn(&mut Value)) -> String {
    let mut v = load(&repeat(2));
    for s in v["sources"].as_array_mut().unwrap() {
        edit(s);
    }
    put(dir, name, &v)
}

fn scale(e: &mut Value, k: f64) {
    for f in ["point", "lower", "upper"] {
        if let Some(x) = e[f].as_f64() {
            e[f] = (x * k).into();
        }
    }
}

#[test]
fn a_between_runs_the_runs_do_not_show_is_refused_naming_the_field_and_file() {
    let d = tempfile::tempdir().unwrap();
    // Every source 3× slower: caught.
    let slower = edited(d.path(), "slower.json", |s| {
        scale(&mut s["cost_ns"], 3.0);
        scale(&mut s["cost_cycles"], 3.0);
    });
    tscope()
        .args(["compare", &repeat(1), &slower, "--fail-on", "slower"])
        .assert()
        .code(1);
    // The same, with a noise its runs do not show, or out of range: refused, naming both.
    let noise = |x: Value| {
        move |s: &mut Value| {
            scale(&mut s["cost_ns"], 3.0);
            scale(&mut s["cost_cycles"], 3.0);
            if s["between_runs"].is_object() {
                s["between_runs"]["noise_pct"] = x.clone();
            }
        }
    };
    let points = |x: Value| {
        move |s: &mut Value| {
            if s["between_runs"].is_object() {
                s["between_runs"]["points_ns"][1] = x.clone();
            }
        }
    };
    let cases = [
        (
            edited(d.path(), "n1e6.json", noise(1e6.into())),
            "noise_pct",
        ),
        (
            edited(d.path(), "n1e308.json", noise(1e308.into())),
            "noise_pct",
        ),
        (
            edited(d.path(), "neg.json", noise((-5.0).into())),
            "noise_pct",
        ),
        (
            edited(d.path(), "n50.json", noise(50.0.into())),
            "noise_pct",
        ),
        (
            edited(d.path(), "p.json", points(1e308.into())),
            "points_ns[1]",
        ),
        (
            edited(d.path(), "p0.json", points(0.0.into())),
            "points_ns[1]",
        ),
        (
            edited(d.path(), "pneg.json", points((-1.0).into())),
            "points_ns[1]",
        ),
        (
            edited(d.path(), "few.json", |s| {
                if s["between_runs"].is_object() {
                    s["between_runs"]["points_ns"] = serde_json::json!([10.0, 11.0]);
                }
            }),
            "points_ns",
        ),
    ];
    for (file, field) in &cases {
        let (code, _, stderr) = survives(&["compare", &repeat(1), file, "--fail-on", "slower"]);
        assert_eq!(code, 2, "{file}: {stderr}");
        assert!(
            stderr.contains(file) && stderr.contains(&format!(".between_runs.{field}")),
            "{stderr}"
        );
        // No 309-digit number.
        assert!(!stderr.contains("0000000000"), "{stderr}");
    }
    let mut runs = load(&repeat(2));
    runs["between_runs"]["runs"] = 1_000_000.into();
    let runs = put(d.path(), "runs.json", &runs);
    let (code, _, stderr) = survives(&["compare", &repeat(1), &runs]);
    assert_eq!(code, 2);
    assert!(stderr.contains("between_runs.runs"), "{stderr}");
}

/// `repeat-i.json` on another host: its `host_id` replaced, its costs times `k`.
fn elsewhere(dir: &Path, i: usize, k: f64) -> String {
    let mut v = load(&repeat(i));
    v["machine"]["host_id"] = "00000000-0000-4000-8000-000000000001".into();
    for s in v["sources"].as_array_mut().unwrap() {
        scale(&mut s["cost_ns"], k);
        if s["between_runs"].is_object() {
            s["between_runs"] = Value::Null;
        }
    }
    put(dir, &format!("elsewhere-{i}.json"), &v)
}

#[test]
fn noise_profiles_must_be_separate_runs_of_the_machine_compared() {
    let d = tempfile::tempdir().unwrap();
    let fails = |noise: &[&str], extra: &[&str]| {
        let mut args = vec![
            "compare".to_string(),
            repeat(1),
            repeat(2),
            "--noise".into(),
        ];
        args.push(noise.join(","));
        args.extend(extra.iter().map(|s| s.to_string()));
        survives(&args)
    };
    // The same file three times: no spread, refused.
    let r3 = repeat(3);
    let (code, _, stderr) = fails(&[&r3, &r3, &r3], &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("same content") && stderr.contains(&r3),
        "{stderr}"
    );
    // The same run, pretty-printed: another hash, the same host and time.
    let pretty = d.path().join("pretty.json");
    std::fs::write(&pretty, serde_json::to_vec_pretty(&load(&r3)).unwrap()).unwrap();
    let pretty = pretty.display().to_string();
    let (code, _, stderr) = fails(&[&r3, &pretty, &repeat(4)], &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("the same run as") && stderr.contains(&pretty),
        "{stderr}"
    );
    // Another machine's runs, as noisy as a busy host: they would turn a failing --fail-on
    // into a pass.
    let changed = edited(d.path(), "changed.json", |s| {
        if s["id"] == "vdso:monotonic" {
            scale(&mut s["cost_ns"], 1.2);
        }
    });
    let other = [
        elsewhere(d.path(), 3, 1.0),
        elsewhere(d.path(), 4, 1.6),
        elsewhere(d.path(), 5, 0.6),
    ];
    let other: Vec<&str> = other.iter().map(String::as_str).collect();
    tscope()
        .args(["compare", &repeat(1), &changed, "--fail-on", "slower"])
        .assert()
        .code(1);
    let r1 = repeat(1);
    let mut args = vec!["compare", &r1, &changed, "--fail-on", "slower"];
    let noise = other.join(",");
    args.extend(["--noise", &noise]);
    let (code, _, stderr) = survives(&args);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("another machine")
            && stderr.contains(other[0])
            && stderr.contains("--noise-from-other-hosts"),
        "{stderr}"
    );
    // Asked for: taken (and the other machine's spread excuses the change).
    args.push("--noise-from-other-hosts");
    let (code, _, _) = survives(&args);
    assert_eq!(code, 0);
    // One of this machine and two of another: refused too.
    let (code, _, stderr) = fails(&[&repeat(3), other[1], other[2]], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains(other[1]), "{stderr}");
    // This machine's separate runs: taken.
    let (code, _, _) = fails(&[&repeat(3), &repeat(4), &repeat(5)], &[]);
    assert_eq!(code, 0);
}

#[test]
fn the_kind_tag_decides_what_a_document_is_for_compare_as_for_show() {
    let d = tempfile::tempdir().unwrap();
    let tagged = |i: usize, tag: &str| {
        let mut v = load(&repeat(i));
        v["kind"] = tag.into();
        put(d.path(), &format!("{tag}-{i}.json"), &v)
    };
    let detect = tagged(2, "tscope-detect");
    for args in [
        vec!["show".to_string(), detect.clone()],
        vec!["compare".into(), repeat(1), detect.clone()],
        vec![
            "compare".into(),
            repeat(1),
            repeat(2),
            "--noise".into(),
            [
                tagged(3, "tscope-detect"),
                tagged(4, "tscope-detect"),
                tagged(5, "tscope-detect"),
            ]
            .join(","),
        ],
    ] {
        let (code, _, stderr) = survives(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(stderr.contains("detect"), "{args:?}: {stderr}");
    }
    // A detection tagged as a probe is read as a probe, and does not parse as one.
    let mut v = load(DETECT);
    v["kind"] = "tscope-probe".into();
    let probe = put(d.path(), "detect-as-probe.json", &v);
    let (code, _, _) = survives(&["compare", PROFILE, &probe]);
    assert_eq!(code, 2);
}

#[test]
fn help_and_version_into_a_full_device_exit_2() {
    if skip::without("root") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let full = d.path().join("full");
    assert!(Command::new("mknod")
        .arg(&full)
        .args(["c", "1", "7"])
        .status()
        .unwrap()
        .success());
    for args in [
        &["--help"][..],
        &["--version"],
        &["compare", "--help"],
        &["-h"],
    ] {
        let out = Command::new(tscope().get_program())
            .args(args)
            .stdout(std::fs::OpenOptions::new().write(true).open(&full).unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("No space left on device"), "{stderr}");
    }
    // A readable stdout still gets them, exit 0.
    tscope().arg("--version").assert().success();
}

#[test]
fn a_closed_stdin_is_an_error_for_fleet_add() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("f.db");
    let out = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" fleet --db \"$1\" add - <&-")
        .arg(tscope().get_program())
        .arg(&db)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("standard input, which is closed"),
        "{stderr}"
    );
    // An empty stdin is not a closed one.
    tscope()
        .args(["fleet", "--db"])
        .arg(&db)
        .args(["add", "-"])
        .write_stdin("")
        .assert()
        .success();
}

#[test]
fn output_nobody_reads_is_exit_2_and_output_partly_read_is_not() {
    let d = tempfile::tempdir().unwrap();
    let fifo: PathBuf = d.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // Descriptor 5 writes a FIFO whose only reader (4) is closed before tscope starts: as
    // `… | true` when `true` has exited, without the race.
    let out = Command::new("sh")
        .arg("-c")
        .arg("exec 4<>\"$1\" 5>\"$1\" 4<&-; exec \"$0\" show \"$2\" >&5 5>&-")
        .arg(tscope().get_program())
        .arg(&fifo)
        .arg(PROFILE)
        .env("XDG_CACHE_HOME", crate::common::cache_home())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("a pipe nobody reads"), "{stderr}");
    // A reader that takes one byte of a megabyte and goes (`| head -c1`): it took what it
    // wanted, exit 0.
    let mut big = load(PROFILE);
    big["machine"]["cpu_model"] = "A".repeat(1 << 20).into();
    let big = put(d.path(), "big.json", &big);
    let mut child = Command::new(tscope().get_program())
        .args(["show", &big, "--json"])
        .env("XDG_CACHE_HOME", crate::common::cache_home())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    pipe.read_exact(&mut byte).unwrap();
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
