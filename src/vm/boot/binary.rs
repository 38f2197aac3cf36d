//! The static tscope that runs as the guest's `/init`, and the initramfs that carries it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Context, Result};
use crate::fail as bail;
use crate::progress::Progress;
use crate::vm::boot::cpio::{self, Entry};

/// Whether an ELF file is statically linked (no `PT_INTERP` program header).
pub fn is_static_elf(bytes: &[u8]) -> bool {
    let u16_at = |o: usize| {
        bytes
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u64_at = |o: usize| {
        bytes
            .get(o..o + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    if !bytes.starts_with(b"\x7fELF\x02\x01") {
        return false;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return false;
    };
    (0..usize::from(phnum)).all(|i| {
        let at = phoff as usize + i * usize::from(phentsize);
        bytes.get(at..at + 4) != Some(&3u32.to_le_bytes()[..]) // PT_INTERP
    })
}

/// The static tscope for the guest: `--guest-bin`, else this binary if static, else built from
/// the source tree this binary was built from (`cargo build --release --target
/// x86_64-unknown-linux-gnu` with `+crt-static`, into `target/guest`).
pub fn guest_binary(given: Option<&Path>, progress: &dyn Progress) -> Result<PathBuf> {
    let check = |p: &Path| -> Result<PathBuf> {
        let bytes = std::fs::read(p).with_context(|| format!("reading '{}'", p.display()))?;
        if !is_static_elf(&bytes) {
            bail!(
                "'{}' is dynamically linked; the guest has no libraries: build it with \
                 RUSTFLAGS='-C target-feature=+crt-static'",
                p.display()
            );
        }
        Ok(p.to_path_buf())
    };
    if let Some(p) = given {
        return check(p);
    }
    if let Ok(me) = std::env::current_exe() {
        if std::fs::read(&me).is_ok_and(|b| is_static_elf(&b)) {
            return Ok(me);
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !src.join("Cargo.toml").exists() {
        bail!("this tscope is dynamically linked and its source tree is gone: pass --guest-bin PATH to a static build (see docs/vm.md)");
    }
    let target_dir = src.join("target/guest");
    // Said before it starts: it writes into the source tree and takes minutes the first time.
    progress.note(&format!(
        "no --guest-bin: building the static guest binary with cargo build --release \
         (+crt-static) in the source tree {}, into {} (minutes the first time); pass \
         --guest-bin PATH to use a static tscope instead",
        src.display(),
        target_dir.display()
    ));
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .current_dir(src)
        .args(["build", "--release", "--locked", "--bin", "tscope"])
        .args(["--target", "x86_64-unknown-linux-gnu", "--target-dir"])
        .arg(&target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_STRIP", "symbols");
    // Dies with tscope, and a stop signal kills it and its rustc children (its own group).
    let st = crate::vm::boot::child::status(&mut cargo, "cargo to build the static guest binary")?;
    if !st.success() {
        bail!("building the static guest binary failed ({st}); pass --guest-bin PATH");
    }
    check(&target_dir.join("x86_64-unknown-linux-gnu/release/tscope"))
}

/// The initramfs: `/init` (the static tscope), `/dev/console` (the kernel opens it for init
/// before devtmpfs exists), and the mount points.
pub fn initramfs(tscope: &[u8]) -> std::io::Result<Vec<u8>> {
    cpio::write(&[
        Entry::dir("dev"),
        Entry::char_dev("dev/console", 0o600, 5, 1),
        Entry::dir("proc"),
        Entry::dir("sys"),
        Entry::file("init", 0o755, tscope.to_vec()),
    ])
}
