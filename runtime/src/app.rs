//! Application descriptions: what a mapper is mapping.
//!
//! An [`App`] lists the program's tasks ([`Task`]: index or single launch,
//! launch domain, processor kinds it has variants for, work per launch
//! point, how often it is launched), each task's region arguments
//! ([`RegionArg`]: the semantic name a mapper uses, the argument index,
//! privilege, fields, size), the layout constraints libraries impose
//! ([`LibraryConstraint`]: a cuBLAS GEMM needs `C_order`, Regent needs the
//! first dimension fastest), and the communication pattern between tasks
//! ([`Communication`]).
//!
//! Descriptions are JSON. The nine benchmarks of the ASI paper are built in
//! ([`App::builtin`]): their descriptions live in `runtime/apps/<name>.json`
//! and carry the real task and region names (from `shared/apps/<name>.json`,
//! the wrapper logs and the expert mappers), so each expert mapper — shipped
//! verbatim in `runtime/apps/experts/` ([`expert_mapper_text`]) — runs
//! against its application unchanged. Values no source gives (work per
//! point, launch counts, guessed problem sizes) carry a `guess` saying so.

use crate::machine::ProcKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------
// Description types
// ---------------------------------------------------------------------------

/// An application: its tasks, their data, and how they talk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct App {
    /// Short name (the built-in name for built-ins).
    pub name: String,
    /// One-line human description.
    #[serde(default)]
    pub description: String,
    /// Where the facts come from (`owner/repo@commit:path`, log files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// Corpus file name of the expert mapper (empty if none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub expert_mapper: String,
    /// Main-loop iterations whose time the program reports.
    #[serde(default)]
    pub timed_iterations: u32,
    /// Main-loop iterations that run but are not timed (warm-up, pruning).
    #[serde(default)]
    pub untimed_iterations: u32,
    /// The tasks.
    pub tasks: Vec<Task>,
    /// Layout requirements imposed by libraries the task variants call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub library_constraints: Vec<LibraryConstraint>,
    /// Data movement between tasks.
    #[serde(default)]
    pub communication: Communication,
    /// What a successful run prints and how performance is read from it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub performance_output: String,
    /// The command line of the reference runs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_flags: String,
    /// How many Legion ranks the program is launched with per node: a
    /// number, or `"per_gpu"` (one rank per GPU, each with one GPU). The
    /// mapper sees every rank as a node ([`crate::machine::RankView`]).
    /// Default 1.
    #[serde(default, skip_serializing_if = "RanksPerNode::is_one")]
    pub ranks_per_node: RanksPerNode,
    /// Where `ranks_per_node` comes from (run scripts, mapper comments).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ranks_notes: String,
    /// How the problem grows with the machine (the DISTAL matmuls' weak
    /// scaling, [`crate::scaling`]); `None` keeps it at every size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weak_scaling: Option<crate::scaling::WeakScaling>,
    /// Free-form remarks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when app-level figures (iteration counts) are not from a source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

/// How many Legion ranks (processes) a program runs per node.
///
/// JSON: a positive number, or `"per_gpu"`: as many ranks as the node has
/// GPUs, each driving one (`jsrun -a 4 ... -ll:gpu 1` on a 4-GPU node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RanksPerNode {
    /// A fixed number of ranks per node.
    Count(u32),
    /// One rank per GPU of the node (one rank on a node without GPUs).
    PerGpu,
}

impl Default for RanksPerNode {
    fn default() -> Self {
        RanksPerNode::Count(1)
    }
}

impl RanksPerNode {
    /// One rank per node, the default.
    pub fn is_one(&self) -> bool {
        *self == RanksPerNode::Count(1)
    }

    /// Ranks per node on `machine` (at least 1).
    pub fn on(self, machine: &crate::machine::Machine) -> u32 {
        match self {
            RanksPerNode::Count(n) => n.max(1),
            RanksPerNode::PerGpu => machine.procs_per_node(ProcKind::Gpu).max(1),
        }
    }
}

impl Serialize for RanksPerNode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RanksPerNode::Count(n) => s.serialize_u32(*n),
            RanksPerNode::PerGpu => s.serialize_str("per_gpu"),
        }
    }
}

impl<'de> Deserialize<'de> for RanksPerNode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = RanksPerNode;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a positive number of ranks per node or \"per_gpu\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RanksPerNode, E> {
                match u32::try_from(v) {
                    Ok(n) if n > 0 => Ok(RanksPerNode::Count(n)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Unsigned(v), &self)),
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RanksPerNode, E> {
                match u64::try_from(v) {
                    Ok(u) => self.visit_u64(u),
                    Err(_) => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RanksPerNode, E> {
                match v.trim().to_ascii_lowercase().as_str() {
                    "per_gpu" | "per-gpu" => Ok(RanksPerNode::PerGpu),
                    other => match other.parse::<u64>() {
                        Ok(n) => self.visit_u64(n),
                        Err(_) => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                    },
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// How a task is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Launch {
    /// An index launch: one point task per point of `domain`
    /// (`IndexTaskMap` places the points).
    Index,
    /// A single task (`SingleTaskMap` places it).
    Single,
}

/// A task of the application.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// The task's name as Legion knows it (what `Task NAME ...` matches).
    pub name: String,
    /// Index or single launch.
    pub launch: Launch,
    /// Launch-domain extents for the default problem size (index launches;
    /// empty for single launches). `task.ispace` in the DSL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub domain: Vec<u64>,
    /// Processor kinds the task has variants for, in no particular order.
    pub variants: Vec<ProcKind>,
    /// Region arguments (region requirements), by argument index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<RegionArg>,
    /// Work of one point task (one launch for single tasks).
    #[serde(default)]
    pub work: Work,
    /// Launches of this task in one main-loop iteration (each index launch
    /// counts once; a single task launched from every point of a parent
    /// index launch counts once per point).
    #[serde(default)]
    pub per_iteration: u32,
    /// Launches outside the main loop (initialisation and teardown).
    #[serde(default)]
    pub setup_launches: u32,
    /// Whether the `per_iteration` launches fall inside the reported time.
    #[serde(default = "yes")]
    pub timed: bool,
    /// The task that launches this one (None: the top-level task or unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// An inner task: it only launches subtasks and touches no data itself.
    #[serde(default)]
    pub inner: bool,
    /// Set when `domain` stands for one launch of this local domain per
    /// point of the nearest index-launched ancestor, each on that point's
    /// node (the scaled 2-D matmuls' `task_5`: a 2x2 launch per node):
    /// point `p` belongs to the ancestor point `p / node_local`, and
    /// without a mapping function Legion slices `p % node_local` over
    /// that node's processors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_local: Vec<u64>,
    /// Free-form remarks (what the expert mapper does with it, ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when some figure is not from a source; says which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

/// A region argument of a task (one Legion region requirement).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionArg {
    /// Semantic name a mapper's `Region`/`Layout` statement matches.
    pub name: String,
    /// Other names the argument answers to: the names it carries in other
    /// launches of the task (launched once with `rp_private` and once with
    /// `rp_shared`, say), and the parent region's name where the DSL mapper
    /// matches that too (pennant's `rz_all` for `rz_all_p`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// For a task launched several times per iteration with different
    /// regions in this argument (pennant's private and shared launches):
    /// the names the argument answers to on the 2nd, 3rd, ... launch. The
    /// first launch answers to `name` and the aliases no later launch
    /// lists. A mapper statement then decides each launch separately, as
    /// the DSL mapper does (it matches each requirement's own names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launches: Vec<Vec<String>>,
    /// 0-based argument index (what `Region TASK 2 ...` matches).
    pub index: u32,
    /// Access privilege.
    pub privilege: Privilege,
    /// Field names accessed (empty for `none`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// Dimensionality of the region's index space (layout order matters
    /// only from 2 up).
    #[serde(default = "one")]
    pub dims: u32,
    /// Extents of the piece one point task accesses, when rectangular.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shape: Vec<u64>,
    /// Elements in the piece one point task accesses.
    pub elements: u64,
    /// Bytes of the accessed fields over those elements (0 for `none`).
    pub bytes: u64,
    /// The application tags this requirement for a virtual mapping (DISTAL
    /// inner tasks): no instance is made whatever the mapper says.
    #[serde(default, skip_serializing_if = "is_false")]
    pub virtual_by_app: bool,
    /// Free-form remarks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when some figure is not from a source; says which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A region requirement's privilege.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Privilege {
    /// `NO_ACCESS`: named for partitioning or to pass to children only.
    #[serde(alias = "NO_ACCESS")]
    None,
    /// `READ_ONLY`.
    #[serde(alias = "READ_ONLY")]
    Read,
    /// `WRITE_ONLY` / `WRITE_DISCARD`: written without being read.
    #[serde(alias = "WRITE_ONLY", alias = "WRITE_DISCARD")]
    Write,
    /// `READ_WRITE`.
    #[serde(alias = "READ_WRITE")]
    ReadWrite,
    /// `REDUCE`: reduction (the runtime makes a reduction instance).
    #[serde(alias = "REDUCE")]
    Reduce,
}

impl Privilege {
    /// Parses Legion's spelling (`READ_ONLY`, ...) or this crate's
    /// (`read`, ...). Unknown text gives None.
    pub fn parse(s: &str) -> Option<Privilege> {
        match s.trim().to_ascii_uppercase().as_str() {
            "NO_ACCESS" | "NONE" => Some(Privilege::None),
            "READ_ONLY" | "READ" => Some(Privilege::Read),
            "WRITE_ONLY" | "WRITE_DISCARD" | "WRITE" => Some(Privilege::Write),
            "READ_WRITE" => Some(Privilege::ReadWrite),
            "REDUCE" | "REDUCTION" => Some(Privilege::Reduce),
            _ => None,
        }
    }

    /// Whether the task reads existing contents.
    pub fn reads(self) -> bool {
        matches!(self, Privilege::Read | Privilege::ReadWrite)
    }

    /// Whether the task modifies contents.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Privilege::Write | Privilege::ReadWrite | Privilege::Reduce
        )
    }

    /// Whether the requirement needs a physical instance at all.
    pub fn accesses(self) -> bool {
        self != Privilege::None
    }
}

/// Floating-point precision a task computes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// 64-bit (double).
    #[default]
    Fp64,
    /// 32-bit (float).
    Fp32,
}

/// Work of one point task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Work {
    /// Floating-point operations.
    #[serde(default)]
    pub flops: f64,
    /// Bytes moved between the processor and its memories (reads plus
    /// writes of region data).
    #[serde(default)]
    pub bytes: f64,
    /// Precision the flops are in.
    #[serde(default)]
    pub precision: Precision,
    /// Fixed time on top of flops and bytes, microseconds (library
    /// initialisation, I/O, scalar bookkeeping).
    #[serde(default)]
    pub fixed_us: f64,
    /// How the figures were derived.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when the figures are estimates rather than counts from a source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
    /// What a real run measured, where the description was written by
    /// mapwright's Legion mapper (`-mapwright:app`): `fixed_us` is then the
    /// measured mean and `flops`/`bytes` are 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<MeasuredWork>,
}

/// The time one point of a task took on a real run, as Realm measured it
/// for mapwright's mapper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredWork {
    /// Point-task runs measured.
    pub runs: u64,
    /// Mean time of one run, microseconds.
    pub mean_us: f64,
    /// Longest run, microseconds.
    pub max_us: f64,
    /// The processor kinds the runs were on.
    pub on: Vec<ProcKind>,
    /// The host they ran on, as the written machine description names it.
    pub host: String,
}

/// Dimension order of an instance, in the DSL's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DimOrder {
    /// Last dimension fastest (row-major).
    #[serde(rename = "C_order")]
    COrder,
    /// First dimension fastest (column-major).
    #[serde(rename = "F_order")]
    FOrder,
}

/// Field layout of an instance, in the DSL's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FieldLayout {
    /// Struct of arrays: one array per field.
    #[serde(rename = "SOA")]
    Soa,
    /// Array of structs: fields interleaved.
    #[serde(rename = "AOS")]
    Aos,
}

/// A layout requirement some library (or code generator) puts on instances.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryConstraint {
    /// Who imposes it (`cuBLAS`, `Regent`).
    pub library: String,
    /// Tasks it applies to (empty: every task).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<String>,
    /// Only when the task runs on this processor kind (None: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<ProcKind>,
    /// Region argument names it applies to (empty: every argument).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<String>,
    /// Only arguments with at least this many dimensions (order is moot in 1-D).
    #[serde(default = "one")]
    pub min_dims: u32,
    /// Required dimension order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<DimOrder>,
    /// Required field layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_layout: Option<FieldLayout>,
    /// What the program prints when the requirement is violated.
    pub error: String,
    /// Why the requirement exists.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when the constraint is inferred rather than observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

/// How data moves between tasks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Communication {
    /// Short name of the pattern (`halo`, `systolic`, ...).
    #[serde(default)]
    pub pattern: String,
    /// Prose description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Producer-consumer edges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<Flow>,
}

/// Data a task's points produce and another task's points consume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    /// Producing task.
    pub from: String,
    /// Consuming task.
    pub to: String,
    /// Region (semantic name, as in the consumer's arguments).
    pub region: String,
    /// Which points talk to which.
    pub kind: FlowKind,
    /// Bytes one consumer point receives along this edge (with `grid`:
    /// from its one neighbour).
    pub bytes_per_point: u64,
    /// The producer's argument name where it differs from `region` (a
    /// ghost strip written as `pxm_out` and read as `pxm_in`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_region: Option<String>,
    /// Tiles of the partition the flow crosses, per axis (at most 3), the
    /// first axis fastest: launch point `p` is tile `(p % g0, p / g0 % g1,
    /// ...)`, as the programs colour their pieces (`stencil_fast.rg`:
    /// `int1d(iy*nt.x + ix)`). With `offset`, a `halo` or `reduction`
    /// consumer takes `bytes_per_point` from the one producer point at that
    /// offset in the grid (none at the grid's edge). Empty: the neighbours
    /// of a 1-D order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grid: Vec<u32>,
    /// The producer's tile relative to the consumer's, one entry per axis
    /// of `grid`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offset: Vec<i32>,
    /// Free-form remarks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when the figure is an estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

/// Point-to-point structure of a [`Flow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    /// Point i consumes what point i produced (no movement if co-located).
    SamePoint,
    /// Point i consumes a boundary of its neighbours' data.
    Halo,
    /// Point i consumes a whole piece from one other point (a shift/rotation).
    Shift,
    /// One piece is consumed by a row, column or plane of points.
    Broadcast,
    /// Several points' partial results are summed into one owner's piece.
    Reduction,
    /// One point consumes something from every point.
    Gather,
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Why an application description could not be read or is not usable.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The file could not be read.
    #[error("cannot read application description {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The JSON text does not describe an application.
    #[error("application description {origin} is not valid JSON for an application: {source}")]
    Json {
        /// File name, or `<string>`.
        origin: String,
        /// The parser's complaint (with line and column).
        #[source]
        source: serde_json::Error,
    },
    /// Writing JSON failed.
    #[error("cannot write the application description as JSON: {0}")]
    JsonWrite(#[source] serde_json::Error),
    /// The description parses but is inconsistent.
    #[error("invalid application description: {0}")]
    Invalid(String),
}

// ---------------------------------------------------------------------------
// Built-ins
// ---------------------------------------------------------------------------

/// A built-in application: name, description JSON, expert mapper file name
/// and text (the expert files are copied verbatim from the corpus).
struct Builtin {
    name: &'static str,
    json: &'static str,
    expert_file: &'static str,
    expert_text: &'static str,
}

/// The nine benchmarks, in the paper's order. Expert file names are those of
/// `shared/apps/EXPERTS.md`.
const BUILTINS: [Builtin; 9] = [
    Builtin {
        name: "circuit",
        json: include_str!("../apps/circuit.json"),
        expert_file: "legion-circuit.mapper",
        expert_text: include_str!("../apps/experts/legion-circuit.mapper"),
    },
    Builtin {
        name: "stencil",
        json: include_str!("../apps/stencil.json"),
        expert_file: "legion-stencil.mapper",
        expert_text: include_str!("../apps/experts/legion-stencil.mapper"),
    },
    Builtin {
        name: "pennant",
        json: include_str!("../apps/pennant.json"),
        expert_file: "legion-pennant.mapper",
        expert_text: include_str!("../apps/experts/legion-pennant.mapper"),
    },
    Builtin {
        name: "cannon",
        json: include_str!("../apps/cannon.json"),
        expert_file: "taco-cannonMM-cuda.mapper",
        expert_text: include_str!("../apps/experts/taco-cannonMM-cuda.mapper"),
    },
    Builtin {
        name: "summa",
        json: include_str!("../apps/summa.json"),
        expert_file: "taco-summaMM-cuda.mapper",
        expert_text: include_str!("../apps/experts/taco-summaMM-cuda.mapper"),
    },
    Builtin {
        name: "pumma",
        json: include_str!("../apps/pumma.json"),
        expert_file: "taco-pummaMM-cuda.mapper",
        expert_text: include_str!("../apps/experts/taco-pummaMM-cuda.mapper"),
    },
    Builtin {
        name: "johnson",
        json: include_str!("../apps/johnson.json"),
        expert_file: "taco-johnsonMM-cuda.mapper",
        expert_text: include_str!("../apps/experts/taco-johnsonMM-cuda.mapper"),
    },
    Builtin {
        name: "solomonik",
        json: include_str!("../apps/solomonik.json"),
        expert_file: "taco-solomonikMM-cuda.mapper",
        expert_text: include_str!("../apps/experts/taco-solomonikMM-cuda.mapper"),
    },
    Builtin {
        name: "cosma",
        json: include_str!("../apps/cosma.json"),
        expert_file: "taco-cosma-cuda.mapper",
        expert_text: include_str!("../apps/experts/taco-cosma-cuda.mapper"),
    },
];

const BUILTIN_NAMES: [&str; 9] = [
    "circuit",
    "stencil",
    "pennant",
    "cannon",
    "summa",
    "pumma",
    "johnson",
    "solomonik",
    "cosma",
];

fn builtin_entry(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Corpus file name of the expert mapper of built-in application `name`
/// (e.g. `legion-circuit.mapper`); the empty string for an unknown name.
pub fn expert_mapper_file(name: &str) -> &'static str {
    builtin_entry(name).map_or("", |b| b.expert_file)
}

/// Text of the expert mapper of built-in application `name`, exactly as in
/// the corpus; None for an unknown name.
pub fn expert_mapper_text(name: &str) -> Option<&'static str> {
    builtin_entry(name).map(|b| b.expert_text)
}

impl App {
    /// An application as one run showed it (a mapper's own record, a
    /// wrapper log): its tasks, the whole run as one timed iteration, and
    /// nothing a run does not show (sources, expert mapper, library
    /// constraints, flows between tasks: `unseen_flows` says why).
    pub fn observed(
        name: String,
        description: String,
        tasks: Vec<Task>,
        unseen_flows: &str,
        notes: String,
        guess: String,
    ) -> App {
        App {
            name,
            description,
            sources: Vec::new(),
            expert_mapper: String::new(),
            timed_iterations: 1,
            untimed_iterations: 0,
            tasks,
            library_constraints: Vec::new(),
            communication: Communication {
                pattern: "unknown".into(),
                description: unseen_flows.into(),
                flows: Vec::new(),
            },
            performance_output: String::new(),
            run_flags: String::new(),
            ranks_per_node: RanksPerNode::default(),
            ranks_notes: String::new(),
            weak_scaling: None,
            notes,
            guess: Some(guess),
        }
    }

    /// The built-in expert mapper of this application: only where the
    /// description names that expert (a user's own program called
    /// `circuit`, described by `-mapwright:app`, names none and gets none).
    pub fn expert_text(&self) -> Option<&'static str> {
        builtin_entry(&self.name)
            .filter(|b| !self.expert_mapper.is_empty() && b.expert_file == self.expert_mapper)
            .map(|b| b.expert_text)
    }

    /// A built-in application by name (see [`App::builtin_names`]).
    pub fn builtin(name: &str) -> Option<App> {
        // The embedded JSON is checked by tests; should it ever fail to
        // parse, report "no such built-in" rather than panic.
        builtin_entry(name).and_then(|b| Self::from_json_str(b.json).ok())
    }

    /// The embedded JSON text of built-in application `name`.
    pub fn builtin_json(name: &str) -> Option<&'static str> {
        builtin_entry(name).map(|b| b.json)
    }

    /// Names [`App::builtin`] accepts, in the paper's order.
    pub fn builtin_names() -> &'static [&'static str] {
        &BUILTIN_NAMES
    }

    /// Reads and validates a JSON application description.
    pub fn load(path: impl AsRef<Path>) -> Result<App, AppError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| AppError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let app: App = serde_json::from_str(&text).map_err(|source| AppError::Json {
            origin: path.display().to_string(),
            source,
        })?;
        app.validate()?;
        Ok(app)
    }

    /// Parses and validates a JSON application description.
    pub fn from_json_str(text: &str) -> Result<App, AppError> {
        let app: App = serde_json::from_str(text).map_err(|source| AppError::Json {
            origin: "<string>".into(),
            source,
        })?;
        app.validate()?;
        Ok(app)
    }

    /// The description as pretty-printed JSON.
    pub fn to_json_pretty(&self) -> Result<String, AppError> {
        serde_json::to_string_pretty(self).map_err(AppError::JsonWrite)
    }

    /// Checks consistency: unique task names, index launches with a
    /// non-empty domain of positive extents and single launches without
    /// one, at least one variant, unique argument indices, finite
    /// non-negative work, and constraints and flows naming existing tasks.
    pub fn validate(&self) -> Result<(), AppError> {
        let bad = |msg: String| Err(AppError::Invalid(msg));
        if self.name.trim().is_empty() {
            return bad("the application has no name".into());
        }
        if self.tasks.is_empty() {
            return bad(format!("application `{}` has no tasks", self.name));
        }
        let mut names = BTreeSet::new();
        for t in &self.tasks {
            if t.name.is_empty() {
                return bad("a task has an empty name".into());
            }
            if !names.insert(t.name.as_str()) {
                return bad(format!("task `{}` is listed twice", t.name));
            }
            match t.launch {
                Launch::Index if t.domain.is_empty() => {
                    return bad(format!("index task `{}` has no launch domain", t.name))
                }
                Launch::Index if t.domain.contains(&0) => {
                    return bad(format!("index task `{}` has an empty extent", t.name))
                }
                Launch::Single if !t.domain.is_empty() => {
                    return bad(format!("single task `{}` has a launch domain", t.name))
                }
                _ => {}
            }
            if t.variants.is_empty() {
                return bad(format!("task `{}` has no variants", t.name));
            }
            let mut idx = BTreeSet::new();
            for r in &t.regions {
                if !idx.insert(r.index) {
                    return bad(format!(
                        "task `{}` has two region arguments with index {}",
                        t.name, r.index
                    ));
                }
                if r.name.is_empty() {
                    return bad(format!(
                        "task `{}` argument {} has no name",
                        t.name, r.index
                    ));
                }
                if r.launches
                    .iter()
                    .any(|l| l.is_empty() || l.iter().any(String::is_empty))
                {
                    return bad(format!(
                        "task `{}` argument {}: every entry of `launches` names its region",
                        t.name, r.index
                    ));
                }
            }
            let w = &t.work;
            for (what, v) in [
                ("flops", w.flops),
                ("bytes", w.bytes),
                ("fixed_us", w.fixed_us),
            ] {
                if !v.is_finite() || v < 0.0 {
                    return bad(format!("task `{}`: work.{what} = {v}", t.name));
                }
            }
        }
        for c in &self.library_constraints {
            for t in &c.tasks {
                if !names.contains(t.as_str()) {
                    return bad(format!("{} constraint names unknown task `{t}`", c.library));
                }
            }
        }
        for f in &self.communication.flows {
            for t in [&f.from, &f.to] {
                if !names.contains(t.as_str()) {
                    return bad(format!("flow names unknown task `{t}`"));
                }
            }
            if f.grid.is_empty() && f.offset.is_empty() {
                continue;
            }
            let what = format!("flow `{}` -> `{}` on `{}`", f.from, f.to, f.region);
            if f.grid.len() > 3 || f.grid.contains(&0) || f.offset.len() != f.grid.len() {
                return bad(format!(
                    "{what}: `grid` needs 1 to 3 positive extents and `offset` one entry per extent"
                ));
            }
            if !matches!(f.kind, FlowKind::Halo | FlowKind::Reduction) {
                return bad(format!(
                    "{what}: only halo and reduction flows take a `grid`"
                ));
            }
            let tiles: u64 = f.grid.iter().map(|&g| u64::from(g)).product();
            for t in [&f.from, &f.to] {
                let points = self.task(t).map_or(0, Task::points);
                if points != tiles {
                    return bad(format!(
                        "{what}: the grid has {tiles} tiles but `{t}` launches {points} points"
                    ));
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

impl App {
    /// The task called `name`.
    pub fn task(&self, name: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.name == name)
    }

    /// Task names, in description order.
    pub fn task_names(&self) -> Vec<&str> {
        self.tasks.iter().map(|t| t.name.as_str()).collect()
    }

    /// Every semantic region name (names and aliases) some task argument
    /// answers to, sorted.
    pub fn region_names(&self) -> BTreeSet<&str> {
        self.tasks
            .iter()
            .flat_map(|t| t.regions.iter())
            .flat_map(RegionArg::name_and_aliases)
            .collect()
    }

    /// Library constraints that apply to argument `region` of `task` when
    /// the task runs on `kind`.
    pub fn constraints_for(
        &self,
        task: &Task,
        kind: ProcKind,
        region: &RegionArg,
    ) -> Vec<&LibraryConstraint> {
        self.library_constraints
            .iter()
            .filter(|c| c.tasks.is_empty() || c.tasks.contains(&task.name))
            .filter(|c| !matches!(c.variant, Some(v) if v != kind))
            .filter(|c| c.regions.is_empty() || c.regions.iter().any(|n| region.answers_to(n)))
            .filter(|c| region.dims >= c.min_dims)
            .collect()
    }
}

impl Task {
    /// Arguments answering to semantic name `name` (several when a task
    /// takes the same region twice with different fields).
    pub fn regions_named(&self, name: &str) -> Vec<&RegionArg> {
        self.regions.iter().filter(|r| r.answers_to(name)).collect()
    }

    /// The argument with 0-based index `index`.
    pub fn region_at(&self, index: u32) -> Option<&RegionArg> {
        self.regions.iter().find(|r| r.index == index)
    }

    /// Whether the task has a variant for `kind`.
    pub fn has_variant(&self, kind: ProcKind) -> bool {
        self.variants.contains(&kind)
    }

    /// Number of point tasks per launch (1 for a single launch).
    pub fn points(&self) -> u64 {
        match self.launch {
            Launch::Single => 1,
            Launch::Index => self
                .domain
                .iter()
                .fold(1u64, |acc, &e| acc.saturating_mul(e)),
        }
    }
}

impl RegionArg {
    /// Its name, then its aliases.
    pub fn name_and_aliases(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.aliases.iter().map(String::as_str))
    }

    /// Whether a mapper statement naming `name` addresses this argument
    /// (on some launch).
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name
            || self.aliases.iter().any(|a| a == name)
            || self.launches.iter().flatten().any(|a| a == name)
    }

    /// The names launch `k` (0-based) answers to; empty past the last.
    pub fn launch_names(&self, k: usize) -> Vec<&str> {
        if k == 0 {
            std::iter::once(self.name.as_str())
                .chain(
                    self.aliases
                        .iter()
                        .filter(|a| !self.launches.iter().any(|l| l.contains(a)))
                        .map(String::as_str),
                )
                .collect()
        } else {
            self.launches
                .get(k - 1)
                .map(|l| l.iter().map(String::as_str).collect())
                .unwrap_or_default()
        }
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    /// The statement keywords whose second word is a task name (or a list
    /// of them), and whether the third word is a region name.
    const TASK_STATEMENTS: [(&str, bool); 6] = [
        ("Task", false),
        ("Region", true),
        ("Layout", true),
        ("InstanceLimit", false),
        ("CollectMemory", true),
        ("IndexTaskMap", false),
    ];

    /// Task and region names an expert mapper mentions, found by a small
    /// scan of its top-level statements (comments stripped). Wildcards,
    /// processor kinds and argument indices are skipped.
    fn names_used(text: &str) -> (Vec<String>, Vec<String>) {
        let mut tasks = Vec::new();
        let mut regions = Vec::new();
        let skip = ["*", "CPU", "GPU", "OMP", "IO", "PY", "PROC"];
        let code: String = text
            .lines()
            .map(|l| {
                l.split('#')
                    .next()
                    .unwrap_or("")
                    .split("//")
                    .next()
                    .unwrap_or("")
            })
            .collect::<Vec<_>>()
            .join("\n");
        for stmt in code.split(';') {
            // A statement after a `def` body starts with that body's `}`.
            let stmt = stmt.trim_start_matches(|c: char| c == '}' || c.is_whitespace());
            let mut words = stmt.split_whitespace();
            let Some(kw) = words.next() else { continue };
            let rest: Vec<&str> = words.collect();
            let kw_is_task = TASK_STATEMENTS.iter().find(|(k, _)| *k == kw);
            let single = kw == "SingleTaskMap";
            if kw_is_task.is_none() && !single {
                continue;
            }
            let (task_field, region_field) = if kw == "Task" || single || kw == "IndexTaskMap" {
                // `Task a,b GPU` / `IndexTaskMap a, b f`: every word before the last.
                let joined = rest[..rest.len().saturating_sub(1)].join(" ");
                (joined, None)
            } else {
                (
                    rest.first().copied().unwrap_or("").to_string(),
                    if kw_is_task.is_some_and(|(_, r)| *r) {
                        rest.get(1).copied()
                    } else {
                        None
                    },
                )
            };
            for t in task_field
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
            {
                if !skip.contains(&t) {
                    tasks.push(t.to_string());
                }
            }
            if let Some(r) = region_field {
                let r = r.trim();
                if !skip.contains(&r) && !r.chars().all(|c| c.is_ascii_digit()) {
                    regions.push(r.to_string());
                }
            }
        }
        (tasks, regions)
    }

    #[test]
    fn every_builtin_parses_and_validates() {
        assert_eq!(App::builtin_names().len(), 9);
        for name in App::builtin_names() {
            let json = App::builtin_json(name).unwrap();
            let app = App::from_json_str(json).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(app.name, *name);
            assert_eq!(app.expert_mapper, expert_mapper_file(name));
            assert!(app.timed_iterations > 0, "{name}");
            assert!(App::builtin(name).is_some());
        }
        assert!(App::builtin("nbody").is_none());
        assert_eq!(expert_mapper_file("nbody"), "");
        assert!(expert_mapper_text("nbody").is_none());
    }

    #[test]
    #[cfg_attr(
        not(shared_corpus),
        ignore = "needs the shared corpus at ../shared/corpus beside the checkout"
    )]
    fn expert_files_are_verbatim_corpus_copies() {
        let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/public");
        for name in App::builtin_names() {
            let file = expert_mapper_file(name);
            assert!(file.ends_with(".mapper"));
            let shipped = expert_mapper_text(name).unwrap();
            let orig = std::fs::read_to_string(Path::new(corpus).join(file))
                .unwrap_or_else(|e| panic!("{corpus}/{file}: {e}"));
            assert_eq!(shipped, orig, "{file} differs from the corpus");
        }
    }

    #[test]
    fn expert_mappers_name_only_existing_tasks_and_regions() {
        for name in App::builtin_names() {
            let app = App::builtin(name).unwrap();
            let (tasks, regions) = names_used(expert_mapper_text(name).unwrap());
            let known = app.region_names();
            for t in &tasks {
                assert!(app.task(t).is_some(), "{name}: expert names task `{t}`");
            }
            for r in &regions {
                assert!(
                    known.contains(r.as_str()),
                    "{name}: expert names region `{r}`"
                );
            }
        }
        // The scan itself sees the names it should.
        let (t, r) = names_used(expert_mapper_text("circuit").unwrap());
        assert!(t.iter().any(|x| x == "calculate_new_currents"));
        assert!(t.iter().any(|x| x == "print_summary"));
        assert!(r.iter().any(|x| x == "rp_ghost"));
        let (t, _) = names_used(expert_mapper_text("cannon").unwrap());
        for want in ["task_4", "task_6", "task_7", "taco_fill", "init_cublas"] {
            assert!(t.iter().any(|x| x == want), "{want}");
        }
    }

    #[test]
    fn variants_cover_the_tasks_experts_send_to_gpus() {
        let circuit = App::builtin("circuit").unwrap();
        for t in [
            "calculate_new_currents",
            "distribute_charge",
            "update_voltages",
        ] {
            let task = circuit.task(t).unwrap();
            assert!(task.has_variant(ProcKind::Gpu));
            assert_eq!(task.launch, Launch::Index);
            assert_eq!(task.points(), 4);
        }
        assert!(!circuit
            .task("init_piece")
            .unwrap()
            .has_variant(ProcKind::Gpu));
        let cannon = App::builtin("cannon").unwrap();
        assert_eq!(cannon.task("task_7").unwrap().variants, vec![ProcKind::Omp]);
        assert_eq!(cannon.task("task_4").unwrap().launch, Launch::Single);
        assert_eq!(cannon.task("task_4").unwrap().points(), 1);
    }

    #[test]
    fn cublas_tasks_need_c_order() {
        for name in ["cannon", "summa", "pumma", "johnson", "solomonik", "cosma"] {
            let app = App::builtin(name).unwrap();
            let t = app.task("task_4").unwrap();
            for r in &t.regions {
                let cs = app.constraints_for(t, ProcKind::Gpu, r);
                assert!(
                    cs.iter()
                        .any(|c| c.library == "cuBLAS" && c.order == Some(DimOrder::COrder)),
                    "{name} task_4 {}",
                    r.name
                );
                assert!(app.constraints_for(t, ProcKind::Cpu, r).is_empty());
            }
            // Every GEMM point does 2*m*n*k flops.
            assert!(t.work.flops >= 2e12, "{name}");
        }
        let stencil = App::builtin("stencil").unwrap();
        let t = stencil.task("stencil").unwrap();
        let private = &t.regions_named("private")[0];
        let cs = stencil.constraints_for(t, ProcKind::Gpu, private);
        assert_eq!(cs[0].order, Some(DimOrder::FOrder));
        let times = &t.regions_named("p_times")[0];
        assert!(stencil.constraints_for(t, ProcKind::Gpu, times).is_empty());
    }

    #[test]
    fn region_arguments_are_numbered_and_sized() {
        for name in App::builtin_names() {
            let app = App::builtin(name).unwrap();
            for t in &app.tasks {
                for (i, r) in t.regions.iter().enumerate() {
                    assert_eq!(r.index as usize, i, "{name}/{}", t.name);
                    if r.privilege.accesses() {
                        assert!(r.bytes > 0, "{name}/{}/{}", t.name, r.name);
                        assert!(!r.fields.is_empty(), "{name}/{}/{}", t.name, r.name);
                    }
                    if !r.shape.is_empty() {
                        assert_eq!(r.shape.len() as u32, r.dims);
                        assert_eq!(r.shape.iter().product::<u64>(), r.elements);
                    }
                }
            }
        }
    }

    #[test]
    fn privileges_parse_both_spellings() {
        assert_eq!(Privilege::parse("READ_ONLY"), Some(Privilege::Read));
        assert_eq!(Privilege::parse("write_discard"), Some(Privilege::Write));
        assert_eq!(Privilege::parse("REDUCE"), Some(Privilege::Reduce));
        assert_eq!(Privilege::parse("bogus"), None);
        let p: Privilege = serde_json::from_str("\"READ_WRITE\"").unwrap();
        assert_eq!(p, Privilege::ReadWrite);
        assert!(Privilege::ReadWrite.reads() && Privilege::ReadWrite.writes());
        assert!(!Privilege::None.accesses());
    }

    #[test]
    fn invalid_descriptions_are_errors_not_panics() {
        let mut app = App::builtin("circuit").unwrap();
        app.tasks[0].launch = Launch::Index;
        assert!(matches!(app.validate(), Err(AppError::Invalid(_))));
        let mut app = App::builtin("circuit").unwrap();
        let dup = app.tasks[1].clone();
        app.tasks.push(dup);
        assert!(app.validate().is_err());
        let mut app = App::builtin("cannon").unwrap();
        app.tasks[1].work.flops = f64::INFINITY;
        assert!(app.validate().is_err());
        let mut app = App::builtin("stencil").unwrap();
        app.communication.flows[0].to = "nope".into();
        assert!(app.validate().is_err());
        assert!(matches!(
            App::from_json_str("[]"),
            Err(AppError::Json { .. })
        ));
        assert!(matches!(
            App::load("/nonexistent/app.json"),
            Err(AppError::Io { .. })
        ));
    }

    #[test]
    fn ranks_per_node_reads_a_number_or_per_gpu() {
        let base = App::builtin_json("stencil").unwrap();
        let with = |v: &str| base.replacen("{", &format!("{{\n \"ranks_per_node\": {v},"), 1);
        let m = crate::machine::Machine::preset("p100x4").unwrap();
        let app = App::from_json_str(&with("\"per_gpu\"")).unwrap();
        assert_eq!(app.ranks_per_node, RanksPerNode::PerGpu);
        assert_eq!(app.ranks_per_node.on(&m), 4);
        let app = App::from_json_str(&with("2")).unwrap();
        assert_eq!(app.ranks_per_node, RanksPerNode::Count(2));
        assert_eq!(app.ranks_per_node.on(&m), 2);
        for bad in ["0", "-1", "\"per_cpu\"", "1.5", "true"] {
            assert!(App::from_json_str(&with(bad)).is_err(), "{bad}");
        }
        // Absent: one rank, and not written back out.
        let app = App::from_json_str(base).unwrap();
        assert_eq!(app.ranks_per_node, RanksPerNode::Count(1));
        assert!(!app.to_json_pretty().unwrap().contains("ranks_per_node"));
        let johnson = App::builtin("johnson").unwrap();
        let json = johnson.to_json_pretty().unwrap();
        assert!(json.contains("\"ranks_per_node\": \"per_gpu\""));
        // A machine without GPUs runs one rank per node.
        let mut cpu_only = m.clone();
        cpu_only.node.processors.retain(|p| p.kind != ProcKind::Gpu);
        assert_eq!(RanksPerNode::PerGpu.on(&cpu_only), 1);
    }

    #[test]
    fn json_round_trip_and_load() {
        let dir = std::env::temp_dir().join(format!("mapwright-app-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in App::builtin_names() {
            let app = App::builtin(name).unwrap();
            let json = app.to_json_pretty().unwrap();
            assert_eq!(App::from_json_str(&json).unwrap(), app);
            let p = dir.join(format!("{name}.json"));
            std::fs::write(&p, &json).unwrap();
            assert_eq!(App::load(&p).unwrap(), app);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn builtin_summary_snapshot() {
        // What a user sees of each built-in at a glance; changes to the data
        // files show up here.
        let mut out = String::new();
        for name in App::builtin_names() {
            let app = App::builtin(name).unwrap();
            let idx = app
                .tasks
                .iter()
                .filter(|t| t.launch == Launch::Index)
                .count();
            let gpu = app
                .tasks
                .iter()
                .filter(|t| t.has_variant(ProcKind::Gpu))
                .count();
            out.push_str(&format!(
                "{name}: {} tasks ({idx} index, {gpu} with GPU variants), {} region names, \
                 {} constraints, pattern {}, expert {}\n",
                app.tasks.len(),
                app.region_names().len(),
                app.library_constraints.len(),
                app.communication.pattern,
                app.expert_mapper
            ));
        }
        insta::assert_snapshot!(out, @r"
        circuit: 12 tasks (6 index, 3 with GPU variants), 12 region names, 0 constraints, pattern ghost-exchange, expert legion-circuit.mapper
        stencil: 12 tasks (4 index, 2 with GPU variants), 18 region names, 1 constraints, pattern halo, expert legion-stencil.mapper
        pennant: 43 tasks (29 index, 27 with GPU variants), 9 region names, 0 constraints, pattern unstructured-halo, expert legion-pennant.mapper
        cannon: 11 tasks (8 index, 8 with GPU variants), 3 region names, 1 constraints, pattern systolic, expert taco-cannonMM-cuda.mapper
        summa: 11 tasks (8 index, 8 with GPU variants), 3 region names, 1 constraints, pattern broadcast, expert taco-summaMM-cuda.mapper
        pumma: 11 tasks (8 index, 8 with GPU variants), 3 region names, 1 constraints, pattern skewed-broadcast, expert taco-pummaMM-cuda.mapper
        johnson: 6 tasks (5 index, 5 with GPU variants), 3 region names, 1 constraints, pattern 3d-broadcast-reduce, expert taco-johnsonMM-cuda.mapper
        solomonik: 7 tasks (5 index, 6 with GPU variants), 3 region names, 1 constraints, pattern 2.5d, expert taco-solomonikMM-cuda.mapper
        cosma: 6 tasks (5 index, 5 with GPU variants), 3 region names, 1 constraints, pattern 3d-grid, expert taco-cosma-cuda.mapper
        ");
    }
}
