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
