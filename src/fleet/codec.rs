//! How a stored document is packed: its canonical JSON (compact, keys sorted, so one document
//! written twice, pretty or compact, is one text and one hash) deflated with a preset
//! dictionary. A tscope document is mostly the same keys, source ids and verdict texts; the
//! dictionary holds them once (`dictionary-1.bin`: the tail of a real report's environment, a
//! real detection's facts and verdicts, and a real profile, each canonical), so a profile of
//! ~24 KB compact stores in about 4 KB where plain deflate needs about 5.7 KB.
//!
//! The encoding's name is stored with every document; a new dictionary is a new name, and the
//! old one stays readable.

use std::io::Write;

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The encoding this build writes.
pub const ENCODING: &str = "deflate-dict-1";

/// The preset dictionary of [`ENCODING`] (32 KiB, deflate's whole window). Never edited: a new
/// dictionary is a new file and a new encoding name.
const DICTIONARY_1: &[u8] = include_bytes!("dictionary-1.bin");

/// The largest document a stored body may inflate to (tscope's own read limit).
const MAX_INFLATED: usize = crate::input::MAX_DOCUMENT as usize;

/// `json` deflated with the dictionary (zlib stream, level 6).
pub fn encode(json: &[u8]) -> crate::error::Result<Vec<u8>> {
    let mut c = Compress::new(Compression::new(6), true);
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
        assert!(packed.len() * 4 < json.len(), "{} of {}", packed.len(), json.len());
        assert_eq!(decode(ENCODING, &packed).unwrap(), json);
        assert_eq!(decode("json", &json).unwrap(), json);
        assert!(decode("zstd-9", &packed).is_err());
        assert!(decode(ENCODING, &packed[..packed.len() / 2]).is_err());
        assert!(decode(ENCODING, b"not deflate").is_err());
        assert_eq!(decode(ENCODING, &encode(b"").unwrap()).unwrap(), b"");
    }
}
