//! The guest ↔ host protocol on the serial console.
//!
//! The guest (`tscope` as `/init`) prints each result between two marker lines:
//!
//! ```text
//! =====TSCOPE-BEGIN probe=====
//! {"schema_version":1,...}
//! =====TSCOPE-END probe=====
//! ```
//!
//! and `=====TSCOPE-DONE=====` after the last one. Everything else on the console (kernel
//! messages, firmware noise, `\r`) is ignored. A section that begins but never ends means the
//! guest stopped or was killed mid-print: that is an error naming the section, never a silently
//! shortened result.

use std::collections::BTreeMap;

/// What opens a section on the console (`=====TSCOPE-BEGIN NAME=====`).
pub(crate) const BEGIN: &str = "=====TSCOPE-BEGIN ";
const END: &str = "=====TSCOPE-END ";
const TAIL: &str = "=====";
/// Printed by the guest after its last section.
pub(crate) const DONE: &str = "=====TSCOPE-DONE=====";

/// The line that opens section `name`.
pub(crate) fn begin(name: &str) -> String {
    format!("{BEGIN}{name}{TAIL}")
}

/// The line that closes section `name`.
pub(crate) fn end(name: &str) -> String {
    format!("{END}{name}{TAIL}")
}

/// Why a console transcript could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SerialError {
    #[error(
        "guest output truncated inside section '{0}' (no '=====TSCOPE-END {0}=====' line): \
         the guest stopped or was killed while printing it"
    )]
    Truncated(String),
    #[error("section '{0}' appears twice in the guest output")]
    Duplicate(String),
}

/// The sections of one transcript, by name, and whether the guest said it was done.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Transcript {
    pub sections: BTreeMap<String, String>,
    pub done: bool,
}

impl Transcript {
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.sections.get(name).map(String::as_str)
    }

    /// Section `name` read as JSON; `None` where the guest printed no such section. A kernel
    /// message the console printed inside the section (a `[ seconds.micros] …` line that printk
    /// wrote between two pieces of the guest's write, as a loaded host's soft-lockup warning
    /// does at `KERN_EMERG`, which no `loglevel` silences) is taken out when the body does not
    /// parse as printed; what remains must then parse whole.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(
        &self,
        name: &str,
    ) -> Option<Result<T, serde_json::Error>> {
        let body = self.get(name)?;
        Some(
            serde_json::from_str(body).or_else(|e| match without_kernel_messages(body) {
                Some(clean) => serde_json::from_str(&clean).map_err(|_| e),
                None => Err(e),
            }),
        )
    }
}

/// `body` without the kernel messages printk wrote into it: each runs from its `[` timestamp
/// prefix (`[    12.345678] `) to the end of its line, and the guest's text goes on after
/// that line's end. `None` where there is none.
fn without_kernel_messages(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    let mut found = false;
    while let Some(at) = kernel_message_at(rest) {
        found = true;
        out.push_str(&rest[..at]);
        rest = rest[at..].split_once('\n').map_or("", |(_, after)| after);
    }
    out.push_str(rest);
    found.then_some(out)
}

/// Where the first printk timestamp prefix (`[`, spaces, digits, `.`, six digits, `]`) in `s`
/// starts.
fn kernel_message_at(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = s[from..].find('[').map(|i| i + from) {
        let mut j = i + 1;
        while bytes.get(j) == Some(&b' ') {
            j += 1;
        }
        let digits = |j: &mut usize| {
            let start = *j;
            while bytes.get(*j).is_some_and(u8::is_ascii_digit) {
                *j += 1;
            }
            *j - start
        };
        if digits(&mut j) > 0 && bytes.get(j) == Some(&b'.') {
            j += 1;
            if digits(&mut j) == 6 && bytes.get(j) == Some(&b']') {
                return Some(i);
            }
        }
        from = i + 1;
    }
    None
}

/// The marker name on `line`, if it carries the marker `prefix` (kernel messages can share a
/// line with a marker when printk interrupts a write, so the marker need not start the line).
fn marker<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = &line[line.find(prefix)? + prefix.len()..];
    let name = &rest[..rest.find(TAIL)?];
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some(name)
}

/// Splits a console transcript into its sections.
pub(crate) fn parse(console: &str) -> Result<Transcript, SerialError> {
    let mut t = Transcript::default();
    let mut open: Option<(String, Vec<&str>)> = None;
    for raw in console.split('\n') {
        let line = raw.trim_end_matches('\r');
        if line.contains(DONE) {
            t.done = true;
        }
        match open.take() {
            None => {
                if let Some(name) = marker(line, BEGIN) {
                    open = Some((name.to_string(), Vec::new()));
                }
            }
            Some((name, mut body)) => {
                if marker(line, END) == Some(name.as_str()) {
                    if t.sections.contains_key(&name) {
                        return Err(SerialError::Duplicate(name));
                    }
                    t.sections.insert(name, body.join("\n"));
                } else {
                    body.push(line);
                    open = Some((name, body));
                }
            }
        }
    }
    match open {
        Some((name, _)) => Err(SerialError::Truncated(name)),
        None => Ok(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_message_inside_a_section_is_taken_out_of_its_json() {
        // printk wrote a whole line between two pieces of the guest's write.
        let console = format!(
            "{}\n{{\"a\":[1,2],\"b\":\"x[   31.123456] watchdog: BUG: soft lockup - CPU#1 \
             stuck for 22s! [init:1]\r\ny\"}}\n[   31.200000] Modules linked in:\n{}\n",
            begin("probe"),
            end("probe")
        );
        let t = parse(&console).unwrap();
        let v: serde_json::Value = t.json("probe").unwrap().unwrap();
        assert_eq!(v, serde_json::json!({"a": [1, 2], "b": "xy"}));
        // A body that parses as printed is taken as printed, brackets and all.
        let kept = format!("{}\n\"[ 1.000000] \"\n{}\n", begin("s"), end("s"));
        let t = parse(&kept).unwrap();
        assert_eq!(t.json::<String>("s").unwrap().unwrap(), "[ 1.000000] ");
        // What still does not parse is an error, and a missing section is None.
        let bad = format!("{}\n{{\"a\":\n{}\n", begin("s"), end("s"));
        assert!(parse(&bad)
            .unwrap()
            .json::<serde_json::Value>("s")
            .unwrap()
            .is_err());
        assert!(parse(&bad)
            .unwrap()
            .json::<serde_json::Value>("t")
            .is_none());
    }

    #[test]
    fn finds_sections_among_kernel_noise() {
        let console = "\
SeaBIOS (version 1.16)\r\n\
[    0.000000] Linux version 6.1.0\r\n\
=====TSCOPE-BEGIN probe=====\r\n\
{\"a\":1}\r\n\
=====TSCOPE-END probe=====\r\n\
[    1.2] random: crng init done\r\n\
[    1.3] clocksource: Switched to clocksource acpi_pm =====TSCOPE-BEGIN clocksource=====\n\
acpi_pm\n\
=====TSCOPE-END clocksource=====\n\
=====TSCOPE-DONE=====\n\
[    2.0] reboot: Power down\n";
        let t = parse(console).unwrap();
        assert_eq!(t.get("probe"), Some("{\"a\":1}"));
        assert_eq!(t.get("clocksource"), Some("acpi_pm"));
        assert!(t.done);
        assert_eq!(t.sections.len(), 2);
    }

    #[test]
    fn keeps_multi_line_bodies_and_empty_ones() {
        let text = format!(
            "{}\nl1\nl2\n{}\n{}\n{}\n",
            begin("x"),
            end("x"),
            begin("e"),
            end("e")
        );
        let t = parse(&text).unwrap();
        assert_eq!(t.get("x"), Some("l1\nl2"));
        assert_eq!(t.get("e"), Some(""));
        assert!(!t.done);
    }

    #[test]
    fn truncated_output_is_a_clear_error() {
        let text = format!("{}\n{{\"schema_version\":1,\"tool\"", begin("detect"));
        let err = parse(&text).unwrap_err();
        assert_eq!(err, SerialError::Truncated("detect".into()));
        assert!(err
            .to_string()
            .contains("truncated inside section 'detect'"));
        // An END for another section does not close the open one.
        let text = format!("{}\nbody\n{}\n", begin("a"), end("b"));
        assert_eq!(parse(&text), Err(SerialError::Truncated("a".into())));
    }

    #[test]
    fn duplicates_and_empty_transcripts() {
        let s = format!("{}\n1\n{}\n", begin("p"), end("p"));
        assert_eq!(
            parse(&format!("{s}{s}")),
            Err(SerialError::Duplicate("p".into()))
        );
        assert_eq!(parse("").unwrap(), Transcript::default());
        assert_eq!(
            parse("=====TSCOPE-BEGIN =====\n").unwrap(),
            Transcript::default()
        );
    }
}
