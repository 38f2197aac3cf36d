//! The traced pass's parsing and summary, on trace text recorded in a 7.2.13 (Debian sid
//! cloud) guest under TCG, `trace_clock` x86-tsc: the header, the syscalls around enabling the
//! events, and the first two vfsmix iterations (tests/data/vm-trace/).

use super::*;

const EXT4: &str = include_str!("../../../../tests/data/vm-trace/7.2-ext4-vfsmix.txt");
const TMPFS: &str = include_str!("../../../../tests/data/vm-trace/7.2-tmpfs-vfsmix.txt");

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn the_recorded_trace_gives_each_syscall_of_the_guest_with_its_clock_reads() {
    let s = parse_trace(EXT4, 1).unwrap();
    let nrs: Vec<u64> = s.iter().map(|c| c.nr).collect();
    let iteration = [257, 262, 8, 3, 257, 1, 9, 11, 3, 87];
    // The enable write (its sys_enter came before sys_exit was on), the close of that file,
    // then two iterations; the close and the openat whose exits were not traced are left out.
    assert_eq!(&nrs[..2], &[1, 3]);
    assert_eq!(&nrs[2..12], &iteration);
    assert_eq!(&nrs[12..], &iteration);
    // The first create: entered at 20551233790, left at 20552904788, two coarse reads (the new
    // inode's ctime, then the directory's).
    assert_eq!(s[2].enter, 20_551_233_790.0);
    assert_eq!(s[2].exit, 20_552_904_788.0);
    assert_eq!(s[2].reads, vec![20_552_079_138.0, 20_552_502_106.0]);
    // The O_TRUNC open: coarse + fine (current_time), coarse + fine _mg and coarse
    // (inode_set_ctime_current twice); context probes (current_time, …) are not reads.
    assert_eq!(s[6].reads.len(), 5);
    assert!(s.iter().all(|c| c.exit >= c.enter));
    // Another task's view of the same text is empty.
    assert!(parse_trace(EXT4, 2).unwrap().is_empty());
}

#[test]
fn a_buffer_that_dropped_events_reports_nothing() {
    let dropped = EXT4.replace("9580/9580", "9000/9580");
    let e = parse_trace(&dropped, 1).unwrap_err();
    assert!(format!("{e:#}").contains("dropped 580 of 9580"), "{e:#}");
    let garbled = EXT4.replace("9580/9580", "9580/x");
    assert!(parse_trace(&garbled, 1).is_err());
}

#[test]
fn an_unreadable_line_is_an_error_naming_it() {
    let text = format!("{EXT4}this is no trace line\n");
    let e = parse_trace(&text, 1).unwrap_err();
    assert!(format!("{e:#}").contains("trace line 121"), "{e:#}");
}

#[test]
fn the_summary_places_each_positions_reads_in_its_syscall() {
    let o = summarise(WorkloadName::Vfsmix, &parse_trace(EXT4, 1).unwrap());
    assert_eq!(o.iterations, 2);
    assert_eq!(o.first.len(), 11);
    // Values from the recorded timestamps (first read's fraction, mean over the two
    // iterations): create 0.478, O_TRUNC 0.234, write 0.163, mmap 0.444, unlink 0.420.
    assert!(close(o.first[0], 0.478_397_172_747_240_03));
    // Each stamp's coarse read: the new inode's at 0.478, the directory's at 0.722.
    assert_eq!(o.stamps[0].len(), 2);
    assert!(close(Some(o.stamps[0][0]), 0.478_397_172_747_240_03));
    assert!(close(o.first[4], 0.234_304_296_295_124_1));
    // O_TRUNC: notify_change()'s current_time(), then two inode_set_ctime_current().
    assert_eq!(o.stamps[4].len(), 3);
    assert!(
        o.stamps[4].windows(2).all(|w| w[0] < w[1]),
        "{:?}",
        o.stamps[4]
    );
    assert!(close(o.first[5], 0.163_107_609_176_642_94));
    assert!(close(o.first[10], 0.420_113_791_538_361_37));
    // stat, lseek, the first close and munmap read no clock; the store is no syscall.
    for p in [1, 2, 3, 8, 9] {
        assert_eq!(o.first[p], None, "{p}");
        assert_eq!(o.reads[p], Some(0.0), "{p}");
    }
    assert_eq!((o.first[7], o.reads[7]), (None, None));
    assert_eq!(o.reads[0], Some(2.0));
    assert_eq!(o.reads[4], Some(5.0));
    // tmpfs: the O_TRUNC's reads come late (after vfs_open), 0.620 on average.
    let t = summarise(WorkloadName::Vfsmix, &parse_trace(TMPFS, 1).unwrap());
    assert_eq!(t.iterations, 2);
    assert!(close(t.first[4], 0.620_313_413_819_402_9));
    assert_eq!(t.reads[4], Some(4.0));
}

#[test]
fn a_trace_without_the_loop_or_a_workload_without_positions_summarises_to_nothing() {
    let s = parse_trace(EXT4, 1).unwrap();
    // pipe1's write/read pairs are not in a vfsmix trace.
    let o = summarise(WorkloadName::Pipe1, &s);
    assert_eq!(o.iterations, 0);
    assert_eq!(o.first, vec![None, None]);
    assert_eq!(
        by_position(&o.first, o.iterations),
        Vec::<Option<f64>>::new()
    );
    let p = summarise(WorkloadName::Pingpong, &s);
    assert!(p.first.is_empty() && p.iterations == 0);
    assert_eq!(summarise(WorkloadName::Vfsmix, &[]).iterations, 0);
}
