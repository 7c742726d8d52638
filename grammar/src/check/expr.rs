//! Typing of expressions: names, operators, calls (functions and the
//! built-ins' arity), and the properties and methods of tasks, machines
//! and tuples, with the mismatches the reference aborts on. The
//! statements that hold them are typed in the parent module.

use crate::ast::*;
use crate::diagnostic::Diagnostic;
use crate::Span;

use super::{Checker, Env, Ty};

impl<'a> Checker<'a> {
    pub(super) fn lookup(&mut self, name: &str, env: &Env) -> Ty {
        if let Some((_, t)) = env.loop_vars.iter().rev().find(|(n, _)| n == name) {
            return *t;
        }
        if let Some((_, t)) = env.locals.iter().rev().find(|(n, _)| n == name) {
            return *t;
        }
        if let Some(t) = self.global_ty(name) {
            return t;
        }
        if env.in_function {
            // Globals assigned later in the file are visible to functions.
            if let Some(t) = self.late_global_ty(name) {
                return t;
            }
        }
        Ty::Unknown
    }

    pub(super) fn infer(&mut self, e: &Expr, env: &Env) -> Ty {
        match &e.kind {
            ExprKind::Int(_) => Ty::Int,
            ExprKind::Bool(_) => Ty::Bool,
            ExprKind::Name(n) => self.lookup(n, env),
            ExprKind::Proc(_) => Ty::ProcKind,
            ExprKind::Mem(_) => Ty::MemKind,
            ExprKind::Star => Ty::Star,
            ExprKind::Paren(a) => self.infer(a, env),
            ExprKind::Unpack(a) => match self.infer(a, env) {
                Ty::Tuple(n) => Ty::Spread(n),
                _ => Ty::Spread(None),
            },
            ExprKind::Neg(a) => match self.infer(a, env) {
                t @ (Ty::Int | Ty::Tuple(_) | Ty::Unknown) => t,
                other => {
                    self.mismatch(e.span, format!("cannot negate {}", other.with_article()));
                    Ty::Unknown
                }
            },
            ExprKind::Binary {
                op,
                op_span,
                lhs,
                rhs,
            } => {
                let l = self.infer(lhs, env);
                let r = self.infer(rhs, env);
                self.binary(*op, *op_span, l, r)
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
                ..
            } => {
                let c = self.infer(cond, env);
                if matches!(c, Ty::Tuple(_) | Ty::MSpace(_) | Ty::Task | Ty::Processor) {
                    self.mismatch(
                        cond.span,
                        format!("the condition is {}, not a bool", c.with_article()),
                    );
                }
                let a = self.infer(then, env);
                let b = self.infer(otherwise, env);
                if a == b {
                    a
                } else {
                    Ty::Unknown
                }
            }
            ExprKind::Tuple(items) => {
                let mut len = Some(0usize);
                for i in items {
                    // (Checked: doubling a tuple by spreading it into itself
                    // overflows in 64 lines; the length is then unknown.)
                    len = match (len, self.infer(i, env)) {
                        (Some(l), Ty::Spread(Some(n))) => l.checked_add(n),
                        (_, Ty::Spread(None)) | (None, _) => None,
                        (Some(l), _) => l.checked_add(1),
                    };
                }
                Ty::Tuple(len)
            }
            ExprKind::Comprehension { body, var, iter } => {
                let it = self.infer(iter, env);
                if matches!(it, Ty::Int | Ty::Bool | Ty::MSpace(_) | Ty::Task) {
                    self.mismatch(
                        iter.span,
                        format!("cannot iterate over {}", it.with_article()),
                    );
                }
                let mut inner = env.clone();
                inner.loop_vars.push((var.name.clone(), Ty::Int));
                self.infer(body, &inner);
                match it {
                    Ty::Tuple(n) => Ty::Tuple(n),
                    _ => Ty::Tuple(None),
                }
            }
            ExprKind::Prop {
                base,
                prop,
                prop_span,
            } => {
                let b = self.infer(base, env);
                self.property(b, *prop, *prop_span, None, e.span)
            }
            ExprKind::Call { callee, args } => self.call(e, callee, args, env),
            ExprKind::Index { base, indices } => {
                let b = self.infer(base, env);
                let mut count: Option<usize> = Some(0);
                for i in indices {
                    let t = self.infer(i, env);
                    count = match (count, t) {
                        (Some(c), Ty::Spread(Some(n))) => c.checked_add(n),
                        (_, Ty::Spread(None)) | (None, _) => None,
                        (Some(c), _) => c.checked_add(1),
                    };
                    if matches!(t, Ty::MSpace(_) | Ty::Task | Ty::Bool) {
                        self.mismatch(
                            i.span,
                            format!("an index must be an int, found {}", t.with_article()),
                        );
                    }
                }
                match b {
                    Ty::MSpace(Some(dims)) => {
                        if let Some(n) = count {
                            if n > dims {
                                self.diags.push(
                                    Diagnostic::error(
                                        "E0210",
                                        e.span,
                                        format!("{n} indices for a {dims}-D machine model"),
                                    )
                                    .with_label(format!("expected {dims} indices"))
                                    .with_note("index a machine model with one value (or `*`) per dimension"),
                                );
                            }
                        }
                        Ty::Processor
                    }
                    Ty::MSpace(None) => Ty::Processor,
                    Ty::Tuple(_) => Ty::Int,
                    Ty::Int | Ty::Bool | Ty::Task | Ty::ProcKind | Ty::MemKind => {
                        self.mismatch(base.span, format!("{} cannot be indexed", b.with_article()));
                        Ty::Unknown
                    }
                    _ => Ty::Unknown,
                }
            }
            ExprKind::Slice { base, lo, hi, .. } => {
                let b = self.infer(base, env);
                for bound in [lo, hi].into_iter().flatten() {
                    self.infer(bound, env);
                }
                let len = match b {
                    Ty::MSpace(n) | Ty::Tuple(n) => n,
                    _ => None,
                };
                let lit = |x: &Option<Box<Expr>>| match x.as_deref().map(|e| &e.kind) {
                    None => Some(None),
                    Some(ExprKind::Int(v)) => Some(Some(*v)),
                    Some(ExprKind::Neg(inner)) => match inner.kind {
                        ExprKind::Int(v) => Some(Some(-v)),
                        _ => None,
                    },
                    _ => None,
                };
                let sliced = match (len, lit(lo), lit(hi)) {
                    (Some(n), Some(a), Some(z)) => {
                        let n = n as i64;
                        let norm = |v: i64| if v < 0 { (n + v).max(0) } else { v.min(n) };
                        let a = a.map(norm).unwrap_or(0);
                        let z = z.map(norm).unwrap_or(n);
                        Some((z - a).max(0) as usize)
                    }
                    _ => None,
                };
                Ty::Tuple(sliced)
            }
        }
    }

    pub(super) fn mismatch(&mut self, span: Span, message: String) {
        self.diags
            .push(Diagnostic::error("E0209", span, message).with_label("type mismatch"));
    }

    pub(super) fn binary(&mut self, op: BinOp, span: Span, l: Ty, r: Ty) -> Ty {
        if let (Some(a), Some(b)) = (l.family(), r.family()) {
            if a != b || a == 3 {
                self.diags.push(
                    Diagnostic::error(
                        "E0209",
                        span,
                        format!("`{}` between {} and {}", op.text(), l.with_article(), r.with_article()),
                    )
                    .with_label("type mismatch")
                    .with_note("both operands must be ints, bools, or int tuples of the same length; the reference aborts with \"type mismatch!!\""),
                );
                return Ty::Unknown;
            }
            if let (Ty::Tuple(Some(x)), Ty::Tuple(Some(y))) = (l, r) {
                if x != y {
                    self.diags.push(
                        Diagnostic::error(
                            "E0209",
                            span,
                            format!("`{}` between tuples of {x} and {y} elements", op.text()),
                        )
                        .with_label("tuple lengths differ")
                        .with_note("tuple arithmetic is element-wise and needs equal lengths"),
                    );
                    return Ty::Unknown;
                }
            }
        }
        match op {
            BinOp::Lt
            | BinOp::Gt
            | BinOp::Le
            | BinOp::Ge
            | BinOp::Eq
            | BinOp::Ne
            | BinOp::And
            | BinOp::Or => Ty::Bool,
            _ => match (l, r) {
                (Ty::Tuple(n), _) | (_, Ty::Tuple(n)) => Ty::Tuple(n),
                (Ty::Int, _) | (_, Ty::Int) => Ty::Int,
                _ => Ty::Unknown,
            },
        }
    }

    pub(super) fn call(&mut self, e: &Expr, callee: &Expr, args: &[Expr], env: &Env) -> Ty {
        let arg_types: Vec<Ty> = args.iter().map(|a| self.infer(a, env)).collect();
        match &callee.kind {
            // The reference's parser turns the identifier `Machine` into the
            // constructor itself, so a variable named `Machine` cannot shadow it.
            ExprKind::Name(n) if n == "Machine" => {
                if args.len() != 1 || arg_types[0] != Ty::ProcKind {
                    self.diags.push(
                        Diagnostic::error(
                            "E0207",
                            e.span,
                            "`Machine` takes one processor kind, e.g. `Machine(GPU)`",
                        )
                        .with_label("wrong arguments"),
                    );
                }
                Ty::MSpace(Some(2))
            }
            ExprKind::Name(n) => {
                let ty = self.lookup(n, env);
                let Some(index) = self.function_index(n) else {
                    if !matches!(ty, Ty::Unknown | Ty::Function) {
                        self.diags.push(
                            Diagnostic::error(
                                "E0221",
                                callee.span,
                                format!("`{n}` is {}, not a function", ty.with_article()),
                            )
                            .with_label("not callable"),
                        );
                    }
                    return Ty::Unknown;
                };
                if env.locals.iter().any(|(l, _)| l == n) {
                    return Ty::Unknown;
                }
                let StmtKind::FuncDef { params, name, .. } = &self.stmt_at(index).kind else {
                    return Ty::Unknown;
                };
                let spread = arg_types.iter().any(|t| matches!(t, Ty::Spread(_)));
                // Every diagnostic below points into the definition.
                let reported = self.diags.len();
                if !spread && params.len() != args.len() {
                    self.diags.push(
                        Diagnostic::error(
                            "E0207",
                            e.span,
                            format!(
                                "`{n}` takes {} argument(s) but {} were given",
                                params.len(),
                                args.len()
                            ),
                        )
                        .with_label("wrong number of arguments")
                        .with_related(name.span, "defined here")
                        .with_note("the reference aborts on an argument count mismatch"),
                    );
                } else if let Some(p) = params.iter().find(|p| p.ty == ParamType::Task) {
                    self.diags.push(
                        Diagnostic::error(
                            "E0208",
                            e.span,
                            format!("`{n}` takes a Task (`{}`), and a Task cannot be passed in a call", p.name.name),
                        )
                        .with_label("unsupported call")
                        .with_related(p.ty_span.to(p.name.span), "Task parameter")
                        .with_note("only Legion calls a mapping function with the task; pass `task.ipoint`/`task.ispace` as IPoint/ISpace instead"),
                    );
                } else if !spread {
                    for ((p, a), t) in params.iter().zip(args).zip(&arg_types) {
                        if !Ty::accepts(p.ty, *t) {
                            self.diags.push(
                                Diagnostic::error(
                                    "E0208",
                                    a.span,
                                    format!(
                                        "`{}` expects {} `{}`, found {}",
                                        n,
                                        p.ty.name(),
                                        p.name.name,
                                        t.with_article()
                                    ),
                                )
                                .with_label("wrong argument type")
                                .with_related(p.ty_span.to(p.name.span), "parameter declared here"),
                            );
                        }
                    }
                }
                if self.diags.len() > reported {
                    self.pin_function(n);
                }
                self.return_type(n)
            }
            ExprKind::Prop {
                base,
                prop,
                prop_span,
            } => {
                let b = self.infer(base, env);
                self.property(b, *prop, *prop_span, Some((args, &arg_types)), e.span)
            }
            _ => Ty::Unknown,
        }
    }

    /// Types `base.prop` or `base.prop(args)`.
    pub(super) fn property(
        &mut self,
        base: Ty,
        prop: Prop,
        span: Span,
        call: Option<(&[Expr], &[Ty])>,
        whole: Span,
    ) -> Ty {
        let name = prop.name();
        if prop.is_method() && call.is_none() {
            self.diags.push(
                Diagnostic::error(
                    "E0211",
                    span,
                    format!("`{name}` is a method and must be called"),
                )
                .with_label(format!("call it: `.{name}(...)`")),
            );
            return Ty::Unknown;
        }
        if !prop.is_method() && call.is_some() {
            self.diags.push(
                Diagnostic::error(
                    "E0211",
                    span,
                    format!("`{name}` is a property, not a method"),
                )
                .with_label("remove the argument list"),
            );
            return Ty::Unknown;
        }
        let wrong_base = |c: &mut Self, wants: &str| {
            if base != Ty::Unknown {
                c.diags.push(
                    Diagnostic::error(
                        "E0211",
                        span,
                        format!(
                            "`.{name}` applies to {wants}, found {}",
                            base.with_article()
                        ),
                    )
                    .with_label("wrong receiver"),
                );
            }
            Ty::Unknown
        };
        match prop {
            Prop::Size => match base {
                Ty::MSpace(n) | Ty::Tuple(n) => Ty::Tuple(n),
                _ => wrong_base(self, "a machine model or a tuple"),
            },
            Prop::Len | Prop::Volume => match base {
                Ty::MSpace(_) | Ty::Tuple(_) => Ty::Int,
                _ => wrong_base(self, "a machine model or a tuple"),
            },
            Prop::Ipoint | Prop::Ispace => match base {
                Ty::Task => Ty::Tuple(None),
                _ => wrong_base(self, "a Task"),
            },
            Prop::Parent => match base {
                Ty::Task => Ty::Task,
                _ => wrong_base(self, "a Task"),
            },
            Prop::Processor => {
                if base != Ty::Task {
                    return wrong_base(self, "a Task");
                }
                let (args, types) = call.unwrap_or((&[], &[]));
                self.arity(name, whole, args.len(), &[1]);
                match types.first() {
                    Some(Ty::MSpace(n)) => Ty::Tuple(*n),
                    Some(Ty::Unknown) | None => Ty::Tuple(None),
                    Some(other) => {
                        self.mismatch(
                            args[0].span,
                            format!(
                                "`processor` takes a machine model, found {}",
                                other.with_article()
                            ),
                        );
                        Ty::Tuple(None)
                    }
                }
            }
            Prop::Has => {
                let (args, types) = call.unwrap_or((&[], &[]));
                self.arity(name, whole, args.len(), &[1]);
                if let Some(t) = types.first() {
                    if !matches!(t, Ty::MemKind | Ty::Unknown) {
                        self.mismatch(
                            args[0].span,
                            format!("`has` takes a memory kind, found {}", t.with_article()),
                        );
                    }
                }
                Ty::Bool
            }
            _ => {
                // Machine-model transformations.
                let dims = match base {
                    Ty::MSpace(n) => n,
                    Ty::Unknown => None,
                    _ => return wrong_base(self, "a machine model"),
                };
                let (args, types) = call.unwrap_or((&[], &[]));
                let (expected, delta): (&[usize], i64) = match prop {
                    Prop::Split => (&[2], 1),
                    Prop::Merge => (&[2], -1),
                    Prop::Swap => (&[2], 0),
                    Prop::Slice => (&[3], 0),
                    Prop::Reverse => (&[1], 0),
                    Prop::BalanceSplit => (&[2], 0),
                    Prop::AutoSplit | Prop::GreedySplit => (&[2], 0),
                    _ => (&[], 0),
                };
                if !self.arity(name, whole, args.len(), expected) {
                    return Ty::MSpace(None);
                }
                let wants_tuple_second = matches!(prop, Prop::AutoSplit | Prop::GreedySplit);
                for (i, (a, t)) in args.iter().zip(types).enumerate() {
                    let want_tuple = wants_tuple_second && i == 1;
                    let ok = match t {
                        Ty::Unknown => true,
                        Ty::Tuple(_) => want_tuple,
                        Ty::Int => !want_tuple,
                        _ => false,
                    };
                    if !ok {
                        let want = if want_tuple { "a tuple" } else { "an int" };
                        self.mismatch(
                            a.span,
                            format!(
                                "argument {} of `{name}` must be {want}, found {}",
                                i + 1,
                                t.with_article()
                            ),
                        );
                    }
                }
                // Literal dimension arguments must exist.
                if let Some(n) = dims {
                    let dim_args: &[usize] = match prop {
                        Prop::Merge | Prop::Swap => &[0, 1],
                        _ => &[0],
                    };
                    for &k in dim_args {
                        if let Some(Expr {
                            kind: ExprKind::Int(d),
                            span,
                        }) = args.get(k)
                        {
                            if *d as usize >= n {
                                self.diags.push(
                                    Diagnostic::error(
                                        "E0211",
                                        *span,
                                        format!("dimension {d} does not exist: the machine model has {n} dims (0..{})", n.saturating_sub(1)),
                                    )
                                    .with_label("out of range"),
                                );
                            }
                        }
                    }
                }
                let new_dims = match prop {
                    Prop::BalanceSplit => match args.get(1).map(|a| &a.kind) {
                        Some(ExprKind::Int(k)) if *k == 2 || *k == 3 => {
                            dims.map(|n| n + *k as usize - 1)
                        }
                        Some(ExprKind::Int(k)) => {
                            self.diags.push(
                                Diagnostic::error("E0211", args[1].span, format!("`balance_split` splits into 2 or 3 dimensions, not {k}"))
                                    .with_label("expected 2 or 3")
                                    .with_note("the reference aborts with \"Unsupported Balanced Split Dimension\""),
                            );
                            None
                        }
                        _ => None,
                    },
                    Prop::AutoSplit | Prop::GreedySplit => match types.get(1) {
                        Some(Ty::Tuple(Some(k))) => {
                            dims.and_then(|n| n.checked_add(*k)?.checked_sub(1))
                        }
                        _ => None,
                    },
                    _ => dims.and_then(|n| {
                        usize::try_from(i64::try_from(n).ok()?.checked_add(delta)?).ok()
                    }),
                };
                Ty::MSpace(new_dims)
            }
        }
    }

    pub(super) fn arity(&mut self, name: &str, span: Span, got: usize, expected: &[usize]) -> bool {
        if expected.is_empty() || expected.contains(&got) {
            return true;
        }
        let want = expected
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(" or ");
        self.diags.push(
            Diagnostic::error(
                "E0211",
                span,
                format!("`{name}` takes {want} argument(s), {got} given"),
            )
            .with_label("wrong number of arguments"),
        );
        false
    }
}
