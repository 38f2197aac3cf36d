//! `tsc_marked_unstable` and `clocksource_switched`: decided from the kernel log's own lines
//! ([`crate::detect::forensics`]); the line is the evidence. A log that cannot be read, or
//! that no longer reaches back to boot, makes a "no" inconclusive, never a silent "no".

use serde_json::{json, Value};

use super::Verdict;
use crate::detect::forensics::{EventKind, Forensics, LogEvent};

fn tsc_family(cs: &str) -> bool {
    cs == "tsc" || cs == "tsc-early"
}

fn same_clock(a: &str, b: &str) -> bool {
    a == b || (tsc_family(a) && tsc_family(b))
}

/// Whether an event takes a clocksource out of service (and names it).
fn marks_unstable(e: &LogEvent) -> Option<&str> {
    match e.kind {
        EventKind::TscUnstable | EventKind::WatchdogSkew | EventKind::ReadBackDelay => {
            e.clocksource.as_deref()
        }
        _ => None,
    }
}

fn at(e: &LogEvent) -> String {
    e.time_s.map_or(String::new(), |t| format!(" at {t:.3} s"))
}

fn lines(events: &[&LogEvent]) -> Vec<Value> {
    events
        .iter()
        .map(|e| json!({ "kind": e.kind, "clocksource": e.clocksource, "time_s": e.time_s, "line": e.line }))
        .collect()
}

/// What both verdicts show besides their own lines.
fn context(f: &Forensics, current: Option<&str>, available: &[String]) -> Value {
    json!({
        "log": f.log.as_ref().map(|l| json!({
            "source": l.source,
            "records": l.records,
            "from_boot": l.from_boot,
            "first_record_s": l.first_record_s,
            "truncated": l.truncated,
            "ignored": l.ignored,
        })),
        "log_error": f.log_error,
        "current_clocksource": current,
        "available_clocksources": available,
        "boot_options": f.boot_options,
        "watchdog_exemption": f.watchdog_exemption,
    })
}

fn with(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Value::Object(e)) = (base.as_object_mut(), extra) {
        b.extend(e);
    }
    base
}

/// `tsc_marked_unstable`: the log has a line that takes the TSC out of service ("Marking TSC
/// unstable due to …", or the watchdog marking `tsc`/`tsc-early` unstable).
pub fn tsc_marked_unstable(f: &Forensics, current: Option<&str>, available: &[String]) -> Verdict {
    let events = f.log.as_ref().map_or(&[][..], |l| &l.events[..]);
    let hits: Vec<&LogEvent> = events
        .iter()
        .filter(|e| marks_unstable(e).is_some_and(tsc_family) || e.kind == EventKind::TscWarp)
        .collect();
    let evidence = with(
        context(f, current, available),
        json!({
            "lines": lines(&hits),
            "rule": "holds when the kernel log has \"Marking TSC unstable due to …\" \
                     (arch/x86/kernel/tsc.c mark_tsc_unstable, tsc_cs_mark_unstable) or the \
                     clocksource watchdog marking tsc or tsc-early unstable \
                     (kernel/time/clocksource.c clocksource_watchdog, cs_watchdog_read)",
        }),
    );
    let why = hits
        .iter()
        .find(|e| e.kind == EventKind::TscUnstable)
        .or(hits.first());
    if let Some(e) = why {
        let cause = hits
            .iter()
            .find(|h| h.kind != EventKind::TscUnstable)
            .map_or(String::new(), |c| format!(", after «{}»", c.line));
        return Verdict::decided(
            true,
            evidence,
            format!(
                "the kernel marked the TSC unstable{}: «{}»{cause}",
                at(e),
                e.line
            ),
        );
    }
    let exempt = &f.watchdog_exemption;
    let watchdog = if exempt.watchdog_checks_tsc {
        "the clocksource watchdog checks the TSC here"
    } else {
        "the clocksource watchdog does not check the TSC here"
    };
    let Some(log) = &f.log else {
        return Verdict::inconclusive(
            f.log_error
                .clone()
                .unwrap_or_else(|| "the kernel log was not read".into()),
            evidence,
        );
    };
    // An unstable TSC is rated 0 and cannot stay the current clocksource.
    if current.is_some_and(|c| c == "tsc") {
        return Verdict::decided(
            false,
            evidence,
            format!(
                "the TSC is the current clocksource and no line in {} kernel-log records marks \
                 it unstable ({watchdog})",
                log.records
            ),
        );
    }
    if !log.from_boot {
        return Verdict::inconclusive(
            format!(
                "the kernel log no longer reaches back to boot (oldest record at {}): a TSC \
                 marked unstable at boot would not show, and the TSC is not the current \
                 clocksource",
                log.first_record_s
                    .map_or("an unknown time".into(), |t| format!("{t:.1} s"))
            ),
            evidence,
        );
    }
    Verdict::decided(
        false,
        evidence,
        format!(
            "no line in {} kernel-log records since boot marks the TSC unstable ({watchdog})",
            log.records
        ),
    )
}

/// `clocksource_switched`: the kernel switched clocksource because the one in use was marked
/// unstable — a "Switched to clocksource" line after a line that took the current clocksource
/// out of service. The switches of boot-time selection (jiffies → tsc-early → tsc, a
/// `clocksource=` override) are listed but do not count.
pub fn clocksource_switched(f: &Forensics, current: Option<&str>, available: &[String]) -> Verdict {
    let events = f.log.as_ref().map_or(&[][..], |l| &l.events[..]);
    let mut in_use: Option<&str> = None;
    let mut cause: Option<&LogEvent> = None;
    let mut demotions: Vec<(&LogEvent, &LogEvent, Option<&str>)> = Vec::new();
    for e in events {
        if e.kind == EventKind::Switch {
            if let Some(c) = cause.take() {
                demotions.push((c, e, in_use));
            }
            in_use = e.clocksource.as_deref();
        } else if let Some(cs) = marks_unstable(e) {
            if in_use.is_some_and(|u| same_clock(u, cs)) && cause.is_none() {
                cause = Some(e);
            }
        }
    }
    let switches: Vec<&LogEvent> = events
        .iter()
        .filter(|e| e.kind == EventKind::Switch)
        .collect();
    let watchdog: Vec<&LogEvent> = events
        .iter()
        .filter(|e| e.kind != EventKind::Switch && e.kind != EventKind::TscUnstable)
        .collect();
    let last = switches.last().and_then(|e| e.clocksource.as_deref());
    let evidence = with(
        context(f, current, available),
        json!({
            "switches": lines(&switches),
            "watchdog_lines": lines(&watchdog),
            "demotions": demotions.iter().map(|(c, s, from)| json!({
                "from": from,
                "to": s.clocksource,
                "cause": c.line,
                "switch": s.line,
                "time_s": s.time_s,
            })).collect::<Vec<_>>(),
            "last_switch_matches_current": last.zip(current).map(|(a, b)| a == b),
            "rule": "holds when a \"Switched to clocksource\" line (kernel/time/clocksource.c \
                     __clocksource_select) follows a line that marked the clocksource then in \
                     use unstable (watchdog skew, read-back delay, Marking TSC unstable)",
        }),
    );
    if let Some((c, s, from)) = demotions.first() {
        return Verdict::decided(
            true,
            evidence,
            format!(
                "the kernel switched from {} to {}{} after «{}»",
                from.unwrap_or("?"),
                s.clocksource.as_deref().unwrap_or("?"),
                at(s),
                c.line
            ),
        );
    }
    let Some(log) = &f.log else {
        return Verdict::inconclusive(
            f.log_error
                .clone()
                .unwrap_or_else(|| "the kernel log was not read".into()),
            evidence,
        );
    };
    if !log.from_boot {
        return Verdict::inconclusive(
            format!(
                "the kernel log no longer reaches back to boot (oldest record at {}): an \
                 earlier switch would not show",
                log.first_record_s
                    .map_or("an unknown time".into(), |t| format!("{t:.1} s"))
            ),
            evidence,
        );
    }
    let path: Vec<&str> = switches
        .iter()
        .filter_map(|e| e.clocksource.as_deref())
        .collect();
    Verdict::decided(
        false,
        evidence,
        format!(
            "{} in {} kernel-log records since boot ({}), none after a clocksource was marked \
             unstable",
            match switches.len() {
                1 => "1 switch".to_string(),
                n => format!("{n} switches"),
            },
            log.records,
            if path.is_empty() {
                "none logged".to_string()
            } else {
                path.join(" → ")
            }
        ),
    )
}

#[cfg(test)]
mod tests;
