//! Mapping resolution: mapper program + application + machine -> the
//! concrete [`Decisions`] a real run of Legion's DSL mapper would make, and
//! the problems it would hit, reported on the responsible statements.
//!
//! The precedence rules follow the reference mapper (`Anjiang-Wei/DSLMapper`,
//! `src/compiler/tree.cpp` and `src/dsl_mapper.cc`), statement tables included:
//! every table is filled with `unordered_map::insert`, so the FIRST statement
//! for a key wins, and lookups go from specific to general.
//! - Processor kind (`NSMapper::dsl_default_policy_select_initial_processor`):
//!   the `Task` list for the task's name, else the one for `*`; each kind in
//!   order is taken if the machine has such a processor and the task has a
//!   variant for it; otherwise Legion's default (`DefaultMapper::
//!   default_policy_rank_processor_kinds`: GPU > OMP > PROC > CPU > IO > PY,
//!   first kind the task has a variant for).
//! - Memory (`Tree2Legion::query_memory_list`): the candidate lists of
//!   (task, region), (task, `*`), (`*`, region), (`*`, `*`) are concatenated,
//!   each keyed by the processor kind with `*` as fallback; the first memory
//!   that has affinity to the processor wins (`query_best_memory_for_proc`),
//!   `VIRTUAL` means no instance; otherwise `DefaultMapper::
//!   default_policy_select_target_memory`: the visible memory with the best
//!   bandwidth ([`Machine::reachable`]'s first).
//! - Layout (`Tree2Legion::query_constraint`): the first of the same four
//!   keys that has an entry for the memory kind or `*` wins outright (no
//!   merging); within one statement the last constraint of a family wins.
//!   Without a statement: Legion's default, SOA with the first dimension
//!   fastest (F_order). `Exact` only matters together with `Compact`.
//!   The mapper caches one layout per (memory kind, field space)
//!   (`dsl_default_policy_select_layout_constraints`), so two tasks giving
//!   one region different layouts in one memory kind conflict.
//! - Launch points (`Tree2Legion::runindex`/`runsingle`, `should_fall_back`):
//!   the IndexTaskMap/SingleTaskMap function for the task's name, else the
//!   one for its processor kind (`CPU`/`GPU`/`OMP`). A `*` key is stored but
//!   never consulted. Without a function Legion's default slicing applies:
//!   the launch domain is cut into one block per processor of the kind
//!   across the machine (`default_select_num_blocks`, blocks dealt out in
//!   column-major order, `default_decompose_points`); a single launch runs on
//!   the first processor of the kind on its parent's node.
//!
//! Region arguments are matched by every semantic name the application gives
//! them (name and aliases) and by their argument index, unless the
//! application's run is known to use only one of the two (see
//! [`RegionNaming`]). Instances follow `NSMapper::map_task`: no-access
//! arguments get none; an inner task maps everything but reductions
//! virtually; an argument the application tags `VIRTUAL_MAP`, or `VIRTUAL`
//! in the memory list, gets a virtual instance.
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
//! Quick fixes for layout errors are verified: each candidate edit (from
//! the narrowest scope — task+region, task, region, memory kind — to a
//! rewrite of the deciding statement) is applied, the text is resolved
//! again, and the first candidate that removes the problem without adding
//! a layout problem is offered.
//!
//! Approximations (the facts are not in the descriptions): logical regions
//! sharing a name or alias are taken to share a field space; the default
//! slicing ignores Legion's `SAME_ADDRESS_SPACE` tag; a syntax error's
//! bison wording ("unexpected X, expecting Y") is not reproduced.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use mapwright_grammar::ast::{
    self, Constraint, Expr, ExprKind, MemSel, ParamType, ProcSel, Prop, RegionSel, Stmt, StmtKind,
    TaskSel,
};
use mapwright_grammar::codes::CodeInfo;
use mapwright_grammar::diagnostic::{line_extent, line_or_span};
use mapwright_grammar::suggest::closest;
use mapwright_grammar::{Analysis, Diagnostic, Fix, Span};

use crate::app::{
    App, DimOrder, FieldLayout, Launch, LibraryConstraint, Privilege, RegionArg, Task,
};
use crate::decisions::{
    Decisions, InstanceKind, LaunchRegionDecision, LayoutDecision, Order, PointPlacement,
    RegionDecision, RuntimeFailure, TaskDecision,
};
use crate::machine::{Machine, MemKind, ProcKind, RankView};

// ---------------------------------------------------------------------------
// Diagnostic codes
// ---------------------------------------------------------------------------

/// The diagnostic codes mapping resolution emits (`E03xx` errors, `W03xx`
/// warnings, `I03xx` information), with one-line summaries. Codes are
/// stable and never reused.
pub const CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0301",
        summary: "a launch point is mapped outside the machine (slice/sharding index out of bound)",
    },
    CodeInfo {
        code: "E0302",
        summary: "a mapping function returns a processor of another kind than the task runs on",
    },
    CodeInfo {
        code: "W0303",
        summary: "a `Task` statement names a processor kind the task has no variant for (or the machine lacks)",
    },
    CodeInfo {
        code: "W0304",
        summary: "a `Region` statement names a memory the processor cannot use; another memory is used",
    },
    CodeInfo {
        code: "E0305",
        summary: "a layout the task's variant cannot accept (library constraint: cuBLAS, Regent)",
    },
    CodeInfo {
        code: "W0306",
        summary: "contradictory layouts for the same instance (one region, one memory kind) across statements",
    },
    CodeInfo {
        code: "W0307",
        summary: "a Layout statement silently shadowed by a less specific-looking one that the lookup order prefers",
    },
    CodeInfo {
        code: "W0308",
        summary: "`IndexTaskMap *`/`SingleTaskMap *` is never consulted by the reference mapper",
    },
    CodeInfo {
        code: "W0309",
        summary: "a statement names a task the application does not have",
    },
    CodeInfo {
        code: "W0310",
        summary: "a statement names a region argument the task(s) do not have, or one the run cannot match",
    },
    CodeInfo {
        code: "E0311",
        summary: "a mapping function reads `ipoint[k]`/`ispace[k]` beyond the launch's dimensionality",
    },
    CodeInfo {
        code: "E0312",
        summary: "a mapping function uses a task property its launch kind does not have (`parent` of an index launch, `ipoint` of a single launch)",
    },
    CodeInfo {
        code: "I0313",
        summary: "load imbalance: some processors receive more launch points than others",
    },
    CodeInfo {
        code: "W0314",
        summary: "`Exact` without `Compact` has no effect",
    },
    CodeInfo {
        code: "W0315",
        summary: "a Region/Layout/mapping statement for a named task never applies (processor or memory kind never used)",
    },
    CodeInfo {
        code: "W0316",
        summary: "IndexTaskMap on a single launch or SingleTaskMap on an index launch never applies",
    },
    CodeInfo {
        code: "W0317",
        summary: "InstanceLimit on an index launch (backpressure bookkeeping aborts: `event.exists()`)",
    },
    CodeInfo {
        code: "E0318",
        summary: "a task has no variant for any processor kind of this machine",
    },
    CodeInfo {
        code: "E0319",
        summary: "a mapping function fails while placing launch points",
    },
];

/// The summary of a resolution code, if it is one.
pub fn code_summary(code: &str) -> Option<&'static str> {
    CODES.iter().find(|c| c.code == code).map(|c| c.summary)
}

// ---------------------------------------------------------------------------
// The evaluator seam
// ---------------------------------------------------------------------------

/// A processor named by a mapping function: node index and index among the
/// node's processors of the task's kind, as the mapper sees the machine
/// (with several ranks per node, a node is a rank: see [`RankView`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachinePoint {
    /// Node index.
    pub node: i64,
    /// Processor index within the node.
    pub proc: i64,
}

/// Where the parent of a single launch runs, for `task.parent.processor(m)`,
/// in the mapper's coordinates (like [`MachinePoint`]).
#[derive(Debug, Clone)]
pub struct ParentPoint {
    /// The parent task's name.
    pub task: String,
    /// The parent's launch point (empty for a single launch).
    pub point: Vec<i64>,
    /// The parent's processor kind.
    pub kind: ProcKind,
    /// Its node.
    pub node: i64,
    /// Its processor index within the node.
    pub proc: i64,
}

/// Why a mapping function could not place a launch point. Each variant
/// carries what the reference prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// The machine point is outside the machine (`get_node_proc`'s checks).
    /// `raw` is the reference's output, e.g.
    /// `"Slice processor index out of bound!\n4 >= 4"`.
    #[error("{message}")]
    OutsideMachine {
        /// One-line description.
        message: String,
        /// What the reference prints.
        raw: String,
        /// The expression that named the processor, if known.
        at: Option<Span>,
    },
    /// The function returned a processor of a model built for another kind.
    #[error("{task} is actually mapped to {actual}, but machine model is for {model}")]
    WrongModelKind {
        /// The task.
        task: String,
        /// The kind the task runs on.
        actual: ProcKind,
        /// The kind of the machine model the function indexed.
        model: ProcKind,
    },
    /// Indexing a tuple past its end (`task.ipoint[1]` of a 1-D launch).
    #[error("{message}")]
    TupleIndexOutOfBound {
        /// One-line description (the evaluator's, with index and length).
        message: String,
        /// The indexing expression, if known.
        at: Option<Span>,
    },
    /// Any other failure of the function, with the reference's text.
    #[error("{message}")]
    Failed {
        /// Stable kind (see [`RuntimeFailure::kind`]).
        kind: String,
        /// One-line description.
        message: String,
        /// What the reference prints.
        raw: String,
        /// Where in the mapper it failed, if known.
        at: Option<Span>,
    },
    /// No evaluator is available: the point is not placed.
    #[error("mapping functions are not evaluated")]
    Unavailable,
}

/// Runs IndexTaskMap/SingleTaskMap functions: the seam between resolution
/// and the DSL evaluator.
pub trait LaunchPlacer {
    /// Where point `point` of index launch `task` (domain extents `domain`)
    /// runs when function `func` maps it and the task runs on `kind`.
    fn place_index_point(
        &mut self,
        func: &str,
        task: &Task,
        point: &[i64],
        domain: &[i64],
        kind: ProcKind,
    ) -> Result<MachinePoint, PlacementError>;

    /// Where single launch `task` runs when `func` maps it; `parent` is where
    /// the launching task runs, when known.
    fn place_single(
        &mut self,
        func: &str,
        task: &Task,
        parent: Option<&ParentPoint>,
        kind: ProcKind,
    ) -> Result<MachinePoint, PlacementError>;
}

/// A placer that evaluates nothing: every mapped point stays unplaced.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPlacer;

impl LaunchPlacer for NoPlacer {
    fn place_index_point(
        &mut self,
        _func: &str,
        _task: &Task,
        _point: &[i64],
        _domain: &[i64],
        _kind: ProcKind,
    ) -> Result<MachinePoint, PlacementError> {
        Err(PlacementError::Unavailable)
    }

    fn place_single(
        &mut self,
        _func: &str,
        _task: &Task,
        _parent: Option<&ParentPoint>,
        _kind: ProcKind,
    ) -> Result<MachinePoint, PlacementError> {
        Err(PlacementError::Unavailable)
    }
}

// ---------------------------------------------------------------------------
// Public entry points
// ---------------------------------------------------------------------------

/// How the application's run names region arguments for the DSL mapper.
///
/// The reference matches `Region`/`Layout`/`CollectMemory` statements
/// against the requirement's semantic names only when the program runs with
/// `-tm:use_semantic_name`, and against its 0-based index otherwise
/// (`dsl_default_policy_select_target_memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionNaming {
    /// Semantic names only (`-tm:use_semantic_name`).
    Semantic,
    /// Argument indices only (the reference's default).
    Index,
    /// Unknown: accept both, so nothing is reported as unmatchable.
    Both,
}

impl RegionNaming {
    /// What the application's recorded run flags say. Descriptions without
    /// flags (imported or hand-written) give [`RegionNaming::Both`].
    pub fn of_app(app: &App) -> RegionNaming {
        let flags = &app.run_flags;
        if flags.trim().is_empty() {
            return RegionNaming::Both;
        }
        // The built-in descriptions spell out the absence ("no
        // -tm:use_semantic_name"), so look for a positive mention.
        let positive = flags.match_indices("-tm:use_semantic_name").any(|(i, _)| {
            let before = flags[..i].trim_end();
            !before.ends_with("no") && !before.ends_with("without")
        });
        if positive {
            RegionNaming::Semantic
        } else {
            RegionNaming::Index
        }
    }

    /// The region field a statement needs to name argument `region` (a
    /// semantic name) of `task` in this application's runs: the argument
    /// index when the run matches by index, else the name.
    pub fn field(app: &App, task: &str, region: &str) -> String {
        if RegionNaming::of_app(app) == RegionNaming::Index {
            let index = app.task(task).and_then(|t| {
                t.regions
                    .iter()
                    .find(|r| {
                        r.name == region
                            || r.aliases.iter().any(|a| a == region)
                            || r.launches.iter().flatten().any(|n| n == region)
                    })
                    .map(|r| r.index)
            });
            if let Some(i) = index {
                return i.to_string();
            }
        }
        region.to_string()
    }
}

/// Options of [`resolve_mapping_with`].
#[derive(Debug, Clone, Copy)]
pub struct ResolveOptions {
    /// How region arguments are matched; `None`: [`RegionNaming::of_app`].
    pub naming: Option<RegionNaming>,
    /// Compute quick fixes (each candidate fix is verified by resolving the
    /// edited text again, so this is the expensive part).
    pub fixes: bool,
}

impl Default for ResolveOptions {
    fn default() -> Self {
        ResolveOptions {
            naming: None,
            fixes: true,
        }
    }
}

/// Resolves `analysis` (of `source`) against `app` on `machine`: every
/// decision, with the problems found on the responsible statements and the
/// first fatal failure a real run would print. Launch points are placed by
/// the built-in placer. Never panics.
pub fn resolve_mapping(
    analysis: &Analysis,
    source: &str,
    app: &App,
    machine: &Machine,
) -> Decisions {
    let ranks = app.ranks_per_node.on(machine);
    match EvalPlacer::with_ranks(&analysis.parsed.program, machine, ranks) {
        Ok(mut placer) => resolve_mapping_with(
            analysis,
            source,
            app,
            machine,
            &mut placer,
            ResolveOptions::default(),
        ),
        Err(err) => {
            // The top level aborts: no task runs, so no point is placed.
            let mut d = resolve_mapping_with(
                analysis,
                source,
                app,
                machine,
                &mut NoPlacer,
                ResolveOptions::default(),
            );
            if d.fatal.is_none() {
                d.fatal = Some(top_level_failure(&err));
            }
            d
        }
    }
}

/// [`resolve_mapping`] with an explicit launch placer and options.
pub fn resolve_mapping_with(
    analysis: &Analysis,
    source: &str,
    app: &App,
    machine: &Machine,
    placer: &mut dyn LaunchPlacer,
    options: ResolveOptions,
) -> Decisions {
    let naming = options.naming.unwrap_or_else(|| RegionNaming::of_app(app));
    let mut r = Resolver::new(analysis, source, app, machine, naming, options.fixes);
    r.run(Some(placer));
    r.finish()
}

// ---------------------------------------------------------------------------
// Kinds
// ---------------------------------------------------------------------------

/// The machine description's kind for a DSL processor keyword.
fn proc_of(k: ast::ProcKind) -> ProcKind {
    match k {
        ast::ProcKind::CPU => ProcKind::Cpu,
        ast::ProcKind::GPU => ProcKind::Gpu,
        ast::ProcKind::IO => ProcKind::Io,
        ast::ProcKind::PY => ProcKind::Py,
        ast::ProcKind::PROC => ProcKind::ProcSet,
        ast::ProcKind::OMP => ProcKind::Omp,
    }
}

/// The DSL keyword of a processor kind (UTIL has none).
fn dsl_proc(k: ProcKind) -> Option<ast::ProcKind> {
    match k {
        ProcKind::Cpu => Some(ast::ProcKind::CPU),
        ProcKind::Gpu => Some(ast::ProcKind::GPU),
        ProcKind::Io => Some(ast::ProcKind::IO),
        ProcKind::Py => Some(ast::ProcKind::PY),
        ProcKind::ProcSet => Some(ast::ProcKind::PROC),
        ProcKind::Omp => Some(ast::ProcKind::OMP),
        ProcKind::Util => None,
    }
}

/// The machine's memory kind for a DSL memory keyword (`VIRTUAL`: none).
fn mem_of(k: ast::MemKind) -> Option<MemKind> {
    match k {
        ast::MemKind::SYSMEM => Some(MemKind::Sysmem),
        ast::MemKind::FBMEM => Some(MemKind::Fbmem),
        ast::MemKind::RDMEM => Some(MemKind::Rdmem),
        ast::MemKind::ZCMEM => Some(MemKind::Zcmem),
        ast::MemKind::SOCKMEM => Some(MemKind::Sockmem),
        ast::MemKind::VIRTUAL => None,
    }
}

/// The DSL keyword of a memory kind, if the DSL can name it.
fn dsl_mem(k: MemKind) -> Option<ast::MemKind> {
    match k {
        MemKind::Sysmem => Some(ast::MemKind::SYSMEM),
        MemKind::Fbmem => Some(ast::MemKind::FBMEM),
        MemKind::Rdmem => Some(ast::MemKind::RDMEM),
        MemKind::Zcmem => Some(ast::MemKind::ZCMEM),
        MemKind::Sockmem => Some(ast::MemKind::SOCKMEM),
        _ => None,
    }
}

/// Legion's default ranking of processor kinds
/// (`DefaultMapper::default_policy_rank_processor_kinds`); CPU is always
/// ranked, the others only when the node has such processors.
const DEFAULT_RANKING: [ProcKind; 6] = [
    ProcKind::Gpu,
    ProcKind::Omp,
    ProcKind::ProcSet,
    ProcKind::Cpu,
    ProcKind::Io,
    ProcKind::Py,
];

/// The key an IndexTaskMap/SingleTaskMap statement for a processor kind is
/// stored under; only these three are consulted (`should_fall_back`).
fn map_kind_key(k: ProcKind) -> Option<&'static str> {
    match k {
        ProcKind::Cpu => Some("CPU"),
        ProcKind::Gpu => Some("GPU"),
        ProcKind::Omp => Some("OMP"),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Statement tables (as the reference builds them)
// ---------------------------------------------------------------------------

/// `Task` entry: priority list of kinds.
struct TaskRule<'a> {
    stmt: usize,
    kinds: &'a [(ast::ProcKind, Span)],
}

/// One `Region` statement's entry under a (task, region) key.
struct RegionRule<'a> {
    stmt: usize,
    proc: Option<ast::ProcKind>,
    mems: &'a [(ast::MemKind, Span)],
}

/// One `Layout` statement's entry under a (task, region) key.
#[derive(Clone, Copy)]
struct LayoutRule<'a> {
    stmt: usize,
    mem: Option<ast::MemKind>,
    constraints: &'a [Constraint],
}

/// An IndexTaskMap/SingleTaskMap entry.
struct MapRule<'a> {
    stmt: usize,
    func: &'a ast::Ident,
}

/// Every mapping table, filled in statement order with first-insert-wins.
#[derive(Default)]
struct Rules<'a> {
    task: HashMap<String, TaskRule<'a>>,
    region: HashMap<(String, String), Vec<RegionRule<'a>>>,
    layout: HashMap<(String, String), Vec<LayoutRule<'a>>>,
    /// Every (task key, region key, entry) in statement order, including
    /// entries shadowed by an earlier identical key (those are flagged by
    /// the grammar's W0218 and ignored here).
    layout_entries: Vec<(String, String, LayoutRule<'a>)>,
    limit: HashMap<String, (i64, usize)>,
    collect: HashSet<(String, String)>,
    index_map: HashMap<String, MapRule<'a>>,
    single_map: HashMap<String, MapRule<'a>>,
    replicate: HashMap<String, usize>,
}

/// The keys a task selector stands for.
fn sel_keys(sel: &TaskSel) -> Vec<String> {
    match sel {
        TaskSel::Star(_) => vec!["*".to_string()],
        TaskSel::Names(ns) => ns.iter().map(|n| n.name.clone()).collect(),
        TaskSel::Kind(k, _) => vec![k.name().to_string()],
    }
}

/// The key of a region field.
fn region_key(r: &RegionSel) -> String {
    match r {
        RegionSel::Star(_) => "*".to_string(),
        RegionSel::Name(n) => n.name.clone(),
        RegionSel::Index(i, _) => i.to_string(),
    }
}

fn mem_sel_span(m: &MemSel) -> Span {
    match m {
        MemSel::Star(s) | MemSel::Kind(_, s) => *s,
    }
}

impl<'a> Rules<'a> {
    fn build(program: &'a ast::Program) -> Rules<'a> {
        let mut rules = Rules::default();
        for (i, stmt) in program.stmts.iter().enumerate() {
            match &stmt.kind {
                StmtKind::Task { tasks, procs } => {
                    for k in sel_keys(tasks) {
                        rules.task.entry(k).or_insert(TaskRule {
                            stmt: i,
                            kinds: procs,
                        });
                    }
                }
                StmtKind::Region {
                    task,
                    region,
                    proc,
                    mems,
                } => {
                    let proc = match proc {
                        ProcSel::Star(_) => None,
                        ProcSel::Kind(k, _) => Some(*k),
                    };
                    for t in sel_keys(task) {
                        let list = rules.region.entry((t, region_key(region))).or_default();
                        if !list.iter().any(|r| r.proc == proc) {
                            list.push(RegionRule {
                                stmt: i,
                                proc,
                                mems,
                            });
                        }
                    }
                }
                StmtKind::Layout {
                    task,
                    region,
                    mem,
                    constraints,
                } => {
                    let mem = match mem {
                        MemSel::Star(_) => None,
                        // The reference reads VIRTUAL as "no memory kind",
                        // the same key as `*` (MyMem2LegionMem).
                        MemSel::Kind(ast::MemKind::VIRTUAL, _) => None,
                        MemSel::Kind(k, _) => Some(*k),
                    };
                    let entry = LayoutRule {
                        stmt: i,
                        mem,
                        constraints,
                    };
                    for t in sel_keys(task) {
                        let key = (t, region_key(region));
                        let list = rules.layout.entry(key.clone()).or_default();
                        if !list.iter().any(|r| r.mem == mem) {
                            list.push(entry);
                            rules.layout_entries.push((key.0, key.1, entry));
                        }
                    }
                }
                StmtKind::InstanceLimit { task, limit, .. } => {
                    rules.limit.entry(task.name.clone()).or_insert((*limit, i));
                }
                StmtKind::CollectMemory { task, region } => {
                    for t in sel_keys(task) {
                        rules.collect.insert((t, region_key(region)));
                    }
                }
                StmtKind::IndexTaskMap { tasks, func } => {
                    for k in sel_keys(tasks) {
                        rules
                            .index_map
                            .entry(k)
                            .or_insert(MapRule { stmt: i, func });
                    }
                }
                StmtKind::SingleTaskMap { tasks, func } => {
                    for k in sel_keys(tasks) {
                        rules
                            .single_map
                            .entry(k)
                            .or_insert(MapRule { stmt: i, func });
                    }
                }
                StmtKind::ControlReplicate { tasks } => {
                    for t in tasks {
                        rules.replicate.entry(t.name.clone()).or_insert(i);
                    }
                }
                _ => {}
            }
        }
        rules
    }
}

// ---------------------------------------------------------------------------
// Layouts
// ---------------------------------------------------------------------------

/// The layout one `Layout` statement's constraints give: Legion's default
/// (SOA, F_order) updated constraint by constraint, later ones of a family
/// overriding earlier ones (`ConstraintsNode::update`).
fn fold_constraints(constraints: &[Constraint]) -> LayoutDecision {
    let mut l = LayoutDecision::default();
    for c in constraints {
        match c {
            Constraint::Soa(_) => l.soa = true,
            Constraint::Aos(_) => l.soa = false,
            Constraint::COrder(_) => l.order = Order::C,
            Constraint::FOrder(_) => l.order = Order::F,
            Constraint::Compact(_) => l.compact = true,
            Constraint::Exact(_) => l.exact = true,
            Constraint::Align { op, value, .. } => l.align = Some((*op, *value)),
        }
    }
    l
}

/// The DSL text of a layout, e.g. `SOA C_order Align==128`.
pub fn layout_text(l: &LayoutDecision) -> String {
    let mut parts = vec![
        if l.soa { "SOA" } else { "AOS" }.to_string(),
        match l.order {
            Order::C => "C_order",
            Order::F => "F_order",
        }
        .to_string(),
    ];
    if l.compact {
        parts.push("Compact".into());
    }
    if l.exact {
        parts.push("Exact".into());
    }
    if let Some((op, v)) = l.align {
        parts.push(format!("Align{}{v}", op.text()));
    }
    parts.join(" ")
}

/// Whether `l` satisfies a library constraint.
fn satisfies(l: &LayoutDecision, c: &LibraryConstraint) -> bool {
    let order_ok = match c.order {
        Some(DimOrder::COrder) => l.order == Order::C,
        Some(DimOrder::FOrder) => l.order == Order::F,
        None => true,
    };
    let field_ok = match c.field_layout {
        Some(FieldLayout::Soa) => l.soa,
        Some(FieldLayout::Aos) => !l.soa,
        None => true,
    };
    order_ok && field_ok
}

/// `l` changed just enough to satisfy `c`.
fn repaired(l: &LayoutDecision, c: &LibraryConstraint) -> LayoutDecision {
    let mut out = *l;
    match c.order {
        Some(DimOrder::COrder) => out.order = Order::C,
        Some(DimOrder::FOrder) => out.order = Order::F,
        None => {}
    }
    match c.field_layout {
        Some(FieldLayout::Soa) => out.soa = true,
        Some(FieldLayout::Aos) => out.soa = false,
        None => {}
    }
    out
}

/// What a library constraint requires, in DSL words.
fn requirement_text(c: &LibraryConstraint) -> String {
    let mut parts = Vec::new();
    if let Some(o) = c.field_layout {
        parts.push(match o {
            FieldLayout::Soa => "SOA",
            FieldLayout::Aos => "AOS",
        });
    }
    if let Some(o) = c.order {
        parts.push(match o {
            DimOrder::COrder => "C_order",
            DimOrder::FOrder => "F_order",
        });
    }
    parts.join(" ")
}

// ---------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------

/// Why a kind of a `Task` list was passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SkipReason {
    /// The machine has no processor of the kind.
    NoProcessor,
    /// The task has no variant for the kind.
    NoVariant,
}

/// What happened to one memory candidate of a region argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemOutcome {
    Chosen,
    Virtual,
    /// The machine has no memory of the kind.
    Absent,
    /// The memory exists but the processor has no affinity to it.
    Unreachable,
}

/// One consulted memory candidate (in the reference's order).
#[derive(Debug, Clone, Copy)]
struct MemCandidate {
    mem: ast::MemKind,
    token: Span,
    stmt: usize,
    outcome: MemOutcome,
}

/// The layout rule that decided an instance: statement index and the key it
/// was stored under.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LayoutHit {
    stmt: usize,
    task: String,
    region: String,
    mem: Option<ast::MemKind>,
}

/// How a region argument was resolved.
#[derive(Debug, Clone)]
struct RegionTrace {
    names: Vec<String>,
    candidates: Vec<MemCandidate>,
    layout_hit: Option<LayoutHit>,
}

/// How a task was resolved.
#[derive(Debug, Clone)]
struct TaskTrace {
    kind_stmt: Option<usize>,
    skipped: Vec<(ast::ProcKind, Span, usize, SkipReason)>,
    regions: Vec<RegionTrace>,
    map_stmt: Option<usize>,
    map_func: Option<String>,
    /// The machine can run one of the task's variants (else E0318, and
    /// nothing else is reported for the task).
    runnable: bool,
}

/// (task index, argument index) pairs: instances of region arguments.
type Members = Vec<(usize, usize)>;

/// Text edits of a quick fix.
type Edits = Vec<(Span, String)>;

/// A fatal failure with its position in the run (phase, then order).
struct Fatal {
    phase: u8,
    order: usize,
    failure: RuntimeFailure,
}

/// Counts used to judge a candidate quick fix by resolving the edited text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct LayoutSummary {
    /// (task, argument index) pairs whose layout a library rejects.
    violations: BTreeSet<(String, u32)>,
    conflicts: usize,
    shadows: usize,
    parse_errors: usize,
}

struct Resolver<'a> {
    analysis: &'a Analysis,
    source: &'a str,
    program: &'a ast::Program,
    app: &'a App,
    machine: &'a Machine,
    naming: RegionNaming,
    fixes: bool,
    rules: Rules<'a>,
    tasks: Vec<TaskDecision>,
    traces: Vec<TaskTrace>,
    diags: Vec<Diagnostic>,
    fatals: Vec<Fatal>,
    summary: LayoutSummary,
    /// Tasks already reported for E0302 / E0312 (no duplicates from the
    /// evaluator; their points are not placed).
    reported_kind: HashSet<String>,
    reported_tuple: HashSet<String>,
    /// The machine as the mapper sees it (one node per rank).
    view: RankView<'a>,
    /// Each task's placement in the mapper's coordinates (rank, processor
    /// within the rank), by task index: what `task.parent.processor(m)`
    /// sees. `tasks[i].placement` is the physical one.
    logical: Vec<Vec<PointPlacement>>,
    /// Tasks with a static E0311 (an unconditional `ipoint[k]` past the
    /// launch's dimensionality): placing their points still runs and gives
    /// the run's failure, without a second diagnostic.
    static_tuple: HashSet<String>,
}

impl<'a> Resolver<'a> {
    fn new(
        analysis: &'a Analysis,
        source: &'a str,
        app: &'a App,
        machine: &'a Machine,
        naming: RegionNaming,
        fixes: bool,
    ) -> Resolver<'a> {
        let program = &analysis.parsed.program;
        Resolver {
            analysis,
            source,
            program,
            app,
            machine,
            naming,
            fixes,
            rules: Rules::build(program),
            tasks: Vec::new(),
            traces: Vec::new(),
            diags: Vec::new(),
            fatals: Vec::new(),
            summary: LayoutSummary::default(),
            reported_kind: HashSet::new(),
            reported_tuple: HashSet::new(),
            static_tuple: HashSet::new(),
            view: RankView::new(machine, app.ranks_per_node.on(machine)),
            logical: vec![Vec::new(); app.tasks.len()],
        }
    }

    fn stmt(&self, i: usize) -> Option<&'a Stmt> {
        self.program.stmts.get(i)
    }

    /// A placement in the mapper's coordinates as the machine's processor
    /// (out-of-range points, which are reported, are kept as they are).
    fn to_physical(&self, kind: ProcKind, p: &PointPlacement) -> PointPlacement {
        match self.view.to_physical(kind, p.node, p.proc) {
            Some((node, proc)) => PointPlacement {
                point: p.point.clone(),
                node,
                proc,
            },
            None => p.clone(),
        }
    }

    fn stmt_span(&self, i: usize) -> Span {
        self.stmt(i).map(|s| s.span).unwrap_or_default()
    }

    fn line(&self, offset: usize) -> usize {
        self.source
            .get(..offset.min(self.source.len()))
            .map(|s| s.matches('\n').count())
            .unwrap_or(0)
            + 1
    }

    /// `line N `<statement>`` for messages.
    fn describe_stmt(&self, i: usize) -> String {
        let span = self.stmt_span(i);
        format!(
            "`{}` (line {})",
            short(span.text(self.source)),
            self.line(span.start)
        )
    }

    fn fatal(&mut self, phase: u8, order: usize, kind: &str, raw: String, rule: Option<Span>) {
        self.fatals.push(Fatal {
            phase,
            order,
            failure: RuntimeFailure {
                kind: kind.to_string(),
                raw_output: raw,
                rule,
            },
        });
    }

    /// Everything, in the order a run meets it.
    fn run(&mut self, placer: Option<&mut dyn LaunchPlacer>) {
        let full = placer.is_some();
        if full {
            self.syntax_fatal();
            self.top_level_fatal();
            self.name_checks();
            self.statement_checks();
        }
        self.resolve_tasks();
        if full {
            self.kind_diagnostics();
            self.memory_diagnostics();
            self.never_applies();
        }
        self.layout_checks();
        if let Some(placer) = placer {
            self.function_checks();
            self.place_all(placer);
        }
    }

    fn finish(self) -> Decisions {
        let Resolver {
            app,
            machine,
            tasks,
            mut diags,
            mut fatals,
            ..
        } = self;
        diags.sort_by_key(|d| (d.span.start, d.span.end, d.code));
        fatals.sort_by_key(|f| (f.phase, f.order));
        Decisions {
            app: app.name.clone(),
            machine: machine.name.clone(),
            tasks,
            diagnostics: diags,
            fatal: fatals.into_iter().next().map(|f| f.failure),
        }
    }

    // ----- tasks ------------------------------------------------------------

    /// The names a region argument is matched by in this run, on launch
    /// `k` of its task ([`RegionArg::launch_names`]).
    fn arg_names(&self, arg: &RegionArg, k: usize) -> Vec<String> {
        let mut names = Vec::new();
        if self.naming != RegionNaming::Index {
            names.extend(arg.launch_names(k).into_iter().map(String::from));
        }
        if self.naming != RegionNaming::Semantic {
            names.push(arg.index.to_string());
        }
        let mut seen = HashSet::new();
        names.retain(|n| seen.insert(n.clone()));
        names
    }

    /// The four lookup keys in the reference's order.
    fn lookup_keys(task: &str, names: &[String]) -> Vec<(String, String)> {
        let mut keys: Vec<(String, String)> = Vec::new();
        for n in names {
            keys.push((task.to_string(), n.clone()));
        }
        keys.push((task.to_string(), "*".to_string()));
        for n in names {
            keys.push(("*".to_string(), n.clone()));
        }
        keys.push(("*".to_string(), "*".to_string()));
        let mut seen = HashSet::new();
        keys.retain(|k| seen.insert(k.clone()));
        keys
    }

    /// The processor kind (`dsl_default_policy_select_initial_processor`).
    #[allow(clippy::type_complexity)]
    fn resolve_kind(
        &self,
        task: &Task,
    ) -> (
        ProcKind,
        Option<usize>,
        Vec<(ast::ProcKind, Span, usize, SkipReason)>,
        bool,
    ) {
        let mut skipped = Vec::new();
        let rule = self
            .rules
            .task
            .get(&task.name)
            .or_else(|| self.rules.task.get("*"));
        if let Some(rule) = rule {
            for &(k, span) in rule.kinds {
                let pk = proc_of(k);
                if self.machine.procs_per_node(pk) == 0 {
                    skipped.push((k, span, rule.stmt, SkipReason::NoProcessor));
                } else if !task.has_variant(pk) {
                    skipped.push((k, span, rule.stmt, SkipReason::NoVariant));
                } else {
                    return (pk, Some(rule.stmt), skipped, true);
                }
            }
        }
        let (kind, ok) = self.default_kind(task);
        (kind, None, skipped, ok)
    }

    /// Legion's default choice; `false` when the task has no variant the
    /// machine can run.
    fn default_kind(&self, task: &Task) -> (ProcKind, bool) {
        for k in DEFAULT_RANKING {
            let present = k == ProcKind::Cpu || self.machine.procs_per_node(k) > 0;
            if present && task.has_variant(k) {
                return (k, true);
            }
        }
        (
            task.variants.first().copied().unwrap_or(ProcKind::Cpu),
            false,
        )
    }

    /// The memory (`query_memory_list` + `query_best_memory_for_proc`, else
    /// the default mapper's best-bandwidth visible memory).
    fn resolve_memory(
        &self,
        task: &Task,
        kind: ProcKind,
        names: &[String],
    ) -> (MemKind, Option<usize>, bool, Vec<MemCandidate>) {
        let mut candidates = Vec::new();
        let want = dsl_proc(kind);
        for key in Self::lookup_keys(&task.name, names) {
            let Some(list) = self.rules.region.get(&key) else {
                continue;
            };
            let entry = list
                .iter()
                .find(|r| r.proc.is_some() && r.proc == want)
                .or_else(|| list.iter().find(|r| r.proc.is_none()));
            if let Some(e) = entry {
                for &(m, token) in e.mems {
                    candidates.push(MemCandidate {
                        mem: m,
                        token,
                        stmt: e.stmt,
                        outcome: MemOutcome::Absent,
                    });
                }
            }
        }
        let default = self.default_memory(kind);
        let mut consulted = Vec::new();
        for mut c in candidates {
            match mem_of(c.mem) {
                None => {
                    c.outcome = MemOutcome::Virtual;
                    let stmt = c.stmt;
                    consulted.push(c);
                    return (default, Some(stmt), true, consulted);
                }
                Some(m) if self.machine.memory(m).is_none() => c.outcome = MemOutcome::Absent,
                Some(m) if !self.machine.can_reach(kind, m) => c.outcome = MemOutcome::Unreachable,
                Some(m) => {
                    c.outcome = MemOutcome::Chosen;
                    let stmt = c.stmt;
                    consulted.push(c);
                    return (m, Some(stmt), false, consulted);
                }
            }
            consulted.push(c);
        }
        (default, None, false, consulted)
    }

    /// `DefaultMapper::default_policy_select_target_memory`: the visible
    /// memory with the highest bandwidth class.
    fn default_memory(&self, kind: ProcKind) -> MemKind {
        self.machine
            .reachable(kind)
            .first()
            .copied()
            .unwrap_or(MemKind::Sysmem)
    }

    /// The layout (`query_constraint`).
    fn resolve_layout(
        &self,
        task: &Task,
        names: &[String],
        mem: MemKind,
    ) -> (LayoutDecision, Option<LayoutHit>) {
        let want = dsl_mem(mem);
        for key in Self::lookup_keys(&task.name, names) {
            let Some(list) = self.rules.layout.get(&key) else {
                continue;
            };
            let entry = list
                .iter()
                .find(|r| r.mem.is_some() && r.mem == want)
                .or_else(|| list.iter().find(|r| r.mem.is_none()));
            if let Some(e) = entry {
                return (
                    fold_constraints(e.constraints),
                    Some(LayoutHit {
                        stmt: e.stmt,
                        task: key.0,
                        region: key.1,
                        mem: e.mem,
                    }),
                );
            }
        }
        (LayoutDecision::default(), None)
    }

    /// Whether a CollectMemory statement applies (`should_collect_memory`;
    /// read-only arguments only, `map_task_post_function`).
    fn collects(&self, task: &Task, arg: &RegionArg, names: &[String]) -> bool {
        if arg.privilege != Privilege::Read {
            return false;
        }
        let c = &self.rules.collect;
        let has = |t: &str, r: &str| c.contains(&(t.to_string(), r.to_string()));
        has("*", "*")
            || has(&task.name, "*")
            || names.iter().any(|n| has(&task.name, n) || has("*", n))
    }

    fn resolve_tasks(&mut self) {
        let app = self.app;
        let any_replicate = !self.rules.replicate.is_empty();
        for (ti, task) in app.tasks.iter().enumerate() {
            let (kind, kind_stmt, skipped, ok) = self.resolve_kind(task);
            if !ok {
                let span = kind_stmt
                    .map(|s| self.stmt_span(s))
                    .or_else(|| self.program.stmts.first().map(|s| s.span))
                    .unwrap_or_default();
                let variants: Vec<String> = task.variants.iter().map(|k| k.to_string()).collect();
                self.diags.push(
                    Diagnostic::error(
                        "E0318",
                        span,
                        format!(
                            "`{}` has variants for {} only, and machine `{}` has no such processor",
                            task.name,
                            variants.join(", "),
                            self.machine.name
                        ),
                    )
                    .with_note("Legion's default mapper aborts: it finds no variant to run"),
                );
                self.fatal(
                    1,
                    ti * 10,
                    "mapping_error",
                    format!(
                        "Default mapper was unable to find any variants for task {}. The application must register at least one variant for all task kinds.",
                        task.name
                    ),
                    None,
                );
            }
            let mut regions = Vec::new();
            let mut traces = Vec::new();
            for arg in &task.regions {
                let names = self.arg_names(arg, 0);
                let (memory, mem_stmt, is_virtual, candidates) =
                    self.resolve_memory(task, kind, &names);
                let instance_of = |is_virtual: bool| {
                    if arg.privilege == Privilege::None {
                        InstanceKind::NoAccess
                    } else if arg.privilege == Privilege::Reduce {
                        InstanceKind::Physical
                    } else if task.inner {
                        InstanceKind::InnerTask
                    } else if arg.virtual_by_app {
                        InstanceKind::VirtualByApp
                    } else if is_virtual {
                        InstanceKind::VirtualByMapper
                    } else {
                        InstanceKind::Physical
                    }
                };
                let instance = instance_of(is_virtual);
                let (layout, hit) = self.resolve_layout(task, &names, memory);
                regions.push(RegionDecision {
                    region: arg.name.clone(),
                    index: arg.index,
                    memory,
                    memory_rule: mem_stmt.map(|s| self.stmt_span(s)),
                    layout,
                    layout_rule: hit.as_ref().map(|h| self.stmt_span(h.stmt)),
                    instance,
                    collect: self.collects(task, arg, &names),
                    launches: (1..=arg.launches.len())
                        .map(|k| {
                            let names = self.arg_names(arg, k);
                            let (memory, stmt, is_virtual, _) =
                                self.resolve_memory(task, kind, &names);
                            let (layout, hit) = self.resolve_layout(task, &names, memory);
                            LaunchRegionDecision {
                                // The region's own name, whatever the run
                                // matches by (an index run's first key is
                                // the argument index).
                                region: arg
                                    .launch_names(k)
                                    .first()
                                    .map(|n| n.to_string())
                                    .unwrap_or_default(),
                                memory,
                                memory_rule: stmt.map(|s| self.stmt_span(s)),
                                layout,
                                layout_rule: hit.as_ref().map(|h| self.stmt_span(h.stmt)),
                                instance: instance_of(is_virtual),
                            }
                        })
                        .collect(),
                });
                traces.push(RegionTrace {
                    names,
                    candidates,
                    layout_hit: hit,
                });
            }
            let control_replicated = if any_replicate {
                self.rules.replicate.contains_key(&task.name)
            } else {
                // Default: the top-level task is replicated on several nodes
                // (one shard per rank).
                task.parent.is_none() && self.view.nodes() > 1
            };
            let (map_stmt, map_func) = match self.map_rule(task, kind) {
                Some(r) => (Some(r.stmt), Some(r.func.name.clone())),
                None => (None, None),
            };
            self.tasks.push(TaskDecision {
                task: task.name.clone(),
                launch: task.launch,
                proc_kind: kind,
                proc_rule: kind_stmt.map(|s| self.stmt_span(s)),
                regions,
                placement: Vec::new(),
                map_rule: map_stmt.map(|s| self.stmt_span(s)),
                instance_limit: self
                    .rules
                    .limit
                    .get(&task.name)
                    .and_then(|(n, _)| u64::try_from(*n).ok())
                    .filter(|n| *n > 0),
                control_replicated,
                collect_memory: false,
            });
            let collect = self
                .tasks
                .last()
                .map(|t| t.regions.iter().any(|r| r.collect))
                .unwrap_or(false);
            if let Some(t) = self.tasks.last_mut() {
                t.collect_memory = collect;
            }
            self.traces.push(TaskTrace {
                kind_stmt,
                skipped,
                regions: traces,
                map_stmt,
                map_func,
                runnable: ok,
            });
        }
    }

    /// The IndexTaskMap/SingleTaskMap entry for a task (`should_fall_back`).
    fn map_rule(&self, task: &Task, kind: ProcKind) -> Option<&MapRule<'a>> {
        let table = match task.launch {
            Launch::Index => &self.rules.index_map,
            Launch::Single => &self.rules.single_map,
        };
        table
            .get(&task.name)
            .or_else(|| map_kind_key(kind).and_then(|k| table.get(k)))
    }
}

/// How `explain` names an instance kind.
fn instance_text(kind: InstanceKind, collect: bool) -> String {
    let text = match kind {
        InstanceKind::Physical => "physical",
        InstanceKind::VirtualByMapper => "virtual (VIRTUAL)",
        InstanceKind::VirtualByApp => "virtual (app)",
        InstanceKind::InnerTask => "virtual (inner task)",
        InstanceKind::NoAccess => "none (no access)",
    };
    if collect {
        format!("{text}, collected")
    } else {
        text.to_string()
    }
}

/// A statement's text shortened for a message.
fn short(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 60 {
        let cut: String = one_line.chars().take(57).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}

// ---------------------------------------------------------------------------
// What aborts before any task runs
// ---------------------------------------------------------------------------

impl<'a> Resolver<'a> {
    /// The reference stops at the first lexical or syntax error
    /// (`yyerror`: "Error at line N:\n\tMESSAGE"). Bison's exact wording of
    /// the unexpected/expected tokens is not reproduced.
    fn syntax_fatal(&mut self) {
        let Some(d) = self
            .analysis
            .parsed
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .min_by_key(|d| d.span.start)
        else {
            return;
        };
        let (line, message) = match d.code {
            "E0001" => {
                let c = d.span.text(self.source).chars().next().unwrap_or('?');
                (
                    self.line(d.span.start),
                    format!("Unrecognized character: {c}"),
                )
            }
            "E0002" => (
                self.line(d.span.start),
                "Unterminate string constant".to_string(),
            ),
            "E0101" => {
                // A missing `;` is noticed at the next token.
                let next = self
                    .analysis
                    .parsed
                    .tokens
                    .iter()
                    .find(|t| t.span.start >= d.span.end)
                    .map(|t| self.line(t.span.start))
                    .unwrap_or_else(|| self.source.matches('\n').count() + 1);
                (next, "syntax error".to_string())
            }
            _ => (self.line(d.span.start), "syntax error".to_string()),
        };
        self.fatal(
            0,
            0,
            "syntax_error",
            format!("Error at line {line}:\n\t{message}\n"),
            Some(d.span),
        );
    }

    /// Top-level statements run in order when the mapper is created; the
    /// reference aborts on a name used before it is assigned, a global
    /// assigned twice, and a mapping statement whose function is not (yet)
    /// a function of the form `f(Task t)` (`IndexTaskMapNode::run`).
    fn top_level_fatal(&mut self) {
        let mut globals: HashMap<String, bool> = HashMap::new(); // name -> is function
        for (i, stmt) in self.program.stmts.iter().enumerate() {
            let order = i + 1;
            match &stmt.kind {
                StmtKind::Assign { name, value } => {
                    if let Some(missing) = first_unbound(value, &globals) {
                        self.fatal(
                            0,
                            order,
                            "name_not_found",
                            format!("{missing} not found\n"),
                            Some(stmt.span),
                        );
                        return;
                    }
                    if globals.contains_key(&name.name) {
                        self.fatal(
                            0,
                            order,
                            "assign_conflict",
                            format!(
                                "AssignNode multiple {} cause conflicts in global_symbol!\n",
                                name.name
                            ),
                            Some(stmt.span),
                        );
                        return;
                    }
                    globals.insert(name.name.clone(), false);
                }
                StmtKind::Print { args, .. } => {
                    if let Some(missing) = args.iter().find_map(|a| first_unbound(a, &globals)) {
                        self.fatal(
                            0,
                            order,
                            "name_not_found",
                            format!("{missing} not found\n"),
                            Some(stmt.span),
                        );
                        return;
                    }
                }
                StmtKind::FuncDef { name, .. } => {
                    globals.entry(name.name.clone()).or_insert(true);
                }
                StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. } => {
                    let keyword = if matches!(stmt.kind, StmtKind::IndexTaskMap { .. }) {
                        "IndexTaskMap"
                    } else {
                        "SingleTaskMap"
                    };
                    let raw = match globals.get(&func.name) {
                        None => Some(format!("{keyword}'s function undefined\n")),
                        Some(false) => Some(format!("{keyword}'s mapping function is undefined\n")),
                        Some(true) => {
                            let ok = self.function_def(&func.name).is_some_and(|(params, _)| {
                                params.len() == 1 && params[0].ty == ParamType::Task
                            });
                            (!ok).then(|| {
                                if keyword == "IndexTaskMap" {
                                    "Entry mapping function's definition must be like func(Task t)\n"
                                        .to_string()
                                } else {
                                    "Entry mapping function's must be like func(Task t)\n"
                                        .to_string()
                                }
                            })
                        }
                    };
                    if let Some(raw) = raw {
                        self.fatal(0, order, "function_undefined", raw, Some(stmt.span));
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// The first definition of function `name` (later ones are ignored).
    fn function_def(&self, name: &str) -> Option<(&'a [ast::Param], &'a [Stmt])> {
        self.program.stmts.iter().find_map(|s| match &s.kind {
            StmtKind::FuncDef {
                name: n,
                params,
                body,
                ..
            } if n.name == name => Some((params.as_slice(), body.as_slice())),
            _ => None,
        })
    }
}

/// The first name in a top-level expression that is not yet bound (the
/// `Machine` constructor and comprehension variables excepted).
fn first_unbound(e: &Expr, globals: &HashMap<String, bool>) -> Option<String> {
    fn go(e: &Expr, globals: &HashMap<String, bool>, bound: &mut Vec<String>) -> Option<String> {
        match &e.kind {
            ExprKind::Name(n) => {
                if globals.contains_key(n) || bound.contains(n) {
                    None
                } else {
                    Some(n.clone())
                }
            }
            ExprKind::Call { callee, args } => {
                if e.as_machine_ctor().is_some() {
                    return None;
                }
                if !matches!(&callee.kind, ExprKind::Name(n) if n == "Machine") {
                    if let Some(m) = go(callee, globals, bound) {
                        return Some(m);
                    }
                }
                args.iter().find_map(|a| go(a, globals, bound))
            }
            ExprKind::Comprehension { body, var, iter } => {
                if let Some(m) = go(iter, globals, bound) {
                    return Some(m);
                }
                bound.push(var.name.clone());
                let r = go(body, globals, bound);
                bound.pop();
                r
            }
            ExprKind::Unpack(a) | ExprKind::Neg(a) | ExprKind::Paren(a) => go(a, globals, bound),
            ExprKind::Binary { lhs, rhs, .. } => {
                go(lhs, globals, bound).or_else(|| go(rhs, globals, bound))
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
                ..
            } => go(cond, globals, bound)
                .or_else(|| go(then, globals, bound))
                .or_else(|| go(otherwise, globals, bound)),
            ExprKind::Tuple(items) => items.iter().find_map(|a| go(a, globals, bound)),
            ExprKind::Index { base, indices } => go(base, globals, bound)
                .or_else(|| indices.iter().find_map(|a| go(a, globals, bound))),
            ExprKind::Slice { base, lo, hi, .. } => go(base, globals, bound)
                .or_else(|| lo.as_deref().and_then(|x| go(x, globals, bound)))
                .or_else(|| hi.as_deref().and_then(|x| go(x, globals, bound))),
            ExprKind::Prop { base, .. } => go(base, globals, bound),
            ExprKind::Int(_)
            | ExprKind::Bool(_)
            | ExprKind::Proc(_)
            | ExprKind::Mem(_)
            | ExprKind::Star => None,
        }
    }
    go(e, globals, &mut Vec::new())
}

// ---------------------------------------------------------------------------
// Names and statement-level checks
// ---------------------------------------------------------------------------

impl<'a> Resolver<'a> {
    /// Unknown task and region names (W0309, W0310).
    fn name_checks(&mut self) {
        let app = self.app;
        let task_names = app.task_names();
        let mut out = Vec::new();
        for stmt in &self.program.stmts {
            let (idents, region): (Vec<&ast::Ident>, Option<&RegionSel>) = match &stmt.kind {
                StmtKind::Task { tasks, .. }
                | StmtKind::IndexTaskMap { tasks, .. }
                | StmtKind::SingleTaskMap { tasks, .. } => (names_of(tasks), None),
                StmtKind::Region { task, region, .. }
                | StmtKind::Layout { task, region, .. }
                | StmtKind::CollectMemory { task, region } => (names_of(task), Some(region)),
                StmtKind::InstanceLimit { task, .. } => (vec![task], None),
                StmtKind::ControlReplicate { tasks } => (tasks.iter().collect(), None),
                _ => continue,
            };
            for id in &idents {
                if app.task(&id.name).is_some() {
                    continue;
                }
                let mut d = Diagnostic::warning(
                    "W0309",
                    id.span,
                    format!("application `{}` has no task `{}`", app.name, id.name),
                )
                .with_label("unknown task")
                .with_note("the reference matches task names exactly; this entry never applies");
                if let Some(best) = closest(&id.name, task_names.iter().copied()) {
                    d = d.with_fix(Fix::safe(
                        format!("use `{best}`"),
                        vec![(id.span, best.to_string())],
                    ));
                }
                out.push(d);
            }
            if let Some(r) = region {
                let is_region_stmt = matches!(stmt.kind, StmtKind::Region { .. });
                let known: Vec<&Task> = idents.iter().filter_map(|i| app.task(&i.name)).collect();
                out.extend(self.region_name_check(r, &known, &idents, is_region_stmt));
            }
        }
        self.diags.extend(out);
    }

    fn region_name_check(
        &self,
        r: &RegionSel,
        tasks: &[&Task],
        idents: &[&ast::Ident],
        is_region_stmt: bool,
    ) -> Vec<Diagnostic> {
        let app = self.app;
        let mut out = Vec::new();
        match r {
            RegionSel::Star(_) => {}
            RegionSel::Name(n) => {
                if self.naming == RegionNaming::Index {
                    let mut d = Diagnostic::warning(
                        "W0310",
                        n.span,
                        format!(
                            "`{}` never matches: `{}` runs without -tm:use_semantic_name, so the DSL mapper matches region arguments by index",
                            n.name, app.name
                        ),
                    )
                    .with_label("never matches in this run");
                    // Region accepts an index; find the one the name means.
                    let indices: BTreeSet<u32> = tasks
                        .iter()
                        .flat_map(|t| t.regions_named(&n.name))
                        .map(|a| a.index)
                        .collect();
                    if is_region_stmt && !tasks.is_empty() && indices.len() == 1 {
                        if let Some(i) = indices.first() {
                            d = d.with_fix(Fix::safe(
                                format!("use the argument index {i}"),
                                vec![(n.span, i.to_string())],
                            ));
                        }
                    } else if !is_region_stmt {
                        d = d.with_note(
                            "Layout and CollectMemory cannot name an argument index: use `*` with a task name",
                        );
                    }
                    out.push(d);
                    return out;
                }
                let all = app.region_names();
                if !all.contains(n.name.as_str()) {
                    let mut d = Diagnostic::warning(
                        "W0310",
                        n.span,
                        format!(
                            "application `{}` has no region argument named `{}`",
                            app.name, n.name
                        ),
                    )
                    .with_label("unknown region");
                    let pool: Vec<&str> = if tasks.is_empty() {
                        all.iter().copied().collect()
                    } else {
                        tasks
                            .iter()
                            .flat_map(|t| t.regions.iter())
                            .flat_map(|a| {
                                std::iter::once(a.name.as_str())
                                    .chain(a.aliases.iter().map(|s| s.as_str()))
                            })
                            .collect()
                    };
                    if let Some(best) = closest(&n.name, pool.iter().copied()) {
                        d = d.with_fix(Fix::safe(
                            format!("use `{best}`"),
                            vec![(n.span, best.to_string())],
                        ));
                    }
                    out.push(d);
                    return out;
                }
                for (t, id) in tasks
                    .iter()
                    .zip(idents.iter().filter(|i| app.task(&i.name).is_some()))
                {
                    if t.regions_named(&n.name).is_empty() {
                        let args: Vec<&str> = t.regions.iter().map(|a| a.name.as_str()).collect();
                        let mut d = Diagnostic::warning(
                            "W0310",
                            n.span,
                            format!(
                                "task `{}` has no region argument `{}` (its arguments: {})",
                                t.name,
                                n.name,
                                if args.is_empty() {
                                    "none".to_string()
                                } else {
                                    args.join(", ")
                                }
                            ),
                        )
                        .with_label("not an argument of this task")
                        .with_related(id.span, "the task");
                        if tasks.len() == 1 {
                            if let Some(best) = closest(&n.name, args.iter().copied()) {
                                d = d.with_fix(Fix::safe(
                                    format!("use `{best}`"),
                                    vec![(n.span, best.to_string())],
                                ));
                            }
                        }
                        out.push(d);
                    }
                }
            }
            RegionSel::Index(i, span) => {
                if self.naming == RegionNaming::Semantic {
                    let mut d = Diagnostic::warning(
                        "W0310",
                        *span,
                        format!(
                            "argument index {i} never matches: `{}` runs with -tm:use_semantic_name, so the DSL mapper matches region arguments by name",
                            app.name
                        ),
                    )
                    .with_label("never matches in this run");
                    let names: BTreeSet<&str> = tasks
                        .iter()
                        .filter_map(|t| u32::try_from(*i).ok().and_then(|i| t.region_at(i)))
                        .map(|a| a.name.as_str())
                        .collect();
                    if !tasks.is_empty() && names.len() == 1 {
                        if let Some(name) = names.first() {
                            d = d.with_fix(Fix::safe(
                                format!("use the region name `{name}`"),
                                vec![(*span, name.to_string())],
                            ));
                        }
                    }
                    out.push(d);
                    return out;
                }
                for t in tasks {
                    let has = u32::try_from(*i)
                        .ok()
                        .and_then(|i| t.region_at(i))
                        .is_some();
                    if !has {
                        out.push(
                            Diagnostic::warning(
                                "W0310",
                                *span,
                                format!(
                                    "task `{}` has {} region argument(s); index {i} does not exist",
                                    t.name,
                                    t.regions.len()
                                ),
                            )
                            .with_label("no such argument"),
                        );
                    }
                }
            }
        }
        out
    }

    /// Statement-level checks that need the application but no resolution:
    /// `IndexTaskMap *` (W0308), `Exact` without `Compact` (W0314), map
    /// statements of the wrong launch kind (W0316), InstanceLimit on index
    /// launches (W0317).
    fn statement_checks(&mut self) {
        let app = self.app;
        let mut out = Vec::new();
        for (i, stmt) in self.program.stmts.iter().enumerate() {
            match &stmt.kind {
                StmtKind::IndexTaskMap { tasks, func }
                | StmtKind::SingleTaskMap { tasks, func } => {
                    let index = matches!(stmt.kind, StmtKind::IndexTaskMap { .. });
                    let keyword = if index {
                        "IndexTaskMap"
                    } else {
                        "SingleTaskMap"
                    };
                    let launch = if index { Launch::Index } else { Launch::Single };
                    if let TaskSel::Star(star) = tasks {
                        out.push(self.star_map_warning(i, *star, func, keyword, launch));
                    }
                    if let TaskSel::Names(ns) = tasks {
                        for n in ns {
                            let Some(t) = app.task(&n.name) else { continue };
                            if t.launch == launch {
                                continue;
                            }
                            let (what, other) = if index {
                                ("a single launch", "SingleTaskMap")
                            } else {
                                ("an index launch", "IndexTaskMap")
                            };
                            let mut d = Diagnostic::warning(
                                "W0316",
                                n.span,
                                format!("`{}` is {what}: {keyword} never applies to it", n.name),
                            )
                            .with_label(format!("needs {other}"))
                            .with_note(format!(
                                "the reference looks up {keyword} functions for {} launches only (should_fall_back)",
                                if index { "index" } else { "single" }
                            ));
                            if ns.len() == 1 {
                                let kw =
                                    Span::new(stmt.span.start, stmt.span.start + keyword.len());
                                if kw.text(self.source) == keyword {
                                    d = d.with_fix(Fix::unsafe_(
                                        format!("use {other}"),
                                        vec![(kw, other.to_string())],
                                    ));
                                }
                            }
                            out.push(d);
                        }
                    }
                }
                StmtKind::Layout { constraints, .. } => {
                    let compact = constraints
                        .iter()
                        .any(|c| matches!(c, Constraint::Compact(_)));
                    if !compact {
                        for c in constraints {
                            if let Constraint::Exact(span) = c {
                                out.push(
                                    Diagnostic::warning(
                                        "W0314",
                                        *span,
                                        "`Exact` has no effect without `Compact`",
                                    )
                                    .with_label("no effect")
                                    .with_note("the reference passes Exact only to the Compact specialization (dsl_default_policy_select_constraints)")
                                    .with_fix(Fix::safe(
                                        "remove `Exact`",
                                        vec![(with_leading_blank(self.source, *span), String::new())],
                                    )),
                                );
                            }
                        }
                    }
                }
                StmtKind::InstanceLimit { task, .. } => {
                    if let Some(t) = app.task(&task.name) {
                        if t.launch == Launch::Index {
                            out.push(
                                Diagnostic::warning(
                                    "W0317",
                                    task.span,
                                    format!("InstanceLimit on `{}`, an index launch, is expected to abort the run", task.name),
                                )
                                .with_label("index launch")
                                .with_note("the DSL mapper's backpressure queue tracks an index launch's slices by (slice domain, context index) but each point task reports back separately, so the second report finds no entry: Assertion `event.exists()' failed (inferred from NSMapper::report_profiling, not observed in a log)")
                                .with_fix(Fix::unsafe_(
                                    "remove the InstanceLimit statement",
                                    vec![(line_or_span(self.source, stmt.span), String::new())],
                                )),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
        self.diags.extend(out);
    }

    /// W0308 with a fix naming the kinds the statement was meant for.
    fn star_map_warning(
        &self,
        stmt_index: usize,
        star: Span,
        func: &ast::Ident,
        keyword: &str,
        launch: Launch,
    ) -> Diagnostic {
        let app = self.app;
        // Tasks of this launch kind that have no entry of their own: they
        // are what `*` was evidently meant for.
        let table = if launch == Launch::Index {
            &self.rules.index_map
        } else {
            &self.rules.single_map
        };
        let mut kinds: BTreeSet<&'static str> = BTreeSet::new();
        for t in app.tasks.iter().filter(|t| t.launch == launch) {
            if table.contains_key(&t.name) {
                continue;
            }
            let (k, _, _, _) = self.resolve_kind(t);
            if let Some(key) = map_kind_key(k) {
                if !table.contains_key(key) {
                    kinds.insert(key);
                }
            }
        }
        // A function that returns a point of `Machine(K)` only suits kind K.
        if let Some(k) = self.function_model_kind(&func.name, 0) {
            kinds = [k.name()]
                .into_iter()
                .filter_map(map_kind_key_str)
                .collect();
        }
        let mut d = Diagnostic::warning(
            "W0308",
            star,
            format!("`{keyword} *` is never consulted: the DSL mapper looks up the task's name, then its processor kind (CPU, GPU, OMP)"),
        )
        .with_label("never used")
        .with_note("Tree2Legion::runindex/runsingle and should_fall_back do not look up `*`; tasks without an entry get Legion's default placement");
        let stmt_span = self.stmt_span(stmt_index);
        match kinds.len() {
            0 => {}
            1 => {
                if let Some(k) = kinds.first() {
                    d = d.with_fix(Fix::unsafe_(
                        format!("apply `{}` to {k} tasks", func.name),
                        vec![(star, k.to_string())],
                    ));
                }
            }
            _ => {
                let text = kinds
                    .iter()
                    .map(|k| format!("{keyword} {k} {};", func.name))
                    .collect::<Vec<_>>()
                    .join("\n");
                d = d.with_fix(Fix::unsafe_(
                    format!(
                        "apply `{}` to {} tasks",
                        func.name,
                        kinds.iter().copied().collect::<Vec<_>>().join(" and ")
                    ),
                    vec![(stmt_span, text)],
                ));
            }
        }
        d
    }
}

fn map_kind_key_str(name: &str) -> Option<&'static str> {
    match name {
        "CPU" => Some("CPU"),
        "GPU" => Some("GPU"),
        "OMP" => Some("OMP"),
        _ => None,
    }
}

/// The names in a task selector.
fn names_of(sel: &TaskSel) -> Vec<&ast::Ident> {
    match sel {
        TaskSel::Names(ns) => ns.iter().collect(),
        _ => Vec::new(),
    }
}

/// `span` widened to the blanks before it (so removing a word leaves no
/// double space).
fn with_leading_blank(source: &str, span: Span) -> Span {
    let bytes = source.as_bytes();
    let mut start = span.start.min(bytes.len());
    while start > 0 && matches!(bytes[start - 1], b' ' | b'\t') {
        start -= 1;
    }
    Span::new(start, span.end)
}

// ---------------------------------------------------------------------------
// Processor kinds, memories, statements that never apply
// ---------------------------------------------------------------------------

impl<'a> Resolver<'a> {
    /// W0303: a named task's `Task` list names a kind that is skipped.
    fn kind_diagnostics(&mut self) {
        let app = self.app;
        let mut out = Vec::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            let trace = &self.traces[ti];
            let decided = &self.tasks[ti];
            // Only statements that name the task: for `*` a skipped kind is
            // the intended "if supported" fallback.
            let Some(rule) = self.rules.task.get(&task.name) else {
                continue;
            };
            let Some(stmt) = self.stmt(rule.stmt) else {
                continue;
            };
            let StmtKind::Task { tasks: sel, procs } = &stmt.kind else {
                continue;
            };
            let single_name = matches!(sel, TaskSel::Names(ns) if ns.len() == 1);
            let how = if trace.kind_stmt.is_some() {
                format!("the next kind in the list, {}", decided.proc_kind)
            } else {
                format!(
                    "{} (Legion's default: GPU > OMP > CPU among its variants)",
                    decided.proc_kind
                )
            };
            for &(k, span, _, reason) in &trace.skipped {
                let why = match reason {
                    SkipReason::NoVariant => {
                        let vs: Vec<String> = task.variants.iter().map(|v| v.to_string()).collect();
                        format!(
                            "`{}` has no {k} variant (it has {})",
                            task.name,
                            vs.join(", ")
                        )
                    }
                    SkipReason::NoProcessor => {
                        format!("machine `{}` has no {k} processor", self.machine.name)
                    }
                };
                let mut d = Diagnostic::warning(
                    "W0303",
                    span,
                    format!("{why}: this choice is skipped and `{}` runs on {how}", task.name),
                )
                .with_label(format!("{k} not used"))
                .with_note("the reference tries each kind in order and silently skips kinds without a variant or processor (dsl_default_policy_select_initial_processor)");
                if single_name {
                    let fix = if procs.len() > 1 {
                        // Remove the kind and one adjacent comma.
                        let pos = procs.iter().position(|(_, s)| *s == span).unwrap_or(0);
                        let remove = if pos + 1 < procs.len() {
                            Span::new(span.start, procs[pos + 1].1.start)
                        } else {
                            Span::new(procs[pos - 1].1.end, span.end)
                        };
                        Fix::safe(
                            format!("remove {k} from the list"),
                            vec![(remove, String::new())],
                        )
                    } else {
                        Fix::unsafe_(
                            format!("map `{}` to {} explicitly", task.name, decided.proc_kind),
                            vec![(span, decided.proc_kind.to_string())],
                        )
                    };
                    d = d.with_fix(fix);
                }
                out.push(d);
            }
        }
        self.diags.extend(out);
    }

    /// W0304: a memory a processor cannot use, consulted before the memory
    /// that was chosen. One diagnostic per memory token, listing the
    /// affected arguments.
    fn memory_diagnostics(&mut self) {
        let app = self.app;
        // token -> (memory, processor kinds, affected, outcome, fallbacks)
        struct Hit {
            mem: ast::MemKind,
            stmt: usize,
            kinds: BTreeSet<ProcKind>,
            affected: Vec<String>,
            absent: bool,
            fallbacks: BTreeSet<String>,
        }
        let mut hits: BTreeMap<(usize, usize), Hit> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            let kind = self.tasks[ti].proc_kind;
            for (ai, rt) in self.traces[ti].regions.iter().enumerate() {
                let decided = &self.tasks[ti].regions[ai];
                // Memory matters only for instances the mapper places.
                if !self.traces[ti].runnable
                    || matches!(
                        decided.instance,
                        InstanceKind::NoAccess
                            | InstanceKind::InnerTask
                            | InstanceKind::VirtualByApp
                    )
                {
                    continue;
                }
                let stmt_usable: HashSet<usize> = rt
                    .candidates
                    .iter()
                    .filter(|c| matches!(c.outcome, MemOutcome::Chosen | MemOutcome::Virtual))
                    .map(|c| c.stmt)
                    .collect();
                let others_usable = |stmt: usize| {
                    // Another memory of the same statement exists on the
                    // machine (a portable fallback list): stay quiet.
                    rt.candidates
                        .iter()
                        .any(|c| c.stmt == stmt && c.outcome != MemOutcome::Absent)
                        || stmt_usable.contains(&stmt)
                };
                for c in &rt.candidates {
                    let report = match c.outcome {
                        MemOutcome::Unreachable => true,
                        MemOutcome::Absent => !others_usable(c.stmt),
                        _ => false,
                    };
                    if !report {
                        continue;
                    }
                    let fallback = match decided.instance {
                        InstanceKind::VirtualByMapper => "no instance (VIRTUAL)".to_string(),
                        _ => match decided.memory_rule {
                            Some(_) => decided.memory.to_string(),
                            None => format!("{} (the default)", decided.memory),
                        },
                    };
                    let h = hits.entry((c.token.start, c.token.end)).or_insert(Hit {
                        mem: c.mem,
                        stmt: c.stmt,
                        kinds: BTreeSet::new(),
                        affected: Vec::new(),
                        absent: c.outcome == MemOutcome::Absent,
                        fallbacks: BTreeSet::new(),
                    });
                    h.kinds.insert(kind);
                    let what = format!("`{}` argument `{}`", task.name, decided.region);
                    if !h.affected.contains(&what) {
                        h.affected.push(what);
                    }
                    h.fallbacks.insert(fallback);
                }
            }
        }
        let mut out = Vec::new();
        for ((start, end), h) in hits {
            let token = Span::new(start, end);
            let kinds: Vec<String> = h.kinds.iter().map(|k| k.to_string()).collect();
            let what = if h.absent {
                format!("machine `{}` has no {}", self.machine.name, h.mem)
            } else {
                format!("{} processors cannot access {}", kinds.join("/"), h.mem)
            };
            let fallbacks: Vec<String> = h.fallbacks.iter().cloned().collect();
            let count = h.affected.len();
            let mut shown: Vec<String> = h.affected.iter().take(3).cloned().collect();
            if count > 3 {
                shown.push(format!("{} more", count - 3));
            }
            let mut d = Diagnostic::warning(
                "W0304",
                token,
                format!(
                    "{what}: the DSL mapper skips it and uses {} instead, for {}",
                    fallbacks.join(" or "),
                    shown.join(", ")
                ),
            )
            .with_label("not usable")
            .with_note("the reference takes the first listed memory with affinity to the processor (query_best_memory_for_proc), else the default mapper's choice; the run does not fail");
            if let Some(stmt) = self.stmt(h.stmt) {
                if let StmtKind::Region { mems, .. } = &stmt.kind {
                    if mems.len() > 1 {
                        let pos = mems.iter().position(|(_, s)| *s == token).unwrap_or(0);
                        let remove = if pos + 1 < mems.len() {
                            Span::new(token.start, mems[pos + 1].1.start)
                        } else {
                            Span::new(mems[pos - 1].1.end, token.end)
                        };
                        d = d.with_fix(Fix::safe(
                            format!("remove {} from the list", h.mem),
                            vec![(remove, String::new())],
                        ));
                    } else {
                        // Host memory for a GPU evidently means zero-copy
                        // memory; otherwise name what is used anyway.
                        let gpu_host = h.kinds.iter().all(|k| *k == ProcKind::Gpu)
                            && matches!(
                                h.mem,
                                ast::MemKind::SYSMEM | ast::MemKind::SOCKMEM | ast::MemKind::RDMEM
                            )
                            && self.machine.can_reach(ProcKind::Gpu, MemKind::Zcmem);
                        let replacement = if gpu_host {
                            Some("ZCMEM".to_string())
                        } else if h.fallbacks.len() == 1 {
                            let f = fallbacks[0].split(' ').next().unwrap_or("").to_string();
                            ast::MemKind::from_name(&f).map(|_| f)
                        } else {
                            None
                        };
                        if let Some(r) = replacement {
                            let title = if gpu_host {
                                "use ZCMEM (host memory GPUs can access)".to_string()
                            } else {
                                format!("use {r}")
                            };
                            d = d.with_fix(Fix::unsafe_(title, vec![(token, r)]));
                        }
                    }
                }
            }
            out.push(d);
        }
        self.diags.extend(out);
    }

    /// W0315: Region/Layout statements for named tasks whose processor or
    /// memory field never matches how the task is mapped.
    fn never_applies(&mut self) {
        let app = self.app;
        let mut out = Vec::new();
        for stmt in &self.program.stmts {
            match &stmt.kind {
                StmtKind::Region {
                    task: TaskSel::Names(ns),
                    proc: ProcSel::Kind(k, kspan),
                    ..
                } => {
                    for n in ns {
                        let Some(ti) = app.tasks.iter().position(|t| t.name == n.name) else {
                            continue;
                        };
                        let actual = self.tasks[ti].proc_kind;
                        if proc_of(*k) == actual {
                            continue;
                        }
                        let mut d = Diagnostic::warning(
                            "W0315",
                            *kspan,
                            format!("`{}` runs on {actual}, so this {k} rule never applies to it", n.name),
                        )
                        .with_label("never applies")
                        .with_note("a Region statement applies only when the task runs on the named processor kind");
                        if ns.len() == 1 {
                            if let Some(dk) = dsl_proc(actual) {
                                d = d.with_fix(Fix::unsafe_(
                                    format!("apply it to {dk}"),
                                    vec![(*kspan, dk.name().to_string())],
                                ));
                            }
                        }
                        out.push(d);
                    }
                }
                StmtKind::Layout {
                    task: TaskSel::Names(ns),
                    region,
                    mem: MemSel::Kind(m, mspan),
                    ..
                } => {
                    let rkey = region_key(region);
                    for n in ns {
                        let Some(ti) = app.tasks.iter().position(|t| t.name == n.name) else {
                            continue;
                        };
                        let decided = &self.tasks[ti];
                        let used: BTreeSet<MemKind> = decided
                            .regions
                            .iter()
                            .zip(&self.traces[ti].regions)
                            .filter(|(r, t)| {
                                r.instance.is_physical() && (rkey == "*" || t.names.contains(&rkey))
                            })
                            .map(|(r, _)| r.memory)
                            .collect();
                        if used.is_empty() || mem_of(*m).is_some_and(|mk| used.contains(&mk)) {
                            continue;
                        }
                        let used_text: Vec<String> = used.iter().map(|u| u.to_string()).collect();
                        let mut d = Diagnostic::warning(
                            "W0315",
                            *mspan,
                            format!(
                                "`{}` keeps these instances in {}, so this {m} layout never applies",
                                n.name,
                                used_text.join(", ")
                            ),
                        )
                        .with_label("never applies");
                        if used.len() == 1 && ns.len() == 1 {
                            if let Some(u) = used.first().and_then(|u| dsl_mem(*u)) {
                                d = d.with_fix(Fix::unsafe_(
                                    format!("apply it to {u}"),
                                    vec![(*mspan, u.name().to_string())],
                                ));
                            }
                        }
                        out.push(d);
                    }
                }
                _ => {}
            }
        }
        self.diags.extend(out);
    }
}

// ---------------------------------------------------------------------------
// Layout errors: library constraints, conflicts, shadowed statements
// ---------------------------------------------------------------------------

/// A Layout statement to add (or an existing one to rewrite): the scope
/// (task key, region key, memory) and the constraints.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LayoutEdit {
    task: String,
    region: String,
    mem: Option<ast::MemKind>,
    layout: LayoutDecision,
}

impl LayoutEdit {
    fn text(&self) -> String {
        format!(
            "Layout {} {} {} {};",
            self.task,
            self.region,
            self.mem.map_or("*", |m| m.name()),
            layout_text(&self.layout)
        )
    }
}

/// Union-find over region names: arguments sharing a name or alias are one
/// logical region (one field space).
fn region_families(app: &App) -> HashMap<String, usize> {
    let mut parent: Vec<usize> = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for t in &app.tasks {
        for a in &t.regions {
            let names: Vec<&String> = std::iter::once(&a.name).chain(a.aliases.iter()).collect();
            let mut first: Option<usize> = None;
            for n in names {
                let id = *ids.entry(n.clone()).or_insert_with(|| {
                    parent.push(parent.len());
                    parent.len() - 1
                });
                match first {
                    None => first = Some(id),
                    Some(f) => {
                        let (a, b) = (find(&mut parent, f), find(&mut parent, id));
                        if a != b {
                            parent[b] = a;
                        }
                    }
                }
            }
        }
    }
    let keys: Vec<(String, usize)> = ids.iter().map(|(k, v)| (k.clone(), *v)).collect();
    keys.into_iter()
        .map(|(k, v)| (k, find(&mut parent, v)))
        .collect()
}

impl<'a> Resolver<'a> {
    /// Specificity of a deciding rule (higher: more specific).
    fn hit_rank(hit: &Option<LayoutHit>) -> u8 {
        match hit {
            None => 0,
            Some(h) => {
                1 + 4 * u8::from(h.task != "*")
                    + 2 * u8::from(h.region != "*")
                    + u8::from(h.mem.is_some())
            }
        }
    }

    /// The span a layout problem is reported on when no statement decided:
    /// the statement that put the task on its processor kind, else the map
    /// statement, else the first statement.
    fn default_anchor(&self, ti: usize) -> Span {
        self.traces[ti]
            .kind_stmt
            .or(self.traces[ti].map_stmt)
            .map(|s| self.stmt_span(s))
            .or_else(|| self.program.stmts.first().map(|s| s.span))
            .unwrap_or_default()
    }

    /// The constraint token of a Layout statement that sets a family the
    /// library constraint cares about, to point at it.
    fn offending_token(
        &self,
        stmt: usize,
        c: &LibraryConstraint,
        l: &LayoutDecision,
    ) -> Option<Span> {
        let StmtKind::Layout { constraints, .. } = &self.stmt(stmt)?.kind else {
            return None;
        };
        constraints.iter().rev().find_map(|k| match k {
            Constraint::COrder(s) if c.order == Some(DimOrder::FOrder) && l.order == Order::C => {
                Some(*s)
            }
            Constraint::FOrder(s) if c.order == Some(DimOrder::COrder) && l.order == Order::F => {
                Some(*s)
            }
            Constraint::Soa(s) if c.field_layout == Some(FieldLayout::Aos) => Some(*s),
            Constraint::Aos(s) if c.field_layout == Some(FieldLayout::Soa) => Some(*s),
            _ => None,
        })
    }

    fn layout_checks(&mut self) {
        let app = self.app;
        self.summary.parse_errors = self
            .analysis
            .parsed
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .count();

        // --- library constraints (E0305) --------------------------------
        // (deciding statement, constraint) -> [(task, argument)]
        let mut groups: BTreeMap<(Option<usize>, usize), Members> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            let kind = self.tasks[ti].proc_kind;
            for (ai, arg) in task.regions.iter().enumerate() {
                let r = &self.tasks[ti].regions[ai];
                if !r.instance.is_physical() || !self.traces[ti].runnable {
                    continue;
                }
                for c in app.constraints_for(task, kind, arg) {
                    if satisfies(&r.layout, c) {
                        continue;
                    }
                    let ci = app
                        .library_constraints
                        .iter()
                        .position(|x| std::ptr::eq(x, c))
                        .unwrap_or(0);
                    self.summary
                        .violations
                        .insert((task.name.clone(), arg.index));
                    let decider = self.traces[ti].regions[ai]
                        .layout_hit
                        .as_ref()
                        .map(|h| h.stmt);
                    groups.entry((decider, ci)).or_default().push((ti, ai));
                }
            }
        }

        // --- one instance, several layouts (W0306) ------------------------
        let families = region_families(app);
        let mut inst: BTreeMap<(MemKind, Option<usize>), Members> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            for (ai, arg) in task.regions.iter().enumerate() {
                let r = &self.tasks[ti].regions[ai];
                if !r.instance.is_physical() || !self.traces[ti].runnable {
                    continue;
                }
                // Reduction instances share one cache entry per memory kind
                // and reduction operator, whatever the region.
                let family = if arg.privilege == Privilege::Reduce {
                    None
                } else {
                    Some(families.get(&arg.name).copied().unwrap_or(usize::MAX))
                };
                inst.entry((r.memory, family)).or_default().push((ti, ai));
            }
        }
        let mut conflicts = Vec::new();
        for ((mem, family), items) in inst {
            let mut layouts: Vec<(LayoutDecision, Vec<(usize, usize)>)> = Vec::new();
            for (ti, ai) in items {
                let l = self.tasks[ti].regions[ai].layout;
                match layouts.iter_mut().find(|(x, _)| *x == l) {
                    Some((_, v)) => v.push((ti, ai)),
                    None => layouts.push((l, vec![(ti, ai)])),
                }
            }
            if layouts.len() > 1 {
                self.summary.conflicts += layouts.len() - 1;
                conflicts.push((mem, family.is_none(), layouts));
            }
        }

        // --- shadowed statements (W0307) ------------------------------------
        let shadows = self.find_shadowed_layouts();
        self.summary.shadows = shadows.len();

        // The summary is complete: candidate fixes can be judged against it.
        for ((decider, ci), items) in groups {
            self.library_violation(decider, ci, &items);
        }
        for (mem, reduce, layouts) in conflicts {
            self.layout_conflict(mem, reduce, &layouts);
        }
        self.report_shadowed_layouts(shadows);
    }

    fn library_violation(&mut self, decider: Option<usize>, ci: usize, items: &[(usize, usize)]) {
        let app = self.app;
        let Some(c) = app.library_constraints.get(ci) else {
            return;
        };
        let Some(&(t0, a0)) = items.first() else {
            return;
        };
        let layout = self.tasks[t0].regions[a0].layout;
        let need = requirement_text(c);
        let mut by_task: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for &(ti, ai) in items {
            by_task
                .entry(ti)
                .or_default()
                .push(format!("`{}`", self.tasks[ti].regions[ai].region));
        }
        let who: Vec<String> = by_task
            .iter()
            .map(|(ti, rs)| format!("`{}` ({})", self.tasks[*ti].task, rs.join(", ")))
            .collect();
        let source = match decider {
            Some(s) => format!(
                "{} gives them {}",
                self.describe_stmt(s),
                layout_text(&layout)
            ),
            None => format!(
                "no Layout statement applies, so they get Legion's default {}",
                layout_text(&layout)
            ),
        };
        let span = match decider {
            Some(s) => self
                .offending_token(s, c, &layout)
                .unwrap_or_else(|| self.stmt_span(s)),
            None => self.default_anchor(t0),
        };
        let first_error = c.error.lines().next().unwrap_or("").trim().to_string();
        let mut d = Diagnostic::error(
            "E0305",
            span,
            format!(
                "{} needs {need} for {}; {source}",
                c.library,
                who.join(", ")
            ),
        )
        .with_label(format!("{} rejects this layout", c.library))
        .with_note(format!("the run fails with: {first_error}"));
        if !c.notes.is_empty() {
            d = d.with_note(short_note(&c.notes));
        }
        if let Some(ts) = self.traces[t0].kind_stmt.map(|s| self.stmt_span(s)) {
            if !ts.contains(span.start) {
                d = d.with_related(
                    ts,
                    format!(
                        "`{}` runs on {} here",
                        self.tasks[t0].task, self.tasks[t0].proc_kind
                    ),
                );
            }
        }
        if self.fixes {
            let target = repaired(&layout, c);
            let want: Vec<(usize, usize, LayoutDecision)> =
                items.iter().map(|&(ti, ai)| (ti, ai, target)).collect();
            if let Some(fix) = self.layout_fix(decider, &want, FixGoal::Library(items.to_vec())) {
                d = d.with_fix(fix);
            }
        }
        self.diags.push(d);
        let kind = match c.library.as_str() {
            "cuBLAS" => "cublas_illegal_parameter",
            "Regent" => "stride_mismatch",
            _ => "layout_constraint",
        };
        let rule = decider.map(|s| self.stmt_span(s));
        self.fatal(1, t0 * 10 + 5, kind, c.error.clone(), rule);
    }

    fn layout_conflict(
        &mut self,
        mem: MemKind,
        reduce: bool,
        layouts: &[(LayoutDecision, Vec<(usize, usize)>)],
    ) {
        let app = self.app;
        // The layout to keep: one a library needs, else the most
        // specifically requested one.
        // The layout to keep: one that satisfies every library constraint
        // of every member (if there are any), the most specifically
        // requested among those.
        let mut required: Vec<&LibraryConstraint> = Vec::new();
        for (_, members) in layouts {
            for &(ti, ai) in members {
                let task = &app.tasks[ti];
                for c in app.constraints_for(task, self.tasks[ti].proc_kind, &task.regions[ai]) {
                    if !required.iter().any(|r| std::ptr::eq(*r, c)) {
                        required.push(c);
                    }
                }
            }
        }
        let rank = |i: usize| {
            let best = layouts[i]
                .1
                .iter()
                .map(|&(ti, ai)| Self::hit_rank(&self.traces[ti].regions[ai].layout_hit))
                .max()
                .unwrap_or(0);
            (best, std::cmp::Reverse(i))
        };
        let acceptable: Vec<usize> = (0..layouts.len())
            .filter(|&i| required.iter().all(|c| satisfies(&layouts[i].0, c)))
            .collect();
        let fixable = !acceptable.is_empty();
        let wanted = acceptable
            .iter()
            .copied()
            .max_by_key(|&i| rank(i))
            .or_else(|| (0..layouts.len()).max_by_key(|&i| rank(i)))
            .unwrap_or(0);
        let (w_layout, w_members) = &layouts[wanted];
        let describe = |members: &[(usize, usize)], l: &LayoutDecision| -> String {
            let mut tasks: Vec<String> = Vec::new();
            for &(ti, ai) in members {
                let s = format!(
                    "`{}` (`{}`)",
                    self.tasks[ti].task, self.tasks[ti].regions[ai].region
                );
                if !tasks.contains(&s) {
                    tasks.push(s);
                }
            }
            let extra = tasks.len().saturating_sub(3);
            tasks.truncate(3);
            if extra > 0 {
                tasks.push(format!("{extra} more"));
            }
            format!("{} for {}", layout_text(l), tasks.join(", "))
        };
        // Report on the statement that asked for the kept layout, or (if the
        // default gives it) on one that asked for another.
        let anchor_member = w_members
            .iter()
            .find(|&&(ti, ai)| self.traces[ti].regions[ai].layout_hit.is_some())
            .copied();
        let other_stmt = layouts
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != wanted)
            .flat_map(|(_, (_, m))| m.iter())
            .find_map(|&(ti, ai)| {
                self.traces[ti].regions[ai]
                    .layout_hit
                    .as_ref()
                    .map(|h| h.stmt)
            });
        let span = match anchor_member {
            Some((ti, ai)) => self.traces[ti].regions[ai]
                .layout_hit
                .as_ref()
                .map(|h| self.stmt_span(h.stmt))
                .unwrap_or_default(),
            None => other_stmt
                .map(|s| self.stmt_span(s))
                .unwrap_or_else(|| self.default_anchor(w_members[0].0)),
        };
        let others: Vec<String> = layouts
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != wanted)
            .map(|(_, (l, m))| describe(m, l))
            .collect();
        let what = if reduce {
            format!("reduction instances in {mem}")
        } else {
            let mut names: Vec<String> = Vec::new();
            for (_, m) in layouts {
                for &(ti, ai) in m {
                    let n = format!("`{}`", self.tasks[ti].regions[ai].region);
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
            }
            if names.len() == 1 {
                format!("region {} in {mem}", names[0])
            } else {
                format!("regions {} (one field space) in {mem}", names.join(", "))
            }
        };
        let mut d = Diagnostic::warning(
            "W0306",
            span,
            format!(
                "contradictory layouts for {what}: {} but {}",
                describe(w_members, w_layout),
                others.join("; ")
            ),
        )
        .with_label("layout may not apply")
        .with_note(if reduce {
            "the DSL mapper caches one reduction layout per memory kind and reduction operator (dsl_default_policy_select_layout_constraints): the first task mapped fixes it for the others"
        } else {
            "the DSL mapper caches one layout per memory kind and field space (dsl_default_policy_select_layout_constraints): whichever task maps first fixes the layout for the others, and the other statement silently does not apply"
        });
        let mut related: Vec<usize> = layouts
            .iter()
            .flat_map(|(_, m)| m.iter())
            .filter_map(|&(ti, ai)| {
                self.traces[ti].regions[ai]
                    .layout_hit
                    .as_ref()
                    .map(|h| h.stmt)
            })
            .collect();
        related.sort();
        related.dedup();
        for s in related {
            let sp = self.stmt_span(s);
            if sp != span {
                d = d.with_related(sp, "also decides this instance's layout");
            }
        }
        if self.fixes && fixable {
            let want: Vec<(usize, usize, LayoutDecision)> = layouts
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != wanted)
                .flat_map(|(_, (_, m))| m.iter())
                .map(|&(ti, ai)| (ti, ai, *w_layout))
                .collect();
            let decider = want.iter().find_map(|&(ti, ai, _)| {
                self.traces[ti].regions[ai]
                    .layout_hit
                    .as_ref()
                    .map(|h| h.stmt)
            });
            if let Some(fix) = self.layout_fix(decider, &want, FixGoal::Conflict) {
                d = d.with_fix(fix);
            }
        }
        self.diags.push(d);
    }

    /// W0307: a Layout statement that matches an instance but loses to a
    /// statement it is not a generalization of (the lookup prefers the task,
    /// then the region, and only then the memory kind).
    #[allow(clippy::type_complexity)]
    fn find_shadowed_layouts(&self) -> BTreeMap<(usize, usize), (Vec<String>, Vec<LayoutEdit>)> {
        let app = self.app;
        // (shadowed stmt, winning stmt) -> instances, meets
        let mut found: BTreeMap<(usize, usize), (Vec<String>, Vec<LayoutEdit>)> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            for (ai, rt) in self.traces[ti].regions.iter().enumerate() {
                let r = &self.tasks[ti].regions[ai];
                if !r.instance.is_physical() || !self.traces[ti].runnable {
                    continue;
                }
                let Some(win) = &rt.layout_hit else { continue };
                let mem = dsl_mem(r.memory);
                for (tk, rk, e) in &self.rules.layout_entries {
                    if e.stmt == win.stmt && *tk == win.task && *rk == win.region {
                        continue;
                    }
                    let matches = (tk == "*" || *tk == task.name)
                        && (rk == "*" || rt.names.contains(rk))
                        && (e.mem.is_none() || e.mem == mem);
                    if !matches || e.stmt == win.stmt {
                        continue;
                    }
                    let general = (tk == "*" || *tk == win.task)
                        && (rk == "*" || *rk == win.region)
                        && (e.mem.is_none() || e.mem == win.mem);
                    let shadow_layout = fold_constraints(e.constraints);
                    if general || shadow_layout == r.layout {
                        continue;
                    }
                    let meet = LayoutEdit {
                        task: if win.task != "*" {
                            win.task.clone()
                        } else {
                            tk.clone()
                        },
                        region: if win.region != "*" {
                            win.region.clone()
                        } else {
                            rk.clone()
                        },
                        mem: e.mem.or(win.mem),
                        layout: shadow_layout,
                    };
                    let entry = found.entry((e.stmt, win.stmt)).or_default();
                    let what = format!("`{}` (`{}`) in {}", task.name, r.region, r.memory);
                    if !entry.0.contains(&what) {
                        entry.0.push(what);
                    }
                    if !entry.1.contains(&meet) {
                        entry.1.push(meet);
                    }
                }
            }
        }
        found
    }

    #[allow(clippy::type_complexity)]
    fn report_shadowed_layouts(
        &mut self,
        found: BTreeMap<(usize, usize), (Vec<String>, Vec<LayoutEdit>)>,
    ) {
        for ((shadowed, winner), (instances, meets)) in found {
            let mut shown: Vec<String> = instances.iter().take(3).cloned().collect();
            if instances.len() > 3 {
                shown.push(format!("{} more", instances.len() - 3));
            }
            let mut d = Diagnostic::warning(
                "W0307",
                self.stmt_span(shadowed),
                format!(
                    "this layout never applies to {}: {} takes precedence",
                    shown.join(", "),
                    self.describe_stmt(winner)
                ),
            )
            .with_label("silently shadowed")
            .with_related(self.stmt_span(winner), "this statement wins")
            .with_note("the DSL mapper tries (task, region), (task, *), (*, region), (*, *) in that order and looks at the memory kind only within the first key that has a statement (Tree2Legion::query_constraint)");
            if self.fixes && meets.len() <= 4 {
                let title = if meets.len() == 1 {
                    format!("add `{}` so this layout applies there", meets[0].text())
                } else {
                    "add narrower Layout statements so this layout applies there".to_string()
                };
                let cand = Candidate::Add(meets);
                if let Some(edits) = self.candidate_edits(&cand, Some(shadowed)) {
                    if !edits.is_empty() && self.verify(&edits, &FixGoal::Shadow) {
                        d = d.with_fix(Fix::unsafe_(title, edits));
                    }
                }
            }
            self.diags.push(d);
        }
    }
}

/// The first sentence of a long note.
fn short_note(notes: &str) -> String {
    let first = notes.split(". ").next().unwrap_or(notes);
    if first.len() > 240 {
        let cut: String = first.chars().take(237).collect();
        format!("{cut}...")
    } else {
        first.trim_end_matches('.').to_string() + "."
    }
}

/// What a layout quick fix must achieve (judged on the re-resolved text).
enum FixGoal {
    /// These (task, argument) pairs must satisfy their library constraints.
    Library(Vec<(usize, usize)>),
    /// Fewer instances with contradictory layouts.
    Conflict,
    /// Fewer shadowed Layout statements, no new conflicts.
    Shadow,
}

/// A candidate layout fix: statements to add (or rewrite when their key
/// exists), or one existing statement to rewrite.
enum Candidate {
    Add(Vec<LayoutEdit>),
    Rewrite(usize, LayoutDecision),
}

impl<'a> Resolver<'a> {
    /// Where a new Layout statement goes: before statement `before`, else
    /// after the last Layout (or Task/Region) statement, else at the top.
    fn insertion_point(&self, before: Option<usize>) -> usize {
        if let Some(i) = before {
            return line_extent(self.source, self.stmt_span(i)).0;
        }
        let last = |f: &dyn Fn(&StmtKind) -> bool| {
            self.program
                .stmts
                .iter()
                .rev()
                .find(|s| f(&s.kind))
                .map(|s| s.span)
        };
        if let Some(sp) = last(&|k| matches!(k, StmtKind::Layout { .. }))
            .or_else(|| last(&|k| matches!(k, StmtKind::Task { .. } | StmtKind::Region { .. })))
        {
            return line_extent(self.source, sp).1;
        }
        self.program
            .stmts
            .first()
            .map(|s| line_extent(self.source, s.span).0)
            .unwrap_or(0)
    }

    /// The edit that replaces a Layout statement's constraints.
    fn rewrite_edit(&self, stmt: usize, layout: &LayoutDecision) -> Option<(Span, String)> {
        let s = self.stmt(stmt)?;
        let StmtKind::Layout { mem, .. } = &s.kind else {
            return None;
        };
        let semi = s.span.end.checked_sub(1)?;
        if self.source.get(semi..s.span.end) != Some(";") {
            return None;
        }
        Some((
            Span::new(mem_sel_span(mem).end, semi),
            format!(" {}", layout_text(layout)),
        ))
    }

    /// The text edits of a candidate.
    fn candidate_edits(
        &self,
        cand: &Candidate,
        before: Option<usize>,
    ) -> Option<Vec<(Span, String)>> {
        self.candidate_edits_titled(cand, before).map(|(e, _)| e)
    }

    /// [`Resolver::candidate_edits`], with a title when the candidate turned
    /// into a rewrite of one existing statement (its key already exists, so
    /// an added statement would be shadowed by it).
    fn candidate_edits_titled(
        &self,
        cand: &Candidate,
        before: Option<usize>,
    ) -> Option<(Edits, Option<String>)> {
        match cand {
            Candidate::Rewrite(stmt, l) => self.rewrite_edit(*stmt, l).map(|e| (vec![e], None)),
            Candidate::Add(adds) => {
                let mut edits = Vec::new();
                let mut text = String::new();
                let mut rewritten = HashSet::new();
                let mut title = None;
                for a in adds {
                    let existing = self
                        .rules
                        .layout
                        .get(&(a.task.clone(), a.region.clone()))
                        .and_then(|l| l.iter().find(|e| e.mem == a.mem));
                    match existing {
                        Some(e) => {
                            if rewritten.insert(e.stmt) {
                                edits.push(self.rewrite_edit(e.stmt, &a.layout)?);
                                title = Some(format!(
                                    "change `{}` to `{}`",
                                    short(self.stmt_span(e.stmt).text(self.source)),
                                    a.text()
                                ));
                            }
                        }
                        None => {
                            text.push_str(&a.text());
                            text.push('\n');
                        }
                    }
                }
                if !text.is_empty() {
                    let at = self.insertion_point(before);
                    if at == self.source.len()
                        && !self.source.is_empty()
                        && !self.source.ends_with('\n')
                    {
                        text.insert(0, '\n');
                    }
                    edits.push((Span::at(at), text));
                }
                let title = if edits.len() == 1 { title } else { None };
                Some((edits, title))
            }
        }
    }

    /// Resolves the edited text (layouts only) and judges it.
    fn verify(&self, edits: &[(Span, String)], goal: &FixGoal) -> bool {
        let fix = Fix::unsafe_("", edits.to_vec());
        let Some(text) = fix.apply(self.source) else {
            return false;
        };
        let analysis = mapwright_grammar::analyze(&text);
        let mut r = Resolver::new(&analysis, &text, self.app, self.machine, self.naming, false);
        r.run(None);
        let new = &r.summary;
        let old = &self.summary;
        let shadows_ok = matches!(goal, FixGoal::Shadow) || new.shadows <= old.shadows;
        let base = new.violations.is_subset(&old.violations)
            && shadows_ok
            && new.parse_errors <= old.parse_errors;
        base && match goal {
            FixGoal::Library(items) => {
                new.conflicts <= old.conflicts
                    && items.iter().all(|&(ti, ai)| {
                        let t = &self.app.tasks[ti];
                        match t.regions.get(ai) {
                            Some(a) => !new.violations.contains(&(t.name.clone(), a.index)),
                            None => true,
                        }
                    })
            }
            FixGoal::Conflict => new.conflicts < old.conflicts,
            FixGoal::Shadow => new.shadows < old.shadows && new.conflicts <= old.conflicts,
        }
    }

    /// The narrowest Layout change that gives each (task, argument) its
    /// wanted layout without new layout problems: one statement for the
    /// task+region, the task, the region, or the memory kind, then a rewrite
    /// of the deciding statement, then several statements.
    fn layout_fix(
        &self,
        decider: Option<usize>,
        want: &[(usize, usize, LayoutDecision)],
        goal: FixGoal,
    ) -> Option<Fix> {
        let &(_, _, target) = want.first()?;
        let same_target = want.iter().all(|(_, _, l)| *l == target);
        let names = self.naming != RegionNaming::Index;
        let mut trm: BTreeSet<(String, String, Option<ast::MemKind>)> = BTreeSet::new();
        let mut tm: BTreeSet<(String, Option<ast::MemKind>)> = BTreeSet::new();
        let mut rm: BTreeSet<(String, Option<ast::MemKind>)> = BTreeSet::new();
        let mut m: BTreeSet<Option<ast::MemKind>> = BTreeSet::new();
        for &(ti, ai, _) in want {
            let r = &self.tasks[ti].regions[ai];
            let mem = dsl_mem(r.memory);
            trm.insert((self.tasks[ti].task.clone(), r.region.clone(), mem));
            tm.insert((self.tasks[ti].task.clone(), mem));
            rm.insert((r.region.clone(), mem));
            m.insert(mem);
        }
        let edit = |t: &str, r: &str, mem: Option<ast::MemKind>| LayoutEdit {
            task: t.to_string(),
            region: r.to_string(),
            mem,
            layout: target,
        };
        let mut cands: Vec<(String, Candidate)> = Vec::new();
        if same_target {
            if names && trm.len() == 1 {
                if let Some((t, r, mem)) = trm.first() {
                    let e = edit(t, r, *mem);
                    cands.push((format!("add `{}`", e.text()), Candidate::Add(vec![e])));
                }
            }
            if tm.len() == 1 {
                if let Some((t, mem)) = tm.first() {
                    let e = edit(t, "*", *mem);
                    cands.push((format!("add `{}`", e.text()), Candidate::Add(vec![e])));
                }
            }
            if names && rm.len() == 1 {
                if let Some((r, mem)) = rm.first() {
                    let e = edit("*", r, *mem);
                    cands.push((format!("add `{}`", e.text()), Candidate::Add(vec![e])));
                }
            }
            if m.len() == 1 {
                if let Some(mem) = m.first() {
                    let e = edit("*", "*", *mem);
                    cands.push((format!("add `{}`", e.text()), Candidate::Add(vec![e])));
                }
            }
            if let Some(s) = decider {
                cands.push((
                    format!("change this statement to `{}`", layout_text(&target)),
                    Candidate::Rewrite(s, target),
                ));
            }
        }
        // Several statements, one per (task, memory), each with its target.
        let mut per_tm: BTreeMap<(String, Option<ast::MemKind>), LayoutDecision> = BTreeMap::new();
        for &(ti, ai, l) in want {
            let r = &self.tasks[ti].regions[ai];
            per_tm
                .entry((self.tasks[ti].task.clone(), dsl_mem(r.memory)))
                .or_insert(l);
        }
        if (2..=4).contains(&per_tm.len()) {
            let adds: Vec<LayoutEdit> = per_tm
                .iter()
                .map(|((t, mem), l)| LayoutEdit {
                    task: t.clone(),
                    region: "*".into(),
                    mem: *mem,
                    layout: *l,
                })
                .collect();
            cands.push((
                format!("add {} Layout statements", adds.len()),
                Candidate::Add(adds),
            ));
        }
        if same_target && (2..=3).contains(&m.len()) {
            let adds: Vec<LayoutEdit> = m.iter().map(|mem| edit("*", "*", *mem)).collect();
            cands.push((
                format!("add {} Layout statements", adds.len()),
                Candidate::Add(adds),
            ));
        }
        for (title, cand) in cands {
            let Some((edits, rewrite_title)) = self.candidate_edits_titled(&cand, decider) else {
                continue;
            };
            if edits.is_empty() {
                continue;
            }
            if self.verify(&edits, &goal) {
                let title = match (&cand, rewrite_title) {
                    (_, Some(t)) => t,
                    (Candidate::Add(adds), None) if adds.len() == 1 && edits.len() == 1 => {
                        match decider {
                            Some(s) => format!(
                                "{title} before `{}`",
                                short(self.stmt_span(s).text(self.source))
                            ),
                            None => title,
                        }
                    }
                    _ => title,
                };
                return Some(Fix::unsafe_(title, edits));
            }
        }
        None
    }
}

// ---------------------------------------------------------------------------
// Mapping functions, statically
// ---------------------------------------------------------------------------

/// How a mapping function uses its `Task` parameter. `guarded`: the use
/// sits in a branch of a `?:` (or a comprehension's body, or a function
/// called from one), which the reference evaluates lazily
/// (`TernaryExprNode::run`), so it may never run for a given launch; only
/// evaluating the function on the launch's points can tell.
#[derive(Debug, Clone)]
enum TaskUse {
    /// `t.ipoint[k]` / `t.ispace[k]` with a literal `k`.
    Index { k: i64, span: Span, guarded: bool },
    /// `t.parent`.
    Parent { span: Span, guarded: bool },
    /// `t.ipoint` / `t.ispace`.
    Point { span: Span, guarded: bool },
}

impl TaskUse {
    fn guarded(&self) -> bool {
        match self {
            TaskUse::Index { guarded, .. }
            | TaskUse::Parent { guarded, .. }
            | TaskUse::Point { guarded, .. } => *guarded,
        }
    }
}

/// Every sub-expression of `e` (parents first) with whether it runs only
/// conditionally: inside a branch of a ternary (the reference's `?:` is
/// the only lazy operator; `&&`/`||` evaluate both sides) or the body of a
/// comprehension (which runs once per element, so possibly never).
fn guarded_subexprs<'e>(e: &'e Expr, guarded: bool, out: &mut Vec<(&'e Expr, bool)>) {
    out.push((e, guarded));
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::Bool(_)
        | ExprKind::Name(_)
        | ExprKind::Proc(_)
        | ExprKind::Mem(_)
        | ExprKind::Star => {}
        ExprKind::Unpack(x) | ExprKind::Neg(x) | ExprKind::Paren(x) => {
            guarded_subexprs(x, guarded, out)
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            guarded_subexprs(lhs, guarded, out);
            guarded_subexprs(rhs, guarded, out);
        }
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
            ..
        } => {
            guarded_subexprs(cond, guarded, out);
            guarded_subexprs(then, true, out);
            guarded_subexprs(otherwise, true, out);
        }
        ExprKind::Tuple(items) => items.iter().for_each(|x| guarded_subexprs(x, guarded, out)),
        ExprKind::Call { callee, args } => {
            guarded_subexprs(callee, guarded, out);
            args.iter().for_each(|x| guarded_subexprs(x, guarded, out));
        }
        ExprKind::Index { base, indices } => {
            guarded_subexprs(base, guarded, out);
            indices
                .iter()
                .for_each(|x| guarded_subexprs(x, guarded, out));
        }
        ExprKind::Slice { base, lo, hi, .. } => {
            guarded_subexprs(base, guarded, out);
            for x in [lo, hi].into_iter().flatten() {
                guarded_subexprs(x, guarded, out);
            }
        }
        ExprKind::Prop { base, .. } => guarded_subexprs(base, guarded, out),
        ExprKind::Comprehension { body, iter, .. } => {
            guarded_subexprs(body, true, out);
            guarded_subexprs(iter, guarded, out);
        }
    }
}

impl<'a> Resolver<'a> {
    /// The kind of the machine model whose processor function `name`
    /// returns, when it can be seen without running it (`return m[...]`
    /// with `m` built from `Machine(KIND)` by method calls).
    fn function_model_kind(&self, name: &str, depth: usize) -> Option<ast::ProcKind> {
        if depth > 8 {
            return None;
        }
        let (params, body) = self.function_def(name)?;
        let params: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
        let mut locals: HashMap<&str, &Expr> = HashMap::new();
        for s in body {
            match &s.kind {
                StmtKind::Assign { name, value } => {
                    locals.entry(name.name.as_str()).or_insert(value);
                }
                StmtKind::Return { value } => {
                    return self.returned_kind(value, &locals, &params, depth);
                }
                _ => {}
            }
        }
        None
    }

    fn returned_kind(
        &self,
        e: &Expr,
        locals: &HashMap<&str, &Expr>,
        params: &[&str],
        depth: usize,
    ) -> Option<ast::ProcKind> {
        match &e.kind {
            ExprKind::Paren(x) => self.returned_kind(x, locals, params, depth),
            ExprKind::Ternary {
                then, otherwise, ..
            } => {
                let a = self.returned_kind(then, locals, params, depth)?;
                let b = self.returned_kind(otherwise, locals, params, depth)?;
                (a == b).then_some(a)
            }
            ExprKind::Index { base, .. } => self.model_kind(base, locals, params, depth),
            ExprKind::Call { callee, .. } => match &callee.kind {
                ExprKind::Name(f) if self.function_def(f).is_some() => {
                    self.function_model_kind(f, depth + 1)
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn model_kind(
        &self,
        e: &Expr,
        locals: &HashMap<&str, &Expr>,
        params: &[&str],
        depth: usize,
    ) -> Option<ast::ProcKind> {
        if depth > 16 {
            return None;
        }
        if let Some(k) = e.as_machine_ctor() {
            return Some(k);
        }
        match &e.kind {
            ExprKind::Paren(x) => self.model_kind(x, locals, params, depth + 1),
            ExprKind::Name(n) => {
                if let Some(v) = locals.get(n.as_str()) {
                    return self.model_kind(v, locals, params, depth + 1);
                }
                if params.contains(&n.as_str()) {
                    return None;
                }
                let value = self.program.stmts.iter().find_map(|s| match &s.kind {
                    StmtKind::Assign { name, value } if name.name == *n => Some(value),
                    _ => None,
                })?;
                self.model_kind(value, &HashMap::new(), &[], depth + 1)
            }
            ExprKind::Call { callee, .. } => match &callee.kind {
                ExprKind::Prop { base, .. } => self.model_kind(base, locals, params, depth + 1),
                _ => None,
            },
            ExprKind::Ternary {
                then, otherwise, ..
            } => {
                let a = self.model_kind(then, locals, params, depth + 1)?;
                let b = self.model_kind(otherwise, locals, params, depth + 1)?;
                (a == b).then_some(a)
            }
            _ => None,
        }
    }

    /// How function `name` (with its Task parameter at `task_param`) uses
    /// the task, following calls that pass the task on.
    fn task_uses(&self, name: &str, task_param: usize, depth: usize, out: &mut Vec<TaskUse>) {
        self.point_uses(name, Some(task_param), &[], false, depth, out);
    }

    /// Walks function `name`, whose parameter `task_param` (if any) is the
    /// task and whose parameters `point_params` hold `t.ipoint`/`t.ispace`,
    /// following calls that pass those on (a task itself cannot be passed
    /// to a plain function, but its point can). `guarded`: the call itself
    /// runs only conditionally, so every use inside it does too.
    fn point_uses(
        &self,
        name: &str,
        task_param: Option<usize>,
        point_params: &[usize],
        guarded: bool,
        depth: usize,
        out: &mut Vec<TaskUse>,
    ) {
        if depth > 4 {
            return;
        }
        let Some((params, body)) = self.function_def(name) else {
            return;
        };
        let task = task_param
            .and_then(|i| params.get(i))
            .map(|p| p.name.name.as_str())
            .unwrap_or("");
        // Names holding `t.ipoint` / `t.ispace`: point parameters, then
        // locals assigned from the task's properties.
        let mut aliases: HashSet<&str> = point_params
            .iter()
            .filter_map(|&i| params.get(i))
            .map(|p| p.name.name.as_str())
            .collect();
        let is_point = |e: &Expr, aliases: &HashSet<&str>| -> bool {
            (!task.is_empty() && point_prop(e, task).is_some())
                || matches!(&e.kind, ExprKind::Name(n) if aliases.contains(n.as_str()))
        };
        for s in body {
            if let StmtKind::Assign { name, value } = &s.kind {
                if is_point(value, &aliases) {
                    aliases.insert(name.name.as_str());
                }
            }
            let mut subexprs = Vec::new();
            for e in s.exprs() {
                guarded_subexprs(e, guarded, &mut subexprs);
            }
            for (x, guarded) in subexprs {
                match &x.kind {
                    ExprKind::Index { base, indices } if indices.len() == 1 => {
                        if let (true, Some(k)) =
                            (is_point(base, &aliases), literal_int(&indices[0]))
                        {
                            out.push(TaskUse::Index {
                                k,
                                span: x.span,
                                guarded,
                            });
                        }
                    }
                    ExprKind::Prop { base, prop, .. }
                        if !task.is_empty()
                            && matches!(&base.kind, ExprKind::Name(n) if n == task) =>
                    {
                        match prop {
                            Prop::Parent => out.push(TaskUse::Parent {
                                span: x.span,
                                guarded,
                            }),
                            Prop::Ipoint | Prop::Ispace => out.push(TaskUse::Point {
                                span: x.span,
                                guarded,
                            }),
                            _ => {}
                        }
                    }
                    ExprKind::Call { callee, args } => {
                        if let ExprKind::Name(g) = &callee.kind {
                            if g == name {
                                continue;
                            }
                            let passed: Vec<usize> = args
                                .iter()
                                .enumerate()
                                .filter(|(_, a)| is_point(a, &aliases))
                                .map(|(i, _)| i)
                                .collect();
                            if !passed.is_empty() {
                                self.point_uses(g, None, &passed, guarded, depth + 1, out);
                            }
                        }
                    }
                    _ => {}
                }
            }
            if matches!(s.kind, StmtKind::Return { .. }) {
                break; // nothing after the first return runs
            }
        }
    }

    /// E0302 (model of the wrong kind), E0311 (`ipoint[k]` past the launch's
    /// dimensionality), E0312 (properties the launch kind lacks).
    fn function_checks(&mut self) {
        let app = self.app;
        // (span, message key) -> tasks, for grouping
        let mut kind_groups: BTreeMap<(usize, usize, String, ast::ProcKind, ProcKind), Vec<usize>> =
            BTreeMap::new();
        let mut index_groups: BTreeMap<(usize, usize, i64, usize), Vec<usize>> = BTreeMap::new();
        let mut prop_groups: BTreeMap<(usize, usize, bool), Vec<usize>> = BTreeMap::new();
        let mut uses_cache: HashMap<String, Vec<TaskUse>> = HashMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            if !self.traces[ti].runnable {
                continue;
            }
            let (Some(stmt), Some(func)) =
                (self.traces[ti].map_stmt, self.traces[ti].map_func.clone())
            else {
                continue;
            };
            let kind = self.tasks[ti].proc_kind;
            if let Some(mk) = self.function_model_kind(&func, 0) {
                if proc_of(mk) != kind {
                    let span = self.selector_span_for(stmt, &task.name);
                    kind_groups
                        .entry((span.start, span.end, func.clone(), mk, kind))
                        .or_default()
                        .push(ti);
                }
            }
            let uses = uses_cache
                .entry(func.clone())
                .or_insert_with(|| {
                    let mut v = Vec::new();
                    self.task_uses(&func, 0, 0, &mut v);
                    v
                })
                .clone();
            let dims = task.domain.len() as i64;
            // A use under a `?:` branch may never run for this launch:
            // placing the points (evaluating the function) reports it if it
            // does.
            for u in uses.into_iter().filter(|u| !u.guarded()) {
                match (u, task.launch) {
                    (TaskUse::Index { k, span, .. }, Launch::Index) if k >= dims || k < -dims => {
                        index_groups
                            .entry((span.start, span.end, k, task.domain.len()))
                            .or_default()
                            .push(ti);
                    }
                    (TaskUse::Parent { span, .. }, Launch::Index) => {
                        prop_groups
                            .entry((span.start, span.end, true))
                            .or_default()
                            .push(ti);
                    }
                    (TaskUse::Point { span, .. }, Launch::Single) => {
                        prop_groups
                            .entry((span.start, span.end, false))
                            .or_default()
                            .push(ti);
                    }
                    _ => {}
                }
            }
        }
        for ((start, end, func, mk, kind), tis) in kind_groups {
            let names: Vec<String> = tis
                .iter()
                .map(|&ti| format!("`{}`", app.tasks[ti].name))
                .collect();
            let mut d = Diagnostic::error(
                "E0302",
                Span::new(start, end),
                format!(
                    "{} {} on {kind}, but `{func}` returns a processor of a `Machine({mk})` model",
                    names.join(", "),
                    if tis.len() == 1 { "runs" } else { "run" }
                ),
            )
            .with_label("machine model of the wrong kind")
            .with_note(format!(
                "the reference aborts with \"{} is actually mapped to {kind}, but machine model is for {mk}\"",
                app.tasks[tis[0]].name
            ));
            if let Some(def) = self.function_name_span(&func) {
                d = d.with_related(def, "the mapping function");
            }
            let stmt = self.traces[tis[0]].map_stmt;
            let whole_statement = match stmt.and_then(|i| self.stmt(i)).map(|s| &s.kind) {
                Some(
                    StmtKind::IndexTaskMap { tasks, .. } | StmtKind::SingleTaskMap { tasks, .. },
                ) => match tasks {
                    TaskSel::Names(ns) => ns.len() == tis.len(),
                    _ => false,
                },
                _ => false,
            };
            let other = if whole_statement {
                self.entry_function_for(kind, &func)
            } else {
                None
            };
            if let Some(other) = other {
                d = d.with_fix(Fix::unsafe_(
                    format!(
                        "use `{other}`, which returns {} {kind} processor",
                        if kind == ProcKind::Omp { "an" } else { "a" }
                    ),
                    vec![(self.map_func_span(stmt), other)],
                ));
            }
            self.diags.push(d);
            for &ti in &tis {
                self.reported_kind.insert(app.tasks[ti].name.clone());
                let rule = self.traces[ti].map_stmt.map(|s| self.stmt_span(s));
                self.fatal(
                    1,
                    ti * 10 + 2,
                    "mapping_error",
                    format!(
                        "{} is actually mapped to {kind}, but machine model is for {mk}",
                        app.tasks[ti].name
                    ),
                    rule,
                );
            }
        }
        for ((start, end, k, dims), tis) in index_groups {
            let names: Vec<String> = tis
                .iter()
                .map(|&ti| {
                    let t = &app.tasks[ti];
                    let dom: Vec<String> = t.domain.iter().map(|d| d.to_string()).collect();
                    format!("`{}` ({})", t.name, dom.join(", "))
                })
                .collect();
            let span = Span::new(start, end);
            self.diags.push(
                Diagnostic::error(
                    "E0311",
                    span,
                    format!(
                        "`{}` reads dimension {k}, but {} {} a {dims}-D launch",
                        short(span.text(self.source)),
                        names.join(", "),
                        if tis.len() == 1 { "is" } else { "are" }
                    ),
                )
                .with_label(format!("valid indices: 0..{}", dims.saturating_sub(1)))
                .with_note("the reference aborts with \"Index out of bound for TupleIntNode\""),
            );
            // The run's failure comes from placing the points (the read
            // is unconditional, but something before it may fail first).
            for &ti in &tis {
                self.static_tuple.insert(app.tasks[ti].name.clone());
            }
        }
        for ((start, end, parent), tis) in prop_groups {
            let names: Vec<String> = tis
                .iter()
                .map(|&ti| format!("`{}`", app.tasks[ti].name))
                .collect();
            let span = Span::new(start, end);
            let (message, raw) = if parent {
                (
                    format!(
                        "`{}` is only available to single launches, and {} {}",
                        short(span.text(self.source)),
                        names.join(", "),
                        if tis.len() == 1 { "is an index launch" } else { "are index launches" }
                    ),
                    "Warning: IndexTask or current task does not support get_parent(), returning NULL\n".to_string(),
                )
            } else {
                let what = if span.text(self.source).ends_with("ispace") {
                    "get_space"
                } else {
                    "get_point"
                };
                (
                    format!(
                        "`{}` is only available to index launches, and {} {}",
                        short(span.text(self.source)),
                        names.join(", "),
                        if tis.len() == 1 {
                            "is a single launch"
                        } else {
                            "are single launches"
                        }
                    ),
                    format!("Warning: currently SingleTask does not support {what}(), failure\n"),
                )
            };
            self.diags.push(
                Diagnostic::error("E0312", span, message)
                    .with_label("not available for this launch")
                    .with_note(format!(
                        "the reference prints \"{}\" and aborts",
                        raw.trim_end()
                    )),
            );
            for &ti in &tis {
                self.reported_tuple.insert(app.tasks[ti].name.clone());
                let rule = self.traces[ti].map_stmt.map(|s| self.stmt_span(s));
                self.fatal(1, ti * 10 + 1, "mapping_error", raw.clone(), rule);
            }
        }
    }

    /// The span naming `task` in a mapping statement (its name, or the kind
    /// key, or the function name).
    fn selector_span_for(&self, stmt: usize, task: &str) -> Span {
        let Some(s) = self.stmt(stmt) else {
            return Span::default();
        };
        match &s.kind {
            StmtKind::IndexTaskMap { tasks, func } | StmtKind::SingleTaskMap { tasks, func } => {
                match tasks {
                    TaskSel::Names(ns) => ns
                        .iter()
                        .find(|n| n.name == task)
                        .map_or(func.span, |n| n.span),
                    TaskSel::Kind(_, sp) => *sp,
                    TaskSel::Star(_) => func.span,
                }
            }
            _ => s.span,
        }
    }

    /// Another entry function (`f(Task t)`, defined before its use could
    /// be) that returns a processor of `kind`, the closest in name first.
    fn entry_function_for(&self, kind: ProcKind, instead_of: &str) -> Option<String> {
        let candidates: Vec<&str> = self
            .program
            .stmts
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::FuncDef { name, params, .. }
                    if name.name != instead_of
                        && params.len() == 1
                        && params[0].ty == ParamType::Task
                        && self
                            .function_model_kind(&name.name, 0)
                            .is_some_and(|k| proc_of(k) == kind) =>
                {
                    Some(name.name.as_str())
                }
                _ => None,
            })
            .collect();
        closest(instead_of, candidates.iter().copied())
            .or_else(|| (candidates.len() == 1).then(|| candidates[0]))
            .map(str::to_string)
    }

    /// The function name's span in a mapping statement.
    fn map_func_span(&self, stmt: Option<usize>) -> Span {
        match stmt.and_then(|i| self.stmt(i)).map(|s| &s.kind) {
            Some(StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. }) => {
                func.span
            }
            _ => Span::default(),
        }
    }

    fn function_name_span(&self, name: &str) -> Option<Span> {
        self.program.stmts.iter().find_map(|s| match &s.kind {
            StmtKind::FuncDef { name: n, .. } if n.name == name => Some(n.span),
            _ => None,
        })
    }
}

/// `t.ipoint` / `t.ispace` for task parameter `task`.
fn point_prop(e: &Expr, task: &str) -> Option<Prop> {
    match &e.kind {
        ExprKind::Prop { base, prop, .. }
            if matches!(prop, Prop::Ipoint | Prop::Ispace)
                && matches!(&base.kind, ExprKind::Name(n) if n == task) =>
        {
            Some(*prop)
        }
        ExprKind::Paren(x) => point_prop(x, task),
        _ => None,
    }
}

/// An integer literal, possibly negated.
fn literal_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Neg(x) => literal_int(x).and_then(|v| v.checked_neg()),
        ExprKind::Paren(x) => literal_int(x),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Launch points
// ---------------------------------------------------------------------------

/// At most this many points of one launch are placed (and shown).
pub const MAX_PLACED_POINTS: u64 = 4096;

/// At most this many mapping-function calls per resolution, and at most
/// this much time for all of them: a hostile file must not stall a language
/// server. Real mappers need a few hundred calls of a few hundred steps.
const MAX_EVALUATIONS: usize = 16_384;
const PLACEMENT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// Evaluation steps allowed per mapping-function call (the evaluator's
/// default is a million; real functions take a few hundred).
const STEPS_PER_CALL: u64 = 100_000;

/// The points of a launch domain in row-major order (first dimension
/// slowest), at most [`MAX_PLACED_POINTS`].
fn domain_points(domain: &[u64]) -> Vec<Vec<i64>> {
    if domain.is_empty() || domain.contains(&0) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut p = vec![0i64; domain.len()];
    loop {
        out.push(p.clone());
        if out.len() as u64 >= MAX_PLACED_POINTS {
            return out;
        }
        let mut d = domain.len();
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            p[d] += 1;
            if (p[d] as u64) < domain[d] {
                break;
            }
            p[d] = 0;
        }
    }
}

/// Legion's `default_select_num_blocks`: factor the processor count into
/// primes and hand them out, largest first, to the dimension with the most
/// points per block.
fn default_num_blocks(procs: u64, domain: &[u64]) -> Vec<u64> {
    let mut result = vec![1u64; domain.len()];
    if procs <= 1 || domain.is_empty() {
        return result;
    }
    let mut factor = procs;
    let mut primes = Vec::new();
    let mut p = 2u64;
    while p * p <= factor {
        while factor.is_multiple_of(p) {
            primes.push(p);
            factor /= p;
        }
        p += 1;
    }
    if factor > 1 {
        primes.push(factor);
    }
    let mut chunks: Vec<f64> = domain.iter().map(|&d| d as f64).collect();
    for &prime in primes.iter().rev() {
        let mut best = 0;
        for (i, c) in chunks.iter().enumerate() {
            if *c > chunks[best] {
                best = i;
            }
        }
        result[best] *= prime;
        chunks[best] /= prime as f64;
    }
    result
}

/// Legion's default slicing of an index launch over `procs` processors
/// (`DefaultMapper::slice_task` with its one-level decomposition and
/// `default_decompose_points`): one block per processor, blocks visited
/// with the first dimension fastest and dealt to the processors in turn.
/// Returns each point's processor ordinal.
fn default_slicing(domain: &[u64], procs: u64) -> BTreeMap<Vec<i64>, u64> {
    let mut out = BTreeMap::new();
    if domain.is_empty() || procs == 0 || domain.contains(&0) {
        return out;
    }
    let volume = domain.iter().fold(1u64, |a, &d| a.saturating_mul(d));
    if volume > MAX_PLACED_POINTS {
        return out;
    }
    let blocks = if domain.len() == 1 {
        vec![procs]
    } else {
        default_num_blocks(procs, domain)
    };
    let mut b = vec![0u64; domain.len()];
    let mut next = 0u64;
    loop {
        let lo: Vec<u64> = (0..domain.len())
            .map(|d| domain[d] * b[d] / blocks[d])
            .collect();
        let hi: Vec<u64> = (0..domain.len())
            .map(|d| domain[d] * (b[d] + 1) / blocks[d])
            .collect();
        if lo.iter().zip(&hi).all(|(l, h)| h > l) {
            let proc = next % procs;
            next += 1;
            // Every point of the block [lo, hi).
            let mut p = lo.clone();
            loop {
                out.insert(p.iter().map(|&x| x as i64).collect(), proc);
                let mut d = 0;
                loop {
                    if d == p.len() {
                        break;
                    }
                    p[d] += 1;
                    if p[d] < hi[d] {
                        break;
                    }
                    p[d] = lo[d];
                    d += 1;
                }
                if d == p.len() {
                    break;
                }
            }
        }
        // Next block, first dimension fastest.
        let mut d = 0;
        loop {
            if d == b.len() {
                return out;
            }
            b[d] += 1;
            if b[d] < blocks[d] {
                break;
            }
            b[d] = 0;
            d += 1;
        }
    }
}

/// Failures met while placing one task's points.
#[derive(Default)]
struct PlaceFailures {
    outside: Vec<(Vec<i64>, String, String, Option<Span>)>,
    wrong_kind: Option<(ProcKind, ProcKind)>,
    /// The point, the evaluator's message and where it failed.
    tuple: Option<(Vec<i64>, String, Option<Span>)>,
    failed: Option<(String, String, String, Option<Span>)>,
}

impl<'a> Resolver<'a> {
    /// Tasks ordered so that each comes after its parent.
    fn parent_first_order(&self) -> Vec<usize> {
        let app = self.app;
        let mut order = Vec::new();
        let mut state = vec![0u8; app.tasks.len()]; // 0 new, 1 visiting, 2 done
        fn visit(app: &App, i: usize, state: &mut [u8], order: &mut Vec<usize>) {
            if state[i] != 0 {
                return;
            }
            state[i] = 1;
            if let Some(p) = &app.tasks[i].parent {
                if let Some(pi) = app.tasks.iter().position(|t| &t.name == p) {
                    visit(app, pi, state, order);
                }
            }
            state[i] = 2;
            order.push(i);
        }
        for i in 0..app.tasks.len() {
            visit(app, i, &mut state, &mut order);
        }
        order
    }

    /// Whether a mapping statement survives loading (its function exists,
    /// is defined before it and takes one Task), so it can run.
    fn map_statement_runs(&self, stmt: usize, func: &str) -> bool {
        let Some(def) =
            self.program.stmts.iter().position(
                |s| matches!(&s.kind, StmtKind::FuncDef { name, .. } if name.name == func),
            )
        else {
            return false;
        };
        def < stmt
            && self
                .function_def(func)
                .is_some_and(|(params, _)| params.len() == 1 && params[0].ty == ParamType::Task)
    }

    fn place_all(&mut self, placer: &mut dyn LaunchPlacer) {
        let app = self.app;
        // Everything here is in the mapper's coordinates (a node is a rank,
        // see `RankView`); `to_physical` turns the result into the
        // machine's processors.
        let nodes = i64::from(self.view.nodes());
        let started = std::time::Instant::now();
        let mut evaluations = 0usize;
        for ti in self.parent_first_order() {
            if !self.traces[ti].runnable {
                continue;
            }
            let task = &app.tasks[ti];
            let kind = self.tasks[ti].proc_kind;
            let ppn = i64::from(self.view.procs_per_node(kind));
            let parent = task
                .parent
                .as_ref()
                .and_then(|p| app.tasks.iter().position(|t| &t.name == p));
            let parent_points: Vec<ParentPoint> = match parent {
                Some(pi) => {
                    let pk = self.tasks[pi].proc_kind;
                    let placed = &self.logical[pi];
                    if placed.is_empty() {
                        vec![ParentPoint {
                            task: app.tasks[pi].name.clone(),
                            point: Vec::new(),
                            kind: pk,
                            node: 0,
                            proc: 0,
                        }]
                    } else {
                        placed
                            .iter()
                            .map(|p| ParentPoint {
                                task: app.tasks[pi].name.clone(),
                                point: p.point.clone(),
                                kind: pk,
                                node: i64::from(p.node),
                                proc: i64::from(p.proc),
                            })
                            .collect()
                    }
                }
                None => Vec::new(),
            };
            let rule = match (self.traces[ti].map_stmt, self.traces[ti].map_func.clone()) {
                (Some(s), Some(f)) if self.map_statement_runs(s, &f) => Some((s, f)),
                _ => None,
            };
            let mut placement = Vec::new();
            let mut fails = PlaceFailures::default();
            match rule {
                None => match task.launch {
                    Launch::Index => {
                        let procs = u64::try_from(nodes * ppn).unwrap_or(0);
                        for (point, ord) in default_slicing(&task.domain, procs) {
                            let ppn = ppn.max(1) as u64;
                            placement.push(PointPlacement {
                                point,
                                node: u32::try_from(ord / ppn).unwrap_or(0),
                                proc: u32::try_from(ord % ppn).unwrap_or(0),
                            });
                        }
                    }
                    Launch::Single => {
                        if parent_points.is_empty() {
                            placement.push(PointPlacement {
                                point: Vec::new(),
                                node: 0,
                                proc: 0,
                            });
                        }
                        for p in &parent_points {
                            placement.push(PointPlacement {
                                point: p.point.clone(),
                                node: u32::try_from(p.node).unwrap_or(0),
                                proc: 0,
                            });
                        }
                    }
                },
                Some((_, func)) => {
                    if self.reported_kind.contains(&task.name)
                        || self.reported_tuple.contains(&task.name)
                    {
                        // Already known to abort; nothing to place.
                    } else {
                        let domain: Vec<i64> = task.domain.iter().map(|&d| d as i64).collect();
                        let jobs: Vec<(Vec<i64>, Option<&ParentPoint>)> = match task.launch {
                            Launch::Index => domain_points(&task.domain)
                                .into_iter()
                                .map(|p| (p, None))
                                .collect(),
                            Launch::Single if parent_points.is_empty() => vec![(Vec::new(), None)],
                            Launch::Single => parent_points
                                .iter()
                                .map(|p| (p.point.clone(), Some(p)))
                                .collect(),
                        };
                        for (point, parent) in jobs {
                            evaluations += 1;
                            if evaluations > MAX_EVALUATIONS
                                || started.elapsed() > PLACEMENT_DEADLINE
                            {
                                // Out of budget: leave the rest unplaced.
                                placement.clear();
                                break;
                            }
                            let res = match task.launch {
                                Launch::Index => {
                                    placer.place_index_point(&func, task, &point, &domain, kind)
                                }
                                Launch::Single => placer.place_single(&func, task, parent, kind),
                            };
                            let res = res.and_then(|mp| check_bounds(mp, nodes, ppn));
                            match res {
                                Ok(mp) => placement.push(PointPlacement {
                                    point,
                                    node: u32::try_from(mp.node).unwrap_or(0),
                                    proc: u32::try_from(mp.proc).unwrap_or(0),
                                }),
                                Err(PlacementError::Unavailable) => {
                                    placement.clear();
                                    break;
                                }
                                Err(PlacementError::OutsideMachine { message, raw, at }) => {
                                    fails.outside.push((point, message, raw, at));
                                }
                                Err(PlacementError::WrongModelKind { actual, model, .. }) => {
                                    fails.wrong_kind = Some((actual, model));
                                    break;
                                }
                                Err(PlacementError::TupleIndexOutOfBound { message, at }) => {
                                    fails.tuple = Some((point, message, at));
                                    break;
                                }
                                Err(PlacementError::Failed {
                                    kind,
                                    message,
                                    raw,
                                    at,
                                }) => {
                                    fails.failed = Some((kind, message, raw, at));
                                    break;
                                }
                            }
                        }
                    }
                }
            }
            self.tasks[ti].placement = placement
                .iter()
                .map(|p| self.to_physical(kind, p))
                .collect();
            self.logical[ti] = placement;
            self.report_placement_failures(ti, fails);
        }
        self.load_imbalance();
    }

    fn report_placement_failures(&mut self, ti: usize, fails: PlaceFailures) {
        let app = self.app;
        let task = &app.tasks[ti];
        let Some(stmt) = self.traces[ti].map_stmt else {
            return;
        };
        let func = self.traces[ti].map_func.clone().unwrap_or_default();
        let span = self.selector_span_for(stmt, &task.name);
        let rule = Some(self.stmt_span(stmt));
        let def = self.function_name_span(&func);
        if let Some((point, message, raw, at)) = fails.outside.first().cloned() {
            let total = match task.launch {
                Launch::Index => task.points().min(MAX_PLACED_POINTS) as usize,
                Launch::Single => fails.outside.len() + self.tasks[ti].placement.len(),
            };
            let mut d = Diagnostic::error(
                "E0301",
                span,
                format!(
                    "`{func}` maps {} of `{}` outside the machine ({} of {total} points): {message}",
                    if point.is_empty() { "the launch".to_string() } else { format!("point {}", tuple_text(&point)) },
                    task.name,
                    fails.outside.len()
                ),
            )
            .with_label("outside the machine")
            .with_note(self.machine_shape_note(self.tasks[ti].proc_kind));
            match at {
                Some(at) if at != span => d = d.with_related(at, "this machine point is outside"),
                _ => {
                    if let Some(def) = def {
                        d = d.with_related(def, "the mapping function");
                    }
                }
            }
            let coordinate = if raw.starts_with("Sharding") { 0 } else { 1 };
            if let Some(fix) = self.modulo_fix(&func, coordinate) {
                d = d.with_fix(fix);
            }
            self.diags.push(d);
            self.fatal(1, ti * 10 + 1, "slice_out_of_bound", raw, rule);
        }
        if let Some((actual, model)) = fails.wrong_kind {
            if self.reported_kind.insert(task.name.clone()) {
                let mut d = Diagnostic::error(
                    "E0302",
                    span,
                    format!("`{}` runs on {actual}, but `{func}` returns a processor of a `Machine({model})` model", task.name),
                )
                .with_label("machine model of the wrong kind")
                .with_note(format!(
                    "the reference aborts with \"{} is actually mapped to {actual}, but machine model is for {model}\"",
                    task.name
                ));
                if let Some(def) = def {
                    d = d.with_related(def, "the mapping function");
                }
                self.diags.push(d);
                self.fatal(
                    1,
                    ti * 10 + 2,
                    "mapping_error",
                    format!(
                        "{} is actually mapped to {actual}, but machine model is for {model}",
                        task.name
                    ),
                    rule,
                );
            }
        }
        if let Some((point, message, at)) = fails.tuple {
            if !self.static_tuple.contains(&task.name)
                && self.reported_tuple.insert(task.name.clone())
            {
                let what = if point.is_empty() {
                    format!("`{}`", task.name)
                } else {
                    format!("point {} of `{}`", tuple_text(&point), task.name)
                };
                let detail = message
                    .strip_prefix("Index out of bound for TupleIntNode")
                    .map(|m| m.trim_start_matches([':', ' ']))
                    .unwrap_or(&message);
                let detail = if detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({detail})")
                };
                let mut d = Diagnostic::error(
                    "E0311",
                    span,
                    format!("`{func}` indexes a tuple past its end while placing {what}{detail}"),
                )
                .with_label("tuple index out of bound")
                .with_note("the reference aborts with \"Index out of bound for TupleIntNode\"");
                match at {
                    Some(at) if at != span => d = d.with_related(at, "indexed here"),
                    _ => {
                        if let Some(def) = def {
                            d = d.with_related(def, "the mapping function");
                        }
                    }
                }
                self.diags.push(d);
            }
            self.fatal(
                1,
                ti * 10 + 1,
                "index_out_of_bound",
                "Index out of bound for TupleIntNode\n".into(),
                rule,
            );
        }
        if let Some((kind, message, raw, at)) = fails.failed {
            let mut d = Diagnostic::error(
                "E0319",
                span,
                format!("`{func}` fails while placing `{}`: {message}", task.name),
            )
            .with_label("mapping function fails");
            match at {
                Some(at) if at != span => d = d.with_related(at, "fails here"),
                _ => {
                    if let Some(def) = def {
                        d = d.with_related(def, "the mapping function");
                    }
                }
            }
            self.diags.push(d);
            self.fatal(1, ti * 10 + 3, &kind, raw, rule);
        }
    }

    /// What `Machine(kind)` is on this run, for E0301's note.
    fn machine_shape_note(&self, kind: ProcKind) -> String {
        let v = &self.view;
        if v.ranks_per_node() > 1 {
            format!(
                "`{}` runs {} ranks per node, and the mapper sees each rank as a node: machine `{}` is {} node(s) with {} {kind} processor(s) each (Machine({kind}) is ({}, {})); end each index with `% m.size[k]` to stay inside",
                self.app.name,
                v.ranks_per_node(),
                self.machine.name,
                v.nodes(),
                v.procs_per_node(kind),
                v.nodes(),
                v.procs_per_node(kind)
            )
        } else {
            format!(
                "machine `{}` has {} node(s) with {} {kind} processor(s) each; end each index with `% m.size[k]` to stay inside",
                self.machine.name,
                self.machine.nodes(),
                self.machine.procs_per_node(kind)
            )
        }
    }

    /// The fix the paper's hint gives for a point outside the machine: end
    /// the offending index of `return m[a, b];` with `% m.size[k]`, when `m`
    /// is a plain `Machine(KIND)` model.
    fn modulo_fix(&self, func: &str, coordinate: usize) -> Option<Fix> {
        let (_, body) = self.function_def(func)?;
        let value = body.iter().find_map(|s| match &s.kind {
            StmtKind::Return { value } => Some(value),
            _ => None,
        })?;
        let ExprKind::Index { base, indices } = &value.kind else {
            return None;
        };
        let ExprKind::Name(m) = &base.kind else {
            return None;
        };
        let plain = self.program.stmts.iter().any(|s| {
            matches!(&s.kind, StmtKind::Assign { name, value } if name.name == *m && value.as_machine_ctor().is_some())
        });
        if !plain
            || indices.len() != 2
            || indices
                .iter()
                .any(|i| matches!(i.kind, ExprKind::Unpack(_)))
        {
            return None;
        }
        let idx = &indices[coordinate];
        if matches!(
            idx.kind,
            ExprKind::Binary {
                op: ast::BinOp::Mod,
                ..
            }
        ) {
            return None;
        }
        let text = idx.span.text(self.source);
        let wrapped = match idx.kind {
            ExprKind::Binary { .. } | ExprKind::Ternary { .. } => {
                format!("({text}) % {m}.size[{coordinate}]")
            }
            _ => format!("{text} % {m}.size[{coordinate}]"),
        };
        Some(Fix::unsafe_(
            format!("wrap the index around the machine: `{wrapped}`"),
            vec![(idx.span, wrapped)],
        ))
    }

    /// I0313: a mapping statement that gives some processors more points
    /// than an even spread would.
    fn load_imbalance(&mut self) {
        let app = self.app;
        // (statement, domain, message) -> tasks: one report per statement
        // and launch shape.
        let mut groups: BTreeMap<(usize, Vec<u64>, String), Vec<String>> = BTreeMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            let decided = &self.tasks[ti];
            let Some(stmt) = self.traces[ti].map_stmt else {
                continue;
            };
            let points = task.points();
            if task.launch != Launch::Index
                || points < 2
                || decided.placement.len() as u64 != points
            {
                continue;
            }
            let kind = decided.proc_kind;
            let total = self.machine.total_procs(kind);
            if total == 0 {
                continue;
            }
            let ideal = points.div_ceil(total);
            let counts = decided.points_per_processor();
            let max = counts.iter().map(|(_, c)| *c as u64).max().unwrap_or(0);
            if max <= ideal {
                continue;
            }
            let mut sorted = counts.clone();
            sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let mut parts: Vec<String> = sorted
                .iter()
                .take(4)
                .enumerate()
                .map(|(i, ((n, p), c))| {
                    if i == 0 {
                        format!("{kind} ({n},{p}) gets {c}")
                    } else {
                        format!("({n},{p}) gets {c}")
                    }
                })
                .collect();
            if sorted.len() > 4 {
                parts.push(format!("{} more busy", sorted.len() - 4));
            }
            let idle = total.saturating_sub(counts.len() as u64);
            let mut text = format!("{points} points on {total} {kind}s: {}", parts.join(", "));
            if idle > 0 {
                text.push_str(&format!("; {idle} {kind}(s) get none"));
            }
            groups
                .entry((stmt, task.domain.clone(), text))
                .or_default()
                .push(format!("`{}`", task.name));
        }
        for ((stmt, _, text), tasks) in groups {
            let span = match self.stmt(stmt).map(|s| &s.kind) {
                Some(StmtKind::IndexTaskMap { func, .. }) => func.span,
                _ => self.stmt_span(stmt),
            };
            self.diags.push(
                Diagnostic::info(
                    "I0313",
                    span,
                    format!("load imbalance for {}: {text}", tasks.join(", ")),
                )
                .with_label("uneven placement")
                .with_note(
                    "an even spread gives each processor at most ceil(points / processors) points",
                ),
            );
        }
    }
}

/// The reference's bound checks on a returned machine point
/// (`get_node_proc`), for placers that do not make them.
fn check_bounds(mp: MachinePoint, nodes: i64, ppn: i64) -> Result<MachinePoint, PlacementError> {
    if mp.node >= nodes {
        return Err(PlacementError::OutsideMachine {
            message: format!("Sharding node index out of bound! {} >= {nodes}", mp.node),
            raw: format!(
                "Sharding node index out of bound!\n{} >= {nodes}\n",
                mp.node
            ),
            at: None,
        });
    }
    if mp.proc >= ppn {
        return Err(PlacementError::OutsideMachine {
            message: format!("Slice processor index out of bound! {} >= {ppn}", mp.proc),
            raw: format!(
                "Slice processor index out of bound!\n{} >= {ppn}\n",
                mp.proc
            ),
            at: None,
        });
    }
    if mp.node < 0 || mp.proc < 0 {
        return Err(PlacementError::OutsideMachine {
            message: format!("negative machine point ({}, {})", mp.node, mp.proc),
            raw: format!("negative machine point ({}, {})\n", mp.node, mp.proc),
            at: None,
        });
    }
    Ok(mp)
}

/// `(a, b)` / `(a)`.
fn tuple_text(p: &[i64]) -> String {
    let parts: Vec<String> = p.iter().map(|x| x.to_string()).collect();
    format!("({})", parts.join(","))
}

// ---------------------------------------------------------------------------
// The evaluator as a placer
// ---------------------------------------------------------------------------

/// Places launch points by running the mapping functions with the DSL
/// evaluator ([`crate::eval::Evaluator`]).
#[derive(Debug, Clone)]
pub struct EvalPlacer {
    ev: crate::eval::Evaluator,
}

/// A machine description's kind as the evaluator may see it: only the
/// kinds the DSL can name (not `UTIL`).
fn eval_kind(k: ProcKind) -> Option<ProcKind> {
    dsl_proc(k).map(|_| k)
}

impl EvalPlacer {
    /// Runs the top level of `program` (statements that did not parse are
    /// left out, so one typo does not hide every placement) on `machine`,
    /// run with one rank per node.
    pub fn new(
        program: &ast::Program,
        machine: &Machine,
    ) -> Result<EvalPlacer, crate::eval::EvalError> {
        Self::with_ranks(program, machine, 1)
    }

    /// [`EvalPlacer::new`] for a program run with `ranks_per_node` ranks on
    /// every node: the functions see `Machine(KIND)` as (ranks, processors
    /// per rank) ([`RankView`]) and name processors in those terms.
    pub fn with_ranks(
        program: &ast::Program,
        machine: &Machine,
        ranks_per_node: u32,
    ) -> Result<EvalPlacer, crate::eval::EvalError> {
        let view = RankView::new(machine, ranks_per_node);
        let mut shape = crate::eval::MachineShape::new(i64::from(view.nodes()));
        for k in machine.proc_kinds() {
            if let Some(ek) = eval_kind(k) {
                shape = shape.with(ek, i64::from(view.procs_per_node(k)));
            }
        }
        let program = ast::Program {
            stmts: program
                .stmts
                .iter()
                .filter(|s| !matches!(s.kind, StmtKind::Error))
                .cloned()
                .collect(),
        };
        let limits = crate::eval::Limits {
            max_steps: STEPS_PER_CALL,
            ..crate::eval::Limits::default()
        };
        crate::eval::Evaluator::with_limits(&program, &shape, limits).map(|ev| EvalPlacer { ev })
    }
}

impl LaunchPlacer for EvalPlacer {
    fn place_index_point(
        &mut self,
        func: &str,
        task: &Task,
        point: &[i64],
        domain: &[i64],
        kind: ProcKind,
    ) -> Result<MachinePoint, PlacementError> {
        self.ev
            .map_index_point(func, &task.name, point, domain, eval_kind(kind))
            .map(|(node, proc)| MachinePoint { node, proc })
            .map_err(|e| placement_error(&e, &task.name, kind))
    }

    fn place_single(
        &mut self,
        func: &str,
        task: &Task,
        parent: Option<&ParentPoint>,
        kind: ProcKind,
    ) -> Result<MachinePoint, PlacementError> {
        let single = crate::eval::SingleTask {
            name: task.name.clone(),
            processor: None,
            parent: parent.map(|p| {
                Box::new(crate::eval::SingleTask {
                    name: p.task.clone(),
                    processor: Some((p.node, p.proc)),
                    parent: None,
                })
            }),
        };
        let placed = self
            .ev
            .map_single_task(func, &single, eval_kind(kind))
            .map_err(|e| placement_error(&e, &task.name, kind))?;
        placed
            .first()
            .map(|(node, proc)| MachinePoint { node, proc })
            .ok_or(PlacementError::Failed {
                kind: "mapping_error".into(),
                message: "the mapping function named no processor".into(),
                raw:
                    "Must return TupleIntType or SetTupleIntType after invoking mapping function\n"
                        .into(),
                at: None,
            })
    }
}

/// An evaluator error as a placement failure, with the reference's text.
fn placement_error(e: &crate::eval::EvalError, task: &str, kind: ProcKind) -> PlacementError {
    use crate::eval::EvalErrorKind as K;
    use crate::mspace::MSpaceError as M;
    let at = Some(e.span).filter(|s| *s != Span::default());
    match e.kind {
        K::MachineModel => match e.mspace.as_deref() {
            Some(M::NodeOutOfBound { index, bound }) => PlacementError::OutsideMachine {
                message: e.message.clone(),
                raw: format!("Sharding node index out of bound!\n{index} >= {bound}\n"),
                at,
            },
            Some(M::ProcOutOfBound { index, bound }) => PlacementError::OutsideMachine {
                message: e.message.clone(),
                raw: format!("Slice processor index out of bound!\n{index} >= {bound}\n"),
                at,
            },
            Some(M::NegativeNode { .. } | M::NegativeProc { .. }) => {
                PlacementError::OutsideMachine {
                    message: e.message.clone(),
                    raw: format!("{}\n", e.message),
                    at,
                }
            }
            _ => PlacementError::Failed {
                kind: "mapping_error".into(),
                message: e.message.clone(),
                raw: format!("{}\n", e.message),
                at,
            },
        },
        K::WrongProcessorKind => {
            let model = e
                .message
                .rsplit(' ')
                .next()
                .and_then(|w| w.parse::<ProcKind>().ok());
            match model {
                Some(model) => PlacementError::WrongModelKind {
                    task: task.to_string(),
                    actual: kind,
                    model,
                },
                None => PlacementError::Failed {
                    kind: "mapping_error".into(),
                    message: e.message.clone(),
                    raw: e.message.clone(),
                    at,
                },
            }
        }
        K::IndexOutOfBound if e.message.starts_with("Index out of bound for TupleIntNode") => {
            PlacementError::TupleIndexOutOfBound {
                message: e.message.clone(),
                at,
            }
        }
        K::StepLimit | K::CallDepth | K::Nesting => PlacementError::Failed {
            kind: "evaluation_limit".into(),
            message: e.message.clone(),
            raw: format!("{}\n", e.message),
            at,
        },
        _ => PlacementError::Failed {
            kind: "mapping_error".into(),
            message: e.message.clone(),
            raw: format!("{}\n", e.message),
            at,
        },
    }
}

/// A failure of the evaluator's top level as a runtime failure.
fn top_level_failure(e: &crate::eval::EvalError) -> RuntimeFailure {
    use crate::eval::EvalErrorKind as K;
    let kind = match e.kind {
        K::UndefinedName => "name_not_found",
        K::UndefinedFunction => "function_undefined",
        K::GlobalConflict => "assign_conflict",
        K::EntrySignature => "entry_signature",
        K::Syntax => "syntax_error",
        _ => "mapping_error",
    };
    RuntimeFailure {
        kind: kind.to_string(),
        raw_output: format!("{}\n", e.message),
        rule: Some(e.span),
    }
}

// ---------------------------------------------------------------------------
// Rendering (`mapwright explain`)
// ---------------------------------------------------------------------------

/// At most this many launch points are listed per task.
const MAX_SHOWN_POINTS: usize = 64;

/// The decisions as text for people: a header, then per task its processor
/// kind and the rule that chose it, a table of its region arguments (memory
/// and layout, each with the rule that chose it), and where its launch
/// points run (2-D launches as a matrix of `node,proc`, others as a list).
/// `source` is the mapper text the rule spans point into.
pub fn render_decisions(d: &Decisions, source: &str, app: &App, machine: &Machine) -> String {
    let line_of = |span: Span| -> usize {
        source
            .get(..span.start.min(source.len()))
            .map(|s| s.matches('\n').count())
            .unwrap_or(0)
            + 1
    };
    let rule = |span: Option<Span>| -> String {
        match span {
            None => "default".to_string(),
            Some(s) => format!("line {}", line_of(s)),
        }
    };
    let mut out = String::new();
    let kinds: Vec<String> = machine
        .proc_kinds()
        .into_iter()
        .filter(|k| *k != ProcKind::Util)
        .map(|k| format!("{} {k}", machine.procs_per_node(k)))
        .collect();
    out.push_str(&format!(
        "application `{}` on machine `{}` ({} node(s); per node {})\n",
        d.app,
        d.machine,
        machine.nodes(),
        kinds.join(", ")
    ));
    let view = RankView::new(machine, app.ranks_per_node.on(machine));
    if view.ranks_per_node() > 1 {
        let per_rank: Vec<String> = machine
            .proc_kinds()
            .into_iter()
            .filter(|k| *k != ProcKind::Util)
            .map(|k| format!("{} {k}", view.procs_per_node(k)))
            .collect();
        out.push_str(&format!(
            "launched with {} ranks per node: the mapper sees {} node(s) with {} each; points below are physical (node,proc)\n",
            view.ranks_per_node(),
            view.nodes(),
            per_rank.join(", ")
        ));
    }
    match &d.fatal {
        None => out.push_str("the run does not abort on any problem found here\n"),
        Some(f) => {
            let first = f
                .raw_output
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            let at = f
                .rule
                .map(|s| format!(" (line {})", line_of(s)))
                .unwrap_or_default();
            out.push_str(&format!(
                "the run aborts: [{}] {}{at}\n",
                f.kind,
                first.trim()
            ));
        }
    }
    // The statements rules refer to, listed once at the end.
    let mut cited: BTreeMap<usize, String> = BTreeMap::new();
    let mut cite = |span: Option<Span>| {
        if let Some(s) = span {
            cited.insert(line_of(s), short(s.text(source)));
        }
    };
    for t in &d.tasks {
        out.push('\n');
        let launch = match t.launch {
            Launch::Index => {
                let dom: Vec<String> = app
                    .task(&t.task)
                    .map(|a| a.domain.iter().map(|x| x.to_string()).collect())
                    .unwrap_or_default();
                format!("index launch ({})", dom.join(","))
            }
            Launch::Single => "single launch".to_string(),
        };
        let mut extras = Vec::new();
        if let Some(n) = t.instance_limit {
            extras.push(format!("InstanceLimit {n}"));
        }
        if t.control_replicated {
            extras.push("control-replicated".to_string());
        }
        if t.collect_memory {
            extras.push("CollectMemory".to_string());
        }
        let extras = if extras.is_empty() {
            String::new()
        } else {
            format!("; {}", extras.join(", "))
        };
        out.push_str(&format!(
            "task {}: {launch} on {} ({}){extras}\n",
            t.task,
            t.proc_kind,
            rule(t.proc_rule)
        ));
        cite(t.proc_rule);
        if !t.regions.is_empty() {
            let mut rows: Vec<[String; 5]> = vec![[
                "arg".into(),
                "region".into(),
                "instance".into(),
                "memory (rule)".into(),
                "layout (rule)".into(),
            ]];
            for r in &t.regions {
                let instance = instance_text(r.instance, r.collect);
                // One row per launch: the argument's own, then later
                // launches with other regions in it.
                let launches = std::iter::once((
                    r.index.to_string(),
                    &r.region,
                    instance.clone(),
                    r.instance,
                    r.memory,
                    r.memory_rule,
                    &r.layout,
                    r.layout_rule,
                ))
                .chain(r.launches.iter().enumerate().map(|(k, l)| {
                    (
                        format!("{} (launch {})", r.index, k + 2),
                        &l.region,
                        instance_text(l.instance, r.collect),
                        l.instance,
                        l.memory,
                        l.memory_rule,
                        &l.layout,
                        l.layout_rule,
                    )
                }));
                for (arg, region, instance, kind, memory, memory_rule, layout, layout_rule) in
                    launches
                {
                    let (mem, lay) = if kind.is_physical() {
                        cite(memory_rule);
                        cite(layout_rule);
                        (
                            format!("{memory} ({})", rule(memory_rule)),
                            format!("{} ({})", layout_text(layout), rule(layout_rule)),
                        )
                    } else {
                        if kind == InstanceKind::VirtualByMapper {
                            // The statement that said VIRTUAL.
                            cite(memory_rule);
                        }
                        ("-".to_string(), "-".to_string())
                    };
                    rows.push([arg, region.clone(), instance, mem, lay]);
                }
            }
            let mut widths = [0usize; 5];
            for row in &rows {
                for (i, c) in row.iter().enumerate() {
                    widths[i] = widths[i].max(c.chars().count());
                }
            }
            for row in &rows {
                let cells: Vec<String> = row
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
                    .collect();
                out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
            }
        }
        cite(t.map_rule);
        let by = match t.map_rule {
            Some(s) => format!("by line {}", line_of(s)),
            None => "by Legion's default".to_string(),
        };
        if t.placement.is_empty() {
            let why = if t.map_rule.is_some() {
                "not placed (the mapping function does not run)"
            } else {
                "not placed"
            };
            out.push_str(&format!("  points: {why}\n"));
            continue;
        }
        let dims = t.placement.first().map_or(0, |p| p.point.len());
        match t.launch {
            Launch::Index if dims == 2 => {
                out.push_str(&format!("  points {by} (row i, column j: node,proc):\n"));
                out.push_str(&render_grid(&t.placement));
            }
            Launch::Index => {
                out.push_str(&format!("  points {by} (point -> node,proc):\n"));
                out.push_str(&render_list(&t.placement));
            }
            Launch::Single => {
                if t.placement.len() == 1 && t.placement[0].point.is_empty() {
                    let p = &t.placement[0];
                    out.push_str(&format!("  runs {by} on {},{}\n", p.node, p.proc));
                } else {
                    out.push_str(&format!(
                        "  runs {by}, once per parent point (parent point -> node,proc):\n"
                    ));
                    out.push_str(&render_list(&t.placement));
                }
            }
        }
    }
    if !cited.is_empty() {
        out.push_str("\nrules:\n");
        for (line, text) in cited {
            out.push_str(&format!("  line {line}: {text}\n"));
        }
    }
    out
}

/// A 2-D placement as a matrix.
fn render_grid(placement: &[PointPlacement]) -> String {
    let mut rows: BTreeMap<i64, BTreeMap<i64, String>> = BTreeMap::new();
    for p in placement.iter().take(MAX_SHOWN_POINTS * 4) {
        if let [i, j] = p.point[..] {
            rows.entry(i)
                .or_default()
                .insert(j, format!("{},{}", p.node, p.proc));
        }
    }
    let cols: BTreeSet<i64> = rows.values().flat_map(|r| r.keys().copied()).collect();
    let width = rows
        .values()
        .flat_map(|r| r.values().map(|c| c.len()))
        .chain(cols.iter().map(|j| format!("j={j}").len()))
        .max()
        .unwrap_or(3);
    let label = rows
        .keys()
        .map(|i| format!("i={i}").len())
        .max()
        .unwrap_or(3);
    let mut out = format!("    {:label$}", "");
    for j in &cols {
        out.push_str(&format!("  {:>width$}", format!("j={j}")));
    }
    out.push('\n');
    for (i, r) in &rows {
        out.push_str(&format!("    {:label$}", format!("i={i}")));
        for j in &cols {
            out.push_str(&format!(
                "  {:>width$}",
                r.get(j).map_or("-", |c| c.as_str())
            ));
        }
        out.push('\n');
    }
    if placement.len() > MAX_SHOWN_POINTS * 4 {
        out.push_str(&format!(
            "    ... {} more points\n",
            placement.len() - MAX_SHOWN_POINTS * 4
        ));
    }
    out
}

/// A placement as a wrapped list of `point -> node,proc`.
fn render_list(placement: &[PointPlacement]) -> String {
    let items: Vec<String> = placement
        .iter()
        .take(MAX_SHOWN_POINTS)
        .map(|p| format!("{} -> {},{}", tuple_text(&p.point), p.node, p.proc))
        .collect();
    let mut out = String::new();
    let mut line = String::from("   ");
    for it in items {
        if line.len() + it.len() + 3 > 100 && !line.trim().is_empty() {
            out.push_str(line.trim_end_matches(';'));
            out.push('\n');
            line = String::from("   ");
        }
        line.push(' ');
        line.push_str(&it);
        line.push(';');
    }
    if !line.trim().is_empty() {
        out.push_str(line.trim_end_matches(';'));
        out.push('\n');
    }
    if placement.len() > MAX_SHOWN_POINTS {
        out.push_str(&format!(
            "    ... {} more points\n",
            placement.len() - MAX_SHOWN_POINTS
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_blocks_follow_legion() {
        // 4 processors over a (2, 2) domain: one block per point.
        assert_eq!(default_num_blocks(4, &[2, 2]), vec![2, 2]);
        // Primes go, largest first, to the dimension with most points per block.
        assert_eq!(default_num_blocks(6, &[4, 9]), vec![2, 3]);
        assert_eq!(default_num_blocks(8, &[2, 2, 2]), vec![2, 2, 2]);
        assert_eq!(default_num_blocks(1, &[5, 5]), vec![1, 1]);
        assert_eq!(default_num_blocks(7, &[1, 100]), vec![1, 7]);
    }

    #[test]
    fn default_slicing_deals_blocks_in_column_major_order() {
        let s = default_slicing(&[2, 2], 4);
        assert_eq!(s[&vec![0, 0]], 0);
        assert_eq!(s[&vec![1, 0]], 1);
        assert_eq!(s[&vec![0, 1]], 2);
        assert_eq!(s[&vec![1, 1]], 3);
        // 1-D: contiguous blocks, sizes differing by at most one.
        let s = default_slicing(&[10], 4);
        let counts = (0..4u64)
            .map(|p| s.values().filter(|&&x| x == p).count())
            .collect::<Vec<_>>();
        assert_eq!(counts, vec![2, 3, 2, 3]);
        assert_eq!(s[&vec![0]], 0);
        assert_eq!(s[&vec![9]], 3);
        // Fewer points than processors: empty blocks are skipped and do not
        // consume a processor.
        let s = default_slicing(&[2], 4);
        assert_eq!(s.values().copied().collect::<Vec<_>>(), vec![0, 1]);
        assert!(default_slicing(&[0], 4).is_empty());
        assert!(default_slicing(&[4], 0).is_empty());
    }

    #[test]
    fn domain_points_are_row_major_and_bounded() {
        assert_eq!(
            domain_points(&[2, 2]),
            vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]
        );
        assert!(domain_points(&[]).is_empty());
        assert_eq!(
            domain_points(&[1 << 20, 1 << 20]).len() as u64,
            MAX_PLACED_POINTS
        );
    }

    #[test]
    fn later_constraints_of_a_family_win() {
        let src = "Layout * * * AOS SOA F_order C_order Compact Exact Align<=64 Align==128;";
        let parsed = mapwright_grammar::parse(src);
        let StmtKind::Layout { constraints, .. } = &parsed.program.stmts[0].kind else {
            panic!("not a layout");
        };
        let l = fold_constraints(constraints);
        assert!(l.soa && l.compact && l.exact);
        assert_eq!(l.order, Order::C);
        assert_eq!(l.align, Some((ast::AlignOp::Eq, 128)));
        assert_eq!(layout_text(&l), "SOA C_order Compact Exact Align==128");
        assert_eq!(layout_text(&fold_constraints(&[])), "SOA F_order");
    }

    #[test]
    fn codes_are_unique_and_in_the_resolution_range() {
        let mut seen = HashSet::new();
        for c in CODES {
            assert!(seen.insert(c.code), "duplicate {}", c.code);
            assert!(c.code[1..].starts_with("03"), "{}", c.code);
            assert!(
                mapwright_grammar::codes::summary(c.code).is_none(),
                "{} clashes with grammar",
                c.code
            );
        }
        assert!(code_summary("E0305").is_some());
    }

    #[test]
    fn reference_bound_checks() {
        let ok = MachinePoint { node: 1, proc: 3 };
        assert_eq!(check_bounds(ok, 2, 4), Ok(ok));
        let Err(PlacementError::OutsideMachine { raw, .. }) =
            check_bounds(MachinePoint { node: 0, proc: 4 }, 1, 4)
        else {
            panic!("expected an error");
        };
        assert_eq!(raw, "Slice processor index out of bound!\n4 >= 4\n");
        assert!(check_bounds(MachinePoint { node: 2, proc: 0 }, 2, 4).is_err());
        assert!(check_bounds(MachinePoint { node: 0, proc: -1 }, 2, 4).is_err());
    }
}
