//! Helper processes of `vm guest` and `vm count` (apt-get, dpkg-deb and its tar, mkfs), run so
//! that an interrupt never orphans them: each dies with tscope (`PR_SET_PDEATHSIG`), and a
//! stop signal (SIGINT, SIGTERM, SIGHUP: [`crate::sys::signal`]) kills the one running and
//! returns [`Error::Interrupted`], so the caller removes its scratch on the way out.

use std::process::{Command, ExitStatus};
use std::time::Duration;

use crate::error::{Context, Error, Result};
use crate::sys;

/// Fails with [`Error::Interrupted`] when a stop signal arrived.
pub(crate) fn check_stop() -> Result<()> {
    if sys::signal::stop_requested() {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// Runs `cmd` to completion; kills it and returns [`Error::Interrupted`] on a stop signal.
pub(crate) fn status(cmd: &mut Command, what: &str) -> Result<ExitStatus> {
    check_stop()?;
    sys::child::kill_with_parent(cmd);
    // Its own process group, so that a stop kills what it started too (dpkg-deb's tar).
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd.spawn().with_context(|| format!("running {what}"))?;
    loop {
        if let Some(st) = child
            .try_wait()
            .with_context(|| format!("waiting for {what}"))?
        {
            return Ok(st);
        }
        if sys::signal::stop_requested() {
            if let Ok(pid) = i32::try_from(child.id()) {
                let _ = sys::worker::kill(-pid);
            }
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
