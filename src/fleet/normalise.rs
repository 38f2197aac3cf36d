//! One document tscope wrote (`probe --json`, `detect --json` or a report's `report.json`)
//! reduced to the facts a fleet is grouped and compared by. The document is read as a
//! `serde_json::Value`, field by field, so any version tscope wrote loads: a fact the document
//! does not hold is `None` (null), never a guess. Which kind it is comes from the one sniffer,
//! [`crate::input::Kind::of`]: its `kind` tag, else the keys only that kind has, as `tscope
//! show` recognises it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The newest `schema_version` of a probe, detect or report document this build reads.
pub const NEWEST_DOCUMENT_VERSION: u64 = 1;

/// The source whose cost is the coarse read (`sim::costs::COARSE_SOURCE`).
const COARSE: &str = "vdso:realtime_coarse";

/// What a stored document is: a probe, a detection or a report (the document's own kind,
/// stored as its [`Kind::short`] word).
pub use crate::input::Kind;

/// The normalised facts of one document (the store's columns; null where absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// `machine.host_id`: the host's application-specific ID (a UUID), `None` in documents
    /// written before it was recorded or on a host without `/etc/machine-id`.
    pub host_id: Option<String>,
    pub created_unix_s: Option<i64>,
    pub cpu_vendor: Option<String>,
    pub cpu_model: Option<String>,
    pub cpu_family: Option<i64>,
    pub cpu_model_number: Option<i64>,
    pub cpu_stepping: Option<i64>,
    pub microcode: Option<String>,
    /// The hypervisor's vendor (`KVM`, `Xen`, `Hyper-V`), `none` on bare metal.
    pub hypervisor: Option<String>,
    /// DMI `product_name` (a cloud's instance type, where it sets one).
    pub dmi_product: Option<String>,
    pub kernel: Option<String>,
    pub clocksource: Option<String>,
    /// `available_clocksource`, space-separated.
    pub clocksources_available: Option<String>,
    pub hz: Option<f64>,
    pub tsc_invariant: Option<bool>,
    /// The TSC flags of `/proc/cpuinfo`, space-separated.
    pub tsc_flags: Option<String>,
    /// Whether the TSC reads were trapped on purpose (`--emulate-trap`).
    pub emulate_trap: bool,
    /// The hypervisor bit of CPUID leaf 1 (a guest).
    pub in_vm: Option<bool>,
    /// `derived.precise_read_ns`: syscall realtime − syscall realtime_coarse.
    pub precise_read_ns: Option<f64>,
    /// `vdso:realtime`, `syscall:realtime`, `rdtsc`, `rdtscp` and `vdso:realtime_coarse`.
    pub vdso_ns: Option<f64>,
    pub syscall_ns: Option<f64>,
    pub rdtsc_ns: Option<f64>,
    pub counter_ns: Option<f64>,
    pub coarse_read_ns: Option<f64>,
    /// The coarse clock's observed update period (its tick).
    pub tick_ns: Option<f64>,
    /// Verdict name → `yes`, `no` or `inconclusive`; `None` when the document has no verdicts.
    pub verdicts: Option<BTreeMap<String, String>>,
}

/// A document's kind, version and facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalised {
    pub kind: Kind,
    pub schema_version: u64,
    pub facts: Facts,
}

fn str_at(v: &Value, path: &str) -> Option<String> {
    v.pointer(path)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

fn num_at(v: &Value, path: &str) -> Option<f64> {
    v.pointer(path)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite())
}

fn int_at(v: &Value, path: &str) -> Option<i64> {
    v.pointer(path).and_then(Value::as_i64)
}

fn words_at(v: &Value, path: &str) -> Option<String> {
    let a = v.pointer(path)?.as_array()?;
    Some(
        a.iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// `machine.host_id`, in its canonical form (a lowercase UUID); absent or null is `None`, and
/// anything else refuses the document (stored as null it would make a machine of its own).
fn host_id_of(p: &Value) -> Result<Option<String>, String> {
    use crate::probe::host_id::{format_uuid, parse_id128};
    match p.pointer("/machine/host_id") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_str()
            .and_then(|s| parse_id128(s.trim()))
            .map(|id| Some(format_uuid(&id)))
            .ok_or_else(|| {
                format!(
                    "machine.host_id {} is not a UUID (32 hex digits, dashes optional)",
                    crate::fmt::safe::cell(&v.to_string())
                )
            }),
    }
}

/// The recognised kind ([`Kind::of`], as `tscope show` recognises it), or why the document is
/// not one `fleet add` takes.
fn kind_of(v: &Value) -> Result<Kind, String> {
    if !v.is_object() {
        return Err("is not a JSON object (expected probe, detect or report JSON)".into());
    }
    match Kind::of(&crate::input::Shape::of_value(v)) {
        Some(k @ (Kind::Report | Kind::Detect | Kind::Probe)) => Ok(k),
        Some(other) => Err(format!(
            "is {}, not a probe, detect or report document",
            other.name()
        )),
        None => Err("is not a probe, detect or report document tscope wrote".into()),
    }
}

fn version_of(v: &Value, what: &str) -> Result<u64, String> {
    use crate::input::VersionError;
    match crate::input::schema_version(v.get("schema_version"), 1, NEWEST_DOCUMENT_VERSION) {
        Ok(n) => Ok(n),
        Err(VersionError::Missing) => Err(format!(
            "{what} has no schema_version: is it a file tscope wrote?"
        )),
        Err(VersionError::Unsupported(n)) if n > NEWEST_DOCUMENT_VERSION => Err(format!(
            "{what} has schema_version {n}, newer than this tscope reads \
             ({NEWEST_DOCUMENT_VERSION}): upgrade tscope"
        )),
        Err(VersionError::Unsupported(n)) => Err(format!(
            "{what} has schema_version {n}, not a whole number >= 1"
        )),
        Err(VersionError::NotANumber(x)) => Err(format!(
            "{what} has schema_version {x}, not a whole number >= 1"
        )),
    }
}

/// The cost of source `id` (its `cost_ns.point`), if it was measured.
fn cost<'a>(profile: &'a Value, id: &str) -> Option<&'a Value> {
    profile
        .get("sources")?
        .as_array()?
        .iter()
        .find(|s| s.get("id").and_then(Value::as_str) == Some(id))
}

fn verdicts_of(v: Option<&Value>) -> Option<BTreeMap<String, String>> {
    let m = v?.as_object()?;
    Some(
        m.iter()
            .filter_map(|(name, x)| {
                let state = match x.get("state").and_then(Value::as_str) {
                    Some(s @ ("yes" | "no" | "inconclusive")) => s.to_string(),
                    _ => match x.get("holds").and_then(Value::as_bool)? {
                        true => "yes".into(),
                        false => "no".into(),
                    },
                };
                Some((name.clone(), state))
            })
            .collect(),
    )
}

/// Recognises `v` and reduces it to its facts; the error says why it is not a document
/// `fleet add` takes.
pub fn normalise(v: &Value) -> Result<Normalised, String> {
    let kind = kind_of(v)?;
    let schema_version = version_of(v, "the document")?;
    let (p, facts, env, verdicts) = match kind {
        Kind::Detect => (&v["profile"], v.get("facts"), None, v.get("verdicts")),
        Kind::Report => (
            &v["profile"],
            v.pointer("/detect/facts"),
            v.get("environment"),
            v.pointer("/detect/verdicts"),
        ),
        // A probe (`kind_of` gives no other kind).
        _ => (v, None, None, None),
    };
    if kind != Kind::Probe {
        version_of(p, "its profile")?;
    }
    if !p.get("sources").is_some_and(Value::is_array) {
        return Err("holds no profile (no `sources` list)".into());
    }
    let none = Value::Null;
    let f = facts.unwrap_or(&none);
    let e = env.unwrap_or(&none);
    let point = |id: &str| cost(p, id).and_then(|s| num_at(s, "/cost_ns/point"));
    let coarse = cost(p, COARSE);
    let in_vm = p
        .pointer("/machine/hypervisor_bit")
        .and_then(Value::as_bool);
    let hypervisor = str_at(f, "/hypervisor/vendor")
        .or_else(|| str_at(e, "/hypervisor"))
        .or_else(|| {
            str_at(p, "/machine/hypervisor_signature")
                .map(|s| crate::cpuid::hypervisor::vendor_of(&s))
        })
        .or_else(|| (in_vm == Some(false)).then(|| "none".to_string()));
    let out = Facts {
        host_id: host_id_of(p)?,
        created_unix_s: int_at(p, "/created_unix_s"),
        cpu_vendor: str_at(f, "/cpu/vendor").or_else(|| str_at(p, "/machine/cpu_vendor")),
        cpu_model: str_at(f, "/cpu/brand").or_else(|| str_at(p, "/machine/cpu_model")),
        cpu_family: int_at(f, "/cpu/family").or_else(|| int_at(p, "/machine/cpu_family")),
        cpu_model_number: int_at(f, "/cpu/model")
            .or_else(|| int_at(p, "/machine/cpu_model_number")),
        cpu_stepping: int_at(f, "/cpu/stepping").or_else(|| int_at(e, "/cpu_stepping")),
        microcode: str_at(e, "/microcode"),
        hypervisor,
        dmi_product: str_at(f, "/host/dmi/product_name"),
        kernel: str_at(p, "/machine/kernel_release").or_else(|| str_at(f, "/kernel_release")),
        clocksource: str_at(p, "/machine/clocksource/current")
            .or_else(|| str_at(f, "/clocksource/current")),
        clocksources_available: words_at(p, "/machine/clocksource/available")
            .or_else(|| words_at(f, "/clocksource/available")),
        hz: num_at(e, "/hz").or_else(|| coarse.and_then(|s| num_at(s, "/implied_hz"))),
        tsc_invariant: p
            .pointer("/machine/tsc/invariant")
            .or_else(|| f.pointer("/cpu/invariant_tsc"))
            .and_then(Value::as_bool),
        tsc_flags: words_at(f, "/host/cpuinfo_tsc_flags"),
        emulate_trap: p
            .get("emulate_trap")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        in_vm,
        precise_read_ns: num_at(p, "/derived/precise_read_ns/point"),
        vdso_ns: point("vdso:realtime"),
        syscall_ns: point("syscall:realtime"),
        rdtsc_ns: point("rdtsc"),
        counter_ns: point("rdtscp"),
        coarse_read_ns: point(COARSE),
        tick_ns: coarse.and_then(|s| num_at(s, "/update_period_ns")),
        verdicts: verdicts_of(verdicts),
    };
    Ok(Normalised {
        kind,
        schema_version,
        facts: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(path: &str) -> Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn every_kind_tscope_writes_is_recognised_with_its_facts() {
        let p = normalise(&load("tests/data/profile-kvm-xeon.json")).unwrap();
        assert_eq!(p.kind, Kind::Probe);
        assert_eq!(p.facts.hypervisor.as_deref(), Some("KVM"));
        assert_eq!(p.facts.clocksource.as_deref(), Some("tsc"));
        assert!(p.facts.precise_read_ns.unwrap() > 0.0);
        assert!(p.facts.verdicts.is_none() && p.facts.microcode.is_none());
        let d = normalise(&load("tests/data/compare/trapped-detect.json")).unwrap();
        assert_eq!(d.kind, Kind::Detect);
        assert_eq!(d.facts.verdicts.unwrap()["rdtsc_trapped"], "yes");
        assert!(d.facts.tsc_flags.unwrap().contains("constant_tsc"));
        let report = load("docs/example-report/report.json");
        let r = normalise(&report).unwrap();
        assert_eq!(r.kind, Kind::Report);
        // The report's own figure, wherever it was written.
        assert_eq!(
            r.facts.microcode.as_deref(),
            report
                .pointer("/environment/microcode")
                .and_then(serde_json::Value::as_str)
        );
        assert!(r.facts.microcode.is_some());
        assert_eq!(r.facts.hz, Some(250.0));
        assert!(r.facts.verdicts.is_some());
    }

    #[test]
    fn what_is_not_a_document_says_why() {
        let e = |t: &str| normalise(&serde_json::from_str(t).unwrap()).unwrap_err();
        assert!(e("[1]").contains("not a JSON object"));
        assert!(e(r#"{"a":1}"#).contains("not a probe"));
        // Another kind tscope writes is named, tagged or not (the sniffer `show` uses).
        assert!(e(r#"{"kind":"tscope-run-record"}"#).starts_with("is a run record"));
        assert!(e(r#"{"workload":"pipe1","runs":[]}"#).starts_with("is a run ("));
        assert!(e(r#"{"sources":[],"machine":{},"derived":{}}"#).contains("no schema_version"));
        assert!(
            e(r#"{"schema_version":9,"sources":[],"machine":{},"derived":{}}"#)
                .contains("upgrade tscope")
        );
        assert!(e(
            r#"{"schema_version":1,"verdicts":{},"facts":{},"profile":{"schema_version":1}}"#
        )
        .contains("no `sources`"));
        let bare = normalise(
            &serde_json::from_str(
                r#"{"schema_version":1,"sources":[],"machine":{"hypervisor_bit":false},"derived":{}}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(bare.facts.hypervisor.as_deref(), Some("none"));
        assert_eq!(bare.facts.precise_read_ns, None);
    }
}
