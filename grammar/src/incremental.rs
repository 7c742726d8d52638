//! Incremental re-parsing: after an edit, re-parse only the top-level
//! statements the edit can affect and reuse the rest, shifted.
//!
//! Top-level statements are independent parse units (the parser's statement
//! loop carries no state from one statement to the next; see
//! `Parser::program`), the way rust-analyzer's item tree treats items. So the
//! parse of an edited file is the old parse with the edited statements
//! replaced by a parse of their new text, and every later span moved by the
//! length change.
//!
//! The window re-parsed is the statements the edit touches plus one
//! untouched neighbour on each side (so an edit at a boundary, or one that
//! merges two statements, is inside the window). The result is only used
//! when it is certainly what a full parse gives; otherwise [`reparse`] parses
//! the whole file. It falls back when:
//! - the window's new text has any lexical or syntax diagnostic, or the old
//!   parse had one near the window (error recovery decides statement
//!   boundaries, and with them what the window would be);
//! - the new window does not start and end on a statement boundary of its own
//!   parse (the edit changed nesting: an unclosed `{`, a removed `;`);
//! - the window's text ends inside a comment (a `#` comment would have
//!   continued past it in the full text);
//! - the file has no statements, or the window would be the whole file.
//!
//! The equivalence with a full parse (tree with spans, tokens, comments,
//! diagnostics) is a property test (`tests/incremental_equivalence.rs` in the
//! `mapwright-grammar` crate) over random edit sequences on corpus files.

use crate::ast::*;
use crate::parser::{parse, Parsed};
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
    },
    /// The whole file was parsed (see the module doc for when).
    Full,
}

/// The parse of `new_source`, reusing `old` (the parse of `old_source`)
/// where the edit between the two texts cannot have changed it. Always equal
/// to `parse(new_source)`.
pub fn reparse(old: &Parsed, old_source: &str, new_source: &str) -> (Parsed, Reparse) {
    match try_reparse(old, old_source, new_source) {
        Some(result) => result,
        None => (parse(new_source), Reparse::Full),
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
    };
    let (checked, reuse) = crate::check::check_incremental(&parsed, new_source, Some(previous));
    (crate::Analysis { parsed, checked }, how, reuse)
}

/// The byte range that differs between two texts: `(start, old_end, new_end)`,
/// from their common prefix and suffix (on char boundaries).
pub fn changed_range(old: &str, new: &str) -> (usize, usize, usize) {
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let mut prefix = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = ob.len().min(nb.len()) - prefix;
    let mut suffix = ob
        .iter()
        .rev()
        .zip(nb.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(ob.len() - suffix) || !new.is_char_boundary(nb.len() - suffix) {
        suffix -= 1;
    }
    (prefix, ob.len() - suffix, nb.len() - suffix)
}

fn try_reparse(old: &Parsed, old_source: &str, new_source: &str) -> Option<(Parsed, Reparse)> {
    let stmts = &old.program.stmts;
    if stmts.is_empty() {
        return None;
    }
    let (start, old_end, new_end) = changed_range(old_source, new_source);
    // Statements the edit touches (an edit touching a statement's first or
    // last byte counts), widened by one untouched neighbour on each side;
    // at either end of the file the window runs to the file's edge.
    let first_touched = stmts.partition_point(|s| s.span.end() < start);
    let after_touched = stmts.partition_point(|s| s.span.start() <= old_end);
    let first = first_touched.checked_sub(1);
    let last = (after_touched < stmts.len()).then_some(after_touched);
    if first.is_none() && last.is_none() {
        return None; // the window would be the whole file
    }
    let window = Span::new(
        first.map_or(0, |i| stmts[i].span.start()),
        last.map_or(old_source.len(), |i| stmts[i].span.end()),
    );
    // Error recovery shapes statement boundaries: no old diagnostic may lie
    // in or next to the window (the statements on either side included).
    let guard = Span::new(
        first
            .and_then(|i| i.checked_sub(1))
            .map_or(0, |i| stmts[i].span.start()),
        last.and_then(|i| stmts.get(i + 1))
            .map_or(old_source.len(), |s| s.span.end()),
    );
    // A capped parse (its final `I0001` counts diagnostics it did not keep)
    // cannot say where the dropped ones lie, so it is always re-parsed whole.
    if old.diagnostics.iter().any(|d| {
        d.code == crate::diagnostic::CAPPED_CODE
            || (d.span.start() <= guard.end() && d.span.end() >= guard.start())
    }) {
        return None;
    }
    let delta = new_end as isize - old_end as isize;
    let new_window = Span::new(window.start(), shift_offset(window.end(), delta));
    let text = new_source.get(new_window.start()..new_window.end())?;
    let sub = parse(text);
    // The window must be whole statements of its own parse, so that the
    // statements before and after it parse as they did; its last token must
    // not be a comment the full text would continue.
    let starts_on_statement =
        first.is_none() || sub.program.stmts.first().map(|s| s.span.start()) == Some(0);
    let ends_on_statement = last.is_none()
        || (sub.program.stmts.last().map(|s| s.span.end()) == Some(text.len())
            && sub
                .comments
                .last()
                .is_none_or(|c| c.span.end() < text.len()));
    if !sub.diagnostics.is_empty()
        || sub.program.stmts.is_empty()
        || !starts_on_statement
        || !ends_on_statement
    {
        return None;
    }
    Some(splice(old, sub, window, new_window.start(), delta))
}

/// The old parse with `window` replaced by `sub` (parsed from the window's
/// new text, which begins at `offset`) and everything after moved by `delta`.
fn splice(
    old: &Parsed,
    sub: Parsed,
    window: Span,
    offset: usize,
    delta: isize,
) -> (Parsed, Reparse) {
    let before = |s: &Span| s.end() <= window.start();
    let after = |s: &Span| s.start() >= window.end();
    let stats = Reparse::Incremental {
        reparsed_stmts: sub.program.stmts.len(),
        reused_stmts: old
            .program
            .stmts
            .iter()
            .filter(|s| before(&s.span) || after(&s.span))
            .count(),
        reparsed_bytes: window.len().saturating_add_signed(delta),
    };
    let mut stmts = Vec::with_capacity(old.program.stmts.len() + sub.program.stmts.len());
    stmts.extend(
        old.program
            .stmts
            .iter()
            .filter(|s| before(&s.span))
            .cloned(),
    );
    stmts.extend(sub.program.stmts.into_iter().map(|mut s| {
        shift_stmt(&mut s, offset as isize);
        s
    }));
    stmts.extend(
        old.program
            .stmts
            .iter()
            .filter(|s| after(&s.span))
            .map(|s| {
                let mut s = s.clone();
                shift_stmt(&mut s, delta);
                s
            }),
    );
    let splice_tokens = |old_tokens: &[Token], new_tokens: Vec<Token>| {
        let mut out: Vec<Token> = old_tokens
            .iter()
            .filter(|t| before(&t.span))
            .copied()
            .collect();
        out.extend(new_tokens.into_iter().map(|mut t| {
            shift_span(&mut t.span, offset as isize);
            t
        }));
        out.extend(old_tokens.iter().filter(|t| after(&t.span)).map(|t| {
            let mut t = *t;
            shift_span(&mut t.span, delta);
            t
        }));
        out
    };
    // No diagnostic lies in the window (checked above): the old ones move.
    let diagnostics = old
        .diagnostics
        .iter()
        .map(|d| {
            let mut d = d.clone();
            shift_diagnostic(&mut d, window.end(), delta);
            d
        })
        .collect();
    let parsed = Parsed {
        program: Program { stmts },
        diagnostics,
        tokens: splice_tokens(&old.tokens, sub.tokens),
        comments: splice_tokens(&old.comments, sub.comments),
    };
    (parsed, stats)
}

fn shift_offset(offset: usize, delta: isize) -> usize {
    offset.saturating_add_signed(delta)
}

fn shift_span(span: &mut Span, delta: isize) {
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

    #[test]
    fn an_edit_inside_one_statement_reparses_only_its_window() {
        let old = parse(SRC);
        let new_src = SRC.replace("return m[0, 0]", "return m[1, 0] + 0");
        let (parsed, how) = reparse(&old, SRC, &new_src);
        assert!(
            matches!(
                how,
                Reparse::Incremental {
                    reused_stmts: 2,
                    ..
                }
            ),
            "{how:?}"
        );
        let full = parse(&new_src);
        assert_eq!(parsed.program, full.program);
        assert_eq!(parsed.tokens, full.tokens);
    }

    #[test]
    fn an_unclosed_brace_falls_back_to_a_full_parse() {
        let old = parse(SRC);
        let new_src = SRC.replace("return m[0, 0];\n}", "return m[0, 0];\n");
        let (parsed, how) = reparse(&old, SRC, &new_src);
        assert_eq!(how, Reparse::Full);
        assert_eq!(parsed.program, parse(&new_src).program);
    }

    #[test]
    fn changed_range_stays_on_char_boundaries() {
        assert_eq!(changed_range("aé", "aè"), (1, 3, 3));
        assert_eq!(changed_range("abc", "abc"), (3, 3, 3));
        assert_eq!(changed_range("aa", "aaa"), (2, 2, 3));
    }
}
