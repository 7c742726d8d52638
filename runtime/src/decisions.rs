//! Concrete mapping decisions: what a mapper decides for one application on
//! one machine. Produced by mapping resolution (program + app + machine) and
//! consumed by the execution backends, `explain`, the language server's
//! hovers and inlay hints, and AutoGuide.
//!
//! Every decision records the statement that made it (`rule`: its span in the
//! mapper source), or `None` when the reference's default policy decided, so a
//! problem can be reported on the responsible statement.

use mapwright_grammar::ast::AlignOp;
use mapwright_grammar::{Diagnostic, Span};
use serde::Serialize;

use crate::app::Launch;
use crate::machine::{MemKind, ProcKind};

/// All decisions for one (mapper, application, machine).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Decisions {
    pub app: String,
    pub machine: String,
    /// One entry per application task, in the application's order.
    pub tasks: Vec<TaskDecision>,
    /// Problems found while resolving, on the responsible statements.
    pub diagnostics: Vec<Diagnostic>,
    /// What a real run would abort with before doing any work (the first
    /// fatal problem, as the runtime prints it), if anything.
    pub fatal: Option<RuntimeFailure>,
}

/// The decisions for one task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskDecision {
    pub task: String,
    pub launch: Launch,
    /// The processor kind it runs on, after the priority list and the
    /// variant fallback.
    pub proc_kind: ProcKind,
    /// The `Task` statement that chose the kind (`None`: default policy).
    pub proc_rule: Option<Span>,
    /// One entry per region argument, in argument order.
    pub regions: Vec<RegionDecision>,
    /// Where each launch point runs. A single launch has one entry per
    /// launch of it: one when its parent is a single task, one per parent
    /// point (with that point as `point`) when an index launch's points
    /// each launch it. Empty when the points could not be placed (the
    /// mapping function fails or is not evaluated).
    pub placement: Vec<PointPlacement>,
    /// The IndexTaskMap/SingleTaskMap statement that placed the points
    /// (`None`: Legion's default slicing/sharding).
    pub map_rule: Option<Span>,
    /// `InstanceLimit` for the task, if any.
    pub instance_limit: Option<u64>,
    pub control_replicated: bool,
    /// `CollectMemory` applies.
    pub collect_memory: bool,
}

/// The memory and layout of one region argument.
#[derive(Debug, Clone, Serialize)]
pub struct RegionDecision {
    /// Semantic name (as the application names it).
    pub region: String,
    pub index: u32,
    pub memory: MemKind,
    /// The `Region` statement that chose the memory (`None`: default).
    pub memory_rule: Option<Span>,
    pub layout: LayoutDecision,
    /// The `Layout` statement that chose the layout (`None`: default).
    pub layout_rule: Option<Span>,
    /// Whether a physical instance is made at all, and if not, why.
    pub instance: InstanceKind,
    /// `CollectMemory` applies to this (read-only) argument.
    pub collect: bool,
    /// The 2nd, 3rd, ... launches of a task launched with other regions in
    /// this argument (pennant's shared launch), each decided by its own
    /// names; empty for the usual one-region argument.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub launches: Vec<LaunchRegionDecision>,
}

/// What the mapper decides for one later launch of an argument
/// ([`RegionDecision::launches`]).
#[derive(Debug, Clone, Serialize)]
pub struct LaunchRegionDecision {
    /// The region's name on that launch.
    pub region: String,
    pub memory: MemKind,
    pub memory_rule: Option<Span>,
    pub layout: LayoutDecision,
    pub layout_rule: Option<Span>,
    /// Whether this launch's region gets an instance (`VIRTUAL` may name
    /// one launch only).
    pub instance: InstanceKind,
}

/// Whether a region argument gets a physical instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstanceKind {
    /// An instance in `memory` with `layout`.
    Physical,
    /// `VIRTUAL` in the mapper's memory list: no instance.
    VirtualByMapper,
    /// The application tags the requirement for a virtual mapping.
    VirtualByApp,
    /// The task variant is an inner task: every argument is mapped
    /// virtually, reductions included (Legion 25.12's DefaultMapper).
    InnerTask,
    /// No privilege (`NO_ACCESS`): the requirement is not mapped.
    NoAccess,
}

impl InstanceKind {
    /// Whether an instance exists (so memory and layout matter).
    pub fn is_physical(self) -> bool {
        self == InstanceKind::Physical
    }
}

/// Dimension ordering of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Order {
    /// `C_order`: last dimension fastest.
    C,
    /// `F_order`: first dimension fastest (Legion's default).
    F,
}

/// The resolved layout of one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LayoutDecision {
    /// Struct-of-arrays (true, Legion's default) or array-of-structs.
    pub soa: bool,
    pub order: Order,
    pub compact: bool,
    pub exact: bool,
    /// `Align OP N` (bytes), if any.
    pub align: Option<(AlignOp, i64)>,
}

impl Default for LayoutDecision {
    fn default() -> Self {
        LayoutDecision {
            soa: true,
            order: Order::F,
            compact: false,
            exact: false,
            align: None,
        }
    }
}

/// One launch point and the processor it runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PointPlacement {
    pub point: Vec<i64>,
    pub node: u32,
    /// Index of the processor among the node's processors of `proc_kind`.
    pub proc: u32,
}

/// A failure a real run would report, with the text it prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeFailure {
    /// Stable kind, e.g. `out_of_memory`, `stride_mismatch`,
    /// `cublas_illegal_parameter`, `slice_out_of_bound`, `event_exists`,
    /// `function_undefined`, `name_not_found`, `mapping_error`.
    pub kind: String,
    /// The raw text the real runtime prints (see `shared/apps/ERRORS.md`).
    pub raw_output: String,
    /// The statement responsible, when known.
    pub rule: Option<Span>,
}

impl TaskDecision {
    /// How many points each processor (node, proc) receives, sorted by
    /// processor: the basis of load-imbalance reports.
    pub fn points_per_processor(&self) -> Vec<((u32, u32), usize)> {
        let mut counts: std::collections::BTreeMap<(u32, u32), usize> =
            std::collections::BTreeMap::new();
        for p in &self.placement {
            *counts.entry((p.node, p.proc)).or_default() += 1;
        }
        counts.into_iter().collect()
    }
}
