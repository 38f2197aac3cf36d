//! A minimal table: aligned plain text, Markdown or CSV from the same rows.

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
    /// escaped ([`super::safe::cell`]), so no cell can split a row or drive the terminal.
    fn human(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let safe = |cells: &[String]| -> Vec<String> {
            cells
                .iter()
                .map(|c| super::safe::cell(c).into_owned())
                .collect()
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

    fn cell(&self, text: &str, i: usize, width: usize) -> String {
        match self.align[i] {
            Align::Left => format!("{text:<width$}"),
            Align::Right => format!("{text:>width$}"),
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
