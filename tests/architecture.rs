//! The module tree keeps its shape (docs/architecture.md): only `cli/`, `commands/` and `lib.rs`
//! see the command line; no argv is rebuilt outside them; no two top-level modules import each
//! other, directly or through others; `unsafe` lives in `sys/` alone; no source file passes 500
//! lines. These read the source tree, so they fail on the commit that breaks the shape.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("reading src/") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `.rs` file under `src/`, as (path relative to `src/`, text).
fn tree() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, fs::read_to_string(&p).expect("reading a source file"))
        })
        .collect()
}

/// The lines of `text` that are code, not comments.
fn code(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim_start().starts_with("//"))
}

/// The top-level module a file belongs to (`probe/mod.rs` and `probe/x.rs` → `probe`).
fn top(rel: &str) -> String {
    rel.split('/')
        .next()
        .unwrap()
        .trim_end_matches(".rs")
        .to_string()
}

#[test]
fn only_cli_and_commands_see_the_command_line() {
    let mut leaks = Vec::new();
    for (rel, text) in tree() {
        let cli_ok = rel.starts_with("cli/")
            || rel.starts_with("commands/")
            || rel == "lib.rs"
            || rel == "main.rs";
        let argv_ok = rel.starts_with("cli/") || rel.starts_with("commands/");
        for (n, line) in code(&text).enumerate() {
            if !cli_ok && (line.contains("crate::cli") || line.contains("tscope::cli")) {
                leaks.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
            if !argv_ok && line.contains("parse_from") {
                leaks.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "the domain sees the command line (clap types and rebuilt argv belong in src/cli/ and \
         src/commands/):\n{}",
        leaks.join("\n")
    );
}

#[test]
fn top_level_modules_import_without_cycles() {
    let files = tree();
    let modules: BTreeSet<String> = files.iter().map(|(rel, _)| top(rel)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, text) in &files {
        let from = top(rel);
        if from == "lib" || from == "main" {
            continue;
        }
        // Unit tests may reach anywhere.
        let text = text.split("#[cfg(test)]").next().unwrap_or("");
        for line in code(text) {
            for (i, _) in line.match_indices("crate::") {
                let rest = &line[i + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name != from && modules.contains(&name) {
                    edges.entry(from.clone()).or_default().insert(name);
                }
            }
            if let Some(list) = line.trim().strip_prefix("use crate::{") {
                for name in list
                    .split([',', '}', ' '])
                    .map(|s| s.split("::").next().unwrap())
                {
                    if name != from && modules.contains(name) {
                        edges
                            .entry(from.clone())
                            .or_default()
                            .insert(name.to_string());
                    }
                }
            }
        }
    }
    // A cycle is an edge a -> b with b reaching a.
    let reaches = |start: &str, goal: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start.to_string()];
        while let Some(m) = stack.pop() {
            if m == goal {
                return true;
            }
            if seen.insert(m.clone()) {
                stack.extend(edges.get(&m).into_iter().flatten().cloned());
            }
        }
        false
    };
    let mut cycles = Vec::new();
    for (a, bs) in &edges {
        for b in bs {
            if reaches(b, a) {
                cycles.push(format!("{a} -> {b} -> … -> {a}"));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "import cycles between top-level modules:\n{}\n(edges: {edges:?})",
        cycles.join("\n")
    );
}

#[test]
fn the_ground_floor_imports_no_feature_module() {
    for (rel, text) in tree() {
        if ["error.rs", "warnings.rs", "progress.rs"].contains(&rel.as_str()) {
            // `$crate::` inside a macro names this module's own items.
            let uses: Vec<&str> = code(&text)
                .filter(|l| l.replace("$crate::", "").contains("crate::"))
                .collect();
            assert!(
                uses.is_empty(),
                "src/{rel} imports from the crate: {uses:?}"
            );
        }
    }
}

#[test]
fn unsafe_code_lives_in_sys_only() {
    let mut outside = Vec::new();
    for (rel, text) in tree() {
        if rel.starts_with("sys/") {
            continue;
        }
        for (n, line) in code(&text).enumerate() {
            let l = line.trim();
            if l.contains("unsafe {") || l.contains("unsafe fn") || l.contains("asm!(") {
                outside.push(format!("src/{rel}:{}: {l}", n + 1));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "unsafe outside src/sys/:\n{}",
        outside.join("\n")
    );
}

#[test]
fn no_source_file_passes_500_lines() {
    let long: Vec<String> = tree()
        .into_iter()
        .filter(|(_, t)| t.lines().count() > 500)
        .map(|(rel, t)| format!("src/{rel} ({} lines)", t.lines().count()))
        .collect();
    assert!(long.is_empty(), "split these files by concern: {long:?}");
}

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
