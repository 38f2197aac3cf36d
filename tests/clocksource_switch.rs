//! The clocksource switched live, tsc → kvm-clock within one boot, and compare's words on two
//! plain probes: where the switch costs the TSC reads +10% or more (what compare promises to
//! catch), every vDSO clock read over the TSC, and `std:instant`/`std:systemtime` over them,
//! "slower" with one word for their path, and `rdtsc`, `rdtscp` and `syscall:getppid` "no
//! change"; whatever it costs, no TSC read "faster" and the clocksource the one machine
//! difference. Root on a KVM guest only (`kvm-clocksource-switch`); the original clocksource
//! is put back whatever happens, a panic included.

use std::path::Path;

use crate::common::tscope;
use crate::skip;

const CURRENT: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// The least change compare promises to call, on a source whose noise is below 3%.
const SENSITIVE: f64 = 1.10;

fn current() -> String {
    std::fs::read_to_string(CURRENT)
        .unwrap_or_else(|e| panic!("reading {CURRENT}: {e}"))
        .trim()
        .to_string()
}

/// Switches to `name` and checks that the kernel took it.
fn switch(name: &str) {
    std::fs::write(CURRENT, name).unwrap_or_else(|e| panic!("writing {name} to {CURRENT}: {e}"));
    assert_eq!(
        current(),
        name,
        "the kernel did not take clocksource {name}"
    );
    // Let the timekeeping core and the vDSO data settle on it.
    std::thread::sleep(std::time::Duration::from_millis(500));
}

/// Puts the clocksource found at creation back when dropped: at the end, and on a panic.
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(CURRENT, &self.0) {
            eprintln!(
                "could not put clocksource {} back in {CURRENT}: {e}",
                self.0
            );
        }
    }
}

fn probe(out: &Path) {
    tscope()
        .args(["probe", "--json", "-o"])
        .arg(out)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
}

/// What one round (a probe under tsc, then one under kvm-clock) says, or why it does not
/// show the switch as it is: the first row whose word is not the expected one.
fn round(dir: &Path, n: usize) -> Result<(), String> {
    let (before, after) = (
        dir.join(format!("tsc-{n}.json")),
        dir.join(format!("kvm-clock-{n}.json")),
    );
    {
        let _restore = Restore(current());
        switch("tsc");
        probe(&before);
        switch("kvm-clock");
        probe(&after);
    }
    let c = crate::common::json(&[
        "compare",
        before.to_str().unwrap(),
        after.to_str().unwrap(),
        "--json",
    ]);
    let row = |id: &str| crate::common::source_row(&c, id).clone();
    // What holds whatever the switch costs on this host: no TSC read is called faster, and
    // the clocksource is the one machine difference named.
    for id in crate::common::TSC_READS {
        let r = row(id);
        assert_ne!(r["change"][0], "faster", "{id}: {r}");
    }
    assert!(c["machine_differences"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["field"] == "clocksource"));
    // How much the switch costs here, measured: the TSC reads' median ratio. compare promises
    // to catch +10% of a source whose noise is below 3%; kvm-clock's read costs the host's
    // pvclock page more, from about +4% to +15% on the hosts this ran on. Under +10% the
    // words are not promised, and the round says so rather than judge them.
    let mut ratios: Vec<f64> = crate::common::TSC_READS
        .iter()
        .map(|id| row(id)["ratio_interval"][0]["point"].as_f64().unwrap())
        .collect();
    ratios.sort_by(f64::total_cmp);
    let switch = ratios[ratios.len() / 2];
    if switch < SENSITIVE {
        eprintln!(
            "round {n}: the switch costs ×{switch:.3} on this host, under compare's promised \
             ×{SENSITIVE}: its words are not judged"
        );
        return Ok(());
    }
    for id in crate::common::TSC_READS {
        let r = row(id);
        if r["change"][0] != "slower" || r["path_word"][0] != true {
            return Err(format!("{id} is not slower with its path's word: {r}"));
        }
    }
    for id in ["rdtsc", "rdtscp", "syscall:getppid"] {
        let r = row(id);
        if r["change"][0] != "no_change" {
            return Err(format!("{id} moved: {r}"));
        }
    }
    // The group's shape: the 8 vDSO reads over the TSC, one path, slower.
    let vdso = crate::common::paths_with(&c, "vdso:realtime");
    assert_eq!(vdso.len(), 1, "{}", c["paths"]);
    assert_eq!(vdso[0]["change"], "slower");
    assert_eq!(
        vdso[0]["members"].as_array().unwrap().len(),
        8,
        "{}",
        vdso[0]
    );
    Ok(())
}

/// Another job on the machine can move a control row between two plain probes (that is what
/// compare's prior allows for, 3% a source, not a promise). So the test takes rounds until one
/// shows the switch as it is, and fails only when none of them does: a compare that calls
/// rdtsc slower on every round, or misses the vDSO's path, fails every round.
#[test]
fn a_live_switch_to_kvm_clock_is_slower_on_the_tsc_reads_with_one_word() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("kvm-clocksource-switch") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    const ROUNDS: usize = 4;
    let mut why = Vec::new();
    for n in 1..=ROUNDS {
        match round(dir.path(), n) {
            Ok(()) => return,
            Err(e) => {
                eprintln!("round {n}: {e}");
                why.push(e);
            }
        }
    }
    panic!(
        "no round of {ROUNDS} showed the switch as it is:\n{}",
        why.join("\n")
    );
}
