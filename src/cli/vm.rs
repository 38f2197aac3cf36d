//! `tscope vm …` arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::OutputArgs;
use crate::vm::guest::RequestedAccel;

#[derive(Debug, Clone, Args)]
pub struct VmArgs {
    #[command(subcommand)]
    pub command: VmCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum VmCommand {
    /// Boot a Linux guest under qemu once per clocksource with tscope as /init, and print a
    /// matrix of host against each guest: cost per source, verdicts, and the clocksource the
    /// guest actually used.
    Guest(GuestArgs),
    /// Run a micro-VM through /dev/kvm whose payload times each kind of VM exit (cpuid, port
    /// I/O, MMIO, hlt) and rdtsc/rdtscp with its own rdtsc.
    Exits(ExitsArgs),
    /// What tscope runs as /init inside a `vm guest` guest (PID 1 only).
    #[command(hide = true)]
    GuestInit,
}

#[derive(Debug, Clone, Args)]
pub struct GuestArgs {
    /// Clocksources to boot with, one guest each (the kernel's `clocksource=`).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "tsc,kvm-clock,hpet,acpi_pm",
        value_name = "NAME"
    )]
    pub clocksource: Vec<String>,
    /// How qemu runs guest code: kvm (hardware virtualisation), tcg (emulation), or auto (KVM
    /// when /dev/kvm offers hardware virtualisation, else TCG, with a message).
    #[arg(long, value_enum, default_value_t = RequestedAccel::Auto)]
    pub accel: RequestedAccel,
    /// Seconds each guest may run before it is killed and reported as hung.
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    pub timeout: u64,
    /// Kernel to boot (bzImage or ELF vmlinux); default: Debian's cloud kernel, fetched with
    /// apt-get download and cached.
    #[arg(long, value_name = "PATH")]
    pub kernel: Option<PathBuf>,
    /// Debian package to fetch when --kernel is not given (a meta package is resolved to the
    /// kernel it depends on).
    #[arg(long, default_value = "linux-image-cloud-amd64", value_name = "PKG")]
    pub kernel_package: String,
    /// Statically linked tscope to put in the guest as /init; default: this binary if static,
    /// else built from the source tree with +crt-static into target/guest.
    #[arg(long, value_name = "PATH")]
    pub guest_bin: Option<PathBuf>,
    /// Guest CPUs. With more than one, Linux marks the TSC unstable under TCG unless the
    /// command line says tsc=reliable (see --tsc-reliable).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub smp: u32,
    /// Guest memory in MiB.
    #[arg(long, default_value_t = 256, value_name = "MIB")]
    pub memory: u32,
    /// Add tsc=reliable to the guest command line (skips the TSC watchdog and sync checks).
    #[arg(long)]
    pub tsc_reliable: bool,
    /// Probe every source in the guest, not only the matrix's.
    #[arg(long)]
    pub all_sources: bool,
    /// Extra words for the guest kernel command line.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub append: Option<String>,
    /// Boot the bzImage instead of the extracted vmlinux (PVH).
    #[arg(long)]
    pub no_pvh: bool,
    /// qemu binary.
    #[arg(long, default_value = "qemu-system-x86_64", value_name = "PATH")]
    pub qemu: String,
    /// Do not measure the host (the matrix's first column).
    #[arg(long)]
    pub no_host: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ExitsArgs {
    /// Iterations of each exit kind.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub iterations: u32,
    #[command(flatten)]
    pub output: OutputArgs,
}
