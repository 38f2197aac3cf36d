//! What a JSON document tscope wrote is, recognised from its outline ([`super::Shape`]) by the
//! fields only its kind has: `show` renders by it, and every reader names a wrong kind with it.

use super::Shape;

/// What a tscope JSON document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Probe,
    Detect,
    Run,
    VmGuest,
    VmExits,
    /// `simulate --json`: estimates, a sweep, an implied cost or a validation (one object or
    /// an array of them).
    Simulate,
    /// `compare --json`.
    Compare,
    /// A report's `report.json`.
    Report,
    /// `vm bench --json`.
    VmBench,
    /// `vm count --json`.
    VmCount,
    /// `fleet report --json`.
    FleetReport,
    /// `fleet ls --json` / `fleet export --json`: the store's rows.
    FleetRows,
    /// `run --record`: a run record (input of `simulate --run`).
    RunRecord,
}

impl Kind {
    /// Every kind that names itself with a `kind` tag.
    pub const TAGGED: [Kind; 12] = [
        Kind::Probe,
        Kind::Detect,
        Kind::Run,
        Kind::VmGuest,
        Kind::VmExits,
        Kind::Simulate,
        Kind::Compare,
        Kind::Report,
        Kind::VmBench,
        Kind::VmCount,
        Kind::FleetReport,
        Kind::RunRecord,
    ];

    /// The `kind` a document of this kind carries next to its `schema_version` (fleet rows,
    /// an array of the store's rows, carry none: each row's `kind` is its document's).
    pub fn tag(self) -> &'static str {
        match self {
            Kind::Probe => "tscope-probe",
            Kind::Detect => "tscope-detect",
            Kind::Run => "tscope-run",
            Kind::VmGuest => "tscope-vm-guest",
            Kind::VmExits => "tscope-vm-exits",
            Kind::Simulate => "tscope-simulate",
            Kind::Compare => "tscope-compare",
            Kind::Report => "tscope-report",
            Kind::VmBench => "tscope-vm-bench",
            Kind::VmCount => "tscope-vm-count",
            Kind::FleetReport => "tscope-fleet-report",
            Kind::FleetRows => "tscope-fleet-rows",
            Kind::RunRecord => "tscope-run-record",
        }
    }

    /// The tag without its `tscope-` prefix (`probe`, `detect`, `report`, …): the word the
    /// fleet store keeps in its `kind` column and prints.
    pub fn short(self) -> &'static str {
        self.tag().trim_start_matches("tscope-")
    }

    /// The kind a [`Kind::short`] word names.
    pub fn from_short(word: &str) -> Option<Kind> {
        Kind::TAGGED.into_iter().find(|k| k.short() == word)
    }

    /// The kind a `kind` tag names.
    pub fn from_tag(tag: &str) -> Option<Kind> {
        Kind::TAGGED.into_iter().find(|k| k.tag() == tag)
    }

    /// Recognises a document: by its `kind` tag (of its first element, for an array), else,
    /// for a file written before documents carried one, by the fields only its kind has.
    pub fn of(v: &Shape) -> Option<Kind> {
        let has = |k: &str| v.has(k);
        let first = v.first_or_self();
        let sim = |k: &str| first.has(k);
        if let Some(k) = first.kind.as_deref().and_then(Kind::from_tag) {
            Some(k)
        } else if has("machines") && has("documents") && has("models") {
            Some(Kind::FleetReport)
        } else if !v.object && first.has("hash") && first.has("source") && first.has("kind") {
            Some(Kind::FleetRows)
        } else if has("environment") && has("simulation") && has("profile") {
            Some(Kind::Report)
        } else if sim("estimates")
            || sim("break_even")
            || sim("published_speedup")
            || (has("validation") && has("rows"))
        {
            Some(Kind::Simulate)
        } else if has("comparisons") && has("kernel_control") {
            Some(Kind::VmBench)
        } else if has("kernels") && has("iterations") && has("accel") {
            Some(Kind::VmCount)
        } else if has("guests") && has("accel") {
            Some(Kind::VmGuest)
        } else if has("kinds") && has("loop_ticks") {
            Some(Kind::VmExits)
        } else if has("workload") && has("runs") {
            Some(Kind::Run)
        } else if has("columns") && has("sources") && has("verdicts") {
            Some(Kind::Compare)
        } else if has("verdicts") && has("facts") {
            Some(Kind::Detect)
        } else if has("sources") && has("machine") && has("derived") {
            Some(Kind::Probe)
        } else {
            None
        }
    }

    /// What the document is, in words (for messages naming a wrong kind).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Probe => "a probe profile (`tscope probe --json`)",
            Kind::Detect => "a detection (`tscope detect --json`)",
            Kind::Run => "a run (`tscope run --json`)",
            Kind::VmGuest => "a guest matrix (`tscope vm guest --json`)",
            Kind::VmExits => "a VM-exit measurement (`tscope vm exits --json`)",
            Kind::Simulate => "a simulation (`tscope simulate --json`)",
            Kind::Compare => "a comparison (`tscope compare --json`)",
            Kind::Report => "a report (report.json)",
            Kind::VmBench => "a vm bench result (`tscope vm bench --json`)",
            Kind::VmCount => "a vm count result (`tscope vm count --json`)",
            Kind::FleetReport => "a fleet report (`tscope fleet report --json`)",
            Kind::FleetRows => "fleet rows (`tscope fleet ls --json` or `fleet export --json`)",
            Kind::RunRecord => "a run record (`tscope run --record`)",
        }
    }
}

/// `Err` naming what `text` is when it is a kind tscope writes other than `wanted`; `reads`
/// says what the reader takes ("--profile reads a probe profile (`tscope probe --json`)").
/// Text that is not JSON, or no kind tscope writes, passes: the reader's own parse says why.
pub fn expect(text: &[u8], wanted: &[Kind], reads: &str) -> Result<(), String> {
    let Ok(shape) = Shape::of(text) else {
        return Ok(());
    };
    match Kind::of(&shape) {
        Some(k) if !wanted.contains(&k) => Err(format!("it is {}: {reads}", k.name())),
        _ => Ok(()),
    }
}
