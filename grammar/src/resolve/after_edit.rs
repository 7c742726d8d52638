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
//! When the window's only change to that table is a name typed into where
//! a global is defined alone, now spelled as no global is, the global
//! keeps its number under its new name: the same, and then only the
//! statements that used the old name or the new one are resolved again,
//! one by one ([`resolve_uses_again`]).
//!
//! Otherwise (a definition typed, renamed or removed) the globals are
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

use super::{resolve, Resolved, Resolver, Scope, SymbolKind};
use crate::ast::{Program, StmtKind};
use crate::incremental::{shift_span, Window};
use crate::Span;

/// The resolution of `program` (the new parse), reusing `old` (the
/// resolution of the parse the edit started from) outside the `window`
/// the re-parse replaced, and whether it could (false: the whole program
/// was resolved, see the module doc). Always equal to `resolve(program)`.
pub fn resolve_after_edit(
    mut old: Resolved,
    program: &Program,
    window: &Window,
) -> (Resolved, bool) {
    if let Some((defs, renamed)) = same_globals(&old, program, window) {
        if let Some((symbol, name)) = renamed {
            old.rename_global(symbol, name);
            let mut out = splice(old, program, window, &defs);
            resolve_uses_again(&mut out, program, window, symbol, name);
            return (out, true);
        }
        return (splice(old, program, window, &defs), true);
    }
    match rebuild(old, program, window) {
        Some(resolved) => (resolved, true),
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

/// Where `s` is first defined: the offset that places it in its
/// top-level statement.
fn first_def(s: &super::Symbol) -> usize {
    s.defs.first().map_or(0, |d| d.start())
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
/// there keeps its kind): the global table is then the same. Or the same
/// but for one name typed into: a global defined only there, now spelled
/// as no global is (nor `Machine`), with its kind. Then it keeps its
/// number, and the new name is handed back with it: only the uses of the
/// old name and of the new one change (see [`resolve_uses_again`]).
#[allow(clippy::type_complexity)]
fn same_globals<'p>(
    old: &Resolved,
    program: &'p Program,
    w: &Window,
) -> Option<(Vec<WindowDefinition>, Option<(usize, &'p str)>)> {
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
    let mut renamed = None;
    let mut olds = olds.into_iter();
    for (name, is_function) in news {
        let (_, symbol, nth) = olds.next()?;
        let sym = &old.symbols[symbol];
        // A symbol's kind is that of its first definition.
        let kind_changed = nth == 0 && (sym.kind == SymbolKind::Function) != is_function;
        if kind_changed {
            return None;
        }
        if sym.name != name.name {
            let retyped = renamed.is_none()
                && sym.defs.len() == 1
                && sym.name != "Machine"
                && name.name != "Machine"
                && old.global(&name.name).is_none();
            if !retyped {
                return None;
            }
            renamed = Some((symbol, name.name.as_str()));
        }
        defs.push(WindowDefinition {
            symbol,
            nth,
            span: name.span,
        });
    }
    olds.next().is_none().then_some((defs, renamed))
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
    let window = {
        let find = |name: &str| find_global(&old, program, name);
        let mut r = Resolver {
            out: Resolved::default(),
            first_definition: Vec::new(),
            base: symbols_from,
            streamed: Some(&find),
        };
        for (i, stmt) in stmts.iter().enumerate().take(w.new_end_stmt).skip(w.first) {
            r.statement(i, stmt);
        }
        r.out
    };

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
    old.symbols.splice(symbols_from..symbols_to, window.symbols);
    old.references.splice(refs_from..refs_to, window.references);
    old.unresolved
        .splice(unresolved_from..unresolved_to, window.unresolved);
    old
}

/// Global `name` of `resolved`, and the statement of `program` that holds
/// its first definition (found when asked: a table of every global's, made
/// on each keystroke, was a walk of them all).
fn find_global(resolved: &Resolved, program: &Program, name: &str) -> Option<(usize, usize)> {
    let id = resolved.global(name)?;
    let at = first_def(&resolved.symbols[id]);
    let stmt = program
        .stmts
        .partition_point(|st| st.span.start() <= at)
        .saturating_sub(1);
    Some((id, stmt))
}

/// After global `symbol` was renamed `name` where the window defines it
/// (see [`same_globals`]): each statement outside the window that used the
/// old name (a reference to `symbol`, now undefined) or the new one (an
/// undefined name, now `symbol`) is resolved again, alone, and its
/// references and undefined names replace its old ones. Its own symbols
/// stay: which parameters, locals and comprehension variables a statement
/// makes does not depend on the globals.
fn resolve_uses_again(
    out: &mut Resolved,
    program: &Program,
    w: &Window,
    symbol: usize,
    name: &str,
) {
    let stmts = &program.stmts;
    let stmt_of = |at: usize| {
        stmts
            .partition_point(|st| st.span.start() <= at)
            .saturating_sub(1)
    };
    let mut again: Vec<usize> = out
        .references
        .iter()
        .filter(|r| r.symbol == symbol)
        .map(|r| stmt_of(r.span.start()))
        .chain(
            out.unresolved
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, s)| stmt_of(s.start())),
        )
        .filter(|i| !(w.first..w.new_end_stmt).contains(i))
        .collect();
    again.sort_unstable();
    again.dedup();
    let globals = global_count(out);
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
        let resolved = {
            let find = |name: &str| find_global(out, program, name);
            let mut r = Resolver {
                out: Resolved::default(),
                first_definition: Vec::new(),
                base,
                streamed: Some(&find),
            };
            r.statement(i, stmt);
            r.out
        };
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
    let old_globals = global_count(&old);
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
    /// the edit, made from `SRC`'s, and which way it was made.
    fn after(from: &str, to: &str) -> (Resolved, Resolved, &'static str) {
        after_in(SRC, from, to)
    }

    fn after_in(src: &str, from: &str, to: &str) -> (Resolved, Resolved, &'static str) {
        let old = parse(src);
        let new_src = src.replacen(from, to, 1);
        assert_ne!(new_src, src, "{from:?} is not in the source");
        let (new, how) = reparse(&old, src, &new_src);
        let Reparse::Incremental { window, .. } = how else {
            panic!("a full re-parse for {from:?} -> {to:?}");
        };
        let full = resolve(&new.program);
        let old_names = resolve(&old.program);
        let way = if let Some((_, renamed)) = same_globals(&old_names, &new.program, &window) {
            if renamed.is_some() {
                "rename"
            } else {
                "splice"
            }
        } else if rebuild(old_names.clone(), &new.program, &window).is_some() {
            "rebuild"
        } else {
            "full"
        };
        let (incremental, _) = resolve_after_edit(old_names, &new.program, &window);
        (incremental, full, way)
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
            let (inc, full, way) = after(from, to);
            assert_same(&inc, &full, from);
            assert_eq!(way, "splice", "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn edits_that_change_the_globals_rebuild_from_the_old_names() {
        for (from, to) in [
            // a global renamed to the name of another
            ("y = 2;", "x = 2;"),
            // a definition of an undefined name added: it now resolves
            ("y = 2;", "y = 2; w = 3;"),
            // a function removed: the mapping statement loses it
            (
                "def g(Task t) { b = tuple(i for i in m.size); return m[*b]; }",
                "",
            ),
            // the first definition of `y` moves before its use
            ("x = y + 1;", "y = 0; x = y + 1;"),
        ] {
            let (inc, full, way) = after(from, to);
            assert_same(&inc, &full, from);
            assert_eq!(way, "rebuild", "{from:?} -> {to:?}");
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
            let (inc, full, way) = after(from, to);
            assert_same(&inc, &full, from);
            assert_eq!(way, "rename", "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn uses_outside_the_window_learn_again_whether_they_come_first() {
        // `y`'s first definition renamed: the second, after `x = y;`,
        // becomes the first, so that use now comes before it.
        let src = "y = 1;\nq = 0;\nr = q;\nx = y;\ny = 2;\nprint(\"{}\", x, r);\n";
        let (inc, full, way) = after_in(src, "y = 1;", "v = 1;");
        assert_same(&inc, &full, "renamed first definition");
        assert_eq!(way, "rebuild");
        assert!(full.references.iter().any(|r| r.before_definition));
    }

    #[test]
    fn a_global_named_machine_resolves_everything_again() {
        let (inc, full, way) = after("y = 2;", "y = 2; Machine = 1;");
        assert_same(&inc, &full, "Machine");
        assert_eq!(way, "full");
    }
}
