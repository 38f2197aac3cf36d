//! Calls relative to a directory descriptor (`openat`, `mkdirat`, `unlinkat`, `renameat2`,
//! `statx`, `fstatfs`, `flock`): what [`crate::dirfd`] builds its rule on, so that a name is
//! resolved once, in a directory tscope holds open, and a symbolic link in its last component
//! is never followed.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

fn check(rc: libc::c_long) -> io::Result<libc::c_long> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// `dirfd` as the raw value for a call: a held descriptor, or `AT_FDCWD` for `None`.
fn raw(dirfd: Option<BorrowedFd<'_>>) -> libc::c_int {
    dirfd.map_or(libc::AT_FDCWD, |d| d.as_raw_fd())
}

/// `openat(dirfd, name, flags | O_CLOEXEC, mode)`; `None` is the current directory.
pub fn openat(
    dirfd: Option<BorrowedFd<'_>>,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    // SAFETY: SYS_openat takes (dirfd, path, flags, mode); `dirfd` is AT_FDCWD or open for the
    // borrow, `name` is NUL-terminated and lives across the call, the rest are integers.
    let fd = check(unsafe {
        libc::syscall(
            libc::SYS_openat,
            raw(dirfd),
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    })?;
    // SAFETY: openat succeeded, so `fd` is an open descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// `mkdirat(dirfd, name, mode)`.
pub fn mkdirat(dirfd: BorrowedFd<'_>, name: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: SYS_mkdirat takes (dirfd, path, mode); `dirfd` is open for the borrow and `name`
    // is NUL-terminated and lives across the call.
    check(unsafe {
        libc::syscall(
            libc::SYS_mkdirat,
            dirfd.as_raw_fd(),
            name.as_ptr(),
            mode as libc::c_uint,
        )
    })?;
    Ok(())
}

/// `unlinkat(dirfd, name, AT_REMOVEDIR if dir)`: removes the name itself, never what a link
/// points at.
pub fn unlinkat(dirfd: BorrowedFd<'_>, name: &CStr, dir: bool) -> io::Result<()> {
    let flags = if dir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: SYS_unlinkat takes (dirfd, path, flags); `dirfd` is open for the borrow and
    // `name` is NUL-terminated and lives across the call.
    check(unsafe { libc::syscall(libc::SYS_unlinkat, dirfd.as_raw_fd(), name.as_ptr(), flags) })?;
    Ok(())
}

/// `renameat2(dirfd, from, dirfd, to, RENAME_NOREPLACE if !replace)`: within one directory;
/// replacing moves the new entry over the name (a link there is replaced, never followed).
pub fn renameat(dirfd: BorrowedFd<'_>, from: &CStr, to: &CStr, replace: bool) -> io::Result<()> {
    let flags = if replace { 0 } else { libc::RENAME_NOREPLACE };
    // SAFETY: SYS_renameat2 takes (olddirfd, oldpath, newdirfd, newpath, flags); `dirfd` is
    // open for the borrow and both names are NUL-terminated and live across the call.
    check(unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            dirfd.as_raw_fd(),
            from.as_ptr(),
            dirfd.as_raw_fd(),
            to.as_ptr(),
            flags,
        )
    })?;
    Ok(())
}

/// What `statx` says of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// `st_mode`: the type bits (`S_IFMT`) and the permissions.
    pub mode: u32,
    pub uid: u32,
    pub nlink: u32,
    pub size: u64,
    /// The device (major, minor) the entry is on.
    pub dev: (u32, u32),
    /// The mount it is on (`STATX_MNT_ID`; 0 where the kernel did not fill it): a bind mount
    /// on the same device still has a mount of its own.
    pub mnt_id: u64,
}

impl Stat {
    pub fn kind(&self) -> u32 {
        self.mode & libc::S_IFMT
    }
    pub fn is_dir(&self) -> bool {
        self.kind() == libc::S_IFDIR
    }
    pub fn is_file(&self) -> bool {
        self.kind() == libc::S_IFREG
    }
    pub fn is_symlink(&self) -> bool {
        self.kind() == libc::S_IFLNK
    }
}

/// `statx(dirfd, name, AT_SYMLINK_NOFOLLOW, …)` of an entry, never through a link; an empty
/// `name` is `dirfd` itself (`AT_EMPTY_PATH`).
pub fn statx(dirfd: Option<BorrowedFd<'_>>, name: &CStr) -> io::Result<Stat> {
    let mut flags = libc::AT_SYMLINK_NOFOLLOW;
    if name.is_empty() {
        flags |= libc::AT_EMPTY_PATH;
    }
    let mask = libc::STATX_BASIC_STATS | libc::STATX_MNT_ID;
    // SAFETY: all-zero is a valid `statx`.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: SYS_statx takes (dirfd, path, flags, mask, buffer); `dirfd` is AT_FDCWD or open
    // for the borrow, `name` is NUL-terminated and lives across the call, and `st` is a valid,
    // writable `statx`.
    check(unsafe {
        libc::syscall(
            libc::SYS_statx,
            raw(dirfd),
            name.as_ptr(),
            flags,
            mask,
            &mut st as *mut libc::statx,
        )
    })?;
    Ok(Stat {
        mode: u32::from(st.stx_mode),
        uid: st.stx_uid,
        nlink: st.stx_nlink,
        size: st.stx_size,
        dev: (st.stx_dev_major, st.stx_dev_minor),
        mnt_id: if st.stx_mask & libc::STATX_MNT_ID != 0 {
            st.stx_mnt_id
        } else {
            0
        },
    })
}

/// `fstatfs(fd)` and `fstatvfs(fd)`: the file system's magic number and whether it is
/// mounted read-only (`ST_RDONLY`).
pub fn fstatfs(fd: BorrowedFd<'_>) -> io::Result<(i64, bool)> {
    // SAFETY: all-zero is a valid `statfs`.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open for the borrow; `st` is valid and writable.
    check(unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) }.into())?;
    // SAFETY: all-zero is a valid `statvfs`.
    let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open for the borrow; `vfs` is valid and writable.
    check(unsafe { libc::fstatvfs(fd.as_raw_fd(), &mut vfs) }.into())?;
    Ok((st.f_type as i64, vfs.f_flag & libc::ST_RDONLY != 0))
}

/// `flock(fd, LOCK_EX | LOCK_NB)`: `Ok(true)` when taken, `Ok(false)` when another open file
/// holds it. The lock lives as long as the open file (and its duplicates in forked children).
pub fn try_lock(fd: BorrowedFd<'_>) -> io::Result<bool> {
    // SAFETY: SYS_flock takes (fd, operation); `fd` is open for the borrow.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_flock,
            fd.as_raw_fd(),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    match check(rc) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => Ok(false),
        Err(e) => Err(e),
    }
}

/// `geteuid()`.
pub fn euid() -> u32 {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() }
}
