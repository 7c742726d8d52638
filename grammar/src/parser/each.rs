//! Top-level statements one at a time ([`EachStmt`]), for a caller that
//! handles each statement and forgets it: the formatter's whole-file path,
//! whose peak memory is then the input, the output and one statement
//! instead of the whole tree (see bench/memory).

use super::*;

/// A parse of a whole file handed over one top-level statement at a time,
/// with the comments and the span and severity of each diagnostic as they
/// are found. The statements, comments and diagnostics are exactly those of
/// [`parse`]: it is the same parser driving the same token stream, only
/// asked for one statement per call (the parser carries nothing from one
/// statement to the next but its position).
pub(crate) struct EachStmt<'a> {
    parser: Parser<'a>,
}

impl<'a> EachStmt<'a> {
    /// A parse of `source` that keeps the comments and, of the
    /// diagnostics, only their span and severity (light lists, as
    /// [`parse_for_format`] does), and no token past its statement.
    pub(crate) fn new(source: &'a str) -> EachStmt<'a> {
        let stream = TokenStream::new(source, true).collecting_into(CappedDiagnostics::light());
        EachStmt {
            parser: Parser {
                src: source,
                toks: RefCell::new(TokenWindow::new(stream, false)),
                pos: 0,
                diags: CappedDiagnostics::light(),
                python_semis: None,
                keep_error_stmts: true,
                depth: 0,
                renames: Vec::new(),
            },
        }
    }

    /// A parse for the streaming check ([`crate::report`]): no comments,
    /// and the diagnostics packed as [`parse_tree_packed`] packs them
    /// (`collect`, for [`EachStmt::finish_packed`]), or light, for the
    /// caller to drop with [`EachStmt::new_diagnostics`].
    pub(crate) fn reporting(source: &'a str, collect: bool) -> EachStmt<'a> {
        let list = if collect {
            CappedDiagnostics::packed
        } else {
            CappedDiagnostics::light
        };
        let stream = TokenStream::new(source, false).collecting_into(list());
        EachStmt {
            parser: Parser {
                src: source,
                toks: RefCell::new(TokenWindow::new(stream, false)),
                pos: 0,
                diags: list(),
                python_semis: None,
                keep_error_stmts: true,
                depth: 0,
                renames: Vec::new(),
            },
        }
    }

    /// The lexical and the syntax diagnostics of the whole file, packed
    /// and sorted as [`parse_tree_packed`] gives them (after the last
    /// statement; a [`EachStmt::reporting`] parse that collects them).
    pub(crate) fn finish_packed(mut self) -> PackedPair {
        self.parser.reject_empty_file();
        let (_, _, lexical) = self.parser.toks.into_inner().finish();
        lexical.into_packed_with(self.parser.diags)
    }

    /// Where the next statement's parse begins: the start of its first
    /// token and the token before it, which is all a parse resumed there
    /// needs to give the same statement ([`parse_one_at`]).
    pub(crate) fn resume_point(&mut self) -> ResumePoint {
        let pos = self.parser.pos;
        ResumePoint {
            from: self
                .parser
                .tok(pos)
                .map_or(self.parser.src.len(), |t| t.span.start()) as u32,
            previous: pos.checked_sub(1).and_then(|i| self.parser.tok(i)),
        }
    }

    /// The next top-level statement (a broken one as [`StmtKind::Error`]),
    /// `None` at the end of the file. When it returns, the first token of
    /// the statement after it has been lexed (and the comments before it).
    pub(crate) fn next_stmt(&mut self) -> Option<Arc<Stmt>> {
        // `statements` stops at the first boundary after one statement.
        self.parser.statements(&mut |_, _| true).pop()
    }

    /// The comments lexed since the last call, in source order.
    pub(crate) fn take_comments(&mut self) -> Vec<Token> {
        self.parser.toks.get_mut().stream_mut().take_comments()
    }

    /// The span and severity of each diagnostic (lexical, then syntax)
    /// found since the last call, in the order each stage found them. They
    /// are not kept (but still count toward the cap): a file full of
    /// errors holds none of them.
    pub(crate) fn new_diagnostics(&mut self, mut each: impl FnMut(Span, crate::Severity)) {
        let lexical = self
            .parser
            .toks
            .get_mut()
            .stream_mut()
            .take_light_diagnostics();
        let syntax = self.parser.diags.take_light();
        for (span, severity) in lexical.into_iter().chain(syntax) {
            each(span, severity);
        }
    }

    /// True once more diagnostics were found than [`parse`] keeps (it
    /// would have an `I0001`): lexical and syntax ones share one cap
    /// ([`CappedDiagnostics::append`]).
    pub(crate) fn over_the_cap(&mut self) -> bool {
        let lexical = self
            .parser
            .toks
            .get_mut()
            .stream_mut()
            .diagnostics()
            .total();
        lexical + self.parser.diags.total() > crate::diagnostic::MAX_DIAGNOSTICS
    }
}

/// Where a top-level statement's parse begins (see
/// [`EachStmt::resume_point`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResumePoint {
    from: u32,
    previous: Option<Token>,
}

/// The statement [`EachStmt::next_stmt`] gave at `at`, parsed again from
/// the source alone: the parser carries nothing from one statement to the
/// next but the token before it (see [`parse_resumed`]). For a caller that
/// forgot the tree and needs it once more (the streaming check, a
/// function's body, once per call that infers its return type). The
/// diagnostics are not wanted: the lists are light, so no fix is built (a
/// keyword used as a name builds one by lexing the whole file, which made
/// 20,000 calls before such a function take 50 s), and no comment is kept.
pub(crate) fn parse_one_at(source: &str, at: ResumePoint) -> Option<Arc<Stmt>> {
    let stream = TokenStream::new(source, false)
        .starting_at(at.from as usize)
        .collecting_into(CappedDiagnostics::light());
    resumed_parser(source, stream, at.previous, CappedDiagnostics::light())
        .statements(&mut |_, _| true)
        .pop()
}
