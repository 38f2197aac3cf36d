//! Number formatting for every printed form: one place for how a nanosecond figure, a rate or a
//! size reads, so two commands never print the same quantity two ways by accident.
//!
//! There are three duration styles on purpose, each a printed contract: [`duration`] (`2.50 µs`,
//! three significant decimals, probe, detect, compare and the report), [`duration_short`]
//! (`2.5 us`, trailing zeros dropped, simulate) and [`duration_label`] (`2.5 µs`, the charts). This module imports nothing from the crate
//! but [`Estimate`], so a domain module that must put a figure into a result string (the
//! `detail` of a validation row) can use it too; it sits beside `stats`, below both `export`
//! and the domain.

mod locale;
pub mod safe;

pub use locale::{for_locale, to_ascii, utf8_output};

use crate::stats::Estimate;

/// A number of nanoseconds with precision by magnitude: `9.52`, `245.3`, `1234`.
pub fn ns(v: f64) -> String {
    if v.abs() < 10.0 {
        format!("{v:.2}")
    } else if v.abs() < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A table cell of nanoseconds, `-` when absent: `9.5`, `153` (one decimal below 100).
pub fn ns_cell(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
    }
}

/// A duration in ns, in the unit that suits it: `1.234 s`, `4.000 ms`, `2.50 µs`, `9.52 ns`.
pub fn duration(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.3} s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} µs", v / 1e3)
    } else {
        format!("{} ns", ns(v))
    }
}

/// A duration in ns, short: `1.5 us`, `4 ms`, `1 s`, `16.37 ns`; `n/a` when not finite.
pub fn duration_short(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".into();
    }
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "us")
    } else {
        (ns, "ns")
    };
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {unit}")
}

/// A duration in ns for a chart (an axis tick, a bar's value): an SI unit and no needless
/// digits: `0.5 ns`, `25 ns`, `1.2 µs`,
/// `10 µs`, `3 ms`.
pub fn duration_label(v: f64) -> String {
    let (x, unit) = if v >= 1e6 {
        (v / 1e6, "ms")
    } else if v >= 1e3 {
        (v / 1e3, "µs")
    } else {
        (v, "ns")
    };
    let digits = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{x:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    format!("{s} {unit}")
}

/// An estimate in ns: `point [lower, upper]`.
pub fn estimate(e: &Estimate) -> String {
    format!("{} [{}, {}]", ns(e.point), ns(e.lower), ns(e.upper))
}

/// A rate with thousands separators (`2,413,901`).
pub fn rate(v: f64) -> String {
    thousands(v.round() as u64)
}

/// A count with thousands separators: `4500000` as `4,500,000`.
pub fn thousands(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size in the largest binary unit that divides it: `16 GiB`, `1 KiB`, `1000 B`.
pub fn bytes(n: u64) -> String {
    if n >= 1 << 30 && n % (1 << 30) == 0 {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n % (1 << 10) == 0 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// A share as a percentage with one decimal: `12.5%`.
pub fn pct(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// A percentage (not a share) for a chart axis: `0.1%`, `5%`, `1,000%`.
pub fn pct_label(v: f64) -> String {
    if v < 1.0 {
        format!("{v:.1}%")
    } else {
        format!("{}%", thousands(v.round() as u64))
    }
}

/// A frequency in MHz with three decimals: `2299.855 MHz`.
pub fn mhz(hz: f64) -> String {
    format!("{:.3} MHz", hz / 1e6)
}

/// `f(v)`, or `-` when there is no value.
pub fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// A number as CSV writes it (full precision), empty when absent.
pub fn csv_num(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x}"))
}

/// A number in an error message, compact: shortest round-trip digits, in exponent form past
/// 1e15 or below 1e-6 (`-1e308`, not 309 digits): `5`, `0.25`, `1e308`, `NaN`.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if v.is_finite() && a != 0.0 && !(1e-6..1e15).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_durations_drop_trailing_zeros() {
        assert_eq!(duration_short(4e6), "4 ms");
        assert_eq!(duration_short(16.37), "16.37 ns");
        assert_eq!(duration_short(1500.0), "1.5 us");
        assert_eq!(duration_short(1e9), "1 s");
        assert_eq!(duration_short(f64::NAN), "n/a");
    }

    #[test]
    fn durations_keep_their_precision() {
        assert_eq!(duration(9.523), "9.52 ns");
        assert_eq!(duration(2500.0), "2.50 µs");
        assert_eq!(duration(4e6), "4.000 ms");
        assert_eq!(ns(245.34), "245.3");
        assert_eq!(ns(1234.5), "1234");
        assert_eq!(ns_cell(Some(153.2)), "153");
        assert_eq!(ns_cell(Some(9.94)), "9.9");
        assert_eq!(ns_cell(None), "-");
    }

    #[test]
    fn chart_durations_have_units_and_no_needless_digits() {
        assert_eq!(duration_label(0.5), "0.5 ns");
        assert_eq!(duration_label(10.0), "10 ns");
        assert_eq!(duration_label(25.26), "25.3 ns");
        assert_eq!(duration_label(1000.0), "1 µs");
        assert_eq!(duration_label(10_865.0), "10.9 µs");
        assert_eq!(duration_label(3e6), "3 ms");
    }

    #[test]
    fn chart_percentages_use_separators_above_one() {
        assert_eq!(pct_label(0.1), "0.1%");
        assert_eq!(pct_label(5.0), "5%");
        assert_eq!(pct_label(1000.0), "1,000%");
    }

    #[test]
    fn rates_get_thousands_separators() {
        assert_eq!(rate(2_413_901.2), "2,413,901");
        assert_eq!(rate(999.0), "999");
        assert_eq!(rate(1000.0), "1,000");
        assert_eq!(rate(0.0), "0");
    }

    #[test]
    fn numbers_in_messages_are_compact() {
        assert_eq!(num(-1e308), "-1e308");
        assert_eq!(num(1.5e-9), "1.5e-9");
        assert_eq!(num(0.25), "0.25");
        assert_eq!(num(-5.0), "-5");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(f64::NAN), "NaN");
        assert_eq!(num(f64::INFINITY), "inf");
    }

    #[test]
    fn sizes_print_in_binary_units() {
        assert_eq!(bytes(16 << 30), "16 GiB");
        assert_eq!(bytes(1024), "1 KiB");
        assert_eq!(bytes(1000), "1000 B");
    }
}
