//! How a stored document is packed: its canonical JSON (compact, keys sorted, so one document
//! written twice, pretty or compact, is one text and one hash) deflated with a preset
//! dictionary. A tscope document is mostly the same keys, source ids and verdict texts; the
//! dictionary holds them once (`dictionary-1.bin`: the tail of a real report's environment, a
//! real detection's facts and verdicts, and a real profile, each canonical), so a profile of
//! ~24 KB compact stores in about 4 KB where plain deflate needs about 5.7 KB.
//!
//! Before deflating, each source's `cost_ticks` that is exactly `cost_ns` scaled by the
//! profile's `derived.tsc_hz` (as `probe` computes it, so in every document tscope wrote) is
//! replaced by the mark `"="`, and recomputed, bit for bit, when the document is read back: a
//! quarter of a profile's numbers, which deflate cannot shrink, are not stored twice. So is
//! each `relative_ci_width` that is exactly `(upper − lower) / |point|` of its `cost_ns`
//! (`Estimate::relative_width`, as `probe` computes it).
//!
//! The profile's `machine.host_id`, when it is a UUID in its canonical form, is left out of
//! the stored text: the store keeps it as its `host_id` column (16 bytes, where the text would
//! deflate to about 40) and [`unpack`] puts it back.
//!
//! The encoding's name is stored with every document; a new dictionary is a new name, and the
//! old one stays readable.

use std::io::Write;

use serde_json::Value;

use crate::probe::host_id::{format_uuid, parse_id128};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The encoding this build writes.
pub const ENCODING: &str = "deflate-dict-1";

/// The preset dictionary of [`ENCODING`] (32 KiB, deflate's whole window). Never edited: a new
/// dictionary is a new file and a new encoding name.
const DICTIONARY_1: &[u8] = include_bytes!("dictionary-1.bin");

/// The largest document a stored body may inflate to (tscope's own read limit).
const MAX_INFLATED: usize = crate::input::MAX_DOCUMENT as usize;

/// `json` deflated with the dictionary (zlib stream, level 3: within 3% of level 6's size for
/// tscope's documents, and about a sixth faster to store).
pub fn encode(json: &[u8]) -> crate::error::Result<Vec<u8>> {
    let mut c = Compress::new(Compression::new(3), true);
    c.set_dictionary(DICTIONARY_1)
        .map_err(|e| crate::failure!("deflate dictionary: {e}"))?;
    let mut out = Vec::with_capacity(json.len() / 4 + 64);
    loop {
        let before = c.total_in() as usize;
        let status = c
            .compress_vec(&json[before..], &mut out, FlushCompress::Finish)
            .map_err(|e| crate::failure!("deflate: {e}"))?;
        match status {
            Status::StreamEnd => return Ok(out),
            _ => out.reserve(out.capacity().max(4096)),
        }
    }
}

/// The document stored as `body` in `encoding`.
pub fn decode(encoding: &str, body: &[u8]) -> crate::error::Result<Vec<u8>> {
    match encoding {
        ENCODING => inflate(body),
        "json" => Ok(body.to_vec()),
        other => crate::fail!(
            "a stored document has encoding '{other}', which this tscope does not know: \
             read the store with a newer tscope"
        ),
    }
}

fn inflate(body: &[u8]) -> crate::error::Result<Vec<u8>> {
    let mut d = Decompress::new(true);
    let mut out: Vec<u8> = Vec::with_capacity(body.len() * 6 + 64);
    loop {
        if out.len() == out.capacity() {
            crate::ensure!(
                out.len() < MAX_INFLATED,
                "a stored document inflates past {} MiB",
                MAX_INFLATED >> 20
            );
            out.reserve(out.capacity().max(4096));
        }
        let (was_in, was_out) = (d.total_in(), d.total_out());
        match d.decompress_vec(&body[was_in as usize..], &mut out, FlushDecompress::Finish) {
            Ok(Status::StreamEnd) => return Ok(out),
            Ok(_) if d.total_in() == was_in && d.total_out() == was_out => {
                if out.len() < out.capacity() {
                    crate::fail!("a stored document is cut short (its deflate stream has no end)")
                }
            }
            Ok(_) => {}
            Err(e) if e.needs_dictionary().is_some() => d
                .set_dictionary(DICTIONARY_1)
                .map(|_| ())
                .map_err(|e| crate::failure!("inflate dictionary: {e}"))?,
            Err(e) => crate::fail!("a stored document does not inflate: {e}"),
        }
    }
}

/// The mark that stands for a derivable `cost_ticks`.
const DERIVED: &str = "=";

/// The profile inside a document (itself, or its `profile`), mutably.
fn profile_mut(v: &mut Value) -> Option<&mut Value> {
    if v.get("sources").is_some() {
        Some(v)
    } else {
        v.get_mut("profile")
    }
}

fn ticks_scale(p: &Value) -> Option<f64> {
    p.pointer("/derived/tsc_hz")
        .and_then(Value::as_f64)
        .map(|hz| hz / 1e9)
}

/// Replaces each `cost_ticks` equal to `cost_ns × tsc_hz / 1e9` (every field a float, exactly)
/// by the mark.
fn elide(v: &mut Value) {
    let Some(p) = profile_mut(v) else { return };
    let k = ticks_scale(p);
    let Some(sources) = p.get_mut("sources").and_then(Value::as_array_mut) else {
        return;
    };
    for s in sources {
        let derivable = k.is_some_and(|k| {
            ["point", "lower", "upper"].iter().all(|f| {
                let ns = s.pointer(&format!("/cost_ns/{f}"));
                let ticks = s.pointer(&format!("/cost_ticks/{f}"));
                match (ns, ticks) {
                    (Some(Value::Number(a)), Some(Value::Number(t)))
                        if a.is_f64() && t.is_f64() =>
                    {
                        a.as_f64().map(|a| a * k) == t.as_f64()
                    }
                    _ => false,
                }
            })
        }) && s
            .get("cost_ticks")
            .and_then(Value::as_object)
            .map(|o| o.len())
            == Some(3);
        if derivable {
            s["cost_ticks"] = Value::from(DERIVED);
        }
        let width = s
            .get("relative_ci_width")
            .filter(|w| w.is_f64())
            .and_then(Value::as_f64);
        if width.is_some() && width == relative_width(s) {
            s["relative_ci_width"] = Value::from(DERIVED);
        }
    }
}

/// `(upper − lower) / |point|` of a source's `cost_ns`, as `Estimate::relative_width` computes
/// it; `None` unless all three are numbers.
fn relative_width(s: &Value) -> Option<f64> {
    let f = |f: &str| s.pointer(&format!("/cost_ns/{f}")).and_then(Value::as_f64);
    Some((f("upper")? - f("lower")?) / f("point")?.abs())
}

/// Recomputes each marked `cost_ticks`; false when there was nothing to restore.
fn restore(v: &mut Value) -> bool {
    let Some(p) = profile_mut(v) else {
        return false;
    };
    let k = ticks_scale(p);
    let Some(sources) = p.get_mut("sources").and_then(Value::as_array_mut) else {
        return false;
    };
    let mut any = false;
    for s in sources {
        if s.get("relative_ci_width").and_then(Value::as_str) == Some(DERIVED) {
            s["relative_ci_width"] = relative_width(s).map_or(Value::Null, Value::from);
            any = true;
        }
        let Some(k) = k else { continue };
        if s.get("cost_ticks").and_then(Value::as_str) != Some(DERIVED) {
            continue;
        }
        let ticks: serde_json::Map<String, Value> = ["lower", "point", "upper"]
            .iter()
            .map(|f| {
                let x = s.pointer(&format!("/cost_ns/{f}")).and_then(Value::as_f64);
                (
                    f.to_string(),
                    x.map(|x| x * k).map_or(Value::Null, Value::from),
                )
            })
            .collect();
        s["cost_ticks"] = Value::Object(ticks);
        any = true;
    }
    any
}

/// The profile's `machine` object, mutably.
fn machine_mut(v: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    profile_mut(v)?.get_mut("machine")?.as_object_mut()
}

/// Removes `machine.host_id` when it is a UUID written as [`format_uuid`] writes one (so it
/// comes back as the same text); returns whether it did.
fn elide_host(v: &mut Value) -> bool {
    let Some(m) = machine_mut(v) else {
        return false;
    };
    let canonical = m
        .get("host_id")
        .and_then(Value::as_str)
        .is_some_and(|s| parse_id128(s).is_some_and(|id| format_uuid(&id) == s));
    canonical && m.remove("host_id").is_some()
}

/// A parsed document packed for the store: derivable ticks and widths and the host ID elided,
/// canonical, deflated.
pub fn pack(v: &Value) -> crate::error::Result<Vec<u8>> {
    let mut v = v.clone();
    elide(&mut v);
    elide_host(&mut v);
    encode(&canonical(&v)?)
}

/// A stored document back as its canonical JSON; `host` is the row's `host_id` column, put
/// back as `machine.host_id` where the stored text has none.
pub fn unpack(
    encoding: &str,
    body: &[u8],
    host: Option<&[u8; 16]>,
) -> crate::error::Result<Vec<u8>> {
    let text = decode(encoding, body)?;
    if host.is_none() && !text.windows(4).any(|w| w == br#":"=""#) {
        return Ok(text);
    }
    let mut v: Value = serde_json::from_slice(&text)
        .map_err(|e| crate::failure!("a stored document is not JSON: {e}"))?;
    restore(&mut v);
    if let (Some(id), Some(m)) = (host, machine_mut(&mut v)) {
        m.entry("host_id")
            .or_insert_with(|| Value::from(format_uuid(id)));
    }
    canonical(&v)
}

/// The canonical text of a document: compact JSON with keys sorted.
pub fn canonical(v: &serde_json::Value) -> crate::error::Result<Vec<u8>> {
    let mut out = Vec::new();
    serde_json::to_writer(&mut out, v).map_err(|e| crate::failure!("serialising JSON: {e}"))?;
    out.flush().ok();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_round_trip_and_shrink() {
        let text = std::fs::read("tests/data/compare/host.json").unwrap();
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let json = canonical(&v).unwrap();
        let packed = encode(&json).unwrap();
        assert!(
            packed.len() * 4 < json.len(),
            "{} of {}",
            packed.len(),
            json.len()
        );
        assert_eq!(decode(ENCODING, &packed).unwrap(), json);
        assert_eq!(decode("json", &json).unwrap(), json);
        assert!(decode("zstd-9", &packed).is_err());
        assert!(decode(ENCODING, &packed[..packed.len() / 2]).is_err());
        assert!(decode(ENCODING, b"not deflate").is_err());
        assert_eq!(decode(ENCODING, &encode(b"").unwrap()).unwrap(), b"");
    }

    #[test]
    fn derivable_ticks_are_elided_and_restored_bit_for_bit() {
        for path in [
            "tests/data/profile-kvm-xeon.json",
            "tests/data/compare/host.json",
            "tests/data/compare/trapped-detect.json",
            "docs/example-report/report.json",
        ] {
            let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            let json = canonical(&v).unwrap();
            let packed = pack(&v).unwrap();
            // The host ID goes to its own column; the row gives it back.
            let host = ["/machine/host_id", "/profile/machine/host_id"]
                .iter()
                .find_map(|p| v.pointer(p).and_then(Value::as_str))
                .and_then(parse_id128);
            assert_eq!(
                unpack(ENCODING, &packed, host.as_ref()).unwrap(),
                json,
                "{path}"
            );
            // host.json is not in the dictionary: eliding its ticks shrinks it.
            if path.ends_with("host.json") {
                assert!(packed.len() < encode(&json).unwrap().len(), "{path}");
            }
        }
        // A cost_ticks that is not the product is stored as it is.
        let mut v: Value =
            serde_json::from_slice(&std::fs::read("tests/data/compare/host.json").unwrap())
                .unwrap();
        v["sources"][0]["cost_ticks"]["point"] = Value::from(1.5);
        let json = canonical(&v).unwrap();
        assert_eq!(unpack(ENCODING, &pack(&v).unwrap(), None).unwrap(), json);
    }

    #[test]
    fn derivable_widths_are_elided_and_restored_bit_for_bit() {
        let text = std::fs::read("tests/data/profile-kvm-xeon.json").unwrap();
        let mut v: Value = serde_json::from_slice(&text).unwrap();
        let packed = pack(&v).unwrap();
        let stored = decode(ENCODING, &packed).unwrap();
        let marks = String::from_utf8_lossy(&stored)
            .matches(r#""relative_ci_width":"=""#)
            .count();
        assert!(marks > 20, "{marks} widths elided");
        assert_eq!(
            unpack(ENCODING, &packed, None).unwrap(),
            canonical(&v).unwrap()
        );
        // A width that is not the quotient (or not a number) is stored as it is.
        v["sources"][0]["relative_ci_width"] = Value::from(0.125);
        v["sources"][1]["relative_ci_width"] = Value::Null;
        let json = canonical(&v).unwrap();
        assert_eq!(unpack(ENCODING, &pack(&v).unwrap(), None).unwrap(), json);
    }

    #[test]
    fn a_canonical_host_id_is_kept_beside_the_text_and_put_back() {
        let id = "d331762e-21c0-4b8c-af92-5db03fbfd4fd";
        let bytes = parse_id128(id).unwrap();
        let mut v: Value = serde_json::from_slice(
            &std::fs::read("tests/data/compare/trapped-detect.json").unwrap(),
        )
        .unwrap();
        let bare = pack(&v).unwrap();
        v["profile"]["machine"]["host_id"] = Value::from(id);
        let json = canonical(&v).unwrap();
        let packed = pack(&v).unwrap();
        assert_eq!(packed, bare, "the ID is not in the stored text");
        assert_eq!(unpack(ENCODING, &packed, Some(&bytes)).unwrap(), json);
        // Not canonical (upper case), or null: stored as it is, and the column does not
        // overwrite it.
        for odd in [Value::from(id.to_uppercase()), Value::Null] {
            v["profile"]["machine"]["host_id"] = odd;
            let json = canonical(&v).unwrap();
            let packed = pack(&v).unwrap();
            assert_ne!(packed, bare);
            assert_eq!(unpack(ENCODING, &packed, None).unwrap(), json);
            assert_eq!(unpack(ENCODING, &packed, Some(&bytes)).unwrap(), json);
        }
    }
}
