//! The guest kernel: `--kernel PATH`, or Debian's `linux-image-*` package fetched with
//! `apt-get download`, unpacked (not installed) with `dpkg-deb -x` and cached under
//! `$XDG_CACHE_HOME/tscope` (else `~/.cache/tscope`).
//!
//! Under TCG a bzImage spends seconds decompressing itself, so the ELF `vmlinux` is extracted
//! once (the bzImage header gives the compressed payload's offset and length; its magic says
//! gzip, xz, zstd or lz4; the system's decompressor unpacks it) and booted PVH-style with
//! `qemu -kernel vmlinux`. The bzImage stays beside it as the fallback.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::vm::boot::apt::{self, Apt};
use crate::vm::boot::child;
use crate::vm::boot::elf::Elf;
use crate::vm::boot::extract::extract_vmlinux;
use crate::vm::boot::integrity::{self, write_atomic};
use crate::vm::boot::kconfig;
use crate::vm::boot::modules;

use crate::error::{Context, Result};
use crate::fail as bail;

use crate::progress::Progress;

/// The kernels `vm count` and `vm bench` compare by default: bookworm's 6.1, trixie's 6.12 and
/// sid's newest (≥ 6.15), all cloud.
pub const DEFAULT_PACKAGES: [&str; 3] = [
    "linux-image-cloud-amd64",
    "linux-image-cloud-amd64@trixie",
    "linux-image-cloud-amd64@sid",
];

/// A kernel ready to boot.
#[derive(Debug, Clone)]
pub(crate) struct Kernel {
    /// The file as given or unpacked (a bzImage, or an ELF vmlinux when `--kernel` named one).
    pub image: PathBuf,
    /// The extracted ELF, for PVH boot; `None` when extraction failed (boot the image).
    pub vmlinux: Option<PathBuf>,
    /// Where it came from: the path given, or the package fetched.
    pub origin: String,
    /// Why no vmlinux could be extracted, if so.
    pub extract_note: Option<String>,
    /// The concrete Debian package, when fetched.
    pub package: Option<String>,
    /// `uname -r`, when the package's file names say it.
    pub release: Option<String>,
    /// `CONFIG_HZ` from the package's configuration.
    pub hz: Option<u32>,
    /// The modules extracted from the package ([`crate::vm::boot::modules::CACHE_DIR`] of its cache
    /// entry), when fetched.
    pub modules: Option<PathBuf>,
}

pub(crate) use crate::vm::boot::cache::cache_dir;

/// The largest kernel image read (Debian's are 10-30 MB, an ELF vmlinux up to ~100 MB).
const MAX_KERNEL_BYTES: u64 = 512 << 20;

/// Where a room's kernel comes from, as the command line named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelSource {
    /// `NAME` or `NAME@SUITE` (a private apt configuration for SUITE).
    Package(String),
    /// A bzImage or vmlinux given by path.
    Path(PathBuf),
}

impl KernelSource {
    /// The kernel ready to boot: the path as given, or the package cached or fetched.
    pub(crate) fn resolve(&self, progress: &dyn Progress) -> Result<Kernel> {
        match self {
            KernelSource::Package(p) => resolve(None, p, progress),
            KernelSource::Path(p) => resolve(Some(p), "", progress),
        }
    }
}

/// The kernel to boot: `path` if given, else the cached or freshly fetched Debian kernel.
pub(crate) fn resolve(
    path: Option<&Path>,
    package: &str,
    progress: &dyn Progress,
) -> Result<Kernel> {
    let cache = cache_dir()?;
    let (image, origin, fetched) = match path {
        Some(p) => (p.to_path_buf(), p.display().to_string(), None),
        None => {
            let f = fetch(&cache, package, progress)?;
            let origin = format!(
                "{} (apt-get download, cached in {})",
                f.package,
                cache.display()
            );
            (f.image.clone(), origin, Some(f))
        }
    };
    let package = fetched.as_ref().map(|f| f.package.clone());
    let modules = fetched.as_ref().and_then(|f| f.modules.clone());
    let release = fetched.as_ref().and_then(|f| f.release.clone());
    let config = match (&fetched, path) {
        (Some(f), _) => f.config.clone(),
        (None, Some(p)) => kconfig::sibling_config(p),
        (None, None) => None,
    };
    let hz = config
        .as_ref()
        .and_then(|c| fs::read_to_string(c).ok())
        .and_then(|c| kconfig::config_hz(&c));
    let bytes = crate::input::read_regular(&image, "kernel", MAX_KERNEL_BYTES, None)?;
    if bytes.is_empty() {
        bail!("kernel '{}' is empty", image.display());
    }
    if bytes.starts_with(b"\x7fELF") {
        Elf::parse(&bytes)
            .with_context(|| format!("kernel '{}' is not a whole ELF file", image.display()))?;
        return Ok(Kernel {
            vmlinux: Some(image.clone()),
            image,
            origin,
            extract_note: None,
            package,
            release,
            hz,
            modules,
        });
    }
    let name = image.file_name().unwrap_or_default().to_string_lossy();
    // Keyed by content, so an updated kernel under the same name is extracted afresh.
    let fnv = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let out = cache.join("vmlinux").join(format!("{name}-{fnv:016x}.elf"));
    let whole = |p: &Path| {
        integrity::verify_file(p).and_then(|()| {
            let elf = fs::read(p).map_err(|e| e.to_string())?;
            Elf::parse(&elf).map(|_| ()).map_err(|e| e.to_string())
        })
    };
    let reuse = match whole(&out) {
        Ok(()) => true,
        Err(why) if out.exists() => {
            progress.note(&format!(
                "cached vmlinux failed its check ({why}); extracting it again"
            ));
            let _ = fs::remove_file(&out);
            false
        }
        Err(_) => false,
    };
    let (vmlinux, extract_note) = if reuse {
        (Some(out), None)
    } else {
        match extract_vmlinux(&bytes) {
            Ok(elf) => {
                crate::vm::boot::cache::writable(&cache)?;
                integrity::write_checked(&out, &elf)?;
                (Some(out), None)
            }
            Err(e) => (None, Some(format!("{e:#}"))),
        }
    };
    Ok(Kernel {
        image,
        vmlinux,
        origin,
        extract_note,
        package,
        release,
        hz,
        modules,
    })
}

/// The concrete package a meta package depends on (`linux-image-cloud-amd64` →
/// `linux-image-6.1.0-57-cloud-amd64`).
fn concrete_package(apt: &Apt, meta: &str) -> Result<String> {
    match apt.depends(meta)? {
        Some(deps) => Ok(deps
            .into_iter()
            .find(|d| d.starts_with("linux-image-") && d.chars().any(|c| c.is_ascii_digit()))
            // Not a meta package: already concrete.
            .unwrap_or_else(|| meta.to_string())),
        None => bail!(
            "apt-cache knows no package '{meta}': run 'apt-get update', or pass --kernel PATH"
        ),
    }
}

/// A kernel package unpacked into the cache.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    pub image: PathBuf,
    /// The concrete package (`linux-image-6.1.0-57-cloud-amd64`).
    pub package: String,
    /// `uname -r` of the kernel, from the file names in the package.
    pub release: Option<String>,
    /// The kernel's build configuration (`boot/config-REL`, or `config` in sid's
    /// `linux-base-REL`).
    pub config: Option<PathBuf>,
    /// The xfs and btrfs modules with their dependencies ([`modules::extract`]); `None` for an
    /// entry cached before modules were extracted (used offline only).
    pub modules: Option<PathBuf>,
}

fn cached(dir: &Path, package: &str) -> Fetched {
    let config = dir.join("config");
    let modules = dir.join(modules::CACHE_DIR);
    Fetched {
        image: dir.join("vmlinuz"),
        package: package.to_string(),
        release: fs::read_to_string(dir.join("release"))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty()),
        config: config.exists().then_some(config),
        modules: modules.join("order").exists().then_some(modules),
    }
}

/// The vmlinuz, release and config in an unpacked package tree: `boot/vmlinuz-REL` (bookworm,
/// trixie) or `usr/lib/modules/REL/vmlinuz` (sid's `linux-binary-REL`).
fn find_kernel(x: &Path) -> (Option<PathBuf>, Option<String>, Option<PathBuf>) {
    let names = |d: &Path| -> Vec<String> {
        fs::read_dir(d)
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (mut image, mut release, mut config) = (None, None, None);
    for n in names(&x.join("boot")) {
        if let Some(rel) = n.strip_prefix("vmlinuz-") {
            image = Some(x.join("boot").join(&n));
            release = Some(rel.to_string());
        }
        if n.starts_with("config-") {
            config = Some(x.join("boot").join(&n));
        }
    }
    for rel in names(&x.join("usr/lib/modules")) {
        let d = x.join("usr/lib/modules").join(&rel);
        if d.join("vmlinuz").exists() {
            image = Some(d.join("vmlinuz"));
            release = Some(rel.clone());
        }
        if d.join("config").exists() {
            config = Some(d.join("config"));
        }
    }
    (image, release, config)
}

fn unpack(work: &Path) -> Result<()> {
    for e in fs::read_dir(work)?.flatten() {
        let deb = e.path();
        if deb.extension().is_some_and(|x| x == "deb") {
            let st = child::status(
                Command::new("dpkg-deb")
                    .arg("-x")
                    .arg(&deb)
                    .arg(work.join("x")),
                "dpkg-deb -x",
            )?;
            if !st.success() {
                bail!("dpkg-deb -x '{}' failed ({st})", deb.display());
            }
            fs::remove_file(&deb)?;
        }
    }
    Ok(())
}

/// Fetches and unpacks `spec` (`NAME` or `NAME@SUITE`) into the cache unless it is there.
pub(crate) fn fetch(cache: &Path, spec: &str, progress: &dyn Progress) -> Result<Fetched> {
    let (name, suite) = apt::split_spec(spec)?;
    let apt = Apt::new(cache, suite)?;
    let pkg = match apt
        .update_if_stale(progress)
        .and_then(|()| concrete_package(&apt, name))
    {
        Ok(p) => p,
        Err(e) if e.is_interrupted() => return Err(e),
        // Offline or no apt lists: a kernel fetched before will do.
        Err(e) => match newest_cached(cache) {
            Some((img, pkg)) if suite.is_none() => {
                progress.note(&format!("{e:#}; using the cached {pkg}"));
                return Ok(cached(img.parent().unwrap_or(cache), &pkg));
            }
            _ => return Err(e),
        },
    };
    let dir = cache.join("kernels").join(&pkg);
    // The manifest marks an entry written whole, and every file in it must match: an entry
    // that fails (truncated, corrupted, or written before checksums) is removed and fetched
    // again.
    match integrity::verify_manifest(&dir) {
        Ok(()) if dir.join(modules::CACHE_DIR).join("order").exists() => {
            return Ok(cached(&dir, &pkg))
        }
        Ok(()) => {}
        Err(why) if dir.exists() => {
            progress.note(&format!(
                "cached {pkg} failed its check ({why}); fetching it again"
            ));
            fs::remove_dir_all(&dir)
                .with_context(|| format!("removing the damaged '{}'", dir.display()))?;
        }
        Err(_) => {}
    }
    crate::vm::boot::cache::writable(cache)?;
    let work = cache.join(format!("fetch-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).with_context(|| format!("creating '{}'", work.display()))?;
    let result = (|| -> Result<()> {
        progress.note(&format!(
            "fetching {pkg} with apt-get download (once; cached)"
        ));
        apt.download(std::slice::from_ref(&pkg), &work)?;
        unpack(&work)?;
        let (image, _, config) = find_kernel(&work.join("x"));
        if image.is_none() || config.is_none() || !modules::has_modules(&work.join("x")) {
            // sid: the image package only depends on linux-binary-REL (vmlinuz),
            // linux-base-REL (config, System.map) and linux-modules-REL (the modules).
            let versioned = |d: &str, prefix: &str| {
                d.starts_with(prefix) && d.chars().any(|c| c.is_ascii_digit())
            };
            let parts: Vec<String> = apt
                .depends(&pkg)?
                .unwrap_or_default()
                .into_iter()
                .filter(|d| {
                    d.starts_with("linux-binary-")
                        || versioned(d, "linux-base-")
                        || versioned(d, "linux-modules-")
                })
                .collect();
            if !parts.is_empty() {
                progress.note(&format!(
                    "fetching {} (the split package)",
                    parts.join(", ")
                ));
                apt.download(&parts, &work)?;
                unpack(&work)?;
            }
        }
        let (image, release, config) = find_kernel(&work.join("x"));
        let image =
            image.context("the package holds no boot/vmlinuz-* nor usr/lib/modules/*/vmlinuz")?;
        fs::create_dir_all(&dir)?;
        if let Some(c) = config {
            write_atomic(&dir.join("config"), &fs::read(c)?)?;
        }
        write_atomic(&dir.join("vmlinuz"), &fs::read(image)?)?;
        progress.note(&format!(
            "{pkg}: extracting the xfs and btrfs modules and their dependencies"
        ));
        modules::extract(&work.join("x"), &dir.join(modules::CACHE_DIR))?;
        write_atomic(&dir.join("release"), release.unwrap_or_default().as_bytes())?;
        // Last: its presence marks the entry complete.
        integrity::write_manifest(&dir)
    })();
    let _ = fs::remove_dir_all(&work);
    result?;
    Ok(cached(&dir, &pkg))
}

/// The cached kernel with the greatest package name, if any.
fn newest_cached(cache: &Path) -> Option<(PathBuf, String)> {
    let mut found: Vec<(PathBuf, String)> = fs::read_dir(cache.join("kernels"))
        .ok()?
        .flatten()
        .filter(|e| integrity::verify_manifest(&e.path()).is_ok())
        .map(|e| {
            (
                e.path().join("vmlinuz"),
                e.file_name().to_string_lossy().into_owned(),
            )
        })
        .collect();
    found.sort_by(|a, b| a.1.cmp(&b.1));
    found.pop()
}
