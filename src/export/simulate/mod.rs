//! The printed forms of a `simulate` [`Output`]: per model a heading, the costs it was priced
//! with and one row per policy; per sweep the speedup against the swept setting; per implied
//! pair the back-solved cost and its reasoning; per validation predicted against measured.
//! JSON is one object for one report and an array for several (docs/schema.md).

mod csv;

use std::collections::BTreeMap;

use serde::Serialize;

use super::knob::{stamped, stamped_or_dash};
use super::table::{Align, Table};
use super::{Block, Render, Style, Tagged};
use crate::fmt::{duration_short, pct};
use crate::input::Kind;
use crate::price::Term;
use crate::sim::result::{
    CostsOut, FsCost, ImpliedReport, ModelReport, Output, ProfileNote, SweepReport,
    ValidationReport,
};

/// One report as an object, several as an array; each tagged `tscope-simulate`.
#[derive(Serialize)]
#[serde(untagged)]
enum Json<'a, T> {
    One(Tagged<&'a T>),
    Many(Vec<Tagged<&'a T>>),
}

fn tagged<T>(one: &T) -> Tagged<&T> {
    Tagged::new(Kind::Simulate, one)
}

fn one_or_many<T>(v: &[T]) -> Json<'_, T> {
    match v {
        [one] => Json::One(tagged(one)),
        many => Json::Many(many.iter().map(tagged).collect()),
    }
}

/// What `--json` writes for each kind of output.
#[derive(Serialize)]
#[serde(untagged)]
enum OutputJson<'a> {
    Models(Json<'a, ModelReport>),
    Sweeps(Json<'a, SweepReport>),
    Implied(Json<'a, ImpliedReport>),
    Validation(Tagged<&'a ValidationReport>),
}

impl Render for Output {
    fn json(&self) -> impl Serialize + '_ {
        match self {
            Output::Models(v) => OutputJson::Models(one_or_many(v)),
            Output::Sweeps(v) => OutputJson::Sweeps(one_or_many(v)),
            Output::Implied(v) => OutputJson::Implied(one_or_many(v)),
            Output::Validation(v) => OutputJson::Validation(tagged(v)),
        }
    }

    fn blocks(&self, style: Style) -> Vec<Block> {
        let reports: Vec<Vec<Block>> = match self {
            Output::Models(v) => v.iter().map(|r| model(r, style)).collect(),
            Output::Sweeps(v) => v.iter().map(|r| sweep(r, style)).collect(),
            Output::Implied(v) => v.iter().map(implied).collect(),
            Output::Validation(v) => vec![validation(v, style)],
        };
        reports.join(&Block::Blank)
    }

    fn csv(&self) -> Table {
        match self {
            Output::Models(v) => csv::models(v),
            Output::Sweeps(v) => csv::sweeps(v),
            Output::Implied(v) => csv::implied(v),
            Output::Validation(v) => csv::validation(v),
        }
    }
}

/// An empty line before a note in Markdown (so it is a paragraph), none in text.
fn md_gap(style: Style) -> Option<Block> {
    style.is_markdown().then_some(Block::Blank)
}

/// The costs a report was priced with, and the profile they came from.
fn costs(c: &CostsOut, p: &ProfileNote, style: Style) -> Vec<Block> {
    let machine: Vec<String> = [&p.cpu_model, &p.kernel_release, &p.clocksource]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let mut lines = vec![
        format!(
            "precise read {} ({}); coarse read {} ({})",
            duration_short(c.precise_read_ns),
            c.sources.precise_read,
            duration_short(c.coarse_read_ns),
            c.sources.coarse_read
        ),
        format!("tick {} ({})", duration_short(c.tick_ns), c.sources.tick),
    ];
    lines.extend(Term::LISTED.iter().map(|&t| {
        format!(
            "{} {} ({})",
            t.label(),
            duration_short(c.terms.default_ns(t)),
            match c.sources.term(t) {
                "" => "not priced",
                s => s,
            }
        )
    }));
    lines.extend([
        format!(
            "base {} per op ({})",
            duration_short(c.base_ns_per_op),
            c.base_source
        ),
        format!(
            "profile: {}{}",
            p.origin,
            if machine.is_empty() {
                String::new()
            } else {
                format!(" ({})", machine.join(", "))
            }
        ),
    ]);
    [Block::list("  ", lines)]
        .into_iter()
        .chain(md_gap(style))
        .collect()
}

fn model(r: &ModelReport, style: Style) -> Vec<Block> {
    let mut b = vec![Block::Heading(format!(
        "{} under {} (stock {}), {} task(s), {} iterations",
        r.scenario, r.model, r.stock_policy, r.tasks, r.iterations
    ))];
    b.extend(costs(&r.costs, &r.profile, style));
    let mut t = Table::new(&[
        ("policy", Align::Left),
        ("ns/op", Align::Right),
        ("ops/s", Align::Right),
        ("speedup", Align::Right),
        ("ts share", Align::Right),
        ("coarse/op", Align::Right),
        ("counter/op", Align::Right),
        ("updates/op", Align::Right),
        ("resolution", Align::Right),
        ("equal succ", Align::Right),
        ("cross equal", Align::Right),
        ("cross inv", Align::Right),
        ("max stale", Align::Right),
    ]);
    for e in &r.estimates {
        let a = &e.accuracy;
        t.row(vec![
            e.policy.clone(),
            format!("{:.1}", e.ns_per_op),
            format!("{:.0}", e.ops_per_sec),
            format!("{:.3}x", e.speedup),
            pct(e.timestamp_share),
            format!("{:.3}", e.reads_per_op["coarse"]),
            format!("{:.3}", e.reads_per_op["counter"]),
            format!("{:.3}", e.inode_updates_per_op),
            stamped(a, |a| duration_short(a.resolution_ns)),
            stamped_or_dash(a, |a| pct(a.equal_successive_share)),
            stamped_or_dash(a, |a| pct(a.cross_inode_equal_share)),
            stamped_or_dash(a, |a| pct(a.cross_inode_inverted_share)),
            stamped_or_dash(a, |a| duration_short(a.max_staleness_ns)),
        ]);
    }
    b.push(Block::Table(t));
    if let Some(rows) = r.strace.as_ref().and_then(|s| s.by_filesystem.as_deref()) {
        b.extend(by_filesystem(r, rows));
    }
    for n in &r.notes {
        b.extend(md_gap(style));
        b.push(Block::Text(format!("note: {n}\n")));
    }
    b
}

/// `simulate --strace`'s per-filesystem rows: the multigrain cost of one pass of the program,
/// the counts behind it, and the prices of the filesystem's own terms.
fn by_filesystem(r: &ModelReport, rows: &[FsCost]) -> Vec<Block> {
    let mut headers = vec![
        ("fs", Align::Left),
        ("priced on", Align::Left),
        ("cost/pass", Align::Right),
        ("share", Align::Right),
        ("fine stamps", Align::Right),
        ("fine reads", Align::Right),
        ("floored", Align::Right),
        ("queries", Align::Right),
        ("updates", Align::Right),
        ("of them atime", Align::Right),
        ("of them first", Align::Right),
        ("fsync commits", Align::Right),
    ];
    headers.extend(Term::LISTED.iter().map(|t| (t.what(), Align::Right)));
    let mut t = Table::new(&headers);
    for row in rows {
        let c = &row.counts;
        let mut cells = vec![
            row.fs.clone(),
            format!("{} ({})", row.dir, row.mount_options.join(",")),
            duration_short(row.multigrain_ns_per_pass),
            format!("{:.3}%", row.share_of_pass * 100.0),
        ];
        cells.extend(
            [
                c.fine_stamps,
                c.fine_reads,
                c.floored_reads,
                c.queries,
                c.updates,
                c.atime_updates,
                c.first_updates,
                c.sync_commits,
            ]
            .map(|n| n.to_string()),
        );
        cells.extend(Term::LISTED.iter().map(|t| {
            row.prices_ns
                .get(t.field())
                .map_or_else(|| "-".into(), |&v| duration_short(v))
        }));
        t.row(cells);
    }
    vec![
        Block::Blank,
        Block::Heading(format!(
            "multigrain cost per pass on each filesystem the profile priced (the whole log on \
             it; {} less linux:coarse):",
            r.stock_policy
        )),
        Block::Table(t),
    ]
}

fn sweep(r: &SweepReport, style: Style) -> Vec<Block> {
    let mut b = vec![Block::Heading(format!(
        "{} under {}: speedup against {} (stock {})",
        r.scenario, r.model, r.parameter, r.stock_policy
    ))];
    b.extend(costs(&r.costs, &r.profile, style));
    let policies: Vec<&str> = r
        .points
        .first()
        .map(|p| p.estimates.iter().map(|e| e.policy.as_str()).collect())
        .unwrap_or_default();
    let mut headers = vec![(r.parameter.as_str(), Align::Right)];
    headers.extend(policies.iter().map(|p| (*p, Align::Right)));
    let mut t = Table::new(&headers);
    for p in &r.points {
        let mut row = vec![format!("{}", p.value)];
        row.extend(p.estimates.iter().map(|e| format!("{:.3}x", e.speedup)));
        t.row(row);
    }
    b.push(Block::Table(t));
    for be in &r.break_even {
        b.extend(md_gap(style));
        b.push(Block::Text(format!(
            "break-even ({:.2}x) for {}: {}\n",
            r.break_even_speedup,
            be.policy,
            match be.value {
                Some(v) => format!("{} = {}", r.parameter, duration_short(v)),
                None => "not reached in the swept range".into(),
            }
        )));
    }
    b
}

fn implied(r: &ImpliedReport) -> Vec<Block> {
    let reads = |m: &BTreeMap<String, f64>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let identified = |v: Option<f64>| v.map_or_else(|| "not identifiable".into(), duration_short);
    let mut lines = vec![
        format!(
            "solving for the counter read; known: coarse read {} ({}), tick {} ({}), \
             timestamp store {}",
            duration_short(r.costs.coarse_read_ns),
            r.costs.sources.coarse_read,
            duration_short(r.costs.tick_ns),
            r.costs.sources.tick,
            duration_short(r.costs.terms.default_ns(Term::Update)),
        ),
        format!("profile: {}", r.profile.origin),
        format!(
            "reads per op: stock {}; patched {}",
            reads(&r.stock_reads_per_op),
            reads(&r.patched_reads_per_op)
        ),
        format!(
            "implied precise read: {}; implied base: {}",
            identified(r.precise_read_ns),
            identified(r.base_ns_per_op)
        ),
        format!("verdict: {}", r.verdict),
    ];
    lines.extend(r.reasoning.iter().cloned());
    vec![
        Block::Heading(format!(
            "{} under {}: {} -> {} ops/s ({:.3}x), {} -> {}",
            r.scenario,
            r.model,
            r.stock_ops_per_sec,
            r.patched_ops_per_sec,
            r.published_speedup,
            r.stock_policy,
            r.patched_policy
        )),
        Block::list("  ", lines),
    ]
}

fn validation(v: &ValidationReport, style: Style) -> Vec<Block> {
    let mut t = Table::new(&[
        ("case", Align::Left),
        ("metric", Align::Left),
        ("predicted", Align::Right),
        ("measured", Align::Right),
        ("error", Align::Right),
        ("goal", Align::Left),
    ]);
    for r in &v.rows {
        let share = r.metric == "equal_successive_share";
        let value = |x: f64| {
            if share {
                format!("{:.4}%", x * 100.0)
            } else if r.metric == "speedup" {
                format!("{x:.3}x")
            } else {
                format!("{x:.0}")
            }
        };
        t.row(vec![
            r.case.clone(),
            r.metric.clone(),
            value(r.predicted),
            value(r.measured),
            if share {
                format!("{:+.4} pp", r.abs_error * 100.0)
            } else {
                match (r.error_pct.or(r.point_error_pct), r.noise_pct) {
                    (Some(e), Some(n)) => format!("{e:+.1}% ±{n:.1}%"),
                    (Some(e), None) => format!("{e:+.1}%"),
                    (None, _) => "n/a".into(),
                }
            },
            match (r.undecided, r.within_goal) {
                (true, _) => format!(
                    "undecided (noise ±{:.1}%)",
                    r.noise_pct.unwrap_or(f64::INFINITY)
                ),
                (false, true) => "ok".into(),
                (false, false) => "MISS".into(),
            },
        ]);
    }
    let mut lines: Vec<String> = v
        .rows
        .iter()
        .map(|r| format!("{}: {}", r.case, r.detail))
        .collect();
    lines.extend(v.notes.iter().map(|n| format!("note: {n}")));
    let mut b = vec![
        Block::Heading(format!("{} validation: {}", v.validation, v.scenario)),
        Block::Table(t),
    ];
    b.extend(md_gap(style));
    b.push(Block::list("  ", lines));
    b
}
