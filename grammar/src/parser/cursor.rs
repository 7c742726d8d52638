//! Token access: peek, bump, line breaks and indentation around tokens.

use super::*;

impl<'a> Parser<'a> {
    /// Token `index` of the file (lexed on demand, see [`super::window`]).
    pub(super) fn tok(&self, index: usize) -> Option<Token> {
        self.toks.borrow_mut().get(index)
    }

    /// The span from token `start` (where a statement began) to the end of
    /// the last token consumed.
    pub(super) fn span_from(&self, start: usize) -> Span {
        let first = self
            .tok(start)
            .map_or(Span::at(self.prev_end()), |t| t.span);
        first.to(Span::at(self.prev_end()))
    }

    pub(super) fn peek(&self) -> Option<T> {
        self.tok(self.pos).map(|t| parser_kind(&t, self.src))
    }

    pub(super) fn peek_at(&self, n: usize) -> Option<T> {
        self.tok(self.pos + n).map(|t| parser_kind(&t, self.src))
    }

    pub(super) fn at(&self, kind: T) -> bool {
        self.peek() == Some(kind)
    }

    pub(super) fn cur_span(&self) -> Span {
        match self.tok(self.pos) {
            Some(t) => t.span,
            None => Span::at(self.src.len()),
        }
    }

    pub(super) fn cur_text(&self) -> &'a str {
        self.cur_span().text(self.src)
    }

    pub(super) fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.tok(self.pos - 1).map_or(0, |t| t.span.end())
        }
    }

    pub(super) fn bump(&mut self) -> Span {
        let span = self.cur_span();
        if self.tok(self.pos).is_some() {
            self.pos += 1;
        }
        span
    }

    pub(super) fn eat(&mut self, kind: T) -> Option<Span> {
        if self.at(kind) {
            Some(self.bump())
        } else {
            None
        }
    }

    /// True if the current token starts on a later line than the previous token ends.
    pub(super) fn on_new_line(&self) -> bool {
        if self.pos == 0 {
            return true;
        }
        match self.tok(self.pos) {
            None => true,
            // `\r` alone is a line break too.
            Some(t) => self.src.as_bytes()[self.prev_end()..t.span.start()]
                .iter()
                .any(|&b| b == b'\n' || b == b'\r'),
        }
    }

    /// Start of the line holding `offset`; lines end at `\n`, `\r\n` or a
    /// lone `\r`, as in [`crate::LineIndex`].
    pub(super) fn line_start(&self, offset: usize) -> usize {
        self.src[..offset]
            .rfind(['\n', '\r'])
            .map(|i| i + 1)
            .unwrap_or(0)
    }

    /// Column (in bytes) of the first non-blank character of the line
    /// starting at `line_start`.
    pub(super) fn indent_at(&self, line_start: usize) -> usize {
        self.src[line_start..]
            .bytes()
            .take_while(|b| *b == b' ' || *b == b'\t')
            .count()
    }

    pub(super) fn found(&self) -> String {
        match self.peek() {
            None => "end of file".into(),
            Some(T::Ident) => format!("identifier `{}`", self.cur_text()),
            Some(T::Int) => format!("integer `{}`", self.cur_text()),
            Some(k) => k.describe(),
        }
    }
}
