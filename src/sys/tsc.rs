//! Time-stamp counter reads on x86_64: `rdtsc`, `lfence; rdtsc`, `rdtscp`, `rdpid`, and the
//! `cpuid` reference.
//!
//! Each read is `#[inline(always)]` so a measurement loop pays for the instruction and nothing
//! else. None of them is fenced beyond what its name says: `rdtsc` may execute before earlier
//! instructions retire, `lfence; rdtsc` waits for them (Intel SDM vol. 2B, RDTSC; AMD with
//! `lfence` made dispatch-serialising), `rdtscp` waits for earlier loads and also returns
//! `IA32_TSC_AUX` (Linux stores the CPU and node number there).

use std::arch::asm;

/// `rdtsc`: the 64-bit time-stamp counter.
#[inline(always)]
pub fn rdtsc() -> u64 {
    let lo: u32;
    let hi: u32;
    // SAFETY: rdtsc reads a model-specific register into edx:eax and touches no memory. Every
    // x86_64 CPU has it; if the kernel set PR_TSC_SIGSEGV the instruction faults into a handler
    // (see `cpu::emulate_tsc_traps`) or kills the process, neither of which is undefined
    // behaviour.
    unsafe {
        asm!("rdtsc", out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags));
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// `lfence; rdtsc`: the counter read after all earlier instructions have completed locally.
#[inline(always)]
pub fn lfence_rdtsc() -> u64 {
    let lo: u32;
    let hi: u32;
    // SAFETY: lfence and rdtsc only order execution and read the TSC into edx:eax; no memory is
    // accessed. Both exist on every x86_64 CPU (SSE2 is part of the base ISA).
    unsafe {
        asm!("lfence", "rdtsc", out("eax") lo, out("edx") hi, options(nostack, preserves_flags));
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// `rdtscp`: the counter and `IA32_TSC_AUX` (Linux: `cpu | node << 12`).
#[inline(always)]
pub fn rdtscp() -> (u64, u32) {
    let lo: u32;
    let hi: u32;
    let aux: u32;
    // SAFETY: rdtscp reads the TSC into edx:eax and TSC_AUX into ecx, touching no memory. The
    // caller must only use it where CPUID.80000001H:EDX[27] is set, otherwise it raises #UD
    // (a SIGILL, not undefined behaviour); `probe` checks that bit before measuring.
    unsafe {
        asm!("rdtscp", out("eax") lo, out("edx") hi, out("ecx") aux,
             options(nomem, nostack, preserves_flags));
    }
    ((u64::from(hi) << 32) | u64::from(lo), aux)
}

/// `rdpid`: `IA32_TSC_AUX` without reading the counter (Linux's fast `getcpu`).
#[inline(always)]
pub fn rdpid() -> u64 {
    let id: u64;
    // SAFETY: rdpid only copies TSC_AUX into a register. The caller must only use it where
    // CPUID.(EAX=7,ECX=0):ECX[22] is set (otherwise #UD, a SIGILL); `probe` checks that bit.
    unsafe {
        asm!("rdpid {}", out(reg) id, options(nomem, nostack, preserves_flags));
    }
    id
}

/// `cpuid` for `leaf`, sub-leaf 0: returns `[eax, ebx, ecx, edx]`.
///
/// Under hardware virtualisation (VT-x, AMD-V) `cpuid` always causes a VM exit, which makes it
/// the reference a trapped `rdtsc` is compared with.
#[inline(always)]
pub fn cpuid(leaf: u32) -> [u32; 4] {
    cpuid_count(leaf, 0)
}

/// `cpuid` for `leaf` and `subleaf`: returns `[eax, ebx, ecx, edx]`.
#[inline(always)]
pub fn cpuid_count(leaf: u32, subleaf: u32) -> [u32; 4] {
    // cpuid is available on every x86_64 CPU, so the intrinsic is safe to call.
    let r = std::arch::x86_64::__cpuid_count(leaf, subleaf);
    [r.eax, r.ebx, r.ecx, r.edx]
}
