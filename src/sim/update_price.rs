//! The live pairs of a filesystem as the estimates use them: measured ([`measure_and_price`],
//! the patterns [`crate::price::recipe`] names), looked up in a profile ([`for_fs`],
//! [`live_pair_for`]), and their loops as the models see them ([`pattern_scenario`]). The
//! arithmetic that prices them is [`crate::price`].

pub use crate::probe::update::FsUpdate;
use crate::workload::pair::Pattern;

mod lookup;
mod measure;
mod patterns;

pub use lookup::{for_fs, live_pair_for, unmeasured_update_notes, write_stat_on};
pub use measure::{measure_all, measure_and_price};
pub use patterns::{pattern_scenario, tasks_scenario};
