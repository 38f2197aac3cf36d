//! The printed forms of the `vm` results: [`Exits`] (one row per exit kind) and
//! [`GuestMatrix`] (the sources and verdicts as rows, host and guests as columns, then notes on
//! the accelerator and on guests that failed or ignored their clocksource).

use serde::Serialize;

use super::table::{Align, Table};
use super::{Block, Render, Style};
use crate::fmt::ns_cell;
use crate::vm::exits::Exits;
use crate::vm::matrix::result::{Column, GuestMatrix, MATRIX_SOURCES, MATRIX_VERDICTS};

impl Render for Exits {
    fn kind(&self) -> Option<crate::input::Kind> {
        Some(crate::input::Kind::VmExits)
    }

    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, _: Style) -> Vec<Block> {
        let head = format!(
            "/dev/kvm: {}\n{} iterations × {} runs (fastest of each kind), TSC {:.3} MHz, empty loop {:.1} ticks subtracted\n",
            self.backend,
            self.iterations,
            self.runs,
            self.tsc_hz / 1e6,
            self.loop_ticks
        );
        vec![Block::Text(head), Block::Blank, Block::Table(exits(self))]
    }

    fn csv(&self) -> Table {
        exits(self)
    }
}

fn exits(e: &Exits) -> Table {
    let mut t = Table::new(&[
        ("exit kind", Align::Left),
        ("handled in", Align::Left),
        ("ticks", Align::Right),
        ("ns", Align::Right),
        ("note", Align::Left),
    ]);
    for k in &e.kinds {
        t.row(vec![
            k.name.clone(),
            k.exits_to.clone(),
            k.ticks.map_or("-".into(), |v| format!("{v:.0}")),
            k.ns.map_or("-".into(), |v| format!("{v:.1}")),
            k.error.clone().unwrap_or_default(),
        ]);
    }
    t
}

impl Render for GuestMatrix {
    fn kind(&self) -> Option<crate::input::Kind> {
        Some(crate::input::Kind::VmGuest)
    }

    fn json(&self) -> impl Serialize + '_ {
        self
    }

    fn blocks(&self, _: Style) -> Vec<Block> {
        let notes = notes(self).lines().map(str::to_string).collect();
        vec![
            Block::Table(matrix(self)),
            Block::Blank,
            Block::list("", notes),
        ]
    }

    fn csv(&self) -> Table {
        matrix(self)
    }
}

/// The host's column (if measured), then each guest's.
fn columns(m: &GuestMatrix) -> Vec<&Column> {
    m.host
        .iter()
        .chain(m.guests.iter().map(|g| &g.column))
        .collect()
}

fn matrix(m: &GuestMatrix) -> Table {
    let cols = columns(m);
    let mut headers: Vec<(&str, Align)> = vec![("", Align::Left)];
    headers.extend(cols.iter().map(|c| (c.label.as_str(), Align::Right)));
    let mut t = Table::new(&headers);
    let host_cells = usize::from(m.host.is_some());
    let mut row = |name: &str, host: Vec<String>, guests: Vec<String>| {
        let mut r = vec![name.to_string()];
        r.extend(host.into_iter().take(host_cells));
        r.extend(guests);
        t.row(r);
    };
    let host_cs = || {
        m.host
            .iter()
            .map(|h| h.clocksource.current.clone().unwrap_or("?".into()))
            .collect()
    };
    row(
        "requested clocksource",
        vec!["-".into()],
        m.guests
            .iter()
            .map(|g| g.requested_clocksource.to_string())
            .collect(),
    );
    row(
        "actual clocksource",
        host_cs(),
        m.guests
            .iter()
            .map(|g| {
                let cur = g.column.clocksource.current.clone().unwrap_or("?".into());
                if g.clocksource_honoured == Some(false) {
                    format!("{cur} (!)")
                } else {
                    cur
                }
            })
            .collect(),
    );
    row(
        "status",
        vec!["measured".into()],
        m.guests
            .iter()
            .map(|g| {
                format!(
                    "{} {:.1}s",
                    serde_json::to_value(g.status)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    g.wall_s
                )
            })
            .collect(),
    );
    for id in MATRIX_SOURCES {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| ns_cell(c.costs_ns.get(id).copied().flatten()))
            .collect();
        let (h, g) = cells.split_at(host_cells);
        row(&format!("{id} ns"), h.to_vec(), g.to_vec());
    }
    for name in MATRIX_VERDICTS {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| {
                let state = c.detect.as_ref().and_then(|d| d.verdict(name));
                match (state, c.verdicts.get(name).copied().flatten()) {
                    (Some(v), _) => v.state.label().into(),
                    (None, Some(true)) => "YES".into(),
                    (None, Some(false)) => "no".into(),
                    (None, None) => "-".into(),
                }
            })
            .collect();
        let (h, g) = cells.split_at(host_cells);
        row(name, h.to_vec(), g.to_vec());
    }
    t
}

/// The accelerator and kernel, then what went wrong with a guest.
fn notes(m: &GuestMatrix) -> String {
    let mut out = format!(
        "accel: {}{}\nkernel: {}{}\n",
        m.accel.used.name(),
        if m.accel.emulation {
            " — TCG figures are emulation (qemu's binary translator), not virtualisation"
        } else {
            " (hardware virtualisation)"
        },
        m.kernel.origin,
        m.kernel
            .vmlinux
            .as_ref()
            .map(|_| ", vmlinux extracted for PVH boot")
            .unwrap_or(""),
    );
    if let Some(n) = &m.accel.note {
        out += &format!("note: {n}\n");
    }
    for g in &m.guests {
        if g.clocksource_honoured == Some(false) {
            out += &format!(
                "{}: the kernel ignored clocksource={} and used {} (available: {})\n",
                g.column.label,
                g.requested_clocksource,
                g.column.clocksource.current.as_deref().unwrap_or("?"),
                g.column.clocksource.available.join(" ")
            );
        }
        if let Some(e) = &g.error {
            out += &format!("{}: {e}\n", g.column.label);
        }
        // The kernel-log verdicts that hold carry their line: show it.
        let held = g
            .column
            .detect
            .iter()
            .flat_map(|d| &d.verdicts)
            .filter(|(n, v)| {
                v.holds && ["tsc_marked_unstable", "clocksource_switched"].contains(&n.as_str())
            });
        for (n, v) in held {
            out += &format!("{}: {n}: {}\n", g.column.label, v.summary);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{export, Format};
    use crate::vm::boot::qemu::Accel;
    use crate::vm::matrix::result::{AccelChoice, GuestRun, GuestStatus, KernelInfo};

    #[test]
    fn matrix_prints_failed_guests_and_emulation() {
        let m = GuestMatrix {
            schema_version: 1,
            tool: "tscope test".into(),
            created_unix_s: 0,
            accel: AccelChoice {
                requested: "tcg".into(),
                used: Accel::Tcg,
                emulation: true,
                kvm_module: None,
                note: None,
            },
            kernel: KernelInfo {
                origin: "test kernel".into(),
                image: "bzImage".into(),
                vmlinux: None,
                extract_note: None,
            },
            guest_bin: "tscope".into(),
            host: None,
            guests: vec![GuestRun {
                requested_clocksource: "hpet".into(),
                clocksource_honoured: None,
                status: GuestStatus::Timeout,
                error: Some("killed after 5 s (--timeout)".into()),
                boot: "bzimage".into(),
                wall_s: 5.0,
                cmdline: None,
                qemu_args: Vec::new(),
                console_tail: Some(String::new()),
                column: Column::new("guest:hpet".into(), None, None),
            }],
        };
        let text = String::from_utf8(export(&m, Format::Table).unwrap()).unwrap();
        assert!(text.contains("guest:hpet"), "{text}");
        assert!(text.contains("timeout 5.0s"), "{text}");
        assert!(text.contains("emulation"), "{text}");
        assert!(text.contains("killed after"), "{text}");
        let md = String::from_utf8(export(&m, Format::Markdown).unwrap()).unwrap();
        assert!(md.contains("| vdso:monotonic ns | - |"), "{md}");
        let json: serde_json::Value =
            serde_json::from_slice(&export(&m, Format::Json).unwrap()).unwrap();
        assert_eq!(json["guests"][0]["status"], "timeout");
        assert_eq!(json["guests"][0]["label"], "guest:hpet");
        assert!(json["guests"][0]["costs_ns"]["rdtsc"].is_null());
    }
}
