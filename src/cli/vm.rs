//! `tscope vm …` arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{ExportArgs, OutputArgs};
use crate::vm::boot::accel::RequestedAccel;

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
    /// Boot real Linux kernels (Debian's cloud kernels by default) with kprobes on every
    /// timestamp function, run the workloads inside, and hold the Linux model for each kernel
    /// to the counts per op.
    Count(CountArgs),
    /// Boot real Linux kernels and time the workloads while the guest switches its
    /// clocksource at run time (tsc, hpet, …): the change in ns per op against the kernel
    /// model's reads per op × the change of the read's cost; with two or more kernels, a
    /// kernel A/B.
    Bench(BenchArgs),
    /// What tscope runs as /init inside a `vm guest` guest (PID 1 only).
    #[command(hide = true)]
    GuestInit,
}

/// The options every room that boots a guest takes (`vm guest`, `vm count`): how qemu runs it,
/// what runs as /init, which qemu, how much memory. `commands::vm` range-checks them once,
/// with the room's `--timeout` (each room has its own default time limit, so each declares it).
#[derive(Debug, Clone, Args)]
pub struct BootArgs {
    /// How qemu runs guest code: kvm (hardware virtualisation), tcg (emulation), or auto (KVM
    /// when /dev/kvm offers hardware virtualisation, else TCG, with a message).
    #[arg(long, value_enum, default_value_t = AccelArg::Auto)]
    pub accel: AccelArg,
    /// tscope to put in the guest as /init; default: this binary (a dynamic build goes in with
    /// its interpreter and libraries).
    #[arg(long, value_name = "PATH")]
    pub guest_bin: Option<PathBuf>,
    /// qemu binary.
    #[arg(long, default_value = "qemu-system-x86_64", value_name = "PATH")]
    pub qemu: String,
    /// Guest memory in MiB.
    #[arg(long, default_value_t = 256, value_name = "MIB")]
    pub memory: u32,
    /// Extra words for the guest kernel command line (e.g. "tsc=unstable", "tsc=reliable").
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub append: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct GuestArgs {
    /// Clocksources to boot with, one guest each (the kernel's `clocksource=`).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "tsc,kvm-clock,hpet,acpi_pm",
        value_name = "NAME",
        hide_possible_values = true
    )]
    pub clocksource: Vec<GuestClocksource>,
    #[command(flatten)]
    pub boot: BootArgs,
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
    /// Guest CPUs. With more than one, Linux marks the TSC unstable under TCG unless the
    /// command line says tsc=reliable (see --tsc-reliable).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub smp: u32,
    /// Add tsc=reliable to the guest command line (skips the TSC watchdog and sync checks).
    #[arg(long)]
    pub tsc_reliable: bool,
    /// Probe every source in the guest, not only the matrix's.
    #[arg(long)]
    pub all_sources: bool,
    /// Boot the bzImage instead of the extracted vmlinux (PVH).
    #[arg(long)]
    pub no_pvh: bool,
    /// Do not measure the host (the matrix's first column).
    #[arg(long)]
    pub no_host: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub export: ExportArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ExitsArgs {
    /// Iterations of each exit kind.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub iterations: u32,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub export: ExportArgs,
}

/// How qemu should run guest code, as the command line names it ([`RequestedAccel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AccelArg {
    /// KVM when /dev/kvm offers hardware virtualisation, else TCG (with a message).
    Auto,
    /// Hardware virtualisation (kvm_intel / kvm_amd).
    Kvm,
    /// qemu's binary translator: emulation, not virtualisation.
    Tcg,
}

impl From<AccelArg> for RequestedAccel {
    fn from(a: AccelArg) -> Self {
        match a {
            AccelArg::Auto => RequestedAccel::Auto,
            AccelArg::Kvm => RequestedAccel::Kvm,
            AccelArg::Tcg => RequestedAccel::Tcg,
        }
    }
}

/// What `vm count --fail-on` can fail on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CountFailOn {
    /// A row whose kernel count differs from the model's by more than 0.05 per op (0.25 where
    /// the kernel's count is fractional).
    Mismatch,
}

/// The kernels, file systems, workloads and time limit that `vm count` and `vm bench` share.
#[derive(Debug, Clone, Args)]
pub struct MatrixArgs {
    /// Debian kernel package, NAME or NAME@SUITE (SUITE through tscope's own apt
    /// configuration under its cache directory); repeatable. Default:
    /// linux-image-cloud-amd64 (the machine's suite), @trixie and @sid. The first kernel is
    /// the A of a `vm bench` kernel A/B.
    #[arg(long, value_name = "PKG")]
    pub kernel_package: Vec<String>,
    /// Kernel to boot (bzImage or ELF vmlinux); repeatable, after the --kernel-package ones.
    #[arg(long, value_name = "PATH")]
    pub kernel: Vec<PathBuf>,
    /// File systems to run the workloads on: tmpfs, ext4, xfs, btrfs (each disk an image made
    /// with mkfs.FS on the host, attached as an NVMe disk; xfs and btrfs modules are loaded
    /// from the kernel package).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "tmpfs",
        value_name = "FS"
    )]
    pub fs: Vec<GuestFs>,
    /// Workloads to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "pipe1,pingpong,write-only,write-stat,vfsmix,fifo1",
        value_name = "NAME"
    )]
    pub workload: Vec<LoopWorkload>,
    /// Seconds each guest may run before it is killed and reported.
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    pub timeout: u64,
}

#[derive(Debug, Clone, Args)]
pub struct CountArgs {
    #[command(flatten)]
    pub matrix: MatrixArgs,
    /// Iterations of each workload (a zero-iteration baseline is subtracted).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub iterations: u64,
    #[command(flatten)]
    pub boot: BootArgs,
    /// Boot each guest with this clocksource (the kernel's `clocksource=`); default: the
    /// kernel's own choice. Its read callback is probed where the kernel lets kprobe events
    /// reach it (read_hpet, acpi_pm_read; read_tsc and kvm_clock_get_cycles are notrace).
    #[arg(long, value_enum, value_name = "NAME")]
    pub clocksource: Option<GuestClocksource>,
    /// Exit 1 when this holds.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub fail_on: Vec<CountFailOn>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub export: ExportArgs,
}

/// What `vm bench --fail-on` can fail on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchFailOn {
    /// A clocksource row whose measured change rules the model's prediction out.
    Disagree,
}

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub matrix: MatrixArgs,
    /// Clocksources to alternate inside each boot (tsc, hpet, acpi_pm, kvm-clock); the first
    /// is the `from` of every comparison.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "tsc,hpet",
        value_name = "NAME",
        hide_possible_values = true
    )]
    pub clocksource: Vec<GuestClocksource>,
    /// Boots per kernel (their first clocksource alternates).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub boots: u32,
    /// Rounds per boot, each visiting every clocksource once.
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub rounds: u32,
    /// Milliseconds each workload runs per clocksource visit (its iterations are fixed from a
    /// warm-up in each boot).
    #[arg(long, default_value_t = 60, value_name = "MS")]
    pub slot_ms: u64,
    /// Fixed iterations per visit instead of --slot-ms.
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
    /// Seed of the bootstrap intervals and of the guests' paired cost measurements.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    #[command(flatten)]
    pub boot: BootArgs,
    /// Iterations of the pass, in the first boot of each kernel after its rounds, that counts
    /// every clocksource read per op with a kprobe on the clocksource's read callback
    /// (read_tsc, read_hpet, …); 0 skips it.
    #[arg(long, default_value_t = 300, value_name = "N")]
    pub count_reads: u64,
    /// Iterations per block of the live knob pairs (write + statx asking for the times against
    /// write + statx asking for the size; one and four writes per query), run in the first
    /// boot of each kernel after its rounds on every file system: on a multigrain kernel they
    /// price the guest's inode update; 0 skips them.
    #[arg(long, default_value_t = crate::vm::bench::DEFAULT_PAIR_ITERATIONS, value_name = "N")]
    pub pair_iterations: u64,
    /// Also write each boot's raw serial console to DIR (`KERNEL-bootN.console`): the
    /// evidence behind the slots, as the guest printed it.
    #[arg(long, value_name = "DIR")]
    pub console_dir: Option<PathBuf>,
    /// Also count each kernel's timestamp calls per op (precise and coarse) with `vm count`'s
    /// kprobe pass: one extra boot per kernel, on the first clocksource; the counts go beside
    /// the kernel and clocksource rows.
    #[arg(long)]
    pub count: bool,
    /// Also write an SVG of the measured against the predicted change, with intervals.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Also write a commit-message paragraph (72 columns) of the kernel A/B; needs two or
    /// more kernels.
    #[arg(long, value_name = "FILE")]
    pub commit_message: Option<PathBuf>,
    /// Exit 1 when this holds.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub fail_on: Vec<BenchFailOn>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub export: ExportArgs,
}

/// A workload with a single-threaded loop, as `vm count --workload` names it: the command
/// line's mirror of `crate::workload::def::LOOPS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LoopWorkload {
    Pipe1,
    Pingpong,
    WriteOnly,
    WriteStat,
    Vfsmix,
    Fifo1,
}

impl From<LoopWorkload> for crate::workload::WorkloadName {
    fn from(w: LoopWorkload) -> Self {
        use crate::workload::WorkloadName as W;
        match w {
            LoopWorkload::Pipe1 => W::Pipe1,
            LoopWorkload::Pingpong => W::Pingpong,
            LoopWorkload::WriteOnly => W::WriteOnly,
            LoopWorkload::WriteStat => W::WriteStat,
            LoopWorkload::Vfsmix => W::Vfsmix,
            LoopWorkload::Fifo1 => W::Fifo1,
        }
    }
}

/// A clocksource a guest can be booted with or switched to, by the kernel's name
/// (`--clocksource` of `vm guest`, `vm count` and `vm bench`): the command line's mirror of
/// `crate::vm::boot::clock::Clocksource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GuestClocksource {
    Tsc,
    Hpet,
    #[value(name = "acpi_pm")]
    AcpiPm,
    KvmClock,
}

/// A file system a guest mounts for its workloads (`vm count --fs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GuestFs {
    Tmpfs,
    Ext4,
    Xfs,
    Btrfs,
}

impl From<GuestClocksource> for crate::vm::boot::clock::Clocksource {
    fn from(c: GuestClocksource) -> Self {
        use crate::vm::boot::clock::Clocksource;
        match c {
            GuestClocksource::Tsc => Clocksource::Tsc,
            GuestClocksource::Hpet => Clocksource::Hpet,
            GuestClocksource::AcpiPm => Clocksource::AcpiPm,
            GuestClocksource::KvmClock => Clocksource::KvmClock,
        }
    }
}

impl From<GuestFs> for crate::trace::FsKind {
    fn from(f: GuestFs) -> Self {
        use crate::trace::FsKind;
        match f {
            GuestFs::Tmpfs => FsKind::Tmpfs,
            GuestFs::Ext4 => FsKind::Ext4,
            GuestFs::Xfs => FsKind::Xfs,
            GuestFs::Btrfs => FsKind::Btrfs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::{Parser, ValueEnum};

    #[test]
    fn the_mirrors_name_what_the_domain_names() {
        let loops: Vec<crate::workload::WorkloadName> = LoopWorkload::value_variants()
            .iter()
            .map(|&w| w.into())
            .collect();
        assert_eq!(loops, crate::workload::def::LOOPS);
        for &w in LoopWorkload::value_variants() {
            let name = w.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(name, crate::workload::WorkloadName::from(w).as_str());
        }
        let fs: Vec<crate::trace::FsKind> = GuestFs::value_variants()
            .iter()
            .map(|&f| f.into())
            .collect();
        assert_eq!(fs, crate::vm::boot::disk::FILESYSTEMS);
        for &f in GuestFs::value_variants() {
            let name = f.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(name, crate::trace::FsKind::from(f).name());
        }
        use crate::vm::boot::clock::Clocksource;
        let cs: Vec<Clocksource> = GuestClocksource::value_variants()
            .iter()
            .map(|&c| c.into())
            .collect();
        assert_eq!(cs, Clocksource::ALL);
        for &c in GuestClocksource::value_variants() {
            let name = c.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(name, Clocksource::from(c).name());
        }
    }

    /// The boot options and the time limit a `vm` command line gives.
    fn boot(argv: &[&str]) -> (BootArgs, u64) {
        let cli = Cli::try_parse_from(argv).unwrap();
        match cli.command {
            Command::Vm(VmArgs {
                command: VmCommand::Guest(a),
            }) => (a.boot, a.timeout),
            Command::Vm(VmArgs {
                command: VmCommand::Count(a),
            }) => (a.boot, a.matrix.timeout),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_room_keeps_its_own_time_limit() {
        assert_eq!(boot(&["tscope", "vm", "guest"]).1, 120);
        assert_eq!(boot(&["tscope", "vm", "count"]).1, 300);
        let (b, t) = boot(&["tscope", "vm", "count", "--timeout", "7", "--memory", "512"]);
        assert_eq!((t, b.memory, b.accel), (7, 512, AccelArg::Auto));
    }
}
