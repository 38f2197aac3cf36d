use super::*;

#[test]
fn complete_call_with_fd_paths() {
    let l = parse_line(r#"8329  14:12:33.737933 openat(AT_FDCWD</tmp>, "/tmp/x.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/x.txt> <0.000094>"#).unwrap();
    let Line::Call(c) = l else { panic!("{l:?}") };
    assert_eq!(c.pid, Some(8329));
    assert_eq!(c.name, "openat");
    assert!((c.time_s.unwrap() - (14.0 * 3600.0 + 12.0 * 60.0 + 33.737933)).abs() < 1e-6);
    assert_eq!(c.ret.value, Some(3));
    assert_eq!(c.ret.path, Some("/tmp/x.txt"));
    assert_eq!(c.duration_s, Some(0.000094));
    let args = split_args(c.args);
    assert_eq!(
        args,
        [
            r#"AT_FDCWD</tmp>"#,
            r#""/tmp/x.txt""#,
            "O_WRONLY|O_CREAT|O_TRUNC",
            "0666"
        ]
    );
    assert_eq!(fd_arg(args[0]), Some((libc::AT_FDCWD, Some("/tmp"))));
    assert_eq!(string_arg(args[1]).as_deref(), Some("/tmp/x.txt"));
}

#[test]
fn strings_with_parens_quotes_and_escapes() {
    let l = parse_line(r#"12 write(1</dev/pts/0>, "a) \"b\" (c\n", 12) = 12"#).unwrap();
    let Line::Call(c) = l else { panic!() };
    assert_eq!(c.pid, Some(12));
    assert_eq!(c.time_s, None);
    let args = split_args(c.args);
    assert_eq!(args.len(), 3);
    assert_eq!(string_arg(args[1]).as_deref(), Some("a) \"b\" (c\n"));
    assert_eq!(
        string_arg(r#""\177ELF\2\1"..."#).unwrap().as_bytes(),
        b"\x7fELF\x02\x01"
    );
}

#[test]
fn unfinished_and_resumed() {
    let u = parse_line("8345  14:12:33.739258 close(4<pipe:[57334]> <unfinished ...>").unwrap();
    assert_eq!(
        u,
        Line::Unfinished {
            pid: Some(8345),
            time_s: Some(51153.739258),
            name: "close",
            args: "4<pipe:[57334]>"
        }
    );
    let r = parse_line("8345  14:12:33.739283 <... close resumed>) = 0 <0.000018>").unwrap();
    let Line::Resumed(Call {
        name,
        args,
        ret,
        duration_s,
        ..
    }) = r
    else {
        panic!("{r:?}")
    };
    assert_eq!(
        (name, args, ret.value, duration_s),
        ("close", "", Some(0), Some(0.000018))
    );
    let w = parse_line("8329  14:12:33.739134 wait4(-1,  <unfinished ...>").unwrap();
    assert!(matches!(w, Line::Unfinished { args: "-1", .. }), "{w:?}");
}

#[test]
fn errors_signals_exits_and_question_marks() {
    let Line::Call(c) = parse_line(r#"1 openat(AT_FDCWD, "/nope", O_RDONLY) = -1 ENOENT (No such file or directory) <0.000009>"#).unwrap() else { panic!() };
    assert_eq!((c.ret.value, c.ret.errno), (Some(-1), Some("ENOENT")));
    assert_eq!(c.duration_s, Some(0.000009));
    let Line::Call(c) = parse_line("1 exit_group(0)                   = ?").unwrap() else {
        panic!()
    };
    assert_eq!(c.ret.value, None);
    assert!(matches!(
        parse_line("1 --- SIGCHLD {si_signo=SIGCHLD} ---").unwrap(),
        Line::Signal { .. }
    ));
    assert!(matches!(
        parse_line("[pid  77] +++ exited with 0 +++").unwrap(),
        Line::Exit { pid: Some(77), .. }
    ));
    let Line::Call(c) = parse_line("brk(NULL) = 0x556447bab000").unwrap() else {
        panic!()
    };
    assert_eq!(c.ret.value, Some(0x5564_47ba_b000));
}

#[test]
fn pipe_fds_and_pipe_annotations() {
    let Line::Call(c) =
        parse_line("5 pipe2([3<pipe:[57334]>, 4<pipe:[57334]>], 0) = 0 <0.000010>").unwrap()
    else {
        panic!()
    };
    let args = split_args(c.args);
    assert_eq!(args, ["[3<pipe:[57334]>, 4<pipe:[57334]>]", "0"]);
    assert_eq!(fd_arg("3<pipe:[57334]>"), Some((3, Some("pipe:[57334]"))));
}

#[test]
fn malformed_lines_are_errors_not_panics() {
    for bad in [
        "",
        "garbage",
        "1 open(",
        "1 open(\"x\") 3",
        "1 open(x) = zz",
        "[pid 12 open(x) = 0",
        "<... x>",
        "1 (x) = 0",
    ] {
        assert!(parse_line(bad).is_err(), "{bad:?} parsed");
    }
}

#[test]
fn hex_escape_before_a_multibyte_char_is_not_a_panic() {
    // Found by cargo fuzz (strace_lines): `\x` followed by a multi-byte character.
    assert_eq!(string_arg("\"\\x7\u{fffd}\""), None);
    assert_eq!(string_arg(r#""\x41\x42""#).as_deref(), Some("AB"));
}

#[test]
fn annotated_fds_end_at_their_closing_bracket() {
    let args = |s| Args::new(s).collect::<Vec<_>>();
    // strace 6.1 escapes `>` in the path it annotates (`\76`) but not a comma: recorded with
    // `strace -y cat '/tmp/q/n/a>,b'`.
    assert_eq!(
        args(r#"3</tmp/q/n/a\76,b>, "", 131072"#),
        [r#"3</tmp/q/n/a\76,b>"#, r#""""#, "131072"]
    );
    assert_eq!(
        args(r#"AT_FDCWD</tmp>, "/tmp/x", O_RDONLY"#),
        ["AT_FDCWD</tmp>", r#""/tmp/x""#, "O_RDONLY"]
    );
    assert_eq!(args("4<pipe:[57334]>"), ["4<pipe:[57334]>"]);
    assert_eq!(args(" 3</x> , 2"), ["3</x>", "2"]);
    // Not an fd with a closed annotation, or a `>` not followed by a comma: the general scan.
    assert_eq!(
        args("3<TCP:[10.0.0.1:22->10.0.0.2:5000]>, 1"),
        ["3<TCP:[10.0.0.1:22->10.0.0.2:5000]>", "1"]
    );
    assert_eq!(args("3<x, 1"), ["3<x", "1"]);
    assert_eq!(args("x<y>, 1"), ["x<y>", "1"]);
    assert_eq!(args("[1, 2], 3<a>"), ["[1, 2]", "3<a>"]);
    assert_eq!(
        fd_arg(args(r#"3</tmp/q/n/a\76,b>, "", 1"#)[0]),
        Some((3, Some(r#"/tmp/q/n/a\76,b"#)))
    );
}
