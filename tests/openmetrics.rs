//! `--openmetrics` end to end with the real parts, from Debian's packages (`./scripts/test`
//! installs them): tscope writes `*.prom` files into a textfile directory,
//! `prometheus-node-exporter` serves them on loopback, the test scrapes it with a plain HTTP
//! GET, and `promtool` checks tscope's text and the scraped one.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{tscope, PROFILE};
use crate::skip;

const REPORT: &str = "docs/example-report/report.json";

/// The exporter, killed and reaped on every way out of the test (a failed assertion too).
struct Exporter(Child);

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port nobody listens on now (the exporter binds it right after; a lost race shows as the
/// exporter exiting, and the test tries another port).
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("binding a loopback port");
    l.local_addr().unwrap().port()
}

/// Starts node_exporter on a free loopback port with only the textfile collector on `dir`;
/// returns it once it answers.
fn start_exporter(dir: &Path) -> (Exporter, u16) {
    for _ in 0..5 {
        let port = free_port();
        let child = Command::new("prometheus-node-exporter")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .args(["--collector.disable-defaults", "--collector.textfile"])
            .arg(format!("--collector.textfile.directory={}", dir.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting prometheus-node-exporter");
        let mut exporter = Exporter(child);
        // A deadline for starting, not a measurement.
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = exporter.0.try_wait() {
                break; // exited: most likely the port was taken meanwhile
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return (exporter, port);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    panic!("prometheus-node-exporter did not start listening on loopback");
}

/// `GET /metrics` over HTTP/1.0 (the server closes the connection after the body): the body.
fn scrape(port: u16) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connecting to the exporter");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response)
        .expect("reading the response");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(
        head.starts_with("HTTP/1.") && head.contains(" 200 "),
        "{head}"
    );
    body.to_string()
}

/// `promtool ARGS` with `stdin`; panics with its output unless it exits 0.
fn promtool(args: &[&str], stdin: &str) {
    let mut child = Command::new("promtool")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `tscope ARGS` expecting success.
fn run(args: &[&str]) {
    let out = tscope().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "tscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn node_exporter_serves_what_tscope_writes_and_promtool_accepts_it() {
    if skip::without("prometheus-node-exporter") || skip::without("promtool") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let file = |name: &str| d.path().join(name).display().to_string();
    // Three commands' files side by side, as a host keeps them: each series carries
    // `command`, so node_exporter finds no series twice.
    run(&["detect", "--openmetrics", "-o", &file("tscope.prom")]);
    run(&["show", PROFILE, "--openmetrics", "-o", &file("probe.prom")]);
    run(&["show", REPORT, "--openmetrics", "-o", &file("report.prom")]);
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["probe.prom", "report.prom", "tscope.prom"],
        "no temporary left"
    );

    let blocks = tempfile::tempdir().unwrap();
    for name in &names {
        let text = std::fs::read_to_string(d.path().join(name)).unwrap();
        promtool(&["check", "metrics"], &text);
        // OpenMetrics too: promtool's OpenMetrics parser (the backfill's) needs a timestamp on
        // every sample, and requires the `# EOF` tscope ends with.
        let stamped: String = text
            .lines()
            .map(|l| {
                if l.starts_with('#') {
                    format!("{l}\n")
                } else {
                    format!("{l} 1796000000\n")
                }
            })
            .collect();
        let om = blocks.path().join(format!("{name}.om"));
        std::fs::write(&om, stamped).unwrap();
        let out_dir = blocks.path().join(format!("{name}.blocks"));
        let args = ["tsdb", "create-blocks-from", "openmetrics"];
        let om = om.display().to_string();
        promtool(
            &[&args[..], &[&om, &out_dir.display().to_string()]].concat(),
            "",
        );
    }

    let (exporter, port) = start_exporter(d.path());
    let body = scrape(port);
    drop(exporter);
    promtool(&["check", "metrics"], &body);
    assert!(body.contains("node_textfile_scrape_error 0"), "{body}");
    for series in [
        "tscope_machine_info{",
        "tscope_run_timestamp_seconds{command=\"detect\"}",
        "tscope_source_cost_seconds{command=\"detect\",source=\"vdso:monotonic\"}",
        "tscope_precise_read_seconds{command=\"probe\"}",
        // node_exporter sorts the labels and gives every series of a family the same names,
        // a label left out as "" (which Prometheus reads as absent).
        "tscope_verdict{clock=\"\",command=\"detect\",state=\"yes\",verdict=\"rdtsc_trapped\"}",
        "tscope_knob_best_speedup_ratio{command=\"report\",",
    ] {
        assert!(body.contains(series), "no {series} in the scrape:\n{body}");
    }
    // One-hot: of the three states of a verdict, one is 1.
    let rdtsc: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with("tscope_verdict{") && l.contains("command=\"detect\""))
        .filter(|l| l.contains("verdict=\"rdtsc_trapped\""))
        .collect();
    assert_eq!(rdtsc.len(), 3, "{rdtsc:?}");
    assert_eq!(
        rdtsc.iter().filter(|l| l.ends_with(" 1")).count(),
        1,
        "{rdtsc:?}"
    );
}

#[test]
fn openmetrics_is_refused_where_there_is_no_such_form() {
    let out = tscope()
        .args(["show", "tests/data/simulate/pipe1.json", "--openmetrics"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("only probe, detect and report"), "{stderr}");
    let out = tscope()
        .args(["probe", "--openmetrics", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "conflicting formats");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--openmetrics"), "{stderr}");
}

#[test]
fn a_report_refuses_metrics_inside_its_own_directory() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    std::fs::create_dir(&out).unwrap();
    let inside = out.join("tscope.prom");
    let run = tscope()
        .args(["report", "--quick", "--out"])
        .arg(&out)
        .arg("--export-openmetrics")
        .arg(&inside)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("inside the report directory"), "{stderr}");
    assert!(
        crate::common::empty(&out),
        "nothing measured, nothing written"
    );
}

#[test]
fn the_documented_metrics_and_the_alerting_rules_pass_promtool() {
    if skip::without("promtool") {
        return;
    }
    let schema = std::fs::read_to_string("docs/schema.md").unwrap();
    let section = &schema[schema
        .find("## `--openmetrics`")
        .expect("docs/schema.md documents --openmetrics")..];
    for f in tscope::export::openmetrics::FAMILIES {
        assert!(
            section.contains(&format!("`{}`", f.name)),
            "docs/schema.md does not list {}",
            f.name
        );
    }
    // The example: the section's fenced block, exactly as tscope writes it.
    let block = section.split("```\n").nth(1).expect("an example block");
    assert!(block.ends_with("# EOF\n"), "{block}");
    promtool(&["check", "metrics"], block);
    for f in tscope::export::openmetrics::FAMILIES {
        let help = format!("# HELP {} {}\n", f.name, f.help);
        let named = block.contains(&format!("# HELP {} ", f.name));
        assert!(
            !named || block.contains(&help),
            "{}'s HELP as written",
            f.name
        );
    }
    promtool(
        &["check", "rules", "contrib/prometheus/tscope-alerts.yml"],
        "",
    );
    promtool(
        &["test", "rules", "contrib/prometheus/tscope-alerts.test.yml"],
        "",
    );
}
