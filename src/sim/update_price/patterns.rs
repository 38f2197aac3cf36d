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
    // (syscall, on which file: 0 the pattern's, 1 its second, k > 1 its k-th other file, 100 + k
    // the k-th file that sets a call apart).
    let names: Vec<(&str, u32)> = match pattern {
        Pattern::Write { writes } => std::iter::repeat_n(("write", 0), writes as usize)
            .chain(std::iter::once((stat, 0)))
            .collect(),
        Pattern::Create => ["create", "write", stat, "close", "unlink"]
            .map(|s| (s, 0))
            .to_vec(),
        Pattern::CreateRewrite => ["create", "write", stat, "write", "close", "unlink"]
            .map(|s| (s, 0))
            .to_vec(),
        Pattern::Chmod => vec![("fchmod", 0), (stat, 0)],
        Pattern::WriteRead => vec![("write", 0), ("read", 0), (stat, 0)],
        Pattern::WriteFsync => vec![("write", 0), (stat, 0), ("fsync", 0)],
        Pattern::ChmodReadSame { reads } => [("fchmod", 0), (stat, 0)]
            .into_iter()
            .chain(std::iter::repeat_n(("read", 0), reads as usize))
            .collect(),
        Pattern::ChmodRead { reads } => [("fchmod", 0), (stat, 0)]
            .into_iter()
            .chain(std::iter::repeat_n(("read", 1), reads as usize))
            .collect(),
        Pattern::ChmodOthers { files } => [("fchmod", 0), (stat, 0)]
            .into_iter()
            .chain((1..=files).map(|k| ("fchmod", k)))
            .collect(),
        Pattern::ChmodReadApart { reads } => [("fchmod", 0), (stat, 0)]
            .into_iter()
            .chain((1..=reads).flat_map(|k| [("open", 100 + k), ("read", 1), ("close", 100 + k)]))
            .collect(),
        Pattern::ChmodOthersApart { files } => [("fchmod", 0), (stat, 0)]
            .into_iter()
            .chain((1..=files).flat_map(|k| [("open", 100 + k), ("fchmod", k), ("close", 100 + k)]))
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
                    let inode = match other {
                        0 => inode.clone(),
                        1 => format!("{inode}-read"),
                        k if k > 100 => format!("{inode}-spacer{}", k - 100),
                        k => format!("{inode}-other{k}"),
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
