//! The checker's whole-file passes over names and rules: second
//! definitions of a global or function, undefined names (with their "did
//! you mean" fixes), unused names, and mapping rules shadowed by an earlier
//! rule with the same key. They read the resolved names and the program as
//! a whole, so they always run over the whole file: in the language
//! server, with caches cooled between keystrokes, about a third of a
//! keystroke on a 5,000-line file (`bench/lsp_bench/RESULTS.md`). Once the
//! cap on kept diagnostics is reached, what they find is only counted, not
//! built (see `Checker::over_cap`); after an edit, what they would build is
//! first asked of the previous check, which kept it (`super::carry`).

use crate::fast_hash::{FastMap, FastSet};
use std::sync::Arc;

use super::{Checker, Ty};
use crate::ast::*;
use crate::diagnostic::{line_or_span, Diagnostic, Fix};
use crate::resolve::SymbolKind;
use crate::suggest::Suggestions;
use crate::Span;

impl<'a> Checker<'a> {
    /// Hands `d` to the capped list at once. These passes can find one
    /// problem per name of the file (an unused name each, say), and
    /// collecting them before the cap keeps only the first ones made the
    /// checker's peak memory grow with the file (100,000 warnings of 2 MB
    /// of statements held at once: ~54 MB, for 1,000 kept).
    fn emit(&mut self, d: Diagnostic) {
        self.diags.push(d);
        self.flush();
    }

    // ----- definitions --------------------------------------------------

    /// Re-assigned globals and redefined functions, found while what is
    /// known of each global from its definitions is gathered
    /// (`Checker::definitions`).
    pub(super) fn global_definitions(&mut self) {
        let mut seconds = Vec::new();
        let mut functions =
            Vec::with_capacity(self.previous_function_names.as_ref().map_or(0, |f| f.len()));
        self.definitions = super::definitions::Definitions::new(
            self.program,
            self.resolved,
            self.source,
            |d| seconds.push(d),
            |name| functions.push(name),
        );
        self.function_names = super::memo::function_names(
            functions.iter().copied(),
            self.previous_function_names.take().as_ref(),
            self.remember,
        );
        for d in seconds {
            if self.over_cap() {
                self.left_out(d.name.span);
                continue;
            }
            let first_line = self.line(d.first.0.start());
            self.emit(second_definition(
                d.name,
                d.stmt,
                d.first,
                first_line,
                d.is_function,
            ));
        }
    }

    // ----- names ----------------------------------------------------------

    pub(super) fn undefined_names(&mut self) {
        // Only the names that will be reported are asked: the cap keeps the
        // first ones, and asking every undefined name over every name was
        // quadratic (2 MB of `y1 = q1 + w1;` lines: minutes, not a second).
        let unresolved = &self.resolved.unresolved;
        let reported = if self.build_all {
            unresolved.len()
        } else {
            self.capped.room().saturating_sub(self.diags.len())
        };
        let words = unresolved.iter().take(reported).map(|(n, _)| n.as_str());
        // When every symbol kept its name since the previous check, whose
        // suggestions were made over them all, the candidates are the
        // same: not gathered and compared name by name again (a read of
        // each name's own allocation, cold in a language server).
        let same = self.previous_suggestions.as_deref().filter(|p| {
            self.same_names
                && !unresolved.is_empty()
                && p.candidate_count() == self.resolved.symbols.len()
        });
        let suggestions = match same {
            Some(previous) => previous.same_candidates(words),
            None => {
                // Only undefined names ask for suggestions: a file without
                // any (the common case) skips gathering the candidates.
                let mut candidates: Vec<&str> = Vec::new();
                if !unresolved.is_empty() {
                    candidates.extend(self.resolved.symbols.iter().map(|s| s.name.as_str()));
                }
                // Updated from the previous check's answers (see `Suggestions`).
                // (In two parts, the globals first: see
                // `Suggestions::new_in_parts`.)
                Suggestions::new_in_parts(
                    self.previous_suggestions.as_deref(),
                    &candidates,
                    self.resolved.global_count().min(candidates.len()),
                    words,
                )
            }
        };
        let mut seen: FastSet<&str> = FastSet::default();
        for (name, span) in &self.resolved.unresolved {
            if self.over_cap() {
                // (`seen` matters no more: every later one is over too.)
                self.left_out(*span);
                continue;
            }
            let first_stmt = self.program.stmts.first().map(|s| s.span.start());
            let first = seen.insert(name.as_str());
            let best = suggestions.get(name);
            // The last check's, if it names the same spelling (the edit
            // left the name alone, and its message is made of the name).
            // Not for a name that would be a machine: the first use's fix
            // adds a definition elsewhere, at the first statement.
            let carried = match (&mut self.carried, machine_kind_for_name(name)) {
                (Some(c), None) => c.take("E0201", *span, |old| is_undefined_name(old, name, best)),
                _ => None,
            };
            let d = carried.unwrap_or_else(|| {
                undefined_name(
                    self.source,
                    name,
                    *span,
                    best,
                    first.then_some(first_stmt.unwrap_or(0)),
                )
            });
            self.emit(d);
        }
        self.suggestions = Some(Arc::new(suggestions));
        for r in &self.resolved.references {
            if r.before_definition {
                let sym = &self.resolved.symbols[r.symbol];
                if sym.kind == SymbolKind::Function {
                    continue; // reported by the entry-function check
                }
                if self.over_cap() {
                    self.left_out(r.span);
                    continue;
                }
                let line = sym.defs.first().map(|d| self.line(d.start())).unwrap_or(0);
                self.emit(used_before_assignment(&sym.name, r.span, line));
            }
        }
    }

    pub(super) fn unused_symbols(&mut self) {
        // (A set: a big file names hundreds of functions only in mapping
        // statements, and scanning the list for each was quadratic. Made
        // when an unreferenced function first asks: a walk of every
        // statement otherwise made on every keystroke.)
        let program = self.program;
        let mut used_by_mapping: Option<FastSet<&str>> = None;
        for (id, sym) in self.resolved.symbols.iter().enumerate() {
            // (Referenced first: most symbols are, and reading the name
            // is a read of its own allocation, cold in a language server.)
            if self.referenced.get(id) == Some(&true) || sym.name.starts_with('_') {
                continue;
            }
            if sym.kind == SymbolKind::Function
                && used_by_mapping
                    .get_or_insert_with(|| program.mapping_function_names().into_iter().collect())
                    .contains(&sym.name.as_str())
            {
                continue;
            }
            let Some(&def) = sym.defs.first() else {
                continue;
            };
            if !reported_when_unused(sym.kind, self.symbol_types.get(id)) {
                continue;
            }
            if self.over_cap() {
                self.left_out(def);
                continue;
            }
            // The last check's, if it was made for the same name and kind
            // (the name is the text at `def`, which the edit left alone;
            // the kind is in the message).
            let (code, _) = unused_kind(sym.kind);
            let carried = self
                .carried
                .as_mut()
                .and_then(|c| c.take(code, def, |old| is_unused(old, sym.kind, &sym.name)));
            let d = carried.unwrap_or_else(|| unused(sym.kind, &sym.name, def));
            self.emit(d);
        }
    }

    /// Mapping statements that can never take effect because an earlier one
    /// with the same key wins.
    pub(super) fn shadowed_mapping_statements(&mut self) {
        if !self.remember {
            // Reported as found: a check run once keeps no list of them
            // (one per line in a file of repeated rules), and grows its
            // table of keys, for its peak memory.
            let program = self.program;
            let stmts = program.stmts.iter().enumerate().map(|(i, s)| (i, &**s));
            self.find_shadowed(stmts, 0, |c, _, stmt, _, key, wins| {
                if let Some(wins) = wins {
                    c.report_shadowed(stmt.span, wins, &key.shown());
                }
            });
            return;
        }
        let program = self.program;
        // The last check's findings hold while no rule statement was
        // edited: none in the re-parsed window, then or now. The rules
        // outside it are the same trees, in the same order. (Only their
        // spans are kept: lines and fixes are made from the new text
        // below.)
        let previous = self.previous_shadowed.take();
        let reused = previous.as_ref().and_then(|(old, window)| {
            old.untouched_by(window, &program.stmts)
                .then(|| old.moved(window))
        });
        self.shadowed_reused = reused.is_some();
        // (Tests run unoptimised: there the moved rule indices are
        // compared with the rules counted again.)
        debug_assert!(reused
            .as_ref()
            .is_none_or(|r| r.rule_at == rule_indices(program)));
        // Else found again: for the keys the edit touched only, after an
        // edit (see `check::shadowed`).
        let found = match (reused, &previous) {
            (Some(found), _) => found,
            (None, Some((old, window))) => self.shadowed_after_edit(old, window),
            (None, None) => self.shadowed_in_whole_file(),
        };
        debug_assert!(found.rule_at == rule_indices(program));
        for f in &found.found {
            self.report_shadowed(f.at, f.wins, &f.shown);
        }
        self.shadowed = Some(Arc::new(found));
    }

    /// W0218 for the rule at `at`, which `wins` shadows (or only counted,
    /// past the cap).
    fn report_shadowed(&mut self, at: Span, wins: Span, shown: &str) {
        if self.over_cap() {
            self.left_out(at);
            return;
        }
        if let Some(d) = self.carried_shadowed(at, wins, shown) {
            self.emit(d);
            return;
        }
        let line = self.line(wins.start());
        self.emit(shadowed_rule(self.source, at, wins, shown, line));
    }

    /// The last check's W0218 for the rule at `at` shadowed by `wins`, if
    /// the edit left what it is made of alone: both rules, the line number
    /// of `wins` in its message, and the line of `at`, which its fix
    /// removes when the rule is alone on it (see `carry`).
    fn carried_shadowed(&mut self, at: Span, wins: Span, shown: &str) -> Option<Diagnostic> {
        let source = self.source;
        let carried = self.carried.as_mut()?;
        let (line_start, line_end) = crate::diagnostic::line_extent(source, at);
        let same_line_number = carried.same_lines() || carried.before(wins);
        if !same_line_number || !carried.untouched(Span::new(line_start, line_end)) {
            return None;
        }
        let old_wins = carried.old_span(wins)?;
        carried.take("W0218", at, |old| is_shadowed_rule(old, shown, old_wins))
    }

    /// Each key of the rule statements `stmts` (index, statement), in
    /// order, handed to `each` with the index and statement, the key's
    /// place among the statement's keys, and the earlier statement of
    /// `stmts` that has the key, if any (then this one is shadowed).
    /// `rules`: how many keys to make room for.
    pub(super) fn find_shadowed<'s>(
        &mut self,
        stmts: impl Iterator<Item = (usize, &'s Stmt)>,
        rules: usize,
        mut each: impl FnMut(&mut Self, usize, &'s Stmt, u32, &RuleKey<'a>, Option<Span>),
    ) {
        let mut first: FastMap<RuleKey<'a>, Span> = crate::fast_hash::map_with_capacity(rules);
        let mut keys = Vec::new();
        for (i, stmt) in stmts {
            keys.clear();
            mapping_keys(stmt, self.source, &mut keys);
            // The memo's reuse condition counts rules with `is_rule`: it
            // must name every statement that has keys.
            debug_assert!(keys.is_empty() || is_rule(stmt), "{:?}", stmt.kind);
            for (place, key) in keys.iter().enumerate() {
                let wins = match first.get(key) {
                    None => {
                        first.insert(*key, stmt.span);
                        None
                    }
                    Some(&wins) => Some(wins),
                };
                each(self, i, stmt, place as u32, key, wins);
            }
        }
    }
}

/// E0215 (a global assigned again) or W0216 (a function defined again)
/// for the definition of `name` in the statement at `stmt`; `first` is
/// the first definition's name and whether it was a function's, on line
/// `first_line`.
pub(super) fn second_definition(
    name: &Ident,
    stmt: Span,
    (first, first_is_func): (Span, bool),
    first_line: usize,
    is_func: bool,
) -> Diagnostic {
    if !is_func {
        let what = if first_is_func { "function" } else { "global" };
        Diagnostic::error(
            "E0215",
            name.span,
            format!("`{}` is already defined as a {what} (line {first_line})", name.name),
        )
        .with_label("second definition")
        .with_related(first, "first defined here")
        .with_note(format!(
            "globals can be assigned once; the reference aborts with \"AssignNode multiple {} cause conflicts in global_symbol!\"",
            name.name
        ))
        .with_fix(Fix::unsafe_("remove this assignment", vec![(stmt, String::new())]))
    } else {
        Diagnostic::warning(
            "W0216",
            name.span,
            format!(
                "this definition of `{}` is ignored: the first one (line {first_line}) wins",
                name.name
            ),
        )
        .with_label("ignored")
        .with_related(first, "this definition is used")
    }
}

/// E0201 for the undefined `name` at `span`, with a fix to use `best`,
/// and, given where the file's first statement starts (for the first use
/// of the name only), one to define a machine model its name suggests.
pub(super) fn undefined_name(
    source: &str,
    name: &str,
    span: Span,
    best: Option<&str>,
    first_stmt: Option<usize>,
) -> Diagnostic {
    let mut d = Diagnostic::error("E0201", span, format!("`{name}` not found"))
        .with_label("undefined name")
        .with_note(format!("the reference aborts with \"{name} not found\""));
    if let Some(best) = best {
        d = d.with_fix(Fix::respell_name(format!("use `{best}`"), span, name, best));
    }
    if let (Some(kind), Some(first_stmt)) = (machine_kind_for_name(name), first_stmt) {
        // Inserted at the start of the first statement's line.
        let at = source
            .get(..first_stmt)
            .and_then(|before| before.rfind('\n'))
            .map_or(0, |i| i + 1);
        d = d.with_fix(Fix::safe(
            format!("add `{name} = Machine({kind});`"),
            vec![(Span::at(at), format!("{name} = Machine({kind});\n"))],
        ));
    }
    d
}

/// Whether `d` is what [`undefined_name`] makes for `name` with the fix
/// to use `best`, a name that suggests no machine model (at whatever
/// place): what an E0201 taken over from the last check must be (see
/// `carry`). It reads the message as [`undefined_name`] writes it; the
/// tests below hold the two together.
fn is_undefined_name(d: &Diagnostic, name: &str, best: Option<&str>) -> bool {
    let respelled = |fix: &Fix| {
        fix.title
            .strip_prefix("use `")
            .and_then(|t| t.strip_suffix('`'))
            == best
    };
    d.code == "E0201"
        && d.message
            .strip_prefix('`')
            .and_then(|m| m.strip_prefix(name))
            == Some("` not found")
        && match (best, d.fixes.as_slice()) {
            (None, []) => true,
            (Some(_), [fix]) => respelled(fix),
            _ => false,
        }
}

/// E0201 for a top-level use at `span` of the global `name`, assigned
/// later (on line `line`).
pub(super) fn used_before_assignment(name: &str, span: Span, line: usize) -> Diagnostic {
    Diagnostic::error(
        "E0201",
        span,
        format!("`{name}` is used before it is assigned (line {line})"),
    )
    .with_label("not defined yet")
    .with_note("top-level statements run in order")
}

/// Whether a symbol of `kind` (a parameter of type `ty`) is reported when
/// nothing uses it: comprehension variables are not, nor the task
/// parameter, which entry functions must take even if unused.
pub(super) fn reported_when_unused(kind: SymbolKind, ty: Option<Ty>) -> bool {
    match kind {
        SymbolKind::LoopVar => false,
        SymbolKind::Parameter => ty != Some(Ty::Task),
        SymbolKind::Function | SymbolKind::Global | SymbolKind::Local => true,
    }
}

/// W0213 or W0214 for the unused symbol `name` of `kind`, defined at `def`.
pub(super) fn unused(kind: SymbolKind, name: &str, def: Span) -> Diagnostic {
    let (code, what) = unused_kind(kind);
    Diagnostic::warning(code, def, format!("unused {what} `{name}`"))
        .with_label("never used")
        .with_note("prefix the name with `_` to silence this")
}

/// Whether `d` is what [`unused`] makes for the symbol `name` of `kind`
/// (at whatever place): what a W0213/W0214 taken over from the last check
/// must be (see `carry`). It reads the message as [`unused`] writes it;
/// the tests below hold the two together.
fn is_unused(d: &Diagnostic, kind: SymbolKind, name: &str) -> bool {
    let (code, what) = unused_kind(kind);
    d.code == code
        && d.message
            .strip_prefix("unused ")
            .and_then(|m| m.strip_prefix(what))
            .and_then(|m| m.strip_prefix(" `"))
            .and_then(|m| m.strip_prefix(name))
            == Some("`")
}

/// The code of the unused-name warning for a symbol of `kind`, and what
/// its message calls it.
fn unused_kind(kind: SymbolKind) -> (&'static str, &'static str) {
    match kind {
        SymbolKind::Function => ("W0213", "function"),
        SymbolKind::Global => ("W0214", "variable"),
        SymbolKind::Local => ("W0214", "local variable"),
        SymbolKind::Parameter | SymbolKind::LoopVar => ("W0214", "parameter"),
    }
}

/// W0218 for the rule at `at`, shown as `shown`, which the earlier rule
/// at `wins` (on line `line`) shadows.
pub(super) fn shadowed_rule(
    source: &str,
    at: Span,
    wins: Span,
    shown: &str,
    line: usize,
) -> Diagnostic {
    Diagnostic::warning(
        "W0218",
        at,
        format!("this rule for {shown} never takes effect: the earlier one on line {line} wins"),
    )
    .with_label("shadowed")
    .with_related(wins, "this rule wins")
    .with_note("the reference keeps the first rule for each key (it inserts into a map that never overwrites)")
    .with_fix(Fix::unsafe_("remove the shadowed rule", vec![(line_or_span(source, at), String::new())]))
}

/// Whether `d` is what [`shadowed_rule`] makes for a rule shown as
/// `shown` that the rule at `wins` shadows (at whatever place and line):
/// what a W0218 taken over from the last check must be, its line number
/// and fix checked by the caller (see `Checker::carried_shadowed`). It
/// reads the message as [`shadowed_rule`] writes it; the tests below hold
/// the two together.
fn is_shadowed_rule(d: &Diagnostic, shown: &str, wins: Span) -> bool {
    d.code == "W0218"
        && matches!(d.related.as_slice(), [r] if r.span == wins)
        && d.message
            .strip_prefix("this rule for ")
            .and_then(|m| m.strip_prefix(shown))
            .is_some_and(|m| m.starts_with(" never takes effect"))
}

/// The index of each rule statement of `program`, ascending.
pub(super) fn rule_indices(program: &Program) -> Vec<u32> {
    (program.stmts.iter().enumerate())
        .filter(|(_, s)| is_rule(s))
        .map(|(i, _)| i as u32)
        .collect()
}

/// True for the statements [`mapping_keys`] gives keys for (the two must
/// name the same kinds: `find_shadowed` asserts it in debug builds, which
/// the property tests run).
pub(super) fn is_rule(stmt: &Stmt) -> bool {
    matches!(
        stmt.kind,
        StmtKind::Task { .. }
            | StmtKind::Region { .. }
            | StmtKind::Layout { .. }
            | StmtKind::InstanceLimit { .. }
            | StmtKind::IndexTaskMap { .. }
            | StmtKind::SingleTaskMap { .. }
    )
}

/// `mgpu`, `m_gpu`, `gpus`...: the processor kind such a name suggests.
fn machine_kind_for_name(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    if !lower.starts_with('m') {
        return None;
    }
    if lower.contains("gpu") {
        Some("GPU")
    } else if lower.contains("cpu") {
        Some("CPU")
    } else if lower.contains("omp") {
        Some("OMP")
    } else {
        None
    }
}

/// The key under which the reference stores a mapping statement: its
/// kind, one task (a name, `*` or a processor kind) and, for `Region` and
/// `Layout`, the region and the processor or memory. Borrowed from the
/// tree: this pass runs on every keystroke over every rule of the file,
/// and building a `String` per key was most of its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct RuleKey<'a> {
    kind: RuleKind,
    task: &'a str,
    region: RegionKey<'a>,
    /// The processor (`Region`) or memory (`Layout`) kind, or `*`.
    target: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum RuleKind {
    Task,
    Region,
    Layout,
    Limit,
    Index,
    Single,
}

/// A region field: `*` and names as written, argument indices as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum RegionKey<'a> {
    None,
    Name(&'a str),
    Index(i64),
}

impl std::fmt::Display for RegionKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegionKey::None => Ok(()),
            RegionKey::Name(n) => f.write_str(n),
            RegionKey::Index(i) => write!(f, "{i}"),
        }
    }
}

impl RuleKey<'_> {
    /// How the rule is shown in the shadowing warning.
    pub(super) fn shown(&self) -> String {
        let RuleKey {
            task,
            region,
            target,
            ..
        } = self;
        match self.kind {
            RuleKind::Task => format!("task `{task}`"),
            RuleKind::Region => format!("`Region {task} {region} {target}`"),
            RuleKind::Layout => format!("`Layout {task} {region} {target}`"),
            RuleKind::Limit => format!("`InstanceLimit {task}`"),
            RuleKind::Index => format!("`IndexTaskMap {task}`"),
            RuleKind::Single => format!("`SingleTaskMap {task}`"),
        }
    }
}

/// The keys under which the reference stores a mapping statement (one per
/// task it names), pushed onto `out`. Names are borrowed from `source`
/// (where the tree's names are spelled), so a key outlives the tree: the
/// streaming check forgets each statement's.
pub(super) fn mapping_keys<'a>(stmt: &Stmt, source: &'a str, out: &mut Vec<RuleKey<'a>>) {
    let tasks = |sel: &TaskSel, each: &mut dyn FnMut(&'a str)| match sel {
        TaskSel::Star(_) => each("*"),
        TaskSel::Names(ns) => ns.iter().for_each(|n| each(n.span.text(source))),
        TaskSel::Kind(k, _) => each(k.name()),
    };
    let region = |r: &RegionSel| match r {
        RegionSel::Star(_) => RegionKey::Name("*"),
        RegionSel::Name(n) => RegionKey::Name(n.span.text(source)),
        RegionSel::Index(i, _) => RegionKey::Index(*i),
    };
    let key = |kind, task, region, target| RuleKey {
        kind,
        task,
        region,
        target,
    };
    match &stmt.kind {
        StmtKind::Task { tasks: sel, .. } => tasks(sel, &mut |t| {
            out.push(key(RuleKind::Task, t, RegionKey::None, ""))
        }),
        StmtKind::Region {
            task,
            region: r,
            proc,
            ..
        } => {
            let p = match proc {
                ProcSel::Star(_) => "*",
                ProcSel::Kind(k, _) => k.name(),
            };
            let r = region(r);
            tasks(task, &mut |t| out.push(key(RuleKind::Region, t, r, p)))
        }
        StmtKind::Layout {
            task,
            region: r,
            mem,
            ..
        } => {
            let m = match mem {
                MemSel::Star(_) => "*",
                MemSel::Kind(k, _) => k.name(),
            };
            let r = region(r);
            tasks(task, &mut |t| out.push(key(RuleKind::Layout, t, r, m)))
        }
        StmtKind::InstanceLimit { task, .. } => out.push(key(
            RuleKind::Limit,
            task.span.text(source),
            RegionKey::None,
            "",
        )),
        StmtKind::IndexTaskMap { tasks: sel, .. } => tasks(sel, &mut |t| {
            out.push(key(RuleKind::Index, t, RegionKey::None, ""))
        }),
        StmtKind::SingleTaskMap { tasks: sel, .. } => tasks(sel, &mut |t| {
            out.push(key(RuleKind::Single, t, RegionKey::None, ""))
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each recogniser of a pass's diagnostic (what `carry` takes over)
    /// accepts what its builder makes, and not what it makes for another
    /// name, kind, suggestion, key or winning rule.
    #[test]
    fn a_taken_over_diagnostic_is_recognised_only_as_what_its_builder_makes() {
        let span = Span::new(4, 6);
        let kinds = [
            SymbolKind::Function,
            SymbolKind::Global,
            SymbolKind::Local,
            SymbolKind::Parameter,
        ];
        for kind in kinds {
            let d = unused(kind, "ab", span);
            assert!(is_unused(&d, kind, "ab"), "{kind:?}");
            assert!(!is_unused(&d, kind, "a") && !is_unused(&d, kind, "abc"));
            for other in kinds
                .iter()
                .filter(|&&k| unused_kind(k) != unused_kind(kind))
            {
                assert!(!is_unused(&d, *other, "ab"), "{kind:?} as {other:?}");
            }
        }
        let source = "x = qq;\n";
        for best in [None, Some("q"), Some("qqq")] {
            let d = undefined_name(source, "qq", span, best, None);
            assert!(is_undefined_name(&d, "qq", best), "{best:?}");
            assert!(!is_undefined_name(&d, "q", best));
            for other in [None, Some("q"), Some("qqq")]
                .into_iter()
                .filter(|o| *o != best)
            {
                assert!(!is_undefined_name(&d, "qq", other), "{best:?} as {other:?}");
            }
        }
        let source = "Task a GPU;\nTask a GPU;\n";
        let (wins, at) = (Span::new(0, 11), Span::new(12, 23));
        let d = shadowed_rule(source, at, wins, "task `a`", 1);
        assert!(is_shadowed_rule(&d, "task `a`", wins));
        assert!(!is_shadowed_rule(&d, "task `ab`", wins));
        assert!(!is_shadowed_rule(&d, "task", wins));
        assert!(!is_shadowed_rule(&d, "task `a`", Span::new(1, 11)));
    }
}
