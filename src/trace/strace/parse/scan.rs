//! Byte-level helpers of the line parser: trims and words that take the ASCII fast path (and
//! fall back to the Unicode-aware `str` methods on any other byte, so results never differ),
//! exact decimal parsing, and the table-driven scans over argument lists.

/// ASCII whitespace as `char::is_whitespace` sees it (U+0009..U+000D and the space).
#[inline]
pub(super) fn ascii_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// `s.trim_start()`, byte by byte while the text is ASCII (every strace line is).
#[inline]
pub(super) fn trim_start(s: &str) -> &str {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && ascii_ws(b[i]) {
        i += 1;
    }
    if b.get(i).is_some_and(|&c| c >= 0x80) {
        return s[i..].trim_start();
    }
    &s[i..]
}

/// `s.trim_end()`, byte by byte while the text is ASCII.
#[inline]
pub(crate) fn trim_end(s: &str) -> &str {
    let b = s.as_bytes();
    let mut i = b.len();
    while i > 0 && ascii_ws(b[i - 1]) {
        i -= 1;
    }
    if i > 0 && b[i - 1] >= 0x80 {
        return s[..i].trim_end();
    }
    &s[..i]
}

/// `s.trim()`, byte by byte while the text is ASCII.
#[inline]
pub(super) fn trim(s: &str) -> &str {
    trim_end(trim_start(s))
}

/// The first word of `s` (after leading whitespace) and the rest, from its first whitespace.
pub(super) fn split_word(s: &str) -> (&str, &str) {
    let s = trim_start(s);
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && !ascii_ws(b[i]) {
        if b[i] >= 0x80 {
            // Unicode whitespace is whitespace too: the general search.
            return match s.find(char::is_whitespace) {
                Some(i) => (&s[..i], &s[i..]),
                None => (s, ""),
            };
        }
        i += 1;
    }
    (&s[..i], &s[i..])
}

/// `10^k` for the `k` digits a fraction may have in [`decimal`].
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// `DIGITS[.DIGITS]` (at most 15 digits in all) as the same `f64` `str::parse` gives: the
/// digits form an integer below 2^53 and `10^k` is exact, so one IEEE division rounds
/// correctly, as `parse` does. `None` for anything else (callers then use `parse`).
#[inline]
pub(super) fn decimal(w: &str) -> Option<f64> {
    let (mut n, mut digits, mut frac, mut dot) = (0u64, 0usize, 0usize, false);
    for &c in w.as_bytes() {
        match c {
            b'0'..=b'9' => {
                n = n * 10 + u64::from(c - b'0');
                digits += 1;
                frac += usize::from(dot);
                if digits > 15 {
                    return None;
                }
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    (digits > 0).then(|| n as f64 / POW10[frac])
}

/// `w.parse::<f64>()`, through [`decimal`] when it can.
#[inline]
pub(super) fn parse_f64(w: &str) -> Option<f64> {
    decimal(w).or_else(|| w.parse().ok())
}

/// `HH:MM:SS.ffffff` or `SSSSSSSSSS.ffffff`, as seconds.
pub(super) fn parse_time(w: &str) -> Option<f64> {
    let b = w.as_bytes();
    // The common `-tt` shape, `HH:MM:SS.ffffff`, digit by digit (the general path below
    // gives the same value: each part is the same f64, summed the same way).
    if b.len() > 6
        && b[2] == b':'
        && b[5] == b':'
        && b[..2].iter().chain(&b[3..5]).all(u8::is_ascii_digit)
    {
        if let Some(sec) = decimal(&w[6..]) {
            let two = |i: usize| f64::from((b[i] - b'0') * 10 + (b[i + 1] - b'0'));
            return Some(two(0) * 3600.0 + two(3) * 60.0 + sec);
        }
    }
    if w.contains(':') {
        let mut parts = w.split(':');
        let h: f64 = parts.next()?.parse().ok()?;
        let m: f64 = parts.next()?.parse().ok()?;
        let s: f64 = parts.next()?.parse().ok()?;
        if parts.next().is_some() {
            return None;
        }
        Some(h * 3600.0 + m * 60.0 + s)
    } else if w.contains('.') && w.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        parse_f64(w)
    } else {
        None
    }
}

/// `PID  HH:MM:SS.ffffff ` at the start of `s` (at most 9 pid digits, ASCII blanks), read in
/// one pass: the pid, the time, and the rest after the blanks that follow it. `None` for any
/// other shape (the general path then reads it, with the same results for this shape).
#[inline]
pub(super) fn pid_and_time(s: &str) -> Option<(u32, f64, &str)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut pid = 0u32;
    while i < b.len() && b[i].is_ascii_digit() {
        if i == 9 {
            return None;
        }
        pid = pid * 10 + u32::from(b[i] - b'0');
        i += 1;
    }
    if i == 0 || !b.get(i).is_some_and(|&c| ascii_ws(c)) {
        return None;
    }
    while i < b.len() && ascii_ws(b[i]) {
        i += 1;
    }
    let t = i;
    if b.len() < t + 9 || b[t + 2] != b':' || b[t + 5] != b':' {
        return None;
    }
    // The word ends at 15 bytes in the usual shape (`HH:MM:SS.ffffff `); else it is scanned.
    let usual = b.len() > t + 15 && b[t + 8] == b'.' && ascii_ws(b[t + 15]);
    let mut j = if usual { t + 15 } else { t };
    while j < b.len() && !ascii_ws(b[j]) {
        if b[j] >= 0x80 {
            return None;
        }
        j += 1;
    }
    let time = parse_time(&s[t..j])?;
    while j < b.len() && ascii_ws(b[j]) {
        j += 1;
    }
    if b.get(j).is_some_and(|&c| c >= 0x80) {
        return None;
    }
    Some((pid, time, &s[j..]))
}

/// `-?DIGITS` (at most 18 digits) as an `i64`, the value `str::parse` gives; `None` for any
/// other shape (callers then use `parse`).
#[inline]
pub(super) fn small_int(w: &str) -> Option<i64> {
    let (neg, digits) = match w.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut n = 0i64;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i64::from(c - b'0');
    }
    Some(if neg { -n } else { n })
}

/// Index of the `"` closing the string whose opening quote is at `b[open]` (or `b.len()` if
/// the line ends first); backslash escapes are skipped.
#[inline]
pub(super) fn string_end(b: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while i < b.len() {
        match memchr::memchr2(b'"', b'\\', &b[i..]) {
            None => return b.len(),
            Some(k) if b[i + k] == b'"' => return i + k,
            Some(k) => i += k + 2,
        }
    }
    i
}

/// The bytes the argument scanner stops at: quotes, brackets and commas.
const fn stops() -> [bool; 256] {
    let mut t = [false; 256];
    let s = b"\"()[]{}";
    let mut i = 0;
    while i < s.len() {
        t[s[i] as usize] = true;
        i += 1;
    }
    t[b',' as usize] = true;
    t
}

/// Where [`super::Args`] stops.
pub(super) static ARG_STOPS: [bool; 256] = stops();

/// The index of the next byte of `b` from `i` that `table` marks, or `b.len()`.
#[inline]
pub(super) fn skip_to(b: &[u8], mut i: usize, table: &[bool; 256]) -> usize {
    while i < b.len() && !table[b[i] as usize] {
        i += 1;
    }
    i
}

/// `r.rfind("> <")`, searching back from each `<`.
#[inline]
pub(super) fn last_gap(r: &str) -> Option<usize> {
    let b = r.as_bytes();
    memchr::memrchr_iter(b'<', b).find_map(|i| (i >= 2 && &b[i - 2..i] == b"> ").then(|| i - 2))
}

/// `line.trim_end_matches(['\n', '\r'])`.
#[inline]
pub(super) fn trim_newlines(line: &str) -> &str {
    let b = line.as_bytes();
    let mut i = b.len();
    while i > 0 && matches!(b[i - 1], b'\n' | b'\r') {
        i -= 1;
    }
    &line[..i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_is_the_float_parser_where_it_answers() {
        let mut cases: Vec<String> = [
            "0",
            "0.0",
            "33.739258",
            "0.000094",
            "1.5",
            "33.",
            ".5",
            "51153.739258",
            "999999999999999",
            "0.1",
            "0.3",
            "123456.789012345",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every microsecond of a minute, as `-tt` and `-T` print them.
        cases.extend(
            (0..60_000_000u64)
                .step_by(7_919)
                .map(|us| format!("{}.{:06}", us / 1_000_000, us % 1_000_000)),
        );
        for c in &cases {
            let want: f64 = c.parse().unwrap();
            assert_eq!(decimal(c), Some(want), "{c}");
        }
        // `None` from `decimal` (the last, 16 digits, is a `-ttt` time); `parse_f64` still
        // gives what `parse` does.
        for bad in [
            "",
            ".",
            "1.2.3",
            "1e3",
            "+1",
            "-1",
            "1 ",
            "1234567890123456",
            "inf",
            "1764590400.123456",
        ] {
            assert_eq!(decimal(bad), None, "{bad}");
            assert_eq!(parse_f64(bad), bad.parse().ok(), "{bad}");
        }
        assert_eq!(
            parse_time("14:12:33.739258"),
            Some(14.0 * 3600.0 + 12.0 * 60.0 + "33.739258".parse::<f64>().unwrap())
        );
    }

    #[test]
    fn ascii_fast_paths_agree_with_str() {
        for s in [
            "  a b ",
            "\u{a0}x\u{a0}",
            "x\u{2003}y",
            "\t\x0bz\x0c",
            "",
            "é",
            " é ",
        ] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
            assert_eq!(trim_start(s), s.trim_start(), "{s:?}");
            assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
            let t = s.trim_start();
            let want = match t.find(char::is_whitespace) {
                Some(i) => (&t[..i], &t[i..]),
                None => (t, ""),
            };
            assert_eq!(split_word(s), want, "{s:?}");
        }
        assert_eq!(trim_newlines("a\r\n\n"), "a");
        assert_eq!(last_gap("/x> <0.1>"), "/x> <0.1>".rfind("> <"));
        assert_eq!(last_gap("a> <b> <c"), Some(5));
        assert_eq!(last_gap("<a>"), None);
    }

    #[test]
    fn pid_and_time_is_the_general_path_for_its_shape() {
        // The general path: a pid word of digits, then a time word, each followed by blanks.
        let general = |s: &str| -> Option<(u32, f64, String)> {
            let (w, rest) = split_word(s);
            let pid: u32 = w.parse().ok()?;
            let (w, rest) = split_word(trim_start(rest));
            Some((pid, parse_time(w)?, trim_start(rest).to_string()))
        };
        for s in [
            "8329  14:12:33.737933 openat(AT_FDCWD, \"/x\")",
            "1 00:00:00.000001 getpid()",
            "123456789\t23:59:59.999999\tx",
            "42 14:12:33.7 y",
            "42 14:12:33.737933",
        ] {
            let fast = pid_and_time(s).map(|(p, t, r)| (p, t, r.to_string()));
            assert!(fast.is_some(), "{s:?}");
            assert_eq!(fast, general(s), "{s:?}");
        }
        // Other shapes go to the general path.
        for s in [
            "1234567890 14:12:33.737933 x",
            "[pid 3] 14:12:33.737933 x",
            "8329 1700000000.737933 x",
            "8329 14:12:33.7379\u{e9} x",
            "8329 14:12:33.737933 \u{a0}x",
            "8329x 14:12:33.737933 x",
            "8329",
            "14:12:33.737933 x",
        ] {
            assert_eq!(pid_and_time(s), None, "{s:?}");
        }
    }

    #[test]
    fn small_int_is_the_integer_parser_where_it_answers() {
        for w in [
            "0",
            "3",
            "-1",
            "-38",
            "123456789012345678",
            "-123456789012345678",
        ] {
            assert_eq!(small_int(w), w.parse::<i64>().ok(), "{w}");
        }
        for w in [
            "",
            "-",
            "+5",
            "1234567890123456789",
            "3a",
            "0x10",
            "?",
            "--1",
            "٣",
        ] {
            assert_eq!(small_int(w), None, "{w}");
        }
    }
}
