//! The prices of the parts each pair isolates: the query (chmod-stat), the floored read
//! (chmod-stat-read16 against chmod-stat), a fine read's in-path excess
//! (chmod-stat-read16-same against chmod-stat-read1-same), and the arithmetic they share.

use super::{pair_sides, Costs, ModelId, PairResult, Pattern};
use crate::stats::Estimate;

/// `(Δ − dr − k·q) / d` with `Δ`'s and `q`'s intervals carried through (the widest).
pub(super) fn solve(delta: Estimate, dr: f64, k: f64, q: Estimate, d: f64) -> Estimate {
    Estimate {
        point: (delta.point - dr - k * q.point) / d,
        lower: (delta.lower - dr - k * q.upper) / d,
        upper: (delta.upper - dr - k * q.lower) / d,
    }
}

/// The query's price from a chmod-stat pair, or why there is none (in words).
pub(super) fn price_query(
    model: ModelId,
    costs: Costs,
    pair: &PairResult,
) -> Result<Estimate, String> {
    if pair.pattern != Pattern::Chmod {
        return Err(format!(
            "a {} pair does not price the query",
            pair.pattern_name
        ));
    }
    if !pair.multigrain_observed {
        return Err(format!(
            "the chmod-stat pair showed no multigrain ctimes on {}",
            pair.fs_type
        ));
    }
    let d = pair_sides(model, costs, pair)
        .map(|(q, c)| q - c)
        .expect("chmod-stat is a pattern");
    if d.updates.abs() >= 0.5 || d.queries < 0.5 {
        return Err(format!(
            "{model} counts {:+.3} updates and {:+.3} queries per iteration between the \
             chmod-stat sides, so the pair does not isolate the query",
            d.updates, d.queries
        ));
    }
    Ok(solve(
        pair.delta_ns,
        d.reads_ns,
        0.0,
        Estimate::exact(0.0),
        d.queries,
    ))
}

/// The floored read's price from a chmod-stat pair with reads after it (`floor_pair`) and
/// the chmod-stat pair (`chmod_pair`), or why there is none (in words): what the reads' Δ
/// adds beyond the model's reads, over the floored reads the model counts between them.
pub(super) fn price_floor(
    model: ModelId,
    costs: Costs,
    floor_pair: &PairResult,
    chmod_pair: &PairResult,
) -> Result<Estimate, String> {
    if !matches!(floor_pair.pattern, Pattern::ChmodRead { .. })
        || chmod_pair.pattern != Pattern::Chmod
    {
        return Err(format!(
            "{} against {} does not price the floored read",
            floor_pair.pattern_name, chmod_pair.pattern_name
        ));
    }
    if !floor_pair.multigrain_observed || !chmod_pair.multigrain_observed {
        return Err(format!(
            "the chmod-stat pairs showed no multigrain ctimes on {}",
            floor_pair.fs_type
        ));
    }
    let costs = Costs {
        floor_read_ns: 0.0,
        floor_read_ns_by_fs: Costs::UNIFORM,
        ..costs
    };
    let delta = |p: &PairResult| {
        pair_sides(model, costs, p)
            .map(|(q, c)| q - c)
            .expect("a chmod pattern")
    };
    let (dr, dc) = (delta(floor_pair), delta(chmod_pair));
    let floored = dr.floored - dc.floored;
    if floored < 1.0
        || (dr.updates - dc.updates).abs() >= 0.5
        || (dr.queries - dc.queries).abs() >= 0.5
    {
        return Err(format!(
            "{model} counts {floored:+.3} floored reads, {:+.3} updates and {:+.3} queries per \
             iteration between the two pairs' Δs, so the reads do not isolate the floor",
            dr.updates - dc.updates,
            dr.queries - dc.queries
        ));
    }
    let (f, c) = (floor_pair.delta_ns, chmod_pair.delta_ns);
    let extra = dr.reads_ns - dc.reads_ns;
    Ok(Estimate {
        point: (f.point - c.point - extra) / floored,
        lower: (f.lower - c.upper - extra) / floored,
        upper: (f.upper - c.lower - extra) / floored,
    })
}

/// A fine read's in-path excess from the chmod-stat pair with 16 reads of the same file
/// (`fine_pair`) against the one with 1 (`base_pair`), or why there is none (in words): both
/// move the atime once and query once, so between them are only reads: the Δs' difference
/// less the model's reads between them (at the syscall pair's price, the floored ones at
/// `floor`), over the fine reads the model counts between them.
pub(super) fn price_excess(
    model: ModelId,
    costs: Costs,
    fine_pair: &PairResult,
    base_pair: &PairResult,
    floor: Option<Estimate>,
) -> Result<Estimate, String> {
    let reads = |p: &PairResult| match p.pattern {
        Pattern::ChmodReadSame { reads } => Some(reads),
        _ => None,
    };
    if !matches!((reads(fine_pair), reads(base_pair)), (Some(a), Some(b)) if a > b) {
        return Err(format!(
            "{} against {} does not price the in-path excess",
            fine_pair.pattern_name, base_pair.pattern_name
        ));
    }
    if !fine_pair.multigrain_observed || !base_pair.multigrain_observed {
        return Err(format!(
            "the pairs with reads of the same file showed no multigrain ctimes on {}",
            fine_pair.fs_type
        ));
    }
    let fs = fine_pair.fs_kind() as usize;
    let mut costs = Costs {
        fine_excess_ns: 0.0,
        fine_excess_ns_by_fs: Costs::UNIFORM,
        ..costs
    };
    if let Some(f) = floor {
        costs.floor_read_ns_by_fs[fs] = Some(f.point);
    }
    let delta = |p: &PairResult| {
        pair_sides(model, costs, p)
            .map(|(q, c)| q - c)
            .expect("a chmod pattern")
    };
    let d = delta(fine_pair) - delta(base_pair);
    if d.fine_reads < 4.0 || d.updates.abs() >= 0.05 || d.queries.abs() >= 0.05 {
        return Err(format!(
            "{model} counts {:+.3} fine reads, {:+.3} updates and {:+.3} queries per iteration \
             between the two pairs' Δs, so the reads do not isolate the fine read",
            d.fine_reads, d.updates, d.queries
        ));
    }
    let (s, b) = (fine_pair.delta_ns, base_pair.delta_ns);
    Ok(Estimate {
        point: (s.point - b.point - d.reads_ns) / d.fine_reads,
        lower: (s.lower - b.upper - d.reads_ns) / d.fine_reads,
        upper: (s.upper - b.lower - d.reads_ns) / d.fine_reads,
    })
}
