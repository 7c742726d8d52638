//! No redundant statements in an applied mapper: after the in-place writer
//! (or whatever text a proposer wrote), every statement that decides
//! nothing the remaining ones would not decide the same way is dropped.
//!
//! "Decides the same" is the mapping resolution's answer, not a pattern:
//! a statement goes when the text without it resolves to exactly the same
//! decisions ([`signature`]). Only two kinds of statement are candidates:
//! - statements the optimizer added (neither their text nor what they apply
//!   to, their [`head`], is one of the start's statements), e.g.
//!   `Layout task_4 * * SOA C_order;` beside a `Layout * * * SOA C_order;`
//!   that now says the same;
//! - statements of the user's, as written or edited, that decided something
//!   in the mapper as written and decide nothing now.
//!
//! The user's other statements, every comment that is not on a dropped
//! line, and every pinned statement (`# mapwright: keep`) stay. Functions
//! and machine-model variables the optimizer added that nothing uses any
//! more go too.

use std::collections::HashSet;

use mapwright_grammar::ast::{MemSel, Stmt, StmtKind};
use mapwright_grammar::pin::pinned_statements;
use mapwright_grammar::{analyze, Span};
use mapwright_runtime::decisions::Decisions;

use super::inplace::{count_word, signature, ResolveFn};
use crate::autoguide::edits::whole_line;

/// Whether a statement kind makes mapping decisions.
fn decides(kind: &StmtKind) -> bool {
    matches!(
        kind,
        StmtKind::Task { .. }
            | StmtKind::Region { .. }
            | StmtKind::Layout { .. }
            | StmtKind::IndexTaskMap { .. }
            | StmtKind::SingleTaskMap { .. }
            | StmtKind::CollectMemory { .. }
            | StmtKind::InstanceLimit { .. }
            | StmtKind::ControlReplicate { .. }
    )
}

/// The starts of the statements some decision of `d` names as its rule.
fn cited(d: &Decisions) -> HashSet<usize> {
    let mut out = HashSet::new();
    for t in &d.tasks {
        out.extend(t.proc_rule.map(|s| s.start()));
        out.extend(t.map_rule.map(|s| s.start()));
        for r in &t.regions {
            out.extend(r.memory_rule.map(|s| s.start()));
            out.extend(r.layout_rule.map(|s| s.start()));
            for l in &r.launches {
                out.extend(l.memory_rule.map(|s| s.start()));
                out.extend(l.layout_rule.map(|s| s.start()));
            }
        }
    }
    out
}

/// What a statement applies to, without the values it gives (`Layout * *
/// *` of `Layout * * * SOA C_order;`), whitespace normalized: a statement of
/// the applied mapper with the head of one of the user's is that statement,
/// edited by the optimizer, and stays the user's.
fn head(stmt: &Stmt, text: &str) -> String {
    let value_start = match &stmt.kind {
        StmtKind::Task { procs, .. } => procs.first().map(|(_, s)| s.start()),
        StmtKind::Region { mems, .. } => mems.first().map(|(_, s)| s.start()),
        StmtKind::Layout { mem, .. } => Some(match mem {
            MemSel::Star(s) | MemSel::Kind(_, s) => s.end(),
        }),
        StmtKind::IndexTaskMap { func, .. } | StmtKind::SingleTaskMap { func, .. } => {
            Some(func.span.start())
        }
        StmtKind::InstanceLimit { limit_span, .. } => Some(limit_span.start()),
        _ => None,
    };
    let end = value_start.unwrap_or(stmt.span.end());
    text.get(stmt.span.start()..end)
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` with the lines of `spans` removed.
fn without(text: &str, spans: &[Span]) -> String {
    let mut lines: Vec<Span> = spans.iter().map(|s| whole_line(text, *s)).collect();
    lines.sort();
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for l in lines {
        if l.start() < cursor {
            continue;
        }
        out.push_str(&text[cursor..l.start()]);
        cursor = l.end();
    }
    out.push_str(&text[cursor..]);
    out
}

/// `text` (the mapper to apply) without its redundant statements. `start`
/// is the mapper as written and `start_decisions` what it decides (empty
/// when it does not compile). The result decides exactly what `text` does;
/// when `text` does not compile it is returned unchanged.
pub fn drop_redundant(
    start: &str,
    start_decisions: &Decisions,
    text: &str,
    resolve: ResolveFn<'_>,
) -> String {
    let Some(decisions) = resolve(text) else {
        return text.to_string();
    };
    let target = signature(&decisions);
    let start_analysis = analyze(start);
    let start_program = &start_analysis.parsed.program;
    let start_texts: HashSet<&str> = start_program
        .stmts
        .iter()
        .map(|s| s.span.text(start))
        .collect();
    let start_heads: HashSet<String> = start_program
        .stmts
        .iter()
        .filter(|s| decides(&s.kind))
        .map(|s| head(s, start))
        .collect();
    // The heads of the user's statements that decided something.
    let cited_at_start: HashSet<String> = {
        let starts = cited(start_decisions);
        start_program
            .stmts
            .iter()
            .filter(|s| starts.contains(&s.span.start()))
            .map(|s| head(s, start))
            .collect()
    };
    let analysis = analyze(text);
    let program = &analysis.parsed.program;
    let pinned = pinned_statements(program, &analysis.parsed.comments, text);
    let cited_now = cited(&decisions);
    let candidates: Vec<Span> = program
        .stmts
        .iter()
        .filter(|s| decides(&s.kind) && !pinned.contains(&s.span))
        .filter(|s| {
            let own = head(s, text);
            let users = start_texts.contains(s.span.text(text)) || start_heads.contains(&own);
            let went_dead = cited_at_start.contains(&own) && !cited_now.contains(&s.span.start());
            !users || went_dead
        })
        .map(|s| s.span)
        .collect();
    // Later statements first: of two that say the same, the earlier (the
    // wildcard the user wrote, usually) is the one kept.
    let mut removed: Vec<Span> = Vec::new();
    for span in candidates.into_iter().rev() {
        let mut trial = removed.clone();
        trial.push(span);
        let candidate = without(text, &trial);
        if resolve(&candidate).is_some_and(|d| signature(&d) == target) {
            removed = trial;
        }
    }
    let mut out = without(text, &removed);
    // Definitions the optimizer added that nothing names any more.
    for _ in 0..8 {
        let analysis = analyze(&out);
        let unused: Vec<Span> = analysis
            .parsed
            .program
            .stmts
            .iter()
            .filter(|s| !start_texts.contains(s.span.text(&out)))
            .filter(|s| match &s.kind {
                StmtKind::FuncDef { name, .. } | StmtKind::Assign { name, .. } => {
                    count_word(&out, &name.name) == 1
                }
                _ => false,
            })
            .map(|s| s.span)
            .collect();
        if unused.is_empty() {
            break;
        }
        let next = without(&out, &unused);
        if resolve(&next).is_none_or(|d| signature(&d) != target) {
            break;
        }
        out = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_runtime::app::App;
    use mapwright_runtime::machine::Machine;

    fn resolver(app: &str) -> impl Fn(&str) -> Option<Decisions> {
        let app = App::builtin(app).unwrap();
        let machine = Machine::preset("p100x4").unwrap();
        move |text: &str| {
            let analysis = analyze(text);
            if analysis.diagnostics().iter().any(|d| d.is_error()) {
                return None;
            }
            Some(mapwright_runtime::resolve_mapping::resolve_mapping(
                &analysis, text, &app, &machine,
            ))
        }
    }

    #[test]
    fn an_added_statement_that_a_wildcard_already_decides_goes() {
        let resolve = resolver("cannon");
        let start = "# A first mapper.\nTask * GPU,CPU;\n";
        let text = "# A first mapper.\nTask * GPU,CPU;\nLayout * * * SOA C_order;\nLayout task_4 * * SOA C_order;\n";
        let out = drop_redundant(start, &resolve(start).unwrap(), text, &resolve);
        assert_eq!(
            out,
            "# A first mapper.\nTask * GPU,CPU;\nLayout * * * SOA C_order;\n"
        );
    }

    #[test]
    fn the_users_statements_comments_and_pins_stay() {
        let resolve = resolver("cannon");
        // The user's own repetition is theirs to keep; so is a pinned
        // statement the optimizer's wildcard would cover.
        let start =
            "Task * GPU,CPU; # mine\nLayout task_4 * * SOA C_order;\nLayout * * * SOA C_order;\n";
        let text = format!("{start}Layout task_1 * * SOA C_order; # mapwright: keep\n");
        let out = drop_redundant(start, &resolve(start).unwrap(), &text, &resolve);
        assert_eq!(out, text);
    }

    #[test]
    fn an_unused_added_function_goes_with_its_statement() {
        let resolve = resolver("cannon");
        let start = "Task * GPU,CPU;\nLayout * * * SOA C_order;\n";
        // The map statement the optimizer added restates the default.
        let text = "Task * GPU,CPU;\nLayout * * * SOA C_order;\nmw_gpu = Machine(GPU);\ndef mw_f(Task task) {\n    return mw_gpu[0, 0];\n}\n";
        let out = drop_redundant(start, &resolve(start).unwrap(), text, &resolve);
        assert_eq!(out, start);
    }
}
