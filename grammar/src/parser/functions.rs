//! `def` functions: parameters, bodies, and recovery of Python-style bodies.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn func_def(&mut self) -> PResult<StmtKind> {
        let def_span = self.bump();
        let name = self.ident_or_expected("a function name")?;
        self.expect(T::LParen, "`(`")?;
        let mut params = Vec::new();
        if !self.at(T::RParen) {
            loop {
                params.push(self.param()?);
                if self.eat(T::Comma).is_none() {
                    break;
                }
            }
        }
        self.expect(T::RParen, "`,` or `)`")?;
        if self.at(T::Colon) {
            return self.python_style_body(def_span, name, params);
        }
        let open = self.expect(T::LBrace, "`{`")?;
        let mut body = Vec::new();
        loop {
            match self.peek() {
                Some(T::RBrace) => {
                    let close = self.bump();
                    if body.is_empty() {
                        self.push(
                            Diagnostic::error(
                                "E0110",
                                close,
                                "a function body needs at least one statement",
                            )
                            .with_label("empty body")
                            .with_related(open, "body begins here")
                            .with_note("mapping functions end with `return m[...];`"),
                        );
                    }
                    return Ok(StmtKind::FuncDef {
                        name,
                        params,
                        body,
                        body_span: open.to(close),
                    });
                }
                None => {
                    let at = self.src.len();
                    self.push(
                        Diagnostic::error(
                            "E0122",
                            Span::at(at),
                            "unclosed `{`: the file ends inside a function body",
                        )
                        .with_related(open, "this `{` is never closed")
                        .with_fix(Fix::safe(
                            "insert `}`",
                            vec![(Span::at(at), self.eof_insert("}"))],
                        )),
                    );
                    return Ok(StmtKind::FuncDef {
                        name,
                        params,
                        body,
                        body_span: open.to(Span::at(at)),
                    });
                }
                _ => {
                    let start = self.pos;
                    match self.body_stmt() {
                        Ok(s) => body.push(fit(s)),
                        Err(Failed) => {
                            self.recover_body(start);
                            let span = self.span_from(start);
                            body.push(Stmt {
                                kind: StmtKind::Error,
                                span,
                            });
                        }
                    }
                }
            }
        }
    }

    pub(super) fn param(&mut self) -> PResult<Param> {
        let ty = match self.peek() {
            Some(T::TyInt) => ParamType::Int,
            Some(T::TyBool) => ParamType::Bool,
            Some(T::TyIPoint) => ParamType::IPoint,
            Some(T::TyISpace) => ParamType::ISpace,
            Some(T::TyMSpace) => ParamType::MSpace,
            Some(T::KwTask) => ParamType::Task,
            Some(T::Ident) => {
                let span = self.cur_span();
                let word = span.text(self.src);
                let guess = if matches!(word, "task" | "t" | "tsk") {
                    "Task"
                } else {
                    "int"
                };
                self.push(
                    Diagnostic::error("E0121", span, format!("parameter `{word}` has no type"))
                        .with_label("expected a type before the name")
                        .with_note("parameter types are Task, int, bool, IPoint, ISpace and MSpace")
                        .with_fix(if guess == "Task" {
                            Fix::safe(
                                format!("declare `{guess} {word}`"),
                                vec![(Span::at(span.start()), format!("{guess} "))],
                            )
                        } else {
                            Fix::unsafe_(
                                format!("declare `{guess} {word}`"),
                                vec![(Span::at(span.start()), format!("{guess} "))],
                            )
                        }),
                );
                let name = self.ident("a parameter name")?;
                let ty = if guess == "Task" {
                    ParamType::Task
                } else {
                    ParamType::Int
                };
                return Ok(Param {
                    ty,
                    ty_span: Span::at(span.start()),
                    name,
                });
            }
            _ => {
                return self
                    .expected("a parameter type (Task, int, bool, IPoint, ISpace, MSpace) or `)`")
            }
        };
        let ty_span = self.bump();
        let name = self.ident_or_expected("a parameter name")?;
        Ok(Param { ty, ty_span, name })
    }

    pub(super) fn body_stmt(&mut self) -> PResult<Stmt> {
        let start = self.cur_span().start();
        let kind = match self.peek() {
            Some(T::KwReturn) => {
                self.bump();
                let value = self.statement_expr()?;
                self.expect_semi("`;`")?;
                StmtKind::Return { value }
            }
            Some(T::KwPrint) => self.print_stmt()?,
            Some(T::Ident) => self.assign_stmt()?,
            Some(k) if k.is_keyword() && self.peek_at(1) == Some(T::Assign) => {
                self.assign_stmt()?
            }
            Some(k) if k.starts_statement() => {
                let what = if k == T::KwDef {
                    "functions cannot be nested"
                } else {
                    "mapping statements belong at top level"
                };
                return self.fail(
                    Diagnostic::error(
                        "E0112",
                        self.cur_span(),
                        format!(
                            "`{}` is not allowed inside a function: {what}",
                            self.cur_text()
                        ),
                    )
                    .with_label("not allowed in a function body")
                    .with_note("a function body holds assignments, `print(...)` and `return ...;`"),
                );
            }
            _ => return self.expected("`return`, `print` or an assignment"),
        };
        Ok(Stmt {
            kind,
            span: Span::new(start, self.prev_end()),
        })
    }

    /// Skips a broken statement inside a function body: through the next `;`,
    /// or up to the `}` that closes the body.
    pub(super) fn recover_body(&mut self, start: usize) {
        if self.pos == start && !self.at(T::RBrace) {
            self.bump();
        }
        let mut depth = 0usize;
        while let Some(kind) = self.peek() {
            match kind {
                T::LBrace => depth += 1,
                T::RBrace if depth == 0 => return,
                T::RBrace => depth -= 1,
                T::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// `def f(Task t):` followed by an indented body, as in Python and in the
    /// paper's prose. Parse the indented lines as the body (so the rest of the
    /// file is still checked) and offer the braces version as one fix.
    pub(super) fn python_style_body(
        &mut self,
        def_span: Span,
        name: Ident,
        params: Vec<Param>,
    ) -> PResult<StmtKind> {
        let colon = self.bump();
        let def_line_start = self.line_start(def_span.start());
        let def_indent = self.indent_at(def_line_start);
        // The line of the token under consideration (start, indentation),
        // advanced by scanning each byte once: a body of many statements on
        // one long line stays linear.
        let mut line = (def_line_start, def_indent);
        let mut scanned_to = def_span.start();
        let mut body = Vec::new();
        let saved_semis = self.python_semis.replace(Vec::new());
        let mut clean = true;
        while let Some(tok) = self.tok(self.pos) {
            let at = tok.span.start().max(scanned_to);
            if let Some(i) = self.src[scanned_to..at].rfind(['\n', '\r']) {
                let start = scanned_to + i + 1;
                line = (start, self.indent_at(start));
            }
            scanned_to = at;
            if line.0 != def_line_start && line.1 <= def_indent {
                break;
            }
            let start = self.pos;
            match self.body_stmt() {
                Ok(s) => body.push(fit(s)),
                Err(Failed) => {
                    clean = false;
                    self.recover_body(start);
                    if self.pos == start {
                        // Recovery stops before a `}` without consuming it: it
                        // ends no Python-style body, so leave it to the top
                        // level (which reports it) instead of failing on it
                        // forever. (Found by the fuzzer: `def f(Task t):`
                        // then `return 0}` looped, allocating without bound.)
                        break;
                    }
                    let span = self.span_from(start);
                    body.push(Stmt {
                        kind: StmtKind::Error,
                        span,
                    });
                }
            }
        }
        let semis = std::mem::replace(&mut self.python_semis, saved_semis).unwrap_or_default();
        let end = self.prev_end();
        let mut d = Diagnostic::error(
            "E0102",
            colon,
            format!("Python-style definition: `def {}(...):` needs braces, not a colon and indentation", name.name),
        )
        .with_label("expected `{`")
        .with_note("the DSL writes `def f(Task task) { ...; return ...; }`; each body statement ends with `;`");
        if clean && !body.is_empty() {
            let mut edits = vec![(colon, " {".to_string())];
            edits.extend(semis.iter().map(|&at| (Span::at(at), ";".to_string())));
            edits.push((Span::at(end), "\n}".to_string()));
            d = d.with_fix(Fix::safe("convert to the braces form", edits));
        } else if body.is_empty() {
            d = d.with_note("the indented body is missing");
        }
        self.push(d);
        let body_span = colon.to(Span::at(end));
        Ok(StmtKind::FuncDef {
            name,
            params,
            body,
            body_span,
        })
    }
}
