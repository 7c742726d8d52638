//! The public evaluator: runs the top level once, records the mapping
//! statements, and maps launches by calling their entry functions.

use mapwright_grammar::fast_hash::FastMap;
use std::sync::Arc;

use mapwright_grammar::ast::{Expr, ExprKind, ParamType, Program, Stmt, StmtKind};
use mapwright_grammar::Span;

use crate::mspace::{PhysicalProc, ProcKind};

use super::env::{Binding, Frame, State};
use super::error::{bare_error, EvalError, EvalErrorKind, EvalWarning, R};
use super::expr::{fits_int, strip_parens};
use super::interp::Interp;
use super::shape::{IndexTask, Limits, MachineShape, SingleTask, TaskValue};
use super::value::Value;

/// Which kind of mapping statement a [`MappingStmt`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MappingKind {
    Task,
    Region,
    Layout,
    InstanceLimit,
    CollectMemory,
    IndexTaskMap,
    SingleTaskMap,
    ControlReplicate,
}

/// A mapping statement the top level ran, in execution order. Resolution
/// applies the reference's rule: for each key, the first statement wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappingStmt {
    /// Index into `program.stmts`.
    pub stmt: usize,
    /// Its kind.
    pub kind: MappingKind,
}

/// Where an entry function placed a launch: the processors it named (one
/// for `m[i, j]`, several for `m[i, *]`) and the kind of the machine model
/// (`None` when it returned a plain tuple).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The processor kind of the machine model indexed, if any.
    pub kind: Option<ProcKind>,
    /// (node, processor index) pairs; never empty.
    pub procs: Vec<PhysicalProc>,
}

impl Placement {
    /// The processor the reference uses for slicing (the first one).
    pub fn first(&self) -> Option<PhysicalProc> {
        self.procs.first().copied()
    }
}

/// Where an evaluator reads its program: a program of its own, or the
/// parse it is part of, read in place (the language server evaluates the
/// parse of every keystroke's version; copying its tree was about a tenth
/// of a resolution of a 5,000-line file).
pub trait ProgramSource: std::fmt::Debug + Send + Sync {
    /// The program.
    fn program(&self) -> &Program;

    /// Whether the top level leaves out the statements that did not parse
    /// (one typo then hides no placement) instead of stopping at the first
    /// with a syntax error.
    fn leaves_out_unparsed(&self) -> bool {
        false
    }
}

impl ProgramSource for Program {
    fn program(&self) -> &Program {
        self
    }
}

/// A parse is evaluated as the statements of it that parsed: as
/// [`crate::resolve_mapping::parsed_statements`] of it, without the copy.
impl ProgramSource for mapwright_grammar::Parsed {
    fn program(&self) -> &Program {
        &self.program
    }

    fn leaves_out_unparsed(&self) -> bool {
        true
    }
}

/// A mapper program after its top level ran, ready to map launches.
///
/// ```
/// use mapwright_runtime::eval::{Evaluator, MachineShape};
/// use mapwright_runtime::mspace::ProcKind;
///
/// let src = "m = Machine(GPU);\n\
///            def block(Task t) { return m[t.ipoint[0] / m.size[1], t.ipoint[0] % m.size[1]]; }\n\
///            IndexTaskMap foo block;";
/// let machine = MachineShape::new(2).with(ProcKind::Gpu, 4);
/// let mut ev = Evaluator::from_source(src, &machine).unwrap();
/// let p = ev.map_index_point("block", "foo", &[5], &[8], Some(ProcKind::Gpu)).unwrap();
/// assert_eq!(p, (1, 1));
/// ```
#[derive(Debug, Clone)]
pub struct Evaluator {
    program: Arc<dyn ProgramSource>,
    state: State,
    /// The steps the top level took (see [`Evaluator::top_level_steps`]).
    top_level_steps: u64,
}

impl Evaluator {
    /// Runs the top level of `program` on `machine` with default [`Limits`].
    /// The program should have parsed without errors; a statement that did
    /// not parse is an error when reached.
    pub fn new(program: &Program, machine: &MachineShape) -> Result<Evaluator, EvalError> {
        Self::with_limits(program, machine, Limits::default())
    }

    /// [`Evaluator::new`] with explicit limits.
    pub fn with_limits(
        program: &Program,
        machine: &MachineShape,
        limits: Limits,
    ) -> Result<Evaluator, EvalError> {
        Self::with_limits_owned(program.clone(), machine, limits)
    }

    /// Runs the top level and returns the evaluator even if a statement
    /// failed, with the error: the globals, output and mapping statements
    /// before the failure stay available (a language server shows them).
    pub fn new_partial(
        program: &Program,
        machine: &MachineShape,
        limits: Limits,
    ) -> (Evaluator, Option<EvalError>) {
        Self::new_partial_owned(program.clone(), machine, limits)
    }

    /// [`Evaluator::with_limits`] taking the program by value (no copy of
    /// it: a resolution builds one evaluator per mapper text).
    pub fn with_limits_owned(
        program: Program,
        machine: &MachineShape,
        limits: Limits,
    ) -> Result<Evaluator, EvalError> {
        match Self::new_partial_owned(program, machine, limits) {
            (ev, None) => Ok(ev),
            (_, Some(err)) => Err(err),
        }
    }

    /// [`Evaluator::new_partial`] taking the program by value (no copy of
    /// it: the language server filters the statements it evaluates).
    pub fn new_partial_owned(
        program: Program,
        machine: &MachineShape,
        limits: Limits,
    ) -> (Evaluator, Option<EvalError>) {
        Self::new_partial_shared(Arc::new(program), machine, limits)
    }

    /// [`Evaluator::new_partial`] on a shared program (no copy of it: the
    /// language server's top-level evaluator and the launch placer of one
    /// resolution read the same filtered program).
    pub fn new_partial_shared(
        program: Arc<dyn ProgramSource>,
        machine: &MachineShape,
        limits: Limits,
    ) -> (Evaluator, Option<EvalError>) {
        Self::new_partial_shared_hinted(program, machine, limits, Comprehensions::Anywhere)
    }

    /// [`Evaluator::new_partial_shared`] for a caller that knows which
    /// top-level statements can hold a comprehension (those with a `for`
    /// token; a comprehension cannot parse without one). Only those are
    /// read by the reference's parse-time check of every comprehension's
    /// range: a walk of every expression of the file was about a sixth of
    /// the language server's resolution of a 5,000-line file on each
    /// keystroke (`perf`), and still 6 % of a keystroke with an application
    /// when the file had a single `for`.
    pub fn new_partial_shared_hinted(
        program: Arc<dyn ProgramSource>,
        machine: &MachineShape,
        limits: Limits,
        comprehensions: Comprehensions<'_>,
    ) -> (Evaluator, Option<EvalError>) {
        let mut ev = Evaluator {
            program,
            state: State {
                machine: machine.clone(),
                limits,
                globals: FastMap::default(),
                global_order: Vec::new(),
                output: String::new(),
                output_truncated: false,
                warnings: Vec::new(),
                mapping: Vec::new(),
                index_funcs: FastMap::default(),
                single_funcs: FastMap::default(),
            },
            top_level_steps: 0,
        };
        let err = ev.run_top_level(comprehensions).err().map(|e| *e);
        (ev, err)
    }

    /// Parses `source` and runs its top level; a syntax error is returned as
    /// an [`EvalErrorKind::Syntax`] error.
    pub fn from_source(source: &str, machine: &MachineShape) -> Result<Evaluator, EvalError> {
        let parsed = mapwright_grammar::parse(source);
        if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error()) {
            return Err(EvalError {
                kind: EvalErrorKind::Syntax,
                message: d.message.clone(),
                span: d.span,
                call_stack: Vec::new(),
                mspace: None,
            });
        }
        Self::new(&parsed.program, machine)
    }

    fn run_top_level(&mut self, comprehensions: Comprehensions<'_>) -> R<()> {
        let source = Arc::clone(&self.program);
        let program = source.program();
        check_comprehension_ranges(program, comprehensions)?;
        let mut it = Interp::new(program, &mut self.state);
        let leave_out = source.leaves_out_unparsed();
        let ran = (0..program.stmts.len())
            .filter(|&i| !(leave_out && matches!(program.stmts[i].kind, StmtKind::Error)))
            .try_for_each(|index| it.exec_top(index));
        self.top_level_steps = it.steps;
        ran
    }

    /// The evaluation steps the top level took (up to where it stopped,
    /// if it failed).
    pub fn top_level_steps(&self) -> u64 {
        self.top_level_steps
    }

    /// The steps each later entry call may take (the top level ran under
    /// the limits it was made with).
    pub fn set_steps_per_call(&mut self, max_steps: u64) {
        self.state.limits.max_steps = max_steps;
    }

    /// The program being evaluated.
    pub fn program(&self) -> &Program {
        self.program.program()
    }

    /// The machine it runs on.
    pub fn machine(&self) -> &MachineShape {
        &self.state.machine
    }

    /// The global names (assignments and functions) in definition order.
    pub fn globals(&self) -> impl Iterator<Item = (&str, &Value)> + '_ {
        self.state
            .global_order
            .iter()
            .filter_map(|n| self.state.globals.get(n).map(|v| (n.as_str(), v)))
    }

    /// One global by name.
    pub fn global(&self, name: &str) -> Option<&Value> {
        self.state.globals.get(name)
    }

    /// Everything `print` wrote so far (top level and entry calls), in the
    /// reference's format.
    pub fn printed(&self) -> &str {
        &self.state.output
    }

    /// Takes the `print` output collected so far.
    pub fn take_printed(&mut self) -> String {
        self.state.output_truncated = false;
        std::mem::take(&mut self.state.output)
    }

    /// Messages the reference prints without stopping.
    pub fn warnings(&self) -> &[EvalWarning] {
        &self.state.warnings
    }

    /// The mapping statements the top level ran, in order.
    pub fn mapping_statements(&self) -> &[MappingStmt] {
        &self.state.mapping
    }

    /// The function `IndexTaskMap` assigns to an index launch of `task_name`
    /// on processors of `kind`, looked up as the reference does: the task's
    /// own name first, then `CPU`, `GPU` or `OMP` for that kind. `*` is never
    /// consulted (the reference registers it as a task named `*`).
    pub fn index_task_function(&self, task_name: &str, kind: Option<ProcKind>) -> Option<&str> {
        lookup_entry(&self.state.index_funcs, task_name, kind)
    }

    /// Like [`Evaluator::index_task_function`] for `SingleTaskMap`.
    pub fn single_task_function(&self, task_name: &str, kind: Option<ProcKind>) -> Option<&str> {
        lookup_entry(&self.state.single_funcs, task_name, kind)
    }

    /// Maps one point of an index launch with entry function `func_name`
    /// (the reference's `Tree2Legion::runindex`) and returns the processor the
    /// reference slices the point to (the first one named).
    ///
    /// `proc_kind` is the kind of processor the task was assigned; the
    /// returned point must come from a machine model of that kind. `None`
    /// skips the check, as the reference's sharding functor does.
    pub fn map_index_point(
        &mut self,
        func_name: &str,
        task_name: &str,
        ipoint: &[i64],
        ispace: &[i64],
        proc_kind: Option<ProcKind>,
    ) -> Result<PhysicalProc, EvalError> {
        let placement = self.map_index(func_name, task_name, ipoint, ispace, proc_kind)?;
        placement.first().ok_or_else(|| {
            bare_error(
                EvalErrorKind::BadMappingResult,
                "the mapping function returned an empty set of processors",
            )
        })
    }

    /// [`Evaluator::map_index_point`] returning every processor named.
    pub fn map_index(
        &mut self,
        func_name: &str,
        task_name: &str,
        ipoint: &[i64],
        ispace: &[i64],
        proc_kind: Option<ProcKind>,
    ) -> Result<Placement, EvalError> {
        for &c in ipoint.iter().chain(ispace) {
            if !fits_int(c) {
                return Err(bare_error(
                    EvalErrorKind::Overflow,
                    format!("launch coordinate {c} does not fit the reference's 32-bit int"),
                ));
            }
        }
        let task = TaskValue::Index(IndexTask {
            name: task_name.to_string(),
            ipoint: ipoint.to_vec(),
            ispace: ispace.to_vec(),
        });
        self.run_entry(func_name, EntryKind::Index, task, proc_kind)
    }

    /// Maps one point of an index launch of `task_name`, choosing the
    /// function as the reference does ([`Evaluator::index_task_function`]).
    pub fn map_index_task(
        &mut self,
        task_name: &str,
        ipoint: &[i64],
        ispace: &[i64],
        proc_kind: Option<ProcKind>,
    ) -> Result<Placement, EvalError> {
        let func = self
            .index_task_function(task_name, proc_kind)
            .map(str::to_string)
            .ok_or_else(|| no_entry_error(task_name))?;
        self.map_index(&func, task_name, ipoint, ispace, proc_kind)
    }

    /// Maps a single launch of `task_name` whose parent runs on
    /// `parent_processor` (the reference's `Tree2Legion::runsingle`). The
    /// task's own processor is unknown, so `task.processor(m)` fails; use
    /// [`Evaluator::map_single_task`] to give it.
    pub fn map_single(
        &mut self,
        func_name: &str,
        task_name: &str,
        parent_processor: Option<PhysicalProc>,
        proc_kind: Option<ProcKind>,
    ) -> Result<Placement, EvalError> {
        let task = SingleTask {
            name: task_name.to_string(),
            processor: None,
            parent: parent_processor.map(|p| {
                Box::new(SingleTask {
                    name: String::from("parent"),
                    processor: Some(p),
                    parent: None,
                })
            }),
        };
        self.map_single_task(func_name, &task, proc_kind)
    }

    /// Maps a single launch described by `task`.
    pub fn map_single_task(
        &mut self,
        func_name: &str,
        task: &SingleTask,
        proc_kind: Option<ProcKind>,
    ) -> Result<Placement, EvalError> {
        self.run_entry(
            func_name,
            EntryKind::Single,
            TaskValue::Single(task.clone()),
            proc_kind,
        )
    }

    /// Calls user function `func` with `args`, checking them as a DSL call
    /// does (count, and type per parameter).
    pub fn call(&mut self, func: &str, args: &[Value]) -> Result<Value, EvalError> {
        let source = Arc::clone(&self.program);
        let mut it = Interp::new(source.program(), &mut self.state);
        let f = match it.st.globals.get(func) {
            Some(v) => v.clone(),
            None => {
                return Err(*it.error(
                    EvalErrorKind::UndefinedName,
                    Span::default(),
                    format!("{func} not found"),
                ))
            }
        };
        let args = args.iter().map(|a| (a.clone(), Span::default())).collect();
        it.invoke(f, args, Span::default()).map_err(|e| *e)
    }

    fn run_entry(
        &mut self,
        func_name: &str,
        entry: EntryKind,
        task: TaskValue,
        proc_kind: Option<ProcKind>,
    ) -> Result<Placement, EvalError> {
        let source = Arc::clone(&self.program);
        let program = source.program();
        let (params, body, def_span) = match self.state.globals.get(func_name) {
            None => {
                return Err(bare_error(
                    EvalErrorKind::UndefinedFunction,
                    format!(
                        "{}'s function undefined: no function `{func_name}`",
                        entry.stmt()
                    ),
                ))
            }
            Some(Value::Function { stmt, .. }) => match program.stmt(*stmt) {
                Some(Stmt {
                    kind:
                        StmtKind::FuncDef {
                            name, params, body, ..
                        },
                    ..
                }) => (params, body, name.span),
                _ => {
                    return Err(bare_error(
                        EvalErrorKind::UndefinedFunction,
                        format!("{}'s mapping function is undefined", entry.stmt()),
                    ))
                }
            },
            Some(other) => {
                return Err(bare_error(
                    EvalErrorKind::UndefinedFunction,
                    format!(
                        "{}'s mapping function is undefined: `{func_name}` is {}",
                        entry.stmt(),
                        other.describe()
                    ),
                ))
            }
        };
        let param = match params.as_slice() {
            [p] if p.ty == ParamType::Task => p,
            _ => {
                let mut e = bare_error(EvalErrorKind::EntrySignature, entry.signature_message());
                e.span = def_span;
                return Err(e);
            }
        };
        let task_name = task.name().to_string();
        let mut it = Interp::new(program, &mut self.state);
        let mut frame = Frame::default();
        frame.insert(
            param.name.name.clone(),
            Binding::Value(Value::Task(Arc::new(task))),
        );
        let result = it
            .enter(func_name.to_string(), def_span, frame, body, def_span)
            .map_err(|e| *e)?;
        let (procs, kind) = match result {
            Value::IntTuple { items, proc } => match items.as_slice() {
                [node, p] => (vec![(*node, *p)], proc),
                _ => {
                    return Err(*it.error(
                        EvalErrorKind::BadMappingResult,
                        def_span,
                        format!(
                            "the mapping function returned a tuple of {} integers; a processor is (node, processor): return a point of a machine model, e.g. `m[i, j]`",
                            items.len()
                        ),
                    ))
                }
            },
            Value::PointSet { points, proc } => (points, Some(proc)),
            other => {
                return Err(*it.error(
                    EvalErrorKind::BadMappingResult,
                    def_span,
                    format!(
                        "Must return TupleIntType or SetTupleIntType after invoking mapping function (got {}, {})",
                        other.type_name(),
                        other.describe()
                    ),
                ))
            }
        };
        if let Some(expected) = proc_kind {
            if kind != Some(expected) {
                return Err(*it.error(
                    EvalErrorKind::WrongProcessorKind,
                    def_span,
                    format!(
                        "{task_name} is actually mapped to {expected}, but machine model is for {}",
                        kind.map_or("ALLPROC", ProcKind::dsl_name)
                    ),
                ));
            }
        }
        if procs.is_empty() {
            return Err(*it.error(
                EvalErrorKind::BadMappingResult,
                def_span,
                "the mapping function returned an empty set of processors",
            ));
        }
        Ok(Placement { kind, procs })
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) enum EntryKind {
    Index,
    Single,
}

impl EntryKind {
    pub(super) fn stmt(self) -> &'static str {
        match self {
            EntryKind::Index => "IndexTaskMap",
            EntryKind::Single => "SingleTaskMap",
        }
    }

    /// The reference words the two checks differently.
    pub(super) fn signature_message(self) -> &'static str {
        match self {
            EntryKind::Index => "Entry mapping function's definition must be like func(Task t)",
            EntryKind::Single => "Entry mapping function's must be like func(Task t)",
        }
    }
}

fn lookup_entry<'a>(
    table: &'a FastMap<String, String>,
    task_name: &str,
    kind: Option<ProcKind>,
) -> Option<&'a str> {
    if let Some(f) = table.get(task_name) {
        return Some(f);
    }
    let key = match kind? {
        ProcKind::Cpu => "CPU",
        ProcKind::Gpu => "GPU",
        ProcKind::Omp => "OMP",
        _ => return None,
    };
    table.get(key).map(String::as_str)
}

fn no_entry_error(task_name: &str) -> EvalError {
    bare_error(
        EvalErrorKind::NoMappingFunction,
        format!("Fail in Tree2Legion::run when searching task names: no IndexTaskMap/SingleTaskMap applies to `{task_name}`"),
    )
}

/// Where a program's comprehensions can be (see
/// [`Evaluator::new_partial_shared_hinted`]).
#[derive(Debug, Clone, Copy)]
pub enum Comprehensions<'h> {
    /// In any statement: every one is read.
    Anywhere,
    /// Only at these `for` tokens (ascending; none: the program has no
    /// comprehension): a comprehension cannot parse without one.
    At(&'h [ForToken]),
}

/// A `for` token: the top-level statement that holds it, and its offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForToken {
    pub stmt: usize,
    pub at: usize,
}

/// The reference checks, while parsing, that a comprehension iterates over a
/// tuple written in the source; a file that breaks the rule never runs.
///
/// With the `for` tokens known ([`Comprehensions::At`]), each token's own
/// comprehension is found by following the spans down to it (a few nodes
/// each), instead of walking every expression of the statements that hold
/// one: that walk, over the function bodies of a 5,000-line file, was a
/// sixth of the language server's resolution on every keystroke (`perf`).
/// Only when one of them breaks the rule, or cannot be placed, are the
/// statements walked as before, so that the same one is reported.
fn check_comprehension_ranges(program: &Program, comprehensions: Comprehensions<'_>) -> R<()> {
    let stmts: Vec<&Stmt> = match comprehensions {
        Comprehensions::Anywhere => program.stmts.iter().map(|s| &**s).collect(),
        Comprehensions::At(fors) => {
            let all_ranges_written = fors.iter().all(|f| {
                program
                    .stmts
                    .get(f.stmt)
                    .and_then(|s| own_range_is_written(s, f.at))
                    .unwrap_or(false)
            });
            if all_ranges_written {
                return Ok(());
            }
            let mut at: Vec<usize> = fors.iter().map(|f| f.stmt).collect();
            at.dedup();
            at.iter()
                .filter_map(|&i| program.stmts.get(i))
                .map(|s| &**s)
                .collect()
        }
    };
    first_unwritten_range(stmts)
}

/// The first comprehension (the last statement's first, in walk order)
/// whose range is not a tuple written in the source, as the error.
fn first_unwritten_range(mut stmts: Vec<&Stmt>) -> R<()> {
    let mut bad: Option<&Expr> = None;
    while let Some(s) = stmts.pop() {
        if let StmtKind::FuncDef { body, .. } = &s.kind {
            stmts.extend(body.iter());
        }
        for e in s.exprs() {
            e.walk(&mut |x| {
                if let ExprKind::Comprehension { iter, .. } = &x.kind {
                    if bad.is_none() && !matches!(strip_parens(iter).kind, ExprKind::Tuple(_)) {
                        bad = Some(iter);
                    }
                }
            });
        }
        if let Some(iter) = bad {
            let mut err = bare_error(
                EvalErrorKind::Comprehension,
                "For-comprehension must itererate over TupleExpr or TupleInt (a tuple written in the source, such as `(0, 1, 2)`)",
            );
            err.span = iter.span;
            return Err(Box::new(err));
        }
    }
    Ok(())
}

/// Whether the range of the comprehension whose `for` token is at offset
/// `at` in `stmt` is a tuple written in the source, where the range
/// check's walk would meet it (the statement's expressions and, for a
/// function, its body's statements); `None` if the spans lead elsewhere.
fn own_range_is_written(stmt: &Stmt, at: usize) -> Option<bool> {
    if !stmt.span.contains(at) {
        return None;
    }
    if let Some(e) = stmt.exprs().into_iter().find(|e| e.span.contains(at)) {
        return range_at(e, at);
    }
    match &stmt.kind {
        StmtKind::FuncDef { body, .. } => body
            .iter()
            .find(|s| s.span.contains(at))
            .and_then(|s| own_range_is_written(s, at)),
        _ => None,
    }
}

/// [`own_range_is_written`] under `e`: down the nodes whose span holds
/// `at` to the last one, which must be a comprehension with `at` between
/// its body and its range.
fn range_at(e: &Expr, at: usize) -> Option<bool> {
    let mut node = e;
    loop {
        let mut next = None;
        node.for_each_child(&mut |c| {
            if next.is_none() && c.span.contains(at) {
                next = Some(c);
            }
        });
        match next {
            Some(c) => node = c,
            None => break,
        }
    }
    match &node.kind {
        ExprKind::Comprehension { body, iter, .. }
            if body.span.end() <= at && at < iter.span.start() =>
        {
            Some(matches!(strip_parens(iter).kind, ExprKind::Tuple(_)))
        }
        _ => None,
    }
}
