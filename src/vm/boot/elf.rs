//! Just enough of ELF64 (little-endian, x86-64) to put a program into a guest: whether it is
//! static, its interpreter and the libraries it needs, and a copy without what only a debugger
//! reads. Every offset is checked against the file's length; a malformed file is an error,
//! never a panic. The layout is the System V ABI's (`Elf64_Ehdr`, `Elf64_Phdr`, `Elf64_Dyn`).

use crate::error::Result;
use crate::fail as bail;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const PT_NOTE: u32 = 4;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;

/// One program header: what the kernel and the dynamic loader read.
#[derive(Debug, Clone, Copy)]
struct Segment {
    kind: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
}

/// A parsed ELF64 file: its bytes and program headers.
#[derive(Debug)]
pub(crate) struct Elf<'a> {
    bytes: &'a [u8],
    segments: Vec<Segment>,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    b.get(o..o.checked_add(2)?)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    b.get(o..o.checked_add(4)?)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_le_bytes)
}

fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    b.get(o..o.checked_add(8)?)
        .and_then(|s| s.try_into().ok())
        .map(u64::from_le_bytes)
}

impl<'a> Elf<'a> {
    /// Parses the header and program headers; every segment must lie inside the file.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self> {
        if !bytes.starts_with(b"\x7fELF\x02\x01") {
            bail!("not a 64-bit little-endian ELF file");
        }
        let (Some(phoff), Some(phentsize), Some(phnum)) = (
            u64_at(bytes, 0x20),
            u16_at(bytes, 0x36),
            u16_at(bytes, 0x38),
        ) else {
            bail!("ELF header truncated");
        };
        if phentsize < 56 {
            bail!("ELF program header size {phentsize} is below 56");
        }
        let mut segments = Vec::with_capacity(usize::from(phnum));
        for i in 0..usize::from(phnum) {
            let at = usize::try_from(phoff)
                .ok()
                .and_then(|p| p.checked_add(i * usize::from(phentsize)));
            let read = at.and_then(|a| {
                Some(Segment {
                    kind: u32_at(bytes, a)?,
                    offset: u64_at(bytes, a + 8)?,
                    vaddr: u64_at(bytes, a + 16)?,
                    filesz: u64_at(bytes, a + 32)?,
                })
            });
            let Some(s) = read else {
                bail!("ELF program header {i} lies outside the file");
            };
            if s.offset
                .checked_add(s.filesz)
                .is_none_or(|end| end > bytes.len() as u64)
            {
                bail!(
                    "ELF segment {i} ends at {} bytes, past the file's {} bytes (truncated?)",
                    s.offset.saturating_add(s.filesz),
                    bytes.len()
                );
            }
            segments.push(s);
        }
        if !segments.iter().any(|s| s.kind == PT_LOAD) {
            bail!("ELF file has no loadable segment");
        }
        Ok(Elf { bytes, segments })
    }

    fn contents(&self, s: &Segment) -> &'a [u8] {
        // In bounds: checked in parse.
        &self.bytes[s.offset as usize..(s.offset + s.filesz) as usize]
    }

    /// Every note in the `PT_NOTE` segments: (name, type); a malformed note ends the list.
    pub(crate) fn notes(&self) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        for s in self.segments.iter().filter(|s| s.kind == PT_NOTE) {
            let b = self.contents(s);
            let mut at = 0usize;
            // Elf64_Nhdr: namesz, descsz, type; then name and desc, each padded to 4 bytes.
            while let (Some(namesz), Some(descsz), Some(kind)) =
                (u32_at(b, at), u32_at(b, at + 4), u32_at(b, at + 8))
            {
                let pad = |n: u32| (n as usize).div_ceil(4) * 4;
                let name = b.get(at + 12..at + 12 + namesz as usize).map(|n| {
                    String::from_utf8_lossy(n)
                        .trim_end_matches('\0')
                        .to_string()
                });
                let Some(name) = name else { break };
                out.push((name, kind));
                at += 12 + pad(namesz) + pad(descsz);
            }
        }
        out
    }

    /// The program interpreter (`PT_INTERP`), `None` for a static program.
    pub(crate) fn interpreter(&self) -> Result<Option<String>> {
        let Some(s) = self.segments.iter().find(|s| s.kind == PT_INTERP) else {
            return Ok(None);
        };
        let raw = self.contents(s);
        let raw = raw.split(|&b| b == 0).next().unwrap_or_default();
        match std::str::from_utf8(raw) {
            Ok(p) if p.starts_with('/') => Ok(Some(p.to_string())),
            _ => bail!("ELF interpreter is not an absolute path"),
        }
    }

    /// The file offset of virtual address `vaddr`, through the loadable segment holding it.
    fn offset_of(&self, vaddr: u64) -> Option<u64> {
        self.segments
            .iter()
            .filter(|s| s.kind == PT_LOAD)
            .find(|s| vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz)
            .map(|s| s.offset + (vaddr - s.vaddr))
    }

    /// The libraries the program names (`DT_NEEDED`), in order.
    pub(crate) fn needed(&self) -> Result<Vec<String>> {
        let Some(dynamic) = self.segments.iter().find(|s| s.kind == PT_DYNAMIC) else {
            return Ok(Vec::new());
        };
        let d = self.contents(dynamic);
        let entries: Vec<(u64, u64)> = d
            .chunks_exact(16)
            .map(|e| (u64_at(e, 0).unwrap_or(0), u64_at(e, 8).unwrap_or(0)))
            .take_while(|&(tag, _)| tag != DT_NULL)
            .collect();
        let Some(strtab) = entries.iter().find(|(t, _)| *t == DT_STRTAB).map(|e| e.1) else {
            bail!("ELF dynamic section has no string table");
        };
        let Some(base) = self.offset_of(strtab) else {
            bail!("ELF string table address {strtab:#x} is in no loaded segment");
        };
        let mut out = Vec::new();
        for &(_, at) in entries.iter().filter(|(t, _)| *t == DT_NEEDED) {
            let start = base.checked_add(at).and_then(|o| usize::try_from(o).ok());
            let name = start
                .and_then(|s| self.bytes.get(s..))
                .and_then(|rest| rest.split(|&b| b == 0).next())
                .and_then(|n| std::str::from_utf8(n).ok());
            match name {
                Some(n) if !n.is_empty() && !n.contains('/') => out.push(n.to_string()),
                _ => bail!("ELF needed-library name at {at:#x} is unreadable"),
            }
        }
        Ok(out)
    }

    /// A copy holding only what the kernel and the dynamic loader read: everything up to the
    /// end of the last segment, with no section headers (so no debug information or symbol
    /// table — a backtrace loses names, nothing else changes).
    pub(crate) fn stripped(&self) -> Vec<u8> {
        let end = self
            .segments
            .iter()
            .map(|s| s.offset + s.filesz)
            .max()
            .unwrap_or(0)
            .max(64) as usize;
        let mut out = self.bytes[..end.min(self.bytes.len())].to_vec();
        // e_shoff = 0, e_shnum = 0, e_shstrndx = 0 (SHN_UNDEF): no section header table.
        out[0x28..0x30].fill(0);
        out[0x3c..0x40].fill(0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_test_binary() {
        // The test binary is dynamically linked against libc, like an installed tscope.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let elf = Elf::parse(&me).unwrap();
        let interp = elf.interpreter().unwrap().unwrap();
        assert!(interp.contains("ld-linux"), "{interp}");
        let needed = elf.needed().unwrap();
        assert!(
            needed.iter().any(|n| n.starts_with("libc.so")),
            "{needed:?}"
        );
        let small = elf.stripped();
        assert!(small.len() < me.len());
        let again = Elf::parse(&small).unwrap();
        assert_eq!(again.interpreter().unwrap().unwrap(), interp);
        assert_eq!(again.needed().unwrap(), needed);
    }

    #[test]
    fn malformed_files_are_errors() {
        assert!(Elf::parse(b"#!/bin/sh\n").is_err());
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        // Truncated inside its segments.
        let e = Elf::parse(&me[..me.len().min(4096)]).err().unwrap();
        assert!(
            e.to_string().contains("truncated") || e.to_string().contains("outside"),
            "{e}"
        );
        // A header with no program headers has nothing to load.
        let mut bare = vec![0u8; 64];
        bare[..6].copy_from_slice(b"\x7fELF\x02\x01");
        bare[0x36] = 56;
        assert!(Elf::parse(&bare).is_err());
    }
}
