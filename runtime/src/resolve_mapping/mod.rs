//! Mapping resolution: mapper program + application + machine -> the
//! concrete [`Decisions`] a real run of Legion's DSL mapper would make, and
//! the problems it would hit, reported on the responsible statements.
//!
//! The precedence rules follow the reference mapper (`Anjiang-Wei/DSLMapper`,
//! `src/compiler/tree.cpp` and `src/dsl_mapper.cc`), statement tables included
//! ([`rules`]): every table is filled with `unordered_map::insert`, so the
//! FIRST statement for a key wins, and lookups go from specific to general.
//!
//! # Module map
//!
//! One file per decision, each with the diagnostics it raises; the per-task
//! loop in [`resolver`] asks them in this order.
//! - [`kind`] Processor kind (`NSMapper::dsl_default_policy_select_initial_processor`):
//!   the `Task` list for the task's name, else the one for `*`; each kind in
//!   order is taken if the machine has such a processor and the task has a
//!   variant for it; otherwise Legion's default (`DefaultMapper::
//!   default_policy_rank_processor_kinds`: GPU > OMP > PROC > CPU > IO > PY,
//!   first kind the task has a variant for).
//! - [`memory`] Memory (`Tree2Legion::query_memory_list`): the candidate lists of
//!   (task, region), (task, `*`), (`*`, region), (`*`, `*`) are concatenated,
//!   each keyed by the processor kind with `*` as fallback; the first memory
//!   that has affinity to the processor wins (`query_best_memory_for_proc`),
//!   `VIRTUAL` means no instance; otherwise `DefaultMapper::
//!   default_policy_select_target_memory`: the visible memory with the best
//!   bandwidth ([`Machine::reachable`]'s first).
//! - [`layout`] Layout (`Tree2Legion::query_constraint`): the first of the same four
//!   keys that has an entry for the memory kind or `*` wins outright (no
//!   merging); within one statement the last constraint of a family wins.
//!   Without a statement: Legion's default, SOA with the first dimension
//!   fastest (F_order). `Exact` only matters together with `Compact`.
//!   The mapper caches one layout per (memory kind, field space)
//!   (`dsl_default_policy_select_layout_constraints`), so two tasks giving
//!   one region different layouts in one memory kind conflict.
//!   [`layout_fix`] holds the verified quick fixes for layout errors.
//! - [`instances`] Instances follow `NSMapper::map_task`: no-access
//!   arguments get none; an inner task maps every argument virtually
//!   (reductions too, as Legion 25.12's DefaultMapper); an argument the application tags `VIRTUAL_MAP`, or `VIRTUAL`
//!   in the memory list, gets a virtual instance. `InstanceLimit` and
//!   `CollectMemory` (read-only arguments only).
//! - [`placement`] Launch points (`Tree2Legion::runindex`/`runsingle`, `should_fall_back`):
//!   the IndexTaskMap/SingleTaskMap function for the task's name, else the
//!   one for its processor kind (`CPU`/`GPU`/`OMP`). A `*` key is stored but
//!   never consulted. Without a function Legion's default slicing applies:
//!   the launch domain is cut into one block per processor of the kind
//!   across the machine (`default_select_num_blocks`, blocks dealt out in
//!   column-major order, `default_decompose_points`); a single launch runs on
//!   the first processor of the kind on its parent's node.
//!
//! Around them:
//! - [`entry`] the public entry points ([`resolve_mapping`],
//!   [`resolve_mapping_with`]) and their options ([`ResolveOptions`],
//!   [`RegionNaming`]).
//! - [`resolver`] the resolver's state and traces, the order in which a run
//!   meets things, and the per-task loop.
//! - [`rules`] the statement tables.
//! - [`memo`] what one resolution leaves for the next against the same
//!   application ([`ResolveMemo`]).
//! - [`checks`] statement-level diagnostics: syntax and top-level aborts,
//!   unknown names, statements of the wrong kind, statements that never apply.
//! - [`functions`] mapping functions checked statically.
//! - [`placer`] the seam to the DSL evaluator ([`LaunchPlacer`], [`EvalPlacer`]).
//! - [`codes`] the table of diagnostic codes ([`CODES`]).
//! - [`render`] decisions as text (`mapwright explain`).
//!
//! Region arguments are matched by every semantic name the application gives
//! them (name and aliases) and by their argument index, unless the
//! application's run is known to use only one of the two (see
//! [`RegionNaming`]).
//!
//! Ranks: an application launched with several Legion ranks per node
//! ([`App::ranks_per_node`], DISTAL's johnson and cosma run one per GPU)
//! shows its mapper one node per rank ([`RankView`]): mapping functions,
//! Legion's default slicing and the bound checks work in those terms, and
//! each placement is then turned into the physical (node, processor) it
//! names, which is what [`Decisions`] holds.
//!
//! Launch points are placed by a [`LaunchPlacer`], the seam to the DSL
//! evaluator; [`resolve_mapping`] uses the built-in one ([`EvalPlacer`]).
//! A single launch is placed once per launch of it: once per point of an
//! index-launched parent, whose processor `task.parent.processor(m)` sees.
//! Placement is bounded ([`MAX_PLACED_POINTS`] per launch, a budget of calls
//! and time per resolution) so a hostile file cannot stall anything.
//!
//! Quick fixes for layout errors are verified: each candidate edit (the
//! constraint word of the deciding statement, or the narrowest statement
//! that overrides it) is applied, the text is resolved again, and only a
//! candidate that removes its own problem without adding an error is
//! offered (see [`layout_fix`]).
//!
//! Approximations (the facts are not in the descriptions): logical regions
//! sharing a name or alias are taken to share a field space; the default
//! slicing ignores Legion's `SAME_ADDRESS_SPACE` tag; a syntax error's
//! bison wording ("unexpected X, expecting Y") is not reproduced.
//!
//! [`Decisions`]: crate::decisions::Decisions
//! [`Machine::reachable`]: crate::machine::Machine::reachable
//! [`App::ranks_per_node`]: crate::app::App::ranks_per_node
//! [`RankView`]: crate::machine::RankView

mod checks;
mod codes;
mod entry;
mod functions;
mod instances;
mod kind;
mod layout;
mod layout_fix;
mod memo;
mod memory;
mod placement;
mod placer;
mod render;
mod resolver;
mod rules;
#[cfg(test)]
mod tests;

pub use codes::{code_summary, CODES};
pub use entry::{
    resolve_mapping, resolve_mapping_with, resolve_parsed_with, RegionNaming, ResolveOptions,
};
pub use layout::layout_text;
pub use memo::{KeptAllocations, ResolveMemo, MAX_NEAREST_ANSWERS};
pub use placement::MAX_PLACED_POINTS;
pub use placer::{
    parsed_statements, EvalPlacer, LaunchPlacer, MachinePoint, NoPlacer, ParentPoint,
    PlacementError,
};
pub use render::render_decisions;
