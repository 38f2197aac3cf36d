//! What `simulate` runs: the validated [`SimulateConfig`] and the parsers of its settings
//! (`KEY=VALUE`, sweeps, published pairs), each range-checked once so the simulator never sees
//! NaN costs, inverted sweep ranges or unknown policies. `commands::simulate` builds one from
//! the command line; `report` and the validations build theirs with [`SimulateConfig::new`].

use std::path::PathBuf;

use crate::error::ConfigError;
use crate::kernel::{Family, ModelId, ModelSpec, Policy};
use crate::price::Term;
use crate::trace::FsKind;

/// A setting `--set`, `--sweep` and the output name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Param {
    PreciseReadNs,
    CoarseReadNs,
    /// One of the price's terms ([`Term::field`] names it).
    Term(Term),
    TickNs,
    BaseNs,
}

impl Param {
    /// Every setting, in the order `--help` and errors list them.
    pub fn all() -> impl Iterator<Item = Param> {
        [Param::PreciseReadNs, Param::CoarseReadNs]
            .into_iter()
            .chain(Term::LISTED.map(Param::Term))
            .chain([Param::TickNs, Param::BaseNs])
    }

    pub fn name(self) -> &'static str {
        match self {
            Param::PreciseReadNs => "precise_read_ns",
            Param::CoarseReadNs => "coarse_read_ns",
            Param::Term(t) => t.field(),
            Param::TickNs => "tick_ns",
            Param::BaseNs => "base_ns",
        }
    }

    fn parse(s: &str) -> Option<Param> {
        Param::all().find(|p| p.name() == s)
    }

    /// The accepted range: anything outside is a typo or an absurdity (a read over a second).
    pub fn range(self) -> (f64, f64) {
        match self {
            Param::PreciseReadNs | Param::CoarseReadNs | Param::Term(_) => (0.0, 1e9),
            Param::TickNs => (1.0, 1e10),
            Param::BaseNs => (0.0, 1e12),
        }
    }

    fn known() -> String {
        Param::all().map(Param::name).collect::<Vec<_>>().join(", ")
    }
}

/// The counter a BSD timecounter reads (its cost comes from the profile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    Rdtscp,
    LfenceRdtsc,
    Rdtsc,
}

impl Counter {
    /// The probe source id.
    pub fn source_id(self) -> &'static str {
        match self {
            Counter::Rdtscp => "rdtscp",
            Counter::LfenceRdtsc => "lfence_rdtsc",
            Counter::Rdtsc => "rdtsc",
        }
    }
}

/// An invalid setting, said in one line.
pub fn bad<T>(msg: String) -> Result<T, ConfigError> {
    Err(ConfigError::Invalid(msg))
}

/// The `--set KEY=VALUE` list, each value range-checked. A key given twice, or a key the
/// `sweep` also varies, is refused (naming the key) rather than resolved silently.
pub fn parse_set(
    list: &[String],
    sweep: Option<&SweepSpec>,
) -> Result<Vec<(Param, f64)>, ConfigError> {
    let mut overrides: Vec<(Param, f64)> = Vec::new();
    for s in list {
        let (k, v) = key_value(s, "--set")?;
        let p = param(k, "--set")?;
        let value = number(p, v, "--set")?;
        if overrides.iter().any(|&(q, _)| q == p) {
            return bad(format!(
                "--set {} is given more than once; give each setting once",
                p.name()
            ));
        }
        if sweep.is_some_and(|sw| sw.param == p) {
            return bad(format!(
                "--set {} and --sweep {} name the same setting; the sweep gives its values, \
                 drop the --set",
                p.name(),
                p.name()
            ));
        }
        overrides.push((p, value));
    }
    Ok(overrides)
}

/// A log-spaced sweep of one setting.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    pub param: Param,
    pub lo: f64,
    pub hi: f64,
    pub points: usize,
}

impl SweepSpec {
    /// The swept values, `lo` and `hi` included, equal steps in log space.
    pub fn values(&self) -> Vec<f64> {
        let (a, b) = (self.lo.ln(), self.hi.ln());
        (0..self.points)
            .map(|i| {
                let v = (a + (b - a) * i as f64 / (self.points - 1) as f64).exp();
                // Round to 4 significant digits so the printed values are the ones used.
                format!("{v:.3e}").parse().unwrap_or(v)
            })
            .collect()
    }
}

/// A published stock/patched pair to back-solve.
#[derive(Debug, Clone, PartialEq)]
pub struct ImpliedSpec {
    pub stock_ops_per_sec: f64,
    pub patched_ops_per_sec: f64,
    pub policy: Option<Policy>,
    pub stock_policy: Option<Policy>,
}

/// The loop a simulation replays.
#[derive(Debug, Clone)]
pub enum LoopSource {
    /// A scenario path or bundled name.
    Scenario(String),
    /// A run record file (`tscope run --record`).
    Run(PathBuf),
    /// A run record already in memory (the report's own workload runs).
    Record(Box<crate::workload::run_record::RunRecord>),
    /// A scenario built in memory (the report's write-stat on each priced filesystem).
    Inline(Box<crate::trace::Scenario>),
}

/// A loop to replay, and for how many iterations.
#[derive(Debug, Clone)]
pub struct Loop {
    pub input: LoopSource,
    /// Iterations to replay; `None`: the scenario's.
    pub iterations: Option<u64>,
}

/// `simulate --strace FILE`: a log streamed through the models once per policy.
#[derive(Debug, Clone)]
pub struct StraceLog {
    pub path: PathBuf,
    /// `--strict`: a malformed line is an error naming its number.
    pub strict: bool,
    /// `--fs`: the filesystem of every regular path, instead of this machine's mounts.
    pub fs: Option<FsKind>,
}

/// `simulate --validate`: a check of the simulator against reality.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The check (the SCENARIO argument names it).
    pub check: String,
    /// Seconds each live run samples.
    pub secs: f64,
    /// Directories the live runs use (default per check).
    pub dirs: Vec<PathBuf>,
    /// Wall-clock seconds the emulation (pipe1, vfsmix) may take before it stops adding rounds.
    pub budget_s: f64,
    /// `update`: strace logs of recorded programs whose file calls are replayed live.
    pub straces: Vec<PathBuf>,
}

/// What a simulation does: one of five modes, each with only the settings it reads.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Every policy of every model on a loop: ops/s and timestamp accuracy.
    Estimate(Loop),
    /// One setting swept over a log-spaced range, and the cost at which a policy stops paying
    /// `break_even` (a speedup, 1.05 for 5%).
    Sweep {
        run: Loop,
        sweep: SweepSpec,
        break_even: f64,
    },
    /// The per-read cost a published stock/patched pair implies.
    Implied { run: Loop, implied: ImpliedSpec },
    /// An strace log, streamed.
    Strace(StraceLog),
    /// A validation.
    Validate(Validation),
}

impl Mode {
    /// The loop this mode replays (estimates, sweeps and back-solves).
    pub fn looped(&self) -> Option<&Loop> {
        match self {
            Mode::Estimate(run) | Mode::Sweep { run, .. } | Mode::Implied { run, .. } => Some(run),
            Mode::Strace(_) | Mode::Validate(_) => None,
        }
    }
}

/// A validated `simulate` configuration: the mode and how reads are priced.
#[derive(Debug, Clone)]
pub struct SimulateConfig {
    pub mode: Mode,
    /// The `--model` arguments; [`crate::sim::resolve_models`] turns them into models once
    /// the profile (whose kernel release a bare `linux` follows) is known.
    pub models: Vec<ModelSpec>,
    pub profile: Option<PathBuf>,
    /// A profile already in memory (the report's own probe); wins over `profile`.
    pub profile_data: Option<crate::probe::Profile>,
    pub counter: Counter,
    pub overrides: Vec<(Param, f64)>,
    /// TSC reads of this process trap (global `--emulate-trap`): recorded in a quick probe.
    pub emulate_trap: bool,
}

/// Every model family, each at its newest version (a bare `linux`: the profile's kernel).
pub fn every_family() -> Vec<ModelSpec> {
    Family::ALL
        .iter()
        .map(|&family| ModelSpec {
            family,
            version: None,
            alias: false,
        })
        .collect()
}

impl SimulateConfig {
    /// `mode` with the command line's defaults: every model, costs from a quick probe taken
    /// now, no what-ifs.
    pub fn of(mode: Mode) -> Self {
        SimulateConfig {
            mode,
            models: every_family(),
            profile: None,
            profile_data: None,
            counter: Counter::Rdtscp,
            overrides: Vec::new(),
            emulate_trap: false,
        }
    }

    /// Estimates of every model on `input`, with the command line's defaults.
    pub fn new(input: LoopSource) -> Self {
        SimulateConfig::of(Mode::Estimate(Loop {
            input,
            iterations: None,
        }))
    }

    /// Every model on `input` priced from `profile` (what `tscope report` runs), optionally as
    /// a sweep of `precise_read_ns` over 10 ns..100 µs.
    pub fn for_report(input: LoopSource, profile: crate::probe::Profile, sweep: bool) -> Self {
        let run = Loop {
            input,
            iterations: None,
        };
        let mode = if sweep {
            Mode::Sweep {
                run,
                sweep: SweepSpec {
                    param: Param::PreciseReadNs,
                    lo: 10.0,
                    hi: 100_000.0,
                    points: 25,
                },
                break_even: 1.05,
            }
        } else {
            Mode::Estimate(run)
        };
        SimulateConfig {
            profile_data: Some(profile),
            ..SimulateConfig::of(mode)
        }
    }

    /// The same, replaying `n` iterations of the loop (a mode without a loop is unchanged).
    pub fn with_iterations(mut self, n: u64) -> Self {
        match &mut self.mode {
            Mode::Estimate(run) | Mode::Sweep { run, .. } | Mode::Implied { run, .. } => {
                run.iterations = Some(n)
            }
            Mode::Strace(_) | Mode::Validate(_) => {}
        }
        self
    }

    /// The `--set` value of `p`, if any.
    pub fn set(&self, p: Param) -> Option<f64> {
        self.overrides
            .iter()
            .rev()
            .find(|(q, _)| *q == p)
            .map(|&(_, v)| v)
    }
}

pub fn number(param: Param, text: &str, flag: &str) -> Result<f64, ConfigError> {
    let v: f64 = match text.trim().parse() {
        Ok(v) => v,
        Err(_) => return bad(format!("{flag} {}: '{text}' is not a number", param.name())),
    };
    let (lo, hi) = param.range();
    if !v.is_finite() || v < lo || v > hi {
        return bad(format!(
            "{flag} {}={text}: must be a finite number in {}..={}",
            param.name(),
            crate::fmt::num(lo),
            crate::fmt::num(hi)
        ));
    }
    Ok(v)
}

pub fn key_value<'a>(s: &'a str, flag: &str) -> Result<(&'a str, &'a str), ConfigError> {
    match s.split_once('=') {
        Some((k, v)) => Ok((k.trim(), v.trim())),
        None => bad(format!("{flag} '{s}': expected KEY=VALUE")),
    }
}

pub fn param(key: &str, flag: &str) -> Result<Param, ConfigError> {
    match Param::parse(key) {
        Some(p) => Ok(p),
        None => bad(format!(
            "{flag}: unknown setting '{key}'; known: {}",
            Param::known()
        )),
    }
}

fn policy(text: &str) -> Result<Policy, ConfigError> {
    match Policy::parse(text) {
        Some(p) => Ok(p),
        None => {
            let all: Vec<String> = ModelId::all_newest()
                .into_iter()
                .flat_map(|m| m.policies())
                .map(|p| p.name())
                .collect();
            bad(format!(
                "--implied: unknown policy '{text}'; known: {}",
                all.join(", ")
            ))
        }
    }
}

pub fn parse_implied(spec: &str) -> Result<ImpliedSpec, ConfigError> {
    let (mut stock, mut patched, mut pol, mut stock_pol) = (None, None, None, None);
    for part in spec.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = key_value(part, "--implied")?;
        match k {
            "stock" | "patched" => {
                let x: f64 = v.replace('_', "").parse().map_err(|_| {
                    ConfigError::Invalid(format!("--implied {k}: '{v}' is not a number"))
                })?;
                if !(x.is_finite() && x > 0.0 && x < 1e12) {
                    return bad(format!(
                        "--implied {k}={v}: must be a positive ops/s below 1e12"
                    ));
                }
                if k == "stock" {
                    stock = Some(x)
                } else {
                    patched = Some(x)
                }
            }
            "policy" => pol = Some(policy(v)?),
            "stock_policy" => stock_pol = Some(policy(v)?),
            _ => {
                return bad(format!(
                    "--implied: unknown key '{k}'; known: stock, patched, policy, stock_policy"
                ))
            }
        }
    }
    match (stock, patched) {
        (Some(s), Some(p)) => Ok(ImpliedSpec {
            stock_ops_per_sec: s,
            patched_ops_per_sec: p,
            policy: pol,
            stock_policy: stock_pol,
        }),
        _ => bad("--implied needs both stock=OPS and patched=OPS".into()),
    }
}

pub fn parse_sweep(spec: &str, points: usize) -> Result<SweepSpec, ConfigError> {
    let (k, range) = key_value(spec, "--sweep")?;
    let param = param(k, "--sweep")?;
    let Some((lo, hi)) = range.split_once("..") else {
        return bad(format!("--sweep {spec}: expected {k}=LO..HI"));
    };
    let (lo, hi) = (number(param, lo, "--sweep")?, number(param, hi, "--sweep")?);
    if lo <= 0.0 || hi <= lo {
        return bad(format!(
            "--sweep {spec}: need 0 < LO < HI for a log-spaced range"
        ));
    }
    if !(2..=1000).contains(&points) {
        return bad(format!("--sweep-points must be 2..=1000, got {points}"));
    }
    Ok(SweepSpec {
        param,
        lo,
        hi,
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_values_are_log_spaced_and_rounded() {
        let s = parse_sweep("precise_read_ns=10..10000", 4).unwrap();
        assert_eq!(s.values(), vec![10.0, 100.0, 1000.0, 10000.0]);
        assert!(parse_sweep("precise_read_ns=100..10", 4).is_err());
        assert!(parse_sweep("precise_read_ns=0..10", 4).is_err());
        assert!(parse_sweep("bogus=1..10", 4).is_err());
    }

    #[test]
    fn numbers_are_range_checked() {
        assert!(number(Param::PreciseReadNs, "NaN", "--set").is_err());
        assert!(number(Param::PreciseReadNs, "-1", "--set").is_err());
        assert!(number(Param::PreciseReadNs, "1e10", "--set").is_err());
        assert_eq!(
            number(Param::PreciseReadNs, "2000", "--set").unwrap(),
            2000.0
        );
    }

    #[test]
    fn a_setting_given_twice_or_also_swept_is_refused() {
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ok = parse_set(&list(&["tick_ns=1e6", "base_ns=400"]), None).unwrap();
        assert_eq!(ok.len(), 2);
        let twice = parse_set(&list(&["tick_ns=1e6", "tick_ns=2e6"]), None).unwrap_err();
        assert!(twice.to_string().contains("tick_ns"), "{twice}");
        let sweep = parse_sweep("precise_read_ns=10..100", 3).unwrap();
        let both = parse_set(&list(&["precise_read_ns=5"]), Some(&sweep)).unwrap_err();
        assert!(both.to_string().contains("precise_read_ns"), "{both}");
        assert!(parse_set(&list(&["tick_ns=1e6"]), Some(&sweep)).is_ok());
    }

    #[test]
    fn implied_needs_both_figures() {
        let i = parse_implied("stock=2413901,patched=3147312,policy=netbsd-knob:1").unwrap();
        assert_eq!(i.stock_ops_per_sec, 2413901.0);
        assert_eq!(i.policy.unwrap().name(), "netbsd-knob:1");
        assert!(parse_implied("stock=1").is_err());
        assert!(parse_implied("stock=1,patched=2,policy=freebsd:9").is_err());
    }
}
