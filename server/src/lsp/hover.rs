//! Hover: documentation of keywords, kinds and properties, and for names
//! what they are (function signature, assigned value, parameter type).

use mapwright_grammar::ast::StmtKind;
use mapwright_grammar::pin::{pinned_at, pinned_statements};
use mapwright_grammar::resolve::{Scope, SymbolKind};
use mapwright_grammar::token::TokenKind as T;
use mapwright_grammar::Span;

use super::analysis::Analysis;
use super::docs::{method_sig, prop_of_token, property_doc, token_doc, MACHINE};
use super::name_facts::{
    defined_as, mapping_name_occurrences, mapping_name_role, param_type, signature_text, NameRole,
};
use super::provider_api::{HoverProvider, HoverSection, Query};

/// Hover from the syntax and the names of the file.
pub struct SyntaxHover;

impl HoverProvider for SyntaxHover {
    fn hover(&self, q: &Query) -> Option<HoverSection> {
        let a = q.analysis;
        if a.in_comment(q.offset) {
            return None;
        }
        let token = a.token_at(q.offset)?;
        let markdown = if token.kind == T::Ident {
            name_hover(a, token.span)?
        } else if let Some(prop) = prop_of_token(token.kind) {
            let doc = property_doc(prop);
            match method_sig(prop) {
                Some(sig) => format!(
                    "```mapper\n{}\n```\n\n{}{}",
                    sig.label(),
                    doc.text,
                    param_list(sig.params)
                ),
                None => doc.markdown(),
            }
        } else if token.kind == T::KwTask && is_param_type(a, token.span) {
            "```mapper\nTask\n```\n\nType: a task. `task.ipoint`, `task.ispace`, \
             `task.parent` and `task.processor(m)` describe it."
                .to_string()
        } else {
            token_doc(token.kind)?.markdown()
        };
        Some(HoverSection {
            span: token.span,
            markdown,
        })
    }
}

/// Hover anywhere on the line of a statement pinned by a trailing
/// `# mapwright: keep` comment, the comment included: says it is pinned.
pub struct PinHover;

/// What a pinned statement's hover says.
pub const PINNED_HOVER: &str = "**Pinned** by `# mapwright: keep`: the optimizer \
     (`mapwright optimize`, *Optimize This Mapper*) leaves this statement as written and \
     keeps what it decides; no proposer may change, override or remove it.";

impl HoverProvider for PinHover {
    fn hover(&self, q: &Query) -> Option<HoverSection> {
        let a = q.analysis;
        let pinned = pinned_statements(&a.parsed.program, &a.parsed.comments, &a.text);
        let stmt = pinned_at(&pinned, &a.text, q.offset)?;
        let span = a
            .parsed
            .comments
            .iter()
            .find(|c| c.span.start() <= q.offset && q.offset <= c.span.end())
            .map_or(stmt, |c| c.span);
        Some(HoverSection {
            span,
            markdown: PINNED_HOVER.to_string(),
        })
    }
}

fn param_list(params: &[super::docs::ParamDoc]) -> String {
    // A blank line first, so Markdown renders a list, not a paragraph.
    let items: String = params
        .iter()
        .map(|p| format!("\n- `{}`: {}", p.name, p.text))
        .collect();
    if items.is_empty() {
        items
    } else {
        format!("\n{items}")
    }
}

/// True if the `Task` at `span` is a parameter's type, not a statement.
fn is_param_type(a: &Analysis, span: Span) -> bool {
    a.program().stmts.iter().any(|s| match &s.kind {
        StmtKind::FuncDef { params, .. } => params.iter().any(|p| p.ty_span == span),
        _ => false,
    })
}

fn name_hover(a: &Analysis, span: Span) -> Option<String> {
    let name = span.text(&a.text);
    if let Some(id) = a.resolved.symbol_at(span.start()) {
        let sym = &a.resolved.symbols[id];
        let uses = a.resolved.references_to(id).count();
        let uses = match uses {
            0 => "not used".to_string(),
            1 => "1 use".to_string(),
            n => format!("{n} uses"),
        };
        let func_name = |scope: Scope| match scope {
            Scope::Function(f) => match a.program().stmts.get(f).map(|s| &s.kind) {
                Some(StmtKind::FuncDef { name, .. }) => format!("`{}`", name.name),
                _ => "a function".to_string(),
            },
            Scope::Global => "the file".to_string(),
        };
        // The checker's inferred type, where it knows one.
        let ty = a
            .symbol_type(id)
            .map(|t| format!(": {}", t.describe()))
            .unwrap_or_default();
        return Some(match sym.kind {
            SymbolKind::Function => {
                let stmt = a.function_named(&sym.name)?;
                let returns = a
                    .returns
                    .get(sym.name.as_str())
                    .filter(|t| **t != mapwright_grammar::check::Ty::Unknown)
                    .map(|t| format!(" -> {}", t.describe()))
                    .unwrap_or_default();
                let mut text = format!(
                    "```mapper\n{}{returns}\n```\n\nfunction · {uses}",
                    signature_text(a, stmt)
                );
                let mapped = mapped_by(a, &sym.name);
                if !mapped.is_empty() {
                    text.push_str(&format!("\n\nmaps: {}", mapped.join("; ")));
                }
                text
            }
            SymbolKind::Global => {
                let mut text = format!(
                    "```mapper\n{}\n```\n\nglobal variable{ty} · {uses}",
                    defined_as(a, sym.defs[0])
                );
                if sym.defs.len() > 1 {
                    text.push_str(&format!(" · assigned {} times", sym.defs.len()));
                }
                text
            }
            SymbolKind::Parameter => format!(
                "```mapper\n{} {}\n```\n\nparameter of {} · {uses}",
                param_type(a, sym.scope, &sym.name).unwrap_or("?"),
                sym.name,
                func_name(sym.scope)
            ),
            SymbolKind::Local => format!(
                "```mapper\n{}\n```\n\nlocal variable of {}{ty} · {uses}",
                defined_as(a, sym.defs[0]),
                func_name(sym.scope)
            ),
            SymbolKind::LoopVar => format!(
                "```mapper\n{}\n```\n\ncomprehension variable (`tuple(... for {} in ...)`)",
                sym.name, sym.name
            ),
        });
    }
    if name == "Machine" {
        return Some(format!(
            "```mapper\n{}\n```\n\n{}{}",
            MACHINE.label(),
            MACHINE.text,
            param_list(MACHINE.params)
        ));
    }
    match mapping_name_role(a, span) {
        Some(NameRole::Task) => Some(format!(
            "```mapper\ntask {name}\n```\n\ntask · named in {} statement(s) of this file",
            mapping_name_occurrences(a, span).len()
        )),
        Some(NameRole::Region) => Some(format!(
            "```mapper\nregion {name}\n```\n\nregion (a task argument's semantic name) · named in {} statement(s) of this file",
            mapping_name_occurrences(a, span).len()
        )),
        None => {
            let unresolved = a.resolved.unresolved.iter().any(|(_, s)| *s == span);
            unresolved.then(|| format!("`{name}`: not defined in this file"))
        }
    }
}

/// The mapping statements that use function `name`, as one-line texts.
fn mapped_by(a: &Analysis, name: &str) -> Vec<String> {
    a.program()
        .stmts
        .iter()
        .filter(|s| match &s.kind {
            StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. } => {
                func.name == name
            }
            _ => false,
        })
        .map(|s| format!("`{}`", a.one_line(s.span, 80)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::providers::Providers;

    fn hover(src: &str) -> Option<String> {
        let offset = src.find("$0").expect("marker");
        let text = src.replace("$0", "");
        let a = Analysis::new(&text);
        let q = Query::plain(&a, offset);
        Providers::builtin().hover(&q).map(|h| h.markdown)
    }

    #[test]
    fn keywords_kinds_and_properties() {
        assert!(hover("Reg$0ion * * GPU FBMEM;")
            .unwrap()
            .contains("Memory placement"));
        assert!(hover("Layout * * FBMEM S$0OA;")
            .unwrap()
            .contains("Struct of arrays"));
        assert!(hover("Task * G$0PU;").unwrap().contains("CUDA"));
        let h = hover("m = Machine(GPU);\nn = m.sp$0lit(0, 2);").unwrap();
        assert!(h.contains("split(int dim, int factor) -> MSpace"), "{h}");
        assert!(hover("def f(Ta$0sk t) { return 0; }")
            .unwrap()
            .contains("Type: a task"));
        assert!(hover("m = Mach$0ine(GPU);")
            .unwrap()
            .contains("machine model"));
        assert_eq!(hover("# Task$0 GPU\nTask * GPU;"), None);
    }

    #[test]
    fn a_pinned_statement_says_so_on_its_keyword_and_its_comment() {
        let src = "Task * GPU,CPU;\nRegion * rp_ghost GPU ZCMEM;  # mapwright: keep\n";
        let on = |at: &str| hover(&src.replacen(at, &format!("{}$0{}", &at[..2], &at[2..]), 1));
        let keyword = on("Region").expect("a hover");
        assert!(keyword.contains("Memory placement"), "{keyword}");
        assert!(keyword.contains("**Pinned**"), "{keyword}");
        let comment = on("mapwright: keep").expect("a hover on the mark");
        assert_eq!(comment, PINNED_HOVER);
        assert!(!on("Task").expect("a hover").contains("Pinned"));
    }

    #[test]
    fn names() {
        let src = "mgpu = Machine(GPU);\ndef f(Task task) {\n    ip = task.ipoint;\n    return mgpu[ip[0], 0];\n}\nIndexTaskMap foo f;\n";
        let h = hover(&src.replace("return mgpu", "return mg$0pu")).unwrap();
        assert!(
            h.contains("mgpu = Machine(GPU)") && h.contains("global variable"),
            "{h}"
        );
        let h = hover(&src.replace("foo f;", "foo $0f;")).unwrap();
        assert!(
            h.contains("def f(Task task)") && h.contains("IndexTaskMap foo f"),
            "{h}"
        );
        let h = hover(&src.replace("task.ipoint", "ta$0sk.ipoint")).unwrap();
        assert!(
            h.contains("Task task") && h.contains("parameter of `f`"),
            "{h}"
        );
        let h = hover(&src.replace("ip[0]", "i$0p[0]")).unwrap();
        assert!(
            h.contains("ip = task.ipoint") && h.contains("local variable"),
            "{h}"
        );
        let h = hover(&src.replace("foo f;", "f$0oo f;")).unwrap();
        assert!(h.contains("task foo"), "{h}");
    }
}
