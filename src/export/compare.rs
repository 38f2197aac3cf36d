//! Exporters for a [`Comparison`].

use super::probe::{estimate, ns};
use super::table::{Align, Table};
use super::{csv_line, Exporter, Format};
use crate::compare::Comparison;

/// A comparison, ready to print.
#[derive(Debug)]
pub struct CompareReport<'a>(pub &'a Comparison);

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

impl CompareReport<'_> {
    fn machines(&self) -> Table {
        let mut t = Table::new(&[
            ("input", Align::Left),
            ("cpu", Align::Left),
            ("kernel", Align::Left),
            ("clocksource", Align::Left),
            ("hypervisor", Align::Left),
            ("precise_read_ns", Align::Right),
        ]);
        for c in &self.0.columns {
            let hv = c.hypervisor.clone().unwrap_or_else(|| "none".into());
            t.row(vec![
                c.label.clone(),
                c.cpu.clone().unwrap_or_default(),
                c.kernel.clone().unwrap_or_default(),
                c.clocksource.clone().unwrap_or_default(),
                if c.emulate_trap {
                    format!("{hv} (+emulated trap)")
                } else {
                    hv
                },
                opt(c.precise_read_ns.as_ref(), estimate),
            ]);
        }
        t
    }

    fn sources(&self) -> Table {
        let labels: Vec<String> = self.0.columns.iter().map(|c| c.label.clone()).collect();
        let mut heads: Vec<(String, Align)> = vec![("source".into(), Align::Left)];
        for (i, l) in labels.iter().enumerate() {
            heads.push((format!("{l} ns"), Align::Right));
            if i > 0 {
                heads.push((format!("{l}/{}", labels[0]), Align::Right));
            }
        }
        let refs: Vec<(&str, Align)> = heads.iter().map(|(h, a)| (h.as_str(), *a)).collect();
        let mut t = Table::new(&refs);
        for r in &self.0.sources {
            let mut cells = vec![r.id.clone()];
            for (i, c) in r.cost_ns.iter().enumerate() {
                cells.push(opt(c.as_ref(), |e| ns(e.point)));
                if i > 0 {
                    cells.push(opt(r.ratio_to_first[i - 1], |x| format!("{x:.2}×")));
                }
            }
            t.row(cells);
        }
        t
    }

    fn verdicts(&self) -> Table {
        let mut heads: Vec<(String, Align)> = vec![("verdict".into(), Align::Left)];
        heads.extend(
            self.0
                .columns
                .iter()
                .map(|c| (c.label.clone(), Align::Left)),
        );
        heads.push(("".into(), Align::Left));
        let refs: Vec<(&str, Align)> = heads.iter().map(|(h, a)| (h.as_str(), *a)).collect();
        let mut t = Table::new(&refs);
        for v in &self.0.verdicts {
            let mut cells = vec![v.name.clone()];
            cells.extend(v.holds.iter().map(|h| match h {
                Some(true) => "YES".to_string(),
                Some(false) => "no".to_string(),
                None => "-".to_string(),
            }));
            cells.push(if v.differs {
                "≠ differs".into()
            } else {
                String::new()
            });
            t.row(cells);
        }
        t
    }

    fn csv(&self) -> String {
        let mut out = String::new();
        let mut head = vec!["source".to_string()];
        for (i, c) in self.0.columns.iter().enumerate() {
            head.push(format!("{}_ns", c.label));
            head.push(format!("{}_lower_ns", c.label));
            head.push(format!("{}_upper_ns", c.label));
            if i > 0 {
                head.push(format!("{}_ratio", c.label));
            }
        }
        out += &csv_line(&head);
        for r in &self.0.sources {
            let mut cells = vec![r.id.clone()];
            for (i, c) in r.cost_ns.iter().enumerate() {
                let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x}"));
                cells.push(f(c.map(|e| e.point)));
                cells.push(f(c.map(|e| e.lower)));
                cells.push(f(c.map(|e| e.upper)));
                if i > 0 {
                    cells.push(f(r.ratio_to_first[i - 1]));
                }
            }
            out += &csv_line(&cells);
        }
        out
    }
}

impl Exporter for CompareReport<'_> {
    fn export(&self, format: Format) -> anyhow::Result<Vec<u8>> {
        let out = match format {
            Format::Json => return super::json(self.0),
            Format::Csv => self.csv(),
            Format::Table => {
                let mut s = format!("{}\n{}", self.machines().text(), self.sources().text());
                if !self.0.verdicts.is_empty() {
                    s += &format!("\n{}", self.verdicts().text());
                }
                s
            }
            Format::Markdown => {
                let mut s = format!(
                    "{}\n{}",
                    self.machines().markdown(),
                    self.sources().markdown()
                );
                if !self.0.verdicts.is_empty() {
                    s += &format!("\n{}", self.verdicts().markdown());
                }
                s
            }
        };
        Ok(out.into_bytes())
    }
}
