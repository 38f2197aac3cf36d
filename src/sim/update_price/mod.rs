//! The live pairs of a filesystem as the estimates use them: measured ([`measure_and_price`],
//! the patterns [`crate::price::recipe`] names), looked up in a profile ([`for_fs`],
//! [`live_pair_for`]), their loops as the models see them ([`pattern_scenario`]) and counted
//! ([`pair_delta`]), and priced into the profile's entry ([`price`]). The arithmetic that
//! prices them is [`crate::price`].

pub use crate::probe::update::FsUpdate;
use crate::workload::pair::Pattern;

mod counts;
mod lookup;
mod measure;
mod patterns;
mod priced;
#[cfg(test)]
mod tests;

pub use counts::{
    counts_at, counts_by_call, model_of, pair_delta, pair_delta_in, pair_sides, side_counts,
    tail_counts,
};
pub use lookup::{for_fs, live_pair_for, unmeasured_update_notes, write_stat_on};
pub use measure::{measure_all, measure_and_price};
pub use patterns::{pattern_scenario, tasks_scenario};
pub use priced::{price, price_at};
