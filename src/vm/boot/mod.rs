//! Fetching, building and booting a guest, shared by every `vm` room.
//!
//! The kernel comes from `--kernel` or Debian's package ([`kernel`], [`apt`], [`cache`]), with
//! its modules ([`modules`]) and config ([`kconfig`]); the initramfs is written here ([`cpio`],
//! [`binary`]) and disk images made by mkfs ([`disk`]); qemu runs bounded ([`qemu`], [`child`])
//! with the accelerator chosen by [`accel`]; results come back on the serial console between
//! markers ([`serial`]); each boot's files live in a scratch directory ([`scratch`]). A room opens one
//! [`session::Session`] for all of that.

pub mod accel;
pub mod apt;
pub mod binary;
pub mod cache;
pub mod child;
pub mod cpio;
pub mod disk;
pub mod elf;
pub mod extract;
pub mod image;
pub mod integrity;
pub mod kconfig;
pub mod kernel;
pub mod launch;
pub mod modules;
pub mod plan;
pub mod qemu;
pub mod scratch;
pub mod serial;
pub mod session;
#[cfg(test)]
mod tests;
pub mod tracefs;
