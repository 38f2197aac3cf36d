//! Why a clocksource row of `vm bench` disagrees, in one sentence, from the kernel's counted
//! clocksource reads ([`crate::vm::bench::reads`]).

use super::compare::ZERO_READS;
use super::predict::ModelReads;
use crate::stats::Estimate;

/// Where a disagreeing clocksource row's difference comes from: the kernel's counted
/// clocksource reads against the model's (a read the model misses), or, when they match, the
/// change per counted read against the priced change of one read (`price`, measured
/// `price_where`: in the op's own path, or as a syscall): a read whose cost in the op differs
/// from the price. `None` without a model.
pub(crate) fn diagnosis(
    measured: &Estimate,
    model: Option<&ModelReads>,
    counted: Option<f64>,
    d_precise: Option<Estimate>,
    price_where: &str,
) -> Option<String> {
    let m = model?;
    let Some(n) = counted else {
        return Some(
            "the clocksource reads were not counted (--count-reads 0, or the read callback \
             could not be probed): no diagnosis"
                .into(),
        );
    };
    if (n - m.precise_per_op).abs() > 0.25 {
        return Some(format!(
            "the kernel reads the clocksource {n:.2} times per op, the model {:.2}: a read the \
             model does not count",
            m.precise_per_op
        ));
    }
    let d = d_precise?;
    if n < ZERO_READS {
        return Some(format!(
            "no clocksource read per op, counted or modelled, yet a change of {} ns: a \
             difference the clocksource does not explain",
            crate::fmt::ns(measured.point)
        ));
    }
    Some(format!(
        "the kernel reads the clocksource {n:.2} times per op, as the model says ({:.2}): the \
         change per read is {} ns [{}, {}] in the workload against {} ns measured {}, so \
         the read costs {} in the op than its price",
        m.precise_per_op,
        crate::fmt::ns(measured.point / n),
        crate::fmt::ns(measured.lower / n),
        crate::fmt::ns(measured.upper / n),
        crate::fmt::ns(d.point),
        price_where,
        if measured.point / n > d.point {
            "more"
        } else {
            "less"
        }
    ))
}
