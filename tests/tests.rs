//! One integration-test binary; one module per area.

mod architecture;
mod bad_input;
mod common;
mod compare;
mod corpus;
mod detect;
mod export;
mod fidelity;
mod hostile_input;
mod hostile_text;
mod interrupt;
mod man;
mod noise;
mod probe;
mod report;
mod report_document;
mod run;
mod run_errors;
mod run_syscalls;
mod show;
mod simulate;
mod simulate_errors;
mod simulate_output;
mod skip;
mod vm;
mod vm_bench;
