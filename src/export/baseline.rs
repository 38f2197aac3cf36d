//! The report's "since the baseline" part (`report --baseline FILE`): the shift line, the
//! paths that moved and the changed sources only, as a Markdown section and as a line of the
//! commit message.

use crate::compare::{ratio, Change, Unit};
use crate::fmt::ns;
use crate::report::Report;

/// The section `## Since the baseline`; empty without `--baseline`.
pub fn section(r: &Report) -> String {
    let Some(s) = &r.since_baseline else {
        return String::new();
    };
    let mut out = format!(
        "\n## Since the baseline\n\nThis report's probe against `{}`, judged as `tscope compare \
         {} report.json` judges it (docs/methodology.md, \"Noise between runs\"); only what \
         changed is listed.\n\n",
        s.path, s.path
    );
    let mut notes = vec![format!("Noise: {}.", s.noise)];
    if !s.machine_differences.is_empty() {
        notes.push(format!("Differs: {}.", s.machine_differences.join("; ")));
    }
    notes.extend(s.disturbed.iter().map(|d| format!("Disturbed: {d}.")));
    notes.extend(s.shifts.iter().map(|x| format!("Shift: {x}.")));
    notes.extend(s.paths.iter().map(|x| format!("Path: {x}.")));
    for n in notes {
        out += &format!("- {n}\n");
    }
    if s.changed.is_empty() {
        out += &format!(
            "\nNo source changed beyond the noise ({} compared).\n",
            s.of
        );
        return out;
    }
    out += "\n| source | baseline ns | now ns | ratio | change |\n| --- | ---: | ---: | ---: | --- |\n";
    for c in &s.changed {
        out += &format!(
            "| {} | {} | {} | {} | {}{}{} |\n",
            c.id,
            ns(c.before_ns),
            ns(c.after_ns),
            ratio::format(&c.ratio, c.change),
            c.change.as_str(),
            if c.path_word { " (path)" } else { "" },
            if c.unit == Unit::Cycles {
                " (in core cycles)"
            } else {
                ""
            }
        );
    }
    out += &format!(
        "\n{} of {} sources changed; the others did not, beyond the noise.\n",
        s.changed.len(),
        s.of
    );
    out
}

/// The commit message's line: what changed since the baseline, one clause per source (a path's
/// sources as one); empty without `--baseline`.
pub fn sentence(r: &Report) -> String {
    let Some(s) = &r.since_baseline else {
        return String::new();
    };
    if s.changed.is_empty() {
        let shift = if s.shifts.is_empty() {
            String::new()
        } else {
            " apart from a shift of the whole machine".to_string()
        };
        return format!(
            "Since the baseline ({}): no source changed beyond the noise{shift}.",
            s.path
        );
    }
    let clause = |c: &crate::report::baseline::ChangedSource| {
        format!(
            "{} {} → {} ns ({} {:+.1}%)",
            c.id,
            ns(c.before_ns),
            ns(c.after_ns),
            c.change.as_str(),
            100.0 * (c.ratio.point - 1.0)
        )
    };
    let parts: Vec<String> = s.changed.iter().map(clause).collect();
    let shift = if s.shifts.is_empty() {
        ""
    } else {
        ", net of the whole machine's shift"
    };
    let slower = s
        .changed
        .iter()
        .filter(|c| c.change == Change::Slower)
        .count();
    format!(
        "Since the baseline ({}): {} of {} sources changed beyond the noise{shift} ({slower} \
         slower): {}.",
        s.path,
        s.changed.len(),
        s.of,
        parts.join("; ")
    )
}
