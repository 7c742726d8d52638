//! The formatter: canonical spacing and indentation, every comment kept.
//!
//! It re-emits the parser's tokens (so it can never change what the program
//! means) with canonical spaces between them, one statement per line, function
//! bodies indented by four spaces, and comments where they were: a trailing
//! comment stays at the end of its line, a comment on its own line stays on
//! its own line, and runs of blank lines between statements become one blank
//! line. Statements with errors are copied verbatim, so formatting a file that
//! is being edited only touches the statements that parse. Formatting is
//! idempotent.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use crate::ast::{Expr, ExprKind, Program, Stmt, StmtKind};
use crate::diagnostic::{CappedDiagnostics, TextEdit};
use crate::parser::{parse, parse_for_format, EachStmt, Parsed};
use crate::token::{Token, TokenKind as T, TokenStream};
use crate::{Severity, Span};

const INDENT: &str = "    ";

/// How an operator token is used, where the token alone does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Unary `-` or unpack `*`: no space after it.
    Prefix,
    /// A lone `*` wildcard inside an expression.
    Wildcard,
    /// The `:` of a slice: no spaces around it.
    SliceColon,
}

/// Formats a whole file. Returns the source unchanged if it has no statements.
pub fn format(source: &str) -> String {
    format_file(source).0
}

/// [`format`], and whether the file has syntax errors (the statements
/// that hold one are left as written).
///
/// Streams: it parses one top-level statement, formats it, appends it to
/// the output and forgets it before parsing the one after the next, so the
/// peak memory is the input, the output and a statement or two, not the
/// whole tree (see bench/memory). The result is that of [`format_parsed`]
/// on [`parse`]'s tree, byte for byte (`grammar/tests/properties.rs`).
pub fn format_file(source: &str) -> (String, bool) {
    match format_streaming(source) {
        Some(done) => done,
        None => format_whole(source),
    }
}

/// [`format_file`] from a whole tree, parsed without keeping the token
/// vector (the formatter reads the tokens again as it goes).
fn format_whole(source: &str) -> (String, bool) {
    let parsed = parse_for_format(source);
    let has_errors = !parsed.error_offsets.is_empty();
    let formatted = format_program(
        source,
        &parsed.program,
        &parsed.comments,
        parsed.error_offsets,
        parsed.capped,
    );
    (formatted, has_errors)
}

/// [`format_file`] one top-level statement at a time ([`EachStmt`]).
///
/// A statement is formatted once the statement after it is parsed: an
/// error of that next statement may be reported where this one ends (a
/// missing `;` at the end of the previous token), and the formatter copies
/// verbatim every statement an error touches. Should an error still come
/// in at or before the end of a statement already formatted, which the
/// parser does not do, this gives up (`None`) and the caller formats from
/// the whole tree instead: the output stays that of the whole-file path.
fn format_streaming(source: &str) -> Option<(String, bool)> {
    let mut each = EachStmt::new(source);
    let mut f = Formatter::new(source, Cow::Owned(Vec::new()), Vec::new());
    let mut has_errors = false;
    let mut pending: Option<std::sync::Arc<Stmt>> = None;
    let mut prev_end = None;
    // The end of the last statement formatted: an error at or before it
    // comes too late (see above).
    let mut formatted_to: Option<usize> = None;
    let mut any = false;
    loop {
        let next = each.next_stmt();
        let mut too_late = false;
        each.new_diagnostics(|span, severity| {
            if severity == Severity::Error {
                has_errors = true;
                let at = span.start();
                too_late |= formatted_to.is_some_and(|end| at <= end);
                let i = f.error_offsets.partition_point(|&o| o < at);
                f.error_offsets.insert(i, at);
            }
        });
        if too_late {
            return None;
        }
        if each.over_the_cap() {
            // `format_program` leaves such a file as it is. (Whether it
            // has errors is then told of those found so far.) The output
            // so far goes first: it is about the input's size.
            drop(f);
            return Some((source.to_string(), has_errors));
        }
        let comments = each.take_comments();
        f.used.resize(f.used.len() + comments.len(), false);
        f.comments.to_mut().extend(comments);
        if let Some(stmt) = pending.take() {
            if !any {
                // Room for about the input's size at once (see `format_program`).
                f.out.reserve_exact(source.len() + source.len() / 16 + 16);
                any = true;
            }
            prev_end = f.stmt_line(&stmt, 0, prev_end);
            formatted_to = Some(stmt.span.end());
            f.forget_behind(stmt.span.end());
        }
        match next {
            Some(stmt) => pending = Some(stmt),
            None => break,
        }
    }
    if !any {
        // No statement: the parse has an E0109 (an error), and
        // `format_program` leaves the file as it is.
        return Some((source.to_string(), true));
    }
    f.own_line_comments(source.len(), 0, prev_end);
    Some((f.finish(), has_errors))
}

/// Formats a file that has already been parsed.
pub fn format_parsed(source: &str, parsed: &Parsed) -> String {
    format_program(
        source,
        &parsed.program,
        &parsed.comments,
        error_offsets(parsed),
        too_many_errors(parsed),
    )
}

/// Formats the whole of `program` (parsed from `source`, with its
/// `comments`), copying verbatim the statements where an error starts; the
/// source unchanged when it has no statements or more errors than were
/// reported (`capped`).
fn format_program(
    source: &str,
    program: &Program,
    comments: &[Token],
    error_offsets: Vec<usize>,
    capped: bool,
) -> String {
    if program.stmts.is_empty() || capped {
        return source.to_string();
    }
    let mut f = Formatter::new(source, Cow::Borrowed(comments), error_offsets);
    // The output is about the input's size: room for it and a little
    // more at once, instead of doublings that end up to twice the size
    // and hold the old and new buffers while they copy (see bench/memory).
    f.out.reserve_exact(source.len() + source.len() / 16 + 16);
    f.block(&program.stmts, 0, source.len(), None);
    f.finish()
}

/// Where each error of `parsed` starts, ascending (diagnostics come in
/// source order).
fn error_offsets(parsed: &Parsed) -> Vec<usize> {
    parsed
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.span.start())
        .collect()
}

/// Formats the top-level statements that overlap `range` and returns one edit
/// replacing exactly those statements (and their trailing comments); `None` if
/// nothing would change or no statement overlaps.
pub fn format_range(source: &str, range: Span) -> Option<TextEdit> {
    let parsed = parse(source);
    if too_many_errors(&parsed) {
        return None;
    }
    let stmts = &parsed.program.stmts;
    let overlapping: Vec<usize> = (0..stmts.len())
        .filter(|&i| {
            let s = stmts[i].span;
            s.start() < range.end().max(range.start() + 1) && range.start() <= s.end()
        })
        .collect();
    let (&first, &last) = (overlapping.first()?, overlapping.last()?);
    let mut f = Formatter::new(
        source,
        Cow::Borrowed(&parsed.comments),
        error_offsets(&parsed),
    );
    let start = stmts[first].span.start();
    for (i, c) in parsed.comments.iter().enumerate() {
        if c.span.start() < start {
            f.used[i] = true;
        }
    }
    let end_of_last = stmts[last].span.end();
    f.block(&stmts[first..=last], 0, end_of_last, None);
    let replaced_end = f.last_trailing_end.max(end_of_last);
    let mut text = f.out;
    while text.ends_with('\n') {
        text.pop();
    }
    let text = if f.line_break != "\n" {
        text.replace('\n', f.line_break)
    } else {
        text
    };
    let span = Span::new(start, replaced_end);
    if span.text(source) == text {
        None
    } else {
        Some(TextEdit { span, text })
    }
}

/// True when some syntax diagnostics were left out (see
/// [`crate::diagnostic::MAX_DIAGNOSTICS`]): the formatter copies statements
/// with errors verbatim, so it must know every one of them; such a file is
/// left as it is.
fn too_many_errors(parsed: &Parsed) -> bool {
    parsed.diagnostics.iter().any(|d| d.code == "I0001")
}

/// The file's line break (that of its first line): the output keeps it.
fn line_break_of(src: &str) -> &'static str {
    match src.find(['\n', '\r']) {
        Some(i) if src[i..].starts_with("\r\n") => "\r\n",
        Some(i) if src[i..].starts_with('\r') => "\r",
        _ => "\n",
    }
}

/// Appends `text` to `out` with `\r\n` and a lone `\r` as `\n`, without
/// a converted copy of it first (a broken statement can be most of a file
/// of random bytes).
fn push_lf(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(i) = rest.find('\r') {
        out.push_str(&rest[..i]);
        out.push('\n');
        rest = &rest[i + 1..];
        rest = rest.strip_prefix('\n').unwrap_or(rest);
    }
    out.push_str(rest);
}

/// The file's significant tokens, lexed again as the formatter moves
/// forward through the file, so that no whole-file token vector is needed
/// (it costs 24 bytes per token).
struct TokenCursor<'a> {
    src: &'a str,
    stream: TokenStream<'a>,
    /// Tokens lexed, starting at or after `from`, not yet passed.
    ahead: VecDeque<Token>,
    /// The position last sought; tokens before it are gone.
    from: usize,
}

impl<'a> TokenCursor<'a> {
    fn new(src: &'a str) -> TokenCursor<'a> {
        TokenCursor {
            src,
            // The parse already reported the lexical diagnostics: of this
            // second lexing's, only span and severity are kept, not the
            // messages of every bad character again (see bench/memory).
            stream: TokenStream::new(src, false).collecting_into(CappedDiagnostics::light()),
            ahead: VecDeque::new(),
            from: 0,
        }
    }

    /// Moves to the first token starting at or after `start`. The
    /// formatter only moves forward; moving back starts over (correct,
    /// only slower).
    fn seek(&mut self, start: usize) {
        if start < self.from {
            *self = TokenCursor::new(self.src);
        }
        self.from = start;
        while self.ahead.front().is_some_and(|t| t.span.start() < start) {
            self.ahead.pop_front();
        }
        // The parse reported them: these are only let go.
        drop(self.stream.take_light_diagnostics());
        if self.ahead.is_empty() {
            for token in self.stream.by_ref() {
                if token.span.start() >= start {
                    self.ahead.push_back(token);
                    break;
                }
            }
        }
    }

    /// The token at the position sought (or last passed), if any.
    fn peek(&mut self) -> Option<Token> {
        if self.ahead.is_empty() {
            self.ahead.push_back(self.stream.next()?);
        }
        self.ahead.front().copied()
    }

    /// Passes and returns the current token if it ends by `end`.
    fn next_within(&mut self, end: usize) -> Option<Token> {
        let token = self.peek().filter(|t| t.span.end() <= end)?;
        self.ahead.pop_front();
        self.from = token.span.start() + 1;
        Some(token)
    }
}

struct Formatter<'a> {
    src: &'a str,
    tokens: TokenCursor<'a>,
    /// The comments not yet emitted, and some emitted ones (all of the
    /// file's but when formatting statement by statement).
    comments: Cow<'a, [Token]>,
    used: Vec<bool>,
    /// The roles of the current top-level statement's operators.
    roles: HashMap<usize, Role>,
    /// Statement spans that hold an error: copied verbatim.
    error_offsets: Vec<usize>,
    out: String,
    /// `\n`, `\r\n` or `\r`: the output is built with `\n`, then converted.
    line_break: &'static str,
    /// Every comment before this index is used (comments are in source
    /// order), so the searches below start here: linear, not quadratic.
    next_unused: usize,
    last_trailing_end: usize,
}

impl<'a> Formatter<'a> {
    /// A formatter of `src` (with its `comments`), copying verbatim the
    /// statements where an error starts (`error_offsets`, ascending).
    fn new(src: &'a str, comments: Cow<'a, [Token]>, error_offsets: Vec<usize>) -> Formatter<'a> {
        Formatter {
            src,
            tokens: TokenCursor::new(src),
            used: vec![false; comments.len()],
            comments,
            roles: HashMap::new(),
            error_offsets,
            out: String::new(),
            line_break: line_break_of(src),
            next_unused: 0,
            last_trailing_end: 0,
        }
    }

    /// Emits one statement at `indent` with the own-line comments before
    /// it (after `prev_end`, where the previous one's text ended) and its
    /// trailing comment; returns where its text ends.
    fn stmt_line(&mut self, stmt: &Stmt, indent: usize, prev_end: Option<usize>) -> Option<usize> {
        let prev_end = self.own_line_comments(stmt.span.start(), indent, prev_end);
        if let Some(p) = prev_end {
            if self.newlines_between(p, stmt.span.start()) >= 2 {
                self.out.push('\n');
            }
        }
        if indent == 0 {
            // Roles are looked up by offset within a statement only: those
            // of one top-level statement at a time, not the whole file's.
            self.roles.clear();
            collect_roles(stmt, &mut self.roles);
        }
        self.push_indent(indent);
        self.stmt(stmt, indent);
        let end = self.trailing_comment(stmt.span.end());
        self.out.push('\n');
        Some(end)
    }

    /// Forgets what is behind a top-level statement that ended at `end`
    /// (when formatting statement by statement): the comments before the
    /// first one not yet used, the error offsets before `end`. (One at
    /// `end` stays: it also touches a statement that begins right there,
    /// as `Task;tuple=x;` has one where `tuple` begins; see
    /// [`Formatter::has_error`].)
    fn forget_behind(&mut self, end: usize) {
        let n = self.first_unused();
        if let Cow::Owned(comments) = &mut self.comments {
            comments.drain(..n);
            self.used.drain(..n);
            self.next_unused = 0;
        }
        let behind = self.error_offsets.partition_point(|&o| o < end);
        self.error_offsets.drain(..behind);
    }

    fn finish(mut self) -> String {
        // Comments after the last statement were emitted by `block`; make the
        // file end with exactly one newline.
        while self.out.ends_with("\n\n") {
            self.out.pop();
        }
        if !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        if self.line_break != "\n" {
            self.out.replace('\n', self.line_break)
        } else {
            self.out
        }
    }

    fn has_error(&self, span: Span) -> bool {
        // The offsets are sorted (diagnostics come in source order).
        let first = self.error_offsets.partition_point(|&o| o < span.start());
        self.error_offsets
            .get(first)
            .is_some_and(|&o| o <= span.end())
    }

    /// Line breaks between two offsets: `\n`, `\r\n` or a lone `\r`.
    fn newlines_between(&self, a: usize, b: usize) -> usize {
        let Some(text) = self.src.get(a..b) else {
            return 0;
        };
        let bytes = text.as_bytes();
        bytes
            .iter()
            .enumerate()
            .filter(|&(i, &c)| c == b'\n' || (c == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
            .count()
    }

    /// Index of the first comment not yet used.
    fn first_unused(&mut self) -> usize {
        while self.next_unused < self.comments.len() && self.used[self.next_unused] {
            self.next_unused += 1;
        }
        self.next_unused
    }

    fn comment_text(&self, c: &Token) -> &'a str {
        c.span.text(self.src).trim_end()
    }

    /// Emits statements at `indent`, with the comments between them, and the
    /// own-line comments that follow the last one up to `region_end`.
    fn block<S: std::borrow::Borrow<Stmt>>(
        &mut self,
        stmts: &[S],
        indent: usize,
        region_end: usize,
        mut prev_end: Option<usize>,
    ) {
        for stmt in stmts {
            prev_end = self.stmt_line(stmt.borrow(), indent, prev_end);
        }
        self.own_line_comments(region_end, indent, prev_end);
    }

    /// Emits unused comments that start before `limit`, each on its own line.
    fn own_line_comments(
        &mut self,
        limit: usize,
        indent: usize,
        mut prev_end: Option<usize>,
    ) -> Option<usize> {
        for i in self.first_unused()..self.comments.len() {
            let c = self.comments[i];
            if c.span.start() >= limit {
                break;
            }
            if self.used[i] {
                continue;
            }
            self.used[i] = true;
            if let Some(p) = prev_end {
                if self.newlines_between(p, c.span.start()) >= 2 {
                    self.out.push('\n');
                }
            }
            self.push_indent(indent);
            self.out.push_str(self.comment_text(&c));
            self.out.push('\n');
            prev_end = Some(c.span.end());
        }
        prev_end
    }

    /// Appends the comment that follows `end` on the same line, if any.
    /// Returns the end of what was consumed.
    fn trailing_comment(&mut self, end: usize) -> usize {
        for i in self.first_unused()..self.comments.len() {
            let c = self.comments[i];
            if self.used[i] || c.span.start() < end {
                continue;
            }
            // Only a comment before the next token trails this statement.
            self.tokens.seek(end);
            let before_next = self
                .tokens
                .peek()
                .is_none_or(|t| c.span.start() < t.span.start());
            if before_next && self.newlines_between(end, c.span.start()) == 0 {
                self.used[i] = true;
                self.out.push(' ');
                self.out.push_str(self.comment_text(&c));
                self.last_trailing_end = c.span.end();
                return c.span.end();
            }
            break;
        }
        end
    }

    fn push_indent(&mut self, indent: usize) {
        for _ in 0..indent {
            self.out.push_str(INDENT);
        }
    }

    fn stmt(&mut self, stmt: &Stmt, indent: usize) {
        if matches!(stmt.kind, StmtKind::Error) || self.has_error(stmt.span) {
            self.verbatim(stmt.span);
            return;
        }
        if let StmtKind::FuncDef {
            body, body_span, ..
        } = &stmt.kind
        {
            // Header up to and including `{`, then the body one level deeper.
            let open = Span::new(stmt.span.start(), body_span.start() + 1);
            self.tokens_inline(open, indent);
            let after_open = self.trailing_comment(open.end());
            self.out.push('\n');
            let close = body_span.end().saturating_sub(1);
            self.block(body, indent + 1, close, Some(after_open));
            self.push_indent(indent);
            self.out.push('}');
            return;
        }
        self.tokens_inline(stmt.span, indent);
    }

    /// Copies a statement's text as written (minus `\r`), marking its comments used.
    fn verbatim(&mut self, span: Span) {
        let first = self
            .comments
            .partition_point(|c| c.span.start() < span.start());
        for (i, c) in self.comments.iter().enumerate().skip(first) {
            if c.span.start() >= span.end() {
                break;
            }
            self.used[i] = true;
        }
        push_lf(&mut self.out, span.text(self.src));
    }

    /// Emits the tokens inside `span` on one line with canonical spacing;
    /// a comment between them forces a line break with a continuation indent.
    fn tokens_inline(&mut self, span: Span, indent: usize) {
        self.tokens.seek(span.start());
        let mut prev: Option<Token> = None;
        let mut fresh_line = true;
        while let Some(tok) = self.tokens.next_within(span.end()) {
            for i in self.first_unused()..self.comments.len() {
                let c = self.comments[i];
                if c.span.start() >= tok.span.start() {
                    break;
                }
                if self.used[i] || c.span.start() < span.start() {
                    continue;
                }
                self.used[i] = true;
                let trailing =
                    prev.is_some_and(|p| self.newlines_between(p.span.end(), c.span.start()) == 0);
                if trailing {
                    self.out.push(' ');
                } else if !fresh_line {
                    self.out.push('\n');
                    self.push_indent(indent + 1);
                }
                self.out.push_str(self.comment_text(&c));
                self.out.push('\n');
                self.push_indent(indent + 1);
                fresh_line = true;
            }
            if let Some(p) = prev {
                if !fresh_line && self.space_between(p, tok) {
                    self.out.push(' ');
                }
            }
            self.out.push_str(tok.span.text(self.src));
            prev = Some(tok);
            fresh_line = false;
        }
    }

    fn space_between(&self, a: Token, b: Token) -> bool {
        let role_a = self.roles.get(&a.span.start()).copied();
        let role_b = self.roles.get(&b.span.start()).copied();
        if matches!(
            b.kind,
            T::Comma | T::Semi | T::RParen | T::RBracket | T::Dot | T::LBracket
        ) {
            return false;
        }
        if matches!(a.kind, T::LParen | T::LBracket | T::Dot) || role_a == Some(Role::Prefix) {
            return false;
        }
        if role_a == Some(Role::SliceColon) || role_b == Some(Role::SliceColon) {
            return false;
        }
        if b.kind == T::LParen {
            let callee = matches!(
                a.kind,
                T::Ident | T::RParen | T::RBracket | T::KwTuple | T::KwPrint
            ) || a.kind.is_property()
                || role_a == Some(Role::Wildcard);
            return !callee;
        }
        true
    }
}

/// Records the role of every `-`, `*` and `:` whose spacing depends on use.
fn collect_roles(stmt: &Stmt, roles: &mut HashMap<usize, Role>) {
    let mut visit = |e: &Expr| match &e.kind {
        ExprKind::Neg(_) | ExprKind::Unpack(_) => {
            roles.insert(e.span.start(), Role::Prefix);
        }
        ExprKind::Star => {
            roles.insert(e.span.start(), Role::Wildcard);
        }
        ExprKind::Slice { colon_span, .. } => {
            roles.insert(colon_span.start(), Role::SliceColon);
        }
        _ => {}
    };
    for e in stmt.exprs() {
        e.walk(&mut visit);
    }
    if let StmtKind::FuncDef { body, .. } = &stmt.kind {
        for s in body {
            collect_roles(s, roles);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn fmt_eq(input: &str, expected: &str) {
        let out = format(input);
        assert_eq!(out, expected);
        assert_eq!(format(&out), out, "not idempotent");
    }

    #[test]
    fn canonical_spacing() {
        fmt_eq("Task  *GPU,CPU ;", "Task * GPU, CPU;\n");
        fmt_eq("x=m[*t,*task.ipoint];", "x = m[*t, *task.ipoint];\n");
        fmt_eq("y = m[:-1]  ;z=-a*-b;", "y = m[:-1];\nz = -a * -b;\n");
        fmt_eq(
            "w = a?b:c;v=m[a?b:c:d];",
            "w = a ? b : c;\nv = m[a ? b : c:d];\n",
        );
        fmt_eq(
            "Layout * * * SOA Align==64;",
            "Layout * * * SOA Align == 64;\n",
        );
        fmt_eq("x = *;y=m[*,0];", "x = *;\ny = m[*, 0];\n");
        fmt_eq(
            "t = tuple(i*2 for i in (0,1));",
            "t = tuple(i * 2 for i in (0, 1));\n",
        );
        fmt_eq("print(\"{}\",x);", "print(\"{}\", x);\n");
    }

    #[test]
    fn function_bodies_are_indented() {
        fmt_eq(
            "def f(Task t){x=t.ipoint;\n\n\n  return m[x[0],*];}",
            "def f(Task t) {\n    x = t.ipoint;\n\n    return m[x[0], *];\n}\n",
        );
    }

    #[test]
    fn comments_are_kept_in_place() {
        fmt_eq(
            "# head\n\n\n\nTask * GPU; # trailing\n// own\nx = 1 + # inside\n  2;\ndef f(Task t) { # open\n  # body\n  return 1; # ret\n  # end\n}\n# tail",
            "# head\n\nTask * GPU; # trailing\n// own\nx = 1 + # inside\n    2;\ndef f(Task t) { # open\n    # body\n    return 1; # ret\n    # end\n}\n# tail\n",
        );
    }

    #[test]
    fn statements_with_errors_are_left_alone() {
        fmt_eq(
            "Task  * GPU;\nx = = 1;\nTask a  CPU;",
            "Task * GPU;\nx = = 1;\nTask a CPU;\n",
        );
    }

    #[test]
    fn crlf_is_preserved() {
        fmt_eq("Task *GPU;\r\nx=1;\r\n", "Task * GPU;\r\nx = 1;\r\n");
    }

    #[test]
    fn verbatim_text_gets_lf_line_breaks() {
        for text in ["", "a", "a\r\nb", "a\rb", "\r\r\n\n\r", "x\r", "\ré\r\n"] {
            let mut out = String::from(">");
            push_lf(&mut out, text);
            let expected = text.replace("\r\n", "\n").replace('\r', "\n");
            assert_eq!(out, format!(">{expected}"), "{text:?}");
        }
    }

    #[test]
    fn a_lone_cr_is_a_line_break() {
        // The comment ends at the `\r`: `y=2;` is code, and the blank line stays.
        fmt_eq("x=1; // c\r\ry=2;\r", "x = 1; // c\r\ry = 2;\r");
    }

    #[test]
    fn a_file_with_more_errors_than_reported_is_left_alone() {
        let src = "x = ;\n".repeat(crate::diagnostic::MAX_DIAGNOSTICS + 1);
        assert_eq!(format(&src), src);
    }

    /// The streaming path must neither give up (it would be a whole-tree
    /// format in disguise, at the whole tree's memory) nor differ from the
    /// whole-tree path.
    #[track_caller]
    fn streams_as_whole(src: &str) {
        let streamed = format_streaming(src);
        assert!(streamed.is_some(), "gave up streaming on {src:?}");
        assert_eq!(streamed, Some(format_whole(src)), "on {src:?}");
    }

    #[test]
    fn streaming_agrees_with_the_whole_tree() {
        let tricky = [
            "",
            "# only a comment\n",
            "Task *GPU;",
            "x = 1\ny = 2;\n",
            "Task * GPU\nRegion * * GPU FBMEM;\n",
            "x = 1 # c\n;y=2;\n\n\n# end",
            "def f(Task t):\n  return 0\n$$ é #c\r\nz = (1\n",
            "x = ;\n$ @ !\nTask = 1;\ny = m[;\n\"abc\n",
            "def f(Task t) { # a\n x = 1;\n\n # b\n return x; } # c\nTask a CPU; # d",
            "y = { 1 + (2 ;\nTask t GPU;\nz = m[1 {\n}\n;\nw = 2;\n",
            "x=1;\r\n\r\ny=-2;\r\n",
            "a = m[*t, :-1];# x\r# y\rb=a?b:c;",
            "x = 99999999999999999999999;\n",
        ];
        for src in tricky {
            streams_as_whole(src);
        }
        // Over the diagnostics cap: left as it is, found on the way.
        streams_as_whole(&"x = ;\n$ @\n".repeat(600));
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
        let mut n = 0;
        for folder in ["public", "probes"] {
            let Ok(entries) = std::fs::read_dir(corpus.join(folder)) else {
                continue;
            };
            for e in entries.flatten() {
                let bytes = std::fs::read(e.path()).unwrap_or_default();
                let src = String::from_utf8_lossy(&bytes);
                streams_as_whole(&src);
                // Cut anywhere: statements broken at every point.
                for cut in (0..src.len()).step_by(97) {
                    if let Some(head) = src.get(..cut) {
                        streams_as_whole(head);
                    }
                }
                n += 1;
            }
        }
        assert!(n > 0, "no corpus at {}", corpus.display());
    }

    #[test]
    fn range_formatting_touches_only_overlapping_statements() {
        let src = "Task  *GPU;\nx=1; # c\ny=2;\n";
        let start = src.find("x=").unwrap();
        let edit = format_range(src, Span::new(start, start + 1)).unwrap();
        assert_eq!(edit.text, "x = 1; # c");
        assert_eq!(edit.span.text(src), "x=1; # c");
    }
}
