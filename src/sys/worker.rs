//! Processes and pipes for the workload runner: `fork` with a parent-death signal, `waitpid`,
//! `kill`, `pipe2`, one-byte `read`/`write`, `sched_yield`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// A child process id.
pub type Pid = libc::pid_t;

/// Forks a worker that runs `f` and exits with its return value through `_exit` (no atexit
/// handlers, no second flush of the parent's stdio buffers). The child gets `SIGKILL` when the
/// parent dies (`PR_SET_PDEATHSIG`), and exits at once if the parent is already gone.
///
/// The caller must not have other threads running: after `fork` only the calling thread exists
/// in the child, and a lock another thread held (the allocator's, say) would stay locked.
pub fn fork_worker<F: FnOnce() -> i32>(f: F) -> io::Result<Pid> {
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork has no preconditions; the single-threaded requirement is the caller's (see
    // above), and the child only runs `f` and then `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid > 0 {
        return Ok(pid);
    }
    // Child.
    // SAFETY: PR_SET_PDEATHSIG takes a signal number; the unused arguments are ignored.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    // SAFETY: getppid cannot fail.
    let orphaned = unsafe { libc::getppid() } != parent;
    let code = if rc != 0 || orphaned {
        1
    } else {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(101)
    };
    // SAFETY: _exit never returns and is async-signal-safe; it skips atexit handlers, which
    // belong to the parent.
    unsafe { libc::_exit(code) }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// `waitpid(pid)`; with `block == false` returns `Ok(None)` while the child still runs.
pub fn wait(pid: Pid, block: bool) -> io::Result<Option<Exit>> {
    let mut status = 0;
    let flags = if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: `status` is a valid, writable int; `pid` is our own child.
        let rc = unsafe { libc::waitpid(pid, &mut status, flags) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if rc == 0 {
            return Ok(None);
        }
        return Ok(Some(if libc::WIFSIGNALED(status) {
            Exit::Signal(libc::WTERMSIG(status))
        } else {
            Exit::Code(libc::WEXITSTATUS(status))
        }));
    }
}

/// Sends `SIGKILL` to `pid`.
pub fn kill(pid: Pid) -> io::Result<()> {
    // SAFETY: kill takes a pid and a signal number; errors come back as -1 with errno.
    if unsafe { libc::kill(pid, libc::SIGKILL) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `pipe2(O_CLOEXEC)`: returns the read end and the write end.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so fds[0] is an open descriptor that nothing else owns.
    let r = unsafe { OwnedFd::from_raw_fd(fds[0]) };
    // SAFETY: likewise for the write end.
    let w = unsafe { OwnedFd::from_raw_fd(fds[1]) };
    Ok((r, w))
}

/// `write(fd, &byte, 1)`: one system call; returns the count written (0 or 1).
///
/// Issued through `syscall(SYS_write, …)`, not glibc's `write`: `write` and `read` are
/// cancellation points, and in a process that has (or, like a worker forked from tscope, had)
/// a second thread glibc brackets each one with `__pthread_enable_asynccancel` /
/// `__pthread_disable_asynccancel` (atomic updates of the thread's cancel state). On a pipe1
/// iteration that was about 15% of the worker's CPU time, which a single-threaded C loop does
/// not pay. The kernel sees the same call either way.
#[inline(always)]
pub fn write_byte(fd: BorrowedFd<'_>, byte: u8) -> io::Result<usize> {
    // SAFETY: SYS_write takes (fd, buffer, count); the buffer is one valid byte on our stack
    // and `fd` is open for the borrow.
    let n = unsafe {
        libc::syscall(
            libc::SYS_write,
            fd.as_raw_fd(),
            (&byte as *const u8).cast::<libc::c_void>(),
            1usize,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// `read(fd, &byte, 1)`: one system call; `Ok(None)` at end of file. Through
/// `syscall(SYS_read, …)` for the reason [`write_byte`] gives.
#[inline(always)]
pub fn read_byte(fd: BorrowedFd<'_>) -> io::Result<Option<u8>> {
    let mut byte = 0u8;
    // SAFETY: SYS_read takes (fd, buffer, count); the buffer is one valid, writable byte and
    // `fd` is open for the borrow.
    let n = unsafe {
        libc::syscall(
            libc::SYS_read,
            fd.as_raw_fd(),
            (&mut byte as *mut u8).cast::<libc::c_void>(),
            1usize,
        )
    };
    match n {
        n if n < 0 => Err(io::Error::last_os_error()),
        0 => Ok(None),
        _ => Ok(Some(byte)),
    }
}

/// `sched_yield()`: gives up the CPU if another task is runnable on it.
#[inline(always)]
pub fn sched_yield() -> io::Result<()> {
    // SAFETY: SYS_sched_yield takes no arguments; on Linux it always succeeds. Raw like the
    // other per-iteration calls (it is not a cancellation point, so this only keeps them alike).
    if unsafe { libc::syscall(libc::SYS_sched_yield) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
