//! Zeroing one 4 KiB page four ways, as in the seed's `pmap_zero_page` discussion:
//!
//! - [`stosq`]: `rep stosq` with `rcx = 512` (FreeBSD's `pagezero_std`);
//! - [`stosb`]: `rep stosb` with `rcx = 4096` (FreeBSD's `pagezero_erms`, fast on CPUs with
//!   ERMS, CPUID.(7,0):EBX\[9\]);
//! - [`aligncheck`]: the code the seed shows a compiler emitting for NetBSD's
//!   `pmap_zero_page` (a `memset` inlined without knowing the pointer's alignment): test bits
//!   0, 1, 2 of the address and store a byte/word/dword to align, `rep stosq` the middle, then
//!   dword/word/byte tails by the remaining length. On an aligned page the branches are not
//!   taken; the cost is the tests themselves;
//! - [`memset`]: libc's `memset` (glibc picks an implementation by CPU features).

#![cfg(target_arch = "x86_64")]

use std::arch::asm;

/// The size of the pages zeroed here.
pub const PAGE: usize = 4096;

/// `rep stosq` over the page.
#[inline(never)]
pub fn stosq(page: &mut [u8; PAGE]) {
    // SAFETY: rdi points at PAGE writable bytes (the exclusive borrow) and rcx·8 = PAGE, so
    // the string store stays inside the page; the direction flag is clear on entry to asm!
    // blocks (Rust's ABI), so it counts upwards. rdi, rcx and rax are declared clobbered.
    unsafe {
        asm!(
            "rep stosq",
            inout("rdi") page.as_mut_ptr() => _,
            inout("rcx") PAGE / 8 => _,
            in("rax") 0u64,
            options(nostack, preserves_flags),
        );
    }
}

/// `rep stosb` over the page.
#[inline(never)]
pub fn stosb(page: &mut [u8; PAGE]) {
    // SAFETY: as for `stosq`, with rcx = PAGE single-byte stores.
    unsafe {
        asm!(
            "rep stosb",
            inout("rdi") page.as_mut_ptr() => _,
            inout("rcx") PAGE => _,
            in("al") 0u8,
            options(nostack, preserves_flags),
        );
    }
}

/// The alignment-checking sequence from the seed (NetBSD `pmap_zero_page` as compiled),
/// instruction for instruction, with `rdi` = the page and `edx` = 4096.
#[inline(never)]
pub fn aligncheck(page: &mut [u8; PAGE]) {
    // SAFETY: the sequence stores exactly `edx` = PAGE bytes starting at rdi: each prologue
    // store of 1/2/4 bytes subtracts its size from edx, `rep stosq` stores (edx >> 3)·8 bytes
    // and the tails store the remaining edx & 7 bytes, so every store is inside the exclusively
    // borrowed page. The direction flag is clear on entry. rdi, rcx, rdx, rax and the flags
    // are declared clobbered. Labels avoid the digits 0 and 1 only (LLVM reads `1b`/`0b` as
    // binary literals in Intel syntax).
    unsafe {
        asm!(
            "test dil, 1",
            "jne 32f",
            "22:",
            "test dil, 2",
            "jne 33f",
            "23:",
            "test dil, 4",
            "jne 34f",
            "24:",
            "mov ecx, edx",
            "shr ecx, 3",
            "rep stosq",
            "test dl, 4",
            "je 25f",
            "stosd",
            "25:",
            "test dl, 2",
            "je 26f",
            "stosw",
            "26:",
            "and edx, 1",
            "je 27f",
            "stosb",
            "27:",
            "jmp 39f",
            "32:",
            "stosb",
            "mov edx, 0xfff",
            "test dil, 2",
            "je 23b",
            "33:",
            "stosw",
            "sub edx, 2",
            "test dil, 4",
            "je 24b",
            "34:",
            "stosd",
            "sub edx, 4",
            "jmp 24b",
            "39:",
            inout("rdi") page.as_mut_ptr() => _,
            inout("rdx") PAGE => _,
            out("rcx") _,
            in("rax") 0u64,
            options(nostack),
        );
    }
}

/// libc `memset(page, 0, 4096)`.
#[inline(never)]
pub fn memset(page: &mut [u8; PAGE]) {
    // SAFETY: the destination is the exclusively borrowed page, exactly PAGE bytes long.
    unsafe { libc::memset(page.as_mut_ptr().cast(), 0, PAGE) };
}
