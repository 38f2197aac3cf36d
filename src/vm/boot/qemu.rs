//! Running one qemu guest, bounded: the serial console is captured from qemu's stdout, a guest
//! that outlives its timeout is killed (SIGKILL) and reported, and qemu dies with tscope
//! (`PR_SET_PDEATHSIG`) and is killed at a stop signal, so Ctrl-C never leaves a guest running.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::sys;

/// How qemu executes guest code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// Hardware virtualisation through /dev/kvm: guest code runs natively.
    Kvm,
    /// qemu's binary translator: every guest instruction is emulated.
    Tcg,
}

impl Accel {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// One guest boot.
#[derive(Debug, Clone)]
pub(crate) struct QemuSpec {
    pub binary: String,
    pub accel: Accel,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub append: String,
    pub memory_mb: u32,
    pub smp: u32,
    pub timeout: Duration,
    /// Raw disk images, each attached as an NVMe controller (built into Debian's cloud kernels,
    /// unlike `virtio_blk`, so the guest needs no modules): the guest sees the i-th as
    /// `/dev/nvme{i}n1`.
    pub disks: Vec<PathBuf>,
}

impl QemuSpec {
    /// The qemu command line (also printed in the JSON so a run can be repeated by hand).
    pub(crate) fn args(&self) -> Vec<String> {
        let cpu = match self.accel {
            Accel::Kvm => "host",
            Accel::Tcg => "max",
        };
        let mut a: Vec<String> = [
            "-accel",
            self.accel.name(),
            "-cpu",
            cpu,
            "-nodefaults",
            "-display",
            "none",
            "-monitor",
            "none",
            "-serial",
            "stdio",
            "-nic",
            "none",
            "-no-reboot",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend([
            "-m".into(),
            self.memory_mb.to_string(),
            "-smp".into(),
            self.smp.to_string(),
            "-kernel".into(),
            self.kernel.display().to_string(),
            "-initrd".into(),
            self.initrd.display().to_string(),
            "-append".into(),
            self.append.clone(),
        ]);
        for (i, d) in self.disks.iter().enumerate() {
            a.extend([
                "-drive".into(),
                // qemu's option syntax: a comma inside a value is written twice.
                format!(
                    "file={},if=none,id=disk{i},format=raw",
                    d.display().to_string().replace(',', ",,")
                ),
                "-device".into(),
                format!("nvme,drive=disk{i},serial=tscope{i}"),
            ]);
        }
        a
    }
}

/// What came back from one boot.
#[derive(Debug, Clone)]
pub(crate) struct QemuOutcome {
    /// The serial console (qemu's stdout), lossily decoded.
    pub console: String,
    /// qemu's own messages.
    pub stderr: String,
    pub timed_out: bool,
    pub wall: Duration,
}

impl QemuOutcome {
    /// Why the guest gave no more than it did, when it ran past its time limit and was killed.
    pub(crate) fn killed(&self) -> Option<String> {
        self.timed_out
            .then(|| format!("killed after {:.0} s (--timeout)", self.wall.as_secs_f64()))
    }

    /// The console's last 30 lines: what a failed boot reports of it.
    pub(crate) fn console_tail(&self) -> String {
        let lines: Vec<&str> = self.console.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

fn collect(mut r: impl Read + Send + 'static) -> (Arc<Mutex<Vec<u8>>>, JoinHandle<()>) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let b = Arc::clone(&buf);
    let h = std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n) = r.read(&mut chunk) {
            if n == 0 {
                break;
            }
            if let Ok(mut v) = b.lock() {
                v.extend_from_slice(&chunk[..n]);
            }
        }
    });
    (buf, h)
}

/// Kills the child unless it was reaped: the guard that makes early returns and panics safe.
struct Reaper(Option<Child>);

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Boots the guest and waits for it to power off, or kills it at the timeout.
pub(crate) fn run(spec: &QemuSpec) -> Result<QemuOutcome> {
    let mut cmd = Command::new(&spec.binary);
    cmd.args(spec.args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    sys::child::kill_with_parent(&mut cmd);
    let started = Instant::now();
    let mut child = cmd.spawn().with_context(|| {
        format!(
            "starting {} (install it: apt-get install qemu-system-x86)",
            spec.binary
        )
    })?;
    let (out, out_h) = collect(child.stdout.take().context("qemu stdout")?);
    let (err, err_h) = collect(child.stderr.take().context("qemu stderr")?);
    let mut reaper = Reaper(Some(child));
    let mut timed_out = false;
    loop {
        let child = reaper.0.as_mut().context("qemu child")?;
        if child.try_wait().context("waiting for qemu")?.is_some() {
            break;
        }
        if sys::signal::stop_requested() {
            // The Reaper kills and reaps qemu on the way out.
            return Err(crate::error::Error::Interrupted);
        }
        if started.elapsed() >= spec.timeout {
            let _ = child.kill();
            let _ = child.wait();
            timed_out = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    reaper.0 = None;
    let wall = started.elapsed();
    let _ = out_h.join();
    let _ = err_h.join();
    let text = |b: &Arc<Mutex<Vec<u8>>>| {
        String::from_utf8_lossy(&b.lock().map(|v| v.clone()).unwrap_or_default()).into_owned()
    };
    Ok(QemuOutcome {
        console: text(&out),
        stderr: text(&err),
        timed_out,
        wall,
    })
}
