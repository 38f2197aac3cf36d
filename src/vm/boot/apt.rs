//! apt for the guest kernels: the machine's own configuration for a plain package name, or,
//! for `NAME@SUITE` (`linux-image-cloud-amd64@sid`), a private one under tscope's cache
//! directory — `apt/SUITE/` holds its sources list, package lists, archives and an empty dpkg
//! status, and every `apt-get`/`apt-cache` call names them with `-o Dir::…`. The system's apt
//! configuration is never read for such a suite, nor written for any.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use crate::error::{Context, Result};
use crate::fail as bail;
use crate::progress::Progress;

use crate::vm::boot::child;

/// Package lists older than this are fetched again before a private suite is used.
const LISTS_MAX_AGE: Duration = Duration::from_secs(24 * 3600);

/// How to call apt for one package specification.
#[derive(Debug, Clone)]
pub(crate) struct Apt {
    /// The `-o` options of the private configuration (empty: the system's).
    opts: Vec<String>,
    lists: Option<PathBuf>,
    pub suite: Option<String>,
}

/// Splits `NAME@SUITE`; checks both are plain Debian names.
pub(crate) fn split_spec(spec: &str) -> Result<(&str, Option<&str>)> {
    let (name, suite) = match spec.split_once('@') {
        Some((n, s)) => (n, Some(s)),
        None => (spec, None),
    };
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '+'))
    };
    if !plain(name) || suite.is_some_and(|s| !plain(s)) {
        bail!("'{spec}' is not a Debian package name, optionally with @SUITE (e.g. linux-image-cloud-amd64@sid)");
    }
    Ok((name, suite))
}

impl Apt {
    /// The apt for `suite` (the system's when `None`), its private directories made.
    pub(crate) fn new(cache: &Path, suite: Option<&str>) -> Result<Apt> {
        let Some(suite) = suite else {
            return Ok(Apt {
                opts: Vec::new(),
                lists: None,
                suite: None,
            });
        };
        let root = cache.join("apt").join(suite);
        for d in ["etc/sources.list.d", "etc/preferences.d", "etc/apt.conf.d"] {
            std::fs::create_dir_all(root.join(d))?;
        }
        for d in ["lists/partial", "archives/partial", "cache"] {
            std::fs::create_dir_all(root.join(d))?;
        }
        let mirror = if suite.ends_with("-security") {
            "http://deb.debian.org/debian-security"
        } else {
            "http://deb.debian.org/debian"
        };
        let list = format!(
            "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {mirror} {suite} main\n"
        );
        let sources = root.join("etc/sources.list");
        std::fs::write(&sources, list)
            .with_context(|| format!("writing '{}'", sources.display()))?;
        let status = root.join("status");
        if !status.exists() {
            std::fs::write(&status, "")?;
        }
        let p = |sub: &str| root.join(sub).display().to_string();
        let opts = [
            ("Dir::Etc::sourcelist", p("etc/sources.list")),
            ("Dir::Etc::sourceparts", p("etc/sources.list.d")),
            ("Dir::Etc::preferencesparts", p("etc/preferences.d")),
            ("Dir::Etc::parts", p("etc/apt.conf.d")),
            ("Dir::State::Lists", p("lists")),
            ("Dir::State::status", p("status")),
            ("Dir::Cache", p("cache")),
            ("Dir::Cache::archives", p("archives")),
            ("APT::Architecture", "amd64".into()),
            ("Acquire::Languages", "none".into()),
        ]
        .into_iter()
        .flat_map(|(k, v)| ["-o".to_string(), format!("{k}={v}")])
        .collect();
        Ok(Apt {
            opts,
            lists: Some(root.join("lists")),
            suite: Some(suite.to_string()),
        })
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.args(&self.opts);
        c
    }

    /// `apt-get update` for a private suite whose lists are missing or a day old.
    pub(crate) fn update_if_stale(&self, progress: &dyn Progress) -> Result<()> {
        let Some(lists) = &self.lists else {
            return Ok(());
        };
        let fresh = std::fs::read_dir(lists)?.flatten().any(|e| {
            e.file_name().to_string_lossy().contains("_Packages")
                && e.metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| SystemTime::now().duration_since(t).ok())
                    .is_some_and(|age| age < LISTS_MAX_AGE)
        });
        if fresh {
            return Ok(());
        }
        let suite = self.suite.as_deref().unwrap_or("?");
        progress.note(&format!(
            "apt-get update for {suite} (private configuration in {})",
            lists.parent().unwrap_or(lists).display()
        ));
        let st = child::status(
            self.command("apt-get")
                .args(["-q", "update"])
                .stdout(Stdio::null()),
            "apt-get update",
        )?;
        if !st.success() {
            bail!("apt-get update for suite '{suite}' failed ({st}); is the network reachable?");
        }
        Ok(())
    }

    /// The packages `package` depends on (`Depends:` and `PreDepends:`), alternatives included.
    pub(crate) fn depends(&self, package: &str) -> Result<Option<Vec<String>>> {
        let out = self
            .command("apt-cache")
            .args(["depends", "--no-recommends", "--no-suggests", package])
            .output()
            .context("running apt-cache (is this a Debian-based system?)")?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || text.trim().is_empty() {
            return Ok(None);
        }
        Ok(Some(
            text.lines()
                .filter_map(|l| {
                    let l = l.trim().trim_start_matches('|');
                    l.strip_prefix("Depends:")
                        .or_else(|| l.strip_prefix("PreDepends:"))
                })
                .map(|d| d.trim().to_string())
                .collect(),
        ))
    }

    /// `apt-get download` of `packages` into `dir`.
    pub(crate) fn download(&self, packages: &[String], dir: &Path) -> Result<()> {
        let st = child::status(
            self.command("apt-get")
                .args(["download", "-q"])
                .args(packages)
                .current_dir(dir)
                .stdout(Stdio::null()),
            "apt-get download",
        )?;
        if !st.success() {
            bail!(
                "apt-get download {} failed ({st}); pass --kernel PATH instead",
                packages.join(" ")
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_package_specifications() {
        assert_eq!(
            split_spec("linux-image-cloud-amd64").unwrap(),
            ("linux-image-cloud-amd64", None)
        );
        assert_eq!(
            split_spec("linux-image-cloud-amd64@sid").unwrap().1,
            Some("sid")
        );
        assert!(split_spec("linux@").is_err());
        assert!(split_spec("a b").is_err());
        assert!(split_spec("x@../etc").is_err());
    }

    #[test]
    fn a_private_suite_names_its_own_directories() {
        let dir = std::env::temp_dir().join(format!("tscope-apt-{}", std::process::id()));
        let apt = Apt::new(&dir, Some("sid")).unwrap();
        let joined = apt.opts.join(" ");
        assert!(joined.contains(&format!(
            "Dir::State::Lists={}",
            dir.join("apt/sid/lists").display()
        )));
        // Every directory option points into the cache, none at the system's /etc/apt or /var.
        for o in apt.opts.iter().filter(|o| o.starts_with("Dir::")) {
            let value = o.split_once('=').unwrap().1;
            assert!(value.starts_with(&dir.display().to_string()), "{o}");
        }
        let list = std::fs::read_to_string(dir.join("apt/sid/etc/sources.list")).unwrap();
        assert!(list.contains(" sid main"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
