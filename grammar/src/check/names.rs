//! The checker's whole-file passes over names and rules: second
//! definitions of a global or function, undefined names (with their "did
//! you mean" fixes), unused names, and mapping rules shadowed by an earlier
//! rule with the same key. They read the resolved names and the program as
//! a whole, so they always run over the whole file (cheap next to typing
//! each statement, which [`super::memo`] reuses). Once the cap on kept
//! diagnostics is reached, what they find is only counted, not built (see
//! `Checker::over_cap`).

use crate::fast_hash::{FastMap, FastSet};
use std::sync::Arc;

use super::memo::ShadowFindings;
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

    /// Re-assigned globals and redefined functions.
    pub(super) fn global_definitions(&mut self) {
        let mut first: FastMap<&str, (Span, bool)> =
            crate::fast_hash::map_with_capacity(self.table_size_hint);
        for stmt in &self.program.stmts {
            let (name, is_func) = match &stmt.kind {
                StmtKind::Assign { name, .. } => (name, false),
                StmtKind::FuncDef { name, .. } => (name, true),
                _ => continue,
            };
            let Some(&(prev, prev_is_func)) = first.get(name.name.as_str()) else {
                first.insert(&name.name, (name.span, is_func));
                continue;
            };
            if self.over_cap() {
                self.left_out(name.span);
                continue;
            }
            let prev_line = self.line(prev.start());
            if !is_func {
                let what = if prev_is_func { "function" } else { "global" };
                self.emit(
                    Diagnostic::error(
                        "E0215",
                        name.span,
                        format!("`{}` is already defined as a {what} (line {prev_line})", name.name),
                    )
                    .with_label("second definition")
                    .with_related(prev, "first defined here")
                    .with_note(format!(
                        "globals can be assigned once; the reference aborts with \"AssignNode multiple {} cause conflicts in global_symbol!\"",
                        name.name
                    ))
                    .with_fix(Fix::unsafe_("remove this assignment", vec![(stmt.span, String::new())])),
                );
            } else {
                self.emit(
                    Diagnostic::warning(
                        "W0216",
                        name.span,
                        format!("this definition of `{}` is ignored: the first one (line {prev_line}) wins", name.name),
                    )
                    .with_label("ignored")
                    .with_related(prev, "this definition is used"),
                );
            }
        }
    }

    // ----- names ----------------------------------------------------------

    pub(super) fn undefined_names(&mut self) {
        // Only undefined names ask for suggestions: a file without any (the
        // common case, on every keystroke) skips gathering the candidates.
        let mut candidates: Vec<&str> = Vec::new();
        if !self.resolved.unresolved.is_empty() {
            candidates.extend(self.resolved.symbols.iter().map(|s| s.name.as_str()));
        }
        // Updated from the previous check's answers (see `Suggestions`).
        let suggestions = Suggestions::new(
            self.previous_suggestions.as_deref(),
            &candidates,
            self.resolved.unresolved.iter().map(|(n, _)| n.as_str()),
        );
        let mut seen: FastSet<&str> = FastSet::default();
        for (name, span) in &self.resolved.unresolved {
            if self.over_cap() {
                // (`seen` matters no more: every later one is over too.)
                self.left_out(*span);
                continue;
            }
            let mut d = Diagnostic::error("E0201", *span, format!("`{name}` not found"))
                .with_label("undefined name")
                .with_note(format!("the reference aborts with \"{name} not found\""));
            if let Some(best) = suggestions.get(name) {
                d = d.with_fix(Fix::safe(
                    format!("use `{best}`"),
                    vec![(*span, best.to_string())],
                ));
            }
            if let Some(kind) = machine_kind_for_name(name) {
                if !seen.contains(name.as_str()) {
                    let at = self
                        .program
                        .stmts
                        .first()
                        .map(|s| s.span.start())
                        .unwrap_or(0);
                    let at = self.insertion_point_before_uses(at);
                    d = d.with_fix(Fix::safe(
                        format!("add `{name} = Machine({kind});`"),
                        vec![(Span::at(at), format!("{name} = Machine({kind});\n"))],
                    ));
                }
            }
            seen.insert(name);
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
                self.emit(
                    Diagnostic::error(
                        "E0201",
                        r.span,
                        format!("`{}` is used before it is assigned (line {line})", sym.name),
                    )
                    .with_label("not defined yet")
                    .with_note("top-level statements run in order"),
                );
            }
        }
    }

    /// Where to insert a new global: the first statement's line start.
    fn insertion_point_before_uses(&self, first_stmt: usize) -> usize {
        self.source[..first_stmt]
            .rfind('\n')
            .map(|i| i + 1)
            .unwrap_or(0)
    }

    pub(super) fn unused_symbols(&mut self) {
        let used_by_mapping = self.program.mapping_function_names();
        for (id, sym) in self.resolved.symbols.iter().enumerate() {
            if sym.name.starts_with('_') || self.referenced.get(id) == Some(&true) {
                continue;
            }
            if sym.kind == SymbolKind::Function && used_by_mapping.contains(&sym.name.as_str()) {
                continue;
            }
            let Some(&def) = sym.defs.first() else {
                continue;
            };
            let (code, what) = match sym.kind {
                SymbolKind::Function => ("W0213", "function"),
                SymbolKind::Global => ("W0214", "variable"),
                SymbolKind::Local => ("W0214", "local variable"),
                SymbolKind::LoopVar => continue,
                SymbolKind::Parameter => {
                    if self.symbol_types.get(id) == Some(Ty::Task) {
                        continue; // entry functions must take the task even if unused
                    }
                    ("W0214", "parameter")
                }
            };
            if self.over_cap() {
                self.left_out(def);
                continue;
            }
            self.emit(
                Diagnostic::warning(code, def, format!("unused {what} `{}`", sym.name))
                    .with_label("never used")
                    .with_note("prefix the name with `_` to silence this"),
            );
        }
    }

    /// Mapping statements that can never take effect because an earlier one
    /// with the same key wins.
    pub(super) fn shadowed_mapping_statements(&mut self) {
        if !self.remember {
            // Reported as found: a check run once keeps no list of them
            // (one per line in a file of repeated rules), and grows its
            // table of keys, for its peak memory.
            self.find_shadowed(0, |c, at, wins, key| {
                c.report_shadowed(at, wins, &key.shown())
            });
            return;
        }
        let program = self.program;
        // Counted: the table is sized by it (it grew and rehashed ten times
        // on a big file) and it is compared with the last check's.
        let rules = program.stmts.iter().filter(|s| is_rule(s)).count();
        // The last check's findings hold while no rule statement was
        // edited: none in the re-parsed window now, and as many rules as
        // before (so none in the window then either). The rules outside it
        // are the same trees, in the same order. (Only their spans are
        // kept: lines and fixes are made from the new text below.)
        let reused = self.previous_shadowed.take().and_then(|(old, window)| {
            let now = program.stmts.get(window.first..window.new_end_stmt)?;
            (old.rules == rules && !now.iter().any(|s| is_rule(s))).then(|| old.moved(&window))
        });
        self.shadowed_reused = reused.is_some();
        let found = reused.unwrap_or_else(|| {
            let mut found = Vec::new();
            self.find_shadowed(rules, |_, at, wins, key| {
                found.push((at, wins, Arc::from(key.shown())))
            });
            ShadowFindings { rules, found }
        });
        for (at, wins, shown) in &found.found {
            self.report_shadowed(*at, *wins, shown);
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
        let line = self.line(wins.start());
        self.emit(
            Diagnostic::warning(
                "W0218",
                at,
                format!("this rule for {shown} never takes effect: the earlier one on line {line} wins"),
            )
            .with_label("shadowed")
            .with_related(wins, "this rule wins")
            .with_note("the reference keeps the first rule for each key (it inserts into a map that never overwrites)")
            .with_fix(Fix::unsafe_("remove the shadowed rule", vec![(line_or_span(self.source, at), String::new())])),
        );
    }

    /// Each rule statement whose key an earlier one has, in source order
    /// (a statement with several keys once per key shadowed), handed to
    /// `found` with the statement that wins.
    fn find_shadowed(
        &mut self,
        rules: usize,
        mut found: impl FnMut(&mut Self, Span, Span, &RuleKey<'a>),
    ) {
        let mut first: FastMap<RuleKey<'a>, Span> = crate::fast_hash::map_with_capacity(rules);
        let mut keys = Vec::new();
        let program = self.program;
        for stmt in &program.stmts {
            keys.clear();
            mapping_keys(stmt, &mut keys);
            // The memo's reuse condition counts rules with `is_rule`: it
            // must name every statement that has keys.
            debug_assert!(keys.is_empty() || is_rule(stmt), "{:?}", stmt.kind);
            for key in &keys {
                match first.get(key) {
                    None => {
                        first.insert(*key, stmt.span);
                    }
                    Some(&wins) => found(self, stmt.span, wins, key),
                }
            }
        }
    }
}

/// True for the statements [`mapping_keys`] gives keys for (the two must
/// name the same kinds: `find_shadowed` asserts it in debug builds, which
/// the property tests run).
fn is_rule(stmt: &Stmt) -> bool {
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
struct RuleKey<'a> {
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
    fn shown(&self) -> String {
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
/// task it names), pushed onto `out`.
fn mapping_keys<'a>(stmt: &'a Stmt, out: &mut Vec<RuleKey<'a>>) {
    fn tasks<'a>(sel: &'a TaskSel, mut each: impl FnMut(&'a str)) {
        match sel {
            TaskSel::Star(_) => each("*"),
            TaskSel::Names(ns) => ns.iter().for_each(|n| each(&n.name)),
            TaskSel::Kind(k, _) => each(k.name()),
        }
    }
    fn region(r: &RegionSel) -> RegionKey<'_> {
        match r {
            RegionSel::Star(_) => RegionKey::Name("*"),
            RegionSel::Name(n) => RegionKey::Name(&n.name),
            RegionSel::Index(i, _) => RegionKey::Index(*i),
        }
    }
    let key = |kind, task, region, target| RuleKey {
        kind,
        task,
        region,
        target,
    };
    match &stmt.kind {
        StmtKind::Task { tasks: sel, .. } => tasks(sel, |t| {
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
            tasks(task, |t| out.push(key(RuleKind::Region, t, region(r), p)))
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
            tasks(task, |t| out.push(key(RuleKind::Layout, t, region(r), m)))
        }
        StmtKind::InstanceLimit { task, .. } => {
            out.push(key(RuleKind::Limit, &task.name, RegionKey::None, ""))
        }
        StmtKind::IndexTaskMap { tasks: sel, .. } => tasks(sel, |t| {
            out.push(key(RuleKind::Index, t, RegionKey::None, ""))
        }),
        StmtKind::SingleTaskMap { tasks: sel, .. } => tasks(sel, |t| {
            out.push(key(RuleKind::Single, t, RegionKey::None, ""))
        }),
        _ => {}
    }
}
