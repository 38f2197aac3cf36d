//! `--emulate-trap`: make every TSC read of this process a real trap into the kernel and back.
//!
//! `prctl(PR_SET_TSC, PR_TSC_SIGSEGV)` sets CR4.TSD for this task, so `rdtsc` and `rdtscp`
//! raise #GP in user mode and the kernel delivers SIGSEGV. The handler installed here decodes
//! the faulting instruction (`0f 31` rdtsc, `0f 01 f9` rdtscp), fills RAX/RDX (and RCX with the
//! Linux TSC_AUX layout `node << 12 | cpu`) with `CLOCK_MONOTONIC_RAW` scaled to TSC ticks, and
//! advances RIP past it. Every TSC read, the vDSO's included, then costs a kernel entry, signal
//! frame setup, the handler and `rt_sigreturn`: the same shape of cost as a hypervisor's VM
//! exit, made on purpose. The setting is inherited by threads created afterwards.
//!
//! Why the real counter and not `CLOCK_MONOTONIC_RAW` scaled to ticks: the vDSO computes
//! `(tsc − cycle_last) · mult >> shift` against the `cycle_last` the kernel read from the real
//! TSC, so a synthesised counter with any other base or a slightly wrong rate makes vDSO time
//! stand still or jump. Re-enabling the TSC for one instruction keeps every value exact; the
//! price is two `prctl` calls inside each trap, which is part of the trap cost measured (this
//! machine: about 3 µs per read against 9 ns native). A SIGSEGV at any other instruction
//! restores the default action and returns, so the fault repeats and kills the process as it
//! would have.

use std::io;

use super::tsc;

/// Turns TSC reads into traps for this thread and threads it creates later.
pub fn emulate_tsc_traps() -> io::Result<()> {
    // SAFETY: all-zero is a valid sigaction value; the fields we need are set below.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = handler as *const () as usize;
    sa.sa_flags = libc::SA_SIGINFO;
    // SAFETY: `sa.sa_mask` is a valid sigset_t owned by `sa`.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    // SAFETY: `sa` is fully initialised and `handler` has the SA_SIGINFO signature; a null old
    // action pointer is allowed.
    if unsafe { libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: PR_SET_TSC takes an int mode; it only changes this task's CR4.TSD setting.
    let rc = unsafe { libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_SIGSEGV, 0, 0, 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether TSC reads of this thread trap (`PR_GET_TSC`).
pub fn tsc_traps() -> bool {
    let mut mode: libc::c_int = 0;
    // SAFETY: PR_GET_TSC writes one int through the pointer we pass, which is valid.
    let rc = unsafe { libc::prctl(libc::PR_GET_TSC, &mut mode as *mut libc::c_int, 0, 0, 0) };
    rc == 0 && mode == libc::PR_TSC_SIGSEGV
}

/// `prctl(PR_SET_TSC, mode)` for the calling thread; async-signal-safe (one syscall).
fn set_tsc_mode(mode: libc::c_int) {
    // SAFETY: PR_SET_TSC takes an int mode and only changes this task's CR4.TSD setting.
    unsafe { libc::prctl(libc::PR_SET_TSC, mode, 0, 0, 0) };
}

extern "C" fn handler(_sig: libc::c_int, _info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: with SA_SIGINFO the kernel passes a valid ucontext_t for this thread as `ctx`,
    // which stays valid and exclusively ours until the handler returns.
    let uc = unsafe { &mut *(ctx as *mut libc::ucontext_t) };
    let gregs = &mut uc.uc_mcontext.gregs;
    let rip = gregs[libc::REG_RIP as usize] as *const u8;
    // SAFETY: RIP points at the instruction that faulted with #GP after being fetched, so at
    // least the bytes of that instruction are mapped and readable; we read at most three and
    // only read the third after the first two matched the three-byte rdtscp encoding.
    let [b0, b1] = unsafe { rip.cast::<[u8; 2]>().read_unaligned() };
    let len = if b0 == 0x0f && b1 == 0x31 {
        2
    // SAFETY: as above; `0f 01` starts a three-byte opcode whose third byte is mapped.
    } else if b0 == 0x0f && b1 == 0x01 && unsafe { rip.wrapping_add(2).read() } == 0xf9 {
        3
    } else {
        // Not ours: restore the default action and return; the fault repeats and kills.
        // SAFETY: signal() with SIG_DFL is async-signal-safe and valid for SIGSEGV.
        unsafe { libc::signal(libc::SIGSEGV, libc::SIG_DFL) };
        return;
    };
    set_tsc_mode(libc::PR_TSC_ENABLE);
    let (ticks, aux) = if len == 3 {
        tsc::rdtscp()
    } else {
        (tsc::rdtsc(), 0)
    };
    set_tsc_mode(libc::PR_TSC_SIGSEGV);
    gregs[libc::REG_RAX as usize] = (ticks & 0xffff_ffff) as i64;
    gregs[libc::REG_RDX as usize] = (ticks >> 32) as i64;
    if len == 3 {
        gregs[libc::REG_RCX as usize] = i64::from(aux);
    }
    gregs[libc::REG_RIP as usize] += len;
}
