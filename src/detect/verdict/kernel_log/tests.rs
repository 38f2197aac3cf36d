//! The forensic rules on recorded kernel logs (`tests/data/kmsg/`).

use super::*;
use crate::detect::forensics::fixture::{forensics, unreadable};
use crate::detect::verdict::VerdictState;

const EXEMPT: [&str; 3] = ["constant_tsc", "nonstop_tsc", "tsc_adjust"];

fn av(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_tsc_unstable_boot_holds_with_the_line() {
    let f = forensics("tsc-unstable-guest.log", "console=ttyS0 tsc=unstable", &[]);
    let v = tsc_marked_unstable(&f, Some("hpet"), &av(&["hpet", "acpi_pm"]));
    assert_eq!(v.state, VerdictState::Yes, "{}", v.summary);
    assert!(
        v.summary
            .contains("«tsc: Marking TSC unstable due to boot parameter»"),
        "{}",
        v.summary
    );
    assert_eq!(v.evidence["boot_options"]["tsc"][0], "unstable");
    assert_eq!(
        v.evidence["lines"][0]["line"],
        "tsc: Marking TSC unstable due to boot parameter"
    );
    // The TSC was never in use, so nothing was switched away from it.
    let s = clocksource_switched(&f, Some("hpet"), &av(&["hpet", "acpi_pm"]));
    assert_eq!(s.state, VerdictState::No, "{}", s.summary);
}

#[test]
fn this_hosts_boot_selection_is_neither() {
    let f = forensics("this-host-kvm.kmsg", "console=ttyS0", &EXEMPT);
    let cs = av(&["tsc", "kvm-clock"]);
    let v = tsc_marked_unstable(&f, Some("tsc"), &cs);
    assert_eq!(v.state, VerdictState::No, "{}", v.summary);
    assert!(
        v.summary.contains("does not check the TSC"),
        "{}",
        v.summary
    );
    let s = clocksource_switched(&f, Some("tsc"), &cs);
    assert_eq!(s.state, VerdictState::No, "{}", s.summary);
    assert!(s.summary.contains("2 switches"), "{}", s.summary);
    assert!(s.summary.contains("kvm-clock → tsc"), "{}", s.summary);
    assert_eq!(s.evidence["last_switch_matches_current"], true);
    assert_eq!(s.evidence["switches"].as_array().unwrap().len(), 2);
}

#[test]
fn a_watchdog_skew_on_the_current_tsc_is_both() {
    let f = forensics("watchdog-skew-acpi_pm.log", "", &[]);
    let cs = av(&["tsc", "hpet", "acpi_pm"]);
    let v = tsc_marked_unstable(&f, Some("acpi_pm"), &cs);
    assert_eq!(v.state, VerdictState::Yes);
    assert!(v.summary.contains("at 3007.006 s"), "{}", v.summary);
    assert!(v.summary.contains("skew is too large"), "{}", v.summary);
    // A demotion needs the clocksource in use before the skew, which the excerpt does not
    // name: a switch line from boot goes before it.
    let mut g = f.clone();
    if let Some(l) = g.log.as_mut() {
        l.events.insert(
            0,
            LogEvent {
                kind: EventKind::Switch,
                clocksource: Some("tsc".into()),
                time_s: Some(1.0),
                line: "clocksource: Switched to clocksource tsc".into(),
            },
        );
    }
    let s = clocksource_switched(&g, Some("acpi_pm"), &cs);
    assert_eq!(s.state, VerdictState::Yes, "{}", s.summary);
    assert!(
        s.summary
            .starts_with("the kernel switched from tsc to acpi_pm at 3007.007 s"),
        "{}",
        s.summary
    );
    assert_eq!(s.evidence["demotions"][0]["to"], "acpi_pm");
    // Without that line the excerpt cannot tell: it does not reach back to boot.
    let s = clocksource_switched(&f, Some("acpi_pm"), &cs);
    assert_eq!(s.state, VerdictState::Inconclusive, "{}", s.summary);
    assert!(s.summary.contains("no longer reaches back to boot"));
}

#[test]
fn a_skew_while_another_clocksource_is_current_switches_nothing() {
    let f = forensics("watchdog-skew-kvm-clock-guest.log", "", &[]);
    let cs = av(&["kvm-clock", "tsc", "hpet"]);
    assert_eq!(
        tsc_marked_unstable(&f, Some("kvm-clock"), &cs).state,
        VerdictState::Yes
    );
    let mut g = f.clone();
    if let Some(l) = g.log.as_mut() {
        l.from_boot = true;
        l.events.insert(
            0,
            LogEvent {
                kind: EventKind::Switch,
                clocksource: Some("kvm-clock".into()),
                time_s: Some(0.2),
                line: "clocksource: Switched to clocksource kvm-clock".into(),
            },
        );
    }
    let s = clocksource_switched(&g, Some("kvm-clock"), &cs);
    assert_eq!(s.state, VerdictState::No, "{}", s.summary);
    assert!(s.summary.starts_with("1 switch in"), "{}", s.summary);
}

#[test]
fn sync_warps_and_read_back_delays_mark_the_tsc() {
    for (log, cause) in [
        ("tsc-sync-warp.log", "check_tsc_sync_source failed"),
        ("read-back-delay.log", "excessive read-back delay"),
    ] {
        let f = forensics(log, "", &[]);
        let v = tsc_marked_unstable(&f, Some("hpet"), &av(&["hpet"]));
        assert_eq!(v.state, VerdictState::Yes, "{log}");
        assert!(
            v.summary.contains(cause) || v.evidence.to_string().contains(cause),
            "{log}"
        );
        assert_eq!(v.evidence["lines"].as_array().unwrap().len(), 2, "{log}");
    }
}

#[test]
fn an_unreadable_log_is_inconclusive_with_the_reason() {
    let why = "the kernel log cannot be read: /dev/kmsg: Operation not permitted (os error 1)";
    let f = unreadable(why);
    for v in [
        tsc_marked_unstable(&f, Some("kvm-clock"), &[]),
        clocksource_switched(&f, Some("kvm-clock"), &[]),
    ] {
        assert_eq!(v.state, VerdictState::Inconclusive);
        assert_eq!(v.inconclusive_reason.as_deref(), Some(why));
    }
    // Even with the TSC current, an unread log is never a "no".
    let v = tsc_marked_unstable(&f, Some("tsc"), &[]);
    assert_eq!(v.state, VerdictState::Inconclusive);
}

#[test]
fn a_wrapped_log_decides_only_what_the_current_clocksource_proves() {
    let mut f = forensics("this-host-kvm.kmsg", "", &[]);
    if let Some(l) = f.log.as_mut() {
        l.from_boot = false;
    }
    let cs = av(&["tsc", "kvm-clock"]);
    assert_eq!(
        tsc_marked_unstable(&f, Some("tsc"), &cs).state,
        VerdictState::No
    );
    let v = tsc_marked_unstable(&f, Some("kvm-clock"), &cs);
    assert_eq!(v.state, VerdictState::Inconclusive);
    assert!(
        v.summary.contains("oldest record at 0.0 s"),
        "{}",
        v.summary
    );
}
