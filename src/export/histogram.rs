//! The printed forms of `probe --histogram` ([`Histogram`]): in text, the layout of
//! PostgreSQL's `pg_test_timing` (the same headers, columns and widths, so the two outputs line
//! up); in Markdown, the same two tables; in CSV, one row per line of either.

use serde::Serialize;

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::probe::histogram::{Bucket, Histogram, Observed};

impl Render for Histogram {
    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, style: Style) -> Vec<Block> {
        if style.is_markdown() {
            markdown(self)
        } else {
            vec![Block::Text(text(self))]
        }
    }

    fn csv(&self) -> Table {
        let mut t = Table::plain(&["table", "ns", "percent", "running_percent", "count"]);
        let mut row = |table: &str, ns: u64, pct: f64, running: f64, count: u64| {
            t.row(vec![
                table.into(),
                ns.to_string(),
                pct.to_string(),
                running.to_string(),
                count.to_string(),
            ])
        };
        for b in &self.buckets {
            row("bucket_le", b.le_ns, b.percent, b.running_percent, b.count);
        }
        for o in &self.observed {
            row("observed", o.ns, o.percent, o.running_percent, o.count);
        }
        if let Some(l) = &self.largest {
            row("largest", l.ns, l.percent, l.running_percent, l.count);
        }
        t
    }
}

/// The run in pg_test_timing's words, then what tscope adds.
fn preamble(h: &Histogram) -> Vec<String> {
    let secs = h.duration_s;
    let mut v = vec![
        format!(
            "Testing timing overhead of {} for {secs} second{}.",
            h.source,
            if secs == 1.0 { "" } else { "s" }
        ),
        format!(
            "Average loop time including overhead: {:.2} ns",
            h.average_loop_ns
        ),
    ];
    v.extend(notes(h));
    v
}

/// tscope's lines beyond pg_test_timing's.
fn notes(h: &Histogram) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(hz) = h.tsc_hz {
        v.push(format!(
            "Ticks converted to ns at {:.2} MHz (calibrated over the run against CLOCK_MONOTONIC_RAW).",
            hz / 1e6
        ));
    }
    if h.emulate_trap {
        v.push("TSC reads trapped (--emulate-trap).".into());
    }
    if h.backwards > 0 {
        v.push(format!(
            "Detected clock going backwards {} times (largest step {} ns); not in the tables.",
            h.backwards,
            h.max_backwards_ns.unwrap_or(0)
        ));
    }
    if h.stopped {
        v.push(format!(
            "Interrupted after {:.2} s: the tables hold what was read until then.",
            h.wall_s
        ));
    }
    v
}

/// pg_test_timing's column widths: the first 8, the others 10, three spaces after the first.
fn line(first: &str, pct: &str, running: &str, count: &str) -> String {
    format!("{first:>8}   {pct:>10} {running:>10} {count:>10}\n")
}

fn text(h: &Histogram) -> String {
    let mut out = String::new();
    for l in preamble(h) {
        out += &l;
        out.push('\n');
    }
    out += "Histogram of timing durations:\n";
    out += &line("<= ns", "% of total", "running %", "count");
    for b in &h.buckets {
        out += &line(
            &b.le_ns.to_string(),
            &format!("{:.4}", b.percent),
            &format!("{:.4}", b.running_percent),
            &b.count.to_string(),
        );
    }
    out += &format!(
        "\nObserved timing durations up to {:.4}%:\n",
        h.cutoff_percent
    );
    out += &line("ns", "% of total", "running %", "count");
    let row = |o: &Observed| {
        line(
            &o.ns.to_string(),
            &format!("{:.4}", o.percent),
            &format!("{:.4}", o.running_percent),
            &o.count.to_string(),
        )
    };
    for o in &h.observed {
        out += &row(o);
    }
    if let Some(l) = largest_apart(h) {
        out += "...\n";
        out += &row(l);
    }
    out
}

/// The largest duration when the observed list stopped before it.
fn largest_apart(h: &Histogram) -> Option<&Observed> {
    h.largest
        .as_ref()
        .filter(|l| h.observed.last().is_none_or(|o| o.ns != l.ns))
}

fn markdown(h: &Histogram) -> Vec<Block> {
    let cols = |first: &'static str| {
        Table::new(&[
            (first, Align::Right),
            ("% of total", Align::Right),
            ("running %", Align::Right),
            ("count", Align::Right),
        ])
    };
    let cells = |ns: u64, pct: f64, running: f64, count: u64| {
        vec![
            ns.to_string(),
            format!("{pct:.4}"),
            format!("{running:.4}"),
            count.to_string(),
        ]
    };
    let mut buckets = cols("<= ns");
    for Bucket {
        le_ns,
        count,
        percent,
        running_percent,
    } in &h.buckets
    {
        buckets.row(cells(*le_ns, *percent, *running_percent, *count));
    }
    let mut observed = cols("ns");
    for o in &h.observed {
        observed.row(cells(o.ns, o.percent, o.running_percent, o.count));
    }
    if let Some(l) = largest_apart(h) {
        observed.row(vec![
            "...".into(),
            String::new(),
            String::new(),
            String::new(),
        ]);
        observed.row(cells(l.ns, l.percent, l.running_percent, l.count));
    }
    vec![
        Block::Heading(format!("Timing durations of {}", h.source)),
        Block::list("", preamble(h)),
        Block::Blank,
        Block::Heading("Histogram of timing durations".into()),
        Block::Table(buckets),
        Block::Blank,
        Block::Heading(format!(
            "Observed timing durations up to {:.4}%",
            h.cutoff_percent
        )),
        Block::Table(observed),
    ]
}
