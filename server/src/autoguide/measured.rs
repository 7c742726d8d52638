//! AutoGuide's reading of a run's measured figures ([`Metrics`] with basis
//! `measured`: Realm's timelines of every task and copy the mapper mapped):
//! load imbalance and idle processors, copies no computation hides, and
//! memory filling up. Each quotes the numbers it read; the imbalance
//! comes with an edit that spreads the launch that caused it.

use mapwright_grammar::ast::{StmtKind, TaskSel};
use mapwright_grammar::{Span, TextEdit};
use mapwright_runtime::app::Launch;
use mapwright_runtime::backend::{Metrics, MetricsBasis};
use mapwright_runtime::machine::MemKind;

use super::placement_fns;
use super::Context;

/// Busiest over mean busy time above which a run counts as imbalanced.
const IMBALANCE: f64 = 1.25;
/// Share of the run's time in copies no task hides above which it counts
/// as copy-bound.
const COPY_BOUND: f64 = 0.10;
/// Share of a memory's capacity above which it counts as under pressure.
const MEMORY_PRESSURE: f64 = 0.80;

fn measured<'a>(ctx: &Context<'a>) -> Option<&'a Metrics> {
    ctx.metrics.filter(|m| m.basis == MetricsBasis::Measured)
}

/// A measured imbalance: what the explanation quotes and which task the
/// edit spreads.
pub struct Imbalance {
    pub text: String,
    /// The task with the most time on the busiest processor whose runs
    /// crowd onto it, if there is one.
    pub culprit: Option<String>,
}

/// The run's measured imbalance, when the busiest processor worked at
/// least [`IMBALANCE`] times the mean.
pub fn imbalance(ctx: &Context<'_>) -> Option<Imbalance> {
    let m = measured(ctx)?;
    if m.proc_busy_s.len() < 2 || m.imbalance < IMBALANCE {
        return None;
    }
    let (busiest, max) = m
        .proc_busy_s
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(p, s)| (p.clone(), *s))?;
    let n = m.proc_busy_s.len();
    let mean = m.proc_busy_s.values().sum::<f64>() / n as f64;
    let mut others: Vec<(&String, f64)> = m
        .proc_busy_s
        .iter()
        .filter(|(p, _)| **p != busiest)
        .map(|(p, s)| (p, if max > 0.0 { s / max } else { 0.0 }))
        .collect();
    others.sort_by(|a, b| a.1.total_cmp(&b.1));
    let idle: Vec<String> = others
        .iter()
        .take(3)
        .map(|(p, share)| format!("{p} {:.0}%", share * 100.0))
        .collect();
    let culprit = culprit(m, &busiest);
    let mut text = format!(
        "Measured load imbalance: {busiest} was busy {max:.3} s, {:.1}x the mean of the {n} processors \
         ({mean:.3} s). The least busy worked this share of its time: {}{}.",
        max / mean.max(f64::MIN_POSITIVE),
        idle.join(", "),
        if others.len() > 3 { ", ..." } else { "" },
    );
    if let Some(task) = &culprit {
        let t = &m.tasks[task];
        let on = t.points_per_proc.get(&busiest).copied().unwrap_or(0);
        text.push_str(&format!(
            " `{task}` ran {on} of its {} measured runs there (mean {:.1} ms each).",
            t.runs,
            t.mean_s * 1e3
        ));
    }
    Some(Imbalance { text, culprit })
}

/// The task that put the most time on `busiest` with more of its runs there
/// than an even split over the processors it could use would give.
fn culprit(m: &Metrics, busiest: &str) -> Option<String> {
    let n = m.proc_busy_s.len() as f64;
    m.tasks
        .iter()
        .filter_map(|(name, t)| {
            let on = f64::from(t.points_per_proc.get(busiest).copied().unwrap_or(0));
            let crowded = t.runs > 1 && on > (f64::from(t.runs) / n).ceil();
            crowded.then_some((name, on * t.mean_s))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(name, _)| name.clone())
}

/// The edit for a measured imbalance: the culprit, an index launch, gets a
/// placement function that deals its points cyclically over every
/// processor of its kind (`IndexTaskMap TASK mw_linearcyclic_cpu_1d;`).
/// Where a statement naming only that task places it now, its function is
/// replaced; otherwise the new statement is added at the end (a task's own
/// name takes precedence over a kind or `*`), and the task is taken out of
/// an earlier list that would shadow it.
pub fn spread_culprit(ctx: &Context<'_>) -> Option<Vec<TextEdit>> {
    let task = imbalance(ctx)?.culprit?;
    let app_task = ctx.app?.task(&task)?;
    if app_task.launch != Launch::Index {
        return None;
    }
    let decision = ctx.decisions?.tasks.iter().find(|t| t.task == task)?;
    let kind = decision.proc_kind;
    let dims = app_task.domain.len().max(1);
    let machine_var = placement_fns::machine_var(kind);
    let name = placement_fns::cyclic_name(kind, dims);
    let mut block = String::new();
    if !ctx.source.contains(&format!("{machine_var} =")) {
        block.push_str(&format!(
            "{machine_var} = Machine({});\n",
            placement_fns::dsl_proc(kind)
        ));
    }
    if !ctx.source.contains(&format!("def {name}(")) {
        block.push_str(&placement_fns::cyclic_def(kind, dims, &machine_var));
    }
    let mut edits = Vec::new();
    let mut placed = false;
    for stmt in &ctx.analysis.parsed.program.stmts {
        let StmtKind::IndexTaskMap {
            tasks: TaskSel::Names(names),
            func,
        } = &stmt.kind
        else {
            continue;
        };
        let Some(at) = names.iter().position(|n| n.name == task) else {
            continue;
        };
        if names.len() == 1 && !placed {
            edits.push(TextEdit {
                span: func.span,
                text: name.clone(),
            });
            placed = true;
        } else {
            // `IndexTaskMap a, TASK f;`: keep the others on `f`.
            let from = if at + 1 < names.len() {
                Span::new(names[at].span.start(), names[at + 1].span.start())
            } else {
                Span::new(names[at - 1].span.end(), names[at].span.end())
            };
            edits.push(TextEdit {
                span: from,
                text: String::new(),
            });
        }
    }
    if !placed {
        block.push_str(&format!("IndexTaskMap {task} {name};\n"));
    }
    if !block.is_empty() {
        let end = ctx.source.len();
        let sep = if ctx.source.ends_with('\n') || end == 0 {
            ""
        } else {
            "\n"
        };
        // Definitions before the statements that use them: at the end for
        // a new statement; before the first statement it edits otherwise.
        let at = if placed {
            first_top_level_index_task_map(ctx, &task).unwrap_or(end)
        } else {
            end
        };
        let text = if at == end {
            format!("{sep}{block}")
        } else {
            block
        };
        edits.push(TextEdit {
            span: Span::new(at, at),
            text,
        });
    }
    edits.sort_by_key(|e| e.span.start());
    Some(edits)
}

/// Where the statement placing `task` by name starts (its line).
fn first_top_level_index_task_map(ctx: &Context<'_>, task: &str) -> Option<usize> {
    ctx.analysis
        .parsed
        .program
        .stmts
        .iter()
        .find_map(|s| match &s.kind {
            StmtKind::IndexTaskMap {
                tasks: TaskSel::Names(names),
                ..
            } if names.len() == 1 && names[0].name == task => Some(
                ctx.source[..s.span.start()]
                    .rfind('\n')
                    .map_or(0, |i| i + 1),
            ),
            _ => None,
        })
}

/// Copies that no task hid took at least [`COPY_BOUND`] of the run.
pub fn copy_bound(ctx: &Context<'_>) -> Option<String> {
    let m = measured(ctx)?;
    let elapsed = super::edits::elapsed_seconds(ctx.raw_output)?;
    if elapsed <= 0.0 || m.copy_time_s < COPY_BOUND * elapsed {
        return None;
    }
    let total: f64 = m.copy_bytes.values().sum();
    let (link, bytes) = m.copy_bytes.iter().max_by(|a, b| a.1.total_cmp(b.1))?;
    let receiver = m
        .tasks
        .iter()
        .flat_map(|(t, f)| f.copy_bytes_per_arg.iter().map(move |(i, b)| (t, *i, *b)))
        .max_by(|a, b| a.2.total_cmp(&b.2));
    let mut text = format!(
        "Measured copies: {:.3} s of the {elapsed:.3} s run ({:.0}%) had copies under way and no task running; \
         {:.1} MB moved, most of it {link} ({:.1} MB).",
        m.copy_time_s,
        100.0 * m.copy_time_s / elapsed,
        total / 1e6,
        bytes / 1e6
    );
    if let Some((task, index, b)) = receiver {
        text.push_str(&format!(
            " The largest share was copied in for `{task}`'s argument {index} ({:.1} MB).",
            b / 1e6
        ));
    }
    Some(text)
}

/// A memory holding at least [`MEMORY_PRESSURE`] of its capacity in the
/// instances the mapper mapped there.
pub fn memory_pressure(ctx: &Context<'_>) -> Option<String> {
    let m = measured(ctx)?;
    let machine = ctx.machine?;
    m.memory_bytes.iter().find_map(|(label, bytes)| {
        let kind_name = label
            .split_once(' ')?
            .1
            .trim_end_matches(|c: char| c.is_ascii_digit());
        let kind = MemKind::ALL
            .into_iter()
            .find(|k| k.dsl_name() == Some(kind_name))?;
        let capacity = machine.capacity(kind)? as f64;
        (capacity > 0.0 && *bytes >= MEMORY_PRESSURE * capacity).then(|| {
            format!(
                "Measured memory use: the instances mapped in {label} take {:.1} MB, {:.0}% of its {:.1} MB.",
                bytes / 1e6,
                100.0 * bytes / capacity,
                capacity / 1e6
            )
        })
    })
}

/// Whether a run's figures are measured (the static load-imbalance rule
/// then leaves the judgement to the measured one).
pub fn has_measurements(ctx: &Context<'_>) -> bool {
    measured(ctx).is_some()
}
