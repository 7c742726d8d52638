//! What the evaluator is given and hands out: the machine's shape, the
//! limits, the tasks an entry function maps, and the conversion of the
//! DSL's processor keywords.

use std::collections::BTreeMap;

use mapwright_grammar::ast::{self};

use crate::mspace::{PhysicalProc, ProcKind};

/// Converts the grammar's processor kind into the runtime's (the
/// conversion is `From<ast::ProcKind>` on [`ProcKind`]; this name is kept
/// for callers of `eval::proc_kind`).
pub fn proc_kind(kind: ast::ProcKind) -> ProcKind {
    ProcKind::from(kind)
}

/// The machine a program runs on, as far as the evaluator needs it: how many
/// nodes, and how many processors of each kind every node has. `Machine(KIND)`
/// is `(nodes, count of KIND)`; a kind that is not listed has 0 processors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineShape {
    /// Number of nodes (Legion address spaces).
    pub nodes: i64,
    /// Processors of each kind on every node.
    pub procs_per_node: BTreeMap<ProcKind, i64>,
}

impl MachineShape {
    /// A machine of `nodes` nodes without processors; add them with
    /// [`MachineShape::with`].
    pub fn new(nodes: i64) -> Self {
        MachineShape {
            nodes,
            procs_per_node: BTreeMap::new(),
        }
    }

    /// The same machine with `count` processors of `kind` on every node.
    pub fn with(mut self, kind: ProcKind, count: i64) -> Self {
        self.procs_per_node.insert(kind, count);
        self
    }

    /// Processors of `kind` per node (0 when absent).
    pub fn count(&self, kind: ProcKind) -> i64 {
        self.procs_per_node.get(&kind).copied().unwrap_or(0)
    }
}

/// Bounds on one evaluation, so that a hostile program cannot hang the
/// caller or overflow its stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Maximum depth of user-function calls (the entry function counts).
    pub max_call_depth: usize,
    /// Maximum nesting of expression evaluation, across calls. Real mappers
    /// stay below 30; each level costs Rust stack.
    pub max_nesting: usize,
    /// Evaluation steps allowed per entry call (and for the top level).
    pub max_steps: u64,
    /// Bytes of `print` output kept; the rest is dropped.
    pub max_output: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_call_depth: 64,
            max_nesting: 256,
            max_steps: 1_000_000,
            max_output: 1 << 20,
        }
    }
}

/// The task an entry function receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskValue {
    /// One point of an index launch.
    Index(IndexTask),
    /// A single (non-index) launch.
    Single(SingleTask),
}

impl TaskValue {
    /// The task's name.
    pub fn name(&self) -> &str {
        match self {
            TaskValue::Index(t) => &t.name,
            TaskValue::Single(t) => &t.name,
        }
    }
}

/// A point of an index launch: `task.ipoint`, `task.ispace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexTask {
    /// Task name.
    pub name: String,
    /// The launch point.
    pub ipoint: Vec<i64>,
    /// The extents of the launch domain.
    pub ispace: Vec<i64>,
}

/// A single launch, as the reference sees it through Legion's `Task` object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleTask {
    /// Task name.
    pub name: String,
    /// Where the task currently is (`task.processor(m)`): node and index of
    /// the processor among its node's processors of its kind. `None` if not
    /// known, which makes `task.processor(m)` an error.
    pub processor: Option<PhysicalProc>,
    /// The parent task (`task.parent`). The reference builds the parent as a
    /// single task even if it was a point of an index launch.
    pub parent: Option<Box<SingleTask>>,
}
