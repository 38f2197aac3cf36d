//! A stop flag raised by SIGINT, SIGTERM and SIGHUP, so that long runs clean up after
//! themselves (temporary files, child processes) and print what they measured so far.
//!
//! The handler only stores to a static atomic, which is async-signal-safe. It is installed with
//! `SA_RESTART`, so interrupted `read`/`write` calls in workers resume instead of failing with
//! `EINTR`; the workers watch their own shared stop flag, not this one.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT, SIGTERM and SIGHUP (idempotent).
pub fn install_stop_handler() -> io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: all-zero is a valid `sigaction` (empty mask, no flags, SIG_DFL).
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        // SAFETY: `sa.sa_mask` is a valid, writable sigset_t.
        unsafe { libc::sigemptyset(&mut sa.sa_mask) };
        // SAFETY: `sa` is a fully initialised sigaction whose handler only touches an atomic;
        // a null old-action pointer is allowed.
        let rc = unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
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
