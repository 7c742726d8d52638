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

use crate::ast::*;
use crate::diagnostic::{Diagnostic, Fix};
use crate::suggest::closest;
use crate::token::{lex, Token, TokenKind as T};
use crate::Span;

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
    let lexed = lex(source);
    // The parser sees `&`/`|` as the `&&`/`||` the user evidently meant and an
    // unterminated string as a string, so a lexical error costs one diagnostic.
    let tokens: Vec<Token> = lexed
        .tokens
        .iter()
        .map(|t| {
            let kind = match (t.kind, t.span.text(source)) {
                (T::BadChar, "&") => T::AndAnd,
                (T::BadChar, "|") => T::OrOr,
                (T::UnterminatedStr, _) => T::Str,
                (k, _) => k,
            };
            Token { kind, span: t.span }
        })
        .collect();
    let mut p = Parser {
        src: source,
        toks: &tokens,
        pos: 0,
        diags: Vec::new(),
        python_semis: None,
        depth: 0,
    };
    let program = p.program();
    let mut diagnostics = lexed.diagnostics;
    diagnostics.extend(p.diags);
    diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
    Parsed {
        program,
        diagnostics,
        tokens: lexed.tokens,
        comments: lexed.comments,
    }
}

/// A failed production; its diagnostic has already been recorded.
struct Failed;
type PResult<T> = Result<T, Failed>;

struct Parser<'a> {
    src: &'a str,
    toks: &'a [Token],
    pos: usize,
    diags: Vec<Diagnostic>,
    /// Inside a Python-style body: where `;` would go, instead of diagnostics.
    python_semis: Option<Vec<usize>>,
    /// Current expression nesting: one per recursive production entered and
    /// one per link of a left-deep chain built in a loop (`a.b.c`, `f(1)(2)`,
    /// `a[0][1]`, `a + b + c`). Bounded, so that hostile input can exhaust
    /// neither the parser's stack nor, by building a huge tree, the stack of
    /// any later pass.
    depth: usize,
}

/// Deepest expression nesting accepted, and the deepest tree the parser
/// hands on (see [`Parser::statement_expr`]); real mappers stay below 10.
///
/// Every later pass recurses over expressions freely because of this bound,
/// so it is sized for the smallest stack they run on: a 2 MiB test thread
/// of a debug build (`tests/tests/deep_input.rs` runs the whole pipeline
/// on the deepest accepted trees there).
pub const MAX_NESTING: usize = 64;

const BINARY_OPS: &[(T, BinOp, u8)] = &[
    (T::OrOr, BinOp::Or, 1),
    (T::AndAnd, BinOp::And, 2),
    (T::EqEq, BinOp::Eq, 3),
    (T::Ne, BinOp::Ne, 3),
    (T::Lt, BinOp::Lt, 4),
    (T::Gt, BinOp::Gt, 4),
    (T::Le, BinOp::Le, 4),
    (T::Ge, BinOp::Ge, 4),
    (T::Plus, BinOp::Add, 5),
    (T::Minus, BinOp::Sub, 5),
    (T::Star, BinOp::Mul, 6),
    (T::Slash, BinOp::Div, 6),
    (T::Percent, BinOp::Mod, 6),
];

const CONSTRAINT_NAMES: &[&str] = &[
    "SOA", "AOS", "C_order", "F_order", "Compact", "Exact", "Align",
];

impl<'a> Parser<'a> {
    // ----- token access -------------------------------------------------

    fn peek(&self) -> Option<T> {
        self.toks.get(self.pos).map(|t| t.kind)
    }

    fn peek_at(&self, n: usize) -> Option<T> {
        self.toks.get(self.pos + n).map(|t| t.kind)
    }

    fn at(&self, kind: T) -> bool {
        self.peek() == Some(kind)
    }

    fn cur_span(&self) -> Span {
        match self.toks.get(self.pos) {
            Some(t) => t.span,
            None => Span::at(self.src.len()),
        }
    }

    fn cur_text(&self) -> &'a str {
        self.cur_span().text(self.src)
    }

    fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].span.end
        }
    }

    fn bump(&mut self) -> Span {
        let span = self.cur_span();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        span
    }

    fn eat(&mut self, kind: T) -> Option<Span> {
        if self.at(kind) {
            Some(self.bump())
        } else {
            None
        }
    }

    /// Zero-based line of `offset`; lines end at `\n`, `\r\n` or a lone `\r`,
    /// as in [`crate::LineIndex`].
    fn line_of(&self, offset: usize) -> usize {
        let bytes = &self.src.as_bytes()[..offset.min(self.src.len())];
        bytes
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
            .count()
    }

    /// True if the current token starts on a later line than the previous token ends.
    fn on_new_line(&self) -> bool {
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
    fn line_indent(&self, offset: usize) -> usize {
        let line_start = self.src[..offset]
            .rfind(['\n', '\r'])
            .map(|i| i + 1)
            .unwrap_or(0);
        self.src[line_start..]
            .bytes()
            .take_while(|b| *b == b' ' || *b == b'\t')
            .count()
    }

    fn found(&self) -> String {
        match self.peek() {
            None => "end of file".into(),
            Some(T::Ident) => format!("identifier `{}`", self.cur_text()),
            Some(T::Int) => format!("integer `{}`", self.cur_text()),
            Some(k) => k.describe(),
        }
    }

    // ----- diagnostics --------------------------------------------------

    fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// Records "expected X, found Y" at the current token and fails. A bad
    /// character was already reported by the lexer, so it is not reported twice.
    fn expected<R>(&mut self, what: &str) -> PResult<R> {
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

    fn fail<R>(&mut self, d: Diagnostic) -> PResult<R> {
        self.push(d);
        Err(Failed)
    }

    fn expect(&mut self, kind: T, what: &str) -> PResult<Span> {
        match self.eat(kind) {
            Some(s) => Ok(s),
            None => self.expected(what),
        }
    }

    /// Expects the `;` that ends a statement. When the next token is on a
    /// later line the `;` was most likely forgotten: say where it belongs and
    /// carry on as if it were there.
    fn expect_semi(&mut self, what: &str) -> PResult<()> {
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
            if self.pos < self.toks.len() {
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

    fn ident(&mut self, what: &str) -> PResult<Ident> {
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
    fn keyword_as_name(&mut self, what: &str) -> Ident {
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
        if renameable {
            let new_name = format!("{word}_");
            let edits: Vec<(Span, String)> = self
                .toks
                .iter()
                .enumerate()
                .filter(|(i, t)| {
                    t.span.text(self.src) == word && (*i == 0 || self.toks[i - 1].kind != T::Dot)
                })
                .map(|(_, t)| (t.span, new_name.clone()))
                .collect();
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

    // ----- program and recovery ----------------------------------------

    fn program(&mut self) -> Program {
        let mut stmts = Vec::new();
        while self.pos < self.toks.len() {
            let start = self.pos;
            match self.top_stmt() {
                Ok(stmt) => stmts.push(stmt),
                Err(Failed) => {
                    self.recover_top(start);
                    let span = self.toks[start].span.to(Span::at(self.prev_end()));
                    stmts.push(Stmt {
                        kind: StmtKind::Error,
                        span,
                    });
                }
            }
        }
        if self.toks.is_empty() {
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
        Program { stmts }
    }

    fn eof_insert(&self, text: &str) -> String {
        if self.src.is_empty() || self.src.ends_with('\n') {
            format!("{text}\n")
        } else {
            format!("\n{text}\n")
        }
    }

    /// Skips the rest of a broken top-level statement: up to and including the
    /// next `;` outside braces, or up to a statement keyword that begins a line.
    fn recover_top(&mut self, start: usize) {
        if self.pos == start {
            self.bump();
        }
        let mut depth = 0usize;
        while let Some(kind) = self.peek() {
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

    fn begins_statement(&self, kind: T) -> bool {
        kind.starts_statement() || (kind == T::Ident && self.peek_at(1) == Some(T::Assign))
    }

    // ----- statements ---------------------------------------------------

    fn top_stmt(&mut self) -> PResult<Stmt> {
        let start = self.cur_span().start;
        let kind = match self.peek() {
            Some(T::KwTask) => self.task_stmt()?,
            Some(T::KwRegion) => self.region_stmt()?,
            Some(T::KwLayout) => self.layout_stmt()?,
            Some(T::KwInstanceLimit) => self.instance_limit_stmt()?,
            Some(T::KwCollectMemory) => self.collect_stmt()?,
            Some(T::KwIndexTaskMap) => self.task_map_stmt(true)?,
            Some(T::KwSingleTaskMap) => self.task_map_stmt(false)?,
            Some(T::KwControlReplicate) => self.control_replicate_stmt()?,
            Some(T::KwDef) => self.func_def()?,
            Some(T::KwPrint) => self.print_stmt()?,
            Some(T::Ident) => self.assign_stmt()?,
            Some(T::Semi) => {
                let span = self.cur_span();
                return self.fail(
                    Diagnostic::error("E0116", span, "empty statement: the DSL has no `;;`")
                        .with_label("extra `;`")
                        .with_fix(Fix::safe(
                            "remove the extra `;`",
                            vec![(span, String::new())],
                        )),
                );
            }
            Some(T::KwReturn) => {
                return self.fail(
                    Diagnostic::error("E0112", self.cur_span(), "`return` outside a function")
                        .with_label("only allowed inside `def ... { }`"),
                );
            }
            Some(k) if k.is_keyword() && self.peek_at(1) == Some(T::Assign) => {
                self.assign_stmt()?
            }
            _ => return self.expected("a statement"),
        };
        Ok(Stmt {
            kind,
            span: Span::new(start, self.prev_end()),
        })
    }

    fn task_sel(&mut self, allow_kinds: bool, what: &str) -> PResult<TaskSel> {
        match self.peek() {
            Some(T::Star) => Ok(TaskSel::Star(self.bump())),
            Some(k @ (T::ProcCpu | T::ProcGpu | T::ProcOmp)) if allow_kinds => {
                let kind = proc_kind(k).unwrap_or(ProcKind::CPU);
                Ok(TaskSel::Kind(kind, self.bump()))
            }
            Some(k) if allow_kinds && k.is_proc_kind() => self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    format!(
                        "`{}` cannot select tasks here: only CPU, GPU and OMP can",
                        self.cur_text()
                    ),
                )
                .with_label("expected a task name, `*`, CPU, GPU or OMP"),
            ),
            Some(T::Ident) => {
                let mut names = vec![self.ident(what)?];
                while self.at(T::Comma) {
                    self.bump();
                    if self.at(T::Ident) {
                        names.push(self.ident(what)?);
                    } else if self.at(T::Star) {
                        return self.fail(
                            Diagnostic::error(
                                "E0100",
                                self.cur_span(),
                                "a task list holds names only, not `*`",
                            )
                            .with_label("expected a task name"),
                        );
                    } else {
                        return self.expected(what);
                    }
                }
                Ok(TaskSel::Names(names))
            }
            Some(k) if k.is_keyword() && !k.starts_statement() && !k.is_proc_kind() => {
                Ok(TaskSel::Names(vec![self.keyword_as_name(what)]))
            }
            _ => self.expected(&format!("{what} or `*`")),
        }
    }

    fn task_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let tasks = self.task_sel(false, "a task name")?;
        let procs = self.proc_list()?;
        self.expect_semi("`,` or `;`")?;
        Ok(StmtKind::Task { tasks, procs })
    }

    fn proc_list(&mut self) -> PResult<Vec<(ProcKind, Span)>> {
        let mut procs = Vec::new();
        loop {
            match self.peek().and_then(proc_kind) {
                Some(kind) => procs.push((kind, self.bump())),
                None => {
                    return self
                        .expected_kind("a processor kind (CPU, GPU, OMP, IO, PY, PROC)", true)
                }
            }
            if !self.at(T::Comma) {
                if self.peek().is_some_and(|k| k.is_proc_kind()) && !self.on_new_line() {
                    return self.missing_comma("processor kinds");
                }
                return Ok(procs);
            }
            self.bump();
        }
    }

    fn mem_list(&mut self) -> PResult<Vec<(MemKind, Span)>> {
        let mut mems = Vec::new();
        loop {
            match self.peek().and_then(mem_kind) {
                Some(kind) => mems.push((kind, self.bump())),
                None => {
                    return self.expected_kind(
                        "a memory kind (FBMEM, ZCMEM, SYSMEM, SOCKMEM, RDMEM, VIRTUAL)",
                        false,
                    )
                }
            }
            if !self.at(T::Comma) {
                if self.peek().is_some_and(|k| k.is_mem_kind()) && !self.on_new_line() {
                    return self.missing_comma("memory kinds");
                }
                return Ok(mems);
            }
            self.bump();
        }
    }

    /// "expected a processor kind", with a fix when the word is a kind in the
    /// wrong case (`gpu`) .
    fn expected_kind<R>(&mut self, what: &str, proc: bool) -> PResult<R> {
        if self.at(T::Ident) {
            let word = self.cur_text();
            let names: Vec<&str> = if proc {
                ProcKind::ALL.iter().map(|k| k.name()).collect()
            } else {
                MemKind::ALL.iter().map(|k| k.name()).collect()
            };
            if let Some(best) = closest(word, names) {
                let span = self.cur_span();
                return self.fail(
                    Diagnostic::error("E0100", span, format!("expected {what}, found `{word}`"))
                        .with_label(format!("did you mean `{best}`?"))
                        .with_fix(Fix::safe(
                            format!("replace with `{best}`"),
                            vec![(span, best.to_string())],
                        )),
                );
            }
        }
        self.expected(what)
    }

    /// Two kinds of a priority list written without the `,` between them.
    fn missing_comma<R>(&mut self, what: &str) -> PResult<R> {
        let at = self.prev_end();
        let span = self.cur_span();
        self.fail(
            Diagnostic::error(
                "E0100",
                span,
                format!("expected `,` or `;`, found {}", self.found()),
            )
            .with_label("expected `,` or `;`")
            .with_note(format!("{what} in a priority list are separated by `,`"))
            .with_fix(Fix::safe(
                "insert `,`",
                vec![(Span::new(at, span.start), ",".into())],
            )),
        )
    }

    fn region_field(&mut self, allow_index: bool) -> PResult<RegionSel> {
        match self.peek() {
            Some(T::Star) => Ok(RegionSel::Star(self.bump())),
            Some(T::Ident) => Ok(RegionSel::Name(self.ident("a region name")?)),
            Some(T::Int) if allow_index => {
                let span = self.bump();
                Ok(RegionSel::Index(int_value(span.text(self.src)), span))
            }
            Some(T::Int) => self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    "only `Region` accepts an argument index; here the region must be named or `*`",
                )
                .with_label("expected a region name or `*`"),
            ),
            Some(k)
                if k.is_keyword()
                    && !k.starts_statement()
                    && !k.is_proc_kind()
                    && !k.is_mem_kind() =>
            {
                Ok(RegionSel::Name(self.keyword_as_name("a region name")))
            }
            _ => self.expected(if allow_index {
                "a region name, argument index or `*`"
            } else {
                "a region name or `*`"
            }),
        }
    }

    /// The identifier the reference parses in a kind slot and then asserts to be `*`.
    fn ident_in_kind_slot(&mut self, proc: bool) {
        let span = self.bump();
        let word = span.text(self.src);
        let (field, names): (&str, Vec<&str>) = if proc {
            (
                "processor",
                ProcKind::ALL.iter().map(|k| k.name()).collect(),
            )
        } else {
            ("memory", MemKind::ALL.iter().map(|k| k.name()).collect())
        };
        let mut d = Diagnostic::error(
            "E0106",
            span,
            format!("`{word}` is not a {field} kind; this field takes a {field} kind or `*`"),
        )
        .with_label(format!("expected a {field} kind or `*`"))
        .with_note("the reference parses any name here and then aborts with an assertion failure");
        if let Some(best) = closest(word, names) {
            d = d.with_fix(Fix::safe(
                format!("replace with `{best}`"),
                vec![(span, best.to_string())],
            ));
        }
        d = d.with_fix(Fix::unsafe_("replace with `*`", vec![(span, "*".into())]));
        self.push(d);
    }

    fn region_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let task = self.single_task_or_star()?;
        let region = self.region_field(true)?;
        let proc = match self.peek() {
            Some(k) if k.is_proc_kind() => {
                let kind = proc_kind(k).unwrap_or(ProcKind::CPU);
                ProcSel::Kind(kind, self.bump())
            }
            Some(T::Star) => ProcSel::Star(self.bump()),
            Some(T::Ident) => {
                let span = self.cur_span();
                self.ident_in_kind_slot(true);
                ProcSel::Star(span)
            }
            Some(k) if k.is_mem_kind() => {
                let at = self.cur_span().start;
                self.push(
                    Diagnostic::error(
                        "E0124",
                        self.cur_span(),
                        "missing processor field in `Region`",
                    )
                    .with_label("expected a processor kind or `*` before the memory")
                    .with_note("the form is `Region TASK REGION PROC MEM[,MEM...];`")
                    .with_fix(Fix::safe(
                        "insert `*` (any processor)",
                        vec![(Span::at(at), "* ".into())],
                    )),
                );
                return Err(Failed);
            }
            _ => return self.expected("a processor kind or `*`"),
        };
        let mems = self.mem_list()?;
        self.expect_semi("`,` or `;`")?;
        Ok(StmtKind::Region {
            task,
            region,
            proc,
            mems,
        })
    }

    fn layout_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let task = self.single_task_or_star()?;
        let region = self.region_field(false)?;
        let mem = match self.peek() {
            Some(k) if k.is_mem_kind() => {
                let kind = mem_kind(k).unwrap_or(MemKind::SYSMEM);
                MemSel::Kind(kind, self.bump())
            }
            Some(T::Star) => MemSel::Star(self.bump()),
            Some(T::Ident) => {
                let span = self.cur_span();
                self.ident_in_kind_slot(false);
                MemSel::Star(span)
            }
            Some(k) if k.is_proc_kind() => {
                let span = self.cur_span();
                let word = span.text(self.src);
                let suggested = if k == T::ProcGpu { "FBMEM" } else { "SYSMEM" };
                return self.fail(
                    Diagnostic::error(
                        "E0105",
                        span,
                        format!("`{word}` is a processor kind, but Layout's third field is a memory kind"),
                    )
                    .with_label("expected a memory kind or `*`")
                    .with_note(
                        "unlike `Region`, whose third field is a processor, `Layout TASK REGION MEM CONSTRAINTS;` names the memory that holds the instance",
                    )
                    .with_fix(Fix::safe(
                        format!("use `{suggested}`, the memory {word} tasks use by default"),
                        vec![(span, suggested.into())],
                    ))
                    .with_fix(Fix::unsafe_("use `*` (any memory)", vec![(span, "*".into())])),
                );
            }
            Some(k) if k.is_simple_constraint() || k == T::Align => {
                let at = self.cur_span().start;
                return self.fail(
                    Diagnostic::error("E0124", self.cur_span(), "missing memory field in `Layout`")
                        .with_label("expected a memory kind or `*` before the constraints")
                        .with_note("the form is `Layout TASK REGION MEM CONSTRAINT*;`")
                        .with_fix(Fix::safe(
                            "insert `*` (any memory)",
                            vec![(Span::at(at), "* ".into())],
                        )),
                );
            }
            _ => return self.expected("a memory kind or `*`"),
        };
        let constraints = self.constraints()?;
        self.expect_semi("a layout constraint or `;`")?;
        Ok(StmtKind::Layout {
            task,
            region,
            mem,
            constraints,
        })
    }

    fn single_task_or_star(&mut self) -> PResult<TaskSel> {
        match self.peek() {
            Some(T::Star) => Ok(TaskSel::Star(self.bump())),
            _ => Ok(TaskSel::Names(vec![
                self.ident_or_expected("a task name or `*`")?
            ])),
        }
    }

    fn ident_or_expected(&mut self, what: &str) -> PResult<Ident> {
        match self.peek() {
            Some(T::Ident) => self.ident(what),
            Some(k)
                if k.is_keyword()
                    && !k.starts_statement()
                    && !k.is_proc_kind()
                    && !k.is_mem_kind() =>
            {
                Ok(self.keyword_as_name(what))
            }
            _ => self.expected(what),
        }
    }

    fn constraints(&mut self) -> PResult<Vec<Constraint>> {
        let mut out = Vec::new();
        loop {
            let span = self.cur_span();
            let c = match self.peek() {
                Some(T::Soa) => Constraint::Soa(span),
                Some(T::Aos) => Constraint::Aos(span),
                Some(T::COrder) => Constraint::COrder(span),
                Some(T::FOrder) => Constraint::FOrder(span),
                Some(T::Compact) => Constraint::Compact(span),
                Some(T::Exact) => Constraint::Exact(span),
                Some(T::Align) => {
                    out.push(self.align()?);
                    continue;
                }
                Some(T::Ident) if !self.on_new_line() => {
                    self.unknown_constraint();
                    continue;
                }
                _ => return Ok(out),
            };
            self.bump();
            out.push(c);
        }
    }

    fn align(&mut self) -> PResult<Constraint> {
        let start = self.bump();
        let op_span = self.cur_span();
        let op = match self.peek() {
            Some(T::Lt) => AlignOp::Lt,
            Some(T::Le) => AlignOp::Le,
            Some(T::Gt) => AlignOp::Gt,
            Some(T::Ge) => AlignOp::Ge,
            Some(T::EqEq) => AlignOp::Eq,
            Some(T::Ne) => AlignOp::Ne,
            Some(T::Assign) => {
                self.push(
                    Diagnostic::error(
                        "E0113",
                        op_span,
                        "`Align` needs a comparison operator; `=` is assignment",
                    )
                    .with_label("use `==`")
                    .with_fix(Fix::safe(
                        "replace `=` with `==`",
                        vec![(op_span, "==".into())],
                    )),
                );
                AlignOp::Eq
            }
            _ => {
                return self
                    .expected("a comparison after `Align` (`==`, `<`, `<=`, `>`, `>=`, `!=`)")
            }
        };
        self.bump();
        let value_span = self.expect(T::Int, "an integer (the alignment in bytes)")?;
        Ok(Constraint::Align {
            op,
            value: int_value(value_span.text(self.src)),
            span: start.to(value_span),
        })
    }

    fn unknown_constraint(&mut self) {
        let span = self.cur_span();
        let word = span.text(self.src);
        let mut d = Diagnostic::error("E0103", span, format!("unknown layout constraint `{word}`"))
            .with_label("not a layout constraint")
            .with_note(
                "constraints are SOA, AOS, C_order, F_order, Compact, Exact and `Align OP N`",
            );
        // Remove the word together with the blank before it.
        let mut del_start = span.start;
        while del_start > 0 && matches!(self.src.as_bytes()[del_start - 1], b' ' | b'\t') {
            del_start -= 1;
        }
        let removal = (Span::new(del_start, span.end), String::new());
        let lower = word.to_ascii_lowercase();
        if lower.starts_with("no_") || lower.starts_with("no") && lower.contains("align") {
            d = d
                .with_note(format!("`{word}` is not in the DSL: leaving out `Align` already means no alignment constraint"))
                .with_fix(Fix::safe(format!("remove `{word}`"), vec![removal]));
        } else if let Some(best) =
            closest(word, CONSTRAINT_NAMES.iter().copied()).filter(|b| *b != "Align")
        {
            d = d.with_fix(Fix::safe(
                format!("replace with `{best}`"),
                vec![(span, best.to_string())],
            ));
        } else {
            d = d.with_fix(Fix::unsafe_(format!("remove `{word}`"), vec![removal]));
        }
        self.push(d);
        self.bump();
    }

    fn instance_limit_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        if self.at(T::Star) {
            return self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    "`InstanceLimit` needs a task name; `*` is not allowed",
                )
                .with_label("expected a task name"),
            );
        }
        let task = self.ident_or_expected("a task name")?;
        if let Some(k) = self.peek() {
            if k.is_proc_kind() && self.peek_at(1) == Some(T::Int) {
                let span = self.cur_span();
                let mut end = span.end;
                while end < self.src.len() && matches!(self.src.as_bytes()[end], b' ' | b'\t') {
                    end += 1;
                }
                self.push(
                    Diagnostic::error(
                        "E0108",
                        span,
                        "legacy `InstanceLimit TASK PROC N;`: the current form has no processor field",
                    )
                    .with_label("remove the processor kind")
                    .with_note("the limit applies to the task wherever it runs: `InstanceLimit TASK N;`")
                    .with_fix(Fix::safe(
                        format!("migrate to `InstanceLimit {} N;`", task.name),
                        vec![(Span::new(span.start, end), String::new())],
                    )),
                );
                self.bump();
            }
        }
        let limit_span = self.expect(T::Int, "an integer limit")?;
        self.expect_semi("`;`")?;
        Ok(StmtKind::InstanceLimit {
            task,
            limit: int_value(limit_span.text(self.src)),
            limit_span,
        })
    }

    fn collect_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let task = self.single_task_or_star()?;
        let region = self.region_field(false)?;
        self.expect_semi("`;`")?;
        Ok(StmtKind::CollectMemory { task, region })
    }

    fn task_map_stmt(&mut self, index: bool) -> PResult<StmtKind> {
        let kw = self.bump();
        let tasks = self.task_sel(true, "a task name")?;
        let func = self.ident_or_expected("the name of a mapping function")?;
        if self.at(T::Ident) && !self.on_new_line() {
            // Legacy `IndexTaskMap TASK MACHINE FUNC;`: FUNC(IPoint, ISpace, MSpace) returned a tuple.
            let legacy_func = self.ident("a function name")?;
            let machine = func;
            self.legacy_task_map(kw, &tasks, &machine, &legacy_func, index);
            self.expect_semi("`;`")?;
            let stmt_kind = if index {
                StmtKind::IndexTaskMap {
                    tasks,
                    func: legacy_func,
                }
            } else {
                StmtKind::SingleTaskMap {
                    tasks,
                    func: legacy_func,
                }
            };
            return Ok(stmt_kind);
        }
        self.expect_semi("`;`")?;
        Ok(if index {
            StmtKind::IndexTaskMap { tasks, func }
        } else {
            StmtKind::SingleTaskMap { tasks, func }
        })
    }

    fn legacy_task_map(
        &mut self,
        kw: Span,
        tasks: &TaskSel,
        machine: &Ident,
        func: &Ident,
        index: bool,
    ) {
        let keyword = if index {
            "IndexTaskMap"
        } else {
            "SingleTaskMap"
        };
        let wrapper = format!("{}_{}", func.name, machine.name);
        let def = format!(
            "def {wrapper}(Task task) {{\n    return {m}[*{f}(task.ipoint, task.ispace, {m})];\n}}\n",
            m = machine.name,
            f = func.name
        );
        let task_text = Span::new(
            match tasks {
                TaskSel::Star(s) | TaskSel::Kind(_, s) => s.start,
                TaskSel::Names(n) => n
                    .first()
                    .map(|i| i.span.start)
                    .unwrap_or(machine.span.start),
            },
            match tasks {
                TaskSel::Star(s) | TaskSel::Kind(_, s) => s.end,
                TaskSel::Names(n) => n.last().map(|i| i.span.end).unwrap_or(machine.span.start),
            },
        )
        .text(self.src)
        .to_string();
        let already_defined = self.src.contains(&format!("def {wrapper}("));
        let mut edits = vec![(kw.to(func.span), format!("{keyword} {task_text} {wrapper}"))];
        if !already_defined {
            edits.push((Span::at(kw.start), def));
        }
        self.push(
            Diagnostic::error(
                "E0107",
                func.span,
                format!("legacy `{keyword} TASK MACHINE FUNC;`: the current form is `{keyword} TASK FUNC;`"),
            )
            .with_label("unexpected third field")
            .with_related(machine.span, "the machine model belongs inside the mapping function now")
            .with_note(format!(
                "the mapping function now takes the task (`def f(Task task)`) and returns a processor of a machine model; the old `{}(IPoint, ISpace, MSpace)` returned the machine point as a tuple",
                func.name
            ))
            .with_fix(Fix::safe(
                format!("migrate: wrap `{}` in `{wrapper}(Task task)`", func.name),
                edits,
            )),
        );
    }

    fn control_replicate_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        if self.at(T::Star) {
            return self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    "`ControlReplicate` needs task names; `*` is not supported",
                )
                .with_label("expected a task name"),
            );
        }
        let mut tasks = vec![self.ident_or_expected("a task name")?];
        while self.eat(T::Comma).is_some() {
            tasks.push(self.ident_or_expected("a task name")?);
        }
        self.expect_semi("`,` or `;`")?;
        Ok(StmtKind::ControlReplicate { tasks })
    }

    fn assign_stmt(&mut self) -> PResult<StmtKind> {
        let name = if self.at(T::Ident) {
            self.ident("a variable name")?
        } else {
            self.keyword_as_name("a variable name")
        };
        if !self.at(T::Assign) {
            return self.not_an_assignment(&name);
        }
        self.bump();
        let value = self.statement_expr()?;
        self.expect_semi("`;`")?;
        Ok(StmtKind::Assign { name, value })
    }

    /// `NAME` at the start of a statement not followed by `=`: usually a
    /// mistyped statement keyword.
    fn not_an_assignment<R>(&mut self, name: &Ident) -> PResult<R> {
        const STATEMENTS: &[&str] = &[
            "Task",
            "Region",
            "Layout",
            "InstanceLimit",
            "CollectMemory",
            "IndexTaskMap",
            "SingleTaskMap",
            "ControlReplicate",
            "def",
            "print",
            "return",
        ];
        if self.peek() == Some(T::BadChar) {
            return Err(Failed);
        }
        if let Some(best) = closest(&name.name, STATEMENTS.iter().copied()) {
            return self.fail(
                Diagnostic::error(
                    "E0117",
                    name.span,
                    format!(
                        "unknown statement `{}`; keywords are case-sensitive",
                        name.name
                    ),
                )
                .with_label(format!("did you mean `{best}`?"))
                .with_fix(Fix::safe(
                    format!("replace with `{best}`"),
                    vec![(name.span, best.to_string())],
                )),
            );
        }
        if name.name == "TaskSteal" {
            return self.fail(
                Diagnostic::error("E0117", name.span, "`TaskSteal` is not part of the current DSL")
                    .with_note("it exists only on DSLMapper's `main` branch; the reference (`default`) rejects it"),
            );
        }
        let found = self.found();
        self.fail(
            Diagnostic::error(
                "E0100",
                self.cur_span(),
                format!("expected `=` after `{}`, found {found}", name.name),
            )
            .with_label("expected `=`")
            .with_note("a statement that starts with a name is an assignment: `NAME = EXPR;`"),
        )
    }

    fn print_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        self.expect(T::LParen, "`(`")?;
        if !self.at(T::Str) {
            return self.fail(
                Diagnostic::error(
                    "E0100",
                    self.cur_span(),
                    format!(
                        "`print` needs a format string first, found {}",
                        self.found()
                    ),
                )
                .with_label("expected a string such as \"{}\"")
                .with_note("write `print(\"value: {}\", x);`"),
            );
        }
        let format_span = self.bump();
        let raw = format_span.text(self.src);
        if raw.len() < 2 || !raw.ends_with('"') {
            // Unterminated: the lexer reported it and the string swallowed the
            // rest of the line; anything said about that line would be noise.
            return Err(Failed);
        }
        let format = raw
            .trim_start_matches('"')
            .trim_end_matches('"')
            .to_string();
        let mut args = Vec::new();
        while self.eat(T::Comma).is_some() {
            args.push(self.statement_expr()?);
        }
        self.expect(T::RParen, "`,` or `)`")?;
        self.expect_semi("`;`")?;
        Ok(StmtKind::Print {
            format,
            format_span,
            args,
        })
    }

    fn func_def(&mut self) -> PResult<StmtKind> {
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
                        Ok(s) => body.push(s),
                        Err(Failed) => {
                            self.recover_body(start);
                            let span = self.toks[start].span.to(Span::at(self.prev_end()));
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

    fn param(&mut self) -> PResult<Param> {
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
                                vec![(Span::at(span.start), format!("{guess} "))],
                            )
                        } else {
                            Fix::unsafe_(
                                format!("declare `{guess} {word}`"),
                                vec![(Span::at(span.start), format!("{guess} "))],
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
                    ty_span: Span::at(span.start),
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

    fn body_stmt(&mut self) -> PResult<Stmt> {
        let start = self.cur_span().start;
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
    fn recover_body(&mut self, start: usize) {
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
    fn python_style_body(
        &mut self,
        def_span: Span,
        name: Ident,
        params: Vec<Param>,
    ) -> PResult<StmtKind> {
        let colon = self.bump();
        let def_indent = self.line_indent(def_span.start);
        let def_line = self.line_of(def_span.start);
        let mut body = Vec::new();
        let saved_semis = self.python_semis.replace(Vec::new());
        let mut clean = true;
        while let Some(tok) = self.toks.get(self.pos) {
            let line = self.line_of(tok.span.start);
            if line != def_line && self.line_indent(tok.span.start) <= def_indent {
                break;
            }
            let start = self.pos;
            match self.body_stmt() {
                Ok(s) => body.push(s),
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
                    let span = self.toks[start].span.to(Span::at(self.prev_end()));
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

    // ----- expressions --------------------------------------------------

    fn expr(&mut self) -> PResult<Expr> {
        self.expr_bp(0)
    }

    /// Precedence climbing. Levels, loosest first: 0 `?:`, 1 `||`, 2 `&&`,
    /// 3 `== !=`, 4 `< > <= >=`, 5 `+ -`, 6 `* / %`; all left-associative.
    fn expr_bp(&mut self, min: u8) -> PResult<Expr> {
        // Saved and restored (not decremented): the loop below adds one level
        // per link of a chain.
        let saved = self.depth;
        self.depth += 1;
        let result = self.expr_bp_inner(min);
        self.depth = saved;
        result
    }

    /// One more link of a chain built in a loop: counts as one level of
    /// nesting, because it makes the tree one level deeper.
    fn chain_link(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return self.too_deep();
        }
        Ok(())
    }

    /// A whole expression of a statement (assigned, returned or printed).
    ///
    /// The parser's own counter bounds its recursion, but a tree can still
    /// end up deeper than [`MAX_NESTING`] (a nested operand followed by a
    /// chain: the counter restarts after the operand, the tree does not).
    /// This measures the finished tree without recursion and rejects one
    /// that is too deep, so no later pass ever sees one.
    fn statement_expr(&mut self) -> PResult<Expr> {
        let e = self.expr()?;
        match e.deeper_than(MAX_NESTING) {
            None => Ok(e),
            Some(span) => {
                e.dismantle();
                self.fail(Self::too_deep_diagnostic(span))
            }
        }
    }

    fn too_deep<R>(&mut self) -> PResult<R> {
        let span = self.cur_span();
        self.fail(Self::too_deep_diagnostic(span))
    }

    fn too_deep_diagnostic(span: Span) -> Diagnostic {
        Diagnostic::error(
            "E0125",
            span,
            format!("expression nested more than {MAX_NESTING} levels deep"),
        )
        .with_label("too deeply nested")
        .with_note("split the expression into assignments")
    }

    fn expr_bp_inner(&mut self, min: u8) -> PResult<Expr> {
        if self.depth > MAX_NESTING {
            return self.too_deep();
        }
        let mut lhs = self.prefix()?;
        while let Some(kind) = self.peek() {
            if kind == T::Question && min == 0 {
                self.chain_link()?;
                self.bump();
                let then = self.expr_bp(0)?;
                let colon_span = self.expect(T::Colon, "`:` of the conditional expression")?;
                let otherwise = self.expr_bp(1)?;
                let span = lhs.span.to(otherwise.span);
                lhs = Expr {
                    kind: ExprKind::Ternary {
                        cond: Box::new(lhs),
                        then: Box::new(then),
                        otherwise: Box::new(otherwise),
                        colon_span,
                    },
                    span,
                };
                continue;
            }
            let Some(&(_, op, level)) = BINARY_OPS.iter().find(|(k, _, _)| *k == kind) else {
                break;
            };
            if level < min {
                break;
            }
            self.chain_link()?;
            let op_span = self.bump();
            let rhs = self.expr_bp(level + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary {
                    op,
                    op_span,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                span,
            };
        }
        Ok(lhs)
    }

    /// Prefix operators. Unary `-` binds tighter than `*` but looser than
    /// postfix. A `*` is an unpack when an operand follows, except before `-`
    /// and `*`, where the reference's precedences make it the lone wildcard.
    fn prefix(&mut self) -> PResult<Expr> {
        // Saved and restored: `postfix` adds one level per link of a chain.
        let saved = self.depth;
        self.depth += 1;
        let result = if self.depth > MAX_NESTING {
            self.too_deep()
        } else {
            self.prefix_inner()
        };
        self.depth = saved;
        result
    }

    fn prefix_inner(&mut self) -> PResult<Expr> {
        match self.peek() {
            Some(T::Minus) => {
                let op = self.bump();
                let operand = self.prefix()?;
                let span = op.to(operand.span);
                Ok(Expr {
                    kind: ExprKind::Neg(Box::new(operand)),
                    span,
                })
            }
            Some(T::Star) => {
                let op = self.bump();
                match self.peek() {
                    Some(k) if k.starts_expr() && k != T::Star && k != T::Minus => {
                        let operand = self.prefix()?;
                        let span = op.to(operand.span);
                        Ok(Expr {
                            kind: ExprKind::Unpack(Box::new(operand)),
                            span,
                        })
                    }
                    _ => self.postfix(Expr {
                        kind: ExprKind::Star,
                        span: op,
                    }),
                }
            }
            Some(T::Bang) => {
                let bang = self.bump();
                let operand = self.prefix()?;
                let text = operand.span.text(self.src);
                let replacement = if matches!(operand.kind, ExprKind::Name(_) | ExprKind::Paren(_))
                {
                    format!("{text} == False")
                } else {
                    format!("({text}) == False")
                };
                self.push(
                    Diagnostic::error("E0111", bang, "`!` is not an operator of the mapper DSL")
                        .with_label("negation is not supported")
                        .with_fix(Fix::safe(
                            format!("write `{replacement}`"),
                            vec![(bang.to(operand.span), replacement.clone())],
                        )),
                );
                Ok(operand)
            }
            _ => {
                let primary = self.primary()?;
                self.postfix(primary)
            }
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let span = self.cur_span();
        let kind = match self.peek() {
            Some(T::Int) => {
                self.bump();
                let text = span.text(self.src);
                if text.parse::<i64>().is_err() {
                    self.push(
                        Diagnostic::warning("W0126", span, "integer literal too large")
                            .with_note("the reference reads integers with `atoi`; values above 2^31-1 overflow"),
                    );
                }
                ExprKind::Int(int_value(text))
            }
            Some(T::KwTrue) => {
                self.bump();
                ExprKind::Bool(true)
            }
            Some(T::KwFalse) => {
                self.bump();
                ExprKind::Bool(false)
            }
            Some(T::Ident) => {
                self.bump();
                ExprKind::Name(span.text(self.src).to_string())
            }
            Some(k) if k.is_proc_kind() => {
                self.bump();
                ExprKind::Proc(proc_kind(k).unwrap_or(ProcKind::CPU))
            }
            Some(k) if k.is_mem_kind() => {
                self.bump();
                ExprKind::Mem(mem_kind(k).unwrap_or(MemKind::SYSMEM))
            }
            Some(T::LParen) => return self.paren_or_tuple(),
            Some(T::KwTuple) => return self.comprehension(),
            Some(T::Str) => {
                return self.fail(
                    Diagnostic::error(
                        "E0118",
                        span,
                        "strings are only allowed as `print`'s first argument",
                    )
                    .with_label("unexpected string"),
                );
            }
            Some(k) if k.is_property() && self.peek_at(1) == Some(T::LParen) => {
                return self.property_as_function();
            }
            Some(k)
                if k.is_property()
                    || matches!(
                        k,
                        T::TyInt | T::TyBool | T::TyIPoint | T::TyISpace | T::TyMSpace
                    ) =>
            {
                // Most likely a variable that was (wrongly) given a keyword's name.
                let ident = self.keyword_as_name("a variable name");
                ExprKind::Name(ident.name)
            }
            _ => return self.expected("an expression"),
        };
        Ok(Expr { kind, span })
    }

    fn paren_or_tuple(&mut self) -> PResult<Expr> {
        let open = self.bump();
        if self.at(T::RParen) {
            return self.expected("an expression (the DSL has no empty tuple)");
        }
        let first = self.expr()?;
        if self.at(T::Comma) {
            let mut items = vec![first];
            while self.eat(T::Comma).is_some() {
                items.push(self.expr()?);
            }
            let close = self.expect(T::RParen, "`,` or `)`")?;
            return Ok(Expr {
                kind: ExprKind::Tuple(items),
                span: open.to(close),
            });
        }
        let close = self.expect(T::RParen, "`)`")?;
        Ok(Expr {
            kind: ExprKind::Paren(Box::new(first)),
            span: open.to(close),
        })
    }

    fn comprehension(&mut self) -> PResult<Expr> {
        let kw = self.bump();
        self.expect(T::LParen, "`(` after `tuple`")?;
        let body = self.expr()?;
        self.expect(T::KwFor, "`for`")?;
        let var = self.ident_or_expected("a loop variable name")?;
        self.expect(T::KwIn, "`in`")?;
        let iter = self.expr()?;
        let close = self.expect(T::RParen, "`)`")?;
        Ok(Expr {
            kind: ExprKind::Comprehension {
                body: Box::new(body),
                var,
                iter: Box::new(iter),
            },
            span: kw.to(close),
        })
    }

    /// `len(t)` / `split(m, 0, 2)`: a property written as a function. Offer the
    /// method form and parse it as that.
    fn property_as_function(&mut self) -> PResult<Expr> {
        let prop_span = self.bump();
        let prop = Prop::from_name(prop_span.text(self.src)).unwrap_or(Prop::Len);
        self.bump();
        let mut args = vec![self.expr()?];
        while self.eat(T::Comma).is_some() {
            args.push(self.expr()?);
        }
        let close = self.expect(T::RParen, "`,` or `)`")?;
        let whole = prop_span.to(close);
        let base = args.remove(0);
        let base_text = base.span.text(self.src);
        let base_text = if matches!(
            base.kind,
            ExprKind::Name(_)
                | ExprKind::Paren(_)
                | ExprKind::Call { .. }
                | ExprKind::Index { .. }
                | ExprKind::Prop { .. }
        ) {
            base_text.to_string()
        } else {
            format!("({base_text})")
        };
        let rest: Vec<&str> = args.iter().map(|a| a.span.text(self.src)).collect();
        let replacement = if rest.is_empty() && !prop.is_method() {
            format!("{base_text}.{}", prop.name())
        } else {
            format!("{base_text}.{}({})", prop.name(), rest.join(", "))
        };
        self.push(
            Diagnostic::error(
                "E0119",
                prop_span,
                format!("`{}` is a property, not a function", prop.name()),
            )
            .with_label(format!("write `{replacement}`"))
            .with_fix(Fix::safe(
                format!("write `{replacement}`"),
                vec![(whole, replacement.clone())],
            )),
        );
        let prop_expr = Expr {
            kind: ExprKind::Prop {
                base: Box::new(base),
                prop,
                prop_span,
            },
            span: whole,
        };
        if rest.is_empty() && !prop.is_method() {
            Ok(prop_expr)
        } else {
            Ok(Expr {
                kind: ExprKind::Call {
                    callee: Box::new(prop_expr),
                    args,
                },
                span: whole,
            })
        }
    }

    /// Calls, indexing and properties after an operand, built in a loop; each
    /// link counts as a level of nesting (the caller, `prefix`, restores the
    /// counter).
    fn postfix(&mut self, mut e: Expr) -> PResult<Expr> {
        loop {
            if matches!(self.peek(), Some(T::LParen | T::LBracket | T::Dot)) {
                self.chain_link()?;
            }
            match self.peek() {
                Some(T::LParen) => {
                    let open = self.bump();
                    if self.at(T::RParen) {
                        let close = self.cur_span();
                        return self.fail(
                            Diagnostic::error("E0114", close, "a call needs at least one argument")
                                .with_label("expected an argument")
                                .with_related(open, "call begins here")
                                .with_note("the reference grammar has no zero-argument calls"),
                        );
                    }
                    let mut args = vec![self.expr()?];
                    while self.eat(T::Comma).is_some() {
                        args.push(self.expr()?);
                    }
                    let close = self.expect(T::RParen, "`,` or `)`")?;
                    let span = e.span.to(close);
                    e = Expr {
                        kind: ExprKind::Call {
                            callee: Box::new(e),
                            args,
                        },
                        span,
                    };
                }
                Some(T::LBracket) => {
                    self.bump();
                    e = self.index_or_slice(e)?;
                }
                Some(T::Dot) => {
                    let dot = self.bump();
                    match self.peek() {
                        Some(k) if k.is_property() => {
                            let prop_span = self.bump();
                            let prop =
                                Prop::from_name(prop_span.text(self.src)).unwrap_or(Prop::Size);
                            let span = e.span.to(prop_span);
                            e = Expr {
                                kind: ExprKind::Prop {
                                    base: Box::new(e),
                                    prop,
                                    prop_span,
                                },
                                span,
                            };
                        }
                        Some(T::Int)
                            if dot.start == e.span.end && matches!(e.kind, ExprKind::Int(_)) =>
                        {
                            let span = e.span.to(self.cur_span());
                            return self.fail(
                                Diagnostic::error(
                                    "E0115",
                                    span,
                                    "the mapper DSL has no floating-point numbers",
                                )
                                .with_label("not an integer")
                                .with_note(
                                    "use integer arithmetic, e.g. `a * 3 / 2` instead of `a * 1.5`",
                                ),
                            );
                        }
                        Some(T::Ident) => {
                            let span = self.cur_span();
                            let word = span.text(self.src);
                            let mut d = Diagnostic::error("E0120", span, format!("unknown property `{word}`"))
                                .with_label("not a property")
                                .with_note(
                                    "after `.` only these are allowed: size split merge swap slice reverse balance_split auto_split greedy_split volume has len ipoint ispace parent processor",
                                );
                            if let Some(best) = closest(word, Prop::ALL.iter().map(|p| p.name())) {
                                d = d.with_fix(Fix::safe(
                                    format!("replace with `{best}`"),
                                    vec![(span, best.into())],
                                ));
                            }
                            return self.fail(d);
                        }
                        _ => return self.expected("a property after `.`"),
                    }
                }
                _ => return Ok(e),
            }
        }
    }

    fn index_or_slice(&mut self, base: Expr) -> PResult<Expr> {
        if self.at(T::RBracket) {
            return self.expected("an index");
        }
        let lo = if self.at(T::Colon) {
            None
        } else {
            Some(self.expr()?)
        };
        if let Some(colon_span) = self.eat(T::Colon) {
            let hi = if self.at(T::RBracket) {
                None
            } else {
                Some(self.expr()?)
            };
            if self.at(T::Comma) {
                return self.fail(
                    Diagnostic::error("E0123", self.cur_span(), "a slice must be the whole index")
                        .with_label("expected `]`")
                        .with_note("`m[a:b]` is allowed; `m[a:b, c]` is not"),
                );
            }
            let close = self.expect(T::RBracket, "`]`")?;
            let span = base.span.to(close);
            return Ok(Expr {
                kind: ExprKind::Slice {
                    base: Box::new(base),
                    lo: lo.map(Box::new),
                    hi: hi.map(Box::new),
                    colon_span,
                },
                span,
            });
        }
        let mut indices = vec![lo.unwrap_or(Expr {
            kind: ExprKind::Star,
            span: Span::at(0),
        })];
        while self.eat(T::Comma).is_some() {
            indices.push(self.expr()?);
        }
        let close = self.expect(T::RBracket, "`,` or `]`")?;
        let span = base.span.to(close);
        Ok(Expr {
            kind: ExprKind::Index {
                base: Box::new(base),
                indices,
            },
            span,
        })
    }
}

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

/// The value of an integer literal; saturates instead of overflowing.
fn int_value(text: &str) -> i64 {
    text.parse::<i64>().unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expression of `x = EXPR;` as an S-expression, to pin down precedence.
    fn sexp(src: &str) -> String {
        let parsed = parse(&format!("x = {src};"));
        assert!(!parsed.has_errors(), "{src}: {:?}", parsed.diagnostics);
        match &parsed.program.stmts[0].kind {
            StmtKind::Assign { value, .. } => show(value),
            other => panic!("{other:?}"),
        }
    }

    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int(n) => n.to_string(),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Name(n) => n.clone(),
            ExprKind::Proc(k) => k.name().into(),
            ExprKind::Mem(k) => k.name().into(),
            ExprKind::Star => "*".into(),
            ExprKind::Unpack(a) => format!("(unpack {})", show(a)),
            ExprKind::Neg(a) => format!("(neg {})", show(a)),
            ExprKind::Binary { op, lhs, rhs, .. } => {
                format!("({} {} {})", op.text(), show(lhs), show(rhs))
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
                ..
            } => {
                format!("(? {} {} {})", show(cond), show(then), show(otherwise))
            }
            ExprKind::Paren(a) => show(a),
            ExprKind::Tuple(items) => format!(
                "(tuple {})",
                items.iter().map(show).collect::<Vec<_>>().join(" ")
            ),
            ExprKind::Call { callee, args } => {
                format!(
                    "(call {} {})",
                    show(callee),
                    args.iter().map(show).collect::<Vec<_>>().join(" ")
                )
            }
            ExprKind::Index { base, indices } => {
                format!(
                    "(index {} {})",
                    show(base),
                    indices.iter().map(show).collect::<Vec<_>>().join(" ")
                )
            }
            ExprKind::Slice { base, lo, hi, .. } => format!(
                "(slice {} {} {})",
                show(base),
                lo.as_ref().map(|e| show(e)).unwrap_or("_".into()),
                hi.as_ref().map(|e| show(e)).unwrap_or("_".into())
            ),
            ExprKind::Prop { base, prop, .. } => format!("(. {} {})", show(base), prop.name()),
            ExprKind::Comprehension { body, var, iter } => {
                format!("(for {} {} {})", show(body), var.name, show(iter))
            }
        }
    }

    #[test]
    fn precedences_match_the_reference() {
        assert_eq!(sexp("a ? b : c ? d : e"), "(? (? a b c) d e)");
        assert_eq!(sexp("a ? b ? c : d : e"), "(? a (? b c d) e)");
        assert_eq!(sexp("a || b ? c : d || e"), "(? (|| a b) c (|| d e))");
        assert_eq!(sexp("*a + b"), "(+ (unpack a) b)");
        assert_eq!(sexp("*a[0]"), "(unpack (index a 0))");
        assert_eq!(sexp("a * *b"), "(* a (unpack b))");
        assert_eq!(sexp("* - 1"), "(- * 1)");
        assert_eq!(sexp("* * b"), "(* * b)");
        assert_eq!(sexp("*(a)"), "(unpack a)");
        assert_eq!(sexp("-a * b"), "(* (neg a) b)");
        assert_eq!(sexp("-x[0]"), "(neg (index x 0))");
        assert_eq!(sexp("- -2"), "(neg (neg 2))");
        assert_eq!(sexp("3 - -1"), "(- 3 (neg 1))");
        assert_eq!(sexp("a < b < c"), "(< (< a b) c)");
        assert_eq!(sexp("a && b || c"), "(|| (&& a b) c)");
        assert_eq!(sexp("a == b != c"), "(!= (== a b) c)");
        assert_eq!(sexp("1 + 2 * 3 % 4"), "(+ 1 (% (* 2 3) 4))");
        assert_eq!(sexp("m[a ? b : c : d]"), "(slice m (? a b c) d)");
        assert_eq!(sexp("m[a ? 0 : 1]"), "(index m (? a 0 1))");
        assert_eq!(sexp("m[:-1]"), "(slice m _ (neg 1))");
        assert_eq!(sexp("m[:]"), "(slice m _ _)");
        assert_eq!(sexp("m[*, 0]"), "(index m * 0)");
        assert_eq!(sexp("1.size"), "(. 1 size)");
        assert_eq!(
            sexp("Machine(GPU).merge(0, 1)"),
            "(call (. (call Machine GPU) merge) 0 1)"
        );
        assert_eq!(
            sexp("tuple(i * 2 for i in (0, 1))"),
            "(for (* i 2) i (tuple 0 1))"
        );
        assert_eq!(sexp("(1)"), "1");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        for (open, close) in [
            ("(", ")"),
            ("t[", "]"),
            ("-", ""),
            ("*(", ")"),
            ("f(", ")"),
            ("tuple(", " for i in (1, 2))"),
        ] {
            let src = format!("x = {}1{};", open.repeat(5000), close.repeat(5000));
            let parsed = parse(&src);
            assert!(
                parsed.diagnostics.iter().any(|d| d.code == "E0125"),
                "{open}"
            );
            let _ = crate::analyze(&src);
            let _ = crate::format::format(&src);
        }
        // A long chain of functions calling each other is checked without
        // exhausting the stack.
        let mut chain = String::from("def f0(int x) { return x; }\n");
        for i in 1..3000 {
            chain.push_str(&format!("def f{i}(int x) {{ return f{}(x); }}\n", i - 1));
        }
        chain.push_str("y = f2999(1);\n");
        let _ = crate::analyze(&chain);
        let ok = format!("x = {}1{};", "(".repeat(20), ")".repeat(20));
        assert!(!parse(&ok).has_errors());
    }

    #[test]
    fn a_brace_in_a_python_style_body_ends_it() {
        // Found by the fuzzer: this looped forever, pushing error statements.
        let parsed = parse("def fTask( task):\n    return 0}\n");
        assert!(parsed.diagnostics.iter().any(|d| d.code == "E0102"));
        assert!(parsed.program.stmts.len() < 5);
    }

    #[test]
    fn rejects_what_the_reference_rejects() {
        for src in [
            "x = m[**];",
            "x = f();",
            "x = m[];",
            "x = 1, 2;",
            "x = !a;",
            "x = m[1:2, 3];",
            "x = (i for i in (1, 2));",
        ] {
            assert!(parse(src).has_errors(), "{src} should be rejected");
        }
    }
}
