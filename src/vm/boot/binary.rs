//! The tscope that runs as the guest's `/init`, and the initramfs that carries it.
//!
//! By default the guest runs this very binary: an installed tscope needs no source tree, no
//! cargo and no flags. A static build goes in alone; a dynamically linked one goes in with its
//! program interpreter and the shared libraries it names (`DT_NEEDED`, followed through each
//! library), read from the host's library directories, so the guest's PID 1 runs the same
//! code, vDSO calls included, as the host's tscope. Both go in without the debug information
//! ([`Elf::stripped`]): a release build with `debug = 1` is 39 MB, its loaded part 5.6 MB.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::elf::Elf;
use crate::error::{Context, Result};
use crate::fail as bail;
use crate::vm::boot::cpio::{self, Entry};

/// The largest guest binary or library read (a tscope with full debug information is under
/// 100 MB; the guest gets only its loaded part).
pub(crate) const MAX_BINARY_BYTES: u64 = 512 << 20;

/// Where a glibc system looks for libraries when no cache or path says otherwise.
const LIBRARY_DIRS: [&str; 6] = [
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// The program for the guest's `/init` and what it needs to run there.
#[derive(Debug, Clone)]
pub(crate) struct GuestBinary {
    /// The file on the host (`--guest-bin`, or this tscope).
    pub path: PathBuf,
    /// Its loaded part.
    pub program: Vec<u8>,
    /// Interpreter and libraries at their paths inside the guest (empty for a static build).
    pub runtime: Vec<(String, Vec<u8>)>,
}

/// Whether an ELF file is statically linked (no `PT_INTERP` program header); `false` for what
/// is not ELF at all.
#[cfg(test)]
pub(crate) fn is_static_elf(bytes: &[u8]) -> bool {
    Elf::parse(bytes).is_ok_and(|e| e.interpreter().is_ok_and(|i| i.is_none()))
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>> {
    crate::input::read_regular(path, what, MAX_BINARY_BYTES, None)
}

/// Finds `name` in the host's library directories.
fn find_library(name: &str) -> Option<PathBuf> {
    LIBRARY_DIRS
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// The interpreter and every library the program needs, transitively, as guest paths with
/// their contents.
fn runtime(elf: &Elf, interp: &str) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out = vec![(
        interp.trim_start_matches('/').to_string(),
        read(Path::new(interp), "program interpreter")?,
    )];
    let interp_name = Path::new(interp).file_name().and_then(|n| n.to_str());
    let mut seen = BTreeSet::new();
    let mut queue = elf.needed()?;
    while let Some(name) = queue.pop() {
        if Some(name.as_str()) == interp_name || !seen.insert(name.clone()) {
            continue;
        }
        let Some(host) = find_library(&name) else {
            bail!(
                "the guest binary needs {name}, which is in none of {}; pass --guest-bin \
                 PATH to a static build (see docs/vm.md)",
                LIBRARY_DIRS.join(", ")
            );
        };
        let bytes = read(&host, "shared library")?;
        let lib = Elf::parse(&bytes).with_context(|| format!("reading '{}'", host.display()))?;
        queue.extend(lib.needed()?);
        out.push((format!("lib/x86_64-linux-gnu/{name}"), lib.stripped()));
    }
    Ok(out)
}

/// The guest's `/init`: `--guest-bin`, else this tscope; with its interpreter and libraries
/// when it is dynamically linked.
pub(crate) fn guest_binary(given: Option<&Path>) -> Result<GuestBinary> {
    let path = match given {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe().context("finding this tscope's own binary")?,
    };
    let bytes = read(&path, "guest binary")?;
    let elf = Elf::parse(&bytes)
        .with_context(|| format!("guest binary '{}' is not an x86-64 program", path.display()))?;
    let runtime = match elf.interpreter()? {
        None => Vec::new(),
        Some(interp) => runtime(&elf, &interp)
            .with_context(|| format!("gathering what '{}' needs to run", path.display()))?,
    };
    Ok(GuestBinary {
        program: elf.stripped(),
        path,
        runtime,
    })
}

/// The initramfs: `/init` (tscope), `/dev/console` (the kernel opens it for init before
/// devtmpfs exists), the mount points, and the interpreter and libraries of a dynamic build.
pub(crate) fn initramfs(bin: &GuestBinary) -> std::io::Result<Vec<u8>> {
    let mut entries = vec![
        Entry::dir("dev"),
        Entry::char_dev("dev/console", 0o600, 5, 1),
        Entry::dir("proc"),
        Entry::dir("sys"),
    ];
    let mut dirs = BTreeSet::new();
    for (name, _) in &bin.runtime {
        let mut at = Path::new(name).parent();
        while let Some(d) = at.filter(|d| !d.as_os_str().is_empty()) {
            dirs.insert(d.to_string_lossy().into_owned());
            at = d.parent();
        }
    }
    entries.extend(dirs.iter().map(|d| Entry::dir(d)));
    entries.extend(
        bin.runtime
            .iter()
            .map(|(name, data)| Entry::file(name, 0o755, data.clone())),
    );
    entries.push(Entry::file("init", 0o755, bin.program.clone()));
    cpio::write(&entries)
}
