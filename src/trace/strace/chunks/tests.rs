use super::*;

/// Every chunk of `data` read through a reader that hands out at most `step` bytes a call.
fn chunks(data: &[u8], step: usize) -> Vec<(u64, String)> {
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut c = Chunker::new(Trickle(data, step));
    let mut out = Vec::new();
    let mut spare = None;
    while let Some(p) = c.next_chunk(spare.take()).unwrap() {
        for (bytes, item) in p.items() {
            let what = match item {
                Item::Skip => "skip".to_string(),
                Item::Cut(n) => format!("cut {n}"),
                Item::Line(t, Ok(l)) => format!("{t} => {l:?}"),
                Item::Line(t, Err(e)) => format!("{t} => error {e}"),
            };
            out.push((bytes, what));
        }
        spare = Some(p);
    }
    out
}

#[test]
fn lines_come_out_whole_in_order_however_the_reads_fall() {
    let log = "1 14:12:33.737933 close(3</tmp/x>) = 0 <0.000006>\n\n\
               strace: Process 2 attached\n\
               2 14:12:33.739258 read(4<pipe:[1]>,  <unfinished ...>\n\
               2 14:12:33.739283 <... read resumed>\"ab\", 9) = 2 <0.000018>\n\
               nonsense\n\
               1 14:12:33.740100 +++ exited with 0 +++";
    let whole = chunks(log.as_bytes(), usize::MAX);
    assert_eq!(whole.len(), 7);
    let bytes: u64 = whole.iter().map(|(b, _)| b).sum();
    assert_eq!(bytes, log.len() as u64);
    assert_eq!(whole[1].1, "skip");
    assert_eq!(whole[2].1, "skip");
    assert!(whole[0]
        .1
        .starts_with("1 14:12:33.737933 close(3</tmp/x>) = 0 <0.000006> => Call("));
    assert!(
        whole[5].1.ends_with("error no '(' after the syscall name"),
        "{}",
        whole[5].1
    );
    // Each line parsed as `parse_line` parses it alone.
    for (line, (_, got)) in log.lines().zip(&whole) {
        if let Ok(l) = parse::parse_line(line) {
            if !line.starts_with("strace:") {
                assert_eq!(got, &format!("{} => {l:?}", line.trim_end()));
            }
        }
    }
    for step in [1, 7, 64] {
        assert_eq!(chunks(log.as_bytes(), step), whole, "reads of {step} bytes");
    }
}

#[test]
fn a_line_over_the_cap_is_counted_not_held() {
    let mut data = b"1 getpid() = 1\n".to_vec();
    let long = MAX_LINE_BYTES + 10;
    data.extend(std::iter::repeat_n(b'x', long - 1));
    data.push(b'\n');
    data.extend_from_slice(b"1 getppid() = 1\n");
    // Exactly at the cap: held and parsed.
    data.extend(std::iter::repeat_n(b'y', MAX_LINE_BYTES - 1));
    data.push(b'\n');
    // Over the cap with no newline at the end.
    data.extend(std::iter::repeat_n(b'z', MAX_LINE_BYTES + 1));
    for step in [usize::MAX, 4096] {
        let got = chunks(&data, step);
        let kinds: Vec<String> = got
            .iter()
            .map(|(b, w)| format!("{b} {}", &w[..w.len().min(12)]))
            .collect();
        assert_eq!(
            kinds,
            [
                "15 1 getpid() =".to_string(),
                format!("{long} cut {long}"),
                "16 1 getppid() ".to_string(),
                format!("{MAX_LINE_BYTES} yyyyyyyyyyyy"),
                format!("{} cut {}", MAX_LINE_BYTES + 1, MAX_LINE_BYTES + 1),
            ],
            "reads of {step} bytes"
        );
    }
}

#[test]
fn invalid_utf8_is_replaced_but_counted_as_the_file_s_bytes() {
    let first = b"1 openat(AT_FDCWD, \"/t/\xff\xfe\", O_RDONLY) = 3 <0.000001>\n";
    let data = [&first[..], b"1 getpid() = 1\n"].concat();
    let got = chunks(&data, usize::MAX);
    assert_eq!(got.len(), 2);
    // The file's bytes, not the replacement characters' (3 bytes each).
    assert_eq!(got[0].0, first.len() as u64);
    assert!(got[0].1.contains("/t/\u{fffd}\u{fffd}"), "{}", got[0].1);
    assert_eq!(got[1].0, 15);
}

#[test]
fn spans_name_only_slices_of_their_base() {
    let base = "hello world";
    assert_eq!(
        Span::of(base, &base[6..]).map(|s| s.get(base)),
        Some("world")
    );
    assert_eq!(Span::of(base, "elsewhere"), None);
}
