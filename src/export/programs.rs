//! The report's recorded programs (`report --strace FILE`): what multigrain timestamps cost one
//! pass of each on every filesystem the report priced, as a Markdown section and as a sentence
//! of the commit message.

use crate::fmt::duration_short;
use crate::report::{ProgramCost, Report};

/// The section `## Recorded programs on each filesystem`: one table per program.
pub fn section(r: &Report) -> String {
    if r.programs.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Recorded programs on each filesystem\n\nEach program recorded with `tscope record` \
         (`--strace`) replayed with every regular path on each filesystem this report priced, \
         under this kernel's Linux model: multigrain against `linux:coarse` for one pass, the \
         share of the pass, and the events behind it (`tscope simulate --strace FILE --profile \
         report.json`; docs/schema.md, `by_filesystem`).\n",
    );
    for p in &r.programs {
        out += &format!(
            "\n### {} ({} calls a pass)\n\n| filesystem | multigrain per pass | share of the pass \
             | fine stamps | queries | updates | fsync commits |\n| --- | ---: | ---: | ---: | \
             ---: | ---: | ---: |\n",
            p.strace, p.calls
        );
        for row in &p.by_filesystem {
            let c = &row.counts;
            out += &format!(
                "| {} ({}) | {} | {:.3}% | {} | {} | {} | {} |\n",
                row.fs,
                row.dir,
                duration_short(row.multigrain_ns_per_pass),
                row.share_of_pass * 100.0,
                c.fine_stamps,
                c.queries,
                c.updates,
                c.sync_commits
            );
        }
    }
    out
}

/// One sentence per program for the commit message: the cost per pass and its share on each
/// filesystem; empty without `--strace`.
pub fn sentence(r: &Report) -> String {
    r.programs.iter().map(one).collect()
}

fn one(p: &ProgramCost) -> String {
    let name = std::path::Path::new(&p.strace)
        .file_name()
        .map_or_else(|| p.strace.clone(), |n| n.to_string_lossy().into_owned());
    let rows: Vec<String> = p
        .by_filesystem
        .iter()
        .map(|f| {
            format!(
                "{} on {} ({:.3}% of it)",
                duration_short(f.multigrain_ns_per_pass),
                f.fs,
                f.share_of_pass * 100.0
            )
        })
        .collect();
    format!(
        " Multigrain timestamps add {} to one pass of the recorded {name} ({} calls).",
        rows.join(", "),
        p.calls
    )
}
