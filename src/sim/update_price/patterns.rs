//! The loops of the live pairs as the models see them: one side of a pattern as a scenario,
//! and several tasks of it sharing the multigrain floor.

use crate::trace::{FsKind, Scenario};
use crate::workload::pair::Pattern;

/// The scenario of one side of `pattern` on `fs`: the loop the pair runs, as the models see
/// it (`queried`: the stat asks for the times). `None` for a recorded loop, whose ops are not
/// in the pattern (`workload::replayed::LiveLoop::scenario` builds its own).
pub fn pattern_scenario(pattern: Pattern, fs: FsKind, queried: bool) -> Option<Scenario> {
    tasks_scenario(pattern, fs, queried, 1)
}

/// [`pattern_scenario`] run by `tasks` tasks at once, each on its own file: one iteration of
/// the scenario is every task's iteration in turn. The replay's one multigrain floor is then
/// shared by the tasks, as the kernel's `mg_floor` is (kernel/time/timekeeping.c): a task
/// whose queried ctime another task's fine stamp has passed takes the floor's time, not a
/// fine read of its own (fs/inode.c `inode_set_ctime_current`: the fine stamp only when the
/// floored coarse time is not later than the ctime).
pub fn tasks_scenario(pattern: Pattern, fs: FsKind, queried: bool, tasks: u32) -> Option<Scenario> {
    let stat = if queried { "stat" } else { "stat_no_times" };
    // (syscall, on the second file): the floor pattern's reads are of another file.
    let names: Vec<(&str, bool)> = match pattern {
        Pattern::Write { writes } => std::iter::repeat_n(("write", false), writes as usize)
            .chain(std::iter::once((stat, false)))
            .collect(),
        Pattern::Create => ["create", "write", stat, "close", "unlink"]
            .map(|s| (s, false))
            .to_vec(),
        Pattern::Chmod => vec![("fchmod", false), (stat, false)],
        Pattern::WriteRead => vec![("write", false), ("read", false), (stat, false)],
        Pattern::WriteFsync => vec![("write", false), (stat, false), ("fsync", false)],
        Pattern::ChmodReadSame { reads } => [("fchmod", false), (stat, false)]
            .into_iter()
            .chain(std::iter::repeat_n(("read", false), reads as usize))
            .collect(),
        Pattern::ChmodRead { reads } => [("fchmod", false), (stat, false)]
            .into_iter()
            .chain(std::iter::repeat_n(("read", true), reads as usize))
            .collect(),
        Pattern::Recorded { .. } => return None,
    };
    let iteration: Vec<serde_json::Value> = (0..tasks.max(1))
        .flat_map(|k| {
            let inode = if k == 0 {
                "file".to_string()
            } else {
                format!("file{k}")
            };
            names
                .iter()
                .map(move |&(s, other)| {
                    let inode = if other {
                        format!("{inode}-read")
                    } else {
                        inode.clone()
                    };
                    serde_json::json!({ "syscall": s, "inode": inode, "fs": fs.name() })
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let json = serde_json::json!({
        "schema_version": 1,
        "name": format!("{}{}", pattern.name(), if queried { "" } else { "-control" }),
        "description": "the live knob pair's loop",
        "iteration": iteration,
    });
    Some(
        Scenario::from_json(&json.to_string(), "the live pair").expect("a valid built-in scenario"),
    )
}
