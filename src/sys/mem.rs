//! Memory mappings: anonymous private buffers (`mem`, `pagezero`), the shared counter block the
//! runner's workers write into (`MAP_SHARED | MAP_ANONYMOUS`, so forked processes and threads
//! use the same code), and `vfsmix`'s store through a shared file mapping.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::AtomicU64;

/// The system page size (`sysconf(_SC_PAGESIZE)`), 4096 if unknown.
pub fn page_size() -> usize {
    // SAFETY: sysconf only reads its argument.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

fn map(len: usize, flags: libc::c_int, fd: libc::c_int) -> io::Result<*mut u8> {
    // SAFETY: a null hint lets the kernel choose the address; failures return MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p.cast())
}

/// An anonymous private mapping, unmapped on drop. Pages are allocated on first touch.
#[derive(Debug)]
pub struct AnonMapping {
    ptr: *mut u8,
    len: usize,
}

impl AnonMapping {
    /// Maps `len` bytes (`len > 0`), page-aligned and zero-filled on first touch.
    pub fn new(len: usize) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty mapping"));
        }
        let ptr = map(len, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)?;
        Ok(AnonMapping { ptr, len })
    }

    /// The whole mapping.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` maps `len` readable and writable bytes for as long as `self` lives,
        // and `&mut self` makes this the only reference to them.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AnonMapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned and nothing borrows them now.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// One worker's counters, alone in a 128-byte block (two cache lines: AMD and Intel prefetch
/// adjacent lines in pairs), so that no two workers ever write to the same line.
#[repr(C, align(128))]
#[derive(Debug)]
pub struct Slot {
    /// Iterations completed (written by the owner only; read by the parent).
    pub iterations: AtomicU64,
    /// 0 starting, 1 running, 2 finished, 3 failed.
    pub state: AtomicU64,
    /// The `errno` of a failure, with the index of the failing step in the high 32 bits.
    pub error: AtomicU64,
    /// Workload-specific results written when the worker finishes.
    pub aux: [AtomicU64; 5],
}

/// The runner's control word, in its own block.
#[repr(C, align(128))]
#[derive(Debug)]
pub struct Control {
    /// Set by the parent to stop the workers.
    pub stop: AtomicU64,
}

/// A `Control` block followed by `n` slots, in `MAP_SHARED | MAP_ANONYMOUS` memory, so that
/// forked children and the parent see the same words. Unmapped on drop.
#[derive(Debug)]
pub struct SharedBlock {
    ptr: *mut u8,
    len: usize,
    n: usize,
}

// SAFETY: the block holds only atomics, which may be used from any thread; the pointer is
// valid until drop.
unsafe impl Send for SharedBlock {}
// SAFETY: as above: every access goes through `&AtomicU64`.
unsafe impl Sync for SharedBlock {}

impl SharedBlock {
    /// Maps a zeroed block with `n` slots.
    pub fn new(n: usize) -> io::Result<Self> {
        let len = std::mem::size_of::<Control>() + n * std::mem::size_of::<Slot>();
        let ptr = map(len, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1)?;
        Ok(SharedBlock { ptr, len, n })
    }

    /// The control block.
    pub fn control(&self) -> &Control {
        // SAFETY: the mapping starts with a Control: page-aligned (≥ 128), zero-filled by the
        // kernel, and all-zero is a valid value for a struct of atomics.
        unsafe { &*(self.ptr as *const Control) }
    }

    /// The slots.
    pub fn slots(&self) -> &[Slot] {
        // SAFETY: the Control occupies the first size_of::<Control>() bytes of the mapping,
        // so the offset stays inside it.
        let first = unsafe { self.ptr.add(std::mem::size_of::<Control>()) } as *const Slot;
        // SAFETY: `n` Slots follow the Control inside the mapping (see `new`); the offset is a
        // multiple of 128 so they are aligned; zero is valid for atomics; only shared
        // references are handed out and every write is atomic.
        unsafe { std::slice::from_raw_parts(first, self.n) }
    }
}

impl Drop for SharedBlock {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are what mmap returned; borrows of the block end with `self`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// `mmap(len, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0)`, store one byte at offset 0 (a write
/// fault through the file's page cache), `munmap`. The file must be at least 1 byte long.
#[inline(always)]
pub fn store_through_shared_mapping(fd: BorrowedFd<'_>, len: usize) -> io::Result<()> {
    store_through_shared_mapping_marked(fd, len, &mut || {})
}

/// [`store_through_shared_mapping`], calling `mark` after each of its three steps (the mmap,
/// the store, the munmap): `vm count` times each.
#[inline(always)]
pub fn store_through_shared_mapping_marked(
    fd: BorrowedFd<'_>,
    len: usize,
    mark: &mut dyn FnMut(),
) -> io::Result<()> {
    let p = map(len, libc::MAP_SHARED, fd.as_raw_fd())?;
    mark();
    // SAFETY: `p` maps at least one writable byte of a file that is at least one byte long,
    // so the store neither faults with SIGBUS nor aliases any Rust reference.
    unsafe { std::ptr::write_volatile(p, 1u8) };
    mark();
    // SAFETY: `p`/`len` are what mmap returned; nothing refers to the mapping any more.
    if unsafe { libc::munmap(p.cast(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    mark();
    Ok(())
}
