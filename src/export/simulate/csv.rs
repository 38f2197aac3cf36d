//! The `--csv` form of a `simulate` [`Output`](crate::sim::result::Output): one table of plain
//! numbers per kind of output, full precision, the JSON field names as headers
//! (docs/schema.md). The per-filesystem rows of an strace log are left out: their counts and
//! prices are a nested record per row, which the JSON carries.

use crate::export::table::Table;
use crate::fmt::csv_num;
use crate::sim::result::{ImpliedReport, ModelReport, SweepReport, ValidationReport};

pub fn models(v: &[ModelReport]) -> Table {
    let mut t = Table::plain(&[
        "scenario",
        "model",
        "policy",
        "stock",
        "ns_per_op",
        "ops_per_sec",
        "speedup",
        "timestamp_share",
        "coarse_reads_per_op",
        "counter_reads_per_op",
        "inode_updates_per_op",
        "resolution_ns",
        "equal_successive_share",
        "cross_inode_equal_share",
        "cross_inode_inverted_share",
        "max_staleness_ns",
        "modifications_per_op",
    ]);
    for r in v {
        for e in &r.estimates {
            let a = &e.accuracy;
            t.row(vec![
                r.scenario.clone(),
                r.model.clone(),
                e.policy.clone(),
                e.stock.to_string(),
                e.ns_per_op.to_string(),
                e.ops_per_sec.to_string(),
                e.speedup.to_string(),
                e.timestamp_share.to_string(),
                csv_num(e.reads_per_op.get("coarse").copied()),
                csv_num(e.reads_per_op.get("counter").copied()),
                e.inode_updates_per_op.to_string(),
                a.resolution_ns.to_string(),
                a.equal_successive_share.to_string(),
                a.cross_inode_equal_share.to_string(),
                a.cross_inode_inverted_share.to_string(),
                a.max_staleness_ns.to_string(),
                a.modifications_per_op.to_string(),
            ]);
        }
    }
    t
}

pub fn sweeps(v: &[SweepReport]) -> Table {
    let mut t = Table::plain(&[
        "scenario",
        "model",
        "parameter",
        "value",
        "policy",
        "ns_per_op",
        "speedup",
    ]);
    for r in v {
        for p in &r.points {
            for e in &p.estimates {
                t.row(vec![
                    r.scenario.clone(),
                    r.model.clone(),
                    r.parameter.clone(),
                    p.value.to_string(),
                    e.policy.clone(),
                    e.ns_per_op.to_string(),
                    e.speedup.to_string(),
                ]);
            }
        }
    }
    t
}

pub fn implied(v: &[ImpliedReport]) -> Table {
    let mut t = Table::plain(&[
        "scenario",
        "model",
        "stock_policy",
        "patched_policy",
        "stock_ops_per_sec",
        "patched_ops_per_sec",
        "published_speedup",
        "precise_read_ns",
        "base_ns_per_op",
        "verdict",
    ]);
    for r in v {
        t.row(vec![
            r.scenario.clone(),
            r.model.clone(),
            r.stock_policy.clone(),
            r.patched_policy.clone(),
            r.stock_ops_per_sec.to_string(),
            r.patched_ops_per_sec.to_string(),
            r.published_speedup.to_string(),
            csv_num(r.precise_read_ns),
            csv_num(r.base_ns_per_op),
            r.verdict.clone(),
        ]);
    }
    t
}

pub fn validation(v: &ValidationReport) -> Table {
    let mut t = Table::plain(&[
        "validation",
        "scenario",
        "case",
        "metric",
        "predicted",
        "measured",
        "error_pct",
        "abs_error",
        "within_goal",
        "detail",
        "noise_pct",
        "undecided",
    ]);
    for r in &v.rows {
        t.row(vec![
            v.validation.clone(),
            v.scenario.clone(),
            r.case.clone(),
            r.metric.clone(),
            r.predicted.to_string(),
            r.measured.to_string(),
            csv_num(r.error_pct),
            r.abs_error.to_string(),
            r.within_goal.to_string(),
            r.detail.clone(),
            csv_num(r.noise_pct),
            r.undecided.to_string(),
        ]);
    }
    t
}
