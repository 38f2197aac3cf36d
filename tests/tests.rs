//! One integration-test binary; one module per area.

mod architecture;
mod bad_input;
mod common;
mod compare;
mod compare_noise;
mod corpus;
mod detect;
mod export;
mod fidelity;
mod fleet;
mod hostile_input;
mod hostile_text;
mod hostile_write;
mod interrupt;
mod man;
mod noise;
mod openmetrics;
mod probe;
mod report;
mod run;
mod show;
mod simulate;
mod skip;
mod update_price;
mod vm;
mod vm_bench;
