//! Where the costs come from: a probe profile (a file, or a quick probe taken now of only the
//! sources the models need), overridden by `--set`.

use std::path::Path;

use serde::Serialize;

use super::config::{Param, SimulateConfig};
use super::replay::{Costs, UpdateByFs};
use crate::kernel::ModelId;
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
    pub update: String,
    /// Where the price of a multigrain ctime query came from (absent in files written before
    /// it was priced).
    #[serde(default)]
    pub query: String,
    /// Where the price of a coarse read that returns the multigrain floor came from (absent
    /// in files written before it was priced).
    #[serde(default)]
    pub floor_read: String,
    /// Where the in-path excess of a fine read came from (absent in files written before it
    /// was priced).
    #[serde(default)]
    pub fine_excess: String,
    pub tick: String,
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
    let (update, update_by_fs, update_src) = match cfg.set(Param::UpdateNs) {
        Some(v) => (v, Costs::UNIFORM, "--set update_ns".to_string()),
        None if model.is_linux() => update_prices(profile),
        // The live pair prices Linux's update (the filesystem's journal, log or inode store);
        // a BSD's is its own code (ufs_update, tmpfs_update), which this machine cannot run.
        None => (
            0.0,
            Costs::UNIFORM,
            "not measured, taken as 0: the live pair prices a Linux update, not this OS's; \
             --set update_ns=… for a what-if"
                .to_string(),
        ),
    };
    let (query, query_by_fs, query_src) = match cfg.set(Param::QueryNs) {
        Some(v) => (v, Costs::UNIFORM, "--set query_ns".to_string()),
        None if model.is_linux() => query_prices(profile),
        None => (
            0.0,
            Costs::UNIFORM,
            "none: only Linux's multigrain timestamps are queried".to_string(),
        ),
    };
    let (floor, floor_by_fs, floor_src) = match cfg.set(Param::FloorReadNs) {
        Some(v) => (v, Costs::UNIFORM, "--set floor_read_ns".to_string()),
        None if model.is_linux() => floor_read_prices(profile),
        None => (
            0.0,
            Costs::UNIFORM,
            "none: only Linux's multigrain coarse reads return a floor".to_string(),
        ),
    };
    let (excess, excess_by_fs, excess_src) = match cfg.set(Param::FineExcessNs) {
        Some(v) => (v, Costs::UNIFORM, "--set fine_excess_ns".to_string()),
        None if model.is_linux() => fine_excess_prices(profile),
        None => (
            0.0,
            Costs::UNIFORM,
            "none: priced for Linux's in-kernel fine reads only".to_string(),
        ),
    };
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
            update_ns: update,
            update_ns_by_fs: update_by_fs,
            query_ns: query,
            query_ns_by_fs: query_by_fs,
            floor_read_ns: floor,
            floor_read_ns_by_fs: floor_by_fs,
            fine_excess_ns: excess,
            fine_excess_ns_by_fs: excess_by_fs,
            tick_ns: tick,
        },
        CostSources {
            precise_read: precise_src,
            coarse_read: coarse_src,
            update: update_src,
            query: query_src,
            floor_read: floor_src,
            fine_excess: excess_src,
            tick: tick_src,
        },
    ))
}

/// The first measured `price` of each filesystem kind in the profile (`filesystems[]`,
/// measured by `probe --dir`), and each named with its interval and where it was measured.
fn per_kind(
    profile: Option<&Profile>,
    price: impl Fn(&probe::update::FsUpdate) -> Option<crate::stats::Estimate>,
) -> (UpdateByFs, Vec<String>) {
    let mut by_fs = Costs::UNIFORM;
    let mut named = Vec::new();
    for f in profile
        .map(|p| p.filesystems.as_slice())
        .unwrap_or_default()
    {
        let kind = f.fs_kind();
        if let (Some(e), None) = (price(f), by_fs[kind as usize]) {
            by_fs[kind as usize] = Some(e.point);
            named.push(format!(
                "{kind} {:.1} ns [{:.1}, {:.1}] ({})",
                e.point,
                e.lower,
                e.upper,
                f.label()
            ));
        }
    }
    (by_fs, named)
}

/// The profile's update price per filesystem: the first measured entry of each kind; every
/// other filesystem at 0, said so.
pub fn update_prices(profile: Option<&Profile>) -> (f64, UpdateByFs, String) {
    let (by_fs, named) = per_kind(profile, |f| f.update_ns);
    let src = if named.is_empty() {
        let unmeasured: Vec<String> = profile
            .map(|p| p.filesystems.as_slice())
            .unwrap_or_default()
            .iter()
            .filter(|f| f.update_ns.is_none())
            .map(|f| format!("{} ({})", f.fs_type, f.reason))
            .collect();
        let why = if unmeasured.is_empty() {
            "the profile measured no filesystem (probe --dir DIR)".to_string()
        } else {
            format!("the profile could not price {}", unmeasured.join("; "))
        };
        format!("not measured, taken as 0: {why}; --set update_ns=… for a what-if")
    } else {
        format!(
            "profile filesystems[] (live pair, probe --dir): {}; any other filesystem at 0 (not \
             measured)",
            named.join(", ")
        )
    };
    (0.0, by_fs, src)
}

/// The profile's price of a multigrain ctime query per filesystem (`filesystems[].query_ns`,
/// the chmod-stat pair of `probe --dir`, or write-stat where the question adds no update to
/// the write); every other filesystem at 0, said so. Where a
/// filesystem's update was priced without it, its update price holds the query's work.
pub fn query_prices(profile: Option<&Profile>) -> (f64, UpdateByFs, String) {
    let (by_fs, named) = per_kind(profile, |f| f.query_ns);
    let src = if named.is_empty() {
        "not measured, taken as 0 (probe --dir DIR measures it with the chmod-stat pair; a \
         filesystem's update price then holds it); --set query_ns=… for a what-if"
            .to_string()
    } else {
        format!(
            "profile filesystems[].query_ns (chmod-stat pair, or write-stat where the question \
             adds no update to the write; probe --dir): {}; any other \
             filesystem at 0",
            named.join(", ")
        )
    };
    (0.0, by_fs, src)
}

/// The profile's price of a coarse read that returns the multigrain floor, per filesystem
/// (`filesystems[].floor_read_ns`, the chmod-stat pair with reads after it, `probe --dir`).
/// `ktime_get_coarse_real_ts64_mg()` is the timekeeper's, not the filesystem's: a filesystem
/// without a price of its own (a pipe's inode included) takes the first measured one.
pub fn floor_read_prices(profile: Option<&Profile>) -> (f64, UpdateByFs, String) {
    first_measured(
        profile,
        |f| f.floor_read_ns,
        "not measured, taken as 0 (probe --dir DIR measures it with the chmod-stat pair \
         and reads after it; the update and query prices then leave it out); --set \
         floor_read_ns=… for a what-if",
        "floor_read_ns (chmod-stat pair with reads after it, probe --dir)",
    )
}

/// The profile's in-path excess of a Linux fine read, per filesystem
/// (`filesystems[].fine_excess_ns`, `probe --dir`: chmod-stat with 16 reads of the same file
/// against 1). A filesystem without a price of its own takes the first
/// measured one: the read is the timekeeper's, only the work before it is the filesystem's.
pub fn fine_excess_prices(profile: Option<&Profile>) -> (f64, UpdateByFs, String) {
    first_measured(
        profile,
        |f| f.fine_excess_ns,
        "not measured, taken as 0: a fine read inside the kernel costs the syscall pair's \
         price (probe --dir DIR measures the excess; the query and update prices then \
         leave it out); --set fine_excess_ns=… for a what-if",
        "fine_excess_ns (chmod-stat with 16 reads of the same file against 1, probe --dir)",
    )
}

/// `price` of each filesystem kind in the profile, and for any other filesystem the first
/// measured entry's; the source in words (`unmeasured` where no entry has one, else the
/// field `what` and each measured entry).
fn first_measured(
    profile: Option<&Profile>,
    price: impl Fn(&probe::update::FsUpdate) -> Option<crate::stats::Estimate>,
    unmeasured: &str,
    what: &str,
) -> (f64, UpdateByFs, String) {
    let (by_fs, named) = per_kind(profile, &price);
    let first = profile
        .map(|p| p.filesystems.as_slice())
        .unwrap_or_default()
        .iter()
        .find_map(|f| Some((price(f)?.point, f.fs_type.clone())));
    match first {
        None => (0.0, by_fs, unmeasured.to_string()),
        Some((point, fs)) => (
            point,
            by_fs,
            format!(
                "profile filesystems[].{what}: {}; any other filesystem at {fs}'s",
                named.join(", ")
            ),
        ),
    }
}

/// Whether every cost is overridden (no profile needed).
pub fn fully_overridden(cfg: &SimulateConfig) -> bool {
    [Param::PreciseReadNs, Param::CoarseReadNs, Param::TickNs]
        .iter()
        .all(|&p| cfg.set(p).is_some())
}
