//! Functions and calls: binding arguments, running bodies, the call depth.

use mapwright_grammar::ast::{Expr, ExprKind, ParamType, Stmt, StmtKind};
use mapwright_grammar::Span;

use super::env::{Binding, Frame};
use super::error::{EvalErrorKind, Failure, R};
use super::expr::strip_parens;
use super::interp::Interp;
use super::machine_ops::MACHINE;
use super::value::{ints_of, Value};

impl<'p, 's> Interp<'p, 's> {
    /// Runs a function body in the current (already pushed) frame
    /// (`FuncDefNode::invoked`).
    pub(super) fn run_body(&mut self, body: &'p [Stmt], def_span: Span) -> R<Value> {
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

    /// Pushes a call frame and runs `body`.
    pub(super) fn enter(
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
    pub(super) fn invoke(&mut self, f: Value, args: Vec<(Value, Span)>, span: Span) -> R<Value> {
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
        }) = program.stmt(stmt)
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
        let mut frame = Frame::default();
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

    /// `f(args)`: the arguments are evaluated first, whatever is called.
    pub(super) fn eval_call(&mut self, callee: &'p Expr, args: &'p [Expr], span: Span) -> R<Value> {
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
}
