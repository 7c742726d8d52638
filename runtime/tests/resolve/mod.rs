//! Shared helpers of the mapping-resolution tests: resolve a mapper against
//! an application and machine, render diagnostics compactly, apply fixes
//! and re-check (the style of `grammar/tests/common`).
#![allow(dead_code)]

use mapwright_grammar::render::describe_compact;
use mapwright_grammar::{analyze, Applicability, Diagnostic};
use mapwright_runtime::app::App;
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::{render_decisions, resolve_mapping};

/// Resolves `source` against built-in app `app` on preset `machine`.
pub fn resolve(source: &str, app: &str, machine: &str) -> Decisions {
    let app = App::builtin(app).expect("built-in app");
    let machine = Machine::preset(machine).expect("machine preset");
    resolve_mapping(&analyze(source), source, &app, &machine)
}

/// Only the resolution diagnostics (codes E03xx/W03xx/I03xx).
pub fn resolution_diagnostics(d: &Decisions) -> Vec<&Diagnostic> {
    d.diagnostics
        .iter()
        .filter(|x| x.code[1..].starts_with("03"))
        .collect()
}

/// Diagnostics in a compact, stable text form.
pub fn describe_diagnostics(source: &str, diagnostics: &[&Diagnostic]) -> String {
    describe_compact(source, diagnostics.iter().copied())
}

/// Resolution diagnostics of `source`, plus the fatal failure, as text.
pub fn describe(source: &str, app: &str, machine: &str) -> String {
    let d = resolve(source, app, machine);
    let mut out = describe_diagnostics(source, &resolution_diagnostics(&d));
    match &d.fatal {
        Some(f) => out.push_str(&format!("fatal [{}]: {:?}\n", f.kind, f.raw_output)),
        None => out.push_str("fatal: none\n"),
    }
    out
}

/// Applies the first fix of the first fixable resolution diagnostic,
/// preferring safe fixes, until none is left (at most 10 rounds).
pub fn apply_all_fixes(source: &str, app: &str, machine: &str) -> String {
    let mut text = source.to_string();
    for _ in 0..10 {
        let d = resolve(&text, app, machine);
        let diags = resolution_diagnostics(&d);
        let fix = diags
            .iter()
            .flat_map(|d| d.fixes.iter())
            .find(|f| f.applicability == Applicability::Safe)
            .or_else(|| diags.iter().flat_map(|d| d.fixes.iter()).next());
        let Some(fix) = fix else { break };
        match fix.apply(&text) {
            Some(next) => text = next,
            None => panic!("fix `{}` does not apply", fix.title),
        }
    }
    text
}

/// Source, diagnostics, the source after applying every fix, re-check.
pub fn report(source: &str, app: &str, machine: &str) -> String {
    let fixed = apply_all_fixes(source, app, machine);
    format!(
        "--- source ({app} on {machine})\n{source}\n--- diagnostics\n{}--- after applying fixes\n{fixed}\n--- re-check\n{}",
        describe(source, app, machine),
        describe(&fixed, app, machine)
    )
}

/// `explain` as the CLI prints it, minus the snippets: decisions, then the
/// resolution diagnostics.
pub fn explain(source: &str, app: &str, machine: &str) -> String {
    explain_on(
        source,
        app,
        &Machine::preset(machine).expect("machine preset"),
    )
}

/// [`explain`] on a given machine.
pub fn explain_on(source: &str, app: &str, m: &Machine) -> String {
    let a = App::builtin(app).expect("built-in app");
    let d = resolve_mapping(&analyze(source), source, &a, m);
    let mut out = render_decisions(&d, source, &a, m);
    out.push_str("\ndiagnostics:\n");
    out.push_str(&describe_diagnostics(source, &resolution_diagnostics(&d)));
    out
}

/// Declares a snapshot test of `report(source, app, machine)`.
#[macro_export]
macro_rules! case {
    ($name:ident, $app:expr, $machine:expr, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(resolve::report($src, $app, $machine));
        }
    };
}

/// Resolves `source` against built-in app `app` on a given machine.
pub fn resolve_on(source: &str, app: &str, machine: &Machine) -> Decisions {
    let app = App::builtin(app).expect("built-in app");
    resolve_mapping(&analyze(source), source, &app, machine)
}

/// Like [`describe`], on a given machine.
pub fn describe_on(source: &str, app: &str, machine: &Machine) -> String {
    let d = resolve_on(source, app, machine);
    let mut out = describe_diagnostics(source, &resolution_diagnostics(&d));
    match &d.fatal {
        Some(f) => out.push_str(&format!("fatal [{}]: {:?}\n", f.kind, f.raw_output)),
        None => out.push_str("fatal: none\n"),
    }
    out
}

/// The paper's machine as the DISTAL scripts run it on Lassen-style nodes:
/// one Legion rank (address space) per GPU, so `Machine(GPU)` is (4, 1).
pub fn p100x4_rank_per_gpu() -> Machine {
    let mut m = Machine::preset("p100x4").expect("preset");
    m.name = "p100x4-rank-per-gpu".into();
    m.nodes = 4;
    for p in &mut m.node.processors {
        p.count = 1;
    }
    for mem in &mut m.node.memories {
        mem.count = 1;
    }
    m
}
