//! Replays every committed fuzz corpus file (`fuzz/corpus/<target>`) through every entry point
//! its fuzz target calls (docs/reliability.md's table), without the fuzzer, so every input a
//! fuzzer once found interesting stays covered by the plain test suite. Each test does exactly
//! what `fuzz/fuzz_targets/<target>.rs` does with one input; a file that cannot be read fails
//! (`scripts/test`'s fuzz smoke writes new inputs to a scratch corpus, never here).

use std::path::{Path, PathBuf};

/// Every file of `fuzz/corpus/<target>`, sorted, read whole; the corpus must not be empty.
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "{} is empty", dir.display());
    paths
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect()
}

/// `profile_json`: `compare::Input::parse`, then `compare::compare` on what parsed.
#[test]
fn profile_corpus_through_parse_and_compare() {
    let (mut parsed, all) = (0, corpus("profile_json"));
    for (_, bytes) in &all {
        if let Ok(text) = std::str::from_utf8(bytes) {
            if let Ok(input) = tscope::compare::Input::parse(text, Path::new("corpus.json")) {
                parsed += 1;
                let pair = [input.clone(), input];
                for unit in [
                    None,
                    Some(tscope::compare::Unit::Ns),
                    Some(tscope::compare::Unit::Cycles),
                ] {
                    let _ = tscope::compare::compare(&pair, unit);
                }
            }
        }
    }
    // The corpus holds valid profiles too (the seeds): compare must have run on some.
    assert!(parsed > 0, "none of {} profile inputs parsed", all.len());
}

/// `strace_lines`: the Joiner and `parse_line` → `split_args` → `fd_arg`, `string_arg` per line,
/// then the whole importer.
#[test]
fn strace_corpus_through_the_parser_splitters_joiner_and_importer() {
    use tscope::trace::strace::parse::{fd_arg, parse_line, split_args, string_arg, Line};
    let (mut calls, all) = (0, corpus("strace_lines"));
    for (_, bytes) in &all {
        let text = String::from_utf8_lossy(bytes);
        let mut joiner = tscope::trace::strace::Joiner::new();
        for line in text.lines() {
            let _ = joiner.feed(line);
            if let Ok(Line::Call(c)) = parse_line(line) {
                calls += 1;
                for a in split_args(c.args) {
                    let _ = fd_arg(a);
                    let _ = string_arg(a);
                }
            }
        }
        let opts = tscope::trace::strace::import::ImportOptions::default();
        let import = tscope::trace::strace::import::StraceImport::new(&bytes[..], "corpus", opts);
        let _ = import.for_each(|_| {});
    }
    assert!(calls > 0, "no line of {} strace inputs parsed", all.len());
}

/// `scenario_json`: `Scenario::from_json`, `compile`, and `stream` of 3 iterations.
#[test]
fn scenario_corpus_through_parse_compile_and_stream() {
    let (mut streamed, all) = (0, corpus("scenario_json"));
    for (_, bytes) in &all {
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        let Ok(scenario) = tscope::trace::Scenario::from_json(text, "corpus.json") else {
            continue;
        };
        let compiled = scenario.compile();
        for op in compiled.stream(3) {
            std::hint::black_box(op);
        }
        streamed += 1;
    }
    assert!(streamed > 0, "none of {} scenario inputs parsed", all.len());
}
