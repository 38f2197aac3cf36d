//! `tscope record`'s one line: where the log is and what reads it (the log itself is the
//! result; the line goes to stderr).

use std::path::Path;

use crate::trace::strace::record::Recording;

/// What `record` says when strace is done (or was stopped).
pub fn recording(r: &Recording, out: &Path) -> String {
    if r.stopped {
        format!(
            "interrupted: strace and the traced command were killed; {} lines kept in {}",
            r.lines,
            out.display()
        )
    } else {
        format!(
            "recorded {} lines in {}; estimate with: tscope simulate --strace {}",
            r.lines,
            out.display(),
            out.display()
        )
    }
}
