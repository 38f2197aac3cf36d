//! The price of the knob's kernel work, in one place: the terms as data ([`Term`]), each
//! calibration pair as one recipe ([`recipe::RECIPES`]), one solver ([`solve()`]) with interval
//! arithmetic on [`crate::stats::Estimate`], and the prices every estimate replays with
//! ([`Costs`]).
//!
//! # The equations
//!
//! A live pair ([`crate::workload::pair`]) runs one loop two ways, the stat asking for the
//! times (queried) or for the size only (control), ABBA-interleaved. Its Δ is queried −
//! control ns per iteration. The model replays both loops at their measured speed and counts,
//! per iteration, the reads (priced at the probe's `precise_read_ns` =
//! `syscall:realtime − syscall:realtime_coarse` and `coarse_read_ns` = `vdso:realtime_coarse`)
//! and the units of each term. So every pair reads
//!
//! ```text
//! Δ = Δreads + ΔF·F + ΔX·X + ΔS·S + ΔQ·Q + ΔU·U + ΔN·N + ΔA·A
//! ```
//!
//! with F the floored read, X a fine read's in-path excess, S the ctime swap (a ctime that
//! moves beyond one that stays), Q the query, U the c/mtime update of the write path, N what a
//! new inode's first such update adds, A the atime update, and each ΔF … ΔA the model's units
//! between the sides. Each recipe picks a pair (or the difference of two) in which its term moves and the
//! terms not yet priced do not, and solves for it; the solver walks the terms in this order,
//! each with the first recipe that isolates it:
//!
//! ```text
//! F = (Δ[chmod-stat-read16-apart ▸ reads] − Δreads) / ΔF
//! X = (Δ[chmod-stat-read16-same ▸ reads] − Δ[chmod-stat-read1-same ▸ read] − Δreads − ΔF·F) / ΔX
//! S = (Δ[chmod-stat-chmod16-others-apart ▸ chmods] − Δreads − ΔF·F − ΔX·X) / ΔS
//! Q = Δ[chmod-stat ▸ stat] / ΔQ
//! U = (Δ[write-stat] − Δ[chmod-stat] − Δreads − ΔF·F − ΔX·X − ΔS·S − ΔQ·Q) / ΔU
//! N = (Δ[create-write-stat-write-unlink ▸ write] − Δ[write-stat ▸ write] − Δreads − ΔF·F − ΔX·X − ΔS·S) / ΔN
//! A = (Δ[write-read-stat] − Δ[write-stat] − Δreads − ΔF·F − ΔX·X − ΔS·S − ΔQ·Q − ΔU·U) / ΔA
//! ```
//!
//! `Δ[pair ▸ calls]` is the Δ of calls of the pair's iteration timed on their own ([`Tail`],
//! [`Part::Tail`]), and its Δreads, ΔF … the model's units in those calls only: for the reads
//! and chmods after chmod-stat, the chmod and the statx before them, whose update and query
//! carry most of the whole iteration's spread, stay out; chmod-stat's statx alone is the
//! query's work and nothing else (it reads no clock); and the second write of a new file
//! against write-stat's write alone is what the inode's first update adds. The update is
//! write-stat against chmod-stat: the chmod takes the same fine stamp, fine read, floored reads,
//! swap and query as the write and stores the inode on both sides, so between the two lies the
//! write's update, whatever a fine read costs inside either op (X, priced on the read path,
//! differs between ops: `scripts/fine-read-in-path`). In the `-apart` pairs each of those calls sits between an
//! `open` and a `close` of another file (no timestamp) and is timed alone, a block's calls
//! averaged without their slowest 5% (an interrupt falls on one call): a floored read or a
//! swap costs more between a program's other calls than in a run of the same call, whose
//! code stays hot, and a program takes them between its other calls. Where those pairs do not
//! price (or a document has none), the same pairs in a run of calls do (`chmod-stat-read16 ▸
//! reads`, `chmod-stat-chmod16-others ▸ chmods`, measured only then), and where a document's
//! pairs carry no tail at all (written before they were timed, or several tasks), whole
//! iterations against another pair:
//!
//! ```text
//! F = (Δ[chmod-stat-read16] − Δ[chmod-stat] − Δreads) / ΔF
//! X = (Δ[chmod-stat-read16-same] − Δ[chmod-stat-read1-same] − Δreads − ΔF·F) / ΔX
//! S = (Δ[chmod-stat-chmod16-others] − Δ[chmod-stat-read16] − Δreads − ΔF·F − ΔX·X) / ΔS
//! ```
//!
//! and where both can, the second is said beside the first as a prediction. Without the
//! statx's tail, the whole iterations price the query, and without chmod-stat, write-stat
//! alone prices the update:
//!
//! ```text
//! Q = (Δ[write-stat] − Δreads − ΔF·F − ΔX·X − ΔS·S) / ΔQ   where write-stat adds no update (ΔU = 0)
//! Q = (Δ[chmod-stat] − Δreads − ΔF·F − ΔX·X − ΔS·S) / ΔQ   else (the inode stored on both sides)
//! U = (Δ[write-stat] − Δreads − ΔF·F − ΔX·X − ΔS·S − ΔQ·Q) / ΔU
//! ```
//!
//! In every pattern pair a query is followed by exactly one swap (ΔQ = ΔS = 1 in chmod-stat),
//! so without S the query's price holds the swap's. A program is not like that: once a fine
//! stamp has put the floor ahead of the tick, every inode changed in the rest of the tick moves
//! its ctime, queried or not, so its swaps outnumber its queries many times (`tar -x`: about
//! 32 a pass against 5). S is priced apart so that each is counted by its own units.
//!
//! Where write-stat adds no update (btrfs stores every write's time), U is not priced and not
//! needed by the knob, and write-read-stat's ΔU is 0 too. An atime update without a price of
//! its own costs U (its stand-in, [`Term::stand_in`]).
//!
//! Intervals are carried through: each Δ's, and each priced term's times its units, the
//! distances from the point that widen the result added in quadrature (the pairs are measured
//! apart, so their errors share no cause; [`crate::stats::Estimate::minus_independent`]). A read term (F, X) that no pair prices stays at the profile's price; a
//! filesystem's own term (Q, U) that no pair prices stays in the terms priced after it, and
//! the reason says so. The reasons are built from the solved steps.
//!
//! Adding a term is one [`Term`] variant and one [`recipe::Recipe`]: the solver, the profile's
//! fields, `--set`, the costs an estimate replays with and their JSON follow the tables.
//!
//! The module sits below `probe` and `sim`: what it knows of a pair is [`Pair`], and the
//! model's counts of one come from the caller (`crate::sim::update_price`, which replays the
//! pair's two loops and builds a filesystem's entry of the profile from the [`Solution`]).

mod costs;
mod counts;
pub mod fields;
mod pattern;
pub mod recipe;
mod solve;
mod term;

pub use costs::{ByFs, Costs, TermPrice};
pub use counts::Counts;
pub use pattern::{Pattern, Tail};
pub use solve::{known, solve, Pair, Part, Solution, Step};
pub use term::Term;
