//! Rendering decisions for people (`mapwright explain`).

use std::collections::{BTreeMap, BTreeSet};

use mapwright_grammar::pin::pinned_statements;
use mapwright_grammar::Span;

use crate::app::{App, Launch};
use crate::decisions::{Decisions, InstanceKind, PointPlacement};
use crate::machine::{Machine, ProcKind, RankView};

use super::layout::layout_text;
use super::placement::tuple_text;
use super::resolver::short;

/// How `explain` names an instance kind.
fn instance_text(kind: InstanceKind, collect: bool) -> String {
    let text = match kind {
        InstanceKind::Physical => "physical",
        InstanceKind::VirtualByMapper => "virtual (VIRTUAL)",
        InstanceKind::VirtualByApp => "virtual (app)",
        InstanceKind::InnerTask => "virtual (inner task)",
        InstanceKind::NoAccess => "none (no access)",
    };
    if collect {
        format!("{text}, collected")
    } else {
        text.to_string()
    }
}

/// At most this many launch points are listed per task.
const MAX_SHOWN_POINTS: usize = 64;

/// The decisions as text for people: a header, then per task its processor
/// kind and the rule that chose it, a table of its region arguments (memory
/// and layout, each with the rule that chose it), and where its launch
/// points run (2-D launches as a matrix of `node,proc`, others as a list).
/// `source` is the mapper text the rule spans point into.
pub fn render_decisions(d: &Decisions, source: &str, app: &App, machine: &Machine) -> String {
    let line_of = |span: Span| -> usize {
        source
            .get(..span.start().min(source.len()))
            .map(|s| s.matches('\n').count())
            .unwrap_or(0)
            + 1
    };
    // Statements the user pinned (`# mapwright: keep`) say so wherever
    // they are cited: the optimizer leaves them as written.
    let pinned: BTreeSet<usize> = {
        let parsed = mapwright_grammar::parse(source);
        pinned_statements(&parsed.program, &parsed.comments, source)
            .iter()
            .map(|s| s.start())
            .collect()
    };
    let is_pinned = |s: Span| pinned.contains(&s.start());
    let rule = |span: Option<Span>| -> String {
        match span {
            None => "default".to_string(),
            Some(s) if is_pinned(s) => format!("line {}, pinned", line_of(s)),
            Some(s) => format!("line {}", line_of(s)),
        }
    };
    let mut out = String::new();
    let kinds: Vec<String> = machine
        .proc_kinds()
        .into_iter()
        .filter(|k| *k != ProcKind::Util)
        .map(|k| format!("{} {k}", machine.procs_per_node(k)))
        .collect();
    out.push_str(&format!(
        "application `{}` on machine `{}` ({} node(s); per node {})\n",
        d.app,
        d.machine,
        machine.nodes(),
        kinds.join(", ")
    ));
    let view = RankView::new(machine, app.ranks_per_node.on(machine));
    if view.ranks_per_node() > 1 {
        let per_rank: Vec<String> = machine
            .proc_kinds()
            .into_iter()
            .filter(|k| *k != ProcKind::Util)
            .map(|k| format!("{} {k}", view.procs_per_node(k)))
            .collect();
        out.push_str(&format!(
            "launched with {} ranks per node: the mapper sees {} node(s) with {} each; points below are physical (node,proc)\n",
            view.ranks_per_node(),
            view.nodes(),
            per_rank.join(", ")
        ));
    }
    match &d.fatal {
        None => out.push_str("the run does not abort on any problem found here\n"),
        Some(f) => {
            let first = f
                .raw_output
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            let at = f
                .rule
                .map(|s| format!(" (line {})", line_of(s)))
                .unwrap_or_default();
            out.push_str(&format!(
                "the run aborts: [{}] {}{at}\n",
                f.kind,
                first.trim()
            ));
        }
    }
    // The statements rules refer to, listed once at the end.
    let mut cited: BTreeMap<usize, String> = BTreeMap::new();
    let mut cite = |span: Option<Span>| {
        if let Some(s) = span {
            let pin = if is_pinned(s) {
                "  [pinned: # mapwright: keep]"
            } else {
                ""
            };
            cited.insert(line_of(s), format!("{}{pin}", short(s.text(source))));
        }
    };
    for t in &d.tasks {
        out.push('\n');
        let launch = match t.launch {
            Launch::Index => {
                let dom: Vec<String> = app
                    .task(&t.task)
                    .map(|a| a.domain.iter().map(|x| x.to_string()).collect())
                    .unwrap_or_default();
                format!("index launch ({})", dom.join(","))
            }
            Launch::Single => "single launch".to_string(),
        };
        let mut extras = Vec::new();
        if let Some(n) = t.instance_limit {
            extras.push(format!("InstanceLimit {n}"));
        }
        if t.control_replicated {
            extras.push("control-replicated".to_string());
        }
        if t.collect_memory {
            extras.push("CollectMemory".to_string());
        }
        let extras = if extras.is_empty() {
            String::new()
        } else {
            format!("; {}", extras.join(", "))
        };
        out.push_str(&format!(
            "task {}: {launch} on {} ({}){extras}\n",
            t.task,
            t.proc_kind,
            rule(t.proc_rule)
        ));
        cite(t.proc_rule);
        if !t.regions.is_empty() {
            let mut rows: Vec<[String; 5]> = vec![[
                "arg".into(),
                "region".into(),
                "instance".into(),
                "memory (rule)".into(),
                "layout (rule)".into(),
            ]];
            for r in &t.regions {
                let instance = instance_text(r.instance, r.collect);
                // One row per launch: the argument's own, then later
                // launches with other regions in it.
                let launches = std::iter::once((
                    r.index.to_string(),
                    &r.region,
                    instance.clone(),
                    r.instance,
                    r.memory,
                    r.memory_rule,
                    &r.layout,
                    r.layout_rule,
                ))
                .chain(r.launches.iter().enumerate().map(|(k, l)| {
                    (
                        format!("{} (launch {})", r.index, k + 2),
                        &l.region,
                        instance_text(l.instance, r.collect),
                        l.instance,
                        l.memory,
                        l.memory_rule,
                        &l.layout,
                        l.layout_rule,
                    )
                }));
                for (arg, region, instance, kind, memory, memory_rule, layout, layout_rule) in
                    launches
                {
                    let (mem, lay) = if kind.is_physical() {
                        cite(memory_rule);
                        cite(layout_rule);
                        (
                            format!("{memory} ({})", rule(memory_rule)),
                            format!("{} ({})", layout_text(layout), rule(layout_rule)),
                        )
                    } else {
                        if kind == InstanceKind::VirtualByMapper {
                            // The statement that said VIRTUAL.
                            cite(memory_rule);
                        }
                        ("-".to_string(), "-".to_string())
                    };
                    rows.push([arg, region.clone(), instance, mem, lay]);
                }
            }
            let mut widths = [0usize; 5];
            for row in &rows {
                for (i, c) in row.iter().enumerate() {
                    widths[i] = widths[i].max(c.chars().count());
                }
            }
            for row in &rows {
                let cells: Vec<String> = row
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
                    .collect();
                out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
            }
        }
        cite(t.map_rule);
        let by = match t.map_rule {
            Some(s) => format!("by {}", rule(Some(s))),
            None => "by Legion's default".to_string(),
        };
        if t.placement.is_empty() {
            let why = if t.map_rule.is_some() {
                "not placed (the mapping function does not run)"
            } else {
                "not placed"
            };
            out.push_str(&format!("  points: {why}\n"));
            continue;
        }
        let dims = t.placement.first().map_or(0, |p| p.point.len());
        match t.launch {
            Launch::Index if dims == 2 => {
                out.push_str(&format!("  points {by} (row i, column j: node,proc):\n"));
                out.push_str(&render_grid(&t.placement));
            }
            Launch::Index => {
                out.push_str(&format!("  points {by} (point -> node,proc):\n"));
                out.push_str(&render_list(&t.placement));
            }
            Launch::Single => {
                if t.placement.len() == 1 && t.placement[0].point.is_empty() {
                    let p = &t.placement[0];
                    out.push_str(&format!("  runs {by} on {},{}\n", p.node, p.proc));
                } else {
                    out.push_str(&format!(
                        "  runs {by}, once per parent point (parent point -> node,proc):\n"
                    ));
                    out.push_str(&render_list(&t.placement));
                }
            }
        }
    }
    if !cited.is_empty() {
        out.push_str("\nrules:\n");
        for (line, text) in cited {
            out.push_str(&format!("  line {line}: {text}\n"));
        }
    }
    out
}

/// A 2-D placement as a matrix.
fn render_grid(placement: &[PointPlacement]) -> String {
    let mut rows: BTreeMap<i64, BTreeMap<i64, String>> = BTreeMap::new();
    for p in placement.iter().take(MAX_SHOWN_POINTS * 4) {
        if let [i, j] = p.point[..] {
            rows.entry(i)
                .or_default()
                .insert(j, format!("{},{}", p.node, p.proc));
        }
    }
    let cols: BTreeSet<i64> = rows.values().flat_map(|r| r.keys().copied()).collect();
    let width = rows
        .values()
        .flat_map(|r| r.values().map(|c| c.len()))
        .chain(cols.iter().map(|j| format!("j={j}").len()))
        .max()
        .unwrap_or(3);
    let label = rows
        .keys()
        .map(|i| format!("i={i}").len())
        .max()
        .unwrap_or(3);
    let mut out = format!("    {:label$}", "");
    for j in &cols {
        out.push_str(&format!("  {:>width$}", format!("j={j}")));
    }
    out.push('\n');
    for (i, r) in &rows {
        out.push_str(&format!("    {:label$}", format!("i={i}")));
        for j in &cols {
            out.push_str(&format!(
                "  {:>width$}",
                r.get(j).map_or("-", |c| c.as_str())
            ));
        }
        out.push('\n');
    }
    if placement.len() > MAX_SHOWN_POINTS * 4 {
        out.push_str(&format!(
            "    ... {} more points\n",
            placement.len() - MAX_SHOWN_POINTS * 4
        ));
    }
    out
}

/// A placement as a wrapped list of `point -> node,proc`.
fn render_list(placement: &[PointPlacement]) -> String {
    let items: Vec<String> = placement
        .iter()
        .take(MAX_SHOWN_POINTS)
        .map(|p| format!("{} -> {},{}", tuple_text(&p.point), p.node, p.proc))
        .collect();
    let mut out = String::new();
    let mut line = String::from("   ");
    for it in items {
        if line.len() + it.len() + 3 > 100 && !line.trim().is_empty() {
            out.push_str(line.trim_end_matches(';'));
            out.push('\n');
            line = String::from("   ");
        }
        line.push(' ');
        line.push_str(&it);
        line.push(';');
    }
    if !line.trim().is_empty() {
        out.push_str(line.trim_end_matches(';'));
        out.push('\n');
    }
    if placement.len() > MAX_SHOWN_POINTS {
        out.push_str(&format!(
            "    ... {} more points\n",
            placement.len() - MAX_SHOWN_POINTS
        ));
    }
    out
}
