//! The mechanical repairs AutoGuide offers, and the readers of raw output its
//! rules use. Every edit is a list of byte-range replacements on the mapper
//! the outcome came from; `None` means "no mechanical repair here".

use mapwright_grammar::ast::{Constraint, Expr, ExprKind, Prop, StmtKind};
use mapwright_grammar::{Applicability, Diagnostic, Fix, Span, TextEdit};
use mapwright_runtime::app::Launch;
use mapwright_runtime::machine::ProcKind;

use super::Context;

/// The fix AutoGuide proposes for `d`: its first safe fix, else its first
/// likely one. (An undefined `mgpu` in a file that defines `mcpu` has the
/// likely respelling first and the safe `add mgpu = Machine(GPU);` second;
/// the second is what the rule suggests.)
fn proposed_fix(d: &Diagnostic) -> Option<&Fix> {
    d.fixes
        .iter()
        .find(|f| f.applicability == Applicability::Safe)
        .or_else(|| d.fixes.iter().find(|f| f.applicability.worth_proposing()))
}

/// The proposed fix ([`proposed_fix`]) of the first diagnostic whose code
/// is in `codes` and that has one (earlier codes preferred).
pub fn first_fix(ctx: &Context<'_>, codes: &[&str]) -> Option<Vec<TextEdit>> {
    let diagnostics = &ctx.diagnostics;
    codes.iter().find_map(|code| {
        diagnostics
            .iter()
            .filter(|d| d.code == *code)
            .find_map(proposed_fix)
            .map(|f| f.edits.clone())
    })
}

/// The proposed fix of every diagnostic with one of `codes`, merged when
/// they do not overlap.
pub fn all_fixes(ctx: &Context<'_>, codes: &[&str]) -> Option<Vec<TextEdit>> {
    let mut edits: Vec<TextEdit> = Vec::new();
    for d in ctx.diagnostics.iter().filter(|d| codes.contains(&d.code)) {
        if let Some(fix) = proposed_fix(d) {
            let overlaps = fix.edits.iter().any(|e| {
                edits.iter().any(|x| {
                    e.span.start() < x.span.end().max(x.span.start() + 1)
                        && x.span.start() < e.span.end().max(e.span.start() + 1)
                })
            });
            if !overlaps {
                edits.extend(fix.edits.iter().cloned());
            }
        }
    }
    (!edits.is_empty()).then_some(edits)
}

/// The proposed fix of the first error that has one.
pub fn first_fix_any(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    ctx.diagnostics
        .iter()
        .filter(|d| d.is_error())
        .find_map(proposed_fix)
        .map(|f| f.edits.clone())
}

/// The name in "`X` not found" (checker) or "X not found" (runtime).
pub fn undefined_name(ctx: &Context<'_>) -> Option<String> {
    for d in &ctx.diagnostics {
        if d.code == "E0201" {
            return Some(d.span.text(ctx.source).to_string());
        }
    }
    ctx.raw_output.lines().find_map(|l| {
        l.trim()
            .strip_suffix(" not found")
            .map(|n| n.trim_matches('`').to_string())
    })
}

/// Rewrites every `C_order` in Layout statements to `F_order`.
pub fn c_order_to_f_order(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    let mut edits = Vec::new();
    for stmt in &ctx.analysis.parsed.program.stmts {
        if let StmtKind::Layout { constraints, .. } = &stmt.kind {
            for c in constraints {
                if let Constraint::COrder(span) = c {
                    edits.push(TextEdit {
                        span: *span,
                        text: "F_order".into(),
                    });
                }
            }
        }
    }
    (!edits.is_empty()).then_some(edits)
}

/// Adds a task-specific Layout for every library-constrained task (cuBLAS
/// GEMMs), placed before the first Layout so it is found first.
pub fn gemm_layout(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    let app = ctx.app?;
    let mut lines = String::new();
    for lc in &app.library_constraints {
        let order = match lc.order {
            Some(mapwright_runtime::app::DimOrder::COrder) => " C_order",
            Some(mapwright_runtime::app::DimOrder::FOrder) => " F_order",
            None => "",
        };
        let soa = match lc.field_layout {
            Some(mapwright_runtime::app::FieldLayout::Aos) => " AOS",
            _ => " SOA",
        };
        for task in &lc.tasks {
            let line = format!("Layout {task} * *{soa}{order};\n");
            if !ctx.source.contains(line.trim_end()) && !lines.contains(&line) {
                lines.push_str(&line);
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    Some(vec![TextEdit {
        span: Span::at(insertion_before_first(ctx, |k| {
            matches!(k, StmtKind::Layout { .. })
        })),
        text: lines,
    }])
}

/// Start of the line of the first statement matching `pred`, or the end of
/// the file (after a newline) if there is none.
fn insertion_before_first(ctx: &Context<'_>, pred: impl Fn(&StmtKind) -> bool) -> usize {
    match ctx
        .analysis
        .parsed
        .program
        .stmts
        .iter()
        .find(|s| pred(&s.kind))
    {
        Some(s) => ctx.source[..s.span.start()]
            .rfind('\n')
            .map(|i| i + 1)
            .unwrap_or(0),
        None => ctx.source.len(),
    }
}

/// In every mapping function, ends each machine index with `% m.size[k]`.
pub fn wrap_indices_with_modulo(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    let program = &ctx.analysis.parsed.program;
    let mapping_funcs = program.mapping_function_names();
    let mut edits = Vec::new();
    for stmt in &program.stmts {
        let StmtKind::FuncDef { name, body, .. } = &stmt.kind else {
            continue;
        };
        if !mapping_funcs.contains(&name.name.as_str()) {
            continue;
        }
        for s in body {
            if let StmtKind::Return { value } = &s.kind {
                wrap_index(ctx.source, value, &mut edits);
            }
        }
    }
    (!edits.is_empty()).then_some(edits)
}

fn wrap_index(source: &str, e: &Expr, edits: &mut Vec<TextEdit>) {
    let ExprKind::Index { base, indices } = &e.kind else {
        return;
    };
    let ExprKind::Name(m) = &base.kind else {
        return;
    };
    if indices
        .iter()
        .any(|i| matches!(i.kind, ExprKind::Unpack(_)))
    {
        return; // positions are not known statically
    }
    for (k, idx) in indices.iter().enumerate() {
        if matches!(idx.kind, ExprKind::Star | ExprKind::Int(_)) || already_modulo(idx, m) {
            continue;
        }
        let text = idx.span.text(source);
        let wrapped = if matches!(
            idx.kind,
            ExprKind::Name(_)
                | ExprKind::Index { .. }
                | ExprKind::Prop { .. }
                | ExprKind::Paren(_)
                | ExprKind::Call { .. }
        ) {
            format!("{text} % {m}.size[{k}]")
        } else {
            format!("({text}) % {m}.size[{k}]")
        };
        edits.push(TextEdit {
            span: idx.span,
            text: wrapped,
        });
    }
}

fn already_modulo(e: &Expr, m: &str) -> bool {
    if let ExprKind::Binary {
        op: mapwright_grammar::ast::BinOp::Mod,
        rhs,
        ..
    } = &e.kind
    {
        if let ExprKind::Index { base, .. } = &rhs.kind {
            if let ExprKind::Prop {
                base: inner,
                prop: Prop::Size,
                ..
            } = &base.kind
            {
                return matches!(&inner.kind, ExprKind::Name(n) if n == m);
            }
        }
    }
    false
}

/// Deletes every InstanceLimit statement (with its line when it is alone on it).
pub fn drop_instance_limits(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    let edits: Vec<TextEdit> = ctx
        .analysis
        .parsed
        .program
        .stmts
        .iter()
        .filter(|s| matches!(s.kind, StmtKind::InstanceLimit { .. }))
        .map(|s| TextEdit {
            span: whole_line(ctx.source, s.span),
            text: String::new(),
        })
        .collect();
    (!edits.is_empty()).then_some(edits)
}

/// On a machine without processors of the kind a mapping function's
/// machine model is built for ("T is actually mapped to CPU, but machine
/// model is for GPU" on a host without GPUs), builds every model of a kind
/// the machine lacks over the kind the task runs on instead:
/// `Machine(GPU)` -> `Machine(CPU)`, and `Machine(OMP)` too where there are
/// no OpenMP processors either (the next launch would stop on it). The
/// functions keep their shape; only the processors they index change.
pub fn retarget_machine_model(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    let raw = ctx.raw_output;
    let after = |needle: &str| -> Option<ProcKind> {
        let at = raw.find(needle)? + needle.len();
        let word: String = raw[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        word.parse().ok()
    };
    let actual = after("is actually mapped to ")?;
    let model = after("but machine model is for ")?;
    let machine = ctx.machine?;
    if actual == model || machine.procs_per_node(model) > 0 || machine.procs_per_node(actual) == 0 {
        return None;
    }
    let mut edits = Vec::new();
    let mut at = 0;
    while let Some(i) = ctx.source[at..].find("Machine(") {
        let open = at + i + "Machine(".len();
        at = open;
        let line_start = ctx.source[..open].rfind('\n').map_or(0, |j| j + 1);
        if ctx.source[line_start..open].contains('#') {
            continue;
        }
        let Some(close) = ctx.source[open..].find(')').map(|j| open + j) else {
            break;
        };
        let inside = ctx.source[open..close].trim();
        let lacking = inside
            .parse::<ProcKind>()
            .is_ok_and(|k| k == model || machine.procs_per_node(k) == 0);
        if lacking {
            edits.push(TextEdit {
                span: Span::new(open, close),
                text: actual.to_string(),
            });
        }
    }
    (!edits.is_empty()).then_some(edits)
}

/// Deletes the IndexTaskMap/SingleTaskMap statement whose function failed
/// (the resolution names it), so that Legion's default placement applies.
pub fn drop_failing_task_map(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    let rule = ctx.decisions?.fatal.as_ref()?.rule?;
    let stmt = ctx
        .analysis
        .parsed
        .program
        .stmts
        .iter()
        .find(|s| s.span.start() <= rule.start() && rule.end() <= s.span.end())?;
    if !matches!(
        stmt.kind,
        StmtKind::IndexTaskMap { .. } | StmtKind::SingleTaskMap { .. }
    ) {
        return None;
    }
    Some(vec![TextEdit {
        span: whole_line(ctx.source, stmt.span),
        text: String::new(),
    }])
}

/// The statement's line(s) including the newline (and a trailing comment),
/// when nothing else is on them; else the statement alone.
pub(crate) fn whole_line(source: &str, span: Span) -> Span {
    let start = source[..span.start()]
        .rfind('\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    let end = source[span.end()..]
        .find('\n')
        .map(|i| span.end() + i + 1)
        .unwrap_or(source.len());
    let rest = source[span.end()..end].trim();
    if source[start..span.start()].trim().is_empty()
        && (rest.is_empty() || rest.starts_with('#') || rest.starts_with("//"))
    {
        Span::new(start, end)
    } else {
        span
    }
}

/// The task named in an allocation failure ("... of task NAME (UID ...").
pub fn failing_task(ctx: &Context<'_>) -> Option<String> {
    let raw = ctx.raw_output;
    let at = raw.find("of task ")? + "of task ".len();
    let name: String = raw[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Moves the region whose allocation failed out of the memory that is full:
/// a framebuffer's into zero-copy memory, zero-copy memory's into the
/// framebuffer (zero-copy is the smaller one on most machines). The rule is
/// specific to the task and the argument, so it wins over wildcards; the
/// argument is named as the application's runs match it (semantic name or
/// index). Without a requirement index in the output, the task's largest
/// region is moved.
pub fn relieve_full_memory(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    let app = ctx.app?;
    let task = app.task(&failing_task(ctx)?)?;
    let raw = ctx.raw_output;
    let requirement = raw
        .split_once("requirement ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u32>().ok());
    let region = requirement
        .and_then(|i| task.regions.iter().find(|r| r.index == i))
        .or_else(|| task.regions.iter().max_by_key(|r| r.bytes))?;
    let target = if raw.contains("(Z_COPY_MEM)") {
        "FBMEM"
    } else if raw.contains("(GPU_FB_MEM)") || !raw.contains("(") {
        "ZCMEM"
    } else {
        return None; // system or socket memory: no bigger memory to move to
    };
    let field =
        mapwright_runtime::resolve_mapping::RegionNaming::field(app, &task.name, &region.name);
    let line = format!("Region {} {field} GPU {target};\n", task.name);
    // A rule for this argument already moved it once: both memories are
    // too small, and moving it back would only repeat the failure.
    if ctx
        .source
        .contains(&format!("Region {} {field} GPU ", task.name))
    {
        return None;
    }
    let at = insertion_before_first(ctx, |k| matches!(k, StmtKind::Region { .. }));
    Some(vec![TextEdit {
        span: Span::at(at),
        text: line,
    }])
}

/// Replaces memories a Region rule's processor cannot reach.
pub fn replace_unreachable_memories(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    use mapwright_grammar::ast::{MemKind as M, ProcKind as P, ProcSel};
    let mut edits = Vec::new();
    for stmt in &ctx.analysis.parsed.program.stmts {
        if let StmtKind::Region {
            proc: ProcSel::Kind(kind, _),
            mems,
            ..
        } = &stmt.kind
        {
            for (mem, span) in mems {
                let replacement = match (kind, mem) {
                    (P::GPU, M::SYSMEM | M::SOCKMEM) => Some("ZCMEM"),
                    (P::CPU | P::OMP | P::IO | P::PY, M::FBMEM) => Some("SYSMEM"),
                    _ => None,
                };
                if let Some(r) = replacement {
                    edits.push(TextEdit {
                        span: *span,
                        text: r.into(),
                    });
                }
            }
        }
    }
    (!edits.is_empty()).then_some(edits)
}

/// The most imbalanced index launch: a sentence and its max/ideal ratio.
pub fn worst_imbalance(ctx: &Context<'_>) -> Option<(String, f64)> {
    let decisions = ctx.decisions?;
    let machine = ctx.machine?;
    let mut worst: Option<(String, f64)> = None;
    for t in decisions
        .tasks
        .iter()
        .filter(|t| t.launch == Launch::Index && t.placement.len() > 1)
    {
        let procs = (machine.nodes() as usize) * (machine.procs_per_node(t.proc_kind) as usize);
        if procs == 0 {
            continue;
        }
        let points = t.placement.len();
        let ideal = points.div_ceil(procs);
        let Some(((node, proc), max)) =
            t.points_per_processor().into_iter().max_by_key(|(_, n)| *n)
        else {
            continue;
        };
        let ratio = max as f64 / ideal as f64;
        if max > ideal && worst.as_ref().is_none_or(|(_, r)| ratio > *r) {
            let kind = kind_name(t.proc_kind);
            worst = Some((
                format!(
                    "Load imbalance in `{}`: {points} points on {procs} {kind}s, and {kind} ({node},{proc}) gets {max} (an even split gives {ideal}).",
                    t.task
                ),
                ratio,
            ));
        }
    }
    worst
}

fn kind_name(k: ProcKind) -> &'static str {
    match k {
        ProcKind::Gpu => "GPU",
        ProcKind::Omp => "OMP",
        _ => "CPU",
    }
}

/// Seconds from `ELAPSED TIME = x s`, `Elapsed time = x` or the mean of
/// `Execution time: N ms.` lines.
pub fn elapsed_seconds(raw: &str) -> Option<f64> {
    let number_after = |line: &str, key: &str| -> Option<f64> {
        let rest = line.split_once(key)?.1.trim_start();
        let n: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
            .collect();
        n.parse().ok()
    };
    for line in raw.lines() {
        if let Some(v) = number_after(line, "ELAPSED TIME =") {
            return Some(v);
        }
    }
    let ms: Vec<f64> = raw
        .lines()
        .filter_map(|l| number_after(l, "Execution time:"))
        .collect();
    if !ms.is_empty() {
        return Some(ms.iter().sum::<f64>() / ms.len() as f64 / 1000.0);
    }
    raw.lines().find_map(|l| number_after(l, "Elapsed time ="))
}

/// GFLOPS from `GFLOPS = x` or `achieved GFLOPS per node: x`.
pub fn throughput(raw: &str) -> Option<f64> {
    for line in raw.lines() {
        for key in ["GFLOPS =", "GFLOPS per node:"] {
            if let Some((_, rest)) = line.split_once(key) {
                let n: String = rest
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                if let Ok(v) = n.trim_end_matches('.').parse() {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// Prepends `Task NAME GPU,CPU;` for tasks that run on a CPU kind but have a
/// GPU variant (before the first Task rule, so they win).
pub fn move_tasks_to_gpu(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    let (decisions, app) = (ctx.decisions?, ctx.app?);
    let mut lines = String::new();
    for t in &decisions.tasks {
        let has_gpu = app
            .task(&t.task)
            .is_some_and(|task| task.variants.contains(&ProcKind::Gpu));
        if t.proc_kind != ProcKind::Gpu && has_gpu {
            let fallback = kind_name(t.proc_kind);
            lines.push_str(&format!("Task {} GPU,{fallback};\n", t.task));
        }
    }
    if lines.is_empty() {
        return None;
    }
    let at = insertion_before_first(ctx, |k| matches!(k, StmtKind::Task { .. }));
    Some(vec![TextEdit {
        span: Span::at(at),
        text: lines,
    }])
}
