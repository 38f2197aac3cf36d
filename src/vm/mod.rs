//! `tscope vm`: measure inside real guests.
//!
//! - [`guest`]: boots a Linux guest under qemu once per clocksource with a static tscope as
//!   `/init` ([`init`]) in an initramfs this module writes itself ([`cpio`]); the kernel comes
//!   from `--kernel` or Debian's package ([`kernel`]); qemu runs bounded ([`qemu`]); results come
//!   back on the serial console between markers ([`serial`]) and form a [`matrix`].
//! - [`exits`]: a micro-VM through /dev/kvm ([`crate::sys::kvm`]) timing each kind of VM exit.
//!
//! Under TCG every guest instruction is emulated: those figures say what the guest kernel's
//! paths cost relative to each other, not what a KVM guest pays. The output says which it is.

pub mod cpio;
pub mod exits;
pub mod guest;
pub mod init;
pub mod kernel;
pub mod matrix;
pub mod qemu;
pub mod serial;
#[cfg(test)]
mod tests;

use anyhow::Result;

use crate::cli::vm::{VmArgs, VmCommand};
use crate::export::{self, Format};

/// Runs one `tscope vm` subcommand; returns the exit code.
pub fn main(args: &VmArgs, emulate_trap: bool) -> Result<i32> {
    match &args.command {
        VmCommand::Guest(a) => {
            let mut cfg = guest::GuestConfig::try_from(a)?;
            cfg.emulate_trap = emulate_trap;
            let m = guest::run(&cfg)?;
            let bytes = export::export(&m, Format::from(&a.output))?;
            export::emit(&bytes, a.output.out.as_deref())?;
            // Exit 1 when a guest hung or failed: the matrix is printed either way.
            let all_ok = m.guests.iter().all(|g| g.status == matrix::GuestStatus::Ok);
            Ok(if all_ok { 0 } else { 1 })
        }
        VmCommand::Exits(a) => {
            let r = exits::run(a.iterations)?;
            let bytes = export::export(&r, Format::from(&a.output))?;
            export::emit(&bytes, a.output.out.as_deref())?;
            Ok(0)
        }
        VmCommand::GuestInit => init::guest_init(),
    }
}
