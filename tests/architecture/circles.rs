//! Circles between the files of one folder: a tokenizer of stripped code, the module paths
//! each file names, and the check that no two files of a folder reach each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{code, reaches, tree};

/// A file's text with comments removed and the insides of string and char literals blanked, so
/// that what is left is code.
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(' ');
            }
            'r' if matches!(c.get(i + 1), Some('"') | Some('#'))
                && !c[..i]
                    .last()
                    .is_some_and(|p| p.is_alphanumeric() || *p == '_') =>
            {
                // A raw string: r"…", r#"…"#.
                let mut j = i + 1;
                let mut hashes = 0;
                while c.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if c.get(j) != Some(&'"') {
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                j += 1;
                while j < c.len() {
                    if c[j] == '"' && (0..hashes).all(|k| c.get(j + 1 + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j;
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' => {
                // A char literal ('x', '\n', '\u{..}'), or a lifetime ('a).
                let end = if c.get(i + 1) == Some(&'\\') {
                    (i + 2..c.len()).find(|&j| c[j] == '\'')
                } else if c.get(i + 2) == Some(&'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match end {
                    Some(e) => {
                        out.push_str("' '");
                        i = e + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

/// Identifiers and punctuation of stripped code (`::` one token).
fn tokens(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_alphanumeric() || c[i] == '_' {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(c[s..i].iter().collect());
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".to_string());
            i += 2;
        } else if c[i].is_whitespace() {
            i += 1;
        } else {
            out.push(c[i].to_string());
            i += 1;
        }
    }
    out
}

/// The module a file under `src/` is (`vm/count/mod.rs` and `vm/count.rs` → `vm::count`).
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The paths (`crate::…`, `super::…`, `self::…`) that a path starting at `t[i]` names, with
/// `use` groups expanded; `at` is the module the code is in. Returns them and the index after.
fn paths_at(t: &[String], mut i: usize, at: &[String]) -> (Vec<Vec<String>>, usize) {
    let mut base: Vec<String> = match t[i].as_str() {
        "crate" => Vec::new(),
        "self" => at.to_vec(),
        _ => at.to_vec(), // super: popped below
    };
    while i < t.len() && t[i] == "super" {
        base.pop();
        i += 1;
        if t.get(i).map(String::as_str) == Some("::") {
            i += 1;
        }
    }
    if t[i] == "crate" || t[i] == "self" {
        i += 1;
        if t.get(i).map(String::as_str) == Some("::") {
            i += 1;
        }
    }
    fn rest(t: &[String], mut i: usize, base: Vec<String>) -> (Vec<Vec<String>>, usize) {
        let mut path = base;
        loop {
            match t.get(i).map(String::as_str) {
                Some("{") => {
                    let mut all = Vec::new();
                    i += 1;
                    while i < t.len() && t[i] != "}" {
                        if t[i] == "," {
                            i += 1;
                            continue;
                        }
                        if t[i] == "self" {
                            all.push(path.clone());
                            i += 1;
                            continue;
                        }
                        let (more, next) = rest(t, i, path.clone());
                        all.extend(more);
                        i = next.max(i + 1);
                    }
                    return (all, i + 1);
                }
                Some(s) if s.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                    path.push(s.to_string());
                    i += 1;
                    if t.get(i).map(String::as_str) == Some("::") {
                        i += 1;
                    } else {
                        return (vec![path], i);
                    }
                }
                _ => return (vec![path], i),
            }
        }
    }
    rest(t, i, base)
}

/// Every module path a file's code names, with the module each name is named from.
fn references(module: &[String], text: &str) -> Vec<Vec<String>> {
    // Unit tests may reach anywhere, as between top-level modules.
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    let t = tokens(&strip(text));
    let mut out = Vec::new();
    // Inline modules: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < t.len() {
        match t[i].as_str() {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                while inline.last().is_some_and(|(_, d)| *d > depth) {
                    inline.pop();
                }
            }
            "mod" if t.get(i + 2).map(String::as_str) == Some("{") => {
                inline.push((t[i + 1].clone(), depth + 1));
            }
            "crate" | "super" | "self"
                if t.get(i + 1).map(String::as_str) == Some("::")
                    && (i == 0 || t[i - 1] != "$") =>
            {
                let mut at = module.to_vec();
                at.extend(inline.iter().map(|(n, _)| n.clone()));
                let (paths, next) = paths_at(&t, i, &at);
                out.extend(paths);
                i = next.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[test]
fn files_of_one_folder_import_without_circles() {
    let files = tree();
    // Files included with `#[path]` are the child of the module that includes them.
    let mut modules: BTreeMap<String, Vec<String>> = files
        .iter()
        .map(|(rel, _)| (rel.clone(), module_of(rel)))
        .collect();
    for (rel, text) in &files {
        let lines: Vec<&str> = code(text).map(str::trim).collect();
        for w in lines.windows(2) {
            let Some(target) = w[0]
                .strip_prefix("#[path = \"")
                .and_then(|s| s.strip_suffix("\"]"))
            else {
                continue;
            };
            let name = w[1]
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ")
                .strip_prefix("mod ")
                .map(|s| s.trim_end_matches(';').to_string());
            let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
            let included = dir.join(target).to_string_lossy().replace('\\', "/");
            if let (Some(name), Some(m)) = (name, modules.get(rel).cloned()) {
                if modules.contains_key(&included) {
                    let mut m = m;
                    m.push(name);
                    modules.insert(included, m);
                }
            }
        }
    }
    // Modules declared under `#[cfg(test)]` (`mod tests;`): unit tests may reach anywhere.
    let mut test_modules: Vec<Vec<String>> = Vec::new();
    for (rel, text) in &files {
        let lines: Vec<&str> = code(text).map(str::trim).collect();
        for w in lines.windows(2) {
            if w[0] != "#[cfg(test)]" {
                continue;
            }
            if let Some(name) = w[1].strip_prefix("mod ").and_then(|s| s.strip_suffix(';')) {
                let mut m = modules[rel].clone();
                m.push(name.to_string());
                test_modules.push(m);
            }
        }
    }
    let known: BTreeSet<Vec<String>> = modules
        .values()
        .flat_map(|m| (1..=m.len()).map(|n| m[..n].to_vec()))
        .collect();
    // folder → (child → children it names)
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (rel, text) in &files {
        let from = &modules[rel];
        if test_modules.iter().any(|t| from.starts_with(t)) {
            continue;
        }
        for to in references(from, text) {
            for n in 0..from.len().min(to.len()) {
                if from[..n] != to[..n] {
                    break;
                }
                let (a, b) = (&from[n], &to[n]);
                if a != b && known.contains(&to[..=n]) {
                    edges
                        .entry(from[..n].to_vec())
                        .or_default()
                        .entry(a.clone())
                        .or_default()
                        .insert(b.clone());
                    break;
                }
            }
        }
    }
    let mut circles = Vec::new();
    for (folder, graph) in &edges {
        if folder.is_empty() {
            continue; // top-level modules: `top_level_modules_import_without_cycles`
        }
        for (a, bs) in graph {
            for b in bs {
                if a < b && reaches(graph, b, a) {
                    circles.push(format!("src/{}: {a} <-> {b}", folder.join("/")));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "files of one folder import each other, directly or through others (move what both \
         need into a file of its own):\n{}",
        circles.join("\n")
    );
}
