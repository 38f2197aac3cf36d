//! `tscope record -o FILE -- CMD …`: run a command under strace for `simulate --strace`.

use super::{Global, StderrProgress};
use crate::cli::record::RecordArgs;
use crate::error::ConfigError;
use crate::progress::Progress;
use crate::trace::strace::record::{self, RecordConfig};

/// Validates `args`: the log's path can be written and there is a command.
pub fn config(args: &RecordArgs, _global: &Global) -> Result<RecordConfig, ConfigError> {
    super::check_output_file(&args.out, "out")?;
    if crate::export::file::target(&args.out) == Ok(crate::export::file::Target::Stream) {
        return Err(ConfigError::Output {
            path: args.out.clone(),
            why: "it is a device or FIFO, and the log is read back: name a regular file (--out)"
                .into(),
        });
    }
    if args.command.is_empty() {
        return Err(ConfigError::Invalid(
            "give the command to trace after --, e.g. tscope record -o log -- make".into(),
        ));
    }
    Ok(RecordConfig {
        out: args.out.clone(),
        command: args.command.clone(),
    })
}

/// `tscope record`: runs the command under strace and says on stderr where the log is (the
/// log is the result; nothing goes to stdout); the command's exit code, 130 when interrupted.
#[derive(Debug)]
pub struct Record;

impl super::Command for Record {
    type Args = RecordArgs;
    type Config = RecordConfig;

    fn configure(args: &RecordArgs, global: &Global) -> anyhow::Result<RecordConfig> {
        Ok(config(args, global)?)
    }

    fn while_running(_: &RecordConfig) -> super::OnSignal {
        super::OnSignal::Stop
    }

    fn execute(cfg: RecordConfig, stop: &super::Stop) -> anyhow::Result<i32> {
        let r = record::record(&cfg)?;
        StderrProgress::lines().note(&crate::export::recording(&r, &cfg.out));
        Ok(stop.exit_code(r.exit_code))
    }
}
