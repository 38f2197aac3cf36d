//! One integration-test binary; one module per area.

mod common;
mod detect;
mod probe;
mod simulate;
