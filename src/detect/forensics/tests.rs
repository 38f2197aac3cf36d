use super::fixture::{forensics, text};
use super::*;

fn kinds(name: &str) -> Vec<(EventKind, Option<String>)> {
    LogSummary::of_text("t", text(name))
        .events
        .into_iter()
        .map(|e| (e.kind, e.clocksource))
        .collect()
}

fn cs(s: &str) -> Option<String> {
    Some(s.to_string())
}

#[test]
fn finds_the_boot_selection_on_this_host() {
    let log = LogSummary::of_text("t", text("this-host-kvm.kmsg"));
    assert!(log.from_boot);
    assert_eq!(log.first_record_s, Some(0.0));
    assert_eq!(
        kinds("this-host-kvm.kmsg"),
        [
            (EventKind::Switch, cs("kvm-clock")),
            (EventKind::Switch, cs("tsc"))
        ]
    );
    assert_eq!(log.events[1].time_s, Some(0.365702));
    assert_eq!(
        log.events[1].line,
        "clocksource: Switched to clocksource tsc"
    );
}

#[test]
fn finds_a_watchdog_skew_and_the_switch_it_caused() {
    assert_eq!(
        kinds("watchdog-skew-acpi_pm.log"),
        [
            (EventKind::WatchdogSkew, cs("tsc")),
            (EventKind::TscUnstable, cs("tsc")),
            (EventKind::Switch, cs("acpi_pm")),
        ]
    );
    let log = LogSummary::of_text("t", text("watchdog-skew-acpi_pm.log"));
    assert!(!log.from_boot);
    assert_eq!(log.first_record_s, Some(3007.005852));
}

#[test]
fn finds_read_back_delays_sync_warps_and_old_wordings() {
    assert_eq!(
        kinds("read-back-delay.log"),
        [
            (EventKind::ReadBackDelay, cs("tsc")),
            (EventKind::TscUnstable, cs("tsc")),
        ]
    );
    assert_eq!(
        kinds("tsc-sync-warp.log"),
        [
            (EventKind::TscWarp, cs("tsc")),
            (EventKind::TscUnstable, cs("tsc")),
        ]
    );
    let old = "[    0.4] Clocksource tsc unstable (delta = -117440512 ns)\n\
               [    0.5] Switching to clocksource hpet\n\
               [    0.6] clocksource: timekeeping watchdog on CPU13: wd-tsc-wd read-back delay \
               1000614ns, attempt 3, marking unstable\n\
               [    0.7] clocksource: timekeeping watchdog on CPU1: hpet wd-wd read-back delay of \
               93000ns\n\
               [    0.8] clocksource: wd-tsc-wd read-back delay of 211000ns, clock-skew test \
               skipped!\n\
               [    0.9] clocksource: Long readout interval, skipping watchdog check: cs_nsec: 1 \
               wd_nsec: 2\n";
    let e: Vec<(EventKind, Option<String>)> = LogSummary::of_text("t", old)
        .events
        .into_iter()
        .map(|e| (e.kind, e.clocksource))
        .collect();
    assert_eq!(
        e,
        [
            (EventKind::WatchdogSkew, cs("tsc")),
            (EventKind::Switch, cs("hpet")),
            (EventKind::ReadBackDelay, cs("tsc")),
            (EventKind::WatchdogSkipped, None),
            (EventKind::WatchdogSkipped, cs("tsc")),
            (EventKind::WatchdogSkipped, None),
        ]
    );
}

#[test]
fn reads_the_boot_options_up_to_the_init_arguments() {
    let o = boot_options("console=ttyS0 tsc=reliable clocksource=hpet quiet -- tsc=unstable");
    assert_eq!(o.tsc, ["reliable"]);
    assert_eq!(o.clocksource.as_deref(), Some("hpet"));
    assert!(!o.notsc);
    assert_eq!(o.effects.len(), 2);
    assert!(o.effects[0].starts_with("tsc=reliable"));
    assert!(o.effects[1].starts_with("clocksource=hpet"));
    let o = boot_options("tsc=nowatchdog tsc=unstable notsc tsc=bogus");
    assert_eq!(o.tsc, ["nowatchdog", "unstable", "bogus"]);
    assert!(o.notsc);
    assert_eq!(o.effects.len(), 3);
    assert_eq!(boot_options(""), BootOptions::default());
}

#[test]
fn the_exemption_needs_all_three_flags_and_at_most_four_packages() {
    let flags = |f: &[&str]| f.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let none = BootOptions::default();
    let all = flags(&["tsc", "constant_tsc", "nonstop_tsc", "tsc_adjust"]);
    let e = exemption(&all, Some(4), &none);
    assert!(e.meets && !e.watchdog_checks_tsc);
    assert!(!exemption(&all, Some(8), &none).meets);
    assert!(!exemption(&all, None, &none).meets);
    let no_adjust = flags(&["constant_tsc", "nonstop_tsc"]);
    let e = exemption(&no_adjust, Some(1), &none);
    assert!(!e.meets && e.watchdog_checks_tsc);
    // tsc=reliable, tsc=nowatchdog and the tsc_reliable flag also keep the watchdog off the TSC.
    assert!(!exemption(&no_adjust, Some(1), &boot_options("tsc=reliable")).watchdog_checks_tsc);
    assert!(!exemption(&no_adjust, Some(1), &boot_options("tsc=nowatchdog")).watchdog_checks_tsc);
    assert!(!exemption(&flags(&["tsc_reliable"]), Some(1), &none).watchdog_checks_tsc);
}

#[test]
fn fixtures_carry_the_flags_and_cmdline() {
    let f = forensics(
        "this-host-kvm.kmsg",
        "console=ttyS0 quiet",
        &["constant_tsc", "nonstop_tsc", "tsc_adjust"],
    );
    assert!(f.watchdog_exemption.meets);
    assert_eq!(f.log.unwrap().records, 10);
}

#[test]
fn lines_a_process_wrote_are_never_evidence() {
    // Two lines `echo … > /dev/kmsg` wrote as root: facility 1 (user), one ending in ESC[2J.
    let log = LogSummary::of_text("t", text("forged-user-lines.kmsg"));
    assert_eq!(
        kinds("forged-user-lines.kmsg"),
        [
            (EventKind::Switch, cs("kvm-clock")),
            (EventKind::Switch, cs("tsc"))
        ]
    );
    assert_eq!(log.ignored.len(), 2, "{:?}", log.ignored);
    assert!(log.ignored.iter().all(|i| i.why.contains("facility 1")));
    assert!(log.ignored[0].line.contains("Marking TSC unstable"));
    // A kernel-facility line naming a clocksource the kernel does not register is refused too,
    // its name shown escaped.
    let odd = LogSummary::of_text(
        "t",
        "6,9,9,-;clocksource: Switched to clocksource hp\u{1b}et\n",
    );
    assert!(odd.events.is_empty());
    assert!(
        odd.ignored[0].why.contains("does not register"),
        "{:?}",
        odd.ignored
    );
    assert!(!odd.ignored[0].why.contains('\u{1b}'));
    // The verdicts: the TSC stays stable and no demotion, and both say what they ignored.
    let f = forensics("forged-user-lines.kmsg", "", &[]);
    let v = crate::detect::verdict::tsc_marked_unstable(&f, Some("tsc"), &[]);
    assert!(!v.holds, "{}", v.summary);
    assert_eq!(v.evidence["log"]["ignored"].as_array().unwrap().len(), 2);
    let s = crate::detect::verdict::clocksource_switched(&f, Some("tsc"), &[]);
    assert!(!s.holds, "{}", s.summary);
}
