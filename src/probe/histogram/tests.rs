//! The pg_test_timing layout on fixed counts (the loop itself is run by the integration tests).

use super::*;

fn counts(pairs: &[(u64, u64)]) -> BTreeMap<u64, u64> {
    pairs.iter().copied().collect()
}

#[test]
fn buckets_are_shifted_log2_from_zero() {
    // 0 → bucket 0; 1 → ≤1; 2..3 → ≤3; 8 and 15 → ≤15; 16 → ≤31.
    let c = counts(&[(0, 2), (1, 1), (3, 4), (8, 10), (15, 2), (16, 1)]);
    let (b, _, _) = summarise(&c, 99.99);
    let le: Vec<u64> = b.iter().map(|b| b.le_ns).collect();
    assert_eq!(le, [0, 1, 3, 7, 15, 31]);
    let n: Vec<u64> = b.iter().map(|b| b.count).collect();
    assert_eq!(n, [2, 1, 4, 0, 12, 1]);
    assert_eq!(n.iter().sum::<u64>(), 20);
    let pct: f64 = b.iter().map(|b| b.percent).sum();
    assert!((pct - 100.0).abs() < 1e-9, "{pct}");
    assert!((b.last().unwrap().running_percent - 100.0).abs() < 1e-9);
}

#[test]
fn observed_stops_at_the_cutoff_and_the_largest_is_kept() {
    // 9 990 deltas of 20 ns, 9 of 21 ns, one of 5 000 ns: 99.9% at 20, 99.99% at 21.
    let c = counts(&[(20, 9_990), (21, 9), (5_000, 1)]);
    let (_, obs, largest) = summarise(&c, 99.99);
    assert_eq!(obs.iter().map(|o| o.ns).collect::<Vec<_>>(), [20, 21]);
    assert!((obs[1].running_percent - 99.99).abs() < 1e-9);
    let largest = largest.unwrap();
    assert_eq!((largest.ns, largest.count), (5_000, 1));
    assert_eq!(largest.running_percent, 100.0);
    // A cutoff of 100 lists everything; the largest is then the list's last.
    let (_, all, _) = summarise(&c, 100.0);
    assert_eq!(all.len(), 3);
}

#[test]
fn empty_counts_give_empty_tables() {
    let (b, o, l) = summarise(&BTreeMap::new(), 99.99);
    assert!(b.is_empty() && o.is_empty() && l.is_none());
}

#[test]
fn sources_that_read_no_time_are_refused() {
    for s in [Source::Cpuid, Source::Rdpid, Source::SyscallGetppid] {
        let e = HistogramConfig::new(s).unwrap_err().to_string();
        assert!(e.contains("reads no time"), "{e}");
    }
    assert!(HistogramConfig::new(Source::Rdtsc).is_ok());
}
