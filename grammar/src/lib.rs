//! mapwright-grammar: the front end of the Legion mapper DSL.
//!
//! Module map (data flows top to bottom):
//! - [`token`]       logos lexer: tokens, comments as trivia, lexical diagnostics;
//!   all at once ([`token::lex`]) or streamed ([`token::TokenStream`]).
//! - [`ast`]         the typed syntax tree with byte spans.
//! - [`parser`]      recursive-descent parser with the reference grammar's
//!   precedences, error recovery and targeted diagnostics; always returns a tree.
//!   [`parse`] keeps the tokens; [`parse_tree`] forgets them as it goes.
//! - [`span`]        byte ranges, stored as two `u32` (8 bytes in every node).
//! - [`diagnostic`]  diagnostics as data: code, severity, span, message, fixes.
//! - [`packed`]      diagnostics packed into bytes, for a caller that only
//!   reports them ([`report`]).
//! - [`fast_hash`]   the unkeyed hasher of the checker's and resolver's tables.
//! - [`line_index`]  byte offset <-> (line, UTF-8 / UTF-16 column).
//! - [`incremental`] re-parse after an edit: only the top-level statements
//!   it can affect, the rest reused with shifted spans.
//! - [`resolve`]     name resolution: symbols, definitions, references;
//!   after an edit, the last resolution reused where the edit cannot reach
//!   ([`resolve::resolve_after_edit`]).
//! - [`check`]       static semantics: types, definitions, mapping-rule shadowing;
//!   statement by statement, reusing the previous check's work for the
//!   statements an edit did not change (`check::memo`); for [`report`],
//!   streamed over the statements without the whole tree (`check::stream`).
//! - [`format`]      the formatter (keeps every comment, idempotent; a whole
//!   file one top-level statement at a time, [`parser`]'s `EachStmt`).
//! - [`codes`]       the table of diagnostic codes with their explanations.
//! - [`render`]      diagnostics as rustc-style text with source snippets, or
//!   JSON (the CLI's `check` and mapwright's Legion mapper print these).
//! - [`pin`]         statements pinned by a trailing `# mapwright: keep` comment.
//!
//! Invariants: nothing here panics on any input; every diagnostic carries a
//! stable code; this crate knows nothing of applications, machines or LSP.

pub mod ast;
pub mod check;
pub mod codes;
pub mod diagnostic;
pub mod fast_hash;
pub mod format;
pub mod incremental;
pub mod line_index;
pub mod packed;
pub mod parser;
pub mod pin;
pub mod render;
pub mod resolve;
pub mod span;
pub mod suggest;
pub mod token;

pub use diagnostic::{Applicability, Diagnostic, Fix, Severity, TextEdit};
pub use line_index::LineIndex;
pub use parser::{parse, parse_tree, Parsed};
pub use span::Span;

/// Everything the front end knows about one file: syntax, names, types.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub parsed: Parsed,
    pub checked: check::Checked,
}

impl Analysis {
    /// Syntax and semantic diagnostics together, in source order.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        crate::diagnostic::in_source_order(&self.parsed.diagnostics, &self.checked.diagnostics)
            .into_iter()
            .cloned()
            .collect()
    }

    /// [`Analysis::diagnostics`], dropping the rest of the analysis first
    /// (tree, names, tables) instead of copying the diagnostics out of it.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        let Analysis { parsed, checked } = self;
        let mut all = parsed.diagnostics;
        drop(parsed.program);
        // Exact room: one allocation, not a doubling next to both lists.
        all.reserve_exact(checked.diagnostics.len());
        all.extend(checked.diagnostics);
        crate::diagnostic::sort_by_span(&mut all);
        all
    }
}

/// Parses and checks `source`. Semantic checks run on whatever parsed, so a
/// syntax error in one statement does not hide problems elsewhere.
pub fn analyze(source: &str) -> Analysis {
    let parsed = parse(source);
    let checked = check::check(&parsed, source);
    Analysis { parsed, checked }
}

/// [`analyze`], remembering each statement's check so that the analysis
/// of an edited text can reuse it
/// ([`incremental::reanalyze_remembering`]).
pub fn analyze_remembering(source: &str) -> Analysis {
    let parsed = parse(source);
    let (checked, _) = check::check_incremental(&parsed, source, None);
    Analysis { parsed, checked }
}

/// [`analyze`] without the tokens and comments (see [`parse_tree`]): for
/// callers that use only the tree, the names and the diagnostics.
pub fn analyze_tree(source: &str) -> Analysis {
    let parsed = parse_tree(source);
    let checked = check::check(&parsed, source);
    Analysis { parsed, checked }
}

/// The diagnostics of a file as `mapwright check` reports them without an
/// application: syntax and semantic, packed ([`packed`]), read back one at
/// a time in source order by [`Report::diagnostics`].
#[derive(Debug, Clone)]
pub struct Report<'s> {
    /// The text the diagnostics were found in: some are built from it when
    /// read (see [`packed`]).
    source: &'s str,
    /// The lexer's diagnostics, sorted by span.
    lexical: packed::PackedDiagnostics,
    /// The parser's, sorted by span, with the `I0001` summary of the two
    /// lists (read after the lexer's at equal spans).
    syntax: packed::PackedDiagnostics,
    /// The checker's, sorted by span, with their own `I0001`.
    check: packed::PackedDiagnostics,
}

impl Report<'_> {
    /// The diagnostics in the order [`Analysis::into_diagnostics`] gives
    /// them, built one at a time.
    pub fn diagnostics(&self) -> impl Iterator<Item = Diagnostic> + '_ {
        packed::merged([&self.lexical, &self.syntax, &self.check], self.source)
    }

    /// How many diagnostics there are.
    pub fn len(&self) -> usize {
        self.lexical.len() + self.syntax.len() + self.check.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// [`analyze_tree`]'s diagnostics (`analyze_tree(source).into_diagnostics()`,
/// the same values in the same order), kept packed while the file is parsed
/// and checked, and nothing else of the analysis: a file full of mistakes
/// holds a few bytes per diagnostic instead of several hundred. The file is
/// parsed twice, one statement at a time, and no tree but the function
/// definitions' is kept (`check::stream`).
pub fn report(source: &str) -> Report<'_> {
    let ((lexical, syntax), check) = check::report_streaming(source);
    Report {
        source,
        lexical,
        syntax,
        check,
    }
}

/// [`report`] from the whole tree: parsed once, then checked (what
/// [`report`] did before it streamed; the reference of the tests that the
/// two agree).
#[doc(hidden)]
pub fn report_whole(source: &str) -> Report<'_> {
    let (parsed, (lexical, syntax)) = parser::parse_tree_packed(source);
    let check = check::check_packed(&parsed, source);
    Report {
        source,
        lexical,
        syntax,
        check,
    }
}
