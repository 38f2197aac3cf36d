//! The printed form of [`CountReport`]: one row per kernel × file system × workload × function
//! (and syscall), the kernel's count per op beside the model's, then notes on the kernels.

use serde::Serialize;

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::vm::boot::kconfig::HzSource;
use crate::vm::count::CountReport;

impl Render for CountReport {
    fn kind(&self) -> Option<crate::input::Kind> {
        Some(crate::input::Kind::VmCount)
    }

    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, _: Style) -> Vec<Block> {
        let mut notes = vec![format!(
            "{} iterations per workload, less a zero-iteration baseline; accel {}{}",
            self.iterations,
            self.accel.used.name(),
            if self.accel.emulation {
                " (emulation: coarse-clock counts that depend on the tick come out fractional)"
            } else {
                ""
            }
        )];
        for k in &self.kernels {
            let rel = k.kernel_release.as_deref().unwrap_or("?");
            let hz = match k.hz_source {
                _ if !k.hz_known => " (assumed)".to_string(),
                HzSource::Unrecorded | HzSource::Config => String::new(),
                from => format!(" from the {from}"),
            };
            let state = match &k.error {
                Some(e) => format!("failed: {e}"),
                None => format!("{:.1} s", k.wall_s),
            };
            notes.push(format!(
                "{} ({rel}, HZ {}{hz}): {state}",
                k.kernel_package, k.hz
            ));
            for e in &k.guest_errors {
                notes.push(format!("{}: in the guest: {e}", k.kernel_package));
            }
            if let Some(cs) = &k.clocksource {
                let probe = match &k.clocksource_probe_error {
                    Some(e) => format!(" (its read callback not probed: {e})"),
                    None => String::new(),
                };
                notes.push(format!("{}: clocksource {cs}{probe}", k.kernel_package));
            }
            if let Some(m) = &k.multigrain_counters {
                notes.push(format!("{}: multigrain counters {m}", k.kernel_package));
            }
        }
        let n = self.mismatches().count();
        notes.push(format!(
            "{n} row(s) differ from the model beyond the tolerance (0.05 per op, 0.25 where the kernel's count is fractional)"
        ));
        if self.stopped {
            notes.push("interrupted: the rows are what was counted before the signal".into());
        }
        let mut blocks = vec![Block::Table(table(self, false)), Block::Blank];
        if !self.accuracy.is_empty() {
            blocks.push(Block::Heading(
                "equal successive mtimes (write-stat: fstat after each write)".into(),
            ));
            blocks.push(Block::Table(accuracy(self)));
            blocks.push(Block::Blank);
        }
        blocks.push(Block::list("", notes));
        blocks
    }

    fn csv(&self) -> Table {
        table(self, true)
    }
}

fn num(v: Option<f64>, raw: bool) -> String {
    match v {
        Some(x) if raw => x.to_string(),
        Some(x) => format!("{x:.3}"),
        None if raw => String::new(),
        None => "absent".into(),
    }
}

fn table(r: &CountReport, raw: bool) -> Table {
    let mut t = Table::new(&[
        ("kernel", Align::Left),
        ("fs", Align::Left),
        ("workload", Align::Left),
        ("function", Align::Left),
        ("kernel/op", Align::Right),
        ("model", Align::Left),
        ("model/op", Align::Right),
        ("difference", Align::Right),
        ("guest µs/op", Align::Right),
        ("agrees", Align::Left),
    ]);
    for row in &r.rows {
        let model = num(row.model_per_op, raw);
        t.row(vec![
            row.kernel_release.clone(),
            row.fs.to_string(),
            row.workload.as_str().to_string(),
            row.function.clone(),
            num(row.kernel_per_op, raw),
            row.model.clone(),
            if row.model_per_op.is_none() && !raw {
                "-".into()
            } else {
                model
            },
            match row.difference {
                Some(d) if raw => d.to_string(),
                Some(d) => format!("{d:+.3}"),
                None => String::new(),
            },
            if raw {
                (row.guest_ns_per_op / 1e3).to_string()
            } else {
                format!("{:.1}", row.guest_ns_per_op / 1e3)
            },
            match row.agrees {
                Some(true) => "yes".into(),
                Some(false) => "NO".into(),
                None => String::new(),
            },
        ]);
    }
    t
}

fn accuracy(r: &CountReport) -> Table {
    let mut t = Table::new(&[
        ("kernel", Align::Left),
        ("fs", Align::Left),
        ("workload", Align::Left),
        ("equal share", Align::Right),
        ("model", Align::Left),
        ("model share", Align::Right),
    ]);
    for a in &r.accuracy {
        t.row(vec![
            a.kernel_release.clone(),
            a.fs.to_string(),
            a.workload.as_str().to_string(),
            format!("{:.3}", a.equal_successive_share),
            a.model.clone(),
            a.model_equal_successive_share
                .map_or_else(|| "-".into(), |v| format!("{v:.3}")),
        ]);
    }
    t
}
