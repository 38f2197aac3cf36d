//! Scratch that an interrupted or killed run leaves in tscope's cache directory, swept by the
//! next run: `run-PID` (the initramfs), `fetch-PID` (a package being unpacked) and
//! `NAME.tmpPID` (a kernel or vmlinux being written) whose process is gone.

use std::fs;
use std::path::Path;

/// Removes the scratch of runs that were killed before cleaning up: `run-PID` and `fetch-PID`
/// directories and `*.tmpPID` files in the kernel caches whose process is gone.
pub fn sweep_stale(cache: &Path) {
    let dead = |pid: &str| pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists();
    let mut dirs = vec![cache.join("vmlinux")];
    if let Ok(entries) = fs::read_dir(cache.join("kernels")) {
        dirs.extend(entries.flatten().map(|e| e.path()));
    }
    if let Ok(entries) = fs::read_dir(cache) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name
                .strip_prefix("run-")
                .or_else(|| name.strip_prefix("fetch-"));
            if pid.is_some_and(dead) {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
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
