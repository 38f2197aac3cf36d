//! `probe --repeat N`: the runs after the first, each a `tscope probe --json` child process
//! (a new process places its loops and the vDSO anew, which is part of what differs between
//! runs). A stop signal kills the running child.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::signals::Stop;
use super::Global;
use crate::cli::ProbeArgs;
use crate::probe::Profile;

/// The largest profile a child may print.
const MAX_CHILD_OUTPUT: u64 = 16 << 20;

/// The child's command line: the same sources, sampling and pinning, JSON on stdout.
fn child_args(args: &ProbeArgs, global: &Global) -> Vec<String> {
    let mut a = vec![
        "probe".to_string(),
        "--json".into(),
        "--seed".into(),
        args.sampling.seed.to_string(),
    ];
    if args.sampling.quick {
        a.push("--quick".into());
    }
    if args.no_pin {
        a.push("--no-pin".into());
    }
    if global.emulate_trap {
        a.push("--emulate-trap".into());
    }
    if !args.sources.is_empty() {
        a.push("--source".into());
        a.push(args.sources.join(","));
    }
    a
}

/// One more run of the probe in a child process; `None` when a stop signal ended it.
pub fn child_probe(
    args: &ProbeArgs,
    global: &Global,
    stop: &Stop,
) -> anyhow::Result<Option<Profile>> {
    let exe = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("--repeat: cannot find this tscope's executable: {e}"))?;
    let mut cmd = Command::new(&exe);
    cmd.args(child_args(args, global))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    crate::sys::child::untrapped_kill_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow::anyhow!("--repeat: cannot start '{}': {e}", exe.display()))?;
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let r = (&mut stdout).take(MAX_CHILD_OUTPUT).read_to_end(&mut buf);
        r.map(|_| buf)
    });
    let status = loop {
        if stop.requested() {
            let _ = child.kill();
            let _ = child.wait();
            let _ = reader.join();
            return Ok(None);
        }
        match child.try_wait()? {
            Some(s) => break s,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let out = reader
        .join()
        .map_err(|_| anyhow::anyhow!("--repeat: the reader of a run's output panicked"))??;
    if stop.requested() {
        return Ok(None);
    }
    if !status.success() {
        anyhow::bail!("--repeat: a run of the probe failed ({status})");
    }
    let p: Profile = serde_json::from_slice(&out)
        .map_err(|e| anyhow::anyhow!("--repeat: a run printed no profile: {e}"))?;
    Ok(Some(p))
}
