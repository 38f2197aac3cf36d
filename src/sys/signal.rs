//! A stop flag raised by SIGINT, SIGTERM and SIGHUP, so that long runs clean up after
//! themselves (temporary files, child processes) and print what they measured so far.
//!
//! `signal-hook` installs the handlers: they only store to a static atomic, which is
//! async-signal-safe, and they are installed with `SA_RESTART`, so interrupted `read`/`write`
//! calls in workers resume instead of failing with `EINTR`; the workers watch their own shared
//! stop flag, not this one. The file stays in `sys/` because it owns process-wide signal state.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

static STOP: AtomicBool = AtomicBool::new(false);

/// Whether the handlers are registered: registering twice would only add a second identical
/// action per signal, but installing stays idempotent.
static INSTALLED: Mutex<bool> = Mutex::new(false);

/// Installs the handler for SIGINT, SIGTERM and SIGHUP (idempotent).
pub fn install_stop_handler() -> io::Result<()> {
    let mut installed = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner);
    if !*installed {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            signal_hook::flag::register(sig, &STOP)?;
        }
        *installed = true;
    }
    Ok(())
}

/// Whether a stop signal arrived since the start (or the last [`clear_stop`]).
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Raises the flag as a signal would (tests, and a failing worker).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Lowers the flag.
pub fn clear_stop() {
    STOP.store(false, Ordering::SeqCst);
}

/// Sends `sig` to process `pid` (`kill(2)`); a process already gone is not an error.
pub fn send(pid: u32, sig: libc::c_int) -> io::Result<()> {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    if pid <= 0 {
        // 0 and negative pids name process groups: never what a caller of this means.
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: kill(2) takes two integers and no pointer; pid > 0 names exactly one process.
    if unsafe { libc::kill(pid, sig) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(e);
        }
    }
    Ok(())
}

/// The processes descended from `root` (children, their children, …) from `/proc/*/stat`,
/// parents before children.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid …: comm may hold spaces and parentheses.
            let ppid = stat
                .rfind(')')
                .and_then(|c| stat[c + 1..].split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(ppid) = ppid {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out.remove(0);
    out
}

/// Whether process `pid` exists (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rfind(')')
            .is_some_and(|c| !s[c + 1..].trim_start().starts_with('Z'))
    })
}
