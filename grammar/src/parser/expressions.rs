//! Primary and postfix expressions: literals, names, calls, tuples,
//! comprehensions, member access, indexing and slices.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn primary(&mut self) -> PResult<Expr> {
        let span = self.cur_span();
        let kind = match self.peek() {
            Some(T::Int) => {
                self.bump();
                let text = span.text(self.src);
                if text.parse::<i64>().is_err() {
                    self.push(
                        Diagnostic::warning("W0126", span, "integer literal too large")
                            .with_note("the reference reads integers with `atoi`; values above 2^31-1 overflow"),
                    );
                }
                ExprKind::Int(int_value(text))
            }
            Some(T::KwTrue) => {
                self.bump();
                ExprKind::Bool(true)
            }
            Some(T::KwFalse) => {
                self.bump();
                ExprKind::Bool(false)
            }
            Some(T::Ident) => {
                self.bump();
                ExprKind::Name(span.text(self.src).to_string())
            }
            Some(k) if k.is_proc_kind() => {
                self.bump();
                ExprKind::Proc(proc_kind(k).unwrap_or(ProcKind::CPU))
            }
            Some(k) if k.is_mem_kind() => {
                self.bump();
                ExprKind::Mem(mem_kind(k).unwrap_or(MemKind::SYSMEM))
            }
            Some(T::LParen) => return self.paren_or_tuple(),
            Some(T::KwTuple) => return self.comprehension(),
            Some(T::Str) => {
                return self.fail(
                    Diagnostic::error(
                        "E0118",
                        span,
                        "strings are only allowed as `print`'s first argument",
                    )
                    .with_label("unexpected string"),
                );
            }
            Some(k) if k.is_property() && self.peek_at(1) == Some(T::LParen) => {
                return self.property_as_function();
            }
            Some(k)
                if k.is_property()
                    || matches!(
                        k,
                        T::TyInt | T::TyBool | T::TyIPoint | T::TyISpace | T::TyMSpace
                    ) =>
            {
                // Most likely a variable that was (wrongly) given a keyword's name.
                let ident = self.keyword_as_name("a variable name");
                ExprKind::Name(ident.name)
            }
            _ => return self.expected("an expression"),
        };
        Ok(Expr { kind, span })
    }

    pub(super) fn paren_or_tuple(&mut self) -> PResult<Expr> {
        let open = self.bump();
        if self.at(T::RParen) {
            return self.expected("an expression (the DSL has no empty tuple)");
        }
        let first = self.expr()?;
        if self.at(T::Comma) {
            let mut items = vec![first];
            while self.eat(T::Comma).is_some() {
                items.push(self.expr()?);
            }
            // A list in the tree keeps no spare room (see `fit`).
            items.shrink_to_fit();
            let close = self.expect(T::RParen, "`,` or `)`")?;
            return Ok(Expr {
                kind: ExprKind::Tuple(items),
                span: open.to(close),
            });
        }
        let close = self.expect(T::RParen, "`)`")?;
        Ok(Expr {
            kind: ExprKind::Paren(Box::new(first)),
            span: open.to(close),
        })
    }

    pub(super) fn comprehension(&mut self) -> PResult<Expr> {
        let kw = self.bump();
        self.expect(T::LParen, "`(` after `tuple`")?;
        let body = self.expr()?;
        self.expect(T::KwFor, "`for`")?;
        let var = self.ident_or_expected("a loop variable name")?;
        self.expect(T::KwIn, "`in`")?;
        let iter = self.expr()?;
        let close = self.expect(T::RParen, "`)`")?;
        Ok(Expr {
            kind: ExprKind::Comprehension {
                body: Box::new(body),
                var: Box::new(var),
                iter: Box::new(iter),
            },
            span: kw.to(close),
        })
    }

    /// `len(t)` / `split(m, 0, 2)`: a property written as a function. Offer the
    /// method form and parse it as that.
    pub(super) fn property_as_function(&mut self) -> PResult<Expr> {
        let prop_span = self.bump();
        let prop = Prop::from_name(prop_span.text(self.src)).unwrap_or(Prop::Len);
        self.bump();
        let mut args = vec![self.expr()?];
        while self.eat(T::Comma).is_some() {
            args.push(self.expr()?);
        }
        let close = self.expect(T::RParen, "`,` or `)`")?;
        let whole = prop_span.to(close);
        let base = args.remove(0);
        let base_text = base.span.text(self.src);
        let base_text = if matches!(
            base.kind,
            ExprKind::Name(_)
                | ExprKind::Paren(_)
                | ExprKind::Call { .. }
                | ExprKind::Index { .. }
                | ExprKind::Prop { .. }
        ) {
            base_text.to_string()
        } else {
            format!("({base_text})")
        };
        let rest: Vec<&str> = args.iter().map(|a| a.span.text(self.src)).collect();
        let replacement = if rest.is_empty() && !prop.is_method() {
            format!("{base_text}.{}", prop.name())
        } else {
            format!("{base_text}.{}({})", prop.name(), rest.join(", "))
        };
        self.push(
            Diagnostic::error(
                "E0119",
                prop_span,
                format!("`{}` is a property, not a function", prop.name()),
            )
            .with_label(format!("write `{replacement}`"))
            .with_fix(Fix::safe(
                format!("write `{replacement}`"),
                vec![(whole, replacement.clone())],
            )),
        );
        let prop_expr = Expr {
            kind: ExprKind::Prop {
                base: Box::new(base),
                prop,
                prop_span,
            },
            span: whole,
        };
        if rest.is_empty() && !prop.is_method() {
            Ok(prop_expr)
        } else {
            Ok(Expr {
                kind: ExprKind::Call {
                    callee: Box::new(prop_expr),
                    args,
                },
                span: whole,
            })
        }
    }

    /// Calls, indexing and properties after an operand, built in a loop; each
    /// link counts as a level of nesting (the caller, `prefix`, restores the
    /// counter).
    pub(super) fn postfix(&mut self, mut e: Expr) -> PResult<Expr> {
        loop {
            if matches!(self.peek(), Some(T::LParen | T::LBracket | T::Dot)) {
                self.chain_link()?;
            }
            match self.peek() {
                Some(T::LParen) => {
                    let open = self.bump();
                    if self.at(T::RParen) {
                        let close = self.cur_span();
                        return self.fail(
                            Diagnostic::error("E0114", close, "a call needs at least one argument")
                                .with_label("expected an argument")
                                .with_related(open, "call begins here")
                                .with_note("the reference grammar has no zero-argument calls"),
                        );
                    }
                    let mut args = vec![self.expr()?];
                    while self.eat(T::Comma).is_some() {
                        args.push(self.expr()?);
                    }
                    args.shrink_to_fit();
                    let close = self.expect(T::RParen, "`,` or `)`")?;
                    let span = e.span.to(close);
                    e = Expr {
                        kind: ExprKind::Call {
                            callee: Box::new(e),
                            args,
                        },
                        span,
                    };
                }
                Some(T::LBracket) => {
                    self.bump();
                    e = self.index_or_slice(e)?;
                }
                Some(T::Dot) => {
                    let dot = self.bump();
                    match self.peek() {
                        Some(k) if k.is_property() => {
                            let prop_span = self.bump();
                            let prop =
                                Prop::from_name(prop_span.text(self.src)).unwrap_or(Prop::Size);
                            let span = e.span.to(prop_span);
                            e = Expr {
                                kind: ExprKind::Prop {
                                    base: Box::new(e),
                                    prop,
                                    prop_span,
                                },
                                span,
                            };
                        }
                        Some(T::Int)
                            if dot.start() == e.span.end()
                                && matches!(e.kind, ExprKind::Int(_)) =>
                        {
                            let span = e.span.to(self.cur_span());
                            return self.fail(
                                Diagnostic::error(
                                    "E0115",
                                    span,
                                    "the mapper DSL has no floating-point numbers",
                                )
                                .with_label("not an integer")
                                .with_note(
                                    "use integer arithmetic, e.g. `a * 3 / 2` instead of `a * 1.5`",
                                ),
                            );
                        }
                        Some(T::Ident) => {
                            let span = self.cur_span();
                            let word = span.text(self.src);
                            let mut d = Diagnostic::error("E0120", span, format!("unknown property `{word}`"))
                                .with_label("not a property")
                                .with_note(
                                    "after `.` only these are allowed: size split merge swap slice reverse balance_split auto_split greedy_split volume has len ipoint ispace parent processor",
                                );
                            if let Some(best) = closest(word, Prop::ALL.iter().map(|p| p.name())) {
                                d = d.with_fix(Fix::respell_keyword(
                                    format!("replace with `{best}`"),
                                    span,
                                    word,
                                    best,
                                    Prop::ALL.iter().map(|p| p.name()),
                                ));
                            }
                            return self.fail(d);
                        }
                        _ => return self.expected("a property after `.`"),
                    }
                }
                _ => return Ok(e),
            }
        }
    }

    pub(super) fn index_or_slice(&mut self, base: Expr) -> PResult<Expr> {
        if self.at(T::RBracket) {
            return self.expected("an index");
        }
        let lo = if self.at(T::Colon) {
            None
        } else {
            Some(self.expr()?)
        };
        if let Some(colon_span) = self.eat(T::Colon) {
            let hi = if self.at(T::RBracket) {
                None
            } else {
                Some(self.expr()?)
            };
            if self.at(T::Comma) {
                return self.fail(
                    Diagnostic::error("E0123", self.cur_span(), "a slice must be the whole index")
                        .with_label("expected `]`")
                        .with_note("`m[a:b]` is allowed; `m[a:b, c]` is not"),
                );
            }
            let close = self.expect(T::RBracket, "`]`")?;
            let span = base.span.to(close);
            return Ok(Expr {
                kind: ExprKind::Slice {
                    base: Box::new(base),
                    lo: lo.map(Box::new),
                    hi: hi.map(Box::new),
                    colon_span,
                },
                span,
            });
        }
        let mut indices = vec![lo.unwrap_or(Expr {
            kind: ExprKind::Star,
            span: Span::at(0),
        })];
        while self.eat(T::Comma).is_some() {
            indices.push(self.expr()?);
        }
        indices.shrink_to_fit();
        let close = self.expect(T::RBracket, "`,` or `]`")?;
        let span = base.span.to(close);
        Ok(Expr {
            kind: ExprKind::Index {
                base: Box::new(base),
                indices,
            },
            span,
        })
    }
}
