//! The only place in tscope with `unsafe` or `asm!`.
//!
//! Every block carries a `// SAFETY:` comment naming the invariant it relies on, and every
//! failing libc call becomes an [`std::io::Error`] from `errno`. Architecture-specific code is
//! chosen by `cfg`; on an unsupported architecture the counter functions are absent and callers
//! report the source as unsupported instead of panicking.

#[cfg(target_arch = "x86_64")]
pub mod baseline;
pub mod child;
pub mod clock;
pub mod cpu;
pub mod dir;
pub mod fs;
pub mod guest;
pub mod klog;
#[cfg(target_arch = "x86_64")]
pub mod kvm;
pub mod mem;
#[cfg(target_arch = "x86_64")]
pub mod placed;
pub mod signal;
pub mod stdio;
#[cfg(target_arch = "x86_64")]
pub mod trap;
#[cfg(target_arch = "x86_64")]
pub mod tsc;
pub mod worker;
#[cfg(target_arch = "x86_64")]
pub mod zero;
