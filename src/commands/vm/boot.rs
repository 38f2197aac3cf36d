//! The checks every `vm` room that boots a guest shares (`vm guest`, `vm count`, `vm bench`),
//! and the one conversion of each list option more than one room takes.

use std::path::PathBuf;

use crate::cli::vm::BootArgs;
use crate::error::ConfigError;
use crate::vm::boot::kernel::KernelSource;
use crate::vm::boot::session::BootConfig;

/// The kernels `--kernel-package` and `--kernel` name, packages first, each checked (a
/// package spec that parses, a path that is a file); `None` when neither is given (the room's
/// default matrix).
pub fn kernel_sources(
    packages: &[String],
    paths: &[PathBuf],
) -> Result<Option<Vec<KernelSource>>, ConfigError> {
    for p in packages {
        if let Err(e) = crate::vm::boot::apt::split_spec(p) {
            return Err(ConfigError::Invalid(format!("--kernel-package: {e}")));
        }
    }
    for k in paths {
        if !k.is_file() {
            return Err(ConfigError::Invalid(format!(
                "--kernel: '{}' is not a file",
                k.display()
            )));
        }
        if let Err(e) = crate::vm::boot::image::check_kernel_image(k) {
            return Err(ConfigError::Invalid(format!("--kernel: {e}")));
        }
    }
    if packages.is_empty() && paths.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        packages
            .iter()
            .map(|p| KernelSource::Package(p.clone()))
            .chain(paths.iter().map(|p| KernelSource::Path(p.clone())))
            .collect(),
    ))
}

/// A list option's values (`--fs`, `--workload` of `vm count` and `vm bench`, `--clocksource`
/// of `vm guest` and `vm bench`) as the domain's kinds, each once, in the order given; at
/// least one.
pub fn unique<A: Copy, T: PartialEq + From<A>>(
    list: &[A],
    option: &str,
) -> Result<Vec<T>, ConfigError> {
    let mut out: Vec<T> = Vec::new();
    for &a in list {
        let t = T::from(a);
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if out.is_empty() {
        return Err(ConfigError::Invalid(format!("{option}: name at least one")));
    }
    Ok(out)
}

/// The options every room that boots a guest shares, range-checked with its `--timeout`.
pub fn boot_config(b: &BootArgs, timeout: u64) -> Result<BootConfig, ConfigError> {
    check_boot(b, timeout)?;
    Ok(BootConfig {
        accel: b.accel.into(),
        timeout: std::time::Duration::from_secs(timeout),
        guest_bin: b.guest_bin.clone(),
        qemu: b.qemu.clone(),
        memory_mb: b.memory,
        append: b.append.clone(),
    })
}

fn check_boot(b: &BootArgs, timeout: u64) -> Result<(), ConfigError> {
    if !(1..=3600).contains(&timeout) {
        return Err(ConfigError::range("timeout", "1..=3600 seconds", timeout));
    }
    if !(128..=65536).contains(&b.memory) {
        return Err(ConfigError::range("memory", "128..=65536 MiB", b.memory));
    }
    if let Some(extra) = &b.append {
        if extra.chars().any(char::is_control) {
            return Err(ConfigError::Invalid(
                "--append: the kernel command line is one line of printable words".into(),
            ));
        }
    }
    Ok(())
}
