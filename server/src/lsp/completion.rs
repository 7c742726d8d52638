//! Completion: statement templates, kinds, constraints, names in scope and
//! properties, chosen by the cursor context ([`super::cursor`]).

use mapwright_grammar::ast::{MemKind, ProcKind, Prop, RegionSel, StmtKind, TaskSel};
use mapwright_grammar::resolve::SymbolKind;
use mapwright_grammar::token::TokenKind as T;

use super::analysis::Analysis;
use super::cursor::{Callee, Context, Cursor, DotBase};
use super::docs::{is_task_property, method_sig, property_doc, token_doc, MACHINE};
use super::name_facts::{defined_as, param_type, signature_text};
use super::provider_api::{Completion, CompletionKind, CompletionProvider, Query};

/// Completion from the syntax and the names of the file.
pub struct SyntaxCompletion;

impl CompletionProvider for SyntaxCompletion {
    fn complete(&self, q: &Query, cursor: &Cursor, out: &mut Vec<Completion>) {
        let a = q.analysis;
        match &cursor.context {
            Context::Nothing | Context::NewName => {}
            Context::StatementStart => {
                if cursor.function.is_some() {
                    body_statements(out);
                    names(a, cursor, q.offset, out);
                } else {
                    statements(out);
                }
            }
            Context::MappingField { keyword, field } => {
                mapping_field(a, cursor, *keyword, *field, out)
            }
            Context::AfterDot { base } => properties(*base, out),
            Context::ParamType => {
                for k in [
                    T::KwTask,
                    T::TyInt,
                    T::TyBool,
                    T::TyIPoint,
                    T::TyISpace,
                    T::TyMSpace,
                ] {
                    out.push(keyword_item(k, CompletionKind::Type, 0));
                }
            }
            Context::Expression { call } => match call.as_ref().map(|c| &c.callee) {
                Some(Callee::Machine) => proc_kinds(out, 0),
                Some(Callee::Method(Prop::Has)) => mem_kinds(out, 0),
                Some(Callee::Print) if call.as_ref().is_some_and(|c| c.active_arg == 0) => {}
                _ => expression(a, cursor, q.offset, out),
            },
        }
    }
}

/// Every top-level statement as a template.
fn statements(out: &mut Vec<Completion>) {
    let procs = "GPU,CPU,OMP,IO,PY,PROC";
    let mems = "FBMEM,ZCMEM,SYSMEM,RDMEM,SOCKMEM,VIRTUAL";
    let templates: [(T, String, &str); 8] = [
        (
            T::KwTask,
            format!("Task ${{1:*}} ${{2|{procs}|}};"),
            "Task ",
        ),
        (
            T::KwRegion,
            format!("Region ${{1:*}} ${{2:*}} ${{3|{procs}|}} ${{4|{mems}|}};"),
            "Region ",
        ),
        (
            T::KwLayout,
            "Layout ${1:*} ${2:*} ${3:*} ${4|SOA,AOS|} ${5|C_order,F_order|};".to_string(),
            "Layout ",
        ),
        (
            T::KwIndexTaskMap,
            "IndexTaskMap ${1:task} ${2:function};".to_string(),
            "IndexTaskMap ",
        ),
        (
            T::KwSingleTaskMap,
            "SingleTaskMap ${1:task} ${2:function};".to_string(),
            "SingleTaskMap ",
        ),
        (
            T::KwInstanceLimit,
            "InstanceLimit ${1:task} ${2:1};".to_string(),
            "InstanceLimit ",
        ),
        (
            T::KwCollectMemory,
            "CollectMemory ${1:*} ${2:*};".to_string(),
            "CollectMemory ",
        ),
        (
            T::KwControlReplicate,
            "ControlReplicate ${1:task};".to_string(),
            "ControlReplicate ",
        ),
    ];
    for (kw, snippet, plain) in templates {
        let mut item = keyword_item(kw, CompletionKind::Snippet, 0).snippet(snippet, plain);
        item.detail = token_doc(kw).map(|d| d.form.to_string());
        out.push(item);
    }
    out.push(
        keyword_item(T::KwDef, CompletionKind::Snippet, 0)
            .detail("def NAME(Task task) { ... }")
            .snippet(
                "def ${1:name}(Task ${2:task}) {\n    return ${0:m[0, 0]};\n}",
                "def ",
            ),
    );
    out.push(print_item());
    out.push(
        Completion::new("Machine", CompletionKind::Snippet, 1)
            .detail("mgpu = Machine(GPU);")
            .docs(MACHINE.text)
            .snippet(
                "${1:mgpu} = Machine(${2|GPU,CPU,OMP,IO,PY,PROC|});",
                "mgpu = Machine(GPU);",
            ),
    );
}

/// Statements of a function body.
fn body_statements(out: &mut Vec<Completion>) {
    out.push(
        keyword_item(T::KwReturn, CompletionKind::Snippet, 0)
            .snippet("return ${0:value};", "return "),
    );
    out.push(print_item());
}

fn print_item() -> Completion {
    keyword_item(T::KwPrint, CompletionKind::Snippet, 0)
        .snippet("print(\"${1:{\\}}\", ${2:value});", "print(")
}

fn keyword_item(kind: T, ck: CompletionKind, rank: u8) -> Completion {
    let label = kind.keyword_text().unwrap_or_default();
    let mut item = Completion::new(label, ck, rank);
    if let Some(doc) = token_doc(kind) {
        item.documentation = Some(doc.markdown());
    }
    item
}

fn proc_kinds(out: &mut Vec<Completion>, rank: u8) {
    for k in ProcKind::ALL {
        let mut item = kind_item(k.name(), rank);
        item.detail = Some("processor kind".into());
        out.push(item);
    }
}

fn mem_kinds(out: &mut Vec<Completion>, rank: u8) {
    for k in MemKind::ALL {
        let mut item = kind_item(k.name(), rank);
        item.detail = Some("memory kind".into());
        out.push(item);
    }
}

fn kind_item(name: &str, rank: u8) -> Completion {
    let token = mapwright_grammar::token::lex(name)
        .tokens
        .first()
        .map(|t| t.kind);
    let mut item = Completion::new(name, CompletionKind::Kind, rank);
    item.documentation = token.and_then(token_doc).map(|d| d.text.to_string());
    item
}

fn star(rank: u8, what: &str) -> Completion {
    Completion::new("*", CompletionKind::Keyword, rank).detail(format!("every {what}"))
}

/// Fields of mapping statements: tasks, regions, kinds, constraints, functions.
fn mapping_field(
    a: &Analysis,
    cursor: &Cursor,
    keyword: T,
    field: usize,
    out: &mut Vec<Completion>,
) {
    match (keyword, field) {
        (T::KwTask, 0)
        | (T::KwRegion, 0)
        | (T::KwLayout, 0)
        | (T::KwCollectMemory, 0)
        | (T::KwInstanceLimit, 0) => {
            if keyword != T::KwInstanceLimit {
                out.push(star(0, "task"));
            }
            task_names(a, cursor, out);
        }
        (T::KwIndexTaskMap | T::KwSingleTaskMap, 0) => {
            out.push(star(0, "task"));
            task_names(a, cursor, out);
            for k in [ProcKind::CPU, ProcKind::GPU, ProcKind::OMP] {
                out.push(kind_item(k.name(), 2).detail("every task mapped to this kind"));
            }
        }
        (T::KwControlReplicate, _) => task_names(a, cursor, out),
        (T::KwTask, _) => proc_kinds(out, 0),
        (T::KwRegion | T::KwLayout | T::KwCollectMemory, 1) => {
            out.push(star(0, "region"));
            region_names(a, cursor, out);
        }
        (T::KwRegion, 2) => {
            out.push(star(1, "processor kind"));
            proc_kinds(out, 0);
        }
        (T::KwRegion, _) => mem_kinds(out, 0),
        (T::KwLayout, 2) => {
            out.push(star(1, "memory kind"));
            mem_kinds(out, 0);
        }
        (T::KwLayout, _) => constraints(out),
        (T::KwIndexTaskMap | T::KwSingleTaskMap, 1) => mapping_functions(a, out),
        _ => {}
    }
}

fn constraints(out: &mut Vec<Completion>) {
    for k in [T::Soa, T::Aos, T::COrder, T::FOrder, T::Compact, T::Exact] {
        out.push(keyword_item(k, CompletionKind::Constraint, 0));
    }
    out.push(
        keyword_item(T::Align, CompletionKind::Constraint, 0)
            .snippet("Align ${1|==,<=,<,>=,>,!=|} ${2:128}", "Align == "),
    );
}

/// Task names mentioned anywhere in the file (not the one being typed).
fn task_names(a: &Analysis, cursor: &Cursor, out: &mut Vec<Completion>) {
    let mut seen = std::collections::BTreeSet::new();
    for s in &a.program().stmts {
        let mut add = |name: &mapwright_grammar::ast::Ident| {
            if name.span != cursor.prefix {
                seen.insert(name.name.clone());
            }
        };
        match &s.kind {
            StmtKind::Task { tasks: sel, .. }
            | StmtKind::Region { task: sel, .. }
            | StmtKind::Layout { task: sel, .. }
            | StmtKind::CollectMemory { task: sel, .. }
            | StmtKind::IndexTaskMap { tasks: sel, .. }
            | StmtKind::SingleTaskMap { tasks: sel, .. } => {
                if let TaskSel::Names(names) = sel {
                    names.iter().for_each(&mut add);
                }
            }
            StmtKind::InstanceLimit { task, .. } => add(task),
            StmtKind::ControlReplicate { tasks } => tasks.iter().for_each(&mut add),
            _ => {}
        }
    }
    for name in seen {
        out.push(
            Completion::new(name, CompletionKind::Task, 1).detail("task (named in this file)"),
        );
    }
}

/// Region names mentioned anywhere in the file.
fn region_names(a: &Analysis, cursor: &Cursor, out: &mut Vec<Completion>) {
    let mut seen = std::collections::BTreeSet::new();
    for s in &a.program().stmts {
        if let StmtKind::Region { region, .. }
        | StmtKind::Layout { region, .. }
        | StmtKind::CollectMemory { region, .. } = &s.kind
        {
            if let RegionSel::Name(n) = region {
                if n.span != cursor.prefix {
                    seen.insert(n.name.clone());
                }
            }
        }
    }
    for name in seen {
        out.push(
            Completion::new(name, CompletionKind::Region, 1).detail("region (named in this file)"),
        );
    }
}

/// Functions usable by IndexTaskMap/SingleTaskMap: those with one `Task`
/// parameter first, the others after.
fn mapping_functions(a: &Analysis, out: &mut Vec<Completion>) {
    for s in &a.program().stmts {
        if let StmtKind::FuncDef { name, params, .. } = &s.kind {
            let fits = params.len() == 1 && params[0].ty == mapwright_grammar::ast::ParamType::Task;
            out.push(
                Completion::new(
                    name.name.clone(),
                    CompletionKind::Function,
                    if fits { 0 } else { 2 },
                )
                .detail(signature_text(a, s)),
            );
        }
    }
}

/// Properties and methods after `.`.
fn properties(base: DotBase, out: &mut Vec<Completion>) {
    for prop in Prop::ALL {
        let task_prop = is_task_property(prop);
        let rank = match base {
            DotBase::Task if !task_prop => continue,
            DotBase::Machine if task_prop => continue,
            _ => 0,
        };
        let doc = property_doc(prop);
        let mut item = Completion::new(
            prop.name(),
            if prop.is_method() {
                CompletionKind::Method
            } else {
                CompletionKind::Property
            },
            rank,
        )
        .docs(doc.markdown());
        if let Some(sig) = method_sig(prop) {
            let args: Vec<String> = sig
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| format!("${{{}:{}}}", i + 1, p.name))
                .collect();
            item = item.detail(sig.label()).snippet(
                format!("{}({})", prop.name(), args.join(", ")),
                format!("{}(", prop.name()),
            );
        } else {
            item = item.detail(doc.form);
        }
        out.push(item);
    }
}

/// Names in scope and expression starters.
fn expression(a: &Analysis, cursor: &Cursor, offset: usize, out: &mut Vec<Completion>) {
    names(a, cursor, offset, out);
    out.push(
        Completion::new("Machine", CompletionKind::Function, 1)
            .detail(MACHINE.label())
            .docs(MACHINE.text)
            .snippet("Machine(${1|GPU,CPU,OMP,IO,PY,PROC|})", "Machine("),
    );
    out.push(
        keyword_item(T::KwTuple, CompletionKind::Snippet, 2)
            .snippet("tuple(${1:x} for ${2:x} in ${3:values})", "tuple("),
    );
    out.push(keyword_item(T::KwTrue, CompletionKind::Keyword, 3));
    out.push(keyword_item(T::KwFalse, CompletionKind::Keyword, 3));
    proc_kinds(out, 4);
    mem_kinds(out, 4);
}

/// Globals, functions, and the enclosing function's parameters and the
/// locals assigned before the cursor.
fn names(a: &Analysis, cursor: &Cursor, offset: usize, out: &mut Vec<Completion>) {
    for id in a.visible_symbols(offset) {
        let sym = &a.resolved.symbols[id];
        let decl = sym.defs[0];
        if decl == cursor.prefix {
            continue;
        }
        let item = match sym.kind {
            SymbolKind::Function => {
                let stmt = a.function_named(&sym.name);
                let detail = stmt.map(|s| signature_text(a, s)).unwrap_or_default();
                let params: Vec<String> = match stmt.map(|s| &s.kind) {
                    Some(StmtKind::FuncDef { params, .. }) => params
                        .iter()
                        .enumerate()
                        .map(|(i, p)| format!("${{{}:{}}}", i + 1, p.name.name))
                        .collect(),
                    _ => Vec::new(),
                };
                Completion::new(sym.name.clone(), CompletionKind::Function, 0)
                    .detail(detail)
                    .snippet(
                        format!("{}({})", sym.name, params.join(", ")),
                        format!("{}(", sym.name),
                    )
            }
            SymbolKind::Global => Completion::new(sym.name.clone(), CompletionKind::Variable, 0)
                .detail(format!("global {}", defined_as(a, decl))),
            SymbolKind::Parameter => {
                let ty = param_type(a, sym.scope, &sym.name).unwrap_or("parameter");
                Completion::new(sym.name.clone(), CompletionKind::Parameter, 0)
                    .detail(format!("{ty} {}", sym.name))
            }
            SymbolKind::Local => {
                if decl.start() >= offset {
                    continue;
                }
                Completion::new(sym.name.clone(), CompletionKind::Variable, 0)
                    .detail(format!("local {}", defined_as(a, decl)))
            }
            SymbolKind::LoopVar => continue,
        };
        out.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::providers::Providers;

    fn labels(src: &str) -> Vec<String> {
        let offset = src.find("$0").expect("marker");
        let text = src.replace("$0", "");
        let a = Analysis::new(&text);
        let q = Query::plain(&a, offset);
        let mut items = Providers::builtin().complete(&q).items;
        items.sort_by(|x, y| (x.rank, &x.label).cmp(&(y.rank, &y.label)));
        items.into_iter().map(|c| c.label).collect()
    }

    #[test]
    fn statement_start_offers_templates() {
        let l = labels("$0");
        for kw in mapwright_grammar::token::statement_keywords() {
            assert!(l.contains(&kw.to_string()), "{kw} missing from {l:?}");
        }
        let body = labels("m = 1;\ndef f(Task t) {\n    $0\n}\n");
        assert!(body.contains(&"return".to_string()));
        assert!(body.contains(&"m".to_string()) && body.contains(&"t".to_string()));
        assert!(!body.contains(&"Region".to_string()));
    }

    #[test]
    fn fields_offer_the_right_kinds() {
        assert_eq!(labels("Region * * $0")[..2], ["CPU", "GPU"]);
        assert!(labels("Region * * GPU $0").contains(&"FBMEM".to_string()));
        assert!(!labels("Region * * $0").contains(&"FBMEM".to_string()));
        assert!(labels("Layout * * $0").contains(&"ZCMEM".to_string()));
        assert!(!labels("Layout * * $0").contains(&"GPU".to_string()));
        let l = labels("Layout * * FBMEM $0");
        assert!(l.contains(&"SOA".to_string()) && l.contains(&"Align".to_string()));
        assert!(labels("Task * $0").contains(&"OMP".to_string()));
        let l = labels("Task foo GPU;\nRegion $0");
        assert_eq!(l[..2], ["*", "foo"]);
        let l =
            labels("def f(Task t) { return 0; }\ndef g(int x) { return 0; }\nIndexTaskMap foo $0");
        assert_eq!(l, ["f", "g"]);
        assert_eq!(
            labels("m = Machine($0"),
            ["CPU", "GPU", "IO", "OMP", "PROC", "PY"]
        );
    }

    #[test]
    fn dots_offer_properties_by_base() {
        let l = labels("def f(Task task) { return task.$0 }");
        assert_eq!(l, ["ipoint", "ispace", "parent", "processor"]);
        let l = labels("m = Machine(GPU);\nx = m.$0");
        assert!(l.contains(&"split".to_string()) && !l.contains(&"ipoint".to_string()));
    }

    #[test]
    fn expressions_offer_names_in_scope() {
        let l = labels(
            "mgpu = Machine(GPU);\ndef f(Task task) {\n    ip = task.ipoint;\n    return $0\n}\n",
        );
        for n in ["mgpu", "f", "task", "ip", "Machine"] {
            assert!(l.contains(&n.to_string()), "{n} missing from {l:?}");
        }
        let l = labels("def f(Task task) {\n    x = $0;\n    later = 1;\n    return x;\n}\n");
        assert!(!l.contains(&"later".to_string()), "{l:?}");
        assert!(labels("# Task $0").is_empty());
    }
}
