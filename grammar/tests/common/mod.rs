//! Shared helpers of the snapshot tests: diagnostics as text, fixes applied.
#![allow(dead_code)]

use mapwright_grammar::{analyze, Applicability, LineIndex};

/// Diagnostics in a compact, stable text form.
pub fn describe(source: &str) -> String {
    let diagnostics = analyze(source).diagnostics();
    let index = LineIndex::new(source);
    let mut out = String::new();
    for d in &diagnostics {
        let lc = index.line_col(
            d.span.start(),
            mapwright_grammar::line_index::Encoding::Utf8,
        );
        out.push_str(&format!(
            "{} {:?} {}:{} {}",
            d.code,
            d.severity,
            lc.line + 1,
            lc.col + 1,
            d.message
        ));
        if let Some(label) = &d.label {
            out.push_str(&format!(" [{label}]"));
        }
        out.push('\n');
        for r in &d.related {
            let rl = index.line_of(r.span.start()) + 1;
            out.push_str(&format!("  related {rl}: {}\n", r.message));
        }
        for n in &d.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        for f in &d.fixes {
            out.push_str(&format!("  fix ({:?}): {}\n", f.applicability, f.title));
        }
    }
    if out.is_empty() {
        out.push_str("(no diagnostics)\n");
    }
    out
}

/// Applies the first fix of the first fixable diagnostic, preferring safe
/// fixes, until none is left (at most 20 rounds).
pub fn apply_all_fixes(source: &str) -> String {
    let mut text = source.to_string();
    for _ in 0..20 {
        let diagnostics = analyze(&text).diagnostics();
        let fix = diagnostics
            .iter()
            .flat_map(|d| d.fixes.iter())
            .find(|f| f.applicability == Applicability::Safe)
            .or_else(|| diagnostics.iter().flat_map(|d| d.fixes.iter()).next());
        let Some(fix) = fix else { break };
        match fix.apply(&text) {
            Some(next) => text = next,
            None => panic!("fix `{}` does not apply", fix.title),
        }
    }
    text
}

pub fn report(source: &str) -> String {
    let fixed = apply_all_fixes(source);
    format!(
        "--- source\n{source}\n--- diagnostics\n{}--- after applying fixes\n{fixed}\n--- re-check\n{}",
        describe(source),
        describe(&fixed)
    )
}

/// Declares a snapshot test of `report(source)`.
#[macro_export]
macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(common::report($src));
        }
    };
}
