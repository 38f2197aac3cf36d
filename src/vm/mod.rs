//! `tscope vm`: measure inside real guests. Five rooms:
//!
//! - [`boot`]: everything that fetches, builds and boots a guest — the kernel package, its
//!   modules and kconfig, initramfs and disk images, qemu, the serial console, child processes,
//!   scratch and cache, the accelerator choice and the guest binary. The rooms below
//!   depend on it; [`matrix`], [`count`] and [`exits`] on nothing else of `vm`, and
//!   [`mod@bench`] on [`count`] too: `vm bench --count` runs count's kprobe pass
//!   ([`count::run`], a session of its own) and puts its rows beside the timed ones.
//! - [`matrix`]: `vm guest`, one guest per clocksource with tscope as `/init`, gathered into a
//!   [`matrix::result::GuestMatrix`].
//! - [`count`]: `vm count`, kprobes on the timestamp functions of real kernels, every Linux
//!   model held to the counts.
//! - [`mod@bench`]: `vm bench`, the workloads timed while the guest switches its clocksource,
//!   the change in ns per op held to the model's reads × the change of the read's cost; and
//!   kernel A/B.
//! - [`exits`]: `vm exits`, a micro-VM through /dev/kvm ([`crate::sys::kvm`]) timing each kind
//!   of VM exit.
//!
//! [`init`] is the guest side's entry point: tscope running as `/init` reads the kernel command
//! line and hands over to the room that booted it.
//!
//! Under TCG every guest instruction is emulated: those figures say what the guest kernel's
//! paths cost relative to each other, not what a KVM guest pays. The output says which it is.

pub mod bench;
pub mod boot;
pub mod count;
pub mod exits;
pub mod init;
pub mod matrix;
