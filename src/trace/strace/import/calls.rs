//! One complete syscall → (model operation, inode, parent directory), updating the fd tables
//! and the path → inode map on the way.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::state::{is_normal, normalize, parent, Fd, FdTables, Inodes};
use crate::trace::strace::parse::{fd_arg, string_arg, Args};
use crate::trace::strace::Call;
use crate::trace::{InodeId, Syscall, NO_INODE};

pub(super) use super::kinds::{handler, Handler};

/// What a handler needs.
pub(super) struct Ctx<'s> {
    pub inodes: &'s mut Inodes,
    pub fds: &'s mut FdTables,
    pub unknown: &'s mut BTreeMap<String, u64>,
}

type Out = (Syscall, InodeId, InodeId);

const OTHER: Out = (Syscall::Other, NO_INODE, NO_INODE);

/// Whether `flag` is one of the words of `flags` (`O_RDONLY|O_CLOEXEC`, `{… flags=A|B …}`),
/// split at `| , { } =` (ASCII: every split falls between characters) and trimmed.
fn has_flag(flags: &str, flag: &str) -> bool {
    let b = flags.as_bytes();
    let mut start = 0;
    for i in 0..=b.len() {
        if i == b.len() || matches!(b[i], b'|' | b',' | b'{' | b'}' | b'=') {
            if flags[start..i].trim() == flag {
                return true;
            }
            start = i + 1;
        }
    }
    false
}

impl Ctx<'_> {
    /// The inode of an fd argument (`3</tmp/x>`): the fd table's entry, unless the `-y`
    /// annotation names something else (a call we did not see changed the fd).
    fn fd_inode(&mut self, pid: u32, arg: &str) -> Option<InodeId> {
        let (fd, ann) = fd_arg(arg)?;
        if fd < 0 {
            return None;
        }
        let entry = self.fds.get(pid, fd);
        if let Some(a) = ann {
            let (name, deleted) = match a.strip_suffix(" (deleted)") {
                Some(n) => (n, true),
                None => (a, false),
            };
            if let Some(e) = entry {
                if *self.inodes.info(e.inode).name == *name || deleted {
                    return Some(e.inode);
                }
            }
            let inode = if deleted {
                self.inodes.anonymous(name)
            } else {
                self.inodes.get(name)
            };
            let cloexec = entry.is_some_and(|e| e.cloexec);
            self.fds.set(pid, fd, Fd { inode, cloexec });
            return Some(inode);
        }
        if let Some(e) = entry {
            return Some(e.inode);
        }
        let inode = self.inodes.anonymous(&format!("fd:{pid}:{fd}"));
        self.fds.set(
            pid,
            fd,
            Fd {
                inode,
                cloexec: false,
            },
        );
        Some(inode)
    }

    /// The path a (dirfd, path) pair names; `None` for NULL, or an empty path. An absolute
    /// path already normal is the argument's own text.
    fn path<'c>(&mut self, pid: u32, dirfd: Option<&str>, path: &'c str) -> Option<Cow<'c, str>> {
        let p = string_arg(path)?;
        if p.is_empty() {
            return None;
        }
        if p.starts_with('/') {
            return Some(if is_normal(&p) {
                p
            } else {
                Cow::Owned(normalize(None, &p))
            });
        }
        let joined = match dirfd.and_then(fd_arg) {
            Some((libc::AT_FDCWD, Some(cwd))) => {
                self.fds.set_cwd(pid, cwd);
                normalize(Some(cwd), &p)
            }
            Some((libc::AT_FDCWD, None)) | None => normalize(self.fds.cwd(pid), &p),
            Some((_, Some(dir))) => normalize(Some(dir), &p),
            Some((fd, None)) => {
                let inode = self.fds.get(pid, fd).map(|e| e.inode);
                normalize(inode.map(|i| &*self.inodes.info(i).name), &p)
            }
        };
        Some(Cow::Owned(joined))
    }

    /// A call on the fd in argument 0.
    fn on_fd(&mut self, pid: u32, c: &Call, s: Syscall) -> Out {
        match Args::new(c.args).next().and_then(|a| self.fd_inode(pid, a)) {
            Some(i) if ok(c) => (s, i, NO_INODE),
            _ => OTHER,
        }
    }

    /// A call on the path in argument `at` (with a dirfd before it when `dirfd`).
    fn on_path(&mut self, pid: u32, c: &Call, s: Syscall, at: usize, dirfd: bool) -> Out {
        let mut args = Args::new(c.args);
        let d = if dirfd { args.next() } else { None };
        let mut args = args.skip(at - usize::from(dirfd));
        let Some(p) = args.next() else {
            return OTHER;
        };
        match self.path(pid, d, p) {
            Some(path) if ok(c) => (s, self.inodes.get(&path), NO_INODE),
            Some(path) => {
                if c.ret.errno == Some("ENOENT") {
                    self.inodes.mark_absent(&path);
                }
                OTHER
            }
            // `newfstatat(3</x>, "", …, AT_EMPTY_PATH)`, `utimensat(3</x>, NULL, …)`.
            None if dirfd => match d.and_then(|d| self.fd_inode(pid, d)) {
                Some(i) if ok(c) => (s, i, NO_INODE),
                _ => OTHER,
            },
            None => OTHER,
        }
    }

    fn dir_of(&mut self, path: &str) -> InodeId {
        self.inodes.get(parent(path))
    }

    fn open(&mut self, pid: u32, c: &Call) -> Out {
        let args: [Option<&str>; 3] = first(c.args);
        let (dirfd, path, flags) = match c.name {
            "open" => (None, args[0], args[1]),
            "creat" => (None, args[0], Some("O_CREAT|O_WRONLY|O_TRUNC")),
            _ => (args[0], args[1], args[2]),
        };
        let flags = flags.unwrap_or("");
        let Some(resolved) = path.and_then(|p| self.path(pid, dirfd, p)) else {
            return OTHER;
        };
        let (Some(fd), true) = (c.ret.value, ok(c)) else {
            if c.ret.errno == Some("ENOENT") {
                self.inodes.mark_absent(&resolved);
            }
            return OTHER;
        };
        let name = c.ret.path.unwrap_or(&resolved);
        let creat = has_flag(flags, "O_CREAT");
        let created = creat
            && (has_flag(flags, "O_EXCL")
                || self.inodes.absent(name)
                || (!self.inodes.live(name) && self.inodes.absent(&resolved)));
        let out = if created {
            let id = self.inodes.create(name);
            (Syscall::Create, id, self.dir_of(name))
        } else {
            let id = self.inodes.get(name);
            let s = if has_flag(flags, "O_TRUNC") {
                Syscall::OpenTrunc
            } else {
                Syscall::Open
            };
            (s, id, NO_INODE)
        };
        self.fds.set(
            pid,
            fd as i32,
            Fd {
                inode: out.1,
                cloexec: has_flag(flags, "O_CLOEXEC"),
            },
        );
        out
    }

    /// unlink, unlinkat, rmdir.
    fn unlink(&mut self, pid: u32, c: &Call) -> Out {
        let args: [Option<&str>; 3] = first(c.args);
        let (dirfd, path, rmdir) = match c.name {
            "unlinkat" => (
                args[0],
                args[1],
                args[2].is_some_and(|f| has_flag(f, "AT_REMOVEDIR")),
            ),
            n => (None, args[0], n == "rmdir"),
        };
        let Some(p) = path.and_then(|p| self.path(pid, dirfd, p)) else {
            return OTHER;
        };
        if !ok(c) {
            if c.ret.errno == Some("ENOENT") {
                self.inodes.mark_absent(&p);
            }
            return OTHER;
        }
        let id = self.inodes.unlink(&p);
        let s = if rmdir {
            Syscall::Rmdir
        } else {
            Syscall::Unlink
        };
        (s, id, self.dir_of(&p))
    }

    /// Two paths: rename*, link*, symlink* (`(old, new)` with optional dirfds).
    fn two_paths<'c>(
        &mut self,
        pid: u32,
        c: &Call<'c>,
    ) -> Option<(Option<Cow<'c, str>>, Cow<'c, str>)> {
        let a: [Option<&'c str>; 4] = first(c.args);
        let (old, new) = match c.name {
            "rename" | "link" => (self.path(pid, None, a[0]?), a[1]),
            "symlink" => (string_arg(a[0]?), a[1]),
            "symlinkat" => {
                let new = self.path(pid, a[1], a[2]?)?;
                return Some((string_arg(a[0]?), new));
            }
            _ => (self.path(pid, a[0], a[1]?), a[3]),
        };
        let new_dirfd = match c.name {
            "rename" | "link" | "symlink" => None,
            _ => a[2],
        };
        let new = self.path(pid, new_dirfd, new?)?;
        Some((old, new))
    }

    fn rename_or_link(&mut self, pid: u32, c: &Call) -> Out {
        let Some((old, new)) = self.two_paths(pid, c) else {
            return OTHER;
        };
        if !ok(c) {
            return OTHER;
        }
        let dir = self.dir_of(&new);
        match (c.name, old) {
            ("symlink" | "symlinkat", _) => (Syscall::Create, self.inodes.create(&new), dir),
            ("link" | "linkat", Some(old)) => {
                let id = self.inodes.get(&old);
                self.inodes.link(id, &new);
                (Syscall::Link, id, dir)
            }
            (_, Some(old)) => (Syscall::Rename, self.inodes.rename(&old, &new), dir),
            _ => OTHER,
        }
    }

    fn mkdir(&mut self, pid: u32, c: &Call) -> Out {
        let mut a = Args::new(c.args);
        let p = if c.name == "mkdirat" {
            let d = a.next();
            a.next().and_then(|p| self.path(pid, d, p))
        } else {
            a.next().and_then(|p| self.path(pid, None, p))
        };
        match p {
            Some(p) if ok(c) => (Syscall::Mkdir, self.inodes.create(&p), self.dir_of(&p)),
            _ => OTHER,
        }
    }

    fn pipe(&mut self, pid: u32, c: &Call) -> Out {
        if !ok(c) {
            return OTHER;
        }
        let mut a = Args::new(c.args);
        let Some(list) = a.next() else {
            return OTHER;
        };
        let cloexec = a.next().is_some_and(|f| has_flag(f, "O_CLOEXEC"));
        let inner = list.trim_start_matches('[').trim_end_matches(']');
        let ends: Vec<(i32, Option<&str>)> = Args::new(inner).filter_map(fd_arg).collect();
        let inode = match ends.first() {
            Some((_, Some(name))) => self.inodes.get(name),
            _ => self.inodes.anonymous("pipe"),
        };
        for (fd, _) in ends {
            self.fds.set(pid, fd, Fd { inode, cloexec });
        }
        OTHER
    }

    /// dup, dup2, dup3, fcntl(F_DUPFD*, F_SETFD).
    fn dup(&mut self, pid: u32, c: &Call) -> Out {
        let a: [Option<&str>; 3] = first(c.args);
        let Some(old) = a[0] else {
            return OTHER;
        };
        let cloexec = match c.name {
            "dup" | "dup2" => false,
            "dup3" => a[2].is_some_and(|f| has_flag(f, "O_CLOEXEC")),
            _ => match a[1] {
                Some("F_DUPFD") => false,
                Some("F_DUPFD_CLOEXEC") => true,
                Some("F_SETFD") => {
                    if let (Some((fd, _)), true) = (fd_arg(old), ok(c)) {
                        if let Some(mut e) = self.fds.get(pid, fd) {
                            e.cloexec = a[2].is_some_and(|f| has_flag(f, "FD_CLOEXEC"));
                            self.fds.set(pid, fd, e);
                        }
                    }
                    return OTHER;
                }
                _ => return OTHER,
            },
        };
        let (Some(new), true) = (c.ret.value, ok(c)) else {
            return OTHER;
        };
        if let Some(inode) = self.fd_inode(pid, old) {
            self.fds.set(pid, new as i32, Fd { inode, cloexec });
        }
        OTHER
    }
}

/// The first `N` arguments (`None` past the last), without allocating.
fn first<const N: usize>(args: &str) -> [Option<&str>; N] {
    let mut out = [None; N];
    for (slot, a) in out.iter_mut().zip(Args::new(args)) {
        *slot = Some(a);
    }
    out
}

/// Whether the call succeeded.
fn ok(c: &Call) -> bool {
    c.ret.value.is_some_and(|v| v >= 0)
}

/// Handles one complete call of task `pid`, whose name takes handler `k` ([`handler`]).
pub(super) fn handle(ctx: &mut Ctx, pid: u32, c: &Call, k: Handler) -> Out {
    use Syscall as S;
    match k {
        Handler::Read => ctx.on_fd(pid, c, S::Read),
        Handler::Write => ctx.on_fd(pid, c, S::Write),
        Handler::Close => {
            let out = ctx.on_fd(pid, c, S::Close);
            if let Some((fd, _)) = Args::new(c.args).next().and_then(fd_arg) {
                ctx.fds.close(pid, fd);
            }
            out
        }
        Handler::CloseRange => {
            let mut a = Args::new(c.args);
            let first = a.next().and_then(|f| f.parse::<i32>().ok());
            let last = a.next().map(|l| l.parse::<i64>().unwrap_or(i64::MAX));
            if let (Some(first), Some(last), true) = (first, last, ok(c)) {
                let last = last.clamp(-1, i64::from(i32::MAX)) as i32;
                ctx.fds.close_range(pid, first, last);
            }
            OTHER
        }
        Handler::Fstat => ctx.on_fd(pid, c, S::Stat),
        Handler::Stat => ctx.on_path(pid, c, S::Stat, 0, false),
        Handler::StatAt => ctx.on_path(pid, c, S::Stat, 1, true),
        Handler::Statx => {
            let mask = Args::new(c.args).nth(3);
            let s = if mask.is_some_and(super::kinds::statx_mask_has_no_time) {
                S::StatNoTimes
            } else {
                S::Stat
            };
            ctx.on_path(pid, c, s, 1, true)
        }
        Handler::Open => ctx.open(pid, c),
        Handler::Lseek => ctx.on_fd(pid, c, S::Lseek),
        Handler::Mmap => match Args::new(c.args).nth(4).and_then(|a| ctx.fd_inode(pid, a)) {
            Some(i) if ok(c) => (S::Mmap, i, NO_INODE),
            _ => OTHER,
        },
        Handler::Munmap => (S::Munmap, NO_INODE, NO_INODE),
        Handler::Unlink => ctx.unlink(pid, c),
        Handler::TwoPaths => ctx.rename_or_link(pid, c),
        Handler::Mkdir => ctx.mkdir(pid, c),
        Handler::Truncate => ctx.on_path(pid, c, S::Truncate, 0, false),
        Handler::Ftruncate => ctx.on_fd(pid, c, S::Truncate),
        Handler::Fsync if c.name == "fdatasync" => ctx.on_fd(pid, c, S::Fdatasync),
        Handler::Fsync => ctx.on_fd(pid, c, S::Fsync),
        Handler::Chmod => ctx.on_path(pid, c, S::Setattr, 0, false),
        Handler::Fchmod => ctx.on_fd(pid, c, S::Setattr),
        Handler::ChmodAt => ctx.on_path(pid, c, S::Setattr, 1, true),
        Handler::UtimensAt => ctx.on_path(pid, c, S::Utimens, 1, true),
        Handler::Utimes => ctx.on_path(pid, c, S::Utimens, 0, false),
        Handler::Getdents => ctx.on_fd(pid, c, S::Readdir),
        Handler::Pipe => ctx.pipe(pid, c),
        Handler::Dup => ctx.dup(pid, c),
        Handler::Fork => {
            if let Some(child) = c.ret.value.filter(|&v| v > 0) {
                let share = c.name.starts_with("clone") && has_flag(c.args, "CLONE_FILES");
                ctx.fds.fork(pid, child as u32, share);
            }
            OTHER
        }
        Handler::Exec => {
            if c.ret.value == Some(0) {
                ctx.fds.exec(pid);
            }
            OTHER
        }
        Handler::Chdir => {
            let a = Args::new(c.args).next().unwrap_or("");
            let dir = if c.name == "chdir" {
                ctx.path(pid, None, a).map(Cow::into_owned)
            } else {
                fd_arg(a).and_then(|(fd, ann)| {
                    ann.map(str::to_string).or_else(|| {
                        ctx.fds
                            .get(pid, fd)
                            .map(|e| ctx.inodes.info(e.inode).name.to_string())
                    })
                })
            };
            if let (Some(d), true) = (dir, ok(c)) {
                ctx.fds.set_cwd(pid, &d);
            }
            OTHER
        }
        Handler::NoTimestamp | Handler::Unknown => {
            if k == Handler::Unknown {
                match ctx.unknown.get_mut(c.name) {
                    Some(n) => *n += 1,
                    None => {
                        ctx.unknown.insert(c.name.to_string(), 1);
                    }
                }
            }
            // An fd-returning call (socket, eventfd, memfd_create, …): remember what it is.
            if let (Some(fd), Some(p)) = (c.ret.value.filter(|&v| v >= 0), c.ret.path) {
                let inode = ctx.inodes.get(p);
                ctx.fds.set(
                    pid,
                    fd as i32,
                    Fd {
                        inode,
                        cloexec: false,
                    },
                );
            }
            OTHER
        }
    }
}
