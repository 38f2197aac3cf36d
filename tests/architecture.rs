//! The module tree keeps its shape (docs/architecture.md): only `cli/`, `commands/` and `lib.rs`
//! see the command line, and no `clap` appears anywhere else; no argv is rebuilt outside them; no
//! two top-level modules import each other, directly or through others, and no two files of one
//! folder do; `unsafe` lives in `sys/` alone; no source file passes 500 lines; the module tree
//! in docs/architecture.md names every folder. These read the source tree, so they fail on the
//! commit that breaks the shape.

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
