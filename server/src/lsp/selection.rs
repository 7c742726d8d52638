//! Pure answers for `textDocument/selectionRange` (expand selection) and
//! `textDocument/declaration`.
//!
//! Selection: from the token under the cursor outwards through every
//! enclosing expression, the statement (inside a function body first), the
//! body, the top-level statement and the whole file.
//!
//! Declaration: in this DSL a name may be defined several times (a function
//! or global defined again, a local assigned again), and the reference keeps
//! the first definition (`W0216`, `W0217`). Definition answers every place
//! that defines the name; declaration answers only the first, the one that
//! introduces it and that wins.

use mapwright_grammar::ast::{Expr, Stmt, StmtKind};
use mapwright_grammar::Span;

use super::analysis::Analysis;
use super::navigation;

/// The span of the declaration of the name at `offset`.
pub fn declaration(a: &Analysis, offset: usize) -> Option<Span> {
    navigation::definition(a, offset).into_iter().next()
}

/// Selection spans at `offset`, innermost first, each strictly containing
/// the one before (duplicates removed), ending with the whole file.
pub fn selection_spans(a: &Analysis, offset: usize) -> Vec<Span> {
    let inside = |s: &Span| s.start() <= offset && offset <= s.end();
    let mut outer: Vec<Span> = vec![Span::new(0, a.text.len())];
    if let Some(stmt) = a.program().stmts.iter().find(|s| inside(&s.span)) {
        push_stmt(stmt, &inside, &mut outer);
    }
    if let Some(t) = a.token_at(offset) {
        outer.push(t.span);
    }
    // `outer` runs outside-in; keep each span only if it nests in the last kept.
    let mut kept: Vec<Span> = Vec::new();
    for s in outer {
        match kept.last() {
            Some(k) if *k == s || !(k.start() <= s.start() && s.end() <= k.end()) => {}
            _ => kept.push(s),
        }
    }
    kept.reverse();
    kept
}

/// Pushes `stmt` and what inside it contains the cursor, outside-in.
fn push_stmt(stmt: &Stmt, inside: &dyn Fn(&Span) -> bool, out: &mut Vec<Span>) {
    out.push(stmt.span);
    if let StmtKind::FuncDef {
        body, body_span, ..
    } = &stmt.kind
    {
        if inside(body_span) {
            out.push(*body_span);
            if let Some(inner) = body.iter().find(|s| inside(&s.span)) {
                push_stmt(inner, inside, out);
            }
        }
        return;
    }
    if let Some(e) = stmt.exprs().into_iter().find(|e| inside(&e.span)) {
        push_expr(e, inside, out);
    }
}

/// Pushes the chain of sub-expressions of `e` that contain the cursor.
fn push_expr<'a>(e: &'a Expr, inside: &dyn Fn(&Span) -> bool, out: &mut Vec<Span>) {
    let mut current = Some(e);
    while let Some(e) = current {
        out.push(e.span);
        let mut next = None;
        e.for_each_child(&mut |c: &'a Expr| {
            if next.is_none() && inside(&c.span) {
                next = Some(c);
            }
        });
        current = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "m = Machine(GPU);\ndef f(Task t) {\n    return m[0, t.ipoint[0] + 1];\n}\nIndexTaskMap foo f;\n";

    #[test]
    fn selection_grows_from_the_name_to_the_file() {
        let a = Analysis::new(SRC);
        let at = SRC.find("ipoint").unwrap() + 2;
        let texts: Vec<&str> = selection_spans(&a, at)
            .iter()
            .map(|s| s.text(SRC))
            .collect();
        assert_eq!(texts[0], "ipoint");
        assert!(texts.contains(&"t.ipoint[0] + 1"));
        assert!(texts.contains(&"return m[0, t.ipoint[0] + 1];"));
        assert_eq!(*texts.last().unwrap(), SRC);
        for w in selection_spans(&a, at).windows(2) {
            assert!(w[1].start() <= w[0].start() && w[0].end() <= w[1].end() && w[0] != w[1]);
        }
    }

    #[test]
    fn declaration_is_the_first_definition() {
        let src = "x = 1;\nx = 2;\ny = x;\n";
        let a = Analysis::new(src);
        let use_at = src.rfind('x').unwrap();
        assert_eq!(navigation::definition(&a, use_at).len(), 2);
        assert_eq!(declaration(&a, use_at), Some(Span::new(0, 1)));
    }
}
