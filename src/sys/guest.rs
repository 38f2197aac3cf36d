//! What `tscope` needs when it is PID 1 of a guest (`vm guest` boots it as `/init`): mount the
//! kernel filesystems, and power the machine off when done.

use std::ffi::CString;
use std::io;

/// `mount(source, target, fstype, 0, NULL)`; creates `target` first if missing.
pub fn mount(source: &str, target: &str, fstype: &str) -> io::Result<()> {
    std::fs::create_dir_all(target)?;
    let c = |s: &str| CString::new(s).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e));
    let (src, tgt, fs) = (c(source)?, c(target)?, c(fstype)?);
    // SAFETY: the three pointers are valid NUL-terminated strings that outlive the call; flags 0
    // and a null data pointer are allowed by mount(2).
    let rc = unsafe { libc::mount(src.as_ptr(), tgt.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Flushes filesystems and powers the machine off (`reboot(RB_POWER_OFF)`). Only PID 1 (or a
/// process with CAP_SYS_BOOT) may; on success it does not return.
pub fn power_off() -> io::Error {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    // SAFETY: reboot(2) with RB_POWER_OFF takes no pointer; it halts the machine or fails with
    // EPERM/EINVAL, reported below.
    unsafe { libc::reboot(libc::RB_POWER_OFF) };
    io::Error::last_os_error()
}

/// `finit_module(fd, "", 0)`: loads the kernel module whose ELF `module` holds (decompressed;
/// no parameters, no flags). Needs CAP_SYS_MODULE (PID 1 of a guest has it). `EEXIST` says the
/// module is loaded already; the caller decides whether that is fine.
pub fn finit_module(module: &std::fs::File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: finit_module(2) takes a file descriptor that stays open for the call (borrowed
    // from `module`), a valid NUL-terminated (empty) parameter string from a static C literal,
    // and flags 0; it reads no other memory of ours.
    let rc = unsafe { libc::syscall(libc::SYS_finit_module, module.as_raw_fd(), c"".as_ptr(), 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
