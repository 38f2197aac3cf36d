//! CPU placement: which CPU we run on, pinning a thread to one, and the online CPU list.

use std::io;

/// The CPU the calling thread runs on now (`sched_getcpu`).
pub fn current_cpu() -> io::Result<usize> {
    // SAFETY: sched_getcpu takes no arguments and returns -1 with errno on failure.
    let cpu = unsafe { libc::sched_getcpu() };
    if cpu < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cpu as usize)
}

/// Pins the calling thread to `cpu` (`sched_setaffinity(0, …)`).
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    set_affinity(&[cpu])
}

/// Lets the calling thread run on `cpus` only (`sched_setaffinity(0, …)`).
pub fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is a plain bitmask for which all-zero is a valid (empty) value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {cpu} is beyond CPU_SETSIZE"),
            ));
        }
        // SAFETY: `cpu` was checked against CPU_SETSIZE above, so CPU_SET stays inside the mask.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size we pass.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on (`sched_getaffinity`).
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: all-zero is a valid empty cpu_set_t.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; `set` is valid and writable for its full size.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let cpus = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: i < CPU_SETSIZE, so CPU_ISSET reads inside the mask.
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .collect();
    Ok(cpus)
}

/// CPU time (user + system) the calling thread has used so far, in seconds (`getrusage`).
pub fn thread_cpu_s() -> io::Result<f64> {
    // SAFETY: all-zero is a valid rusage value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid and writable; RUSAGE_THREAD is supported since Linux 2.6.26.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(tv(ru.ru_utime) + tv(ru.ru_stime))
}

/// The calling thread's voluntary and involuntary context switches so far (`getrusage`).
pub fn context_switches() -> io::Result<(u64, u64)> {
    // SAFETY: all-zero is a valid rusage value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid and writable; RUSAGE_THREAD is supported since Linux 2.6.26.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((ru.ru_nvcsw as u64, ru.ru_nivcsw as u64))
}

/// The kernel release (`uname -r`).
pub fn kernel_release() -> io::Result<String> {
    // SAFETY: all-zero is a valid utsname value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is valid and writable.
    let rc = unsafe { libc::uname(&mut u) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel NUL-terminates every utsname field within its array.
    let release = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) };
    Ok(release.to_string_lossy().into_owned())
}
