//! Where tests live, and how much of `vm` is public.
//!
//! - A module's unit tests are its `tests` child: inline (`mod tests { … }`), `tests.rs`, or a
//!   `tests/` folder when they need several files; a folder's shared test data is its
//!   `fixtures` module. No file is named `*_tests.rs`, every `tests` module is `#[cfg(test)]`,
//!   no test reaches into another module's `tests`, and `#[path]` includes only the one skip
//!   helper the unit and integration tests share.
//! - One module layout: a module with children is a folder with a `mod.rs` (where `cfg` picks
//!   an architecture's file, as `sys/` does); no `foo.rs` sits beside a `foo/` folder.
//! - `vm` shows each room through a small public face (its `mod.rs`); what the room does
//!   inside is `pub(crate)`. At most [`VM_PUBLIC_ITEMS`] `pub` items in all.
//! - Every `vm` room boots through the one pipeline in `vm/boot/pipeline.rs`: the session is
//!   opened there alone, and the kernel command line and the qemu spec are written there once.

use super::{code, tree};

/// The most `pub` items (fn, struct, enum, const, type, trait, static, use, mod) `src/vm/`
/// may declare.
const VM_PUBLIC_ITEMS: usize = 150;

/// The one `#[path]` the tree has: `lib.rs` includes the integration tests' skip helper.
const PATH_INCLUDES: [&str; 1] = ["lib.rs"];

#[test]
fn tests_live_in_each_modules_tests_child() {
    let mut bad = Vec::new();
    for (rel, text) in tree() {
        let file = rel.rsplit('/').next().unwrap();
        if file.ends_with("_tests.rs") {
            bad.push(format!(
                "src/{rel}: a test file is tests.rs or tests/NAME.rs"
            ));
        }
        let lines: Vec<&str> = code(&text).collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim();
            if t.starts_with("#[path") && !PATH_INCLUDES.contains(&rel.as_str()) {
                bad.push(format!("src/{rel}: #[path] ({t})"));
            }
            let declares_tests = t == "mod tests;" || t == "mod tests {";
            let gated = i > 0 && lines[i - 1].trim() == "#[cfg(test)]";
            if declares_tests && !gated {
                bad.push(format!("src/{rel}: `{t}` without #[cfg(test)] above it"));
            }
            // Reaching into another module's tests: `super::tests::x`, `crate::a::tests::x`.
            if (t.starts_with("use ") || t.starts_with("pub use "))
                && t.contains("::tests::")
                && !t.starts_with("use self::tests::")
            {
                bad.push(format!("src/{rel}: imports another module's tests ({t})"));
            }
        }
    }
    assert!(bad.is_empty(), "test layout:\n{}", bad.join("\n"));
}

#[test]
fn modules_with_children_are_folders_with_a_mod_rs() {
    let files: std::collections::BTreeSet<String> =
        tree().into_iter().map(|(rel, _)| rel).collect();
    let mut bad = Vec::new();
    for rel in &files {
        if let Some((dir, _)) = rel.rsplit_once('/') {
            let beside = format!("{dir}.rs");
            if files.contains(&beside) {
                bad.push(format!(
                    "src/{beside} beside src/{dir}/: move it to src/{dir}/mod.rs"
                ));
            }
        }
    }
    bad.dedup();
    assert!(bad.is_empty(), "module layout:\n{}", bad.join("\n"));
}

#[test]
fn vm_shows_a_small_public_face() {
    let kinds = [
        "fn ", "struct ", "enum ", "const ", "type ", "trait ", "static ", "use ", "mod ",
    ];
    let mut n = 0;
    let mut by_file = Vec::new();
    for (rel, text) in tree().into_iter().filter(|(r, _)| r.starts_with("vm/")) {
        let k = code(&text)
            .filter(|l| {
                let t = l.trim_start();
                t.strip_prefix("pub ")
                    .is_some_and(|rest| kinds.iter().any(|k| rest.starts_with(k)))
            })
            .count();
        n += k;
        by_file.push((k, rel));
    }
    by_file.sort();
    let top: Vec<String> = by_file
        .iter()
        .rev()
        .take(10)
        .map(|(k, r)| format!("src/{r}: {k}"))
        .collect();
    assert!(
        n <= VM_PUBLIC_ITEMS,
        "vm declares {n} pub items, at most {VM_PUBLIC_ITEMS}: make a room's insides \
         pub(crate); the most:\n{}",
        top.join("\n")
    );
}

/// Each line of code (not a comment) in `src/vm/` where `needle` stands, not as the start of a
/// longer name (`fn cmdline_and_initramfs`) and not right after one of `skip_after`.
fn vm_occurrences(needle: &str, skip_after: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, text) in tree().into_iter().filter(|(r, _)| r.starts_with("vm/")) {
        for line in code(&text) {
            for (at, _) in line.match_indices(needle) {
                let before = line[..at].trim_end();
                let after = line[at + needle.len()..].chars().next();
                let ident = |c: char| c.is_alphanumeric() || c == '_';
                let whole = !needle.ends_with(ident) || !after.is_some_and(ident);
                if whole && !skip_after.iter().any(|w| before.ends_with(w)) {
                    found.push(format!("src/{rel}: {}", line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn vm_rooms_boot_through_one_pipeline() {
    let mut bad = Vec::new();
    for (what, needle, skip) in [
        ("Session::open call", "Session::open(", &[][..]),
        ("fn cmdline", "fn cmdline", &[][..]),
        // A literal, not the type's declaration, its impl or a return type.
        (
            "QemuSpec literal",
            "QemuSpec {",
            &["struct", "impl", "->"][..],
        ),
    ] {
        let found = vm_occurrences(needle, skip);
        let in_pipeline = found
            .iter()
            .all(|f| f.starts_with("src/vm/boot/pipeline.rs:"));
        if found.len() != 1 || !in_pipeline {
            bad.push(format!(
                "one {what} in src/vm, in vm/boot/pipeline.rs; found {}:\n  {}",
                found.len(),
                found.join("\n  ")
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "every vm room boots through vm::boot::pipeline (a Room says what it wants, the \
         Pipeline does the rest):\n{}",
        bad.join("\n")
    );
}
