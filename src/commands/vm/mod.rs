//! `tscope vm guest | count | bench | exits | guest-init`: measure inside real guests. One file
//! per room ([`guest`], [`count`], [`mod@bench`], [`exits`]), and the options every booting room
//! shares ([`boot`]); this file matches the subcommand and drives the room.

pub mod bench;
pub mod boot;
pub mod count;
pub mod exits;
pub mod guest;

use super::{Destination, Global};
use crate::cli::vm::{CountFailOn, VmArgs, VmCommand};
use crate::vm::count::CountConfig;
use crate::vm::init;
use crate::vm::matrix::GuestConfig;

/// `tscope vm …`: one room.
#[derive(Debug)]
pub struct Vm;

/// One `tscope vm` subcommand, checked.
#[derive(Debug)]
pub enum VmJob {
    Guest(GuestConfig, Destination),
    Exits(u32, Destination),
    /// The configuration, the output, and whether `--fail-on mismatch` was asked.
    Count(Box<CountConfig>, Destination, bool),
    Bench(Box<bench::BenchJob>),
    /// tscope as PID 1 inside a guest.
    GuestInit,
}

impl super::Command for Vm {
    type Args = VmArgs;
    type Config = VmJob;

    fn configure(args: &VmArgs, global: &Global) -> anyhow::Result<VmJob> {
        let out =
            |o, e| -> anyhow::Result<Destination> { Ok(Destination::new(o)?.with_exports(e)?) };
        Ok(match &args.command {
            VmCommand::Guest(a) => {
                VmJob::Guest(guest::config(a, global)?, out(&a.output, &a.export)?)
            }
            VmCommand::Exits(a) => {
                VmJob::Exits(exits::config(a, global)?, out(&a.output, &a.export)?)
            }
            VmCommand::Count(a) => VmJob::Count(
                Box::new(count::config(a, global)?),
                out(&a.output, &a.export)?,
                a.fail_on.contains(&CountFailOn::Mismatch),
            ),
            VmCommand::Bench(a) => VmJob::Bench(Box::new(bench::job(a, global)?)),
            VmCommand::GuestInit => VmJob::GuestInit,
        })
    }

    fn while_running(job: &VmJob) -> super::OnSignal {
        match job {
            VmJob::Exits(..) | VmJob::GuestInit => super::OnSignal::Default,
            _ => super::OnSignal::Stop,
        }
    }

    fn execute(job: VmJob, stop: &super::Stop) -> anyhow::Result<i32> {
        match job {
            VmJob::Guest(cfg, output) => guest::run(&cfg, &output, stop),
            VmJob::Exits(iterations, output) => {
                let r = crate::vm::exits::run(iterations)?;
                output.export(&r)?;
                Ok(0)
            }
            VmJob::Count(cfg, output, fail_on_mismatch) => {
                count::run(&cfg, &output, fail_on_mismatch, stop)
            }
            VmJob::Bench(job) => bench::run(*job, stop),
            VmJob::GuestInit => Ok(init::guest_init(&mut std::io::stdout().lock())?),
        }
    }
}
