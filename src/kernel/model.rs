//! Models are versioned: an OS family and the kernel version whose source the counts follow.
//! `linux@6.12`, `freebsd@12.4`, `netbsd@10.1`; a bare family name means its newest version
//! (Linux: the version of the profile's kernel release, resolved by [`ModelSpec::resolve`]).
//! Policy names keep the family name only (`linux:coarse`, `freebsd:2`, `netbsd-knob:1`).

use std::fmt;

use serde::Serialize;

use super::{ClockFn, LinuxMode, Policy, PolicyKind};

/// An OS family the simulator models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Linux: coarse `current_time()`; multigrain from 6.13; no anonymous-pipe stamps from 6.15.
    Linux,
    /// FreeBSD with `vfs.timestamp_precision` 0–3 (default 2).
    Freebsd,
    /// DragonFly with `vfs.timestamp_precision` modes (default 0; modes 4–5 unverified).
    Dragonfly,
    /// NetBSD: `vfs_timestamp()` is `nanotime()`, no knob.
    Netbsd,
    /// NetBSD with the proposed knob (FreeBSD's four settings; stock is 3).
    NetbsdKnob,
}

impl Family {
    pub const ALL: [Family; 5] = [
        Family::Linux,
        Family::Freebsd,
        Family::Dragonfly,
        Family::Netbsd,
        Family::NetbsdKnob,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::Linux => "linux",
            Family::Freebsd => "freebsd",
            Family::Dragonfly => "dragonfly",
            Family::Netbsd => "netbsd",
            Family::NetbsdKnob => "netbsd-knob",
        }
    }

    /// The newest version whose source the tables were checked against.
    pub fn newest(self) -> Version {
        match self {
            Family::Linux => LINUX_NEWEST,
            Family::Freebsd => Version::new(14, 3),
            Family::Dragonfly => Version::new(6, 4),
            Family::Netbsd | Family::NetbsdKnob => Version::new(10, 1),
        }
    }

    /// The versions worth naming: one per range where a count changes (oldest first).
    pub fn versions(self) -> Vec<Version> {
        match self {
            Family::Linux => vec![
                Version::new(6, 1),
                LINUX_UPDATE_TIME_REREAD,
                LINUX_MULTIGRAIN,
                LINUX_NO_ANON_PIPE_TIME,
            ],
            Family::Freebsd => vec![Version::new(12, 4), FREEBSD_PIPE_GETNANOTIME],
            f => vec![f.newest()],
        }
    }

    fn parse(name: &str) -> Option<Family> {
        Family::ALL.iter().copied().find(|f| f.name() == name)
    }
}

/// Linux 6.6: `update_time` lost its timespec argument (torvalds/linux 913e99287b98, "fs:
/// drop the timespec64 argument from update_time"), so a changed m/ctime is stored by
/// `inode_update_timestamps()` → `inode_set_ctime_current()`, a second clock read; before,
/// `file_update_time()` stored the `current_time()` it had read.
pub const LINUX_UPDATE_TIME_REREAD: Version = Version::new(6, 6);
/// Linux 6.13: multigrain timestamps on `FS_MGTIME` filesystems (tmpfs, ext4, xfs, btrfs).
pub const LINUX_MULTIGRAIN: Version = Version::new(6, 13);
/// Linux 6.15: anonymous pipes take no timestamps (`anon_pipe_read`/`anon_pipe_write`).
pub const LINUX_NO_ANON_PIPE_TIME: Version = Version::new(6, 15);
/// The newest Linux the tables describe (the kernel tscope was developed on).
pub const LINUX_NEWEST: Version = Version::new(6, 18);
/// FreeBSD pipes stamp with `pipe_timestamp()` → `getnanotime()` from this release on.
/// **Not dated by a source read here**: freebsd-src at 004248ee has it; the release is assumed.
pub const FREEBSD_PIPE_GETNANOTIME: Version = Version::new(13, 0);

/// A kernel version, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Version {
    pub major: u16,
    pub minor: u16,
}

impl Version {
    pub const fn new(major: u16, minor: u16) -> Version {
        Version { major, minor }
    }

    /// `6.18.0-13-amd64` → 6.18, `6.12` → 6.12, `14` → 14.0; `None` without a leading number.
    pub fn parse(release: &str) -> Option<Version> {
        let mut parts = release.trim().split(|c: char| !c.is_ascii_digit());
        let major = parts.next()?.parse().ok()?;
        let minor = match parts.next() {
            Some(p) if !p.is_empty() => p.parse().ok()?,
            _ => 0,
        };
        Some(Version { major, minor })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A kernel model: a family at a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ModelId {
    pub family: Family,
    pub version: Version,
}

impl ModelId {
    pub const fn new(family: Family, version: Version) -> ModelId {
        ModelId { family, version }
    }

    /// The family at its newest version.
    pub fn newest(family: Family) -> ModelId {
        ModelId::new(family, family.newest())
    }

    /// Every family at its newest version (the default set of `simulate`).
    pub fn all_newest() -> Vec<ModelId> {
        Family::ALL.iter().map(|&f| ModelId::newest(f)).collect()
    }

    /// The family name: the prefix of policy names.
    pub fn name(self) -> &'static str {
        self.family.name()
    }

    /// `family@version`, e.g. `linux@6.15`: how every output names the model.
    pub fn label(self) -> String {
        format!("{}@{}", self.family.name(), self.version)
    }

    /// Parses `family` (newest) or `family@version`, and the alias `linux-multigrain`
    /// (`linux@6.13`). For the profile-dependent bare `linux`, see [`ModelSpec`].
    pub fn parse(text: &str) -> Option<ModelId> {
        ModelSpec::parse(text).map(|s| s.resolve(None).0)
    }

    /// Linux models charge `derived.precise_read_ns`; BSD models the counter instruction.
    pub fn is_linux(self) -> bool {
        self.family == Family::Linux
    }

    /// Linux: multigrain timestamps on `FS_MGTIME` filesystems.
    pub fn multigrain(self) -> bool {
        self.is_linux() && self.version >= LINUX_MULTIGRAIN
    }

    /// The kernel's default tick period (`hz`) for BSD models, in ns; `None` for Linux (taken
    /// from the profile's measured coarse-clock update period). `in_vm`: FreeBSD boots with
    /// `HZ_VM` (100) instead of `HZ` (1000) when it detects a hypervisor.
    pub fn default_tick_ns(self, in_vm: bool) -> Option<(f64, &'static str)> {
        match self.family {
            Family::Linux => None,
            // freebsd/freebsd-src sys/kern/subr_param.c init_param1(): hz = vm_guest >
            // VM_GUEST_NO ? HZ_VM : HZ; HZ 1000, HZ_VM 100 (read at 02c6fc21).
            Family::Freebsd if in_vm => Some((1e7, "HZ_VM=100 (a VM guest)")),
            Family::Freebsd => Some((1e6, "HZ=1000 (not a VM guest)")),
            Family::Dragonfly => Some((1e7, "HZ=100")),
            Family::Netbsd | Family::NetbsdKnob => Some((1e7, "HZ=100")),
        }
    }

    /// Caveats every output of this model carries.
    pub fn notes(self) -> Vec<String> {
        let mut v = Vec::new();
        match self.family {
            Family::Dragonfly => v.push(
                "dragonfly: the DragonFly vfs_subr.c read has four vfs_timestamp modes \
                 (TSP_SEC default); modes 4 and 5 are unverified and modelled as nanotime"
                    .into(),
            ),
            Family::Freebsd => v.push(format!(
                "freebsd@{}: pipes stamp with {} (sys_pipe.c); the release of the change to \
                 pipe_timestamp()/getnanotime is not dated by a source read here (assumed {})",
                self.version,
                if self.version >= FREEBSD_PIPE_GETNANOTIME {
                    "getnanotime"
                } else {
                    "vfs_timestamp"
                },
                FREEBSD_PIPE_GETNANOTIME
            )),
            _ => {}
        }
        v
    }

    /// The policies of this model, stock first.
    pub fn policies(self) -> Vec<Policy> {
        use ClockFn::*;
        let bsd = |model: ModelId, values: &[(u8, ClockFn)], stock: u8| -> Vec<Policy> {
            let mut v: Vec<Policy> = values
                .iter()
                .map(|&(n, clock)| Policy {
                    model,
                    value: n.to_string(),
                    kind: PolicyKind::Bsd { vfs_clock: clock },
                    stock: n == stock,
                })
                .collect();
            v.sort_by_key(|p| !p.stock);
            v
        };
        // FreeBSD/DragonFly sys/kern/vfs_subr.c vfs_timestamp(): TSP_SEC, TSP_HZ, TSP_USEC,
        // TSP_NSEC; values above 3 take the `default:` branch (nanotime).
        let knob = [
            (0, TimeSecond),
            (1, Getnanotime),
            (2, Microtime),
            (3, Nanotime),
        ];
        let linux = |value: &str, mode, stock| Policy {
            model: self,
            value: value.into(),
            kind: PolicyKind::Linux {
                mode,
                mg_clock_fns: self.version >= LINUX_MULTIGRAIN,
            },
            stock,
        };
        match self.family {
            Family::Linux if self.multigrain() => vec![
                linux("multigrain", LinuxMode::Multigrain, true),
                linux("coarse", LinuxMode::Coarse, false),
                linux("precise", LinuxMode::Precise, false),
            ],
            Family::Linux => vec![
                linux("coarse", LinuxMode::Coarse, true),
                linux("precise", LinuxMode::Precise, false),
            ],
            Family::Freebsd => bsd(self, &knob, 2),
            Family::Dragonfly => {
                let mut k = knob.to_vec();
                k.extend([(4, Nanotime), (5, Nanotime)]);
                bsd(self, &k, 0)
            }
            Family::Netbsd => vec![Policy {
                model: self,
                value: "nanotime".into(),
                kind: PolicyKind::Bsd {
                    vfs_clock: Nanotime,
                },
                stock: true,
            }],
            Family::NetbsdKnob => bsd(self, &knob, 3),
        }
    }
}

impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// A `--model` argument before the profile is known: a family and maybe a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModelSpec {
    pub family: Family,
    pub version: Option<Version>,
    /// Given as the old name `linux-multigrain`.
    pub alias: bool,
}

impl ModelSpec {
    /// `family`, `family@version` or `linux-multigrain`.
    pub fn parse(text: &str) -> Option<ModelSpec> {
        if text == "linux-multigrain" {
            return Some(ModelSpec {
                family: Family::Linux,
                version: Some(LINUX_MULTIGRAIN),
                alias: true,
            });
        }
        let (name, version) = match text.split_once('@') {
            Some((n, v)) => (
                n,
                Some(Version::parse(v).filter(|_| v.starts_with(char::is_numeric))?),
            ),
            None => (text, None),
        };
        Some(ModelSpec {
            family: Family::parse(name)?,
            version,
            alias: false,
        })
    }

    /// The model, and a note saying how its version was chosen when it was not named. Linux
    /// without a version takes the version of `kernel_release` (the profile's machine).
    pub fn resolve(self, kernel_release: Option<&str>) -> (ModelId, Option<String>) {
        let f = self.family;
        match (self.version, f) {
            (Some(v), _) if self.alias => (
                ModelId::new(f, v),
                Some(format!(
                    "linux-multigrain is an alias of linux@{v} (the first multigrain release); \
                     name a version with --model linux@X.Y"
                )),
            ),
            (Some(v), _) => (ModelId::new(f, v), None),
            (None, Family::Linux) => match kernel_release.and_then(Version::parse) {
                Some(v) => (
                    ModelId::new(f, v),
                    Some(format!("linux@{v}: the profile's kernel release")),
                ),
                None => (
                    ModelId::newest(f),
                    Some(format!(
                        "linux@{}: the newest modelled (no kernel release in the profile)",
                        f.newest()
                    )),
                ),
            },
            (None, _) => (ModelId::newest(f), None),
        }
    }
}

/// What `--model` accepts, for error messages.
pub fn model_names_help() -> String {
    let mut names: Vec<String> = Family::ALL.iter().map(|f| f.name().to_string()).collect();
    names.push("linux-multigrain".into());
    format!("{} (or FAMILY@VERSION, e.g. linux@6.12)", names.join(", "))
}
