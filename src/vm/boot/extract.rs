//! The ELF `vmlinux` inside a bzImage: the boot header gives the compressed payload's offset
//! and length, its magic says which compressor, the system's decompressor unpacks it. The
//! decompressor must succeed and its output must parse as a whole ELF file (every segment
//! inside it), so a damaged package never yields a truncated vmlinux.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use super::elf::Elf;
use crate::error::{Context, Result};
use crate::fail as bail;

/// The largest vmlinux accepted from a decompressor (Debian's are 40-60 MB).
const MAX_VMLINUX_BYTES: u64 = 1 << 30;

/// A compressed payload format the kernel supports, by magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    Gzip,
    Xz,
    Zstd,
    Lz4,
    Bzip2,
    Lzma,
}

impl Compression {
    pub(crate) fn sniff(b: &[u8]) -> Option<Self> {
        Some(match b {
            [0x1f, 0x8b, ..] => Self::Gzip,
            [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => Self::Xz,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Self::Zstd,
            [0x02, 0x21, 0x4c, 0x18, ..] => Self::Lz4,
            [b'B', b'Z', b'h', ..] => Self::Bzip2,
            [0x5d, 0, 0, ..] => Self::Lzma,
            _ => return None,
        })
    }

    /// The decompressor reading stdin, writing stdout.
    fn tool(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Self::Gzip => ("gzip", &["-dc"]),
            Self::Xz => ("xz", &["-dc", "--single-stream"]),
            Self::Zstd => ("zstd", &["-dcq"]),
            Self::Lz4 => ("lz4", &["-dc"]),
            Self::Bzip2 => ("bzip2", &["-dc"]),
            Self::Lzma => ("xz", &["-dc", "--format=lzma"]),
        }
    }
}

/// The compressed payload of a bzImage: boot protocol ≥ 2.08 gives its offset (from the start
/// of the protected-mode code) and length.
pub(crate) fn payload(bz: &[u8]) -> Result<&[u8]> {
    let u16_at = |o: usize| bz.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| {
        bz.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if bz.get(0x202..0x206) != Some(b"HdrS") {
        bail!("not a bzImage (no 'HdrS' boot header at 0x202)");
    }
    let version = u16_at(0x206).unwrap_or(0);
    if version < 0x208 {
        bail!("boot protocol {version:#x} predates payload_offset (2.08)");
    }
    let setup_sects = match bz[0x1f1] {
        0 => 4,
        n => usize::from(n),
    };
    let pm_start = (setup_sects + 1) * 512;
    let (off, len) = (u32_at(0x248).unwrap_or(0), u32_at(0x24c).unwrap_or(0));
    bz.get(pm_start + off..pm_start + off + len)
        .context("payload_offset/payload_length point past the end of the file")
}

/// Decompresses a bzImage's payload into the ELF vmlinux, with the system's decompressor.
pub(crate) fn extract_vmlinux(bz: &[u8]) -> Result<Vec<u8>> {
    let mut data = payload(bz)?;
    let kind = Compression::sniff(data).context("unknown compression magic in the payload")?;
    // Every format but gzip carries the decompressed size as 4 trailing bytes (the kernel's
    // `size_append`), which the stand-alone tools would read as garbage.
    if kind != Compression::Gzip && data.len() > 4 {
        data = &data[..data.len() - 4];
    }
    let (tool, args) = kind.tool();
    let mut cmd = Command::new(tool);
    crate::sys::child::kill_with_parent(&mut cmd);
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {tool} to unpack the {kind:?} kernel (install it)"))?;
    let mut stdin = child.stdin.take().context("decompressor stdin")?;
    let input = data.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .context("decompressor stdout")?
        .take(MAX_VMLINUX_BYTES + 1)
        .read_to_end(&mut out)?;
    if out.len() as u64 > MAX_VMLINUX_BYTES {
        let _ = child.kill();
        let _ = child.wait();
        bail!("the {kind:?} kernel unpacks to more than 1 GiB: not a kernel");
    }
    let _ = writer.join();
    let status = child
        .wait()
        .with_context(|| format!("waiting for {tool}"))?;
    // The kernel's size trailer is cut off above, so a whole stream decompresses cleanly: a
    // failure means a damaged payload, whatever came out before it.
    if !status.success() {
        bail!(
            "{tool} failed ({status}) unpacking the {kind:?} kernel after {} bytes: the \
             package is damaged",
            out.len()
        );
    }
    Elf::parse(&out).with_context(|| {
        format!(
            "{tool} did not produce a whole ELF vmlinux ({} bytes)",
            out.len()
        )
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_compression_magics() {
        assert_eq!(
            Compression::sniff(&[0x1f, 0x8b, 8]),
            Some(Compression::Gzip)
        );
        assert_eq!(Compression::sniff(b"\xfd7zXZ\0rest"), Some(Compression::Xz));
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd]),
            Some(Compression::Zstd)
        );
        assert_eq!(
            Compression::sniff(&[0x02, 0x21, 0x4c, 0x18]),
            Some(Compression::Lz4)
        );
        assert_eq!(Compression::sniff(b"\x7fELF"), None);
    }

    /// A synthetic bzImage: header fields at their offsets, then a gzip payload of an "ELF".
    #[test]
    fn finds_and_unpacks_the_payload() {
        if crate::skip::without("gzip") {
            return;
        }
        // The smallest whole ELF: a header and one empty loadable segment.
        let mut elf = vec![0u8; 120];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[0x20] = 64;
        elf[0x36] = 56;
        elf[0x38] = 1;
        elf[64] = 1;
        let mut gz = Command::new("gzip")
            .arg("-c")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("gzip starts");
        gz.stdin.take().unwrap().write_all(&elf).unwrap();
        let compressed = gz.wait_with_output().unwrap().stdout;
        let mut bz = vec![0u8; 5 * 512];
        bz[0x1f1] = 4;
        bz[0x202..0x206].copy_from_slice(b"HdrS");
        bz[0x206..0x208].copy_from_slice(&0x20fu16.to_le_bytes());
        bz[0x248..0x24c].copy_from_slice(&16u32.to_le_bytes());
        bz[0x24c..0x250].copy_from_slice(&(compressed.len() as u32).to_le_bytes());
        bz.extend_from_slice(&[0xaa; 16]);
        bz.extend_from_slice(&compressed);
        bz.extend_from_slice(b"trailing setup data");
        assert_eq!(payload(&bz).unwrap(), &compressed[..]);
        assert_eq!(extract_vmlinux(&bz).unwrap(), elf);
        assert!(payload(b"short").is_err());
        // A damaged payload: the decompressor fails, and that is an error, not a short ELF.
        let mut damaged = bz.clone();
        let mid = 5 * 512 + 16 + compressed.len() / 2;
        damaged[mid] ^= 0xff;
        damaged[mid + 1] ^= 0xff;
        assert!(extract_vmlinux(&damaged).is_err());
        // A payload that decompresses to an ELF header whose segments the data does not hold.
        let mut cut = elf.clone();
        cut[64 + 32] = 200; // p_filesz past the end
        let mut gz = Command::new("gzip")
            .arg("-c")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("gzip starts");
        gz.stdin.take().unwrap().write_all(&cut).unwrap();
        let compressed = gz.wait_with_output().unwrap().stdout;
        let mut bz = bz[..5 * 512 + 16].to_vec();
        bz[0x24c..0x250].copy_from_slice(&(compressed.len() as u32).to_le_bytes());
        bz.extend_from_slice(&compressed);
        let e = extract_vmlinux(&bz).unwrap_err();
        assert!(format!("{e:#}").contains("whole ELF"), "{e:#}");
    }
}
