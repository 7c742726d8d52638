//! The parser's tokens: lexed on demand from a [`TokenStream`], addressed
//! by their index in the whole file, and, unless the caller wants them all
//! back, forgotten once the parser is past the statement that held them.
//!
//! Why: a token is 24 bytes, often several times the text it covers, and
//! the parser never looks back beyond the top-level statement it is in
//! (plus the one token before it). Keeping only that window makes the
//! tokens' memory the size of one statement instead of the whole file.

use std::collections::VecDeque;

use crate::diagnostic::CappedDiagnostics;
use crate::token::{Lexed, Token, TokenStream};

pub(super) struct TokenWindow<'a> {
    stream: TokenStream<'a>,
    /// Tokens `base..base + buf.len()` of the file.
    buf: VecDeque<Token>,
    base: usize,
    /// Whether every token is kept (for [`super::Parsed::tokens`]).
    keep_all: bool,
    exhausted: bool,
}

impl<'a> TokenWindow<'a> {
    pub(super) fn new(stream: TokenStream<'a>, keep_all: bool) -> TokenWindow<'a> {
        TokenWindow {
            stream,
            buf: VecDeque::new(),
            base: 0,
            keep_all,
            exhausted: false,
        }
    }

    /// Token `index` of the file, lexing up to it if needed; `None` past
    /// the end (or, which the parser never asks, before the window).
    pub(super) fn get(&mut self, index: usize) -> Option<Token> {
        while !self.exhausted && index >= self.base + self.buf.len() {
            match self.stream.next() {
                Some(token) => self.buf.push_back(token),
                None => self.exhausted = true,
            }
        }
        let offset = index.checked_sub(self.base)?;
        self.buf.get(offset).copied()
    }

    /// A window whose token 0 is `previous`, a token that ends before the
    /// stream's first one: a resumed parse sees the token before its first
    /// statement, as a parse from the file's start does.
    pub(super) fn after(stream: TokenStream<'a>, previous: Token) -> TokenWindow<'a> {
        let mut window = TokenWindow::new(stream, true);
        window.buf.push_back(previous);
        window
    }

    /// Every token lexed so far and what the stream collected, without
    /// lexing the rest of the file (for a resumed parse that stopped early).
    pub(super) fn finish_here(self) -> Lexed {
        let (comments, diagnostics, diagnostics_dropped) = self.stream.finish();
        Lexed {
            tokens: Vec::from(self.buf),
            comments,
            diagnostics,
            diagnostics_dropped,
        }
    }

    /// Forgets the tokens before `index` (unless all are kept).
    pub(super) fn forget_before(&mut self, index: usize) {
        if self.keep_all {
            return;
        }
        while self.base < index && self.buf.pop_front().is_some() {
            self.base += 1;
        }
    }

    /// The stream: its comments and lexical diagnostics so far.
    pub(super) fn stream_mut(&mut self) -> &mut TokenStream<'a> {
        &mut self.stream
    }

    /// True if the file has no significant token at all.
    pub(super) fn file_is_empty(&mut self) -> bool {
        self.get(0).is_none() && self.base == 0
    }

    /// What the lexer found: every token when `keep_all` (else none),
    /// the comments when the stream kept them, the lexical diagnostics
    /// (as the stream collected them: light or full).
    pub(super) fn finish(mut self) -> (Vec<Token>, Vec<Token>, CappedDiagnostics) {
        // Lex to the end: the diagnostics and comments must be complete.
        while !self.exhausted {
            match self.stream.next() {
                Some(token) if self.keep_all => self.buf.push_back(token),
                Some(_) => {}
                None => self.exhausted = true,
            }
        }
        let tokens = if self.keep_all {
            Vec::from(self.buf)
        } else {
            Vec::new()
        };
        let (comments, diagnostics) = self.stream.finish_capped();
        (tokens, comments, diagnostics)
    }
}
