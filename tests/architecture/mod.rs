//! The module tree keeps its shape (docs/architecture.md): only `cli/`, `commands/` and `lib.rs`
//! see the command line, and no `clap` appears anywhere else; no argv is rebuilt outside them; no
//! two top-level modules import each other, directly or through others, and no two files of one
//! folder do; `unsafe` lives in `sys/` alone; no source file passes 500 lines; the module tree
//! in docs/architecture.md names every folder. These read the source tree, so they fail on the
//! commit that breaks the shape.

mod circles;
mod docs;
mod layout;

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

/// Whether `start` reaches `goal` along the edges of `graph`.
fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, start: &str, goal: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start.to_string()];
    while let Some(m) = stack.pop() {
        if m == goal {
            return true;
        }
        if seen.insert(m.clone()) {
            stack.extend(graph.get(&m).into_iter().flatten().cloned());
        }
    }
    false
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
    let mut cycles = Vec::new();
    for (a, bs) in &edges {
        for b in bs {
            if reaches(&edges, b, a) {
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

#[test]
fn clap_lives_in_cli_and_commands_only() {
    let mut leaks = Vec::new();
    for (rel, text) in tree() {
        let ok = rel.starts_with("cli/")
            || rel.starts_with("commands/")
            || rel == "lib.rs"
            || rel == "main.rs";
        if ok {
            continue;
        }
        for (n, line) in code(&text).enumerate() {
            let word = line.match_indices("clap").any(|(i, _)| {
                let before = line[..i].chars().next_back();
                let after = line[i + 4..].chars().next();
                let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !ident(before) && !ident(after)
            });
            if word {
                leaks.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "clap outside src/cli/ and src/commands/ (derive the clap enum in cli/ and convert it \
         into the domain's own enum):\n{}",
        leaks.join("\n")
    );
}

/// Every folder under `src/`, as `a/b` paths.
fn folders(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for e in fs::read_dir(dir).expect("reading src/") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let r = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            folders(&p, &r, out);
            out.push(r);
        }
    }
}

#[test]
fn the_architecture_doc_names_every_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = fs::read_to_string(root.join("docs/architecture.md")).expect("docs/architecture.md");
    // The module tree: a fenced block opening with `src/`, two spaces of indent per level; a
    // folder's line starts with its name and a slash.
    let block = doc
        .split("```")
        .find(|b| b.trim_start().starts_with("src/"))
        .expect("docs/architecture.md has a module tree starting with src/");
    let mut named = BTreeSet::new();
    let mut stack: Vec<String> = Vec::new();
    for line in block.lines().skip_while(|l| !l.starts_with("src/")).skip(1) {
        let indent = line.len() - line.trim_start().len();
        let Some(first) = line.split_whitespace().next() else {
            continue;
        };
        if indent % 2 != 0 || indent < 2 {
            continue;
        }
        let level = indent / 2 - 1;
        if level > stack.len() {
            continue; // a description's continuation line
        }
        stack.truncate(level);
        if let Some(name) = first.strip_suffix('/') {
            stack.push(name.to_string());
            named.insert(stack.join("/"));
        } else {
            stack.push(String::new()); // a file: nothing nests under it
        }
    }
    let mut actual = Vec::new();
    folders(&root.join("src"), "", &mut actual);
    let actual: BTreeSet<String> = actual.into_iter().collect();
    let missing: Vec<&String> = actual.difference(&named).collect();
    let stale: Vec<&String> = named.difference(&actual).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/architecture.md's module tree is out of step with src/: folders missing from it: \
         {missing:?}; folders it names that do not exist: {stale:?}"
    );
}
