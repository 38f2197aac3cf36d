//! What the importer remembers between lines: inodes by path (a path names a new inode after
//! an unlink or a rename away), and per-task fd tables (shared by threads, copied on fork,
//! `O_CLOEXEC` entries dropped on exec). Memory grows with the live fds and the distinct paths
//! and inodes seen, never with the number of lines.

use crate::trace::strace::fxhash::FxHashMap as HashMap;

use super::mounts::{InodeClass, Mounts};
use crate::trace::InodeId;

/// What an inode id stands for.
#[derive(Debug, Clone)]
pub struct InodeInfo {
    pub kind: InodeClass,
    /// Its current name (path, `pipe:[N]`, …).
    pub name: Box<str>,
}

/// A path's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathState {
    Live(InodeId),
    /// Known not to exist (a lookup failed with ENOENT, or it was unlinked or renamed away).
    Absent,
}

/// Inodes by name.
#[derive(Debug, Default)]
pub struct Inodes {
    by_name: HashMap<Box<str>, PathState>,
    info: Vec<InodeInfo>,
    pub mounts: Mounts,
}

impl Inodes {
    pub fn new(mounts: Mounts) -> Self {
        Inodes {
            mounts,
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.info.len()
    }

    pub fn is_empty(&self) -> bool {
        self.info.is_empty()
    }

    pub fn info(&self, id: InodeId) -> &InodeInfo {
        &self.info[id as usize]
    }

    fn alloc(&mut self, name: &str) -> InodeId {
        let id = self.info.len() as InodeId;
        self.info.push(InodeInfo {
            kind: self.mounts.kind(name),
            name: name.into(),
        });
        id
    }

    /// The inode `name` names now, created on first sight (it existed before the trace).
    pub fn get(&mut self, name: &str) -> InodeId {
        if let Some(PathState::Live(id)) = self.by_name.get(name) {
            return *id;
        }
        let id = self.alloc(name);
        self.by_name.insert(name.into(), PathState::Live(id));
        id
    }

    /// An inode no path names (a pipe without `-y`, an fd inherited without annotation).
    pub fn anonymous(&mut self, label: &str) -> InodeId {
        self.alloc(label)
    }

    /// Whether `name` is known not to exist.
    pub fn absent(&self, name: &str) -> bool {
        matches!(self.by_name.get(name), Some(PathState::Absent))
    }

    /// Whether `name` names a live inode.
    pub fn live(&self, name: &str) -> bool {
        matches!(self.by_name.get(name), Some(PathState::Live(_)))
    }

    /// A lookup of `name` failed with ENOENT.
    pub fn mark_absent(&mut self, name: &str) {
        match self.by_name.get_mut(name) {
            Some(s) => *s = PathState::Absent,
            None => {
                self.by_name.insert(name.into(), PathState::Absent);
            }
        }
    }

    /// `name` was created: a new inode from now on.
    pub fn create(&mut self, name: &str) -> InodeId {
        let id = self.alloc(name);
        self.by_name.insert(name.into(), PathState::Live(id));
        id
    }

    /// `name` was unlinked: the inode lives on only through open fds.
    pub fn unlink(&mut self, name: &str) -> InodeId {
        let id = self.get(name);
        self.mark_absent(name);
        id
    }

    /// `from` was renamed to `to` (whatever `to` named before is gone).
    pub fn rename(&mut self, from: &str, to: &str) -> InodeId {
        let id = self.get(from);
        self.mark_absent(from);
        self.by_name.insert(to.into(), PathState::Live(id));
        self.info[id as usize].name = to.into();
        id
    }

    /// A second name for an inode (`link`).
    pub fn link(&mut self, id: InodeId, name: &str) {
        self.by_name.insert(name.into(), PathState::Live(id));
    }
}

/// One open file descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fd {
    pub inode: InodeId,
    pub cloexec: bool,
}

/// One task's fds: a vector indexed by fd for the small ones a process hands out (lowest
/// free first, so they stay dense; at most 8 KiB a table, copied at each fork), a map for any
/// other.
#[derive(Debug, Default, Clone)]
struct FdMap {
    dense: Vec<Option<Fd>>,
    other: HashMap<i32, Fd>,
}

impl FdMap {
    /// Fds below this live in `dense`.
    const DENSE: i32 = 1024;

    #[inline]
    fn slot(fd: i32) -> Option<usize> {
        (0..Self::DENSE).contains(&fd).then_some(fd as usize)
    }

    #[inline]
    fn get(&self, fd: i32) -> Option<Fd> {
        match Self::slot(fd) {
            Some(i) => self.dense.get(i).copied().flatten(),
            None => self.other.get(&fd).copied(),
        }
    }

    #[inline]
    fn insert(&mut self, fd: i32, entry: Fd) {
        match Self::slot(fd) {
            Some(i) => {
                if i >= self.dense.len() {
                    self.dense.resize(i + 1, None);
                }
                self.dense[i] = Some(entry);
            }
            None => {
                self.other.insert(fd, entry);
            }
        }
    }

    #[inline]
    fn remove(&mut self, fd: i32) -> Option<Fd> {
        match Self::slot(fd) {
            Some(i) => self.dense.get_mut(i).and_then(Option::take),
            None => self.other.remove(&fd),
        }
    }

    /// Keeps the fds for which `keep(fd, entry)` holds.
    fn retain(&mut self, mut keep: impl FnMut(i32, &Fd) -> bool) {
        for (i, e) in self.dense.iter_mut().enumerate() {
            if e.is_some_and(|e| !keep(i as i32, &e)) {
                *e = None;
            }
        }
        self.other.retain(|&fd, e| keep(fd, e));
    }
}

#[derive(Debug, Default, Clone)]
struct Table {
    fds: FdMap,
    /// Tasks using this table (threads share one).
    users: u32,
}

/// Per-task fd tables.
#[derive(Debug, Default)]
pub struct FdTables {
    tables: Vec<Table>,
    free: Vec<usize>,
    of_pid: HashMap<u32, usize>,
    cwd: HashMap<u32, Box<str>>,
}

impl FdTables {
    fn new_table(&mut self, t: Table) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.tables[i] = t;
                i
            }
            None => {
                self.tables.push(t);
                self.tables.len() - 1
            }
        }
    }

    /// Whether `pid` has been seen.
    pub fn known(&self, pid: u32) -> bool {
        self.of_pid.contains_key(&pid)
    }

    /// The table of `pid`, created empty for a task seen for the first time.
    fn table(&mut self, pid: u32) -> usize {
        if let Some(&t) = self.of_pid.get(&pid) {
            return t;
        }
        let t = self.new_table(Table {
            fds: FdMap::default(),
            users: 1,
        });
        self.of_pid.insert(pid, t);
        t
    }

    pub fn get(&mut self, pid: u32, fd: i32) -> Option<Fd> {
        let t = self.table(pid);
        self.tables[t].fds.get(fd)
    }

    pub fn set(&mut self, pid: u32, fd: i32, entry: Fd) {
        let t = self.table(pid);
        self.tables[t].fds.insert(fd, entry);
    }

    pub fn close(&mut self, pid: u32, fd: i32) -> Option<Fd> {
        let t = self.table(pid);
        self.tables[t].fds.remove(fd)
    }

    /// `close_range(first, last)`.
    pub fn close_range(&mut self, pid: u32, first: i32, last: i32) {
        let t = self.table(pid);
        self.tables[t].fds.retain(|fd, _| fd < first || fd > last);
    }

    /// A successful exec: `O_CLOEXEC` fds are closed.
    pub fn exec(&mut self, pid: u32) {
        let t = self.table(pid);
        self.tables[t].fds.retain(|_, e| !e.cloexec);
    }

    /// `child` was created by `parent`: it shares the table (`CLONE_FILES`) or gets a copy.
    /// A child already seen (it printed before its parent's `clone` returned) keeps its own
    /// copy unless the table is shared.
    pub fn fork(&mut self, parent: u32, child: u32, share: bool) {
        let p = self.table(parent);
        if let Some(cwd) = self.cwd.get(&parent).cloned() {
            self.cwd.entry(child).or_insert(cwd);
        }
        if share {
            self.exit(child);
            self.tables[p].users += 1;
            self.of_pid.insert(child, p);
        } else if !self.of_pid.contains_key(&child) {
            let copy = Table {
                fds: self.tables[p].fds.clone(),
                users: 1,
            };
            let t = self.new_table(copy);
            self.of_pid.insert(child, t);
        }
    }

    /// `pid` exited: its table goes when its last user does.
    pub fn exit(&mut self, pid: u32) {
        self.cwd.remove(&pid);
        if let Some(t) = self.of_pid.remove(&pid) {
            let table = &mut self.tables[t];
            table.users = table.users.saturating_sub(1);
            if table.users == 0 {
                table.fds = FdMap::default();
                self.free.push(t);
            }
        }
    }

    pub fn cwd(&self, pid: u32) -> Option<&str> {
        self.cwd.get(&pid).map(|c| &**c)
    }

    pub fn set_cwd(&mut self, pid: u32, cwd: &str) {
        if self.cwd.get(&pid).map(|c| &**c) != Some(cwd) {
            self.cwd.insert(pid, cwd.into());
        }
    }

    /// Tasks currently known.
    pub fn tasks(&self) -> usize {
        self.of_pid.len()
    }
}

/// Joins `rel` to `base` and removes `.`, `..` and repeated slashes (lexically, as the trace
/// cannot tell symlinks).
pub fn normalize(base: Option<&str>, rel: &str) -> String {
    let joined_base = if rel.starts_with('/') { None } else { base };
    let absolute = rel.starts_with('/') || joined_base.is_some_and(|b| b.starts_with('/'));
    let mut out = String::with_capacity(rel.len() + joined_base.map_or(0, str::len) + 1);
    if absolute {
        out.push('/');
    }
    // `out[root..]` is the components joined by '/': pushing one adds a separator, popping
    // one truncates at the last separator.
    let root = out.len();
    for p in joined_base.into_iter().chain([rel]) {
        for c in p.split('/') {
            match c {
                "" | "." => {}
                ".." => {
                    let sep = out[root..].rfind('/').map(|i| root + i);
                    let last = &out[sep.map_or(root, |i| i + 1)..];
                    if !last.is_empty() && last != ".." {
                        out.truncate(sep.unwrap_or(root));
                    } else if !absolute {
                        if out.len() > root {
                            out.push('/');
                        }
                        out.push_str("..");
                    }
                }
                c => {
                    if out.len() > root {
                        out.push('/');
                    }
                    out.push_str(c);
                }
            }
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

/// Whether `path` is absolute and already what [`normalize`] makes of it (no empty, `.` or
/// `..` component, no trailing slash), so it can be used as it is.
pub fn is_normal(path: &str) -> bool {
    let b = path.as_bytes();
    if b.len() < 2 || b[0] != b'/' {
        return false;
    }
    // Component by component, bytewise ('/' is ASCII: no character is split).
    let mut start = 1;
    for i in 1..=b.len() {
        if i == b.len() || b[i] == b'/' {
            if matches!(&b[start..i], b"" | b"." | b"..") {
                return false;
            }
            start = i + 1;
        }
    }
    true
}

/// The directory holding `path` (`/` for a top-level name, `.` for a bare relative one).
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => ".",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_lexically() {
        assert_eq!(normalize(Some("/a/b"), "c/../d"), "/a/b/d");
        assert_eq!(normalize(Some("/a"), "/x//y/./z"), "/x/y/z");
        assert_eq!(normalize(None, "x/y"), "x/y");
        assert_eq!(normalize(None, "../x"), "../x");
        assert_eq!(normalize(Some("/"), ".."), "/");
        assert_eq!(normalize(None, "a/../../b/./c/.."), "../b");
        assert_eq!(normalize(None, "a/.."), ".");
        assert_eq!(normalize(Some("x/.."), "../../y"), "../../y");
        assert_eq!(normalize(Some("/a/b/c"), "../../.."), "/");
        assert_eq!(normalize(Some("/a"), "b/"), "/a/b");
        for p in ["/a/b", "/a", "/.x/..y"] {
            assert!(is_normal(p), "{p}");
            assert_eq!(normalize(None, p), p);
        }
        for p in ["/", "/a/", "/a//b", "/a/./b", "/a/../b", "a/b", "/a/."] {
            assert!(!is_normal(p), "{p}");
        }
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
        assert_eq!(parent("a"), ".");
    }

    #[test]
    fn inodes_follow_unlink_and_rename() {
        let mut i = Inodes::default();
        let a = i.get("/t/a");
        assert_eq!(i.get("/t/a"), a);
        assert_eq!(i.unlink("/t/a"), a);
        assert!(i.absent("/t/a"));
        let a2 = i.create("/t/a");
        assert_ne!(a, a2);
        let b = i.rename("/t/a", "/t/b");
        assert_eq!(b, a2);
        assert!(i.absent("/t/a"));
        assert_eq!(i.get("/t/b"), a2);
        assert_eq!(&*i.info(a2).name, "/t/b");
    }

    #[test]
    fn tables_share_copy_and_drop() {
        let mut t = FdTables::default();
        let e = |inode| Fd {
            inode,
            cloexec: false,
        };
        t.set(1, 3, e(7));
        t.fork(1, 2, false);
        t.fork(1, 3, true);
        t.set(3, 4, e(8));
        assert_eq!(t.get(1, 4), Some(e(8)), "threads share");
        assert_eq!(t.get(2, 4), None, "a fork copies");
        assert_eq!(t.get(2, 3), Some(e(7)));
        t.exit(1);
        assert_eq!(
            t.get(3, 3),
            Some(e(7)),
            "the table lives while a thread does"
        );
        t.set(
            3,
            5,
            Fd {
                inode: 9,
                cloexec: true,
            },
        );
        t.exec(3);
        assert_eq!(t.get(3, 5), None);
        assert_eq!(t.get(3, 3), Some(e(7)));
    }

    #[test]
    fn fd_maps_hold_small_large_and_negative_fds_alike() {
        let e = |inode| Fd {
            inode,
            cloexec: inode % 2 == 1,
        };
        let mut m = FdMap::default();
        let fds = [0, 3, FdMap::DENSE - 1, FdMap::DENSE, 1 << 20, -5];
        for (k, &fd) in fds.iter().enumerate() {
            assert_eq!(m.get(fd), None);
            m.insert(fd, e(k as InodeId));
        }
        for (k, &fd) in fds.iter().enumerate() {
            assert_eq!(m.get(fd), Some(e(k as InodeId)), "{fd}");
        }
        assert_eq!(m.get(4), None, "a gap in the dense part");
        assert_eq!(m.remove(3), Some(e(1)));
        assert_eq!(m.remove(3), None);
        assert_eq!(m.remove(1 << 20), Some(e(4)));
        assert_eq!(m.remove(7777), None);
        m.retain(|fd, e| fd != 0 && !e.cloexec);
        let left: Vec<i32> = fds
            .iter()
            .copied()
            .filter(|&fd| m.get(fd).is_some())
            .collect();
        assert_eq!(left, [FdMap::DENSE - 1]);
    }
}
