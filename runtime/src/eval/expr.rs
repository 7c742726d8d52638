//! Expressions: operators, tuples, indexing, slicing, unpacking and
//! comprehensions, with the reference's types and errors.

use mapwright_grammar::ast::{BinOp, Expr, ExprKind};
use mapwright_grammar::Span;

use crate::mspace::Selection;

use super::env::Binding;
use super::error::{EvalErrorKind, Failure, R};
use super::interp::Interp;
use super::machine_ops::MACHINE;
use super::shape::proc_kind;
use super::value::Value;

pub(super) fn fits_int(v: i64) -> bool {
    (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&v)
}

/// `(e)` is `e` in the reference's tree.
pub(super) fn strip_parens(mut e: &Expr) -> &Expr {
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

impl<'p, 's> Interp<'p, 's> {
    pub(super) fn eval(&mut self, e: &'p Expr) -> R<Value> {
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

    pub(super) fn make_unpack(&self, v: Value, span: Span) -> R<Value> {
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
    pub(super) fn push_spread(
        &mut self,
        v: Value,
        out: &mut Vec<Value>,
        span: Span,
        depth: usize,
    ) -> R<()> {
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
    pub(super) fn eval_list(&mut self, items: &'p [Expr]) -> R<Vec<(Value, Span)>> {
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
}
