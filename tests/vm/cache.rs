//! The kernel cache under hostile conditions, end to end: a cached vmlinux with random bytes
//! in it or cut short is caught by its checksum and extracted again, and a populated cache
//! made read-only serves a user without write access.

use crate::common::tscope;
use crate::skip;

/// One TCG guest on tsc, without the host column.
const TSC_GUEST: [&str; 7] = [
    "vm",
    "guest",
    "--accel",
    "tcg",
    "--clocksource",
    "tsc",
    "--no-host",
];

/// One `vm guest` with tsc, `--kernel` given, in `cache` (XDG_CACHE_HOME): its JSON and stderr.
fn guest_with_kernel(
    kernel: &std::path::Path,
    cache: &std::path::Path,
) -> (serde_json::Value, String) {
    let out = tscope()
        .env("XDG_CACHE_HOME", cache)
        .args(TSC_GUEST)
        .args(["--timeout", "120", "--json", "--kernel"])
        .arg(kernel)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("run tscope vm guest");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "vm guest failed: {stderr}");
    (serde_json::from_slice(&out.stdout).expect("JSON"), stderr)
}

#[test]
fn a_damaged_cached_vmlinux_is_extracted_again_and_a_read_only_cache_serves() {
    let _cpu = crate::common::cpu_lock();
    if skip::without("qemu") {
        return;
    }
    // The package's bzImage, fetched once into the tests' cache.
    let v: serde_json::Value = {
        let out = tscope()
            .args(TSC_GUEST)
            .args(["--json"])
            .timeout(std::time::Duration::from_secs(600))
            .output()
            .expect("run tscope vm guest");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let cache = tempfile::tempdir().unwrap();
    // A copy anyone may read (the tests' cache is private to root).
    let image = cache.path().join("bzImage");
    std::fs::copy(v["kernel"]["image"].as_str().unwrap(), &image).unwrap();
    let (v, _) = guest_with_kernel(&image, cache.path());
    assert_eq!(v["guests"][0]["status"], "ok");
    let elf = std::path::PathBuf::from(v["kernel"]["vmlinux"].as_str().expect("extracted"));
    assert!(elf.starts_with(cache.path()));
    assert!(elf
        .with_file_name(format!(
            "{}.sha256",
            elf.file_name().unwrap().to_string_lossy()
        ))
        .exists());
    // Random bytes written into it: caught by its checksum, extracted again, and the guest
    // boots (it used to hang until the timeout).
    let whole = std::fs::read(&elf).unwrap();
    let mut bad = whole.clone();
    for (i, b) in bad
        .iter_mut()
        .skip(whole.len() / 3)
        .step_by(4099)
        .take(64)
        .enumerate()
    {
        *b ^= 0x5a ^ i as u8;
    }
    std::fs::write(&elf, &bad).unwrap();
    let (v, stderr) = guest_with_kernel(&image, cache.path());
    assert!(
        stderr.contains("cached vmlinux failed its check"),
        "{stderr}"
    );
    assert_eq!(v["guests"][0]["status"], "ok");
    assert_eq!(v["guests"][0]["boot"], "pvh");
    assert_eq!(std::fs::read(&elf).unwrap(), whole);
    // Truncated: the same.
    std::fs::write(&elf, &whole[..whole.len() / 2]).unwrap();
    let (v, stderr) = guest_with_kernel(&image, cache.path());
    assert!(
        stderr.contains("cached vmlinux failed its check"),
        "{stderr}"
    );
    assert_eq!(v["guests"][0]["boot"], "pvh");
    // A populated cache made read-only (a shared, pre-seeded cache) serves: nothing needs
    // writing there, and the run's scratch goes to the temporary directory.
    let tscope_dir = cache.path().join("tscope");
    let mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
    };
    for d in [tscope_dir.join("vmlinux"), tscope_dir.clone()] {
        mode(&d, 0o555);
    }
    // As root every directory is writable: run as nobody, so read-only means read-only.
    mode(cache.path(), 0o755);
    let bin = crate::common::tscope().get_program().to_owned();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin)
        .args(TSC_GUEST)
        .args(["--timeout", "120", "--json", "--kernel"])
        .arg(&image)
        .env("XDG_CACHE_HOME", cache.path())
        .env_remove("TMPDIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "read-only cache refused: {stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["guests"][0]["status"], "ok");
    assert_eq!(v["kernel"]["vmlinux"].as_str(), Some(elf.to_str().unwrap()));
    for d in [tscope_dir.clone(), tscope_dir.join("vmlinux")] {
        mode(&d, 0o755);
    }
}
