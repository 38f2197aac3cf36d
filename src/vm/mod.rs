//! `tscope vm`: measure inside real guests. Five rooms:
//!
//! - [`boot`]: everything that fetches, builds and boots a guest — the kernel package, its
//!   modules and kconfig, initramfs and disk images, qemu, the serial console, child processes,
//!   scratch and cache, the accelerator choice and the guest binary — and the one pipeline
//!   every booting room goes through ([`boot::pipeline`]: a room says what it wants from a
//!   boot, the pipeline opens the session and does the rest).
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
//! [`init`] is the guest side's entry point: tscope running as `/init` reads the plan in its
//! initramfs and hands over to the guest side of the room that booted it ([`count::guest`],
//! [`bench::guest`], or the matrix's probe and verdicts, which live in [`init`] itself).
//!
//! What depends on what, as the imports stand: [`boot`] on no other room, and [`exits`] on
//! none at all. [`count`] depends on [`boot`] alone. [`mod@bench`] on [`boot`] and [`count`]:
//! `vm bench --count` boots count's room ([`count::count_kernel`]) through its own pipeline and
//! puts count's rows beside the timed ones. [`init`] on [`boot`], [`count`] and [`mod@bench`]
//! (their guest sides). [`matrix`] on [`boot`] and [`init`] (its guests' probe sources,
//! [`init::GUEST_SOURCES`], which the host column measures too), and so, through [`init`], on
//! [`count`] and [`mod@bench`]. No two import each other.
//!
//! Under TCG every guest instruction is emulated: those figures say what the guest kernel's
//! paths cost relative to each other, not what a KVM guest pays. The output says which it is.

pub mod bench;
pub mod boot;
pub mod count;
pub mod exits;
pub mod init;
pub mod matrix;
