//! Scratch of a run: `run-PID` in tscope's cache directory (the initramfs, disk images), or,
//! when the cache is read-only (a shared, pre-seeded cache), `tscope-vm-PID` in the temporary
//! directory. What an interrupted or killed run leaves is swept by the next run: `run-PID`,
//! `fetch-PID` (a package being unpacked) and `NAME.tmpPID` (a kernel or vmlinux being
//! written) in the cache, and `tscope-vm-PID` in the temporary directory, whose process is
//! gone.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Context, Result};

fn dead(pid: &str) -> bool {
    pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists()
}

/// Creates this run's scratch directory: in the cache if it is writable, else in the
/// temporary directory. The caller removes it when the run ends, however it ends.
pub(crate) fn work_dir(cache: &Path) -> Result<PathBuf> {
    let pid = std::process::id();
    let in_cache = cache.join(format!("run-{pid}"));
    if fs::create_dir_all(&in_cache).is_ok() {
        return Ok(in_cache);
    }
    let tmp = std::env::temp_dir().join(format!("tscope-vm-{pid}"));
    fs::create_dir_all(&tmp)
        .with_context(|| format!("creating '{}' (the cache is not writable)", tmp.display()))?;
    Ok(tmp)
}

/// Removes the scratch of runs that were killed before cleaning up: `run-PID` and `fetch-PID`
/// directories and `*.tmpPID` files in the kernel caches whose process is gone, and
/// `tscope-vm-PID` directories in the temporary directory.
pub(crate) fn sweep_stale(cache: &Path) {
    let mut dirs = vec![cache.join("vmlinux")];
    if let Ok(entries) = fs::read_dir(cache.join("kernels")) {
        dirs.extend(entries.flatten().map(|e| e.path()));
    }
    let sweep_dirs = |parent: &Path, prefixes: &[&str]| {
        for e in fs::read_dir(parent).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = prefixes.iter().find_map(|p| name.strip_prefix(p));
            if pid.is_some_and(dead) {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    };
    sweep_dirs(cache, &["run-", "fetch-"]);
    sweep_dirs(&std::env::temp_dir(), &["tscope-vm-"]);
    for d in dirs {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.rsplit_once(".tmp").map(|(_, p)| p);
            if pid.is_some_and(dead) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}
