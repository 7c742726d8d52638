//! Static semantics: types and the mistakes the reference only finds at run
//! time (where it asserts and aborts), reported while the user types.
//!
//! The rules follow the reference evaluator (`tree.cpp`/`tree.hpp`):
//! - binary operators need operands of the same kind (int/int, bool/bool,
//!   tuple/tuple of equal length): "type mismatch!!";
//! - a global can be assigned once ("AssignNode multiple X cause conflicts");
//!   a second `def` of a name is ignored; a *local* re-assignment keeps the
//!   first value (the frame uses `unordered_map::insert`);
//! - a function returns at its first `return`; without one it aborts
//!   ("Error: function without return");
//! - `IndexTaskMap`/`SingleTaskMap` look their function up when the statement
//!   runs, so it must be defined earlier, and must be `f(Task t)`;
//! - for each task (and task/region/processor, task/region/memory) the FIRST
//!   mapping statement wins; inside one `Layout`, a later constraint overrides
//!   an earlier one of the same family;
//! - `print` aborts with fewer arguments than `{}` placeholders.
//!
//! Module map:
//! - this file: the `Checker` itself, typing one top-level statement at
//!   a time, and the entry points ([`check`], [`check_incremental`],
//!   [`check_after_reparse`]);
//! - `expr`: typing the expressions in them (names, operators, calls,
//!   properties and methods);
//! - `names`: the whole-file passes (second definitions, undefined and
//!   unused names, shadowed rules) and the diagnostics they make;
//! - `memo`: the record of each statement's check, replayed after an edit;
//! - `summary`: each record's reads in brief, and whether an edit can have
//!   changed them (a record it cannot reach is replayed without checking
//!   them: only its symbol numbers are read);
//! - `shadowed`: the shadowed rules in a language server's check, found
//!   again after an edit only for the keys it touched;
//! - `carry`: the whole-file passes' diagnostics taken over from the
//!   previous check, after an edit, instead of built again;
//! - `definitions`: what is known of each global from its definitions,
//!   by symbol number, made in one walk;
//! - `stream`: the check of `mapwright check`, two passes over the
//!   statements with one tree at a time, equal to [`check`]'s diagnostics;
//! - `symbol_types`: the inferred type of each symbol (hovers).

use crate::fast_hash::FastMap;
use std::sync::Arc;

use serde::Serialize;

use crate::ast::*;
use crate::diagnostic::{CappedDiagnostics, Diagnostic, Fix};
use crate::packed::PackedDiagnostics;
use crate::parser::Parsed;
use crate::resolve::{resolve, Resolved};
use crate::suggest::{Suggester, Suggestions};
use crate::Span;

mod carry;
mod definitions;
mod expr;
mod memo;
mod names;
mod shadowed;
mod stream;
mod summary;
mod symbol_types;
pub use symbol_types::SymbolTypes;

pub use memo::{CheckMemo, Previous, Reuse};
pub(crate) use stream::report as report_streaming;

/// Static types. `None` lengths/dimensions mean "not known statically".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Ty {
    Int,
    Bool,
    /// An int tuple (`IPoint`, `ISpace`) with its length when known.
    Tuple(Option<usize>),
    Task,
    /// A machine model with its dimensionality when known.
    MSpace(Option<usize>),
    /// One processor of a machine model (`m[i, j]`): what mapping functions return.
    Processor,
    ProcKind,
    MemKind,
    /// The lone `*`.
    Star,
    /// `*t`: a tuple spread into an index or argument list.
    Spread(Option<usize>),
    Function,
    Unknown,
}

impl Ty {
    /// How the type is shown in hovers and messages.
    pub fn describe(&self) -> String {
        match self {
            Ty::Int => "int".into(),
            Ty::Bool => "bool".into(),
            Ty::Tuple(Some(n)) => format!("tuple of {n} ints"),
            Ty::Tuple(None) => "int tuple".into(),
            Ty::Task => "Task".into(),
            Ty::MSpace(Some(n)) => format!("MSpace, {n} dims"),
            Ty::MSpace(None) => "MSpace".into(),
            Ty::Processor => "processor".into(),
            Ty::ProcKind => "processor kind".into(),
            Ty::MemKind => "memory kind".into(),
            Ty::Star => "`*`".into(),
            Ty::Spread(_) => "unpacked tuple".into(),
            Ty::Function => "function".into(),
            Ty::Unknown => "unknown".into(),
        }
    }

    /// The description with an indefinite article ("an int", "a bool").
    pub fn with_article(&self) -> String {
        let d = self.describe();
        let article = if d.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {d}")
    }

    /// The operand family for the reference's "same type" rule.
    fn family(&self) -> Option<u8> {
        match self {
            Ty::Int => Some(0),
            Ty::Bool => Some(1),
            Ty::Tuple(_) => Some(2),
            Ty::Unknown | Ty::Spread(_) | Ty::Star => None,
            _ => Some(3),
        }
    }

    fn from_param(p: ParamType) -> Ty {
        match p {
            ParamType::Int => Ty::Int,
            ParamType::Bool => Ty::Bool,
            ParamType::IPoint | ParamType::ISpace => Ty::Tuple(None),
            ParamType::MSpace => Ty::MSpace(None),
            ParamType::Task => Ty::Task,
        }
    }

    fn accepts(param: ParamType, arg: Ty) -> bool {
        matches!(
            (param, arg),
            (_, Ty::Unknown | Ty::Spread(_))
                | (ParamType::Int, Ty::Int)
                | (ParamType::Bool, Ty::Bool)
                | (ParamType::IPoint | ParamType::ISpace, Ty::Tuple(_))
                | (ParamType::MSpace, Ty::MSpace(_))
                | (ParamType::Task, Ty::Task)
        )
    }
}

/// What the checker learned, besides diagnostics.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    pub diagnostics: Vec<Diagnostic>,
    pub resolved: Resolved,
    /// Inferred type of each symbol (index into `resolved.symbols`).
    pub symbol_types: SymbolTypes,
    /// Inferred return type of each function, by name.
    pub returns: FastMap<Arc<str>, Ty>,
    /// Each statement's work, for the next [`check_incremental`] (empty
    /// after [`check`]).
    pub memo: CheckMemo,
    /// The line starts of the checked text (the language server's line
    /// index reuses them rather than finding them again).
    pub lines: crate::line_index::LineStarts,
}

/// Checks a parsed program. Statements that did not parse are skipped.
pub fn check(parsed: &Parsed, source: &str) -> Checked {
    check_with(
        parsed,
        source,
        None,
        None,
        false,
        false,
        CappedDiagnostics::default(),
    )
    .0
}

/// [`check`]'s diagnostics only, packed and sorted by span (see
/// [`crate::report`]); the checker's tables are dropped before they are
/// sorted.
pub(crate) fn check_packed(parsed: &Parsed, source: &str) -> PackedDiagnostics {
    let (_, _, packed, _) = check_with(
        parsed,
        source,
        None,
        None,
        false,
        false,
        CappedDiagnostics::packed(),
    );
    packed.unwrap_or_default()
}

/// [`check`] building every diagnostic, also those the cap then drops (the
/// checker otherwise only counts them, see `Checker::over_cap`): the
/// reference for tests that the shortcut changes nothing.
#[doc(hidden)]
pub fn check_building_all(parsed: &Parsed, source: &str) -> Checked {
    check_with(
        parsed,
        source,
        None,
        None,
        false,
        true,
        CappedDiagnostics::default(),
    )
    .0
}

/// [`check`], remembering each statement's work in [`Checked::memo`], and
/// reusing `previous`'s for the statements an edit left unchanged (see
/// [`memo`]). Always equal to [`check`] (the memo aside).
pub fn check_incremental(
    parsed: &Parsed,
    source: &str,
    previous: Option<Previous<'_>>,
) -> (Checked, Reuse) {
    let list = room_for(previous.as_ref());
    let (checked, reuse, _, _) = check_with(parsed, source, previous, None, true, false, list);
    (checked, reuse)
}

/// The names of the parse an edit started from, and where the re-parse
/// replaced statements: [`check_after_reparse`] resolves only what the
/// edit reaches again.
struct OldNames<'w> {
    resolved: Resolved,
    window: &'w crate::incremental::Window,
    /// The old text's line starts, moved to the new text's.
    lines: crate::line_index::LineStarts,
    /// The old check's diagnostics, in span order (see `carry`).
    diagnostics: Vec<Diagnostic>,
}

/// What [`check_after_reparse`] did not use of the old analysis, for the
/// caller to free (a language server frees it off its answering thread).
#[derive(Debug, Default)]
pub struct Leftovers {
    /// The old names, after a full re-parse (which resolves them again).
    pub names: Option<Resolved>,
    /// The old diagnostics not taken over (see `carry`).
    pub diagnostics: Vec<Diagnostic>,
}

/// What a language server keeps of the check of the text before an edit,
/// handed to [`check_after_reparse`]: the memo (borrowed) and the parts it
/// consumes.
#[derive(Debug)]
pub struct OldCheck<'o> {
    /// The old check's record of each statement.
    pub memo: &'o CheckMemo,
    /// The old text.
    pub source: &'o str,
    /// The old names ([`Checked::resolved`]).
    pub names: Resolved,
    /// The old text's line starts ([`Checked::lines`]).
    pub lines: crate::line_index::LineStarts,
    /// The old diagnostics ([`Checked::diagnostics`], in span order).
    pub diagnostics: Vec<Diagnostic>,
}

/// The check of `parsed`, re-parsed (`how`) from the parse that `old` was
/// the check of. After an incremental re-parse it is [`check_incremental`]
/// that also reuses the old names (see
/// [`crate::resolve::resolve_after_edit`]), moves the old line starts to the
/// new text ([`crate::line_index::LineStarts::after_edit`]) and takes over
/// the old diagnostics the edit left as they were (see `carry`); after a
/// full one it is [`check_incremental`], and the old names and diagnostics
/// come back unused, for the caller to free. Always equal to [`check`]
/// (the memo aside).
pub fn check_after_reparse(
    parsed: &Parsed,
    source: &str,
    how: &crate::incremental::Reparse,
    old: OldCheck<'_>,
) -> (Checked, Reuse, Leftovers) {
    let previous = Some(Previous {
        memo: old.memo,
        source: old.source,
        window: how.window(),
    });
    match how {
        crate::incremental::Reparse::Incremental { window, .. } => {
            let names = OldNames {
                resolved: old.names,
                window,
                lines: old.lines,
                diagnostics: old.diagnostics,
            };
            let list = room_for(previous.as_ref());
            let (checked, reuse, _, diagnostics) =
                check_with(parsed, source, previous, Some(names), true, false, list);
            let leftovers = Leftovers {
                names: None,
                diagnostics,
            };
            (checked, reuse, leftovers)
        }
        crate::incremental::Reparse::Full => {
            let (checked, reuse) = check_incremental(parsed, source, previous);
            let leftovers = Leftovers {
                names: Some(old.names),
                diagnostics: old.diagnostics,
            };
            (checked, reuse, leftovers)
        }
    }
}

/// The diagnostics list of a check after an edit: room for as many as
/// the previous check kept (an edit rarely changes that by much).
fn room_for(previous: Option<&Previous<'_>>) -> CappedDiagnostics {
    CappedDiagnostics::with_capacity(previous.map_or(0, |p| p.memo.diagnostics))
}

fn check_with(
    parsed: &Parsed,
    source: &str,
    previous: Option<Previous<'_>>,
    old_names: Option<OldNames<'_>>,
    remember: bool,
    build_all: bool,
    capped: CappedDiagnostics,
) -> (Checked, Reuse, Option<PackedDiagnostics>, Vec<Diagnostic>) {
    let program = &parsed.program;
    let (resolved, how, lines, carried) = match old_names {
        Some(old) => {
            let (resolved, how) =
                crate::resolve::resolve_after_edit(old.resolved, program, old.window);
            let old_lines = old.lines.line_count();
            let lines = old.lines.after_edit(source, old.window.changed);
            let same_lines = lines.line_count() == old_lines;
            let carried = carry::Carried::new(old.diagnostics, old.window, same_lines);
            (resolved, how, lines, Some(carried))
        }
        None => (
            resolve(program),
            crate::resolve::AfterEdit::default(),
            crate::line_index::LineStarts::new(source),
            None,
        ),
    };
    // The whole-file tables are sized by the globals in the language
    // server's checks (`remember`), whose tables growing and rehashing
    // showed in a keystroke's profile. A check run once (the CLI) grows
    // its globals table instead: sized up front it was at full size while
    // the resolver's tables were too, which raised the peak by 2x the
    // input on a file of one-line assignments (see bench/memory).
    let table_size_hint = if remember { resolved.global_count() } else { 0 };
    let previous_function_names = previous.and_then(|p| p.memo.function_names.clone());
    // (Only a language server's checks keep the function names.)
    let returns_size_hint = previous_function_names.as_ref().map_or(0, |f| f.len());
    let mut c = Checker {
        build_all,
        remember,
        previous_shadowed: previous.and_then(|p| Some((p.memo.shadowed.clone()?, p.window?))),
        previous_suggestions: previous.and_then(|p| p.memo.suggestions()),
        same_names: how.same_names,
        previous_function_names,
        // (Sized by the functions of the file, each of which writes its
        // return type: grown from empty, the table rehashed several times
        // on every keystroke.)
        returns: crate::fast_hash::map_with_capacity(returns_size_hint),
        symbol_types: symbol_types::SymbolTypes::with_symbols(resolved.symbols.len()),
        globals: crate::fast_hash::map_with_capacity(table_size_hint),
        // Only parameters and locals are looked up by definition: the
        // globals (most symbols of a big file) are left out of the table.
        defined_at: {
            let local = || {
                resolved
                    .symbols
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.scope != crate::resolve::Scope::Global)
            };
            // (Sized first: collected, it grew and rehashed as it went.)
            let mut at =
                crate::fast_hash::map_with_capacity(local().map(|(_, s)| s.defs.len()).sum());
            at.extend(local().flat_map(|(i, s)| s.defs.iter().map(move |d| (*d, i))));
            at
        },
        referenced: {
            let mut referenced = vec![false; resolved.symbols.len()];
            for r in &resolved.references {
                if let Some(slot) = referenced.get_mut(r.symbol) {
                    *slot = true;
                }
            }
            referenced
        },
        carried,
        ..Checker::blank(source, program, &resolved, lines, capped)
    };
    let old = previous.map(|p| memo::OldRecords::new(p, &parsed.diagnostics));
    let (mut memo, mut reuse) = c.run(remember, old.as_ref());
    reuse.names_reused = how.reused;
    memo.diagnostics = c.capped.final_len();
    let Checker {
        capped,
        symbol_types,
        returns,
        suggestions,
        lines,
        shadowed,
        shadowed_reused,
        function_names,
        carried,
        ..
    } = c;
    reuse.shadowed_reused = shadowed_reused;
    reuse.carried = carried.as_ref().map_or(0, |c| c.taken);
    let leftovers = carried
        .map(carry::Carried::into_leftovers)
        .unwrap_or_default();
    if remember {
        memo.keep_suggestions(suggestions);
        memo.shadowed = shadowed;
        memo.function_names = function_names.0;
    }
    if capped.is_packed() {
        // Only the diagnostics are wanted: the tables go first.
        drop((resolved, symbol_types, returns, memo));
        return (
            Checked::default(),
            reuse,
            Some(capped.into_packed()),
            leftovers,
        );
    }
    let mut diagnostics = capped.into_vec(source);
    crate::diagnostic::sort_by_span(&mut diagnostics);
    let checked = Checked {
        diagnostics,
        resolved,
        symbol_types,
        returns,
        memo,
        lines,
    };
    (checked, reuse, None, leftovers)
}

struct Checker<'a> {
    source: &'a str,
    program: &'a Program,
    resolved: &'a Resolved,
    /// Diagnostics of the statement or pass being checked; moved into
    /// `capped` when it ends (in order, so the cap keeps the same ones).
    diags: Vec<Diagnostic>,
    capped: CappedDiagnostics,
    /// Build every diagnostic, even over the cap ([`check_building_all`]).
    build_all: bool,
    /// A language server's check: its findings are kept for the next one.
    remember: bool,
    /// The last check's shadowed-rule findings, and the window the re-parse
    /// since then replaced.
    previous_shadowed: Option<(Arc<memo::ShadowFindings>, crate::incremental::Window)>,
    /// This check's, to keep (when `remember`).
    shadowed: Option<Arc<memo::ShadowFindings>>,
    /// Whether they are the last check's, moved.
    shadowed_reused: bool,
    /// What the statement being checked reads and writes, while recording.
    tape: Option<Vec<memo::Event>>,
    /// Start and index of the top-level statement being checked.
    stmt_start: usize,
    stmt_index: usize,
    /// The previous check's suggestions for undefined names, and this one's.
    previous_suggestions: Option<Arc<Suggestions>>,
    /// Whether every symbol has the name it had in the previous check, in
    /// order (`resolve::AfterEdit`): the candidates of the suggestions are
    /// then the same.
    same_names: bool,
    suggestions: Option<Arc<Suggestions>>,
    symbol_types: symbol_types::SymbolTypes,
    returns: FastMap<Arc<str>, Ty>,
    /// Functions whose return type is being inferred (recursion guard).
    in_progress: Vec<String>,
    /// Reused by every replay of a memo record.
    replay_scratch: memo::ReplayScratch,
    /// Global name -> type, filled in program order (names borrowed from
    /// the tree, not copied).
    globals: FastMap<&'a str, Ty>,
    /// Line numbers for messages (no copy of the text).
    lines: crate::line_index::LineStarts,
    /// With `stream`: the first definition of each function (the one the
    /// reference keeps). Otherwise in `definitions`.
    functions: FastMap<&'a str, usize>,
    /// What is known of each global from its definitions (made by the
    /// second-definition pass, first of all): what a function sees of it
    /// before it is checked in order, its first function definition, and
    /// whether an assignment defines it.
    definitions: definitions::Definitions,
    /// The nearest-spelling index of the function names (made on first
    /// use; see [`Checker::closest_function`]).
    function_suggester: std::cell::OnceCell<Suggester<'a>>,
    /// The function names of the file in order, as the memo keeps them,
    /// and whether they are those of the previous check: then the nearest
    /// function recorded for a name still is, and replaying asks nothing.
    function_names: (Option<Arc<[Box<str>]>>, bool),
    /// The previous check's (made into `function_names` with the
    /// definitions, see [`memo::function_names`]).
    previous_function_names: Option<Arc<[Box<str>]>>,
    /// Parameter or local symbol by the span of one of its definitions.
    defined_at: FastMap<Span, usize>,
    /// Whether each symbol is referenced at least once.
    referenced: Vec<bool>,
    /// The previous check's diagnostics, after an edit (see `carry`).
    carried: Option<carry::Carried>,
    /// The streaming check's globals (`stream`): then `program` holds only
    /// the function definitions, and `globals`, `late_globals` and
    /// `assigned` are read from here instead.
    stream: Option<stream::Globals<'a>>,
    /// With `stream`: the statement index of each of `program`'s
    /// statements, ascending (`None`: `program` is the whole file).
    positions: Option<&'a [usize]>,
}

/// The name of each function definition of `program`, in order.
fn function_def_names(program: &Program) -> impl Iterator<Item = &str> + Clone {
    program.stmts.iter().filter_map(|s| match &s.kind {
        StmtKind::FuncDef { name, .. } => Some(name.name.as_str()),
        _ => None,
    })
}

/// Names visible while typing an expression.
#[derive(Default, Clone)]
struct Env {
    /// Function frame (parameters and locals assigned so far).
    locals: Vec<(String, Ty)>,
    /// Comprehension variables, innermost last.
    loop_vars: Vec<(String, Ty)>,
    /// Inside a function body (globals defined anywhere are visible).
    in_function: bool,
}

impl<'a> Checker<'a> {
    /// A checker that has learned nothing yet, of `program` (and
    /// `resolved`, its names) in `source`: empty tables, no memo, no
    /// stream. Each way of checking starts from it and fills in its own.
    fn blank(
        source: &'a str,
        program: &'a Program,
        resolved: &'a Resolved,
        lines: crate::line_index::LineStarts,
        capped: CappedDiagnostics,
    ) -> Checker<'a> {
        Checker {
            source,
            program,
            resolved,
            diags: Vec::new(),
            capped,
            build_all: false,
            remember: false,
            previous_shadowed: None,
            shadowed: None,
            shadowed_reused: false,
            tape: None,
            stmt_start: 0,
            stmt_index: 0,
            previous_suggestions: None,
            same_names: false,
            suggestions: None,
            symbol_types: SymbolTypes::default(),
            returns: FastMap::default(),
            in_progress: Vec::new(),
            replay_scratch: memo::ReplayScratch::default(),
            globals: FastMap::default(),
            lines,
            functions: FastMap::default(),
            definitions: definitions::Definitions::default(),
            function_suggester: std::cell::OnceCell::new(),
            function_names: (None, false),
            previous_function_names: None,
            defined_at: FastMap::default(),
            referenced: Vec::new(),
            carried: None,
            stream: None,
            positions: None,
        }
    }

    /// Top-level statement `index` (with `stream`, one of the function
    /// definitions kept: the only statements looked up by index). An
    /// index the checker has not read from the file cannot come, but
    /// would give an error statement, not a panic.
    fn stmt_at(&self, index: usize) -> &'a Stmt {
        static MISSING: Stmt = Stmt {
            kind: StmtKind::Error,
            span: Span::START,
        };
        match self
            .kept_position(index)
            .and_then(|p| self.program.stmts.get(p))
        {
            Some(stmt) => stmt,
            None => &MISSING,
        }
    }

    /// Where top-level statement `index` is among the statements kept
    /// (with `stream`, the function definitions, at `positions`).
    fn kept_position(&self, index: usize) -> Option<usize> {
        match self.positions {
            None => Some(index),
            Some(positions) => positions.binary_search(&index).ok(),
        }
    }

    fn line(&self, offset: usize) -> usize {
        self.lines.line_of(offset) + 1
    }

    /// True once the kept diagnostics and the pending ones fill the cap:
    /// a diagnostic raised from now on is only counted (the cap keeps the
    /// first ones), so the replay and the whole-file passes count its span
    /// with [`Checker::left_out`] instead of building or copying it. A big
    /// file with many mistakes reaches the cap before the whole-file passes
    /// run, and building each of their diagnostics (messages, notes, fixes)
    /// on every keystroke only to drop it was most of their time.
    fn over_cap(&self) -> bool {
        !self.build_all && self.diags.len() >= self.capped.room()
    }

    /// Counts a diagnostic at `span` that the cap leaves out (see
    /// [`Checker::over_cap`]): the same count and first span as pushing it.
    fn left_out(&mut self, span: Span) {
        self.capped.count_over(span);
    }

    /// Moves the pending diagnostics into the capped list.
    fn flush(&mut self) {
        for d in self.diags.drain(..) {
            self.capped.push(d);
        }
    }

    fn run(&mut self, remember: bool, old: Option<&memo::OldRecords<'_>>) -> (CheckMemo, Reuse) {
        self.global_definitions();
        self.flush();
        if let Some(old) = old {
            old.note_window(self.program);
        }
        let mut out = memo::NewMemo::default();
        let program = self.program;
        for (i, stmt) in program.stmts.iter().enumerate() {
            if !memo::worth_recording(stmt) {
                continue;
            }
            if remember {
                self.statement_with_memo(i, stmt, old, &mut out);
            } else {
                self.stmt_start = stmt.span.start();
                self.stmt_index = i;
                self.statement(i, stmt);
            }
            self.flush();
        }
        self.undefined_names();
        self.unused_symbols();
        self.shadowed_mapping_statements();
        self.flush();
        out.finish()
    }

    /// Types top-level statement `i`.
    fn statement(&mut self, i: usize, stmt: &Stmt) {
        {
            match &stmt.kind {
                StmtKind::Assign { name, value } => {
                    let ty = self.infer(value, &Env::default());
                    self.check_assignable(ty, value);
                    // (The name as the text spells it, which outlives the
                    // tree: the streaming check forgets each statement's.)
                    self.write_global(name.span.text(self.source), ty);
                    if let Some(id) = self.global_id(&name.name) {
                        self.write_symbol_type(id, ty, false);
                    }
                }
                StmtKind::Print {
                    format,
                    format_span,
                    args,
                } => {
                    let env = Env::default();
                    for a in args {
                        self.infer(a, &env);
                    }
                    self.check_print(format, *format_span, args.len());
                }
                StmtKind::FuncDef { name, .. } => {
                    self.write_global(name.span.text(self.source), Ty::Function);
                    self.check_function(stmt);
                }
                StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. } => {
                    self.entry_function(stmt, func, i);
                }
                StmtKind::Layout { constraints, .. } => self.layout_overrides(constraints),
                _ => {}
            }
        }
    }

    fn check_assignable(&mut self, ty: Ty, value: &Expr) {
        if matches!(ty, Ty::ProcKind | Ty::MemKind | Ty::Star | Ty::Function) {
            self.diags.push(
                Diagnostic::error("E0219", value.span, format!("{} cannot be assigned to a variable", ty.with_article()))
                    .with_label("not a value")
                    .with_note("variables hold ints, bools, tuples, machine models and tasks; the reference aborts with \"Cannot Assign\""),
            );
        }
    }

    // ----- functions ----------------------------------------------------

    /// Checks the body of the function defined by top-level statement
    /// `index`, out of order (a call infers its return type).
    fn function_body(&mut self, index: usize) {
        // The streaming check keeps only the functions' headers: the body
        // is parsed again.
        let reparsed = self
            .stream
            .as_ref()
            .zip(self.kept_position(index))
            .and_then(|(globals, p)| globals.function_body(p));
        match reparsed {
            Some(stmt) => self.check_function(&stmt),
            None => self.check_function(self.stmt_at(index)),
        }
    }

    /// Checks the body of function definition `stmt`.
    fn check_function(&mut self, stmt: &Stmt) {
        let StmtKind::FuncDef {
            name, params, body, ..
        } = &stmt.kind
        else {
            return;
        };
        let mut env = Env {
            in_function: true,
            ..Env::default()
        };
        for p in params {
            env.locals.push((p.name.name.clone(), Ty::from_param(p.ty)));
            if let Some(id) = self.symbol_defined_at(p.name.span) {
                self.write_symbol_type(id, Ty::from_param(p.ty), true);
            }
        }
        let mut ret: Option<Ty> = None;
        let mut returned_at: Option<Span> = None;
        let mut assigned: FastMap<&str, Span> = FastMap::default();
        for stmt in body {
            if let Some(ret_span) = returned_at {
                self.diags.push(
                    Diagnostic::warning(
                        "W0206",
                        stmt.span,
                        "unreachable statement: the function already returned",
                    )
                    .with_label("never runs")
                    .with_related(ret_span, "the function returns here")
                    .with_fix(Fix::safe(
                        "remove the unreachable statement",
                        vec![(stmt.span, String::new())],
                    )),
                );
                continue;
            }
            match &stmt.kind {
                StmtKind::Assign { name: local, value } => {
                    let ty = self.infer(value, &env);
                    self.check_assignable(ty, value);
                    if let Some(prev) = assigned.get(local.name.as_str()) {
                        let prev_line = self.line_read(prev.start());
                        self.diags.push(
                            Diagnostic::warning(
                                "W0217",
                                local.span,
                                format!("this assignment has no effect: `{}` keeps its first value (line {prev_line})", local.name),
                            )
                            .with_label("ignored by the reference")
                            .with_related(*prev, "first assigned here")
                            .with_note("the reference stores locals with `unordered_map::insert`, which never overwrites; use a new name"),
                        );
                    } else if params.iter().any(|p| p.name.name == local.name) {
                        self.diags.push(
                            Diagnostic::warning(
                                "W0217",
                                local.span,
                                format!("this assignment has no effect: parameter `{}` keeps its argument value", local.name),
                            )
                            .with_label("ignored by the reference"),
                        );
                    } else {
                        assigned.insert(&local.name, local.span);
                        env.locals.push((local.name.clone(), ty));
                        if let Some(id) = self.symbol_defined_at(local.span) {
                            self.write_symbol_type(id, ty, true);
                        }
                    }
                }
                StmtKind::Return { value } => {
                    ret = Some(self.infer(value, &env));
                    returned_at = Some(stmt.span);
                }
                StmtKind::Print {
                    format,
                    format_span,
                    args,
                } => {
                    for a in args {
                        self.infer(a, &env);
                    }
                    self.check_print(format, *format_span, args.len());
                }
                _ => {}
            }
        }
        if returned_at.is_none()
            && !body.is_empty()
            && !body.iter().any(|s| matches!(s.kind, StmtKind::Error))
        {
            self.diags.push(
                Diagnostic::error("E0205", name.span, format!("function `{}` never returns", name.name))
                    .with_label("no `return` statement")
                    .with_note("the reference aborts with \"Error: function without return\" when it is called")
                    .with_note("mapping functions end with `return m[...];`"),
            );
        }
        self.write_return(&name.name, ret.unwrap_or(Ty::Unknown));
    }

    /// The return type of user function `name`, inferring it on demand.
    fn return_type(&mut self, name: &str) -> Ty {
        if let Some(t) = self.known_return(name) {
            return t;
        }
        // Recursion, or a call chain deep enough to threaten the stack.
        if self.in_progress.iter().any(|n| n == name) || self.in_progress.len() >= 16 {
            return Ty::Unknown;
        }
        let Some(index) = self.function_index(name) else {
            return Ty::Unknown;
        };
        self.function_body_read(name);
        self.in_progress.push(name.to_string());
        // Infer without reporting: the body is checked (once) in program order.
        let saved = std::mem::take(&mut self.diags);
        self.function_body(index);
        self.diags = saved;
        self.in_progress.pop();
        let t = self.known_return(name).unwrap_or(Ty::Unknown);
        self.forget_return(name);
        t
    }

    /// The function [`crate::suggest::closest`] picks for `name` among the
    /// file's function names. Asked through one index made per check: a
    /// keystroke replays every statement that names an undefined function,
    /// and each replay asked again over a fresh list of every function of
    /// the file (2 % of a keystroke in the server on a big file, `perf`).
    fn nearest_function_name(&self, name: &str) -> Option<&'a str> {
        self.function_suggester
            .get_or_init(|| Suggester::new(function_def_names(self.program)))
            .closest(name)
    }

    /// Checks the function named by an IndexTaskMap/SingleTaskMap statement.
    fn entry_function(&mut self, stmt: &Stmt, func: &Ident, stmt_index: usize) {
        let keyword = if matches!(stmt.kind, StmtKind::IndexTaskMap { .. }) {
            "IndexTaskMap"
        } else {
            "SingleTaskMap"
        };
        let Some(def_index) = self.function_index(&func.name) else {
            let is_global = self.assigned_global(&func.name);
            let mut d = Diagnostic::error(
                "E0202",
                func.span,
                if is_global {
                    format!("`{}` is a variable, not a mapping function", func.name)
                } else {
                    format!("{keyword}'s function `{}` is undefined", func.name)
                },
            )
            .with_label("no function with this name")
            .with_note(format!(
                "the reference aborts with \"{keyword}'s function undefined\""
            ));
            if let Some(best) = self.closest_function(&func.name) {
                d = d.with_fix(Fix::respell_name(
                    format!("use `{best}`"),
                    func.span,
                    &func.name,
                    best,
                ));
            }
            self.diags.push(d);
            return;
        };
        let def = self.stmt_at(def_index);
        if def_index > stmt_index {
            self.pin_function(&func.name);
            let line = self.line_read(def.span.start());
            // Move the mapping statement after the function definition.
            let (del_start, del_end) = self.line_extent_read(stmt.span);
            let insert_at = self.line_extent_read(def.span).1;
            let text = format!("{}\n", stmt.span.text(self.source));
            self.diags.push(
                Diagnostic::error(
                    "E0203",
                    func.span,
                    format!("`{}` is used before its definition (line {line})", func.name),
                )
                .with_label("not defined yet when this statement runs")
                .with_related(def.span.to(Span::at(def.span.start())), "defined here")
                .with_note(format!("statements run in order; the reference aborts with \"{keyword}'s function undefined\""))
                // (Likely, not safe: moved, the rule may land behind
                // another rule for the same task, which would then win.)
                .with_fix(Fix::likely(
                    "move this statement after the function definition",
                    vec![(Span::new(del_start, del_end), String::new()), (Span::at(insert_at), text)],
                )),
            );
        }
        if let StmtKind::FuncDef { params, name, .. } = &def.kind {
            let ok = params.len() == 1 && params[0].ty == ParamType::Task;
            if !ok {
                let sig = params
                    .iter()
                    .map(|p| format!("{} {}", p.ty.name(), p.name.name))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.pin_function(&name.name);
                self.diags.push(
                    Diagnostic::error(
                        "E0204",
                        func.span,
                        format!("mapping function `{}({sig})` must take exactly one `Task` parameter", name.name),
                    )
                    .with_label("wrong signature")
                    .with_related(name.span, "defined here")
                    .with_note("the reference aborts with \"Entry mapping function's definition must be like func(Task t)\""),
                );
                return;
            }
            let ret = self.return_type(&name.name);
            if !matches!(ret, Ty::Processor | Ty::Unknown) {
                self.pin_function(&name.name);
            }
            if let Ty::Tuple(_) = ret {
                self.diags.push(
                    Diagnostic::warning(
                        "W0220",
                        func.span,
                        format!("mapping function `{}` returns a plain tuple, not a processor of a machine model", name.name),
                    )
                    .with_label("the tuple is read as (node, processor)")
                    .with_related(name.span, "defined here")
                    .with_note("return `m[...]` so the processor kind is checked against the task's placement"),
                );
            } else if !matches!(ret, Ty::Processor | Ty::Unknown) {
                self.diags.push(
                    Diagnostic::error(
                        "E0220",
                        func.span,
                        format!("mapping function `{}` returns {}, not a processor", name.name, ret.with_article()),
                    )
                    .with_label("must return `m[...]`")
                    .with_related(name.span, "defined here")
                    .with_note("index a machine model with one value per dimension, e.g. `return m[i, j];`"),
                );
            }
        }
    }

    fn check_print(&mut self, format: &str, span: Span, args: usize) {
        let holes = format.matches("{}").count();
        if holes > args {
            self.diags.push(
                Diagnostic::error(
                    "E0212",
                    span,
                    format!("{holes} `{{}}` placeholder(s) but {args} argument(s)"),
                )
                .with_label("not enough arguments")
                .with_note("the reference aborts with \"Not enough arguments for print()\""),
            );
        } else if holes < args {
            self.diags.push(
                Diagnostic::warning(
                    "W0212",
                    span,
                    format!("{holes} `{{}}` placeholder(s) but {args} argument(s); the extra arguments are not printed"),
                )
                .with_label("too many arguments"),
            );
        }
    }

    fn layout_overrides(&mut self, constraints: &[Constraint]) {
        let family = |c: &Constraint| match c {
            Constraint::Soa(_) | Constraint::Aos(_) => Some(("SOA/AOS", 0)),
            Constraint::COrder(_) | Constraint::FOrder(_) => Some(("C_order/F_order", 1)),
            Constraint::Align { .. } => Some(("Align", 2)),
            _ => None,
        };
        for (i, c) in constraints.iter().enumerate() {
            let Some((name, fam)) = family(c) else {
                continue;
            };
            if let Some(later) = constraints[i + 1..]
                .iter()
                .find(|d| family(d).map(|f| f.1) == Some(fam))
            {
                let text = c.span().text(self.source);
                let later_text = later.span().text(self.source);
                let msg = if text == later_text {
                    format!("`{text}` is repeated")
                } else {
                    format!("`{text}` is overridden by `{later_text}` later in this statement")
                };
                self.diags.push(
                    Diagnostic::warning("W0222", c.span(), msg)
                        .with_label("no effect")
                        .with_related(later.span(), "this one wins")
                        .with_note(format!("contradictory {name} constraints: the last one in a Layout statement wins"))
                        .with_fix(Fix::safe(format!("remove `{text}`"), vec![(with_leading_blank(self.source, c.span()), String::new())])),
                );
            }
        }
    }
}

/// The type of `Machine(KIND)`-rooted expressions, for globals seen from a
/// function before their assignment has been checked.
fn machine_ctor_dims(value: &Expr) -> Option<Ty> {
    value.as_machine_ctor().map(|_| Ty::MSpace(Some(2)))
}

/// `span` extended over the blanks before it (to delete a word cleanly).
fn with_leading_blank(source: &str, span: Span) -> Span {
    let mut start = span.start();
    while start > 0 && matches!(source.as_bytes()[start - 1], b' ' | b'\t') {
        start -= 1;
    }
    Span::new(start, span.end())
}
