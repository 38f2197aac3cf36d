//! Where tscope caches the guest kernel and each guest run's initramfs:
//! `$XDG_CACHE_HOME/tscope`, else `$HOME/.cache/tscope`, never the current directory.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Context, Result};
use crate::fail as bail;

/// `$XDG_CACHE_HOME/tscope`, else `$HOME/.cache/tscope`, created if missing. It need not be
/// writable: a shared, pre-seeded cache may be read-only, and only what is written there (a
/// fetch, an extraction: see [`writable`]) needs write access; a run's scratch goes to the
/// temporary directory then ([`crate::vm::boot::scratch::work_dir`]).
pub(crate) fn cache_dir() -> Result<PathBuf> {
    let dir = cache_dir_from(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))?;
    if !dir.is_dir() {
        writable(&dir)?;
    }
    Ok(dir)
}

/// The cache directory from `XDG_CACHE_HOME` and `HOME`. Only an absolute path counts (the
/// XDG rule): an empty or relative `HOME` would put the cache in whatever directory tscope
/// runs in, so it is an error that says what to set, as is neither being set.
pub(crate) fn cache_dir_from(xdg: Option<OsString>, home: Option<OsString>) -> Result<PathBuf> {
    let absolute = |v: &Option<OsString>| v.as_ref().map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(x) = absolute(&xdg) {
        return Ok(x.join("tscope"));
    }
    if let Some(h) = absolute(&home) {
        return Ok(h.join(".cache/tscope"));
    }
    let said = |name: &str, v: &Option<OsString>| match v {
        None => format!("{name} is not set"),
        Some(v) if v.is_empty() => format!("{name} is empty"),
        Some(v) => format!("{name} is '{}', not an absolute path", v.to_string_lossy()),
    };
    bail!(
        "no directory for tscope's cache: {} and {} (tscope never caches in the current \
         directory); set XDG_CACHE_HOME (or HOME) to an absolute, writable directory, e.g. \
         XDG_CACHE_HOME=/var/tmp/$USER-cache",
        said("XDG_CACHE_HOME", &xdg),
        said("HOME", &home)
    )
}

/// Creates `dir` if missing and checks that files can be created in it; the error names the
/// directory and what to set instead. Called before anything is written into the cache.
pub(crate) fn writable(dir: &Path) -> Result<()> {
    let hint = "set XDG_CACHE_HOME to a writable directory";
    fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create the cache directory '{}'; {hint}",
            dir.display()
        )
    })?;
    let probe = dir.join(format!(".tscope-write-{}", std::process::id()));
    fs::File::create(&probe).with_context(|| {
        format!(
            "the cache directory '{}' is not writable; {hint}",
            dir.display()
        )
    })?;
    let _ = fs::remove_file(&probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_absolute_path_becomes_the_cache() {
        let os = |s: &str| Some(OsString::from(s));
        assert_eq!(
            cache_dir_from(os("/x"), os("/home/u")).unwrap(),
            Path::new("/x/tscope")
        );
        assert_eq!(
            cache_dir_from(None, os("/home/u")).unwrap(),
            Path::new("/home/u/.cache/tscope")
        );
        // A relative XDG_CACHE_HOME is ignored (the XDG rule), HOME is used.
        assert_eq!(
            cache_dir_from(os("rel"), os("/home/u")).unwrap(),
            Path::new("/home/u/.cache/tscope")
        );
        // Empty or relative HOME, or nothing set: an error saying what to set.
        for (xdg, home, says) in [
            (None, os(""), "HOME is empty"),
            (os(""), os("."), "HOME is '.', not an absolute path"),
            (None, None, "HOME is not set"),
        ] {
            let e = cache_dir_from(xdg, home).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("set XDG_CACHE_HOME"), "{e}");
        }
    }

    #[test]
    fn an_unwritable_cache_names_the_directory() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("a-file");
        fs::write(&file, "x").unwrap();
        let e = writable(&file.join("tscope")).unwrap_err();
        assert!(format!("{e:#}").contains("a-file/tscope"), "{e:#}");
        assert!(format!("{e:#}").contains("XDG_CACHE_HOME"), "{e:#}");
        writable(&d.path().join("ok/tscope")).unwrap();
        let mut left = fs::read_dir(d.path().join("ok/tscope")).unwrap();
        assert!(left.next().is_none(), "the probe file is removed");
        // An existing directory nobody may create files in (even root, here).
        let e = format!("{:#}", writable(Path::new("/proc")).unwrap_err());
        assert!(e.contains("'/proc' is not writable"), "{e}");
    }
}
