//! The machine model ("MSpace") of the mapper DSL, computed exactly as the
//! reference DSL mapper computes it (`src/compiler/MSpace.cpp` and
//! `src/compiler/myalgorithm.h` of `Anjiang-Wei/DSLMapper`).
//!
//! `Machine(GPU)` is a 2-D space: (nodes, processors of that kind per node).
//! Every transformation (`merge`, `split`, `swap`, `slice`, `reverse`,
//! `balance_split`, `auto_split`, `greedy_split`) returns a *new* model whose
//! extents are computed forward from the old ones, and which remembers the
//! transformation so that a point of the new space can be converted back,
//! one step at a time, to a point of the old space and finally to a physical
//! (node, processor index) pair. That chain is the whole model: no processor is
//! ever renumbered, a transformed model is only a different way of naming the
//! processors of the 2-D original.
//!
//! Two directions exist, as in the reference:
//! - [`MachineModel::to_physical`] (the reference's `get_node_proc`): a point of
//!   the transformed space -> (node, processor). This is what indexing a model
//!   (`m[i, j]`) does. Like the reference it does **not** check the point
//!   against the transformed extents; it converts the point and only the final
//!   2-D point is bounds-checked ("Sharding node index out of bound!",
//!   "Slice processor index out of bound!"). A coordinate that is out of range
//!   in some transformed dimension can therefore still land on a real
//!   processor, exactly as it does in the reference.
//! - [`MachineModel::from_physical`] (the reference's `legion2mspace`): a
//!   processor -> its point in the transformed space (`task.processor(m)`).
//!
//! Where the reference asserts, aborts, divides by zero, loops forever or reads
//! out of bounds, the functions here return an [`MSpaceError`] instead; none of
//! them panics on any input. Where the reference only prints a message and goes
//! on (a `split` factor that does not divide the extent), so do we: the model is
//! built and the message is kept in [`MachineModel::warnings`].
//!
//! Arithmetic is on `i64` with C++'s truncating `/` and `%` (which Rust's match)
//! and reports [`MSpaceError::Overflow`] where the reference's 32-bit `int`
//! would silently wrap.
//!
//! Reference behaviours kept on purpose, because real mappers depend on the
//! numbers the reference produces (each has a test):
//! - `balance_split` multiplies the smallest primes into the smallest part
//!   first, so 12 becomes `(6, 2)`, not `(4, 3)`; it knows primes up to 17 only.
//! - `auto_split` minimises `sum(O_i / L_i)` in `float`, keeps ties within
//!   1e-6 in enumeration order and prefers the greedy answer among them; it
//!   factors numbers up to 17161 only, and splits an extent 0 into ones.
//! - Converting back from a processor (`from_physical`) takes every
//!   `auto_split` digit modulo its extent and bounds-checks only from above,
//!   so a processor outside a slice can come back as an in-range or a
//!   negative point.
//! - `m[i].has(MEM)` ignores the model: `i` is a local processor index.

/// The processor kinds a machine model can be built from (`Machine(KIND)`)
/// are the machine description's: one enum for the whole runtime. The DSL
/// names six of them (`CPU GPU IO PY PROC OMP`, [`ProcKind::dsl_name`]);
/// `UTIL` processors run the Legion runtime and are never a model's kind.
pub use crate::machine::ProcKind;

/// A physical processor: (node index, processor index within the node among
/// the processors of the model's kind).
pub type PhysicalProc = (i64, i64);

/// Why a machine-model operation failed.
///
/// Messages repeat the reference's own text where it prints one (so that a
/// user who has seen the real runtime recognises them), and otherwise say what
/// the reference would have done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MSpaceError {
    /// `Machine(KIND)` with a negative count (only possible from a hand-written
    /// machine description; Legion never reports one).
    #[error("Machine({kind}): {nodes} nodes with {procs_per_node} processors each is not a machine (counts must be non-negative)")]
    InvalidMachine {
        kind: ProcKind,
        nodes: i64,
        procs_per_node: i64,
    },
    /// A dimension argument outside `0..len`.
    #[error("{op}'s arguments have exceeded the allowed dimensions: {max_dim} (got {dim})")]
    DimOutOfRange {
        op: &'static str,
        dim: i64,
        max_dim: i64,
    },
    /// `merge(d, d)` or `swap(d, d)`.
    #[error("{op}'s arguments should be different integers (both are {dim})")]
    SameDims { op: &'static str, dim: i64 },
    /// `split(d, f)` with `f <= 0` (the reference divides by it: zero crashes,
    /// a negative factor yields negative extents).
    #[error("split factor must be positive (got {factor})")]
    InvalidSplitFactor { factor: i64 },
    /// `slice(d, lo, hi)` with `lo` or `hi` outside the dimension.
    #[error("Slice out of bound: {extent} (slice({dim}, {low}, {high}) needs 0 <= low and high < {extent})")]
    SliceOutOfBound {
        dim: i64,
        low: i64,
        high: i64,
        extent: i64,
    },
    /// `slice(d, lo, hi)` with `lo > hi` (the reference builds a model of
    /// extent `hi - lo + 1 <= 0` in which every index fails).
    #[error("slice({dim}, {low}, {high}) selects no processor: low is greater than high")]
    SliceEmpty { dim: i64, low: i64, high: i64 },
    /// `balance_split(d, k)` with `k` other than 2 or 3.
    #[error("Unsupported Balanced Split Dimension: {parts} (balance_split splits into 2 or 3 dimensions)")]
    UnsupportedBalanceSplit { parts: i64 },
    /// `balance_split` of an extent the reference cannot factor: 0, or one with
    /// a prime factor above 17 (the reference's table for `balance_split`).
    #[error("balance_split cannot factor extent {extent}: it must be at least 1 and have no prime factor above 17")]
    BalanceSplitUnfactorable { extent: i64 },
    /// `auto_split`/`greedy_split` with an empty tuple.
    #[error("{op}'s second argument must be a non-empty tuple of integers")]
    EmptySplitTuple { op: &'static str },
    /// A number above the reference's prime table (`131 * 131`).
    #[error("cannot factor {number}: the reference factors numbers up to 17161 (131 * 131) only")]
    FactorTooLarge { number: i64 },
    /// `auto_split` found no candidate: every split has an infinite cost, which
    /// happens when the launch domain has a zero extent (the reference then
    /// reads an empty vector).
    #[error("{op} of {number} over launch domain {domain:?} has no valid split (a zero extent in the launch domain makes every candidate's workload infinite)")]
    NoValidSplit {
        op: &'static str,
        number: i64,
        domain: Vec<i64>,
    },
    /// A point whose length differs from the model's dimensionality.
    #[error("machine point has {got} coordinates but the machine model has {expected} dimensions")]
    PointArity { expected: usize, got: usize },
    /// A coordinate past the end of a sliced dimension (the reference's
    /// `assert(old_point[dim] <= high - low)`).
    #[error("index {index} is out of bound for a slice of dimension {dim}: the slice has indices 0..={max}")]
    SliceIndexOutOfBound { dim: usize, index: i64, max: i64 },
    /// Converting a point through a merge whose merged-away dimension has
    /// extent 0 (the reference divides by that extent).
    #[error("the machine model has no processors: merged dimension {dim} has extent 0")]
    EmptyMerge { dim: usize },
    /// The converted node index is past the last node.
    #[error("Sharding node index out of bound! {index} >= {bound}")]
    NodeOutOfBound { index: i64, bound: i64 },
    /// The converted processor index is past the last processor of the node.
    #[error("Slice processor index out of bound! {index} >= {bound}")]
    ProcOutOfBound { index: i64, bound: i64 },
    /// The converted node index is negative (the reference does not check
    /// this and hands Legion a wrapped-around index).
    #[error("Sharding node index out of bound! {index} < 0")]
    NegativeNode { index: i64 },
    /// The converted processor index is negative (unchecked in the reference).
    #[error("Slice processor index out of bound! {index} < 0")]
    NegativeProc { index: i64 },
    /// A negative coordinate in a machine index: the reference reads `-1` as
    /// `*` and asserts on anything smaller.
    #[error("machine index {value} at position {position} is negative (only `*` may stand for a whole dimension)")]
    NegativeIndex { position: usize, value: i64 },
    /// `auto_split` over so many dimensions that enumerating its candidates
    /// would take hours (the reference would hang); no launch domain Legion
    /// supports (up to 9 dimensions) comes near the limit.
    #[error("auto_split of {number} over {dims} dimensions has more than {limit} candidate splits", limit = MAX_SPLIT_CANDIDATES)]
    TooManySplitCandidates { number: i64, dims: usize },
    /// A machine index with two or more `*`: the reference's enumeration of
    /// such sets is broken (it yields points of the wrong length).
    #[error("a machine index may contain at most one `*`")]
    MultipleWildcards,
    /// A `*` over a dimension of extent 0 (the reference then converts a point
    /// of the wrong length).
    #[error("`*` at position {position} ranges over an empty dimension")]
    EmptyWildcard { position: usize },
    /// `from_physical` of a processor below a slice's low end.
    #[error(
        "old_point[{dim}]={index} < {low}, not existing in the machine model using SliceMSpace"
    )]
    NotInSlice { dim: usize, index: i64, low: i64 },
    /// `from_physical` ended outside the transformed extents.
    #[error("{index} >= {extent} in legion2mspace: index out of bound!")]
    Legion2MSpaceOutOfBound { index: i64, extent: i64 },
    /// `from_physical` of a processor the machine does not have.
    #[error("processor ({node}, {proc_index}) does not exist: the machine has {nodes} nodes with {procs_per_node} {kind} processors each")]
    NoSuchProcessor {
        node: i64,
        proc_index: i64,
        nodes: i64,
        procs_per_node: i64,
        kind: ProcKind,
    },
    /// `m[i].has(MEM)` with `i` not a processor of the local node.
    #[error(
        "has: processor index {index} is out of range: each node has {count} {kind} processors"
    )]
    HasIndexOutOfRange {
        index: i64,
        count: i64,
        kind: ProcKind,
    },
    /// A value does not fit in 64 bits.
    #[error("arithmetic overflow in a machine-model computation")]
    Overflow,
}

type Result<T> = std::result::Result<T, MSpaceError>;

fn add(a: i64, b: i64) -> Result<i64> {
    a.checked_add(b).ok_or(MSpaceError::Overflow)
}

fn sub(a: i64, b: i64) -> Result<i64> {
    a.checked_sub(b).ok_or(MSpaceError::Overflow)
}

fn mul(a: i64, b: i64) -> Result<i64> {
    a.checked_mul(b).ok_or(MSpaceError::Overflow)
}

/// One step of a model's transformation chain, with what the step needs to
/// convert points in both directions (the reference stores the same data in
/// its `MSpaceOp` subclasses, some of it filled in when the extents are
/// computed).
///
/// "Input" below is the model the step was applied to, "output" the model it
/// produced. Dimensions are validated when the step is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transform {
    /// `merge(dim1, dim2)`: `dim2` is folded into `dim1`, `dim2` changing
    /// fastest. The merged dimension sits at `dim1` if `dim1 < dim2`, else at
    /// `dim1 - 1`; output index `i` there is input `i / dim2_volume` in `dim1`
    /// and `i % dim2_volume` in `dim2`.
    Merge {
        dim1: usize,
        dim2: usize,
        /// The input extent of `dim2`.
        dim2_volume: i64,
    },
    /// `split(dim, factor)`: input extent `e` becomes `(factor, e / factor)`;
    /// output `(i, j)` is input `i + j * factor`.
    Split { dim: usize, factor: i64 },
    /// `swap(dim1, dim2)`: the two dimensions trade places.
    Swap { dim1: usize, dim2: usize },
    /// `slice(dim, low, high)`: keeps input indices `low..=high`; output `i` is
    /// input `i + low`.
    Slice { dim: usize, low: i64, high: i64 },
    /// `reverse(dim)`: output `i` is input `extent - 1 - i`.
    Reverse {
        dim: usize,
        /// The input extent of `dim`.
        extent: i64,
    },
    /// `balance_split(dim, k)`: the extent becomes `factors` (k of them, as
    /// the reference balances them, sorted decreasing); the first new
    /// dimension changes fastest.
    BalanceSplit { dim: usize, factors: Vec<i64> },
    /// `auto_split(dim, domain)`: the extent becomes `factors`
    /// ([`auto_split_factors`]); the first new dimension changes fastest.
    AutoSplit {
        dim: usize,
        domain: Vec<i64>,
        factors: Vec<i64>,
    },
    /// `greedy_split(dim, domain)`: like `AutoSplit` with
    /// [`greedy_split_factors`].
    GreedySplit {
        dim: usize,
        domain: Vec<i64>,
        factors: Vec<i64>,
    },
}

impl Transform {
    /// The DSL method name of this step.
    pub fn name(&self) -> &'static str {
        match self {
            Transform::Merge { .. } => "merge",
            Transform::Split { .. } => "split",
            Transform::Swap { .. } => "swap",
            Transform::Slice { .. } => "slice",
            Transform::Reverse { .. } => "reverse",
            Transform::BalanceSplit { .. } => "balance_split",
            Transform::AutoSplit { .. } => "auto_split",
            Transform::GreedySplit { .. } => "greedy_split",
        }
    }

    /// Converts a point of the output space to the input space (the
    /// reference's `trans`). `point` has the output's dimensionality, which
    /// the caller guarantees.
    fn backward(&self, point: &[i64]) -> Result<Vec<i64>> {
        let mut p = point.to_vec();
        match self {
            Transform::Merge {
                dim1,
                dim2,
                dim2_volume,
            } => {
                let merged_at = if dim1 < dim2 { *dim1 } else { dim1 - 1 };
                if *dim2_volume == 0 {
                    return Err(MSpaceError::EmptyMerge { dim: *dim2 });
                }
                let v = p[merged_at];
                p[merged_at] = v / dim2_volume;
                p.insert(*dim2, v % dim2_volume);
            }
            Transform::Split { dim, factor } => {
                let v = add(p[*dim], mul(p[dim + 1], *factor)?)?;
                p.splice(*dim..dim + 2, [v]);
            }
            Transform::Swap { dim1, dim2 } => p.swap(*dim1, *dim2),
            Transform::Slice { dim, low, high } => {
                let max = high - low;
                if p[*dim] > max {
                    return Err(MSpaceError::SliceIndexOutOfBound {
                        dim: *dim,
                        index: p[*dim],
                        max,
                    });
                }
                p[*dim] = add(p[*dim], *low)?;
            }
            Transform::Reverse { dim, extent } => p[*dim] = sub(extent - 1, p[*dim])?,
            Transform::BalanceSplit { dim, factors }
            | Transform::AutoSplit { dim, factors, .. }
            | Transform::GreedySplit { dim, factors, .. } => {
                // Mixed radix, first digit fastest: sum of digit * (product of
                // the factors before it).
                let mut value = 0i64;
                let mut weight = 1i64;
                for (k, f) in factors.iter().enumerate() {
                    value = add(value, mul(p[dim + k], weight)?)?;
                    weight = mul(weight, *f)?;
                }
                p.splice(*dim..dim + factors.len(), [value]);
            }
        }
        Ok(p)
    }

    /// Converts a point of the input space to the output space (the
    /// reference's `trans_forward`).
    fn forward(&self, point: &[i64]) -> Result<Vec<i64>> {
        let mut p = point.to_vec();
        match self {
            Transform::Merge {
                dim1,
                dim2,
                dim2_volume,
            } => {
                let v = add(mul(p[*dim1], *dim2_volume)?, p[*dim2])?;
                p[*dim1] = v;
                p.remove(*dim2);
            }
            Transform::Split { dim, factor } => {
                let v = p[*dim];
                p.splice(*dim..dim + 1, [v % factor, v / factor]);
            }
            Transform::Swap { dim1, dim2 } => p.swap(*dim1, *dim2),
            Transform::Slice { dim, low, .. } => {
                if p[*dim] < *low {
                    return Err(MSpaceError::NotInSlice {
                        dim: *dim,
                        index: p[*dim],
                        low: *low,
                    });
                }
                p[*dim] -= low;
            }
            Transform::Reverse { dim, extent } => p[*dim] = sub(extent - 1, p[*dim])?,
            Transform::BalanceSplit { dim, factors } => {
                // The reference's balance_split gives the last new dimension
                // the whole remaining quotient (no final modulo).
                let mut v = p[*dim];
                let mut digits = Vec::with_capacity(factors.len());
                for (k, f) in factors.iter().enumerate() {
                    if k + 1 == factors.len() {
                        digits.push(v);
                    } else {
                        digits.push(v % f);
                        v /= f;
                    }
                }
                p.splice(*dim..dim + 1, digits);
            }
            Transform::AutoSplit { dim, factors, .. }
            | Transform::GreedySplit { dim, factors, .. } => {
                // auto_split takes every digit modulo its factor, the last
                // one included, so a too-large index wraps instead of failing.
                let mut v = p[*dim];
                let mut digits = Vec::with_capacity(factors.len());
                for f in factors {
                    digits.push(v % f);
                    v /= f;
                }
                p.splice(*dim..dim + 1, digits);
            }
        }
        Ok(p)
    }

    /// The output extents for input extents `dims` (the reference's
    /// `trans_dim`).
    fn output_extents(&self, dims: &[i64]) -> Result<Vec<i64>> {
        let mut d = dims.to_vec();
        match self {
            Transform::Merge { dim1, dim2, .. } => {
                d[*dim1] = mul(dims[*dim1], dims[*dim2])?;
                d.remove(*dim2);
            }
            Transform::Split { dim, factor } => {
                d.splice(*dim..dim + 1, [*factor, dims[*dim] / factor]);
            }
            Transform::Swap { dim1, dim2 } => d.swap(*dim1, *dim2),
            Transform::Slice { dim, low, high } => d[*dim] = high - low + 1,
            Transform::Reverse { .. } => {}
            Transform::BalanceSplit { dim, factors }
            | Transform::AutoSplit { dim, factors, .. }
            | Transform::GreedySplit { dim, factors, .. } => {
                d.splice(*dim..dim + 1, factors.iter().copied());
            }
        }
        Ok(d)
    }
}

/// What indexing a machine model yields: one processor, or (with a `*`) the
/// set of processors along one dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// `m[i, j]`: one processor.
    One(PhysicalProc),
    /// `m[i, *]`: every processor along the starred dimension, in index order.
    Set(Vec<PhysicalProc>),
}

/// A machine model (the DSL's `MSpace`): a processor kind, the 2-D machine it
/// was built from, its current extents, and the chain of transformations that
/// leads from the 2-D machine to those extents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineModel {
    kind: ProcKind,
    nodes: i64,
    procs_per_node: i64,
    extents: Vec<i64>,
    transforms: Vec<Transform>,
    warnings: Vec<String>,
}

// `len` is the DSL's `m.len` (the number of dimensions), which is at least 1
// for every model; an `is_empty` would suggest "no processors" and mislead.
#[allow(clippy::len_without_is_empty)]
impl MachineModel {
    /// `Machine(KIND)` on a machine of `nodes` nodes with `procs_per_node`
    /// processors of that kind on each: the 2-D space `(nodes, procs_per_node)`.
    ///
    /// Zero is allowed (a machine without GPUs gives `Machine(GPU)` of size
    /// `(nodes, 0)`, as in the reference); negative counts are rejected.
    pub fn new(kind: ProcKind, nodes: i64, procs_per_node: i64) -> Result<Self> {
        if nodes < 0 || procs_per_node < 0 {
            return Err(MSpaceError::InvalidMachine {
                kind,
                nodes,
                procs_per_node,
            });
        }
        Ok(MachineModel {
            kind,
            nodes,
            procs_per_node,
            extents: vec![nodes, procs_per_node],
            transforms: Vec::new(),
            warnings: Vec::new(),
        })
    }

    /// The processor kind the model was built from.
    pub fn kind(&self) -> ProcKind {
        self.kind
    }

    /// The number of nodes of the underlying machine.
    pub fn nodes(&self) -> i64 {
        self.nodes
    }

    /// The number of processors of the model's kind on each node.
    pub fn procs_per_node(&self) -> i64 {
        self.procs_per_node
    }

    /// `m.size`: the current extents.
    pub fn size(&self) -> &[i64] {
        &self.extents
    }

    /// `m.len`: the number of dimensions.
    pub fn len(&self) -> usize {
        self.extents.len()
    }

    /// `m.volume`: the product of the extents. It never exceeds
    /// `nodes * procs_per_node` except through the reference's quirks
    /// (`auto_split` of an extent 0 yields extents 1); saturates rather than
    /// overflow.
    pub fn volume(&self) -> i64 {
        self.extents
            .iter()
            .fold(1i64, |acc, &e| acc.saturating_mul(e))
    }

    /// The transformations applied since `Machine(KIND)`, oldest first.
    pub fn transforms(&self) -> &[Transform] {
        &self.transforms
    }

    /// Messages the reference prints without stopping (today only
    /// "E must be divisible by F" from `split`), oldest first.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn check_dim(&self, op: &'static str, dim: i64) -> Result<usize> {
        let len = self.extents.len();
        match usize::try_from(dim) {
            Ok(d) if d < len => Ok(d),
            _ => Err(MSpaceError::DimOutOfRange {
                op,
                dim,
                max_dim: len as i64 - 1,
            }),
        }
    }

    fn apply(&self, step: Transform, warning: Option<String>) -> Result<Self> {
        let extents = step.output_extents(&self.extents)?;
        let mut next = self.clone();
        next.extents = extents;
        next.transforms.push(step);
        next.warnings.extend(warning);
        Ok(next)
    }

    /// `m.merge(d1, d2)`: one dimension fewer; `d2` is folded into `d1` and
    /// changes fastest. The merged dimension is `d1` if `d1 < d2`, else `d1 - 1`.
    pub fn merge(&self, d1: i64, d2: i64) -> Result<Self> {
        // The reference checks for equal arguments before their range.
        if d1 == d2 {
            return Err(MSpaceError::SameDims {
                op: "Merge",
                dim: d1,
            });
        }
        let dim1 = self.check_dim("Merge", d1)?;
        let dim2 = self.check_dim("Merge", d2)?;
        self.apply(
            Transform::Merge {
                dim1,
                dim2,
                dim2_volume: self.extents[dim2],
            },
            None,
        )
    }

    /// `m.split(d, f)`: one dimension more; extent `e` of `d` becomes
    /// `(f, e / f)` and `new[.., i, j, ..]` is `old[.., i + j * f, ..]`.
    ///
    /// A factor that does not divide `e` is accepted, as in the reference,
    /// which prints "e must be divisible by f" and truncates `e / f`; the
    /// message is recorded in [`MachineModel::warnings`].
    pub fn split(&self, d: i64, f: i64) -> Result<Self> {
        let dim = self.check_dim("split", d)?;
        if f <= 0 {
            return Err(MSpaceError::InvalidSplitFactor { factor: f });
        }
        let extent = self.extents[dim];
        let warning = (extent % f != 0).then(|| format!("{extent} must be divisible by {f}"));
        self.apply(Transform::Split { dim, factor: f }, warning)
    }

    /// `m.swap(d1, d2)`: the two dimensions trade places.
    pub fn swap(&self, d1: i64, d2: i64) -> Result<Self> {
        if d1 == d2 {
            return Err(MSpaceError::SameDims {
                op: "Swap",
                dim: d1,
            });
        }
        let dim1 = self.check_dim("Swap", d1)?;
        let dim2 = self.check_dim("Swap", d2)?;
        self.apply(Transform::Swap { dim1, dim2 }, None)
    }

    /// `m.slice(d, lo, hi)`: keeps indices `lo..=hi` (both inclusive) of `d`;
    /// `new[.., i, ..]` is `old[.., i + lo, ..]`.
    pub fn slice(&self, d: i64, lo: i64, hi: i64) -> Result<Self> {
        let dim = self.check_dim("Slice", d)?;
        let extent = self.extents[dim];
        // The reference checks only `lo >= extent || hi >= extent`; negative
        // bounds would address processors before index 0.
        if lo >= extent || hi >= extent || lo < 0 || hi < 0 {
            return Err(MSpaceError::SliceOutOfBound {
                dim: d,
                low: lo,
                high: hi,
                extent,
            });
        }
        if lo > hi {
            return Err(MSpaceError::SliceEmpty {
                dim: d,
                low: lo,
                high: hi,
            });
        }
        self.apply(
            Transform::Slice {
                dim,
                low: lo,
                high: hi,
            },
            None,
        )
    }

    /// `m.reverse(d)`: `new[.., i, ..]` is `old[.., extent - 1 - i, ..]`.
    pub fn reverse(&self, d: i64) -> Result<Self> {
        let dim = self.check_dim("Reverse", d)?;
        self.apply(
            Transform::Reverse {
                dim,
                extent: self.extents[dim],
            },
            None,
        )
    }

    /// `m.balance_split(d, k)`: splits `d` into `k` (2 or 3) dimensions whose
    /// extents multiply to the old one, balanced as the reference balances
    /// them ([`balance_split_factors`]) and sorted decreasing. The first new
    /// dimension changes fastest.
    pub fn balance_split(&self, d: i64, k: i64) -> Result<Self> {
        let dim = self.check_dim("balance_split", d)?;
        let factors = balance_split_factors(self.extents[dim], k)?;
        self.apply(Transform::BalanceSplit { dim, factors }, None)
    }

    /// `m.auto_split(d, domain)`: splits `d` into `domain.len()` dimensions
    /// whose extents `O_i` multiply to the old extent and minimise
    /// `sum(O_i / L_i)` for the launch domain `L` ([`auto_split_factors`]).
    /// The first new dimension changes fastest.
    pub fn auto_split(&self, d: i64, domain: &[i64]) -> Result<Self> {
        let dim = self.check_dim("auto_split", d)?;
        let factors = auto_split_factors(self.extents[dim], domain)?;
        self.apply(
            Transform::AutoSplit {
                dim,
                domain: domain.to_vec(),
                factors,
            },
            None,
        )
    }

    /// `m.greedy_split(d, domain)`: like [`MachineModel::auto_split`] with the
    /// Legion default mapper's greedy factorisation ([`greedy_split_factors`]).
    pub fn greedy_split(&self, d: i64, domain: &[i64]) -> Result<Self> {
        let dim = self.check_dim("greedy_split", d)?;
        let factors = greedy_split_factors(self.extents[dim], domain)?;
        self.apply(
            Transform::GreedySplit {
                dim,
                domain: domain.to_vec(),
                factors,
            },
            None,
        )
    }

    /// The processor a point of this model names (the reference's
    /// `get_node_proc`; what `m[i, j, ..]` evaluates to).
    ///
    /// The point goes back through every transformation, newest first, and
    /// only the final (node, processor) pair is bounds-checked, as in the
    /// reference: coordinates outside the transformed extents are not errors
    /// by themselves. Negative coordinates are converted arithmetically too
    /// (the reference does so for a single-integer index `m[i]`); for the
    /// tuple-index semantics, where `-1` means `*`, use [`MachineModel::index`].
    pub fn to_physical(&self, point: &[i64]) -> Result<PhysicalProc> {
        if point.len() != self.extents.len() {
            return Err(MSpaceError::PointArity {
                expected: self.extents.len(),
                got: point.len(),
            });
        }
        let mut current = point.to_vec();
        for step in self.transforms.iter().rev() {
            current = step.backward(&current)?;
        }
        let (node, proc_index) = (current[0], current[1]);
        // The reference's two checks, in its order; the negative checks are
        // ours (it lets negative indices through to Legion).
        if node >= self.nodes {
            return Err(MSpaceError::NodeOutOfBound {
                index: node,
                bound: self.nodes,
            });
        }
        if proc_index >= self.procs_per_node {
            return Err(MSpaceError::ProcOutOfBound {
                index: proc_index,
                bound: self.procs_per_node,
            });
        }
        if node < 0 {
            return Err(MSpaceError::NegativeNode { index: node });
        }
        if proc_index < 0 {
            return Err(MSpaceError::NegativeProc { index: proc_index });
        }
        Ok((node, proc_index))
    }

    /// The processors a pattern names, `None` standing for `*` (`m[i, *]`):
    /// every index of the starred dimension, ascending.
    ///
    /// At most one `*` is accepted: the reference's enumeration of two or
    /// more produces points of the wrong length. Negative coordinates are
    /// rejected, as the reference asserts on them in a tuple index.
    pub fn to_physical_set(&self, pattern: &[Option<i64>]) -> Result<Vec<PhysicalProc>> {
        if pattern.len() != self.extents.len() {
            return Err(MSpaceError::PointArity {
                expected: self.extents.len(),
                got: pattern.len(),
            });
        }
        let mut star = None;
        for (position, c) in pattern.iter().enumerate() {
            match c {
                None if star.is_some() => return Err(MSpaceError::MultipleWildcards),
                None => star = Some(position),
                Some(v) if *v < 0 => {
                    return Err(MSpaceError::NegativeIndex {
                        position,
                        value: *v,
                    })
                }
                Some(_) => {}
            }
        }
        let mut point: Vec<i64> = pattern.iter().map(|c| c.unwrap_or(0)).collect();
        let Some(position) = star else {
            return Ok(vec![self.to_physical(&point)?]);
        };
        let extent = self.extents[position];
        if extent <= 0 {
            return Err(MSpaceError::EmptyWildcard { position });
        }
        (0..extent)
            .map(|i| {
                point[position] = i;
                self.to_physical(&point)
            })
            .collect()
    }

    /// A tuple index `m[a, b, ..]` with the reference's encoding: `-1` is
    /// `*` (that is how the reference passes a star, so a computed `-1` is one
    /// too), any other negative value is an error. Without a star the result
    /// is one processor, with one it is a set.
    pub fn index(&self, coords: &[i64]) -> Result<Selection> {
        let mut pattern = Vec::with_capacity(coords.len());
        for (position, &c) in coords.iter().enumerate() {
            match c {
                -1 => pattern.push(None),
                v if v < 0 => return Err(MSpaceError::NegativeIndex { position, value: v }),
                v => pattern.push(Some(v)),
            }
        }
        if pattern.iter().all(Option::is_some) {
            return self.to_physical(coords).map(Selection::One);
        }
        self.to_physical_set(&pattern).map(Selection::Set)
    }

    /// The point of this model that names processor `proc_index` of node
    /// `node` (the reference's `legion2mspace`; what `task.processor(m)`
    /// evaluates to).
    ///
    /// The processor goes forward through every transformation, oldest first;
    /// a processor cut away by a slice fails there or at the final check.
    /// Like the reference, the final check is an upper bound only, so a
    /// `reverse` applied after a `slice` can yield a negative coordinate for
    /// a processor outside the slice.
    pub fn from_physical(&self, node: i64, proc_index: i64) -> Result<Vec<i64>> {
        if !(0..self.nodes).contains(&node) || !(0..self.procs_per_node).contains(&proc_index) {
            return Err(MSpaceError::NoSuchProcessor {
                node,
                proc_index,
                nodes: self.nodes,
                procs_per_node: self.procs_per_node,
                kind: self.kind,
            });
        }
        let mut current = vec![node, proc_index];
        for step in &self.transforms {
            current = step.forward(&current)?;
        }
        for (&index, &extent) in current.iter().zip(&self.extents) {
            if index >= extent {
                return Err(MSpaceError::Legion2MSpaceOutOfBound { index, extent });
            }
        }
        Ok(current)
    }

    /// `m[index].has(MEM)`: whether local processor `index` of the model's
    /// kind can see a memory of the asked kind. `has_memory` answers that for
    /// a processor index (it holds the machine description this module knows
    /// nothing of).
    ///
    /// As in the reference, `index` is the processor's position among the
    /// local node's processors of this kind: the model's transformations and
    /// dimensions play no part.
    pub fn has(&self, index: i64, has_memory: impl FnOnce(usize) -> bool) -> Result<bool> {
        match usize::try_from(index) {
            Ok(i) if index < self.procs_per_node => Ok(has_memory(i)),
            _ => Err(MSpaceError::HasIndexOutOfRange {
                index,
                count: self.procs_per_node,
                kind: self.kind,
            }),
        }
    }
}

/// The most candidates `auto_split` enumerates. The worst case for a
/// 9-dimensional launch domain (Legion's maximum) is 6,615,675 (15120 split 9
/// ways); beyond the limit the enumeration would stall a language server.
pub const MAX_SPLIT_CANDIDATES: u64 = 8_000_000;

/// The number of ways to spread `prime^power` over `places` slots,
/// `C(power + places - 1, power)`, or `None` above [`MAX_SPLIT_CANDIDATES`].
fn placement_count(power: u32, places: usize) -> Option<u64> {
    let mut count: u64 = 1;
    for i in 1..=u64::from(power) {
        let grown = count.checked_mul((places as u64).checked_add(i - 1)?)? / i;
        if grown > MAX_SPLIT_CANDIDATES {
            return None;
        }
        count = grown;
    }
    Some(count)
}

/// The reference's prime table for `auto_split` and `greedy_split`; numbers
/// up to `131 * 131` can be factored with it.
const PRIMES: [i64; 32] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
    101, 103, 107, 109, 113, 127, 131,
];

/// Prime factors of `number`, smallest first, as the reference's
/// `generate_prime_factor` finds them: numbers below 2 have none.
fn prime_factors(number: i64) -> Result<Vec<i64>> {
    if number > 131 * 131 {
        return Err(MSpaceError::FactorTooLarge { number });
    }
    let mut n = number;
    let mut factors = Vec::new();
    for p in PRIMES {
        if p * p > n {
            break;
        }
        while n % p == 0 {
            factors.push(p);
            n /= p;
        }
        if n == 1 {
            break;
        }
    }
    if n > 1 {
        factors.push(n);
    }
    Ok(factors)
}

fn check_split_tuple(op: &'static str, domain: &[i64]) -> Result<()> {
    // An empty tuple makes the reference recurse or loop forever.
    if domain.is_empty() {
        return Err(MSpaceError::EmptySplitTuple { op });
    }
    Ok(())
}

/// How `balance_split` splits `extent` into `parts` (2 or 3) extents, as the
/// reference does: the prime factors (only 2..=17 are known to it), smallest
/// first, each multiplied into the currently smallest part (the first one on
/// ties); the parts are then sorted decreasing.
///
/// This is "balanced" only loosely: 12 becomes `(6, 2)`, not `(4, 3)`.
pub fn balance_split_factors(extent: i64, parts: i64) -> Result<Vec<i64>> {
    if parts != 2 && parts != 3 {
        return Err(MSpaceError::UnsupportedBalanceSplit { parts });
    }
    // Extent 0 makes the reference loop forever; a leftover prime above 17
    // makes it read past its factor list.
    if extent <= 0 {
        return Err(MSpaceError::BalanceSplitUnfactorable { extent });
    }
    let mut n = extent;
    let mut factors = Vec::new();
    for p in [2, 3, 5, 7, 11, 13, 17] {
        while n % p == 0 {
            factors.push(p);
            n /= p;
        }
    }
    if n != 1 {
        return Err(MSpaceError::BalanceSplitUnfactorable { extent });
    }
    let mut dims = vec![1i64; parts as usize];
    for f in factors {
        let mut smallest = 0;
        for (i, &d) in dims.iter().enumerate() {
            if d < dims[smallest] {
                smallest = i;
            }
        }
        dims[smallest] *= f;
    }
    dims.sort_unstable_by(|a, b| b.cmp(a));
    Ok(dims)
}

/// How `greedy_split` splits `number` over a launch domain: the Legion
/// default mapper's heuristic. Each prime factor of `number`, largest first,
/// goes to the dimension with the largest remaining workload (the first one
/// on ties), whose workload is then divided by it.
pub fn greedy_split_factors(number: i64, domain: &[i64]) -> Result<Vec<i64>> {
    check_split_tuple("greedy_split", domain)?;
    greedy(number, domain)
}

fn greedy(number: i64, domain: &[i64]) -> Result<Vec<i64>> {
    let mut result = vec![1i64; domain.len()];
    if number == 1 {
        return Ok(result);
    }
    let primes = prime_factors(number)?;
    let mut workload: Vec<f64> = domain.iter().map(|&l| l as f64).collect();
    for &p in primes.iter().rev() {
        let mut largest = 0;
        for (i, &w) in workload.iter().enumerate() {
            if workload[largest] < w {
                largest = i;
            }
        }
        result[largest] *= p;
        workload[largest] /= p as f64;
    }
    Ok(result)
}

/// The reference's cost of splitting into `o` over launch domain `l`:
/// `sum(o_i / l_i)`, each term a `float` computed through `double`, summed in
/// `double` and rounded to `float`. Reproducing the rounding matters because
/// ties (within 1e-6) decide between candidates.
fn split_cost(o: &[i64], l: &[i64]) -> f32 {
    let mut sum = 0.0f64;
    for (&a, &b) in o.iter().zip(l) {
        let term = ((a as f32) as f64 * 1.0 / (b as f32) as f64) as f32;
        sum += term as f64;
    }
    sum as f32
}

/// All ways to spread `prime^power` over `places` slots, in the reference's
/// order: the first slot's exponent ascending, then recursively the rest.
fn placements(prime: i64, power: u32, places: usize) -> Vec<Vec<i64>> {
    fn go(prime: i64, power: u32, places: usize, partial: &mut Vec<i64>, out: &mut Vec<Vec<i64>>) {
        if places == 1 {
            partial.push(prime.pow(power));
            out.push(partial.clone());
            partial.pop();
            return;
        }
        let mut cur = 1i64;
        for i in 0..=power {
            partial.push(cur);
            go(prime, power - i, places - 1, partial, out);
            partial.pop();
            cur *= prime;
        }
    }
    let mut out = Vec::new();
    go(
        prime,
        power,
        places,
        &mut Vec::with_capacity(places),
        &mut out,
    );
    out
}

/// Visits every split (the product of one placement per prime) in the
/// reference's order: the largest prime's placement changes slowest.
fn visit_splits(ways: &[Vec<Vec<i64>>], partial: &[i64], visit: &mut dyn FnMut(&[i64])) {
    match ways.split_last() {
        None => visit(partial),
        Some((last, rest)) => {
            for way in last {
                let next: Vec<i64> = partial.iter().zip(way).map(|(a, b)| a * b).collect();
                visit_splits(rest, &next, visit);
            }
        }
    }
}

/// How `auto_split` splits `number` over a launch domain (the reference's
/// `precise_enumerate`): among all `O` with `prod(O) == number` (one entry per
/// domain dimension), those minimising `sum(O_i / L_i)` in `float`, ties
/// within 1e-6 kept in enumeration order; the greedy split
/// ([`greedy_split_factors`]) wins if it is among them, else the first.
///
/// `number == 1` gives all ones. Numbers below 1 have no prime factors, so the
/// reference gives all ones for them too (then `prod(O) != number`).
pub fn auto_split_factors(number: i64, domain: &[i64]) -> Result<Vec<i64>> {
    check_split_tuple("auto_split", domain)?;
    let dim = domain.len();
    if number == 1 {
        return Ok(vec![1; dim]);
    }
    let primes = prime_factors(number)?;
    // Unique primes ascending with their powers.
    let mut powers: Vec<(i64, u32)> = Vec::new();
    for p in primes {
        match powers.last_mut() {
            Some((q, n)) if *q == p => *n += 1,
            _ => powers.push((p, 1)),
        }
    }
    let mut candidates: u64 = 1;
    for &(_, power) in &powers {
        candidates = placement_count(power, dim)
            .and_then(|c| c.checked_mul(candidates))
            .filter(|&c| c <= MAX_SPLIT_CANDIDATES)
            .ok_or(MSpaceError::TooManySplitCandidates { number, dims: dim })?;
    }
    let ways: Vec<Vec<Vec<i64>>> = powers.iter().map(|&(p, n)| placements(p, n, dim)).collect();

    let mut minimal = i32::MAX as f32;
    let mut best: Vec<Vec<i64>> = Vec::new();
    visit_splits(&ways, &vec![1; dim], &mut |o| {
        let cost = split_cost(o, domain);
        // The reference tests the tie before the improvement, so a candidate
        // better by less than 1e-6 joins the ties without lowering `minimal`.
        if (((cost - minimal).abs()) as f64) < 1e-6 {
            best.push(o.to_vec());
        } else if cost < minimal {
            minimal = cost;
            best.clear();
            best.push(o.to_vec());
        }
    });
    if best.is_empty() {
        return Err(MSpaceError::NoValidSplit {
            op: "auto_split",
            number,
            domain: domain.to_vec(),
        });
    }
    let greedy_choice = greedy(number, domain)?;
    if best.contains(&greedy_choice) {
        Ok(greedy_choice)
    } else {
        Ok(best.swap_remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(nodes: i64, procs: i64) -> MachineModel {
        MachineModel::new(ProcKind::Gpu, nodes, procs).expect("valid machine")
    }

    /// Every point of the model's extents, the last dimension fastest.
    fn points(m: &MachineModel) -> Vec<Vec<i64>> {
        let mut out = vec![Vec::new()];
        for &e in m.size() {
            let mut next = Vec::new();
            for p in &out {
                for i in 0..e.max(0) {
                    let mut q = p.clone();
                    q.push(i);
                    next.push(q);
                }
            }
            out = next;
        }
        out
    }

    const SIZES: [(i64, i64); 4] = [(1, 4), (2, 4), (4, 4), (16, 4)];

    #[test]
    fn machine_is_two_dimensional() {
        for (n, p) in SIZES {
            let m = gpu(n, p);
            assert_eq!(m.size(), &[n, p]);
            assert_eq!(m.len(), 2);
            assert_eq!(m.volume(), n * p);
            assert_eq!(m.kind(), ProcKind::Gpu);
            for q in points(&m) {
                assert_eq!(m.to_physical(&q), Ok((q[0], q[1])));
                assert_eq!(m.from_physical(q[0], q[1]), Ok(q.clone()));
            }
        }
        let no_gpus = gpu(2, 0);
        assert_eq!(no_gpus.size(), &[2, 0]);
        assert_eq!(no_gpus.volume(), 0);
        assert!(matches!(
            MachineModel::new(ProcKind::Cpu, -1, 4),
            Err(MSpaceError::InvalidMachine { .. })
        ));
    }

    #[test]
    fn out_of_bound_messages_match_the_reference() {
        let m = gpu(2, 4);
        let e = m.to_physical(&[0, 4]).unwrap_err();
        assert_eq!(e.to_string(), "Slice processor index out of bound! 4 >= 4");
        let e = m.to_physical(&[2, 0]).unwrap_err();
        assert_eq!(e.to_string(), "Sharding node index out of bound! 2 >= 2");
        // The reference checks the node first.
        assert!(matches!(
            m.to_physical(&[5, 5]),
            Err(MSpaceError::NodeOutOfBound { index: 5, bound: 2 })
        ));
        assert!(matches!(
            m.to_physical(&[0]),
            Err(MSpaceError::PointArity {
                expected: 2,
                got: 1
            })
        ));
        assert!(matches!(
            m.to_physical(&[0, -1]),
            Err(MSpaceError::NegativeProc { index: -1 })
        ));
    }

    #[test]
    fn merge_folds_the_second_dimension_fastest() {
        for (n, p) in SIZES {
            let m = gpu(n, p).merge(0, 1).expect("merge");
            assert_eq!(m.size(), &[n * p]);
            for i in 0..n * p {
                assert_eq!(m.to_physical(&[i]), Ok((i / p, i % p)));
                assert_eq!(m.from_physical(i / p, i % p), Ok(vec![i]));
            }
            // merge(1, 0): node changes fastest.
            let m = gpu(n, p).merge(1, 0).expect("merge");
            assert_eq!(m.size(), &[p * n]);
            for i in 0..n * p {
                assert_eq!(m.to_physical(&[i]), Ok((i % n, i / n)));
            }
        }
    }

    #[test]
    fn merge_position_follows_the_readme() {
        // merge_dim = d1 < d2 ? d1 : d1 - 1
        let m4 = gpu(16, 4)
            .split(0, 2)
            .expect("split")
            .split(1, 2)
            .expect("split");
        assert_eq!(m4.size(), &[2, 2, 4, 4]);
        let a = m4.merge(1, 3).expect("merge");
        assert_eq!(a.size(), &[2, 8, 4]);
        let b = m4.merge(3, 1).expect("merge");
        assert_eq!(b.size(), &[2, 4, 8]);
        // In `b`, index i of dimension 2 is old dim3 = i / 2, old dim1 = i % 2.
        for i in 0..8 {
            let expected = m4.to_physical(&[1, i % 2, 3, i / 2]).expect("valid");
            assert_eq!(b.to_physical(&[1, 3, i]), Ok(expected));
        }
    }

    #[test]
    fn readme_block1d_over_a_merged_machine() {
        // m_1d = m_2d.merge(0, 1); block1d on 2 nodes x 4 GPUs puts points
        // 0..3 on node 0 and 4..7 on node 1.
        let m_2d = gpu(2, 4);
        let m_1d = m_2d.merge(0, 1).expect("merge");
        let ispace = 8;
        for ip in 0..ispace {
            let idx = ip * m_1d.size()[0] / ispace;
            let (node, proc_index) = m_1d.to_physical(&[idx]).expect("valid");
            assert_eq!(node, ip / 4);
            assert_eq!(proc_index, ip % 4);
        }
    }

    #[test]
    fn readme_index_patterns_on_the_plain_machine() {
        let m = gpu(2, 4);
        // linearblock / block1d: node = ip / size[1], processor = ip % size[1].
        for ip in 0..8 {
            let p = m.to_physical(&[ip / m.size()[1], ip % m.size()[1]]);
            assert_eq!(p, Ok((ip / 4, ip % 4)));
        }
        // cyclic1d: node = ip % size[0], processor = ip / size[0] % size[1].
        let placed: Vec<_> = (0..8)
            .map(|ip| m.to_physical(&[ip % 2, ip / 2 % 4]).expect("valid"))
            .collect();
        assert_eq!(
            placed,
            vec![
                (0, 0),
                (1, 0),
                (0, 1),
                (1, 1),
                (0, 2),
                (1, 2),
                (0, 3),
                (1, 3)
            ]
        );
        // hierarchicalblock1d with 16 points: 8 per node, 2 per GPU.
        let is0 = 16;
        for ip in 0..is0 {
            let node_idx = ip * 2 / is0;
            let blk_size = is0 / 2;
            let gpu_idx = ip % blk_size * 4 / blk_size;
            assert_eq!(
                m.to_physical(&[node_idx, gpu_idx]),
                Ok((ip / 8, ip % 8 / 2))
            );
        }
    }

    #[test]
    fn split_follows_the_readme() {
        for (n, p) in SIZES {
            let m = gpu(n, p).split(1, 2).expect("split");
            assert_eq!(m.size(), &[n, 2, p / 2]);
            assert!(m.warnings().is_empty());
            for q in points(&m) {
                // new[.., i, j] == old[.., i + j * 2]
                assert_eq!(m.to_physical(&q), Ok((q[0], q[1] + q[2] * 2)));
                assert_eq!(m.from_physical(q[0], q[1] + q[2] * 2), Ok(q.clone()));
            }
        }
        let m = gpu(16, 4).split(0, 4).expect("split");
        assert_eq!(m.size(), &[4, 4, 4]);
        assert_eq!(m.to_physical(&[3, 2, 1]), Ok((3 + 2 * 4, 1)));
    }

    #[test]
    fn split_by_a_non_divisor_truncates_with_a_warning() {
        // The reference prints "4 must be divisible by 3" and goes on.
        let m = gpu(1, 4).split(1, 3).expect("split");
        assert_eq!(m.size(), &[1, 3, 1]);
        assert_eq!(m.warnings(), &["4 must be divisible by 3".to_string()]);
        assert_eq!(m.to_physical(&[0, 2, 0]), Ok((0, 2)));
        // Processor 3 lies outside the truncated space.
        assert!(matches!(
            m.from_physical(0, 3),
            Err(MSpaceError::Legion2MSpaceOutOfBound {
                index: 1,
                extent: 1
            })
        ));
        // A factor above the extent leaves an empty dimension.
        let m = gpu(2, 4).split(1, 8).expect("split");
        assert_eq!(m.size(), &[2, 8, 0]);
        assert_eq!(m.volume(), 0);
        // Warnings are inherited by later models.
        assert_eq!(m.reverse(0).expect("reverse").warnings().len(), 1);
    }

    #[test]
    fn out_of_range_coordinates_can_still_land_on_a_processor() {
        // As in the reference only the final 2-D point is checked.
        let m = gpu(1, 4).split(1, 2).expect("split");
        assert_eq!(m.size(), &[1, 2, 2]);
        assert_eq!(m.to_physical(&[0, 3, 0]), Ok((0, 3)));
    }

    #[test]
    fn swap_exchanges_dimensions() {
        for (n, p) in SIZES {
            let m = gpu(n, p).swap(0, 1).expect("swap");
            assert_eq!(m.size(), &[p, n]);
            for q in points(&m) {
                assert_eq!(m.to_physical(&q), Ok((q[1], q[0])));
                assert_eq!(m.from_physical(q[1], q[0]), Ok(q.clone()));
            }
        }
        let m3 = gpu(4, 4)
            .split(1, 2)
            .expect("split")
            .swap(2, 0)
            .expect("swap");
        assert_eq!(m3.size(), &[2, 2, 4]);
        assert_eq!(m3.to_physical(&[1, 1, 3]), Ok((3, 1 + 2)));
    }

    #[test]
    fn slice_keeps_an_inclusive_range() {
        for (n, p) in SIZES {
            let m = gpu(n, p).slice(1, 1, 2).expect("slice");
            assert_eq!(m.size(), &[n, 2]);
            for q in points(&m) {
                assert_eq!(m.to_physical(&q), Ok((q[0], q[1] + 1)));
                assert_eq!(m.from_physical(q[0], q[1] + 1), Ok(q.clone()));
            }
            assert!(matches!(
                m.from_physical(0, 0),
                Err(MSpaceError::NotInSlice {
                    dim: 1,
                    index: 0,
                    low: 1
                })
            ));
            assert!(matches!(
                m.from_physical(0, 3),
                Err(MSpaceError::Legion2MSpaceOutOfBound {
                    index: 2,
                    extent: 2
                })
            ));
            let e = m.to_physical(&[0, 2]).unwrap_err();
            assert_eq!(
                e,
                MSpaceError::SliceIndexOutOfBound {
                    dim: 1,
                    index: 2,
                    max: 1
                }
            );
        }
        let nodes = gpu(16, 4).slice(0, 4, 11).expect("slice");
        assert_eq!(nodes.size(), &[8, 4]);
        assert_eq!(nodes.to_physical(&[7, 3]), Ok((11, 3)));
    }

    #[test]
    fn slice_errors() {
        let m = gpu(2, 4);
        let e = m.slice(1, 0, 4).unwrap_err();
        assert!(e.to_string().starts_with("Slice out of bound: 4"));
        let e = m.slice(2, 0, 0).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("Slice's arguments have exceeded the allowed dimensions: 1"));
        assert!(matches!(
            m.slice(-1, 0, 0),
            Err(MSpaceError::DimOutOfRange { .. })
        ));
        assert!(matches!(
            m.slice(1, -1, 2),
            Err(MSpaceError::SliceOutOfBound { .. })
        ));
        assert!(matches!(
            m.slice(1, 3, 1),
            Err(MSpaceError::SliceEmpty { .. })
        ));
        assert_eq!(m.slice(1, 3, 3).expect("one processor").size(), &[2, 1]);
    }

    #[test]
    fn reverse_mirrors_a_dimension() {
        for (n, p) in SIZES {
            let m = gpu(n, p).reverse(0).expect("reverse");
            assert_eq!(m.size(), &[n, p]);
            for q in points(&m) {
                assert_eq!(m.to_physical(&q), Ok((n - 1 - q[0], q[1])));
                assert_eq!(m.from_physical(n - 1 - q[0], q[1]), Ok(q.clone()));
            }
        }
        assert!(gpu(2, 4)
            .reverse(2)
            .unwrap_err()
            .to_string()
            .starts_with("Reverse's arguments have exceeded the allowed dimensions: 1"));
    }

    #[test]
    fn reverse_after_slice_yields_negative_points_like_the_reference() {
        // legion2mspace checks only the upper bound.
        let m = gpu(1, 4)
            .slice(1, 0, 1)
            .expect("slice")
            .reverse(1)
            .expect("reverse");
        assert_eq!(m.from_physical(0, 3), Ok(vec![0, -2]));
        assert!(m.to_physical(&[0, -2]).is_err());
    }

    #[test]
    fn balance_split_follows_the_reference() {
        // README: 6 splits into 3 x 2 (sizes decreasing).
        assert_eq!(balance_split_factors(6, 2), Ok(vec![3, 2]));
        // Smallest primes first into the smallest part: 12 -> 6 x 2, not 4 x 3.
        assert_eq!(balance_split_factors(12, 2), Ok(vec![6, 2]));
        assert_eq!(balance_split_factors(16, 2), Ok(vec![4, 4]));
        assert_eq!(balance_split_factors(16, 3), Ok(vec![4, 2, 2]));
        assert_eq!(balance_split_factors(8, 3), Ok(vec![2, 2, 2]));
        assert_eq!(balance_split_factors(1, 3), Ok(vec![1, 1, 1]));
        assert_eq!(balance_split_factors(17 * 2, 2), Ok(vec![17, 2]));
        for (n, p) in SIZES {
            let m = gpu(n, p).balance_split(1, 2).expect("balance_split");
            assert_eq!(m.size(), &[n, 2, 2]);
            for q in points(&m) {
                assert_eq!(m.to_physical(&q), Ok((q[0], q[1] + 2 * q[2])));
                assert_eq!(m.from_physical(q[0], q[1] + 2 * q[2]), Ok(q.clone()));
            }
        }
        let m = gpu(16, 4).balance_split(0, 3).expect("balance_split");
        assert_eq!(m.size(), &[4, 2, 2, 4]);
        // index = a + b * 4 + c * 4 * 2
        assert_eq!(m.to_physical(&[3, 1, 1, 2]), Ok((3 + 4 + 8, 2)));
        assert_eq!(m.from_physical(15, 2), Ok(vec![3, 1, 1, 2]));
    }

    #[test]
    fn balance_split_errors() {
        let m = gpu(2, 4);
        assert_eq!(
            m.balance_split(1, 4).unwrap_err().to_string(),
            "Unsupported Balanced Split Dimension: 4 (balance_split splits into 2 or 3 dimensions)"
        );
        assert!(matches!(
            m.balance_split(1, 1),
            Err(MSpaceError::UnsupportedBalanceSplit { parts: 1 })
        ));
        assert!(m
            .balance_split(2, 2)
            .unwrap_err()
            .to_string()
            .starts_with("balance_split's arguments have exceeded the allowed dimensions: 1"));
        assert!(matches!(
            gpu(19, 4).balance_split(0, 2),
            Err(MSpaceError::BalanceSplitUnfactorable { extent: 19 })
        ));
        assert!(matches!(
            gpu(2, 0).balance_split(1, 2),
            Err(MSpaceError::BalanceSplitUnfactorable { extent: 0 })
        ));
    }

    #[test]
    fn readme_auto_split_example() {
        // README: splitting 4 over (4, 2, 4) gives (2, 1, 2).
        assert_eq!(auto_split_factors(4, &[4, 2, 4]), Ok(vec![2, 1, 2]));
        let m = gpu(4, 4).auto_split(0, &[4, 2, 4]).expect("auto_split");
        assert_eq!(m.size(), &[2, 1, 2, 4]);
        for q in points(&m) {
            // First new dimension fastest: node = a + c * 2 (b has extent 1).
            assert_eq!(m.to_physical(&q), Ok((q[0] + 2 * q[2], q[3])));
            assert_eq!(m.from_physical(q[0] + 2 * q[2], q[3]), Ok(q.clone()));
        }
    }

    #[test]
    fn readme_solomonik_auto3d() {
        // m_4d = m_2d.auto_split(0, ispace);
        // m_6d = m_4d.auto_split(3, ispace / m_4d[:-1]);
        // return m_6d[*upper, *lower] with blockwise nodes, cyclic GPUs.
        let m_2d = gpu(4, 4);
        let ispace = [4i64, 4, 2];
        let m_4d = m_2d.auto_split(0, &ispace).expect("auto_split");
        assert_eq!(m_4d.size(), &[2, 2, 1, 4]);
        let sub: Vec<i64> = ispace
            .iter()
            .zip(&m_4d.size()[..3])
            .map(|(a, b)| a / b)
            .collect();
        assert_eq!(sub, vec![2, 2, 2]);
        let m_6d = m_4d.auto_split(3, &sub).expect("auto_split");
        assert_eq!(m_6d.size(), &[2, 2, 1, 2, 2, 1]);
        let mut load = std::collections::BTreeMap::new();
        for x in 0..4 {
            for y in 0..4 {
                for z in 0..2 {
                    let ip = [x, y, z];
                    // block_primitive(ipoint, ispace, m_6d, i, i) and
                    // cyclic_primitive(ipoint, ispace, m_6d, i, i + 3).
                    let block = |i: usize| ip[i] * m_6d.size()[i] / ispace[i];
                    let cyclic = |i: usize| ip[i] % m_6d.size()[i + 3];
                    let point: Vec<i64> = (0..3).map(block).chain((0..3).map(cyclic)).collect();
                    let proc = m_6d.to_physical(&point).expect("valid");
                    *load.entry(proc).or_insert(0) += 1;
                }
            }
        }
        // 32 points over 16 GPUs, two each.
        assert_eq!(load.len(), 16);
        assert!(load.values().all(|&c| c == 2));
    }

    #[test]
    fn auto_split_matches_reference_outputs() {
        // (number, launch domain, auto_split result, greedy_split result),
        // as the reference's precise_enumerate and greedy (myalgorithm.h,
        // compiled and run) compute them; the last rows are cases where the
        // two disagree.
        type Case = (i64, &'static [i64], &'static [i64], &'static [i64]);
        let cases: &[Case] = &[
            (4, &[4, 2, 4], &[2, 1, 2], &[2, 1, 2]),
            (4, &[4, 4, 2], &[2, 2, 1], &[2, 2, 1]),
            (4, &[2, 2, 2], &[2, 2, 1], &[2, 2, 1]),
            (1, &[5, 7], &[1, 1], &[1, 1]),
            (0, &[5, 7], &[1, 1], &[1, 1]),
            (6, &[6, 4], &[3, 2], &[3, 2]),
            (12, &[12, 2], &[12, 1], &[12, 1]),
            (16, &[1], &[16], &[16]),
            (17161, &[1, 1], &[131, 131], &[131, 131]),
            (17161, &[1, 8, 3], &[1, 131, 131], &[1, 131, 131]),
            (12, &[3, 4], &[3, 4], &[4, 3]),
            (12, &[13, 8], &[4, 3], &[6, 2]),
            (12, &[2, 5, 8], &[1, 3, 4], &[1, 2, 6]),
            (108, &[4, 7], &[9, 12], &[6, 18]),
            (105, &[6, 16], &[7, 15], &[5, 21]),
            (112, &[12, 8, 2], &[8, 7, 2], &[7, 8, 2]),
            (105, &[37, 28, 6, 1], &[15, 7, 1, 1], &[7, 5, 3, 1]),
            (360, &[1, 56], &[3, 120], &[2, 180]),
            (360, &[1, 4, 6, 8], &[1, 5, 8, 9], &[1, 6, 6, 10]),
        ];
        for &(n, domain, auto, greedy) in cases {
            assert_eq!(
                auto_split_factors(n, domain),
                Ok(auto.to_vec()),
                "auto {n} {domain:?}"
            );
            assert_eq!(
                greedy_split_factors(n, domain),
                Ok(greedy.to_vec()),
                "greedy {n} {domain:?}"
            );
        }
    }

    #[test]
    fn auto_and_greedy_split_errors() {
        let m = gpu(4, 4);
        assert!(matches!(
            m.auto_split(0, &[]),
            Err(MSpaceError::EmptySplitTuple { op: "auto_split" })
        ));
        assert!(matches!(
            m.greedy_split(0, &[]),
            Err(MSpaceError::EmptySplitTuple { op: "greedy_split" })
        ));
        assert!(matches!(
            m.auto_split(2, &[2]),
            Err(MSpaceError::DimOutOfRange { .. })
        ));
        assert!(matches!(
            m.auto_split(0, &[0, 2]),
            Err(MSpaceError::NoValidSplit { .. })
        ));
        // greedy has no cost to divide by zero.
        assert_eq!(
            m.greedy_split(0, &[0, 2]).expect("greedy").size(),
            &[1, 4, 4]
        );
        assert!(matches!(
            gpu(17162, 1).auto_split(0, &[2]),
            Err(MSpaceError::FactorTooLarge { number: 17162 })
        ));
        // One node needs no factoring and never fails.
        assert_eq!(
            gpu(1, 4).auto_split(0, &[0, 0]).expect("ones").size(),
            &[1, 1, 4]
        );
    }

    #[test]
    fn auto_split_of_an_empty_dimension_gives_ones_like_the_reference() {
        let m = gpu(2, 0).auto_split(1, &[4, 4]).expect("auto_split");
        assert_eq!(m.size(), &[2, 1, 1]);
        assert_eq!(m.volume(), 2);
        assert!(matches!(
            m.to_physical(&[0, 0, 0]),
            Err(MSpaceError::ProcOutOfBound { index: 0, bound: 0 })
        ));
    }

    #[test]
    fn auto_split_wraps_processors_outside_a_slice_like_the_reference() {
        // legion2mspace takes every auto_split digit modulo its extent, so a
        // processor cut away by the slice comes back as an in-range point.
        let m = gpu(1, 2)
            .slice(1, 0, 0)
            .expect("slice")
            .auto_split(1, &[2, 3])
            .expect("auto_split");
        assert_eq!(m.size(), &[1, 1, 1]);
        assert_eq!(m.from_physical(0, 1), Ok(vec![0, 0, 0]));
        assert_eq!(m.to_physical(&[0, 0, 0]), Ok((0, 0)));
        // balance_split keeps the quotient in its last digit and does not wrap.
        let b = gpu(1, 4)
            .slice(1, 0, 1)
            .expect("slice")
            .balance_split(1, 2)
            .expect("balance_split");
        assert_eq!(b.size(), &[1, 2, 1]);
        assert!(matches!(
            b.from_physical(0, 3),
            Err(MSpaceError::Legion2MSpaceOutOfBound {
                index: 1,
                extent: 1
            })
        ));
    }

    #[test]
    fn merge_and_swap_errors() {
        let m = gpu(2, 4);
        assert_eq!(
            m.merge(1, 1).unwrap_err().to_string(),
            "Merge's arguments should be different integers (both are 1)"
        );
        assert_eq!(
            m.swap(0, 0).unwrap_err().to_string(),
            "Swap's arguments should be different integers (both are 0)"
        );
        assert!(m
            .merge(0, 2)
            .unwrap_err()
            .to_string()
            .starts_with("Merge's arguments have exceeded the allowed dimensions: 1"));
        assert!(matches!(
            m.swap(-1, 0),
            Err(MSpaceError::DimOutOfRange { .. })
        ));
        assert!(matches!(
            m.split(2, 2),
            Err(MSpaceError::DimOutOfRange { .. })
        ));
        assert!(matches!(
            m.split(0, 0),
            Err(MSpaceError::InvalidSplitFactor { factor: 0 })
        ));
        assert!(matches!(
            m.split(0, -2),
            Err(MSpaceError::InvalidSplitFactor { factor: -2 })
        ));
        let empty = gpu(2, 0).merge(0, 1).expect("merge");
        assert_eq!(empty.size(), &[0]);
        assert!(matches!(
            empty.to_physical(&[0]),
            Err(MSpaceError::EmptyMerge { dim: 1 })
        ));
    }

    #[test]
    fn wildcards_select_a_dimension() {
        // README same_node: m_2d[parent_node, *].
        let m = gpu(2, 4);
        assert_eq!(
            m.to_physical_set(&[Some(1), None]),
            Ok(vec![(1, 0), (1, 1), (1, 2), (1, 3)])
        );
        assert_eq!(
            m.index(&[1, -1]),
            Ok(Selection::Set(vec![(1, 0), (1, 1), (1, 2), (1, 3)]))
        );
        assert_eq!(m.index(&[1, 2]), Ok(Selection::One((1, 2))));
        assert_eq!(m.index(&[-1, -1]), Err(MSpaceError::MultipleWildcards));
        assert!(matches!(
            m.index(&[0, -2]),
            Err(MSpaceError::NegativeIndex {
                position: 1,
                value: -2
            })
        ));
        assert!(matches!(
            gpu(2, 0).index(&[0, -1]),
            Err(MSpaceError::EmptyWildcard { position: 1 })
        ));
        let split = gpu(2, 4).split(1, 2).expect("split");
        assert_eq!(
            split.to_physical_set(&[Some(0), None, Some(1)]),
            Ok(vec![(0, 2), (0, 3)])
        );
        // README same_point: m_2d[*task.parent.processor(m_2d)].
        let parent = m.from_physical(1, 3).expect("valid");
        assert_eq!(m.to_physical(&parent), Ok((1, 3)));
    }

    #[test]
    fn has_asks_about_the_local_processor_index() {
        let m = gpu(2, 4).merge(0, 1).expect("merge");
        // Indices are local processor positions, not points of the model.
        assert_eq!(m.has(3, |i| i == 3), Ok(true));
        assert_eq!(m.has(0, |i| i == 3), Ok(false));
        assert!(matches!(
            m.has(4, |_| true),
            Err(MSpaceError::HasIndexOutOfRange {
                index: 4,
                count: 4,
                ..
            })
        ));
        assert!(m.has(-1, |_| true).is_err());
    }

    #[test]
    fn huge_arguments_do_not_panic() {
        let m = gpu(i64::MAX, 2);
        assert!(m.merge(0, 1).is_err());
        assert!(matches!(
            m.to_physical(&[i64::MAX, 0]),
            Err(MSpaceError::NodeOutOfBound { .. })
        ));
        let s = gpu(4, 4).split(1, 2).expect("split");
        assert_eq!(s.to_physical(&[0, 1, i64::MAX]), Err(MSpaceError::Overflow));
        let r = gpu(4, 4).reverse(1).expect("reverse");
        assert_eq!(r.to_physical(&[0, i64::MIN]), Err(MSpaceError::Overflow));
        assert!(gpu(4, i64::MAX).split(1, i64::MAX).is_ok());
        assert!(auto_split_factors(i64::MAX, &[1, 2]).is_err());
        assert!(balance_split_factors(i64::MAX, 2).is_err());
        assert!(greedy_split_factors(i64::MIN, &[1]).is_ok());
        // Legion's largest launch domains stay under the enumeration limit;
        // absurd tuples are refused instead of hanging.
        assert_eq!(placement_count(6, 9), Some(3003));
        assert!(auto_split_factors(15120, &[1; 4]).is_ok());
        assert_eq!(
            auto_split_factors(16384, &[1; 100]),
            Err(MSpaceError::TooManySplitCandidates {
                number: 16384,
                dims: 100
            })
        );
        assert!(gpu(4, 4).greedy_split(0, &[1; 100]).is_ok());
    }

    /// Applies operation number `op` (0..8, in the DSL's order) with small
    /// integer arguments; `b` picks the tuple of the two split-by-domain ops.
    fn apply_op(m: &MachineModel, op: usize, a: i64, b: i64, c: i64) -> Result<MachineModel> {
        const TUPLES: [&[i64]; 7] = [&[], &[0], &[1], &[2, 3], &[4, 2, 4], &[3, 0], &[-2, 2]];
        let tuple = TUPLES[b.rem_euclid(7) as usize];
        match op {
            0 => m.merge(a, b),
            1 => m.split(a, b),
            2 => m.swap(a, b),
            3 => m.slice(a, b, c),
            4 => m.reverse(a),
            5 => m.balance_split(a, b),
            6 => m.auto_split(a, tuple),
            _ => m.greedy_split(a, tuple),
        }
    }

    /// What a chain of transformations guarantees about its points.
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    enum Shape {
        /// Every point names a distinct processor and every processor is named.
        Bijective,
        /// Every point names a distinct processor (slices, truncating splits).
        Injective,
        /// A split of an empty dimension produced extents of 1 (a reference
        /// quirk): its points name no processor. Only "no panic" is checked.
        Degenerate,
    }

    /// What applying the newest step of `after` to `before` keeps.
    fn step_shape(before: &MachineModel, after: &MachineModel) -> Shape {
        match after.transforms().last() {
            Some(Transform::Slice { .. }) => Shape::Injective,
            Some(Transform::Split { .. }) if after.warnings().len() > before.warnings().len() => {
                Shape::Injective
            }
            Some(Transform::AutoSplit { dim, factors, .. })
            | Some(Transform::GreedySplit { dim, factors, .. })
                if factors.iter().product::<i64>() != before.size()[*dim] =>
            {
                Shape::Degenerate
            }
            _ => Shape::Bijective,
        }
    }

    /// Checks the guarantees of `shape` for every point of `m` and that each
    /// point converts back to itself. For a bijective chain it also checks
    /// that every physical processor either fails to convert or converts to a
    /// point that names it again (in other chains `auto_split`'s wrap-around
    /// can send a processor outside the image to an inside point).
    fn check_model(m: &MachineModel, shape: Shape) {
        let mut seen = std::collections::BTreeSet::new();
        for q in points(m) {
            let converted = m.to_physical(&q);
            if shape == Shape::Degenerate {
                continue;
            }
            let (node, proc_index) =
                converted.unwrap_or_else(|e| panic!("{:?} point {q:?}: {e}", m.transforms()));
            assert!((0..m.nodes()).contains(&node));
            assert!((0..m.procs_per_node()).contains(&proc_index));
            assert!(
                seen.insert((node, proc_index)),
                "{:?}: {q:?} collides",
                m.transforms()
            );
            assert_eq!(m.from_physical(node, proc_index), Ok(q));
        }
        if shape == Shape::Bijective {
            assert_eq!(
                seen.len() as i64,
                m.nodes() * m.procs_per_node(),
                "{:?}",
                m.transforms()
            );
        }
        for node in 0..m.nodes() {
            for proc_index in 0..m.procs_per_node() {
                if let Ok(q) = m.from_physical(node, proc_index) {
                    let inside = q.len() == m.len()
                        && q.iter().zip(m.size()).all(|(&i, &e)| (0..e).contains(&i));
                    if inside && shape == Shape::Bijective {
                        assert_eq!(m.to_physical(&q), Ok((node, proc_index)));
                    }
                }
            }
        }
    }

    #[test]
    fn every_transformed_space_maps_injectively() {
        let sizes = [
            (0, 2),
            (1, 1),
            (1, 4),
            (2, 0),
            (2, 3),
            (3, 4),
            (4, 2),
            (6, 1),
        ];
        let mut built = 0;
        for (n, p) in sizes {
            let base = gpu(n, p);
            check_model(&base, Shape::Bijective);
            let mut level1 = Vec::new();
            for op in 0..8 {
                for a in -1..=3 {
                    for b in -1..=4 {
                        for c in -1..=3 {
                            if op != 3 && c != 0 {
                                continue;
                            }
                            if let Ok(m) = apply_op(&base, op, a, b, c) {
                                let shape = step_shape(&base, &m);
                                check_model(&m, shape);
                                level1.push((m, shape));
                                built += 1;
                            }
                        }
                    }
                }
            }
            for (m1, shape1) in &level1 {
                for (op, a, b, c) in [
                    (0, 0, 1, 0),
                    (0, 2, 0, 0),
                    (1, 0, 2, 0),
                    (1, 1, 3, 0),
                    (2, 0, 2, 0),
                    (3, 0, 0, 1),
                    (3, 1, 1, 2),
                    (4, 1, 0, 0),
                    (5, 0, 2, 0),
                    (6, 1, 3, 0),
                    (7, 0, 4, 0),
                ] {
                    if let Ok(m2) = apply_op(m1, op, a, b, c) {
                        let shape = (*shape1).max(step_shape(m1, &m2));
                        check_model(&m2, shape);
                        built += 1;
                    }
                }
            }
        }
        assert!(built > 1000, "only {built} models were built");
    }
}
