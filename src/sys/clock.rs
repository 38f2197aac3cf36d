//! `clock_gettime`, `gettimeofday` and `time` through libc (which uses the vDSO where the
//! kernel offers it) and through the raw syscall instruction (`syscall(2)`), plus `getppid`,
//! the null-syscall reference.
//!
//! The vDSO path of glibc falls back to the syscall by itself when the clocksource is not
//! vDSO-capable (hpet, acpi_pm, …) or for clocks the vDSO does not serve (the CPU-time clocks);
//! the `syscall_*` functions always enter the kernel.

use std::io;

/// Linux clock ids used by tscope (from `include/uapi/linux/time.h`).
pub mod id {
    pub const REALTIME: libc::clockid_t = libc::CLOCK_REALTIME;
    pub const MONOTONIC: libc::clockid_t = libc::CLOCK_MONOTONIC;
    pub const PROCESS_CPUTIME: libc::clockid_t = libc::CLOCK_PROCESS_CPUTIME_ID;
    pub const THREAD_CPUTIME: libc::clockid_t = libc::CLOCK_THREAD_CPUTIME_ID;
    pub const MONOTONIC_RAW: libc::clockid_t = libc::CLOCK_MONOTONIC_RAW;
    pub const REALTIME_COARSE: libc::clockid_t = libc::CLOCK_REALTIME_COARSE;
    pub const MONOTONIC_COARSE: libc::clockid_t = libc::CLOCK_MONOTONIC_COARSE;
    pub const BOOTTIME: libc::clockid_t = libc::CLOCK_BOOTTIME;
    pub const TAI: libc::clockid_t = libc::CLOCK_TAI;
}

#[inline(always)]
fn ts_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// `clock_gettime(clock)` through libc (the vDSO where available), in nanoseconds.
#[inline(always)]
pub fn vdso_clock_gettime(clock: libc::clockid_t) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call; an invalid clock
    // id makes the call return -1 with errno set, which we turn into an error.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ts_ns(&ts))
}

/// `clock_gettime(clock)` through the raw syscall, bypassing the vDSO, in nanoseconds.
#[inline(always)]
pub fn syscall_clock_gettime(clock: libc::clockid_t) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: SYS_clock_gettime takes (clockid_t, struct timespec *); `ts` is valid and
    // writable for the duration of the call. Errors come back as -1 with errno.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_clock_gettime,
            clock,
            &mut ts as *mut libc::timespec,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ts_ns(&ts))
}

/// `clock_getres(clock)` in nanoseconds (what the kernel claims, not what it delivers).
pub fn clock_getres(clock: libc::clockid_t) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; invalid ids fail with -1 and errno.
    let rc = unsafe { libc::clock_getres(clock, &mut ts) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ts_ns(&ts))
}

#[inline(always)]
fn tv_ns(tv: &libc::timeval) -> u64 {
    (tv.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(tv.tv_usec as u64 * 1000)
}

/// `gettimeofday` through libc (vDSO), in nanoseconds (microsecond resolution).
#[inline(always)]
pub fn vdso_gettimeofday() -> io::Result<u64> {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: `tv` is a valid, writable timeval; a null timezone pointer is allowed.
    let rc = unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(tv_ns(&tv))
}

/// `gettimeofday` through the raw syscall, in nanoseconds (microsecond resolution).
#[inline(always)]
pub fn syscall_gettimeofday() -> io::Result<u64> {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: SYS_gettimeofday takes (struct timeval *, struct timezone *); `tv` is valid and
    // writable, the timezone pointer may be null.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_gettimeofday,
            &mut tv as *mut libc::timeval,
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(tv_ns(&tv))
}

/// `time(NULL)` through libc (vDSO), in nanoseconds (one-second resolution).
#[inline(always)]
pub fn vdso_time() -> io::Result<u64> {
    // SAFETY: time(2) with a null pointer only returns the value; it cannot fail on Linux
    // except with EFAULT for a bad pointer, and we pass none.
    let t = unsafe { libc::time(std::ptr::null_mut()) };
    if t == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok((t as u64).wrapping_mul(1_000_000_000))
}

/// `getppid` through the raw syscall: the cheapest real kernel entry and exit.
#[inline(always)]
pub fn syscall_getppid() -> i64 {
    // SAFETY: getppid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_getppid) }
}

/// Spins until `CLOCK_REALTIME_COARSE` moves (the next tick's timekeeping update), at most
/// `limit`; whether it moved. On a multigrain kernel the floor a fine stamp raised is never
/// ahead of the coarse clock once it has moved: the kernel's next coarse time is taken at the
/// tick, after every fine stamp before it. Userspace only (the vDSO), so the wait leaves the
/// kernel's caches as the last call left them.
pub fn wait_for_coarse_tick(limit: std::time::Duration) -> io::Result<bool> {
    let start = vdso_clock_gettime(id::REALTIME_COARSE)?;
    let deadline = std::time::Instant::now() + limit;
    loop {
        if vdso_clock_gettime(id::REALTIME_COARSE)? != start {
            return Ok(true);
        }
        if std::time::Instant::now() >= deadline {
            return Ok(false);
        }
        std::hint::spin_loop();
    }
}
