//! File system calls with exactly one system call each and no allocation, for workloads whose
//! per-iteration syscall sequence is part of their definition (`vfsmix`, `write-only`,
//! `write-stat`). Paths are `CStr`s built once by the caller.
//!
//! The calls a workload makes per iteration go through `syscall(SYS_…)` with the arguments
//! glibc 2.36 on x86_64 passes for its wrappers, so the kernel (and strace, and a kprobe count)
//! sees the same calls: `open` → `openat(AT_FDCWD, …)`, `lstat` →
//! `newfstatat(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW)`, `fstat` → `newfstatat(fd, "",
//! AT_EMPTY_PATH)`, `unlink` → `unlink` (`unlinkat(AT_FDCWD, path, 0)` where there is no
//! `unlink`), `lseek`, `pwrite64`, `close`. glibc's `open`, `close` and `pwrite` are cancellation
//! points: in a process that has (or, like a worker forked from tscope, had) a second thread,
//! glibc brackets each with `__pthread_enable_asynccancel` / `__pthread_disable_asynccancel`,
//! which a plain C loop does not pay (see `sys::worker::write_byte`).

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

fn check(rc: libc::c_long) -> io::Result<()> {
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
    // glibc passes the mode only with O_CREAT or O_TMPFILE, 0 otherwise.
    let mode = if flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE {
        mode
    } else {
        0
    };
    // SAFETY: SYS_openat takes (dirfd, path, flags, mode); `path` is NUL-terminated and lives
    // across the call, and the other arguments are integers.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            mode as libc::c_uint,
        )
    };
    check(fd)?;
    // SAFETY: openat succeeded, so `fd` is an open descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// `lstat(path)`, result discarded (the workload only needs the call).
#[inline(always)]
pub fn lstat(path: &CStr) -> io::Result<()> {
    // SAFETY: all-zero is a valid `stat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: SYS_newfstatat takes (dirfd, path, buffer, flags); `path` is NUL-terminated, and
    // `st` is a valid, writable `stat` (the kernel's layout on this target).
    check(unsafe {
        libc::syscall(
            libc::SYS_newfstatat,
            libc::AT_FDCWD,
            path.as_ptr(),
            &mut st as *mut libc::stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })
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
    // SAFETY: SYS_newfstatat takes (dirfd, path, buffer, flags); `fd` is open for the borrow,
    // the empty path is a NUL-terminated static, and `st` is a valid, writable `stat`.
    check(unsafe {
        libc::syscall(
            libc::SYS_newfstatat,
            fd.as_raw_fd(),
            c"".as_ptr(),
            &mut st as *mut libc::stat,
            libc::AT_EMPTY_PATH,
        )
    })?;
    Ok(Mtime {
        sec: st.st_mtime,
        nsec: st.st_mtime_nsec,
    })
}

/// `statx(dirfd, path, flags, mask)`, returning the modification, change and access times the
/// kernel filled.
#[inline(always)]
fn statx_at(
    dirfd: libc::c_int,
    path: &CStr,
    flags: libc::c_int,
    mask: u32,
) -> io::Result<(Mtime, Mtime, Mtime)> {
    // SAFETY: all-zero is a valid `statx`.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: SYS_statx takes (dirfd, path, flags, mask, buffer); `dirfd` is AT_FDCWD or a
    // descriptor the caller holds open across the call, `path` is NUL-terminated and lives
    // across it, and `st` is a valid, writable `statx`.
    check(unsafe {
        libc::syscall(
            libc::SYS_statx,
            dirfd,
            path.as_ptr(),
            flags,
            mask,
            &mut st as *mut libc::statx,
        )
    })?;
    let time = |t: libc::statx_timestamp| Mtime {
        sec: t.tv_sec,
        nsec: i64::from(t.tv_nsec),
    };
    Ok((time(st.stx_mtime), time(st.stx_ctime), time(st.stx_atime)))
}

/// `statx(dirfd, path, flags, STATX_ATIME)`: the access time alone. Asking for neither the
/// mtime nor the ctime never marks the ctime queried (`generic_fillattr` calls
/// `fill_mg_cmtime` only for `STATX_CTIME`/`STATX_MTIME`), so reading it changes no later
/// timestamp.
fn statx_atime_at(dirfd: libc::c_int, path: &CStr, flags: libc::c_int) -> io::Result<Mtime> {
    Ok(statx_at(dirfd, path, flags, libc::STATX_ATIME)?.2)
}

/// The access time of an open file, asking for nothing else ([`statx_atime_at`]).
pub fn statx_atime(fd: BorrowedFd<'_>) -> io::Result<Mtime> {
    statx_atime_at(fd.as_raw_fd(), c"", libc::AT_EMPTY_PATH)
}

/// The access time of `path` (not following a last symlink), asking for nothing else.
pub fn statx_path_atime(path: &CStr) -> io::Result<Mtime> {
    statx_atime_at(libc::AT_FDCWD, path, libc::AT_SYMLINK_NOFOLLOW)
}

/// `statx(fd, "", AT_EMPTY_PATH, mask)`, returning the modification time the kernel filled
/// (statx fills every basic field it has whatever the mask; the mask decides only what the
/// kernel is asked, and on a multigrain filesystem asking for `STATX_MTIME`/`STATX_CTIME`
/// marks the inode's ctime as queried: fs/stat.c `generic_fillattr` → `fill_mg_cmtime`).
#[inline(always)]
pub fn statx_mtime(fd: BorrowedFd<'_>, mask: u32) -> io::Result<Mtime> {
    Ok(statx_at(fd.as_raw_fd(), c"", libc::AT_EMPTY_PATH, mask)?.0)
}

/// [`statx_mtime`]'s change time: what a change that leaves the mtime alone (`fchmod`) moves.
#[inline(always)]
pub fn statx_ctime(fd: BorrowedFd<'_>, mask: u32) -> io::Result<Mtime> {
    Ok(statx_at(fd.as_raw_fd(), c"", libc::AT_EMPTY_PATH, mask)?.1)
}

/// `fchmod(fd, mode)`: a change of the inode's attributes (its ctime, never its mtime).
#[inline(always)]
pub fn fchmod(fd: BorrowedFd<'_>, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: SYS_fchmod takes (fd, mode); `fd` is open for the borrow.
    check(unsafe { libc::syscall(libc::SYS_fchmod, fd.as_raw_fd(), mode) })?;
    Ok(())
}

/// `fsync(fd)`: the file's data and every metadata change, its timestamps included.
#[inline(always)]
pub fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: SYS_fsync takes (fd); `fd` is open for the borrow.
    check(unsafe { libc::syscall(libc::SYS_fsync, fd.as_raw_fd()) })?;
    Ok(())
}

/// `statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, mask)`: [`statx_mtime`] by path, as `lstat`
/// asks (the replayed program's stats of files it has no descriptor for).
#[inline(always)]
pub fn statx_path_mtime(path: &CStr, mask: u32) -> io::Result<Mtime> {
    Ok(statx_at(libc::AT_FDCWD, path, libc::AT_SYMLINK_NOFOLLOW, mask)?.0)
}

/// `getdents64(fd, buf)` once into `buf`; returns the bytes filled (0 at the end). Unlike
/// glibc's `opendir`/`readdir` (and `std::fs::read_dir`, built on them), no `fstat` comes
/// with it: a replayed program's directory reads issue exactly the calls it made.
#[inline(always)]
pub fn getdents64(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: SYS_getdents64 takes (fd, buffer, length); `fd` is open for the borrow and `buf`
    // is valid and writable for `buf.len()` bytes.
    let n = unsafe {
        libc::syscall(
            libc::SYS_getdents64,
            fd.as_raw_fd(),
            buf.as_mut_ptr(),
            buf.len(),
        )
    };
    check(n)?;
    Ok(n as usize)
}

/// `lseek(fd, offset, SEEK_SET)`; returns the new offset.
#[inline(always)]
pub fn lseek(fd: BorrowedFd<'_>, offset: i64) -> io::Result<i64> {
    // SAFETY: SYS_lseek takes (fd, offset, whence), all integers.
    let r = unsafe {
        libc::syscall(
            libc::SYS_lseek,
            fd.as_raw_fd(),
            offset as libc::off_t,
            libc::SEEK_SET,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as i64)
}

/// `pwrite(fd, &byte, 1, offset)`; returns the count written.
#[inline(always)]
pub fn pwrite_byte(fd: BorrowedFd<'_>, byte: u8, offset: i64) -> io::Result<usize> {
    // SAFETY: SYS_pwrite64 takes (fd, buffer, count, offset); the buffer is one valid byte on
    // our stack and `fd` is open for the borrow.
    let n = unsafe {
        libc::syscall(
            libc::SYS_pwrite64,
            fd.as_raw_fd(),
            (&byte as *const u8).cast::<libc::c_void>(),
            1usize,
            offset as libc::off_t,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// `pread(fd, &byte, 1, offset)`; returns the count read (0 at the end of the file).
#[inline(always)]
pub fn pread_byte(fd: BorrowedFd<'_>, offset: i64) -> io::Result<usize> {
    let mut byte = 0u8;
    // SAFETY: SYS_pread64 takes (fd, buffer, count, offset); the buffer is one writable byte
    // on our stack, live for the call, and `fd` is open for the borrow.
    let n = unsafe {
        libc::syscall(
            libc::SYS_pread64,
            fd.as_raw_fd(),
            (&mut byte as *mut u8).cast::<libc::c_void>(),
            1usize,
            offset as libc::off_t,
        )
    };
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
    // SAFETY: SYS_close takes one descriptor; `raw` came from an OwnedFd we consumed, so it is
    // open and closed exactly once.
    check(unsafe { libc::syscall(libc::SYS_close, raw) })
}

/// `mkfifo(path, mode)`: a named pipe (glibc issues `mknodat(AT_FDCWD, path, S_IFIFO|mode)`).
pub fn mkfifo(path: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated and lives across the call.
    check(unsafe { libc::mkfifo(path.as_ptr(), mode) }.into())
}

/// `unlink(path)`.
#[inline(always)]
pub fn unlink(path: &CStr) -> io::Result<()> {
    // SAFETY: SYS_unlink takes one path, NUL-terminated and alive across the call.
    #[cfg(target_arch = "x86_64")]
    let rc = unsafe { libc::syscall(libc::SYS_unlink, path.as_ptr()) };
    // SAFETY: SYS_unlinkat takes (dirfd, path, flags); `path` is NUL-terminated and alive
    // across the call.
    #[cfg(not(target_arch = "x86_64"))]
    let rc = unsafe { libc::syscall(libc::SYS_unlinkat, libc::AT_FDCWD, path.as_ptr(), 0) };
    check(rc)
}

/// `statfs(path).f_type`: the file system's magic number.
pub fn statfs_magic(path: &CStr) -> io::Result<i64> {
    // SAFETY: all-zero is a valid `statfs`.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated; `st` is valid and writable.
    check(unsafe { libc::statfs(path.as_ptr(), &mut st) }.into())?;
    Ok(st.f_type as i64)
}
