//! Shared helpers of the snapshot tests: diagnostics as text, fixes applied.
#![allow(dead_code)]

use mapwright_grammar::render::describe_compact;
use mapwright_grammar::{analyze, Applicability};

/// Diagnostics in a compact, stable text form.
pub fn describe(source: &str) -> String {
    describe_compact(source, &analyze(source).diagnostics())
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
