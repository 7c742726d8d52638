//! Incremental re-parsing: after an edit, re-parse only the top-level
//! statements the edit can affect and reuse the rest, shifted.
//!
//! Top-level statements are nearly independent parse units (the parser's
//! statement loop carries no state from one statement to the next but the
//! token before; see `Parser::statements`), the way rust-analyzer's item
//! tree treats items. So the parse of an edited file is the old parse with
//! the statements the edit can change replaced by a parse of their new
//! text, and every later span moved by the length change.
//!
//! Error recovery makes this subtler than it looks: a broken statement
//! skips tokens up to a `;` or a statement keyword that begins a line, so
//! an edit can move where an earlier statement's recovery stopped, and an
//! unclosed `{` swallows everything after it. What a statement's parse
//! reads is exactly: its own tokens, the two tokens after it (recovery
//! peeks at the next token and the one after), the token before it and
//! the start and indentation of its first line (a Python-style `def`);
//! lexing a token reads up to the next blank at most. So:
//! - the statements before the edit are reused while their second
//!   following token ends before the edit with a blank in between
//!   (`OldParse::prefix_unchanged_before`);
//! - from there the new text is parsed statement by statement (the
//!   parser's `parse_resumed` hook, given the token before) until a
//!   statement of the new parse begins where an old one began after the
//!   edit, with the same token before it and a line break after the edit
//!   before that token (`Edit::resumes_at`); the old statements from
//!   there on are reused, shifted. If no such boundary comes, the parse
//!   runs to the end of the file (an unclosed `{` does that).
//!
//! Diagnostics are told apart by where they begin (a statement's lie
//! between its first token and the token after it), so no old diagnostic
//! may begin exactly at either boundary. Two parser diagnostics read the
//! whole file: a keyword used as a name (its fix renames every occurrence:
//! recomputed from the new tokens) and a legacy three-field task map
//! (whether the wrapper is already defined: a full parse if the edit may
//! add or remove that definition). A parse over the diagnostic cap, and
//! an empty file, are parsed whole.
//!
//! The equivalence with a full parse (tree with spans, tokens, comments,
//! diagnostics) is a property test (`tests/incremental_equivalence.rs` in the
//! `mapwright-grammar` crate) over random edit sequences on corpus files,
//! with and without syntax mistakes put in first, and on the benchmark's
//! generated files (`tests/tests/incremental_check.rs`).

use std::sync::Arc;

use crate::ast::*;
use crate::diagnostic::{CAPPED_CODE, MAX_DIAGNOSTICS};
use crate::parser::{keyword_rename_edits, parse, parse_resumed, Parsed};
use crate::token::Token;
use crate::Span;

/// What a re-parse did: how much it reused, for benchmarks and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reparse {
    /// Only the statements in the window were parsed again.
    Incremental {
        /// Top-level statements parsed again (the window's new statements).
        reparsed_stmts: usize,
        /// Top-level statements reused from the old parse.
        reused_stmts: usize,
        /// Bytes of source parsed again.
        reparsed_bytes: usize,
        /// Which statements were replaced, and how far the rest moved.
        window: Window,
    },
    /// The whole file was parsed (see the module doc for when).
    Full,
}

impl Reparse {
    /// The statements an incremental re-parse replaced (`None` after a full
    /// parse).
    pub fn window(&self) -> Option<Window> {
        match self {
            Reparse::Incremental { window, .. } => Some(*window),
            Reparse::Full => None,
        }
    }
}

/// Where an incremental re-parse replaced statements: the old parse's
/// `old[first..old_end_stmt]` became the new parse's
/// `new[first..new_end_stmt]`; the statements before are the same, with
/// the same spans, and the statements after are the old ones moved by
/// `delta` bytes. What was computed per statement from the old parse can
/// be kept for the statements outside the window (see
/// [`crate::resolve::resolve_after_edit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The first statement parsed again (the same index in both parses).
    pub first: usize,
    /// Where it begins (the same offset in both texts): every statement
    /// before the window ends before it.
    pub from: usize,
    /// The first old statement after the window (the old statement count
    /// when the window runs to the end of the file).
    pub old_end_stmt: usize,
    /// Where that statement began in the old text (`usize::MAX` when the
    /// window runs to the end of the file).
    pub old_end_offset: usize,
    /// The first new statement after the window.
    pub new_end_stmt: usize,
    /// How far the statements after the window moved.
    pub delta: isize,
    /// The bytes the edit changed: `(start, old_end, new_end)`, as
    /// [`changed_range`] gives them (the text outside is the same).
    pub changed: (usize, usize, usize),
}

/// The parse of `new_source`, reusing `old` (the parse of `old_source`)
/// where the edit between the two texts cannot have changed it. Always equal
/// to `parse(new_source)`.
pub fn reparse(old: &Parsed, old_source: &str, new_source: &str) -> (Parsed, Reparse) {
    match plan(old, old_source, new_source) {
        Some(splice) => assemble(old.clone(), splice, new_source),
        None => (parse(new_source), Reparse::Full),
    }
}

/// [`reparse`] that takes the old parse: the statements, tokens and
/// diagnostics after the edit are moved and shifted in place instead of
/// copied, and the old parse is not freed (on a 5,000-line file, copying
/// the rest of the file and then freeing the old parse was most of the
/// re-parse's time). Statements shared with another parse (an `Arc` held
/// elsewhere) are copied. Returns the parse, how it was made, and the old
/// parse when it was not used (a full parse), for the caller to free.
pub fn reparse_owned(
    old: Parsed,
    old_source: &str,
    new_source: &str,
) -> (Parsed, Reparse, Option<Parsed>) {
    match plan(&old, old_source, new_source) {
        Some(splice) => {
            let (parsed, how) = assemble(old, splice, new_source);
            (parsed, how, None)
        }
        None => (parse(new_source), Reparse::Full, Some(old)),
    }
}

/// The analysis of `new_source` after an edit of `old_source` (parsed as
/// `old`): the syntax tree re-parsed incrementally, then names and checks
/// recomputed over the whole tree (they cross statements: a rename in one
/// statement changes unused-name and undefined-name findings elsewhere).
/// Always equal to `analyze(new_source)`.
pub fn reanalyze(old: &Parsed, old_source: &str, new_source: &str) -> (crate::Analysis, Reparse) {
    let (parsed, how) = reparse(old, old_source, new_source);
    let checked = crate::check::check(&parsed, new_source);
    (crate::Analysis { parsed, checked }, how)
}

/// [`reanalyze`] that also reuses the old check statement by statement
/// (see [`crate::check::CheckMemo`]): `old` and `memo` are the parse and
/// the check memo of `old_source`, made by [`crate::analyze_remembering`]
/// or by this function. Always equal to `analyze(new_source)` (the memo
/// aside).
pub fn reanalyze_remembering(
    old: &Parsed,
    memo: &crate::check::CheckMemo,
    old_source: &str,
    new_source: &str,
) -> (crate::Analysis, Reparse, crate::check::Reuse) {
    let (parsed, how) = reparse(old, old_source, new_source);
    let previous = crate::check::Previous {
        memo,
        source: old_source,
        window: how.window(),
    };
    let (checked, reuse) = crate::check::check_incremental(&parsed, new_source, Some(previous));
    (crate::Analysis { parsed, checked }, how, reuse)
}

/// [`reanalyze_remembering`] that takes the old analysis (made by
/// [`crate::analyze_remembering`] or by this function), as the language
/// server does on each keystroke: the parse is re-parsed in place
/// ([`reparse_owned`]) and, after an incremental re-parse, the names are
/// resolved again only where the edit reaches
/// ([`crate::check::check_after_reparse`]). Always equal to
/// `analyze(new_source)` (the memo aside).
pub fn reanalyze_consuming(
    old: crate::Analysis,
    old_source: &str,
    new_source: &str,
) -> (crate::Analysis, Reparse, crate::check::Reuse) {
    let crate::Analysis { parsed, checked } = old;
    let crate::check::Checked {
        resolved,
        memo,
        lines,
        diagnostics,
        ..
    } = checked;
    let (parsed, how, _) = reparse_owned(parsed, old_source, new_source);
    let old = crate::check::OldCheck {
        memo: &memo,
        source: old_source,
        names: resolved,
        lines,
        diagnostics,
    };
    let (checked, reuse, _) = crate::check::check_after_reparse(&parsed, new_source, &how, old);
    (crate::Analysis { parsed, checked }, how, reuse)
}

/// The byte range that differs between two texts: `(start, old_end, new_end)`,
/// from their common prefix and suffix (on char boundaries).
pub fn changed_range(old: &str, new: &str) -> (usize, usize, usize) {
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let mut prefix = common_prefix(ob, nb);
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = ob.len().min(nb.len()) - prefix;
    let mut suffix = common_suffix(&ob[ob.len() - max_suffix..], &nb[nb.len() - max_suffix..]);
    while !old.is_char_boundary(ob.len() - suffix) || !new.is_char_boundary(nb.len() - suffix) {
        suffix -= 1;
    }
    (prefix, ob.len() - suffix, nb.len() - suffix)
}

/// What [`plan`] decided: where the new parse of the edited window goes
/// in the old parse, and that new parse.
struct Splice {
    edit: Edit,
    /// The first old statement and token parsed again, and its offset.
    first: usize,
    first_token: usize,
    from: usize,
    resume: Resume,
    /// The old diagnostics before the window, and from its end on.
    prefix_diags: usize,
    suffix_diags: usize,
    sub: crate::parser::Resumed,
}

/// Plans the incremental re-parse of `old` (see the module doc), or
/// `None` where only a full parse is sure to be right.
fn plan(old: &Parsed, old_source: &str, new_source: &str) -> Option<Splice> {
    let stmts = &old.program.stmts;
    // A parse without tokens (`parse_tree`) cannot be spliced; a capped
    // parse (its final `I0001` counts diagnostics it did not keep) cannot
    // say where the dropped ones lie.
    if stmts.is_empty()
        || old.tokens.is_empty()
        || old.diagnostics.iter().any(|d| d.code == CAPPED_CODE)
    {
        return None;
    }
    let edit = Edit::between(old_source, new_source);
    let old_at = OldParse { parsed: old };

    // The window starts at the first statement the edit may change: the
    // first one touched, or earlier while the statement before it read
    // the edited text (see `OldParse::prefix_unchanged_before`).
    let mut first = stmts.partition_point(|s| s.span.end() < edit.start);
    while first > 0 && !old_at.prefix_unchanged_before(first, old_source, edit.start) {
        first -= 1;
    }
    let (from, first_token, previous) = if first == 0 {
        (0, 0, None)
    } else {
        let b = stmts[first].span.start();
        let j = old_at.token_at(b)?;
        (b, j, Some(old.tokens[j - 1]))
    };

    // Parse from there until a statement boundary after the edit where the
    // old parse can take over, shifted (see `Edit::resumes_at`).
    let mut resume: Option<Resume> = None;
    let sub = parse_resumed(new_source, from, previous, &mut |prev, next| {
        resume = edit.resumes_at(&old_at, prev, next);
        resume.is_some()
    });
    let resume = resume.unwrap_or(Resume {
        stmt: stmts.len(),
        token: old.tokens.len(),
        offset: usize::MAX,
    });

    if first == 0 && sub.stmts.is_empty() && resume.stmt == stmts.len() {
        return None; // an empty file: the full parse reports it (E0109)
    }

    let prefix_diags = old.diagnostics.partition_point(|d| d.span.start() < from);
    let suffix_diags = old
        .diagnostics
        .partition_point(|d| d.span.start() < resume.offset);
    let mut reused_diags = old.diagnostics[..prefix_diags]
        .iter()
        .chain(&old.diagnostics[suffix_diags..]);
    // Past the cap the full parse would have dropped some: let it decide.
    let total = prefix_diags + sub.diagnostics.len() + (old.diagnostics.len() - suffix_diags);
    if total >= MAX_DIAGNOSTICS
        || sub.diagnostics.iter().any(|d| d.code == CAPPED_CODE)
        || reused_diags.any(|d| {
            d.code == LEGACY_MAP_CODE
                && edit.may_change_wrapper_definition(d, old_source, new_source)
        })
    {
        return None;
    }
    Some(Splice {
        edit,
        first,
        first_token,
        from,
        resume,
        prefix_diags,
        suffix_diags,
        sub,
    })
}

/// The new parse: `old` with the window replaced by its new parse and
/// everything after it moved by the edit's length change. Moves and shifts
/// in place what `old` alone holds (a statement shared with another parse
/// is copied first), so an owned old parse costs neither a copy of the
/// rest of the file nor freeing the old one.
fn assemble(old: Parsed, splice: Splice, new_source: &str) -> (Parsed, Reparse) {
    let Splice {
        edit,
        first,
        first_token,
        from,
        resume,
        prefix_diags,
        suffix_diags,
        sub,
    } = splice;
    let Parsed {
        program,
        mut diagnostics,
        mut tokens,
        mut comments,
    } = old;
    let reused_stmts = first + (program.stmts.len() - resume.stmt);
    let reparsed_stmts = sub.stmts.len();

    // Diagnostics: the prefix stays (its spans past the edit move), the
    // window's are the new parse's, the suffix moves. (Spliced in place:
    // the suffix is moved once, not copied out and back.)
    let suffix_start = prefix_diags + sub.diagnostics.len();
    diagnostics.splice(prefix_diags..suffix_diags, sub.diagnostics);

    // Statements after the window move by the edit's length (in place
    // where this parse alone holds them).
    let mut stmts = program.stmts;
    let resumed_at = first + sub.stmts.len();
    stmts.splice(first..resume.stmt, sub.stmts);
    if edit.delta != 0 {
        for s in &mut stmts[resumed_at..] {
            shift_stmt(Arc::make_mut(s), edit.delta);
        }
    }

    splice_tokens(
        &mut tokens,
        first_token,
        resume.token,
        sub.tokens,
        edit.delta,
    );
    let comments_before = comments.partition_point(|c| c.span.start() < from);
    let comments_after = comments.partition_point(|c| c.span.start() < resume.offset);
    splice_tokens(
        &mut comments,
        comments_before,
        comments_after,
        sub.comments,
        edit.delta,
    );

    // The reused diagnostics move; a keyword-as-name diagnostic's fix
    // renames the word in the whole file: ask the new tokens again.
    let (prefix, rest) = diagnostics.split_at_mut(prefix_diags);
    let suffix = &mut rest[suffix_start - prefix_diags..];
    for d in prefix.iter_mut().chain(suffix.iter_mut()) {
        shift_diagnostic(d, edit.old_end, edit.delta);
        if d.code == KEYWORD_AS_NAME_CODE && !d.fixes.is_empty() {
            rename_everywhere(d, &tokens, new_source);
        }
    }

    let stats = Reparse::Incremental {
        reparsed_stmts,
        reused_stmts,
        reparsed_bytes: sub.end - from,
        window: Window {
            first,
            from,
            old_end_stmt: resume.stmt,
            old_end_offset: resume.offset,
            new_end_stmt: first + reparsed_stmts,
            delta: edit.delta,
            changed: (edit.start, edit.old_end, edit.new_end),
        },
    };
    let parsed = Parsed {
        program: Program { stmts },
        diagnostics,
        tokens,
        comments,
    };
    (parsed, stats)
}

/// Replaces `tokens[from..to]` by `window`, moving the tokens after it by
/// `delta`.
fn splice_tokens(
    tokens: &mut Vec<Token>,
    from: usize,
    to: usize,
    window: Vec<Token>,
    delta: isize,
) {
    if delta != 0 {
        tokens[to..]
            .iter_mut()
            .for_each(|t| shift_span(&mut t.span, delta));
    }
    tokens.splice(from..to, window);
}

/// The diagnostic code of a keyword used as a name (its fix renames every
/// occurrence in the file) and of a legacy three-field task map (its fix
/// adds a wrapper function unless the file already defines one).
const KEYWORD_AS_NAME_CODE: &str = "E0104";
const LEGACY_MAP_CODE: &str = "E0107";

/// Re-derives the parser's keyword-as-name fix from the new tokens.
fn rename_everywhere(d: &mut crate::Diagnostic, tokens: &[Token], source: &str) {
    let word = d.span.text(source);
    d.fixes[0].edits = keyword_rename_edits(tokens.iter().copied(), source, word)
        .into_iter()
        .map(|(span, text)| crate::diagnostic::TextEdit { span, text })
        .collect();
}

/// Compared a block at a time (the slices' `==` is a `memcmp`), then a
/// byte at a time: a keystroke compares the whole text twice, and a byte
/// loop over 200 KB was 2 % of its analysis.
const BLOCK: usize = 64;

/// The length of the longest common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

/// The length of the longest common suffix of `a` and `b`.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + BLOCK <= n && a[n - i - BLOCK..n - i] == b[n - i - BLOCK..n - i] {
        i += BLOCK;
    }
    i + a[..n - i]
        .iter()
        .rev()
        .zip(b[..n - i].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

fn shifted_token(t: &Token, delta: isize) -> Token {
    let mut t = *t;
    shift_span(&mut t.span, delta);
    t
}

/// The bytes that differ between the old and the new text.
struct Edit {
    /// First differing byte (the same offset in both texts).
    start: usize,
    /// End of the changed bytes in the old text and in the new one.
    old_end: usize,
    new_end: usize,
    /// `new_end - old_end`: how far everything after the edit moved.
    delta: isize,
    /// The first line break at or after `new_end` in the new text.
    first_break_after: Option<usize>,
}

/// Where the old parse takes over: its statement and token indices, and
/// the old offset where that statement begins.
#[derive(Clone, Copy)]
struct Resume {
    stmt: usize,
    token: usize,
    offset: usize,
}

impl Edit {
    fn between(old: &str, new: &str) -> Edit {
        let (start, old_end, new_end) = changed_range(old, new);
        Edit {
            start,
            old_end,
            new_end,
            delta: new_end as isize - old_end as isize,
            first_break_after: new[new_end..].find(['\n', '\r']).map(|i| new_end + i),
        }
    }

    /// Whether the old parse can take over at `next` (the token of the new
    /// text where the re-parse's next statement begins; `prev` is the
    /// token before it): the statements from there on then parse as they
    /// did, shifted. That holds when
    /// - an old statement began at the same text, after the edit;
    /// - the token before it is the same token, and a line break after the
    ///   edit comes before that token: all a statement's parse reads before
    ///   its first token is the token before it (`prev_end`,
    ///   `on_new_line`) and its line's start and indentation (a
    ///   Python-style `def`), all unchanged text then;
    /// - no old diagnostic begins exactly there (it could have come from
    ///   the statement before, which is parsed again, or from this one: the
    ///   split would be ambiguous).
    ///
    /// Everything after that boundary is unchanged text, lexed from the
    /// same token start, so its tokens are the old ones, shifted.
    fn resumes_at(&self, old: &OldParse, prev: &Token, next: &Token) -> Option<Resume> {
        let line_break = self.first_break_after?;
        if next.span.start() < self.new_end || line_break >= prev.span.start() {
            return None;
        }
        let offset = next.span.start().checked_add_signed(-self.delta)?;
        let stmt = old
            .parsed
            .program
            .stmts
            .binary_search_by_key(&offset, |s| s.span.start())
            .ok()?;
        let token = old.token_at(offset)?;
        let before = old.parsed.tokens.get(token.checked_sub(1)?)?;
        let same_before =
            before.kind == prev.kind && shifted_token(before, self.delta).span == prev.span;
        (same_before && !old.diagnostic_at(offset)).then_some(Resume {
            stmt,
            token,
            offset,
        })
    }

    /// Whether the edit may add or remove the `def WRAPPER(` whose presence
    /// decides a legacy-map diagnostic's fix (`Parser` looks for it in the
    /// whole file): only an occurrence that overlaps the changed bytes can
    /// appear or disappear.
    fn may_change_wrapper_definition(&self, d: &crate::Diagnostic, old: &str, new: &str) -> bool {
        let Some(first) = d.fixes.first().and_then(|f| f.edits.first()) else {
            return false;
        };
        let wrapper = first.text.rsplit(' ').next().unwrap_or_default();
        let pattern = format!("def {wrapper}(");
        let near = |text: &str, end: usize| {
            let lo = self.start.saturating_sub(pattern.len());
            let hi = (end + pattern.len()).min(text.len());
            text.as_bytes()[lo..hi]
                .windows(pattern.len())
                .any(|w| w == pattern.as_bytes())
        };
        near(old, self.old_end) || near(new, self.new_end)
    }
}

/// Questions about the old parse, answered by binary search (its tokens,
/// statements and diagnostics are in source order).
struct OldParse<'a> {
    parsed: &'a Parsed,
}

impl OldParse<'_> {
    /// The index of the token that begins at `offset`.
    fn token_at(&self, offset: usize) -> Option<usize> {
        self.parsed
            .tokens
            .binary_search_by_key(&offset, |t| t.span.start())
            .ok()
    }

    /// Whether some diagnostic's primary span begins at `offset`.
    fn diagnostic_at(&self, offset: usize) -> bool {
        let d = &self.parsed.diagnostics;
        d.get(d.partition_point(|d| d.span.start() < offset))
            .is_some_and(|d| d.span.start() == offset)
    }

    /// Whether the statements before statement `first` parse as they did,
    /// whatever follows `edit_start`. Parsing a statement reads at most the
    /// two tokens after it (recovery peeks at the next token and the one
    /// after, to tell `name =` from an expression), and lexing a token
    /// reads at most up to the next blank (no token but strings and
    /// comments holds a blank, and those end at a quote or a line break).
    /// So the second token of statement `first` must end before the edit,
    /// with a blank in between. And no old diagnostic may begin exactly
    /// where statement `first` begins (which statement it came from would
    /// be ambiguous).
    fn prefix_unchanged_before(&self, first: usize, source: &str, edit_start: usize) -> bool {
        // After the last statement, the last one read the end of the file.
        let Some(b) = self.parsed.program.stmts.get(first).map(|s| s.span.start()) else {
            return false;
        };
        let Some(j) = self.token_at(b) else {
            return false;
        };
        let Some(second) = self.parsed.tokens.get(j + 1) else {
            return false;
        };
        second.span.end() < edit_start
            && source.as_bytes()[second.span.end()..edit_start]
                .iter()
                .any(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x07))
            && !self.diagnostic_at(b)
    }
}

fn shift_offset(offset: usize, delta: isize) -> usize {
    offset.saturating_add_signed(delta)
}

pub(crate) fn shift_span(span: &mut Span, delta: isize) {
    *span = Span::new(
        shift_offset(span.start(), delta),
        shift_offset(span.end(), delta),
    );
}

/// Moves each span of `d` that lies at or after `from` by `delta`.
pub(crate) fn shift_diagnostic(d: &mut crate::Diagnostic, from: usize, delta: isize) {
    let shift = |s: &mut Span| {
        if s.start() >= from {
            shift_span(s, delta);
        }
    };
    shift(&mut d.span);
    d.related.iter_mut().for_each(|r| shift(&mut r.span));
    d.fixes
        .iter_mut()
        .flat_map(|f| f.edits.iter_mut())
        .for_each(|e| shift(&mut e.span));
}

/// Moves every span in a statement (nested bodies included) by `delta`.
pub fn shift_stmt(stmt: &mut Stmt, delta: isize) {
    shift_span(&mut stmt.span, delta);
    let d = delta;
    match &mut stmt.kind {
        StmtKind::Task { tasks, procs } => {
            shift_task_sel(tasks, d);
            procs.iter_mut().for_each(|(_, s)| shift_span(s, d));
        }
        StmtKind::Region {
            task,
            region,
            proc,
            mems,
        } => {
            shift_task_sel(task, d);
            shift_region_sel(region, d);
            match proc {
                ProcSel::Star(s) | ProcSel::Kind(_, s) => shift_span(s, d),
            }
            mems.iter_mut().for_each(|(_, s)| shift_span(s, d));
        }
        StmtKind::Layout {
            task,
            region,
            mem,
            constraints,
        } => {
            shift_task_sel(task, d);
            shift_region_sel(region, d);
            match mem {
                MemSel::Star(s) | MemSel::Kind(_, s) => shift_span(s, d),
            }
            for c in constraints {
                match c {
                    Constraint::Soa(s)
                    | Constraint::Aos(s)
                    | Constraint::COrder(s)
                    | Constraint::FOrder(s)
                    | Constraint::Compact(s)
                    | Constraint::Exact(s)
                    | Constraint::Align { span: s, .. } => shift_span(s, d),
                }
            }
        }
        StmtKind::InstanceLimit {
            task, limit_span, ..
        } => {
            shift_span(&mut task.span, d);
            shift_span(limit_span, d);
        }
        StmtKind::CollectMemory { task, region } => {
            shift_task_sel(task, d);
            shift_region_sel(region, d);
        }
        StmtKind::IndexTaskMap { tasks, func } | StmtKind::SingleTaskMap { tasks, func } => {
            shift_task_sel(tasks, d);
            shift_span(&mut func.span, d);
        }
        StmtKind::ControlReplicate { tasks } => {
            tasks.iter_mut().for_each(|t| shift_span(&mut t.span, d));
        }
        StmtKind::Assign { name, value } => {
            shift_span(&mut name.span, d);
            shift_expr(value, d);
        }
        StmtKind::Print {
            format_span, args, ..
        } => {
            shift_span(format_span, d);
            args.iter_mut().for_each(|a| shift_expr(a, d));
        }
        StmtKind::FuncDef {
            name,
            params,
            body,
            body_span,
        } => {
            shift_span(&mut name.span, d);
            for p in params {
                shift_span(&mut p.ty_span, d);
                shift_span(&mut p.name.span, d);
            }
            body.iter_mut().for_each(|s| shift_stmt(s, d));
            shift_span(body_span, d);
        }
        StmtKind::Return { value } => shift_expr(value, d),
        StmtKind::Error => {}
    }
}

fn shift_task_sel(sel: &mut TaskSel, d: isize) {
    match sel {
        TaskSel::Star(s) | TaskSel::Kind(_, s) => shift_span(s, d),
        TaskSel::Names(names) => names.iter_mut().for_each(|n| shift_span(&mut n.span, d)),
    }
}

fn shift_region_sel(sel: &mut RegionSel, d: isize) {
    match sel {
        RegionSel::Star(s) | RegionSel::Index(_, s) => shift_span(s, d),
        RegionSel::Name(n) => shift_span(&mut n.span, d),
    }
}

/// Recursive: the parser bounds every tree's depth (`MAX_NESTING`).
fn shift_expr(e: &mut Expr, d: isize) {
    shift_span(&mut e.span, d);
    match &mut e.kind {
        ExprKind::Int(_)
        | ExprKind::Bool(_)
        | ExprKind::Name(_)
        | ExprKind::Proc(_)
        | ExprKind::Mem(_)
        | ExprKind::Star => {}
        ExprKind::Unpack(x) | ExprKind::Neg(x) | ExprKind::Paren(x) => shift_expr(x, d),
        ExprKind::Binary {
            op_span, lhs, rhs, ..
        } => {
            shift_span(op_span, d);
            shift_expr(lhs, d);
            shift_expr(rhs, d);
        }
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
            colon_span,
        } => {
            shift_expr(cond, d);
            shift_expr(then, d);
            shift_expr(otherwise, d);
            shift_span(colon_span, d);
        }
        ExprKind::Tuple(items) => items.iter_mut().for_each(|x| shift_expr(x, d)),
        ExprKind::Call { callee, args } => {
            shift_expr(callee, d);
            args.iter_mut().for_each(|x| shift_expr(x, d));
        }
        ExprKind::Index { base, indices } => {
            shift_expr(base, d);
            indices.iter_mut().for_each(|x| shift_expr(x, d));
        }
        ExprKind::Slice {
            base,
            lo,
            hi,
            colon_span,
        } => {
            shift_expr(base, d);
            if let Some(lo) = lo {
                shift_expr(lo, d);
            }
            if let Some(hi) = hi {
                shift_expr(hi, d);
            }
            shift_span(colon_span, d);
        }
        ExprKind::Prop {
            base, prop_span, ..
        } => {
            shift_expr(base, d);
            shift_span(prop_span, d);
        }
        ExprKind::Comprehension { body, var, iter } => {
            shift_expr(body, d);
            shift_span(&mut var.span, d);
            shift_expr(iter, d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "Task * GPU;\nm = Machine(GPU);\ndef f(Task t) {\n  return m[0, 0];\n}\nIndexTaskMap foo f;\nRegion * r GPU FBMEM;\n";

    fn assert_same_parse(parsed: &Parsed, source: &str) {
        let full = parse(source);
        assert_eq!(parsed.program, full.program);
        assert_eq!(parsed.tokens, full.tokens);
        assert_eq!(parsed.comments, full.comments);
        assert_eq!(parsed.diagnostics, full.diagnostics);
    }

    #[test]
    fn reused_statements_are_shared_not_copied() {
        // Why `Program.stmts` holds `Arc`s: a keystroke must not copy the
        // statements it did not move.
        let old = parse(SRC);
        let shared = |new: &Parsed, new_i: usize, old_i: usize| {
            Arc::ptr_eq(&new.program.stmts[new_i], &old.program.stmts[old_i])
        };
        // Longer text: those before the edit are shared, those after moved.
        let longer = SRC.replace("return m[0, 0]", "return m[1, 0] + 0");
        let (parsed, _) = reparse(&old, SRC, &longer);
        assert_same_parse(&parsed, &longer);
        assert!(shared(&parsed, 0, 0) && shared(&parsed, 1, 1));
        assert!(!shared(&parsed, 3, 3) && !shared(&parsed, 4, 4));
        // Same length: those after the edit are shared too.
        let same = SRC.replace("return m[0, 0]", "return m[1, 0]");
        let (parsed, _) = reparse(&old, SRC, &same);
        assert_same_parse(&parsed, &same);
        assert!(shared(&parsed, 0, 0) && shared(&parsed, 3, 3) && shared(&parsed, 4, 4));
        assert!(!shared(&parsed, 2, 2));
    }

    #[test]
    fn an_edit_inside_one_statement_reparses_only_its_window() {
        let old = parse(SRC);
        let new_src = SRC.replace("return m[0, 0]", "return m[1, 0] + 0");
        let (parsed, how) = reparse(&old, SRC, &new_src);
        assert!(
            matches!(
                how,
                Reparse::Incremental {
                    reparsed_stmts: 1,
                    reused_stmts: 4,
                    ..
                }
            ),
            "{how:?}"
        );
        assert_same_parse(&parsed, &new_src);
    }

    #[test]
    fn an_unclosed_brace_reparses_what_it_swallows() {
        let old = parse(SRC);
        let new_src = SRC.replace("return m[0, 0];\n}", "return m[0, 0];\n");
        let (parsed, how) = reparse(&old, SRC, &new_src);
        // The body now runs to the end of the file: nothing after it is
        // reused, the two statements before it are.
        assert!(
            matches!(
                how,
                Reparse::Incremental {
                    reparsed_stmts: 1,
                    reused_stmts: 2,
                    ..
                }
            ),
            "{how:?}"
        );
        assert_same_parse(&parsed, &new_src);
    }

    #[test]
    fn statements_after_a_syntax_error_are_reused() {
        let src = "Task * GPU;\nRegion * r GPU FBMEM\nm = Machine(GPU);\nx = (1 + ;\nTask a CPU;\nTask b CPU;\nTask c CPU;\n";
        let old = parse(src);
        assert!(!old.diagnostics.is_empty());
        let new_src = src.replace("x = (1 + ;", "x = (1 + 2;");
        let (parsed, how) = reparse(&old, src, &new_src);
        assert!(
            matches!(how, Reparse::Incremental { reused_stmts, .. } if reused_stmts >= 4),
            "{how:?}"
        );
        assert_same_parse(&parsed, &new_src);
    }

    /// A Python-style `def` reads its line's indentation, which lies before
    /// its first token: an edit there must re-parse it even though the
    /// token before it is unchanged.
    #[test]
    fn an_edit_of_a_def_lines_indentation_reparses_the_def() {
        let src = "Task * GPU;\n  x = 1; def h(Task t):\n  return 1\nTask * CPU;\nTask a CPU;\n";
        let old = parse(src);
        let new_src = src.replace("\n  x = 1;", "\nx = 1;");
        let (parsed, _) = reparse(&old, src, &new_src);
        assert_same_parse(&parsed, &new_src);
    }

    /// A keyword used as a name has a fix that renames it everywhere: an
    /// edit elsewhere that adds an occurrence changes a reused statement's
    /// fix.
    #[test]
    fn a_reused_rename_fix_sees_the_whole_new_file() {
        let src =
            "size = 3;\nTask * GPU;\nm = Machine(GPU);\nTask a CPU;\nTask b CPU;\nTask c CPU;\n";
        let old = parse(src);
        assert!(old
            .diagnostics
            .iter()
            .any(|d| d.code == "E0104" && !d.fixes.is_empty()));
        let new_src = src.replace("Task b CPU;", "Task b CPU; y = size;");
        let (parsed, how) = reparse(&old, src, &new_src);
        assert!(matches!(how, Reparse::Incremental { .. }), "{how:?}");
        assert_same_parse(&parsed, &new_src);
    }

    /// A legacy three-field task map's fix adds the wrapper function only
    /// if the file does not define it yet, anywhere.
    #[test]
    fn a_reused_legacy_map_fix_sees_a_new_wrapper() {
        let src = "IndexTaskMap t m g;\nTask * GPU;\nTask a CPU;\nTask b CPU;\nTask c CPU;\n";
        let old = parse(src);
        assert!(old.diagnostics.iter().any(|d| d.code == "E0107"));
        let new_src = src.replace("Task c CPU;", "Task c CPU;\ndef g_m(Task t) { return 1; }");
        let (parsed, _) = reparse(&old, src, &new_src);
        assert_same_parse(&parsed, &new_src);
    }

    #[test]
    fn block_comparisons_agree_with_byte_loops() {
        let naive_prefix = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let naive_suffix = |a: &[u8], b: &[u8]| {
            a.iter()
                .rev()
                .zip(b.iter().rev())
                .take_while(|(x, y)| x == y)
                .count()
        };
        let base: Vec<u8> = (0..300u32).map(|i| (i * 7 % 251) as u8).collect();
        for len in [0, 1, 63, 64, 65, 128, 200, 300] {
            for at in [0, 1, 62, 63, 64, 65, 127, 128, 199, 250, 299] {
                let a = &base[..len];
                let mut b = a.to_vec();
                if at < len {
                    b[at] ^= 0xff;
                }
                for b in [
                    b.clone(),
                    b[..len.saturating_sub(3)].to_vec(),
                    [b.as_slice(), b"xyz"].concat(),
                ] {
                    assert_eq!(common_prefix(a, &b), naive_prefix(a, &b), "{len} {at}");
                    assert_eq!(common_suffix(a, &b), naive_suffix(a, &b), "{len} {at}");
                }
            }
        }
    }

    #[test]
    fn changed_range_stays_on_char_boundaries() {
        assert_eq!(changed_range("aé", "aè"), (1, 3, 3));
        assert_eq!(changed_range("abc", "abc"), (3, 3, 3));
        assert_eq!(changed_range("aa", "aaa"), (2, 2, 3));
    }
}
