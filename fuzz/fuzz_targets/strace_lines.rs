//! Any bytes as strace output, line by line through the joiner, and whole through the
//! importer (fd tables, paths, inodes): errors, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut joiner = tscope::trace::strace::Joiner::new();
    for line in text.lines() {
        let _ = joiner.feed(line);
        if let Ok(tscope::trace::strace::parse::Line::Call(c)) = tscope::trace::strace::parse::parse_line(line) {
            for a in tscope::trace::strace::parse::split_args(c.args) {
                let _ = tscope::trace::strace::parse::fd_arg(a);
                let _ = tscope::trace::strace::parse::string_arg(a);
            }
        }
    }
    let opts = tscope::trace::strace::import::ImportOptions::default();
    let import = tscope::trace::strace::import::StraceImport::new(data, "fuzz", opts);
    let _ = import.for_each(|_| {});
});
