//! The environment: one global namespace, and a stack of local frames
//! (one per call, one per comprehension iteration) of which only the
//! innermost is visible.

use mapwright_grammar::fast_hash::FastMap;

use mapwright_grammar::ast::Expr;
use mapwright_grammar::Span;

use super::error::{EvalErrorKind, EvalWarning, Failure, R};
use super::evaluator::MappingStmt;
use super::interp::Interp;
use super::shape::{Limits, MachineShape};
use super::value::{Value, MAX_VALUE_DEPTH};

/// A name's binding in a local frame: a value, or (for a comprehension
/// variable iterating over a tuple expression) the unevaluated element, which
/// the reference evaluates each time the variable is used.
#[derive(Debug, Clone)]
pub(super) enum Binding<'p> {
    Value(Value),
    Lazy(&'p Expr),
}

pub(super) type Frame<'p> = FastMap<String, Binding<'p>>;

/// Everything that persists between entry calls.
#[derive(Debug, Clone)]
pub(super) struct State {
    pub(super) machine: MachineShape,
    pub(super) limits: Limits,
    pub(super) globals: FastMap<String, Value>,
    pub(super) global_order: Vec<String>,
    pub(super) output: String,
    pub(super) output_truncated: bool,
    pub(super) warnings: Vec<EvalWarning>,
    pub(super) mapping: Vec<MappingStmt>,
    /// `IndexTaskMap` key (task name, `*`, or `CPU`/`GPU`/`OMP`) -> function;
    /// first statement wins.
    pub(super) index_funcs: FastMap<String, String>,
    pub(super) single_funcs: FastMap<String, String>,
}

impl<'p, 's> Interp<'p, 's> {
    pub(super) fn define_global(&mut self, name: &str, v: Value) {
        self.st.global_order.push(name.to_string());
        self.st.globals.insert(name.to_string(), v);
    }

    pub(super) fn check_assignable(&self, v: &Value, span: Span) -> R<()> {
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

    pub(super) fn assign_local(&mut self, name: &str, v: Value, span: Span) -> R<()> {
        self.check_assignable(&v, span)?;
        // unordered_map::insert: the first assignment of a local (or the
        // parameter) wins; later ones are ignored.
        if let Some(top) = self.frames.last_mut() {
            top.entry(name.to_string()).or_insert(Binding::Value(v));
        }
        Ok(())
    }

    /// `IdentifierExprNode::run`: the innermost frame, then the globals. A
    /// stored value is "run" again (a tuple expression re-spreads its unpacked
    /// elements); a lazy comprehension element is evaluated here and now.
    pub(super) fn lookup(&mut self, name: &str, span: Span) -> R<Value> {
        // Running a value that is neither a tuple expression nor an unpack
        // is the identity: clone it once, straight from where it is stored.
        let local = self.frames.last().and_then(|top| top.get(name));
        let stored = match local {
            Some(Binding::Value(v)) => Some(v),
            Some(Binding::Lazy(_)) => None,
            None => self.st.globals.get(name),
        };
        if let Some(v) = stored.filter(|v| !matches!(v, Value::Tuple(_) | Value::Unpack(_))) {
            return Ok(v.clone());
        }
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
    pub(super) fn undefined_name(&self, name: &str, span: Span) -> Failure {
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
    pub(super) fn rerun(&mut self, v: &Value, span: Span, depth: usize) -> R<Value> {
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
}
