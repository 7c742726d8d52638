//! Machine descriptions: what a mapper is mapping onto.
//!
//! A [`Machine`] is a set of identical nodes (Legion's DSL mapper models a
//! machine as `nodes x processors-per-node`, so nodes are described once).
//! Each node lists its processors by kind ([`ProcGroup`]), its memories by
//! kind ([`MemGroup`]), which processor kinds can reach which memory kinds
//! and how well ([`Affinity`], carrying the bandwidth class Legion itself
//! reports in its machine query, e.g. 200 for a GPU's own framebuffer), and
//! the links that copies between memories travel over ([`Link`]).
//!
//! Descriptions are plain serde data, read from JSON or TOML
//! ([`Machine::load`]), and a few named presets are built in
//! ([`Machine::preset`]): the ASI paper's single node with four P100s, a
//! single H200 node, and 2/4/16-node clusters of four V100-class GPUs per
//! node modelled on the IBM Power9 cluster the wrapper logs in
//! `shared/apps/wrapper-logs/` come from. Every figure in a preset cites its
//! source (a data sheet, a run script's flag, or a log header); figures that
//! no source gives are marked as guesses, both in comments and in the
//! description's `guess` fields. The presets live in `machine/presets.rs`;
//! this host's CPU and memory as `/proc` reports them in `machine/host.rs`
//! (the CUDA and Legion backends both start from it).

use mapwright_grammar::ast;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub mod host;
mod presets;

// ---------------------------------------------------------------------------
// Kinds
// ---------------------------------------------------------------------------

/// A processor kind. Serialised with the DSL's spelling (`CPU`, `GPU`, ...);
/// Legion's names (`LOC_PROC`, `TOC_PROC`, ...) are accepted when reading.
///
/// This is the runtime's one processor-kind enum: machine descriptions,
/// applications, decisions, the evaluator (`mspace` re-exports it) and the
/// backends all use it. It is separate from the DSL's keyword set,
/// [`mapwright_grammar::ast::ProcKind`], because the machine has kinds the
/// DSL cannot name (`UTIL`) and the grammar crate knows nothing of machines.
/// Convert with `ProcKind::from(ast_kind)` and [`ProcKind::dsl_kind`].
/// (`cuda::plan::Proc` is not a kind but one processor of the CUDA run.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ProcKind {
    /// Latency-optimised CPU core (Legion `LOC_PROC`).
    #[serde(rename = "CPU", alias = "LOC_PROC", alias = "cpu")]
    Cpu,
    /// Throughput-optimised processor, a GPU (Legion `TOC_PROC`).
    #[serde(rename = "GPU", alias = "TOC_PROC", alias = "gpu")]
    Gpu,
    /// OpenMP processor: one Legion processor driving several threads (`OMP_PROC`).
    #[serde(rename = "OMP", alias = "OMP_PROC", alias = "omp")]
    Omp,
    /// I/O processor (`IO_PROC`).
    #[serde(rename = "IO", alias = "IO_PROC", alias = "io")]
    Io,
    /// Python processor (`PY_PROC`).
    #[serde(rename = "PY", alias = "PY_PROC", alias = "py")]
    Py,
    /// Utility processor running the Legion runtime itself (`UTIL_PROC`).
    #[serde(rename = "UTIL", alias = "UTIL_PROC", alias = "util")]
    Util,
    /// Processor group / set (`PROC_GROUP`, `PROC_SET`; the DSL keyword `PROC`).
    #[serde(
        rename = "PROC",
        alias = "PROC_SET",
        alias = "PROC_GROUP",
        alias = "proc"
    )]
    ProcSet,
}

impl ProcKind {
    /// Every kind, in a stable order.
    pub const ALL: [ProcKind; 7] = [
        ProcKind::Cpu,
        ProcKind::Gpu,
        ProcKind::Omp,
        ProcKind::Io,
        ProcKind::Py,
        ProcKind::Util,
        ProcKind::ProcSet,
    ];

    /// The DSL spelling (`CPU`, `GPU`, `OMP`, `IO`, `PY`, `UTIL`, `PROC`).
    pub fn dsl_name(self) -> &'static str {
        match self {
            ProcKind::Cpu => "CPU",
            ProcKind::Gpu => "GPU",
            ProcKind::Omp => "OMP",
            ProcKind::Io => "IO",
            ProcKind::Py => "PY",
            ProcKind::Util => "UTIL",
            ProcKind::ProcSet => "PROC",
        }
    }

    /// The DSL keyword for this kind (`UTIL` has none).
    pub fn dsl_kind(self) -> Option<ast::ProcKind> {
        match self {
            ProcKind::Cpu => Some(ast::ProcKind::CPU),
            ProcKind::Gpu => Some(ast::ProcKind::GPU),
            ProcKind::Io => Some(ast::ProcKind::IO),
            ProcKind::Py => Some(ast::ProcKind::PY),
            ProcKind::ProcSet => Some(ast::ProcKind::PROC),
            ProcKind::Omp => Some(ast::ProcKind::OMP),
            ProcKind::Util => None,
        }
    }

    /// The name Legion prints (`LOC_PROC`, `TOC_PROC`, ...).
    pub fn legion_name(self) -> &'static str {
        match self {
            ProcKind::Cpu => "LOC_PROC",
            ProcKind::Gpu => "TOC_PROC",
            ProcKind::Omp => "OMP_PROC",
            ProcKind::Io => "IO_PROC",
            ProcKind::Py => "PY_PROC",
            ProcKind::Util => "UTIL_PROC",
            ProcKind::ProcSet => "PROC_SET",
        }
    }
}

/// The machine's kind for a DSL processor keyword.
impl From<ast::ProcKind> for ProcKind {
    fn from(k: ast::ProcKind) -> ProcKind {
        match k {
            ast::ProcKind::CPU => ProcKind::Cpu,
            ast::ProcKind::GPU => ProcKind::Gpu,
            ast::ProcKind::IO => ProcKind::Io,
            ast::ProcKind::PY => ProcKind::Py,
            ast::ProcKind::PROC => ProcKind::ProcSet,
            ast::ProcKind::OMP => ProcKind::Omp,
        }
    }
}

impl fmt::Display for ProcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.dsl_name())
    }
}

impl FromStr for ProcKind {
    type Err = MachineError;

    /// Accepts the DSL spelling and Legion's, case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let up = s.trim().to_ascii_uppercase();
        let kind = match up.as_str() {
            "CPU" | "LOC_PROC" => ProcKind::Cpu,
            "GPU" | "TOC_PROC" => ProcKind::Gpu,
            "OMP" | "OMP_PROC" => ProcKind::Omp,
            "IO" | "IO_PROC" => ProcKind::Io,
            "PY" | "PY_PROC" => ProcKind::Py,
            "UTIL" | "UTIL_PROC" => ProcKind::Util,
            "PROC" | "PROC_SET" | "PROC_GROUP" => ProcKind::ProcSet,
            _ => return Err(MachineError::UnknownKind(s.to_string())),
        };
        Ok(kind)
    }
}

/// A memory kind. Serialised with the DSL's spelling where the DSL has one
/// (`SYSMEM`, `FBMEM`, `ZCMEM`, `SOCKMEM`, `RDMEM`) and with Legion's name
/// otherwise; Legion's names are accepted for all when reading.
///
/// The DSL's `VIRTUAL` is deliberately not a kind here: it means "make no
/// instance", never a memory a machine has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MemKind {
    /// Host DRAM (`SYSTEM_MEM`).
    #[serde(rename = "SYSMEM", alias = "SYSTEM_MEM", alias = "sysmem")]
    Sysmem,
    /// A GPU's framebuffer (`GPU_FB_MEM`).
    #[serde(rename = "FBMEM", alias = "GPU_FB_MEM", alias = "fbmem")]
    Fbmem,
    /// Pinned host memory mapped into every GPU's address space (`Z_COPY_MEM`).
    #[serde(rename = "ZCMEM", alias = "Z_COPY_MEM", alias = "zcmem")]
    Zcmem,
    /// Host DRAM of one NUMA domain / socket (`SOCKET_MEM`).
    #[serde(rename = "SOCKMEM", alias = "SOCKET_MEM", alias = "sockmem")]
    Sockmem,
    /// Host memory registered with the network for RDMA (`REGDMA_MEM`).
    #[serde(rename = "RDMEM", alias = "REGDMA_MEM", alias = "rdmem")]
    Rdmem,
    /// Framebuffer memory Legion allocates dynamically (`GPU_DYNAMIC_MEM`).
    #[serde(rename = "GPU_DYNAMIC_MEM")]
    GpuDynamic,
    /// CUDA managed memory (`GPU_MANAGED_MEM`).
    #[serde(rename = "GPU_MANAGED_MEM")]
    GpuManaged,
    /// Disk-backed memory (`DISK_MEM`).
    #[serde(rename = "DISK_MEM")]
    Disk,
    /// HDF5-backed memory (`HDF_MEM`).
    #[serde(rename = "HDF_MEM")]
    Hdf,
    /// File-backed memory (`FILE_MEM`).
    #[serde(rename = "FILE_MEM")]
    File,
    /// GASNet global memory (`GLOBAL_MEM`).
    #[serde(rename = "GLOBAL_MEM")]
    Global,
    /// Last-level cache exposed as a memory (`LEVEL3_CACHE`).
    #[serde(rename = "LEVEL3_CACHE")]
    L3Cache,
    /// `LEVEL2_CACHE`.
    #[serde(rename = "LEVEL2_CACHE")]
    L2Cache,
    /// `LEVEL1_CACHE`.
    #[serde(rename = "LEVEL1_CACHE")]
    L1Cache,
}

impl MemKind {
    /// Every kind, in a stable order.
    pub const ALL: [MemKind; 14] = [
        MemKind::Sysmem,
        MemKind::Fbmem,
        MemKind::Zcmem,
        MemKind::Sockmem,
        MemKind::Rdmem,
        MemKind::GpuDynamic,
        MemKind::GpuManaged,
        MemKind::Disk,
        MemKind::Hdf,
        MemKind::File,
        MemKind::Global,
        MemKind::L3Cache,
        MemKind::L2Cache,
        MemKind::L1Cache,
    ];

    /// The DSL keyword for this kind, if the DSL can name it.
    pub fn dsl_name(self) -> Option<&'static str> {
        match self {
            MemKind::Sysmem => Some("SYSMEM"),
            MemKind::Fbmem => Some("FBMEM"),
            MemKind::Zcmem => Some("ZCMEM"),
            MemKind::Sockmem => Some("SOCKMEM"),
            MemKind::Rdmem => Some("RDMEM"),
            _ => None,
        }
    }

    /// The name Legion prints (`SYSTEM_MEM`, `GPU_FB_MEM`, ...).
    pub fn legion_name(self) -> &'static str {
        match self {
            MemKind::Sysmem => "SYSTEM_MEM",
            MemKind::Fbmem => "GPU_FB_MEM",
            MemKind::Zcmem => "Z_COPY_MEM",
            MemKind::Sockmem => "SOCKET_MEM",
            MemKind::Rdmem => "REGDMA_MEM",
            MemKind::GpuDynamic => "GPU_DYNAMIC_MEM",
            MemKind::GpuManaged => "GPU_MANAGED_MEM",
            MemKind::Disk => "DISK_MEM",
            MemKind::Hdf => "HDF_MEM",
            MemKind::File => "FILE_MEM",
            MemKind::Global => "GLOBAL_MEM",
            MemKind::L3Cache => "LEVEL3_CACHE",
            MemKind::L2Cache => "LEVEL2_CACHE",
            MemKind::L1Cache => "LEVEL1_CACHE",
        }
    }
}

impl fmt::Display for MemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.dsl_name().unwrap_or_else(|| self.legion_name()))
    }
}

impl FromStr for MemKind {
    type Err = MachineError;

    /// Accepts the DSL spelling and Legion's, case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let up = s.trim().to_ascii_uppercase();
        let kind = match up.as_str() {
            "SYSMEM" | "SYSTEM_MEM" => MemKind::Sysmem,
            "FBMEM" | "GPU_FB_MEM" => MemKind::Fbmem,
            "ZCMEM" | "Z_COPY_MEM" => MemKind::Zcmem,
            "SOCKMEM" | "SOCKET_MEM" => MemKind::Sockmem,
            "RDMEM" | "REGDMA_MEM" => MemKind::Rdmem,
            "GPU_DYNAMIC_MEM" => MemKind::GpuDynamic,
            "GPU_MANAGED_MEM" => MemKind::GpuManaged,
            "DISK_MEM" => MemKind::Disk,
            "HDF_MEM" => MemKind::Hdf,
            "FILE_MEM" => MemKind::File,
            "GLOBAL_MEM" => MemKind::Global,
            "LEVEL3_CACHE" => MemKind::L3Cache,
            "LEVEL2_CACHE" => MemKind::L2Cache,
            "LEVEL1_CACHE" => MemKind::L1Cache,
            _ => return Err(MachineError::UnknownKind(s.to_string())),
        };
        Ok(kind)
    }
}

/// Which memories of a kind an [`Affinity`] entry is about, relative to the
/// processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The processor's own memory of that kind: a GPU's framebuffer, a CPU's
    /// socket memory. Memory `i` is processor `j`'s own when
    /// `i == j * memories / processors` (see [`Machine::own_memory_index`]).
    Own,
    /// Another processor's memory of that kind on the same node (a peer GPU's
    /// framebuffer, the other socket's memory).
    Peer,
    /// A memory shared by all processors of the node (system memory, zero-copy).
    Shared,
}

/// The physical kind of a [`Link`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// NVIDIA NVLink between GPUs, or between a GPU and a Power9 CPU.
    Nvlink,
    /// PCI Express between a GPU and the host.
    Pcie,
    /// Socket-to-socket interconnect (Intel QPI/UPI, IBM X-Bus).
    Smp,
    /// Copies within host DRAM (memcpy between two host memories).
    Dram,
    /// Inter-node network (InfiniBand and the like).
    Network,
}

// ---------------------------------------------------------------------------
// Description types
// ---------------------------------------------------------------------------

/// A machine: `nodes` identical nodes plus the links between memories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Short name (the preset name for presets).
    pub name: String,
    /// One-line human description.
    #[serde(default)]
    pub description: String,
    /// Number of nodes (Legion address spaces). At least 1.
    pub nodes: u32,
    /// Free-form remarks: where figures come from, what was assumed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The description shared by every node.
    pub node: Node,
    /// Links that copies between memories use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
}

/// What one node holds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Node {
    /// Processors by kind; at most one group per kind.
    #[serde(default)]
    pub processors: Vec<ProcGroup>,
    /// Memories by kind; at most one group per kind.
    #[serde(default)]
    pub memories: Vec<MemGroup>,
    /// Which processor kinds can access which memory kinds, and how well.
    #[serde(default)]
    pub affinities: Vec<Affinity>,
}

fn one() -> u32 {
    1
}

/// The processors of one kind on a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcGroup {
    /// The kind.
    pub kind: ProcKind,
    /// Legion processors of this kind per node (what `Machine(KIND).size[1]` is).
    pub count: u32,
    /// Hardware cores or threads each processor drives (an OMP processor
    /// drives several; a CPU or GPU processor counts as 1).
    #[serde(default = "one")]
    pub cores: u32,
    /// Peak double-precision rate of one processor, GFLOP/s.
    pub gflops_fp64: f64,
    /// Peak single-precision rate of one processor, GFLOP/s.
    pub gflops_fp32: f64,
    /// Fixed cost of starting one task on this processor, microseconds
    /// (a kernel launch for a GPU).
    pub launch_overhead_us: f64,
    /// Hardware model, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// Where the figures come from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when some figure is not from a source; says which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

/// The memories of one kind on a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemGroup {
    /// The kind.
    pub kind: MemKind,
    /// Memories of this kind per node (one framebuffer per GPU, ...).
    pub count: u32,
    /// Capacity of one memory as Legion is configured to use it, bytes.
    pub capacity_bytes: u64,
    /// Peak bandwidth of one memory, GB/s (10^9 bytes per second).
    pub bandwidth_gbps: f64,
    /// Hardware model, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// Where the figures come from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when some figure is not from a source; says which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

/// "Processors of kind `proc` can access memories of kind `mem` (within
/// `scope`)", with Legion's bandwidth class and physical figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Affinity {
    /// Processor kind.
    pub proc: ProcKind,
    /// Memory kind.
    pub mem: MemKind,
    /// Which memories of that kind (own, a peer's, or the node's shared one).
    pub scope: Scope,
    /// The bandwidth class Legion reports for this pair in its machine query
    /// (`can see MEM(bw=N)` in wrapper logs): own FB 200, peer FB 10,
    /// zero-copy from a GPU 20, system memory from a CPU 100, zero-copy from
    /// a CPU 40, registered memory from a CPU 80. Relative, not GB/s.
    pub legion_bandwidth: u32,
    /// Sustained bandwidth one processor of this kind gets accessing such a
    /// memory directly, GB/s.
    pub bandwidth_gbps: f64,
    /// Access latency, microseconds.
    pub latency_us: f64,
    /// Where the figures come from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when some figure is not from a source; says which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

/// A path copies between two memory kinds travel over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// Physical kind.
    pub kind: LinkKind,
    /// One end's memory kind (links are symmetric).
    pub from: MemKind,
    /// The other end's memory kind.
    pub to: MemKind,
    /// True when the link joins different nodes.
    #[serde(default)]
    pub inter_node: bool,
    /// Sustained bandwidth per direction, GB/s.
    pub bandwidth_gbps: f64,
    /// Latency of one transfer (including DMA setup), microseconds.
    pub latency_us: f64,
    /// Where the figures come from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Set when some figure is not from a source; says which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Why a machine description could not be read or is not usable.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// The file could not be read.
    #[error("cannot read machine description {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file name does not say which format it is in.
    #[error("machine description {path}: unknown format (expected a .json or .toml file)")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// The JSON text does not describe a machine.
    #[error("machine description {origin} is not valid JSON for a machine: {source}")]
    Json {
        /// File name, or `<string>`.
        origin: String,
        /// The parser's complaint (with line and column).
        #[source]
        source: serde_json::Error,
    },
    /// The TOML text does not describe a machine.
    #[error("machine description {origin} is not valid TOML for a machine: {source}")]
    Toml {
        /// File name, or `<string>`.
        origin: String,
        /// The parser's complaint (with line and column).
        #[source]
        source: toml::de::Error,
    },
    /// Writing TOML failed.
    #[error("cannot write the machine description as TOML: {0}")]
    TomlWrite(#[from] toml::ser::Error),
    /// Writing JSON failed.
    #[error("cannot write the machine description as JSON: {0}")]
    JsonWrite(#[source] serde_json::Error),
    /// A kind name that is neither a DSL nor a Legion name.
    #[error("unknown processor or memory kind `{0}`")]
    UnknownKind(String),
    /// The description parses but is inconsistent.
    #[error("invalid machine description: {0}")]
    Invalid(String),
}

// ---------------------------------------------------------------------------
// Reading, writing, checking
// ---------------------------------------------------------------------------

impl Machine {
    /// Reads a machine description; the format follows the extension
    /// (`.json` or `.toml`, any case). The result is validated.
    pub fn load(path: impl AsRef<Path>) -> Result<Machine, MachineError> {
        let path = path.as_ref();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path).map_err(|source| MachineError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let origin = path.display().to_string();
        let machine: Machine = match ext.as_str() {
            "json" => serde_json::from_str(&text)
                .map_err(|source| MachineError::Json { origin, source })?,
            "toml" => {
                toml::from_str(&text).map_err(|source| MachineError::Toml { origin, source })?
            }
            _ => {
                return Err(MachineError::UnknownFormat {
                    path: path.to_path_buf(),
                })
            }
        };
        machine.validate()?;
        Ok(machine)
    }

    /// Parses and validates a JSON machine description.
    pub fn from_json_str(text: &str) -> Result<Machine, MachineError> {
        let machine: Machine = serde_json::from_str(text).map_err(|source| MachineError::Json {
            origin: "<string>".into(),
            source,
        })?;
        machine.validate()?;
        Ok(machine)
    }

    /// Parses and validates a TOML machine description.
    pub fn from_toml_str(text: &str) -> Result<Machine, MachineError> {
        let machine: Machine = toml::from_str(text).map_err(|source| MachineError::Toml {
            origin: "<string>".into(),
            source,
        })?;
        machine.validate()?;
        Ok(machine)
    }

    /// The description as pretty-printed JSON.
    pub fn to_json_pretty(&self) -> Result<String, MachineError> {
        serde_json::to_string_pretty(self).map_err(MachineError::JsonWrite)
    }

    /// The description as TOML.
    pub fn to_toml(&self) -> Result<String, MachineError> {
        Ok(toml::to_string(self)?)
    }

    /// Checks that the description is usable: at least one node and one
    /// processor, one group per kind, positive counts and finite figures,
    /// and affinities and links that name kinds the node has.
    pub fn validate(&self) -> Result<(), MachineError> {
        let bad = |msg: String| Err(MachineError::Invalid(msg));
        if self.nodes == 0 {
            return bad(format!("machine `{}` has 0 nodes", self.name));
        }
        if self.node.processors.is_empty() {
            return bad(format!("machine `{}` has no processors", self.name));
        }
        for (i, p) in self.node.processors.iter().enumerate() {
            if self.node.processors[..i].iter().any(|q| q.kind == p.kind) {
                return bad(format!("processor kind {} is listed twice", p.kind));
            }
            if p.count == 0 {
                return bad(format!("processor kind {} has count 0", p.kind));
            }
            for (what, v) in [
                ("gflops_fp64", p.gflops_fp64),
                ("gflops_fp32", p.gflops_fp32),
                ("launch_overhead_us", p.launch_overhead_us),
            ] {
                if !v.is_finite() || v < 0.0 {
                    return bad(format!("processor kind {}: {what} = {v}", p.kind));
                }
            }
        }
        for (i, m) in self.node.memories.iter().enumerate() {
            if self.node.memories[..i].iter().any(|n| n.kind == m.kind) {
                return bad(format!("memory kind {} is listed twice", m.kind));
            }
            if m.count == 0 {
                return bad(format!("memory kind {} has count 0", m.kind));
            }
            if !m.bandwidth_gbps.is_finite() || m.bandwidth_gbps <= 0.0 {
                return bad(format!(
                    "memory kind {}: bandwidth_gbps = {}",
                    m.kind, m.bandwidth_gbps
                ));
            }
        }
        for a in &self.node.affinities {
            if self.processor(a.proc).is_none() {
                return bad(format!(
                    "affinity {} -> {} names a processor kind the node lacks",
                    a.proc, a.mem
                ));
            }
            if self.memory(a.mem).is_none() {
                return bad(format!(
                    "affinity {} -> {} names a memory kind the node lacks",
                    a.proc, a.mem
                ));
            }
            if !a.bandwidth_gbps.is_finite()
                || a.bandwidth_gbps <= 0.0
                || !a.latency_us.is_finite()
                || a.latency_us < 0.0
            {
                return bad(format!(
                    "affinity {} -> {}: bandwidth/latency must be finite and positive",
                    a.proc, a.mem
                ));
            }
        }
        for l in &self.links {
            if !l.bandwidth_gbps.is_finite()
                || l.bandwidth_gbps <= 0.0
                || !l.latency_us.is_finite()
                || l.latency_us < 0.0
            {
                return bad(format!(
                    "link {} <-> {}: bandwidth/latency must be finite and positive",
                    l.from, l.to
                ));
            }
            if l.inter_node && self.nodes < 2 {
                return bad(format!(
                    "link {} <-> {} is inter-node but the machine has one node",
                    l.from, l.to
                ));
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Ranks: the machine as a mapper sees it
// ---------------------------------------------------------------------------

/// A machine as the DSL mapper of a program launched with several Legion
/// ranks (processes, address spaces) per node sees it.
///
/// Legion calls each rank a node: `Machine(KIND)` is `(ranks in the whole
/// machine, processors of KIND per rank)`, and a mapping function names
/// processors by (rank, index within the rank). DISTAL's Lassen runs of
/// johnson and cosma start one rank per GPU (`jsrun -a 4 ... -ll:gpu 1`), so
/// there `Machine(GPU)` is `(4, 1)` on one 4-GPU node. The hardware does not
/// change: ranks on one node share its memories and links, so decisions
/// name physical processors ([`RankView::to_physical`]) and the simulator
/// keeps the physical topology.
///
/// Each rank gets `count / ranks` processors of a kind (at least one where
/// the node has any): rank `r` of node `n` holds processors
/// `r * per .. (r + 1) * per` of the node. A kind with fewer processors
/// than ranks (one OpenMP processor, two utility processors for four
/// ranks) is shared: every rank sees one, processor `r % count`. Processors
/// left over by an uneven split are not used.
#[derive(Debug, Clone, Copy)]
pub struct RankView<'a> {
    machine: &'a Machine,
    ranks: u32,
}

impl<'a> RankView<'a> {
    /// `machine` run with `ranks_per_node` ranks on every node (0 counts as 1).
    pub fn new(machine: &'a Machine, ranks_per_node: u32) -> RankView<'a> {
        RankView {
            machine,
            ranks: ranks_per_node.max(1),
        }
    }

    /// The physical machine.
    pub fn machine(&self) -> &'a Machine {
        self.machine
    }

    /// Ranks per physical node (at least 1).
    pub fn ranks_per_node(&self) -> u32 {
        self.ranks
    }

    /// Nodes as the mapper sees them: ranks in the whole machine
    /// (`Machine(KIND).size[0]`).
    pub fn nodes(&self) -> u32 {
        self.machine.nodes().saturating_mul(self.ranks)
    }

    /// Processors of `kind` per rank (`Machine(KIND).size[1]`).
    pub fn procs_per_node(&self, kind: ProcKind) -> u32 {
        let count = self.machine.procs_per_node(kind);
        if count == 0 {
            0
        } else {
            (count / self.ranks).max(1)
        }
    }

    /// Processors of `kind` the mapper sees in the whole machine.
    pub fn total_procs(&self, kind: ProcKind) -> u64 {
        u64::from(self.nodes()) * u64::from(self.procs_per_node(kind))
    }

    /// The physical (node, processor index) of processor `proc` of rank
    /// `node` (as the mapper numbers them), or None outside the machine.
    pub fn to_physical(&self, kind: ProcKind, node: u32, proc: u32) -> Option<(u32, u32)> {
        let per = self.procs_per_node(kind);
        if node >= self.nodes() || proc >= per {
            return None;
        }
        let count = self.machine.procs_per_node(kind);
        let rank = node % self.ranks;
        let index = (u64::from(rank) * u64::from(per) + u64::from(proc)) % u64::from(count);
        Some((node / self.ranks, u32::try_from(index).ok()?))
    }
}

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

impl Machine {
    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// Processors of `kind` per node (0 if the node has none): the second
    /// extent of the DSL's `Machine(kind)`.
    pub fn procs_per_node(&self, kind: ProcKind) -> u32 {
        self.processor(kind).map_or(0, |p| p.count)
    }

    /// Processors of `kind` in the whole machine.
    pub fn total_procs(&self, kind: ProcKind) -> u64 {
        u64::from(self.nodes) * u64::from(self.procs_per_node(kind))
    }

    /// Memories of `kind` per node (0 if none).
    pub fn mems_per_node(&self, kind: MemKind) -> u32 {
        self.memory(kind).map_or(0, |m| m.count)
    }

    /// The processor group of `kind`, if the node has one.
    pub fn processor(&self, kind: ProcKind) -> Option<&ProcGroup> {
        self.node.processors.iter().find(|p| p.kind == kind)
    }

    /// The memory group of `kind`, if the node has one.
    pub fn memory(&self, kind: MemKind) -> Option<&MemGroup> {
        self.node.memories.iter().find(|m| m.kind == kind)
    }

    /// Processor kinds present, in description order.
    pub fn proc_kinds(&self) -> Vec<ProcKind> {
        self.node.processors.iter().map(|p| p.kind).collect()
    }

    /// Memory kinds present, in description order.
    pub fn mem_kinds(&self) -> Vec<MemKind> {
        self.node.memories.iter().map(|m| m.kind).collect()
    }

    /// Capacity of one memory of `kind`, bytes (None if the node has none).
    pub fn capacity(&self, kind: MemKind) -> Option<u64> {
        self.memory(kind).map(|m| m.capacity_bytes)
    }

    /// Whether processors of `proc` can access some memory of kind `mem`
    /// directly (the condition Legion checks before accepting an instance
    /// for a task running on that processor).
    pub fn can_reach(&self, proc: ProcKind, mem: MemKind) -> bool {
        self.node
            .affinities
            .iter()
            .any(|a| a.proc == proc && a.mem == mem)
            && self.processor(proc).is_some()
            && self.memory(mem).is_some()
    }

    /// Memory kinds `proc` can reach, best first (by the Legion bandwidth
    /// class of their best scope, then by GB/s).
    pub fn reachable(&self, proc: ProcKind) -> Vec<MemKind> {
        let mut kinds: Vec<(MemKind, u32, f64)> = Vec::new();
        for a in self.node.affinities.iter().filter(|a| a.proc == proc) {
            if self.memory(a.mem).is_none() {
                continue;
            }
            match kinds.iter_mut().find(|(k, _, _)| *k == a.mem) {
                Some(entry) => {
                    entry.1 = entry.1.max(a.legion_bandwidth);
                    entry.2 = entry.2.max(a.bandwidth_gbps);
                }
                None => kinds.push((a.mem, a.legion_bandwidth, a.bandwidth_gbps)),
            }
        }
        kinds.sort_by(|x, y| y.1.cmp(&x.1).then(y.2.total_cmp(&x.2)));
        kinds.into_iter().map(|(k, _, _)| k).collect()
    }

    /// The affinity entry for `proc` accessing `mem` within `scope`.
    pub fn affinity(&self, proc: ProcKind, mem: MemKind, scope: Scope) -> Option<&Affinity> {
        self.node
            .affinities
            .iter()
            .find(|a| a.proc == proc && a.mem == mem && a.scope == scope)
    }

    /// The best affinity entry for `proc` accessing `mem` (highest Legion
    /// bandwidth class): the memory Legion would call "closest".
    pub fn best_affinity(&self, proc: ProcKind, mem: MemKind) -> Option<&Affinity> {
        self.node
            .affinities
            .iter()
            .filter(|a| a.proc == proc && a.mem == mem)
            .max_by(|x, y| {
                x.legion_bandwidth
                    .cmp(&y.legion_bandwidth)
                    .then(x.bandwidth_gbps.total_cmp(&y.bandwidth_gbps))
            })
    }

    /// Index (within the node) of the memory of kind `mem` that is processor
    /// `proc_index`'s own: `proc_index * memories / processors`, so GPU `i`
    /// owns framebuffer `i`, and with 2 socket memories the first half of
    /// the CPUs own socket 0. None if either kind is absent or the index is
    /// out of range.
    pub fn own_memory_index(&self, proc: ProcKind, proc_index: u32, mem: MemKind) -> Option<u32> {
        let procs = self.procs_per_node(proc);
        let mems = self.mems_per_node(mem);
        if procs == 0 || mems == 0 || proc_index >= procs {
            return None;
        }
        let idx = u64::from(proc_index) * u64::from(mems) / u64::from(procs);
        u32::try_from(idx).ok()
    }

    /// How processor `proc_index` of kind `proc` accesses memory `mem_index`
    /// of kind `mem` on the same node: the affinity entry for the scope that
    /// pair falls in (own, peer or shared), falling back to any entry for the
    /// kinds when the description does not distinguish scopes. None when the
    /// processor cannot reach the memory or an index is out of range.
    pub fn access(
        &self,
        proc: ProcKind,
        proc_index: u32,
        mem: MemKind,
        mem_index: u32,
    ) -> Option<&Affinity> {
        let mems = self.mems_per_node(mem);
        if mem_index >= mems || proc_index >= self.procs_per_node(proc) {
            return None;
        }
        let scope = if mems == 1 {
            Scope::Shared
        } else if self.own_memory_index(proc, proc_index, mem) == Some(mem_index) {
            Scope::Own
        } else {
            Scope::Peer
        };
        self.affinity(proc, mem, scope).or_else(|| {
            // A description may list only a `shared` entry for a multi-memory
            // kind (every memory equally reachable); an `own` entry alone does
            // not grant access to peers, so only fall back to `shared`.
            match scope {
                Scope::Shared => self.best_affinity(proc, mem),
                _ => self.affinity(proc, mem, Scope::Shared),
            }
        })
    }

    /// The link copies between memory kinds `a` and `b` use (either
    /// direction). For an inter-node copy without an exact entry, the first
    /// network link is used, since every inter-node copy crosses the network.
    pub fn link(&self, a: MemKind, b: MemKind, inter_node: bool) -> Option<&Link> {
        let exact = self.links.iter().find(|l| {
            l.inter_node == inter_node && ((l.from == a && l.to == b) || (l.from == b && l.to == a))
        });
        match exact {
            Some(l) => Some(l),
            None if inter_node => self
                .links
                .iter()
                .find(|l| l.inter_node && l.kind == LinkKind::Network),
            None => None,
        }
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_valid_and_named_after_itself() {
        for name in Machine::preset_names() {
            let m = Machine::preset(name).expect("preset exists");
            assert_eq!(m.name, *name);
            m.validate().expect("preset validates");
        }
        assert!(Machine::preset("p100x5").is_none());
        assert!(Machine::preset("").is_none());
    }

    #[test]
    fn paper_machine_shape() {
        let m = Machine::preset("p100x4").unwrap();
        assert_eq!(m.nodes(), 1);
        assert_eq!(m.procs_per_node(ProcKind::Gpu), 4);
        assert_eq!(m.procs_per_node(ProcKind::Cpu), 4);
        assert_eq!(m.procs_per_node(ProcKind::Omp), 1);
        assert_eq!(m.procs_per_node(ProcKind::Io), 0);
        assert_eq!(m.mems_per_node(MemKind::Fbmem), 4);
        assert_eq!(m.mems_per_node(MemKind::Sockmem), 2);
        assert_eq!(m.capacity(MemKind::Fbmem), Some(15_728_640_000));
        assert_eq!(m.total_procs(ProcKind::Gpu), 4);
    }

    #[test]
    fn cluster_presets_scale_nodes() {
        for (name, n) in [("2x4gpu", 2), ("4x4gpu", 4), ("16x4gpu", 16)] {
            let m = Machine::preset(name).unwrap();
            assert_eq!(m.nodes(), n);
            assert_eq!(m.procs_per_node(ProcKind::Gpu), 4);
            assert_eq!(m.total_procs(ProcKind::Gpu), 4 * u64::from(n));
            assert!(m.link(MemKind::Fbmem, MemKind::Fbmem, true).is_some());
            // Falls back to the network for pairs without their own entry.
            let l = m.link(MemKind::Zcmem, MemKind::Fbmem, true).unwrap();
            assert_eq!(l.kind, LinkKind::Network);
        }
        let one = Machine::preset("h200").unwrap();
        assert_eq!(one.procs_per_node(ProcKind::Gpu), 1);
        assert!(one.link(MemKind::Sysmem, MemKind::Sysmem, true).is_none());
    }

    #[test]
    fn reachability_follows_legion() {
        for name in Machine::preset_names() {
            let m = Machine::preset(name).unwrap();
            assert!(m.can_reach(ProcKind::Gpu, MemKind::Fbmem));
            assert!(m.can_reach(ProcKind::Gpu, MemKind::Zcmem));
            assert!(!m.can_reach(ProcKind::Gpu, MemKind::Sysmem), "{name}");
            assert!(m.can_reach(ProcKind::Cpu, MemKind::Sysmem));
            assert!(m.can_reach(ProcKind::Cpu, MemKind::Zcmem));
            assert!(!m.can_reach(ProcKind::Cpu, MemKind::Fbmem));
            assert!(!m.can_reach(ProcKind::Io, MemKind::Sysmem));
            assert_eq!(m.reachable(ProcKind::Gpu)[0], MemKind::Fbmem);
            assert_eq!(m.reachable(ProcKind::Cpu)[0], MemKind::Sysmem);
        }
    }

    #[test]
    fn legion_bandwidth_classes_match_log_headers() {
        let m = Machine::preset("2x4gpu").unwrap();
        let own = m.access(ProcKind::Gpu, 1, MemKind::Fbmem, 1).unwrap();
        assert_eq!((own.scope, own.legion_bandwidth), (Scope::Own, 200));
        let peer = m.access(ProcKind::Gpu, 1, MemKind::Fbmem, 2).unwrap();
        assert_eq!((peer.scope, peer.legion_bandwidth), (Scope::Peer, 10));
        let zc = m.access(ProcKind::Gpu, 3, MemKind::Zcmem, 0).unwrap();
        assert_eq!(zc.legion_bandwidth, 20);
        let sys = m.access(ProcKind::Cpu, 0, MemKind::Sysmem, 0).unwrap();
        assert_eq!(sys.legion_bandwidth, 100);
        let czc = m.access(ProcKind::Cpu, 0, MemKind::Zcmem, 0).unwrap();
        assert_eq!(czc.legion_bandwidth, 40);
        assert!(m.access(ProcKind::Gpu, 4, MemKind::Fbmem, 0).is_none());
        assert!(m.access(ProcKind::Gpu, 0, MemKind::Fbmem, 4).is_none());
        assert!(m.access(ProcKind::Cpu, 0, MemKind::Fbmem, 0).is_none());
    }

    #[test]
    fn ranks_split_a_node_and_map_back_to_its_processors() {
        let m = Machine::preset("p100x4").unwrap();
        // One rank: the machine as described.
        let one = RankView::new(&m, 1);
        assert_eq!(one.nodes(), 1);
        assert_eq!(one.procs_per_node(ProcKind::Gpu), 4);
        assert_eq!(one.to_physical(ProcKind::Gpu, 0, 3), Some((0, 3)));
        assert_eq!(one.to_physical(ProcKind::Gpu, 1, 0), None);
        assert_eq!(RankView::new(&m, 0).ranks_per_node(), 1);
        // One rank per GPU: Machine(GPU) is (4, 1); rank r drives GPU r.
        let four = RankView::new(&m, 4);
        assert_eq!(four.nodes(), 4);
        assert_eq!(four.procs_per_node(ProcKind::Gpu), 1);
        assert_eq!(four.procs_per_node(ProcKind::Cpu), 1);
        assert_eq!(four.total_procs(ProcKind::Gpu), 4);
        for r in 0..4 {
            assert_eq!(four.to_physical(ProcKind::Gpu, r, 0), Some((0, r)));
        }
        assert_eq!(four.to_physical(ProcKind::Gpu, 0, 1), None);
        assert_eq!(four.to_physical(ProcKind::Gpu, 4, 0), None);
        // Fewer processors than ranks: shared (one OMP processor, 2 UTIL).
        assert_eq!(four.procs_per_node(ProcKind::Omp), 1);
        for r in 0..4 {
            assert_eq!(four.to_physical(ProcKind::Omp, r, 0), Some((0, 0)));
        }
        assert_eq!(four.to_physical(ProcKind::Util, 3, 0), Some((0, 1)));
        // A kind the node lacks stays absent.
        assert_eq!(four.procs_per_node(ProcKind::Io), 0);
        // Several nodes: rank r of node n is mapper node n * ranks + r.
        let c = Machine::preset("2x4gpu").unwrap();
        let two = RankView::new(&c, 2);
        assert_eq!(two.nodes(), 4);
        assert_eq!(two.procs_per_node(ProcKind::Gpu), 2);
        assert_eq!(two.to_physical(ProcKind::Gpu, 3, 1), Some((1, 3)));
        assert_eq!(two.to_physical(ProcKind::Gpu, 2, 0), Some((1, 0)));
        assert_eq!(two.to_physical(ProcKind::Gpu, 1, 1), Some((0, 3)));
    }

    #[test]
    fn own_memory_index_spreads_processors_over_memories() {
        let m = Machine::preset("p100x4").unwrap();
        assert_eq!(
            m.own_memory_index(ProcKind::Gpu, 2, MemKind::Fbmem),
            Some(2)
        );
        assert_eq!(
            m.own_memory_index(ProcKind::Cpu, 0, MemKind::Sockmem),
            Some(0)
        );
        assert_eq!(
            m.own_memory_index(ProcKind::Cpu, 3, MemKind::Sockmem),
            Some(1)
        );
        assert_eq!(m.own_memory_index(ProcKind::Cpu, 9, MemKind::Sockmem), None);
        let s = m.access(ProcKind::Cpu, 3, MemKind::Sockmem, 0).unwrap();
        assert_eq!(s.scope, Scope::Peer);
    }

    #[test]
    fn json_and_toml_round_trip() {
        for name in Machine::preset_names() {
            let m = Machine::preset(name).unwrap();
            let json = m.to_json_pretty().unwrap();
            assert_eq!(Machine::from_json_str(&json).unwrap(), m);
            let toml = m.to_toml().unwrap();
            assert_eq!(Machine::from_toml_str(&toml).unwrap(), m, "{toml}");
        }
    }

    #[test]
    fn kinds_parse_from_dsl_and_legion_names() {
        assert_eq!("gpu".parse::<ProcKind>().unwrap(), ProcKind::Gpu);
        assert_eq!("TOC_PROC".parse::<ProcKind>().unwrap(), ProcKind::Gpu);
        assert_eq!("LOC_PROC".parse::<ProcKind>().unwrap(), ProcKind::Cpu);
        assert_eq!("Z_COPY_MEM".parse::<MemKind>().unwrap(), MemKind::Zcmem);
        assert_eq!("fbmem".parse::<MemKind>().unwrap(), MemKind::Fbmem);
        assert!("VIRTUAL".parse::<MemKind>().is_err());
        assert!("XPU".parse::<ProcKind>().is_err());
        for k in ProcKind::ALL {
            assert_eq!(k.dsl_name().parse::<ProcKind>().unwrap(), k);
            assert_eq!(k.legion_name().parse::<ProcKind>().unwrap(), k);
        }
        for k in MemKind::ALL {
            assert_eq!(k.legion_name().parse::<MemKind>().unwrap(), k);
            assert_eq!(k.to_string().parse::<MemKind>().unwrap(), k);
        }
        // serde accepts Legion's names too.
        let k: MemKind = serde_json::from_str("\"GPU_FB_MEM\"").unwrap();
        assert_eq!(k, MemKind::Fbmem);
    }

    #[test]
    fn minimal_toml_description_loads() {
        let text = r#"
name = "tiny"
nodes = 2

[node]
[[node.processors]]
kind = "CPU"
count = 2
gflops_fp64 = 10.0
gflops_fp32 = 20.0
launch_overhead_us = 1.0

[[node.memories]]
kind = "SYSMEM"
count = 1
capacity_bytes = 1073741824
bandwidth_gbps = 20.0

[[node.affinities]]
proc = "CPU"
mem = "SYSMEM"
scope = "shared"
legion_bandwidth = 100
bandwidth_gbps = 10.0
latency_us = 0.1
"#;
        let m = Machine::from_toml_str(text).unwrap();
        assert_eq!(m.procs_per_node(ProcKind::Cpu), 2);
        assert_eq!(m.node.processors[0].cores, 1);
        assert!(m.can_reach(ProcKind::Cpu, MemKind::Sysmem));
        assert!(!m.can_reach(ProcKind::Gpu, MemKind::Sysmem));
    }

    #[test]
    fn invalid_descriptions_are_errors_not_panics() {
        let mut m = Machine::preset("p100x4").unwrap();
        m.nodes = 0;
        assert!(matches!(m.validate(), Err(MachineError::Invalid(_))));
        let mut m = Machine::preset("p100x4").unwrap();
        let dup = m.node.processors[0].clone();
        m.node.processors.push(dup);
        assert!(m.validate().is_err());
        let mut m = Machine::preset("p100x4").unwrap();
        m.node.memories.retain(|g| g.kind != MemKind::Zcmem);
        assert!(m.validate().is_err(), "affinity to a missing memory kind");
        let mut m = Machine::preset("p100x4").unwrap();
        m.links[0].bandwidth_gbps = f64::NAN;
        assert!(m.validate().is_err());
        assert!(matches!(
            Machine::from_json_str("{"),
            Err(MachineError::Json { .. })
        ));
        assert!(matches!(
            Machine::from_toml_str("nodes = \"two\""),
            Err(MachineError::Toml { .. })
        ));
    }

    #[test]
    fn load_picks_the_format_from_the_extension() {
        let dir = std::env::temp_dir().join(format!("mapwright-machine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = Machine::preset("4x4gpu").unwrap();
        let j = dir.join("m.JSON");
        std::fs::write(&j, m.to_json_pretty().unwrap()).unwrap();
        assert_eq!(Machine::load(&j).unwrap(), m);
        let t = dir.join("m.toml");
        std::fs::write(&t, m.to_toml().unwrap()).unwrap();
        assert_eq!(Machine::load(&t).unwrap(), m);
        let y = dir.join("m.yaml");
        std::fs::write(&y, "x").unwrap();
        assert!(matches!(
            Machine::load(&y),
            Err(MachineError::UnknownFormat { .. })
        ));
        assert!(matches!(
            Machine::load(dir.join("missing.json")),
            Err(MachineError::Io { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
