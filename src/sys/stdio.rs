//! Whether standard output or standard input was closed when the process started
//! (`tscope … >&-`, `tscope fleet add - <&-`).
//!
//! Rust's runtime reopens a closed descriptor 0, 1 or 2 on `/dev/null` before `main`, so that
//! later writes cannot land in a file the program opened meanwhile; from `main` on, a closed
//! stdout is indistinguishable from `>/dev/null` and every write "succeeds". A function in
//! `.init_array` runs before that (the C runtime calls it before `main`), sees descriptor 1 as
//! it was given, and records it here; [`crate::export::emit`] then refuses to write to it, and
//! `fleet add -` refuses to read a closed stdin as an empty one.

use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED_AT_START: AtomicBool = AtomicBool::new(false);
static STDIN_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// Whether descriptor `fd` is closed.
fn closed(fd: libc::c_int) -> bool {
    // SAFETY: fcntl(F_GETFD) on a descriptor number only reads this process's descriptor
    // table; it touches no memory of ours and fails with EBADF on a closed descriptor.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    flags == -1
}

/// Records whether descriptors 1 and 0 are open; runs from `.init_array`, before Rust's
/// runtime.
extern "C" fn check_stdout_at_start() {
    if closed(libc::STDOUT_FILENO) {
        CLOSED_AT_START.store(true, Ordering::Relaxed);
    }
    if closed(libc::STDIN_FILENO) {
        STDIN_CLOSED_AT_START.store(true, Ordering::Relaxed);
    }
}

/// The C runtime calls each function in `.init_array` once before `main`, on the main thread;
/// `check_stdout_at_start` takes no arguments (the runtime passes argc, argv and envp, which
/// the x86_64 and aarch64 calling conventions let a callee ignore) and only stores an atomic.
#[used]
#[link_section = ".init_array"]
static CHECK_STDOUT_AT_START: extern "C" fn() = check_stdout_at_start;

/// Whether descriptor 1 was closed when tscope started (`>&-`), before the runtime put
/// `/dev/null` there.
pub fn stdout_closed_at_start() -> bool {
    CLOSED_AT_START.load(Ordering::Relaxed)
}

/// Whether descriptor 0 was closed when tscope started (`<&-`), before the runtime put
/// `/dev/null` there.
pub fn stdin_closed_at_start() -> bool {
    STDIN_CLOSED_AT_START.load(Ordering::Relaxed)
}
