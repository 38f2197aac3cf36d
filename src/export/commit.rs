//! The paragraph a kernel developer pastes into a commit message or a mailing-list post: plain
//! text, wrapped at 72 columns, every what-if named (an emulated trap is never the machine's).

use crate::fmt::{estimate, ns};
use crate::price::Term;
use crate::report::Report;

/// The commit-message columns.
pub const WIDTH: usize = 72;

/// The paragraph wrapped at [`WIDTH`] columns, with a trailing newline: `commit-message.txt`;
/// under `--baseline` a second paragraph says what changed since it.
pub fn message(r: &Report) -> String {
    let since = super::baseline::sentence(r);
    if since.is_empty() {
        wrap(&paragraph(r), WIDTH)
    } else {
        wrap(&paragraph(r), WIDTH) + "\n" + &wrap(&since, WIDTH)
    }
}

/// `text` with its words refilled into lines of at most `width` columns (a word longer than
/// `width` stands alone on its line).
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out += &line;
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line += word;
    }
    if !line.is_empty() {
        out += &line;
        out.push('\n');
    }
    out
}

/// A paragraph to paste into a commit message or a mailing-list post.
pub fn paragraph(r: &Report) -> String {
    let p = &r.profile;
    let m = &p.machine;
    let f = &r.detect.facts;
    let get = |id: &str| p.cost_ns(id).map_or("?".into(), |e| ns(e.point));
    let hv = match (&f.hypervisor.vendor, f.hypervisor.present) {
        (Some(v), true) => format!("a {v} guest"),
        (None, true) => "a guest of an unknown hypervisor".into(),
        _ => "bare metal".into(),
    };
    let trapped = r
        .detect
        .verdicts
        .iter()
        .any(|(n, v)| n == "rdtsc_trapped" && v.holds);
    let precise = p
        .derived
        .precise_read_ns
        .map_or("?".into(), |e| estimate(&e));
    let knob = super::knob::sentence(r);
    let updates = update_sentence(r);
    let programs = super::programs::sentence(r);
    let trap = match (trapped, p.emulate_trap) {
        (true, true) => format!("trapped ({})", crate::report::EMULATED_TRAP),
        (true, false) => "trapped".to_string(),
        (false, _) => "not trapped".to_string(),
    };
    let what_if = if r.environment.what_ifs.is_empty() {
        String::new()
    } else {
        format!(
            "What-if, not this machine as it is: {}. ",
            r.environment.what_ifs.join("; ")
        )
    };
    // Nanoseconds follow the core clock the host chose: name it, and rdtsc in cycles.
    let clock = p.core_clock.as_ref().map_or(String::new(), |c| {
        format!(", core clock {:.2} GHz while probing", c.ghz)
    });
    let rdtsc_cycles = p
        .source("rdtsc")
        .and_then(|s| s.cost_cycles)
        .map_or(String::new(), |e| format!(" ({:.0} core cycles)", e.point));
    format!(
        "{what_if}On {} ({hv}, Linux {}, clocksource {}{clock}), a precise kernel timestamp costs \
         {precise} ns (syscall:realtime − syscall:realtime_coarse), a coarse one {} ns \
         (vdso:realtime_coarse). clock_gettime(CLOCK_MONOTONIC) costs {} ns through the vDSO \
         and {} ns as a raw syscall; rdtsc costs {} ns{rdtsc_cycles} and is {trap}.{knob}{updates}{programs} Figures are \
         medians with 95% bootstrap intervals from \"{}\" ({} at {}, seed {}).",
        m.cpu_model.as_deref().unwrap_or("this CPU"),
        m.kernel_release.as_deref().unwrap_or("?"),
        m.clocksource.current.as_deref().unwrap_or("?"),
        get("vdso:realtime_coarse"),
        get("vdso:monotonic"),
        get("syscall:monotonic"),
        get("rdtsc"),
        r.command,
        r.tool,
        r.environment.git_revision,
        p.seed
    )
}

/// The knob on each filesystem the live pair priced: write-stat's best setting against stock
/// on this kernel's model, with the read price and the update price named apart.
pub fn update_sentence(r: &Report) -> String {
    let mut parts = Vec::new();
    for f in &r.profile.filesystems {
        let name = format!("write-stat@{}", f.fs_type);
        let Some(m) = r.simulation.iter().find(|m| m.scenario == name) else {
            continue;
        };
        let Some((stock, best)) = super::knob::stock_and_best(m) else {
            continue;
        };
        let pair = f
            .pair
            .as_ref()
            .map(|p| {
                format!(
                    "; the live kernel's own A/B (statx asking for the times against the size \
                     only) measures {:.2}× [{:.2}, {:.2}]",
                    p.ratio.point, p.ratio.lower, p.ratio.upper
                )
            })
            .unwrap_or_default();
        let terms: String = [
            Term::FloorRead,
            Term::FineExcess,
            Term::CtimeSwap,
            Term::Query,
            Term::AtimeUpdate,
            Term::FirstUpdate,
        ]
        .into_iter()
        .filter_map(|t| {
            let e = f.price(t)?;
            let (before, after) = t.sentence();
            Some(format!(
                ", {before} {:.0} [{:.0}, {:.0}]{after} ({} less the model's reads)",
                e.point,
                e.lower,
                e.upper,
                f.priced_by(t).unwrap_or("its pair")
            ))
        })
        .collect();
        let update = match f.price(Term::Update) {
            Some(u) => format!(
                "an inode update {:.0} [{:.0}, {:.0}] ns ({} less the model's reads and query)",
                u.point,
                u.lower,
                u.upper,
                f.priced_by(Term::Update).unwrap_or("its pair")
            ),
            None => "its inode update unpriced (see the report)".into(),
        };
        parts.push(format!(
            " On {} ({}), write-stat buys {:.3}× ({}) over {}, priced at {} for a precise read{terms} \
             and {update}{pair}.",
            f.fs_type,
            f.mount_options.join(","),
            best.speedup / stock.speedup,
            best.policy,
            stock.policy,
            super::knob::price(m),
        ));
    }
    parts.concat()
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrapping_keeps_every_word_and_the_width() {
        let text = "On AMD EPYC (a KVM guest, Linux 6.18.44, clocksource tsc), a precise kernel \
                    timestamp costs 18.8 [17.2, 21.0] ns (syscall:realtime − \
                    syscall:realtime_coarse), a coarse one 2.84 ns.";
        let out = wrap(text, 72);
        assert!(out.lines().all(|l| l.chars().count() <= 72), "{out}");
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
        assert!(out.ends_with('\n'));
        assert_eq!(wrap("a-very-long-word b", 5), "a-very-long-word\nb\n");
        assert_eq!(wrap("", 72), "");
    }
}
