//! Counter-read loops at chosen code placements: the same loop of `rdtsc` (or `lfence; rdtsc`,
//! `rdtscp`, `rdpid`) with its head put at a chosen offset past a 64-byte boundary.
//!
//! A read of a few nanoseconds is a loop of four to seven instructions, and where that loop
//! falls against the front end's windows (32-byte fetch and decoded-uop-cache windows, 64-byte
//! lines; on Intel Skylake-derived cores also the jump-crossing rule of the JCC-erratum
//! microcode, Intel document 341810) can move its cost by a cycle or more per iteration. The
//! probe's own loop sits wherever the compiler and linker put it, so its figure for a short
//! source is the figure at one placement. These loops let it measure the same read at several.
//!
//! Each loop is `asm!` from the first instruction to the last: the placement is exact, and the
//! function returns the head's address so that tests can check it.

use std::arch::asm;

/// Offsets (bytes past a 64-byte boundary) the loop heads are placed at.
pub const OFFSETS: [u32; 8] = [0, 8, 16, 24, 32, 40, 48, 56];

/// One placed loop: runs `n` reads and returns (a sum of what they read, so that the reads are
/// used; the loop head's address).
pub type PlacedLoop = fn(u64) -> (u64, usize);

/// Expands to one placed-loop function per read: the loop head `2:` is aligned to 64 bytes and
/// then moved `OFFSET` bytes on (the padding is jumped over, never executed). `n = 0` runs no
/// read. Body registers: the read's own outputs, `acc` and `n`.
macro_rules! placed {
    ($(#[$doc:meta])* $name:ident, [$($read:literal),+], [$($clobber:tt)*]) => {
        $(#[$doc])*
        #[inline(never)]
        pub fn $name<const OFFSET: u32>(n: u64) -> (u64, usize) {
            let mut acc: u64 = 0;
            let head: usize;
            // SAFETY: the block only reads the TSC or TSC_AUX into registers, does register
            // arithmetic and branches to its own labels; `lea` computes an address without
            // reading it. It touches no memory and no stack, and every register it writes is
            // declared (`acc`, `n`, `head`, the clobbers). The reads must be available: rdtscp
            // and rdpid are only called where `probe` found their CPUID bits (otherwise #UD, a
            // SIGILL, not undefined behaviour); under PR_TSC_SIGSEGV a TSC read faults into the
            // emulating handler, which decodes the instruction wherever it sits.
            unsafe {
                asm!(
                    "lea {head}, [rip + 2f]",
                    "test {n}, {n}",
                    "jz 3f",
                    "jmp 2f",
                    ".p2align 6",
                    ".skip {off}, 0xcc",
                    "2:",
                    $($read,)+
                    "dec {n}",
                    "jnz 2b",
                    "3:",
                    n = inout(reg) n => _,
                    acc = inout(reg) acc,
                    head = out(reg) head,
                    off = const OFFSET,
                    $($clobber)*
                    options(nomem, nostack),
                );
            }
            (acc, head)
        }
    };
}

placed!(
    /// `rdtsc` in a loop placed at `OFFSET`.
    rdtsc_at,
    ["rdtsc", "shl rdx, 32", "or rax, rdx", "add {acc}, rax"],
    [out("rax") _, out("rdx") _,]
);
placed!(
    /// `lfence; rdtsc` in a loop placed at `OFFSET`.
    lfence_rdtsc_at,
    ["lfence", "rdtsc", "shl rdx, 32", "or rax, rdx", "add {acc}, rax"],
    [out("rax") _, out("rdx") _,]
);
placed!(
    /// `rdtscp` in a loop placed at `OFFSET`.
    rdtscp_at,
    ["rdtscp", "shl rdx, 32", "or rax, rdx", "add {acc}, rax", "add {acc}, rcx"],
    [out("rax") _, out("rdx") _, out("rcx") _,]
);
placed!(
    /// `rdpid` in a loop placed at `OFFSET`.
    rdpid_at,
    ["rdpid rax", "add {acc}, rax"],
    [out("rax") _,]
);

/// The instances of one read at every offset of [`OFFSETS`], in that order.
macro_rules! at_offsets {
    ($f:ident) => {
        [
            $f::<0>, $f::<8>, $f::<16>, $f::<24>, $f::<32>, $f::<40>, $f::<48>, $f::<56>,
        ]
    };
}

/// `rdtsc` at every offset.
pub const RDTSC: [PlacedLoop; 8] = at_offsets!(rdtsc_at);
/// `lfence; rdtsc` at every offset.
pub const LFENCE_RDTSC: [PlacedLoop; 8] = at_offsets!(lfence_rdtsc_at);
/// `rdtscp` at every offset.
pub const RDTSCP: [PlacedLoop; 8] = at_offsets!(rdtscp_at);
/// `rdpid` at every offset.
pub const RDPID: [PlacedLoop; 8] = at_offsets!(rdpid_at);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every loop head sits where its offset says, and the loops read: a sum of counter values
    /// grows with the reads, and no read leaves it 0.
    #[test]
    fn heads_sit_at_their_offsets_and_the_loops_read() {
        for (i, &off) in OFFSETS.iter().enumerate() {
            for l in [RDTSC[i], LFENCE_RDTSC[i]] {
                let (none, head) = l(0);
                assert_eq!(none, 0, "n = 0 runs no read");
                assert_eq!(head % 64, off as usize, "head of the loop at offset {off}");
                let (sum, _) = l(3);
                assert!(sum > 0, "three TSC reads sum to more than 0");
            }
        }
    }

    #[test]
    fn the_offsets_cover_a_line_in_eight_steps() {
        assert_eq!(OFFSETS.len(), RDTSC.len());
        assert!(OFFSETS.windows(2).all(|w| w[1] - w[0] == 8));
        assert_eq!(OFFSETS[OFFSETS.len() - 1], 56);
    }
}
