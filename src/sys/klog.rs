//! The kernel log through `syslog(2)` (glibc's `klogctl`): the fallback where `/dev/kmsg` is
//! missing (no devtmpfs) or refuses to open. Both obey `kernel.dmesg_restrict`.

use std::io;

/// `SYSLOG_ACTION_READ_ALL`: the whole ring buffer, without consuming it.
const READ_ALL: libc::c_int = 3;
/// `SYSLOG_ACTION_SIZE_BUFFER`: the ring buffer's size in bytes.
const SIZE_BUFFER: libc::c_int = 10;

/// Reads the whole kernel ring buffer (`<PRI>[   TIME] text` lines), at most `max_bytes`.
pub fn read_all(max_bytes: usize) -> io::Result<Vec<u8>> {
    // SAFETY: SIZE_BUFFER ignores the buffer and length arguments; a null pointer is allowed.
    let size = unsafe { libc::klogctl(SIZE_BUFFER, std::ptr::null_mut(), 0) };
    if size < 0 {
        return Err(io::Error::last_os_error());
    }
    let len = (size as usize).clamp(1, max_bytes.min(i32::MAX as usize));
    let mut buf = vec![0u8; len];
    // SAFETY: `buf` is valid and writable for `len` bytes, and `len` fits a c_int (clamped
    // above); the kernel writes at most `len` bytes and returns how many.
    let n = unsafe { libc::klogctl(READ_ALL, buf.as_mut_ptr().cast(), len as libc::c_int) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(buf)
}
