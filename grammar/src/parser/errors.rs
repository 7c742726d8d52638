//! Recording diagnostics: "expected X", the missing-`;` recovery, keywords used as names.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn push(&mut self, d: Diagnostic) {
        self.diags.push_in(d, self.src);
    }

    /// Records "expected X, found Y" at the current token and fails. A bad
    /// character was already reported by the lexer, so it is not reported twice.
    pub(super) fn expected<R>(&mut self, what: &str) -> PResult<R> {
        if self.peek() != Some(T::BadChar) {
            let d = Diagnostic::error(
                "E0100",
                self.cur_span(),
                format!("expected {what}, found {}", self.found()),
            )
            .with_label(format!("expected {what}"));
            self.push(d);
        }
        Err(Failed)
    }

    pub(super) fn fail<R>(&mut self, d: Diagnostic) -> PResult<R> {
        self.push(d);
        Err(Failed)
    }

    pub(super) fn expect(&mut self, kind: T, what: &str) -> PResult<Span> {
        match self.eat(kind) {
            Some(s) => Ok(s),
            None => self.expected(what),
        }
    }

    /// Expects the `;` that ends a statement. When the next token is on a
    /// later line the `;` was most likely forgotten: say where it belongs and
    /// carry on as if it were there.
    pub(super) fn expect_semi(&mut self, what: &str) -> PResult<()> {
        if self.eat(T::Semi).is_some() {
            return Ok(());
        }
        if self.on_new_line() && self.pos > 0 {
            let at = self.prev_end();
            if let Some(semis) = &mut self.python_semis {
                semis.push(at);
                return Ok(());
            }
            let mut d = Diagnostic::error(
                "E0101",
                Span::at(at),
                "missing `;` at the end of the statement",
            )
            .with_label("add `;` here")
            .with_fix(Fix::safe("insert `;`", vec![(Span::at(at), ";".into())]));
            if self.tok(self.pos).is_some() {
                d = d.with_related(
                    self.cur_span(),
                    format!("the next statement begins here ({})", self.found()),
                );
            }
            self.push(d);
            return Ok(());
        }
        self.expected(what)
    }

    pub(super) fn ident(&mut self, what: &str) -> PResult<Ident> {
        if self.at(T::Ident) {
            let span = self.bump();
            return Ok(Ident {
                name: span.text(self.src).to_string(),
                span,
            });
        }
        if let Some(kind) = self.peek() {
            if kind.is_keyword() && kind != T::KwDef {
                return Ok(self.keyword_as_name(what));
            }
        }
        self.expected(what)
    }

    /// A reserved word where a name belongs: report it, then treat it as the
    /// name so the rest of the statement is still checked.
    pub(super) fn keyword_as_name(&mut self, what: &str) -> Ident {
        let span = self.cur_span();
        let word = span.text(self.src).to_string();
        let mut d = Diagnostic::error(
            "E0104",
            span,
            format!("`{word}` is a reserved keyword and cannot be used as {what}"),
        )
        .with_label("reserved keyword");
        let renameable =
            what.contains("variable") || what.contains("parameter") || what.contains("function");
        // Past the cap, or in a list of spans only, the diagnostic is only
        // counted: spare the re-lexing.
        if renameable && self.diags.keeps_the_next_whole() {
            let new_name = format!("{word}_");
            // Lexed again, as the parser keeps only the current
            // statement's tokens; once per keyword.
            let edits = match self.renames.iter().find(|(w, _)| *w == word) {
                Some((_, edits)) => edits.clone(),
                None => {
                    let edits =
                        keyword_rename_edits(TokenStream::new(self.src, false), self.src, &word);
                    self.renames.push((word.clone(), edits.clone()));
                    edits
                }
            };
            d = d.with_fix(Fix::unsafe_(
                format!("rename `{word}` to `{new_name}` everywhere in this file"),
                edits,
            ));
        } else {
            d = d.with_note(
                "task and region names that collide with DSL keywords cannot be named here; use `*` (or, for a Region, the argument index)",
            );
        }
        self.push(d);
        self.bump();
        Ident { name: word, span }
    }
}

/// The edits of the keyword-as-name fix (E0104): every token of the file
/// spelled `word`, except after `.`, renamed to `word_`. The parser builds
/// the fix with it, and the incremental re-parse rebuilds a reused fix from
/// the new tokens with it.
pub(crate) fn keyword_rename_edits(
    tokens: impl IntoIterator<Item = Token>,
    source: &str,
    word: &str,
) -> Vec<(Span, String)> {
    let new_name = format!("{word}_");
    let mut edits = Vec::new();
    let mut after_dot = false;
    for t in tokens {
        if !after_dot && t.span.text(source) == word {
            edits.push((t.span, new_name.clone()));
        }
        after_dot = t.kind == T::Dot;
    }
    edits
}
