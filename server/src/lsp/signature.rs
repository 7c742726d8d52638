//! Signature help for machine-model methods, `Machine(KIND)` and user
//! functions: which argument the cursor is in and what it means.

use mapwright_grammar::ast::StmtKind;

use super::analysis::Analysis;
use super::cursor::{cursor_at, Callee, Context};
use super::docs::{method_sig, MACHINE};

/// One signature with the active parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// `split(int dim, int factor) -> MSpace`
    pub label: String,
    /// Markdown.
    pub documentation: String,
    /// Each parameter's byte range in `label` and its documentation.
    pub params: Vec<(std::ops::Range<usize>, String)>,
    pub active_param: usize,
}

/// The signature of the call around `offset`, if any.
pub fn signature_help(a: &Analysis, offset: usize) -> Option<Signature> {
    let cursor = cursor_at(a, offset);
    let Context::Expression { call: Some(call) } = cursor.context else {
        return None;
    };
    let (name, params, returns, doc): (String, Vec<(String, String)>, String, String) =
        match &call.callee {
            Callee::Method(prop) => {
                let sig = method_sig(*prop)?;
                (
                    sig.name.to_string(),
                    sig.params
                        .iter()
                        .map(|p| (format!("{} {}", p.ty, p.name), p.text.to_string()))
                        .collect(),
                    sig.returns.to_string(),
                    sig.text.to_string(),
                )
            }
            Callee::Machine => (
                MACHINE.name.to_string(),
                MACHINE
                    .params
                    .iter()
                    .map(|p| (format!("{} {}", p.ty, p.name), p.text.to_string()))
                    .collect(),
                MACHINE.returns.to_string(),
                MACHINE.text.to_string(),
            ),
            Callee::Print => return None,
            Callee::Function(name) => {
                let stmt = a.function_named(name)?;
                let StmtKind::FuncDef { params, .. } = &stmt.kind else {
                    return None;
                };
                (
                    name.clone(),
                    params
                        .iter()
                        .map(|p| (format!("{} {}", p.ty.name(), p.name.name), String::new()))
                        .collect(),
                    String::new(),
                    format!(
                        "function defined on line {}",
                        a.index.line_of(stmt.span.start()) + 1
                    ),
                )
            }
        };
    let mut label = format!("{name}(");
    let mut ranges = Vec::new();
    for (i, (p, doc)) in params.iter().enumerate() {
        if i > 0 {
            label.push_str(", ");
        }
        ranges.push((label.len()..label.len() + p.len(), doc.clone()));
        label.push_str(p);
    }
    label.push(')');
    if !returns.is_empty() {
        label.push_str(" -> ");
        label.push_str(&returns);
    }
    Some(Signature {
        label,
        documentation: doc,
        active_param: call.active_arg.min(params.len().saturating_sub(1)),
        params: ranges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(src: &str) -> Option<Signature> {
        let offset = src.find("$0").expect("marker");
        let text = src.replace("$0", "");
        signature_help(&Analysis::new(&text), offset)
    }

    #[test]
    fn methods_machine_and_user_functions() {
        let s = sig("m = Machine(GPU);\nn = m.split(0, $0").unwrap();
        assert_eq!(s.label, "split(int dim, int factor) -> MSpace");
        assert_eq!(s.active_param, 1);
        assert_eq!(&s.label[s.params[1].0.clone()], "int factor");
        let s = sig("n = m.slice($0").unwrap();
        assert_eq!(s.params.len(), 3);
        assert_eq!(
            sig("m = Machine($0").unwrap().label,
            "Machine(PROC kind) -> MSpace"
        );
        let s = sig("def g(int a, int b) { return a; }\nx = g(1, (2, 3)$0").unwrap();
        assert_eq!((s.label.as_str(), s.active_param), ("g(int a, int b)", 1));
        assert!(sig("x = (1, $0").is_none());
        assert!(sig("print(\"{}\", $0").is_none());
    }
}
