//! File system calls with exactly one system call each and no allocation, for workloads whose
//! per-iteration syscall sequence is part of their definition (`vfsmix`, `write-only`,
//! `write-stat`). Paths are `CStr`s built once by the caller.
//!
//! glibc 2.36 on x86_64 issues: `open` → `openat`, `lstat` → `newfstatat(AT_SYMLINK_NOFOLLOW)`,
//! `fstat` → `newfstatat(fd, "", AT_EMPTY_PATH)`, `unlink` → `unlink`.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `open(path, flags, mode)`, flags exactly as given (no `O_CLOEXEC` added: the workloads'
/// definitions name their flags, and workers never exec).
#[inline(always)]
pub fn open(path: &CStr, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    // SAFETY: `path` is NUL-terminated and lives across the call; mode is only read with
    // O_CREAT, and passing it otherwise is harmless.
    let fd = unsafe { libc::open(path.as_ptr(), flags, mode as libc::c_uint) };
    check(fd)?;
    // SAFETY: open succeeded, so `fd` is an open descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `lstat(path)`, result discarded (the workload only needs the call).
#[inline(always)]
pub fn lstat(path: &CStr) -> io::Result<()> {
    // SAFETY: all-zero is a valid `stat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated; `st` is valid and writable.
    check(unsafe { libc::lstat(path.as_ptr(), &mut st) })
}

/// A file's modification time, seconds and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mtime {
    pub sec: i64,
    pub nsec: i64,
}

/// `fstat(fd)`, returning the modification time.
#[inline(always)]
pub fn fstat_mtime(fd: BorrowedFd<'_>) -> io::Result<Mtime> {
    // SAFETY: all-zero is a valid `stat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open for the borrow; `st` is valid and writable.
    check(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(Mtime {
        sec: st.st_mtime,
        nsec: st.st_mtime_nsec,
    })
}

/// `lseek(fd, offset, SEEK_SET)`; returns the new offset.
#[inline(always)]
pub fn lseek(fd: BorrowedFd<'_>, offset: i64) -> io::Result<i64> {
    // SAFETY: lseek only reads its integer arguments.
    let r = unsafe { libc::lseek(fd.as_raw_fd(), offset, libc::SEEK_SET) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r)
}

/// `pwrite(fd, &byte, 1, offset)`; returns the count written.
#[inline(always)]
pub fn pwrite_byte(fd: BorrowedFd<'_>, byte: u8, offset: i64) -> io::Result<usize> {
    // SAFETY: the buffer is one valid byte on our stack; `fd` is open for the borrow.
    let n = unsafe { libc::pwrite(fd.as_raw_fd(), (&byte as *const u8).cast(), 1, offset) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// `close(fd)`, reporting its error (dropping an `OwnedFd` ignores it).
#[inline(always)]
pub fn close(fd: OwnedFd) -> io::Result<()> {
    use std::os::fd::IntoRawFd;
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` came from an OwnedFd we consumed, so it is open and closed exactly once.
    check(unsafe { libc::close(raw) })
}

/// `mkfifo(path, mode)`: a named pipe (glibc issues `mknodat(AT_FDCWD, path, S_IFIFO|mode)`).
pub fn mkfifo(path: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated and lives across the call.
    check(unsafe { libc::mkfifo(path.as_ptr(), mode) })
}

/// `unlink(path)`.
#[inline(always)]
pub fn unlink(path: &CStr) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated and lives across the call.
    check(unsafe { libc::unlink(path.as_ptr()) })
}

/// `statfs(path).f_type`: the file system's magic number.
pub fn statfs_magic(path: &CStr) -> io::Result<i64> {
    // SAFETY: all-zero is a valid `statfs`.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated; `st` is valid and writable.
    check(unsafe { libc::statfs(path.as_ptr(), &mut st) })?;
    Ok(st.f_type as i64)
}
