//! The result model of `tscope run`: one serde structure, printed by `report.rs`.
//! The JSON contract (`schema_version`, `workload`, `runs[].tasks/mode/ops_per_sec/samples`)
//! is documented in `docs/schema.md`; fields are only ever added.

use serde::{Deserialize, Serialize};

use super::name::WorkloadName;
use crate::probe::machine::{Clocksource, Machine};
use crate::warnings::Warning;

/// How tasks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Forked processes (will-it-scale's `_processes`).
    Processes,
    /// Threads of one process (will-it-scale's `_threads`).
    Threads,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Processes => "processes",
            Mode::Threads => "threads",
        }
    }
}

/// Where the two tasks of a pingpong pair run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Both on one CPU: every bounce is a switch on that CPU.
    SameCpu,
    /// On two CPUs: every bounce is a cross-CPU wake-up.
    DifferentCpus,
}

/// What `mem` does with each block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemOp {
    /// Write: copy a block-sized source into the region, block by block.
    Wr,
    /// Read: copy the region, block by block, into a block-sized buffer.
    Rd,
    /// Read and write: copy the region's first half onto its second half, block by block.
    Rw,
}

/// Median, minimum and maximum of a set of rates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// The summary of `xs`; `None` when there is no sample (no rate, rather than 0 ops/s).
    pub fn of(xs: &[f64]) -> Option<Summary> {
        let median = crate::stats::median(xs)?;
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Summary { median, min, max })
    }
}

/// One task's figures over a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskResult {
    pub task: usize,
    /// The CPU the task was pinned to (for pingpong: the initiator's), if pinned.
    pub cpu: Option<usize>,
    /// The responder's CPU of a pingpong pair.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_cpu: Option<usize>,
    /// The task's rate over the samples; `null` when it has none (an interrupted run).
    pub ops_per_sec: Option<Summary>,
    /// Iterations completed, warm-up included.
    pub iterations: u64,
    /// `write-only` / `write-stat`: successive modifications observed, and how many had an
    /// mtime equal to the previous one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtime_pairs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equal_successive_mtimes: Option<u64>,
    /// `sched_yield`: context switches of the task's thread during its loop (getrusage).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voluntary_switches: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub involuntary_switches: Option<u64>,
}

/// The equal-mtime count of a write-only or write-stat run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MtimeCheck {
    /// `fstat` (write-stat: the workload's own stat) or `realtime_coarse` (write-only: a stat
    /// would change what is measured, so each write's mtime is taken to be the coarse clock read
    /// right after it, which is what the kernel stamps on an inode nobody queried).
    pub source: String,
    pub pairs: u64,
    pub equal: u64,
    pub equal_share: f64,
    /// write-only: every check of an inferred mtime against a real fstat matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inference_checked: Option<bool>,
    /// write-only: checks made (one per 65536 writes and one at the end) and how many found
    /// the real mtime different from the inferred one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inference_checks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inference_mismatches: Option<u64>,
}

/// Whether `sched_yield` really entered the scheduler.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SchedYieldCheck {
    /// One `sched_yield` call, from the runner's rate (per task).
    pub yield_ns: f64,
    /// One raw `getppid` call timed in the same workers right after the run.
    pub getppid_ns: f64,
    /// `yield_ns / getppid_ns`.
    pub ratio: f64,
    pub voluntary_switches_per_call: f64,
    pub involuntary_switches_per_call: f64,
    /// `ratio >= 1.2` or at least one voluntary switch per 10 calls.
    pub entered_scheduler: bool,
    pub summary: String,
}

/// The result for one task count and mode.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub tasks: usize,
    pub mode: Mode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Stopped by a signal before all samples were taken.
    #[serde(rename = "partial")]
    pub stopped: bool,
    /// Median, min and max of the per-second totals; `null` when no sample was taken (a run
    /// interrupted before its first interval ended), never 0.
    pub ops_per_sec: Option<Summary>,
    /// Per-second totals over all tasks (ops/s), one per sample interval.
    pub samples: Vec<f64>,
    /// The slowest and fastest task in each sample (will-it-scale's `min:` and `max:`), ops/s.
    pub per_task_min: Vec<f64>,
    pub per_task_max: Vec<f64>,
    /// Nanoseconds per iteration of one task at the median rate (`tasks · 1e9 / median`);
    /// `null` without a positive rate.
    pub ns_per_iteration: Option<f64>,
    pub per_task: Vec<TaskResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtimes: Option<MtimeCheck>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sched_yield: Option<SchedYieldCheck>,
}

/// One system call of an iteration (also the record format's entries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    /// The libc call (`write`, `read`, `open`, `lstat`, …) or `page_fault` for a store through
    /// a mapping.
    pub syscall: String,
    /// The kernel entry point strace shows for it on x86_64 glibc (`openat`, `newfstatat`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr: Option<String>,
    /// The inode it touches, local to one task (pingpong: to one pair): `pipe:0`, `file:0`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inode: Option<String>,
    /// The file system of that inode (`pipefs`, `ext4`, `tmpfs`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fs: Option<String>,
    /// The directory whose entries the call changes (create, unlink).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// Flags that matter to timestamps (`O_CREAT|O_EXCL`, `O_TRUNC`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<String>,
    /// Which task of a pingpong pair issues it (0 initiator, 1 responder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<usize>,
}

/// Per-thread line of `mem`, as sv_mem prints it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemThread {
    /// 1-based, as in sv_mem.
    pub thread: usize,
    pub cpu: Option<usize>,
    pub bytes: u64,
    /// Touching one byte per 4 KiB page of the thread's share.
    pub prefault_ms: f64,
    /// The block copy.
    pub copy_ms: f64,
    pub copy_mib_per_sec: f64,
}

/// One `mem` run (one thread count).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemRun {
    pub threads: usize,
    pub per_thread: Vec<MemThread>,
    /// All bytes copied over the time from the first copy's start to the last copy's end.
    pub total_mib_per_sec: f64,
    /// The sum of the per-thread rates (what a reader adding up the lines gets).
    pub sum_mib_per_sec: f64,
    pub max_prefault_ms: f64,
}

/// `mem` results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemReport {
    pub op: MemOp,
    pub size_bytes: u64,
    pub block_bytes: u64,
    /// `/sys/kernel/mm/transparent_hugepage/enabled` (the bracketed choice): with `always`,
    /// one touch may fault in a 2 MiB page instead of 4 KiB.
    pub transparent_hugepage: Option<String>,
    /// A virtio balloon reports free pages to the host (`VIRTIO_BALLOON_F_REPORTING`): a page
    /// the guest handed back can fault on the host too when touched again, so the pre-fault
    /// time depends on what ran before. `null` without a virtio balloon.
    pub free_page_reporting: Option<bool>,
    pub runs: Vec<MemRun>,
}

/// One page-zeroing variant in one cache state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PagezeroResult {
    /// `rep_stosq`, `rep_stosb`, `aligncheck`, `memset`.
    pub variant: String,
    /// `hot` (one page, again and again) or `cold` (each page of a buffer larger than the
    /// last-level cache, in order).
    pub cache: String,
    pub ns_per_page: f64,
    pub gib_per_sec: f64,
    /// Hot: the sampler's 95% interval of ns per page; cold: min and max over the passes.
    pub ns_per_page_lower: f64,
    pub ns_per_page_upper: f64,
}

/// `pagezero` results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PagezeroReport {
    /// CPUID.(7,0):EBX\[9\], enhanced `rep movsb`/`stosb`.
    pub erms: bool,
    /// CPUID.(7,0):EDX\[4\], fast short `rep movsb`.
    pub fsrm: bool,
    pub cold_buffer_bytes: u64,
    pub results: Vec<PagezeroResult>,
}

/// The machine a run was measured on: the probe's [`Machine`] facts (each gathered and typed
/// once, by `probe::machine`) and what only a run knows. In code the facts read through
/// `Deref` (`report.machine.cpu_model`); the JSON keeps the run report's own flat shape, in
/// which `clocksource` is the current clocksource's name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "RunMachineJson", from = "RunMachineJson")]
pub struct RunMachine {
    pub facts: Machine,
    /// The CPUs tasks may be pinned to (the process's affinity mask).
    pub allowed_cpus: Vec<usize>,
    /// `/proc/loadavg` (1, 5, 15 minutes) when the run started: other work competing for the
    /// CPUs shows here.
    pub load_average: Option<[f64; 3]>,
}

impl std::ops::Deref for RunMachine {
    type Target = Machine;

    fn deref(&self) -> &Machine {
        &self.facts
    }
}

/// `machine` in `tscope run --json` (docs/schema.md): field names and meanings are a contract.
#[derive(Serialize, Deserialize)]
struct RunMachineJson {
    kernel_release: Option<String>,
    cpu_model: Option<String>,
    cpus_online: usize,
    allowed_cpus: Vec<usize>,
    hypervisor_bit: bool,
    clocksource: Option<String>,
    load_average: Option<[f64; 3]>,
}

impl From<RunMachine> for RunMachineJson {
    fn from(m: RunMachine) -> Self {
        RunMachineJson {
            kernel_release: m.facts.kernel_release,
            cpu_model: m.facts.cpu_model,
            cpus_online: m.facts.cpus_online,
            allowed_cpus: m.allowed_cpus,
            hypervisor_bit: m.facts.hypervisor_bit,
            clocksource: m.facts.clocksource.current,
            load_average: m.load_average,
        }
    }
}

/// Reading a run report back keeps only the facts its JSON carries.
impl From<RunMachineJson> for RunMachine {
    fn from(j: RunMachineJson) -> Self {
        RunMachine {
            facts: Machine {
                kernel_release: j.kernel_release,
                cpu_model: j.cpu_model,
                cpus_online: j.cpus_online,
                hypervisor_bit: j.hypervisor_bit,
                clocksource: Clocksource {
                    current: j.clocksource,
                    available: Vec::new(),
                },
                ..Machine::default()
            },
            allowed_cpus: j.allowed_cpus,
            load_average: j.load_average,
        }
    }
}

/// Everything `tscope run` measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    pub schema_version: u32,
    pub workload: WorkloadName,
    /// Some run stopped early on a signal, or some runs never started.
    #[serde(rename = "partial")]
    pub stopped: bool,
    pub pinned: bool,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub interval_s: f64,
    /// The directory the files were created in (file workloads), and its file system.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fs_type: Option<String>,
    /// That file system's mount options (file workloads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<Vec<String>>,
    /// The per-iteration system calls of one task (pingpong: of one pair).
    pub iteration: Vec<Op>,
    pub syscalls_per_iteration: usize,
    pub machine: RunMachine,
    pub runs: Vec<RunResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem: Option<MemReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pagezero: Option<PagezeroReport>,
    /// write-stat: the live knob pair on the same directory (statx asking for the times,
    /// against statx asking for the size), ABBA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<crate::probe::update::PairResult>,
    /// Serialised as their advice text, as always.
    #[serde(with = "crate::warnings::as_text")]
    pub warnings: Vec<Warning>,
}
