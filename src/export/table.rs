//! A minimal table: aligned plain text, Markdown or CSV from the same rows.
//!
//! The human forms (text, Markdown) cut a cell past [`MAX_CELL_CHARS`] and say so in the cell
//! (`… (+N characters)`): a profile's 1 MB `cpu_model` or a 70,000-character label would
//! otherwise make every row of its column that wide (the other lines of a human form are cut
//! past [`MAX_LINE_CHARS`] the same way). CSV keeps every character (it is data).

/// The most characters a cell of a human form shows (after escaping); the rest is replaced by
/// a marker that counts it. Above any cell tscope fills from the machine (a kernel command
/// line is at most 2,048 bytes on x86-64).
pub const MAX_CELL_CHARS: usize = 4096;

/// The most characters a line of a human form outside a table shows (a heading, a list item,
/// a line of preformatted text): far above any note tscope writes.
pub const MAX_LINE_CHARS: usize = 8192;

/// `s` cut to [`MAX_CELL_CHARS`] characters, with a marker counting what was cut.
fn cut(s: &str) -> String {
    cut_to(s, MAX_CELL_CHARS)
}

/// `s` cut to `max` characters, with a marker counting what was cut: `… (+N characters)`.
pub(crate) fn cut_to(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => {
            let rest = s[at..].chars().count();
            format!("{}… (+{rest} characters)", &s[..at])
        }
    }
}

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// Rows of cells under a header.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[(&str, Align)]) -> Self {
        Table {
            headers: headers.iter().map(|(h, _)| h.to_string()).collect(),
            align: headers.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// A table for CSV only, where alignment means nothing.
    pub fn plain(headers: &[&str]) -> Self {
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            align: vec![Align::Left; headers.len()],
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The headers and rows as the human forms print them: control and bidi characters
    /// escaped ([`super::safe::cell`]), so no cell can split a row or drive the terminal, and
    /// each cell cut to [`MAX_CELL_CHARS`].
    fn human(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let safe = |cells: &[String]| -> Vec<String> {
            cells.iter().map(|c| cut(&super::safe::cell(c))).collect()
        };
        (
            safe(&self.headers),
            self.rows.iter().map(|r| safe(r)).collect(),
        )
    }

    fn widths(headers: &[String], rows: &[Vec<String>]) -> Vec<usize> {
        let mut w: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
        for r in rows {
            for (i, c) in r.iter().enumerate().take(w.len()) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        w
    }

    /// `text` padded to `width` characters. Padded by hand: a formatting width is at most
    /// 65,535, and a width past it panics.
    fn cell(&self, text: &str, i: usize, width: usize) -> String {
        let pad = " ".repeat(width.saturating_sub(text.chars().count()));
        match self.align[i] {
            Align::Left => format!("{text}{pad}"),
            Align::Right => format!("{pad}{text}"),
        }
    }

    /// Aligned plain text, two spaces between columns.
    pub fn text(&self) -> String {
        let (headers, rows) = self.human();
        let w = Self::widths(&headers, &rows);
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .take(w.len())
                .map(|(i, c)| self.cell(c, i, w[i]))
                .collect();
            parts.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(&headers);
        let rule: Vec<String> = w.iter().map(|&n| "-".repeat(n)).collect();
        out += &(rule.join("  ") + "\n");
        for r in &rows {
            out += &line(r);
        }
        out
    }

    /// CSV with the headers as the first record.
    pub fn csv(&self) -> String {
        let mut out = csv_line(&self.headers);
        for r in &self.rows {
            out += &csv_line(r);
        }
        out
    }

    /// A GitHub-flavoured Markdown table.
    pub fn markdown(&self) -> String {
        let (headers, rows) = self.human();
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n",
            headers
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let rule: Vec<&str> = self
            .align
            .iter()
            .map(|a| if *a == Align::Right { "---:" } else { "---" })
            .collect();
        out += &format!("| {} |\n", rule.join(" | "));
        for r in &rows {
            out += &format!(
                "| {} |\n",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        out
    }
}

/// One CSV record (RFC 4180 quoting) with a trailing newline.
fn csv_line<S: AsRef<str>>(cells: &[S]) -> String {
    let quoted: Vec<String> = cells
        .iter()
        .map(|c| {
            // Control and bidi characters become visible escapes: a CSV printed to a terminal
            // cannot drive it.
            let c = super::safe::cell(c.as_ref());
            if c.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.to_string()
            }
        })
        .collect();
    quoted.join(",") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_and_escapes() {
        let mut t = Table::new(&[("id", Align::Left), ("ns", Align::Right)]);
        t.row(vec!["rdtsc".into(), "9.5".into()]);
        t.row(vec!["a|b".into(), "245.0".into()]);
        assert_eq!(
            t.text(),
            "id        ns\n-----  -----\nrdtsc    9.5\na|b    245.0\n"
        );
        assert!(t.markdown().contains("| a\\|b | 245.0 |"));
        assert!(t.markdown().contains("| --- | ---: |"));
    }

    #[test]
    fn a_cell_past_the_limit_is_cut_with_a_marker_and_never_panics() {
        let mut t = Table::new(&[("id", Align::Left), ("model", Align::Right)]);
        // 70,000 characters: past the 65,535 a formatting width may be.
        t.row(vec!["x".into(), "m".repeat(70_000)]);
        // Each ESC becomes four characters once escaped.
        t.row(vec!["\u{1b}".repeat(16_400), "1".into()]);
        for out in [t.text(), t.markdown()] {
            assert!(out.contains("… (+65904 characters)"), "{}", &out[..600]);
            assert!(out.contains("… (+61504 characters)"));
            assert!(out
                .lines()
                .all(|l| l.chars().count() < 2 * MAX_CELL_CHARS + 100));
        }
        // CSV is data: every character kept.
        assert!(t.csv().contains(&"m".repeat(70_000)));
    }
}

#[cfg(test)]
mod csv_tests {
    #[test]
    fn csv_quotes_what_needs_it() {
        assert_eq!(
            super::csv_line(&["a", "b,c", "say \"hi\""]),
            "a,\"b,c\",\"say \"\"hi\"\"\"\n"
        );
    }
}
