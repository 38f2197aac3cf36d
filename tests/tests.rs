//! One integration-test binary; one module per area.

mod common;
mod probe;
mod run;
