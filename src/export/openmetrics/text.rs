//! The exposition itself: metric families, samples, escaping and number formatting, knowing
//! nothing of tscope's results (`openmetrics.rs` fills it).
//!
//! What is written is the Prometheus text format (version 0.0.4) kept to what the OpenMetrics
//! 1.0 text format also accepts, ending in `# EOF`:
//! - gauges only: no counters, so no `_total` names, and no timestamps on samples;
//! - `# HELP` and `# TYPE` once per family, before its samples, and a family's samples
//!   together; no empty lines;
//! - HELP texts free of backslashes and double quotes (the two formats escape them
//!   differently), checked by a test;
//! - label values escaped as both require: backslash, double quote and line feed;
//! - numbers as both parse them (`0.000021`, `2.1e-8`); a value that is not finite is left out,
//!   as a series that was not measured.
//!
//! The Prometheus parser (node_exporter's textfile collector, `promtool check metrics`) reads
//! `# EOF` as a comment; an OpenMetrics parser requires it as the last line.

use std::fmt::Write;

/// One metric family: a name (base units, snake_case, `tscope_` first) and its HELP text.
/// Every family is a gauge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
}

/// A metrics document being built: samples grouped by family, the families in the order of
/// their first sample; every sample carries `command`.
#[derive(Debug)]
pub struct Exposition {
    command: &'static str,
    families: Vec<(Family, Vec<String>)>,
}

impl Exposition {
    /// An empty document whose every series will carry `command="<command>"`.
    pub fn new(command: &'static str) -> Exposition {
        Exposition {
            command,
            families: Vec::new(),
        }
    }

    /// Adds one sample of `family`. A label whose value is empty is left out (Prometheus reads
    /// an empty label as an absent one); a value that is not finite leaves the sample out.
    pub fn sample(&mut self, family: Family, labels: &[(&str, &str)], value: f64) {
        if !value.is_finite() {
            return;
        }
        let mut line = format!("{}{{command=\"{}\"", family.name, escape(self.command));
        for (k, v) in labels.iter().filter(|(_, v)| !v.is_empty()) {
            let _ = write!(line, ",{k}=\"{}\"", escape(v));
        }
        let _ = write!(line, "}} {}", number(value));
        match self
            .families
            .iter_mut()
            .find(|(f, _)| f.name == family.name)
        {
            Some((_, lines)) => lines.push(line),
            None => self.families.push((family, vec![line])),
        }
    }

    /// The document: each family's HELP, TYPE and samples, then `# EOF`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (f, lines) in &self.families {
            let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
            let _ = writeln!(out, "# TYPE {} gauge", f.name);
            for l in lines {
                out += l;
                out.push('\n');
            }
        }
        out += "# EOF\n";
        out
    }
}

/// A label value escaped as both text formats require: `\` → `\\`, `"` → `\"`, a line feed →
/// `\n`; everything else (UTF-8 included) as is.
pub fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    // Control and bidi characters first become visible escapes (a terminal showing the
    // metrics cannot be driven by a label), then the format's own escapes.
    for c in crate::fmt::safe::text(v).chars() {
        match c {
            '\\' => out += "\\\\",
            '"' => out += "\\\"",
            '\n' => out += "\\n",
            c => out.push(c),
        }
    }
    out
}

/// A finite number as both formats parse it, shortest round-trip digits: plain decimals from
/// 1e-4 to below 1e15 (and 0), exponent notation outside.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if (1e-4..1e15).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// `true`/`false` for a label.
pub fn flag(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Family = Family {
        name: "tscope_a_seconds",
        help: "A.",
    };
    const B: Family = Family {
        name: "tscope_b_info",
        help: "B.",
    };

    #[test]
    fn families_group_their_samples_and_end_in_eof() {
        let mut x = Exposition::new("probe");
        x.sample(A, &[("source", "rdtsc")], 8.5e-9);
        x.sample(B, &[("cpu", "x"), ("hz", "")], 1.0);
        x.sample(A, &[("source", "vdso:monotonic")], 2.1e-8);
        x.sample(A, &[("source", "nan")], f64::NAN);
        assert_eq!(
            x.text(),
            "# HELP tscope_a_seconds A.\n# TYPE tscope_a_seconds gauge\n\
             tscope_a_seconds{command=\"probe\",source=\"rdtsc\"} 8.5e-9\n\
             tscope_a_seconds{command=\"probe\",source=\"vdso:monotonic\"} 2.1e-8\n\
             # HELP tscope_b_info B.\n# TYPE tscope_b_info gauge\n\
             tscope_b_info{command=\"probe\",cpu=\"x\"} 1\n# EOF\n"
        );
        assert_eq!(Exposition::new("detect").text(), "# EOF\n");
    }

    #[test]
    fn label_values_and_numbers_are_written_as_both_formats_read_them() {
        assert_eq!(escape("a\\b\"c\nd é"), "a\\\\b\\\"c\\nd é");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(1.0), "1");
        assert_eq!(number(2.5e-5), "2.5e-5");
        assert_eq!(number(0.000123), "0.000123");
        assert_eq!(number(1_796_000_000.0), "1796000000");
        assert_eq!(number(1.003756517746711), "1.003756517746711");
        for v in [1e-9, 3.3e-7, 0.5, 12.25, 1e20, -4.5e-6] {
            assert_eq!(number(v).parse::<f64>().unwrap(), v, "{v} round-trips");
        }
    }
}
