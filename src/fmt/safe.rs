//! Text from a file or the command line (a profile's `machine.cpu_model`, a file name, a
//! `--labels` value) made safe to print in the human forms: every control character (ESC,
//! BEL, CR, DEL, the C1 range), every bidirectional control (U+202E RIGHT-TO-LEFT OVERRIDE and
//! its kin) and the Unicode line and paragraph separators are written as a visible escape
//! (`\x1b`, `\u{202e}`), so a file cannot move the cursor, retitle a terminal, reorder what is
//! read, or split a table row. Applied once, where [`Block`](crate::export::Block)s and tables are laid
//! out; CSV quotes instead (RFC 4180) and JSON escapes (serde).

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must not reach a terminal or a Markdown page raw (newlines aside).
fn hostile_char(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

fn escape(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    let bad = |c: char| hostile_char(c) && !(keep_newlines && c == '\n');
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if !bad(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// One line of a human form (a table cell, a heading, a list item): every control or bidi character
/// escaped, newlines included.
pub fn cell(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// Serialised JSON made safe for a terminal: serde escapes C0 controls already; DEL, the C1
/// range, the bidirectional controls and the line separators inside strings become `\uXXXX`
/// escapes too (still the same JSON value). Outside strings JSON is ASCII, so the text is
/// scanned whole.
pub fn json(s: &str) -> Cow<'_, str> {
    if !s.chars().any(hostile_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            // Pretty-printing's own line breaks.
            '\n' => out.push('\n'),
            c if hostile_char(c) => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{:04x}", unit);
                }
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Preformatted text of several lines: the same, but newlines kept.
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_become_visible_escapes() {
        assert!(matches!(cell("AMD EPYC 7B13 µs"), Cow::Borrowed(_)));
        assert_eq!(
            cell("a\x1b]0;owned\x07b\nc\u{202e}d\te\r\u{9b}"),
            "a\\x1b]0;owned\\x07b\\nc\\u{202e}d\\te\\r\\x9b"
        );
        assert_eq!(text("one\ntwo\x1b[2J\n"), "one\ntwo\\x1b[2J\n");
        let j = serde_json::to_string(&"a\u{202e}b\u{7f}\u{9b}\x1b").unwrap();
        let safe = json(&j);
        assert_eq!(safe, "\"a\\u202eb\\u007f\\u009b\\u001b\"");
        assert_eq!(
            serde_json::from_str::<String>(&safe).unwrap(),
            "a\u{202e}b\u{7f}\u{9b}\x1b"
        );
        assert_eq!(
            cell("\u{2066}x\u{2069}\u{2028}"),
            "\\u{2066}x\\u{2069}\\u{2028}"
        );
    }
}
