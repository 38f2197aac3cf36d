//! Where the costs come from: a probe profile (a file, or a quick probe taken now of only the
//! sources the models need), overridden by `--set`.

use std::path::Path;

use serde::Serialize;

use super::config::{Param, SimulateConfig};
use crate::kernel::ModelId;
use crate::price::{fields::TermSources, Costs, Term, TermPrice};
use crate::probe::update::FsUpdate;
use crate::probe::{self, ProbeConfig, Profile, Source, PROFILE_SCHEMA_VERSION};
use crate::trace::scenario::{check_kind, check_version, read_text, TraceError};

/// The coarse read: what `REALTIME_COARSE` costs through the vDSO.
pub const COARSE_SOURCE: &str = "vdso:realtime_coarse";
/// Linux coarse tick when the profile did not observe one.
pub const FALLBACK_LINUX_TICK_NS: f64 = 4e6;

/// Reads a profile written by `tscope probe --json`.
pub fn load_profile(path: &Path) -> Result<Profile, TraceError> {
    const WHAT: &str = "profile";
    let origin = path.display().to_string();
    let text = read_text(path, WHAT)?;
    check_kind(
        &text,
        WHAT,
        &origin,
        crate::input::Kind::Probe,
        "--profile reads a probe profile (`tscope probe --json`)",
    )?;
    check_version(&text, WHAT, &origin, PROFILE_SCHEMA_VERSION)?;
    let profile: Profile = serde_json::from_str(&text).map_err(|e| TraceError::Parse {
        what: WHAT,
        path: origin.clone(),
        cause: e,
    })?;
    crate::probe::check::check_profile(&profile).map_err(|message| TraceError::Invalid {
        what: WHAT,
        path: origin,
        message,
    })?;
    Ok(profile)
}

/// Takes a quick probe of the sources `simulate` needs (recorded in the output as such).
pub fn quick_profile(counter_id: &str, emulate_trap: bool) -> crate::error::Result<Profile> {
    let mut sources = Vec::new();
    for id in [
        "syscall:realtime",
        "syscall:realtime_coarse",
        COARSE_SOURCE,
        counter_id,
    ] {
        let s: Source = id
            .parse()
            .map_err(|e| crate::failure!("probe source {id}: {e}"))?;
        if !sources.contains(&s) {
            sources.push(s);
        }
    }
    let mut cfg = ProbeConfig::new(sources, true, 1);
    cfg.emulate_trap = emulate_trap;
    Ok(probe::run(&cfg))
}

/// What a precise-read price under `--emulate-trap` adds to its source: the what-if, applied
/// to the kernel's reads as to user space's.
pub const EMULATED_PRICE: &str =
    "(trapped by tscope --emulate-trap; a hypervisor that traps RDTSC traps the kernel's reads too)";

/// Where each cost came from, for the output.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct CostSources {
    pub precise_read: String,
    pub coarse_read: String,
    /// Each term's source, under its key (`update`, `query`, `floor_read`, …; empty in a file
    /// written before the term was priced).
    #[serde(flatten)]
    pub terms: TermSources,
    pub tick: String,
}

impl CostSources {
    /// Where `term`'s price came from.
    pub fn term(&self, term: Term) -> &str {
        self.terms.get(term)
    }
}

/// The costs of `model`'s reads, with the profile's what-if applied (under `--emulate-trap`
/// every model's precise read is the trapped counter read).
pub fn resolve(
    model: ModelId,
    profile: Option<&Profile>,
    cfg: &SimulateConfig,
) -> crate::error::Result<(Costs, CostSources)> {
    resolve_with(model, profile, cfg, true)
}

/// The costs `model`'s reads had when the profile's machine ran a workload: under
/// `--emulate-trap` the kernel's own reads did not trap, so a measured run's timestamp work is
/// priced without the what-if (for the base cost, which is the run less that work).
pub fn resolve_as_measured(
    model: ModelId,
    profile: Option<&Profile>,
    cfg: &SimulateConfig,
) -> crate::error::Result<(Costs, CostSources)> {
    resolve_with(model, profile, cfg, false)
}

fn resolve_with(
    model: ModelId,
    profile: Option<&Profile>,
    cfg: &SimulateConfig,
    what_if: bool,
) -> crate::error::Result<(Costs, CostSources)> {
    let counter = cfg.counter.source_id();
    let need = |what: &str| {
        crate::failure!(
            "the profile has no {what}; probe it, or give --set {} for a what-if",
            match what {
                "coarse" => "coarse_read_ns=…",
                _ => "precise_read_ns=…",
            }
        )
    };
    // Under `--emulate-trap` only user-mode TSC reads trap, so the kernel's own clocksource
    // read (the derived precise read) stays native; a hypervisor that traps RDTSC traps the
    // kernel's reads too. The what-if is applied to every model alike: the Linux models are
    // priced at the trapped counter read, as the BSD models are.
    let emulated = what_if && profile.is_some_and(|p| p.emulate_trap);
    let (precise, precise_src) = match cfg.set(Param::PreciseReadNs) {
        Some(v) => (v, "--set precise_read_ns".to_string()),
        None if model.is_linux() && emulated => {
            let p = profile
                .and_then(|p| p.cost_ns(counter))
                .ok_or_else(|| need(&format!("cost for {counter} (try another --counter)")))?;
            (p.point, format!("profile {counter} {EMULATED_PRICE}"))
        }
        None if model.is_linux() => {
            let p = profile
                .and_then(|p| p.derived.precise_read_ns)
                .ok_or_else(|| {
                    need("derived.precise_read_ns (syscall:realtime − syscall:realtime_coarse)")
                })?;
            // Not above 0 is a disturbed probe (its profile carries the warning): an error,
            // never a clamp to a free read.
            crate::ensure!(
                p.point.is_finite() && p.point > 0.0,
                "the profile's derived.precise_read_ns is {:.2} ns, not above 0 (a disturbed \
                 probe; see its warnings): probe again, or give --set precise_read_ns=…",
                p.point
            );
            (
                p.point,
                "profile derived.precise_read_ns (syscall:realtime − syscall:realtime_coarse)"
                    .to_string(),
            )
        }
        None => {
            let p = profile
                .and_then(|p| p.cost_ns(counter))
                .ok_or_else(|| need(&format!("cost for {counter} (try another --counter)")))?;
            let trapped = if profile.is_some_and(|p| p.emulate_trap) {
                format!(" {EMULATED_PRICE}")
            } else {
                String::new()
            };
            (p.point, format!("profile {counter}{trapped}"))
        }
    };
    let (coarse, coarse_src) = match cfg.set(Param::CoarseReadNs) {
        Some(v) => (v, "--set coarse_read_ns".to_string()),
        None => {
            let p = profile
                .and_then(|p| p.cost_ns(COARSE_SOURCE))
                .ok_or_else(|| need("coarse"))?;
            (p.point, format!("profile {COARSE_SOURCE}"))
        }
    };
    let (terms, term_sources) =
        resolve_terms(model.is_linux(), profile, |t| cfg.set(Param::Term(t)));
    let in_vm = profile.is_some_and(|p| p.machine.hypervisor_bit);
    let (tick, tick_src) = match (cfg.set(Param::TickNs), model.default_tick_ns(in_vm)) {
        (Some(v), _) => (v, "--set tick_ns".to_string()),
        (None, Some((t, why))) => (t, format!("{model} default {why}")),
        (None, None) => match profile
            .and_then(|p| p.source(COARSE_SOURCE))
            .and_then(|s| s.update_period_ns)
        {
            Some(t) if t > 0.0 => (t, format!("profile {COARSE_SOURCE} update period")),
            _ => (
                FALLBACK_LINUX_TICK_NS,
                "assumed 4 ms (HZ=250): the profile observed no coarse tick".to_string(),
            ),
        },
    };
    Ok((
        Costs {
            precise_read_ns: precise,
            coarse_read_ns: coarse,
            tick_ns: tick,
            terms,
        },
        CostSources {
            precise_read: precise_src,
            coarse_read: coarse_src,
            terms: term_sources,
            tick: tick_src,
        },
    ))
}

/// `term`'s prices in the profile: each filesystem kind's first measured entry; on any other
/// filesystem 0, or for a read term the first measured entry's. The source in words.
pub fn profile_by_fs(profile: Option<&Profile>, term: Term) -> (TermPrice, String) {
    let entries: &[FsUpdate] = profile
        .map(|p| p.filesystems.as_slice())
        .unwrap_or_default();
    let mut price = TermPrice::ZERO;
    let mut named = Vec::new();
    let mut first: Option<(f64, &str)> = None;
    for f in entries {
        let Some(e) = f.prices.get(term) else {
            continue;
        };
        first.get_or_insert((e.point, &f.fs_type));
        let slot = &mut price.by_fs[f.fs_kind() as usize];
        if slot.is_none() {
            *slot = Some(e.point);
            named.push(format!(
                "{} {:.1} ns [{:.1}, {:.1}] ({})",
                f.fs_kind(),
                e.point,
                e.lower,
                e.upper,
                f.label()
            ));
        }
    }
    let Some((point, fs)) = first else {
        let unpriced: Vec<String> = entries
            .iter()
            .map(|f| format!("{} ({})", f.fs_type, f.reason))
            .collect();
        let why = if unpriced.is_empty() {
            format!("({})", term.unmeasured())
        } else {
            format!(
                "(the profile could not price it on {}; {})",
                unpriced.join("; "),
                term.unmeasured()
            )
        };
        return (
            price,
            format!(
                "not measured, taken as 0 {why}; --set {}=… for a what-if",
                term.field()
            ),
        );
    };
    let other = if term.is_read() {
        price.default_ns = point;
        format!("{fs}'s")
    } else {
        "0 (not measured)".to_string()
    };
    (
        price,
        format!(
            "profile filesystems[].{} ({}): {}; any other filesystem at {other}",
            term.field(),
            term.measured_by(),
            named.join(", ")
        ),
    )
}

/// Every term's prices for a model: `set(term)` where given (`--set`), else the profile's for
/// a Linux model, else 0 with why.
pub fn resolve_terms(
    linux: bool,
    profile: Option<&Profile>,
    set: impl Fn(Term) -> Option<f64>,
) -> ([TermPrice; Term::COUNT], TermSources) {
    let mut prices = [TermPrice::ZERO; Term::COUNT];
    let mut sources = TermSources::default();
    for t in Term::ALL {
        let (p, src) = match set(t) {
            Some(v) => (TermPrice::uniform(v), format!("--set {}", t.field())),
            None if linux => profile_by_fs(profile, t),
            None => (TermPrice::ZERO, t.not_linux().to_string()),
        };
        prices[t as usize] = p;
        sources.0[t as usize] = src;
    }
    // A term with a stand-in (an atime update, a c/mtime update's) takes the stand-in's price
    // on every filesystem the profile did not price it on, and as its default where it priced
    // none; `--set` of the term itself stands alone.
    for t in Term::ALL {
        let Some(s) = t.stand_in() else { continue };
        if linux && set(t).is_none() {
            let stand = prices[s as usize];
            let own = &mut prices[t as usize];
            let measured = own.by_fs.iter().any(Option::is_some);
            for (mine, theirs) in own.by_fs.iter_mut().zip(stand.by_fs) {
                if mine.is_none() {
                    *mine = theirs;
                }
            }
            if !measured {
                own.default_ns = stand.default_ns;
            }
            let words = format!(
                "; where not priced, at its {} price ({})",
                s.label(),
                sources.get(s)
            );
            sources.0[t as usize].push_str(&words);
        }
    }
    (prices, sources)
}

/// Whether every cost is overridden (no profile needed).
pub fn fully_overridden(cfg: &SimulateConfig) -> bool {
    [Param::PreciseReadNs, Param::CoarseReadNs, Param::TickNs]
        .iter()
        .all(|&p| cfg.set(p).is_some())
}
