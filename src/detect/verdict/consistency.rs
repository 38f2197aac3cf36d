//! `vdso_inconsistent`: vDSO and syscall reads of one clock, interleaved across CPU
//! migrations ([`crate::detect::interleave`]), went backwards against each other.

use serde_json::json;

use super::Verdict;
use crate::detect::interleave::InterleaveResult;

/// `vdso_inconsistent`: holds when any later read was below the read before it.
pub fn vdso_inconsistent(r: &InterleaveResult) -> Verdict {
    let compared: u64 = r.clocks.iter().map(|c| c.reads_compared).sum();
    let inversions: u64 = r.clocks.iter().map(|c| c.inversions).sum();
    let worst = r.clocks.iter().filter_map(|c| c.worst_step_ns).min();
    let evidence = json!({
        "clocks": r.clocks,
        "cpus": r.cpus,
        "migrations": r.migrations,
        "pin_error": r.pin_error,
        "reads_compared": compared,
        "inversions": inversions,
        "worst_step_ns": worst,
        "rule": "holds when, reading each clock through the vDSO and the raw syscall \
                 alternately while the thread moves between CPUs, any read is below the read \
                 before it (vdsotest verify); worst_step_ns is the smallest later-minus-earlier \
                 difference",
    });
    let bad: Vec<String> = r
        .clocks
        .iter()
        .filter(|c| c.inversions > 0)
        .map(|c| {
            format!(
                "{} ({} of {}, worst {} ns)",
                c.clock,
                c.inversions,
                c.reads_compared,
                c.worst_step_ns.unwrap_or(0)
            )
        })
        .collect();
    if !bad.is_empty() {
        return Verdict::decided(
            true,
            evidence,
            format!(
                "vDSO and syscall reads went backwards against each other: {}",
                bad.join(", ")
            ),
        );
    }
    if compared == 0 {
        let why = r
            .clocks
            .iter()
            .find_map(|c| c.error.clone())
            .unwrap_or_else(|| "no clock was read".into());
        return Verdict::inconclusive(format!("no reads were compared: {why}"), evidence);
    }
    if r.cpus.len() > 1 && r.migrations == 0 {
        return Verdict::inconclusive(
            format!(
                "the thread could not be moved between CPUs {:?}{}: only one CPU's reads were \
                 compared",
                r.cpus,
                r.pin_error
                    .as_ref()
                    .map_or(String::new(), |e| format!(" ({e})"))
            ),
            evidence,
        );
    }
    let across = if r.cpus.len() > 1 {
        format!(
            "across {} migrations between CPUs {:?}",
            r.migrations, r.cpus
        )
    } else {
        "on the one CPU this process may use".to_string()
    };
    Verdict::decided(
        false,
        evidence,
        format!(
            "{compared} successive reads of {} clocks, vDSO and syscall alternating {across}: \
             never backwards (smallest step {} ns)",
            r.clocks.iter().filter(|c| c.reads_compared > 0).count(),
            worst.unwrap_or(0)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::interleave::{compare, ClockOrder};
    use crate::detect::verdict::VerdictState;

    fn clock(name: &str, steps: &[(u64, u64)]) -> ClockOrder {
        let mut o = ClockOrder {
            clock: name.into(),
            ..ClockOrder::default()
        };
        for &(a, b) in steps {
            compare(&mut o, a, b);
        }
        o
    }

    fn result(clocks: Vec<ClockOrder>, cpus: Vec<usize>, migrations: u64) -> InterleaveResult {
        InterleaveResult {
            clocks,
            cpus,
            migrations,
            pin_error: None,
        }
    }

    #[test]
    fn a_backwards_read_holds_with_the_worst_step() {
        let r = result(
            vec![
                clock("monotonic", &[(100, 120), (120, 90), (90, 95)]),
                clock("realtime", &[(5, 6)]),
            ],
            vec![0, 1],
            63,
        );
        let v = vdso_inconsistent(&r);
        assert_eq!(v.state, VerdictState::Yes);
        assert!(
            v.summary.contains("monotonic (1 of 3, worst -30 ns)"),
            "{}",
            v.summary
        );
        assert_eq!(v.evidence["inversions"], 1);
        assert_eq!(v.evidence["worst_step_ns"], -30);
        assert_eq!(v.evidence["reads_compared"], 4);
    }

    #[test]
    fn ordered_reads_across_migrations_are_a_no() {
        let r = result(vec![clock("monotonic", &[(1, 2), (2, 2)])], vec![0, 1], 10);
        let v = vdso_inconsistent(&r);
        assert_eq!(v.state, VerdictState::No);
        assert!(v.summary.contains("across 10 migrations"), "{}", v.summary);
        assert!(v.summary.contains("smallest step 0 ns"), "{}", v.summary);
        // One allowed CPU: no migration is possible, and the answer stands.
        let one = result(vec![clock("monotonic", &[(1, 2)])], vec![0], 0);
        assert_eq!(vdso_inconsistent(&one).state, VerdictState::No);
    }

    #[test]
    fn no_migration_or_no_reads_is_inconclusive() {
        let mut r = result(vec![clock("monotonic", &[(1, 2)])], vec![0, 1], 0);
        r.pin_error = Some("sched_setaffinity to CPU 1: EPERM".into());
        let v = vdso_inconsistent(&r);
        assert_eq!(v.state, VerdictState::Inconclusive);
        assert!(v.summary.contains("EPERM"), "{}", v.summary);
        let mut c = clock("monotonic", &[]);
        c.error = Some("Invalid argument".into());
        let v = vdso_inconsistent(&result(vec![c], vec![0], 0));
        assert_eq!(v.state, VerdictState::Inconclusive);
        assert!(v.summary.contains("Invalid argument"), "{}", v.summary);
    }
}
