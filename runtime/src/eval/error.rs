//! Errors and warnings, with the reference's texts.

use mapwright_grammar::Span;

use crate::mspace::MSpaceError;

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
pub(super) type Failure = Box<EvalError>;

pub(super) type R<T> = Result<T, Failure>;

/// A message the reference prints without stopping (a `split` factor that
/// does not divide the extent, `task.processor` of an index task).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalWarning {
    /// The reference's text.
    pub message: String,
    /// Where it happened.
    pub span: Span,
}

pub(super) fn bare_error(kind: EvalErrorKind, message: impl Into<String>) -> EvalError {
    EvalError {
        kind,
        message: message.into(),
        span: Span::default(),
        call_stack: Vec::new(),
        mspace: None,
    }
}
