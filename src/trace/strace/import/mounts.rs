//! Which filesystem a path lives on: the longest mount-point prefix in a `/proc/self/mountinfo`
//! table (of the machine importing the trace, or a `--fs` override).

use crate::trace::FsKind;

/// What the importer does with an inode, by filesystem type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InodeClass {
    /// A file or directory whose timestamps the models follow.
    File(FsKind),
    /// A pipe (`pipe:[N]`).
    Pipe,
    /// Sockets, anon inodes, proc/sys/dev pseudo files, ttys: no timestamp work modelled.
    Special,
}

/// Filesystem types without on-inode timestamps worth modelling (what they do on read/write
/// is not `file_update_time` on a regular file).
const PSEUDO: &[&str] = &[
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "bpf",
    "mqueue",
    "pstore",
    "hugetlbfs",
    "configfs",
    "fusectl",
    "binfmt_misc",
    "autofs",
    "efivarfs",
    "nsfs",
];

/// Mount points and their kinds, longest first.
#[derive(Debug, Clone, Default)]
pub struct Mounts {
    points: Vec<(String, InodeClass)>,
    /// `--fs`: every regular path is on this filesystem.
    force: Option<FsKind>,
}

fn kind_of(fs_type: &str) -> InodeClass {
    if PSEUDO.contains(&fs_type) {
        return InodeClass::Special;
    }
    match fs_type {
        "ext2" | "ext3" => InodeClass::File(FsKind::Other),
        "pipefs" => InodeClass::Pipe,
        t => InodeClass::File(FsKind::parse(t).unwrap_or(FsKind::Other)),
    }
}

/// `\\040` and friends in mountinfo paths.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Mounts {
    /// Parses `/proc/self/mountinfo` text (malformed lines are skipped); the later of two
    /// mounts on one point wins, as it hides the earlier.
    pub fn parse(text: &str, force: Option<FsKind>) -> Mounts {
        let mut points: Vec<(String, InodeClass)> = Vec::new();
        for line in text.lines() {
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let (Some(point), Some(fs_type)) = (
                left.split_whitespace().nth(4),
                right.split_whitespace().next(),
            ) else {
                continue;
            };
            let point = unescape(point);
            let kind = kind_of(fs_type);
            match points.iter_mut().find(|(p, _)| *p == point) {
                Some(e) => e.1 = kind,
                None => points.push((point, kind)),
            }
        }
        points.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        Mounts { points, force }
    }

    /// This machine's mounts (`/proc/self/mountinfo`); none readable means every path is
    /// `other` unless `force` says otherwise.
    pub fn from_system(force: Option<FsKind>) -> Mounts {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        Mounts::parse(&text, force)
    }

    /// The kind of an inode named `name`: a path, `pipe:[N]`, `socket:[N]`, `anon_inode:…`.
    pub fn kind(&self, name: &str) -> InodeClass {
        if name.starts_with("pipe:") {
            return InodeClass::Pipe;
        }
        if !name.starts_with('/') {
            // socket:[N], anon_inode:[eventfd], memfd:…; a relative path we could not resolve
            // is taken to be on the root filesystem.
            if name.contains(":[") || name.starts_with("anon_inode:") || name.starts_with("memfd:")
            {
                return InodeClass::Special;
            }
            return self.kind("/");
        }
        let mounted = self
            .points
            .iter()
            .find(|(p, _)| {
                name.starts_with(p.as_str())
                    && (p == "/" || name.len() == p.len() || name.as_bytes()[p.len()] == b'/')
            })
            .map(|(_, k)| *k);
        match (mounted, self.force) {
            (Some(InodeClass::Special), _) => InodeClass::Special,
            (_, Some(fs)) => InodeClass::File(fs),
            (Some(k), None) => k,
            (None, None) => InodeClass::File(FsKind::Other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "\
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw
31 27 0:28 / /my\\040dir rw - xfs /dev/vdb rw
bogus line
";

    #[test]
    fn longest_prefix_wins() {
        let m = Mounts::parse(INFO, None);
        assert_eq!(m.kind("/dev/shm/x"), InodeClass::File(FsKind::Tmpfs));
        assert_eq!(m.kind("/dev/shmx"), InodeClass::Special);
        assert_eq!(m.kind("/dev/null"), InodeClass::Special);
        assert_eq!(m.kind("/var/tmp/a"), InodeClass::File(FsKind::Ext4));
        assert_eq!(m.kind("/my dir/f"), InodeClass::File(FsKind::Xfs));
        assert_eq!(m.kind("pipe:[12]"), InodeClass::Pipe);
        assert_eq!(m.kind("socket:[12]"), InodeClass::Special);
        assert_eq!(m.kind("rel/path"), InodeClass::File(FsKind::Ext4));
        let f = Mounts::parse(INFO, Some(FsKind::Btrfs));
        assert_eq!(f.kind("/var/tmp/a"), InodeClass::File(FsKind::Btrfs));
        assert_eq!(f.kind("/dev/null"), InodeClass::Special);
        assert_eq!(
            Mounts::default().kind("/x"),
            InodeClass::File(FsKind::Other)
        );
    }
}
