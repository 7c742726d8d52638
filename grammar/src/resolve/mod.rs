//! Name resolution: which definition every name refers to.
//!
//! Mirrors the reference evaluator (`tree.cpp`, `tree.hpp`):
//! - Top-level assignments and function definitions share one global
//!   namespace (`global_symbol`). Top-level statements run in order, so at top
//!   level a name must be defined *earlier*; `IndexTaskMap`/`SingleTaskMap`
//!   look their function up when the statement runs, so it must be defined
//!   earlier too.
//! - Functions run later (when Legion maps a task), after the whole file ran:
//!   inside a body, a name is looked up in the function's own frame
//!   (parameters, then locals assigned *before* the use), then among all
//!   globals.
//! - `tuple(e for v in it)` binds `v` inside `e` only.
//!
//! The result lists symbols with all their definitions and every reference,
//! which is what go-to-definition, find-references, rename and the checker need.
//!
//! After an edit, [`resolve_after_edit`] ([`after_edit`]) keeps the last
//! result where the edit cannot reach, and resolves again the statements
//! a re-parse replaced and those whose names the edit changed. A symbol's
//! definitions are a [`Defs`] (`defs`), which holds the first in place.

use serde::Serialize;

use crate::ast::*;
use crate::Span;

mod after_edit;
mod defs;
pub use after_edit::{resolve_after_edit, AfterEdit};
pub use defs::Defs;

/// What a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SymbolKind {
    Global,
    Function,
    Parameter,
    Local,
    LoopVar,
}

/// Where a symbol lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Scope {
    Global,
    /// Inside the function defined by `program.stmts[index]`.
    Function(usize),
}

/// One named thing, with every place that defines it (first = declaration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    pub defs: Defs,
    pub scope: Scope,
}

/// A use of a symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Reference {
    pub span: Span,
    pub symbol: usize,
    /// True when the use runs before the definition does (a top-level use of
    /// a later global, or a mapping statement naming a later function).
    pub before_definition: bool,
}

/// The outcome of resolving a program.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Resolved {
    pub symbols: Vec<Symbol>,
    /// Global symbols by name (kept in step with `symbols`).
    #[serde(skip)]
    globals_by_name: GlobalIndex,
    pub references: Vec<Reference>,
    /// Names that refer to nothing (`Machine` excluded: it is built in).
    pub unresolved: Vec<(String, Span)>,
}

impl Resolved {
    /// The symbol defined or referenced at byte `offset`.
    pub fn symbol_at(&self, offset: usize) -> Option<usize> {
        let inside = |s: &Span| s.start() <= offset && offset <= s.end();
        self.references
            .iter()
            .find(|r| inside(&r.span))
            .map(|r| r.symbol)
            .or_else(|| self.symbols.iter().position(|s| s.defs.iter().any(inside)))
    }

    /// Definitions and references of `symbol`, in source order.
    pub fn occurrences(&self, symbol: usize) -> Vec<Span> {
        let mut out: Vec<Span> = self
            .symbols
            .get(symbol)
            .map(|s| s.defs.to_vec())
            .unwrap_or_default();
        out.extend(
            self.references
                .iter()
                .filter(|r| r.symbol == symbol)
                .map(|r| r.span),
        );
        out.sort();
        out.dedup();
        out
    }

    /// References to `symbol` (uses only).
    pub fn references_to(&self, symbol: usize) -> impl Iterator<Item = &Reference> {
        self.references.iter().filter(move |r| r.symbol == symbol)
    }

    /// How many symbols are globals (variables and functions): they come
    /// first, in the order of their first definitions. (Read from the
    /// index of globals, which holds each once: counting them was a walk
    /// of every global, several times a keystroke.)
    pub fn global_count(&self) -> usize {
        let indexed = self.globals_by_name.table.len();
        debug_assert_eq!(
            indexed,
            self.symbols
                .iter()
                .take_while(|s| matches!(s.kind, SymbolKind::Global | SymbolKind::Function))
                .count()
        );
        indexed
    }

    /// The global symbol (variable or function) named `name`.
    pub fn global(&self, name: &str) -> Option<usize> {
        self.globals_by_name.find(&self.symbols, name)
    }

    /// Gives global `symbol` the name `name`, which no global has: its
    /// number stays (see `after_edit`, where a definition's name is typed
    /// into).
    fn rename_global(&mut self, symbol: usize, name: &str) {
        self.globals_by_name.remove(&self.symbols, symbol);
        if let Some(s) = self.symbols.get_mut(symbol) {
            s.name = name.to_string();
        }
        self.globals_by_name.insert(&self.symbols, symbol);
    }

    /// Takes global `symbol` out (its only definition is gone): every
    /// later symbol's number, in the index and in the references, goes
    /// down by one. The references to `symbol` itself are left for the
    /// caller to resolve again (see `after_edit`).
    fn remove_global(&mut self, symbol: usize) {
        if symbol >= self.symbols.len() {
            return;
        }
        self.globals_by_name.remove(&self.symbols, symbol);
        self.symbols.remove(symbol);
        self.globals_by_name
            .renumber(|i| if i > symbol { i - 1 } else { i });
        for r in &mut self.references {
            if r.symbol > symbol {
                r.symbol -= 1;
            }
        }
    }

    /// Puts the new global `symbol` (whose name no global has) at number
    /// `at`: every symbol from there on, in the index and in the
    /// references, goes up by one.
    fn insert_global(&mut self, at: usize, symbol: Symbol) {
        let at = at.min(self.symbols.len());
        self.symbols.insert(at, symbol);
        self.globals_by_name
            .renumber(|i| if i >= at { i + 1 } else { i });
        for r in &mut self.references {
            if r.symbol >= at {
                r.symbol += 1;
            }
        }
        self.globals_by_name.insert(&self.symbols, at);
    }
}

/// The global symbols by name, holding only their numbers: each is found
/// by hashing the name and comparing with `symbols[number].name`, so no
/// name is stored twice (a `HashMap<String, usize>` cost a second string
/// and 32 bytes per global; this costs 4 and one control byte).
#[derive(Clone, Default)]
struct GlobalIndex {
    table: hashbrown::HashTable<u32>,
    hasher: std::hash::BuildHasherDefault<crate::fast_hash::FastHasher>,
}

impl std::fmt::Debug for GlobalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GlobalIndex({} names)", self.table.len())
    }
}

impl GlobalIndex {
    fn hash(&self, name: &str) -> u64 {
        std::hash::BuildHasher::hash_one(&self.hasher, name)
    }

    fn find(&self, symbols: &[Symbol], name: &str) -> Option<usize> {
        let found = self.table.find(self.hash(name), |&i| {
            symbols.get(i as usize).is_some_and(|s| s.name == name)
        });
        found.map(|&i| i as usize)
    }

    /// Gives each global in the index the number `new` makes of its
    /// number (the names, and so the hashes, stay).
    fn renumber(&mut self, new: impl Fn(usize) -> usize) {
        for number in self.table.iter_mut() {
            *number = u32::try_from(new(*number as usize)).unwrap_or(u32::MAX);
        }
    }

    /// Takes `symbols[index]` out of the index.
    fn remove(&mut self, symbols: &[Symbol], index: usize) {
        let name = symbols.get(index).map_or("", |s| s.name.as_str());
        if let Ok(entry) = self
            .table
            .find_entry(self.hash(name), |&i| i as usize == index)
        {
            entry.remove();
        }
    }

    /// Adds `symbols[index]`, whose name is not in the index yet.
    fn insert(&mut self, symbols: &[Symbol], index: usize) {
        let Ok(number) = u32::try_from(index) else {
            // Over 4 billion globals cannot come from a text a span can
            // address; such a symbol is left unindexed rather than panic.
            return;
        };
        let hasher = &self.hasher;
        let rehash = |&i: &u32| {
            let name = symbols.get(i as usize).map_or("", |s| s.name.as_str());
            std::hash::BuildHasher::hash_one(hasher, name)
        };
        let hash = rehash(&number);
        self.table.insert_unique(hash, number, rehash);
    }
}

/// Finds a global for a resolver that sees one statement at a time
/// ([`resolve_statement`]): its symbol number and the index of the
/// statement that first defines it.
pub(crate) type FindGlobal<'g> = &'g dyn Fn(&str) -> Option<(usize, usize)>;

/// Resolves top-level statement `index` alone, the globals found by
/// `globals` (which the caller collected from every statement first): the
/// references, the unresolved names and the symbols the statement makes
/// (parameters, locals, comprehension variables), numbered from `base`
/// (`symbols[k]` is symbol `base + k`). Each is what [`resolve`] gives for
/// the statement, with the globals numbered as `globals` numbers them: the
/// streaming check (`check::stream`) holds one statement at a time.
pub(crate) fn resolve_statement(
    stmt: &Stmt,
    index: usize,
    base: usize,
    globals: FindGlobal<'_>,
) -> Resolved {
    resolve_statements(std::iter::once((index, stmt)), base, globals)
}

/// [`resolve_statement`] of consecutive top-level statements (each with
/// its index), their symbols numbered on from `base` (the resolution after
/// an edit resolves its window so).
pub(crate) fn resolve_statements<'s>(
    stmts: impl Iterator<Item = (usize, &'s Stmt)>,
    base: usize,
    globals: FindGlobal<'_>,
) -> Resolved {
    let mut r = Resolver {
        out: Resolved::default(),
        first_definition: Vec::new(),
        base,
        streamed: Some(globals),
    };
    for (index, stmt) in stmts {
        r.statement(index, stmt);
    }
    r.out
}

/// The index of the top-level statement of `program` holding byte
/// `offset` (the last one starting at or before it; 0 before the first).
pub fn statement_at(program: &Program, offset: usize) -> usize {
    program
        .stmts
        .partition_point(|st| st.span.start() <= offset)
        .saturating_sub(1)
}

/// Resolves every name in `program`.
pub fn resolve(program: &Program) -> Resolved {
    // Globals first, so bodies (which run late) can see all of them.
    let mut r = Resolver::with_globals(program, None);
    for (i, stmt) in program.stmts.iter().enumerate() {
        r.statement(i, stmt);
    }
    // The vectors grew by doubling; a resolution is kept as long as its
    // analysis, so give the unused half back.
    r.out.symbols.shrink_to_fit();
    r.out.references.shrink_to_fit();
    r.out.unresolved.shrink_to_fit();
    r.out
}

struct Resolver<'g> {
    out: Resolved,
    /// For each global symbol (by index), the statement index of its
    /// first definition; 0 for other symbols.
    first_definition: Vec<usize>,
    /// The number of `out.symbols[0]` (0 but for [`resolve_statement`]).
    base: usize,
    /// Where the globals are, when not in `out` ([`resolve_statement`]).
    streamed: Option<FindGlobal<'g>>,
}

/// A function's frame while resolving its body.
struct Frame {
    names: Vec<(String, usize)>,
}

impl<'g> Resolver<'g> {
    /// A resolver that has defined every global of `program` (pass one).
    ///
    /// Given `like` (the resolution an edit started from), the lists and
    /// the index of globals are sized as its are: the new one will be
    /// about as big. (After an edit that changed the globals, the index
    /// growing from empty rehashed every name some ten times, each a read
    /// of the name's own allocation, and the lists grew by doubling.)
    fn with_globals(program: &Program, like: Option<&Resolved>) -> Resolver<'g> {
        let mut out = Resolved::default();
        if let Some(like) = like {
            out.symbols.reserve_exact(like.symbols.len());
            out.references.reserve_exact(like.references.len());
            out.unresolved.reserve_exact(like.unresolved.len());
            out.globals_by_name
                .table
                // (Empty: no entry to hash again while it grows.)
                .reserve(like.globals_by_name.table.len(), |_| 0);
        }
        let mut r = Resolver {
            out,
            first_definition: Vec::new(),
            base: 0,
            streamed: None,
        };
        for (i, stmt) in program.stmts.iter().enumerate() {
            match &stmt.kind {
                StmtKind::Assign { name, .. } => r.define_global(name, SymbolKind::Global, i),
                StmtKind::FuncDef { name, .. } => r.define_global(name, SymbolKind::Function, i),
                _ => {}
            }
        }
        r
    }

    /// Resolves the names top-level statement `i` uses, and the symbols
    /// it makes (parameters, locals, comprehension variables), once every
    /// global is defined.
    fn statement(&mut self, i: usize, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Assign { value, .. } => self.top_level_expr(value, i),
            StmtKind::Print { args, .. } => args.iter().for_each(|a| self.top_level_expr(a, i)),
            StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. } => {
                self.top_level_name(&func.name, func.span, i)
            }
            StmtKind::FuncDef { params, body, .. } => self.function(i, params, body),
            _ => {}
        }
    }

    fn define_global(&mut self, name: &Ident, kind: SymbolKind, stmt: usize) {
        if let Some(id) = self.out.global(&name.name) {
            self.out.symbols[id].defs.push(name.span);
            return;
        }
        self.out.symbols.push(Symbol {
            name: name.name.clone(),
            kind,
            defs: Defs::one(name.span),
            scope: Scope::Global,
        });
        let id = self.out.symbols.len() - 1;
        self.first_definition.resize(id + 1, 0);
        self.first_definition[id] = stmt;
        self.out.globals_by_name.insert(&self.out.symbols, id);
    }

    fn first_definition_stmt(&self, symbol: usize) -> usize {
        self.first_definition.get(symbol).copied().unwrap_or(0)
    }

    /// The global `name`: its symbol and the statement that first defines it.
    fn global(&self, name: &str) -> Option<(usize, usize)> {
        match self.streamed {
            Some(find) => find(name),
            None => {
                let id = self.out.global(name)?;
                Some((id, self.first_definition_stmt(id)))
            }
        }
    }

    /// Symbol `id`, made by this resolver.
    fn symbol_mut(&mut self, id: usize) -> Option<&mut Symbol> {
        self.out.symbols.get_mut(id.checked_sub(self.base)?)
    }

    fn reference(&mut self, span: Span, symbol: usize, before_definition: bool) {
        self.out.references.push(Reference {
            span,
            symbol,
            before_definition,
        });
    }

    fn top_level_name(&mut self, name: &str, span: Span, stmt: usize) {
        match self.global(name) {
            Some((id, first)) => self.reference(span, id, first >= stmt),
            None if name == "Machine" => {}
            None => self.out.unresolved.push((name.to_string(), span)),
        }
    }

    fn top_level_expr(&mut self, e: &Expr, stmt: usize) {
        self.expr(
            e,
            &mut |r, name, span, _| r.top_level_name(name, span, stmt),
            &mut Vec::new(),
        );
    }

    fn function(&mut self, index: usize, params: &[Param], body: &[Stmt]) {
        let mut frame = Frame { names: Vec::new() };
        for p in params {
            match frame.names.iter().find(|(n, _)| *n == p.name.name) {
                Some(&(_, id)) => {
                    if let Some(s) = self.symbol_mut(id) {
                        s.defs.push(p.name.span)
                    }
                }
                None => {
                    let id =
                        self.new_symbol(&p.name, SymbolKind::Parameter, Scope::Function(index));
                    frame.names.push((p.name.name.clone(), id));
                }
            }
        }
        for stmt in body {
            for e in stmt.exprs() {
                self.body_expr(e, &frame);
            }
            if let StmtKind::Assign { name, .. } = &stmt.kind {
                match frame.names.iter().find(|(n, _)| *n == name.name) {
                    Some(&(_, id)) => {
                        if let Some(s) = self.symbol_mut(id) {
                            s.defs.push(name.span)
                        }
                    }
                    None => {
                        let id = self.new_symbol(name, SymbolKind::Local, Scope::Function(index));
                        frame.names.push((name.name.clone(), id));
                    }
                }
            }
        }
    }

    fn new_symbol(&mut self, name: &Ident, kind: SymbolKind, scope: Scope) -> usize {
        self.out.symbols.push(Symbol {
            name: name.name.clone(),
            kind,
            defs: Defs::one(name.span),
            scope,
        });
        self.base + self.out.symbols.len() - 1
    }

    fn body_expr(&mut self, e: &Expr, frame: &Frame) {
        // (Borrowed: the frame is not part of the resolver.)
        let locals = &frame.names;
        self.expr(
            e,
            &mut |r, name, span, _| {
                if let Some(&(_, id)) = locals.iter().find(|(n, _)| n == name) {
                    r.reference(span, id, false);
                } else if let Some((id, _)) = r.global(name) {
                    r.reference(span, id, false);
                } else if name != "Machine" {
                    r.out.unresolved.push((name.to_string(), span));
                }
            },
            &mut Vec::new(),
        );
    }

    /// Walks an expression, resolving comprehension variables itself and
    /// every other name through `lookup`.
    #[allow(clippy::type_complexity)]
    fn expr(
        &mut self,
        e: &Expr,
        lookup: &mut dyn FnMut(&mut Resolver, &str, Span, ()),
        loop_vars: &mut Vec<(String, usize)>,
    ) {
        match &e.kind {
            ExprKind::Name(name) => {
                if let Some(&(_, id)) = loop_vars.iter().rev().find(|(n, _)| n == name) {
                    self.reference(e.span, id, false);
                } else {
                    lookup(self, name, e.span, ());
                }
            }
            ExprKind::Comprehension { body, var, iter } => {
                self.expr(iter, lookup, loop_vars);
                let id = self.new_symbol(var, SymbolKind::LoopVar, Scope::Global);
                loop_vars.push((var.name.clone(), id));
                self.expr(body, lookup, loop_vars);
                loop_vars.pop();
            }
            ExprKind::Int(_)
            | ExprKind::Bool(_)
            | ExprKind::Proc(_)
            | ExprKind::Mem(_)
            | ExprKind::Star => {}
            ExprKind::Unpack(a) | ExprKind::Neg(a) | ExprKind::Paren(a) => {
                self.expr(a, lookup, loop_vars)
            }
            ExprKind::Prop { base, .. } => self.expr(base, lookup, loop_vars),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs, lookup, loop_vars);
                self.expr(rhs, lookup, loop_vars);
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
                ..
            } => {
                self.expr(cond, lookup, loop_vars);
                self.expr(then, lookup, loop_vars);
                self.expr(otherwise, lookup, loop_vars);
            }
            ExprKind::Tuple(items) => items.iter().for_each(|i| self.expr(i, lookup, loop_vars)),
            ExprKind::Call { callee, args } => {
                self.expr(callee, lookup, loop_vars);
                args.iter().for_each(|a| self.expr(a, lookup, loop_vars));
            }
            ExprKind::Index { base, indices } => {
                self.expr(base, lookup, loop_vars);
                indices.iter().for_each(|i| self.expr(i, lookup, loop_vars));
            }
            ExprKind::Slice { base, lo, hi, .. } => {
                self.expr(base, lookup, loop_vars);
                if let Some(lo) = lo {
                    self.expr(lo, lookup, loop_vars);
                }
                if let Some(hi) = hi {
                    self.expr(hi, lookup, loop_vars);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    fn names(src: &str) -> (Resolved, String) {
        let p = parse(src);
        assert!(!p.has_errors(), "{:?}", p.diagnostics);
        (resolve(&p.program), src.to_string())
    }

    #[test]
    fn resolves_globals_params_locals_and_loop_vars() {
        let src = "m = Machine(GPU);\ndef f(Task t) { x = t.ipoint; y = tuple(i + x[0] for i in m.size); return m[*y]; }\nIndexTaskMap a f;\n";
        let (r, src) = names(src);
        let m = r.global("m").unwrap();
        assert_eq!(r.occurrences(m).len(), 3);
        let f = r.global("f").unwrap();
        assert_eq!(r.symbols[f].kind, SymbolKind::Function);
        assert_eq!(r.occurrences(f).len(), 2);
        let t_use = src.find("t.ipoint").unwrap();
        let t = r.symbol_at(t_use).unwrap();
        assert_eq!(r.symbols[t].kind, SymbolKind::Parameter);
        let i_use = src.find("i + x").unwrap();
        assert_eq!(
            r.symbols[r.symbol_at(i_use).unwrap()].kind,
            SymbolKind::LoopVar
        );
        assert!(r.unresolved.is_empty());
    }

    #[test]
    fn order_matters_at_top_level_only() {
        let (r, _) =
            names("IndexTaskMap a f;\nx = y;\ny = 1;\ndef f(Task t) { return z; }\nz = 2;\n");
        let late: Vec<_> = r
            .references
            .iter()
            .filter(|r| r.before_definition)
            .collect();
        assert_eq!(late.len(), 2, "f and y are used before their definitions");
        assert!(r.unresolved.is_empty(), "z resolves inside the body");
    }

    #[test]
    fn unknown_names_are_reported() {
        let (r, _) = names("def f(Task t) { return mgpu[0, 0]; }\n");
        assert_eq!(r.unresolved.len(), 1);
        assert_eq!(r.unresolved[0].0, "mgpu");
    }
}
