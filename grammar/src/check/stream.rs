//! The streaming check: [`crate::report`]'s diagnostics from two passes
//! over the file's statements, each statement's tree forgotten once it is
//! handled (`mapwright check` without an application, whose peak memory
//! was the whole tree, the names and the checker's tables: 25-38 times the
//! input on a file of one-line statements; see bench/memory).
//!
//! - Pass one parses each top-level statement and keeps, per global name,
//!   one compact entry ([`Globals`]: where it is first defined, what a
//!   function body sees of it, whether an assignment defines it), reports
//!   the second definitions, and keeps the function definitions' headers
//!   (calls and mapping statements read a function's parameters) and where
//!   each definition's parse begins: a call that infers a function's
//!   return type before pass two reaches the definition parses its body
//!   again ([`crate::parser::parse_one_at`]). Trees of every function
//!   were 16 times a file of functions.
//! - Pass two parses the file again and, per statement, resolves its names
//!   against those globals ([`crate::resolve::resolve_statement`]), types it
//!   with the same [`Checker`] as the whole-file check, and reports its
//!   unused locals and shadowed rules; the syntax diagnostics are
//!   collected here. Unused globals and undefined names are reported at
//!   the end, from the entries and the names kept (spans).
//!
//! The result equals [`super::check_packed`] on the whole tree: the same
//! diagnostics, and the same ones left out past the cap. The whole-file
//! check pushes its diagnostics one kind after another (second
//! definitions, statements, undefined names, uses before assignment,
//! unused globals, unused locals, shadowed rules) and keeps the first
//! [`MAX_DIAGNOSTICS`]; here each kind is found in that kind's own order
//! but the kinds interleave, so each is collected apart (at most the cap
//! of each is kept, the rest counted; the whole-file passes do not even
//! build those, the statements' checks build them as the whole-file
//! check does) and the cap is applied kind by kind at the end
//! ([`Collected::finish`]). `grammar/tests/properties.rs` compares the two
//! (`report` and `report_whole`) on the corpus, cuts and mutations of it,
//! generated programs, arbitrary bytes and past the cap of each kind.

use std::collections::hash_map::Entry;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use super::names::{
    mapping_keys, reported_when_unused, second_definition, shadowed_rule, undefined_name, unused,
    used_before_assignment, RuleKey,
};
use super::{machine_ctor_dims, memo, Checker, Ty};
use crate::ast::{Program, Stmt, StmtKind};
use crate::diagnostic::{Diagnostic, Dropped, MAX_DIAGNOSTICS};
use crate::fast_hash::{FastHasher, FastMap};
use crate::packed::PackedDiagnostics;
use crate::parser::{parse_one_at, EachStmt, PackedPair, ResumePoint};
use crate::resolve::{resolve_statement, Resolved, SymbolKind};
use crate::suggest::{closest_in_sorted, sort_by_length_then_name};
use crate::Span;

/// One global name: an assignment's or a function's, at top level.
#[derive(Debug, Clone, Copy)]
pub(super) struct Global {
    /// The name where it is first defined.
    name: Span,
    /// The index of that statement.
    first_stmt: u32,
    /// Whether some top-level assignment defines it.
    pub(super) assigned: bool,
    /// Whether some name refers to it.
    referenced: bool,
    /// Whether a mapping statement names it.
    used_by_mapping: bool,
    /// What a function body sees of it before its assignment is checked:
    /// a machine model from its constructor, a function, or unknown.
    late: Late,
    /// Its type once its first definition is checked ([`PackedTy`]).
    so_far: PackedTy,
}

impl Global {
    /// Whether the first definition is a function's.
    fn function(&self) -> bool {
        self.late == Late::Function
    }

    /// What a function body sees of the global before its assignment is
    /// checked.
    pub(super) fn late(&self) -> Ty {
        match self.late {
            Late::Machine => Ty::MSpace(Some(2)),
            Late::Function => Ty::Function,
            Late::Unknown => Ty::Unknown,
        }
    }
}

/// [`Global::late`], in a byte (a global's entry is most of what the
/// streaming check holds on a file of one-line assignments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Late {
    Machine,
    Function,
    Unknown,
}

impl Late {
    fn of(ty: Ty) -> Late {
        match ty {
            Ty::MSpace(Some(2)) => Late::Machine,
            Ty::Function => Late::Function,
            _ => Late::Unknown,
        }
    }
}

/// An `Option<Ty>` in 8 bytes instead of 16: the variant in the low byte,
/// a length (`Tuple`, `MSpace`, `Spread`) in the rest, one more than the
/// length (0: not known). A length of 2^55 or more does not fit (a tuple
/// spread into itself doubles in a line, so a text can make one): such a
/// type is [`PackedTy::WIDE`], kept whole in [`Globals::wide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PackedTy(u64);

impl PackedTy {
    const NONE: PackedTy = PackedTy(0);
    const WIDE: PackedTy = PackedTy(13);

    /// `ty` packed, if its length fits.
    fn new(ty: Ty) -> Option<PackedTy> {
        let mut fits = true;
        let mut len = |n: Option<usize>| match n {
            Some(n) if (n as u64) < (1 << 55) => (n as u64 + 1) << 8,
            Some(_) => {
                fits = false;
                0
            }
            None => 0,
        };
        let packed = PackedTy(match ty {
            Ty::Int => 1,
            Ty::Bool => 2,
            Ty::Tuple(n) => 3 | len(n),
            Ty::Task => 4,
            Ty::MSpace(n) => 5 | len(n),
            Ty::Processor => 6,
            Ty::ProcKind => 7,
            Ty::MemKind => 8,
            Ty::Star => 9,
            Ty::Spread(n) => 10 | len(n),
            Ty::Function => 11,
            Ty::Unknown => 12,
        });
        fits.then_some(packed)
    }

    fn get(self) -> Option<Ty> {
        let len = match self.0 >> 8 {
            0 => None,
            n => usize::try_from(n - 1).ok(),
        };
        Some(match self.0 & 0xff {
            1 => Ty::Int,
            2 => Ty::Bool,
            3 => Ty::Tuple(len),
            4 => Ty::Task,
            5 => Ty::MSpace(len),
            6 => Ty::Processor,
            7 => Ty::ProcKind,
            8 => Ty::MemKind,
            9 => Ty::Star,
            10 => Ty::Spread(len),
            11 => Ty::Function,
            12 => Ty::Unknown,
            _ => return None,
        })
    }
}

/// The file's globals, in the order of their first definitions (the
/// whole-file resolver's symbol numbers), with an index by name. Names
/// are spans of the text, not copies.
pub(super) struct Globals<'a> {
    source: &'a str,
    entries: Vec<Global>,
    index: hashbrown::HashTable<u32>,
    hasher: BuildHasherDefault<FastHasher>,
    /// The types too long for a [`PackedTy`], by global number.
    wide: FastMap<u32, Ty>,
    /// Where each function definition's parse begins, in the order of the
    /// checker's `positions`: pass one keeps only their headers, and a
    /// body is parsed again when a call infers its return type before the
    /// definition is checked ([`Globals::function_body`]).
    function_starts: Vec<ResumePoint>,
    /// The bodies parsed again most recently (at most [`REPARSED_KEPT`],
    /// the latest last): a chain of calls to later functions infers each
    /// one's return type from the next one's body, up to 16 deep, so the
    /// same few bodies are asked for again and again (20,000 chained
    /// functions: 1.1 s without them).
    reparsed: std::cell::RefCell<Vec<(usize, Arc<Stmt>)>>,
}

/// How many bodies parsed again [`Globals`] keeps.
const REPARSED_KEPT: usize = 32;

impl<'a> Globals<'a> {
    fn new(source: &'a str) -> Globals<'a> {
        Globals {
            source,
            entries: Vec::new(),
            index: hashbrown::HashTable::new(),
            hasher: BuildHasherDefault::default(),
            wide: FastMap::default(),
            function_starts: Vec::new(),
            reparsed: Default::default(),
        }
    }

    /// The whole tree of the `p`th function definition, parsed again.
    pub(super) fn function_body(&self, p: usize) -> Option<Arc<Stmt>> {
        let mut kept = self.reparsed.borrow_mut();
        if let Some(at) = kept.iter().position(|(q, _)| *q == p) {
            let entry = kept.remove(at);
            let body = entry.1.clone();
            kept.push(entry);
            return Some(body);
        }
        let body = parse_one_at(self.source, *self.function_starts.get(p)?)?;
        if kept.len() == REPARSED_KEPT {
            kept.remove(0);
        }
        kept.push((p, body.clone()));
        Some(body)
    }

    fn name(&self, i: usize) -> &'a str {
        self.entries.get(i).map_or("", |g| g.name.text(self.source))
    }

    /// The number of global `name`.
    fn find(&self, name: &str) -> Option<usize> {
        let hash = std::hash::BuildHasher::hash_one(&self.hasher, name);
        let found = self.index.find(hash, |&i| self.name(i as usize) == name);
        found.map(|&i| i as usize)
    }

    pub(super) fn get(&self, name: &str) -> Option<&Global> {
        self.entries.get(self.find(name)?)
    }

    /// Records a definition of `name` by statement `stmt` (a function's
    /// when `late` is [`Ty::Function`]); the first one found, if the name
    /// has one already.
    fn define(&mut self, name: Span, stmt: usize, late: Ty) -> Option<Global> {
        let text = name.text(self.source);
        if let Some(i) = self.find(text) {
            return self.entries.get(i).copied();
        }
        let Ok(number) = u32::try_from(self.entries.len()) else {
            return None;
        };
        // A quarter more room at a time: the entries are most of what the
        // check holds on a file of one-line assignments, and a doubling
        // leaves up to half of them empty.
        if self.entries.len() == self.entries.capacity() {
            self.entries.reserve_exact((self.entries.len() / 4).max(8));
        }
        self.entries.push(Global {
            name,
            first_stmt: u32::try_from(stmt).unwrap_or(u32::MAX),
            assigned: false,
            referenced: false,
            used_by_mapping: false,
            late: Late::of(late),
            so_far: PackedTy::NONE,
        });
        let (source, entries, hasher) = (self.source, &self.entries, &self.hasher);
        let rehash = |&i: &u32| {
            let name = entries.get(i as usize).map_or("", |g| g.name.text(source));
            std::hash::BuildHasher::hash_one(hasher, name)
        };
        self.index.insert_unique(rehash(&number), number, rehash);
        None
    }

    /// The checker's write of a global's type: the first one stays.
    pub(super) fn assign(&mut self, name: &str, ty: Ty) {
        let Some(i) = self.find(name) else {
            return;
        };
        let Some(g) = self.entries.get_mut(i) else {
            return;
        };
        if g.so_far == PackedTy::NONE {
            g.so_far = PackedTy::new(ty).unwrap_or_else(|| {
                self.wide.insert(i as u32, ty);
                PackedTy::WIDE
            });
        }
    }

    /// The type of global `name` once its first definition is checked.
    pub(super) fn so_far(&self, name: &str) -> Option<Ty> {
        let i = self.find(name)?;
        match self.entries.get(i)?.so_far {
            PackedTy::WIDE => self.wide.get(&(i as u32)).copied(),
            packed => packed.get(),
        }
    }
}

/// The kinds of diagnostics in the order the whole-file check pushes them
/// (see the module doc).
#[derive(Clone, Copy)]
enum Kind {
    SecondDefinition,
    Statement,
    Undefined,
    UsedBefore,
    UnusedGlobal,
    UnusedLocal,
    Shadowed,
}

const KINDS: usize = 7;

/// The diagnostics found, each with its kind, at most [`MAX_DIAGNOSTICS`]
/// built per kind (no more of one kind can be kept), the rest counted.
struct Collected<'s> {
    /// The text checked (the packed texts are templates of it, see
    /// [`PackedDiagnostics::push_in`]).
    source: &'s str,
    packed: PackedDiagnostics,
    /// The kind of each record of `packed`.
    kinds: Vec<u8>,
    built: [usize; KINDS],
    /// Per kind, those not built: the first span, and how many.
    over: [Dropped; KINDS],
}

impl<'s> Collected<'s> {
    /// Nothing found yet in `source` (the texts quote it: a `Collected`
    /// of the wrong source would make templates that fill in wrong, so
    /// there is no default).
    fn new(source: &'s str) -> Collected<'s> {
        Collected {
            source,
            packed: PackedDiagnostics::default(),
            kinds: Vec::new(),
            built: [0; KINDS],
            over: Default::default(),
        }
    }

    /// Whether a diagnostic of `kind` would be built (not only counted).
    fn wants(&self, kind: Kind) -> bool {
        self.built[kind as usize] < MAX_DIAGNOSTICS
    }

    fn push(&mut self, kind: Kind, d: &Diagnostic) {
        if self.wants(kind) {
            self.packed.push_in(d, self.source);
            self.kinds.push(kind as u8);
            self.built[kind as usize] += 1;
        } else {
            self.count(kind, d.span);
        }
    }

    /// A diagnostic of `kind` at `span`: built by `build` and kept while
    /// the kind may still be kept, only counted past that.
    fn add(&mut self, kind: Kind, span: Span, build: impl FnOnce() -> Diagnostic) {
        if self.wants(kind) {
            self.push(kind, &build());
        } else {
            self.count(kind, span);
        }
    }

    /// Counts one diagnostic of `kind` at `span`, not built.
    fn count(&mut self, kind: Kind, span: Span) {
        self.over[kind as usize].add(span, 1);
    }

    /// The list the whole-file check makes: the first [`MAX_DIAGNOSTICS`]
    /// in its order (kind by kind, each kind in the order found), one
    /// `I0001` for the rest, sorted by span, ties in that order.
    fn finish(self) -> PackedDiagnostics {
        let Collected {
            source: _,
            mut packed,
            kinds,
            built,
            over,
        } = self;
        // How many of each kind the cap keeps: the first ones, kind by kind.
        let mut room = MAX_DIAGNOSTICS;
        let take = built.map(|n| {
            let kept = n.min(room);
            room -= kept;
            kept
        });
        let mut dropped = Dropped::default();
        let mut seen = [0usize; KINDS];
        let mut kept = Vec::with_capacity(kinds.len().min(MAX_DIAGNOSTICS));
        for (i, &kind) in kinds.iter().enumerate() {
            let kind = usize::from(kind);
            if seen[kind] < take[kind] {
                kept.push(i as u32);
            } else {
                dropped.add(packed.span_of(i), 1);
            }
            seen[kind] += 1;
        }
        for over in over {
            dropped.add_all(over);
        }
        // Sorted by span; at the same span, in the whole-file check's order
        // (kind by kind, each in the order found).
        kept.sort_unstable_by_key(|&i| {
            let span = packed.span_of(i as usize);
            (span.start(), span.end(), kinds[i as usize], i)
        });
        packed.select(&kept);
        drop((kept, kinds));
        if let Some((first, n)) = dropped.0 {
            // Pushed last by the whole-file check: after those at its span.
            packed.insert_by_span(&crate::diagnostic::summary(first, n));
        }
        packed.finished();
        packed
    }
}

/// [`super::check_packed`] of `parse_tree_packed(source)`, and that
/// parse's syntax diagnostics, without holding the tree (see the module
/// doc): `((lexical, syntax), check)`.
pub(crate) fn report(source: &str) -> (PackedPair, PackedDiagnostics) {
    let lines = crate::line_index::LineStarts::new(source);
    let mut found = Collected::new(source);
    let mut globals = Globals::new(source);
    // Pass one: the globals, the second definitions, the functions.
    let mut functions = Program { stmts: Vec::new() };
    let mut positions = Vec::new();
    let mut first_stmt = None;
    each_statement(source, false, |i, stmt, at| {
        first_stmt.get_or_insert(stmt.span.start());
        let (name, function, late) = match &stmt.kind {
            StmtKind::Assign { name, value } => {
                (name, false, machine_ctor_dims(value).unwrap_or(Ty::Unknown))
            }
            StmtKind::FuncDef { name, .. } => (name, true, Ty::Function),
            _ => return,
        };
        if let Some(first) = globals.define(name.span, i, late) {
            found.add(Kind::SecondDefinition, name.span, || {
                let line = lines.line_of(first.name.start()) + 1;
                second_definition(
                    name,
                    stmt.span,
                    (first.name, first.function()),
                    line,
                    function,
                )
            });
        }
        if !function {
            if let Some(i) = globals.find(name.span.text(source)) {
                globals.entries[i].assigned = true;
            }
        } else {
            // The header only: the body is checked in pass two, from that
            // pass's tree, and parsed again if a call needs it before
            // (the trees of a file of functions were 16 times the file).
            functions.stmts.push(Arc::new(header_of(&stmt)));
            globals.function_starts.push(at);
            positions.push(i);
        }
    });
    let mut function_index: FastMap<&str, usize> = FastMap::default();
    for (stmt, &i) in functions.stmts.iter().zip(&positions) {
        if let StmtKind::FuncDef { name, .. } = &stmt.kind {
            function_index.entry(name.name.as_str()).or_insert(i);
        }
    }
    let no_names = Resolved::default();
    let mut checker = Checker::streaming(source, &functions, &positions, &no_names, lines);
    checker.functions = function_index;
    checker.stream = Some(globals);
    // Pass two: each statement's names, types, unused locals and rules.
    let mut pass = Pass::default();
    let syntax = each_statement(source, true, |i, stmt, at| {
        pass.statement(&mut checker, &mut found, i, &stmt, at);
    });
    pass.finish(&mut checker, &mut found, first_stmt);
    // (The tables go before the cap's selection, which allocates.)
    drop(checker);
    (syntax, found.finish())
}

/// Calls `each` with every top-level statement of `source` and its index,
/// as `parse_tree_packed` would number them (a statement that failed to
/// parse is left out, but for the first), and returns the lexical and
/// syntax diagnostics as it packs them (`collect`; otherwise none).
fn each_statement(
    source: &str,
    collect: bool,
    mut each: impl FnMut(usize, Arc<Stmt>, ResumePoint),
) -> PackedPair {
    let mut parse = EachStmt::reporting(source, collect);
    let mut index = 0;
    loop {
        let at = parse.resume_point();
        let Some(stmt) = parse.next_stmt() else {
            break;
        };
        if !collect {
            parse.new_diagnostics(|_, _| {});
        }
        if index > 0 && matches!(stmt.kind, StmtKind::Error) {
            continue;
        }
        each(index, stmt, at);
        index += 1;
    }
    if collect {
        parse.finish_packed()
    } else {
        PackedPair::default()
    }
}

/// A function definition without its body (the same statement otherwise).
fn header_of(stmt: &Stmt) -> Stmt {
    let kind = match &stmt.kind {
        StmtKind::FuncDef {
            name,
            params,
            body_span,
            ..
        } => StmtKind::FuncDef {
            name: name.clone(),
            params: params.clone(),
            body: Vec::new(),
            body_span: *body_span,
        },
        _ => StmtKind::Error,
    };
    Stmt {
        kind,
        span: stmt.span,
    }
}

/// Pass two's state between statements.
#[derive(Default)]
struct Pass<'a> {
    /// The names of the symbols the statements made (the candidates of
    /// "did you mean", with the globals'), as spans of the text.
    local_names: Vec<Span>,
    /// Undefined names (the first [`MAX_DIAGNOSTICS`]).
    undefined: Vec<Span>,
    /// Top-level uses of a later global (the first [`MAX_DIAGNOSTICS`]),
    /// with its number.
    used_before: Vec<(Span, usize)>,
    /// The first rule with each key.
    rules: FirstRules<'a>,
    keys: Vec<RuleKey<'a>>,
}

/// The first rule with each key, by the key's hash: where that statement's
/// parse begins and which of its keys it is. The keys themselves (borrowed
/// names, 72 bytes a rule with the span) made a file of a million `Task`
/// statements peak at 14 times its size (see bench/memory); a hash that
/// matches is confirmed on the statement parsed again ([`FirstRule::key`]).
struct FirstRules<'a> {
    by_hash: FastMap<u64, FirstRule>,
    /// The first rule of each key whose hash a different, earlier key
    /// already has (exact, and almost always empty).
    collided: FastMap<RuleKey<'a>, Span>,
    hash: fn(&RuleKey) -> u64,
}

impl Default for FirstRules<'_> {
    fn default() -> Self {
        FirstRules {
            by_hash: FastMap::default(),
            collided: FastMap::default(),
            hash: rule_hash,
        }
    }
}

impl<'a> FirstRules<'a> {
    /// The span of the first statement with `key`, or `None` when this
    /// one, `stmt` (whose parse began `at`; `key` is its `nth`), is the
    /// first and is now kept.
    fn earlier(
        &mut self,
        source: &'a str,
        key: &RuleKey<'a>,
        (stmt, at, nth): (Span, ResumePoint, usize),
    ) -> Option<Span> {
        match self.by_hash.entry((self.hash)(key)) {
            Entry::Vacant(slot) => {
                slot.insert(FirstRule {
                    at,
                    nth: nth as u32,
                });
                None
            }
            Entry::Occupied(first) => match first.get().key(source) {
                Some((wins, first_key)) if first_key == *key => Some(wins),
                _ => match self.collided.entry(*key) {
                    Entry::Vacant(slot) => {
                        slot.insert(stmt);
                        None
                    }
                    Entry::Occupied(first) => Some(*first.get()),
                },
            },
        }
    }
}

/// Where the first rule with some key is: its statement's resume point and
/// the key's place among that statement's keys ([`mapping_keys`]).
#[derive(Debug, Clone, Copy)]
struct FirstRule {
    at: ResumePoint,
    nth: u32,
}

impl FirstRule {
    /// The rule's statement span and its key, from the statement parsed
    /// again.
    fn key(self, source: &str) -> Option<(Span, RuleKey<'_>)> {
        let stmt = parse_one_at(source, self.at)?;
        let mut keys = Vec::new();
        mapping_keys(&stmt, source, &mut keys);
        Some((stmt.span, *keys.get(self.nth as usize)?))
    }
}

/// A key's hash, for [`FirstRules`].
fn rule_hash(key: &RuleKey) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = FastHasher::default();
    key.hash(&mut hasher);
    hasher.finish()
}

impl<'a> Pass<'a> {
    fn statement(
        &mut self,
        checker: &mut Checker<'a>,
        found: &mut Collected<'_>,
        index: usize,
        stmt: &Stmt,
        at: ResumePoint,
    ) {
        let source = checker.source;
        let Some(globals) = checker.stream.as_mut() else {
            return;
        };
        let base = globals.entries.len();
        let names = {
            let globals = &*globals;
            let find = |name: &str| {
                let i = globals.find(name)?;
                Some((i, globals.entries[i].first_stmt as usize))
            };
            resolve_statement(stmt, index, base, &find)
        };
        let mut referenced = vec![false; names.symbols.len()];
        for r in &names.references {
            match r.symbol.checked_sub(base) {
                Some(local) => {
                    if let Some(slot) = referenced.get_mut(local) {
                        *slot = true;
                    }
                }
                None => {
                    let g = &mut globals.entries[r.symbol];
                    g.referenced = true;
                    if r.before_definition && !g.function() {
                        if self.used_before.len() < MAX_DIAGNOSTICS {
                            self.used_before.push((r.span, r.symbol));
                        } else {
                            found.count(Kind::UsedBefore, r.span);
                        }
                    }
                }
            }
        }
        if let StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. } =
            &stmt.kind
        {
            if let Some(i) = globals.find(func.span.text(source)) {
                globals.entries[i].used_by_mapping = true;
            }
        }
        for (_, span) in &names.unresolved {
            if self.undefined.len() < MAX_DIAGNOSTICS {
                self.undefined.push(*span);
            } else {
                found.count(Kind::Undefined, *span);
            }
        }
        self.local_names
            .extend(names.symbols.iter().filter_map(|s| s.defs.first().copied()));

        // Typed as the whole-file check types it, with this statement's
        // symbols numbered from 0.
        // (Reset for every statement: the unused-symbol check below reads
        // the types of this statement's symbols.)
        checker.defined_at.clear();
        for (k, s) in names.symbols.iter().enumerate() {
            if s.scope != crate::resolve::Scope::Global {
                checker.defined_at.extend(s.defs.iter().map(|d| (*d, k)));
            }
        }
        checker.symbol_types = super::SymbolTypes::with_symbols(names.symbols.len());
        if memo::worth_recording(stmt) {
            checker.stmt_start = stmt.span.start();
            checker.stmt_index = index;
            checker.statement(index, stmt);
            for d in checker.diags.drain(..) {
                found.push(Kind::Statement, &d);
            }
        }

        for (k, s) in names.symbols.iter().enumerate() {
            if s.name.starts_with('_') || referenced[k] {
                continue;
            }
            let Some(&def) = s.defs.first() else {
                continue;
            };
            if !reported_when_unused(s.kind, checker.symbol_types.get(k)) {
                continue;
            }
            found.add(Kind::UnusedLocal, def, || unused(s.kind, &s.name, def));
        }

        self.keys.clear();
        mapping_keys(stmt, source, &mut self.keys);
        for (nth, key) in self.keys.iter().enumerate() {
            let wins = self.rules.earlier(source, key, (stmt.span, at, nth));
            if let Some(wins) = wins {
                found.add(Kind::Shadowed, stmt.span, || {
                    let line = checker.line(wins.start());
                    shadowed_rule(source, stmt.span, wins, &key.shown(), line)
                });
            }
        }
    }

    /// The whole-file findings: undefined names, uses before assignment,
    /// unused globals.
    fn finish(
        self,
        checker: &mut Checker<'a>,
        found: &mut Collected<'_>,
        first_stmt: Option<usize>,
    ) {
        // The rules are done with: freed before the names are sorted.
        let Pass {
            local_names,
            undefined,
            used_before,
            rules,
            keys,
        } = self;
        drop((rules, keys));
        let source = checker.source;
        // Taken, to be freed before the undefined names are answered.
        let Some(globals) = checker.stream.take() else {
            return;
        };
        // The kinds are pushed in any order: the list is sorted by span
        // and kind, and capped kind by kind, at the end
        // ([`Collected::finish`]).
        for (span, i) in &used_before {
            let g = &globals.entries[*i];
            let line = checker.line(g.name.start());
            found.push(
                Kind::UsedBefore,
                &used_before_assignment(globals.name(*i), *span, line),
            );
        }
        for (i, g) in globals.entries.iter().enumerate() {
            let name = globals.name(i);
            if name.starts_with('_') || g.referenced || (g.function() && g.used_by_mapping) {
                continue;
            }
            let kind = if g.function() {
                SymbolKind::Function
            } else {
                SymbolKind::Global
            };
            found.add(Kind::UnusedGlobal, g.name, || unused(kind, name, g.name));
        }
        if !undefined.is_empty() {
            // As places in the text (8 bytes each, not a 16-byte `&str`).
            let mut candidates: Vec<Span> = globals.entries.iter().map(|g| g.name).collect();
            candidates.extend(local_names);
            // The globals' table and index are done with: freed before
            // the answers are packed (they were a seventh of the peak of
            // 1 KB of undefined names, see bench/memory).
            drop(globals);
            let text = |s: &Span| s.text(source);
            sort_by_length_then_name(&mut candidates, text);
            // Each name is answered once: the undefined names in order of
            // name (the first use of each first), one answer per run. No
            // map of names, answers or names seen: those were several
            // times a small file (see bench/memory).
            let name = |i: u32| undefined[i as usize].text(source);
            let mut by_name: Vec<u32> = (0..undefined.len() as u32).collect();
            by_name.sort_by_key(|&i| name(i));
            // Per undefined name: the answer's candidate number (or
            // `NONE`), and `FIRST` on a name's first use.
            const NONE: u32 = u32::MAX >> 1;
            const FIRST: u32 = 1 << 31;
            let mut answers = vec![NONE; by_name.len()];
            for uses in by_name.chunk_by(|&a, &b| name(a) == name(b)) {
                let answer =
                    closest_in_sorted(name(uses[0]), &candidates, text).map_or(NONE, |c| c as u32);
                for (k, &i) in uses.iter().enumerate() {
                    answers[i as usize] = answer | if k == 0 { FIRST } else { 0 };
                }
            }
            drop(by_name);
            for (span, answer) in undefined.iter().zip(answers) {
                let suggestion = candidates.get((answer & !FIRST) as usize).map(text);
                let d = undefined_name(
                    source,
                    span.text(source),
                    *span,
                    suggestion,
                    (answer & FIRST != 0).then_some(first_stmt.unwrap_or(0)),
                );
                found.push(Kind::Undefined, &d);
            }
        }
    }
}

impl<'a> Checker<'a> {
    /// A checker for the streaming check: `functions` are the file's
    /// function definitions, at statement indices `positions`; the globals
    /// come with [`Checker::stream`], the names statement by statement.
    fn streaming(
        source: &'a str,
        functions: &'a Program,
        positions: &'a [usize],
        no_names: &'a Resolved,
        lines: crate::line_index::LineStarts,
    ) -> Checker<'a> {
        Checker {
            positions: Some(positions),
            ..Checker::blank(
                source,
                functions,
                no_names,
                lines,
                crate::diagnostic::CappedDiagnostics::default(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_types_come_back_equal() {
        let types = [
            Ty::Int,
            Ty::Bool,
            Ty::Tuple(None),
            Ty::Tuple(Some(0)),
            Ty::Tuple(Some(3)),
            Ty::Task,
            Ty::MSpace(None),
            Ty::MSpace(Some(2)),
            Ty::Processor,
            Ty::ProcKind,
            Ty::MemKind,
            Ty::Star,
            Ty::Spread(Some(u32::MAX as usize)),
            Ty::Spread(None),
            Ty::Function,
            Ty::Unknown,
        ];
        for ty in types {
            let packed = PackedTy::new(ty).expect("fits");
            assert_eq!(packed.get(), Some(ty));
            assert_ne!(packed, PackedTy::NONE);
            assert_ne!(packed, PackedTy::WIDE);
        }
        assert_eq!(PackedTy::new(Ty::Tuple(Some(1 << 55))), None);
        assert_eq!(PackedTy::new(Ty::Spread(Some(usize::MAX))), None);
        let mut globals = Globals::new("t = 1;");
        globals.define(Span::new(0, 1), 0, Ty::Unknown);
        globals.assign("t", Ty::Tuple(Some(usize::MAX)));
        globals.assign("t", Ty::Int);
        assert_eq!(globals.so_far("t"), Some(Ty::Tuple(Some(usize::MAX))));
        assert_eq!(PackedTy::NONE.get(), None);
        for ty in [Ty::MSpace(Some(2)), Ty::Function, Ty::Unknown] {
            assert_eq!(
                Global {
                    name: Span::START,
                    first_stmt: 0,
                    assigned: false,
                    referenced: false,
                    used_by_mapping: false,
                    late: Late::of(ty),
                    so_far: PackedTy::NONE,
                }
                .late(),
                ty
            );
        }
    }

    #[test]
    fn rules_whose_hashes_collide_are_still_told_apart() {
        let source = "Task a GPU;\nTask b GPU;\nTask a CPU;\n# x\nTask b, c GPU;\nTask c GPU;\n";
        for hash in [rule_hash as fn(&RuleKey) -> u64, |_: &RuleKey| 7] {
            let mut rules = FirstRules {
                hash,
                ..FirstRules::default()
            };
            let mut found = Vec::new();
            each_statement(source, false, |_, stmt, at| {
                let mut keys = Vec::new();
                mapping_keys(&stmt, source, &mut keys);
                for (nth, key) in keys.iter().enumerate() {
                    if let Some(wins) = rules.earlier(source, key, (stmt.span, at, nth)) {
                        found.push((stmt.span.text(source), key.shown(), wins.text(source)));
                    }
                }
            });
            assert_eq!(
                found,
                [
                    ("Task a CPU;", "task `a`".to_string(), "Task a GPU;"),
                    ("Task b, c GPU;", "task `b`".to_string(), "Task b GPU;"),
                    ("Task c GPU;", "task `c`".to_string(), "Task b, c GPU;"),
                ]
            );
        }
    }

    #[test]
    fn a_global_takes_24_bytes() {
        // Most of what the check holds on a file of one-line assignments.
        assert_eq!(std::mem::size_of::<Global>(), 24);
    }
}
