//! The binary-operator precedence table and precedence climbing, with the
//! nesting bound that keeps hostile input from exhausting the stack.

use super::*;

const BINARY_OPS: &[(T, BinOp, u8)] = &[
    (T::OrOr, BinOp::Or, 1),
    (T::AndAnd, BinOp::And, 2),
    (T::EqEq, BinOp::Eq, 3),
    (T::Ne, BinOp::Ne, 3),
    (T::Lt, BinOp::Lt, 4),
    (T::Gt, BinOp::Gt, 4),
    (T::Le, BinOp::Le, 4),
    (T::Ge, BinOp::Ge, 4),
    (T::Plus, BinOp::Add, 5),
    (T::Minus, BinOp::Sub, 5),
    (T::Star, BinOp::Mul, 6),
    (T::Slash, BinOp::Div, 6),
    (T::Percent, BinOp::Mod, 6),
];

impl<'a> Parser<'a> {
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.expr_bp(0)
    }

    /// Precedence climbing. Levels, loosest first: 0 `?:`, 1 `||`, 2 `&&`,
    /// 3 `== !=`, 4 `< > <= >=`, 5 `+ -`, 6 `* / %`; all left-associative.
    pub(super) fn expr_bp(&mut self, min: u8) -> PResult<Expr> {
        // Saved and restored (not decremented): the loop below adds one level
        // per link of a chain.
        let saved = self.depth;
        self.depth += 1;
        let result = self.expr_bp_inner(min);
        self.depth = saved;
        result
    }

    /// One more link of a chain built in a loop: counts as one level of
    /// nesting, because it makes the tree one level deeper.
    pub(super) fn chain_link(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return self.too_deep();
        }
        Ok(())
    }

    /// A whole expression of a statement (assigned, returned or printed).
    ///
    /// The parser's own counter bounds its recursion, but a tree can still
    /// end up deeper than [`MAX_NESTING`] (a nested operand followed by a
    /// chain: the counter restarts after the operand, the tree does not).
    /// This measures the finished tree without recursion and rejects one
    /// that is too deep, so no later pass ever sees one.
    pub(super) fn statement_expr(&mut self) -> PResult<Expr> {
        let e = self.expr()?;
        match e.deeper_than(MAX_NESTING) {
            None => Ok(e),
            Some(span) => {
                e.dismantle();
                self.fail(Self::too_deep_diagnostic(span))
            }
        }
    }

    pub(super) fn too_deep<R>(&mut self) -> PResult<R> {
        let span = self.cur_span();
        self.fail(Self::too_deep_diagnostic(span))
    }

    pub(super) fn too_deep_diagnostic(span: Span) -> Diagnostic {
        Diagnostic::error(
            "E0125",
            span,
            format!("expression nested more than {MAX_NESTING} levels deep"),
        )
        .with_label("too deeply nested")
        .with_note("split the expression into assignments")
    }

    pub(super) fn expr_bp_inner(&mut self, min: u8) -> PResult<Expr> {
        if self.depth > MAX_NESTING {
            return self.too_deep();
        }
        let mut lhs = self.prefix()?;
        while let Some(kind) = self.peek() {
            if kind == T::Question && min == 0 {
                self.chain_link()?;
                self.bump();
                let then = self.expr_bp(0)?;
                let colon_span = self.expect(T::Colon, "`:` of the conditional expression")?;
                let otherwise = self.expr_bp(1)?;
                let span = lhs.span.to(otherwise.span);
                lhs = Expr {
                    kind: ExprKind::Ternary {
                        cond: Box::new(lhs),
                        then: Box::new(then),
                        otherwise: Box::new(otherwise),
                        colon_span,
                    },
                    span,
                };
                continue;
            }
            let Some(&(_, op, level)) = BINARY_OPS.iter().find(|(k, _, _)| *k == kind) else {
                break;
            };
            if level < min {
                break;
            }
            self.chain_link()?;
            let op_span = self.bump();
            let rhs = self.expr_bp(level + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary {
                    op,
                    op_span,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                span,
            };
        }
        Ok(lhs)
    }

    /// Prefix operators. Unary `-` binds tighter than `*` but looser than
    /// postfix. A `*` is an unpack when an operand follows, except before `-`
    /// and `*`, where the reference's precedences make it the lone wildcard.
    pub(super) fn prefix(&mut self) -> PResult<Expr> {
        // Saved and restored: `postfix` adds one level per link of a chain.
        let saved = self.depth;
        self.depth += 1;
        let result = if self.depth > MAX_NESTING {
            self.too_deep()
        } else {
            self.prefix_inner()
        };
        self.depth = saved;
        result
    }

    pub(super) fn prefix_inner(&mut self) -> PResult<Expr> {
        match self.peek() {
            Some(T::Minus) => {
                let op = self.bump();
                let operand = self.prefix()?;
                let span = op.to(operand.span);
                Ok(Expr {
                    kind: ExprKind::Neg(Box::new(operand)),
                    span,
                })
            }
            Some(T::Star) => {
                let op = self.bump();
                match self.peek() {
                    Some(k) if k.starts_expr() && k != T::Star && k != T::Minus => {
                        let operand = self.prefix()?;
                        let span = op.to(operand.span);
                        Ok(Expr {
                            kind: ExprKind::Unpack(Box::new(operand)),
                            span,
                        })
                    }
                    _ => self.postfix(Expr {
                        kind: ExprKind::Star,
                        span: op,
                    }),
                }
            }
            Some(T::Bang) => {
                let bang = self.bump();
                let operand = self.prefix()?;
                let text = operand.span.text(self.src);
                let replacement = if matches!(operand.kind, ExprKind::Name(_) | ExprKind::Paren(_))
                {
                    format!("{text} == False")
                } else {
                    format!("({text}) == False")
                };
                self.push(
                    Diagnostic::error("E0111", bang, "`!` is not an operator of the mapper DSL")
                        .with_label("negation is not supported")
                        .with_fix(Fix::safe(
                            format!("write `{replacement}`"),
                            vec![(bang.to(operand.span), replacement.clone())],
                        )),
                );
                Ok(operand)
            }
            _ => {
                let primary = self.primary()?;
                self.postfix(primary)
            }
        }
    }
}
