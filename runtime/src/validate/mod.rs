//! The simulator against every measured figure available
//! (`mapwright bench sim-validate`).
//!
//! Sources of measurements:
//! - the ASI paper (arXiv 2410.15625): throughput of the mappers its agent
//!   found, relative to the expert's, on its P100 node;
//! - the mapper-logging-wrapper logs of real runs (`shared/apps/wrapper-logs/`,
//!   2 nodes x 4 V100 of Lassen): their per-call timestamps;
//! - `mapwright calibrate` output from a GPU run, when one exists (none is
//!   stored with the project yet).
//!
//! - real runs of the benchmark programs on this host with real Legion
//!   ([`real`]).
//!
//! Nothing here feeds back into the model: no constant of `sim::model` is
//! fitted to a row. A row the model cannot explain says so.

pub mod real;

use crate::app::{expert_mapper_text, App};
use crate::backend::RunStatus;
use crate::machine::{Machine, ProcKind};
use crate::sim::{model, SimBackend};

/// One comparison.
#[derive(Debug, Clone)]
pub struct Row {
    /// Where the measurement comes from.
    pub source: String,
    pub app: String,
    /// What is compared.
    pub what: String,
    /// The simulator's figure, if it can give one.
    pub predicted: Option<f64>,
    /// The measured figure, if one exists.
    pub measured: Option<f64>,
    /// Unit of both figures.
    pub unit: String,
    /// Whether the ordering of the variants agrees (predicted vs measured
    /// on the same side of 1 for a ratio), where the row has an ordering.
    pub ordering: Option<bool>,
    pub note: String,
}

impl Row {
    /// predicted / measured.
    pub fn ratio(&self) -> Option<f64> {
        match (self.predicted, self.measured) {
            (Some(p), Some(m)) if m != 0.0 => Some(p / m),
            _ => None,
        }
    }
}

/// Relative differences below this count as a tie (no ordering claimed by
/// the simulator): 1 %, the run-to-run scatter the simulator's noise
/// option models.
const TIE: f64 = 0.01;

/// Whether predicted and measured ratios (variant / baseline) order the two
/// variants the same way. A predicted tie does not match a measured
/// difference.
fn same_order(predicted: f64, measured: f64) -> bool {
    let side = |r: f64| {
        if (r - 1.0).abs() < TIE {
            0
        } else if r > 1.0 {
            1
        } else {
            -1
        }
    };
    side(predicted) == side(measured)
}

/// The circuit mapper the ASI paper's agent found (1.34x its expert on
/// the P100 node), as far as the paper describes it: `rp_shared` and
/// `rp_ghost` in FBMEM instead of ZCMEM, AOS layout with `Align==128`, and
/// the expert's index-task placement dropped (Legion's default). Built by
/// editing the expert's text; `None` if the expert no longer has the
/// statements edited.
pub fn circuit_found_mapper() -> Option<String> {
    let expert = expert_mapper_text("circuit")?;
    let mut out = String::new();
    let mut edits = 0;
    for line in expert.lines() {
        let t = line.trim_start();
        if t.starts_with("Region * rp_shared GPU ZCMEM") {
            out.push_str("Region * rp_shared GPU FBMEM;\n");
            edits += 1;
        } else if t.starts_with("Region * rp_ghost GPU ZCMEM") {
            out.push_str("Region * rp_ghost GPU FBMEM;\n");
            edits += 1;
        } else if t.starts_with("Layout * * * SOA C_order") {
            out.push_str("Layout * * * AOS C_order Align==128;\n");
            edits += 1;
        } else if t.starts_with("IndexTaskMap calculate_new_currents") {
            edits += 1;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    (edits == 4).then_some(out)
}

/// Throughput of `mapper` for `app` on `machine`, if it runs.
fn throughput(sim: &SimBackend, mapper: &str, app: &App, machine: &Machine) -> Option<f64> {
    let out = sim.run_source(mapper, app, machine, 0, 0.0);
    (out.status == RunStatus::Ok)
        .then_some(out.throughput)
        .flatten()
}

/// Timestamps (seconds) of the `MAP_TASK` calls for `task` in a wrapper
/// log, per target processor.
pub fn map_task_times(log: &str, task: &str) -> Vec<(String, Vec<f64>)> {
    let needle = format!("MAP_TASK for {task}<");
    let lines: Vec<&str> = log.lines().collect();
    let mut out: Vec<(String, Vec<f64>)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.contains(&needle) {
            continue;
        }
        // "[0 - 20002e17f8b0]    1.191101 {2}{mapper}: MAP_TASK for ..."
        let Some(after) = line.split(']').nth(1) else {
            continue;
        };
        let Some(t) = after.split_whitespace().next().and_then(|x| x.parse().ok()) else {
            continue;
        };
        let proc = lines
            .get(i + 1)
            .and_then(|l| l.split("TARGET PROCS:").nth(1))
            .map(|p| p.trim().to_string())
            .unwrap_or_default();
        match out.iter_mut().find(|x| x.0 == proc) {
            Some(x) => x.1.push(t),
            None => out.push((proc, vec![t])),
        }
    }
    out
}

/// The shortest interval between successive `MAP_TASK` calls of `task` on
/// one processor, median over processors. Under `InstanceLimit task 1`
/// the DSL mapper maps a processor's next instance of the task only when
/// the previous one finished, so this interval bounds one execution
/// (plus whatever copies its mapping waited for) from above.
pub fn shortest_map_interval(log: &str, task: &str) -> Option<f64> {
    let mut mins: Vec<f64> = map_task_times(log, task)
        .into_iter()
        .filter_map(|(_, mut ts)| {
            ts.sort_by(f64::total_cmp);
            ts.windows(2)
                .map(|w| w[1] - w[0])
                .filter(|d| *d > 0.0)
                .min_by(f64::total_cmp)
        })
        .collect();
    if mins.is_empty() {
        return None;
    }
    mins.sort_by(f64::total_cmp);
    Some(mins[mins.len() / 2])
}

/// The compute phase of each main-loop iteration in a DISTAL matmul's
/// wrapper log: from the `SLICE_TASK` of the outer compute launch
/// (`task_7`) to the next `SLICE_TASK` of the loop's first task
/// (`taco_fill`) or of `taco_validate` after the loop. The benchmark
/// waits for the compute launch before it starts the next iteration's
/// fills, so each window is one iteration's compute plus a mapper call.
pub fn compute_windows(log: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut open: Option<f64> = None;
    for line in log.lines() {
        let Some(rest) = line.split("SLICE_TASK for ").nth(1) else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(t) = line
            .split(']')
            .nth(1)
            .and_then(|a| a.split_whitespace().next())
            .and_then(|x| x.parse::<f64>().ok())
        else {
            continue;
        };
        match name.as_str() {
            "task_7" if open.is_none() => open = Some(t),
            "taco_fill" | "taco_validate" => {
                if let Some(start) = open.take() {
                    out.push(t - start);
                }
            }
            _ => {}
        }
    }
    out
}

/// The median of the timed iterations' compute windows (the first
/// iteration is untimed, as in the benchmark).
pub fn timed_compute_window(log: &str) -> Option<f64> {
    let mut w: Vec<f64> = compute_windows(log).into_iter().skip(1).collect();
    if w.is_empty() {
        return None;
    }
    w.sort_by(f64::total_cmp);
    Some(w[w.len() / 2])
}

/// The GPU (index among the rank's `TOC_PROC`s, in id order) each logged
/// point of `task` was mapped to: `(point, gpu)`.
pub fn logged_gpu_points(log: &str, task: &str) -> Vec<(Vec<i64>, u32)> {
    let mut gpus: Vec<String> = Vec::new();
    for line in log.lines() {
        if let Some(id) = line
            .split("{mapper}:")
            .nth(1)
            .filter(|r| r.contains("(TOC_PROC)"))
            .and_then(|r| r.split_whitespace().next())
        {
            if !gpus.iter().any(|g| g == id) {
                gpus.push(id.to_string());
            }
        }
    }
    gpus.sort();
    let needle = format!("MAP_TASK for {task}(index_point=(");
    let lines: Vec<&str> = log.lines().collect();
    let mut out: Vec<(Vec<i64>, u32)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.split(needle.as_str()).nth(1) else {
            continue;
        };
        let point: Vec<i64> = rest
            .split(')')
            .next()
            .unwrap_or("")
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect();
        let Some(gpu) = lines
            .get(i + 1)
            .and_then(|l| l.split("TARGET PROCS:").nth(1))
            .and_then(|p| gpus.iter().position(|g| g == p.trim()))
        else {
            continue;
        };
        if !out.iter().any(|(p, _)| *p == point) {
            out.push((point, gpu as u32));
        }
    }
    out
}

/// Measured figures of `cannon.log` when no log is at hand: the value
/// [`shortest_map_interval`] gives on `shared/apps/wrapper-logs/cannon.log`
/// (processors 1d..03-06: 0.184, 0.184, 0.197, 0.197 s).
pub const CANNON_LOG_TASK4_INTERVAL_S: f64 = 0.197;

/// [`timed_compute_window`] of `shared/apps/wrapper-logs/cannon.log`
/// (iterations 2-10: 2.633-2.976 s).
pub const CANNON_LOG_COMPUTE_WINDOW_S: f64 = 2.790;

/// The comparison table. `cannon_log` is the text of the cannon wrapper
/// log if available (otherwise its recorded figure is used).
pub fn rows(cannon_log: Option<&str>) -> Vec<Row> {
    let sim = SimBackend::embedded();
    let mut rows = Vec::new();
    let p100 = Machine::preset("p100x4").expect("p100x4 preset");

    // 1. The paper's circuit mapper, 1.34x its expert.
    if let (Some(app), Some(expert), Some(found)) = (
        App::builtin("circuit"),
        expert_mapper_text("circuit"),
        circuit_found_mapper(),
    ) {
        let e = throughput(&sim, expert, &app, &p100);
        let f = throughput(&sim, &found, &app, &p100);
        let predicted = match (e, f) {
            (Some(e), Some(f)) if e > 0.0 => Some(f / e),
            _ => None,
        };
        let ordering = predicted.map(|p| same_order(p, 1.34));
        rows.push(Row {
            source: "ASI paper (P100 node)".into(),
            app: "circuit".into(),
            what: "found mapper / expert (FBMEM shared+ghost, AOS Align==128, default placement)"
                .into(),
            predicted,
            measured: Some(1.34),
            unit: "x".into(),
            ordering,
            note: "not explained: the model's irregular-access costs for ZCMEM ghosts are \
                   1-2 % of an iteration (SIMULATION.md, 'What the model leaves out'); the \
                   found mapper's full text is not published"
                .into(),
        });
    }
    // 2-4. The paper's agent on the 2-D matmuls: the found mappers are not
    // published, so there is nothing to simulate.
    for (app, x) in [("cannon", 1.09), ("summa", 0.86), ("pumma", 0.57)] {
        rows.push(Row {
            source: "ASI paper (P100 node)".into(),
            app: app.into(),
            what: "agent's best mapper / expert".into(),
            predicted: None,
            measured: Some(x),
            unit: "x".into(),
            ordering: None,
            note: "not comparable: the paper does not publish the mapper".into(),
        });
    }
    // The paper's worst SUMMA, PUMMA and Solomonik mappers (0.00x, Table
    // A1), which it attributes to cuBLAS layout violations (ERRORS.md
    // section 4): the expert with the F_order layout the violation needs.
    for app in ["summa", "pumma", "solomonik"] {
        let (Some(a), Some(expert)) = (App::builtin(app), expert_mapper_text(app)) else {
            continue;
        };
        let variant = expert.replace("Layout * * * SOA C_order", "Layout * * * SOA F_order");
        let e = throughput(&sim, expert, &a, &p100);
        let out = sim.run_source(&variant, &a, &p100, 0, 0.0);
        let predicted = match (out.status == RunStatus::Ok, out.throughput, e) {
            (false, _, _) => Some(0.0),
            (true, Some(v), Some(e)) if e > 0.0 => Some(v / e),
            _ => None,
        };
        rows.push(Row {
            source: "ASI paper (P100 node)".into(),
            app: app.into(),
            what: "worst mapper / expert: the expert with `Layout * * * SOA F_order` (a \
                   cuBLAS layout violation, the paper's cause of its 0.00x)"
                .into(),
            predicted,
            measured: Some(0.0),
            unit: "x".into(),
            ordering: predicted.map(|p| same_order(p, 0.0)),
            note: format!(
                "the model's run: {}; the paper's worst mapper itself is not published",
                out.status.as_str()
            ),
        });
    }
    // 5. cannon.log: one task_4 GEMM on a V100 of Lassen.
    let lassen = Machine::preset("2x4gpu");
    let gpu = lassen.as_ref().and_then(|m| m.processor(ProcKind::Gpu));
    let measured = cannon_log
        .and_then(|log| shortest_map_interval(log, "task_4"))
        .unwrap_or(CANNON_LOG_TASK4_INTERVAL_S);
    // The scaled description's GEMM on two nodes (n = 28284, gx = 2,
    // gy = 1): A 7071x14142 += B 7071x7071 * C 7071x14142, the logged
    // pieces (`scaling` tests).
    let cannon2 = match (App::builtin("cannon"), lassen.as_ref()) {
        (Some(a), Some(m)) => Some(a.on_machine(m).into_owned()),
        _ => None,
    };
    let flops = cannon2
        .as_ref()
        .and_then(|a| a.tasks.iter().find(|t| t.name == "task_4"))
        .map_or(2.0 * 7071.0 * 7071.0 * 14142.0, |t| t.work.flops);
    let predicted = gpu.map(|g| {
        flops / (g.gflops_fp64 * 1e9 * model::compute_eff(ProcKind::Gpu, model::Kernel::Gemm))
            + (g.launch_overhead_us + model::LEGION_TASK_US) * 1e-6
    });
    rows.push(Row {
        source: "wrapper log cannon.log (2 nodes x 4 V100)".into(),
        app: "cannon".into(),
        what: "one task_4 GEMM (7071x7071x14142): shortest MAP_TASK interval per GPU under \
               InstanceLimit task_4 1, median"
            .into(),
        predicted,
        measured: Some(measured),
        unit: "s".into(),
        ordering: None,
        note: "the interval bounds GEMM + copies from above; the cuBLAS efficiency \
               (GEMM_EFF_GPU) is a vendor figure, not fitted"
            .into(),
    });
    // 6. cannon.log: one iteration's compute on the two nodes, against the
    // expert simulated on 2x4gpu with the scaled problem.
    let (Some(m2), Some(app2), Some(expert)) = (
        lassen.as_ref(),
        cannon2.as_ref(),
        expert_mapper_text("cannon"),
    ) else {
        return rows;
    };
    let run = sim.run_source(expert, app2, m2, 0, 0.0);
    let predicted = (run.status == RunStatus::Ok)
        .then_some(run.elapsed_s)
        .flatten();
    let measured = cannon_log
        .and_then(timed_compute_window)
        .unwrap_or(CANNON_LOG_COMPUTE_WINDOW_S);
    rows.push(Row {
        source: "wrapper log cannon.log (2 nodes x 4 V100)".into(),
        app: "cannon".into(),
        what: "one iteration's compute (n = 28284, nodes (2, 1)): SLICE_TASK task_7 to the \
               next taco_fill, median of the timed iterations"
            .into(),
        predicted,
        measured: Some(measured),
        unit: "s".into(),
        ordering: None,
        note: "not explained: the model is ~2x fast. On each logged GPU the step that reads \
               its C tile from the other node is mapped 0.64-1.0 s after the previous one, \
               a local step 0.18-0.26 s: the real inter-node copies are slower than the \
               model's EDR port (12.5 GB/s shared by the node's 4 GPUs); nothing fitted"
            .into(),
    });
    // 7. cannon.log: where each task_5 point ran on rank 0.
    let logged = cannon_log.map(|log| logged_gpu_points(log, "task_5"));
    let decisions = crate::resolve_mapping::resolve_mapping(
        &mapwright_grammar::analyze(expert),
        expert,
        app2,
        m2,
    );
    let placed = decisions
        .tasks
        .iter()
        .find(|t| t.task == "task_5")
        .map(|t| t.placement.clone())
        .unwrap_or_default();
    let (agree, total) = match &logged {
        Some(points) if !points.is_empty() => {
            let agree = points
                .iter()
                .filter(|(p, gpu)| {
                    placed
                        .iter()
                        .any(|x| &x.point == p && x.node == 0 && x.proc == *gpu)
                })
                .count();
            (Some(agree as f64), Some(points.len() as f64))
        }
        _ => (None, None),
    };
    rows.push(Row {
        source: "wrapper log cannon.log (2 nodes x 4 V100)".into(),
        app: "cannon".into(),
        what: "task_5 points on rank 0 placed on the GPU the log shows (default slicing \
               of each node's 2x2 launch)"
            .into(),
        predicted: agree,
        measured: total,
        unit: " points".into(),
        ordering: None,
        note: if logged.is_some() {
            "predicted = points placed as logged, measured = points logged".into()
        } else {
            "needs the log (--logs)".into()
        },
    });
    // 8. Logs without a usable timing line.
    for app in ["circuit", "stencil", "pennant"] {
        rows.push(Row {
            source: format!("wrapper log {app}.log"),
            app: app.into(),
            what: "iteration time".into(),
            predicted: None,
            measured: None,
            unit: "s".into(),
            ordering: None,
            note: "no timing line: the loop's mapper calls stop once -dm:memoize traces it, and \
                   the log has no ELAPSED line"
                .into(),
        });
    }
    // 9. calibrate.
    rows.push(Row {
        source: "mapwright calibrate".into(),
        app: "-".into(),
        what: "kernel and copy rates on a real GPU".into(),
        predicted: None,
        measured: None,
        unit: "-".into(),
        ordering: None,
        note: "no calibrate output from a GPU run is stored with the project".into(),
    });
    rows
}

/// The table as text, ending with "N of M orderings match".
pub fn render(rows: &[Row]) -> String {
    let fmt = |x: Option<f64>, unit: &str| match x {
        Some(v) if unit == "s" => format!("{v:.3} s"),
        Some(v) if unit == "ms" => format!("{v:.3} ms"),
        Some(v) => format!("{v:.2}{unit}"),
        None => "-".into(),
    };
    let mut out = String::new();
    out.push_str(&format!(
        "{:<42} {:<9} {:>11} {:>11} {:>6} {:<9} what / note\n",
        "source", "app", "predicted", "measured", "ratio", "ordering"
    ));
    let mut total = 0;
    let mut matched = 0;
    for r in rows {
        let ordering = match r.ordering {
            Some(true) => {
                total += 1;
                matched += 1;
                "match"
            }
            Some(false) => {
                total += 1;
                "MISMATCH"
            }
            None => "-",
        };
        let ratio = r.ratio().map_or("-".into(), |x| format!("{x:.2}"));
        out.push_str(&format!(
            "{:<42} {:<9} {:>11} {:>11} {:>6} {:<9} {}\n{:>93}{}\n",
            r.source,
            r.app,
            fmt(r.predicted, &r.unit),
            fmt(r.measured, &r.unit),
            ratio,
            ordering,
            r.what,
            "",
            r.note
        ));
    }
    out.push_str(&format!("{matched} of {total} orderings match\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_intervals_parse() {
        let log = "[0 - 1]    1.000000 {2}{mapper}: MAP_TASK for task_4<1>\n\
                   [0 - 1]    1.000010 {2}{mapper}:   TARGET PROCS: 1d03\n\
                   [0 - 1]    1.200000 {2}{mapper}: MAP_TASK for task_4<2>\n\
                   [0 - 1]    1.200010 {2}{mapper}:   TARGET PROCS: 1d03\n\
                   [0 - 1]    1.500000 {2}{mapper}: MAP_TASK for task_4<3>\n\
                   [0 - 1]    1.500010 {2}{mapper}:   TARGET PROCS: 1d03\n";
        let t = map_task_times(log, "task_4");
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].1.len(), 3);
        let d = shortest_map_interval(log, "task_4").unwrap();
        assert!((d - 0.2).abs() < 1e-9);
    }

    #[test]
    fn compute_windows_run_from_task_7_to_the_next_fill() {
        let log = "[0 - 1]    1.00 {2}{mapper}: SLICE_TASK for taco_fill<1>\n\
                   [0 - 1]    1.10 {2}{mapper}: SLICE_TASK for task_7<2>\n\
                   [0 - 1]    3.60 {2}{mapper}: SLICE_TASK for taco_fill<3>\n\
                   [0 - 1]    3.70 {2}{mapper}: SLICE_TASK for task_7<4>\n\
                   [0 - 1]    6.70 {2}{mapper}: SLICE_TASK for taco_validate<5>\n";
        let w = compute_windows(log);
        assert_eq!(w.len(), 2);
        assert!((w[0] - 2.5).abs() < 1e-9 && (w[1] - 3.0).abs() < 1e-9);
        assert!((timed_compute_window(log).unwrap() - 3.0).abs() < 1e-9);
    }

    #[test]
    fn logged_points_name_the_rank_s_gpus_in_id_order() {
        let log = "[0 - 1] 0.1 {2}{mapper}:   1d05 (TOC_PROC) can see\n\
                   [0 - 1] 0.1 {2}{mapper}:   1d04 (TOC_PROC) can see\n\
                   [0 - 1] 1.0 {2}{mapper}: MAP_TASK for task_5(index_point=(1,0))<2>\n\
                   [0 - 1] 1.0 {2}{mapper}:   TARGET PROCS: 1d05\n";
        assert_eq!(logged_gpu_points(log, "task_5"), vec![(vec![1, 0], 1)]);
    }

    #[test]
    fn ordering_needs_the_same_side() {
        assert!(same_order(1.2, 1.34));
        assert!(!same_order(1.0, 1.34));
        assert!(!same_order(0.9, 1.34));
        assert!(same_order(0.8, 0.57));
    }

    #[test]
    fn the_found_circuit_mapper_is_built_from_the_expert() {
        let m = circuit_found_mapper().expect("expert statements present");
        assert!(m.contains("rp_shared GPU FBMEM"));
        assert!(!m.contains("IndexTaskMap calculate_new_currents"));
    }
}
