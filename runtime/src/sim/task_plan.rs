//! What the plan holds per task and per flow: the units a task's points
//! run as, each region argument's memory, layout and bytes, and the
//! producer-consumer edges between pieces. `plan` builds them; `engine`
//! and `gemm` read them (kept apart from the builder so `gemm`, which the
//! builder calls, needs only these types).

use crate::app::{FlowKind, Privilege, RegionArg, Task};
use crate::decisions::LayoutDecision;
use crate::machine::{MemKind, ProcGroup, ProcKind};

use super::topology::ProcId;

/// One point task (or, for a single task launched from every point of an
/// index launch, the launches made from one parent point).
#[derive(Debug, Clone, Copy)]
pub struct Unit {
    pub proc: ProcId,
    /// Which piece of each partitioned region it works on.
    pub piece: u32,
    /// How many times it runs, one after another, per launch.
    pub execs: u32,
}

/// One region argument that needs an instance.
#[derive(Debug, Clone)]
pub struct ArgPlan<'a> {
    pub arg: &'a RegionArg,
    /// What the argument is on each launch of an iteration (launch `k` uses
    /// entry `k % len`): a task launched once with its private and once
    /// with its shared piece names the shared one as its first alias.
    pub per_launch: Vec<LaunchArg>,
    /// Where the data lives on the first launch.
    pub mem: MemKind,
    /// A GPU task given a memory it cannot reach: the data is copied into
    /// its framebuffer and back around every execution.
    pub staged: bool,
    pub layout: LayoutDecision,
    /// `CollectMemory` applies: successive pieces do not pile up.
    pub collect: bool,
    /// Bytes the kernel moves through this argument per execution (first
    /// launch; scale by [`LaunchArg::scale`]).
    pub touch_bytes: f64,
    /// (field id, bytes) of the fields the argument accesses.
    pub fields: Vec<(u32, f64)>,
    /// Bytes per element the argument accesses, and of the whole struct.
    pub accessed_per_elem: f64,
    pub struct_per_elem: f64,
}

/// The argument on one launch.
#[derive(Debug, Clone, Copy)]
pub struct LaunchArg {
    /// Interned region name.
    pub region: u32,
    pub mem: MemKind,
    pub staged: bool,
    /// Size relative to the argument's listed size.
    pub scale: f64,
}

impl ArgPlan<'_> {
    /// The argument on launch `k`.
    pub fn on(&self, k: u32) -> LaunchArg {
        let n = self.per_launch.len().max(1);
        self.per_launch
            .get(k as usize % n)
            .copied()
            .unwrap_or(LaunchArg {
                region: 0,
                mem: self.mem,
                staged: self.staged,
                scale: 1.0,
            })
    }

    pub fn reads(&self) -> bool {
        self.arg.privilege.reads()
    }

    pub fn writes(&self) -> bool {
        matches!(self.arg.privilege, Privilege::Write | Privilege::ReadWrite)
    }

    pub fn reduces(&self) -> bool {
        self.arg.privilege == Privilege::Reduce
    }
}

/// A task as the engine runs it.
#[derive(Debug, Clone)]
pub struct TaskPlan<'a> {
    pub task: &'a Task,
    pub kind: ProcKind,
    pub group: Option<&'a ProcGroup>,
    pub units: Vec<Unit>,
    /// Launches per iteration that run one after another (each with all
    /// units in parallel).
    pub launches: u32,
    /// Launches outside the loop.
    pub setup_launches: u32,
    pub args: Vec<ArgPlan<'a>>,
    pub gemm: bool,
    pub instance_limit: Option<u64>,
    pub collect_memory: bool,
    /// Whether it does work (not an inner task, and launched at all).
    pub active: bool,
}

/// A producer-consumer edge between different pieces.
#[derive(Debug, Clone)]
pub struct FlowPlan {
    pub from: usize,
    pub to: usize,
    pub from_arg: usize,
    pub to_arg: usize,
    pub kind: FlowKind,
    pub bytes: f64,
    /// The one producer of each consumer point in a grid of tiles
    /// (`app::Flow::grid`); `None`: the neighbours of a 1-D order.
    pub step: Option<GridStep>,
}

/// A neighbour in a grid of tiles (up to 3 axes, the first fastest): the
/// producer of consumer tile `p` is the tile at `offset` from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridStep {
    /// Tiles per axis (1 for unused axes).
    pub grid: [u32; 3],
    /// The producer's tile relative to the consumer's (0 for unused axes).
    pub offset: [i32; 3],
}

impl GridStep {
    /// The step a flow describes, if it has a grid (validated by
    /// `App::validate`; a malformed one is treated as no grid).
    pub fn of(f: &crate::app::Flow) -> Option<GridStep> {
        if f.grid.is_empty() || f.grid.len() > 3 || f.offset.len() != f.grid.len() {
            return None;
        }
        let mut step = GridStep {
            grid: [1; 3],
            offset: [0; 3],
        };
        for (a, (&g, &o)) in f.grid.iter().zip(&f.offset).enumerate() {
            step.grid[a] = g.max(1);
            step.offset[a] = o;
        }
        Some(step)
    }

    /// How many tiles the grid has.
    pub fn tiles(&self) -> u64 {
        self.grid.iter().map(|&g| u64::from(g)).product()
    }

    /// The linear index of the tile at `offset` from tile `p`, or `None`
    /// when that falls outside the grid (a border tile's missing strip).
    pub fn neighbour(&self, p: u32) -> Option<u32> {
        let (mut rest, mut out, mut stride) = (p, 0u32, 1u32);
        for (&g, &o) in self.grid.iter().zip(&self.offset) {
            let c = i64::from(rest % g) + i64::from(o);
            rest /= g;
            if c < 0 || c >= i64::from(g) {
                return None;
            }
            out += c as u32 * stride;
            stride *= g;
        }
        (rest == 0).then_some(out)
    }
}
