//! Values (the reference's node types), how they are shown, and what the
//! reference's `print` writes for them.

use std::fmt;
use std::sync::Arc;

use mapwright_grammar::ast::{MemKind, ParamType, Program, Stmt, StmtKind};

use crate::mspace::{MachineModel, PhysicalProc, ProcKind};

use super::shape::TaskValue;

/// Nested values (tuples of tuples) deeper than this are not re-evaluated or
/// printed; only a pathological program builds them.
pub(super) const MAX_VALUE_DEPTH: usize = 256;

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
    pub(super) fn into_int_tuple(self) -> Value {
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
    pub(super) fn same_type(&self, other: &Value) -> bool {
        self.type_name() == other.type_name()
    }
}

pub(super) fn ints_of(items: &[Value]) -> Option<Vec<i64>> {
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

/// Appends what the reference's `Node::print` writes for `v` (`print`'s
/// placeholders use it): ints bare, tuples comma-separated without
/// parentheses, bools and kinds with the node's name and a newline.
pub(super) fn reference_print(v: &Value, program: &Program, out: &mut String, depth: usize) {
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
            }) = program.stmt(*stmt)
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
