//! Incremental checking: the per-statement work of the last check, reused
//! for statements an edit did not change.
//!
//! Names are file-global in this DSL, so a statement's findings depend on
//! more than its own text. While the checker types one top-level statement
//! it records, in order, every fact it reads from outside the statement
//! (the type of a global so far, a function's definition and inferred
//! return type, a symbol's index, a line number, a line's extent in the
//! text) and every change it makes to the checker's shared tables (globals,
//! inferred returns, symbol types), next to the diagnostics it raised.
//!
//! The next check reuses that record for a statement with the same text
//! when every recorded read gives the same answer in the new file (answered
//! as the statement would have seen them: after its own earlier writes).
//! The statement's computation is a function of its own tree, which its
//! text determines up to a shift of every span (top-level statements are
//! parsed independently, see [`crate::incremental`]) unless a syntax
//! error's recovery read the tokens after it: a statement with a syntax
//! error replays only its own record, and only if the re-parse reused
//! its tree ([`Previous::window`]). Given the tree and those answers, it
//! would take the same path: the writes are replayed and the
//! diagnostics moved by the statement's shift (only those the cap on kept
//! diagnostics keeps are copied; the others are counted at their moved
//! span, as pushing them would). Positions outside the
//! statement are recorded relative to its start, so a statement and the
//! function it calls that moved together still match; line numbers are
//! absolute, so a change to them re-checks the statement. Symbol indices
//! move when a symbol is added or removed earlier in the file: the replay
//! maps each index the statement read to its new value and writes the
//! symbol types under the new indices.
//!
//! A record the edit cannot reach (outside the window, reading no name
//! the edit can have changed, no position across it) is trusted: only its
//! reads of symbol numbers are made (see `check::summary`).
//!
//! The whole-file passes (second definitions, undefined and unused names,
//! shadowed rules) always run; they read the resolved names, not the
//! statements' types (except parameter types, which come from the replayed
//! writes). `tests/incremental_check.rs` checks that the result equals a
//! full check after random edit sequences.

use crate::fast_hash::FastMap;
use std::cell::{Cell, OnceCell};
use std::sync::Arc;

use super::summary::{name_bit, EditScope, Summary, Unchanged};
use super::{Checker, Ty};
use crate::ast::{Stmt, StmtKind};
use crate::diagnostic::{line_extent, Diagnostic};
use crate::incremental::{shift_diagnostic, shift_span};
use crate::suggest::Suggestions;
use crate::Span;

/// What one check remembers for the next: the record of each top-level
/// statement it typed. Cheap to clone (the records are shared).
#[derive(Debug, Clone, Default)]
pub struct CheckMemo {
    stmts: Vec<StmtMemo>,
    /// The suggestions for undefined names (updated, not recomputed, by
    /// the next check).
    suggestions: Option<Arc<Suggestions>>,
    /// How many diagnostics the check kept: the next check's list is
    /// allocated with this much room.
    pub(super) diagnostics: usize,
    /// What the shadowed-rule pass found (kept by the language server's
    /// checks only).
    pub(super) shadowed: Option<Arc<ShadowFindings>>,
    /// The file's function names in order (see [`function_names`]).
    pub(super) function_names: Option<Arc<[Box<str>]>>,
}

/// The function names of a file, `names` in order, for the memo, and
/// whether they are those the previous check `kept` (then its list is
/// shared, not copied). Why: a statement naming an undefined function
/// records the nearest function name; replaying it asked again over every
/// function of the file on every keystroke (2 % of a keystroke in the
/// server on a big file, `perf`), though a keystroke almost never changes
/// a function's name. Compared name by name, so no hash can collide. (The
/// names are gathered by the walk that makes `check::definitions`: a walk
/// of every statement of its own was 3-4 % of a keystroke's check.)
pub(super) fn function_names<'n>(
    names: impl Iterator<Item = &'n str> + Clone,
    kept: Option<&Arc<[Box<str>]>>,
    remember: bool,
) -> (Option<Arc<[Box<str>]>>, bool) {
    if let Some(kept) = kept {
        let mut kept_names = kept.iter();
        let same = names
            .clone()
            .all(|n| kept_names.next().is_some_and(|k| **k == *n))
            && kept_names.next().is_none();
        if same {
            return (Some(kept.clone()), true);
        }
    }
    (remember.then(|| names.map(Box::from).collect()), false)
}

/// The shadowed-rule pass's findings, before they become diagnostics:
/// the next check reuses them while no rule statement was edited (see
/// `Checker::shadowed_mapping_statements`).
#[derive(Debug, Default)]
pub(super) struct ShadowFindings {
    /// The index of each rule statement, ascending. Why kept: whether an
    /// edit touched a rule is then a search in the re-parsed window, where
    /// counting the rules again walked every statement of the file on
    /// every keystroke. In the language server, whose caches are cold by
    /// the next keystroke, a build without this pass answered 0.2-0.3 ms
    /// sooner (p50, 5,000-line files); that walk was the part of it that
    /// ran on every keystroke (`bench/lsp_bench/RESULTS.md`).
    pub(super) rule_at: Vec<u32>,
    /// Each key of each rule statement, in order: the statement's index
    /// and the key's hash (`shadowed::key_hash`). Why kept: when a rule is
    /// edited, only the rules that share a key with the old or the new
    /// window are read again (see `check::shadowed`).
    pub(super) keys: Vec<(u32, u64)>,
    /// Each shadowed rule, in the order they are reported.
    pub(super) found: Vec<Shadowed>,
}

/// A rule statement that an earlier one with the same key shadows.
#[derive(Debug, Clone)]
pub(super) struct Shadowed {
    /// The statement shadowed.
    pub(super) at: Span,
    /// The earlier statement that wins.
    pub(super) wins: Span,
    /// The key as the message shows it.
    pub(super) shown: Arc<str>,
    /// The key's hash, and its place among its statement's keys.
    pub(super) key: u64,
    pub(super) place: u32,
}

impl ShadowFindings {
    /// Whether the edit that re-parsed `window` (the new parse `now`)
    /// left every rule statement as it was: none among the old statements
    /// it replaced, none among the new ones.
    pub(super) fn untouched_by(
        &self,
        window: &crate::incremental::Window,
        now: &[std::sync::Arc<Stmt>],
    ) -> bool {
        let first_after = self
            .rule_at
            .partition_point(|&i| (i as usize) < window.first);
        let old_in_window = self
            .rule_at
            .get(first_after)
            .is_some_and(|&i| (i as usize) < window.old_end_stmt);
        !old_in_window
            && now
                .get(window.first..window.new_end_stmt)
                .is_some_and(|new| !new.iter().any(|s| super::names::is_rule(s)))
    }

    /// These findings for the text after an edit that re-parsed `window`
    /// and left every rule statement outside it: those after it moved.
    pub(super) fn moved(&self, window: &crate::incremental::Window) -> ShadowFindings {
        let index = |i: u32| moved_index(i, window);
        ShadowFindings {
            rule_at: self.rule_at.iter().map(|&i| index(i)).collect(),
            keys: self.keys.iter().map(|&(i, key)| (index(i), key)).collect(),
            found: self.moved_found(window).collect(),
        }
    }

    /// The findings, for the text after an edit that re-parsed `window`,
    /// of the rules outside it: those after it moved.
    pub(super) fn moved_found<'s>(
        &'s self,
        window: &'s crate::incremental::Window,
    ) -> impl Iterator<Item = Shadowed> + 's {
        let shift = |mut span: Span| {
            if span.start() >= window.old_end_offset {
                crate::incremental::shift_span(&mut span, window.delta);
            }
            span
        };
        self.found.iter().map(move |f| Shadowed {
            at: shift(f.at),
            wins: shift(f.wins),
            ..f.clone()
        })
    }
}

/// Where old top-level statement `i`, outside `window`, is after the edit:
/// those after it moved by as many statements as it gained.
pub(super) fn moved_index(i: u32, window: &crate::incremental::Window) -> u32 {
    if (i as usize) < window.old_end_stmt {
        i
    } else {
        let added = window.new_end_stmt as i64 - window.old_end_stmt as i64;
        (i64::from(i) + added) as u32
    }
}

impl CheckMemo {
    pub(super) fn suggestions(&self) -> Option<Arc<Suggestions>> {
        self.suggestions.clone()
    }

    pub(super) fn keep_suggestions(&mut self, suggestions: Option<Arc<Suggestions>>) {
        self.suggestions = suggestions;
    }

    /// How many statements the memo holds records for.
    pub fn len(&self) -> usize {
        self.stmts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stmts.is_empty()
    }
}

/// The previous check of an edited file: its memo and the text it checked,
/// and where the re-parse that made the new parse replaced statements.
#[derive(Debug, Clone, Copy)]
pub struct Previous<'p> {
    pub memo: &'p CheckMemo,
    pub source: &'p str,
    /// The re-parse's window (`Reparse::Incremental`); `None` when the new
    /// parse reused nothing of the old one (a full parse), or is not known
    /// to have. Statements outside the window are the old trees, moved; a
    /// statement parsed again may have a different tree for the same text
    /// where a syntax error's recovery read the tokens after it (see
    /// [`OldRecords::may_replay`]).
    pub window: Option<crate::incremental::Window>,
}

/// How much of a check was reused, for benchmarks and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reuse {
    /// Statements whose record was replayed.
    pub replayed: usize,
    /// Of those, the records trusted: replayed with only their reads of
    /// symbol numbers made, since the edit could not have changed the
    /// others (`check::summary`).
    pub trusted: usize,
    /// Statements typed again.
    pub checked: usize,
    /// Whether the old names were reused, and resolved again only where
    /// the re-parse replaced statements or what they use changed
    /// ([`super::check_after_reparse`], `resolve::resolve_after_edit`).
    pub names_reused: bool,
    /// Whether the last check's shadowed rules were reused (no rule
    /// statement was edited).
    pub shadowed_reused: bool,
    /// How many of the whole-file passes' diagnostics were taken over
    /// from the last check (see `check::carry`).
    pub carried: usize,
}

/// One statement's record, where the statement now is.
#[derive(Debug, Clone)]
struct StmtMemo {
    span: Span,
    record: Arc<Record>,
}

#[derive(Debug)]
struct Record {
    /// The statement's start when the record was made (its diagnostics'
    /// spans are as they were then).
    origin: usize,
    events: Vec<Event>,
    diags: Vec<Diagnostic>,
    /// Its reads in brief: whether an edit can have changed them.
    summary: Summary,
}

/// A read or a write, in the order the statement's check made them.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Event {
    Read(Read),
    Write(Write),
}

/// A fact read from outside the statement, with the answer it got.
/// Offsets are relative to the statement's start.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Read {
    /// The type of a global assigned so far.
    Global { name: Box<str>, ty: Option<Ty> },
    /// What a function body sees of a global assigned later.
    LateGlobal { name: Box<str>, ty: Option<Ty> },
    /// An inferred return type, if known yet.
    Return { name: Box<str>, ty: Option<Ty> },
    /// The first definition of a function: whether it comes after the
    /// statement, and its header (`def name(params)`), which gives its
    /// name and parameters.
    Function {
        name: Box<str>,
        found: Option<(bool, Box<str>)>,
    },
    /// Where that definition is (relative start, length): read when a
    /// diagnostic points into it.
    FunctionAt {
        name: Box<str>,
        at: Option<(isize, usize)>,
    },
    /// The whole definition, for its body (at a relative start, with a
    /// length), which must be unchanged: read when its return type is
    /// inferred on demand.
    FunctionBody {
        name: Box<str>,
        at: Option<(isize, usize)>,
    },
    /// Whether some top-level assignment defines `name`.
    Assigned { name: Box<str>, yes: bool },
    /// The function name closest to `name`.
    ClosestFunction {
        name: Box<str>,
        best: Option<Box<str>>,
    },
    /// The index of the global symbol `name`.
    GlobalId { name: Box<str>, id: Option<usize> },
    /// The index of the parameter or local defined at a (relative) span.
    DefinedAt {
        at: (isize, isize),
        id: Option<usize>,
    },
    /// The 1-based line of a (relative) offset.
    Line { at: isize, line: usize },
    /// The lines around a (relative) span, as a relative range.
    LineExtent {
        at: (isize, isize),
        extent: (isize, isize),
    },
}

impl Read {
    /// The recorded index of a `GlobalId` or `DefinedAt` read.
    fn id(&self) -> Option<usize> {
        match self {
            Read::GlobalId { id, .. } | Read::DefinedAt { id, .. } => *id,
            _ => None,
        }
    }
}

/// A change to the checker's shared tables.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Write {
    /// `globals[own name]` set unless already set.
    Global { ty: Ty },
    /// `symbol_types[id] = ty` (`replace`), or set unless already set.
    SymbolType { id: usize, ty: Ty, replace: bool },
    /// `returns[name]` set unless already set. (The name shared with the
    /// table, which a replay then fills without copying it.)
    Return { name: Arc<str>, ty: Ty },
    /// `returns[name]` removed.
    ForgetReturn { name: Box<str> },
}

/// The global `stmt` defines (an assignment's or a function's name).
fn own_name(stmt: &Stmt) -> Option<&str> {
    match &stmt.kind {
        StmtKind::Assign { name, .. } | StmtKind::FuncDef { name, .. } => Some(name.name.as_str()),
        _ => None,
    }
}

/// Statements whose check reads or writes anything (the others add nothing).
pub(super) fn worth_recording(stmt: &Stmt) -> bool {
    matches!(
        stmt.kind,
        StmtKind::Assign { .. }
            | StmtKind::Print { .. }
            | StmtKind::FuncDef { .. }
            | StmtKind::IndexTaskMap { .. }
            | StmtKind::SingleTaskMap { .. }
            | StmtKind::Layout { .. }
    )
}

/// Which old records a statement may replay ([`OldRecords::may_replay`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Replay {
    /// Any record of its text.
    Any,
    /// Only the record of the statement that was at this span (the same
    /// statement, reused by the re-parse).
    Own(Span),
    None,
}

/// The previous check's records, to find each statement's by position
/// first, by text after that.
pub(super) struct OldRecords<'p> {
    source: &'p str,
    stmts: &'p [StmtMemo],
    /// Where the last replayed record was, relative to the statement that
    /// replayed it: the next statement's record is most likely at the same
    /// distance (an edit adds or removes a statement or none, so all but a
    /// few statements find theirs there at the first try).
    skew: Cell<isize>,
    /// How many statements in a row, up to the last one, replayed nothing.
    misses: Cell<usize>,
    /// The records by their statement's text, made when a statement finds
    /// no record near where [`OldRecords::skew`] says that replays, and the
    /// statement before it replayed none either (the statement being edited
    /// finds none anywhere; building this for every check was 3 % of a
    /// keystroke's analysis on a 5,000-line file).
    by_text: OnceCell<FastMap<&'p str, Vec<usize>>>,
    /// See [`Previous::window`].
    window: Option<crate::incremental::Window>,
    /// Where the new parse's syntax diagnostics begin, sorted.
    syntax_errors: Vec<usize>,
    /// What the edit since can have changed (`None`: not known, after a
    /// full parse; then no record is trusted).
    edit: Option<EditScope>,
}

impl<'p> OldRecords<'p> {
    /// `previous`'s records, for checking a parse with `syntax` diagnostics.
    pub(super) fn new(previous: Previous<'p>, syntax: &[Diagnostic]) -> OldRecords<'p> {
        let mut syntax_errors: Vec<usize> = syntax.iter().map(|d| d.span.start()).collect();
        syntax_errors.sort_unstable();
        OldRecords {
            source: previous.source,
            stmts: &previous.memo.stmts,
            skew: Cell::new(0),
            misses: Cell::new(0),
            by_text: OnceCell::new(),
            window: previous.window,
            syntax_errors,
            edit: previous
                .window
                .map(|w| EditScope::new(w.changed.0, w.changed.1)),
        }
    }

    /// Notes the names the window's statements define or write, old and
    /// new: what the edit can have changed before any statement is
    /// replayed (see `check::summary`).
    pub(super) fn note_window(&self, program: &crate::ast::Program) {
        let (Some(w), Some(edit)) = (self.window, &self.edit) else {
            return;
        };
        let first = self.stmts.partition_point(|m| m.span.start() < w.from);
        let old = self.stmts[first..]
            .iter()
            .take_while(|m| m.span.start() < w.old_end_offset)
            .fold(0, |bits, m| bits | m.record.summary.writes);
        let new = program
            .stmts
            .get(w.first..w.new_end_stmt)
            .unwrap_or_default()
            .iter()
            .filter_map(|stmt| own_name(stmt))
            .fold(0, |bits, name| bits | name_bit(name));
        edit.changes(old | new);
    }

    /// Notes that top-level statement `index` was not replayed from its
    /// own record: what it writes now (`new`) and what its own record
    /// wrote (`own`) may differ for the statements after it. A statement
    /// outside the window whose own record was not found leaves its old
    /// writes unknown: then no later record is trusted. (The window's old
    /// writes are noted before, by [`OldRecords::note_window`].)
    fn not_replayed_as_before(&self, index: usize, own: Option<usize>, new: u64) {
        let (Some(edit), Some(w)) = (&self.edit, self.window) else {
            return;
        };
        let in_window = (w.first..w.new_end_stmt).contains(&index);
        match own {
            Some(j) => edit.changes(new | self.stmts[j].record.summary.writes),
            None if in_window => edit.changes(new),
            None => edit.changes(u64::MAX),
        }
    }

    /// Which old records top-level statement `index`, spanning `span` up
    /// to where the next one begins (`next`), may replay. A record is a
    /// function of its statement's tree, and the text determines the tree
    /// (up to a shift) unless the parse read past the statement, which only
    /// a syntax error's recovery does (it peeks at the tokens after; a
    /// statement without one ends at its own `;` or `}`, and so does any
    /// statement of the same text). So a statement without a syntax error
    /// may replay any record of its text (`Replay::Any`); one with an error
    /// only its own, if the re-parse reused its tree (outside the window:
    /// `Replay::Own` with the span it had), and none otherwise.
    fn may_replay(&self, index: usize, span: Span, next: usize) -> Replay {
        let at = self.syntax_errors.partition_point(|&e| e < span.start());
        if self.syntax_errors.get(at).is_none_or(|&e| e >= next) {
            return Replay::Any;
        }
        match self.window {
            Some(w) if index < w.first => Replay::Own(span),
            Some(w) if index >= w.new_end_stmt => {
                let mut old = span;
                shift_span(&mut old, -w.delta);
                Replay::Own(old)
            }
            _ => Replay::None,
        }
    }

    /// The record of top-level statement `index` (spanning `span`) itself,
    /// when the re-parse reused its tree (it is outside the window): the
    /// record at the last replay's distance from `recorded` (the count of
    /// statements recorded before it), or one beside it, whose statement
    /// had the span this one had in the old text. Why: every statement
    /// outside the window has the text it had, so finding its record needs
    /// no comparison of texts; comparing each recorded statement's text
    /// with its record's read both texts of the whole file on every
    /// keystroke (`memcmp`, 2 % of a server's samples with cannon, `perf`).
    fn own(&self, index: usize, span: Span, recorded: usize) -> Option<usize> {
        let w = self.window?;
        let old = if index < w.first {
            span
        } else if index >= w.new_end_stmt {
            let mut old = span;
            shift_span(&mut old, -w.delta);
            old
        } else {
            return None;
        };
        let at = recorded as isize + self.skew.get();
        [0, -1, 1].into_iter().find_map(|d| {
            let j = usize::try_from(at + d).ok()?;
            (self.stmts.get(j)?.span == old).then_some(j)
        })
    }

    fn text(&self, m: &StmtMemo) -> Option<&'p str> {
        self.source.get(m.span.start()..m.span.end())
    }

    /// The records to try first for the `index`-th recorded statement,
    /// whose text is `text`: the one at the last replay's distance, then
    /// its neighbours (a statement added or removed just before), if their
    /// text is the same.
    fn near(&self, index: usize, text: &str) -> [Option<usize>; 5] {
        let at = index as isize + self.skew.get();
        [0, -1, 1, -2, 2].map(|d| {
            usize::try_from(at + d)
                .ok()
                .filter(|&j| self.stmts.get(j).and_then(|m| self.text(m)) == Some(text))
        })
    }

    /// The records of statements whose text was `text`, in file order.
    fn same_text(&self, text: &str) -> &[usize] {
        let by_text = self.by_text.get_or_init(|| {
            let mut by_text: FastMap<&str, Vec<usize>> =
                crate::fast_hash::map_with_capacity(self.stmts.len());
            for (j, m) in self.stmts.iter().enumerate() {
                if let Some(text) = self.text(m) {
                    by_text.entry(text).or_default().push(j);
                }
            }
            by_text
        });
        by_text.get(text).map_or(&[], |v| v.as_slice())
    }
}

/// How many records with the same text are tried after those near
/// (identical statements repeat in big files; one in the right place
/// usually matches first).
const CANDIDATES: usize = 4;

/// The records being made for the next check.
#[derive(Default)]
pub(super) struct NewMemo {
    pub(super) stmts: Vec<StmtMemoOut>,
    pub(super) reuse: Reuse,
}

/// An opaque record for [`CheckMemo`].
pub(super) struct StmtMemoOut(StmtMemo);

impl NewMemo {
    /// Keeps old record `j`, just replayed for the statement at `span`, the
    /// `recorded`-th statement recorded.
    fn replayed(&mut self, span: Span, old: &OldRecords<'_>, j: usize, recorded: usize) {
        self.stmts.push(StmtMemoOut(StmtMemo {
            span,
            record: old.stmts[j].record.clone(),
        }));
        self.reuse.replayed += 1;
        old.skew.set(j as isize - recorded as isize);
        old.misses.set(0);
    }

    pub(super) fn finish(self) -> (CheckMemo, Reuse) {
        (
            CheckMemo {
                stmts: self.stmts.into_iter().map(|s| s.0).collect(),
                suggestions: None,
                diagnostics: 0,
                shadowed: None,
                function_names: None,
            },
            self.reuse,
        )
    }
}

/// The lists a replay works in, kept by the checker from one replay to
/// the next (see `Checker::replay`).
#[derive(Debug, Default)]
pub(super) struct ReplayScratch {
    /// Old symbol index -> new, for each index the record read.
    ids: Vec<(usize, usize)>,
    /// The return types the statement wrote (`None`: forgot), by the
    /// index of the event that names the function.
    own_returns: Vec<(usize, Option<Ty>)>,
}

impl<'a> Checker<'a> {
    /// Types top-level statement `index` (of those [`worth_recording`]),
    /// replaying an old record when one matches, else recording a new one.
    pub(super) fn statement_with_memo(
        &mut self,
        index: usize,
        stmt: &'a Stmt,
        old: Option<&OldRecords<'_>>,
        out: &mut NewMemo,
    ) {
        self.stmt_start = stmt.span.start();
        self.stmt_index = index;
        let text = stmt.span.text(self.source);
        let next = self
            .program
            .stmts
            .get(index + 1)
            .map_or(usize::MAX, |s| s.span.start());
        let allowed = old.map_or(Replay::None, |o| o.may_replay(index, stmt.span, next));
        let mut own = None;
        if let Some(old) = old.filter(|_| allowed != Replay::None) {
            let recorded = out.stmts.len();
            own = old.own(index, stmt.span, recorded);
            if let Some(j) = own {
                let m = &old.stmts[j];
                let trusted = old.edit.as_ref().is_some_and(|edit| {
                    edit.cannot_reach(&m.record.summary, m.span.start(), self.unchanged())
                });
                if self.replay(stmt, m, old.source, trusted) {
                    out.replayed(stmt.span, old, j, recorded);
                    out.reuse.trusted += usize::from(trusted);
                    return;
                }
            }
            let near = old.near(recorded, text);
            // Anywhere in the file only if none is near, after a miss just
            // before (see `OldRecords::by_text`).
            let far = || {
                let anywhere = (old.misses.get() > 0).then(|| old.same_text(text));
                anywhere
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|&j| !near.contains(&Some(j)))
                    .take(CANDIDATES)
            };
            let candidates = near
                .iter()
                .flatten()
                .copied()
                .chain(std::iter::once(()).flat_map(|()| far()));
            for j in candidates {
                let m = &old.stmts[j];
                if matches!(allowed, Replay::Own(at) if m.span != at) {
                    continue;
                }
                if self.replay(stmt, m, old.source, false) {
                    old.not_replayed_as_before(index, own, m.record.summary.writes);
                    out.replayed(stmt.span, old, j, recorded);
                    return;
                }
            }
            old.misses.set(old.misses.get() + 1);
        }
        self.tape = Some(Vec::new());
        self.statement(index, stmt);
        let events = self.tape.take().unwrap_or_default();
        let summary = Summary::of(&events, own_name(stmt), stmt.span.len());
        if let Some(old) = old {
            old.not_replayed_as_before(index, own, summary.writes);
        }
        out.stmts.push(StmtMemoOut(StmtMemo {
            span: stmt.span,
            record: Arc::new(Record {
                origin: stmt.span.start(),
                events,
                diags: self.diags.clone(),
                summary,
            }),
        }));
        out.reuse.checked += 1;
    }

    /// What a trusted record needs to be unchanged besides its names
    /// (see `check::summary`).
    fn unchanged(&self) -> Unchanged {
        Unchanged {
            lines: self.carried.as_ref().is_some_and(|c| c.same_lines()),
            function_names: self.function_names.1,
        }
    }

    /// Replays `m` for `stmt` if every read it recorded has the same
    /// answer now; false (and nothing changed) otherwise. A `trusted`
    /// record (one whose answers the edit cannot have changed, see
    /// `check::summary`) has only its symbol numbers read, except in
    /// unoptimised builds (the tests), where every read is checked and
    /// must hold.
    fn replay(&mut self, stmt: &'a Stmt, m: &StmtMemo, old_source: &str, trusted: bool) -> bool {
        // Scratch lists kept on the checker: a replay per statement on every
        // keystroke, each allocating its own, was a tenth of the check's
        // allocations.
        let mut scratch = std::mem::take(&mut self.replay_scratch);
        scratch.ids.clear();
        scratch.own_returns.clear();
        let replayed = self.replay_with(stmt, m, old_source, trusted, &mut scratch);
        self.replay_scratch = scratch;
        replayed
    }

    fn replay_with(
        &mut self,
        stmt: &'a Stmt,
        m: &StmtMemo,
        old_source: &str,
        trusted: bool,
        scratch: &mut ReplayScratch,
    ) -> bool {
        // A trusted record's symbol numbers are read all the same: its
        // writes need the numbers they moved to since it was made (a
        // record replays over many edits, and keeps the numbers of the
        // check that made it).
        let hold = self.reads_hold(stmt, m, old_source, trusted, scratch);
        if cfg!(debug_assertions) && trusted {
            // Unoptimised (the tests): every read is checked all the same,
            // and must hold, with the same numbers.
            let mut all = ReplayScratch::default();
            let all_hold = self.reads_hold(stmt, m, old_source, false, &mut all);
            assert!(
                all_hold && hold && all.ids == scratch.ids,
                "a record the edit cannot reach has a read that changed: {:?}",
                stmt.span.text(self.source)
            );
        }
        if !hold {
            return false;
        }
        let ids = &scratch.ids;
        for event in &m.record.events {
            if let Event::Write(w) = event {
                self.apply(stmt, w, ids);
            }
        }
        let delta = stmt.span.start() as isize - m.record.origin as isize;
        // Only those the cap keeps are copied; the others are counted at
        // their (moved) span, as pushing them would.
        let room = if self.build_all {
            usize::MAX
        } else {
            self.capped.room().saturating_sub(self.diags.len())
        };
        let (kept, over) = m.record.diags.split_at(room.min(m.record.diags.len()));
        self.diags.extend(kept.iter().map(|d| {
            let mut d = d.clone();
            shift_diagnostic(&mut d, 0, delta);
            d
        }));
        for d in over {
            let mut span = d.span;
            shift_span(&mut span, delta);
            self.left_out(span);
        }
        true
    }

    /// Whether every read `m` recorded has the same answer for `stmt`
    /// now (`only_numbers`: every read of a symbol number), with the
    /// symbol numbers it read mapped (old to new) in `scratch.ids` for its
    /// writes.
    fn reads_hold(
        &mut self,
        stmt: &'a Stmt,
        m: &StmtMemo,
        old_source: &str,
        only_numbers: bool,
        scratch: &mut ReplayScratch,
    ) -> bool {
        let old_start = m.span.start() as isize;
        // The statement's own writes, as its later reads would see them.
        let mut own_global: Option<Ty> = None;
        // (The return types it wrote or forgot, by the index of the event
        // that names the function.)
        let own_returns = &mut scratch.own_returns;
        let returned = |i: usize| match &m.record.events[i] {
            Event::Write(Write::Return { name, .. }) => &**name,
            Event::Write(Write::ForgetReturn { name }) => &**name,
            _ => "",
        };
        // A function's return type as this statement's later reads see it:
        // its own last write, else the table's.
        let returns = &self.returns;
        let return_now = |own: &[(usize, Option<Ty>)], name: &str| match own
            .iter()
            .rev()
            .find(|(i, _)| returned(*i) == name)
        {
            Some((_, t)) => *t,
            None => returns.get(name).copied(),
        };
        // Symbol indices move when a symbol is added or removed before
        // them: each old index read maps to the new one, and the writes
        // (which only use indices just read) follow the map.
        let ids = &mut scratch.ids;
        for (e, event) in m.record.events.iter().enumerate() {
            if only_numbers
                && !matches!(
                    event,
                    Event::Read(Read::GlobalId { .. } | Read::DefinedAt { .. })
                )
            {
                continue;
            }
            match event {
                Event::Read(read) => {
                    let same = match read {
                        Read::Global { name, ty } => {
                            let own = own_global.filter(|_| own_name(stmt) == Some(&**name));
                            self.globals.get(&**name).copied().or(own) == *ty
                        }
                        Read::Return { name, ty } => return_now(own_returns, name) == *ty,
                        Read::FunctionBody { name, at } => {
                            self.body_unchanged(name, *at, old_source, old_start)
                        }
                        Read::GlobalId { id, .. } | Read::DefinedAt { id, .. } => {
                            let now = self.answer_id(read);
                            match (*id, now) {
                                (None, None) => true,
                                (Some(old), Some(new)) => {
                                    let known = ids.iter().find(|(o, _)| *o == old).copied();
                                    ids.push((old, new));
                                    known.is_none_or(|(_, n)| n == new)
                                }
                                _ => false,
                            }
                        }
                        other => self.same_answer(other),
                    };
                    if !same {
                        return false;
                    }
                }
                Event::Write(Write::Global { ty }) => {
                    own_global.get_or_insert(*ty);
                }
                Event::Write(Write::Return { name, ty }) => {
                    if return_now(own_returns, name).is_none() {
                        own_returns.push((e, Some(*ty)));
                    }
                }
                Event::Write(Write::ForgetReturn { .. }) => own_returns.push((e, None)),
                Event::Write(Write::SymbolType { .. }) => {}
            }
        }
        true
    }

    /// True if function `name`'s definition is at `at` (relative to the
    /// statement) with the same text as in the old file.
    fn body_unchanged(
        &self,
        name: &str,
        at: Option<(isize, usize)>,
        old_source: &str,
        old_start: isize,
    ) -> bool {
        if self.function_at(name) != at {
            return false;
        }
        let Some((rel, len)) = at else {
            return true;
        };
        let old = usize::try_from(old_start + rel).ok();
        match (old, self.abs(rel)) {
            (Some(o), Some(n)) => old_source.get(o..o + len) == self.source.get(n..n + len),
            _ => false,
        }
    }

    /// The first definition of function `name`.
    fn function_def(&self, name: &str) -> Option<(usize, &'a Stmt)> {
        let index = self.function_index_of(name)?;
        Some((index, self.stmt_at(index)))
    }

    /// Whether function `name` is defined after the current statement, and
    /// its header.
    fn function_header(&self, name: &str) -> Option<(bool, &'a str)> {
        let (index, def) = self.function_def(name)?;
        let end = match &def.kind {
            StmtKind::FuncDef { body_span, .. } => body_span.start(),
            _ => def.span.end(),
        };
        let header = self
            .source
            .get(def.span.start()..end.max(def.span.start()))?;
        Some((index > self.stmt_index, header))
    }

    /// Where function `name` is defined, relative to the current statement.
    fn function_at(&self, name: &str) -> Option<(isize, usize)> {
        let (_, def) = self.function_def(name)?;
        Some((self.rel(def.span.start()), def.span.len()))
    }

    /// Whether `read` has the same answer in the current file. Compared in
    /// place: answering it as a new `Read` copied the name of each of the
    /// thousands of reads a keystroke replays.
    fn same_answer(&self, read: &Read) -> bool {
        match read {
            Read::Function { name, found } => {
                self.function_header(name)
                    == found.as_ref().map(|(later, header)| (*later, &**header))
            }
            Read::FunctionAt { name, at } => self.function_at(name) == *at,
            Read::LateGlobal { name, ty } => self.definitions.late(self.resolved, name) == *ty,
            Read::Assigned { name, yes } => self.is_assigned(name) == *yes,
            Read::ClosestFunction { name, best } => {
                self.function_names.1 || self.nearest_function_name(name) == best.as_deref()
            }
            Read::GlobalId { .. } | Read::DefinedAt { .. } => self.answer_id(read) == read.id(),
            Read::Line { at, line } => {
                self.abs(*at).map_or(0, |o| self.lines.line_of(o) + 1) == *line
            }
            Read::LineExtent { at, extent } => {
                let now = self.abs_span(*at).map_or((0, 0), |s| {
                    let (a, b) = line_extent(self.source, s);
                    (self.rel(a), self.rel(b))
                });
                now == *extent
            }
            // Answered with the statement's own writes in `replay`.
            Read::Global { .. } | Read::Return { .. } | Read::FunctionBody { .. } => true,
        }
    }

    /// The symbol index a `GlobalId` or `DefinedAt` read finds now.
    fn answer_id(&self, read: &Read) -> Option<usize> {
        match read {
            Read::GlobalId { name, .. } => self.resolved.global(name),
            Read::DefinedAt { at, .. } => self
                .abs_span(*at)
                .and_then(|s| self.defined_at.get(&s).copied()),
            _ => None,
        }
    }

    fn apply(&mut self, stmt: &'a Stmt, write: &Write, ids: &[(usize, usize)]) {
        match write {
            Write::Global { ty } => {
                if let Some(name) = own_name(stmt) {
                    self.globals.entry(name).or_insert(*ty);
                }
            }
            Write::SymbolType { id, ty, replace } => {
                // (Every index written was read first, so it is mapped.)
                let id = ids
                    .iter()
                    .find(|(old, _)| old == id)
                    .map_or(*id, |(_, new)| *new);
                self.symbol_types.set(id, *ty, *replace);
            }
            Write::Return { name, ty } => {
                // (Looked up first: an entry would copy the name each time.)
                if !self.returns.contains_key(&**name) {
                    self.returns.insert(name.clone(), *ty);
                }
            }
            Write::ForgetReturn { name } => {
                self.returns.remove(&**name);
            }
        }
    }

    fn rel(&self, offset: usize) -> isize {
        offset as isize - self.stmt_start as isize
    }

    fn abs(&self, rel: isize) -> Option<usize> {
        usize::try_from(self.stmt_start as isize + rel).ok()
    }

    fn abs_span(&self, (a, b): (isize, isize)) -> Option<Span> {
        Some(Span::new(self.abs(a)?, self.abs(b)?))
    }

    fn note(&mut self, event: Event) {
        if let Some(tape) = &mut self.tape {
            tape.push(event);
        }
    }

    // ----- the checker's reads and writes, recorded ----------------------

    pub(super) fn global_ty(&mut self, name: &str) -> Option<Ty> {
        let ty = match &self.stream {
            Some(globals) => globals.so_far(name),
            None => self.globals.get(name).copied(),
        };
        self.note(Event::Read(Read::Global {
            name: name.into(),
            ty,
        }));
        ty
    }

    pub(super) fn late_global_ty(&mut self, name: &str) -> Option<Ty> {
        let ty = match &self.stream {
            Some(globals) => globals.get(name).map(|g| g.late()),
            None => self.definitions.late(self.resolved, name),
        };
        self.note(Event::Read(Read::LateGlobal {
            name: name.into(),
            ty,
        }));
        ty
    }

    pub(super) fn known_return(&mut self, name: &str) -> Option<Ty> {
        let ty = self.returns.get(name).copied();
        self.note(Event::Read(Read::Return {
            name: name.into(),
            ty,
        }));
        ty
    }

    /// The statement index of function `name`'s first definition; the
    /// caller reads its header (name, parameters) only, unless it also
    /// calls [`Checker::pin_function`] or [`Checker::function_body_read`].
    pub(super) fn function_index(&mut self, name: &str) -> Option<usize> {
        if self.tape.is_some() {
            let found = self.function_header(name).map(|(l, h)| (l, h.into()));
            self.note(Event::Read(Read::Function {
                name: name.into(),
                found,
            }));
        }
        self.function_index_of(name)
    }

    /// The statement index of function `name`'s first definition.
    fn function_index_of(&self, name: &str) -> Option<usize> {
        match &self.stream {
            Some(_) => self.functions.get(name).copied(),
            None => self.definitions.first_function(self.resolved, name),
        }
    }

    /// Records that a diagnostic points into function `name`'s definition.
    pub(super) fn pin_function(&mut self, name: &str) {
        if self.tape.is_some() {
            let at = self.function_at(name);
            self.note(Event::Read(Read::FunctionAt {
                name: name.into(),
                at,
            }));
        }
    }

    /// Records that function `name`'s body is read (to infer its type).
    pub(super) fn function_body_read(&mut self, name: &str) {
        if self.tape.is_some() {
            let at = self.function_at(name);
            self.note(Event::Read(Read::FunctionBody {
                name: name.into(),
                at,
            }));
        }
    }

    pub(super) fn assigned_global(&mut self, name: &str) -> bool {
        let yes = self.is_assigned(name);
        self.note(Event::Read(Read::Assigned {
            name: name.into(),
            yes,
        }));
        yes
    }

    fn is_assigned(&self, name: &str) -> bool {
        if let Some(globals) = &self.stream {
            return globals.get(name).is_some_and(|g| g.assigned);
        }
        self.definitions.assigned(self.resolved, name)
    }

    pub(super) fn closest_function(&mut self, name: &str) -> Option<&'a str> {
        let best = self.nearest_function_name(name);
        self.note(Event::Read(Read::ClosestFunction {
            name: name.into(),
            best: best.map(Into::into),
        }));
        best
    }

    /// The symbol of global `name` (none in the streaming check, which
    /// keeps no symbols of globals: their types are only for hovers).
    pub(super) fn global_id(&mut self, name: &str) -> Option<usize> {
        let id = match self.stream {
            Some(_) => None,
            None => self.resolved.global(name),
        };
        self.note(Event::Read(Read::GlobalId {
            name: name.into(),
            id,
        }));
        id
    }

    pub(super) fn symbol_defined_at(&mut self, span: Span) -> Option<usize> {
        let id = self.defined_at.get(&span).copied();
        let at = (self.rel(span.start()), self.rel(span.end()));
        self.note(Event::Read(Read::DefinedAt { at, id }));
        id
    }

    /// The 1-based line of `offset`, recorded (for messages of statements).
    pub(super) fn line_read(&mut self, offset: usize) -> usize {
        let line = self.line(offset);
        let at = self.rel(offset);
        self.note(Event::Read(Read::Line { at, line }));
        line
    }

    pub(super) fn line_extent_read(&mut self, span: Span) -> (usize, usize) {
        let (a, b) = line_extent(self.source, span);
        let at = (self.rel(span.start()), self.rel(span.end()));
        let extent = (self.rel(a), self.rel(b));
        self.note(Event::Read(Read::LineExtent { at, extent }));
        (a, b)
    }

    pub(super) fn write_global(&mut self, name: &'a str, ty: Ty) {
        self.note(Event::Write(Write::Global { ty }));
        match &mut self.stream {
            Some(globals) => globals.assign(name, ty),
            None => {
                self.globals.entry(name).or_insert(ty);
            }
        }
    }

    pub(super) fn write_symbol_type(&mut self, id: usize, ty: Ty, replace: bool) {
        self.note(Event::Write(Write::SymbolType { id, ty, replace }));
        self.symbol_types.set(id, ty, replace);
    }

    pub(super) fn write_return(&mut self, name: &str, ty: Ty) {
        let name: Arc<str> = name.into();
        if self.tape.is_some() {
            self.note(Event::Write(Write::Return {
                name: name.clone(),
                ty,
            }));
        }
        if !self.returns.contains_key(&*name) {
            self.returns.insert(name, ty);
        }
    }

    pub(super) fn forget_return(&mut self, name: &str) {
        self.note(Event::Write(Write::ForgetReturn { name: name.into() }));
        self.returns.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement outside the re-parsed window finds its own record by the
    /// span it had, at the last replay's distance or one beside it; one in
    /// the window finds none that way.
    #[test]
    fn a_statement_outside_the_window_finds_its_own_record_by_its_old_span() {
        let before = "a = 1;\nb = a + 1;\nc = b + 1;\nd = c + 1;\ne = d + 1;\n";
        // (`b`'s statement grows and a statement is added after it.)
        let after = "a = 1;\nb = a + 100;\nx = 2;\nc = b + 1;\nd = c + 1;\ne = d + 1;\n";
        let old = crate::parse(before);
        let (old_check, _) = super::super::check_incremental(&old, before, None);
        let (new, how) = crate::incremental::reparse(&old, before, after);
        let window = how.window().expect("an incremental re-parse");
        let records = OldRecords::new(
            Previous {
                memo: &old_check.memo,
                source: before,
                window: Some(window),
            },
            &new.diagnostics,
        );
        let stmts = &new.program.stmts;
        assert_eq!(window.new_end_stmt, 4, "{window:?}");
        // Before the window: the same index, the same span.
        assert_eq!(records.own(0, stmts[0].span, 0), Some(0));
        // In the window: none by span.
        assert!(window.first <= 1 && 1 < window.new_end_stmt);
        assert_eq!(records.own(1, stmts[1].span, 1), None);
        // After it, with the distance the window left (one statement more
        // now): found beside the last replay's distance, then at it.
        assert_eq!(records.own(4, stmts[4].span, 4), Some(3));
        records.skew.set(-1);
        assert_eq!(records.own(5, stmts[5].span, 5), Some(4));
        // A span that was no statement's finds nothing.
        assert_eq!(records.own(5, stmts[3].span, 5), None);
    }
}
