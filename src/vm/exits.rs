//! `tscope vm exits`: what each kind of VM exit costs, timed by the guest itself.
//!
//! The micro-VM ([`crate::sys::kvm`]) runs each instruction `iterations` times between two
//! guest `rdtsc`; the empty loop (`nop`) is subtracted, so a figure is the cost of one
//! instruction *including* its exit and re-entry: for `cpuid` a round trip into the host
//! kernel's KVM, for port I/O, MMIO and `hlt` a round trip out to this process (KVM_RUN returns
//! and is called again). A kind's figure is its fastest run less the empty loop's fastest run
//! (interference only adds ticks, so the minima track the undisturbed costs). A kind whose
//! difference is not above 0 gets more runs (up to
//! `MAX_RUNS`); if it stays there the measurement failed: the kind carries an error, never a
//! clamped 0. Ticks become ns with the TSC rate calibrated here (the guest's TSC runs at the
//! host's rate unless TSC scaling is on).

use std::time::{Duration, Instant};

use crate::error::Result;
use crate::fail as bail;
use serde::{Deserialize, Serialize};

/// The version of the `vm exits` JSON this build writes.
pub const VM_EXITS_SCHEMA_VERSION: u32 = 1;

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
/// How many times the payload is run; the fastest run per kind is kept.
const RUNS: usize = 5;

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
/// The most runs made while some kind's difference is not above 0.
const MAX_RUNS: usize = 25;

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
/// An iteration of `nop; nop; dec; jnz` takes a few cycles on hardware; far more means the
/// guest is not executing natively.
const EMULATED_LOOP_TICKS: f64 = 100.0;

/// Everything `vm exits` measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Exits {
    pub schema_version: u32,
    pub tool: String,
    /// The module behind /dev/kvm: `kvm_intel`, `kvm_amd`, `kvm_pvm`, or null if unknown.
    pub kvm_module: Option<String>,
    /// What that means for the figures.
    pub backend: String,
    pub iterations: u32,
    pub runs: usize,
    pub tsc_hz: f64,
    /// Ticks of one empty loop iteration (subtracted from every kind).
    pub loop_ticks: f64,
    pub kinds: Vec<ExitKind>,
    pub wall_s: f64,
}

/// One timed instruction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExitKind {
    /// `rdtsc`, `rdtscp`, `cpuid`, `pio_out`, `mmio_write`, `hlt`.
    pub name: String,
    /// Where the exit is handled: `none`, `kernel` or `user space`.
    pub exits_to: String,
    /// Per instruction, exit included; null when the kind could not run (see `error`).
    pub ticks: Option<f64>,
    pub ns: Option<f64>,
    /// Exits this process saw for the kind over all runs (port I/O, MMIO, hlt: one per
    /// iteration).
    pub user_exits: u64,
    /// Why the kind could not run (e.g. the hypervisor's emulator failed on the instruction).
    pub error: Option<String>,
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn exits_to(kind: &str) -> &'static str {
    match kind {
        "cpuid" => "kernel",
        "pio_out" | "mmio_write" | "hlt" => "user space",
        _ => "none",
    }
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn backend(module: Option<&str>) -> String {
    match module {
        Some("kvm_pvm") => "kvm_pvm: a software hypervisor (PVM), not VMX/SVM: the figures are \
                            its emulation costs"
            .into(),
        Some(m @ ("kvm_intel" | "kvm_amd")) => format!("{m}: hardware virtualisation"),
        Some(m) => format!("{m}: unknown backend"),
        None => "unknown module behind /dev/kvm".into(),
    }
}

/// A kind's cost over the empty loop: the fastest run of the kind less the fastest run of the
/// loop (interference — a preempted vCPU, other guests, a loaded host — only ever adds ticks,
/// so each minimum tracks its undisturbed cost; a median of per-run differences went negative
/// at load 10 on 2 vCPUs), or why there is none: a difference ≤ 0 means the measurement
/// failed, never that the exit is free.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn over_loop(kind_ticks: &[f64], loop_ticks: &[f64]) -> std::result::Result<f64, String> {
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let d = min(kind_ticks) - min(loop_ticks);
    if d.is_finite() && d > 0.0 {
        Ok(d)
    } else {
        Err(format!(
            "measurement failed: {d:.1} ticks per iteration over the empty loop (fastest of {} \
             runs each), not above 0: something else slowed the loop; rerun on a quieter host",
            kind_ticks.len().min(loop_ticks.len())
        ))
    }
}

/// The TSC rate against `CLOCK_MONOTONIC`, over 50 ms.
#[cfg(target_arch = "x86_64")]
fn tsc_hz() -> f64 {
    let (t0, c0) = (Instant::now(), crate::sys::tsc::rdtsc());
    std::thread::sleep(Duration::from_millis(50));
    let (c1, dt) = (crate::sys::tsc::rdtsc(), t0.elapsed());
    c1.wrapping_sub(c0) as f64 / dt.as_secs_f64()
}

/// The payload is x86 real-mode code: elsewhere there is nothing to run.
#[cfg(not(target_arch = "x86_64"))]
pub fn run(_iterations: u32) -> Result<Exits> {
    bail!("vm exits: the micro-VM payload is x86 code; this build is not x86_64")
}

/// Runs the micro-VM and reduces its figures.
#[cfg(target_arch = "x86_64")]
pub fn run(iterations: u32) -> Result<Exits> {
    if !(1..=1_000_000).contains(&iterations) {
        bail!("--iterations must be 1..=1000000, got {iterations}");
    }
    let kvm = crate::detect::host::gather().kvm;
    let module = kvm.module.clone();
    let who = module.as_deref().unwrap_or("unknown module");
    if !kvm.dev_kvm {
        bail!("vm exits: /dev/kvm does not exist (load kvm_intel or kvm_amd)");
    }
    let hz = tsc_hz();
    let started = Instant::now();
    let n = crate::sys::kvm::KINDS.len();
    let mut per_kind: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut errors: Vec<Option<String>> = vec![None; n];
    let mut user = vec![0u64; n];
    // Some kind (without an error) whose difference is not above 0 yet.
    let unsettled = |per_kind: &[Vec<f64>], errors: &[Option<String>]| {
        (1..n).any(|k| errors[k].is_none() && over_loop(&per_kind[k], &per_kind[0]).is_err())
    };
    let mut runs = 0;
    while errors[0].is_none() && (runs < RUNS || (runs < MAX_RUNS && unsettled(&per_kind, &errors)))
    {
        runs += 1;
        let r = crate::sys::kvm::run_payload(iterations, Duration::from_secs(30)).map_err(|e| {
            crate::failure!(
                "vm exits: cannot set up the micro-VM under {who} ({}): {e}",
                backend(module.as_deref())
            )
        })?;
        for (k, t) in r.ticks.into_iter().enumerate() {
            match t {
                Ok(t) => per_kind[k].push(t as f64 / f64::from(iterations)),
                Err(e) => errors[k] = Some(e),
            }
            user[k] += r.user_exits[k];
        }
    }
    if errors[0].is_some() || errors.iter().skip(1).all(Option::is_some) {
        bail!(
            "vm exits: the micro-VM payload does not run under {who} ({}): {}",
            backend(module.as_deref()),
            errors.iter().flatten().next().map_or("", String::as_str)
        );
    }
    let loop_ticks = per_kind[0].iter().copied().fold(f64::INFINITY, f64::min);
    let mut backend = backend(module.as_deref());
    if loop_ticks > EMULATED_LOOP_TICKS {
        backend += &format!(
            "; the empty loop costs {loop_ticks:.0} ticks per iteration, so every guest \
             instruction is being emulated, not only the exiting ones"
        );
    }
    let kinds = crate::sys::kvm::KINDS
        .iter()
        .enumerate()
        .skip(1)
        .map(|(k, name)| {
            let diff = match &errors[k] {
                Some(e) => Err(e.clone()),
                None => over_loop(&per_kind[k], &per_kind[0]),
            };
            let ticks = diff.as_ref().ok().copied();
            ExitKind {
                name: name.to_string(),
                exits_to: exits_to(name).into(),
                ticks,
                ns: ticks.map(|t| t * 1e9 / hz),
                user_exits: user[k],
                error: diff.err(),
            }
        })
        .collect();
    Ok(Exits {
        schema_version: VM_EXITS_SCHEMA_VERSION,
        tool: format!("tscope {}", env!("CARGO_PKG_VERSION")),
        backend,
        kvm_module: module,
        iterations,
        runs,
        tsc_hz: hz,
        loop_ticks,
        kinds,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::over_loop;

    #[test]
    fn a_difference_not_above_the_loop_is_an_error_never_zero() {
        // The fastest kind run less the fastest loop run: slowed runs drop out.
        let loops = [2577.0, 3959.0, 2560.0];
        assert_eq!(over_loop(&[2843.0, 4230.0, 2830.0], &loops), Ok(270.0));
        for kinds in [[2577.0, 3959.0, 2560.0], [2500.0, 3900.0, 2600.0]] {
            let e = over_loop(&kinds, &loops).unwrap_err();
            assert!(e.starts_with("measurement failed"), "{e}");
        }
        assert!(over_loop(&[], &[]).is_err(), "no runs is no figure");
    }
}
