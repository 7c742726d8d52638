//! Application- and machine-aware providers: what the configured
//! application and machine add to hover, completion and inlay hints.
//!
//! - Hover: a global's value on the machine (`m_6d: MSpace, 6 dims, size
//!   (2,1,2,1,2,2)`); a task's launch, variants, resolved processor kind and
//!   region arguments (memory and layout as resolved), and what the last
//!   real run measured for it; a region's tasks; an
//!   IndexTaskMap/SingleTaskMap statement's point-to-processor distribution.
//! - Completion: task names from the application in task fields (index
//!   launches after `IndexTaskMap`, single launches after `SingleTaskMap`)
//!   and region names (of the statement's task when it names one) in region
//!   fields, with launch kind, domain and region list in the detail.
//! - Inlay hints: machine-model sizes after top-level assignments, and
//!   points per processor after IndexTaskMap/SingleTaskMap statements.
//!
//! Without a target every provider adds nothing.

use std::collections::BTreeMap;

use mapwright_grammar::ast::{Stmt, StmtKind, TaskSel};
use mapwright_grammar::check::Ty;
use mapwright_grammar::resolve::SymbolKind;
use mapwright_grammar::token::TokenKind as T;
use mapwright_grammar::Span;
use mapwright_runtime::app::{App, Launch, Task};
use mapwright_runtime::decisions::{InstanceKind, TaskDecision};
use mapwright_runtime::legion::measured::seconds_text;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::{layout_text, RegionNaming};

use super::analysis::Analysis;
use super::cursor::{Context, Cursor};
use super::name_facts::{mapping_name_role, NameRole};
use super::provider_api::{
    Completion, CompletionKind, CompletionProvider, HoverProvider, HoverSection, InlayHint,
    InlayHintProvider, InlayKind, InlayQuery, LastRun, Query,
};
use super::target::{size_text, GlobalValue, Resolution, Target};

// ---------------------------------------------------------------------------
// Hover
// ---------------------------------------------------------------------------

/// Hover sections that need the application or the machine.
pub struct AppHover;

impl HoverProvider for AppHover {
    fn hover(&self, q: &Query) -> Option<HoverSection> {
        let target = q.target?;
        let a = q.analysis;
        if a.in_comment(q.offset) {
            return None;
        }
        let token = a.token_at(q.offset)?;
        let mut sections: Vec<String> = Vec::new();
        let stmt = a.statement_at(q.offset);
        let in_map_stmt = stmt.is_some_and(|s| {
            matches!(
                s.kind,
                StmtKind::IndexTaskMap { .. } | StmtKind::SingleTaskMap { .. }
            )
        });
        if token.kind == T::Ident {
            if let Some(text) = global_hover(a, q.resolution, target, token.span) {
                sections.push(text);
            }
            match mapping_name_role(a, token.span) {
                Some(NameRole::Task) => {
                    let name = token.span.text(&a.text);
                    sections.push(task_hover(a, target, q.resolution, name, !in_map_stmt));
                    if let Some(text) = q.last_run.and_then(|r| measured_hover(r, name)) {
                        sections.push(text);
                    }
                }
                Some(NameRole::Region) => {
                    if let Some(app) = target.app.as_deref() {
                        sections.push(region_hover(app, token.span.text(&a.text)));
                    }
                }
                None => {}
            }
        }
        if let (Some(stmt), true) = (stmt, in_map_stmt) {
            if let Some(text) = statement_distribution(target, q.resolution, stmt) {
                sections.push(text);
            }
        }
        if sections.is_empty() {
            return None;
        }
        Some(HoverSection {
            span: token.span,
            markdown: sections.join("\n\n"),
        })
    }
}

/// `m_6d: MSpace, 6 dims, size (2,1,2,1,2,2)` for a global evaluated on the
/// machine.
fn global_hover(
    a: &Analysis,
    resolution: Option<&Resolution>,
    target: &Target,
    span: Span,
) -> Option<String> {
    let id = a.resolved.symbol_at(span.start())?;
    let sym = &a.resolved.symbols[id];
    if sym.kind != SymbolKind::Global {
        return None;
    }
    let value = resolution?.globals.get(&sym.name)?;
    let machine = target.machine_name();
    Some(match value {
        GlobalValue::Model { kind, size } => {
            let ty = match a.symbol_type(id) {
                Some(t @ Ty::MSpace(Some(_))) => t.describe(),
                _ => format!("MSpace, {} dims", size.len()),
            };
            let volume: i64 = size.iter().product();
            format!(
                "`{}: {ty}, size {}` on machine `{machine}`: {volume} {kind} processor(s)",
                sym.name,
                size_text(size)
            )
        }
        GlobalValue::Other(v) => format!("`{} = {v}` on machine `{machine}`", sym.name),
    })
}

/// Launch, variants, resolved kind and region arguments of task `name`.
fn task_hover(
    a: &Analysis,
    target: &Target,
    resolution: Option<&Resolution>,
    name: &str,
    with_distribution: bool,
) -> String {
    let Some(app) = target.app.as_deref() else {
        return format!("task `{name}`: no application is configured");
    };
    let Some(task) = app.task(name) else {
        return format!(
            "`{name}` is not a task of application `{}` (tasks: {})",
            app.name,
            short_list(&app.task_names(), 8)
        );
    };
    let decision = resolution
        .and_then(|r| r.decisions.as_ref())
        .and_then(|d| d.tasks.iter().find(|t| t.task == task.name));
    let mut out = format!(
        "**{}** of `{}` · {}",
        task.name,
        app.name,
        launch_text(task)
    );
    let variants: Vec<String> = task.variants.iter().map(|v| v.to_string()).collect();
    out.push_str(&format!(" · variants: {}", variants.join(", ")));
    if let Some(parent) = &task.parent {
        out.push_str(&format!(" · launched by `{parent}`"));
    }
    if let Some(m) = &task.work.measured {
        // A description written by the mapper (`mapwright init`): what the
        // run it came from measured.
        out.push_str(&format!(
            "\n\nwork per point: {} measured (mean of {} run(s) on {}, longest {})",
            seconds_text(m.mean_us * 1e-6),
            m.runs,
            m.host,
            seconds_text(m.max_us * 1e-6)
        ));
    }
    if let Some(d) = decision {
        out.push_str(&format!(
            "\n\nruns on **{}** on `{}` ({})",
            d.proc_kind,
            target.machine_name(),
            rule_text(a, d.proc_rule)
        ));
    }
    if !task.regions.is_empty() {
        out.push_str("\n\n| # | region | privilege | memory | layout |\n|---|---|---|---|---|");
        for r in &task.regions {
            let resolved = decision.and_then(|d| d.regions.iter().find(|x| x.index == r.index));
            let (memory, layout) = match resolved {
                Some(x) if x.instance.is_physical() => (
                    format!("{} ({})", x.memory, rule_text(a, x.memory_rule)),
                    format!(
                        "{} ({})",
                        layout_text(&x.layout),
                        rule_text(a, x.layout_rule)
                    ),
                ),
                Some(x) => (instance_text(x.instance).to_string(), "-".to_string()),
                None => ("-".to_string(), "-".to_string()),
            };
            let names = r
                .launch_names(0)
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push_str(&format!(
                "\n| {} | {names} | {} | {memory} | {layout} |",
                r.index,
                privilege_text(r.privilege)
            ));
            // Later launches with other regions, each decided by its names.
            for k in 1..=r.launches.len() {
                let names = r
                    .launch_names(k)
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let launch = resolved.and_then(|x| x.launches.get(k - 1));
                let (memory, layout) = match (resolved, launch) {
                    (Some(_), Some(l)) if l.instance.is_physical() => (
                        format!("{} ({})", l.memory, rule_text(a, l.memory_rule)),
                        format!(
                            "{} ({})",
                            layout_text(&l.layout),
                            rule_text(a, l.layout_rule)
                        ),
                    ),
                    (Some(_), Some(l)) => (instance_text(l.instance).to_string(), "-".to_string()),
                    (Some(x), None) => (instance_text(x.instance).to_string(), "-".to_string()),
                    (None, _) => ("-".to_string(), "-".to_string()),
                };
                out.push_str(&format!(
                    "\n| {} (launch {}) | {names} | {} | {memory} | {layout} |",
                    r.index,
                    k + 1,
                    privilege_text(r.privilege)
                ));
            }
        }
    }
    if with_distribution {
        if let (Some(d), Some(m)) = (decision, target.machine.as_deref()) {
            if d.launch == Launch::Index && !d.placement.is_empty() {
                out.push_str("\n\n");
                out.push_str(&distribution_text(d, task, m));
            }
        }
    }
    out
}

/// What the document's last real run measured for task `name`.
fn measured_hover(run: &LastRun, name: &str) -> Option<String> {
    let t = run.metrics.tasks.get(name)?;
    let total = run.metrics.task_time_s.get(name).copied().unwrap_or(0.0);
    let procs: Vec<String> = t
        .points_per_proc
        .iter()
        .map(|(p, n)| format!("{p} ×{n}"))
        .collect();
    let mut out = format!(
        "**measured** in {} (version {}): {} run(s), {} in all, mean {}, longest {} · on {}",
        run.what,
        run.version,
        t.runs,
        seconds_text(total),
        seconds_text(t.mean_s),
        seconds_text(t.max_s),
        procs.join(", ")
    );
    if !t.copy_bytes_per_arg.is_empty() {
        let copies: Vec<String> = t
            .copy_bytes_per_arg
            .iter()
            .map(|(i, b)| format!("argument {i} {}", bytes_text(*b as u64)))
            .collect();
        out.push_str(&format!(" · copied in: {}", copies.join(", ")));
    }
    Some(out)
}

fn launch_text(task: &Task) -> String {
    match task.launch {
        Launch::Index => {
            let points: u64 = task.domain.iter().product();
            let dom: Vec<i64> = task.domain.iter().map(|x| *x as i64).collect();
            format!("index launch over {}, {points} points", size_text(&dom))
        }
        Launch::Single => "single launch".to_string(),
    }
}

fn instance_text(k: InstanceKind) -> &'static str {
    match k {
        InstanceKind::Physical => "physical",
        InstanceKind::VirtualByMapper => "virtual (VIRTUAL)",
        InstanceKind::VirtualByApp => "virtual (application)",
        InstanceKind::InnerTask => "virtual (inner task)",
        InstanceKind::NoAccess => "none (no access)",
    }
}

fn privilege_text(p: mapwright_runtime::app::Privilege) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{p:?}").to_lowercase())
}

/// `line 3` for a rule span, `default` without one.
fn rule_text(a: &Analysis, rule: Option<Span>) -> String {
    match rule {
        Some(s) => format!("line {}", a.index.line_of(s.start()) + 1),
        None => "default".to_string(),
    }
}

fn short_list(items: &[&str], max: usize) -> String {
    let mut out: Vec<String> = items.iter().take(max).map(|s| format!("`{s}`")).collect();
    if items.len() > max {
        out.push(format!("… {} more", items.len() - max));
    }
    out.join(", ")
}

/// The tasks that take region argument `name`.
fn region_hover(app: &App, name: &str) -> String {
    let mut rows = Vec::new();
    for t in &app.tasks {
        for r in &t.regions {
            if r.name == name || r.aliases.iter().any(|x| x == name) {
                rows.push(format!(
                    "| `{}` | {} | {} | {}-D | {} |",
                    t.name,
                    r.index,
                    privilege_text(r.privilege),
                    r.dims,
                    bytes_text(r.bytes)
                ));
            }
        }
    }
    if rows.is_empty() {
        return format!(
            "`{name}` is not a region argument of any task of `{}`",
            app.name
        );
    }
    format!(
        "region `{name}` of `{}`: argument of {} task launch(es)\n\n| task | # | privilege | dims | bytes per point |\n|---|---|---|---|---|\n{}",
        app.name,
        rows.len(),
        rows.join("\n")
    )
}

fn bytes_text(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// The distribution of every task the statement `stmt` places.
fn statement_distribution(
    target: &Target,
    resolution: Option<&Resolution>,
    stmt: &Stmt,
) -> Option<String> {
    let app = target.app.as_deref()?;
    let machine = target.machine.as_deref()?;
    let decisions = resolution?.decisions.as_ref()?;
    let placed: Vec<&TaskDecision> = decisions
        .tasks
        .iter()
        .filter(|t| t.map_rule == Some(stmt.span))
        .collect();
    if placed.is_empty() {
        let names = selected_names(stmt);
        return Some(if names.is_empty() {
            "this statement places no launch of the application".to_string()
        } else {
            format!(
                "this statement places no launch of `{}` on `{}` (see the diagnostics)",
                app.name, machine.name
            )
        });
    }
    let mut parts = Vec::new();
    for d in placed.iter().take(8) {
        let Some(task) = app.task(&d.task) else {
            continue;
        };
        parts.push(format!(
            "**{}**, {}:\n\n{}",
            d.task,
            launch_text(task),
            distribution_text(d, task, machine)
        ));
    }
    if placed.len() > 8 {
        parts.push(format!("… and {} more tasks", placed.len() - 8));
    }
    Some(parts.join("\n\n"))
}

/// Point -> processor of one task: a summary line, the points per
/// processor, and the points (a matrix for 2-D launches).
fn distribution_text(d: &TaskDecision, task: &Task, machine: &Machine) -> String {
    if d.placement.is_empty() {
        return "the launch points are not placed (the mapping function fails; see the diagnostics)"
            .to_string();
    }
    let mut out = summary_line(d, machine);
    let counts = d.points_per_processor();
    let shown: Vec<String> = counts
        .iter()
        .take(16)
        .map(|((n, p), c)| format!("node {n} {}{p}: {c}", d.proc_kind))
        .collect();
    out.push_str(&format!("\n\npoints per processor: {}", shown.join(" · ")));
    if counts.len() > 16 {
        out.push_str(&format!(" · … {} more", counts.len() - 16));
    }
    if d.launch == Launch::Single {
        return out;
    }
    let dom: Vec<usize> = task.domain.iter().map(|x| *x as usize).collect();
    let at: BTreeMap<&[i64], (u32, u32)> = d
        .placement
        .iter()
        .map(|p| (p.point.as_slice(), (p.node, p.proc)))
        .collect();
    let cell = |pt: &[i64]| {
        at.get(pt)
            .map(|(n, p)| format!("{n},{p}"))
            .unwrap_or_else(|| "?".to_string())
    };
    if dom.len() == 2 && dom[0] <= 16 && dom[1] <= 16 {
        let mut grid = String::from("```text\nnode,proc  ");
        for j in 0..dom[1] {
            grid.push_str(&format!("{:>6}", format!("j={j}")));
        }
        for i in 0..dom[0] {
            grid.push_str(&format!("\ni={i:<9}"));
            for j in 0..dom[1] {
                grid.push_str(&format!("{:>6}", cell(&[i as i64, j as i64])));
            }
        }
        grid.push_str("\n```");
        out.push_str("\n\n");
        out.push_str(&grid);
    } else {
        let items: Vec<String> = d
            .placement
            .iter()
            .take(32)
            .map(|p| format!("{} → {},{}", size_text(&p.point), p.node, p.proc))
            .collect();
        out.push_str(&format!("\n\npoint → node,proc: {}", items.join(" · ")));
        if d.placement.len() > 32 {
            out.push_str(&format!(" · … {} more", d.placement.len() - 32));
        }
    }
    out
}

/// `4 points on 4 of 4 GPUs, 1 per processor` (or the imbalance).
fn summary_line(d: &TaskDecision, machine: &Machine) -> String {
    let s = Spread::of(d, machine);
    let what = if d.launch == Launch::Single {
        "launch(es)"
    } else {
        "points"
    };
    let per = if s.min == s.max {
        format!("{} per processor", s.min)
    } else {
        format!("{}–{} per processor (imbalanced)", s.min, s.max)
    };
    format!(
        "{} {what} on {} of {} {} processor(s), {per}",
        s.total, s.used, s.available, d.proc_kind
    )
}

/// How a task's points spread over the processors of its kind.
struct Spread {
    total: usize,
    used: usize,
    available: u64,
    min: usize,
    max: usize,
}

impl Spread {
    fn of(d: &TaskDecision, machine: &Machine) -> Spread {
        let counts = d.points_per_processor();
        Spread {
            total: d.placement.len(),
            used: counts.len(),
            available: machine.total_procs(d.proc_kind),
            min: counts.iter().map(|(_, c)| *c).min().unwrap_or(0),
            max: counts.iter().map(|(_, c)| *c).max().unwrap_or(0),
        }
    }

    /// The short form for an inlay hint: `4 pts: 1/GPU`.
    fn short(&self, d: &TaskDecision) -> String {
        let kind = d.proc_kind;
        let unit = if d.launch == Launch::Single {
            "launches"
        } else {
            "pts"
        };
        if self.min == self.max {
            if self.used as u64 == self.available {
                format!("{} {unit}: {}/{kind}", self.total, self.min)
            } else {
                format!(
                    "{} {unit}: {}/{kind} on {} of {} {kind}s",
                    self.total, self.min, self.used, self.available
                )
            }
        } else {
            format!(
                "{} {unit}: {}–{}/{kind} (imbalanced)",
                self.total, self.min, self.max
            )
        }
    }
}

/// Names in the task field of a mapping statement.
fn selected_names(stmt: &Stmt) -> Vec<String> {
    match &stmt.kind {
        StmtKind::IndexTaskMap { tasks, .. } | StmtKind::SingleTaskMap { tasks, .. } => match tasks
        {
            TaskSel::Names(ns) => ns.iter().map(|n| n.name.clone()).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

// ---------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------

/// Task and region names from the application description.
pub struct AppCompletion;

impl CompletionProvider for AppCompletion {
    fn complete(&self, q: &Query, cursor: &Cursor, out: &mut Vec<Completion>) {
        let Some(app) = q.target.and_then(|t| t.app.as_deref()) else {
            return;
        };
        let Context::MappingField { keyword, field } = cursor.context else {
            return;
        };
        match (keyword, field) {
            (T::KwIndexTaskMap, 0) => tasks(app, Some(Launch::Index), out),
            (T::KwSingleTaskMap, 0) => tasks(app, Some(Launch::Single), out),
            (
                T::KwTask | T::KwRegion | T::KwLayout | T::KwCollectMemory | T::KwInstanceLimit,
                0,
            )
            | (T::KwControlReplicate, _) => tasks(app, None, out),
            (T::KwRegion | T::KwLayout | T::KwCollectMemory, 1) => {
                let task = statement_task(q.analysis, cursor.prefix.start());
                regions(app, task.as_deref(), out)
            }
            _ => {}
        }
    }
}

/// `index launch (4) · CPU, GPU · regions: a, b`
fn task_detail(t: &Task) -> String {
    let launch = match t.launch {
        Launch::Index => {
            let dom: Vec<i64> = t.domain.iter().map(|x| *x as i64).collect();
            format!("index launch {}", size_text(&dom))
        }
        Launch::Single => "single launch".to_string(),
    };
    let variants: Vec<String> = t.variants.iter().map(|v| v.to_string()).collect();
    let mut regions: Vec<&str> = Vec::new();
    for r in &t.regions {
        if !regions.contains(&r.name.as_str()) {
            regions.push(&r.name);
        }
    }
    let regions = if regions.is_empty() {
        "no regions".to_string()
    } else {
        format!("regions: {}", regions.join(", "))
    };
    format!("{launch} · {} · {regions}", variants.join(", "))
}

fn tasks(app: &App, launch: Option<Launch>, out: &mut Vec<Completion>) {
    for t in &app.tasks {
        // Tasks of the other launch kind stay available, ranked last: the
        // statement would not apply to them (W0316).
        let fits = launch.is_none_or_eq(t.launch);
        let mut item = Completion {
            label: t.name.clone(),
            kind: CompletionKind::Task,
            detail: Some(task_detail(t)),
            documentation: Some(task_doc(app, t)),
            snippet: None,
            plain: None,
            rank: if fits { 1 } else { 3 },
        };
        if !fits {
            item.detail = item
                .detail
                .map(|d| format!("{d} (this statement does not apply)"));
        }
        out.push(item);
    }
}

/// `Option::is_none_or` for the workspace's minimum Rust.
trait NoneOrEq<T> {
    fn is_none_or_eq(&self, v: T) -> bool;
}

impl<T: PartialEq> NoneOrEq<T> for Option<T> {
    fn is_none_or_eq(&self, v: T) -> bool {
        match self {
            None => true,
            Some(x) => *x == v,
        }
    }
}

fn task_doc(app: &App, t: &Task) -> String {
    let mut doc = format!("Task of `{}`: {}", app.name, launch_text(t));
    if !t.regions.is_empty() {
        doc.push_str("\n\n| # | region | privilege |\n|---|---|---|");
        for r in &t.regions {
            doc.push_str(&format!(
                "\n| {} | `{}` | {} |",
                r.index,
                r.name,
                privilege_text(r.privilege)
            ));
        }
    }
    if !t.notes.is_empty() {
        doc.push_str(&format!("\n\n{}", t.notes));
    }
    doc
}

fn regions(app: &App, task: Option<&str>, out: &mut Vec<Completion>) {
    let naming = RegionNaming::of_app(app);
    let names_ok = naming != RegionNaming::Index;
    let indices_ok = naming != RegionNaming::Semantic;
    match task.and_then(|t| app.task(t)) {
        Some(t) => {
            for r in &t.regions {
                let detail = format!(
                    "argument {} of {} · {} · {}-D",
                    r.index,
                    t.name,
                    privilege_text(r.privilege),
                    r.dims
                );
                if names_ok {
                    for name in std::iter::once(&r.name).chain(r.aliases.iter()) {
                        out.push(Completion {
                            label: name.clone(),
                            kind: CompletionKind::Region,
                            detail: Some(detail.clone()),
                            documentation: None,
                            snippet: None,
                            plain: None,
                            rank: 1,
                        });
                    }
                }
                if indices_ok {
                    out.push(Completion {
                        label: r.index.to_string(),
                        kind: CompletionKind::Region,
                        detail: Some(format!("`{}`: {detail}", r.name)),
                        documentation: None,
                        snippet: None,
                        plain: None,
                        rank: 2,
                    });
                }
            }
        }
        None if names_ok => {
            let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for t in &app.tasks {
                for r in &t.regions {
                    for name in std::iter::once(&r.name).chain(r.aliases.iter()) {
                        let tasks = by_name.entry(name.as_str()).or_default();
                        if !tasks.contains(&t.name.as_str()) {
                            tasks.push(&t.name);
                        }
                    }
                }
            }
            for (name, tasks) in by_name {
                out.push(Completion {
                    label: name.to_string(),
                    kind: CompletionKind::Region,
                    detail: Some(format!("region of {}", short_list(&tasks, 4))),
                    documentation: None,
                    snippet: None,
                    plain: None,
                    rank: 1,
                });
            }
        }
        None => {}
    }
}

/// The task named in the first field of the statement the cursor is in
/// (`Region calculate_new_currents |`), if it is a single name.
fn statement_task(a: &Analysis, offset: usize) -> Option<String> {
    let tokens = &a.parsed.tokens;
    let end = tokens.partition_point(|t| t.span.end() <= offset);
    let before = &tokens[..end];
    let start = before
        .iter()
        .rposition(|t| matches!(t.kind, T::Semi | T::LBrace | T::RBrace))
        .map_or(0, |i| i + 1);
    let stmt = &before[start..];
    let name = match stmt {
        [_, name] => name,
        [_, name, next, ..] if next.kind != T::Comma => name,
        _ => return None,
    };
    (name.kind == T::Ident).then(|| name.span.text(&a.text).to_string())
}

// ---------------------------------------------------------------------------
// Inlay hints
// ---------------------------------------------------------------------------

/// Machine-model sizes and points per processor.
pub struct AppInlayHints;

impl InlayHintProvider for AppInlayHints {
    fn inlay_hints(&self, q: &InlayQuery) -> Vec<InlayHint> {
        let (Some(target), Some(resolution)) = (q.target, q.resolution) else {
            return Vec::new();
        };
        let a = q.analysis;
        let inside = |offset: usize| q.range.start() <= offset && offset <= q.range.end();
        let mut out = Vec::new();
        for stmt in &a.program().stmts {
            match &stmt.kind {
                StmtKind::Assign { name, value } if inside(value.span.end()) => {
                    if let Some(GlobalValue::Model { kind, size }) =
                        resolution.globals.get(&name.name)
                    {
                        out.push(InlayHint {
                            offset: value.span.end(),
                            label: format!(": {}", size_text(size)),
                            kind: InlayKind::Type,
                            tooltip: Some(format!(
                                "`{}`: {kind} machine model of size {} on `{}` ({} processors)",
                                name.name,
                                size_text(size),
                                target.machine_name(),
                                size.iter().product::<i64>()
                            )),
                        });
                    }
                }
                StmtKind::IndexTaskMap { .. } | StmtKind::SingleTaskMap { .. }
                    if inside(stmt.span.end()) =>
                {
                    if let Some(hint) = distribution_hint(target, resolution, stmt) {
                        out.push(hint);
                    }
                }
                _ => {}
            }
        }
        out
    }
}

fn distribution_hint(target: &Target, r: &Resolution, stmt: &Stmt) -> Option<InlayHint> {
    let machine = target.machine.as_deref()?;
    let decisions = r.decisions.as_ref()?;
    let placed: Vec<&TaskDecision> = decisions
        .tasks
        .iter()
        .filter(|t| t.map_rule == Some(stmt.span) && !t.placement.is_empty())
        .collect();
    if placed.is_empty() {
        return None;
    }
    let shorts: Vec<(String, String)> = placed
        .iter()
        .map(|d| (d.task.clone(), Spread::of(d, machine).short(d)))
        .collect();
    let label = if shorts.iter().all(|(_, s)| *s == shorts[0].1) {
        shorts[0].1.clone()
    } else {
        let mut parts: Vec<String> = shorts
            .iter()
            .take(3)
            .map(|(t, s)| format!("{t}: {s}"))
            .collect();
        if shorts.len() > 3 {
            parts.push("…".into());
        }
        parts.join("; ")
    };
    let tooltip = placed
        .iter()
        .map(|d| format!("{}: {}", d.task, summary_line(d, machine)))
        .collect::<Vec<_>>()
        .join("\n");
    Some(InlayHint {
        offset: stmt.span.end(),
        label,
        kind: InlayKind::Type,
        tooltip: Some(tooltip),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::providers::Providers;
    use crate::lsp::target::{resolve, TargetKey};

    const MAPPER: &str = "Task * GPU,CPU;\nm = Machine(GPU);\nm2 = m.split(1, 2);\ndef block(Task task) {\n    return m[0, task.ipoint[0] % m.size[1]];\n}\nIndexTaskMap calculate_new_currents,distribute_charge block;\nRegion calculate_new_currents ";

    fn circuit() -> Target {
        Target::load(TargetKey {
            dir: None,
            app: Some("circuit".into()),
            machine: Some("p100x4".into()),
        })
    }

    fn query<'a>(a: &'a Analysis, t: &'a Target, r: &'a Resolution, offset: usize) -> Query<'a> {
        Query {
            analysis: a,
            project: None,
            target: Some(t),
            resolution: Some(r),
            offset,
            last_run: None,
        }
    }

    #[test]
    fn hover_shows_model_sizes_tasks_and_distributions() {
        let t = circuit();
        let a = Analysis::new(MAPPER);
        let r = resolve(&a, &t);
        let p = Providers::builtin();
        let at = |needle: &str| MAPPER.find(needle).unwrap() + 1;
        let h = p.hover(&query(&a, &t, &r, at("m2 ="))).unwrap().markdown;
        assert!(
            h.contains("`m2: MSpace, 3 dims, size (1,2,2)` on machine `p100x4`"),
            "{h}"
        );
        let h = p
            .hover(&query(&a, &t, &r, at("calculate_new_currents,")))
            .unwrap()
            .markdown;
        assert!(h.contains("index launch over (4)"), "{h}");
        assert!(h.contains("runs on **GPU**"), "{h}");
        assert!(h.contains("`rp_private`"), "{h}");
        assert!(
            h.contains("4 points on 4 of 4 GPU processor(s), 1 per processor"),
            "{h}"
        );
        let h = p
            .hover(&query(&a, &t, &r, at("IndexTaskMap")))
            .unwrap()
            .markdown;
        assert!(h.contains("**distribute_charge**"), "{h}");
        assert!(h.contains("(0) → 0,0"), "{h}");
    }

    #[test]
    fn hover_lists_each_launch_of_a_task_launched_with_other_regions() {
        let t = Target::load(TargetKey {
            dir: None,
            app: Some("pennant".into()),
            machine: Some("p100x4".into()),
        });
        let src = "Task * GPU,CPU;\nRegion * rp_all_shared_p GPU ZCMEM;\nTask adv_pos_full GPU;\n";
        let a = Analysis::new(src);
        let r = resolve(&a, &t);
        let at = src.find("adv_pos_full").unwrap() + 1;
        let h = Providers::builtin()
            .hover(&query(&a, &t, &r, at))
            .unwrap()
            .markdown;
        assert!(
            h.contains("| 0 | `rp_all_private_p`, `rp_all_private` | read | FBMEM (default)"),
            "{h}"
        );
        assert!(
            h.contains(
                "| 0 (launch 2) | `rp_all_shared_p`, `rp_all_ghost` | read | ZCMEM (line 2)"
            ),
            "{h}"
        );
    }

    #[test]
    fn completion_offers_application_names_in_the_right_fields() {
        let t = circuit();
        let src = "IndexTaskMap ";
        let a = Analysis::new(src);
        let r = Resolution::default();
        let items = Providers::builtin()
            .complete(&query(&a, &t, &r, src.len()))
            .items;
        let item = items
            .iter()
            .find(|c| c.label == "calculate_new_currents")
            .unwrap();
        assert_eq!(item.rank, 1);
        let detail = item.detail.as_deref().unwrap();
        assert!(
            detail.contains("index launch (4)") && detail.contains("rp_private"),
            "{detail}"
        );
        let single = items.iter().find(|c| c.label == "toplevel").unwrap();
        assert_eq!(single.rank, 3);
        // Region names of the statement's task.
        let a = Analysis::new(MAPPER);
        let items = Providers::builtin()
            .complete(&query(&a, &t, &r, MAPPER.len()))
            .items;
        let labels: Vec<&str> = items.iter().map(|c| c.label.as_str()).collect();
        assert!(
            labels.contains(&"rp_wires") && labels.contains(&"rp_times"),
            "{labels:?}"
        );
        assert!(!labels.contains(&"all_shared"), "{labels:?}");
        // Processor kinds in the third field are not affected.
        let src = "Region * * ";
        let a = Analysis::new(src);
        let items = Providers::builtin()
            .complete(&query(&a, &t, &r, src.len()))
            .items;
        assert!(items.iter().all(|c| c.kind != CompletionKind::Task));
    }

    #[test]
    fn inlay_hints_show_sizes_and_points_per_processor() {
        let t = circuit();
        let a = Analysis::new(MAPPER);
        let r = resolve(&a, &t);
        let q = InlayQuery {
            analysis: &a,
            project: None,
            target: Some(&t),
            resolution: Some(&r),
            range: Span::new(0, MAPPER.len()),
        };
        let labels: Vec<String> = AppInlayHints
            .inlay_hints(&q)
            .into_iter()
            .map(|h| h.label)
            .collect();
        assert_eq!(labels, [": (1,4)", ": (1,2,2)", "4 pts: 1/GPU"]);
    }
}
