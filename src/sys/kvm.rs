//! A micro-VM through `/dev/kvm` (rust-vmm's `kvm-ioctls`) whose payload times VM exits with
//! its own `rdtsc`, like kvm-unit-tests' `x86/vmexit.c`.
//!
//! The guest is one vCPU in 16-bit real mode with 32 KiB of memory: no irqchip, so `hlt`, port
//! I/O and accesses outside the memory slot (MMIO) all exit to this process; `cpuid` is handled
//! inside the host kernel. [`PAYLOAD`] holds one block per kind; the vCPU is started at each
//! block in turn, which runs the kind's instruction `iterations` times between two `rdtsc`,
//! stores the tick delta in guest memory and says "done" on port 0x98. A kind the hypervisor
//! cannot run (an emulation failure) is reported as such, and the others still run.

use std::io;
use std::time::{Duration, Instant};

use kvm_bindings::kvm_userspace_memory_region;
use kvm_ioctls::{Kvm, VcpuExit};

/// Guest memory size (8 pages); guest-physical addresses at or above it are MMIO.
const MEM_SIZE: usize = 0x8000;
/// Where the payload is loaded and starts (CS = 0, IP = 0x1000).
const LOAD_ADDR: usize = 0x1000;
/// Where the payload stores its 64-bit tick delta for kind `k`: `RESULTS + 8 k`.
const RESULTS: usize = 0x3000;
/// The port the payload writes to in its I/O-exit loop.
pub const IO_PORT: u16 = 0x99;
/// The port the payload writes to when done.
const DONE_PORT: u16 = 0x98;
/// The address the payload writes to in its MMIO-exit loop (outside the memory slot).
pub const MMIO_ADDR: u64 = 0x9000;

/// The timed kinds, in the payload's order (`nop` is the empty loop, subtracted from the rest).
pub const KINDS: [&str; 7] = [
    "nop",
    "rdtsc",
    "rdtscp",
    "cpuid",
    "pio_out",
    "mmio_write",
    "hlt",
];

/// The payload, assembled with GNU as (`as --32`, `.code16`) from:
///
/// ```text
/// .macro TIMED slot, body, body2=nop     # %ebp = iterations, set by the host
/// k\slot:                                # ENTRY[slot]
///     mov %ebp, %esi
///     rdtsc
///     mov %eax, 0x2ff0 ; mov %edx, 0x2ff4
/// 1:  \body
///     \body2
///     dec %esi
///     jnz 1b
///     rdtsc
///     sub 0x2ff0, %eax ; sbb 0x2ff4, %edx
///     mov %eax, (0x3000 + \slot * 8) ; mov %edx, (0x3004 + \slot * 8)
///     out %al, $0x98
///     hlt
/// .endm
///     TIMED 0, nop
///     TIMED 1, rdtsc
///     TIMED 2, rdtscp
///     TIMED 3, "xor %eax, %eax", cpuid
///     TIMED 4, "out %al, $0x99"
///     TIMED 5, "movb %al, 0x9000"
///     TIMED 6, hlt
/// ```
/// Offset of each kind's block in [`PAYLOAD`] (from `nm`).
pub const ENTRY: [usize; 7] = [0x00, 0x2c, 0x59, 0x87, 0xb6, 0xe3, 0x111];

pub const PAYLOAD: [u8; 317] = [
    0x66, 0x89, 0xee, 0x0f, 0x31, 0x66, 0xa3, 0xf0, 0x2f, 0x66, 0x89, 0x16, 0xf4, 0x2f, 0x90, 0x90,
    0x66, 0x4e, 0x75, 0xfa, 0x0f, 0x31, 0x66, 0x2b, 0x06, 0xf0, 0x2f, 0x66, 0x1b, 0x16, 0xf4, 0x2f,
    0x66, 0xa3, 0x00, 0x30, 0x66, 0x89, 0x16, 0x04, 0x30, 0xe6, 0x98, 0xf4, 0x66, 0x89, 0xee, 0x0f,
    0x31, 0x66, 0xa3, 0xf0, 0x2f, 0x66, 0x89, 0x16, 0xf4, 0x2f, 0x0f, 0x31, 0x90, 0x66, 0x4e, 0x75,
    0xf9, 0x0f, 0x31, 0x66, 0x2b, 0x06, 0xf0, 0x2f, 0x66, 0x1b, 0x16, 0xf4, 0x2f, 0x66, 0xa3, 0x08,
    0x30, 0x66, 0x89, 0x16, 0x0c, 0x30, 0xe6, 0x98, 0xf4, 0x66, 0x89, 0xee, 0x0f, 0x31, 0x66, 0xa3,
    0xf0, 0x2f, 0x66, 0x89, 0x16, 0xf4, 0x2f, 0x0f, 0x01, 0xf9, 0x90, 0x66, 0x4e, 0x75, 0xf8, 0x0f,
    0x31, 0x66, 0x2b, 0x06, 0xf0, 0x2f, 0x66, 0x1b, 0x16, 0xf4, 0x2f, 0x66, 0xa3, 0x10, 0x30, 0x66,
    0x89, 0x16, 0x14, 0x30, 0xe6, 0x98, 0xf4, 0x66, 0x89, 0xee, 0x0f, 0x31, 0x66, 0xa3, 0xf0, 0x2f,
    0x66, 0x89, 0x16, 0xf4, 0x2f, 0x66, 0x31, 0xc0, 0x0f, 0xa2, 0x66, 0x4e, 0x75, 0xf7, 0x0f, 0x31,
    0x66, 0x2b, 0x06, 0xf0, 0x2f, 0x66, 0x1b, 0x16, 0xf4, 0x2f, 0x66, 0xa3, 0x18, 0x30, 0x66, 0x89,
    0x16, 0x1c, 0x30, 0xe6, 0x98, 0xf4, 0x66, 0x89, 0xee, 0x0f, 0x31, 0x66, 0xa3, 0xf0, 0x2f, 0x66,
    0x89, 0x16, 0xf4, 0x2f, 0xe6, 0x99, 0x90, 0x66, 0x4e, 0x75, 0xf9, 0x0f, 0x31, 0x66, 0x2b, 0x06,
    0xf0, 0x2f, 0x66, 0x1b, 0x16, 0xf4, 0x2f, 0x66, 0xa3, 0x20, 0x30, 0x66, 0x89, 0x16, 0x24, 0x30,
    0xe6, 0x98, 0xf4, 0x66, 0x89, 0xee, 0x0f, 0x31, 0x66, 0xa3, 0xf0, 0x2f, 0x66, 0x89, 0x16, 0xf4,
    0x2f, 0xa2, 0x00, 0x90, 0x90, 0x66, 0x4e, 0x75, 0xf8, 0x0f, 0x31, 0x66, 0x2b, 0x06, 0xf0, 0x2f,
    0x66, 0x1b, 0x16, 0xf4, 0x2f, 0x66, 0xa3, 0x28, 0x30, 0x66, 0x89, 0x16, 0x2c, 0x30, 0xe6, 0x98,
    0xf4, 0x66, 0x89, 0xee, 0x0f, 0x31, 0x66, 0xa3, 0xf0, 0x2f, 0x66, 0x89, 0x16, 0xf4, 0x2f, 0xf4,
    0x90, 0x66, 0x4e, 0x75, 0xfa, 0x0f, 0x31, 0x66, 0x2b, 0x06, 0xf0, 0x2f, 0x66, 0x1b, 0x16, 0xf4,
    0x2f, 0x66, 0xa3, 0x30, 0x30, 0x66, 0x89, 0x16, 0x34, 0x30, 0xe6, 0x98, 0xf4,
];

/// What one micro-VM run returned.
#[derive(Debug, Clone)]
pub struct MicroVmRun {
    /// Per kind of [`KINDS`]: guest TSC ticks for `iterations` runs, or why it could not run.
    pub ticks: Vec<Result<u64, String>>,
    /// Exits seen by this process per kind (port I/O, MMIO, hlt).
    pub user_exits: Vec<u64>,
    pub wall: Duration,
}
/// Anonymous memory backing the guest; unmapped on drop (after the VM, declared later, is gone).
struct GuestMem {
    ptr: *mut u8,
}

impl GuestMem {
    fn new() -> io::Result<Self> {
        // SAFETY: an anonymous private mapping with a null hint touches no existing memory; the
        // result is checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                MEM_SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(GuestMem { ptr: p.cast() })
    }

    fn write(&mut self, at: usize, bytes: &[u8]) {
        assert!(at + bytes.len() <= MEM_SIZE, "payload outside guest memory");
        // SAFETY: the range was checked to lie inside our MEM_SIZE mapping, and `bytes` cannot
        // overlap it (it is host memory we did not map).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.wrapping_add(at), bytes.len())
        };
    }

    fn read_u64(&self, at: usize) -> u64 {
        assert!(at + 8 <= MEM_SIZE, "read outside guest memory");
        // SAFETY: in bounds (checked above) of a live mapping; the vCPU is stopped, so nothing
        // writes concurrently; read_unaligned has no alignment requirement.
        unsafe { self.ptr.wrapping_add(at).cast::<u64>().read_unaligned() }
    }
}

impl Drop for GuestMem {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from mmap with MEM_SIZE and is unmapped exactly once, here.
        unsafe { libc::munmap(self.ptr.cast(), MEM_SIZE) };
    }
}

fn stage(what: &'static str) -> impl Fn(kvm_ioctls::Error) -> io::Error {
    move |e| io::Error::other(format!("{what}: {e}"))
}

/// Boots the payload with `iterations` per kind and returns the tick deltas.
pub fn run_payload(iterations: u32, limit: Duration) -> io::Result<MicroVmRun> {
    let mut mem = GuestMem::new()?;
    mem.write(LOAD_ADDR, &PAYLOAD);
    let kvm = Kvm::new().map_err(stage("opening /dev/kvm"))?;
    let vm = kvm.create_vm().map_err(stage("KVM_CREATE_VM"))?;
    let region = kvm_userspace_memory_region {
        slot: 0,
        guest_phys_addr: 0,
        memory_size: MEM_SIZE as u64,
        userspace_addr: mem.ptr as u64,
        flags: 0,
    };
    // SAFETY: the region describes our own MEM_SIZE mapping, which outlives `vm` (declared
    // before it, so dropped after it) and is not used for anything else.
    unsafe { vm.set_user_memory_region(region) }.map_err(stage("KVM_SET_USER_MEMORY_REGION"))?;
    let mut vcpu = vm.create_vcpu(0).map_err(stage("KVM_CREATE_VCPU"))?;
    let mut sregs = vcpu.get_sregs().map_err(stage("KVM_GET_SREGS"))?;
    sregs.cs.base = 0;
    sregs.cs.selector = 0;
    sregs.ds.base = 0;
    sregs.ds.selector = 0;
    vcpu.set_sregs(&sregs).map_err(stage("KVM_SET_SREGS"))?;

    let started = Instant::now();
    let mut ticks = Vec::new();
    let mut user_exits = Vec::new();
    for entry in ENTRY {
        let mut regs = vcpu.get_regs().map_err(stage("KVM_GET_REGS"))?;
        regs.rip = (LOAD_ADDR + entry) as u64;
        regs.rflags = 2;
        regs.rbp = u64::from(iterations);
        vcpu.set_regs(&regs).map_err(stage("KVM_SET_REGS"))?;
        let mut exits = 0u64;
        let outcome = loop {
            if started.elapsed() > limit {
                break Err(format!("did not finish within {limit:?}"));
            }
            let unexpected = match vcpu.run() {
                Err(e) => break Err(format!("KVM_RUN: {e}")),
                Ok(VcpuExit::IoOut(DONE_PORT, _)) => break Ok(()),
                Ok(
                    VcpuExit::IoOut(IO_PORT, _) | VcpuExit::MmioWrite(MMIO_ADDR, _) | VcpuExit::Hlt,
                ) => {
                    exits += 1;
                    continue;
                }
                Ok(VcpuExit::InternalError) => internal_error(&mut vcpu),
                Ok(other) => format!("{other:?}"),
            };
            let rip = vcpu.get_regs().map(|r| r.rip).unwrap_or(0);
            break Err(format!("unexpected exit {unexpected} at rip {rip:#x}"));
        };
        ticks.push(outcome.map(|()| mem.read_u64(RESULTS + 8 * ticks.len())));
        user_exits.push(exits);
    }
    Ok(MicroVmRun {
        ticks,
        user_exits,
        wall: started.elapsed(),
    })
}

/// Describes a KVM_EXIT_INTERNAL_ERROR from the run structure.
fn internal_error(vcpu: &mut kvm_ioctls::VcpuFd) -> String {
    let run = vcpu.get_kvm_run();
    // SAFETY: the last exit was KVM_EXIT_INTERNAL_ERROR, for which the kernel fills the
    // `internal` member of the exit union; it is plain old data.
    let internal = unsafe { run.__bindgen_anon_1.internal };
    let what = match internal.suberror {
        1 => "emulation failure",
        2 => "simultaneous exception",
        3 => "delivery event",
        _ => "other",
    };
    let n = (internal.ndata as usize).min(internal.data.len()).min(4);
    format!(
        "InternalError ({what}, suberror {}, data {:x?})",
        internal.suberror,
        &internal.data[..n]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_starts_a_timed_block_and_ends_with_done() {
        for (k, &e) in ENTRY.iter().enumerate() {
            // mov %ebp, %esi; rdtsc
            assert_eq!(
                &PAYLOAD[e..e + 5],
                [0x66, 0x89, 0xee, 0x0f, 0x31],
                "kind {k}"
            );
            let end = ENTRY.get(k + 1).copied().unwrap_or(PAYLOAD.len());
            // out %al, $0x98; hlt
            assert_eq!(&PAYLOAD[end - 3..end], [0xe6, 0x98, 0xf4], "kind {k}");
            // The store goes to RESULTS + 8k (`mov %eax, moffs16`).
            let store = (RESULTS + 8 * k) as u16;
            assert!(PAYLOAD[e..end]
                .windows(4)
                .any(|w| w == [0x66, 0xa3, store as u8, (store >> 8) as u8]));
        }
        assert_eq!(KINDS.len(), ENTRY.len());
        assert!(LOAD_ADDR + PAYLOAD.len() < RESULTS - 0x10);
        assert!(MMIO_ADDR as usize >= MEM_SIZE);
    }
}
