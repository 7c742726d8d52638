//! Statement-level diagnostics: what aborts before any task runs (syntax
//! errors, the top level), unknown names, statements of the wrong kind, and
//! `Region`/`Layout` statements that never apply.

use std::collections::{BTreeSet, HashMap};

use mapwright_grammar::ast::{
    self, Constraint, Expr, ExprKind, MemSel, ParamType, ProcSel, RegionSel, Stmt, StmtKind,
    TaskSel,
};
use mapwright_grammar::diagnostic::line_or_span;
use mapwright_grammar::{Diagnostic, Fix, Span};

use crate::app::{Launch, Task};
use crate::machine::{MemKind, ProcKind};

use super::entry::RegionNaming;
use super::memo::{Nearest, Pool};
use super::memory::{dsl_mem, mem_of};
use super::placement::map_kind_key;
use super::resolver::Resolver;
use super::rules::region_key;

impl<'a> Resolver<'a> {
    /// The reference stops at the first lexical or syntax error
    /// (`yyerror`: "Error at line N:\n\tMESSAGE"). Bison's exact wording of
    /// the unexpected/expected tokens is not reproduced.
    pub(super) fn syntax_fatal(&mut self) {
        let Some(d) = self
            .parsed
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .min_by_key(|d| d.span.start())
        else {
            return;
        };
        let (line, message) = match d.code {
            "E0001" => {
                let c = d.span.text(self.source).chars().next().unwrap_or('?');
                (
                    self.line(d.span.start()),
                    format!("Unrecognized character: {c}"),
                )
            }
            "E0002" => (
                self.line(d.span.start()),
                "Unterminate string constant".to_string(),
            ),
            "E0101" => {
                // A missing `;` is noticed at the next token.
                let next = self
                    .parsed
                    .tokens
                    .iter()
                    .find(|t| t.span.start() >= d.span.end())
                    .map(|t| self.line(t.span.start()))
                    .unwrap_or_else(|| self.source.matches('\n').count() + 1);
                (next, "syntax error".to_string())
            }
            _ => (self.line(d.span.start()), "syntax error".to_string()),
        };
        self.fatal(
            0,
            0,
            "syntax_error",
            format!("Error at line {line}:\n\t{message}\n"),
            Some(d.span),
        );
    }

    /// Top-level statements run in order when the mapper is created; the
    /// reference aborts on a name used before it is assigned, a global
    /// assigned twice, and a mapping statement whose function is not (yet)
    /// a function of the form `f(Task t)` (`IndexTaskMapNode::run`).
    pub(super) fn top_level_fatal(&mut self) {
        let mut globals: HashMap<String, bool> = HashMap::new(); // name -> is function
        for (i, stmt) in self.program.stmts.iter().enumerate() {
            let order = i + 1;
            match &stmt.kind {
                StmtKind::Assign { name, value } => {
                    if let Some(missing) = first_unbound(value, &globals) {
                        self.fatal(
                            0,
                            order,
                            "name_not_found",
                            format!("{missing} not found\n"),
                            Some(stmt.span),
                        );
                        return;
                    }
                    if globals.contains_key(&name.name) {
                        self.fatal(
                            0,
                            order,
                            "assign_conflict",
                            format!(
                                "AssignNode multiple {} cause conflicts in global_symbol!\n",
                                name.name
                            ),
                            Some(stmt.span),
                        );
                        return;
                    }
                    globals.insert(name.name.clone(), false);
                }
                StmtKind::Print { args, .. } => {
                    if let Some(missing) = args.iter().find_map(|a| first_unbound(a, &globals)) {
                        self.fatal(
                            0,
                            order,
                            "name_not_found",
                            format!("{missing} not found\n"),
                            Some(stmt.span),
                        );
                        return;
                    }
                }
                StmtKind::FuncDef { name, .. } => {
                    globals.entry(name.name.clone()).or_insert(true);
                }
                StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. } => {
                    let keyword = if matches!(stmt.kind, StmtKind::IndexTaskMap { .. }) {
                        "IndexTaskMap"
                    } else {
                        "SingleTaskMap"
                    };
                    let raw = match globals.get(&func.name) {
                        None => Some(format!("{keyword}'s function undefined\n")),
                        Some(false) => Some(format!("{keyword}'s mapping function is undefined\n")),
                        Some(true) => {
                            let ok = self.function_def(&func.name).is_some_and(|(params, _)| {
                                params.len() == 1 && params[0].ty == ParamType::Task
                            });
                            (!ok).then(|| {
                                if keyword == "IndexTaskMap" {
                                    "Entry mapping function's definition must be like func(Task t)\n"
                                        .to_string()
                                } else {
                                    "Entry mapping function's must be like func(Task t)\n"
                                        .to_string()
                                }
                            })
                        }
                    };
                    if let Some(raw) = raw {
                        self.fatal(0, order, "function_undefined", raw, Some(stmt.span));
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// The first definition of function `name` (later ones are ignored).
    pub(super) fn function_def(&self, name: &str) -> Option<(&'a [ast::Param], &'a [Stmt])> {
        self.program.stmts.iter().find_map(|s| match &s.kind {
            StmtKind::FuncDef {
                name: n,
                params,
                body,
                ..
            } if n.name == name => Some((params.as_slice(), body.as_slice())),
            _ => None,
        })
    }
}

/// The first name in a top-level expression that is not yet bound (the
/// `Machine` constructor and comprehension variables excepted).
fn first_unbound(e: &Expr, globals: &HashMap<String, bool>) -> Option<String> {
    fn go(e: &Expr, globals: &HashMap<String, bool>, bound: &mut Vec<String>) -> Option<String> {
        match &e.kind {
            ExprKind::Name(n) => {
                if globals.contains_key(n) || bound.contains(n) {
                    None
                } else {
                    Some(n.clone())
                }
            }
            ExprKind::Call { callee, args } => {
                if e.as_machine_ctor().is_some() {
                    return None;
                }
                if !matches!(&callee.kind, ExprKind::Name(n) if n == "Machine") {
                    if let Some(m) = go(callee, globals, bound) {
                        return Some(m);
                    }
                }
                args.iter().find_map(|a| go(a, globals, bound))
            }
            ExprKind::Comprehension { body, var, iter } => {
                if let Some(m) = go(iter, globals, bound) {
                    return Some(m);
                }
                bound.push(var.name.clone());
                let r = go(body, globals, bound);
                bound.pop();
                r
            }
            ExprKind::Unpack(a) | ExprKind::Neg(a) | ExprKind::Paren(a) => go(a, globals, bound),
            ExprKind::Binary { lhs, rhs, .. } => {
                go(lhs, globals, bound).or_else(|| go(rhs, globals, bound))
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
                ..
            } => go(cond, globals, bound)
                .or_else(|| go(then, globals, bound))
                .or_else(|| go(otherwise, globals, bound)),
            ExprKind::Tuple(items) => items.iter().find_map(|a| go(a, globals, bound)),
            ExprKind::Index { base, indices } => go(base, globals, bound)
                .or_else(|| indices.iter().find_map(|a| go(a, globals, bound))),
            ExprKind::Slice { base, lo, hi, .. } => go(base, globals, bound)
                .or_else(|| lo.as_deref().and_then(|x| go(x, globals, bound)))
                .or_else(|| hi.as_deref().and_then(|x| go(x, globals, bound))),
            ExprKind::Prop { base, .. } => go(base, globals, bound),
            ExprKind::Int(_)
            | ExprKind::Bool(_)
            | ExprKind::Proc(_)
            | ExprKind::Mem(_)
            | ExprKind::Star => None,
        }
    }
    go(e, globals, &mut Vec::new())
}

impl<'a> Resolver<'a> {
    /// Unknown task and region names (W0309, W0310).
    pub(super) fn name_checks(&mut self) {
        let app = self.app;
        let task_names = app.task_names();
        // The nearest task name per unknown name, asked once: a big file
        // names the same unknown tasks again and again (a mapper written
        // for another application). With a memo, once across resolutions
        // too (see `ResolveMemo`).
        let mut kept = self.memo.and_then(|m| m.nearest(app));
        // (Without one, answers for this resolution alone: nothing to
        // measure them against.)
        let mut here = Nearest::default();
        let nearest: &mut Nearest = kept.as_deref_mut().unwrap_or(&mut here);
        for stmt in &self.program.stmts {
            let (idents, region): (Vec<&ast::Ident>, Option<&RegionSel>) = match &stmt.kind {
                StmtKind::Task { tasks, .. }
                | StmtKind::IndexTaskMap { tasks, .. }
                | StmtKind::SingleTaskMap { tasks, .. } => (names_of(tasks), None),
                StmtKind::Region { task, region, .. }
                | StmtKind::Layout { task, region, .. }
                | StmtKind::CollectMemory { task, region } => (names_of(task), Some(region)),
                StmtKind::InstanceLimit { task, .. } => (vec![task], None),
                StmtKind::ControlReplicate { tasks } => (tasks.iter().collect(), None),
                _ => continue,
            };
            for id in &idents {
                if app.task(&id.name).is_some() {
                    continue;
                }
                let mut d = Diagnostic::warning(
                    "W0309",
                    id.span,
                    format!("application `{}` has no task `{}`", app.name, id.name),
                )
                .with_label("unknown task")
                .with_note("the reference matches task names exactly; this entry never applies");
                // Unsafe, as the region fixes below: the entry never
                // applies now, and would start to map the task the nearest
                // spelling names, a change to what the mapper does (not
                // for a fix-all on save to make).
                if let Some(best) = nearest.nearest(Pool::Tasks, &id.name, || task_names.clone()) {
                    d = d.with_fix(Fix::unsafe_(
                        format!("use `{best}`"),
                        vec![(id.span, best.to_string())],
                    ));
                }
                // (Straight into the resolver's list, sized from the last
                // resolution's count where a memo gave it.)
                self.diags.push(d);
            }
            if let Some(r) = region {
                let is_region_stmt = matches!(stmt.kind, StmtKind::Region { .. });
                let known: Vec<&Task> = idents.iter().filter_map(|i| app.task(&i.name)).collect();
                let found = self.region_name_check(r, &known, &idents, is_region_stmt, nearest);
                self.diags.extend(found);
            }
        }
    }

    /// The index of `task` in the application, as the memo's pools name
    /// tasks (`None` if it is not one of its tasks: then nothing is kept).
    fn task_index(&self, task: &Task) -> Option<u32> {
        let at = self.app.tasks.iter().position(|t| std::ptr::eq(t, task));
        at.and_then(|i| u32::try_from(i).ok())
    }

    fn region_name_check(
        &self,
        r: &RegionSel,
        tasks: &[&Task],
        idents: &[&ast::Ident],
        is_region_stmt: bool,
        nearest: &mut Nearest,
    ) -> Vec<Diagnostic> {
        let app = self.app;
        let mut out = Vec::new();
        match r {
            RegionSel::Star(_) => {}
            RegionSel::Name(n) => {
                if self.naming == RegionNaming::Index {
                    let mut d = Diagnostic::warning(
                        "W0310",
                        n.span,
                        format!(
                            "`{}` never matches: `{}` runs without -tm:use_semantic_name, so the DSL mapper matches region arguments by index",
                            n.name, app.name
                        ),
                    )
                    .with_label("never matches in this run");
                    // Region accepts an index; find the one the name means.
                    let indices: BTreeSet<u32> = tasks
                        .iter()
                        .flat_map(|t| t.regions_named(&n.name))
                        .map(|a| a.index)
                        .collect();
                    if is_region_stmt && !tasks.is_empty() && indices.len() == 1 {
                        if let Some(i) = indices.first() {
                            d = d.with_fix(Fix::safe(
                                format!("use the argument index {i}"),
                                vec![(n.span, i.to_string())],
                            ));
                        }
                    } else if !is_region_stmt {
                        d = d.with_note(
                            "Layout and CollectMemory cannot name an argument index: use `*` with a task name",
                        );
                    }
                    out.push(d);
                    return out;
                }
                // A scan, not `app.region_names()`: this runs for every
                // region a statement names, and a set per statement was a
                // visible share of resolution time on pennant.
                let known = app
                    .tasks
                    .iter()
                    .flat_map(|t| t.regions.iter())
                    .any(|a| a.name == n.name || a.aliases.contains(&n.name));
                if !known {
                    let mut d = Diagnostic::warning(
                        "W0310",
                        n.span,
                        format!(
                            "application `{}` has no region argument named `{}`",
                            app.name, n.name
                        ),
                    )
                    .with_label("unknown region");
                    let pool = if tasks.is_empty() {
                        Some(Pool::AllArguments)
                    } else {
                        let at: Option<Box<[u32]>> =
                            tasks.iter().map(|t| self.task_index(t)).collect();
                        at.map(Pool::ArgumentsOf)
                    };
                    let best = nearest.nearest(pool, &n.name, || {
                        if tasks.is_empty() {
                            app.region_names().into_iter().collect()
                        } else {
                            tasks
                                .iter()
                                .flat_map(|t| t.regions.iter())
                                .flat_map(|a| a.name_and_aliases())
                                .collect()
                        }
                    });
                    if let Some(best) = best {
                        d = d.with_fix(Fix::unsafe_(format!("use `{best}`"), vec![(n.span, best)]));
                    }
                    out.push(d);
                    return out;
                }
                for (t, id) in tasks
                    .iter()
                    .zip(idents.iter().filter(|i| app.task(&i.name).is_some()))
                {
                    if t.regions_named(&n.name).is_empty() {
                        let args: Vec<&str> = t.regions.iter().map(|a| a.name.as_str()).collect();
                        let mut d = Diagnostic::warning(
                            "W0310",
                            n.span,
                            format!(
                                "task `{}` has no region argument `{}` (its arguments: {})",
                                t.name,
                                n.name,
                                if args.is_empty() {
                                    "none".to_string()
                                } else {
                                    args.join(", ")
                                }
                            ),
                        )
                        .with_label("not an argument of this task")
                        .with_related(id.span, "the task");
                        if tasks.len() == 1 {
                            let pool = self.task_index(t).map(Pool::ArgumentNamesOf);
                            if let Some(best) = nearest.nearest(pool, &n.name, || args.clone()) {
                                d = d.with_fix(Fix::unsafe_(
                                    format!("use `{best}`"),
                                    vec![(n.span, best)],
                                ));
                            }
                        }
                        out.push(d);
                    }
                }
            }
            RegionSel::Index(i, span) => {
                if self.naming == RegionNaming::Semantic {
                    let mut d = Diagnostic::warning(
                        "W0310",
                        *span,
                        format!(
                            "argument index {i} never matches: `{}` runs with -tm:use_semantic_name, so the DSL mapper matches region arguments by name",
                            app.name
                        ),
                    )
                    .with_label("never matches in this run");
                    let names: BTreeSet<&str> = tasks
                        .iter()
                        .filter_map(|t| u32::try_from(*i).ok().and_then(|i| t.region_at(i)))
                        .map(|a| a.name.as_str())
                        .collect();
                    if !tasks.is_empty() && names.len() == 1 {
                        if let Some(name) = names.first() {
                            d = d.with_fix(Fix::safe(
                                format!("use the region name `{name}`"),
                                vec![(*span, name.to_string())],
                            ));
                        }
                    }
                    out.push(d);
                    return out;
                }
                for t in tasks {
                    let has = u32::try_from(*i)
                        .ok()
                        .and_then(|i| t.region_at(i))
                        .is_some();
                    if !has {
                        out.push(
                            Diagnostic::warning(
                                "W0310",
                                *span,
                                format!(
                                    "task `{}` has {} region argument(s); index {i} does not exist",
                                    t.name,
                                    t.regions.len()
                                ),
                            )
                            .with_label("no such argument"),
                        );
                    }
                }
            }
        }
        out
    }

    /// Statement-level checks that need the application but no resolution:
    /// `IndexTaskMap *` (W0308), `Exact` without `Compact` (W0314), map
    /// statements of the wrong launch kind (W0316), InstanceLimit on index
    /// launches (W0317).
    pub(super) fn statement_checks(&mut self) {
        let app = self.app;
        let mut out = Vec::new();
        for (i, stmt) in self.program.stmts.iter().enumerate() {
            match &stmt.kind {
                StmtKind::IndexTaskMap { tasks, func }
                | StmtKind::SingleTaskMap { tasks, func } => {
                    let index = matches!(stmt.kind, StmtKind::IndexTaskMap { .. });
                    let keyword = if index {
                        "IndexTaskMap"
                    } else {
                        "SingleTaskMap"
                    };
                    let launch = if index { Launch::Index } else { Launch::Single };
                    if let TaskSel::Star(star) = tasks {
                        out.push(self.star_map_warning(i, *star, func, keyword, launch));
                    }
                    if let TaskSel::Names(ns) = tasks {
                        for n in ns {
                            let Some(t) = app.task(&n.name) else { continue };
                            if t.launch == launch {
                                continue;
                            }
                            let (what, other) = if index {
                                ("a single launch", "SingleTaskMap")
                            } else {
                                ("an index launch", "IndexTaskMap")
                            };
                            let mut d = Diagnostic::warning(
                                "W0316",
                                n.span,
                                format!("`{}` is {what}: {keyword} never applies to it", n.name),
                            )
                            .with_label(format!("needs {other}"))
                            .with_note(format!(
                                "the reference looks up {keyword} functions for {} launches only (should_fall_back)",
                                if index { "index" } else { "single" }
                            ));
                            if ns.len() == 1 {
                                let kw =
                                    Span::new(stmt.span.start(), stmt.span.start() + keyword.len());
                                if kw.text(self.source) == keyword {
                                    d = d.with_fix(Fix::unsafe_(
                                        format!("use {other}"),
                                        vec![(kw, other.to_string())],
                                    ));
                                }
                            }
                            out.push(d);
                        }
                    }
                }
                StmtKind::Layout { constraints, .. } => {
                    let compact = constraints
                        .iter()
                        .any(|c| matches!(c, Constraint::Compact(_)));
                    if !compact {
                        for c in constraints {
                            if let Constraint::Exact(span) = c {
                                out.push(
                                    Diagnostic::warning(
                                        "W0314",
                                        *span,
                                        "`Exact` has no effect without `Compact`",
                                    )
                                    .with_label("no effect")
                                    .with_note("the reference passes Exact only to the Compact specialization (dsl_default_policy_select_constraints)")
                                    .with_fix(Fix::safe(
                                        "remove `Exact`",
                                        vec![(with_leading_blank(self.source, *span), String::new())],
                                    )),
                                );
                            }
                        }
                    }
                }
                StmtKind::InstanceLimit { task, .. } => {
                    if let Some(t) = app.task(&task.name) {
                        if t.launch == Launch::Index {
                            out.push(
                                Diagnostic::warning(
                                    "W0317",
                                    task.span,
                                    format!("InstanceLimit on `{}`, an index launch, is expected to abort the run", task.name),
                                )
                                .with_label("index launch")
                                .with_note("the DSL mapper's backpressure queue tracks an index launch's slices by (slice domain, context index) but each point task reports back separately, so the second report finds no entry: Assertion `event.exists()' failed (inferred from NSMapper::report_profiling, not observed in a log)")
                                .with_fix(Fix::unsafe_(
                                    "remove the InstanceLimit statement",
                                    vec![(line_or_span(self.source, stmt.span), String::new())],
                                )),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
        self.diags.extend(out);
    }

    /// W0308 with a fix naming the kinds the statement was meant for.
    fn star_map_warning(
        &self,
        stmt_index: usize,
        star: Span,
        func: &ast::Ident,
        keyword: &str,
        launch: Launch,
    ) -> Diagnostic {
        let app = self.app;
        // Tasks of this launch kind that have no entry of their own: they
        // are what `*` was evidently meant for.
        let table = if launch == Launch::Index {
            &self.rules.index_map
        } else {
            &self.rules.single_map
        };
        let mut kinds: BTreeSet<&'static str> = BTreeSet::new();
        for t in app.tasks.iter().filter(|t| t.launch == launch) {
            if table.contains_key(&t.name) {
                continue;
            }
            let (k, _, _, _) = self.resolve_kind(t);
            if let Some(key) = map_kind_key(k) {
                if !table.contains_key(key) {
                    kinds.insert(key);
                }
            }
        }
        // A function that returns a point of `Machine(K)` only suits kind K.
        if let Some(k) = self.function_model_kind(&func.name, 0) {
            kinds = [k.name()]
                .into_iter()
                .filter_map(map_kind_key_str)
                .collect();
        }
        let mut d = Diagnostic::warning(
            "W0308",
            star,
            format!("`{keyword} *` is never consulted: the DSL mapper looks up the task's name, then its processor kind (CPU, GPU, OMP)"),
        )
        .with_label("never used")
        .with_note("Tree2Legion::runindex/runsingle and should_fall_back do not look up `*`; tasks without an entry get Legion's default placement");
        let stmt_span = self.stmt_span(stmt_index);
        match kinds.len() {
            0 => {}
            1 => {
                if let Some(k) = kinds.first() {
                    d = d.with_fix(Fix::unsafe_(
                        format!("apply `{}` to {k} tasks", func.name),
                        vec![(star, k.to_string())],
                    ));
                }
            }
            _ => {
                let text = kinds
                    .iter()
                    .map(|k| format!("{keyword} {k} {};", func.name))
                    .collect::<Vec<_>>()
                    .join("\n");
                d = d.with_fix(Fix::unsafe_(
                    format!(
                        "apply `{}` to {} tasks",
                        func.name,
                        kinds.iter().copied().collect::<Vec<_>>().join(" and ")
                    ),
                    vec![(stmt_span, text)],
                ));
            }
        }
        d
    }
}

fn map_kind_key_str(name: &str) -> Option<&'static str> {
    match name {
        "CPU" => Some("CPU"),
        "GPU" => Some("GPU"),
        "OMP" => Some("OMP"),
        _ => None,
    }
}

/// The names in a task selector.
fn names_of(sel: &TaskSel) -> Vec<&ast::Ident> {
    match sel {
        TaskSel::Names(ns) => ns.iter().collect(),
        _ => Vec::new(),
    }
}

/// `span` widened to the blanks before it (so removing a word leaves no
/// double space).
fn with_leading_blank(source: &str, span: Span) -> Span {
    let bytes = source.as_bytes();
    let mut start = span.start().min(bytes.len());
    while start > 0 && matches!(bytes[start - 1], b' ' | b'\t') {
        start -= 1;
    }
    Span::new(start, span.end())
}

impl<'a> Resolver<'a> {
    /// W0315: Region/Layout statements for named tasks whose processor or
    /// memory field never matches how the task is mapped.
    pub(super) fn never_applies(&mut self) {
        let app = self.app;
        let mut out = Vec::new();
        for stmt in &self.program.stmts {
            match &stmt.kind {
                StmtKind::Region {
                    task: TaskSel::Names(ns),
                    proc: ProcSel::Kind(k, kspan),
                    ..
                } => {
                    for n in ns {
                        let Some(ti) = app.tasks.iter().position(|t| t.name == n.name) else {
                            continue;
                        };
                        let actual = self.tasks[ti].proc_kind;
                        if ProcKind::from(*k) == actual {
                            continue;
                        }
                        let mut d = Diagnostic::warning(
                            "W0315",
                            *kspan,
                            format!("`{}` runs on {actual}, so this {k} rule never applies to it", n.name),
                        )
                        .with_label("never applies")
                        .with_note("a Region statement applies only when the task runs on the named processor kind");
                        if ns.len() == 1 {
                            if let Some(dk) = actual.dsl_kind() {
                                d = d.with_fix(Fix::unsafe_(
                                    format!("apply it to {dk}"),
                                    vec![(*kspan, dk.name().to_string())],
                                ));
                            }
                        }
                        out.push(d);
                    }
                }
                StmtKind::Layout {
                    task: TaskSel::Names(ns),
                    region,
                    mem: MemSel::Kind(m, mspan),
                    ..
                } => {
                    let rkey = region_key(region);
                    for n in ns {
                        let Some(ti) = app.tasks.iter().position(|t| t.name == n.name) else {
                            continue;
                        };
                        let decided = &self.tasks[ti];
                        let used: BTreeSet<MemKind> = decided
                            .regions
                            .iter()
                            .zip(&self.traces[ti].regions)
                            .filter(|(r, t)| {
                                r.instance.is_physical() && (rkey == "*" || t.names.contains(&rkey))
                            })
                            .map(|(r, _)| r.memory)
                            .collect();
                        if used.is_empty() || mem_of(*m).is_some_and(|mk| used.contains(&mk)) {
                            continue;
                        }
                        let used_text: Vec<String> = used.iter().map(|u| u.to_string()).collect();
                        let mut d = Diagnostic::warning(
                            "W0315",
                            *mspan,
                            format!(
                                "`{}` keeps these instances in {}, so this {m} layout never applies",
                                n.name,
                                used_text.join(", ")
                            ),
                        )
                        .with_label("never applies");
                        if used.len() == 1 && ns.len() == 1 {
                            if let Some(u) = used.first().and_then(|u| dsl_mem(*u)) {
                                d = d.with_fix(Fix::unsafe_(
                                    format!("apply it to {u}"),
                                    vec![(*mspan, u.name().to_string())],
                                ));
                            }
                        }
                        out.push(d);
                    }
                }
                _ => {}
            }
        }
        self.diags.extend(out);
    }
}
