//! Each applied change explained: which statement of the applied mapper
//! changes which decision, and the gain measured when that change was first
//! made.
//!
//! The gain is attributed along the run's trajectory, not re-measured: each
//! time a candidate beat the best so far, the changed decisions it already
//! had (with their final values) that no earlier improvement had are
//! credited with its gain over the best before it. A change first made by a
//! candidate that turned a failing mapper into a running one "made it run".

use std::collections::BTreeMap;

use mapwright_grammar::ast::{Program, Stmt, StmtKind, TaskSel};
use mapwright_grammar::{parse, Span};
use mapwright_runtime::decisions::Decisions;
use serde::{Deserialize, Serialize};

use super::history::Record;
use super::space::{parameters, placement_signature};
use super::verdict::percent;

/// One decision the applied mapper changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionChange {
    /// The parameter, e.g. `layout:task_4:a`.
    pub parameter: String,
    pub before: String,
    pub after: String,
    /// The candidate that first made it with a gain (`None`: never seen in
    /// an improvement, e.g. a side effect of writing the text).
    pub iteration: Option<usize>,
    /// That candidate's score over the best before it (`None` when the best
    /// before it did not run).
    pub gain: Option<f64>,
}

/// The decisions one statement of the applied mapper changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The statement (empty: the decisions are now Legion's default).
    pub statement: String,
    /// Its line in the applied mapper (1-based; for a removed statement,
    /// in the mapper as written).
    pub line: Option<usize>,
    /// The statement was in the mapper as written and is not any more.
    #[serde(default)]
    pub removed: bool,
    pub decisions: Vec<DecisionChange>,
}

/// Everything a mapper decides that a statement can change, parameter by
/// parameter: the optimizer's [`parameters`] and also where every launch
/// runs, which tasks collect their instances and instance limits.
pub fn decision_params(d: &Decisions) -> BTreeMap<String, String> {
    let mut out = parameters(d);
    for t in &d.tasks {
        out.insert(format!("place:{}", t.task), placement_signature(t));
        out.insert(format!("collect:{}", t.task), t.collect_memory.to_string());
        out.insert(
            format!("limit:{}", t.task),
            t.instance_limit.map_or("none".into(), |l| l.to_string()),
        );
    }
    out
}

/// The parameters of a record: from its decisions while the run holds
/// them, else (a resumed run) the ones saved with it.
fn record_params(r: &Record) -> BTreeMap<String, String> {
    r.evaluation
        .decisions
        .as_ref()
        .map(decision_params)
        .unwrap_or_else(|| r.parameters.clone())
}

/// The rule span of each parameter of [`decision_params`] that a rule
/// decides (collection and limits are matched by statement, below).
fn rules(d: &Decisions) -> BTreeMap<String, Option<Span>> {
    let mut out = BTreeMap::new();
    for t in &d.tasks {
        out.insert(format!("proc:{}", t.task), t.proc_rule);
        out.insert(format!("place:{}", t.task), t.map_rule);
        for r in &t.regions {
            out.entry(format!("mem:{}:{}", t.task, r.region))
                .or_insert(r.memory_rule);
            out.entry(format!("layout:{}:{}", t.task, r.region))
                .or_insert(r.layout_rule);
        }
    }
    out
}

/// The `CollectMemory` / `InstanceLimit` statement of `program` that
/// decides `parameter` (`collect:T`, `limit:T`): the first naming T, else
/// the first for `*`.
fn owner_by_name(program: &Program, text: &str, parameter: &str) -> Option<Span> {
    let (kind, task) = parameter.split_once(':')?;
    let names = |s: &Stmt| -> Option<Vec<String>> {
        match (&s.kind, kind) {
            (StmtKind::CollectMemory { task, .. }, "collect") => Some(match task {
                TaskSel::Names(n) => n.iter().map(|i| i.name.clone()).collect(),
                _ => vec!["*".into()],
            }),
            (StmtKind::InstanceLimit { task, .. }, "limit") => Some(vec![task.name.clone()]),
            _ => None,
        }
    };
    let find = |want: &str| {
        program
            .stmts
            .iter()
            .find(|s| names(s).is_some_and(|n| n.iter().any(|x| x == want)))
            .map(|s| s.span)
    };
    let _ = text;
    find(task).or_else(|| find("*"))
}

/// The changes from the mapper as written (`start`, deciding
/// `start_decisions`) to `applied` (the text to apply, deciding `after`),
/// attributed along `records` (`records[0]` is the start).
pub fn explain_changes(
    records: &[Record],
    start: &str,
    start_decisions: &Decisions,
    applied: &str,
    after: &Decisions,
) -> Vec<Change> {
    let before = decision_params(start_decisions);
    let now = decision_params(after);
    let changed: BTreeMap<String, DecisionChange> = now
        .iter()
        .filter_map(|(k, v)| {
            let b = before.get(k)?;
            (b != v).then(|| {
                (
                    k.clone(),
                    DecisionChange {
                        parameter: k.clone(),
                        before: b.clone(),
                        after: v.clone(),
                        iteration: None,
                        gain: None,
                    },
                )
            })
        })
        .collect();
    let changed = attribute(records, changed);
    let start_analysis = parse(start);
    let start_texts: Vec<&str> = start_analysis
        .program
        .stmts
        .iter()
        .map(|s| s.span.text(start))
        .collect();
    let parsed = parse(applied);
    let program = &parsed.program;
    let applied_texts: Vec<&str> = program.stmts.iter().map(|s| s.span.text(applied)).collect();
    let line_of = |at: usize| applied[..at].matches('\n').count() + 1;
    // Every mapping statement the optimizer added or rewrote, then the
    // statements that decide a changed decision.
    let mut by_statement: BTreeMap<Option<usize>, Change> = BTreeMap::new();
    for s in &program.stmts {
        if is_mapping(&s.kind) && !start_texts.contains(&s.span.text(applied)) {
            by_statement.insert(Some(s.span.start()), change_at(applied, s.span, line_of));
        }
    }
    let rules = rules(after);
    for c in changed {
        let span = rules
            .get(&c.parameter)
            .copied()
            .flatten()
            .or_else(|| owner_by_name(program, applied, &c.parameter));
        by_statement
            .entry(span.map(|s| s.start()))
            .or_insert_with(|| match span {
                Some(s) => change_at(applied, s, line_of),
                None => Change {
                    statement: String::new(),
                    line: None,
                    removed: false,
                    decisions: Vec::new(),
                },
            })
            .decisions
            .push(c);
    }
    let mut out: Vec<Change> = by_statement.into_values().collect();
    for s in &start_analysis.program.stmts {
        let own = s.span.text(start);
        if is_mapping(&s.kind) && !applied_texts.contains(&own) {
            out.push(Change {
                statement: one_line(own),
                line: Some(start[..s.span.start()].matches('\n').count() + 1),
                removed: true,
                decisions: Vec::new(),
            });
        }
    }
    out.sort_by_key(|c| (c.removed, c.line.unwrap_or(usize::MAX)));
    out
}

/// Whether a statement kind makes mapping decisions.
fn is_mapping(kind: &StmtKind) -> bool {
    !matches!(
        kind,
        StmtKind::Assign { .. }
            | StmtKind::FuncDef { .. }
            | StmtKind::Print { .. }
            | StmtKind::Return { .. }
            | StmtKind::Error
    )
}

fn change_at(applied: &str, span: Span, line_of: impl Fn(usize) -> usize) -> Change {
    Change {
        statement: one_line(span.text(applied)),
        line: Some(line_of(span.start())),
        removed: false,
        decisions: Vec::new(),
    }
}

/// Credits each change to the first new best along `records` that had it
/// (with its final value), with that candidate's gain over the best before.
fn attribute(
    records: &[Record],
    mut changed: BTreeMap<String, DecisionChange>,
) -> Vec<DecisionChange> {
    let mut best = records.first().map_or(0.0, |r| r.score);
    for r in records.iter().skip(1) {
        if r.score <= best {
            continue;
        }
        let params = record_params(r);
        for c in changed.values_mut() {
            if c.iteration.is_none() && params.get(&c.parameter) == Some(&c.after) {
                c.iteration = Some(r.iteration);
                c.gain = (best > 0.0).then(|| r.score / best);
            }
        }
        best = r.score;
    }
    changed.into_values().collect()
}

/// A statement on one line (a function definition shortened).
fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or("").trim_end();
    if text.contains('\n') {
        format!("{first} ...")
    } else {
        first.to_string()
    }
}

/// A parameter's value as the DSL says it.
fn value(v: &str) -> String {
    match v {
        "SOAC" => "SOA C_order".into(),
        "SOAF" => "SOA F_order".into(),
        "AOSC" => "AOS C_order".into(),
        "AOSF" => "AOS F_order".into(),
        other => other.to_ascii_uppercase(),
    }
}

/// What a parameter is, for a reader (`layout of a in`), and its task.
fn what(parameter: &str) -> (String, String) {
    let mut parts = parameter.splitn(3, ':');
    let kind = parts.next().unwrap_or("");
    let task = parts.next().unwrap_or("").to_string();
    let region = parts.next().unwrap_or("");
    let what = match kind {
        "proc" => "processor kind of".to_string(),
        "mem" => format!("memory of {region} in"),
        "layout" => format!("layout of {region} in"),
        "place" => "placement of".to_string(),
        "collect" => "collecting instances of".to_string(),
        "limit" => "instance limit of".to_string(),
        other => other.to_string(),
    };
    (what, task)
}

/// The credit of a decision, e.g. `iteration 3, +25.00 %`.
fn credit(c: &DecisionChange) -> String {
    match (c.iteration, c.gain) {
        (Some(i), Some(g)) => format!("iteration {i}, {}", percent(g)),
        (Some(i), None) => format!("iteration {i}, made it run"),
        _ => "no gain of its own".to_string(),
    }
}

/// The changes as lines for a report or a message: one per statement, its
/// decisions grouped by what changed and where the gain came from.
pub fn render_changes(changes: &[Change]) -> Vec<String> {
    let mut out = Vec::new();
    for c in changes {
        let head = match c.line {
            Some(l) if c.removed => format!("removed line {l} `{}` (as written)", c.statement),
            Some(l) if c.decisions.is_empty() => format!("added line {l} `{}`", c.statement),
            Some(l) => format!("line {l} `{}`", c.statement),
            None => "no statement (Legion's default)".to_string(),
        };
        if c.decisions.is_empty() {
            out.push(head);
            continue;
        }
        // (what, before, after, credit) -> tasks
        let mut groups: BTreeMap<(String, String, String, String), Vec<String>> = BTreeMap::new();
        for d in &c.decisions {
            let (what, task) = what(&d.parameter);
            let (b, a) = if d.parameter.starts_with("place:") || d.parameter.starts_with("collect:")
            {
                (String::new(), String::new())
            } else {
                (value(&d.before), value(&d.after))
            };
            groups
                .entry((what, b, a, credit(d)))
                .or_default()
                .push(task);
        }
        let parts: Vec<String> = groups
            .into_iter()
            .map(|((what, b, a, credit), mut tasks)| {
                tasks.dedup();
                let shown = if tasks.len() > 3 {
                    format!("{} and {} more", tasks[..3].join(", "), tasks.len() - 3)
                } else {
                    tasks.join(", ")
                };
                let values = if b.is_empty() {
                    String::new()
                } else {
                    format!(" {b} -> {a}")
                };
                format!("{what} {shown}{values} ({credit})")
            })
            .collect();
        out.push(format!("{head}: {}", parts.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(iteration: usize, score: f64, params: &[(&str, &str)]) -> Record {
        Record::scored(iteration, score, params)
    }

    #[test]
    fn a_change_is_credited_to_the_first_improvement_that_made_it() {
        let records = vec![
            record(0, 0.0, &[("layout:t:a", "AOSF"), ("proc:t", "Cpu")]),
            // Made it run, with the layout change.
            record(1, 1.0, &[("layout:t:a", "SOAC"), ("proc:t", "Cpu")]),
            // Tried the GPU and failed: no credit.
            record(2, 0.0, &[("layout:t:a", "SOAC"), ("proc:t", "Gpu")]),
            // Then the GPU again, 1.5x the best before.
            record(3, 1.5, &[("layout:t:a", "SOAC"), ("proc:t", "Gpu")]),
        ];
        let mut changed: BTreeMap<String, DecisionChange> = BTreeMap::new();
        for (k, b, a) in [("layout:t:a", "AOSF", "SOAC"), ("proc:t", "Cpu", "Gpu")] {
            changed.insert(
                k.into(),
                DecisionChange {
                    parameter: k.into(),
                    before: b.into(),
                    after: a.into(),
                    iteration: None,
                    gain: None,
                },
            );
        }
        let change = Change {
            statement: "Task * GPU;".into(),
            line: Some(1),
            removed: false,
            decisions: attribute(&records, changed),
        };
        let lines = render_changes(&[change]);
        assert_eq!(
            lines,
            vec!["line 1 `Task * GPU;`: layout of a in t AOS F_order -> SOA C_order (iteration 1, made it run); processor kind of t CPU -> GPU (iteration 3, +50.00 %)"]
        );
    }
}
