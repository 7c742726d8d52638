//! Parser unit tests: precedences, depth bound, recovery.

use super::*;

/// The expression of `x = EXPR;` as an S-expression, to pin down precedence.
fn sexp(src: &str) -> String {
    let parsed = parse(&format!("x = {src};"));
    assert!(!parsed.has_errors(), "{src}: {:?}", parsed.diagnostics);
    match &parsed.program.stmts[0].kind {
        StmtKind::Assign { value, .. } => show(value),
        other => panic!("{other:?}"),
    }
}

fn show(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(n) => n.to_string(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Proc(k) => k.name().into(),
        ExprKind::Mem(k) => k.name().into(),
        ExprKind::Star => "*".into(),
        ExprKind::Unpack(a) => format!("(unpack {})", show(a)),
        ExprKind::Neg(a) => format!("(neg {})", show(a)),
        ExprKind::Binary { op, lhs, rhs, .. } => {
            format!("({} {} {})", op.text(), show(lhs), show(rhs))
        }
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
            ..
        } => {
            format!("(? {} {} {})", show(cond), show(then), show(otherwise))
        }
        ExprKind::Paren(a) => show(a),
        ExprKind::Tuple(items) => format!(
            "(tuple {})",
            items.iter().map(show).collect::<Vec<_>>().join(" ")
        ),
        ExprKind::Call { callee, args } => {
            format!(
                "(call {} {})",
                show(callee),
                args.iter().map(show).collect::<Vec<_>>().join(" ")
            )
        }
        ExprKind::Index { base, indices } => {
            format!(
                "(index {} {})",
                show(base),
                indices.iter().map(show).collect::<Vec<_>>().join(" ")
            )
        }
        ExprKind::Slice { base, lo, hi, .. } => format!(
            "(slice {} {} {})",
            show(base),
            lo.as_ref().map(|e| show(e)).unwrap_or("_".into()),
            hi.as_ref().map(|e| show(e)).unwrap_or("_".into())
        ),
        ExprKind::Prop { base, prop, .. } => format!("(. {} {})", show(base), prop.name()),
        ExprKind::Comprehension { body, var, iter } => {
            format!("(for {} {} {})", show(body), var.name, show(iter))
        }
    }
}

#[test]
fn precedences_match_the_reference() {
    assert_eq!(sexp("a ? b : c ? d : e"), "(? (? a b c) d e)");
    assert_eq!(sexp("a ? b ? c : d : e"), "(? a (? b c d) e)");
    assert_eq!(sexp("a || b ? c : d || e"), "(? (|| a b) c (|| d e))");
    assert_eq!(sexp("*a + b"), "(+ (unpack a) b)");
    assert_eq!(sexp("*a[0]"), "(unpack (index a 0))");
    assert_eq!(sexp("a * *b"), "(* a (unpack b))");
    assert_eq!(sexp("* - 1"), "(- * 1)");
    assert_eq!(sexp("* * b"), "(* * b)");
    assert_eq!(sexp("*(a)"), "(unpack a)");
    assert_eq!(sexp("-a * b"), "(* (neg a) b)");
    assert_eq!(sexp("-x[0]"), "(neg (index x 0))");
    assert_eq!(sexp("- -2"), "(neg (neg 2))");
    assert_eq!(sexp("3 - -1"), "(- 3 (neg 1))");
    assert_eq!(sexp("a < b < c"), "(< (< a b) c)");
    assert_eq!(sexp("a && b || c"), "(|| (&& a b) c)");
    assert_eq!(sexp("a == b != c"), "(!= (== a b) c)");
    assert_eq!(sexp("1 + 2 * 3 % 4"), "(+ 1 (% (* 2 3) 4))");
    assert_eq!(sexp("m[a ? b : c : d]"), "(slice m (? a b c) d)");
    assert_eq!(sexp("m[a ? 0 : 1]"), "(index m (? a 0 1))");
    assert_eq!(sexp("m[:-1]"), "(slice m _ (neg 1))");
    assert_eq!(sexp("m[:]"), "(slice m _ _)");
    assert_eq!(sexp("m[*, 0]"), "(index m * 0)");
    assert_eq!(sexp("1.size"), "(. 1 size)");
    assert_eq!(
        sexp("Machine(GPU).merge(0, 1)"),
        "(call (. (call Machine GPU) merge) 0 1)"
    );
    assert_eq!(
        sexp("tuple(i * 2 for i in (0, 1))"),
        "(for (* i 2) i (tuple 0 1))"
    );
    assert_eq!(sexp("(1)"), "1");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for (open, close) in [
        ("(", ")"),
        ("t[", "]"),
        ("-", ""),
        ("*(", ")"),
        ("f(", ")"),
        ("tuple(", " for i in (1, 2))"),
    ] {
        let src = format!("x = {}1{};", open.repeat(5000), close.repeat(5000));
        let parsed = parse(&src);
        assert!(
            parsed.diagnostics.iter().any(|d| d.code == "E0125"),
            "{open}"
        );
        let _ = crate::analyze(&src);
        let _ = crate::format::format(&src);
    }
    // A long chain of functions calling each other is checked without
    // exhausting the stack.
    let mut chain = String::from("def f0(int x) { return x; }\n");
    for i in 1..3000 {
        chain.push_str(&format!("def f{i}(int x) {{ return f{}(x); }}\n", i - 1));
    }
    chain.push_str("y = f2999(1);\n");
    let _ = crate::analyze(&chain);
    let ok = format!("x = {}1{};", "(".repeat(20), ")".repeat(20));
    assert!(!parse(&ok).has_errors());
}

#[test]
fn a_brace_in_a_python_style_body_ends_it() {
    // Found by the fuzzer: this looped forever, pushing error statements.
    let parsed = parse("def fTask( task):\n    return 0}\n");
    assert!(parsed.diagnostics.iter().any(|d| d.code == "E0102"));
    assert!(parsed.program.stmts.len() < 5);
}

#[test]
fn rejects_what_the_reference_rejects() {
    for src in [
        "x = m[**];",
        "x = f();",
        "x = m[];",
        "x = 1, 2;",
        "x = !a;",
        "x = m[1:2, 3];",
        "x = (i for i in (1, 2));",
    ] {
        assert!(parse(src).has_errors(), "{src} should be rejected");
    }
}

/// Every use of a keyword as a name gets the same rename fix, found once
/// per keyword (the parser keeps it): all of that keyword's uses, and only
/// that keyword's, even when two keywords take turns.
#[test]
fn each_keyword_used_as_a_name_renames_all_its_uses() {
    let src = "size = 1;\nx = size + m.size;\nlen = 2;\nsize = len;\ny = size + len;\n";
    let parsed = parse(src);
    let fixes: Vec<(&str, Vec<usize>)> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.code == "E0104")
        .map(|d| {
            let fix = &d.fixes[0];
            let starts = fix.edits.iter().map(|e| e.span.start()).collect();
            (d.span.text(src), starts)
        })
        .collect();
    let uses = |word: &str| -> Vec<usize> {
        keyword_rename_edits(crate::token::lex(src).tokens, src, word)
            .into_iter()
            .map(|(span, _)| span.start())
            .collect()
    };
    assert!(fixes.iter().any(|(w, _)| *w == "len"), "{fixes:?}");
    assert!(fixes.len() >= 4, "{fixes:?}");
    for (word, starts) in &fixes {
        assert_eq!(*starts, uses(word), "{word}");
    }
    // `m.size` is a field, not a use.
    assert_eq!(uses("size").len(), 4);
}
