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
