//! `tscope simulate`: replay a scenario (or a recorded run) under kernel models and estimate
//! what each timestamp policy costs and how accurate its timestamps are.
//!
//! Flow: [`config`] validates the arguments; the input becomes a
//! [`crate::trace::CompiledScenario`]; [`costs`] prices reads from a probe profile; for each
//! model, [`estimate`] replays the loop once per policy through [`replay`] (streaming, per-inode
//! state); [`sweep`] repeats that over a range of one setting or back-solves a published pair;
//! [`result`] is the result model. Nothing here prints: `commands::simulate` exports the
//! result.

pub mod config;
pub mod costs;
pub mod estimate;
pub mod expected;
pub mod replay;
pub mod result;
pub mod streamed;
pub mod sweep;
pub mod update_price;
pub mod validate;

use std::path::Path;

use crate::error::Context;

pub use config::{Counter, Loop, LoopSource, Mode, Param, SimulateConfig, StraceLog, Validation};
pub use replay::{Costs, Replay, Stats};
use result::{CostsOut, ModelReport, Output, ProfileNote, SweepReport, SIMULATE_SCHEMA_VERSION};

use crate::kernel::{Family, ModelId, Policy, Version};
use crate::probe::Profile;
use crate::trace::{bundled, CompiledScenario, FsKind, Scenario};
use crate::workload::run_record::RunRecord;

/// Iterations used when deriving a base cost from a measured figure.
const BASE_ITERATIONS: u64 = 50_000;

/// The scenario to replay and where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub scenario: Scenario,
    pub run: Option<RunRecord>,
}

/// Loads a scenario file, a bundled scenario by name, or a run record.
pub fn load_input(input: &LoopSource) -> crate::error::Result<Loaded> {
    match input {
        LoopSource::Inline(s) => Ok(Loaded {
            scenario: (**s).clone(),
            run: None,
        }),
        LoopSource::Record(run) => Ok(Loaded {
            scenario: run.scenario(),
            run: Some((**run).clone()),
        }),
        LoopSource::Run(path) => {
            let run = RunRecord::load(path)?;
            Ok(Loaded {
                scenario: run.scenario(),
                run: Some(run),
            })
        }
        LoopSource::Scenario(name) => {
            let path = Path::new(name);
            if path.exists() {
                return Ok(Loaded {
                    scenario: Scenario::load(path)?,
                    run: None,
                });
            }
            match bundled::get(name) {
                Some(text) => Ok(Loaded {
                    scenario: Scenario::from_json(text, &format!("bundled:{name}"))?,
                    run: None,
                }),
                None => crate::fail!(
                    "no scenario file '{name}' and no bundled scenario of that name \
                     (bundled: {})",
                    bundled::names().join(", ")
                ),
            }
        }
    }
}

/// The profile the costs come from, and how to name it in the output.
pub(crate) fn profile(
    cfg: &SimulateConfig,
) -> crate::error::Result<(Option<Profile>, ProfileNote)> {
    if let Some(p) = &cfg.profile_data {
        let note = ProfileNote::new("the report's own probe".into(), Some(p));
        return Ok((Some(p.clone()), note));
    }
    match &cfg.profile {
        Some(path) => {
            let p = costs::load_profile(path)?;
            let note = ProfileNote::new(path.display().to_string(), Some(&p));
            Ok((Some(p), note))
        }
        None if costs::fully_overridden(cfg) => Ok((
            None,
            ProfileNote::new("none: every cost given with --set".into(), None),
        )),
        None => {
            let p = costs::quick_profile(cfg.counter.source_id(), cfg.emulate_trap)?;
            let note = ProfileNote::new(
                format!(
                    "quick probe taken now (syscall:realtime, syscall:realtime_coarse, {}, {}){}",
                    costs::COARSE_SOURCE,
                    cfg.counter.source_id(),
                    if cfg.emulate_trap {
                        ", TSC reads trapped (--emulate-trap)"
                    } else {
                        ""
                    }
                ),
                Some(&p),
            );
            Ok((Some(p), note))
        }
    }
}

/// A measured cost per iteration less what `model`'s stock policy spends on timestamps at
/// these costs: the base cost, and the stock policy's name.
fn base_less_stock(
    model: ModelId,
    measured: f64,
    cfg: &SimulateConfig,
    compiled: &CompiledScenario,
    profile: Option<&Profile>,
) -> crate::error::Result<(f64, String)> {
    // The run was measured as the machine is: its kernel's reads did not trap.
    let (costs, _) = costs::resolve_as_measured(model, profile, cfg)?;
    let stock = &model.policies()[0];
    let base = estimate::base_from_measured(
        model,
        stock,
        costs,
        compiled,
        measured,
        crate::trace::scenario::bounded_iterations(BASE_ITERATIONS, compiled.ops.len()),
    );
    Ok((base, stock.name()))
}

/// The cost of one iteration without timestamp work, and where it comes from.
fn base_cost(
    cfg: &SimulateConfig,
    loaded: &Loaded,
    compiled: &CompiledScenario,
    profile: Option<&Profile>,
) -> crate::error::Result<(f64, String)> {
    if let Some(v) = cfg.set(Param::BaseNs) {
        return Ok((v, "--set base_ns".into()));
    }
    if let Some(run) = &loaded.run {
        // The kernel it ran on (its release's version; the newest modelled when unknown).
        let model = ModelId::new(
            Family::Linux,
            run.kernel_release
                .as_deref()
                .and_then(Version::parse)
                .unwrap_or_else(|| Family::Linux.newest()),
        );
        let measured = run.measured_ns_per_iteration();
        let (base, stock) = base_less_stock(model, measured, cfg, compiled, profile)?;
        return Ok((
            base,
            format!(
                "run record: {:.1} ns per iteration measured ({:.0} ops/s, {} task(s)) less the \
                 {} ({}) model's timestamp work",
                measured, run.ops_per_sec, compiled.tasks, stock, model
            ),
        ));
    }
    if let Some((pair, model)) = profile.and_then(|p| update_price::live_pair_for(p, compiled)) {
        let (base, stock) = base_less_stock(model, pair.queried_ns.point, cfg, compiled, profile)?;
        return Ok((
            base,
            format!(
                "this machine's live pair on {} ({}): {:.1} ns per iteration measured with the \
                 times asked for, less the {} ({}) model's timestamp work",
                pair.dir, pair.fs_type, pair.queried_ns.point, stock, model
            ),
        ));
    }
    if let Some(b) = compiled.base_ns_per_iteration {
        let src = compiled
            .base_source
            .clone()
            .unwrap_or_else(|| "scenario base_ns_per_iteration".into());
        return Ok((b, format!("scenario: {src}")));
    }
    if let Some(p) = &compiled.published {
        let model = ModelId::parse(&p.model).with_context(|| {
            format!(
                "scenario '{}': published.model '{}' is not a model",
                compiled.name, p.model
            )
        })?;
        let measured = compiled.tasks as f64 * 1e9 / p.stock_ops_per_sec;
        let (base, stock) = base_less_stock(model, measured, cfg, compiled, profile)?;
        return Ok((
            base,
            format!(
                "published stock figure {} ops/s ({:.1} ns per iteration) less the {} ({}) \
                 timestamp work at these costs",
                p.stock_ops_per_sec, measured, stock, model
            ),
        ));
    }
    crate::fail!(
        "scenario '{}' has no base_ns_per_iteration; give --set base_ns=… or --run FILE",
        compiled.name
    )
}

impl CostsOut {
    /// The same with each term's prices per filesystem narrowed to the filesystems of
    /// `compiled`'s loop.
    fn only_on(mut self, compiled: &CompiledScenario) -> Self {
        let on: Vec<&str> = compiled.ops.iter().map(|o| o.fs.name()).collect();
        self.terms = self.terms.only_on(&on);
        self
    }
}

pub(crate) fn costs_out(
    c: Costs,
    sources: costs::CostSources,
    base: f64,
    base_source: &str,
) -> CostsOut {
    let mut terms = crate::price::fields::TermCosts::default();
    for t in crate::price::Term::ALL {
        let p = c.term(t);
        terms.0[t as usize] = (
            p.default_ns,
            FsKind::ALL
                .iter()
                .filter_map(|&f| Some((f.name().to_string(), p.by_fs[f as usize]?)))
                .collect(),
        );
    }
    CostsOut {
        precise_read_ns: c.precise_read_ns,
        coarse_read_ns: c.coarse_read_ns,
        terms,
        tick_ns: c.tick_ns,
        base_ns_per_op: base,
        sources,
        base_source: base_source.to_string(),
    }
}

/// Runs the whole simulation `cfg` asks for.
pub fn simulate(cfg: &SimulateConfig) -> crate::error::Result<Output> {
    let (run, sweep) = match &cfg.mode {
        Mode::Validate(v) => return Ok(Output::Validation(validate::run(cfg, v)?)),
        Mode::Strace(log) => return streamed::simulate(cfg, log),
        Mode::Estimate(run) => (run, None),
        Mode::Sweep {
            run,
            sweep,
            break_even,
        } => (run, Some((sweep, *break_even))),
        Mode::Implied { run, .. } => (run, None),
    };
    let loaded = load_input(&run.input)?;
    let compiled = loaded.scenario.compile();
    let iterations = run.iterations.unwrap_or(loaded.scenario.iterations);
    let (profile, note) = profile(cfg)?;
    let profile = profile.as_ref();

    if let Mode::Implied { implied: spec, .. } = &cfg.mode {
        return implied(cfg, &compiled, iterations, profile, &note, spec);
    }
    let (base, base_source) = base_cost(cfg, &loaded, &compiled, profile)?;
    let mut notes = Vec::new();
    if let Some(run) = &loaded.run {
        for (name, n) in run.unknown_syscalls() {
            notes.push(format!(
                "run record: {n} op(s) of '{name}' per iteration have no model (no timestamp work)"
            ));
        }
    }
    // A bare `linux` follows the kernel the run was recorded on, else the profile's.
    let run_release = loaded
        .run
        .as_ref()
        .and_then(|r| r.kernel_release.as_deref());
    let (resolved, model_notes) = resolve_models_on(cfg, profile, run_release);
    notes.extend(model_notes);
    let mut models = Vec::new();
    let mut sweeps = Vec::new();
    for &model in &resolved {
        let (costs, sources) = costs::resolve(model, profile, cfg)?;
        let costs_o = costs_out(costs, sources, base, &base_source).only_on(&compiled);
        let stock_policy = model.policies()[0].name();
        if let Some((spec, break_even_speedup)) = sweep {
            let (points, break_even) = sweep::sweep(
                model,
                spec,
                costs,
                base,
                &compiled,
                iterations,
                break_even_speedup,
            );
            sweeps.push(SweepReport {
                schema_version: SIMULATE_SCHEMA_VERSION,
                scenario: compiled.name.clone(),
                model: model.label(),
                stock_policy,
                parameter: spec.param.name().into(),
                break_even_speedup,
                profile: note.clone(),
                costs: costs_o,
                points,
                break_even,
            });
            continue;
        }
        let estimates = estimate::estimates(model, costs, &compiled, base, iterations);
        let fs_notes =
            if cfg.set(Param::Term(crate::price::Term::Update)).is_none() && model.is_linux() {
                update_price::unmeasured_update_notes(
                    model, costs, &compiled, base, iterations, &estimates,
                )
            } else {
                Vec::new()
            };
        models.push(ModelReport {
            schema_version: SIMULATE_SCHEMA_VERSION,
            scenario: compiled.name.clone(),
            model: model.label(),
            stock_policy,
            tasks: compiled.tasks,
            iterations,
            profile: note.clone(),
            costs: costs_o,
            estimates,
            notes: notes
                .iter()
                .cloned()
                .chain(fs_notes)
                .chain(model.notes())
                .collect(),
            strace: None,
        });
    }
    Ok(if sweep.is_some() {
        Output::Sweeps(sweeps)
    } else {
        Output::Models(models)
    })
}

/// The models `cfg.models` name, at their versions (a bare `linux`: the profile's kernel
/// release), and notes saying how each version was chosen.
pub fn resolve_models(
    cfg: &SimulateConfig,
    profile: Option<&Profile>,
) -> (Vec<ModelId>, Vec<String>) {
    resolve_models_on(cfg, profile, None)
}

/// [`resolve_models`] with a kernel release that wins over the profile's (a run record's).
fn resolve_models_on(
    cfg: &SimulateConfig,
    profile: Option<&Profile>,
    release: Option<&str>,
) -> (Vec<ModelId>, Vec<String>) {
    let release = release.or_else(|| profile.and_then(|p| p.machine.kernel_release.as_deref()));
    let mut models = Vec::new();
    let mut notes = Vec::new();
    for spec in &cfg.models {
        let (m, note) = spec.resolve(release);
        if !models.contains(&m) {
            models.push(m);
            notes.extend(note);
        }
    }
    (models, notes)
}

/// The (stock, patched) policy pairs a back-solve runs.
fn implied_pairs(
    models: &[ModelId],
    compiled: &CompiledScenario,
    spec: &config::ImpliedSpec,
) -> crate::error::Result<Vec<(Policy, Policy)>> {
    let stock_of = |m: ModelId| m.policies().remove(0);
    // A policy named by family only takes the version of the simulated model of that family.
    let rebind = |p: &Policy| {
        models
            .iter()
            .find_map(|&m| p.for_model(m))
            .unwrap_or_else(|| p.clone())
    };
    if let Some(p) = &spec.policy {
        let p = rebind(p);
        let stock = spec
            .stock_policy
            .as_ref()
            .map(rebind)
            .unwrap_or_else(|| stock_of(p.model));
        return Ok(vec![(stock, p)]);
    }
    if let Some(pb) = &compiled.published {
        if let Some(p) = Policy::parse(&pb.patched_policy)
            .and_then(|p| models.iter().find_map(|&m| p.for_model(m)))
        {
            let stock = spec
                .stock_policy
                .as_ref()
                .map(rebind)
                .unwrap_or_else(|| stock_of(p.model));
            return Ok(vec![(stock, p)]);
        }
    }
    // Default: each BSD model's getnanotime setting against its stock.
    let pairs: Vec<(Policy, Policy)> = models
        .iter()
        .filter_map(|&m| {
            let patched = m.policies().into_iter().find(|p| p.value == "1")?;
            Some((stock_of(m), patched))
        })
        .filter(|(s, p)| s != p)
        .collect();
    crate::ensure!(
        !pairs.is_empty(),
        "--implied: none of the models has a knob setting to compare; add policy=MODEL:VALUE"
    );
    Ok(pairs)
}

fn implied(
    cfg: &SimulateConfig,
    compiled: &CompiledScenario,
    iterations: u64,
    profile: Option<&Profile>,
    note: &ProfileNote,
    spec: &config::ImpliedSpec,
) -> crate::error::Result<Output> {
    let (models, _) = resolve_models(cfg, profile);
    let mut reports = Vec::new();
    for (stock, patched) in implied_pairs(&models, compiled, spec)? {
        crate::ensure!(
            stock.model == patched.model,
            "--implied: stock_policy {} and policy {} are of different models",
            stock.name(),
            patched.name()
        );
        let model = patched.model;
        let (costs, sources) = costs::resolve(model, profile, cfg)?;
        let pair = sweep::Pair {
            stock: &stock,
            patched: &patched,
            stock_ops_per_sec: spec.stock_ops_per_sec,
            patched_ops_per_sec: spec.patched_ops_per_sec,
        };
        let r = sweep::implied(pair, costs, compiled, iterations);
        let costs_o = costs_out(
            costs,
            sources,
            r.base_ns_per_op.unwrap_or(f64::NAN),
            "solved from the pair",
        );
        reports.push(sweep::implied_report(
            &compiled.name,
            pair,
            &r,
            note.clone(),
            costs_o,
        ));
    }
    Ok(Output::Implied(reports))
}
