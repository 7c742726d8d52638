//! The seam to the DSL evaluator: [`LaunchPlacer`] and the built-in
//! [`EvalPlacer`], with the reference's bound checks and failure texts.

use mapwright_grammar::ast::{self, StmtKind};
use mapwright_grammar::Span;

use crate::app::Task;
use crate::decisions::RuntimeFailure;
use crate::machine::{Machine, ProcKind, RankView};
use mapwright_grammar::fast_hash::FastMap;

use super::placement::STEPS_PER_CALL;

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

/// Places launch points by running the mapping functions with the DSL
/// evaluator ([`crate::eval::Evaluator`]).
///
/// Mapping functions are pure given the machine: a function sees only the
/// task's point and domain (or its parent's processor) and the globals the
/// top level bound, and cannot assign a global. So each successful result
/// is remembered per function, processor kind and argument values, and a
/// later launch point with the same arguments (the same function over the
/// same domain for several tasks, as DISTAL's placement tasks and most of
/// pennant's launches are mapped) is answered without running it again.
/// Failures are not remembered: they carry the task's name and abort the
/// task anyway.
#[derive(Debug, Clone)]
pub struct EvalPlacer {
    ev: crate::eval::Evaluator,
    /// Results per function, keyed by the call's arguments
    /// ([`EvalPlacer::call_key`]); looked up with borrowed keys, so a
    /// remembered launch point costs no allocation.
    memo: FastMap<String, FastMap<Vec<i64>, MachinePoint>>,
    /// The key of the current call, reused between calls.
    key: Vec<i64>,
}

/// `program` without the statements that did not parse (a copy): what the
/// launch placer evaluates, so that one typo does not hide every placement.
pub fn parsed_statements(program: &ast::Program) -> ast::Program {
    ast::Program {
        stmts: program
            .stmts
            .iter()
            .filter(|s| !matches!(s.kind, StmtKind::Error))
            .cloned()
            .collect(),
    }
}

/// A machine description's kind as the evaluator may see it: only the
/// kinds the DSL can name (not `UTIL`).
fn eval_kind(k: ProcKind) -> Option<ProcKind> {
    k.dsl_kind().map(|_| k)
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
        let program = std::sync::Arc::new(parsed_statements(program));
        Self::shared(program, machine, ranks_per_node)
    }

    /// [`EvalPlacer::new`] on a program already reduced to the statements
    /// that parsed ([`parsed_statements`]), shared instead of copied (the
    /// language server evaluates the same one for the top-level values).
    pub fn with_parsed_statements(
        program: std::sync::Arc<dyn crate::eval::ProgramSource>,
        machine: &Machine,
    ) -> Result<EvalPlacer, crate::eval::EvalError> {
        Self::shared(program, machine, 1)
    }

    fn shared(
        program: std::sync::Arc<dyn crate::eval::ProgramSource>,
        machine: &Machine,
        ranks_per_node: u32,
    ) -> Result<EvalPlacer, crate::eval::EvalError> {
        let shape = Self::shape(machine, ranks_per_node);
        let limits = crate::eval::Limits {
            max_steps: STEPS_PER_CALL,
            ..crate::eval::Limits::default()
        };
        match crate::eval::Evaluator::new_partial_shared(program, &shape, limits) {
            (ev, None) => Ok(Self::placing_with(ev)),
            (_, Some(err)) => Err(err),
        }
    }

    /// The placer of a program whose top level already ran without error
    /// on `machine` (one rank per node), under limits of at least
    /// [`STEPS_PER_CALL`]: the language server evaluates the top level once
    /// for the names' values and hands the evaluator on, where it ran the
    /// same top level twice (each run was about a sixth of a keystroke's
    /// resolution on a 5,000-line file, `perf`). `None` where
    /// [`EvalPlacer::with_parsed_statements`] could decide otherwise: the
    /// evaluator saw another machine shape, or its top level took more
    /// steps than a placer's own run may.
    pub fn from_top_level(mut ev: crate::eval::Evaluator, machine: &Machine) -> Option<EvalPlacer> {
        if *ev.machine() != Self::shape(machine, 1) || ev.top_level_steps() > STEPS_PER_CALL {
            return None;
        }
        ev.set_steps_per_call(STEPS_PER_CALL);
        Some(Self::placing_with(ev))
    }

    /// The evaluator's view of `machine` run with `ranks_per_node` ranks:
    /// the kinds the DSL can name (not `UTIL`) with their processors per
    /// rank (with one rank per node, what the language server evaluates a
    /// file's top level on).
    pub fn shape(machine: &Machine, ranks_per_node: u32) -> crate::eval::MachineShape {
        let view = RankView::new(machine, ranks_per_node);
        let mut shape = crate::eval::MachineShape::new(i64::from(view.nodes()));
        for k in machine.proc_kinds() {
            if let Some(ek) = eval_kind(k) {
                shape = shape.with(ek, i64::from(view.procs_per_node(k)));
            }
        }
        shape
    }

    fn placing_with(ev: crate::eval::Evaluator) -> EvalPlacer {
        EvalPlacer {
            ev,
            memo: FastMap::default(),
            key: Vec::new(),
        }
    }

    /// Fills `self.key` with what a mapping-function call depends on
    /// besides the function: the processor kind the task runs on, and the
    /// task's values (point and domain of an index launch, tagged 0; the
    /// parent's processor of a single one, tagged 1). The lengths make the
    /// encoding unambiguous.
    fn call_key(
        &mut self,
        kind: ProcKind,
        index: Option<(&[i64], &[i64])>,
        parent: Option<(i64, i64)>,
    ) {
        self.key.clear();
        match index {
            Some((point, domain)) => {
                self.key.extend([0, kind as i64, point.len() as i64]);
                self.key.extend_from_slice(point);
                self.key.extend_from_slice(domain);
            }
            None => {
                self.key.extend([1, kind as i64]);
                if let Some((node, proc)) = parent {
                    self.key.extend([node, proc]);
                }
            }
        }
    }

    /// The remembered result of `func` for the call in `self.key`.
    fn recall(&self, func: &str) -> Option<MachinePoint> {
        self.memo.get(func)?.get(self.key.as_slice()).copied()
    }

    /// Remembers `mp` as the result of `func` for the call in `self.key`.
    fn remember(&mut self, func: &str, mp: MachinePoint) {
        let key = self.key.clone();
        match self.memo.get_mut(func) {
            Some(calls) => {
                calls.insert(key, mp);
            }
            None => {
                let mut calls = FastMap::default();
                calls.insert(key, mp);
                self.memo.insert(func.to_string(), calls);
            }
        }
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
        self.call_key(kind, Some((point, domain)), None);
        if let Some(mp) = self.recall(func) {
            return Ok(mp);
        }
        let mp = self
            .ev
            .map_index_point(func, &task.name, point, domain, eval_kind(kind))
            .map(|(node, proc)| MachinePoint { node, proc })
            .map_err(|e| placement_error(&e, &task.name, kind))?;
        self.remember(func, mp);
        Ok(mp)
    }

    fn place_single(
        &mut self,
        func: &str,
        task: &Task,
        parent: Option<&ParentPoint>,
        kind: ProcKind,
    ) -> Result<MachinePoint, PlacementError> {
        self.call_key(kind, None, parent.map(|p| (p.node, p.proc)));
        if let Some(mp) = self.recall(func) {
            return Ok(mp);
        }
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
        let mp = placed
            .first()
            .map(|(node, proc)| MachinePoint { node, proc })
            .ok_or(PlacementError::Failed {
                kind: "mapping_error".into(),
                message: "the mapping function named no processor".into(),
                raw:
                    "Must return TupleIntType or SetTupleIntType after invoking mapping function\n"
                        .into(),
                at: None,
            })?;
        self.remember(func, mp);
        Ok(mp)
    }
}

/// The reference's bound checks on a returned machine point
/// (`get_node_proc`), for placers that do not make them.
pub(super) fn check_bounds(
    mp: MachinePoint,
    nodes: i64,
    ppn: i64,
) -> Result<MachinePoint, PlacementError> {
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
pub(super) fn top_level_failure(e: &crate::eval::EvalError) -> RuntimeFailure {
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
