//! The document outline (functions with their parameters and locals,
//! globals, mapping statements) and workspace-symbol matching.

use mapwright_grammar::ast::StmtKind;
use mapwright_grammar::Span;

use super::analysis::Analysis;
use super::name_facts::{defined_as, signature_text};

/// What an outline entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutlineKind {
    Function,
    Global,
    Parameter,
    Local,
    /// `Task`, `Region`, `Layout`, ... statements.
    Mapping,
}

/// One outline entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineItem {
    pub name: String,
    pub detail: Option<String>,
    pub kind: OutlineKind,
    /// The whole statement.
    pub span: Span,
    /// The part to reveal and select (the name, or the statement keyword).
    pub selection: Span,
    pub children: Vec<OutlineItem>,
}

/// The outline of a document in source order. Statements that did not parse
/// are left out.
pub fn outline(a: &Analysis) -> Vec<OutlineItem> {
    let mut out = Vec::new();
    for stmt in &a.program().stmts {
        let item = match &stmt.kind {
            StmtKind::FuncDef {
                name, params, body, ..
            } => {
                let mut children: Vec<OutlineItem> = params
                    .iter()
                    .map(|p| OutlineItem {
                        name: p.name.name.clone(),
                        detail: Some(p.ty.name().to_string()),
                        kind: OutlineKind::Parameter,
                        span: Span::new(p.ty_span.start(), p.name.span.end()),
                        selection: p.name.span,
                        children: Vec::new(),
                    })
                    .collect();
                let mut seen: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
                for b in body {
                    if let StmtKind::Assign { name, .. } = &b.kind {
                        if seen.contains(&name.name.as_str()) {
                            continue;
                        }
                        seen.push(&name.name);
                        children.push(OutlineItem {
                            name: name.name.clone(),
                            detail: Some(defined_as(a, name.span)),
                            kind: OutlineKind::Local,
                            span: b.span,
                            selection: name.span,
                            children: Vec::new(),
                        });
                    }
                }
                OutlineItem {
                    name: name.name.clone(),
                    detail: Some(signature_text(a, stmt)),
                    kind: OutlineKind::Function,
                    span: stmt.span,
                    selection: name.span,
                    children,
                }
            }
            StmtKind::Assign { name, .. } => OutlineItem {
                name: name.name.clone(),
                detail: Some(defined_as(a, name.span)),
                kind: OutlineKind::Global,
                span: stmt.span,
                selection: name.span,
                children: Vec::new(),
            },
            StmtKind::Task { .. }
            | StmtKind::Region { .. }
            | StmtKind::Layout { .. }
            | StmtKind::InstanceLimit { .. }
            | StmtKind::CollectMemory { .. }
            | StmtKind::IndexTaskMap { .. }
            | StmtKind::SingleTaskMap { .. }
            | StmtKind::ControlReplicate { .. } => {
                let text = a.one_line(stmt.span, 80);
                let text = text.trim_end_matches(';').to_string();
                let keyword_len = text.find(' ').unwrap_or(text.len());
                OutlineItem {
                    name: text,
                    detail: None,
                    kind: OutlineKind::Mapping,
                    span: stmt.span,
                    selection: Span::new(stmt.span.start(), stmt.span.start() + keyword_len),
                    children: Vec::new(),
                }
            }
            StmtKind::Print { .. } | StmtKind::Return { .. } | StmtKind::Error => continue,
        };
        out.push(item);
    }
    out
}

/// Workspace-symbol matching: every character of `query` appears in `name`
/// in order, ignoring case (`ibk` matches `init_block`). An empty query
/// matches everything.
pub fn matches_query(query: &str, name: &str) -> bool {
    let mut chars = name.chars().flat_map(char::to_lowercase);
    query
        .chars()
        .flat_map(char::to_lowercase)
        .all(|q| chars.any(|c| c == q))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outline_lists_functions_globals_and_mappings() {
        let src = "Task * GPU;\nmgpu = Machine(GPU);\ndef f(Task task) {\n    ip = task.ipoint;\n    ip = ip;\n    return mgpu[0, 0];\n}\nIndexTaskMap  a,b   f;\nbroken broken;\n";
        let a = Analysis::new(src);
        let o = outline(&a);
        let names: Vec<(&str, OutlineKind)> = o.iter().map(|i| (i.name.as_str(), i.kind)).collect();
        assert_eq!(
            names,
            [
                ("Task * GPU", OutlineKind::Mapping),
                ("mgpu", OutlineKind::Global),
                ("f", OutlineKind::Function),
                ("IndexTaskMap a,b f", OutlineKind::Mapping),
            ]
        );
        let f = &o[2];
        assert_eq!(f.detail.as_deref(), Some("def f(Task task)"));
        let kids: Vec<&str> = f.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(kids, ["task", "ip"]);
        assert_eq!(o[0].selection.text(src), "Task");
    }

    #[test]
    fn fuzzy_query() {
        assert!(matches_query("ibk", "init_block"));
        assert!(matches_query("", "x"));
        assert!(matches_query("MGPU", "mgpu"));
        assert!(!matches_query("xyz", "mgpu"));
    }
}
