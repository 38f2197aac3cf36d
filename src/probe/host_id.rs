//! `machine.host_id`: which host a document came from, without the host's machine ID.
//!
//! The ID is derived from `/etc/machine-id` as systemd's `sd_id128_get_machine_app_specific()`
//! derives one (sd_id128_get_machine(3): "calculates HMAC-SHA256 of the app_id parameter keyed
//! by the base parameter, and truncates this result to 128 bits", then makes it a version-4
//! UUID): the machine ID is the key, tscope's fixed application ID the message. The machine ID
//! itself never leaves the host, and the same host gives the same ID to every tscope run, so
//! `fleet report` counts a probe and a detect of one host as one machine. `systemd-id128
//! machine-id --app-specific=385b1de8-2df1-4f65-87b4-ecd23150f90f` prints the same ID.

use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// tscope's application ID (random, fixed for ever: a new one would give every host a new ID).
pub const APP_ID: [u8; 16] = [
    0x38, 0x5b, 0x1d, 0xe8, 0x2d, 0xf1, 0x4f, 0x65, 0x87, 0xb4, 0xec, 0xd2, 0x31, 0x50, 0xf9, 0x0f,
];

const MACHINE_ID: &str = "/etc/machine-id";

/// This host's ID, or `None` when `/etc/machine-id` is absent, unreadable, not an ID or the
/// null ID (an image not yet booted).
pub fn host_id() -> Option<String> {
    let text = std::fs::read_to_string(MACHINE_ID).ok()?;
    let id = parse_id128(text.trim())?;
    (id != [0; 16]).then(|| format_uuid(&app_specific(&id, &APP_ID)))
}

/// HMAC-SHA256 of `app` keyed by `base`, truncated to 128 bits, version 4 and variant 1 set
/// (systemd's `id128_make_v4_uuid`).
pub fn app_specific(base: &[u8; 16], app: &[u8; 16]) -> [u8; 16] {
    // HMAC pads a key shorter than the hash's block (64 bytes) with zeros: padded here, so
    // the key's length cannot be wrong.
    let mut key = [0u8; 64];
    key[..16].copy_from_slice(base);
    let mut mac = <Hmac<Sha256> as KeyInit>::new(&key.into());
    mac.update(app);
    let digest = mac.finalize().into_bytes();
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out[6] = (out[6] & 0x0f) | 0x40;
    out[8] = (out[8] & 0x3f) | 0x80;
    out
}

/// A 128-bit ID written as 32 hex digits (`machine-id`'s form) or as a UUID (8-4-4-4-12).
pub fn parse_id128(s: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = match s.len() {
        32 => s.bytes().collect(),
        36 => {
            let dashes = [8, 13, 18, 23];
            let b = s.as_bytes();
            if !dashes.iter().all(|&i| b[i] == b'-') {
                return None;
            }
            b.iter()
                .enumerate()
                .filter(|(i, _)| !dashes.contains(i))
                .map(|(_, c)| *c)
                .collect()
        }
        _ => return None,
    };
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 16];
    for (o, pair) in out.iter_mut().zip(hex.chunks(2)) {
        *o = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// `id` as a lowercase UUID (8-4-4-4-12).
pub fn format_uuid(id: &[u8; 16]) -> String {
    let h: String = id.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_systemds_app_specific_machine_id() {
        // Python's hmac over the same key and message, checked against `systemd-id128
        // machine-id --app-specific` on a real host.
        let base = parse_id128("0123456789abcdef0123456789abcdef").unwrap();
        assert_eq!(
            format_uuid(&app_specific(&base, &APP_ID)),
            "d331762e-21c0-4b8c-af92-5db03fbfd4fd"
        );
        let id = host_id();
        if let Some(id) = id {
            let b = parse_id128(&id).unwrap();
            assert_eq!(format_uuid(&b), id);
            assert_eq!((b[6] >> 4, b[8] >> 6), (4, 2), "a version-4 UUID");
        }
    }

    #[test]
    fn ids_parse_in_both_forms_and_nothing_else() {
        let a = parse_id128("385b1de82df14f6587b4ecd23150f90f").unwrap();
        assert_eq!(a, APP_ID);
        assert_eq!(
            parse_id128("385b1de8-2df1-4f65-87b4-ecd23150f90f"),
            Some(APP_ID)
        );
        assert_eq!(format_uuid(&APP_ID), "385b1de8-2df1-4f65-87b4-ecd23150f90f");
        for bad in [
            "",
            "uninitialized",
            "385b1de82df14f6587b4ecd23150f90",
            "385b1de82df14f6587b4ecd23150f90g",
            "385b1de8-2df14f65-87b4-ecd23150f90f0",
            "+85b1de82df14f6587b4ecd23150f90f",
        ] {
            assert_eq!(parse_id128(bad), None, "{bad}");
        }
    }
}
