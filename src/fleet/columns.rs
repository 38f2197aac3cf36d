//! The store's `profile` columns and the [`Facts`] they hold: one list of names
//! ([`FACT_COLUMNS`], which `fleet export` writes too), the values written for a document and
//! the facts read back from a row, in that order.

use rusqlite::types::Value as Sql;

use super::normalise::{Facts, Kind};

/// The facts' columns, in [`Facts`] field order ([`fact_values`], [`facts_from`]): the
/// store's columns, and `fleet export`'s (where `verdicts` is split by state).
pub const FACT_COLUMNS: [&str; 26] = [
    "host_id",
    "created_unix_s",
    "cpu_vendor",
    "cpu_model",
    "cpu_family",
    "cpu_model_number",
    "cpu_stepping",
    "microcode",
    "hypervisor",
    "dmi_product",
    "kernel",
    "clocksource",
    "clocksources_available",
    "hz",
    "tsc_invariant",
    "tsc_flags",
    "emulate_trap",
    "in_vm",
    "precise_read_ns",
    "vdso_ns",
    "syscall_ns",
    "rdtsc_ns",
    "counter_ns",
    "coarse_read_ns",
    "tick_ns",
    "verdicts",
];

/// Where a row came from (not facts of the document), stored after the facts.
pub const ORIGIN_COLUMNS: [&str; 3] = ["kind", "schema_version", "label"];

/// [`FACT_COLUMNS`] then [`ORIGIN_COLUMNS`], comma-separated.
pub fn columns() -> String {
    let all: Vec<&str> = FACT_COLUMNS
        .iter()
        .chain(&ORIGIN_COLUMNS)
        .copied()
        .collect();
    all.join(", ")
}

fn opt_text(s: &Option<String>) -> Sql {
    s.clone().map_or(Sql::Null, Sql::Text)
}
fn opt_real(x: Option<f64>) -> Sql {
    x.map_or(Sql::Null, Sql::Real)
}
fn opt_int(x: Option<i64>) -> Sql {
    x.map_or(Sql::Null, Sql::Integer)
}
fn opt_bool(x: Option<bool>) -> Sql {
    x.map_or(Sql::Null, |b| Sql::Integer(b.into()))
}

/// A host ID as the store keeps it: its 16 bytes.
fn host_blob(id: &Option<String>) -> Sql {
    id.as_deref()
        .and_then(crate::probe::host_id::parse_id128)
        .map_or(Sql::Null, |b| Sql::Blob(b.to_vec()))
}

/// A `host_id` column's 16 bytes (anything else is no ID).
pub fn host_bytes(b: Option<Vec<u8>>) -> Option<[u8; 16]> {
    b.and_then(|h| <[u8; 16]>::try_from(h.as_slice()).ok())
}

/// The values of [`FACT_COLUMNS`] and [`ORIGIN_COLUMNS`] for one document.
pub fn fact_values(kind: Kind, version: u64, f: &Facts, label: Option<&str>) -> Vec<Sql> {
    let verdicts = f
        .verdicts
        .as_ref()
        .and_then(|v| serde_json::to_string(v).ok());
    vec![
        host_blob(&f.host_id),
        opt_int(f.created_unix_s),
        opt_text(&f.cpu_vendor),
        opt_text(&f.cpu_model),
        opt_int(f.cpu_family),
        opt_int(f.cpu_model_number),
        opt_int(f.cpu_stepping),
        opt_text(&f.microcode),
        opt_text(&f.hypervisor),
        opt_text(&f.dmi_product),
        opt_text(&f.kernel),
        opt_text(&f.clocksource),
        opt_text(&f.clocksources_available),
        opt_real(f.hz),
        opt_bool(f.tsc_invariant),
        opt_text(&f.tsc_flags),
        Sql::Integer(f.emulate_trap.into()),
        opt_bool(f.in_vm),
        opt_real(f.precise_read_ns),
        opt_real(f.vdso_ns),
        opt_real(f.syscall_ns),
        opt_real(f.rdtsc_ns),
        opt_real(f.counter_ns),
        opt_real(f.coarse_read_ns),
        opt_real(f.tick_ns),
        opt_text(&verdicts),
        Sql::Text(kind.short().into()),
        Sql::Integer(version as i64),
        label.map_or(Sql::Null, |l| Sql::Text(l.into())),
    ]
}

/// [`Facts`] from a row whose columns `at..` are [`FACT_COLUMNS`].
pub fn facts_from(r: &rusqlite::Row, at: usize) -> rusqlite::Result<Facts> {
    let mut columns = at..;
    let mut n = move || columns.next().unwrap_or(at);
    let b = |i: usize| -> rusqlite::Result<Option<bool>> {
        Ok(r.get::<_, Option<i64>>(i)?.map(|x| x != 0))
    };
    let facts = Facts {
        host_id: host_bytes(r.get(n())?).map(|h| crate::probe::host_id::format_uuid(&h)),
        created_unix_s: r.get(n())?,
        cpu_vendor: r.get(n())?,
        cpu_model: r.get(n())?,
        cpu_family: r.get(n())?,
        cpu_model_number: r.get(n())?,
        cpu_stepping: r.get(n())?,
        microcode: r.get(n())?,
        hypervisor: r.get(n())?,
        dmi_product: r.get(n())?,
        kernel: r.get(n())?,
        clocksource: r.get(n())?,
        clocksources_available: r.get(n())?,
        hz: r.get(n())?,
        tsc_invariant: b(n())?,
        tsc_flags: r.get(n())?,
        emulate_trap: b(n())?.unwrap_or(false),
        in_vm: b(n())?,
        precise_read_ns: r.get(n())?,
        vdso_ns: r.get(n())?,
        syscall_ns: r.get(n())?,
        rdtsc_ns: r.get(n())?,
        counter_ns: r.get(n())?,
        coarse_read_ns: r.get(n())?,
        tick_ns: r.get(n())?,
        verdicts: r
            .get::<_, Option<String>>(n())?
            .and_then(|t| serde_json::from_str(&t).ok()),
    };
    debug_assert_eq!(n(), at + FACT_COLUMNS.len(), "every fact column read once");
    Ok(facts)
}
