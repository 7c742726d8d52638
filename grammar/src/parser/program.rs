//! The whole file and top-level error recovery.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn program(&mut self) -> Program {
        let stmts = self.statements(&mut |_, _| false);
        self.reject_empty_file();
        Program { stmts }
    }

    /// E0109 if the file, parsed to its end, has no token.
    pub(super) fn reject_empty_file(&mut self) {
        if self.toks.borrow_mut().file_is_empty() {
            self.push(
                Diagnostic::error(
                    "E0109",
                    Span::at(self.src.len()),
                    "a mapper needs at least one statement",
                )
                .with_note("the reference rejects empty and comment-only files")
                .with_fix(Fix::unsafe_(
                    "add a default task placement",
                    vec![(Span::at(self.src.len()), self.eof_insert("Task * GPU,CPU;"))],
                )),
            );
        }
    }

    /// Top-level statements from the current token to the end of the
    /// file, or up to the first statement boundary (after at least one
    /// statement) where `stop(previous token, next token)` says so.
    pub(super) fn statements(
        &mut self,
        stop: &mut dyn FnMut(&Token, &Token) -> bool,
    ) -> Vec<Arc<Stmt>> {
        let mut stmts = Vec::new();
        while let Some(next) = self.tok(self.pos) {
            if !stmts.is_empty() && self.pos > 0 {
                if let Some(previous) = self.tok(self.pos - 1) {
                    if stop(&previous, &next) {
                        break;
                    }
                }
            }
            let start = self.pos;
            // The parser never looks back past the token before this
            // statement (`prev_end`).
            self.toks
                .borrow_mut()
                .forget_before(start.saturating_sub(1));
            // A quarter more room at a time, not double: the statement
            // vector is most of a big file's tree, and a doubling holds the
            // old and new blocks (three times the vector) while it moves.
            if stmts.len() == stmts.capacity() {
                stmts.reserve_exact((stmts.len() / 4).max(4));
            }
            match self.top_stmt() {
                Ok(stmt) => stmts.push(Arc::new(fit(stmt))),
                Err(Failed) => {
                    // Taken before recovery, which may forget the token.
                    let first = self.tok(start).map(|t| t.span);
                    self.recover_top(start);
                    let span = match first {
                        Some(first) => first.to(Span::at(self.prev_end())),
                        None => self.span_from(start),
                    };
                    // The first statement stays, broken or not: where it
                    // starts is where the checker inserts a missing global.
                    if self.keep_error_stmts || stmts.is_empty() {
                        stmts.push(Arc::new(Stmt {
                            kind: StmtKind::Error,
                            span,
                        }));
                    }
                }
            }
        }
        stmts
    }

    pub(super) fn eof_insert(&self, text: &str) -> String {
        if self.src.is_empty() || self.src.ends_with('\n') {
            format!("{text}\n")
        } else {
            format!("\n{text}\n")
        }
    }

    /// Skips the rest of a broken top-level statement: up to and including the
    /// next `;` outside braces, or up to a statement keyword that begins a line.
    ///
    /// The tokens it skips are forgotten as it goes (it looks only at the
    /// token before the current one and the one after), so a statement that
    /// fails early in a long line (an expression nested past
    /// [`MAX_NESTING`], an unmatched `{`) holds a few tokens, not all the
    /// rest of the statement (see bench/memory). The statement's first
    /// token may be forgotten too: the caller takes its span before.
    pub(super) fn recover_top(&mut self, start: usize) {
        if self.pos == start {
            self.bump();
        }
        let mut depth = 0usize;
        while let Some(kind) = self.peek() {
            self.toks
                .borrow_mut()
                .forget_before(self.pos.saturating_sub(1));
            match kind {
                T::LBrace => depth += 1,
                T::RBrace if depth > 0 => depth -= 1,
                T::RBrace => {
                    self.bump();
                    return;
                }
                T::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                k if depth == 0 && self.on_new_line() && self.begins_statement(k) => return,
                _ => {}
            }
            self.bump();
        }
    }

    pub(super) fn begins_statement(&self, kind: T) -> bool {
        kind.starts_statement() || (kind == T::Ident && self.peek_at(1) == Some(T::Assign))
    }
}
