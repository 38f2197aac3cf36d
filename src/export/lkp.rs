//! The fixed-width layout of the 0-day test robot's (LKP's) mails, which kernel reviewers read
//! by eye and pattern-match, so it is kept as LKP prints it rather than through [`super::Table`]:
//!
//! ```text
//! base             new
//! ---------------- ---------------------------
//!          %stddev     %change         %stddev
//!              \          |                \
//!      28.10 ±  2%     +14.6%      32.20 ±  3%  vdso:realtime.cost_ns
//! ```
//!
//! Each value is the mean of the runs, right-aligned in ten columns; `± N%` (the relative
//! standard deviation) is printed only over 2%; `%change` is the new mean against the base.
//! Columns of this tool's own (LKP's decision, tscope's, a note) follow the metric name.

use crate::compare::lkp::Side;

/// One metric's line.
#[derive(Debug, Clone)]
pub struct Line {
    pub base: Option<Side>,
    pub new: Option<Side>,
    pub change_pct: Option<f64>,
    pub metric: String,
    /// The cells after the metric, under [`layout`]'s `beside` headings.
    pub beside: Vec<String>,
}

/// A mean as LKP prints it: two decimals, none from a million up.
fn value(x: f64) -> String {
    if x.abs() >= 1e6 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// `%change` as LKP prints it: one decimal, and from ±10000% on in exponent form
/// (`+1.1e+05%`), so the column keeps its width.
fn change(p: f64) -> String {
    if p.abs() < 1e4 {
        return format!("{p:+.1}%");
    }
    let exp = p.abs().log10().floor();
    let mantissa = p / 10f64.powf(exp);
    format!("{mantissa:+.1}e+{:02}%", exp as i32)
}

/// ` ±  N%` where the relative standard deviation is over 2%, else six blanks.
fn stddev(s: Option<&Side>) -> String {
    match s.and_then(Side::shown_stddev_pct) {
        Some(p) => format!(" ±{:>3}%", p.round() as u64),
        None => " ".repeat(6),
    }
}

/// One side's sixteen columns: the mean and its `± N%`.
fn side(s: Option<&Side>) -> String {
    let v = s.map_or(String::new(), |s| value(s.mean));
    format!("{v:>10}{}", stddev(s))
}

/// `s` cut to `n` characters and padded to `n`.
fn fit(s: &str, n: usize) -> String {
    let cut: String = s.chars().take(n).collect();
    format!("{cut:<n$}")
}

/// The table: the two inputs' labels over their columns (cut to LKP's widths), LKP's header
/// lines, then one line per metric with `beside` headings over the cells after it. Lines
/// carry no trailing blanks.
pub fn layout(base: &str, new: &str, beside: &[&str], lines: &[Line]) -> String {
    let metric_w = lines
        .iter()
        .map(|l| l.metric.chars().count())
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..beside.len())
        .map(|i| {
            lines
                .iter()
                .filter_map(|l| l.beside.get(i))
                .chain(std::iter::once(&beside[i].to_string()))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let cells = |cs: &[&str]| -> String {
        let last = cs.len().saturating_sub(1);
        cs.iter()
            .enumerate()
            .map(|(i, c)| {
                if i == last {
                    (*c).to_string()
                } else {
                    fit(c, widths[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = Vec::new();
    out.push(format!("{} {}", fit(base, 16), fit(new, 27)));
    out.push(format!("{} {}", "-".repeat(16), "-".repeat(27)));
    out.push(format!(
        "         %stddev     %change         %stddev  {}  {}",
        " ".repeat(metric_w),
        cells(beside)
    ));
    out.push("             \\          |                \\".into());
    for l in lines {
        let change = l.change_pct.map_or(String::new(), change);
        let beside: Vec<&str> = l.beside.iter().map(String::as_str).collect();
        out.push(format!(
            "{}{change:>11} {}  {}  {}",
            side(l.base.as_ref()),
            side(l.new.as_ref()),
            fit(&l.metric, metric_w),
            cells(&beside)
        ));
    }
    out.iter()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(samples: &[f64]) -> Option<Side> {
        Side::of(samples)
    }

    #[test]
    fn the_columns_fall_where_lkp_puts_them() {
        let lines = vec![
            Line {
                // Means 28.10 ± 2.49% and 32.20 ± 3.11%: both shown.
                base: side(&[27.4, 28.1, 28.8]),
                new: side(&[31.2, 32.2, 33.2]),
                change_pct: Some(14.59),
                metric: "vdso:realtime.cost_ns".into(),
                beside: vec!["increase".into(), "slower".into()],
            },
            Line {
                base: side(&[9.47, 9.47, 9.48]),
                new: side(&[9.47, 9.48, 9.47]),
                change_pct: Some(0.0),
                metric: "rdtsc.cost_ns".into(),
                beside: vec!["no change".into(), "no change".into()],
            },
        ];
        let t = layout("before", "after", &["LKP", "tscope"], &lines);
        let want = "\
before           after
---------------- ---------------------------
         %stddev     %change         %stddev                         LKP        tscope
             \\          |                \\
     28.10 ±  2%     +14.6%      32.20 ±  3%  vdso:realtime.cost_ns  increase   slower
      9.47            +0.0%       9.47        rdtsc.cost_ns          no change  no change
";
        assert_eq!(t, want, "\n{t}");
    }

    #[test]
    fn large_changes_keep_the_column() {
        assert_eq!(change(14.59), "+14.6%");
        assert_eq!(change(-88.84), "-88.8%");
        assert_eq!(change(9999.0), "+9999.0%");
        assert_eq!(change(113309.3), "+1.1e+05%");
        assert_eq!(change(-10000.0), "-1.0e+04%");
    }

    #[test]
    fn long_labels_are_cut_to_the_columns() {
        let t = layout(&"b".repeat(40), &"n".repeat(40), &[], &[]);
        let first = t.lines().next().unwrap();
        assert_eq!(first, format!("{} {}", "b".repeat(16), "n".repeat(27)));
    }
}
