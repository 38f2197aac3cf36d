//! Child processes that must not outlive tscope (a qemu guest left running after Ctrl-C or a
//! crash would keep burning a CPU).

use std::io;
use std::process::Command;

/// Runs in the forked child before exec: async-signal-safe syscalls only, no allocation.
fn die_with_parent() -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number and no pointer.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // The parent may have died between fork and prctl: then we are already orphaned.
    // SAFETY: getppid(2) takes no arguments and cannot fail.
    if unsafe { libc::getppid() } == 1 {
        return Err(io::Error::other("parent exited before the child started"));
    }
    Ok(())
}

/// Makes the child started by `cmd` receive SIGKILL when the thread that spawns it dies
/// (`prctl(PR_SET_PDEATHSIG, SIGKILL)` between fork and exec). Spawn from a thread that lives
/// as long as the child should (the main thread).
pub fn kill_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: `die_with_parent` is async-signal-safe (two syscalls, no allocation, no locks),
    // which is what pre_exec requires of code running between fork and exec.
    unsafe { cmd.pre_exec(die_with_parent) };
}

/// Runs in the forked child before exec: lets TSC reads run again (`PR_TSC_ENABLE`: a parent
/// under `--emulate-trap` has them fault, which a child inherits across exec before it can
/// install a handler), then [`die_with_parent`].
fn untrapped_and_dies_with_parent() -> io::Result<()> {
    // SAFETY: PR_SET_TSC takes an int mode and only changes this task's CR4.TSD setting.
    if unsafe { libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_ENABLE, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    die_with_parent()
}

/// [`kill_with_parent`] for a child tscope that sets up its own TSC trapping (a `probe
/// --repeat` run): the child starts with TSC reads enabled.
pub fn untrapped_kill_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: `untrapped_and_dies_with_parent` is async-signal-safe (three syscalls, no
    // allocation, no locks), which is what pre_exec requires between fork and exec.
    unsafe { cmd.pre_exec(untrapped_and_dies_with_parent) };
}
