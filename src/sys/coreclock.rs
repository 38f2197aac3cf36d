//! The core clock, read without a performance counter: a chain of dependent register adds.
//!
//! `add r, r` has a latency of one core cycle on every x86-64 core (Agner Fog, "Instruction
//! tables", every microarchitecture listed; uops.info, `ADD (R64, R64)`), and each add of the
//! chain needs the previous one's result, so a loop of them runs at one add per cycle whatever
//! the core's width. The loop's own `dec`/`jnz` run beside the chain, off its critical path.
//! Timed against the TSC-backed clock, the chain gives the cycles the core ran per nanosecond:
//! the clock the host's turbo and power management chose at that moment. (An add of an
//! immediate is not used: recent Intel cores may fold chains of those at rename.)

use std::arch::asm;

/// Dependent adds per loop iteration of [`add_chain`].
pub const ADDS_PER_ITERATION: u64 = 8;

/// Runs `n` iterations of [`ADDS_PER_ITERATION`] dependent adds and returns their result (so
/// that the chain is used).
#[inline(never)]
pub fn add_chain(n: u64) -> u64 {
    let mut x: u64 = 1;
    // SAFETY: register arithmetic and branches to the block's own labels only: no memory, no
    // stack, no flags or registers beyond the declared `n` and `x`.
    unsafe {
        asm!(
            "test {n}, {n}",
            "jz 3f",
            ".p2align 5",
            "2:",
            "add {x}, {x}",
            "add {x}, {x}",
            "add {x}, {x}",
            "add {x}, {x}",
            "add {x}, {x}",
            "add {x}, {x}",
            "add {x}, {x}",
            "add {x}, {x}",
            "dec {n}",
            "jnz 2b",
            "3:",
            n = inout(reg) n => _,
            x = inout(reg) x,
            options(nomem, nostack),
        );
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain doubles `x` once per add: `n` iterations leave `2^(8n)` (mod 2^64).
    #[test]
    fn the_chain_runs_its_adds() {
        assert_eq!(add_chain(0), 1);
        assert_eq!(add_chain(1), 1 << 8);
        assert_eq!(add_chain(7), 1 << 56);
        assert_eq!(add_chain(8), 0, "2^64 wraps to 0");
    }
}
