//! `tscope vm`: measure inside real guests.
//!
//! - [`guest`]: boots a Linux guest under qemu once per clocksource with a static tscope as
//!   `/init` ([`init`]) in an initramfs this module writes itself ([`cpio`]); the kernel comes
//!   from `--kernel` or Debian's package ([`kernel`]); qemu runs bounded ([`qemu`]); results come
//!   back on the serial console between markers ([`serial`]) and form a [`matrix`].
//! - [`count`]: boots real kernels with kprobes on the timestamp functions ([`kprobe`]), runs
//!   the workloads inside ([`count_guest`]; where each syscall reads its clocks:
//!   [`count_offsets`]) and holds every Linux model to the counts.
//! - [`exits`]: a micro-VM through /dev/kvm ([`crate::sys::kvm`]) timing each kind of VM exit.
//!
//! Under TCG every guest instruction is emulated: those figures say what the guest kernel's
//! paths cost relative to each other, not what a KVM guest pays. The output says which it is.

pub mod apt;
pub mod cache;
pub mod child;
pub mod count;
pub mod count_guest;
pub mod count_offsets;
pub mod count_rows;
#[cfg(test)]
mod count_tests;
pub mod count_timing;
pub mod cpio;
pub mod disk;
pub mod exits;
pub mod guest;
pub mod init;
pub mod kconfig;
pub mod kernel;
pub mod kprobe;
pub mod matrix;
pub mod modules;
#[cfg(test)]
mod modules_tests;
pub mod qemu;
pub mod scratch;
pub mod serial;
#[cfg(test)]
mod tests;
