//! Structured proposals: the model answers in a JSON schema of the decision
//! space instead of writing DSL text.
//!
//! The schema ([`schema`]) enumerates exactly what the search space holds:
//! per task a processor kind it has a variant for, per region argument a
//! memory of this machine, per task a layout, per index launch a placement
//! function of the search's library. Endpoints that support OpenAI's
//! `response_format` (llama.cpp's server, vLLM, OpenAI) constrain decoding
//! to it, so even a small model answers with names that exist. The answer
//! becomes a [`Spec`] ([`parse`]), which the loop renders as minimal edits
//! of the user's own statements. The prompt ([`prompt`]) is JSON too: the
//! names and numbers the schema needs, what the user's mapper decides now,
//! and each earlier change with its outcome.

use std::collections::BTreeMap;

use mapwright_runtime::app::Launch;
use mapwright_runtime::backend::{Metrics, MetricsBasis};
use mapwright_runtime::decisions::Order;
use mapwright_runtime::machine::{Machine, MemKind, ProcKind};
use serde_json::{json, Value};

use super::ProposalContext;
use crate::optimize::space::{dsl_mem, dsl_proc, machine_memories, IndexFn, LayoutChoice, Spec};

/// The four layouts, as the schema names them.
const LAYOUTS: [(&str, LayoutChoice); 4] = [
    (
        "SOA C_order",
        LayoutChoice {
            soa: true,
            c_order: true,
        },
    ),
    (
        "SOA F_order",
        LayoutChoice {
            soa: true,
            c_order: false,
        },
    ),
    (
        "AOS C_order",
        LayoutChoice {
            soa: false,
            c_order: true,
        },
    ),
    (
        "AOS F_order",
        LayoutChoice {
            soa: false,
            c_order: false,
        },
    ),
];

/// The most entries of each list in one answer.
const MAX_CHANGES: usize = 4;

/// The system message of structured mode: short, because the schema says
/// the rest.
pub const SYSTEM: &str = "You tune a Legion mapper for speed. It decides which processor kind runs each task, which memory holds each region argument, the layout of each task's instances, and how each index launch's points are placed on processors. Answer with one JSON object that lists only the decisions you change from the current ones; an empty list keeps them. Learn from the earlier changes and their outcomes: do not repeat a change that failed.";

fn names(v: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = v.into_iter().collect();
    out.sort();
    out.dedup();
    out
}

/// Every processor kind some task may run on.
fn kinds(ctx: &ProposalContext<'_>) -> Vec<String> {
    names(
        ctx.space
            .procs
            .iter()
            .flat_map(|(_, ks)| ks.iter().map(|k| dsl_proc(*k).to_string())),
    )
}

/// The JSON schema of one answer, for `response_format`.
pub fn schema(ctx: &ProposalContext<'_>) -> Value {
    let tasks = names(ctx.space.procs.iter().map(|(t, _)| t.clone()));
    let regions = names(ctx.space.regions.iter().map(|(_, r)| r.clone()));
    let region_tasks = names(ctx.space.regions.iter().map(|(t, _)| t.clone()));
    let memories: Vec<&str> = machine_memories(ctx.machine)
        .into_iter()
        .map(dsl_mem)
        .collect();
    let layout_tasks = names(ctx.space.layout_tasks.iter().cloned());
    let index_tasks = names(ctx.space.index_tasks.iter().cloned());
    let functions: Vec<&str> = IndexFn::ALL.iter().map(|f| f.name()).collect();
    let layouts: Vec<&str> = LAYOUTS.iter().map(|(n, _)| *n).collect();
    // A few changes per answer: a small model otherwise lists every task
    // and runs out of tokens.
    let list = |item: Value, max: usize| json!({"type": "array", "items": item, "maxItems": max.min(MAX_CHANGES)});
    let object = |props: Value, required: &[&str]| json!({"type": "object", "properties": props, "required": required, "additionalProperties": false});
    let mut properties = serde_json::Map::new();
    properties.insert(
        "tasks".into(),
        list(
            object(
                json!({"task": {"enum": tasks}, "processor": {"enum": kinds(ctx)}}),
                &["task", "processor"],
            ),
            tasks.len(),
        ),
    );
    properties.insert(
        "regions".into(),
        list(
            object(
                json!({"task": {"enum": region_tasks}, "region": {"enum": regions}, "memory": {"enum": memories}}),
                &["task", "region", "memory"],
            ),
            ctx.space.regions.len(),
        ),
    );
    properties.insert(
        "layouts".into(),
        list(
            object(
                json!({"task": {"enum": layout_tasks}, "layout": {"enum": layouts}}),
                &["task", "layout"],
            ),
            layout_tasks.len(),
        ),
    );
    if !index_tasks.is_empty() {
        properties.insert(
            "placements".into(),
            list(
                object(
                    json!({"task": {"enum": index_tasks}, "function": {"enum": functions}}),
                    &["task", "function"],
                ),
                index_tasks.len(),
            ),
        );
    }
    properties.insert("reason".into(), json!({"type": "string", "maxLength": 160}));
    let required: Vec<&str> = properties.keys().map(String::as_str).collect();
    object(Value::Object(properties.clone()), &required)
}

/// Per task: the kinds it can run on, its launch domain, its region
/// arguments, and what the user's mapper decides now, in the schema's words.
pub fn tasks_summary(ctx: &ProposalContext<'_>) -> Value {
    let tasks: Vec<Value> = ctx
        .space
        .procs
        .iter()
        .map(|(task, kinds)| {
            let app_task = ctx.app.task(task);
            let decided = ctx.base_decisions.tasks.iter().find(|t| &t.task == task);
            let mut t = serde_json::Map::new();
            t.insert("task".into(), json!(task));
            t.insert(
                "kinds".into(),
                json!(kinds.iter().map(|k| dsl_proc(*k)).collect::<Vec<_>>()),
            );
            if let Some(a) = app_task.filter(|a| a.launch == Launch::Index) {
                t.insert("points".into(), json!(a.domain));
            }
            let regions: Vec<&str> = ctx
                .space
                .regions
                .iter()
                .filter(|(t, _)| t == task)
                .map(|(_, r)| r.as_str())
                .collect();
            if !regions.is_empty() {
                t.insert("regions".into(), json!(regions));
            }
            if let Some(d) = decided {
                t.insert("processor".into(), json!(dsl_proc(d.proc_kind)));
                let memories: BTreeMap<&str, &str> = d
                    .regions
                    .iter()
                    .map(|r| (r.region.as_str(), dsl_mem(r.memory)))
                    .collect();
                if !memories.is_empty() {
                    t.insert("memories".into(), json!(memories));
                }
                if let Some(r) = d.regions.first() {
                    t.insert(
                        "layout".into(),
                        json!(format!(
                            "{} {}",
                            if r.layout.soa { "SOA" } else { "AOS" },
                            if r.layout.order == Order::C {
                                "C_order"
                            } else {
                                "F_order"
                            }
                        )),
                    );
                }
            }
            Value::Object(t)
        })
        .collect();
    json!(tasks)
}

/// A spec in the schema's words (what the history shows of a candidate).
pub fn describe(spec: &Spec) -> Value {
    let mut out = serde_json::Map::new();
    if !spec.procs.is_empty() {
        out.insert(
            "tasks".into(),
            json!(spec
                .procs
                .iter()
                .map(|(t, k)| json!({"task": t, "processor": dsl_proc(*k)}))
                .collect::<Vec<_>>()),
        );
    }
    if !spec.memories.is_empty() {
        out.insert(
            "regions".into(),
            json!(spec
                .memories
                .iter()
                .map(|((t, r), m)| json!({"task": t, "region": r, "memory": dsl_mem(*m)}))
                .collect::<Vec<_>>()),
        );
    }
    if !spec.layouts.is_empty() {
        out.insert(
            "layouts".into(),
            json!(spec
                .layouts
                .iter()
                .map(|(t, l)| json!({"task": t, "layout": layout_name(*l)}))
                .collect::<Vec<_>>()),
        );
    }
    if !spec.index_fns.is_empty() {
        out.insert(
            "placements".into(),
            json!(spec
                .index_fns
                .iter()
                .map(|(t, f)| json!({"task": t, "function": f.name()}))
                .collect::<Vec<_>>()),
        );
    }
    Value::Object(out)
}

fn layout_name(l: LayoutChoice) -> &'static str {
    LAYOUTS
        .iter()
        .find(|(_, c)| *c == l)
        .map(|(n, _)| *n)
        .unwrap_or("SOA C_order")
}

/// The machine as a mapper sees it: nodes, processors per node by kind,
/// and the memories some processor can reach.
pub fn machine_summary(machine: &Machine) -> Value {
    let procs: BTreeMap<&str, u32> = ProcKind::ALL
        .into_iter()
        .filter(|k| machine.procs_per_node(*k) > 0)
        .map(|k| (dsl_proc(k), machine.procs_per_node(k)))
        .collect();
    json!({
        "nodes": machine.nodes(),
        "processors_per_node": procs,
        "memories": machine_memories(machine).into_iter().map(dsl_mem).collect::<Vec<_>>(),
    })
}

/// The user message: the names and numbers the schema needs, as JSON.
pub fn prompt(ctx: &ProposalContext<'_>, history_window: usize, measurements: bool) -> String {
    let constraints: Vec<Value> = ctx
        .app
        .library_constraints
        .iter()
        .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
        .collect();
    let start = ctx.history.len().saturating_sub(history_window);
    // The last runs that measured something carry their figures.
    let measured_from = ctx
        .history
        .iter()
        .enumerate()
        .filter(|(_, r)| r.evaluation.metrics.basis == MetricsBasis::Measured)
        .map(|(i, _)| i)
        .rev()
        .nth(MEASURED_RUNS - 1)
        .unwrap_or(0);
    let tried: Vec<Value> = ctx.history[start..]
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut o = serde_json::Map::new();
            o.insert("iteration".into(), json!(r.iteration));
            if r.iteration > 0 {
                o.insert(
                    "change".into(),
                    r.spec.as_ref().map(describe).unwrap_or_else(|| {
                        json!(r.rationale.chars().take(120).collect::<String>())
                    }),
                );
            }
            o.insert(
                "outcome".into(),
                json!(match (r.evaluation.ok(), r.normalized) {
                    (true, Some(n)) => format!("ran, {n:.3}x the expert mapper"),
                    (true, None) => format!("ran, score {:.4}", r.score),
                    (false, _) => format!("failed: {}", r.evaluation.status),
                }),
            );
            let feedback: Vec<String> = r
                .evaluation
                .feedback
                .iter()
                .map(|f| f.render(ctx.feedback_mode))
                .filter(|t| !t.is_empty())
                .map(|t| t.chars().take(300).collect())
                .collect();
            let m = &r.evaluation.metrics;
            if measurements
                && start + k >= measured_from
                && r.evaluation.ok()
                && m.basis == MetricsBasis::Measured
            {
                o.insert("measured".into(), measured_summary(m));
            }
            if !feedback.is_empty() {
                o.insert("feedback".into(), json!(feedback));
            } else if !r.evaluation.ok() {
                let first = r
                    .evaluation
                    .raw_output
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .chars()
                    .take(200)
                    .collect::<String>();
                o.insert("output".into(), json!(first));
            }
            Value::Object(o)
        })
        .collect();
    let mut body = json!({
        "application": ctx.app.name,
        "machine": machine_summary(ctx.machine),
        "tasks": tasks_summary(ctx),
        "library_constraints": constraints,
        "tried": tried,
    });
    if !ctx.space.pins.is_empty() {
        // The schema already leaves out what they decide; told so that the
        // model does not fight them.
        body["pinned_by_the_user"] = json!(ctx
            .space
            .pins
            .pins
            .iter()
            .map(|p| format!("`{}  # mapwright: keep`", p.text))
            .collect::<Vec<_>>());
    }
    format!(
        "{body}\nWhich decisions should change so that the mapper runs faster? Answer with the JSON object."
    )
}

/// How many of the last runs show their measured figures.
const MEASURED_RUNS: usize = 2;
/// How many tasks (most time first) a run's figures show.
const MEASURED_TASKS: usize = 5;

/// A real run's measured figures, compactly: the imbalance, the copy time
/// no task hid, and for the tasks that took the most time their runs, mean
/// time, the processors they ran on and the busiest one's share, and the
/// megabytes copied in per region argument. Numbers, keyed, so that the
/// model can compare runs rather than read prose.
fn measured_summary(m: &Metrics) -> Value {
    let mut tasks: Vec<(&String, &f64)> = m.task_time_s.iter().collect();
    tasks.sort_by(|a, b| b.1.total_cmp(a.1));
    let round = |x: f64, digits: i32| {
        let f = 10f64.powi(digits);
        (x * f).round() / f
    };
    let per_task: serde_json::Map<String, Value> = tasks
        .into_iter()
        .take(MEASURED_TASKS)
        .filter_map(|(name, _)| {
            let t = m.tasks.get(name)?;
            let busiest = t.points_per_proc.values().copied().max().unwrap_or(0);
            let mut o = json!({
                "runs": t.runs,
                "mean_ms": round(t.mean_s * 1e3, 2),
                "processors": t.points_per_proc.len(),
                "busiest_processor_share": round(f64::from(busiest) / f64::from(t.runs.max(1)), 2),
            });
            if !t.copy_bytes_per_arg.is_empty() {
                o["copied_in_mb"] = json!(t
                    .copy_bytes_per_arg
                    .iter()
                    .map(|(i, b)| (format!("arg {i}"), round(b / 1e6, 3)))
                    .collect::<BTreeMap<_, _>>());
            }
            Some((name.clone(), o))
        })
        .collect();
    json!({
        "imbalance": round(m.imbalance, 2),
        "copy_time_not_hidden_s": round(m.copy_time_s, 4),
        "tasks": per_task,
    })
}

/// A JSON answer cut off mid-way, made whole: everything after the last
/// complete entry of a list is dropped and the open lists and objects are
/// closed. `None` when nothing complete is left.
pub fn complete_truncated(text: &str) -> Option<String> {
    let mut stack: Vec<char> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    // (byte offset after a complete list entry, the brackets then open)
    let mut last: Option<(usize, Vec<char>)> = None;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => stack.push(c),
            '}' | ']' => {
                stack.pop()?;
                if stack.last() == Some(&'[') {
                    last = Some((i + c.len_utf8(), stack.clone()));
                }
            }
            _ => {}
        }
    }
    let (end, open) = last?;
    let mut out = text[..end].to_string();
    for c in open.iter().rev() {
        out.push(if *c == '{' { '}' } else { ']' });
    }
    Some(out)
}

/// Why a structured answer could not be used.
#[derive(Debug, Clone, PartialEq)]
pub enum Invalid {
    /// Not a JSON object (or not the schema's shape).
    NotJson(String),
    /// Nothing in it names a decision of this application.
    Empty,
}

/// The spec a structured answer asks for, and what in it was left out
/// (a name this application does not have, a kind a task has no variant
/// for, an unknown value), in words.
pub fn parse(
    ctx: &ProposalContext<'_>,
    answer: &str,
) -> Result<(Spec, Vec<String>, String), Invalid> {
    let text = answer.trim();
    // Some servers wrap it in a code fence even when asked for JSON.
    let text = super::chat_text::extract_code_block(text)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| text.to_string());
    let value: Value = serde_json::from_str(&text).map_err(|e| Invalid::NotJson(e.to_string()))?;
    let Value::Object(obj) = value else {
        return Err(Invalid::NotJson("not a JSON object".into()));
    };
    let mut spec = Spec::default();
    let mut skipped = Vec::new();
    let items = |key: &str| {
        obj.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    for item in items("tasks") {
        let (task, kind) = (field(&item, "task"), field(&item, "processor"));
        let allowed = ctx.space.procs.iter().find(|(t, _)| *t == task);
        match (
            allowed,
            serde_json::from_value::<ProcKind>(json!(kind)).ok(),
        ) {
            (Some((_, kinds)), Some(k)) if kinds.contains(&k) => {
                spec.procs.insert(task, k);
            }
            _ => skipped.push(format!("task {task} on {kind}")),
        }
    }
    let memories = machine_memories(ctx.machine);
    for item in items("regions") {
        let (task, region, memory) = (
            field(&item, "task"),
            field(&item, "region"),
            field(&item, "memory"),
        );
        let known = ctx
            .space
            .regions
            .iter()
            .any(|(t, r)| *t == task && *r == region);
        match serde_json::from_value::<MemKind>(json!(memory)).ok() {
            Some(m) if known && memories.contains(&m) => {
                spec.memories.insert((task, region), m);
            }
            _ => skipped.push(format!("region {task}/{region} in {memory}")),
        }
    }
    for item in items("layouts") {
        let (task, layout) = (field(&item, "task"), field(&item, "layout"));
        let choice = LAYOUTS.iter().find(|(n, _)| *n == layout).map(|(_, c)| *c);
        match choice {
            Some(c) if ctx.space.layout_tasks.contains(&task) => {
                spec.layouts.insert(task, c);
            }
            _ => skipped.push(format!("layout {layout} for {task}")),
        }
    }
    for item in items("placements") {
        let (task, function) = (field(&item, "task"), field(&item, "function"));
        let f = IndexFn::ALL.into_iter().find(|f| f.name() == function);
        match f {
            Some(f) if ctx.space.index_tasks.contains(&task) => {
                spec.index_fns.insert(task, f);
            }
            _ => skipped.push(format!("placement {function} for {task}")),
        }
    }
    let reason = obj
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .chars()
        .take(160)
        .collect::<String>();
    let asked = ["tasks", "regions", "layouts", "placements"]
        .iter()
        .any(|k| obj.contains_key(*k));
    if !asked {
        return Err(Invalid::Empty);
    }
    Ok((spec, skipped, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_answer_keeps_its_complete_entries() {
        let cut = r#"{"tasks": [{"task": "a", "processor": "GPU"}, {"task": "b", "proc"#;
        let whole = complete_truncated(cut).expect("one complete entry");
        let v: Value = serde_json::from_str(&whole).expect("JSON");
        assert_eq!(v["tasks"].as_array().unwrap().len(), 1);
        assert_eq!(v["tasks"][0]["task"], "a");
        // A bracket inside a string is text.
        let cut = r#"{"tasks": [{"task": "a]", "processor": "GPU"}], "reason": "x ["#;
        let v: Value = serde_json::from_str(&complete_truncated(cut).unwrap()).unwrap();
        assert_eq!(v["tasks"][0]["task"], "a]");
        assert_eq!(complete_truncated(r#"{"tasks": [{"task": "a"#), None);
    }
}
