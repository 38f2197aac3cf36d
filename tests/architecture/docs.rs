//! Docs are reference: no issue numbers of this project and no development-machine paths in
//! docs, README, sources or bundled scenarios.

use std::fs;
use std::path::{Path, PathBuf};

/// Docs are reference and the tree names no development machine: no file under `docs/`, no
/// `README.md`, no source file and no bundled scenario refers to this project's issues by number
/// ("issue 12", "issues 14 and 17", "(#23)") or to a work stop ("stop 21"), and none shows a
/// path of the machine it was written on (`/root/`, `/work/`). Upstream trackers cited by name
/// ("ClickHouse #41111") are not this project's issues and pass.
#[test]
fn docs_and_sources_name_no_issue_numbers_and_no_development_paths() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    fn word_at(lower: &str, i: usize, word: &str) -> bool {
        let before = lower[..i].chars().next_back();
        lower[i..].starts_with(word) && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    }
    /// What follows `word` at `i`: spaces, an optional `#` or `-`, then a digit?
    fn number_follows(lower: &str, i: usize, word: &str) -> bool {
        let rest = lower[i + word.len()..].trim_start_matches(' ');
        let rest = rest
            .strip_prefix('#')
            .or_else(|| rest.strip_prefix('-'))
            .unwrap_or(rest);
        rest.starts_with(|c: char| c.is_ascii_digit())
    }
    fn issue_reference(line: &str) -> bool {
        let lower = line.to_lowercase();
        for (i, _) in lower.char_indices() {
            for word in ["issues", "issue", "stop"] {
                if word_at(&lower, i, word)
                    && !lower[i + word.len()..].starts_with(|c: char| c.is_alphanumeric())
                    && number_follows(&lower, i, word)
                {
                    return true;
                }
            }
            // A bare "(#23)": a number in parentheses with no tracker named before it.
            if lower[i..].starts_with("(#") {
                let digits = lower[i + 2..]
                    .bytes()
                    .take_while(u8::is_ascii_digit)
                    .count();
                if digits > 0 && lower[i + 2 + digits..].starts_with(')') {
                    return true;
                }
            }
        }
        false
    }

    // The rule itself, on lines it must and must not flag.
    for flagged in [
        "as issue 12 says",
        "issues 14 and 17",
        "Issue #23",
        "fixed (#23)",
        "from stop 22",
        "the stop-20 binary",
    ] {
        assert!(issue_reference(flagged), "not flagged: {flagged}");
    }
    for passed in [
        "ClickHouse #41111",
        "quanta #111",
        "glibc issues one openat",
        "workers_issue_exactly_the_defined_syscalls",
        "the stop word",
        "#[derive(Debug)]",
        "nonstop 5",
    ] {
        assert!(!issue_reference(passed), "flagged: {passed}");
    }

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    walk(&root.join("docs"), &mut files);
    walk(&root.join("src"), &mut files);
    let mut scenarios = Vec::new();
    walk(&root.join("scenarios"), &mut scenarios);
    files.extend(
        scenarios
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "json")),
    );
    assert!(
        files.len() > 20,
        "found only {} files to check",
        files.len()
    );

    let mut found = Vec::new();
    for path in &files {
        let Ok(text) = fs::read_to_string(path) else {
            continue; // not text (an image)
        };
        let rel = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        for (n, line) in text.lines().enumerate() {
            if issue_reference(line) {
                found.push(format!("{rel}:{}: an issue number: {}", n + 1, line.trim()));
            }
            if !rel.starts_with("scenarios") && (line.contains("/root/") || line.contains("/work/"))
            {
                found.push(format!(
                    "{rel}:{}: a development path: {}",
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "docs are reference: state what holds now, without this project's issue numbers or \
         the paths of a development machine (write ~/.cache/tscope/..., target/...):\n{}",
        found.join("\n")
    );
}
