//! Name resolution after an edit: the last resolution reused, with only
//! the statements the re-parse replaced ([`Window`]), and those whose
//! names the edit changed the meaning of, resolved again.
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
//! When the window changes that table by one global only
//! ([`TableChange`]), the table is changed in place and the window is
//! spliced the same way; then only the statements outside the window that
//! used the name that changed are resolved again, one by one
//! ([`resolve_uses_again`]). That global is one defined only in the
//! window, renamed to a name no global has (it keeps its number) or gone
//! (the numbers after it go down by one), or a new name defined there (the
//! numbers from its place go up by one). This is what typing into a
//! definition's name does, a space or `;` breaking the definition and
//! erasing it mending it again: a tenth of the edits on the benchmark's
//! files, and all of the slowest twentieth while each rebuilt the table.
//!
//! Otherwise (a definition of a name defined elsewhere typed, renamed or
//! removed, or several at once) the globals are
//! defined again (pass one of [`resolve`]), and each statement outside the
//! window keeps its old results, renumbered (globals by name, its own
//! symbols in order) and moved, with its top-level uses of globals told
//! again whether they come before the definition, unless it used a global
//! that is gone or a name that is now a global: those statements and the
//! window's are resolved again ([`rebuild`]). Only a global named
//! `Machine` appearing or going (its uses leave no trace, since `Machine`
//! is built in) resolves the whole file again.
//!
//! Every reference, undefined name and symbol lies inside the top-level
//! statement that makes it, and each list is in statement order, so each
//! statement's part of each list is found by offsets. The result equals
//! [`resolve`] of the new program: the incremental property tests compare
//! them after random edits, and the tests below take each way on purpose.

use super::{
    resolve, resolve_statement, resolve_statements, statement_at, Resolved, Resolver, Scope,
    Symbol, SymbolKind,
};
use crate::ast::{Program, StmtKind};
use crate::incremental::{shift_span, Window};
use crate::Span;

/// How [`resolve_after_edit`] made its result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AfterEdit {
    /// The old resolution was reused (false: the whole program was
    /// resolved, see the module doc).
    pub reused: bool,
    /// Every symbol has the name it had, in the same order: the list of
    /// names is the old one's (what a caller keyed by it can keep).
    pub same_names: bool,
}

/// The resolution of `program` (the new parse), reusing `old` (the
/// resolution of the parse the edit started from) outside the `window`
/// the re-parse replaced, and how it was made. Always equal to
/// `resolve(program)`.
pub fn resolve_after_edit(
    mut old: Resolved,
    program: &Program,
    window: &Window,
) -> (Resolved, AfterEdit) {
    if let Some((defs, change)) = same_globals(&old, program, window) {
        // Where the statements outside the window that the change reaches
        // use the name (offsets in the new text): found before the
        // change where they are references to a global that goes.
        let mut uses = Vec::new();
        let mut name = None;
        let table_kept = matches!(change, TableChange::None);
        match change {
            TableChange::None => {}
            TableChange::Renamed { symbol, name: new } => {
                old.rename_global(symbol, new);
                uses.extend(uses_outside(&old, window, symbol));
                name = Some(new.to_string());
            }
            TableChange::Removed { symbol } => {
                uses.extend(uses_outside(&old, window, symbol));
                old.remove_global(symbol);
            }
            TableChange::Added { at, symbol } => {
                name = Some(symbol.name.clone());
                old.insert_global(at, symbol);
            }
        }
        let (mut out, window_names_kept) = splice(old, program, window, &defs);
        if !uses.is_empty() || name.is_some() {
            resolve_uses_again(&mut out, program, window, uses, name.as_deref());
        }
        let how = AfterEdit {
            reused: true,
            same_names: table_kept && window_names_kept,
        };
        return (out, how);
    }
    let (resolved, reused) = match rebuild(old, program, window) {
        Some(resolved) => (resolved, true),
        None => (resolve(program), false),
    };
    let how = AfterEdit {
        reused,
        same_names: false,
    };
    (resolved, how)
}

/// A global definition inside the window: the symbol it defines, which
/// of the symbol's definitions it is, and its span in the new text.
struct WindowDefinition {
    symbol: usize,
    nth: usize,
    span: Span,
}

/// Where `s` is first defined: the offset that places it in its
/// top-level statement.
fn first_def(s: &super::Symbol) -> usize {
    s.defs.first().map_or(0, |d| d.start())
}

/// How the window changes the table of globals, where
/// [`same_globals`] can follow it: each other global keeps its number but
/// for the one taken out or put in.
enum TableChange<'p> {
    None,
    /// A name typed into where global `symbol` is defined alone, now
    /// spelled as no global is: it keeps its number.
    Renamed {
        symbol: usize,
        name: &'p str,
    },
    /// Global `symbol`'s only definition is gone (a space or `;` typed
    /// into its name, say): later numbers go down by one.
    Removed {
        symbol: usize,
    },
    /// A definition of a name no global has: `symbol`, at number `at`
    /// (globals are numbered in the order of their first definitions).
    Added {
        at: usize,
        symbol: Symbol,
    },
}

/// The window's global definitions (numbered as after the change), if the
/// new window defines the same names in the same order as the old one did
/// (and a name first defined there keeps its kind): the global table is
/// then the same up to the definitions' spans. Or the same but for one
/// global ([`TableChange`]): one defined only in the window renamed to a
/// new name or gone, or one new name defined. (Never `Machine`, whose uses
/// leave no trace.) Then only the uses of the names that changed need to
/// be resolved again ([`resolve_uses_again`]).
fn same_globals<'p>(
    old: &Resolved,
    program: &'p Program,
    w: &Window,
) -> Option<(Vec<WindowDefinition>, TableChange<'p>)> {
    let new_window = program.stmts.get(w.first..w.new_end_stmt)?;
    let in_old_window = |s: &Span| s.start() >= w.from && s.start() < w.old_end_offset;
    let globals = old.global_count();
    let mut olds: Vec<(Span, usize, usize)> = Vec::new();
    for (symbol, s) in old.symbols[..globals].iter().enumerate() {
        for (nth, d) in s.defs.iter().enumerate() {
            if in_old_window(d) {
                olds.push((*d, symbol, nth));
            }
        }
    }
    olds.sort_unstable_by_key(|&(span, ..)| span);
    let news: Vec<(&'p crate::ast::Ident, bool)> = new_window
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { name, .. } => Some((name, false)),
            StmtKind::FuncDef { name, .. } => Some((name, true)),
            _ => None,
        })
        .collect();
    // Whether a new definition is of the same global as an old one: the
    // same name, and (for a symbol's first definition, whose kind it has)
    // the same kind.
    let same = |(name, is_function): (&crate::ast::Ident, bool),
                (_, symbol, nth): (Span, usize, usize)| {
        let sym = &old.symbols[symbol];
        sym.name == name.name && !(nth == 0 && (sym.kind == SymbolKind::Function) != is_function)
    };
    // A global defined only in the window, which may go or be renamed.
    let alone = |symbol: usize| {
        let sym = &old.symbols[symbol];
        sym.defs.len() == 1 && sym.name != "Machine"
    };
    // A name a new global may take.
    let free = |name: &str| name != "Machine" && old.global(name).is_none();
    let first_mismatch = (0..news.len().min(olds.len()))
        .find(|&i| !same(news[i], olds[i]))
        .unwrap_or(news.len().min(olds.len()));
    let i = first_mismatch;
    let change = if news.len() == olds.len() {
        if i == news.len() {
            TableChange::None
        } else {
            let (name, is_function) = news[i];
            let (_, symbol, _) = olds[i];
            let kind_kept = (old.symbols[symbol].kind == SymbolKind::Function) == is_function;
            let rest_same = (i + 1..news.len()).all(|j| same(news[j], olds[j]));
            if !(kind_kept && rest_same && alone(symbol) && free(&name.name)) {
                return None;
            }
            TableChange::Renamed {
                symbol,
                name: &name.name,
            }
        }
    } else if news.len() == olds.len() + 1 {
        // news[i] is the new one; the others match in order.
        let (name, is_function) = news[i];
        if !free(&name.name) || !(i + 1..news.len()).all(|j| same(news[j], olds[j - 1])) {
            return None;
        }
        // After the globals first defined before the window, and the
        // window's first definitions before it.
        let before = old.symbols[..globals].partition_point(|s| first_def(s) < w.from);
        let at = before + olds[..i].iter().filter(|&&(_, _, nth)| nth == 0).count();
        let kind = if is_function {
            SymbolKind::Function
        } else {
            SymbolKind::Global
        };
        TableChange::Added {
            at,
            symbol: Symbol {
                name: name.name.clone(),
                kind,
                defs: super::Defs::one(name.span),
                scope: Scope::Global,
            },
        }
    } else if news.len() + 1 == olds.len() {
        // olds[i] is gone; the others match in order.
        let (_, symbol, _) = olds[i];
        if !alone(symbol) || !(i..news.len()).all(|j| same(news[j], olds[j + 1])) {
            return None;
        }
        TableChange::Removed { symbol }
    } else {
        return None;
    };
    // The window's definitions, numbered as after the change: each new
    // one is of the old one at the same place, past the one put in or
    // taken out. The new global's is set with the others, after the
    // definitions past the window are moved (it is in the new text).
    let defs = (0..news.len())
        .map(|j| {
            let span = news[j].0.span;
            let o = match &change {
                TableChange::Added { at, .. } if j == i => {
                    return WindowDefinition {
                        symbol: *at,
                        nth: 0,
                        span,
                    }
                }
                TableChange::Added { .. } if j > i => j - 1,
                TableChange::Removed { .. } if j >= i => j + 1,
                _ => j,
            };
            let (_, symbol, nth) = olds[o];
            let symbol = match &change {
                TableChange::Added { at, .. } if symbol >= *at => symbol + 1,
                TableChange::Removed { symbol: gone } if symbol > *gone => symbol - 1,
                _ => symbol,
            };
            WindowDefinition { symbol, nth, span }
        })
        .collect();
    Some((defs, change))
}

/// `old` with the window's part replaced by a resolution of the new
/// window's statements and the part after it moved (see the module doc).
///
/// The window is resolved on its own, its symbols numbered from where the
/// old window's began, and put in place of the old window's part of each
/// list: the part after it is moved once, and not at all when the window
/// made as many as before (typing in a statement mostly does). Cutting
/// each list in three and joining them again copied everything after the
/// window twice, into a new allocation and back, on every keystroke.
///
/// Also tells whether the window's symbols have the names the old
/// window's had, in order.
fn splice(
    mut old: Resolved,
    program: &Program,
    w: &Window,
    defs: &[WindowDefinition],
) -> (Resolved, bool) {
    let globals = old.global_count();
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

    // Where the old window's part of each list is (old offsets).
    let locals = &old.symbols[globals..];
    let symbols_from = globals + locals.partition_point(|s| first_def(s) < w.from);
    let symbols_to = globals + locals.partition_point(|s| first_def(s) < w.old_end_offset);
    let refs_from = old.references.partition_point(|r| r.span.start() < w.from);
    let refs_to = old
        .references
        .partition_point(|r| r.span.start() < w.old_end_offset);
    let unresolved_from = old.unresolved.partition_point(|(_, s)| s.start() < w.from);
    let unresolved_to = old
        .unresolved
        .partition_point(|(_, s)| s.start() < w.old_end_offset);

    // The window, resolved as `resolve` does it, against the same globals.
    let stmts = &program.stmts;
    let find = |name: &str| find_global(&old, program, name);
    let in_window = (w.first..w.new_end_stmt).filter_map(|i| Some((i, &**stmts.get(i)?)));
    let window = resolve_statements(in_window, symbols_from, &find);

    // The part after the window, moved.
    let renumber = window.symbols.len() as isize - (symbols_to - symbols_from) as isize;
    let restmt = w.new_end_stmt as isize - w.old_end_stmt as isize;
    for s in &mut old.symbols[symbols_to..] {
        s.defs.iter_mut().for_each(|d| shift_span(d, w.delta));
        if let Scope::Function(i) = &mut s.scope {
            *i = i.saturating_add_signed(restmt);
        }
    }
    for reference in &mut old.references[refs_to..] {
        shift_span(&mut reference.span, w.delta);
        if reference.symbol >= symbols_to {
            reference.symbol = reference.symbol.saturating_add_signed(renumber);
        }
    }
    for (_, span) in &mut old.unresolved[unresolved_to..] {
        shift_span(span, w.delta);
    }
    let names_kept = old.symbols[symbols_from..symbols_to]
        .iter()
        .map(|s| &s.name)
        .eq(window.symbols.iter().map(|s| &s.name));
    old.symbols.splice(symbols_from..symbols_to, window.symbols);
    old.references.splice(refs_from..refs_to, window.references);
    old.unresolved
        .splice(unresolved_from..unresolved_to, window.unresolved);
    (old, names_kept)
}

/// Global `name` of `resolved`, and the statement of `program` that holds
/// its first definition (found when asked: a table of every global's, made
/// on each keystroke, was a walk of them all).
fn find_global(resolved: &Resolved, program: &Program, name: &str) -> Option<(usize, usize)> {
    let id = resolved.global(name)?;
    Some((id, statement_at(program, first_def(&resolved.symbols[id]))))
}

/// Where the references to `symbol` outside the window are, in the new
/// text (the offsets of `old`'s, moved past the window by the edit).
fn uses_outside(old: &Resolved, w: &Window, symbol: usize) -> Vec<usize> {
    old.references
        .iter()
        .filter(|r| r.symbol == symbol)
        .map(|r| r.span.start())
        .filter(|&at| at < w.from || at >= w.old_end_offset)
        .map(|at| {
            if at >= w.old_end_offset {
                at.saturating_add_signed(w.delta)
            } else {
                at
            }
        })
        .collect()
}

/// After the table of globals changed by one name (see [`TableChange`]):
/// each statement outside the window that used the name that changed, at
/// `uses` (offsets in the new text) or undefined as `name` (which is now a
/// global), is resolved again, alone, and its references and undefined
/// names replace its old ones. Its own symbols stay: which parameters,
/// locals and comprehension variables a statement makes does not depend
/// on the globals.
fn resolve_uses_again(
    out: &mut Resolved,
    program: &Program,
    w: &Window,
    uses: Vec<usize>,
    name: Option<&str>,
) {
    let stmts = &program.stmts;
    let undefined_uses = out
        .unresolved
        .iter()
        .filter(|(n, _)| Some(n.as_str()) == name)
        .map(|(_, s)| s.start());
    let mut again: Vec<usize> = uses
        .iter()
        .copied()
        .chain(undefined_uses)
        .map(|at| statement_at(program, at))
        .filter(|i| !(w.first..w.new_end_stmt).contains(i))
        .collect();
    again.sort_unstable();
    again.dedup();
    let globals = out.global_count();
    // From the last, so that each statement's part of the lists is found
    // where the ones before it left it.
    for &i in again.iter().rev() {
        let Some(stmt) = stmts.get(i) else { continue };
        let (from, to) = (stmt.span.start(), stmt.span.end());
        let refs = out.references.partition_point(|r| r.span.start() < from)
            ..out.references.partition_point(|r| r.span.start() < to);
        let undefined = out.unresolved.partition_point(|(_, s)| s.start() < from)
            ..out.unresolved.partition_point(|(_, s)| s.start() < to);
        let base = globals + out.symbols[globals..].partition_point(|s| first_def(s) < from);
        let find = |name: &str| find_global(out, program, name);
        let resolved = resolve_statement(stmt, i, base, &find);
        debug_assert!(
            out.symbols.get(base..base + resolved.symbols.len()) == Some(&resolved.symbols[..]),
            "statement {i} made other symbols"
        );
        out.references.splice(refs, resolved.references);
        out.unresolved.splice(undefined, resolved.unresolved);
    }
}

/// The resolution of `program` when the window changed the global table
/// (see the module doc): the globals defined again, then each statement
/// outside the window keeps its old results unless it used a global that
/// is gone or a name that is now a global (those, and the window's
/// statements, are resolved again). What it keeps is renumbered (globals
/// by name, its own symbols in order), moved by the edit's length after the
/// window, and its top-level uses of globals told again whether they come
/// before the definition. `None` where that cannot be sure of the result.
fn rebuild(old: Resolved, program: &Program, w: &Window) -> Option<Resolved> {
    let old_globals = old.global_count();
    let mut r = Resolver::with_globals(program, Some(&old));
    // A global named `Machine` changes uses that left no trace (neither a
    // reference nor an undefined name: `Machine` is built in).
    if r.out.global("Machine").is_some() != old.global("Machine").is_some() {
        return None;
    }
    let new_globals = r.out.symbols.len();
    let remap: Vec<Option<usize>> = old.symbols[..old_globals]
        .iter()
        .map(|s| r.out.global(&s.name))
        .collect();
    let Resolved {
        symbols: old_symbols,
        references: old_references,
        unresolved: old_unresolved,
        ..
    } = old;
    let mut locals = old_symbols
        .into_iter()
        .enumerate()
        .skip(old_globals)
        .peekable();
    let mut references = old_references.into_iter().peekable();
    let mut unresolved = old_unresolved.into_iter().peekable();
    let mut window_skipped = false;
    // Each statement's old results, gathered here before they are kept
    // or dropped: lists made once, not three allocations per statement.
    let mut own: Vec<(usize, super::Symbol)> = Vec::new();
    let mut uses = Vec::new();
    let mut undefined = Vec::new();
    for (i, stmt) in program.stmts.iter().enumerate() {
        if i >= w.first && !window_skipped {
            // The old window's results go.
            let end = w.old_end_offset;
            while locals.next_if(|(_, s)| first_def(s) < end).is_some() {}
            while references.next_if(|x| x.span.start() < end).is_some() {}
            while unresolved.next_if(|(_, s)| s.start() < end).is_some() {}
            window_skipped = true;
        }
        if i >= w.first && i < w.new_end_stmt {
            r.statement(i, stmt);
            continue;
        }
        // This statement's old results: those that began before its old end.
        let delta = if i >= w.new_end_stmt { w.delta } else { 0 };
        let old_end = stmt.span.end().checked_add_signed(-delta)?;
        own.clear();
        uses.clear();
        undefined.clear();
        while let Some(s) = locals.next_if(|(_, s)| first_def(s) < old_end) {
            own.push(s);
        }
        while let Some(x) = references.next_if(|x| x.span.start() < old_end) {
            uses.push(x);
        }
        while let Some(u) = unresolved.next_if(|(_, s)| s.start() < old_end) {
            undefined.push(u);
        }
        let own_first = own.first().map_or(usize::MAX, |(id, _)| *id);
        let is_own = |id: usize| id >= own_first && id - own_first < own.len();
        let stale = uses.iter().any(|x| {
            if x.symbol < old_globals {
                remap[x.symbol].is_none()
            } else {
                !is_own(x.symbol)
            }
        }) || undefined
            .iter()
            .any(|(name, _)| r.out.global(name).is_some());
        if stale {
            r.statement(i, stmt);
            continue;
        }
        let base = r.out.symbols.len();
        let top_level = !matches!(stmt.kind, StmtKind::FuncDef { .. });
        for mut x in uses.drain(..) {
            shift_span(&mut x.span, delta);
            if x.symbol < old_globals {
                x.symbol = remap[x.symbol]?;
                if top_level && x.symbol < new_globals {
                    x.before_definition = r.first_definition_stmt(x.symbol) >= i;
                }
            } else {
                x.symbol = base + (x.symbol - own_first);
            }
            r.out.references.push(x);
        }
        for (_, mut s) in own.drain(..) {
            s.defs.iter_mut().for_each(|d| shift_span(d, delta));
            if let Scope::Function(f) = &mut s.scope {
                *f = i;
            }
            r.out.symbols.push(s);
        }
        for (name, mut span) in undefined.drain(..) {
            shift_span(&mut span, delta);
            r.out.unresolved.push((name, span));
        }
    }
    // Every old result belongs to a statement: anything left means the
    // window was not what it said.
    if locals.next().is_some() || references.next().is_some() || unresolved.next().is_some() {
        return None;
    }
    Some(r.out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incremental::{reparse, Reparse};
    use crate::parse;

    const SRC: &str = "\
m = Machine(GPU);
x = y + 1;
def f(Task t) { a = t.ipoint; return m[a[0], 0]; }
y = 2;
IndexTaskMap work f;
def g(Task t) { b = tuple(i for i in m.size); return m[*b]; }
z = x + w + y;
print(\"{}\", z);
";

    /// `SRC` edited by replacing `from` with `to`: the resolution after
    /// the edit, made from `SRC`'s, the full one, which way it was made,
    /// and whether it told the names the same.
    fn after(from: &str, to: &str) -> (Resolved, Resolved, &'static str, bool) {
        after_in(SRC, from, to)
    }

    fn after_in(src: &str, from: &str, to: &str) -> (Resolved, Resolved, &'static str, bool) {
        let old = parse(src);
        let new_src = src.replacen(from, to, 1);
        assert_ne!(new_src, src, "{from:?} is not in the source");
        let (new, how) = reparse(&old, src, &new_src);
        let Reparse::Incremental { window, .. } = how else {
            panic!("a full re-parse for {from:?} -> {to:?}");
        };
        let full = resolve(&new.program);
        let old_names = resolve(&old.program);
        let way = if let Some((_, change)) = same_globals(&old_names, &new.program, &window) {
            match change {
                TableChange::None => "splice",
                TableChange::Renamed { .. } => "rename",
                TableChange::Removed { .. } => "remove",
                TableChange::Added { .. } => "add",
            }
        } else if rebuild(old_names.clone(), &new.program, &window).is_some() {
            "rebuild"
        } else {
            "full"
        };
        let (incremental, how) = resolve_after_edit(old_names.clone(), &new.program, &window);
        // Same names: every symbol's, in order, as before the edit.
        if how.same_names {
            let names = |r: &Resolved| r.symbols.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
            assert_eq!(names(&old_names), names(&full), "{from:?} -> {to:?}");
        }
        (incremental, full, way, how.same_names)
    }

    /// `SRC` with `from` replaced by `to`, resolved after the edit the
    /// way named `way`, equals the full resolution.
    fn takes(from: &str, to: &str, way: &str) {
        let (inc, full, taken, _) = after(from, to);
        assert_same(&inc, &full, from);
        assert_eq!(taken, way, "{from:?} -> {to:?}");
    }

    fn assert_same(a: &Resolved, b: &Resolved, what: &str) {
        assert_eq!(a.symbols, b.symbols, "{what}: symbols");
        assert_eq!(a.references, b.references, "{what}: references");
        assert_eq!(a.unresolved, b.unresolved, "{what}: undefined names");
        for s in &b.symbols {
            if s.scope == Scope::Global && s.kind != SymbolKind::LoopVar {
                assert!(a.global(&s.name).is_some(), "{what}: global {}", s.name);
            }
        }
    }

    #[test]
    fn edits_that_keep_the_globals_splice_the_window() {
        for (from, to) in [
            ("a[0], 0", "a[0], a[1]"),
            ("\"{}\", z)", "\"{}\", z, y)"),
            ("t.ipoint", "t.ipoint + w"),
        ] {
            takes(from, to, "splice");
        }
    }

    #[test]
    fn edits_that_change_the_globals_rebuild_from_the_old_names() {
        for (from, to) in [
            // a global renamed to the name of another
            ("y = 2;", "x = 2;"),
            // a second global defined where one was
            ("y = 2;", "y = 2; w = 3; q = 1;"),
            // the first definition of `y` moves before its use
            ("x = y + 1;", "y = 0; x = y + 1;"),
        ] {
            takes(from, to, "rebuild");
        }
    }

    #[test]
    fn a_name_typed_into_where_alone_it_is_defined_keeps_its_number() {
        for (from, to) in [
            // a global renamed: its uses elsewhere become undefined
            ("y = 2;", "yy = 2;"),
            // to a name used undefined: `w`'s use now resolves, `y`'s not
            ("y = 2;", "w = 2;"),
            // a function renamed: the mapping statement loses it, and the
            // locals after the window keep their numbers
            ("def f(Task t)", "def ff(Task t)"),
            // a function named as a use inside another body
            ("def g(Task t)", "def a(Task t)"),
            // a machine renamed: every function body that used it
            ("m = Machine(GPU);", "mm = Machine(GPU);"),
        ] {
            takes(from, to, "rename");
        }
    }

    #[test]
    fn a_definition_added_or_removed_renumbers_the_symbols_after_it() {
        for (from, to, way) in [
            // a definition of an undefined name added: it now resolves
            ("y = 2;", "y = 2; w = 3;", "add"),
            // before its use at top level, and before other globals
            ("x = y + 1;", "w = 0; x = y + 1;", "add"),
            // a function added before the others
            (
                "m = Machine(GPU);",
                "m = Machine(GPU); def h(Task t) { return m[0, 0]; }",
                "add",
            ),
            // a function removed: the mapping statement loses it
            (
                "def g(Task t) { b = tuple(i for i in m.size); return m[*b]; }",
                "",
                "remove",
            ),
            // a definition broken: `y`'s uses become undefined
            ("y = 2;", "y 2;", "remove"),
            // the machine removed: every function body that used it
            ("m = Machine(GPU);", "", "remove"),
            // the first function removed, with locals after it renumbered
            (
                "def f(Task t) { a = t.ipoint; return m[a[0], 0]; }",
                "",
                "remove",
            ),
        ] {
            takes(from, to, way);
        }
    }

    #[test]
    fn uses_outside_the_window_learn_again_whether_they_come_first() {
        // `y`'s first definition renamed: the second, after `x = y;`,
        // becomes the first, so that use now comes before it.
        let src = "y = 1;\nq = 0;\nr = q;\nx = y;\ny = 2;\nprint(\"{}\", x, r);\n";
        let (inc, full, way, _) = after_in(src, "y = 1;", "v = 1;");
        assert_same(&inc, &full, "renamed first definition");
        assert_eq!(way, "rebuild");
        assert!(full.references.iter().any(|r| r.before_definition));
    }

    #[test]
    fn the_names_are_told_the_same_only_when_every_symbol_keeps_its_own() {
        for (from, to, same) in [
            ("a[0], 0", "a[0], a[1]", true),
            ("t.ipoint", "t.ipoint + w", true),
            // a local renamed
            ("a = t.ipoint", "aa = t.ipoint", false),
            // a comprehension variable renamed
            (
                "tuple(i for i in m.size)",
                "tuple(j for j in m.size)",
                false,
            ),
            // a global renamed, added, removed
            ("y = 2;", "yy = 2;", false),
            ("y = 2;", "y = 2; w = 3;", false),
            ("y = 2;", "y 2;", false),
        ] {
            let (.., same_names) = after(from, to);
            assert_eq!(same_names, same, "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn a_global_named_machine_resolves_everything_again() {
        let (inc, full, way, _) = after("y = 2;", "y = 2; Machine = 1;");
        assert_same(&inc, &full, "Machine");
        assert_eq!(way, "full");
    }
}
