//! The parser: tokens -> [`Program`] + diagnostics. Never fails, never panics.
//!
//! A hand-written recursive-descent parser with precedence climbing. It
//! accepts exactly the language of the reference bison grammar
//! (`src/compiler/parser.y`), including the outcomes of its precedence
//! declarations (`a?b:c?d:e` is `(a?b:c)?d:e`; `*a+b` is `(*a)+b`; a lone `*`
//! before `-` or `*` is the wildcard). It reports the first error of a
//! statement at the token where the reference's LALR automaton fails, so error
//! lines agree with the reference; then it resynchronises at the next `;` or
//! statement keyword so the rest of the file still parses.
//!
//! Why not a combinator library: the error position must match an LALR
//! automaton token for token, and the targeted diagnostics below need the
//! surrounding context (line breaks, indentation, the next statement), which
//! is simplest to express directly. The grammar is small and stable.
//!
//! Module map:
//! - [`window`]       the tokens: lexed on demand, forgotten after their statement.
//! - [`each`]         top-level statements handed over one at a time (the formatter).
//! - [`cursor`]       token access: peek, bump, line breaks, indentation.
//! - [`errors`]       recording diagnostics: expected-X, `;` recovery, keywords as names.
//! - [`program`]      the whole file and top-level error recovery.
//! - [`statements`]   the mapping statements (Task, Region, Layout, IndexTaskMap, ...).
//! - [`functions`]    `def` functions, their bodies and Python-style body recovery.
//! - [`precedence`]   the binary-operator table and precedence climbing, depth bound.
//! - [`expressions`]  primary and postfix expressions: literals, calls, indexing, tuples.

mod cursor;
mod each;
mod errors;
mod expressions;
mod functions;
mod precedence;
mod program;
mod statements;
mod window;

pub(crate) use each::{parse_one_at, EachStmt, ResumePoint};
pub(crate) use errors::keyword_rename_edits;

use std::cell::RefCell;
use std::sync::Arc;

use crate::ast::*;
use crate::diagnostic::{CappedDiagnostics, Diagnostic, Fix};
use crate::suggest::closest;
use crate::token::{Token, TokenKind as T, TokenStream};
use crate::Span;
use window::TokenWindow;

/// The result of parsing: always a program, plus every diagnostic (lexical and
/// syntactic, in source order), the significant tokens and the comments.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub program: Program,
    pub diagnostics: Vec<Diagnostic>,
    pub tokens: Vec<Token>,
    pub comments: Vec<Token>,
}

impl Parsed {
    /// True if there is at least one error-severity diagnostic.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.is_error())
    }
}

/// Parses a whole mapper file.
pub fn parse(source: &str) -> Parsed {
    parse_with(source, true, true)
}

/// [`parse`] without [`Parsed::tokens`] and [`Parsed::comments`] (both
/// left empty): the same tree and diagnostics, but the tokens are
/// forgotten statement by statement instead of kept, which saves 24 bytes
/// per token at the peak. For callers that only check (`mapwright check`).
pub fn parse_tree(source: &str) -> Parsed {
    parse_with(source, false, false)
}

/// What the formatter needs of a parse ([`parse_for_format`]).
pub(crate) struct FormatParse {
    pub(crate) program: Program,
    pub(crate) comments: Vec<Token>,
    /// Where each error starts, ascending.
    pub(crate) error_offsets: Vec<usize>,
    /// Some diagnostics were left out (the full parse has an `I0001`).
    pub(crate) capped: bool,
}

/// [`parse`] keeping the comments but not the tokens, and of the
/// diagnostics only where the errors start and whether some were left out:
/// what the formatter needs (it reads the tokens again as it goes). A file
/// full of errors then holds no diagnostic text (see bench/memory).
pub(crate) fn parse_for_format(source: &str) -> FormatParse {
    let (program, _, comments, diagnostics) =
        parse_parts(source, false, true, CappedDiagnostics::light);
    let (light, dropped) = diagnostics.into_light();
    let mut error_offsets: Vec<usize> = light
        .iter()
        .filter(|(_, severity)| *severity == crate::Severity::Error)
        .map(|(span, _)| span.start())
        .collect();
    error_offsets.sort_unstable();
    FormatParse {
        program,
        comments,
        error_offsets,
        capped: dropped.is_some(),
    }
}

/// [`parse_tree`] with its diagnostics packed
/// ([`CappedDiagnostics::packed`]) and sorted, apart from the tree (whose
/// [`Parsed::diagnostics`] is left empty): for a caller that only reports
/// them (see [`crate::report`]). Top-level statements that fail to parse
/// are left out of the tree, but for the first statement: the resolver and
/// the checker skip them, and read only where the first one starts.
pub(crate) fn parse_tree_packed(source: &str) -> (Parsed, PackedPair) {
    let (program, tokens, comments, lexical, syntax) =
        parse_parts_apart(source, false, false, CappedDiagnostics::packed);
    let parsed = Parsed {
        program,
        diagnostics: Vec::new(),
        tokens,
        comments,
    };
    (parsed, lexical.into_packed_with(syntax))
}

/// The lexical and the syntax diagnostics of a file, packed apart (see
/// [`CappedDiagnostics::into_packed_with`]).
pub(crate) type PackedPair = (
    crate::packed::PackedDiagnostics,
    crate::packed::PackedDiagnostics,
);

fn parse_with(source: &str, keep_tokens: bool, keep_comments: bool) -> Parsed {
    let (program, tokens, comments, diagnostics) = parse_parts(
        source,
        keep_tokens,
        keep_comments,
        CappedDiagnostics::default,
    );
    let mut diagnostics = diagnostics.into_vec(source);
    crate::diagnostic::sort_by_span(&mut diagnostics);
    Parsed {
        program,
        diagnostics,
        tokens,
        comments,
    }
}

/// The tree, the tokens (if kept), the comments (if kept) and the lexical
/// and syntax diagnostics in one capped list (`list` makes each empty
/// list: full, light or packed), unsorted.
fn parse_parts(
    source: &str,
    keep_tokens: bool,
    keep_comments: bool,
    list: fn() -> CappedDiagnostics,
) -> (Program, Vec<Token>, Vec<Token>, CappedDiagnostics) {
    let (program, tokens, comments, mut all, syntax) =
        parse_parts_apart(source, keep_tokens, keep_comments, list);
    // The lexer's list first, then the parser's: the same ones are kept
    // as when the lexer's were pushed one by one before the parser's.
    all.append(syntax, source);
    (program, tokens, comments, all)
}

/// [`parse_parts`] with the lexer's and the parser's diagnostics apart.
#[allow(clippy::type_complexity)]
fn parse_parts_apart(
    source: &str,
    keep_tokens: bool,
    keep_comments: bool,
    list: fn() -> CappedDiagnostics,
) -> (
    Program,
    Vec<Token>,
    Vec<Token>,
    CappedDiagnostics,
    CappedDiagnostics,
) {
    let diags = list();
    // Only a packed list's caller reports and nothing else (see
    // `Parser::keep_error_stmts`).
    let keep_error_stmts = !diags.is_packed();
    let stream = TokenStream::new(source, keep_comments).collecting_into(list());
    let mut p = Parser {
        src: source,
        toks: RefCell::new(TokenWindow::new(stream, keep_tokens)),
        pos: 0,
        diags,
        python_semis: None,
        keep_error_stmts,
        depth: 0,
        renames: Vec::new(),
    };
    let program = p.program();
    let (tokens, comments, lexical) = p.toks.into_inner().finish();
    (program, tokens, comments, lexical, p.diags)
}

/// What [`parse_resumed`] parsed: the statements from where it began to
/// where it stopped, and what the lexer and the parser found on the way.
#[derive(Debug)]
pub(crate) struct Resumed {
    pub(crate) stmts: Vec<Arc<Stmt>>,
    /// Where it stopped: the start of the next statement's first token, or
    /// the end of the file.
    pub(crate) end: usize,
    /// The tokens and comments before `end`.
    pub(crate) tokens: Vec<Token>,
    pub(crate) comments: Vec<Token>,
    /// The lexical diagnostics of the tokens before `end`, then the
    /// parser's, in the order [`parse`] sorts them; none dropped (a caller
    /// must check the whole file's count against the cap itself).
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// A parser of `source` reading `stream` (started where a statement
/// begins) after `previous`, the token before it if any, and collecting its
/// diagnostics into `diags`: where [`parse_resumed`] and
/// [`parse_one_at`] begin.
fn resumed_parser<'a>(
    source: &'a str,
    stream: TokenStream<'a>,
    previous: Option<Token>,
    diags: CappedDiagnostics,
) -> Parser<'a> {
    let (toks, pos) = match previous {
        Some(token) => (TokenWindow::after(stream, token), 1),
        None => (TokenWindow::new(stream, true), 0),
    };
    Parser {
        src: source,
        toks: RefCell::new(toks),
        pos,
        diags,
        python_semis: None,
        keep_error_stmts: true,
        depth: 0,
        renames: Vec::new(),
    }
}

/// Parses `source`'s top-level statements from byte `from` (where a
/// statement begins; `previous` is the token before it, if any) until the
/// first statement boundary where `stop(previous token, next token)` says
/// so, or the end of the file. Each statement parses exactly as in
/// [`parse`], given the same tokens from `previous` on: the parser carries
/// nothing from one statement to the next but the token before it. The
/// hook of the incremental re-parse (`crate::incremental`).
pub(crate) fn parse_resumed(
    source: &str,
    from: usize,
    previous: Option<Token>,
    stop: &mut dyn FnMut(&Token, &Token) -> bool,
) -> Resumed {
    let stream = TokenStream::new(source, true).starting_at(from);
    let mut p = resumed_parser(source, stream, previous, CappedDiagnostics::default());
    let stmts = p.statements(stop);
    // Stopped before a token, or at the end of the file (where nothing
    // was lexed ahead, so nothing is left out below).
    let end = p.tok(p.pos).map_or(usize::MAX, |t| t.span.start());
    let mut lexed = p.toks.into_inner().finish_here();
    let before_end = |t: &Token| t.span.start() < end;
    lexed
        .tokens
        .retain(|t| t.span.start() >= from && before_end(t));
    lexed.comments.retain(before_end);
    let mut diagnostics: Vec<Diagnostic> = lexed
        .diagnostics
        .into_iter()
        .filter(|d| d.span.start() < end)
        .collect();
    let end = end.min(source.len());
    let (syntax, syntax_dropped) = p.diags.into_parts();
    diagnostics.extend(syntax);
    if lexed.diagnostics_dropped.is_some() || syntax_dropped.is_some() {
        // Over the cap already: say so with a capped note the caller sees.
        diagnostics.push(Diagnostic::error(
            crate::diagnostic::CAPPED_CODE,
            Span::at(end),
            "over the cap",
        ));
    }
    crate::diagnostic::sort_by_span(&mut diagnostics);
    Resumed {
        stmts,
        end,
        tokens: lexed.tokens,
        comments: lexed.comments,
        diagnostics,
    }
}

/// The kind the parser sees for `token`: `&`/`|` as the `&&`/`||` the user
/// evidently meant and an unterminated string as a string, so a lexical
/// error costs one diagnostic. Mapped here, on the fly, rather than in a
/// second token vector, which would cost 24 bytes per token.
fn parser_kind(token: &Token, source: &str) -> T {
    match (token.kind, token.span.text(source)) {
        (T::BadChar, "&") => T::AndAnd,
        (T::BadChar, "|") => T::OrOr,
        (T::UnterminatedStr, _) => T::Str,
        (k, _) => k,
    }
}

/// A failed production; its diagnostic has already been recorded.
struct Failed;
type PResult<T> = Result<T, Failed>;

struct Parser<'a> {
    src: &'a str,
    toks: RefCell<TokenWindow<'a>>,
    pos: usize,
    diags: CappedDiagnostics,
    /// Inside a Python-style body: where `;` would go, instead of diagnostics.
    python_semis: Option<Vec<usize>>,
    /// Whether a top-level statement that fails to parse is kept in the
    /// tree as [`StmtKind::Error`]: always, but for a caller that only
    /// reports the diagnostics ([`parse_tree_packed`]), whose later passes
    /// skip such statements (a 120-byte block per broken line otherwise)
    /// but for the first statement's start.
    keep_error_stmts: bool,
    /// Current expression nesting: one per recursive production entered and
    /// one per link of a left-deep chain built in a loop (`a.b.c`, `f(1)(2)`,
    /// `a[0][1]`, `a + b + c`). Bounded, so that hostile input can exhaust
    /// neither the parser's stack nor, by building a huge tree, the stack of
    /// any later pass.
    depth: usize,
    /// The keyword-rename fix's edits found so far, by keyword: every use
    /// of one keyword as a name gets the same fix, and finding its edits
    /// lexes the whole file (a file with 2,000 such uses lexed itself once
    /// per kept diagnostic, 1,000 times).
    renames: Vec<(String, Vec<(Span, String)>)>,
}

/// Deepest expression nesting accepted, and the deepest tree the parser
/// hands on (see [`Parser::statement_expr`]); real mappers stay below 10.
///
/// Every later pass recurses over expressions freely because of this bound,
/// so it is sized for the smallest stack they run on: a 2 MiB test thread
/// of a debug build (`tests/tests/deep_input.rs` runs the whole pipeline
/// on the deepest accepted trees there).
pub const MAX_NESTING: usize = 64;

const CONSTRAINT_NAMES: &[&str] = &[
    "SOA", "AOS", "C_order", "F_order", "Compact", "Exact", "Align",
];

fn proc_kind(k: T) -> Option<ProcKind> {
    Some(match k {
        T::ProcCpu => ProcKind::CPU,
        T::ProcGpu => ProcKind::GPU,
        T::ProcIo => ProcKind::IO,
        T::ProcPy => ProcKind::PY,
        T::ProcProc => ProcKind::PROC,
        T::ProcOmp => ProcKind::OMP,
        _ => return None,
    })
}

fn mem_kind(k: T) -> Option<MemKind> {
    Some(match k {
        T::MemSysmem => MemKind::SYSMEM,
        T::MemFbmem => MemKind::FBMEM,
        T::MemRdmem => MemKind::RDMEM,
        T::MemZcmem => MemKind::ZCMEM,
        T::MemSockmem => MemKind::SOCKMEM,
        T::MemVirtual => MemKind::VIRTUAL,
        _ => return None,
    })
}

/// `stmt` with no spare room in its lists. A list grows to room for four
/// at its second element (`Vec`'s first growth), and most of the tree's
/// lists hold one or two: a processor list, a call's arguments, a short
/// body. The tree is most of what `check` and `fmt` hold (see
/// bench/memory), so each list is cut to its length once parsed
/// (expression lists where they are built).
fn fit(mut stmt: Stmt) -> Stmt {
    fn fit_sel(sel: &mut TaskSel) {
        if let TaskSel::Names(names) = sel {
            names.shrink_to_fit();
        }
    }
    match &mut stmt.kind {
        StmtKind::Task { tasks, procs } => {
            fit_sel(tasks);
            procs.shrink_to_fit();
        }
        StmtKind::Region { task, mems, .. } => {
            fit_sel(task);
            mems.shrink_to_fit();
        }
        StmtKind::Layout {
            task, constraints, ..
        } => {
            fit_sel(task);
            constraints.shrink_to_fit();
        }
        StmtKind::IndexTaskMap { tasks, .. } | StmtKind::SingleTaskMap { tasks, .. } => {
            fit_sel(tasks)
        }
        StmtKind::ControlReplicate { tasks } => tasks.shrink_to_fit(),
        StmtKind::Print { args, .. } => args.shrink_to_fit(),
        StmtKind::FuncDef { params, body, .. } => {
            params.shrink_to_fit();
            body.shrink_to_fit();
        }
        _ => {}
    }
    stmt
}

/// The value of an integer literal; saturates instead of overflowing.
fn int_value(text: &str) -> i64 {
    text.parse::<i64>().unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests;
