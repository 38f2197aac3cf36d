//! The kprobe plumbing on text recorded from real guests (`tscope vm count --iterations 2000
//! --workload pipe1,write-stat`, TCG): Debian's 6.1.0-57-cloud-amd64 and sid's
//! 7.2.13+deb14-cloud-amd64, as each guest read `kprobe_profile` and the syscall histogram at
//! the end of the run.

use super::*;

/// 6.1.0-57-cloud-amd64: `inode_needs_update_time` exists only as its `.part.0` copy.
const PROFILE_6_1: &str = r#"  tscope_current_time                                     6024               0
  tscope_file_update_time                                 4000               0
  tscope_inode_needs_update_time_part_0                   4000               0
  tscope_inode_set_ctime_current                             0               0
  tscope_ktime_get_coarse_real_ts64                       6024               0
  tscope_ktime_get_real_ts64                                 0               0
  tscope_touch_atime                                      2000               0
"#;

/// 7.2.13+deb14-cloud-amd64: the multigrain clock functions; `inode_needs_update_time` inlined.
const PROFILE_7_2: &str = r#"  tscope_current_time                                     2001               0
  tscope_file_update_time                                 2000               0
  tscope_inode_set_ctime_current                          2018               0
  tscope_ktime_get_coarse_real_ts64                          0               0
  tscope_ktime_get_coarse_real_ts64_mg                    4019               0
  tscope_ktime_get_real_ts64                              1999               0
  tscope_ktime_get_real_ts64_mg                           2000               0
  tscope_touch_atime                                         0               0
"#;

const HIST_6_1: &str = r#"# event histogram
#
# trigger info: hist:keys=id:vals=hitcount:sort=hitcount:size=256 [active]
#

{ id:        165 } hitcount:          1
{ id:         11 } hitcount:          1
{ id:        293 } hitcount:          2
{ id:         87 } hitcount:          2
{ id:         83 } hitcount:          3
{ id:        332 } hitcount:         14
{ id:        257 } hitcount:         16
{ id:          3 } hitcount:         20
{ id:         18 } hitcount:       2000
{ id:        262 } hitcount:       2000
{ id:          1 } hitcount:       2000
{ id:          0 } hitcount:       2087

Totals:
    Hits: 8146
    Entries: 12
    Dropped: 0
"#;

#[test]
fn parses_recorded_kprobe_profiles() {
    let p = parse_profile(PROFILE_6_1).unwrap();
    assert_eq!(p.len(), 7);
    assert_eq!(p["tscope_ktime_get_coarse_real_ts64"], 6024);
    assert_eq!(p["tscope_inode_needs_update_time_part_0"], 4000);
    assert_eq!(p["tscope_inode_set_ctime_current"], 0);
    let p = parse_profile(PROFILE_7_2).unwrap();
    assert_eq!(p["tscope_ktime_get_coarse_real_ts64_mg"], 4019);
    assert_eq!(p["tscope_ktime_get_real_ts64_mg"], 2000);
    assert!(!p.contains_key("tscope_inode_needs_update_time"));
}

#[test]
fn a_malformed_profile_line_is_named() {
    let e = parse_profile("  tscope_a 1 0\n  tscope_b lots 0\n").unwrap_err();
    assert!(e.to_string().contains("line 2"), "{e}");
    let e = parse_profile("tscope_a 1\n").unwrap_err();
    assert!(e.to_string().contains("line 1"), "{e}");
    assert!(parse_profile("").unwrap().is_empty());
}

#[test]
fn copies_are_summed_into_their_function() {
    let probes = vec![
        Probe {
            function: "inode_needs_update_time".into(),
            symbol: "inode_needs_update_time.part.0".into(),
        },
        Probe {
            function: "touch_atime".into(),
            symbol: "touch_atime".into(),
        },
    ];
    let by_fn = hits_by_function(&probes, &parse_profile(PROFILE_6_1).unwrap());
    assert_eq!(by_fn["inode_needs_update_time"], 4000);
    assert_eq!(by_fn["touch_atime"], 2000);
    assert_eq!(by_fn.len(), 2);
}

#[test]
fn parses_a_recorded_syscall_histogram() {
    let h = parse_syscall_hist(HIST_6_1).unwrap();
    assert_eq!(h[&18], 2000); // pwrite64
    assert_eq!(h[&262], 2000); // newfstatat
    assert_eq!(h[&0], 2087); // read
    assert_eq!(h.len(), 12);
    assert_eq!(syscall_name(262), "newfstatat");
    assert_eq!(syscall_name(999), "syscall_999");
    assert!(parse_syscall_hist("{ nothing here }").is_err());
}

#[test]
fn resolves_functions_and_their_compiler_copies_from_kallsyms() {
    // Lines in /proc/kallsyms's format: address, type, name, optional [module].
    let kallsyms = "\
ffffffff8112a0b0 T ktime_get_coarse_real_ts64
ffffffff8112a0f0 T ktime_get_coarse_real_ts64_mg
ffffffff81345670 t inode_needs_update_time.part.0
ffffffff81345700 t file_update_time.cold
ffffffff81345780 T file_update_time
ffffffff81345800 t touch_atime.isra.0
ffffffff81345900 T touch_atimes_other
ffffffff82000000 d current_time
ffffffffc0001000 t current_time [ext4]
";
    let got: Vec<(String, String)> = resolve(kallsyms, &FUNCTIONS)
        .into_iter()
        .map(|p| (p.function, p.symbol))
        .collect();
    let want = [
        ("current_time", "current_time"),
        ("file_update_time", "file_update_time"),
        ("inode_needs_update_time", "inode_needs_update_time.part.0"),
        ("ktime_get_coarse_real_ts64", "ktime_get_coarse_real_ts64"),
        (
            "ktime_get_coarse_real_ts64_mg",
            "ktime_get_coarse_real_ts64_mg",
        ),
        ("touch_atime", "touch_atime.isra.0"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn event_names_are_identifiers_and_definitions_name_the_symbol() {
    let p = Probe {
        function: "inode_needs_update_time".into(),
        symbol: "inode_needs_update_time.part.0".into(),
    };
    assert_eq!(p.event(), "tscope_inode_needs_update_time_part_0");
    assert_eq!(
        p.definition(),
        "p:kprobes/tscope_inode_needs_update_time_part_0 inode_needs_update_time.part.0"
    );
    assert!(is_clock_read("ktime_get_real_ts64_mg"));
    assert!(!is_clock_read("current_time"));
}
