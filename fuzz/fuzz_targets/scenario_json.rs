//! Any bytes as a scenario file: a clear error, or a scenario that compiles and streams a few
//! iterations through the replay under one policy of every model, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(scenario) = tscope::trace::Scenario::from_json(text, "fuzz.json") else { return };
    let compiled = scenario.compile();
    for op in compiled.stream(3) {
        std::hint::black_box(op);
    }
});
