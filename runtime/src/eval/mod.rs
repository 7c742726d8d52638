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
//!
//! # Module map
//!
//! - [`shape`]: what the evaluator is given and hands out ([`MachineShape`],
//!   [`Limits`], [`TaskValue`]) and [`proc_kind`].
//! - [`value`]: [`Value`], its display, and the reference's `print` format.
//! - [`error`]: [`EvalError`], [`EvalErrorKind`], [`EvalWarning`].
//! - [`evaluator`]: the public [`Evaluator`]: the top level, the mapping
//!   statements it records, and the entry calls that map launches.
//! - [`interp`]: the interpreter proper: one evaluation's bookkeeping (limits,
//!   steps, output) and the top-level statements.
//! - [`env`]: the environment: globals, local frames, name lookup.
//! - [`expr`]: expressions: operators, tuples, indexing, slicing, unpacking,
//!   comprehensions.
//! - [`calls`]: functions and calls.
//! - [`machine_ops`]: machine-model operations and the properties of machine
//!   models and tasks.
//!
//! The string-keyed tables here, in the resolver and in the simulator hash
//! with the front end's `mapwright_grammar::fast_hash` (unkeyed and
//! deterministic: the keys are the mapper's own names).

mod calls;
mod env;
mod error;
mod evaluator;
mod expr;
mod interp;
mod machine_ops;
mod shape;
#[cfg(test)]
mod tests;
mod value;

pub use error::{EvalError, EvalErrorKind, EvalWarning};
pub use evaluator::{
    Comprehensions, Evaluator, ForToken, MappingKind, MappingStmt, Placement, ProgramSource,
};
pub use shape::{proc_kind, IndexTask, Limits, MachineShape, SingleTask, TaskValue};
pub use value::Value;
