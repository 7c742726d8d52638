//! Tokens of the mapper DSL and the lexer (logos).
//!
//! The token set mirrors the reference scanner (`src/compiler/scanner.l`):
//! keywords are reserved, matching is longest-token and case-sensitive, and
//! `Machine` is an ordinary identifier. Comments are kept as trivia because the
//! formatter must reproduce them; bad characters and unterminated strings become
//! diagnostics instead of aborting, so the parser always sees a token stream.

use logos::Logos;

use crate::diagnostic::{CappedDiagnostics, Diagnostic, Fix};
use crate::Span;

/// Kinds of tokens. Comments and errors are included so the lexer never
/// aborts; the parser skips trivia.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[logos(skip r"[ \t\r\x07\n]+")]
pub enum TokenKind {
    // A comment ends at any line break: `\n`, `\r\n` or a lone `\r`.
    #[regex(r"//[^\n\r]*")]
    #[regex(r"#[^\n\r]*")]
    Comment,

    // Statement keywords.
    #[token("Task")]
    KwTask,
    #[token("Region")]
    KwRegion,
    #[token("Layout")]
    KwLayout,
    #[token("InstanceLimit")]
    KwInstanceLimit,
    #[token("CollectMemory")]
    KwCollectMemory,
    #[token("IndexTaskMap")]
    KwIndexTaskMap,
    #[token("SingleTaskMap")]
    KwSingleTaskMap,
    #[token("ControlReplicate")]
    KwControlReplicate,

    // Layout constraints.
    #[token("F_order")]
    FOrder,
    #[token("C_order")]
    COrder,
    #[token("AOS")]
    Aos,
    #[token("SOA")]
    Soa,
    #[token("Compact")]
    Compact,
    #[token("Align")]
    Align,
    #[token("Exact")]
    Exact,

    // Properties (the only words allowed after `.`).
    #[token("size")]
    PropSize,
    #[token("split")]
    PropSplit,
    #[token("merge")]
    PropMerge,
    #[token("swap")]
    PropSwap,
    #[token("slice")]
    PropSlice,
    #[token("reverse")]
    PropReverse,
    #[token("balance_split")]
    PropBalanceSplit,
    #[token("auto_split")]
    PropAutoSplit,
    #[token("greedy_split")]
    PropGreedySplit,
    #[token("volume")]
    PropVolume,
    #[token("has")]
    PropHas,
    #[token("len")]
    PropLen,
    #[token("ipoint")]
    PropIpoint,
    #[token("ispace")]
    PropIspace,
    #[token("parent")]
    PropParent,
    #[token("processor")]
    PropProcessor,

    // Processor kinds.
    #[token("CPU")]
    ProcCpu,
    #[token("GPU")]
    ProcGpu,
    #[token("IO")]
    ProcIo,
    #[token("PY")]
    ProcPy,
    #[token("PROC")]
    ProcProc,
    #[token("OMP")]
    ProcOmp,

    // Memory kinds.
    #[token("SYSMEM")]
    MemSysmem,
    #[token("FBMEM")]
    MemFbmem,
    #[token("RDMEM")]
    MemRdmem,
    #[token("ZCMEM")]
    MemZcmem,
    #[token("SOCKMEM")]
    MemSockmem,
    #[token("VIRTUAL")]
    MemVirtual,

    // Types.
    #[token("int")]
    TyInt,
    #[token("bool")]
    TyBool,
    #[token("IPoint")]
    TyIPoint,
    #[token("ISpace")]
    TyISpace,
    #[token("MSpace")]
    TyMSpace,

    // Other keywords.
    #[token("tuple")]
    KwTuple,
    #[token("for")]
    KwFor,
    #[token("in")]
    KwIn,
    #[token("True")]
    KwTrue,
    #[token("False")]
    KwFalse,
    #[token("def")]
    KwDef,
    #[token("return")]
    KwReturn,
    #[token("print")]
    KwPrint,

    #[regex(r"[_a-zA-Z][_a-zA-Z0-9]*")]
    Ident,
    #[regex(r"[0-9]+")]
    Int,
    #[regex(r#""[^"\n]*""#)]
    Str,
    /// A string that reaches the end of its line without a closing quote.
    #[regex(r#""[^"\n]*"#)]
    UnterminatedStr,

    // Two-character operators.
    #[token("<=")]
    Le,
    #[token(">=")]
    Ge,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,

    // One-character operators.
    #[token("-")]
    Minus,
    #[token("+")]
    Plus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("=")]
    Assign,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token("!")]
    Bang,
    #[token("?")]
    Question,
    #[token(":")]
    Colon,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(".")]
    Dot,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,

    /// A character the language does not know (reported as a diagnostic).
    BadChar,
}

impl TokenKind {
    /// True for reserved words (everything spelled with letters except identifiers).
    pub fn is_keyword(self) -> bool {
        !matches!(self, TokenKind::Ident) && self.keyword_text().is_some()
    }

    /// True for the words allowed after `.`.
    pub fn is_property(self) -> bool {
        use TokenKind::*;
        matches!(
            self,
            PropSize
                | PropSplit
                | PropMerge
                | PropSwap
                | PropSlice
                | PropReverse
                | PropBalanceSplit
                | PropAutoSplit
                | PropGreedySplit
                | PropVolume
                | PropHas
                | PropLen
                | PropIpoint
                | PropIspace
                | PropParent
                | PropProcessor
        )
    }

    /// True for processor kinds (`CPU GPU IO PY PROC OMP`).
    pub fn is_proc_kind(self) -> bool {
        use TokenKind::*;
        matches!(
            self,
            ProcCpu | ProcGpu | ProcIo | ProcPy | ProcProc | ProcOmp
        )
    }

    /// True for memory kinds (`SYSMEM FBMEM RDMEM ZCMEM SOCKMEM VIRTUAL`).
    pub fn is_mem_kind(self) -> bool {
        use TokenKind::*;
        matches!(
            self,
            MemSysmem | MemFbmem | MemRdmem | MemZcmem | MemSockmem | MemVirtual
        )
    }

    /// True for parameter types (`int bool IPoint ISpace MSpace Task`).
    pub fn is_type(self) -> bool {
        use TokenKind::*;
        matches!(
            self,
            TyInt | TyBool | TyIPoint | TyISpace | TyMSpace | KwTask
        )
    }

    /// True for layout-constraint keywords that stand alone (all but `Align`).
    pub fn is_simple_constraint(self) -> bool {
        use TokenKind::*;
        matches!(self, FOrder | COrder | Aos | Soa | Compact | Exact)
    }

    /// True for the keywords that begin a top-level statement.
    pub fn starts_statement(self) -> bool {
        use TokenKind::*;
        matches!(
            self,
            KwTask
                | KwRegion
                | KwLayout
                | KwInstanceLimit
                | KwCollectMemory
                | KwIndexTaskMap
                | KwSingleTaskMap
                | KwControlReplicate
                | KwDef
                | KwPrint
        )
    }

    /// True for tokens that can begin an expression.
    pub fn starts_expr(self) -> bool {
        use TokenKind::*;
        self.is_proc_kind()
            || self.is_mem_kind()
            || matches!(
                self,
                LParen | Star | Minus | Int | KwTrue | KwFalse | Ident | KwTuple
            )
    }

    /// How a token is named in "expected X, found Y" messages.
    pub fn describe(self) -> String {
        if let Some(k) = self.keyword_text() {
            return format!("keyword `{k}`");
        }
        if let Some(op) = self.operator_text() {
            return format!("`{op}`");
        }
        match self {
            TokenKind::Ident => "identifier".into(),
            TokenKind::Int => "integer".into(),
            TokenKind::Str | TokenKind::UnterminatedStr => "string".into(),
            TokenKind::Comment => "comment".into(),
            _ => "unrecognized character".into(),
        }
    }
}

/// Declares a table of fixed spellings and the `TokenKind` method that
/// answers from it: one list, so the lexer's words, the messages, the
/// completion and the tests' vocabularies cannot drift apart.
macro_rules! spellings {
    ($(#[$table_doc:meta])* $table:ident, $(#[$fn_doc:meta])* $method:ident, $($kind:ident => $text:literal,)*) => {
        $(#[$table_doc])*
        pub const $table: &[(TokenKind, &str)] = &[$((TokenKind::$kind, $text)),*];

        impl TokenKind {
            $(#[$fn_doc])*
            pub fn $method(self) -> Option<&'static str> {
                match self {
                    $(TokenKind::$kind => Some($text),)*
                    _ => None,
                }
            }
        }
    };
}

spellings! {
    /// Every reserved word with its token kind (statement keywords first,
    /// in the manual's order).
    KEYWORDS,
    /// The spelling of a keyword; `None` for tokens with variable text and
    /// operators.
    keyword_text,
    KwTask => "Task",
    KwRegion => "Region",
    KwLayout => "Layout",
    KwInstanceLimit => "InstanceLimit",
    KwCollectMemory => "CollectMemory",
    KwIndexTaskMap => "IndexTaskMap",
    KwSingleTaskMap => "SingleTaskMap",
    KwControlReplicate => "ControlReplicate",
    FOrder => "F_order",
    COrder => "C_order",
    Aos => "AOS",
    Soa => "SOA",
    Compact => "Compact",
    Align => "Align",
    Exact => "Exact",
    PropSize => "size",
    PropSplit => "split",
    PropMerge => "merge",
    PropSwap => "swap",
    PropSlice => "slice",
    PropReverse => "reverse",
    PropBalanceSplit => "balance_split",
    PropAutoSplit => "auto_split",
    PropGreedySplit => "greedy_split",
    PropVolume => "volume",
    PropHas => "has",
    PropLen => "len",
    PropIpoint => "ipoint",
    PropIspace => "ispace",
    PropParent => "parent",
    PropProcessor => "processor",
    ProcCpu => "CPU",
    ProcGpu => "GPU",
    ProcIo => "IO",
    ProcPy => "PY",
    ProcProc => "PROC",
    ProcOmp => "OMP",
    MemSysmem => "SYSMEM",
    MemFbmem => "FBMEM",
    MemRdmem => "RDMEM",
    MemZcmem => "ZCMEM",
    MemSockmem => "SOCKMEM",
    MemVirtual => "VIRTUAL",
    TyInt => "int",
    TyBool => "bool",
    TyIPoint => "IPoint",
    TyISpace => "ISpace",
    TyMSpace => "MSpace",
    KwTuple => "tuple",
    KwFor => "for",
    KwIn => "in",
    KwTrue => "True",
    KwFalse => "False",
    KwDef => "def",
    KwReturn => "return",
    KwPrint => "print",
}

spellings! {
    /// Every operator and punctuation token with its kind.
    OPERATORS,
    /// Operator spelling, for messages.
    operator_text,
    Le => "<=",
    Ge => ">=",
    EqEq => "==",
    Ne => "!=",
    AndAnd => "&&",
    OrOr => "||",
    Minus => "-",
    Plus => "+",
    Star => "*",
    Slash => "/",
    Percent => "%",
    Assign => "=",
    Comma => ",",
    Semi => ";",
    Bang => "!",
    Question => "?",
    Colon => ":",
    Lt => "<",
    Gt => ">",
    LParen => "(",
    RParen => ")",
    LBrace => "{",
    RBrace => "}",
    Dot => ".",
    LBracket => "[",
    RBracket => "]",
}

/// The words that begin a statement (`Task` ... `ControlReplicate`, `def`,
/// `print`), in [`KEYWORDS`]' order.
pub fn statement_keywords() -> impl Iterator<Item = &'static str> {
    KEYWORDS
        .iter()
        .filter(|(kind, _)| kind.starts_statement())
        .map(|(_, text)| *text)
}

/// One token: its kind and byte span in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// The output of [`lex`]: significant tokens, comments (trivia) and lexical
/// diagnostics.
#[derive(Debug, Clone, Default)]
pub struct Lexed {
    /// Tokens the parser sees (no comments). A run of adjacent bad
    /// characters is one `BadChar` token; it and unterminated strings are
    /// reported in `diagnostics`.
    pub tokens: Vec<Token>,
    /// Every comment, in source order.
    pub comments: Vec<Token>,
    /// At most [`crate::diagnostic::MAX_DIAGNOSTICS`] (see `diagnostics_dropped` for the rest).
    pub diagnostics: Vec<Diagnostic>,
    /// Where the first lexical diagnostic past the cap was, and how many
    /// were left out.
    pub diagnostics_dropped: Option<(Span, usize)>,
}

/// Lexes `source` completely. Never fails: unknown characters become
/// diagnostics (code `E0001`, one per run of adjacent ones) and unterminated
/// strings `E0002`.
pub fn lex(source: &str) -> Lexed {
    let mut stream = TokenStream::new(source, true);
    let tokens: Vec<Token> = stream.by_ref().collect();
    let (comments, diagnostics, diagnostics_dropped) = stream.finish();
    Lexed {
        tokens,
        comments,
        diagnostics,
        diagnostics_dropped,
    }
}

/// The lexer as an iterator over significant tokens, for a parser that
/// keeps only the tokens it still needs (a whole token vector costs 24
/// bytes per token, several times the text). Yields exactly the tokens of
/// [`lex`], in order; comments (when kept) and lexical diagnostics are
/// collected on the side and handed over by [`TokenStream::finish`].
pub struct TokenStream<'a> {
    source: &'a str,
    lexer: logos::Lexer<'a, TokenKind>,
    /// The span of the run of adjacent bad characters being collected.
    bad_run: Option<Span>,
    /// A token that ended a run of bad characters: yielded right after
    /// the run's `BadChar` token.
    queued: Option<Token>,
    /// Comments, in source order; `None` when the caller does not need them.
    comments: Option<Vec<Token>>,
    diagnostics: CappedDiagnostics,
}

impl<'a> TokenStream<'a> {
    /// A stream over `source`; `keep_comments` says whether comments are
    /// collected (the formatter needs them; checking does not).
    pub fn new(source: &'a str, keep_comments: bool) -> TokenStream<'a> {
        TokenStream {
            source,
            lexer: TokenKind::lexer(source),
            bad_run: None,
            queued: None,
            comments: keep_comments.then(Vec::new),
            diagnostics: CappedDiagnostics::default(),
        }
    }

    /// The same stream, collecting its lexical diagnostics into `list`
    /// (empty: a light list, [`CappedDiagnostics::light`], keeps only the
    /// span and severity of each; a packed one packs them) instead of a
    /// full list.
    pub(crate) fn collecting_into(mut self, list: CappedDiagnostics) -> TokenStream<'a> {
        self.diagnostics = list;
        self
    }

    /// The same stream started at byte `offset` of its source (which must
    /// be where a token or blank begins), for a re-parse that resumes
    /// mid-file (`crate::incremental`).
    pub(crate) fn starting_at(mut self, offset: usize) -> TokenStream<'a> {
        self.lexer.bump(offset);
        self
    }

    /// The comments (empty if not kept), the lexical diagnostics (at most
    /// [`crate::diagnostic::MAX_DIAGNOSTICS`]) and where the first one left
    /// out was, with how many were. Complete once the stream is exhausted.
    pub fn finish(self) -> (Vec<Token>, Vec<Diagnostic>, Option<(Span, usize)>) {
        let (diagnostics, dropped) = self.diagnostics.into_parts();
        (self.comments.unwrap_or_default(), diagnostics, dropped)
    }

    /// The comments (empty if not kept) and the lexical diagnostics as the
    /// capped list they were collected in (light if
    /// [`TokenStream::collecting_into`] made it so).
    pub(crate) fn finish_capped(self) -> (Vec<Token>, CappedDiagnostics) {
        (self.comments.unwrap_or_default(), self.diagnostics)
    }

    /// The comments collected since the last call (all of them, the
    /// first time), handed over so that a caller that handles the file
    /// statement by statement (`crate::parser::EachStmt`) does not keep
    /// them all.
    pub(crate) fn take_comments(&mut self) -> Vec<Token> {
        self.comments
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The lexical diagnostics collected so far.
    pub(crate) fn diagnostics(&self) -> &CappedDiagnostics {
        &self.diagnostics
    }

    /// The span and severity of the lexical diagnostics collected since
    /// the last call, when the stream collects into a light list
    /// ([`CappedDiagnostics::take_light`]).
    pub(crate) fn take_light_diagnostics(&mut self) -> Vec<crate::diagnostic::LightDiagnostic> {
        self.diagnostics.take_light()
    }

    /// Ends the current run of bad characters, if any: its token.
    fn end_bad_run(&mut self) -> Option<Token> {
        let run = self.bad_run.take();
        end_bad_run(run, self.source, &mut self.diagnostics)
    }
}

impl Iterator for TokenStream<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        if let Some(token) = self.queued.take() {
            return Some(token);
        }
        loop {
            let Some(result) = self.lexer.next() else {
                return self.end_bad_run();
            };
            let span = Span::from(self.lexer.span());
            let Ok(kind) = result else {
                // Extend the error to a whole UTF-8 character so messages and
                // edits never split one.
                let start = span.start();
                let ch = self.source[start..].chars().next().unwrap_or('\u{fffd}');
                let end = start + ch.len_utf8();
                if end > span.end() {
                    self.lexer.bump(end - span.end());
                }
                match self.bad_run {
                    Some(run) if run.end() == start => {
                        self.bad_run = Some(run.to(Span::new(start, end)));
                    }
                    _ => {
                        let finished = self.end_bad_run();
                        self.bad_run = Some(Span::new(start, end));
                        if finished.is_some() {
                            return finished;
                        }
                    }
                }
                continue;
            };
            let finished = self.end_bad_run();
            let token = match kind {
                TokenKind::Comment => {
                    if let Some(comments) = &mut self.comments {
                        comments.push(Token {
                            kind: TokenKind::Comment,
                            span,
                        });
                    }
                    if finished.is_some() {
                        return finished;
                    }
                    continue;
                }
                TokenKind::UnterminatedStr => {
                    self.diagnostics
                        .push_in(unterminated_string(self.source, span), self.source);
                    // Keep a string token so `print("abc);` still parses as a print.
                    Token {
                        kind: TokenKind::UnterminatedStr,
                        span,
                    }
                }
                kind => Token { kind, span },
            };
            if finished.is_some() {
                self.queued = Some(token);
                return finished;
            }
            return Some(token);
        }
    }
}

/// Reports a finished run of adjacent bad characters as one token and one
/// diagnostic: random bytes or a pasted binary are one problem per run, not
/// one per byte.
fn end_bad_run(
    run: Option<Span>,
    source: &str,
    diagnostics: &mut CappedDiagnostics,
) -> Option<Token> {
    let span = run?;
    diagnostics.push_rebuilt(bad_run, span, source);
    Some(Token {
        kind: TokenKind::BadChar,
        span,
    })
}

/// The diagnostic of the run of bad characters at `span`, from the span
/// and the source alone (a packed list keeps only the span, see
/// [`CappedDiagnostics::push_rebuilt`]).
fn bad_run(span: Span, source: &str) -> Diagnostic {
    let mut chars = span.text(source).chars();
    let first = chars.next().unwrap_or('\u{fffd}');
    match chars.count() {
        0 => bad_character(first, span, source),
        more => bad_characters(more + 1, span, source),
    }
}

/// Several adjacent bad characters: one diagnostic, showing at most the
/// first few of them.
fn bad_characters(count: usize, span: Span, source: &str) -> Diagnostic {
    const SHOWN: usize = 8;
    let shown: String = span
        .text(source)
        .chars()
        .take(SHOWN)
        .flat_map(char::escape_default)
        .collect();
    let more = if count > SHOWN { "..." } else { "" };
    Diagnostic::error(
        "E0001",
        span,
        format!("{count} unrecognized characters `{shown}{more}`"),
    )
    .with_note("only comments may contain non-ASCII text or control characters")
}

fn unterminated_string(source: &str, span: Span) -> Diagnostic {
    let text = &source[span.start()..span.end()];
    let mut d = Diagnostic::error("E0002", span, "unterminated string")
        .with_note("strings end on the line they start; add the closing `\"`");
    // If the line ends with `);` the quote most likely belongs before it.
    let fix_at = text
        .rfind(");")
        .or_else(|| text.rfind(','))
        .or_else(|| text.rfind(')'))
        .map(|i| span.start() + i)
        .unwrap_or(span.end());
    d = d.with_fix(Fix::safe(
        "insert the closing `\"`",
        vec![(Span::new(fix_at, fix_at), "\"".into())],
    ));
    d
}

fn bad_character(ch: char, span: Span, source: &str) -> Diagnostic {
    let message = if ch.is_ascii() {
        format!("unrecognized character `{}`", ch.escape_default())
    } else {
        format!(
            "non-ASCII character `{ch}` (U+{:04X}) outside a comment; the reference rejects byte 0x{:02X}",
            ch as u32,
            ch.to_string().as_bytes()[0]
        )
    };
    let mut d = Diagnostic::error("E0001", span, message);
    let next = source[span.end()..].chars().next();
    match (ch, next) {
        ('&', _) => {
            d = d
                .with_note("logical and is `&&`")
                .with_fix(Fix::safe("use `&&`", vec![(span, "&&".into())]));
        }
        ('|', _) => {
            d = d
                .with_note("logical or is `||`")
                .with_fix(Fix::safe("use `||`", vec![(span, "||".into())]));
        }
        ('\'', _) => {
            d = d.with_note("strings use double quotes");
        }
        _ if !ch.is_ascii() => {
            d = d.with_note("only comments may contain non-ASCII text");
        }
        _ => {}
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::MAX_DIAGNOSTICS;

    fn kinds(src: &str) -> Vec<TokenKind> {
        lex(src).tokens.iter().map(|t| t.kind).collect()
    }

    #[test]
    fn keywords_are_longest_match() {
        use TokenKind::*;
        assert_eq!(
            kinds("sizes size Task_1 GPU2 Machine"),
            vec![Ident, PropSize, Ident, Ident, Ident]
        );
        assert_eq!(kinds("a<=b<c"), vec![Ident, Le, Ident, Lt, Ident]);
        assert_eq!(kinds("1abc"), vec![Int, Ident]);
    }

    #[test]
    fn every_spelling_in_the_tables_lexes_to_its_kind() {
        for (kind, text) in KEYWORDS.iter().chain(OPERATORS) {
            assert_eq!(kinds(text), vec![*kind], "{text}");
            assert_eq!(kind.keyword_text().or(kind.operator_text()), Some(*text));
        }
        assert_eq!(
            statement_keywords().collect::<Vec<_>>(),
            [
                "Task",
                "Region",
                "Layout",
                "InstanceLimit",
                "CollectMemory",
                "IndexTaskMap",
                "SingleTaskMap",
                "ControlReplicate",
                "def",
                "print"
            ]
        );
    }

    #[test]
    fn comments_are_trivia() {
        let l = lex("# a\nx = 1; // b\n");
        assert_eq!(l.comments.len(), 2);
        assert_eq!(l.tokens.len(), 4);
    }

    #[test]
    fn bad_chars_and_strings_are_diagnostics() {
        let l = lex("x = a & b; y = \"abc);\nz = é;");
        let codes: Vec<_> = l.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, vec!["E0001", "E0002", "E0001"]);
        assert_eq!(l.diagnostics[2].span.len(), 2);
    }

    #[test]
    fn a_run_of_bad_characters_is_one_diagnostic() {
        let l = lex("x = 1 \u{1}\u{2}éé$ + 2; y = $;");
        let codes: Vec<_> = l.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, vec!["E0001", "E0001"]);
        assert!(l.diagnostics[0].message.starts_with("5 unrecognized"));
        assert_eq!(l.diagnostics[0].span.len(), 7);
        let bad = l.tokens.iter().filter(|t| t.kind == TokenKind::BadChar);
        assert_eq!(bad.count(), 2);
    }

    #[test]
    fn lexical_diagnostics_are_capped() {
        let src = "$ ".repeat(MAX_DIAGNOSTICS + 10);
        let l = lex(&src);
        assert_eq!(l.diagnostics.len(), MAX_DIAGNOSTICS);
        let (span, n) = l.diagnostics_dropped.expect("the rest are counted");
        assert_eq!((span.start(), n), (2 * MAX_DIAGNOSTICS, 10));
    }
}
