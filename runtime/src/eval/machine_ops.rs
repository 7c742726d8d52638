//! Machine-model operations (`Machine(KIND)`, `merge`, `split`, `swap`,
//! `auto_split`, ...) and properties of machine models and tasks.

use std::sync::Arc;

use mapwright_grammar::ast::{Expr, Prop};
use mapwright_grammar::Span;

use crate::mspace::{MSpaceError, MachineModel};

use super::error::{EvalErrorKind, EvalWarning, Failure, R};
use super::expr::fits_int;
use super::interp::Interp;
use super::shape::{SingleTask, TaskValue};
use super::value::Value;

/// The name the reference's parser turns into a machine-model constructor.
pub(super) const MACHINE: &str = "Machine";

/// Launch domains in Legion have at most 9 dimensions; `auto_split` over
/// more than this many is refused (its enumeration recurses once per
/// dimension and its candidate count explodes).
const MAX_SPLIT_DIMS: usize = 16;

/// An upper bound on the candidates `auto_split` of `number` over `dims`
/// dimensions enumerates (product over prime powers `p^k` of
/// `C(k + dims - 1, k)`), to charge the step budget before running it.
pub(super) fn split_candidates(number: i64, dims: usize) -> u64 {
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

pub(super) fn binomial(n: u64, k: u64) -> u64 {
    let mut c: u64 = 1;
    for i in 1..=k {
        c = match c.checked_mul(n - k + i) {
            Some(v) => v / i,
            None => return u64::MAX,
        };
    }
    c
}

impl<'p, 's> Interp<'p, 's> {
    /// `e.prop` without a call (`ObjectInvokeNode::run`).
    pub(super) fn eval_prop(&mut self, base: &'p Expr, prop: Prop, span: Span) -> R<Value> {
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

    pub(super) fn machine_ctor(&mut self, args: &[(Value, Span)], span: Span) -> R<Value> {
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
    pub(super) fn method(
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
