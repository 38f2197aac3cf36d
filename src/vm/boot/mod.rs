//! Fetching, building and booting a guest, shared by every `vm` room.
//!
//! The kernel comes from `--kernel` or Debian's package ([`kernel`], [`apt`], [`cache`]), with
//! its modules ([`modules`]) and config ([`kconfig`]); the initramfs is written here ([`cpio`],
//! [`binary`]) and disk images made by mkfs ([`disk`]); qemu runs bounded ([`qemu`], [`child`])
//! with the accelerator chosen by [`accel`]; results come back on the serial console between
//! markers ([`serial`]); each boot's files live in a scratch directory ([`scratch`]). A room
//! describes its boots ([`pipeline::Room`]: the plan, the disks, what to read from the console)
//! and boots them through one [`pipeline::Pipeline`], which opens the run's
//! [`session::Session`] and does the rest: the kernel command line, qemu, the console, the
//! timeout and the kernel's `CONFIG_HZ`.

pub(crate) mod accel;
pub(crate) mod apt;
pub(crate) mod binary;
pub(crate) mod cache;
pub(crate) mod child;
pub(crate) mod clock;
pub(crate) mod cpio;
pub(crate) mod disk;
pub(crate) mod elf;
pub(crate) mod extract;
pub(crate) mod image;
pub(crate) mod integrity;
pub(crate) mod kconfig;
pub(crate) mod kernel;
pub(crate) mod launch;
pub(crate) mod modules;
pub(crate) mod pipeline;
pub(crate) mod plan;
pub(crate) mod qemu;
pub(crate) mod scratch;
pub(crate) mod serial;
pub(crate) mod session;
#[cfg(test)]
mod tests;
pub(crate) mod tracefs;
