//! `tscope man`: a page per subcommand with its options and examples; `--out` writes them all;
//! `--help` of each subcommand ends with examples.

use crate::common::tscope;

fn stdout(args: &[&str]) -> String {
    let out = tscope().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn each_subcommand_has_a_page_with_its_options_and_examples() {
    let detect = stdout(&["man", "detect"]);
    assert!(detect.contains(".TH tscope-detect 1"), "{detect}");
    assert!(detect.contains("\\-\\-fail\\-on"), "{detect}");
    assert!(detect.contains("Examples:"), "{detect}");
    let guest = stdout(&["man", "vm-guest"]);
    assert!(guest.contains("\\-\\-clocksource"), "{guest}");
    let run = stdout(&["man", "run"]);
    assert!(
        run.contains("\\-\\-quick") || run.contains("\\-\\-duration"),
        "{run}"
    );
    tscope()
        .args(["man", "nope"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("pages: probe"));
}

#[test]
fn man_out_writes_every_page() {
    let dir = tempfile::tempdir().unwrap();
    tscope()
        .args(["man", "--out"])
        .arg(dir.path())
        .assert()
        .success();
    for page in [
        "tscope.1",
        "tscope-probe.1",
        "tscope-report.1",
        "tscope-vm-exits.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{page}");
    }
    // The guest's /init entry point is hidden: no page for it.
    assert!(!dir.path().join("tscope-vm-guest-init.1").exists());
}

#[test]
fn help_ends_with_examples() {
    for cmd in [
        "probe", "detect", "run", "simulate", "record", "report", "compare", "vm",
    ] {
        let help = stdout(&[cmd, "--help"]);
        let examples = help
            .find("Examples:")
            .unwrap_or_else(|| panic!("{cmd}: {help}"));
        assert!(
            help[examples..].contains(&format!("tscope {cmd}")) || cmd == "vm",
            "{cmd}"
        );
    }
}
