//! Mapping functions, statically: how IndexTaskMap/SingleTaskMap functions
//! use their `Task` parameter and which machine model they index, checked
//! without running them.

use std::collections::{BTreeMap, HashMap, HashSet};

use mapwright_grammar::ast::{self, Expr, ExprKind, ParamType, Prop, StmtKind, TaskSel};
use mapwright_grammar::suggest::closest;
use mapwright_grammar::{Diagnostic, Fix, Span};

use crate::app::Launch;
use crate::machine::ProcKind;

use super::resolver::{short, Resolver};

/// How a mapping function uses its `Task` parameter. `guarded`: the use
/// sits in a branch of a `?:` (or a comprehension's body, or a function
/// called from one), which the reference evaluates lazily
/// (`TernaryExprNode::run`), so it may never run for a given launch; only
/// evaluating the function on the launch's points can tell.
#[derive(Debug, Clone)]
pub(super) enum TaskUse {
    /// `t.ipoint[k]` / `t.ispace[k]` with a literal `k`.
    Index { k: i64, span: Span, guarded: bool },
    /// `t.parent`.
    Parent { span: Span, guarded: bool },
    /// `t.ipoint` / `t.ispace`.
    Point { span: Span, guarded: bool },
}

impl TaskUse {
    fn guarded(&self) -> bool {
        match self {
            TaskUse::Index { guarded, .. }
            | TaskUse::Parent { guarded, .. }
            | TaskUse::Point { guarded, .. } => *guarded,
        }
    }
}

/// Every sub-expression of `e` (parents first) with whether it runs only
/// conditionally: inside a branch of a ternary (the reference's `?:` is
/// the only lazy operator; `&&`/`||` evaluate both sides) or the body of a
/// comprehension (which runs once per element, so possibly never).
fn guarded_subexprs<'e>(e: &'e Expr, guarded: bool, out: &mut Vec<(&'e Expr, bool)>) {
    out.push((e, guarded));
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::Bool(_)
        | ExprKind::Name(_)
        | ExprKind::Proc(_)
        | ExprKind::Mem(_)
        | ExprKind::Star => {}
        ExprKind::Unpack(x) | ExprKind::Neg(x) | ExprKind::Paren(x) => {
            guarded_subexprs(x, guarded, out)
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            guarded_subexprs(lhs, guarded, out);
            guarded_subexprs(rhs, guarded, out);
        }
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
            ..
        } => {
            guarded_subexprs(cond, guarded, out);
            guarded_subexprs(then, true, out);
            guarded_subexprs(otherwise, true, out);
        }
        ExprKind::Tuple(items) => items.iter().for_each(|x| guarded_subexprs(x, guarded, out)),
        ExprKind::Call { callee, args } => {
            guarded_subexprs(callee, guarded, out);
            args.iter().for_each(|x| guarded_subexprs(x, guarded, out));
        }
        ExprKind::Index { base, indices } => {
            guarded_subexprs(base, guarded, out);
            indices
                .iter()
                .for_each(|x| guarded_subexprs(x, guarded, out));
        }
        ExprKind::Slice { base, lo, hi, .. } => {
            guarded_subexprs(base, guarded, out);
            for x in [lo, hi].into_iter().flatten() {
                guarded_subexprs(x, guarded, out);
            }
        }
        ExprKind::Prop { base, .. } => guarded_subexprs(base, guarded, out),
        ExprKind::Comprehension { body, iter, .. } => {
            guarded_subexprs(body, true, out);
            guarded_subexprs(iter, guarded, out);
        }
    }
}

impl<'a> Resolver<'a> {
    /// The kind of the machine model whose processor function `name`
    /// returns, when it can be seen without running it (`return m[...]`
    /// with `m` built from `Machine(KIND)` by method calls).
    pub(super) fn function_model_kind(&self, name: &str, depth: usize) -> Option<ast::ProcKind> {
        if depth > 8 {
            return None;
        }
        let (params, body) = self.function_def(name)?;
        let params: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
        let mut locals: HashMap<&str, &Expr> = HashMap::new();
        for s in body {
            match &s.kind {
                StmtKind::Assign { name, value } => {
                    locals.entry(name.name.as_str()).or_insert(value);
                }
                StmtKind::Return { value } => {
                    return self.returned_kind(value, &locals, &params, depth);
                }
                _ => {}
            }
        }
        None
    }

    fn returned_kind(
        &self,
        e: &Expr,
        locals: &HashMap<&str, &Expr>,
        params: &[&str],
        depth: usize,
    ) -> Option<ast::ProcKind> {
        match &e.kind {
            ExprKind::Paren(x) => self.returned_kind(x, locals, params, depth),
            ExprKind::Ternary {
                then, otherwise, ..
            } => {
                let a = self.returned_kind(then, locals, params, depth)?;
                let b = self.returned_kind(otherwise, locals, params, depth)?;
                (a == b).then_some(a)
            }
            ExprKind::Index { base, .. } => self.model_kind(base, locals, params, depth),
            ExprKind::Call { callee, .. } => match &callee.kind {
                ExprKind::Name(f) if self.function_def(f).is_some() => {
                    self.function_model_kind(f, depth + 1)
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn model_kind(
        &self,
        e: &Expr,
        locals: &HashMap<&str, &Expr>,
        params: &[&str],
        depth: usize,
    ) -> Option<ast::ProcKind> {
        if depth > 16 {
            return None;
        }
        if let Some(k) = e.as_machine_ctor() {
            return Some(k);
        }
        match &e.kind {
            ExprKind::Paren(x) => self.model_kind(x, locals, params, depth + 1),
            ExprKind::Name(n) => {
                if let Some(v) = locals.get(n.as_str()) {
                    return self.model_kind(v, locals, params, depth + 1);
                }
                if params.contains(&n.as_str()) {
                    return None;
                }
                let value = self.program.stmts.iter().find_map(|s| match &s.kind {
                    StmtKind::Assign { name, value } if name.name == *n => Some(value),
                    _ => None,
                })?;
                self.model_kind(value, &HashMap::new(), &[], depth + 1)
            }
            ExprKind::Call { callee, .. } => match &callee.kind {
                ExprKind::Prop { base, .. } => self.model_kind(base, locals, params, depth + 1),
                _ => None,
            },
            ExprKind::Ternary {
                then, otherwise, ..
            } => {
                let a = self.model_kind(then, locals, params, depth + 1)?;
                let b = self.model_kind(otherwise, locals, params, depth + 1)?;
                (a == b).then_some(a)
            }
            _ => None,
        }
    }

    /// How function `name` (with its Task parameter at `task_param`) uses
    /// the task, following calls that pass the task on.
    fn task_uses(&self, name: &str, task_param: usize, depth: usize, out: &mut Vec<TaskUse>) {
        self.point_uses(name, Some(task_param), &[], false, depth, out);
    }

    /// Walks function `name`, whose parameter `task_param` (if any) is the
    /// task and whose parameters `point_params` hold `t.ipoint`/`t.ispace`,
    /// following calls that pass those on (a task itself cannot be passed
    /// to a plain function, but its point can). `guarded`: the call itself
    /// runs only conditionally, so every use inside it does too.
    fn point_uses(
        &self,
        name: &str,
        task_param: Option<usize>,
        point_params: &[usize],
        guarded: bool,
        depth: usize,
        out: &mut Vec<TaskUse>,
    ) {
        if depth > 4 {
            return;
        }
        let Some((params, body)) = self.function_def(name) else {
            return;
        };
        let task = task_param
            .and_then(|i| params.get(i))
            .map(|p| p.name.name.as_str())
            .unwrap_or("");
        // Names holding `t.ipoint` / `t.ispace`: point parameters, then
        // locals assigned from the task's properties.
        let mut aliases: HashSet<&str> = point_params
            .iter()
            .filter_map(|&i| params.get(i))
            .map(|p| p.name.name.as_str())
            .collect();
        let is_point = |e: &Expr, aliases: &HashSet<&str>| -> bool {
            (!task.is_empty() && point_prop(e, task).is_some())
                || matches!(&e.kind, ExprKind::Name(n) if aliases.contains(n.as_str()))
        };
        for s in body {
            if let StmtKind::Assign { name, value } = &s.kind {
                if is_point(value, &aliases) {
                    aliases.insert(name.name.as_str());
                }
            }
            let mut subexprs = Vec::new();
            for e in s.exprs() {
                guarded_subexprs(e, guarded, &mut subexprs);
            }
            for (x, guarded) in subexprs {
                match &x.kind {
                    ExprKind::Index { base, indices } if indices.len() == 1 => {
                        if let (true, Some(k)) =
                            (is_point(base, &aliases), literal_int(&indices[0]))
                        {
                            out.push(TaskUse::Index {
                                k,
                                span: x.span,
                                guarded,
                            });
                        }
                    }
                    ExprKind::Prop { base, prop, .. }
                        if !task.is_empty()
                            && matches!(&base.kind, ExprKind::Name(n) if n == task) =>
                    {
                        match prop {
                            Prop::Parent => out.push(TaskUse::Parent {
                                span: x.span,
                                guarded,
                            }),
                            Prop::Ipoint | Prop::Ispace => out.push(TaskUse::Point {
                                span: x.span,
                                guarded,
                            }),
                            _ => {}
                        }
                    }
                    ExprKind::Call { callee, args } => {
                        if let ExprKind::Name(g) = &callee.kind {
                            if g == name {
                                continue;
                            }
                            let passed: Vec<usize> = args
                                .iter()
                                .enumerate()
                                .filter(|(_, a)| is_point(a, &aliases))
                                .map(|(i, _)| i)
                                .collect();
                            if !passed.is_empty() {
                                self.point_uses(g, None, &passed, guarded, depth + 1, out);
                            }
                        }
                    }
                    _ => {}
                }
            }
            if matches!(s.kind, StmtKind::Return { .. }) {
                break; // nothing after the first return runs
            }
        }
    }

    /// E0302 (model of the wrong kind), E0311 (`ipoint[k]` past the launch's
    /// dimensionality), E0312 (properties the launch kind lacks).
    pub(super) fn function_checks(&mut self) {
        let app = self.app;
        // (span, message key) -> tasks, for grouping
        let mut kind_groups: BTreeMap<(usize, usize, String, ast::ProcKind, ProcKind), Vec<usize>> =
            BTreeMap::new();
        let mut index_groups: BTreeMap<(usize, usize, i64, usize), Vec<usize>> = BTreeMap::new();
        let mut prop_groups: BTreeMap<(usize, usize, bool), Vec<usize>> = BTreeMap::new();
        let mut uses_cache: HashMap<String, Vec<TaskUse>> = HashMap::new();
        for (ti, task) in app.tasks.iter().enumerate() {
            if !self.traces[ti].runnable {
                continue;
            }
            let (Some(stmt), Some(func)) =
                (self.traces[ti].map_stmt, self.traces[ti].map_func.clone())
            else {
                continue;
            };
            let kind = self.tasks[ti].proc_kind;
            if let Some(mk) = self.function_model_kind(&func, 0) {
                if ProcKind::from(mk) != kind {
                    let span = self.selector_span_for(stmt, &task.name);
                    kind_groups
                        .entry((span.start(), span.end(), func.clone(), mk, kind))
                        .or_default()
                        .push(ti);
                }
            }
            let uses = uses_cache
                .entry(func.clone())
                .or_insert_with(|| {
                    let mut v = Vec::new();
                    self.task_uses(&func, 0, 0, &mut v);
                    v
                })
                .clone();
            let dims = task.domain.len() as i64;
            // A use under a `?:` branch may never run for this launch:
            // placing the points (evaluating the function) reports it if it
            // does.
            for u in uses.into_iter().filter(|u| !u.guarded()) {
                match (u, task.launch) {
                    (TaskUse::Index { k, span, .. }, Launch::Index) if k >= dims || k < -dims => {
                        index_groups
                            .entry((span.start(), span.end(), k, task.domain.len()))
                            .or_default()
                            .push(ti);
                    }
                    (TaskUse::Parent { span, .. }, Launch::Index) => {
                        prop_groups
                            .entry((span.start(), span.end(), true))
                            .or_default()
                            .push(ti);
                    }
                    (TaskUse::Point { span, .. }, Launch::Single) => {
                        prop_groups
                            .entry((span.start(), span.end(), false))
                            .or_default()
                            .push(ti);
                    }
                    _ => {}
                }
            }
        }
        for ((start, end, func, mk, kind), tis) in kind_groups {
            let names: Vec<String> = tis
                .iter()
                .map(|&ti| format!("`{}`", app.tasks[ti].name))
                .collect();
            let mut d = Diagnostic::error(
                "E0302",
                Span::new(start, end),
                format!(
                    "{} {} on {kind}, but `{func}` returns a processor of a `Machine({mk})` model",
                    names.join(", "),
                    if tis.len() == 1 { "runs" } else { "run" }
                ),
            )
            .with_label("machine model of the wrong kind")
            .with_note(self.wrong_kind_note(&app.tasks[tis[0]].name, kind, mk.into()));
            if let Some(def) = self.function_name_span(&func) {
                d = d.with_related(def, "the mapping function");
            }
            let stmt = self.traces[tis[0]].map_stmt;
            let whole_statement = match stmt.and_then(|i| self.stmt(i)).map(|s| &s.kind) {
                Some(
                    StmtKind::IndexTaskMap { tasks, .. } | StmtKind::SingleTaskMap { tasks, .. },
                ) => match tasks {
                    TaskSel::Names(ns) => ns.len() == tis.len(),
                    _ => false,
                },
                _ => false,
            };
            let other = if whole_statement {
                self.entry_function_for(kind, &func)
            } else {
                None
            };
            if let Some(other) = other {
                d = d.with_fix(Fix::unsafe_(
                    format!(
                        "use `{other}`, which returns {} {kind} processor",
                        if kind == ProcKind::Omp { "an" } else { "a" }
                    ),
                    vec![(self.map_func_span(stmt), other)],
                ));
            }
            self.diags.push(d);
            for &ti in &tis {
                self.reported_kind.insert(app.tasks[ti].name.clone());
                let rule = self.traces[ti].map_stmt.map(|s| self.stmt_span(s));
                self.fatal(
                    1,
                    ti * 10 + 2,
                    "mapping_error",
                    format!(
                        "{} is actually mapped to {kind}, but machine model is for {mk}",
                        app.tasks[ti].name
                    ),
                    rule,
                );
            }
        }
        for ((start, end, k, dims), tis) in index_groups {
            let names: Vec<String> = tis
                .iter()
                .map(|&ti| {
                    let t = &app.tasks[ti];
                    let dom: Vec<String> = t.domain.iter().map(|d| d.to_string()).collect();
                    format!("`{}` ({})", t.name, dom.join(", "))
                })
                .collect();
            let span = Span::new(start, end);
            self.diags.push(
                Diagnostic::error(
                    "E0311",
                    span,
                    format!(
                        "`{}` reads dimension {k}, but {} {} a {dims}-D launch",
                        short(span.text(self.source)),
                        names.join(", "),
                        if tis.len() == 1 { "is" } else { "are" }
                    ),
                )
                .with_label(format!("valid indices: 0..{}", dims.saturating_sub(1)))
                .with_note("the reference aborts with \"Index out of bound for TupleIntNode\""),
            );
            // The run's failure comes from placing the points (the read
            // is unconditional, but something before it may fail first).
            for &ti in &tis {
                self.static_tuple.insert(app.tasks[ti].name.clone());
            }
        }
        for ((start, end, parent), tis) in prop_groups {
            let names: Vec<String> = tis
                .iter()
                .map(|&ti| format!("`{}`", app.tasks[ti].name))
                .collect();
            let span = Span::new(start, end);
            let (message, raw) = if parent {
                (
                    format!(
                        "`{}` is only available to single launches, and {} {}",
                        short(span.text(self.source)),
                        names.join(", "),
                        if tis.len() == 1 { "is an index launch" } else { "are index launches" }
                    ),
                    "Warning: IndexTask or current task does not support get_parent(), returning NULL\n".to_string(),
                )
            } else {
                let what = if span.text(self.source).ends_with("ispace") {
                    "get_space"
                } else {
                    "get_point"
                };
                (
                    format!(
                        "`{}` is only available to index launches, and {} {}",
                        short(span.text(self.source)),
                        names.join(", "),
                        if tis.len() == 1 {
                            "is a single launch"
                        } else {
                            "are single launches"
                        }
                    ),
                    format!("Warning: currently SingleTask does not support {what}(), failure\n"),
                )
            };
            self.diags.push(
                Diagnostic::error("E0312", span, message)
                    .with_label("not available for this launch")
                    .with_note(format!(
                        "the reference prints \"{}\" and aborts",
                        raw.trim_end()
                    )),
            );
            for &ti in &tis {
                self.reported_tuple.insert(app.tasks[ti].name.clone());
                let rule = self.traces[ti].map_stmt.map(|s| self.stmt_span(s));
                self.fatal(1, ti * 10 + 1, "mapping_error", raw.clone(), rule);
            }
        }
    }

    /// The span naming `task` in a mapping statement (its name, or the kind
    /// key, or the function name).
    pub(super) fn selector_span_for(&self, stmt: usize, task: &str) -> Span {
        let Some(s) = self.stmt(stmt) else {
            return Span::default();
        };
        match &s.kind {
            StmtKind::IndexTaskMap { tasks, func } | StmtKind::SingleTaskMap { tasks, func } => {
                match tasks {
                    TaskSel::Names(ns) => ns
                        .iter()
                        .find(|n| n.name == task)
                        .map_or(func.span, |n| n.span),
                    TaskSel::Kind(_, sp) => *sp,
                    TaskSel::Star(_) => func.span,
                }
            }
            _ => s.span,
        }
    }

    /// Another entry function (`f(Task t)`, defined before its use could
    /// be) that returns a processor of `kind`, the closest in name first.
    fn entry_function_for(&self, kind: ProcKind, instead_of: &str) -> Option<String> {
        let candidates: Vec<&str> = self
            .program
            .stmts
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::FuncDef { name, params, .. }
                    if name.name != instead_of
                        && params.len() == 1
                        && params[0].ty == ParamType::Task
                        && self
                            .function_model_kind(&name.name, 0)
                            .is_some_and(|k| ProcKind::from(k) == kind) =>
                {
                    Some(name.name.as_str())
                }
                _ => None,
            })
            .collect();
        closest(instead_of, candidates.iter().copied())
            .or_else(|| (candidates.len() == 1).then(|| candidates[0]))
            .map(str::to_string)
    }

    /// The function name's span in a mapping statement.
    fn map_func_span(&self, stmt: Option<usize>) -> Span {
        match stmt.and_then(|i| self.stmt(i)).map(|s| &s.kind) {
            Some(StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. }) => {
                func.span
            }
            _ => Span::default(),
        }
    }

    pub(super) fn function_name_span(&self, name: &str) -> Option<Span> {
        self.program.stmts.iter().find_map(|s| match &s.kind {
            StmtKind::FuncDef { name: n, .. } if n.name == name => Some(n.span),
            _ => None,
        })
    }
}

/// `t.ipoint` / `t.ispace` for task parameter `task`.
fn point_prop(e: &Expr, task: &str) -> Option<Prop> {
    match &e.kind {
        ExprKind::Prop { base, prop, .. }
            if matches!(prop, Prop::Ipoint | Prop::Ispace)
                && matches!(&base.kind, ExprKind::Name(n) if n == task) =>
        {
            Some(*prop)
        }
        ExprKind::Paren(x) => point_prop(x, task),
        _ => None,
    }
}

/// An integer literal, possibly negated.
fn literal_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Neg(x) => literal_int(x).and_then(|v| v.checked_neg()),
        ExprKind::Paren(x) => literal_int(x),
        _ => None,
    }
}
