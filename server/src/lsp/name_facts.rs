//! What the document says about a name, shared by hover, completion,
//! symbols, navigation and semantic tokens: a function's signature, an
//! assignment's text, a parameter's declared type, and the task and region
//! names of mapping statements (their role and every occurrence).

use mapwright_grammar::ast::{RegionSel, Stmt, StmtKind, TaskSel};
use mapwright_grammar::resolve::Scope;
use mapwright_grammar::Span;

use super::analysis::{one_line, Analysis};

/// `def f(Task task)` for a `FuncDef` statement.
pub fn signature_text(a: &Analysis, stmt: &mapwright_grammar::ast::Stmt) -> String {
    match &stmt.kind {
        StmtKind::FuncDef { name, params, .. } => {
            let ps: Vec<String> = params
                .iter()
                .map(|p| format!("{} {}", p.ty.name(), p.name.name))
                .collect();
            format!("def {}({})", name.name, ps.join(", "))
        }
        _ => one_line(stmt.span.text(&a.text), 60),
    }
}

/// `name = value` for the assignment whose name is at `decl`.
pub fn defined_as(a: &Analysis, decl: mapwright_grammar::Span) -> String {
    let line = a.index.line_of(decl.start());
    let (_, end) = a.index.line_span(line);
    let text = &a.text[decl.start()..end.max(decl.start())];
    let stmt = text.split(';').next().unwrap_or(text);
    one_line(stmt, 60)
}

/// The declared type of parameter `name` of the function at `scope`.
pub fn param_type(a: &Analysis, scope: Scope, name: &str) -> Option<&'static str> {
    let Scope::Function(f) = scope else {
        return None;
    };
    match &a.program().stmts.get(f)?.kind {
        StmtKind::FuncDef { params, .. } => params
            .iter()
            .find(|p| p.name.name == name)
            .map(|p| p.ty.name()),
        _ => None,
    }
}

/// What a name in a mapping statement's task or region field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRole {
    Task,
    Region,
}

/// Every task and region name in mapping statements, with its role.
pub fn mapping_names<S: std::borrow::Borrow<Stmt>>(stmts: &[S]) -> Vec<(Span, NameRole)> {
    let mut out = Vec::new();
    let tasks = |sel: &TaskSel, out: &mut Vec<(Span, NameRole)>| {
        if let TaskSel::Names(names) = sel {
            out.extend(names.iter().map(|n| (n.span, NameRole::Task)));
        }
    };
    let region = |sel: &RegionSel, out: &mut Vec<(Span, NameRole)>| {
        if let RegionSel::Name(n) = sel {
            out.push((n.span, NameRole::Region));
        }
    };
    for s in stmts {
        match &s.borrow().kind {
            StmtKind::Task { tasks: sel, .. }
            | StmtKind::IndexTaskMap { tasks: sel, .. }
            | StmtKind::SingleTaskMap { tasks: sel, .. } => tasks(sel, &mut out),
            StmtKind::Region {
                task, region: r, ..
            }
            | StmtKind::Layout {
                task, region: r, ..
            }
            | StmtKind::CollectMemory { task, region: r } => {
                tasks(task, &mut out);
                region(r, &mut out);
            }
            StmtKind::InstanceLimit { task, .. } => out.push((task.span, NameRole::Task)),
            StmtKind::ControlReplicate { tasks } => {
                out.extend(tasks.iter().map(|n| (n.span, NameRole::Task)))
            }
            _ => {}
        }
    }
    out
}

/// The role of the mapping name at `span`.
pub fn mapping_name_role(a: &Analysis, span: Span) -> Option<NameRole> {
    mapping_names(&a.program().stmts)
        .into_iter()
        .find(|(s, _)| *s == span)
        .map(|(_, r)| r)
}

/// Every occurrence of the task or region name at `span` (same role, same text).
pub fn mapping_name_occurrences(a: &Analysis, span: Span) -> Vec<Span> {
    let all = mapping_names(&a.program().stmts);
    let Some(role) = all.iter().find(|(s, _)| *s == span).map(|(_, r)| *r) else {
        return Vec::new();
    };
    let text = span.text(&a.text);
    all.into_iter()
        .filter(|(s, r)| *r == role && s.text(&a.text) == text)
        .map(|(s, _)| s)
        .collect()
}
