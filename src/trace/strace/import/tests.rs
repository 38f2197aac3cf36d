use super::*;

fn import(text: &str) -> (Vec<Op>, ImportSummary) {
    let opts = ImportOptions {
        strict: false,
        mounts: Mounts::parse(
            "1 0 0:1 / / rw - ext4 /dev/vda rw\n2 1 0:2 / /dev/shm rw - tmpfs tmpfs rw\n\
             3 1 0:3 / /dev rw - devtmpfs devtmpfs rw\n4 3 0:2 / /dev/shm rw - tmpfs tmpfs rw\n",
            None,
        ),
        fs_source: "test".into(),
    };
    let mut ops = Vec::new();
    let s = StraceImport::new(text.as_bytes(), "t", opts)
        .for_each(|o| ops.push(o))
        .unwrap();
    (ops, s)
}

fn kinds(ops: &[Op]) -> Vec<&'static str> {
    ops.iter().map(|o| o.syscall.name()).collect()
}

#[test]
fn pipe_dup_and_fork_share_one_inode() {
    let (ops, s) = import(
        "\
10 00:00:01.000000 pipe2([3<pipe:[77]>, 4<pipe:[77]>], 0) = 0 <0.000005>
10 00:00:01.000100 dup2(4, 9) = 9 <0.000002>
10 00:00:01.000200 clone(child_stack=NULL, flags=SIGCHLD) = 11 <0.000050>
11 00:00:01.000300 write(9, \"x\", 1) = 1 <0.000003>
10 00:00:01.000400 read(3, \"x\", 1) = 1 <0.000003>
11 00:00:01.000500 close(9) = 0
11 00:00:01.000600 write(9, \"x\", 1) = -1 EBADF (Bad file descriptor)
10 00:00:01.000700 write(9, \"x\", 1) = 1
",
    );
    assert_eq!(
        kinds(&ops),
        ["other", "other", "other", "write", "read", "close", "other", "write"]
    );
    let pipe = ops[3].inode;
    assert_eq!(ops[4].inode, pipe);
    assert_eq!(
        ops[7].inode, pipe,
        "the parent's fd 9 survives the child's close"
    );
    assert_eq!(ops[3].fs, FsKind::Pipefs);
    assert_eq!(ops[3].task, 11);
    assert_eq!(ops[4].time_ns, Some(400_000));
    assert_eq!(s.tasks, 2);
    assert!(s.unknown_syscalls.is_empty(), "{s:?}");
}

#[test]
fn files_are_created_unlinked_and_recreated_as_new_inodes() {
    let (ops, _) = import(
        r#"1 newfstatat(AT_FDCWD</dev/shm/w>, "f", 0x7ffc, 0) = -1 ENOENT (No such file or directory)
1 openat(AT_FDCWD</dev/shm/w>, "f", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</dev/shm/w/f>
1 write(3</dev/shm/w/f>, "a", 1) = 1
1 fstat(3</dev/shm/w/f>, {st_mode=S_IFREG|0644, st_size=1, ...}) = 0
1 close(3</dev/shm/w/f>) = 0
1 openat(AT_FDCWD</dev/shm/w>, "f", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</dev/shm/w/f>
1 unlink("/dev/shm/w/f") = 0
1 openat(AT_FDCWD, "/dev/shm/w/f", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0600) = 4</dev/shm/w/f>
1 rename("/dev/shm/w/f", "/dev/shm/w/g") = 0
1 stat("/dev/shm/w/g", {st_mode=S_IFREG|0600, ...}) = 0
1 write(1</dev/pts/0>, "hi\n", 3) = 3
"#,
    );
    assert_eq!(
        kinds(&ops),
        [
            "other",
            "create",
            "write",
            "stat",
            "close",
            "open_trunc",
            "unlink",
            "create",
            "rename",
            "stat",
            "other"
        ]
    );
    let f1 = ops[1].inode;
    assert_eq!(ops[1].fs, FsKind::Tmpfs);
    assert!([2, 3, 4, 5, 6].iter().all(|&i| ops[i].inode == f1));
    let dir = ops[1].dir;
    assert_ne!(dir, NO_INODE);
    assert_eq!(ops[6].dir, dir);
    let f2 = ops[7].inode;
    assert_ne!(f2, f1, "a new file after the unlink");
    assert_eq!(ops[8].inode, f2);
    assert_eq!(ops[9].inode, f2, "the rename keeps the inode");
}

#[test]
fn unfinished_resumed_signals_exits_and_malformed() {
    let (ops, s) = import(
        "\
5 00:00:02.000000 openat(AT_FDCWD, \"/var/tmp/a\", O_RDONLY <unfinished ...>
6 00:00:02.000001 getppid() = 5
5 00:00:02.000002 <... openat resumed>) = 3</var/tmp/a> <0.000010>
6 00:00:02.000003 --- SIGCHLD {si_signo=SIGCHLD} ---
garbage here
5 00:00:02.000004 read(3, \"\"..., 10) = 0
6 00:00:02.000005 frobnicate(1, 2) = 0
6 00:00:02.000006 frobnicate(3) = 0
6 00:00:02.000007 +++ exited with 0 +++
5 00:00:02.000008 write(3, \"x\"
",
    );
    assert_eq!(kinds(&ops), ["other", "open", "read", "other", "other"]);
    assert_eq!(ops[2].inode, ops[1].inode);
    assert_eq!(ops[1].fs, FsKind::Ext4);
    assert_eq!(s.malformed_lines, 2);
    assert!(s.malformed_examples[0].starts_with("line 5: "), "{s:?}");
    assert!(s.malformed_examples[1].starts_with("line 10: "), "{s:?}");
    assert_eq!(s.unknown_syscalls.get("frobnicate"), Some(&2));
    assert_eq!((s.signals, s.exits, s.calls), (1, 1, 5));
}

#[test]
fn strict_names_the_line() {
    let opts = ImportOptions {
        strict: true,
        ..Default::default()
    };
    let e = StraceImport::new("1 getpid() = 1\n\n1 bad(\n".as_bytes(), "x.trace", opts)
        .for_each(|_| {})
        .unwrap_err();
    assert!(e.to_string().contains("x.trace' line 3:"), "{e}");
}

#[test]
fn a_child_printing_before_clone_returns_inherits_fds() {
    let (ops, _) = import(
        "\
1 openat(AT_FDCWD, \"/var/tmp/x\", O_RDONLY) = 3</var/tmp/x>
1 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>
2 read(3, \"\", 1) = 0
1 <... clone resumed>) = 2
2 close(3) = 0
1 read(3, \"\", 1) = 0
",
    );
    assert_eq!(kinds(&ops), ["open", "read", "other", "close", "read"]);
    assert_eq!(ops[1].inode, ops[0].inode);
    assert_eq!(ops[4].inode, ops[0].inode);
}

#[test]
fn a_line_over_the_cap_in_memory_is_cut_and_counted_with_its_number() {
    // A reader over memory hands the importer the whole text at once: the cap still holds.
    let long = format!(
        "1 write(1, \"{}\", 9) = 9\n",
        "x".repeat(crate::trace::strace::parse::MAX_LINE_BYTES)
    );
    let text = format!("1 getpid() = 1\n{long}1 getpid() = 1\n1 bad(\n");
    let (ops, s) = import(&text);
    assert_eq!(ops.len(), 2);
    assert_eq!((s.lines, s.malformed_lines), (4, 2), "{s:?}");
    assert!(
        s.malformed_examples[0].starts_with("line 2: a line of"),
        "{s:?}"
    );
    assert!(s.malformed_examples[1].starts_with("line 4: "), "{s:?}");
    assert_eq!(s.bytes, text.len() as u64);
}
