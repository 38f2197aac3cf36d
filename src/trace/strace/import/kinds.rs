//! Which handler each syscall name takes: one hash lookup per call ([`handler`]).

/// Calls the importer knows take no file timestamps (memory, signals, ids, time, waiting,
/// sockets and other fds without timestamps worth modelling).
const NO_TIMESTAMP: &str = "\
    brk mprotect madvise mremap mlock munlock membarrier arch_prctl set_tid_address \
    set_robust_list get_robust_list rseq prlimit64 getrlimit setrlimit rt_sigaction \
    rt_sigprocmask rt_sigreturn rt_sigsuspend rt_sigtimedwait sigaltstack getpid getppid gettid \
    getuid geteuid getgid getegid getgroups setuid setgid setgroups setresuid setresgid \
    getresuid getresgid getpgrp getpgid setpgid setsid getsid uname sysinfo getrandom futex \
    nanosleep clock_nanosleep clock_gettime clock_getres gettimeofday time wait4 waitid exit \
    exit_group kill tgkill tkill sched_yield sched_getaffinity sched_setaffinity sched_getparam \
    sched_getscheduler getcwd umask access faccessat faccessat2 readlink readlinkat poll ppoll \
    select pselect6 epoll_wait epoll_pwait epoll_pwait2 epoll_ctl epoll_create epoll_create1 \
    prctl getrusage times ioctl statfs fstatfs getxattr lgetxattr fgetxattr listxattr llistxattr \
    flistxattr alarm setitimer getitimer pause socket socketpair connect bind listen accept \
    accept4 getsockname getpeername setsockopt getsockopt sendto recvfrom sendmsg recvmsg \
    sendmmsg recvmmsg shutdown eventfd eventfd2 signalfd signalfd4 timerfd_create \
    timerfd_settime timerfd_gettime inotify_init inotify_init1 inotify_add_watch \
    inotify_rm_watch memfd_create pidfd_open pidfd_send_signal capget capset personality flock \
    fadvise64 sync restart_syscall sched_getattr io_uring_setup";

/// Which handler a syscall takes (its name, looked up once per call: a `match` on the name
/// would compare it with every name before its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Handler {
    Read,
    Write,
    Close,
    CloseRange,
    Fstat,
    Stat,
    StatAt,
    /// `statx`: a stat, or one that asks for no time (its mask, argument 4).
    Statx,
    Open,
    Lseek,
    Mmap,
    Munmap,
    Unlink,
    TwoPaths,
    Mkdir,
    Truncate,
    Ftruncate,
    Fsync,
    Chmod,
    Fchmod,
    ChmodAt,
    UtimensAt,
    Utimes,
    Getdents,
    Pipe,
    Dup,
    /// Calls that create a task (their child may print before they return).
    Fork,
    Exec,
    Chdir,
    /// Known to take no file timestamps ([`NO_TIMESTAMP`]).
    NoTimestamp,
    /// Not known to the importer (counted in the summary).
    Unknown,
}

/// The names of each handler.
const HANDLED: &[(Handler, &str)] = &[
    (Handler::Read, "read pread64 readv preadv preadv2"),
    (Handler::Write, "write pwrite64 writev pwritev pwritev2"),
    (Handler::Close, "close"),
    (Handler::CloseRange, "close_range"),
    (Handler::Fstat, "fstat fstat64"),
    (Handler::Stat, "stat lstat stat64 lstat64"),
    (Handler::StatAt, "newfstatat fstatat64"),
    (Handler::Statx, "statx"),
    (Handler::Open, "open openat openat2 creat"),
    (Handler::Lseek, "lseek _llseek"),
    (Handler::Mmap, "mmap mmap2"),
    (Handler::Munmap, "munmap"),
    (Handler::Unlink, "unlink unlinkat rmdir"),
    (
        Handler::TwoPaths,
        "rename renameat renameat2 link linkat symlink symlinkat",
    ),
    (Handler::Mkdir, "mkdir mkdirat"),
    (Handler::Truncate, "truncate truncate64"),
    (Handler::Ftruncate, "ftruncate ftruncate64"),
    (Handler::Fsync, "fsync fdatasync syncfs"),
    (Handler::Chmod, "chmod chown lchown"),
    (Handler::Fchmod, "fchmod fchown"),
    (Handler::ChmodAt, "fchmodat fchownat fchmodat2"),
    (Handler::UtimensAt, "utimensat futimesat"),
    (Handler::Utimes, "utimes utime"),
    (Handler::Getdents, "getdents getdents64"),
    (Handler::Pipe, "pipe pipe2"),
    (Handler::Dup, "dup dup2 dup3 fcntl fcntl64"),
    (Handler::Fork, "clone clone3 fork vfork"),
    (Handler::Exec, "execve execveat"),
    (Handler::Chdir, "chdir fchdir"),
];

/// The handler of the syscall `name`.
#[inline]
pub(super) fn handler(name: &str) -> Handler {
    static TABLE: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
    TABLE.get_or_init(Table::new).get(name)
}

/// An open-addressing table from name to handler, keyed by the name's first 16 bytes (two
/// words) and its length: a lookup hashes two words and compares them, where a hash map of
/// strings hashed every byte and called `memcmp` (a twentieth of the import's time).
struct Table {
    slots: Vec<Option<(Key, &'static str, Handler)>>,
}

/// The first 16 bytes of a name, zero-padded, and its length.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key(u64, u64, usize);

impl Key {
    #[inline]
    fn of(name: &str) -> Key {
        let b = name.as_bytes();
        let mut w = [0u8; 16];
        let n = b.len().min(16);
        w[..n].copy_from_slice(&b[..n]);
        let (lo, hi) = w.split_at(8);
        let word = |x: &[u8]| u64::from_le_bytes(x.try_into().unwrap_or([0; 8]));
        Key(word(lo), word(hi), b.len())
    }

    #[inline]
    fn slot(self) -> usize {
        let h =
            (self.0 ^ self.1.rotate_left(29) ^ self.2 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - Table::BITS)) as usize
    }
}

impl Table {
    /// 1,024 slots for about 200 names.
    const BITS: u32 = 10;

    fn new() -> Table {
        let mut t = Table {
            slots: vec![None; 1 << Self::BITS],
        };
        let quiet = NO_TIMESTAMP
            .split_whitespace()
            .map(|n| (n, Handler::NoTimestamp));
        // A handled name wins over the list of quiet ones (inserted later, it replaces).
        let handled = HANDLED
            .iter()
            .flat_map(|&(k, names)| names.split_whitespace().map(move |n| (n, k)));
        for (name, kind) in quiet.chain(handled) {
            let key = Key::of(name);
            let mut i = key.slot();
            loop {
                match &mut t.slots[i] {
                    Some((k, n, v)) if *k == key && *n == name => {
                        *v = kind;
                        break;
                    }
                    Some(_) => i = (i + 1) & ((1 << Self::BITS) - 1),
                    empty => {
                        *empty = Some((key, name, kind));
                        break;
                    }
                }
            }
        }
        t
    }

    #[inline]
    fn get(&self, name: &str) -> Handler {
        let key = Key::of(name);
        let mut i = key.slot();
        while let Some((k, n, v)) = &self.slots[i] {
            // Equal keys are equal names up to 16 bytes; a longer one compares the rest.
            if *k == key && (key.2 <= 16 || n.as_bytes()[16..] == name.as_bytes()[16..]) {
                return *v;
            }
            i = (i + 1) & ((1 << Self::BITS) - 1);
        }
        Handler::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_finds_its_handler_and_others_none() {
        for &(k, names) in HANDLED {
            for n in names.split_whitespace() {
                assert_eq!(handler(n), k, "{n}");
            }
        }
        for n in NO_TIMESTAMP.split_whitespace() {
            let handled = HANDLED
                .iter()
                .any(|(_, names)| names.split_whitespace().any(|h| h == n));
            assert_eq!(handler(n) == Handler::NoTimestamp, !handled, "{n}");
        }
        // Prefixes, extensions, the same first 16 bytes, empty and odd bytes: unknown.
        for n in [
            "",
            "rea",
            "readx",
            "read\0",
            "sched_getaffinitx",
            "sched_getaffinity2",
            "sched_getaffinit",
            "clock_gettime ",
            "\u{0}",
            "é",
        ] {
            assert_eq!(handler(n), Handler::Unknown, "{n:?}");
        }
        assert_eq!(handler("sched_getaffinity"), Handler::NoTimestamp);
        assert_eq!(handler("sched_setaffinity"), Handler::NoTimestamp);
    }
}

pub(super) use crate::trace::statx_mask_has_no_time;

#[cfg(test)]
mod statx_tests {
    use super::statx_mask_has_no_time as no_time;

    #[test]
    fn a_statx_mask_without_mtime_or_ctime_asks_no_time() {
        assert!(no_time("STATX_SIZE"));
        assert!(no_time("STATX_TYPE|STATX_MODE|STATX_SIZE"));
        assert!(no_time("0x200"));
        assert!(!no_time("STATX_BASIC_STATS"));
        assert!(!no_time("STATX_SIZE|STATX_MTIME"));
        assert!(!no_time("STATX_ALL"));
        assert!(!no_time("0x7ff"));
        assert!(!no_time("?"));
    }
}
