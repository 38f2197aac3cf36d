//! A newc ("070701") cpio writer: the initramfs format the kernel unpacks into its rootfs.
//!
//! Written here rather than shelling out to `cpio` so that `vm guest` needs no external tool
//! and the archive is byte-for-byte reproducible (mtime 0, inode numbers in order). The format:
//! a 110-byte ASCII header (magic and thirteen 8-digit hex fields), the NUL-terminated name
//! padded to a multiple of four, the data padded to a multiple of four; a `TRAILER!!!` entry
//! ends the archive. See the kernel's `Documentation/driver-api/early-userspace/buffer-format.rst`.

use std::io;

/// The file type bits of `st_mode`.
const S_IFDIR: u32 = 0o040_000;
const S_IFREG: u32 = 0o100_000;
const S_IFCHR: u32 = 0o020_000;

/// One entry of an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Path inside the archive, without a leading `/` (`init`, `dev/console`).
    pub name: String,
    /// Full `st_mode`: type bits and permissions.
    pub mode: u32,
    /// Device major/minor for character devices.
    pub rdev: (u32, u32),
    pub data: Vec<u8>,
}

impl Entry {
    pub(crate) fn dir(name: &str) -> Self {
        Entry {
            name: name.into(),
            mode: S_IFDIR | 0o755,
            rdev: (0, 0),
            data: Vec::new(),
        }
    }

    pub(crate) fn file(name: &str, perm: u32, data: Vec<u8>) -> Self {
        Entry {
            name: name.into(),
            mode: S_IFREG | (perm & 0o7777),
            rdev: (0, 0),
            data,
        }
    }

    pub(crate) fn char_dev(name: &str, perm: u32, major: u32, minor: u32) -> Self {
        Entry {
            name: name.into(),
            mode: S_IFCHR | (perm & 0o7777),
            rdev: (major, minor),
            data: Vec::new(),
        }
    }

    pub(crate) fn is_dir(&self) -> bool {
        self.mode & 0o170_000 == S_IFDIR
    }
}

fn pad4(out: &mut Vec<u8>) {
    while out.len() % 4 != 0 {
        out.push(0);
    }
}

fn header(out: &mut Vec<u8>, ino: u32, e: &Entry, nlink: u32) -> io::Result<()> {
    let size = u32::try_from(e.data.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "cpio entry over 4 GiB"))?;
    let namesize = e.name.len() as u32 + 1;
    let fields = [
        ino, e.mode, 0, 0, nlink, 0, size, 0, 0, e.rdev.0, e.rdev.1, namesize, 0,
    ];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08X}").as_bytes());
    }
    out.extend_from_slice(e.name.as_bytes());
    out.push(0);
    pad4(out);
    out.extend_from_slice(&e.data);
    pad4(out);
    Ok(())
}

/// Serialises `entries` (parents before children) into a newc archive with its trailer.
pub(crate) fn write(entries: &[Entry]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.name.is_empty() || e.name.starts_with('/') || e.name.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad cpio entry name {:?}", e.name),
            ));
        }
        let nlink = if e.is_dir() { 2 } else { 1 };
        header(&mut out, i as u32 + 1, e, nlink)?;
    }
    header(&mut out, 0, &Entry::file("TRAILER!!!", 0, Vec::new()), 1)?;
    // The kernel reads the archive in 512-byte blocks happily; pad like cpio(1) does.
    while out.len() % 512 != 0 {
        out.push(0);
    }
    Ok(out)
}

/// Parses a newc archive back into entries (stopping at the trailer): what the tests use to
/// check [`write()`], and a guard that an archive is well formed.
#[cfg(test)]
pub(crate) fn parse(mut buf: &[u8]) -> io::Result<Vec<Entry>> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    let mut entries = Vec::new();
    let mut offset = 0usize;
    loop {
        if buf.len() < 110 || &buf[..6] != b"070701" {
            return Err(bad("missing newc header (070701)"));
        }
        let field = |i: usize| -> io::Result<u32> {
            let s = std::str::from_utf8(&buf[6 + 8 * i..14 + 8 * i]).map_err(|_| bad("hex"))?;
            u32::from_str_radix(s, 16).map_err(|_| bad("hex field"))
        };
        let mode = field(1)?;
        let size = field(6)? as usize;
        let rdev = (field(9)?, field(10)?);
        let namesize = field(11)? as usize;
        let name_end = 110 + namesize;
        let data_start = (offset + name_end).div_ceil(4) * 4 - offset;
        let data_end = data_start + size;
        if namesize == 0 || buf.len() < data_end {
            return Err(bad("truncated entry"));
        }
        let name = std::str::from_utf8(&buf[110..name_end - 1])
            .map_err(|_| bad("name is not UTF-8"))?
            .to_string();
        if name == "TRAILER!!!" {
            return Ok(entries);
        }
        entries.push(Entry {
            name,
            mode,
            rdev,
            data: buf[data_start..data_end].to_vec(),
        });
        let next = (offset + data_end).div_ceil(4) * 4 - offset;
        let next = next.min(buf.len());
        buf = &buf[next..];
        offset += next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Entry> {
        vec![
            Entry::dir("dev"),
            Entry::char_dev("dev/console", 0o600, 5, 1),
            Entry::dir("proc"),
            Entry::file("init", 0o755, b"\x7fELF odd length".to_vec()),
            Entry::file("empty", 0o644, Vec::new()),
        ]
    }

    #[test]
    fn round_trips() {
        let bytes = write(&sample()).unwrap();
        assert_eq!(bytes.len() % 512, 0);
        assert_eq!(&bytes[..6], b"070701");
        assert_eq!(parse(&bytes).unwrap(), sample());
    }

    #[test]
    fn header_fields_are_what_the_kernel_expects() {
        let bytes = write(&[Entry::file("init", 0o755, b"abc".to_vec())]).unwrap();
        let h = std::str::from_utf8(&bytes[..110]).unwrap();
        // ino 1, mode 0100755, nlink 1, size 3, namesize 5 ("init\0").
        assert_eq!(&h[6..14], "00000001");
        assert_eq!(&h[14..22], "000081ED");
        assert_eq!(&h[38..46], "00000001");
        assert_eq!(&h[54..62], "00000003");
        assert_eq!(&h[94..102], "00000005");
        // Name padded to 4 (110 + 5 = 115 → 116), then the data.
        assert_eq!(&bytes[110..116], b"init\0\0");
        assert_eq!(&bytes[116..119], b"abc");
    }

    #[test]
    fn agrees_with_cpio_when_installed() {
        if crate::skip::without("cpio") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.cpio");
        std::fs::write(&path, write(&sample()).unwrap()).unwrap();
        let out = std::process::Command::new("cpio")
            .args(["-t", "-F"])
            .arg(&path)
            .output();
        let out = out.expect("cpio runs");
        assert!(out.status.success());
        let listed = String::from_utf8_lossy(&out.stdout);
        let names: Vec<&str> = listed.lines().collect();
        assert_eq!(names, ["dev", "dev/console", "proc", "init", "empty"]);
    }

    #[test]
    fn rejects_bad_names_and_truncation() {
        assert!(write(&[Entry::dir("/abs")]).is_err());
        let bytes = write(&sample()).unwrap();
        assert!(parse(&bytes[..200]).is_err());
        assert!(parse(b"not an archive").is_err());
    }
}
