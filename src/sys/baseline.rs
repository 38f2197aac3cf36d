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

/// Adds in one [`add_lanes`]: eight independent lanes of eight adds each.
pub const LANE_ADDS: u32 = 64;

/// [`LANE_ADDS`] register adds in eight independent lanes: no add waits for another of its
/// block, so the block runs as fast as the core issues adds (about four per cycle on Zen 4,
/// five on Golden Cove), where [`add_chain`] runs at one per cycle however many the core issues.
/// A hardware thread that shares the core takes issue slots from the lanes and none the chain
/// needs: timed beside the chain, the lanes show how much of the core this thread had
/// (`probe::coreclock`). Returns the lanes' sum, so that blocks called back to back depend on
/// each other.
#[inline(always)]
pub fn add_lanes(x: u64, step: u64) -> u64 {
    let (mut a, mut b, mut c, mut d) = (x, x, x, x);
    let (mut e, mut f, mut g, mut h) = (x, x, x, x);
    // SAFETY: register-only arithmetic, as in `add_chain`: eight accumulators each add `step`
    // eight times (flags clobbered); no memory, no stack.
    unsafe {
        asm!(
            ".rept 8",
            "add {a}, {s}",
            "add {b}, {s}",
            "add {c}, {s}",
            "add {d}, {s}",
            "add {e}, {s}",
            "add {f}, {s}",
            "add {g}, {s}",
            "add {h}, {s}",
            ".endr",
            a = inout(reg) a,
            b = inout(reg) b,
            c = inout(reg) c,
            d = inout(reg) d,
            e = inout(reg) e,
            f = inout(reg) f,
            g = inout(reg) g,
            h = inout(reg) h,
            s = in(reg) step,
            options(nomem, nostack, pure),
        );
    }
    a.wrapping_add(b)
        .wrapping_add(c)
        .wrapping_add(d)
        .wrapping_add(e)
        .wrapping_add(f)
        .wrapping_add(g)
        .wrapping_add(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_adds_sixty_four_times() {
        assert_eq!(add_chain(5, 3), 5 + 3 * u64::from(CHAIN_ADDS));
        assert_eq!(add_chain(u64::MAX, 1), 63, "wraps like wrapping_add");
    }

    #[test]
    fn the_lanes_add_eight_times_each() {
        assert_eq!(add_lanes(5, 3), 8 * (5 + 3 * 8));
        assert_eq!(add_lanes(0, 1), u64::from(LANE_ADDS));
    }
}
