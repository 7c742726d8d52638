//! Inlay hints. Built in: parameter names before the arguments of
//! machine-model methods (`m.split(dim: 0, factor: 2)`), whose positional
//! integers are easy to mix up. Machine-model sizes and points per processor
//! come from [`super::app_aware::AppInlayHints`], which knows the machine.

use mapwright_grammar::ast::{Expr, ExprKind, Stmt, StmtKind};

use super::docs::method_sig;
use super::provider_api::{InlayHint, InlayHintProvider, InlayQuery};
// The hint types live with the other provider results; the protocol glue
// names them from here.
pub use super::provider_api::InlayKind;

/// `dim:` / `factor:` before machine-model method arguments.
pub struct ParameterNameHints;

impl InlayHintProvider for ParameterNameHints {
    fn inlay_hints(&self, q: &InlayQuery) -> Vec<InlayHint> {
        let (a, range) = (q.analysis, q.range);
        let mut out = Vec::new();
        let mut visit = |e: &Expr| {
            let ExprKind::Call { callee, args } = &e.kind else {
                return;
            };
            let ExprKind::Prop { prop, .. } = &callee.kind else {
                return;
            };
            let Some(sig) = method_sig(*prop) else {
                return;
            };
            for (arg, param) in args.iter().zip(sig.params) {
                let inside = range.start() <= arg.span.start() && arg.span.start() <= range.end();
                let obvious = arg.span.text(&a.text) == param.name;
                if inside && !obvious {
                    out.push(InlayHint {
                        offset: arg.span.start(),
                        label: format!("{}:", param.name),
                        kind: InlayKind::Parameter,
                        tooltip: Some(param.text.to_string()),
                    });
                }
            }
        };
        for_each_expr(&a.program().stmts, &mut visit);
        out
    }
}

/// Calls `f` on every expression of `stmts`, function bodies included.
pub fn for_each_expr<'a, S: std::borrow::Borrow<Stmt>>(
    stmts: &'a [S],
    f: &mut dyn FnMut(&'a Expr),
) {
    for s in stmts {
        let s: &Stmt = s.borrow();
        for e in s.exprs() {
            e.walk(f);
        }
        if let StmtKind::FuncDef { body, .. } = &s.kind {
            for_each_expr(body, f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::analysis::Analysis;
    use mapwright_grammar::Span;

    #[test]
    fn method_arguments_get_parameter_names() {
        let src = "m = Machine(GPU);\ndef f(Task t) { n = m.split(0, 2); return n.slice(dim, 0, 1)[0, 0, 0]; }\n";
        let a = Analysis::new(src);
        let hints = ParameterNameHints.inlay_hints(&InlayQuery::plain(&a, Span::new(0, src.len())));
        let labels: Vec<&str> = hints.iter().map(|h| h.label.as_str()).collect();
        assert_eq!(labels, ["dim:", "factor:", "lo:", "hi:"]);
        assert_eq!(hints[0].offset, src.find("0, 2").unwrap());
        let none = ParameterNameHints.inlay_hints(&InlayQuery::plain(&a, Span::new(0, 10)));
        assert!(none.is_empty());
    }
}
