//! The evaluator: runs a mapper program the way the reference DSL mapper runs
//! it (`src/compiler/tree.cpp`, `tree.hpp` and `MSpace.cpp` of
//! `Anjiang-Wei/DSLMapper`), without Legion.
//!
//! # The model
//!
//! The reference is a tree-walking interpreter over its parse tree. When the
//! mapper starts it runs every top-level statement once, in order
//! ([`Evaluator::new`]): assignments bind *global* names, `def` registers a
//! function, `print` writes a line, and the mapping statements (`Task`,
//! `Region`, `Layout`, `IndexTaskMap`, ...) are recorded in tables that Legion
//! queries later. Then, each time Legion maps a launch, the reference calls the
//! entry function named by `IndexTaskMap`/`SingleTaskMap` with one `Task`
//! argument ([`Evaluator::map_index_point`], [`Evaluator::map_single`]) and
//! reads the machine point it returns.
//!
//! Names live in two places, as in the reference: one global namespace shared
//! by assignments and functions, and a stack of local frames (one per function
//! call, plus one per comprehension iteration, which starts as a copy of the
//! frame around it). A name is looked up in the innermost frame only, then
//! among the globals.
//!
//! Values are those of the reference's node types ([`Value`]): `int`
//! (`IntValType`), `bool`, a tuple of ints (`TupleIntType`, which also carries
//! the processor kind of the machine model it was indexed from), a set of
//! machine points (`SetTupleIntType`, from `m[i, *]`), a tuple of arbitrary
//! values (`TupleExprType`), a machine model, a task, processor and memory
//! kinds, `*`, an unpacked tuple, and a function. The distinction between the
//! two tuple kinds is the reference's and is visible: a tuple literal whose
//! elements are all integer literals is a `TupleInt`, any other tuple
//! (`(a, b)`, a comprehension) is a `TupleExpr`, and a `TupleExpr` is not
//! accepted where the reference wants a `TupleInt` (an `IPoint` parameter, the
//! result of a mapping function) even when all its elements are ints.
//! Arithmetic, properties and `auto_split` convert a `TupleExpr` of ints into
//! a `TupleInt` first, as the reference does.
//!
//! # Reference behaviours kept on purpose
//!
//! Each has a test; the messages repeat the reference's own text where it
//! prints one.
//! - Re-assigning a global is an error ("AssignNode multiple X cause conflicts
//!   in global_symbol!"); a second `def` of a name is silently ignored.
//! - A *local* assignment uses `unordered_map::insert`, so re-assigning a
//!   local (or a parameter) keeps the first value.
//! - `&&` and `||` evaluate both operands; operands of a binary operator must
//!   have the same type ("type mismatch!!"); tuples support only `+ - * / %`
//!   (not `==`).
//! - Unary minus negates only integer literals and tuples of integer literals:
//!   the reference inspects the *unevaluated* operand, so `-x` makes it crash.
//! - A comprehension must iterate over a tuple written in the source (checked
//!   before anything runs, as the reference checks it while parsing), may only
//!   appear inside a function, and binds its variable to the *unevaluated*
//!   element, which is evaluated where the variable is used.
//! - Slices follow the reference, not Python: `t[a:b]` with `b >= len` is an
//!   error, `b <= 0` counts from the end, so `t[:0]` is the whole tuple.
//! - A `Task` can be passed only to an entry function: the reference's
//!   argument check has no case for `Task` parameters of called functions.
//! - A function may return only an int, a bool or a tuple; an entry function
//!   must return a machine point (`m[...]`), of the kind the task runs on.
//! - `task.processor(m)` of an index-launch task is the point of processor
//!   (0, 0) (the reference prints a warning and uses 0, 0); `task.parent` of an
//!   index-launch task, and `ipoint`/`ispace` of a single task, are errors.
//! - `m[i].has(MEM)` always fails in the reference (it reads the index list as
//!   one tuple and asserts it is an int), so it is an error here too.
//! - `IndexTaskMap * f;` registers the task name `*`, which no lookup ever
//!   asks for: it maps nothing ([`Evaluator::index_task_function`]).
//!
//! Where the reference asserts, crashes, divides by zero or reads out of
//! bounds, the evaluator returns an [`EvalError`] instead, with the span of
//! the expression or statement responsible. Integers are the reference's
//! 32-bit `int`: a result outside its range is an error rather than a silent
//! wrap-around.
//!
//! # Limits
//!
//! A mapper file may come from anyone, so evaluation is bounded ([`Limits`]):
//! the depth of function calls, the nesting of expression evaluation (which
//! bounds the Rust stack), a step budget per entry call (which bounds time
//! and memory: building a tuple or a machine model costs steps in proportion
//! to its size), and the size of the captured `print` output.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use mapwright_grammar::ast::{
    self, BinOp, Expr, ExprKind, MemKind, ParamType, Program, Prop, Stmt, StmtKind, TaskSel,
};
use mapwright_grammar::Span;

use crate::mspace::{MSpaceError, MachineModel, PhysicalProc, ProcKind, Selection};

/// The name the reference's parser turns into a machine-model constructor.
const MACHINE: &str = "Machine";

/// Launch domains in Legion have at most 9 dimensions; `auto_split` over
/// more than this many is refused (its enumeration recurses once per
/// dimension and its candidate count explodes).
const MAX_SPLIT_DIMS: usize = 16;

/// Nested values (tuples of tuples) deeper than this are not re-evaluated or
/// printed; only a pathological program builds them.
const MAX_VALUE_DEPTH: usize = 256;

/// Converts the grammar's processor kind into the runtime's.
pub fn proc_kind(kind: ast::ProcKind) -> ProcKind {
    match kind {
        ast::ProcKind::CPU => ProcKind::Cpu,
        ast::ProcKind::GPU => ProcKind::Gpu,
        ast::ProcKind::IO => ProcKind::Io,
        ast::ProcKind::PY => ProcKind::Py,
        ast::ProcKind::PROC => ProcKind::ProcSet,
        ast::ProcKind::OMP => ProcKind::Omp,
    }
}

// ---------------------------------------------------------------------------
// Machine shape, limits, tasks
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

/// A run-time value: one of the reference's node types.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `IntValType`.
    Int(i64),
    /// `BoolValType`.
    Bool(bool),
    /// `TupleIntType`: a tuple of ints. `proc` is the processor kind of the
    /// machine model it was indexed from (`m[i, j]`), `None` otherwise (the
    /// reference's `ALLPROC`).
    IntTuple {
        items: Vec<i64>,
        proc: Option<ProcKind>,
    },
    /// `SetTupleIntType`: the processors `m[i, *]` names, as physical
    /// (node, processor) points.
    PointSet {
        points: Vec<PhysicalProc>,
        proc: ProcKind,
    },
    /// `TupleExprType`: a tuple of arbitrary values.
    Tuple(Vec<Value>),
    /// `MSpaceType`: a machine model.
    Machine(Arc<MachineModel>),
    /// `TaskNodeType`.
    Task(Arc<TaskValue>),
    /// `ProcType`: a processor kind (`GPU`).
    Proc(ProcKind),
    /// `MemType`: a memory kind (`FBMEM`).
    Mem(MemKind),
    /// `StarExprType`: a lone `*`.
    Star,
    /// `UnpackExprType`: `*t`, spread when it lands in an index or argument
    /// list or a tuple.
    Unpack(Box<Value>),
    /// `FuncDefType`: the function defined by `program.stmts[stmt]`.
    Function { name: String, stmt: usize },
}

impl Value {
    /// The reference's node type name (`"IntValType"`), used in messages the
    /// reference prints.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "IntValType",
            Value::Bool(_) => "BoolValType",
            Value::IntTuple { .. } => "TupleIntType",
            Value::PointSet { .. } => "SetTupleIntType",
            Value::Tuple(_) => "TupleExprType",
            Value::Machine(_) => "MSpaceType",
            Value::Task(_) => "TaskNodeType",
            Value::Proc(_) => "ProcType",
            Value::Mem(_) => "MemType",
            Value::Star => "StarExprType",
            Value::Unpack(_) => "UnpackExprType",
            Value::Function { .. } => "FuncDefType",
        }
    }

    /// What the value is, in words for a user.
    pub fn describe(&self) -> &'static str {
        match self {
            Value::Int(_) => "an int",
            Value::Bool(_) => "a bool",
            Value::IntTuple { proc: Some(_), .. } => "a machine point",
            Value::IntTuple { .. } => "a tuple of ints",
            Value::PointSet { .. } => "a set of machine points",
            Value::Tuple(_) => "a tuple expression",
            Value::Machine(_) => "a machine model (MSpace)",
            Value::Task(_) => "a Task",
            Value::Proc(_) => "a processor kind",
            Value::Mem(_) => "a memory kind",
            Value::Star => "`*`",
            Value::Unpack(_) => "an unpacked tuple (`*t`)",
            Value::Function { .. } => "a function",
        }
    }

    /// A `TupleExpr` whose elements are all ints as a `TupleInt` (the
    /// reference's `Convert2TupleInt`); anything else unchanged.
    fn into_int_tuple(self) -> Value {
        match self {
            Value::Tuple(items) => match ints_of(&items) {
                Some(ints) => Value::IntTuple {
                    items: ints,
                    proc: None,
                },
                None => Value::Tuple(items),
            },
            other => other,
        }
    }

    /// The type tag compared by binary operators.
    fn same_type(&self, other: &Value) -> bool {
        self.type_name() == other.type_name()
    }
}

fn ints_of(items: &[Value]) -> Option<Vec<i64>> {
    items
        .iter()
        .map(|v| match v {
            Value::Int(i) => Some(*i),
            _ => None,
        })
        .collect()
}

fn join_ints(items: &[i64], sep: &str) -> String {
    items
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

/// DSL-like rendering, for hovers and messages (`print` uses the reference's
/// own format instead).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Value::IntTuple { items, proc } => {
                write!(f, "({})", join_ints(items, ", "))?;
                match proc {
                    Some(k) => write!(f, " on {k}"),
                    None => Ok(()),
                }
            }
            Value::PointSet { points, proc } => {
                let pts: Vec<String> = points.iter().map(|(n, p)| format!("({n}, {p})")).collect();
                write!(f, "{{{}}} on {proc}", pts.join(", "))
            }
            Value::Tuple(items) => {
                f.write_str("(")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    // Shallow: nested tuples are shown as `(...)`, so that
                    // formatting never recurses deeply.
                    match v {
                        Value::Tuple(_) => f.write_str("(...)")?,
                        other => write!(f, "{other}")?,
                    }
                }
                f.write_str(")")
            }
            Value::Machine(m) => write!(
                f,
                "Machine({}) of size ({})",
                m.kind(),
                join_ints(m.size(), ", ")
            ),
            Value::Task(t) => write!(f, "Task {}", t.name()),
            Value::Proc(k) => write!(f, "{k}"),
            Value::Mem(m) => write!(f, "{m}"),
            Value::Star => f.write_str("*"),
            Value::Unpack(v) => match v.as_ref() {
                Value::Tuple(_) => f.write_str("*(...)"),
                other => write!(f, "*{other}"),
            },
            Value::Function { name, .. } => write!(f, "function {name}"),
        }
    }
}

// ---------------------------------------------------------------------------
// Errors, warnings, results
// ---------------------------------------------------------------------------

/// What went wrong, for callers that react to the kind of error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EvalErrorKind {
    /// The program has a statement that did not parse.
    Syntax,
    /// A name that is neither local nor global ("x not found").
    UndefinedName,
    /// Operands of different types ("type mismatch!!").
    TypeMismatch,
    /// An operator, property or method the value does not support.
    Unsupported,
    /// A value of the wrong type where a specific one is needed.
    WrongType,
    /// Integer division or modulo by zero.
    DivisionByZero,
    /// A result outside the reference's 32-bit `int`.
    Overflow,
    /// Tuples of different lengths in an element-wise operation.
    DimensionMismatch,
    /// A tuple index or slice bound out of range.
    IndexOutOfBound,
    /// A call with the wrong number of arguments ("argument number mismatch!").
    ArgumentCount,
    /// A call argument of the wrong type for its parameter.
    ArgumentType,
    /// Calling something that is not a function.
    NotAFunction,
    /// A function ran off its end ("Error: function without return").
    NoReturn,
    /// A function returned a value the reference cannot return.
    BadReturn,
    /// An assignment of a value the reference cannot store ("Cannot Assign").
    CannotAssign,
    /// Re-assigning a global ("AssignNode multiple X cause conflicts").
    GlobalConflict,
    /// `IndexTaskMap`/`SingleTaskMap` naming an undefined function.
    UndefinedFunction,
    /// An entry function not of the form `f(Task t)`.
    EntrySignature,
    /// No `IndexTaskMap`/`SingleTaskMap` applies to the task.
    NoMappingFunction,
    /// An entry function returned something other than a machine point.
    BadMappingResult,
    /// The machine point is of another processor kind than the task's.
    WrongProcessorKind,
    /// A machine-model operation failed (see [`EvalError::mspace`]).
    MachineModel,
    /// `print` has fewer arguments than `{}` ("Not enough arguments for print()").
    PrintArguments,
    /// A comprehension outside a function, or over something that is not a
    /// tuple written in the source.
    Comprehension,
    /// A task property the task does not have (`parent` of an index task...).
    TaskProperty,
    /// Too many nested function calls.
    CallDepth,
    /// Expression evaluation nested too deeply.
    Nesting,
    /// The step budget ran out.
    StepLimit,
}

/// An evaluation error: what the reference would have printed (or, where it
/// prints nothing before crashing, what went wrong), and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EvalError {
    /// The kind of error.
    pub kind: EvalErrorKind,
    /// The message, phrased like the reference's output where it has one.
    pub message: String,
    /// The expression or statement responsible.
    pub span: Span,
    /// The user-function calls that were active, outermost first: function
    /// name and call-site span (the entry function's definition for the
    /// entry call).
    pub call_stack: Vec<(String, Span)>,
    /// The machine-model error, for [`EvalErrorKind::MachineModel`].
    pub mspace: Option<Box<MSpaceError>>,
}

/// Errors travel boxed inside the interpreter: a `Result` of a value and a
/// boxed error is half the size of one with the error inline, and the
/// recursive evaluation functions hold many of them (debug builds give each
/// its own stack slot).
type Failure = Box<EvalError>;
type R<T> = Result<T, Failure>;

/// A message the reference prints without stopping (a `split` factor that
/// does not divide the extent, `task.processor` of an index task).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalWarning {
    /// The reference's text.
    pub message: String,
    /// Where it happened.
    pub span: Span,
}

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

// ---------------------------------------------------------------------------
// The evaluator
// ---------------------------------------------------------------------------

/// A name's binding in a local frame: a value, or (for a comprehension
/// variable iterating over a tuple expression) the unevaluated element, which
/// the reference evaluates each time the variable is used.
#[derive(Debug, Clone)]
enum Binding<'p> {
    Value(Value),
    Lazy(&'p Expr),
}

type Frame<'p> = HashMap<String, Binding<'p>>;

/// Everything that persists between entry calls.
#[derive(Debug, Clone)]
struct State {
    machine: MachineShape,
    limits: Limits,
    globals: HashMap<String, Value>,
    global_order: Vec<String>,
    output: String,
    output_truncated: bool,
    warnings: Vec<EvalWarning>,
    mapping: Vec<MappingStmt>,
    /// `IndexTaskMap` key (task name, `*`, or `CPU`/`GPU`/`OMP`) -> function;
    /// first statement wins.
    index_funcs: HashMap<String, String>,
    single_funcs: HashMap<String, String>,
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
    program: Arc<Program>,
    state: State,
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
        match Self::new_partial(program, machine, limits) {
            (ev, None) => Ok(ev),
            (_, Some(err)) => Err(err),
        }
    }

    /// Runs the top level and returns the evaluator even if a statement
    /// failed, with the error: the globals, output and mapping statements
    /// before the failure stay available (a language server shows them).
    pub fn new_partial(
        program: &Program,
        machine: &MachineShape,
        limits: Limits,
    ) -> (Evaluator, Option<EvalError>) {
        let mut ev = Evaluator {
            program: Arc::new(program.clone()),
            state: State {
                machine: machine.clone(),
                limits,
                globals: HashMap::new(),
                global_order: Vec::new(),
                output: String::new(),
                output_truncated: false,
                warnings: Vec::new(),
                mapping: Vec::new(),
                index_funcs: HashMap::new(),
                single_funcs: HashMap::new(),
            },
        };
        let err = ev.run_top_level().err().map(|e| *e);
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

    fn run_top_level(&mut self) -> R<()> {
        let program = Arc::clone(&self.program);
        check_comprehension_ranges(&program)?;
        let mut it = Interp::new(&program, &mut self.state);
        for index in 0..program.stmts.len() {
            it.exec_top(index)?;
        }
        Ok(())
    }

    /// The program being evaluated.
    pub fn program(&self) -> &Program {
        &self.program
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
        let program = Arc::clone(&self.program);
        let mut it = Interp::new(&program, &mut self.state);
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
        let program = Arc::clone(&self.program);
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
            Some(Value::Function { stmt, .. }) => match program.stmts.get(*stmt) {
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
        let mut it = Interp::new(&program, &mut self.state);
        let mut frame = Frame::new();
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
enum EntryKind {
    Index,
    Single,
}

impl EntryKind {
    fn stmt(self) -> &'static str {
        match self {
            EntryKind::Index => "IndexTaskMap",
            EntryKind::Single => "SingleTaskMap",
        }
    }

    /// The reference words the two checks differently.
    fn signature_message(self) -> &'static str {
        match self {
            EntryKind::Index => "Entry mapping function's definition must be like func(Task t)",
            EntryKind::Single => "Entry mapping function's must be like func(Task t)",
        }
    }
}

fn lookup_entry<'a>(
    table: &'a HashMap<String, String>,
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

fn bare_error(kind: EvalErrorKind, message: impl Into<String>) -> EvalError {
    EvalError {
        kind,
        message: message.into(),
        span: Span::default(),
        call_stack: Vec::new(),
        mspace: None,
    }
}

fn fits_int(v: i64) -> bool {
    (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&v)
}

/// `(e)` is `e` in the reference's tree.
fn strip_parens(mut e: &Expr) -> &Expr {
    while let ExprKind::Paren(inner) = &e.kind {
        e = inner;
    }
    e
}

/// The values of a tuple literal whose elements are all integer literals:
/// the reference's parser turns such a tuple into a `TupleInt`.
fn int_literals(items: &[Expr]) -> Option<Vec<i64>> {
    items
        .iter()
        .map(|e| match strip_parens(e).kind {
            ExprKind::Int(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// The reference checks, while parsing, that a comprehension iterates over a
/// tuple written in the source; a file that breaks the rule never runs.
fn check_comprehension_ranges(program: &Program) -> R<()> {
    let mut stmts: Vec<&Stmt> = program.stmts.iter().collect();
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

/// An upper bound on the candidates `auto_split` of `number` over `dims`
/// dimensions enumerates (product over prime powers `p^k` of
/// `C(k + dims - 1, k)`), to charge the step budget before running it.
fn split_candidates(number: i64, dims: usize) -> u64 {
    // Above the reference's prime table `auto_split` fails at once.
    if !(2..=131 * 131).contains(&number) {
        return 1;
    }
    let mut n = number;
    let mut total: u64 = 1;
    let mut p = 2i64;
    while n > 1 && p.saturating_mul(p) <= n {
        let mut k = 0u64;
        while n % p == 0 {
            n /= p;
            k += 1;
        }
        total = total.saturating_mul(binomial(k + dims as u64 - 1, k));
        p += 1;
    }
    if n > 1 {
        total = total.saturating_mul(dims as u64);
    }
    total
}

fn binomial(n: u64, k: u64) -> u64 {
    let mut c: u64 = 1;
    for i in 1..=k {
        c = match c.checked_mul(n - k + i) {
            Some(v) => v / i,
            None => return u64::MAX,
        };
    }
    c
}

// ---------------------------------------------------------------------------
// The interpreter proper
// ---------------------------------------------------------------------------

/// One evaluation (the top level or one entry call): the reference's
/// `local_symbol` stack plus the bookkeeping for limits and errors.
struct Interp<'p, 's> {
    program: &'p Program,
    st: &'s mut State,
    frames: Vec<Frame<'p>>,
    calls: Vec<(String, Span)>,
    nesting: usize,
    steps: u64,
}

impl<'p, 's> Interp<'p, 's> {
    fn new(program: &'p Program, st: &'s mut State) -> Self {
        Interp {
            program,
            st,
            frames: Vec::new(),
            calls: Vec::new(),
            nesting: 0,
            steps: 0,
        }
    }

    fn error(&self, kind: EvalErrorKind, span: Span, message: impl Into<String>) -> Failure {
        Box::new(EvalError {
            kind,
            message: message.into(),
            span,
            call_stack: self.calls.clone(),
            mspace: None,
        })
    }

    fn fail<T>(&self, kind: EvalErrorKind, span: Span, message: impl Into<String>) -> R<T> {
        Err(self.error(kind, span, message))
    }

    fn mspace_error(&self, err: MSpaceError, span: Span) -> Failure {
        let mut e = self.error(EvalErrorKind::MachineModel, span, err.to_string());
        e.mspace = Some(Box::new(err));
        e
    }

    /// Charges `n` steps to the budget.
    fn tick(&mut self, n: u64, span: Span) -> R<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.st.limits.max_steps {
            return self.fail(
                EvalErrorKind::StepLimit,
                span,
                format!(
                    "evaluation exceeded {} steps: the mapper does not finish in reasonable time (unbounded recursion or a huge computation?)",
                    self.st.limits.max_steps
                ),
            );
        }
        Ok(())
    }

    fn int(&self, v: i64, span: Span) -> R<Value> {
        if fits_int(v) {
            Ok(Value::Int(v))
        } else {
            self.fail(
                EvalErrorKind::Overflow,
                span,
                format!("integer overflow: {v} does not fit the reference's 32-bit int"),
            )
        }
    }

    fn write_output(&mut self, text: &str) {
        if self.st.output_truncated {
            return;
        }
        let room = self
            .st
            .limits
            .max_output
            .saturating_sub(self.st.output.len());
        if text.len() <= room {
            self.st.output.push_str(text);
        } else {
            let mut cut = room;
            while cut > 0 && !text.is_char_boundary(cut) {
                cut -= 1;
            }
            self.st.output.push_str(&text[..cut]);
            self.st.output.push_str("\n[output truncated]\n");
            self.st.output_truncated = true;
        }
    }

    // ----- statements ---------------------------------------------------

    /// Runs top-level statement `index` (the reference's `Stmt::run` with an
    /// empty local stack).
    fn exec_top(&mut self, index: usize) -> R<()> {
        let program = self.program;
        let Some(stmt) = program.stmts.get(index) else {
            return Ok(());
        };
        self.tick(1, stmt.span)?;
        let record = |st: &mut State, kind| st.mapping.push(MappingStmt { stmt: index, kind });
        match &stmt.kind {
            StmtKind::Assign { name, value } => {
                let v = self.eval(value)?;
                self.check_assignable(&v, value.span)?;
                if self.st.globals.contains_key(&name.name) {
                    return self.fail(
                        EvalErrorKind::GlobalConflict,
                        name.span,
                        format!(
                            "AssignNode multiple {} cause conflicts in global_symbol!",
                            name.name
                        ),
                    );
                }
                self.define_global(&name.name, v);
            }
            StmtKind::Print { format, args, .. } => self.print(format, args, stmt.span)?,
            StmtKind::FuncDef { name, .. } => {
                // First definition wins, silently (FuncDefNode::run).
                if !self.st.globals.contains_key(&name.name) {
                    self.define_global(
                        &name.name,
                        Value::Function {
                            name: name.name.clone(),
                            stmt: index,
                        },
                    );
                }
            }
            StmtKind::IndexTaskMap { tasks, func } => {
                self.register_entry(EntryKind::Index, tasks, func)?;
                record(self.st, MappingKind::IndexTaskMap);
            }
            StmtKind::SingleTaskMap { tasks, func } => {
                self.register_entry(EntryKind::Single, tasks, func)?;
                record(self.st, MappingKind::SingleTaskMap);
            }
            StmtKind::Task { .. } => record(self.st, MappingKind::Task),
            StmtKind::Region { .. } => record(self.st, MappingKind::Region),
            StmtKind::Layout { .. } => record(self.st, MappingKind::Layout),
            StmtKind::InstanceLimit { .. } => record(self.st, MappingKind::InstanceLimit),
            StmtKind::CollectMemory { .. } => record(self.st, MappingKind::CollectMemory),
            StmtKind::ControlReplicate { .. } => record(self.st, MappingKind::ControlReplicate),
            StmtKind::Return { .. } => {
                return self.fail(
                    EvalErrorKind::Syntax,
                    stmt.span,
                    "`return` outside a function",
                )
            }
            StmtKind::Error => {
                return self.fail(
                    EvalErrorKind::Syntax,
                    stmt.span,
                    "this statement did not parse",
                )
            }
        }
        Ok(())
    }

    fn define_global(&mut self, name: &str, v: Value) {
        self.st.global_order.push(name.to_string());
        self.st.globals.insert(name.to_string(), v);
    }

    /// `IndexTaskMap`/`SingleTaskMap`: the function must exist already and
    /// take one `Task`; each task key maps to the first function given.
    fn register_entry(&mut self, entry: EntryKind, tasks: &TaskSel, func: &ast::Ident) -> R<()> {
        let stmt = match self.st.globals.get(&func.name) {
            None => {
                return self.fail(
                    EvalErrorKind::UndefinedFunction,
                    func.span,
                    format!(
                        "{}'s function undefined: `{}` is not defined before this statement",
                        entry.stmt(),
                        func.name
                    ),
                )
            }
            Some(Value::Function { stmt, .. }) => *stmt,
            Some(other) => {
                return self.fail(
                    EvalErrorKind::UndefinedFunction,
                    func.span,
                    format!(
                        "{}'s mapping function is undefined: `{}` is {}",
                        entry.stmt(),
                        func.name,
                        other.describe()
                    ),
                )
            }
        };
        let keys: Vec<String> = match tasks {
            TaskSel::Star(_) => vec![String::from("*")],
            TaskSel::Names(names) => names.iter().map(|n| n.name.clone()).collect(),
            TaskSel::Kind(k, _) => vec![k.name().to_string()],
        };
        let table = match entry {
            EntryKind::Index => &mut self.st.index_funcs,
            EntryKind::Single => &mut self.st.single_funcs,
        };
        for key in keys {
            table.entry(key).or_insert_with(|| func.name.clone());
        }
        let ok = matches!(
            self.program.stmts.get(stmt),
            Some(Stmt { kind: StmtKind::FuncDef { params, .. }, .. })
                if params.len() == 1 && params.first().is_some_and(|p| p.ty == ParamType::Task)
        );
        if !ok {
            return self.fail(
                EvalErrorKind::EntrySignature,
                func.span,
                entry.signature_message(),
            );
        }
        Ok(())
    }

    fn check_assignable(&self, v: &Value, span: Span) -> R<()> {
        match v {
            Value::Int(_)
            | Value::Bool(_)
            | Value::Machine(_)
            | Value::Tuple(_)
            | Value::IntTuple { .. }
            | Value::Task(_) => Ok(()),
            other => self.fail(
                EvalErrorKind::CannotAssign,
                span,
                format!(
                    "Cannot Assign {} ({} cannot be stored in a variable)",
                    other.type_name(),
                    other.describe()
                ),
            ),
        }
    }

    /// `print("...{}...", args)`: each `{}` prints the next argument in the
    /// reference's format; arguments without a `{}` are never evaluated.
    fn print(&mut self, format: &str, args: &'p [Expr], span: Span) -> R<()> {
        let mut rest = format;
        let mut i = 0usize;
        while let Some(pos) = rest.find("{}") {
            let (before, after) = rest.split_at(pos);
            self.write_output(before);
            let Some(arg) = args.get(i) else {
                return Err(self.print_arguments_error(args.len(), span));
            };
            let v = self.eval(arg)?;
            self.write_value(&v);
            rest = after.get(2..).unwrap_or("");
            i += 1;
        }
        self.write_output(rest);
        self.write_output("\n");
        Ok(())
    }

    fn write_value(&mut self, v: &Value) {
        let mut text = String::new();
        reference_print(v, self.program, &mut text, 0);
        self.write_output(&text);
    }

    #[cold]
    #[inline(never)]
    fn print_arguments_error(&self, count: usize, span: Span) -> Failure {
        self.error(
            EvalErrorKind::PrintArguments,
            span,
            format!(
                "Not enough arguments for print(): the format has more `{{}}` than the {count} argument(s)"
            ),
        )
    }

    /// Runs a function body in the current (already pushed) frame
    /// (`FuncDefNode::invoked`).
    fn run_body(&mut self, body: &'p [Stmt], def_span: Span) -> R<Value> {
        for stmt in body {
            self.tick(1, stmt.span)?;
            match &stmt.kind {
                StmtKind::Return { value } => {
                    let v = self.eval(value)?;
                    return self.check_return(v, value.span);
                }
                StmtKind::Assign { name, value } => {
                    let v = self.eval(value)?;
                    self.assign_local(&name.name, v, value.span)?;
                }
                StmtKind::Print { format, args, .. } => self.print(format, args, stmt.span)?,
                _ => {
                    return self.fail(
                        EvalErrorKind::Syntax,
                        stmt.span,
                        "only assignments, `return` and `print` can appear in a function body",
                    )
                }
            }
        }
        self.fail(
            EvalErrorKind::NoReturn,
            def_span,
            "Error: function without return",
        )
    }

    fn check_return(&self, v: Value, span: Span) -> R<Value> {
        match v {
            Value::Tuple(_)
            | Value::IntTuple { .. }
            | Value::PointSet { .. }
            | Value::Int(_)
            | Value::Bool(_) => Ok(v),
            other => self.fail(
                EvalErrorKind::BadReturn,
                span,
                format!(
                    "a function can return only an int, a bool or a tuple; this returns {} ({})",
                    other.describe(),
                    other.type_name()
                ),
            ),
        }
    }

    fn assign_local(&mut self, name: &str, v: Value, span: Span) -> R<()> {
        self.check_assignable(&v, span)?;
        // unordered_map::insert: the first assignment of a local (or the
        // parameter) wins; later ones are ignored.
        if let Some(top) = self.frames.last_mut() {
            top.entry(name.to_string()).or_insert(Binding::Value(v));
        }
        Ok(())
    }

    /// Pushes a call frame and runs `body`.
    fn enter(
        &mut self,
        name: String,
        call_span: Span,
        frame: Frame<'p>,
        body: &'p [Stmt],
        def_span: Span,
    ) -> R<Value> {
        if self.calls.len() >= self.st.limits.max_call_depth {
            return Err(self.call_depth_error(&name, call_span));
        }
        self.calls.push((name, call_span));
        self.frames.push(frame);
        let r = self.run_body(body, def_span);
        self.frames.pop();
        self.calls.pop();
        r
    }

    #[cold]
    #[inline(never)]
    fn call_depth_error(&self, name: &str, span: Span) -> Failure {
        self.error(
            EvalErrorKind::CallDepth,
            span,
            format!(
                "call depth exceeds {} when calling `{name}`: unbounded recursion (the reference would overflow its stack)",
                self.st.limits.max_call_depth
            ),
        )
    }

    /// Calls a user function with evaluated arguments (`FuncInvokeNode::run`,
    /// user-defined branch).
    fn invoke(&mut self, f: Value, args: Vec<(Value, Span)>, span: Span) -> R<Value> {
        let (name, frame, body, def_span) = self.bind_call(f, args, span)?;
        self.enter(name, span, frame, body, def_span)
    }

    /// Checks a call's arguments against the callee's parameters and builds
    /// its frame.
    #[allow(clippy::type_complexity)]
    fn bind_call(
        &mut self,
        f: Value,
        args: Vec<(Value, Span)>,
        span: Span,
    ) -> R<(String, Frame<'p>, &'p [Stmt], Span)> {
        let program = self.program;
        let (name, stmt) = match f {
            Value::Function { name, stmt } => (name, stmt),
            other => {
                return self.fail(
                    EvalErrorKind::NotAFunction,
                    span,
                    format!("only functions can be called; this is {}", other.describe()),
                )
            }
        };
        let Some(Stmt {
            kind:
                StmtKind::FuncDef {
                    name: def_name,
                    params,
                    body,
                    ..
                },
            ..
        }) = program.stmts.get(stmt)
        else {
            return self.fail(EvalErrorKind::NotAFunction, span, "unknown function");
        };
        if params.len() != args.len() {
            return self.fail(
                EvalErrorKind::ArgumentCount,
                span,
                format!(
                    "argument number mismatch! `{name}` takes {} argument(s), {} given",
                    params.len(),
                    args.len()
                ),
            );
        }
        let mut frame = Frame::new();
        for (i, (param, (arg, arg_span))) in params.iter().zip(args).enumerate() {
            let arg_span = if arg_span == Span::default() {
                span
            } else {
                arg_span
            };
            let v = self.rerun(&arg, arg_span, 0)?;
            let ok = match param.ty {
                ParamType::Int => matches!(v, Value::Int(_)),
                ParamType::Bool => matches!(v, Value::Bool(_)),
                ParamType::IPoint | ParamType::ISpace => matches!(v, Value::IntTuple { .. }),
                ParamType::MSpace => matches!(v, Value::Machine(_)),
                ParamType::Task => false,
            };
            if !ok {
                let hint = match (param.ty, &v) {
                    (ParamType::Task, _) => String::from(
                        ": the reference cannot pass a Task to a called function (its argument check has no case for Task); pass task.ipoint, task.ispace or other values instead",
                    ),
                    (ParamType::IPoint | ParamType::ISpace, Value::Tuple(items))
                        if ints_of(items).is_some() =>
                    {
                        String::from(
                            ": a tuple built from non-literal elements is a TupleExpr, which the reference does not accept as IPoint/ISpace; compute it with arithmetic instead (e.g. `t + (0, 0)`)",
                        )
                    }
                    _ => String::new(),
                };
                return self.fail(
                    EvalErrorKind::ArgumentType,
                    arg_span,
                    format!(
                        "argument {} of `{name}` (`{}`) must be {}, got {} ({}){hint}",
                        i + 1,
                        param.name.name,
                        param.ty.name(),
                        v.describe(),
                        v.type_name()
                    ),
                );
            }
            frame
                .entry(param.name.name.clone())
                .or_insert(Binding::Value(v));
        }
        Ok((name, frame, body, def_name.span))
    }

    // ----- expressions --------------------------------------------------

    fn eval(&mut self, e: &'p Expr) -> R<Value> {
        if self.nesting >= self.st.limits.max_nesting {
            return Err(self.nesting_error(e.span));
        }
        self.tick(1, e.span)?;
        self.nesting += 1;
        let r = self.eval_kind(e);
        self.nesting -= 1;
        r
    }

    #[cold]
    #[inline(never)]
    fn nesting_error(&self, span: Span) -> Failure {
        self.error(
            EvalErrorKind::Nesting,
            span,
            format!(
                "expression evaluation nested more than {} levels deep",
                self.st.limits.max_nesting
            ),
        )
    }

    /// One arm per expression form.
    ///
    /// Stack discipline: the functions that stay on the stack while a
    /// sub-expression is evaluated (this one, `eval`, `eval_binary`,
    /// `eval_call`, `invoke`, `run_body`...) only evaluate their children and
    /// hand the values to non-recursive helpers, which hold the big matches
    /// and the message formatting. In a debug build every `format!` reserves
    /// stack in its function's frame, and the frames of the recursive
    /// functions are what the nesting limit multiplies.
    fn eval_kind(&mut self, e: &'p Expr) -> R<Value> {
        let span = e.span;
        match &e.kind {
            ExprKind::Int(n) => self.int(*n, span),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Name(n) if n == MACHINE => self.fail(
                EvalErrorKind::WrongType,
                span,
                "`Machine` builds a machine model only when called with a processor kind, e.g. `Machine(GPU)`",
            ),
            ExprKind::Name(n) => self.lookup(n, span),
            ExprKind::Proc(k) => Ok(Value::Proc(proc_kind(*k))),
            ExprKind::Mem(m) => Ok(Value::Mem(*m)),
            ExprKind::Star => Ok(Value::Star),
            ExprKind::Unpack(inner) => self.eval_unpack(inner, span),
            ExprKind::Neg(inner) => self.eval_neg(inner, span),
            ExprKind::Binary { op, lhs, rhs, .. } => self.eval_binary(*op, lhs, rhs, span),
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
                ..
            } => self.eval_ternary(cond, then, otherwise),
            ExprKind::Paren(inner) => self.eval(inner),
            ExprKind::Tuple(items) => self.eval_tuple(items, span),
            ExprKind::Call { callee, args } => self.eval_call(callee, args, span),
            ExprKind::Index { base, indices } => self.eval_index(base, indices, span),
            ExprKind::Slice { base, lo, hi, .. } => {
                self.eval_slice(base, lo.as_deref(), hi.as_deref(), span)
            }
            ExprKind::Prop { base, prop, .. } => self.eval_prop(base, *prop, span),
            ExprKind::Comprehension { body, var, iter } => {
                self.eval_comprehension(body, &var.name, iter, span)
            }
        }
    }

    /// `IdentifierExprNode::run`: the innermost frame, then the globals. A
    /// stored value is "run" again (a tuple expression re-spreads its unpacked
    /// elements); a lazy comprehension element is evaluated here and now.
    fn lookup(&mut self, name: &str, span: Span) -> R<Value> {
        let binding = self.frames.last().and_then(|top| top.get(name)).cloned();
        match binding {
            Some(Binding::Value(v)) => self.rerun(&v, span, 0),
            Some(Binding::Lazy(e)) => self.eval(e),
            None => match self.st.globals.get(name).cloned() {
                Some(v) => self.rerun(&v, span, 0),
                None => Err(self.undefined_name(name, span)),
            },
        }
    }

    #[cold]
    #[inline(never)]
    fn undefined_name(&self, name: &str, span: Span) -> Failure {
        self.error(
            EvalErrorKind::UndefinedName,
            span,
            format!("{name} not found"),
        )
    }

    /// "Running" a value node again, as the reference does on every variable
    /// read and call argument: identity, except that a tuple expression is
    /// rebuilt (spreading `Unpack` elements) and an unpack re-checks its
    /// operand.
    fn rerun(&mut self, v: &Value, span: Span, depth: usize) -> R<Value> {
        match v {
            Value::Tuple(items) => {
                if depth > MAX_VALUE_DEPTH {
                    return self.fail(EvalErrorKind::Nesting, span, "tuple nested too deeply");
                }
                self.tick(items.len() as u64, span)?;
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let r = self.rerun(item, span, depth + 1)?;
                    self.push_spread(r, &mut out, span, depth + 1)?;
                }
                Ok(Value::Tuple(out))
            }
            Value::Unpack(inner) => {
                if depth > MAX_VALUE_DEPTH {
                    return self.fail(EvalErrorKind::Nesting, span, "tuple nested too deeply");
                }
                let r = self.rerun(inner, span, depth + 1)?;
                self.make_unpack(r, span)
            }
            other => Ok(other.clone()),
        }
    }

    fn make_unpack(&self, v: Value, span: Span) -> R<Value> {
        match v {
            Value::Tuple(_) | Value::IntTuple { .. } | Value::PointSet { .. } => {
                Ok(Value::Unpack(Box::new(v)))
            }
            other => self.fail(
                EvalErrorKind::WrongType,
                span,
                format!(
                    "`*` unpacks a tuple, but this is {} ({})",
                    other.describe(),
                    other.type_name()
                ),
            ),
        }
    }

    /// Appends `v` to a list being built (`TupleExprNode::run`): an unpacked
    /// tuple contributes its elements.
    fn push_spread(&mut self, v: Value, out: &mut Vec<Value>, span: Span, depth: usize) -> R<()> {
        match v {
            Value::Unpack(inner) => match *inner {
                Value::Tuple(elems) => {
                    self.tick(elems.len() as u64, span)?;
                    for e in &elems {
                        let r = self.rerun(e, span, depth + 1)?;
                        out.push(r);
                    }
                    Ok(())
                }
                Value::IntTuple { items, .. } => {
                    self.tick(items.len() as u64, span)?;
                    out.extend(items.into_iter().map(Value::Int));
                    Ok(())
                }
                other => self.fail(
                    EvalErrorKind::WrongType,
                    span,
                    format!(
                        "Unsupported node type after UnpackingNode*: {} ({}) cannot be spread here",
                        other.type_name(),
                        other.describe()
                    ),
                ),
            },
            v => {
                out.push(v);
                Ok(())
            }
        }
    }

    /// Evaluates a list (tuple elements, call arguments, index list) with
    /// unpacked tuples spread; each value keeps the span of its expression.
    fn eval_list(&mut self, items: &'p [Expr]) -> R<Vec<(Value, Span)>> {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let v = self.eval(item)?;
            let mut spread = Vec::new();
            self.push_spread(v, &mut spread, item.span, 0)?;
            out.extend(spread.into_iter().map(|v| (v, item.span)));
        }
        Ok(out)
    }

    fn eval_unpack(&mut self, inner: &'p Expr, span: Span) -> R<Value> {
        let v = self.eval(inner)?;
        self.make_unpack(v, span)
    }

    /// `-e`: the reference looks at the *unevaluated* operand and negates only
    /// an integer literal or a tuple of integer literals.
    fn eval_neg(&mut self, inner: &'p Expr, span: Span) -> R<Value> {
        match &strip_parens(inner).kind {
            ExprKind::Int(n) => self.int(-*n, span),
            ExprKind::Tuple(items) => match int_literals(items) {
                Some(ints) => {
                    let mut neg = Vec::with_capacity(ints.len());
                    for n in ints {
                        if !fits_int(n) || !fits_int(-n) {
                            return self.fail(
                                EvalErrorKind::Overflow,
                                span,
                                format!("integer overflow: -({n}) does not fit the reference's 32-bit int"),
                            );
                        }
                        neg.push(-n);
                    }
                    Ok(Value::IntTuple {
                        items: neg,
                        proc: None,
                    })
                }
                None => self.fail(
                    EvalErrorKind::Unsupported,
                    span,
                    "We can only negate IntValType inside TupleExprNode: the reference negates only tuples of integer literals",
                ),
            },
            _ => self.fail(
                EvalErrorKind::Unsupported,
                span,
                "Negating node must be applied to Int/TupleExpr/TupleInt: the reference negates only literals (it crashes on `-x`); write `0 - x` instead",
            ),
        }
    }

    fn eval_ternary(&mut self, cond: &'p Expr, then: &'p Expr, otherwise: &'p Expr) -> R<Value> {
        match self.eval(cond)? {
            Value::Bool(true) => self.eval(then),
            Value::Bool(false) => self.eval(otherwise),
            other => Err(self.condition_error(&other, cond.span)),
        }
    }

    #[cold]
    #[inline(never)]
    fn condition_error(&self, v: &Value, span: Span) -> Failure {
        self.error(
            EvalErrorKind::WrongType,
            span,
            format!(
                "the condition of `?:` must be a bool, got {} ({})",
                v.describe(),
                v.type_name()
            ),
        )
    }

    fn eval_tuple(&mut self, items: &'p [Expr], span: Span) -> R<Value> {
        // A tuple of integer literals is a TupleInt already in the parser.
        if let Some(ints) = int_literals(items) {
            return self.int_tuple_literal(ints, span);
        }
        let values = self.eval_list(items)?;
        Ok(Value::Tuple(values.into_iter().map(|(v, _)| v).collect()))
    }

    fn int_tuple_literal(&self, ints: Vec<i64>, span: Span) -> R<Value> {
        if let Some(&bad) = ints.iter().find(|&&n| !fits_int(n)) {
            return self.fail(
                EvalErrorKind::Overflow,
                span,
                format!("integer overflow: {bad} does not fit the reference's 32-bit int"),
            );
        }
        Ok(Value::IntTuple {
            items: ints,
            proc: None,
        })
    }

    /// `BinaryExprNode::run`: both operands always (no short circuit).
    fn eval_binary(&mut self, op: BinOp, lhs: &'p Expr, rhs: &'p Expr, span: Span) -> R<Value> {
        let l = self.eval(lhs)?;
        let r = self.eval(rhs)?;
        self.binary_values(op, l, r, span)
    }

    /// Tuple expressions of ints are converted, then the types must agree.
    fn binary_values(&mut self, op: BinOp, l: Value, r: Value, span: Span) -> R<Value> {
        let l = l.into_int_tuple();
        let r = r.into_int_tuple();
        if !l.same_type(&r) {
            return self.fail(
                EvalErrorKind::TypeMismatch,
                span,
                format!(
                    "type mismatch!! `{}` between {} ({}) and {} ({})",
                    op.text(),
                    l.describe(),
                    l.type_name(),
                    r.describe(),
                    r.type_name()
                ),
            );
        }
        match (l, r) {
            (Value::Bool(a), Value::Bool(b)) => match op {
                BinOp::Eq => Ok(Value::Bool(a == b)),
                BinOp::Ne => Ok(Value::Bool(a != b)),
                BinOp::Or => Ok(Value::Bool(a || b)),
                BinOp::And => Ok(Value::Bool(a && b)),
                _ => self.fail(
                    EvalErrorKind::Unsupported,
                    span,
                    format!(
                        "Unsupported binary operator for Boolean variable: `{}`",
                        op.text()
                    ),
                ),
            },
            (Value::Int(a), Value::Int(b)) => self.int_op(op, a, b, span),
            (Value::IntTuple { items: a, .. }, Value::IntTuple { items: b, .. }) => {
                if a.len() != b.len() {
                    return self.fail(
                        EvalErrorKind::DimensionMismatch,
                        span,
                        format!(
                            "Dimension mismatch in TupleIntNode's binary operation: {} vs {} elements",
                            a.len(),
                            b.len()
                        ),
                    );
                }
                self.tick(a.len() as u64, span)?;
                let mut out = Vec::with_capacity(a.len());
                for (x, y) in a.into_iter().zip(b) {
                    if !matches!(
                        op,
                        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod
                    ) {
                        return self.fail(
                            EvalErrorKind::Unsupported,
                            span,
                            format!(
                                "Unsupported binary operator for TupleIntNode: `{}` (tuples support + - * / % element-wise)",
                                op.text()
                            ),
                        );
                    }
                    match self.int_op(op, x, y, span)? {
                        Value::Int(v) => out.push(v),
                        _ => return self.fail(EvalErrorKind::Unsupported, span, "tuple operation"),
                    }
                }
                Ok(Value::IntTuple {
                    items: out,
                    proc: None,
                })
            }
            (Value::Tuple(a), Value::Tuple(b)) => {
                if a.len() != b.len() {
                    self.fail(
                        EvalErrorKind::DimensionMismatch,
                        span,
                        format!(
                            "Dimension mismatch in TupleExprNode's binary operator: {} vs {} elements",
                            a.len(),
                            b.len()
                        ),
                    )
                } else {
                    self.fail(
                        EvalErrorKind::Unsupported,
                        span,
                        "Only IntValType inside TupleExprNode is allowed in binary operation",
                    )
                }
            }
            (l, _) => self.fail(
                EvalErrorKind::Unsupported,
                span,
                format!(
                    "Unsupported operator type in BinaryExprNode: `{}` on {} ({})",
                    op.text(),
                    l.describe(),
                    l.type_name()
                ),
            ),
        }
    }

    /// `IntValNode::binary_op`, with C's truncating `/` and `%`.
    fn int_op(&self, op: BinOp, a: i64, b: i64, span: Span) -> R<Value> {
        let arith = |v: Option<i64>| -> R<Value> {
            match v {
                Some(v) => self.int(v, span),
                None => self.fail(
                    EvalErrorKind::Overflow,
                    span,
                    "integer overflow in the reference's 32-bit int",
                ),
            }
        };
        match op {
            BinOp::Add => arith(a.checked_add(b)),
            BinOp::Sub => arith(a.checked_sub(b)),
            BinOp::Mul => arith(a.checked_mul(b)),
            BinOp::Div | BinOp::Mod if b == 0 => self.fail(
                EvalErrorKind::DivisionByZero,
                span,
                format!(
                    "integer {} by zero ({a} {} 0): the reference crashes (SIGFPE)",
                    if op == BinOp::Div {
                        "division"
                    } else {
                        "modulo"
                    },
                    op.text()
                ),
            ),
            BinOp::Div => arith(a.checked_div(b)),
            BinOp::Mod => arith(a.checked_rem(b)),
            BinOp::Lt => Ok(Value::Bool(a < b)),
            BinOp::Gt => Ok(Value::Bool(a > b)),
            BinOp::Le => Ok(Value::Bool(a <= b)),
            BinOp::Ge => Ok(Value::Bool(a >= b)),
            BinOp::Eq => Ok(Value::Bool(a == b)),
            BinOp::Ne => Ok(Value::Bool(a != b)),
            BinOp::And | BinOp::Or => self.fail(
                EvalErrorKind::Unsupported,
                span,
                format!(
                    "Unsupported binary operator for Integer: `{}` needs bools",
                    op.text()
                ),
            ),
        }
    }

    /// `IndexExprNode::run` with an index list: the list is evaluated before
    /// the indexed value, as in the reference.
    fn eval_index(&mut self, base: &'p Expr, indices: &'p [Expr], span: Span) -> R<Value> {
        let index = self.eval_list(indices)?;
        let target = self.eval(base)?;
        self.index_values(target, index, span)
    }

    fn index_values(&mut self, target: Value, index: Vec<(Value, Span)>, span: Span) -> R<Value> {
        if let [(Value::Int(i), _)] = index.as_slice() {
            return self.index_one(target, *i, span);
        }
        match target {
            Value::Machine(m) => {
                // Convert2TupleInt with stars allowed: `*` becomes -1, and so
                // does a computed -1 (the reference cannot tell them apart).
                let mut coords = Vec::with_capacity(index.len());
                for (v, vspan) in &index {
                    match v {
                        Value::Int(i) => coords.push(*i),
                        Value::Star => coords.push(-1),
                        other => {
                            return self.fail(
                                EvalErrorKind::WrongType,
                                *vspan,
                                format!(
                                    "Must only use tuple of integers to index a machine model, got {} ({})",
                                    other.describe(),
                                    other.type_name()
                                ),
                            )
                        }
                    }
                }
                self.tick(m.len() as u64 + m.transforms().len() as u64, span)?;
                // A `*` enumerates its whole dimension, whose extent a
                // `split` factor can make arbitrarily large: pay first.
                if let Some(star) = coords.iter().position(|&c| c == -1) {
                    let extent = m.size().get(star).copied().unwrap_or(0);
                    self.tick(u64::try_from(extent).unwrap_or(0), span)?;
                }
                match m.index(&coords) {
                    Ok(Selection::One((node, p))) => Ok(Value::IntTuple {
                        items: vec![node, p],
                        proc: Some(m.kind()),
                    }),
                    Ok(Selection::Set(points)) => Ok(Value::PointSet {
                        points,
                        proc: m.kind(),
                    }),
                    Err(err) => Err(self.mspace_error(err, span)),
                }
            }
            other => self.fail(
                EvalErrorKind::Unsupported,
                span,
                format!(
                    "Please use tuple-indexing only for a machine model: {} cannot take {} indices",
                    other.describe(),
                    index.len()
                ),
            ),
        }
    }

    /// Indexing with exactly one int: a tuple element (negative counts from
    /// the end) or a one-coordinate machine point.
    fn index_one(&mut self, target: Value, i: i64, span: Span) -> R<Value> {
        let position = |len: usize| -> Option<usize> {
            let len = len as i64;
            let at = if i >= 0 { i } else { len + i };
            (at >= 0 && at < len).then_some(at as usize)
        };
        let out_of_bound = |len: usize| {
            format!("Index out of bound for TupleIntNode: index {i} of a tuple of {len} element(s)")
        };
        match target {
            Value::IntTuple { items, .. } => match position(items.len()).and_then(|p| items.get(p)) {
                Some(v) => Ok(Value::Int(*v)),
                None => self.fail(
                    EvalErrorKind::IndexOutOfBound,
                    span,
                    out_of_bound(items.len()),
                ),
            },
            Value::Tuple(items) => match position(items.len()).and_then(|p| items.get(p)) {
                Some(v) => Ok(v.clone()),
                None => self.fail(
                    EvalErrorKind::IndexOutOfBound,
                    span,
                    out_of_bound(items.len()),
                ),
            },
            Value::Machine(m) => {
                self.tick(m.transforms().len() as u64 + 1, span)?;
                match m.to_physical(&[i]) {
                    Ok((node, p)) => Ok(Value::IntTuple {
                        items: vec![node, p],
                        proc: Some(m.kind()),
                    }),
                    Err(err) => Err(self.mspace_error(err, span)),
                }
            }
            other => self.fail(
                EvalErrorKind::Unsupported,
                span,
                format!(
                    "Unsupported IndexExprNode tuple's type: {} using integer index ({} cannot be indexed)",
                    other.type_name(),
                    other.describe()
                ),
            ),
        }
    }

    /// `e[a:b]`: the indexed value first, then the bounds.
    fn eval_slice(
        &mut self,
        base: &'p Expr,
        lo: Option<&'p Expr>,
        hi: Option<&'p Expr>,
        span: Span,
    ) -> R<Value> {
        let target = self.eval(base)?;
        let a = self.slice_bound(lo)?;
        let b = self.slice_bound(hi)?;
        self.slice_value(target, a, b, span)
    }

    fn slice_value(&mut self, target: Value, a: i64, b: i64, span: Span) -> R<Value> {
        match target {
            Value::IntTuple { items, .. } => {
                let range = self.slice_range(items.len(), a, b, span)?;
                Ok(Value::IntTuple {
                    items: items.get(range).map(<[i64]>::to_vec).unwrap_or_default(),
                    proc: None,
                })
            }
            Value::Tuple(items) => {
                let range = self.slice_range(items.len(), a, b, span)?;
                Ok(Value::Tuple(
                    items.get(range).map(<[Value]>::to_vec).unwrap_or_default(),
                ))
            }
            Value::Machine(m) => {
                let size = m.size();
                let range = self.slice_range(size.len(), a, b, span)?;
                Ok(Value::IntTuple {
                    items: size.get(range).map(<[i64]>::to_vec).unwrap_or_default(),
                    proc: None,
                })
            }
            other => self.fail(
                EvalErrorKind::Unsupported,
                span,
                format!(
                    "unsupported IndexExprNode's type for slicing: {} ({})",
                    other.type_name(),
                    other.describe()
                ),
            ),
        }
    }

    /// A slice bound: omitted is 0, otherwise it must be an int.
    fn slice_bound(&mut self, e: Option<&'p Expr>) -> R<i64> {
        let Some(e) = e else { return Ok(0) };
        let v = self.eval(e)?;
        self.slice_int(v, e.span)
    }

    fn slice_int(&self, v: Value, span: Span) -> R<i64> {
        match v {
            Value::Int(i) => Ok(i),
            other => self.fail(
                EvalErrorKind::WrongType,
                span,
                format!(
                    "Left/Right side of SliceExprNode must be NULL or integer, got {} ({})",
                    other.describe(),
                    other.type_name()
                ),
            ),
        }
    }

    /// The reference's slice bounds: a right bound `>= len` is an error, one
    /// `<= 0` counts from the end (so an omitted or zero bound means "to the
    /// end"), a negative left bound counts from the end.
    fn slice_range(&self, len: usize, a: i64, b: i64, span: Span) -> R<std::ops::Range<usize>> {
        let n = len as i64;
        if b >= n && b >= 0 {
            return self.fail(
                EvalErrorKind::IndexOutOfBound,
                span,
                format!("slice's right index is out of bound! {b} >= {n} (a right bound of 0 or less counts from the end)"),
            );
        }
        let start = if a < 0 { n + a } else { a };
        let end = if b <= 0 { n + b } else { b };
        if start >= end {
            return Ok(0..0);
        }
        if start < 0 {
            return self.fail(
                EvalErrorKind::IndexOutOfBound,
                span,
                format!("slice's left index is out of bound! {a} for a tuple of {n} element(s)"),
            );
        }
        Ok(start as usize..end as usize)
    }

    /// `e.prop` without a call (`ObjectInvokeNode::run`).
    fn eval_prop(&mut self, base: &'p Expr, prop: Prop, span: Span) -> R<Value> {
        let target = self.eval(base)?;
        self.prop_value(target, prop, span)
    }

    fn prop_value(&mut self, target: Value, prop: Prop, span: Span) -> R<Value> {
        match target.into_int_tuple() {
            Value::IntTuple { items, proc } => match prop {
                Prop::Volume => self.product(&items, span),
                Prop::Size => Ok(Value::IntTuple { items, proc }),
                Prop::Len => self.int(items.len() as i64, span),
                _ => self.fail(
                    EvalErrorKind::Unsupported,
                    span,
                    format!(
                        "TupleInt only support volume/size/len, not `{}`",
                        prop.name()
                    ),
                ),
            },
            Value::Machine(m) => match prop {
                Prop::Volume => self.product(m.size(), span),
                Prop::Size => Ok(Value::IntTuple {
                    items: m.size().to_vec(),
                    proc: None,
                }),
                Prop::Len => self.int(m.len() as i64, span),
                _ if prop.is_method() => self.fail(
                    EvalErrorKind::Unsupported,
                    span,
                    format!(
                        "MSpace only support Volume/Size/LEN in ObjectInvokeNode: `{}` is a method and needs arguments",
                        prop.name()
                    ),
                ),
                _ => self.fail(
                    EvalErrorKind::Unsupported,
                    span,
                    format!(
                        "MSpace only support Volume/Size/LEN in ObjectInvokeNode, not `{}`",
                        prop.name()
                    ),
                ),
            },
            Value::Task(t) => self.task_prop(&t, prop, span),
            other => self.fail(
                EvalErrorKind::Unsupported,
                span,
                format!(
                    "{} is not supported ObjectInvokeNode: {} has no `.{}`",
                    other.type_name(),
                    other.describe(),
                    prop.name()
                ),
            ),
        }
    }

    fn product(&self, items: &[i64], span: Span) -> R<Value> {
        let mut acc: i64 = 1;
        for &x in items {
            acc = match acc.checked_mul(x) {
                Some(v) if fits_int(v) => v,
                _ => {
                    return self.fail(
                        EvalErrorKind::Overflow,
                        span,
                        "integer overflow: the volume does not fit the reference's 32-bit int",
                    )
                }
            };
        }
        Ok(Value::Int(acc))
    }

    fn task_prop(&mut self, task: &TaskValue, prop: Prop, span: Span) -> R<Value> {
        match (prop, task) {
            (Prop::Ipoint, TaskValue::Index(t)) => Ok(Value::IntTuple {
                items: t.ipoint.clone(),
                proc: None,
            }),
            (Prop::Ispace, TaskValue::Index(t)) => Ok(Value::IntTuple {
                items: t.ispace.clone(),
                proc: None,
            }),
            (Prop::Ipoint, TaskValue::Single(_)) => self.fail(
                EvalErrorKind::TaskProperty,
                span,
                "Warning: currently SingleTask does not support get_point(), failure",
            ),
            (Prop::Ispace, TaskValue::Single(_)) => self.fail(
                EvalErrorKind::TaskProperty,
                span,
                "Warning: currently SingleTask does not support get_space(), failure",
            ),
            (Prop::Parent, TaskValue::Single(SingleTask { parent: Some(p), .. })) => {
                Ok(Value::Task(Arc::new(TaskValue::Single(p.as_ref().clone()))))
            }
            (Prop::Parent, _) => self.fail(
                EvalErrorKind::TaskProperty,
                span,
                "Warning: IndexTask or current task does not support get_parent(), returning NULL (the reference then crashes): only a single launch with a parent task has `task.parent`",
            ),
            _ => self.fail(
                EvalErrorKind::Unsupported,
                span,
                format!(
                    "TaskNode only support ipoint/ispace/parent in ObjectInvokeNode, not `{}`{}",
                    prop.name(),
                    if prop == Prop::Processor {
                        " without arguments: write `task.processor(m)`"
                    } else {
                        ""
                    }
                ),
            ),
        }
    }

    /// `tuple(body for var in (e1, e2, ...))`: one frame per element, a copy
    /// of the surrounding frame plus the variable.
    fn eval_comprehension(
        &mut self,
        body: &'p Expr,
        var: &str,
        iter: &'p Expr,
        span: Span,
    ) -> R<Value> {
        let ExprKind::Tuple(items) = &strip_parens(iter).kind else {
            return self.fail(
                EvalErrorKind::Comprehension,
                iter.span,
                "For-comprehension must itererate over TupleExpr or TupleInt",
            );
        };
        let Some(top) = self.frames.last() else {
            return self.fail(
                EvalErrorKind::Comprehension,
                span,
                "For expr should only happen during function invocation! (a comprehension cannot appear at the top level)",
            );
        };
        let base = top.clone();
        let literal = int_literals(items);
        let mut results = Vec::with_capacity(items.len());
        for (k, item) in items.iter().enumerate() {
            let binding = match literal.as_ref().and_then(|ints| ints.get(k)) {
                Some(&n) => Binding::Value(self.int(n, item.span)?),
                None => Binding::Lazy(item),
            };
            self.tick(base.len() as u64 + 1, span)?;
            let mut frame = base.clone();
            frame.insert(var.to_string(), binding);
            self.frames.push(frame);
            let r = self.eval(body);
            self.frames.pop();
            results.push(r?);
        }
        Ok(Value::Tuple(results))
    }

    /// `f(args)`: the arguments are evaluated first, whatever is called.
    fn eval_call(&mut self, callee: &'p Expr, args: &'p [Expr], span: Span) -> R<Value> {
        let args = self.eval_list(args)?;
        let callee = strip_parens(callee);
        match &callee.kind {
            ExprKind::Name(n) if n == MACHINE => self.machine_ctor(&args, span),
            ExprKind::Name(n) => {
                let f = self.lookup(n, callee.span)?;
                self.invoke(f, args, span)
            }
            ExprKind::Prop { base, prop, .. } => self.method(base, *prop, args, span),
            _ => self.fail(
                EvalErrorKind::NotAFunction,
                callee.span,
                "unsupported in FuncInvokeNode: only a function name, `Machine` or a method (`m.split`) can be called",
            ),
        }
    }

    fn machine_ctor(&mut self, args: &[(Value, Span)], span: Span) -> R<Value> {
        match args {
            [(Value::Proc(kind), _)] => {
                let count = self.st.machine.count(*kind);
                match MachineModel::new(*kind, self.st.machine.nodes, count) {
                    Ok(m) => Ok(Value::Machine(Arc::new(m))),
                    Err(err) => Err(self.mspace_error(err, span)),
                }
            }
            _ => self.fail(
                EvalErrorKind::WrongType,
                span,
                "Machine takes one processor kind: Machine(CPU), Machine(GPU), Machine(OMP), ...",
            ),
        }
    }

    fn int_arg(&self, method: &str, args: &[(Value, Span)], i: usize, span: Span) -> R<i64> {
        match args.get(i) {
            Some((Value::Int(v), _)) => Ok(*v),
            Some((other, s)) => self.fail(
                EvalErrorKind::WrongType,
                *s,
                format!(
                    "argument {} of `{method}` must be an int, got {} ({})",
                    i + 1,
                    other.describe(),
                    other.type_name()
                ),
            ),
            None => self.fail(
                EvalErrorKind::ArgumentCount,
                span,
                format!("`{method}` needs more arguments"),
            ),
        }
    }

    fn arg_count(&self, method: &str, args: &[(Value, Span)], n: usize, span: Span) -> R<()> {
        if args.len() == n {
            Ok(())
        } else {
            self.fail(
                EvalErrorKind::ArgumentCount,
                span,
                format!("`{method}` takes {n} argument(s), {} given", args.len()),
            )
        }
    }

    fn machine_of(&self, target: Value, base_span: Span, method: &str) -> R<Arc<MachineModel>> {
        match target {
            Value::Machine(m) => Ok(m),
            other => self.fail(
                EvalErrorKind::WrongType,
                base_span,
                format!(
                    "`{method}` is a method of machine models, but this is {} ({})",
                    other.describe(),
                    other.type_name()
                ),
            ),
        }
    }

    /// Wraps the result of a machine-model transformation, recording the
    /// messages the reference prints without stopping.
    fn new_model(
        &mut self,
        old: &MachineModel,
        r: Result<MachineModel, MSpaceError>,
        span: Span,
    ) -> R<Value> {
        match r {
            Ok(m) => {
                self.tick(m.transforms().len() as u64 + m.len() as u64, span)?;
                for w in m.warnings().iter().skip(old.warnings().len()) {
                    self.st.warnings.push(EvalWarning {
                        message: w.clone(),
                        span,
                    });
                }
                Ok(Value::Machine(Arc::new(m)))
            }
            Err(err) => Err(self.mspace_error(err, span)),
        }
    }

    /// `obj.method(args)` (`FuncInvokeNode::run`, built-in branch). The
    /// arguments are already evaluated; the object is evaluated now.
    fn method(
        &mut self,
        base: &'p Expr,
        prop: Prop,
        args: Vec<(Value, Span)>,
        span: Span,
    ) -> R<Value> {
        if prop == Prop::Has || !prop.is_method() {
            return Err(self.not_callable(prop, span));
        }
        let target = self.eval(base)?;
        self.apply_method(prop, target, base.span, args, span)
    }

    #[cold]
    #[inline(never)]
    fn not_callable(&self, prop: Prop, span: Span) -> Failure {
        if prop == Prop::Has {
            return self.error(
                EvalErrorKind::Unsupported,
                span,
                "`m[i].has(MEM)` always fails in the reference DSL mapper: it evaluates the index list of `m[i]` as a tuple and asserts that it is an int (tree.cpp, FuncInvokeNode::run, HAS)",
            );
        }
        let name = prop.name();
        self.error(
            EvalErrorKind::Unsupported,
            span,
            format!(
                "unsupported func_c->api: `.{name}` is a property and cannot be called; write `x.{name}`"
            ),
        )
    }

    /// The method itself, on the evaluated object.
    fn apply_method(
        &mut self,
        prop: Prop,
        target: Value,
        base_span: Span,
        args: Vec<(Value, Span)>,
        span: Span,
    ) -> R<Value> {
        let name = prop.name();
        if prop == Prop::Processor {
            return self.task_processor(target, base_span, &args, span);
        }
        let m = self.machine_of(target, base_span, name)?;
        match prop {
            Prop::Reverse => {
                self.arg_count(name, &args, 1, span)?;
                let d = self.int_arg(name, &args, 0, span)?;
                let r = m.reverse(d);
                self.new_model(&m, r, span)
            }
            Prop::Split | Prop::Swap | Prop::Merge | Prop::BalanceSplit => {
                self.arg_count(name, &args, 2, span)?;
                let a = self.int_arg(name, &args, 0, span)?;
                let b = self.int_arg(name, &args, 1, span)?;
                let r = match prop {
                    Prop::Split => m.split(a, b),
                    Prop::Swap => m.swap(a, b),
                    Prop::Merge => m.merge(a, b),
                    _ => m.balance_split(a, b),
                };
                self.new_model(&m, r, span)
            }
            Prop::Slice => {
                self.arg_count(name, &args, 3, span)?;
                let d = self.int_arg(name, &args, 0, span)?;
                let lo = self.int_arg(name, &args, 1, span)?;
                let hi = self.int_arg(name, &args, 2, span)?;
                let r = m.slice(d, lo, hi);
                self.new_model(&m, r, span)
            }
            Prop::AutoSplit | Prop::GreedySplit => {
                self.arg_count(name, &args, 2, span)?;
                let d = self.int_arg(name, &args, 0, span)?;
                let (second, second_span) = match args.get(1) {
                    Some((v, s)) => (v.clone().into_int_tuple(), *s),
                    None => {
                        return self.fail(EvalErrorKind::ArgumentCount, span, "missing argument")
                    }
                };
                let Value::IntTuple { items: domain, .. } = second else {
                    return self.fail(
                        EvalErrorKind::WrongType,
                        second_span,
                        format!(
                            "Autosplit's second argument must be tuple of integers, while getting {}",
                            second.type_name()
                        ),
                    );
                };
                if domain.len() > MAX_SPLIT_DIMS {
                    return self.fail(
                        EvalErrorKind::Unsupported,
                        second_span,
                        format!(
                            "{name} into {} dimensions is not supported (at most {MAX_SPLIT_DIMS}; Legion launch domains have at most 9)",
                            domain.len()
                        ),
                    );
                }
                if prop == Prop::AutoSplit {
                    let extent = usize::try_from(d)
                        .ok()
                        .and_then(|d| m.size().get(d).copied())
                        .unwrap_or(1);
                    self.tick(split_candidates(extent, domain.len().max(1)), span)?;
                    let r = m.auto_split(d, &domain);
                    self.new_model(&m, r, span)
                } else {
                    let r = m.greedy_split(d, &domain);
                    self.new_model(&m, r, span)
                }
            }
            _ => self.fail(
                EvalErrorKind::Unsupported,
                span,
                format!("`.{name}` is not a method of machine models"),
            ),
        }
    }

    /// `task.processor(m)`: where the task runs, as a point of `m`.
    fn task_processor(
        &mut self,
        target: Value,
        base_span: Span,
        args: &[(Value, Span)],
        span: Span,
    ) -> R<Value> {
        let name = Prop::Processor.name();
        let task = match target {
            Value::Task(t) => t,
            other => {
                return self.fail(
                    EvalErrorKind::WrongType,
                    base_span,
                    format!(
                    "`processor` is a method of tasks (`task.processor(m)`), but this is {} ({})",
                    other.describe(),
                    other.type_name()
                ),
                )
            }
        };
        self.arg_count(name, args, 1, span)?;
        let m = match args.first() {
            Some((Value::Machine(m), _)) => Arc::clone(m),
            Some((other, s)) => {
                return self.fail(
                    EvalErrorKind::WrongType,
                    *s,
                    format!(
                        "`task.processor(m)` needs a machine model, got {} ({})",
                        other.describe(),
                        other.type_name()
                    ),
                )
            }
            None => return self.fail(EvalErrorKind::ArgumentCount, span, "missing argument"),
        };
        let (node, p) = match task.as_ref() {
            TaskValue::Index(_) => {
                self.st.warnings.push(EvalWarning {
                        message: String::from("Warning: index launch task does not support getting node index or processor index for now"),
                        span,
                    });
                (0, 0)
            }
            TaskValue::Single(SingleTask {
                processor: Some(p), ..
            }) => *p,
            TaskValue::Single(t) => {
                return self.fail(
                    EvalErrorKind::TaskProperty,
                    span,
                    format!("the processor of task `{}` is not known", t.name),
                )
            }
        };
        self.tick(m.transforms().len() as u64 + 1, span)?;
        match m.from_physical(node, p) {
            Ok(point) => Ok(Value::IntTuple {
                items: point,
                proc: None,
            }),
            Err(err) => Err(self.mspace_error(err, span)),
        }
    }
}

/// Appends what the reference's `Node::print` writes for `v` (`print`'s
/// placeholders use it): ints bare, tuples comma-separated without
/// parentheses, bools and kinds with the node's name and a newline.
fn reference_print(v: &Value, program: &Program, out: &mut String, depth: usize) {
    if depth > MAX_VALUE_DEPTH {
        out.push_str("...");
        return;
    }
    match v {
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Bool(b) => {
            out.push_str("BoolValNode: ");
            out.push_str(if *b { "true" } else { "false" });
            out.push('\n');
        }
        Value::IntTuple { items, .. } => out.push_str(&join_ints(items, ",")),
        Value::PointSet { points, .. } => {
            for (n, p) in points {
                out.push_str(&format!("{n},{p}\n"));
            }
        }
        Value::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                reference_print(item, program, out, depth + 1);
            }
        }
        Value::Machine(m) => {
            out.push_str(&format!("Processor {}: ", m.kind()));
            for e in m.size() {
                out.push_str(&format!("{e} "));
            }
            out.push('\n');
        }
        Value::Task(t) => match t.as_ref() {
            TaskValue::Index(t) => {
                out.push_str(" is index launch\nipoint:");
                out.push_str(&join_ints(&t.ipoint, ","));
                out.push_str("ispace:");
                out.push_str(&join_ints(&t.ispace, ","));
            }
            TaskValue::Single(_) => out.push_str(" not index launch\nipoint:ispace:"),
        },
        Value::Proc(k) => out.push_str(&format!("ProcNode: {k}\n")),
        Value::Mem(m) => out.push_str(&format!("MemNode: {m}\n")),
        Value::Star => out.push('*'),
        Value::Unpack(inner) => {
            out.push_str("UnpackExprNode\n");
            reference_print(inner, program, out, depth + 1);
        }
        Value::Function { name, stmt } => {
            // The header and signature as the reference prints them; its
            // dump of the body's syntax tree is not reproduced.
            out.push_str(&format!("FuncDefNode {name}\n"));
            if let Some(Stmt {
                kind: StmtKind::FuncDef { params, .. },
                ..
            }) = program.stmts.get(*stmt)
            {
                out.push_str(&format!("ArgLstNode: {}\n", params.len()));
                for (i, p) in params.iter().enumerate() {
                    let ty = match p.ty {
                        ParamType::Task => "TASK",
                        ParamType::Int => "INT",
                        ParamType::Bool => "BOOL",
                        ParamType::IPoint => "IPOINT",
                        ParamType::ISpace => "ISPACE",
                        ParamType::MSpace => "MSPACE",
                    };
                    out.push_str(&format!("Arg {i}: {ty} {}\n", p.name.name));
                }
            }
            out.push_str("FuncStmtsNode\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    /// `nodes` nodes with `gpus` GPUs, 4 CPUs and 1 OpenMP processor each.
    fn machine(nodes: i64, gpus: i64) -> MachineShape {
        MachineShape::new(nodes)
            .with(ProcKind::Gpu, gpus)
            .with(ProcKind::Cpu, 4)
            .with(ProcKind::Omp, 1)
    }

    const SIZES: [(i64, i64); 3] = [(1, 4), (2, 4), (4, 4)];

    fn run(src: &str, m: &MachineShape) -> Evaluator {
        match Evaluator::from_source(src, m) {
            Ok(ev) => ev,
            Err(e) => panic!("top level failed: {e:?}\n{src}"),
        }
    }

    fn top_error(src: &str) -> EvalError {
        match Evaluator::from_source(src, &machine(2, 4)) {
            Ok(_) => panic!("expected an error from\n{src}"),
            Err(e) => e,
        }
    }

    fn ints(items: &[i64]) -> Value {
        Value::IntTuple {
            items: items.to_vec(),
            proc: None,
        }
    }

    fn global_ints(ev: &Evaluator, name: &str) -> Vec<i64> {
        match ev.global(name) {
            Some(Value::IntTuple { items, .. }) => items.clone(),
            other => panic!("{name} is {other:?}"),
        }
    }

    fn call_err(ev: &mut Evaluator, f: &str, args: &[Value]) -> EvalError {
        match ev.call(f, args) {
            Ok(v) => panic!("{f} returned {v:?}, expected an error"),
            Err(e) => e,
        }
    }

    /// Every point of a model, the last coordinate fastest.
    fn points(size: &[i64]) -> Vec<Vec<i64>> {
        let mut out = vec![Vec::new()];
        for &e in size {
            out = out
                .iter()
                .flat_map(|p| {
                    (0..e).map(move |i| {
                        let mut q = p.clone();
                        q.push(i);
                        q
                    })
                })
                .collect();
        }
        out
    }

    fn the_span(src: &str, needle: &str) -> Span {
        let start = src.find(needle).expect("needle in source");
        Span::new(start, start + needle.len())
    }

    // ----- machine-model transformations through DSL text -------------------

    type Build = fn(&MachineModel) -> Result<MachineModel, MSpaceError>;

    const TRANSFORMS: &[(&str, Build)] = &[
        ("m", |m| Ok(m.clone())),
        ("m.merge(0, 1)", |m| m.merge(0, 1)),
        ("m.merge(1, 0)", |m| m.merge(1, 0)),
        ("m.split(1, 2)", |m| m.split(1, 2)),
        ("m.split(0, 1)", |m| m.split(0, 1)),
        ("m.swap(0, 1)", |m| m.swap(0, 1)),
        ("m.slice(1, 1, 2)", |m| m.slice(1, 1, 2)),
        ("m.slice(0, 0, 0)", |m| m.slice(0, 0, 0)),
        ("m.reverse(0)", |m| m.reverse(0)),
        ("m.reverse(1)", |m| m.reverse(1)),
        ("m.balance_split(1, 2)", |m| m.balance_split(1, 2)),
        ("m.merge(0, 1).balance_split(0, 3)", |m| {
            m.merge(0, 1)?.balance_split(0, 3)
        }),
        ("m.auto_split(0, (2, 2))", |m| m.auto_split(0, &[2, 2])),
        ("m.auto_split(1, (4, 2, 1))", |m| {
            m.auto_split(1, &[4, 2, 1])
        }),
        ("m.merge(0, 1).auto_split(0, (4, 4))", |m| {
            m.merge(0, 1)?.auto_split(0, &[4, 4])
        }),
        ("m.greedy_split(1, (2, 2))", |m| m.greedy_split(1, &[2, 2])),
        (
            "m.auto_split(0, (2, 2)).auto_split(2, (2, 2)).swap(0, 3).reverse(1)",
            |m| {
                m.auto_split(0, &[2, 2])?
                    .auto_split(2, &[2, 2])?
                    .swap(0, 3)?
                    .reverse(1)
            },
        ),
    ];

    /// Each transformation, written in the DSL, names exactly the processors
    /// the machine-model semantics say, for every point, on several machines;
    /// `task.processor(t)` inverts it.
    #[test]
    fn every_transformation_through_dsl_text() {
        for (nodes, gpus) in SIZES {
            let shape = machine(nodes, gpus);
            let base = MachineModel::new(ProcKind::Gpu, nodes, gpus).expect("machine");
            for (text, build) in TRANSFORMS {
                let model = build(&base).expect("valid transformation");
                let src = format!(
                    "m = Machine(GPU);\nt = {text};\ns = t.size;\nn = t.len;\nv = t.volume;\n\
                     def at(IPoint p) {{ return t[*p]; }}\n\
                     def back(Task task) {{ return t[*task.processor(t)]; }}\n\
                     def coords(Task task) {{ return task.processor(t); }}\n"
                );
                let mut ev = run(&src, &shape);
                let ctx = format!("{text} on {nodes}x{gpus}");
                assert_eq!(global_ints(&ev, "s"), model.size(), "{ctx}");
                assert_eq!(
                    ev.global("n"),
                    Some(&Value::Int(model.len() as i64)),
                    "{ctx}"
                );
                assert_eq!(ev.global("v"), Some(&Value::Int(model.volume())), "{ctx}");
                for p in points(model.size()) {
                    let expected = model.to_physical(&p).expect("in range");
                    let got = ev.call("at", &[ints(&p)]);
                    assert_eq!(
                        got,
                        Ok(Value::IntTuple {
                            items: vec![expected.0, expected.1],
                            proc: Some(ProcKind::Gpu)
                        }),
                        "{ctx} at {p:?}"
                    );
                }
                if text.contains("slice") {
                    continue;
                }
                for node in 0..nodes {
                    for proc in 0..gpus {
                        let task = SingleTask {
                            name: "t".into(),
                            processor: Some((node, proc)),
                            parent: None,
                        };
                        let got = ev.map_single_task("back", &task, Some(ProcKind::Gpu));
                        assert_eq!(
                            got.map(|p| p.procs),
                            Ok(vec![(node, proc)]),
                            "{ctx}: round trip of ({node}, {proc})"
                        );
                    }
                }
            }
        }
    }

    /// The README's guarantees, checked by hand on 2 nodes x 4 GPUs.
    #[test]
    fn transformations_match_the_readme_on_two_nodes() {
        let src = "m = Machine(GPU);\n\
                   a = m.merge(0, 1)[5];\n\
                   b = m.split(1, 2)[1, 1, 1];\n\
                   c = m.swap(0, 1)[3, 1];\n\
                   d = m.slice(1, 1, 2)[0, 1];\n\
                   e = m.reverse(1)[0, 0];\n\
                   f = m.balance_split(1, 2)[0, 0, 1];\n\
                   g = m.split(1, 2).size;\n\
                   h = m.slice(1, 1, 2).size;\n\
                   i = m.merge(0, 1).balance_split(0, 2).size;\n";
        let ev = run(src, &machine(2, 4));
        assert_eq!(global_ints(&ev, "a"), [1, 1]);
        assert_eq!(global_ints(&ev, "b"), [1, 3]);
        assert_eq!(global_ints(&ev, "c"), [1, 3]);
        assert_eq!(global_ints(&ev, "d"), [0, 2]);
        assert_eq!(global_ints(&ev, "e"), [0, 3]);
        assert_eq!(global_ints(&ev, "f"), [0, 2]);
        assert_eq!(global_ints(&ev, "g"), [2, 2, 2]);
        assert_eq!(global_ints(&ev, "h"), [2, 2]);
        // 8 = 4 x 2, decreasing.
        assert_eq!(global_ints(&ev, "i"), [4, 2]);
        // A machine point remembers its model's kind.
        assert_eq!(
            ev.global("a"),
            Some(&Value::IntTuple {
                items: vec![1, 1],
                proc: Some(ProcKind::Gpu)
            })
        );
    }

    #[test]
    fn machine_point_errors_carry_the_reference_messages() {
        let mut ev = run(
            "m = Machine(GPU);\ndef at(int i, int j) { return m[i, j]; }\n\
             def wrong_arity(int i) { return m[i, i, i]; }\n\
             def split3(int i) { return m.split(1, 3).size; }",
            &machine(4, 4),
        );
        let e = call_err(&mut ev, "at", &[Value::Int(4), Value::Int(0)]);
        assert_eq!(e.kind, EvalErrorKind::MachineModel);
        assert_eq!(e.message, "Sharding node index out of bound! 4 >= 4");
        assert!(matches!(
            e.mspace.as_deref(),
            Some(MSpaceError::NodeOutOfBound { .. })
        ));
        let e = call_err(&mut ev, "at", &[Value::Int(0), Value::Int(4)]);
        assert_eq!(e.message, "Slice processor index out of bound! 4 >= 4");
        assert_eq!(
            call_err(&mut ev, "wrong_arity", &[Value::Int(0)]).kind,
            EvalErrorKind::MachineModel
        );
        // `split` with a factor that does not divide: built, with the
        // reference's message as a warning.
        assert_eq!(ev.call("split3", &[Value::Int(0)]), Ok(ints(&[4, 3, 1])));
        assert_eq!(ev.warnings().len(), 1);
        assert_eq!(ev.warnings()[0].message, "4 must be divisible by 3");
    }

    // ----- the README's mapping functions -----------------------------------

    fn corpus_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/public")
    }

    fn corpus_file(name: &str) -> Option<String> {
        let path = corpus_dir().join(name);
        match std::fs::read_to_string(&path) {
            Ok(s) => Some(s),
            Err(_) => {
                eprintln!("corpus file {} not found; skipping", path.display());
                None
            }
        }
    }

    /// Built-in copies of the README's functions, in case the corpus is not
    /// next to the repository.
    const COMMON_PATTERN: &str = "\
def block1d(Task task) {
    ip = task.ipoint;
    return mgpu[ip[0] / mgpu.size[1], ip[0] % mgpu.size[1]];
}
def hierarchicalblock1d(Task task) {
    ip = task.ipoint;
    is = task.ispace;
    node_idx = ip[0] * mgpu.size[0] / is[0];
    blk_size = is[0] / mgpu.size[0];
    gpu_ip = ip[0] % blk_size;
    gpu_idx = gpu_ip * mgpu.size[1] / blk_size;
    return mgpu[node_idx, gpu_idx];
}
def cyclic1d(Task task) {
    ip = task.ipoint;
    return mgpu[ip[0] % mgpu.size[0], ip[0] / mgpu.size[0] % mgpu.size[1]];
}
";

    const AUTO3D: &str = "\
def block_primitive(IPoint x, ISpace y, MSpace z, int dim1, int dim2) {
    return x[dim1] * z.size[dim2] / y.size[dim1];
}
def cyclic_primitive(IPoint x, ISpace y, MSpace z, int dim1, int dim2) {
    return x[dim1] % z.size[dim2];
}
m_2d = Machine(GPU);
def auto3d(Task task) {
    m_4d = m_2d.auto_split(0, task.ispace);
    m_6d = m_4d.auto_split(3, task.ispace / m_4d[:-1]);
    upper = tuple(block_primitive(task.ipoint, task.ispace, m_6d, i, i) for i in (0,1,2));
    lower = tuple(cyclic_primitive(task.ipoint, task.ispace, m_6d, i, i + 3) for i in (0,1,2));
    return m_6d[*upper, *lower];
}
IndexTaskMap task_5 auto3d;
";

    fn gpu_point(ev: &mut Evaluator, f: &str, ip: &[i64], is: &[i64]) -> PhysicalProc {
        match ev.map_index_point(f, "t", ip, is, Some(ProcKind::Gpu)) {
            Ok(p) => p,
            Err(e) => panic!("{f}{ip:?} in {is:?}: {e:?}"),
        }
    }

    #[test]
    fn readme_common_patterns() {
        let body = corpus_file("dslmapper-readme-common-pattern.mapper")
            .unwrap_or_else(|| COMMON_PATTERN.to_string());
        // The README defines `mgpu` in an earlier block.
        let src = format!("mgpu = Machine(GPU);\n{body}");
        let mut ev = run(&src, &machine(2, 4));
        assert_eq!(gpu_point(&mut ev, "block1d", &[5], &[8]), (1, 1));
        assert_eq!(gpu_point(&mut ev, "block1d", &[2], &[8]), (0, 2));
        assert_eq!(
            gpu_point(&mut ev, "hierarchicalblock1d", &[5], &[8]),
            (1, 1)
        );
        assert_eq!(
            gpu_point(&mut ev, "hierarchicalblock1d", &[2], &[8]),
            (0, 2)
        );
        assert_eq!(
            gpu_point(&mut ev, "hierarchicalblock1d", &[13], &[16]),
            (1, 2)
        );
        assert_eq!(gpu_point(&mut ev, "cyclic1d", &[5], &[8]), (1, 2));
        assert_eq!(gpu_point(&mut ev, "cyclic1d", &[6], &[8]), (0, 3));
        let mut ev = run(&src, &machine(4, 4));
        assert_eq!(gpu_point(&mut ev, "block1d", &[13], &[16]), (3, 1));
        assert_eq!(gpu_point(&mut ev, "cyclic1d", &[13], &[16]), (1, 3));
        assert_eq!(
            gpu_point(&mut ev, "hierarchicalblock1d", &[13], &[16]),
            (3, 1)
        );
    }

    /// The README's logging example: on 2 nodes x 4 GPUs, points 0..3 go to
    /// node 0 and 4..7 to node 1, each on GPU `i % 4`.
    #[test]
    fn readme_index_launch_circuit() {
        let Some(src) = corpus_file("dslmapper-readme-indextaskmap-circuit.mapper") else {
            return;
        };
        let mut ev = run(&src, &machine(2, 4));
        for i in 0..8 {
            let task = "calculate_new_currents";
            let f = ev
                .index_task_function(task, Some(ProcKind::Gpu))
                .expect("mapped");
            assert_eq!(f, "linearblock");
            let p = ev.map_index_task(task, &[i], &[8], Some(ProcKind::Gpu));
            assert_eq!(p.map(|p| p.procs), Ok(vec![(i / 4, i % 4)]));
            let p = ev.map_index_task("init_piece", &[i], &[8], Some(ProcKind::Cpu));
            assert_eq!(p.map(|p| p.procs), Ok(vec![(i / 4, 0)]));
        }
    }

    #[test]
    fn readme_merge_block1d() {
        let Some(src) = corpus_file("dslmapper-readme-merge-example.mapper") else {
            return;
        };
        let mut ev = run(&src, &machine(2, 4));
        assert_eq!(gpu_point(&mut ev, "block1d", &[5], &[8]), (1, 1));
        assert_eq!(gpu_point(&mut ev, "block1d", &[5], &[16]), (0, 2));
        assert_eq!(gpu_point(&mut ev, "block1d", &[15], &[16]), (1, 3));
    }

    #[test]
    fn readme_auto3d_solomonik() {
        let src =
            corpus_file("dslmapper-readme-auto3d.mapper").unwrap_or_else(|| AUTO3D.to_string());
        let mut ev = run(&src, &machine(4, 4));
        // 4 nodes split (2, 2, 1) over (4, 4, 1), then 4 GPUs (2, 2, 1) over
        // the per-node block (2, 2, 1): block over nodes, cyclic over GPUs.
        for (ip, expected) in [
            ([3, 1, 0], (1, 3)),
            ([0, 0, 0], (0, 0)),
            ([2, 2, 0], (3, 0)),
            ([1, 3, 0], (2, 3)),
        ] {
            assert_eq!(
                gpu_point(&mut ev, "auto3d", &ip, &[4, 4, 1]),
                expected,
                "{ip:?}"
            );
        }
        // Every point of the launch lands on a distinct GPU.
        let mut seen = std::collections::BTreeSet::new();
        for p in points(&[4, 4, 1]) {
            seen.insert(gpu_point(&mut ev, "auto3d", &p, &[4, 4, 1]));
        }
        assert_eq!(seen.len(), 16);
        // On other machines too.
        for (nodes, gpus) in SIZES {
            let mut ev = run(&src, &machine(nodes, gpus));
            for p in points(&[2, 2, 2]) {
                gpu_point(&mut ev, "auto3d", &p, &[2, 2, 2]);
            }
        }
    }

    #[test]
    fn readme_single_task_same_point_and_same_node() {
        let same_point = corpus_file("dslmapper-readme-single-task-same-point.mapper")
            .unwrap_or_else(|| {
                "m_2d = Machine(GPU);\ndef same_point(Task task) { return m_2d[*task.parent.processor(m_2d)]; }\nSingleTaskMap task_4 same_point;".into()
            });
        let same_node = "\ndef same_node(Task task) {\n    return m_2d[task.parent.processor(m_2d)[0], *];\n}\n";
        let src = format!("{same_point}{same_node}");
        let mut ev = run(&src, &machine(2, 4));
        assert_eq!(ev.single_task_function("task_4", None), Some("same_point"));
        let p = ev.map_single("same_point", "task_4", Some((1, 3)), Some(ProcKind::Gpu));
        assert_eq!(
            p,
            Ok(Placement {
                kind: Some(ProcKind::Gpu),
                procs: vec![(1, 3)]
            })
        );
        let p = ev.map_single("same_node", "task_4", Some((1, 2)), Some(ProcKind::Gpu));
        assert_eq!(p.map(|p| p.procs), Ok(vec![(1, 0), (1, 1), (1, 2), (1, 3)]));
        assert_eq!(
            ev.map_single("same_node", "t", Some((1, 2)), None)
                .ok()
                .and_then(|p| p.first()),
            Some((1, 0))
        );
        // Without a parent the reference hands back NULL and crashes.
        let e = ev
            .map_single("same_point", "task_4", None, Some(ProcKind::Gpu))
            .expect_err("no parent");
        assert_eq!(e.kind, EvalErrorKind::TaskProperty);
        assert!(e
            .message
            .starts_with("Warning: IndexTask or current task does not support get_parent()"));
        assert_eq!(e.call_stack.len(), 1);
        assert_eq!(e.call_stack[0].0, "same_point");
    }

    // ----- quirks of the reference ------------------------------------------

    #[test]
    fn reassigning_a_global_is_an_error_and_a_second_def_is_ignored() {
        let src = "x = 1;\nx = 2;";
        let e = top_error(src);
        assert_eq!(e.kind, EvalErrorKind::GlobalConflict);
        assert_eq!(
            e.message,
            "AssignNode multiple x cause conflicts in global_symbol!"
        );
        assert_eq!(e.span, Span::new(7, 8));

        let mut ev = run(
            "def f(int x) { return 1; }\ndef f(int x) { return 2; }\ny = f(0);",
            &machine(1, 4),
        );
        assert_eq!(ev.global("y"), Some(&Value::Int(1)));
        assert_eq!(ev.call("f", &[Value::Int(0)]), Ok(Value::Int(1)));
        // A def after a global of the same name is ignored too.
        let ev = run("g = 3;\ndef g(int x) { return x; }", &machine(1, 4));
        assert_eq!(ev.global("g"), Some(&Value::Int(3)));
        // But assigning over a function is a conflict.
        let e = top_error("def f(int x) { return x; }\nf = 1;");
        assert_eq!(e.kind, EvalErrorKind::GlobalConflict);
        let ev = run(
            "a = 1;\ndef b(int x) { return x; }\nc = (1, 2);",
            &machine(1, 4),
        );
        let names: Vec<&str> = ev.globals().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn reassigning_a_local_keeps_the_first_value() {
        let mut ev = run(
            "def f(int x) { y = 1; y = 2; x = 5; return y * 10 + x; }",
            &machine(1, 4),
        );
        assert_eq!(ev.call("f", &[Value::Int(3)]), Ok(Value::Int(13)));
        // A local shadows a global; the global is untouched.
        let mut ev = run(
            "g = 7;\ndef f(int x) { g = x; return g; }\ndef h(int x) { return g; }",
            &machine(1, 4),
        );
        assert_eq!(ev.call("f", &[Value::Int(3)]), Ok(Value::Int(3)));
        assert_eq!(ev.call("h", &[Value::Int(3)]), Ok(Value::Int(7)));
    }

    #[test]
    fn functions_see_only_their_frame_and_globals_defined_by_call_time() {
        let mut ev = run(
            "def f(int x) { return later + x; }\nlater = 10;\ndef g(int y) { return f(1) + y; }",
            &machine(1, 4),
        );
        assert_eq!(ev.call("g", &[Value::Int(2)]), Ok(Value::Int(13)));
        // The caller's locals are invisible to the callee.
        let mut ev = run(
            "def inner(int x) { return secret; }\ndef outer(int x) { secret = 1; return inner(x); }",
            &machine(1, 4),
        );
        let e = call_err(&mut ev, "outer", &[Value::Int(0)]);
        assert_eq!(e.kind, EvalErrorKind::UndefinedName);
        assert_eq!(e.message, "secret not found");
        assert_eq!(
            e.call_stack
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>(),
            ["outer", "inner"]
        );
        // At the top level, a global must come first.
        let e = top_error("y = x + 1;\nx = 1;");
        assert_eq!(e.message, "x not found");
        assert_eq!(e.span, Span::new(4, 5));
    }

    #[test]
    fn print_output_is_captured_with_the_reference_format() {
        let src = "m = Machine(GPU);\n\
                   print(\"a {} b {} c\", 1, (2, 3));\n\
                   print(\"{}|{}\", True, m);\n\
                   print(\"no placeholders\", undefined_name);\n\
                   print(\"{}\", m.size);\n\
                   def f(int x) { print(\"x={}\", x); return x; }\n\
                   y = f(4);";
        let ev = run(src, &machine(2, 4));
        assert_eq!(
            ev.printed(),
            "a 1 b 2,3 c\nBoolValNode: true\n|Processor GPU: 2 4 \n\nno placeholders\n2,4\nx=4\n"
        );
        // Not enough arguments: the text before the placeholder is out.
        let src = "print(\"a {} b {}\", 1);";
        let (ev, err) = Evaluator::new_partial(
            &mapwright_grammar::parse(src).program,
            &machine(1, 4),
            Limits::default(),
        );
        let err = err.expect("error");
        assert_eq!(err.kind, EvalErrorKind::PrintArguments);
        assert!(err.message.starts_with("Not enough arguments for print()"));
        assert_eq!(ev.printed(), "a 1 b ");
    }

    #[test]
    fn mapping_statements_are_collected_and_first_function_wins() {
        let src = "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nLayout * * * SOA;\n\
                   m = Machine(GPU);\n\
                   def f(Task t) { return m[0, 0]; }\ndef g(Task t) { return m[1, 1]; }\n\
                   IndexTaskMap foo f;\nIndexTaskMap foo,bar g;\nIndexTaskMap GPU g;\nIndexTaskMap * f;\n\
                   SingleTaskMap CPU f;\nInstanceLimit foo 2;\nCollectMemory * *;\nControlReplicate foo;";
        let mut ev = run(src, &machine(2, 4));
        let kinds: Vec<MappingKind> = ev.mapping_statements().iter().map(|s| s.kind).collect();
        use MappingKind::*;
        assert_eq!(
            kinds,
            [
                Task,
                Region,
                Layout,
                IndexTaskMap,
                IndexTaskMap,
                IndexTaskMap,
                IndexTaskMap,
                SingleTaskMap,
                InstanceLimit,
                CollectMemory,
                ControlReplicate
            ]
        );
        assert_eq!(ev.mapping_statements()[3].stmt, 6);
        assert_eq!(
            ev.index_task_function("foo", Some(ProcKind::Gpu)),
            Some("f")
        );
        assert_eq!(ev.index_task_function("bar", None), Some("g"));
        assert_eq!(
            ev.index_task_function("baz", Some(ProcKind::Gpu)),
            Some("g")
        );
        // `*` is registered as a task named "*", which nothing looks up.
        assert_eq!(ev.index_task_function("baz", Some(ProcKind::Cpu)), None);
        assert_eq!(
            ev.single_task_function("baz", Some(ProcKind::Cpu)),
            Some("f")
        );
        assert_eq!(ev.single_task_function("baz", Some(ProcKind::Gpu)), None);
        let p = ev.map_index_task("baz", &[0], &[1], Some(ProcKind::Gpu));
        assert_eq!(p.map(|p| p.procs), Ok(vec![(1, 1)]));
        let e = ev
            .map_index_task("baz", &[0], &[1], Some(ProcKind::Cpu))
            .expect_err("unmapped");
        assert_eq!(e.kind, EvalErrorKind::NoMappingFunction);
    }

    #[test]
    fn entry_functions_are_checked_like_the_reference() {
        let e = top_error("IndexTaskMap foo f;\ndef f(Task t) { return (0, 0); }");
        assert_eq!(e.kind, EvalErrorKind::UndefinedFunction);
        assert!(e.message.starts_with("IndexTaskMap's function undefined"));
        assert_eq!(e.span, Span::new(17, 18));
        let e = top_error("f = 1;\nSingleTaskMap foo f;");
        assert!(e
            .message
            .starts_with("SingleTaskMap's mapping function is undefined"));
        let e = top_error("def f(int x) { return x; }\nIndexTaskMap foo f;");
        assert_eq!(e.kind, EvalErrorKind::EntrySignature);
        assert_eq!(
            e.message,
            "Entry mapping function's definition must be like func(Task t)"
        );
        let e = top_error("def f(Task t, int x) { return x; }\nSingleTaskMap foo f;");
        assert_eq!(
            e.message,
            "Entry mapping function's must be like func(Task t)"
        );

        let mut ev = run(
            "m = Machine(GPU);\ndef plain(Task t) { return (0, 1); }\n\
             def expr(Task t) { return (t.ipoint[0], 0); }\n\
             def model(Task t) { return m; }\ndef cpu(Task t) { return Machine(CPU)[0, 0]; }\n\
             def triple(Task t) { return (1, 2, 3); }\ndef two(int a, int b) { return a; }",
            &machine(2, 4),
        );
        // A plain tuple names no processor kind: refused when the task's kind
        // is known, accepted by the sharding functor (no kind).
        let e = ev
            .map_index_point("plain", "foo", &[0], &[1], Some(ProcKind::Gpu))
            .expect_err("kind");
        assert_eq!(e.kind, EvalErrorKind::WrongProcessorKind);
        assert_eq!(
            e.message,
            "foo is actually mapped to GPU, but machine model is for ALLPROC"
        );
        assert_eq!(
            ev.map_index_point("plain", "foo", &[0], &[1], None),
            Ok((0, 1))
        );
        let e = ev
            .map_index_point("cpu", "foo", &[0], &[1], Some(ProcKind::Gpu))
            .expect_err("kind");
        assert_eq!(
            e.message,
            "foo is actually mapped to GPU, but machine model is for CPU"
        );
        // A tuple expression is not a TupleInt, even if all its elements are ints.
        let e = ev
            .map_index_point("expr", "foo", &[0], &[1], None)
            .expect_err("TupleExpr");
        assert_eq!(e.kind, EvalErrorKind::BadMappingResult);
        assert!(e
            .message
            .starts_with("Must return TupleIntType or SetTupleIntType"));
        let e = ev
            .map_index_point("model", "foo", &[0], &[1], None)
            .expect_err("MSpace");
        assert_eq!(e.kind, EvalErrorKind::BadReturn);
        let e = ev
            .map_index_point("triple", "foo", &[0], &[1], None)
            .expect_err("3 ints");
        assert_eq!(e.kind, EvalErrorKind::BadMappingResult);
        let e = ev
            .map_index_point("two", "foo", &[0], &[1], None)
            .expect_err("signature");
        assert_eq!(e.kind, EvalErrorKind::EntrySignature);
        let e = ev
            .map_index_point("nope", "foo", &[0], &[1], None)
            .expect_err("undefined");
        assert_eq!(e.kind, EvalErrorKind::UndefinedFunction);
        assert!(e.message.starts_with("IndexTaskMap's function undefined"));
        let e = ev
            .map_single("m", "foo", None, None)
            .expect_err("not a function");
        assert!(e
            .message
            .starts_with("SingleTaskMap's mapping function is undefined"));
    }

    #[test]
    fn function_without_return_and_bad_returns() {
        let src = "def f(int x) { y = x; }";
        let mut ev = run(src, &machine(1, 4));
        let e = call_err(&mut ev, "f", &[Value::Int(1)]);
        assert_eq!(e.kind, EvalErrorKind::NoReturn);
        assert_eq!(e.message, "Error: function without return");
        assert_eq!(e.span, Span::new(4, 5));
        let mut ev = run(
            "def f(int x) { return Machine(GPU); }\ndef g(int x) { return GPU; }",
            &machine(1, 4),
        );
        assert_eq!(
            call_err(&mut ev, "f", &[Value::Int(1)]).kind,
            EvalErrorKind::BadReturn
        );
        assert_eq!(
            call_err(&mut ev, "g", &[Value::Int(1)]).kind,
            EvalErrorKind::BadReturn
        );
        // Statements after `return` never run.
        let mut ev = run(
            "def f(int x) { return x; print(\"never\"); }",
            &machine(1, 4),
        );
        assert_eq!(ev.call("f", &[Value::Int(1)]), Ok(Value::Int(1)));
        assert_eq!(ev.printed(), "");
    }

    #[test]
    fn calls_check_argument_count_and_types() {
        let mut ev = run(
            "def p(IPoint x) { return x[0]; }\n\
             def via_expr(int a) { return p((a, a)); }\n\
             def via_arith(int a) { return p((a, a) + (0, 0)); }\n\
             def via_literal(int a) { return p((a + 0, 1)); }\n\
             def via_comprehension(int a) { return p(tuple(i for i in (1, 2))); }\n\
             def two(int a, bool b) { return b ? a : 0; }\n\
             def count(int a) { return two(a); }\n\
             def spread(int a) { return two(*(a, True)); }\n\
             def helper(Task t) { return 1; }\n\
             def entry(Task t) { return (helper(t), 0); }\n\
             def not_fn(int a) { return a(1); }",
            &machine(1, 4),
        );
        let e = call_err(&mut ev, "via_expr", &[Value::Int(3)]);
        assert_eq!(e.kind, EvalErrorKind::ArgumentType);
        assert!(e.message.contains("TupleExpr"), "{}", e.message);
        assert_eq!(ev.call("via_arith", &[Value::Int(3)]), Ok(Value::Int(3)));
        assert_eq!(
            call_err(&mut ev, "via_literal", &[Value::Int(3)]).kind,
            EvalErrorKind::ArgumentType
        );
        assert_eq!(
            call_err(&mut ev, "via_comprehension", &[Value::Int(3)]).kind,
            EvalErrorKind::ArgumentType
        );
        let e = call_err(&mut ev, "count", &[Value::Int(3)]);
        assert_eq!(e.kind, EvalErrorKind::ArgumentCount);
        assert!(e.message.starts_with("argument number mismatch!"));
        assert_eq!(ev.call("spread", &[Value::Int(3)]), Ok(Value::Int(3)));
        let e = ev
            .map_index_point("entry", "t", &[0], &[1], None)
            .expect_err("Task argument");
        assert_eq!(e.kind, EvalErrorKind::ArgumentType);
        assert!(e.message.contains("Task"));
        assert_eq!(
            call_err(&mut ev, "not_fn", &[Value::Int(3)]).kind,
            EvalErrorKind::NotAFunction
        );
        assert_eq!(
            call_err(&mut ev, "two", &[Value::Int(3), Value::Int(1)]).kind,
            EvalErrorKind::ArgumentType
        );
    }

    #[test]
    fn operators_follow_the_reference() {
        let src = "a = 7 / 2;\nb = -7 / 2;\nc = -7 % 3;\nd = (4, 6) / (2, 3);\ne = (1, 2) * (3, 4) - (1, 1);\n\
                   f = 1 < 2;\ng = 2 >= 3;\nh = True == False;\ni = True || False;\nj = 3 != 3;\n\
                   k = 1 > 0 ? 10 : 20;\nl = -3;\nn = -(1, 2);\no = 2 + 3 * 4 - 1;\n";
        let ev = run(src, &machine(1, 4));
        assert_eq!(ev.global("a"), Some(&Value::Int(3)));
        assert_eq!(ev.global("b"), Some(&Value::Int(-3)));
        assert_eq!(ev.global("c"), Some(&Value::Int(-1)));
        assert_eq!(global_ints(&ev, "d"), [2, 2]);
        assert_eq!(global_ints(&ev, "e"), [2, 7]);
        assert_eq!(ev.global("f"), Some(&Value::Bool(true)));
        assert_eq!(ev.global("g"), Some(&Value::Bool(false)));
        assert_eq!(ev.global("h"), Some(&Value::Bool(false)));
        assert_eq!(ev.global("i"), Some(&Value::Bool(true)));
        assert_eq!(ev.global("j"), Some(&Value::Bool(false)));
        assert_eq!(ev.global("k"), Some(&Value::Int(10)));
        assert_eq!(ev.global("l"), Some(&Value::Int(-3)));
        assert_eq!(global_ints(&ev, "n"), [-1, -2]);
        assert_eq!(ev.global("o"), Some(&Value::Int(13)));

        for (src, kind, prefix) in [
            (
                "x = 1 + (1, 2);",
                EvalErrorKind::TypeMismatch,
                "type mismatch!!",
            ),
            (
                "x = 1 + True;",
                EvalErrorKind::TypeMismatch,
                "type mismatch!!",
            ),
            (
                "x = (1, 2) + (1, 2, 3);",
                EvalErrorKind::DimensionMismatch,
                "Dimension mismatch in TupleIntNode",
            ),
            (
                "x = (1, 2) == (1, 2);",
                EvalErrorKind::Unsupported,
                "Unsupported binary operator for TupleIntNode",
            ),
            (
                "x = 1 && 2;",
                EvalErrorKind::Unsupported,
                "Unsupported binary operator for Integer",
            ),
            (
                "x = True < False;",
                EvalErrorKind::Unsupported,
                "Unsupported binary operator for Boolean",
            ),
            (
                "x = GPU == GPU;",
                EvalErrorKind::Unsupported,
                "Unsupported operator type in BinaryExprNode",
            ),
            (
                "x = (1, True) + (1, True);",
                EvalErrorKind::Unsupported,
                "Only IntValType inside TupleExprNode",
            ),
            (
                "x = 1 / 0;",
                EvalErrorKind::DivisionByZero,
                "integer division by zero",
            ),
            (
                "x = 1 % 0;",
                EvalErrorKind::DivisionByZero,
                "integer modulo by zero",
            ),
            (
                "x = (1, 2) / (1, 0);",
                EvalErrorKind::DivisionByZero,
                "integer division by zero",
            ),
            (
                "x = 2147483647 + 1;",
                EvalErrorKind::Overflow,
                "integer overflow",
            ),
            (
                "x = 3000000000;",
                EvalErrorKind::Overflow,
                "integer overflow",
            ),
            (
                "x = 1 ? 2 : 3;",
                EvalErrorKind::WrongType,
                "the condition of `?:`",
            ),
            (
                "x = -(1, True);",
                EvalErrorKind::Unsupported,
                "We can only negate IntValType",
            ),
            (
                "y = 1;\nx = -y;",
                EvalErrorKind::Unsupported,
                "Negating node must be applied",
            ),
            (
                "x = -(1 + 1);",
                EvalErrorKind::Unsupported,
                "Negating node must be applied",
            ),
            (
                "x = GPU;",
                EvalErrorKind::CannotAssign,
                "Cannot Assign ProcType",
            ),
            (
                "def f(int x) { return x; }\nx = f;",
                EvalErrorKind::CannotAssign,
                "Cannot Assign FuncDefType",
            ),
            ("x = Machine;", EvalErrorKind::WrongType, "`Machine` builds"),
            (
                "x = Machine(FBMEM);",
                EvalErrorKind::WrongType,
                "Machine takes one processor kind",
            ),
            (
                "x = (1, 2).split(0, 1);",
                EvalErrorKind::WrongType,
                "`split` is a method of machine models",
            ),
            (
                "x = Machine(GPU).size(1);",
                EvalErrorKind::Unsupported,
                "unsupported func_c->api",
            ),
            (
                "x = Machine(GPU).split;",
                EvalErrorKind::Unsupported,
                "MSpace only support Volume/Size/LEN",
            ),
            (
                "x = 1.size;",
                EvalErrorKind::Unsupported,
                "IntValType is not supported ObjectInvokeNode",
            ),
            (
                "x = Machine(GPU)[0].has(FBMEM);",
                EvalErrorKind::Unsupported,
                "`m[i].has(MEM)` always fails",
            ),
        ] {
            let e = top_error(src);
            assert_eq!(e.kind, kind, "{src}: {e:?}");
            assert!(e.message.starts_with(prefix), "{src}: {}", e.message);
        }
        // The span is the whole binary expression.
        let src = "x = 1 + (1, 2);";
        assert_eq!(top_error(src).span, the_span(src, "1 + (1, 2)"));
    }

    #[test]
    fn logical_operators_do_not_short_circuit_but_the_ternary_does() {
        let mut ev = run(
            "def f(int x) { return x != 0 && 10 / x > 1; }\n\
             def g(int x) { return x == 0 ? 0 : 10 / x; }",
            &machine(1, 4),
        );
        assert_eq!(
            call_err(&mut ev, "f", &[Value::Int(0)]).kind,
            EvalErrorKind::DivisionByZero
        );
        assert_eq!(ev.call("f", &[Value::Int(2)]), Ok(Value::Bool(true)));
        assert_eq!(ev.call("g", &[Value::Int(0)]), Ok(Value::Int(0)));
        assert_eq!(ev.call("g", &[Value::Int(5)]), Ok(Value::Int(2)));
    }

    #[test]
    fn indexing_and_slicing_follow_the_reference() {
        let src = "t = (1, 2, 3);\nm = Machine(GPU);\n\
                   a = t[0];\nb = t[-1];\nc = t[:-1];\nd = t[1:];\ne = t[:0];\nf = t[-2:];\n\
                   g = m[:-1];\nh = m[1:];\ni = t[2:1];\nj = m.size[1];\nk = (t, (4, 5))[1][0];\n\
                   l = t.len;\nn = t.volume;\no = t.size;\n";
        let ev = run(src, &machine(2, 4));
        assert_eq!(ev.global("a"), Some(&Value::Int(1)));
        assert_eq!(ev.global("b"), Some(&Value::Int(3)));
        assert_eq!(global_ints(&ev, "c"), [1, 2]);
        assert_eq!(global_ints(&ev, "d"), [2, 3]);
        // A right bound of 0 means "to the end".
        assert_eq!(global_ints(&ev, "e"), [1, 2, 3]);
        assert_eq!(global_ints(&ev, "f"), [2, 3]);
        assert_eq!(global_ints(&ev, "g"), [2]);
        assert_eq!(global_ints(&ev, "h"), [4]);
        assert_eq!(global_ints(&ev, "i"), Vec::<i64>::new());
        assert_eq!(ev.global("j"), Some(&Value::Int(4)));
        assert_eq!(ev.global("k"), Some(&Value::Int(4)));
        assert_eq!(ev.global("l"), Some(&Value::Int(3)));
        assert_eq!(ev.global("n"), Some(&Value::Int(6)));
        assert_eq!(global_ints(&ev, "o"), [1, 2, 3]);

        for (src, kind, prefix) in [
            (
                "t = (1, 2, 3);\nx = t[3];",
                EvalErrorKind::IndexOutOfBound,
                "Index out of bound",
            ),
            (
                "t = (1, 2, 3);\nx = t[-4];",
                EvalErrorKind::IndexOutOfBound,
                "Index out of bound",
            ),
            // Unlike Python, a right bound equal to the length is an error.
            (
                "t = (1, 2, 3);\nx = t[0:3];",
                EvalErrorKind::IndexOutOfBound,
                "slice's right index is out of bound!",
            ),
            (
                "t = (1, 2, 3);\nx = t[-5:2];",
                EvalErrorKind::IndexOutOfBound,
                "slice's left index is out of bound!",
            ),
            (
                "t = (1, 2, 3);\nx = t[True:];",
                EvalErrorKind::WrongType,
                "Left/Right side of SliceExprNode",
            ),
            (
                "t = (1, 2, 3);\nx = t[0, 1];",
                EvalErrorKind::Unsupported,
                "Please use tuple-indexing only",
            ),
            (
                "x = 5[0];",
                EvalErrorKind::Unsupported,
                "Unsupported IndexExprNode tuple's type: IntValType",
            ),
            (
                "x = Machine(GPU)[True, 0];",
                EvalErrorKind::WrongType,
                "Must only use tuple of integers",
            ),
            (
                "x = Machine(GPU)[*, *];",
                EvalErrorKind::MachineModel,
                "a machine index may contain at most one `*`",
            ),
            (
                "x = 5[1:];",
                EvalErrorKind::Unsupported,
                "unsupported IndexExprNode's type for slicing",
            ),
        ] {
            let e = top_error(src);
            assert_eq!(e.kind, kind, "{src}: {e:?}");
            assert!(e.message.starts_with(prefix), "{src}: {}", e.message);
        }
    }

    #[test]
    fn unpacking_and_stars() {
        let src = "m = Machine(GPU);\nt = (1, 2);\nu = (0, *t, 3);\n\
                   def f(int x) { return m[*(x, 3)]; }\n\
                   def g(int x) { return m[x, *]; }\n\
                   def h(int x) { s = m[x, -1]; return 0; }\n\
                   def k(int x) { return m[*m[x, *]]; }";
        let mut ev = run(src, &machine(2, 4));
        assert_eq!(
            ev.global("u"),
            Some(&Value::Tuple(vec![
                Value::Int(0),
                Value::Int(1),
                Value::Int(2),
                Value::Int(3)
            ]))
        );
        assert_eq!(
            ev.call("f", &[Value::Int(1)]),
            Ok(Value::IntTuple {
                items: vec![1, 3],
                proc: Some(ProcKind::Gpu)
            })
        );
        assert_eq!(
            ev.call("g", &[Value::Int(1)]),
            Ok(Value::PointSet {
                points: vec![(1, 0), (1, 1), (1, 2), (1, 3)],
                proc: ProcKind::Gpu
            })
        );
        // A computed -1 is a `*` too; a set cannot be stored.
        let e = call_err(&mut ev, "h", &[Value::Int(0)]);
        assert_eq!(e.kind, EvalErrorKind::CannotAssign);
        assert!(e.message.starts_with("Cannot Assign SetTupleIntType"));
        // A set cannot be spread.
        let e = call_err(&mut ev, "k", &[Value::Int(0)]);
        assert!(e
            .message
            .starts_with("Unsupported node type after UnpackingNode*"));
        let e = top_error("x = *5;");
        assert_eq!(e.kind, EvalErrorKind::WrongType);
        let e = top_error("t = (1, 2);\nx = *t;");
        assert!(e.message.starts_with("Cannot Assign UnpackExprType"));
    }

    #[test]
    fn comprehensions_follow_the_reference() {
        let mut ev = run(
            "def f(int a) { return tuple(i * 2 for i in (a, a + 1, 7)); }\n\
             def lazy(int a) { t = tuple(0 for i in (a / 0, 1)); return t[0]; }\n\
             def shadow(int i) { return tuple(i for i in (5, 6)); }\n\
             def nested(int a) { return tuple(tuple(i * 10 + j for j in (0, 1)) for i in (1, 2)); }\n\
             def spread(int a) { t = tuple(*x for x in ((1, 2), (3, 4))); return t; }\n\
             def self_ref(int x) { return tuple(x for x in (x, 1)); }",
            &machine(1, 4),
        );
        assert_eq!(
            ev.call("f", &[Value::Int(3)]),
            Ok(Value::Tuple(vec![
                Value::Int(6),
                Value::Int(8),
                Value::Int(14)
            ]))
        );
        // The element is evaluated only where the variable is used.
        assert_eq!(ev.call("lazy", &[Value::Int(3)]), Ok(Value::Int(0)));
        assert_eq!(
            ev.call("shadow", &[Value::Int(1)]),
            Ok(Value::Tuple(vec![Value::Int(5), Value::Int(6)]))
        );
        let row = |a: i64, b: i64| Value::Tuple(vec![Value::Int(a), Value::Int(b)]);
        assert_eq!(
            ev.call("nested", &[Value::Int(0)]),
            Ok(Value::Tuple(vec![row(10, 11), row(20, 21)]))
        );
        // A stored tuple expression re-spreads its unpacked elements when read.
        assert_eq!(
            ev.call("spread", &[Value::Int(0)]),
            Ok(Value::Tuple(vec![
                Value::Int(1),
                Value::Int(2),
                Value::Int(3),
                Value::Int(4)
            ]))
        );
        // `x` bound to the expression `x` refers to itself: stopped, not a
        // stack overflow.
        assert_eq!(
            call_err(&mut ev, "self_ref", &[Value::Int(1)]).kind,
            EvalErrorKind::Nesting
        );

        let e = top_error("x = tuple(i for i in (1, 2));");
        assert_eq!(e.kind, EvalErrorKind::Comprehension);
        assert!(e
            .message
            .starts_with("For expr should only happen during function invocation!"));
        // Iterating over anything but a tuple written in the source is
        // refused before anything runs.
        let src = "print(\"before\");\ndef f(IPoint p) { return tuple(i for i in p); }";
        let (ev, err) = Evaluator::new_partial(
            &mapwright_grammar::parse(src).program,
            &machine(1, 4),
            Limits::default(),
        );
        let err = err.expect("range error");
        assert_eq!(err.kind, EvalErrorKind::Comprehension);
        assert!(err
            .message
            .starts_with("For-comprehension must itererate over TupleExpr or TupleInt"));
        assert_eq!(err.span, Span::new(src.len() - 5, src.len() - 4));
        assert_eq!(ev.printed(), "");
    }

    #[test]
    fn task_properties_follow_the_reference() {
        let mut ev = run(
            "m = Machine(GPU);\n\
             def ip(Task t) { return m[t.ipoint[0], t.ispace[1] - 1]; }\n\
             def par(Task t) { return m[*t.parent.processor(m)]; }\n\
             def proc_of_index(Task t) { return m[*t.processor(m)]; }\n\
             def single_ip(Task t) { return m[t.ipoint[0], 0]; }\n\
             def grand(Task t) { return m[*t.parent.parent.processor(m)]; }\n\
             def parent_ip(Task t) { return m[t.parent.ipoint[0], 0]; }\n\
             def kept(Task t) { u = t; return m[u.ipoint[0], 0]; }",
            &machine(2, 4),
        );
        assert_eq!(
            ev.map_index_point("ip", "t", &[1, 7], &[2, 4], Some(ProcKind::Gpu)),
            Ok((1, 3))
        );
        assert_eq!(
            ev.map_index_point("kept", "t", &[1], &[2], Some(ProcKind::Gpu)),
            Ok((1, 0))
        );
        let e = ev
            .map_index_point("par", "t", &[0], &[1], None)
            .expect_err("index parent");
        assert_eq!(e.kind, EvalErrorKind::TaskProperty);
        // The processor of an index task is (0, 0), with the reference's warning.
        assert_eq!(
            ev.map_index_point("proc_of_index", "t", &[1], &[2], None),
            Ok((0, 0))
        );
        assert!(ev.warnings().iter().any(|w| w
            .message
            .starts_with("Warning: index launch task does not support")));
        let e = ev
            .map_single("single_ip", "t", Some((0, 0)), None)
            .expect_err("single ipoint");
        assert_eq!(
            e.message,
            "Warning: currently SingleTask does not support get_point(), failure"
        );
        let task = SingleTask {
            name: "child".into(),
            processor: Some((0, 1)),
            parent: Some(Box::new(SingleTask {
                name: "parent".into(),
                processor: Some((1, 0)),
                parent: Some(Box::new(SingleTask {
                    name: "top".into(),
                    processor: Some((1, 2)),
                    parent: None,
                })),
            })),
        };
        assert_eq!(
            ev.map_single_task("grand", &task, Some(ProcKind::Gpu))
                .map(|p| p.procs),
            Ok(vec![(1, 2)])
        );
        // The parent is a single task even if it was an index point.
        let e = ev
            .map_single_task("parent_ip", &task, None)
            .expect_err("parent ipoint");
        assert_eq!(e.kind, EvalErrorKind::TaskProperty);
        let e = ev
            .map_single("proc_of_index", "t", None, None)
            .expect_err("unknown processor");
        assert_eq!(e.kind, EvalErrorKind::TaskProperty);
    }

    #[test]
    fn machine_kinds_come_from_the_shape() {
        let ev = run(
            "a = Machine(CPU).size;\nb = Machine(OMP).size;\nc = Machine(IO).size;\nd = (Machine)(GPU).volume;",
            &machine(3, 2),
        );
        assert_eq!(global_ints(&ev, "a"), [3, 4]);
        assert_eq!(global_ints(&ev, "b"), [3, 1]);
        assert_eq!(global_ints(&ev, "c"), [3, 0]);
        assert_eq!(ev.global("d"), Some(&Value::Int(6)));
    }

    // ----- limits -----------------------------------------------------------

    fn quick<T>(what: &str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let r = f();
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what} took {:?}",
            start.elapsed()
        );
        r
    }

    #[test]
    fn infinite_recursion_stops_at_the_call_depth() {
        let src = "def f(int x) { return f(x); }\ny = f(1);";
        let e = quick("recursion", || top_error(src));
        assert_eq!(e.kind, EvalErrorKind::CallDepth);
        assert_eq!(e.call_stack.len(), Limits::default().max_call_depth);
        // Through an entry function, and with arithmetic around the call.
        let mut ev = run(
            "m = Machine(GPU);\ndef f(int x) { return x == 0 - 1 ? 0 : 1 + f(x + 1); }\n\
             def e(Task t) { return m[f(0), 0]; }",
            &machine(1, 4),
        );
        let e = quick("entry recursion", || {
            ev.map_index_point("e", "t", &[0], &[1], None)
        })
        .expect_err("recursion");
        assert_eq!(e.kind, EvalErrorKind::CallDepth);
        // Recursion that terminates within the limit works.
        let mut ev = run(
            "def f(int n) { return n == 0 ? 0 : 1 + f(n - 1); }",
            &machine(1, 4),
        );
        assert_eq!(ev.call("f", &[Value::Int(50)]), Ok(Value::Int(50)));
    }

    #[test]
    fn huge_computations_stop_at_the_step_budget() {
        let range = format!(
            "({})",
            (0..20)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let src = format!(
            "def f(int x) {{ return tuple(tuple(tuple(tuple(tuple(a + b + c + d + e for e in {range}) for d in {range}) for c in {range}) for b in {range}) for a in {range}); }}\ny = f(1);"
        );
        let e = quick("comprehension", || top_error(&src));
        assert_eq!(e.kind, EvalErrorKind::StepLimit);
        // Exponential recursion within the depth limit.
        let src = "def f(int n) { return n == 0 ? 1 : f(n - 1) + f(n - 1); }\ny = f(40);";
        let e = quick("exponential", || top_error(src));
        assert_eq!(e.kind, EvalErrorKind::StepLimit);
        // Tuples doubling at each call.
        let src = "def d(IPoint t, int n) { return n == 0 ? t.len : d((*t, *t) + (*t, *t), n - 1); }\ny = d((1, 2), 60);";
        let e = quick("doubling", || top_error(src));
        assert_eq!(e.kind, EvalErrorKind::StepLimit);
        // The budget is per entry call: a later call starts afresh.
        let mut ev = run(
            "def f(int n) { return n == 0 ? 1 : f(n - 1) + f(n - 1); }",
            &machine(1, 4),
        );
        assert_eq!(
            call_err(&mut ev, "f", &[Value::Int(30)]).kind,
            EvalErrorKind::StepLimit
        );
        assert_eq!(ev.call("f", &[Value::Int(3)]), Ok(Value::Int(8)));
    }

    #[test]
    fn a_star_over_a_huge_dimension_is_charged_first() {
        let src = "m = Machine(GPU);\ndef f(int x) { return m.split(1, 1000000000)[0, *, 0]; }";
        let mut ev = run(src, &machine(1, 4));
        let e = quick("huge star", || call_err(&mut ev, "f", &[Value::Int(0)]));
        assert_eq!(e.kind, EvalErrorKind::StepLimit);
        assert_eq!(split_candidates(1 << 40, 3), 1);
    }

    #[test]
    fn deep_expressions_stop_at_the_nesting_limit() {
        // Built directly: the parser is not what is tested here.
        let mut e = Expr {
            kind: ExprKind::Int(1),
            span: Span::new(0, 1),
        };
        for _ in 0..2000 {
            e = Expr {
                kind: ExprKind::Paren(Box::new(e)),
                span: Span::new(0, 1),
            };
        }
        let program = Program {
            stmts: vec![Stmt {
                kind: StmtKind::Assign {
                    name: ast::Ident {
                        name: "x".into(),
                        span: Span::new(0, 1),
                    },
                    value: e,
                },
                span: Span::new(0, 1),
            }],
        };
        let err = Evaluator::new(&program, &machine(1, 4)).expect_err("too deep");
        assert_eq!(err.kind, EvalErrorKind::Nesting);
        // Dropping the 2000-deep tree is recursive too; keep it well below
        // the stack.
        drop(program);
    }

    #[test]
    fn output_is_bounded() {
        let limits = Limits {
            max_output: 100,
            ..Limits::default()
        };
        let src =
            "def f(int n) { print(\"0123456789\"); return n == 0 ? 0 : f(n - 1); }\ny = f(40);";
        let program = mapwright_grammar::parse(src).program;
        let ev = Evaluator::with_limits(&program, &machine(1, 4), limits).expect("runs");
        assert!(ev.printed().len() < 150);
        assert!(ev.printed().ends_with("[output truncated]\n"));
    }

    #[test]
    fn evaluators_can_move_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Evaluator>();
        send_sync::<EvalError>();
        send_sync::<Value>();
    }

    #[test]
    fn split_candidate_estimate() {
        assert_eq!(split_candidates(4, 3), 6); // 2^2 over 3 places: C(4, 2)
        assert_eq!(split_candidates(12, 2), 3 * 2);
        assert_eq!(split_candidates(1, 5), 1);
        assert_eq!(split_candidates(17, 4), 4);
        assert_eq!(binomial(10, 3), 120);
    }

    #[test]
    fn auto_split_into_too_many_dimensions_is_refused() {
        let tuple = format!("({})", vec!["1"; 40].join(", "));
        let e = top_error(&format!("x = Machine(GPU).auto_split(0, {tuple});"));
        assert_eq!(e.kind, EvalErrorKind::Unsupported);
        let e = top_error("x = Machine(GPU).auto_split(0, 5);");
        assert!(e
            .message
            .starts_with("Autosplit's second argument must be tuple of integers"));
    }

    #[test]
    fn syntax_errors_are_reported_not_run() {
        let e = top_error("x = ;");
        assert_eq!(e.kind, EvalErrorKind::Syntax);
        let program = mapwright_grammar::parse("x = 1;\ny = ;\nz = 2;").program;
        let (ev, err) = Evaluator::new_partial(&program, &machine(1, 4), Limits::default());
        assert_eq!(err.map(|e| e.kind), Some(EvalErrorKind::Syntax));
        assert_eq!(ev.global("x"), Some(&Value::Int(1)));
        assert_eq!(ev.global("z"), None);
    }

    // ----- the corpus -------------------------------------------------------

    fn accepted_corpus_files() -> Vec<String> {
        let Ok(expect) = std::fs::read_to_string(corpus_dir().join("EXPECT")) else {
            eprintln!("corpus not found; skipping");
            return Vec::new();
        };
        expect
            .lines()
            .filter_map(|l| {
                let mut parts = l.split_whitespace();
                match (parts.next(), parts.next()) {
                    (Some(name), Some("accept")) => Some(name.to_string()),
                    _ => None,
                }
            })
            .collect()
    }

    fn entry_functions(program: &Program) -> (Vec<String>, Vec<String>) {
        let mut index = Vec::new();
        let mut single = Vec::new();
        for s in &program.stmts {
            match &s.kind {
                StmtKind::IndexTaskMap { func, .. } if !index.contains(&func.name) => {
                    index.push(func.name.clone())
                }
                StmtKind::SingleTaskMap { func, .. } if !single.contains(&func.name) => {
                    single.push(func.name.clone())
                }
                _ => {}
            }
        }
        (index, single)
    }

    /// Every accepted corpus file runs (or fails with an error, never a
    /// panic) on 4 nodes x 4 GPUs, and so do its mapping functions on sample
    /// launches of 1 to 3 dimensions.
    #[test]
    fn every_accepted_corpus_file_evaluates_without_panicking() {
        let files = accepted_corpus_files();
        let shape = machine(4, 4);
        let mut clean = 0;
        for name in &files {
            let Some(src) = corpus_file(name) else {
                continue;
            };
            let parsed = mapwright_grammar::parse(&src);
            assert!(
                !parsed.has_errors(),
                "{name} is accepted but does not parse"
            );
            let (mut ev, err) = Evaluator::new_partial(&parsed.program, &shape, Limits::default());
            if err.is_none() {
                clean += 1;
            }
            let (index, single) = entry_functions(&parsed.program);
            for f in &index {
                for (ip, is) in [
                    (vec![1], vec![4]),
                    (vec![1, 2], vec![4, 4]),
                    (vec![1, 0, 1], vec![2, 2, 2]),
                ] {
                    let _ = ev.map_index(f, "t", &ip, &is, Some(ProcKind::Gpu));
                    let _ = ev.map_index(f, "t", &ip, &is, None);
                }
            }
            for f in &single {
                let _ = ev.map_single(f, "t", Some((1, 1)), Some(ProcKind::Gpu));
                let _ = ev.map_single(f, "t", None, None);
            }
        }
        if !files.is_empty() {
            assert!(
                clean * 2 > files.len(),
                "only {clean} of {} files ran cleanly",
                files.len()
            );
        }
    }

    /// Launch domains per expert mapping function, from the files' comments
    /// (4 nodes x 4 GPUs: rpoc = 4, c = 1 for solomonik; grids of 4).
    /// A mapping function, the kind of processor its task runs on, and a
    /// launch domain.
    type Launch = (&'static str, ProcKind, &'static [i64]);

    const EXPERT: &[(&str, &[Launch])] = &[
        (
            "legion-circuit.mapper",
            &[
                ("linearblock", ProcKind::Gpu, &[16]),
                ("block_shard_cpu", ProcKind::Cpu, &[16]),
            ],
        ),
        (
            "legion-stencil.mapper",
            &[
                ("linearblock", ProcKind::Gpu, &[16]),
                ("block_shard_cpu", ProcKind::Cpu, &[16]),
            ],
        ),
        (
            "legion-pennant.mapper",
            &[
                ("linearcyclic", ProcKind::Gpu, &[16]),
                ("cyclic_shard_cpu", ProcKind::Cpu, &[16]),
            ],
        ),
        (
            "taco-cannonMM-cuda.mapper",
            &[
                ("auto2d", ProcKind::Gpu, &[8, 8]),
                ("auto2d", ProcKind::Gpu, &[4, 4]),
                ("linear_distribute", ProcKind::Gpu, &[16]),
                ("auto2d_omp", ProcKind::Omp, &[4, 4]),
            ],
        ),
        (
            "taco-summaMM-cuda.mapper",
            &[
                ("auto2d", ProcKind::Gpu, &[8, 8]),
                ("linear_distribute", ProcKind::Gpu, &[16]),
                ("auto2d_omp", ProcKind::Omp, &[4, 4]),
            ],
        ),
        (
            "taco-pummaMM-cuda.mapper",
            &[
                ("auto2d", ProcKind::Gpu, &[8, 8]),
                ("linear_distribute", ProcKind::Gpu, &[16]),
                ("auto2d_omp", ProcKind::Omp, &[4, 4]),
            ],
        ),
        (
            "taco-johnsonMM-cuda.mapper",
            &[
                ("placement_shard", ProcKind::Gpu, &[4, 4, 1]),
                ("placement_shard", ProcKind::Gpu, &[4, 1, 4]),
                ("placement_shard", ProcKind::Gpu, &[1, 4, 4]),
                ("autoblock", ProcKind::Gpu, &[4, 4, 4]),
                ("init_all_gpus", ProcKind::Gpu, &[4]),
            ],
        ),
        (
            "taco-solomonikMM-cuda.mapper",
            &[
                ("auto3d", ProcKind::Gpu, &[4, 4, 1]),
                ("auto_cyclic_3d", ProcKind::Gpu, &[4, 4, 1]),
                ("block1d", ProcKind::Gpu, &[16]),
            ],
        ),
        (
            "taco-cosma-cuda.mapper",
            &[
                ("placement_shard", ProcKind::Gpu, &[2, 2, 1]),
                ("placement_shard", ProcKind::Gpu, &[2, 1, 2]),
                ("autoblock", ProcKind::Gpu, &[2, 2, 2]),
                ("init_all_gpus", ProcKind::Gpu, &[4]),
            ],
        ),
    ];

    #[test]
    fn expert_mappers_run_and_map_their_launches() {
        let shape = machine(4, 4);
        for (file, launches) in EXPERT {
            let Some(src) = corpus_file(file) else {
                continue;
            };
            let mut ev = run(&src, &shape);
            let (index, single) = entry_functions(ev.program());
            for f in &index {
                assert!(
                    launches.iter().any(|(g, _, _)| g == f),
                    "{file}: no sample launch for {f}"
                );
            }
            for (f, kind, ispace) in launches.iter() {
                for p in points(ispace) {
                    if let Err(e) = ev.map_index_point(f, "t", &p, ispace, Some(*kind)) {
                        panic!("{file}: {f}{p:?} in {ispace:?}: {e:?}");
                    }
                }
            }
            for f in &single {
                let p = ev.map_single(f, "t", Some((2, 3)), Some(ProcKind::Gpu));
                assert_eq!(p.map(|p| p.procs), Ok(vec![(2, 3)]), "{file}: {f}");
            }
        }
    }
}
