//! One line of `strace -f -tt -T -y` output, parsed without allocating.
//!
//! Shapes handled (pid prefix as `1234 ` with `-o FILE`, `[pid 1234] ` on a terminal, or none
//! without `-f`; time as `HH:MM:SS.ffffff` with `-tt`, or seconds with `-ttt`):
//!
//! ```text
//! 8329  14:12:33.737933 openat(AT_FDCWD</tmp>, "/tmp/x.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/x.txt> <0.000094>
//! 8345  14:12:33.739258 close(4<pipe:[57334]> <unfinished ...>
//! 8345  14:12:33.739283 <... close resumed>) = 0 <0.000018>
//! 8329  14:12:33.740000 --- SIGCHLD {si_signo=SIGCHLD, ...} ---
//! 8329  14:12:33.740100 +++ exited with 0 +++
//! 8329  14:12:33.740200 openat(AT_FDCWD, "/nope", O_RDONLY) = -1 ENOENT (No such file or directory) <0.000009>
//! ```

mod scan;

use std::borrow::Cow;
use std::fmt;

pub(crate) use scan::trim_end;
use scan::{
    ascii_ws, last_gap, parse_f64, parse_time, skip_to, split_word, string_end, trim,
    trim_newlines, trim_start, ARG_STOPS,
};

/// A parsed line.
#[derive(Debug, Clone, PartialEq)]
pub enum Line<'a> {
    /// A complete call.
    Call(Call<'a>),
    /// The first half of a call interrupted by another task's output.
    Unfinished {
        pid: Option<u32>,
        time_s: Option<f64>,
        name: &'a str,
        args: &'a str,
    },
    /// The second half, as a call whose `args` are only what follows `<... name resumed>` and
    /// whose `time_s` is when it resumed ([`super::Joiner`] joins it to its first half).
    Resumed(Call<'a>),
    /// `--- SIGxxx {...} ---`.
    Signal {
        pid: Option<u32>,
        time_s: Option<f64>,
        text: &'a str,
    },
    /// `+++ exited with N +++` / `+++ killed by SIGxxx +++`.
    Exit {
        pid: Option<u32>,
        time_s: Option<f64>,
        text: &'a str,
    },
}

/// One syscall, borrowed from the line it was parsed from (or, for a call joined from two
/// halves, from the [`super::Joiner`]): the one call type from parsing through joining to
/// import. Nothing is copied, so the common case allocates nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct Call<'a> {
    pub pid: Option<u32>,
    /// Start time, seconds (since midnight with `-tt`, since the epoch with `-ttt`).
    pub time_s: Option<f64>,
    pub name: &'a str,
    /// The raw argument list between the parentheses (both halves, for a joined call).
    pub args: &'a str,
    pub ret: Ret<'a>,
    pub duration_s: Option<f64>,
}

/// The return part: `= 3</tmp/x.txt>`, `= -1 ENOENT (...)`, `= ?`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Ret<'a> {
    /// The value; `None` for `?` (exit, execve in the child).
    pub value: Option<i64>,
    /// The `-y` annotation of a returned fd (`/tmp/x.txt`, `pipe:[57334]`).
    pub path: Option<&'a str>,
    /// The errno name of a failed call.
    pub errno: Option<&'a str>,
}

/// Why a line did not parse.
#[derive(Debug, Clone, PartialEq)]
pub struct LineError(pub &'static str);

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Index of the `)` closing the argument list that starts at `s[0]` (just after `(`), skipping
/// strings and nested parentheses; `None` if the line ends first. Only `"`, `(` and `)` are
/// looked at (a vectorised search jumps between them): in strace's output brackets and braces
/// hold balanced parentheses (`{st_rdev=makedev(0x88, 0), ...}`), so they need no depth of
/// their own here ([`Args`] does track them, for commas).
pub fn closing_paren(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0u32;
    let mut i = 0;
    loop {
        i += memchr::memchr3(b'"', b'(', b')', &b[i..])?;
        match b[i] {
            b'"' => i = string_end(b, i),
            b'(' => depth += 1,
            _ if depth == 0 => return Some(i),
            _ => depth -= 1,
        }
        i += 1;
        if i >= b.len() {
            return None;
        }
    }
}

/// Parses what follows the closing paren: ` = RET[<path>] [ERRNO (text)] [<dur>]`.
fn parse_tail(t: &str) -> Result<(Ret<'_>, Option<f64>), LineError> {
    let t = trim(t);
    let Some(rest) = t.strip_prefix('=') else {
        return Err(LineError("no '=' after the argument list"));
    };
    let rest = trim_start(rest);
    let mut ret = Ret::default();
    // The value ends at whitespace or at the '<' of an fd annotation.
    let end = match rest
        .bytes()
        .position(|c| ascii_ws(c) || c == b'<' || c >= 0x80)
    {
        Some(i) if rest.as_bytes()[i] >= 0x80 => rest
            .find(|c: char| c.is_whitespace() || c == '<')
            .unwrap_or(rest.len()),
        Some(i) => i,
        None => rest.len(),
    };
    let (value, mut rest) = rest.split_at(end);
    ret.value = if value == "?" {
        None
    } else if let Some(hex) = value.strip_prefix("0x") {
        Some(u64::from_str_radix(hex, 16).map_err(|_| LineError("bad hex return value"))? as i64)
    } else if let Some(v) = scan::small_int(value) {
        Some(v)
    } else {
        Some(value.parse().map_err(|_| LineError("bad return value"))?)
    };
    if let Some(r) = rest.strip_prefix('<') {
        // `3</tmp/x.txt>`: the path may itself contain '>' only in odd cases; take the
        // annotation up to the last '>' before whitespace + '<' (the duration) or the end.
        let close = match last_gap(r) {
            Some(i) => i,
            None => memchr::memrchr(b'>', r.as_bytes())
                .ok_or(LineError("unterminated fd annotation"))?,
        };
        ret.path = Some(&r[..close]);
        rest = &r[close + 1..];
    }
    let mut rest = trim_start(rest);
    let mut duration = None;
    if rest.ends_with('>') {
        if let Some(open) = memchr::memrchr(b'<', rest.as_bytes()) {
            duration = parse_f64(&rest[open + 1..rest.len() - 1]);
            if duration.is_some() {
                rest = trim_end(&rest[..open]);
            }
        }
    }
    if ret.value.is_some_and(|v| v < 0) {
        let (errno, _) = split_word(rest);
        if errno.starts_with('E') {
            ret.errno = Some(errno);
        }
    }
    Ok((ret, duration))
}

/// Parses one line.
pub fn parse_line(line: &str) -> Result<Line<'_>, LineError> {
    let mut s = trim_start(trim_newlines(line));
    let (mut pid, mut time_s) = (None, None);
    if let Some((p, t, rest)) = scan::pid_and_time(s) {
        // The usual `PID  HH:MM:SS.ffffff ` of `strace -f -tt -o FILE`, in one pass.
        (pid, time_s, s) = (Some(p), Some(t), rest);
    } else if let Some(r) = s.strip_prefix("[pid") {
        let close = r
            .find(']')
            .ok_or(LineError("unterminated [pid N] prefix"))?;
        pid = Some(
            trim(&r[..close])
                .parse()
                .map_err(|_| LineError("bad pid"))?,
        );
        s = trim_start(&r[close + 1..]);
    } else {
        let (w, rest) = split_word(s);
        if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) {
            pid = Some(w.parse().map_err(|_| LineError("bad pid"))?);
            s = trim_start(rest);
        }
    }
    if time_s.is_none() {
        let (w, rest) = split_word(s);
        if let Some(t) = parse_time(w) {
            time_s = Some(t);
            s = trim_start(rest);
        }
    }
    if let Some(r) = s.strip_prefix("---") {
        return Ok(Line::Signal {
            pid,
            time_s,
            text: r.trim_end_matches('-').trim(),
        });
    }
    if let Some(r) = s.strip_prefix("+++") {
        return Ok(Line::Exit {
            pid,
            time_s,
            text: r.trim_end_matches('+').trim(),
        });
    }
    if let Some(r) = s.strip_prefix("<...") {
        let (name, rest) = split_word(r);
        let rest = trim_start(rest);
        let Some(rest) = rest.strip_prefix("resumed>") else {
            return Err(LineError("'<...' without 'resumed>'"));
        };
        let close = closing_paren(rest).ok_or(LineError("resumed call without ')'"))?;
        let (ret, duration_s) = parse_tail(&rest[close + 1..])?;
        return Ok(Line::Resumed(Call {
            pid,
            time_s,
            name,
            args: &rest[..close],
            ret,
            duration_s,
        }));
    }
    // The name: identifier bytes up to the `(` (one pass); anything else takes the general
    // search, for its error.
    let ident = s
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'));
    let open = match ident {
        Some(i) if i > 0 && s.as_bytes()[i] == b'(' => i,
        _ => {
            let open = memchr::memchr(b'(', s.as_bytes())
                .ok_or(LineError("no '(' after the syscall name"))?;
            let name = &s[..open];
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(LineError("the syscall name is not an identifier"));
            }
            open
        }
    };
    let name = &s[..open];
    let body = &s[open + 1..];
    if let Some(args) = body.strip_suffix("<unfinished ...>") {
        return Ok(Line::Unfinished {
            pid,
            time_s,
            name,
            args: trim_end(args).trim_end_matches(','),
        });
    }
    let close = closing_paren(body).ok_or(LineError("no ')' closing the argument list"))?;
    let (ret, duration_s) = parse_tail(&body[close + 1..])?;
    Ok(Line::Call(Call {
        pid,
        time_s,
        name,
        args: &body[..close],
        ret,
        duration_s,
    }))
}

/// Splits an argument list at top-level commas (outside strings and brackets).
pub fn split_args(args: &str) -> Vec<&str> {
    Args::new(args).collect()
}

/// The arguments of a list one by one, without allocating: scanning stops at the argument
/// asked for, so `Args::new(a).next()` reads only up to the first top-level comma.
#[derive(Debug, Clone)]
pub struct Args<'a> {
    s: &'a str,
    pos: usize,
    done: bool,
}

impl<'a> Args<'a> {
    pub fn new(args: &'a str) -> Self {
        let done = trim(args).is_empty();
        Args {
            s: args,
            pos: 0,
            done,
        }
    }
}

impl<'a> Iterator for Args<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let b = self.s.as_bytes();
        let start = self.pos;
        if let Some(end) = annotated_fd_end(b, start) {
            // `3</path>` or `AT_FDCWD</dir>`: one search for its `>`.
            self.pos = end + 1;
            self.done = end >= b.len();
            return Some(trim(&self.s[start..end.min(b.len())]));
        }
        let (mut depth, mut i) = (0i32, start);
        loop {
            i = skip_to(b, i, &ARG_STOPS);
            if i >= b.len() {
                break;
            }
            match b[i] {
                b'"' => i = string_end(b, i),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    self.pos = i + 1;
                    return Some(trim(&self.s[start..i]));
                }
                _ => {}
            }
            i += 1;
        }
        self.done = true;
        Some(trim(&self.s[start.min(self.s.len())..]))
    }
}

/// Where the argument at `b[start..]` ends (the index of its `,`, or `b.len()`) when it is
/// an fd with its `-y` annotation, `N<…>` or `AT_FDCWD<…>` (after blanks), whose first `>`
/// is followed by a comma or the end: strace escapes `<` and `>` in the paths it annotates
/// (`\76`), though not commas, so the first `>` closes the path and a comma inside it is not
/// a separator. `None` for anything else (sockets print `->` unescaped: `3<TCP:[a->b]>`),
/// which the general scan reads.
#[inline]
fn annotated_fd_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while b.get(i).is_some_and(|&c| c == b' ') {
        i += 1;
    }
    let digits = b[i.min(b.len())..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    i += if digits > 0 {
        digits
    } else if b[i.min(b.len())..].starts_with(b"AT_FDCWD") {
        8
    } else {
        return None;
    };
    if b.get(i) != Some(&b'<') {
        return None;
    }
    let close = i + 1 + memchr::memchr(b'>', &b[i + 1..])?;
    let mut end = close + 1;
    while b.get(end).is_some_and(|&c| c == b' ') {
        end += 1;
    }
    (end == b.len() || b[end] == b',').then_some(end)
}

/// An fd argument with its `-y` annotation: `3</tmp/x.txt>` → `(3, "/tmp/x.txt")`;
/// `AT_FDCWD</tmp>` → `(-100, "/tmp")`.
pub fn fd_arg(arg: &str) -> Option<(i32, Option<&str>)> {
    let (num, path) = match memchr::memchr(b'<', arg.as_bytes()) {
        Some(i) if arg.ends_with('>') => (&arg[..i], Some(&arg[i + 1..arg.len() - 1])),
        _ => (arg, None),
    };
    let fd = if num == "AT_FDCWD" {
        libc::AT_FDCWD
    } else {
        num.parse().ok()?
    };
    Some((fd, path))
}

/// A quoted string argument (borrowed when it has no escapes), unescaped as far as paths need (`\"`, `\\`, `\n`, `\t`, octal
/// and hex escapes); `None` if `arg` is not a string. A trailing `...` (truncated) is kept out.
pub fn string_arg(arg: &str) -> Option<Cow<'_, str>> {
    let arg = arg.strip_suffix("...").unwrap_or(arg);
    let inner = arg.strip_prefix('"')?.strip_suffix('"')?;
    if memchr::memchr(b'\\', inner.as_bytes()).is_none() {
        // Nothing to unescape (nearly every path): the text itself.
        return Some(Cow::Borrowed(inner));
    }
    let mut out = Vec::with_capacity(inner.len());
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            i += 1;
            match b[i] {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'x' if i + 2 < b.len() => {
                    // Bytes, not a str slice: the two bytes after `\x` may be anything.
                    let hex = |c: u8| (c as char).to_digit(16);
                    let v = hex(b[i + 1])? * 16 + hex(b[i + 2])?;
                    out.push(v as u8);
                    i += 2;
                }
                d @ b'0'..=b'7' => {
                    let mut v = u32::from(d - b'0');
                    let mut n = 1;
                    while n < 3 && i + 1 < b.len() && (b'0'..=b'7').contains(&b[i + 1]) {
                        i += 1;
                        v = v * 8 + u32::from(b[i] - b'0');
                        n += 1;
                    }
                    out.push(v as u8);
                }
                c => out.push(c),
            }
        } else {
            out.push(b[i]);
        }
        i += 1;
    }
    Some(Cow::Owned(String::from_utf8_lossy(&out).into_owned()))
}

/// The longest strace line read whole: 1 MiB. strace abbreviates strings to 32 bytes unless
/// `-s` says otherwise, so a longer line is a huge `-s` or not an strace log; it is skipped
/// and counted as malformed instead of being held in memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests;
