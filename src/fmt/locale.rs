//! ASCII output when the locale is not UTF-8. tscope writes UTF-8 (`µs`, `−`, `…`, `±`, `≤`);
//! under `LC_ALL=C` or a Latin-1 locale those bytes show as mojibake, so the human forms and
//! the error line fall back to ASCII spellings (`us`, `-`, `...`, `+/-`, `<=`) and any other
//! non-ASCII character becomes `?`. The locale is read as the C library reads it: the first
//! of `LC_ALL`, `LC_CTYPE`, `LANG` that is set and not empty; it is UTF-8 when its name says
//! so (`C.UTF-8`, `en_US.utf8`). With none of them set, output stays UTF-8 (Rust's strings,
//! and what every current terminal expects), where the C library would assume "C".

use std::borrow::Cow;

/// Whether `name` (a locale variable's value) is a UTF-8 locale.
fn is_utf8(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("utf-8") || n.contains("utf8")
}

/// Whether output may hold UTF-8, from the environment (see the module doc).
pub fn utf8_output() -> bool {
    utf8_from(|k| std::env::var(k).ok())
}

/// [`utf8_output`] with the environment given (tests).
pub fn utf8_from(var: impl Fn(&str) -> Option<String>) -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| var(k).filter(|v| !v.is_empty()))
        .is_none_or(|v| is_utf8(&v))
}

/// The ASCII spelling of one character tscope prints, if it has one.
fn spell(c: char) -> Option<&'static str> {
    Some(match c {
        'µ' | 'μ' => "u",
        '−' | '–' | '‐' => "-",
        '—' => "--",
        '…' => "...",
        '±' => "+/-",
        '×' => "x",
        '≤' => "<=",
        '≥' => ">=",
        '≠' => "!=",
        '≈' => "~",
        '→' => "->",
        '←' => "<-",
        '·' | '•' => "*",
        '‘' | '’' => "'",
        '“' | '”' => "\"",
        '°' => " deg",
        '√' => "sqrt",
        _ => return None,
    })
}

/// `s` in ASCII: the spellings above, `?` for any other non-ASCII character.
pub fn to_ascii(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match (c.is_ascii(), spell(c)) {
            (true, _) => out.push(c),
            (false, Some(a)) => out.push_str(a),
            (false, None) => out.push('?'),
        }
    }
    Cow::Owned(out)
}

/// `s` as the locale can show it: unchanged under UTF-8, else [`to_ascii`].
pub fn for_locale(s: &str) -> Cow<'_, str> {
    if utf8_output() {
        Cow::Borrowed(s)
    } else {
        to_ascii(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_locale_variable_set_decides() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(utf8_from(env(&[])));
        assert!(!utf8_from(env(&[("LC_ALL", "C"), ("LANG", "C.UTF-8")])));
        assert!(utf8_from(env(&[
            ("LC_ALL", ""),
            ("LC_CTYPE", "en_US.utf8")
        ])));
        assert!(!utf8_from(env(&[("LANG", "POSIX")])));
        assert!(!utf8_from(env(&[
            ("LC_CTYPE", "de_DE.ISO-8859-1"),
            ("LANG", "C.UTF-8")
        ])));
    }

    #[test]
    fn ascii_spellings() {
        assert_eq!(to_ascii("2.50 µs ± 0.1 − 3…"), "2.50 us +/- 0.1 - 3...");
        assert_eq!(to_ascii("a ≤ b — c → 日"), "a <= b -- c -> ?");
        assert!(matches!(to_ascii("plain"), Cow::Borrowed(_)));
    }
}
