//! `tscope simulate --explain MODEL`: a model's table, per syscall and filesystem, with the
//! source of every count. docs/kernel-models.md embeds [`markdown`] of every named version, and
//! a test checks that it still matches the code.

use serde::Serialize;

use super::{ClockFn, Effect, ModelId, Source, Target};
use crate::trace::{FsKind, Syscall};

/// One row: a syscall on one or more filesystems that share the same work and source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub syscall: &'static str,
    pub filesystems: Vec<&'static str>,
    /// The timestamp work, in kernel terms (`-` for none).
    pub work: String,
    /// Clock reads at the stock setting (upper bound for conditional Linux updates).
    pub reads: String,
    pub source: Source,
}

/// A model's whole table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub model: String,
    pub family: &'static str,
    pub version: String,
    pub policies: Vec<String>,
    pub stock_policy: String,
    pub notes: Vec<String>,
    pub rows: Vec<Row>,
}

fn target(t: Target) -> &'static str {
    match t {
        Target::Inode => "inode",
        Target::Dir => "dir",
    }
}

fn describe(e: Effect) -> Option<String> {
    Some(match e {
        Effect::None => return None,
        Effect::NewInode => "new inode".into(),
        Effect::VfsTimestamp { target: t, modify } => format!(
            "vfs_timestamp({}, {})",
            target(t),
            if modify { "m/ctime" } else { "atime" }
        ),
        Effect::Fixed {
            clock, target: t, ..
        } => {
            format!("{}({})", clock.kernel_name(), target(t))
        }
        Effect::Defer { target: t, modify } => format!(
            "defer {} flag({})",
            if modify { "change" } else { "access" },
            target(t)
        ),
        Effect::Flush { target: t } => {
            format!("flush pending({}): vfs_timestamp if any", target(t))
        }
        Effect::LinuxUpdateIfChanged { modify: true, .. } => "file_update_time".into(),
        Effect::LinuxUpdateIfChanged { modify: false, .. } => "touch_atime".into(),
        Effect::LinuxSetCtime { target: t } => format!("inode_set_ctime_current({})", target(t)),
        Effect::LinuxCopyCtimeToDir => "dir m/ctime = inode ctime".into(),
        Effect::LinuxNotifyChange { target: t } => format!(
            "notify_change: current_time({}); setattr_copy_mgtime: inode_set_ctime_current on \
             FS_MGTIME",
            target(t)
        ),
        Effect::LinuxTruncateIfNonEmpty { target: t } => {
            format!(
                "setattr ATTR_SIZE: ctime read({}) if the size changes",
                target(t)
            )
        }
        Effect::LinuxEvict => "evict: shmem_truncate_range ctime read".into(),
        Effect::LinuxQuery { .. } => "mark ctime queried".into(),
        Effect::LinuxRootTimes { reads } => {
            format!("btrfs_update_root_times: ktime_get_real_ts64 x{reads}")
        }
        Effect::LinuxFlushOnClose => "btrfs flush on close: root times read if written".into(),
        Effect::LinuxWritten(_) => return None,
        Effect::LinuxSync { full: true } => {
            "journal commit if the file's last store or first data is not committed".into()
        }
        Effect::LinuxSync { full: false } => {
            "journal commit if the file's first data is not committed".into()
        }
    })
}

/// Reads one effect takes at least (and at most), at the stock setting.
fn reads(e: Effect) -> (u32, u32) {
    match e {
        Effect::None
        | Effect::NewInode
        | Effect::Defer { .. }
        | Effect::LinuxCopyCtimeToDir
        | Effect::LinuxWritten(_)
        | Effect::LinuxSync { .. } => (0, 0),
        Effect::LinuxRootTimes { reads } => (u32::from(reads), u32::from(reads)),
        Effect::LinuxFlushOnClose => (0, 1),
        Effect::LinuxQuery { .. } => (0, 0),
        Effect::Flush { .. } => (0, 1),
        Effect::LinuxUpdateIfChanged { reread: true, .. } => (1, 2),
        Effect::LinuxNotifyChange { .. } => (1, 2),
        Effect::LinuxTruncateIfNonEmpty { .. } => (0, 1),
        Effect::LinuxUpdateIfChanged { reread: false, .. }
        | Effect::VfsTimestamp { .. }
        | Effect::Fixed { .. }
        | Effect::LinuxSetCtime { .. }
        | Effect::LinuxEvict => (1, 1),
    }
}

/// The table of `model`.
pub fn explain(model: ModelId) -> Explanation {
    let mut rows: Vec<Row> = Vec::new();
    for s in Syscall::ALL {
        for f in FsKind::ALL {
            let rule = model.rule(s, f);
            let works: Vec<String> = rule.action.iter().filter_map(|&e| describe(e)).collect();
            // Rows without work are shown only where a count was corrected or is a pipe end.
            let shown = !works.is_empty()
                || rule.source.status == "cited"
                || (f == FsKind::Pipefs && matches!(s, Syscall::Read | Syscall::Write));
            if !shown {
                continue;
            }
            let (lo, hi) = rule
                .action
                .iter()
                .map(|&e| reads(e))
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
            let row = Row {
                syscall: s.name(),
                filesystems: vec![f.name()],
                work: if works.is_empty() {
                    "-".into()
                } else {
                    works.join("; ")
                },
                reads: if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}-{hi}")
                },
                source: rule.source,
            };
            match rows.last_mut() {
                Some(last)
                    if last.syscall == row.syscall
                        && last.work == row.work
                        && last.source == row.source =>
                {
                    last.filesystems.push(f.name())
                }
                _ => rows.push(row),
            }
        }
    }
    let policies = model.policies();
    Explanation {
        model: model.label(),
        family: model.name(),
        version: model.version.to_string(),
        stock_policy: policies[0].name(),
        policies: policies.iter().map(|p| p.name()).collect(),
        notes: model.notes(),
        rows,
    }
}

/// The clock the stock policy's `vfs_timestamp()` or Linux reads use, for the heading.
pub fn stock_clock(model: ModelId) -> &'static str {
    match model.policies()[0].kind {
        super::PolicyKind::Bsd { vfs_clock } => vfs_clock.kernel_name(),
        super::PolicyKind::Linux {
            mg_clock_fns: true, ..
        } => ClockFn::LinuxCoarseMg.kernel_name(),
        super::PolicyKind::Linux { .. } => ClockFn::LinuxCoarse.kernel_name(),
    }
}

/// The Markdown section docs/kernel-models.md embeds for `model`.
pub fn markdown(model: ModelId) -> String {
    let e = explain(model);
    let mut out = format!(
        "#### `{}` (stock `{}`, `vfs_timestamp`/coarse clock `{}`)\n\n",
        e.model,
        e.stock_policy,
        stock_clock(model)
    );
    for n in &e.notes {
        out += &format!("Note: {n}\n\n");
    }
    out += "| syscall | fs | work | reads | source (repo, file, function, at, status) |\n";
    out += "|---|---|---|---|---|\n";
    for r in &e.rows {
        out += &format!(
            "| {} | {} | {} | {} | {} `{}` {} @ {} ({}) |\n",
            r.syscall,
            r.filesystems.join(", "),
            r.work.replace('|', "\\|"),
            r.reads,
            r.source.repo,
            r.source.file,
            r.source.function.replace('|', "\\|"),
            r.source.at,
            r.source.status
        );
    }
    out
}

/// Every named version of every family, oldest first: what the docs embed.
pub fn all_versions() -> Vec<ModelId> {
    super::Family::ALL
        .iter()
        .flat_map(|&f| f.versions().into_iter().map(move |v| ModelId::new(f, v)))
        .collect()
}

/// The generated part of docs/kernel-models.md.
pub fn docs_section() -> String {
    let mut out = String::new();
    for m in all_versions() {
        out += &markdown(m);
        out.push('\n');
    }
    out
}

/// The markers around the generated part of docs/kernel-models.md.
pub const DOCS_BEGIN: &str =
    "<!-- BEGIN GENERATED by `tscope simulate --explain`: do not edit by hand -->\n";
pub const DOCS_END: &str = "<!-- END GENERATED -->\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_embed_the_tables_the_code_has() {
        let doc = include_str!("../../docs/kernel-models.md");
        let (_, rest) = doc
            .split_once(DOCS_BEGIN)
            .expect("docs/kernel-models.md has the BEGIN GENERATED marker");
        let (generated, _) = rest.split_once(DOCS_END).expect("and the END marker");
        assert!(
            generated == docs_section(),
            "docs/kernel-models.md is out of date: regenerate it with \
             `cargo test --lib kernel::explain -- --ignored regenerate_docs`"
        );
    }

    /// Rewrites the generated part of docs/kernel-models.md (run by hand, see above).
    #[test]
    #[ignore]
    fn regenerate_docs() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/kernel-models.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let (head, rest) = doc.split_once(DOCS_BEGIN).unwrap();
        let (_, tail) = rest.split_once(DOCS_END).unwrap();
        let new = format!("{head}{DOCS_BEGIN}{}{DOCS_END}{tail}", docs_section());
        std::fs::write(path, new).unwrap();
    }

    #[test]
    fn freebsd_explain_cites_sys_pipe_c() {
        let e = explain(ModelId::newest(super::super::Family::Freebsd));
        assert!(e
            .rows
            .iter()
            .any(|r| r.source.file == "sys/kern/sys_pipe.c" && r.work.contains("getnanotime")));
        assert_eq!(e.model, "freebsd@14.3");
    }
}
