//! Replays the fuzz corpora (`fuzz/corpus/*`) through the same entry points the fuzz targets
//! call, so every input a fuzzer once found interesting stays covered by the plain test suite.

use std::path::Path;

fn files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn profile_corpus_never_panics() {
    let all = files("fuzz/corpus/profile_json");
    assert!(!all.is_empty(), "corpus missing");
    for f in all {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        }; // a running fuzzer may prune it
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let _ = tscope::compare::Input::parse(text, Path::new("corpus.json"));
        }
    }
}

#[test]
fn strace_corpus_never_panics() {
    let all = files("fuzz/corpus/strace_lines");
    assert!(!all.is_empty(), "corpus missing");
    for f in all {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        }; // a running fuzzer may prune it
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut j = tscope::trace::strace::Joiner::new();
        for line in text.lines() {
            let _ = j.feed(line);
        }
        let opts = tscope::trace::strace::import::ImportOptions::default();
        let import = tscope::trace::strace::import::StraceImport::new(&bytes[..], "corpus", opts);
        let _ = import.for_each(|_| {});
    }
}
