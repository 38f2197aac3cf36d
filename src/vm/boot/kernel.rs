//! The guest kernel: `--kernel PATH`, or Debian's `linux-image-*` package fetched with
//! `apt-get download`, unpacked (not installed) with `dpkg-deb -x` and cached under
//! `$XDG_CACHE_HOME/tscope` (else `~/.cache/tscope`).
//!
//! Under TCG a bzImage spends seconds decompressing itself, so the ELF `vmlinux` is extracted
//! once (the bzImage header gives the compressed payload's offset and length; its magic says
//! gzip, xz, zstd or lz4; the system's decompressor unpacks it) and booted PVH-style with
//! `qemu -kernel vmlinux`. The bzImage stays beside it as the fallback.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::vm::boot::apt::{self, Apt};
use crate::vm::boot::child;
use crate::vm::boot::kconfig;
use crate::vm::boot::modules;

use crate::error::{Context, Result};
use crate::fail as bail;

use crate::progress::Progress;

/// The package whose dependency names the kernel `vm guest` fetches: Debian's cloud kernel
/// (26 MB; has PVH, kvm-clock, HPET and the ACPI PM timer, and boots fast).
pub const DEFAULT_PACKAGE: &str = "linux-image-cloud-amd64";

/// A kernel ready to boot.
#[derive(Debug, Clone)]
pub struct Kernel {
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

pub use crate::vm::boot::cache::cache_dir;

/// The kernel to boot: `path` if given, else the cached or freshly fetched Debian kernel.
pub fn resolve(path: Option<&Path>, package: &str, progress: &dyn Progress) -> Result<Kernel> {
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
    let bytes =
        fs::read(&image).with_context(|| format!("reading kernel '{}'", image.display()))?;
    if bytes.starts_with(b"\x7fELF") {
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
    let (vmlinux, extract_note) = if out.exists() {
        (Some(out), None)
    } else {
        match extract_vmlinux(&bytes) {
            Ok(elf) => {
                write_atomic(&out, &elf)?;
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

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("cache path has no parent")?;
    fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    fs::write(&tmp, bytes).with_context(|| format!("writing '{}'", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("renaming to '{}'", path.display()))?;
    Ok(())
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
pub struct Fetched {
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
pub fn fetch(cache: &Path, spec: &str, progress: &dyn Progress) -> Result<Fetched> {
    let (name, suite) = apt::split_spec(spec)?;
    let apt = Apt::new(cache, suite)?;
    let pkg = match apt
        .update_if_stale(progress)
        .and_then(|()| concrete_package(&apt, name))
    {
        Ok(p) => p,
        Err(e) if child::is_interrupted(&e) => return Err(e),
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
    // `release` marks an entry written whole (older ones kept only the vmlinuz); an entry
    // without the extracted modules (written before tscope loaded any) is fetched again.
    if dir.join("vmlinuz").exists()
        && dir.join("release").exists()
        && dir.join(modules::CACHE_DIR).join("order").exists()
    {
        return Ok(cached(&dir, &pkg));
    }
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
        // Last: its presence marks the entry complete.
        write_atomic(&dir.join("release"), release.unwrap_or_default().as_bytes())
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
        .filter(|e| e.path().join("vmlinuz").exists())
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

/// A compressed payload format the kernel supports, by magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Xz,
    Zstd,
    Lz4,
    Bzip2,
    Lzma,
}

impl Compression {
    pub fn sniff(b: &[u8]) -> Option<Self> {
        Some(match b {
            [0x1f, 0x8b, ..] => Self::Gzip,
            [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => Self::Xz,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Self::Zstd,
            [0x02, 0x21, 0x4c, 0x18, ..] => Self::Lz4,
            [b'B', b'Z', b'h', ..] => Self::Bzip2,
            [0x5d, 0, 0, ..] => Self::Lzma,
            _ => return None,
        })
    }

    /// The decompressor reading stdin, writing stdout.
    fn tool(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Self::Gzip => ("gzip", &["-dc"]),
            Self::Xz => ("xz", &["-dc", "--single-stream"]),
            Self::Zstd => ("zstd", &["-dcq"]),
            Self::Lz4 => ("lz4", &["-dc"]),
            Self::Bzip2 => ("bzip2", &["-dc"]),
            Self::Lzma => ("xz", &["-dc", "--format=lzma"]),
        }
    }
}

/// The compressed payload of a bzImage: boot protocol ≥ 2.08 gives its offset (from the start
/// of the protected-mode code) and length.
pub fn payload(bz: &[u8]) -> Result<&[u8]> {
    let u16_at = |o: usize| bz.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| {
        bz.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if bz.get(0x202..0x206) != Some(b"HdrS") {
        bail!("not a bzImage (no 'HdrS' boot header at 0x202)");
    }
    let version = u16_at(0x206).unwrap_or(0);
    if version < 0x208 {
        bail!("boot protocol {version:#x} predates payload_offset (2.08)");
    }
    let setup_sects = match bz[0x1f1] {
        0 => 4,
        n => usize::from(n),
    };
    let pm_start = (setup_sects + 1) * 512;
    let (off, len) = (u32_at(0x248).unwrap_or(0), u32_at(0x24c).unwrap_or(0));
    bz.get(pm_start + off..pm_start + off + len)
        .context("payload_offset/payload_length point past the end of the file")
}

/// Decompresses a bzImage's payload into the ELF vmlinux, with the system's decompressor.
pub fn extract_vmlinux(bz: &[u8]) -> Result<Vec<u8>> {
    let mut data = payload(bz)?;
    let kind = Compression::sniff(data).context("unknown compression magic in the payload")?;
    // Every format but gzip carries the decompressed size as 4 trailing bytes (the kernel's
    // `size_append`), which the stand-alone tools would read as garbage.
    if kind != Compression::Gzip && data.len() > 4 {
        data = &data[..data.len() - 4];
    }
    let (tool, args) = kind.tool();
    let mut cmd = Command::new(tool);
    crate::sys::child::kill_with_parent(&mut cmd);
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {tool} to unpack the {kind:?} kernel (install it)"))?;
    let mut stdin = child.stdin.take().context("decompressor stdin")?;
    let input = data.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .context("decompressor stdout")?
        .read_to_end(&mut out)?;
    let _ = writer.join();
    let _ = child.wait();
    // Tools may complain about trailing bytes yet have written the whole stream: judge the
    // result, not the exit status.
    if !out.starts_with(b"\x7fELF") {
        bail!(
            "{tool} did not produce an ELF vmlinux ({} bytes)",
            out.len()
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_compression_magics() {
        assert_eq!(
            Compression::sniff(&[0x1f, 0x8b, 8]),
            Some(Compression::Gzip)
        );
        assert_eq!(Compression::sniff(b"\xfd7zXZ\0rest"), Some(Compression::Xz));
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd]),
            Some(Compression::Zstd)
        );
        assert_eq!(
            Compression::sniff(&[0x02, 0x21, 0x4c, 0x18]),
            Some(Compression::Lz4)
        );
        assert_eq!(Compression::sniff(b"\x7fELF"), None);
    }

    /// A synthetic bzImage: header fields at their offsets, then a gzip payload of an "ELF".
    #[test]
    fn finds_and_unpacks_the_payload() {
        if crate::skip::without("gzip") {
            return;
        }
        let elf = b"\x7fELF\x02\x01\x01 pretend vmlinux".to_vec();
        let mut gz = Command::new("gzip")
            .arg("-c")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("gzip starts");
        gz.stdin.take().unwrap().write_all(&elf).unwrap();
        let compressed = gz.wait_with_output().unwrap().stdout;
        let mut bz = vec![0u8; 5 * 512];
        bz[0x1f1] = 4;
        bz[0x202..0x206].copy_from_slice(b"HdrS");
        bz[0x206..0x208].copy_from_slice(&0x20fu16.to_le_bytes());
        bz[0x248..0x24c].copy_from_slice(&16u32.to_le_bytes());
        bz[0x24c..0x250].copy_from_slice(&(compressed.len() as u32).to_le_bytes());
        bz.extend_from_slice(&[0xaa; 16]);
        bz.extend_from_slice(&compressed);
        bz.extend_from_slice(b"trailing setup data");
        assert_eq!(payload(&bz).unwrap(), &compressed[..]);
        assert_eq!(extract_vmlinux(&bz).unwrap(), elf);
        assert!(payload(b"short").is_err());
    }
}
