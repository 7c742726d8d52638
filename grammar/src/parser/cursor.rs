//! Token access: peek, bump, line breaks and indentation around tokens.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn peek(&self) -> Option<T> {
        self.toks.get(self.pos).map(|t| t.kind)
    }

    pub(super) fn peek_at(&self, n: usize) -> Option<T> {
        self.toks.get(self.pos + n).map(|t| t.kind)
    }

    pub(super) fn at(&self, kind: T) -> bool {
        self.peek() == Some(kind)
    }

    pub(super) fn cur_span(&self) -> Span {
        match self.toks.get(self.pos) {
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
            self.toks[self.pos - 1].span.end
        }
    }

    pub(super) fn bump(&mut self) -> Span {
        let span = self.cur_span();
        if self.pos < self.toks.len() {
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

    /// Zero-based line of `offset`; lines end at `\n`, `\r\n` or a lone `\r`,
    /// as in [`crate::LineIndex`].
    pub(super) fn line_of(&self, offset: usize) -> usize {
        let bytes = &self.src.as_bytes()[..offset.min(self.src.len())];
        bytes
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
            .count()
    }

    /// True if the current token starts on a later line than the previous token ends.
    pub(super) fn on_new_line(&self) -> bool {
        if self.pos == 0 {
            return true;
        }
        match self.toks.get(self.pos) {
            None => true,
            // `\r` alone is a line break too.
            Some(t) => self.src.as_bytes()[self.prev_end()..t.span.start]
                .iter()
                .any(|&b| b == b'\n' || b == b'\r'),
        }
    }

    /// Column (in bytes) of the first non-blank character of the line holding `offset`.
    pub(super) fn line_indent(&self, offset: usize) -> usize {
        let line_start = self.src[..offset]
            .rfind(['\n', '\r'])
            .map(|i| i + 1)
            .unwrap_or(0);
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
