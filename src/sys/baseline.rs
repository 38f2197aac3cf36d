//! The native baseline of the trap verdicts: a dependent chain of register adds that no
//! hypervisor or kernel can intercept.
//!
//! `add reg, reg` has a latency of one core cycle on every x86_64 core (Agner Fog's instruction
//! tables, Intel since P6 and AMD since K7), and each add of the chain waits for the one before,
//! so one chain costs [`CHAIN_ADDS`] core cycles however wide the core is. Register-to-register
//! adds are used, not `add reg, imm`: Golden Cove and later can fold small immediate adds at
//! rename, which would shorten the chain. Timing the chain therefore measures the length of a
//! core cycle on the CPU the reads ran on, in the same run and under the same load, with no
//! exit in it: the yardstick a trapped read is compared against, and the probe's core clock
//! (`probe::coreclock`).

use std::arch::asm;

/// Adds in one [`add_chain`]: its cost in core cycles.
pub const CHAIN_ADDS: u32 = 64;

/// One chain of [`CHAIN_ADDS`] dependent `add`s of `step` to `x`; returns the sum, so that
/// chains called back to back depend on each other too.
#[inline(always)]
pub fn add_chain(x: u64, step: u64) -> u64 {
    let mut acc = x;
    // SAFETY: register-only arithmetic: the adds read `step` and update `acc` (and the flags,
    // which are declared clobbered by not passing `preserves_flags`); no memory, no stack.
    unsafe {
        asm!(
            ".rept 64",
            "add {acc}, {step}",
            ".endr",
            acc = inout(reg) acc,
            step = in(reg) step,
            options(nomem, nostack, pure),
        );
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_adds_sixty_four_times() {
        assert_eq!(add_chain(5, 3), 5 + 3 * u64::from(CHAIN_ADDS));
        assert_eq!(add_chain(u64::MAX, 1), 63, "wraps like wrapping_add");
    }
}
