//! Name resolution after an edit: the last resolution with only the
//! statements the re-parse replaced ([`Window`]) resolved again.
//!
//! What resolving a statement gives (its references, its undefined names,
//! the parameters, locals and comprehension variables it makes) depends on
//! its own tree and on the global table: which globals exist, in what
//! order they were first defined (their symbol numbers) and in which
//! statement. When the window defines the same globals in the same order
//! as before, that table is the same up to the definitions' spans, so:
//! - the statements before the window keep their results unchanged;
//! - the window's statements are resolved again with the usual code;
//! - the statements after it keep theirs, moved by the edit's length, with
//!   the numbers of their own symbols moved by the count the window's
//!   symbols changed by, and their function index by the count its
//!   statements changed by. A reference there to a global keeps whether
//!   it comes before the definition, since the window moved nothing past
//!   another definition.
//!
//! Otherwise (a definition typed, renamed or removed) the whole file is
//! resolved again. Every reference, undefined name and symbol lies inside
//! the top-level statement that makes it, and each list is in statement
//! order, so the three parts of each list are found by binary search on
//! offsets. The result equals [`resolve`] of the new program: the
//! incremental property tests compare them after random edits.

use super::{resolve, Resolved, Resolver, Scope, SymbolKind};
use crate::ast::{Program, StmtKind};
use crate::incremental::{shift_span, Window};
use crate::Span;

/// The resolution of `program` (the new parse), reusing `old` (the
/// resolution of the parse the edit started from) outside the `window`
/// the re-parse replaced, and whether it could (false: the window's
/// global definitions changed, and the whole program was resolved).
/// Always equal to `resolve(program)`.
pub fn resolve_after_edit(old: Resolved, program: &Program, window: &Window) -> (Resolved, bool) {
    match same_globals(&old, program, window) {
        Some(defs) => (splice(old, program, window, &defs), true),
        None => (resolve(program), false),
    }
}

/// A global definition inside the window: the symbol it defines, which
/// of the symbol's definitions it is, and its span in the new text.
struct WindowDefinition {
    symbol: usize,
    nth: usize,
    span: Span,
}

/// How many symbols are globals: pass one of [`resolve`] makes them, all
/// before any other.
fn global_count(r: &Resolved) -> usize {
    r.symbols
        .iter()
        .take_while(|s| matches!(s.kind, SymbolKind::Global | SymbolKind::Function))
        .count()
}

/// The window's global definitions, if the new window defines the same
/// names in the same order as the old one did (and a name first defined
/// there keeps its kind): the global table is then the same.
fn same_globals(old: &Resolved, program: &Program, w: &Window) -> Option<Vec<WindowDefinition>> {
    let new_window = program.stmts.get(w.first..w.new_end_stmt)?;
    let in_old_window = |s: &Span| s.start() >= w.from && s.start() < w.old_end_offset;
    let globals = global_count(old);
    let mut olds: Vec<(Span, usize, usize)> = Vec::new();
    for (symbol, s) in old.symbols[..globals].iter().enumerate() {
        for (nth, d) in s.defs.iter().enumerate() {
            if in_old_window(d) {
                olds.push((*d, symbol, nth));
            }
        }
    }
    olds.sort_unstable_by_key(|&(span, ..)| span);
    let news = new_window.iter().filter_map(|s| match &s.kind {
        StmtKind::Assign { name, .. } => Some((name, false)),
        StmtKind::FuncDef { name, .. } => Some((name, true)),
        _ => None,
    });
    let mut defs = Vec::with_capacity(olds.len());
    let mut olds = olds.into_iter();
    for (name, is_function) in news {
        let (_, symbol, nth) = olds.next()?;
        let sym = &old.symbols[symbol];
        // A symbol's kind is that of its first definition.
        let kind_changed = nth == 0 && (sym.kind == SymbolKind::Function) != is_function;
        if sym.name != name.name || kind_changed {
            return None;
        }
        defs.push(WindowDefinition {
            symbol,
            nth,
            span: name.span,
        });
    }
    olds.next().is_none().then_some(defs)
}

/// `old` with the window's part replaced by a resolution of the new
/// window's statements and the part after it moved (see the module doc).
fn splice(mut old: Resolved, program: &Program, w: &Window, defs: &[WindowDefinition]) -> Resolved {
    let globals = global_count(&old);
    let after = |s: &Span| s.start() >= w.old_end_offset;

    // The global table: definitions after the window move, the window's
    // are the new ones.
    for s in &mut old.symbols[..globals] {
        for d in s.defs.iter_mut().filter(|d| after(d)) {
            shift_span(d, w.delta);
        }
    }
    for d in defs {
        old.symbols[d.symbol].defs[d.nth] = d.span;
    }

    // Each list cut in three: before, inside and after the window (old
    // offsets); the part inside is dropped.
    let first_def = |s: &super::Symbol| s.defs.first().map_or(0, |d| d.start());
    let locals = &old.symbols[globals..];
    let symbols_from = globals + locals.partition_point(|s| first_def(s) < w.from);
    let symbols_to = globals + locals.partition_point(|s| first_def(s) < w.old_end_offset);
    let mut symbols_after = old.symbols.split_off(symbols_to);
    old.symbols.truncate(symbols_from);
    let refs_to = old
        .references
        .partition_point(|r| r.span.start() < w.old_end_offset);
    let refs_from = old.references.partition_point(|r| r.span.start() < w.from);
    let mut references_after = old.references.split_off(refs_to);
    old.references.truncate(refs_from);
    let unresolved_to = old
        .unresolved
        .partition_point(|(_, s)| s.start() < w.old_end_offset);
    let unresolved_from = old.unresolved.partition_point(|(_, s)| s.start() < w.from);
    let mut unresolved_after = old.unresolved.split_off(unresolved_to);
    old.unresolved.truncate(unresolved_from);

    // The window, resolved as `resolve` does it, against the same globals
    // (each first defined in the statement holding its first definition).
    let stmts = &program.stmts;
    let first_definition = old.symbols[..globals]
        .iter()
        .map(|s| {
            let at = first_def(s);
            stmts
                .partition_point(|st| st.span.start() <= at)
                .saturating_sub(1)
        })
        .collect();
    let mut r = Resolver {
        out: old,
        first_definition,
    };
    for (i, stmt) in stmts.iter().enumerate().take(w.new_end_stmt).skip(w.first) {
        r.statement(i, stmt);
    }
    let mut out = r.out;

    // The part after the window, moved.
    let renumber = out.symbols.len() as isize - symbols_to as isize;
    let restmt = w.new_end_stmt as isize - w.old_end_stmt as isize;
    for s in &mut symbols_after {
        s.defs.iter_mut().for_each(|d| shift_span(d, w.delta));
        if let Scope::Function(i) = &mut s.scope {
            *i = i.saturating_add_signed(restmt);
        }
    }
    for reference in &mut references_after {
        shift_span(&mut reference.span, w.delta);
        if reference.symbol >= symbols_to {
            reference.symbol = reference.symbol.saturating_add_signed(renumber);
        }
    }
    for (_, span) in &mut unresolved_after {
        shift_span(span, w.delta);
    }
    out.symbols.append(&mut symbols_after);
    out.references.append(&mut references_after);
    out.unresolved.append(&mut unresolved_after);
    out
}
