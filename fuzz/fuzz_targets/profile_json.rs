//! Any bytes as a profile / detection / report JSON: an error or a profile, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(input) = tscope::compare::Input::parse(text, std::path::Path::new("fuzz.json")) {
            let pair = [input.clone(), input];
            for unit in [
                None,
                Some(tscope::compare::Unit::Ns),
                Some(tscope::compare::Unit::Cycles),
            ] {
                let _ = tscope::compare::compare(&pair, unit);
            }
        }
    }
});
