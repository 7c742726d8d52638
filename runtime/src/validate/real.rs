//! The simulator against real runs on this host (`mapwright bench
//! sim-validate --backend legion`).
//!
//! For each benchmark with a real Legion program (`runtime/legion/apps/`):
//! - the **description as the program builds it**: CPU variants only,
//!   without DISTAL's `init_cublas`, and resized from the paper's problem to
//!   the program's default size ([`ProgramSize`]);
//! - **this host as the model sees it**: the machine the mapper reports
//!   through Legion, with two rates measured here instead of guessed
//!   ([`HostRates`]): the `dgemm` rate of one Legion CPU processor (the
//!   cannon program at a size no row uses, on one processor) and the copy
//!   bandwidth of one core. No constant is fitted to a row;
//! - **variants** of the mapper: the expert made to run on CPUs (its
//!   `Machine(GPU)`/`Machine(OMP)` become `Machine(CPU)`, the baseline),
//!   Legion's default through the DSL (`Task * CPU;`), poor mappers (every
//!   point on one CPU; a layout the kernel rejects) and, from the caller,
//!   the optimizer's best;
//! - **predicted** time (the simulator on that description and machine)
//!   against the **measured** one (median of repeated runs, with min-max),
//!   and whether the two order the variant and the baseline the same way.
//!   A measured difference inside the spread of the repeats counts as a
//!   tie, as does a predicted one below 1 %.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{Row, TIE};
#[cfg(test)]
use crate::app::expert_mapper_text;
use crate::app::{App, Task};
use crate::backend::command::CommandBackend;
use crate::backend::legion::{LegionBackend, LegionConfig};
use crate::backend::{Backend, RunRequest, RunStatus};
use crate::machine::{Machine, MemKind, ProcKind};
use crate::sim::{model, SimBackend};

/// How a program's default problem compares with its description's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgramSize {
    /// Elements (and bytes) of every region argument, times this.
    pub data: f64,
    /// Flops per element, times this (GEMM: the shorter inner dimension;
    /// circuit: fewer steps).
    pub flops_per_data: f64,
    /// The program's timed and untimed iterations.
    pub timed: u32,
    pub untimed: u32,
}

/// The default problem of `app`'s program against its description, from
/// the program's flags (docs/legion.md, "The benchmark programs").
pub fn program_size(app: &str) -> Option<ProgramSize> {
    // DISTAL: n = 1024 against 20000, on the same grid.
    let s = 1024.0 / 20000.0;
    Some(match app {
        "cannon" | "summa" | "pumma" | "johnson" | "solomonik" | "cosma" => ProgramSize {
            data: s * s,
            flops_per_data: s,
            timed: 10,
            untimed: 1,
        },
        // Superpieces of 10 pieces of 500 nodes and 2000 wires, 100 steps
        // (against 5000, 20000 and 10000); -l 10 timed loops, 2 x -prune 2.
        "circuit" => ProgramSize {
            data: 0.1,
            flops_per_data: 0.01,
            timed: 10,
            untimed: 4,
        },
        // 2000 x 2000 points against 30000 x 30000; -tsteps 20, 2 x -tprune 5.
        "stencil" => ProgramSize {
            data: (2000.0 / 30000.0) * (2000.0 / 30000.0),
            flops_per_data: 1.0,
            timed: 20,
            untimed: 10,
        },
        // 16 x 144 zones in 4 pieces against 7,372,800 zones a piece;
        // -cstop 60 timed cycles, 2 x -prune 5.
        "pennant" => ProgramSize {
            data: (16.0 * 144.0 / 4.0) / 7_372_800.0,
            flops_per_data: 1.0,
            timed: 60,
            untimed: 10,
        },
        _ => return None,
    })
}

/// `app`'s description as its CPU program builds it: CPU variants only,
/// no `init_cublas` (only the cuBLAS build has it), the library
/// constraints on the CPU variants (the programs call `dgemm` with the
/// leading dimensions DISTAL gives cuBLAS), resized to the program's
/// default problem.
pub fn program_description(app: &str) -> Option<App> {
    let size = program_size(app)?;
    let mut d = App::builtin(app)?;
    d.tasks.retain(|t| t.name != "init_cublas");
    for t in &mut d.tasks {
        t.variants = vec![ProcKind::Cpu];
        resize_task(t, size);
    }
    for c in &mut d.library_constraints {
        if c.variant.is_some() {
            c.variant = Some(ProcKind::Cpu);
        }
    }
    for f in &mut d.communication.flows {
        f.bytes_per_point = scaled(f.bytes_per_point, size.data);
    }
    d.timed_iterations = size.timed;
    d.untimed_iterations = size.untimed;
    Some(d)
}

fn scaled(x: u64, factor: f64) -> u64 {
    (x as f64 * factor).round() as u64
}

fn resize_task(t: &mut Task, size: ProgramSize) {
    for r in &mut t.regions {
        let per_dim = size.data.powf(1.0 / r.shape.len().max(1) as f64);
        for d in &mut r.shape {
            *d = scaled(*d, per_dim).max(1);
        }
        r.elements = scaled(r.elements, size.data);
        r.bytes = scaled(r.bytes, size.data);
    }
    t.work.flops *= size.data * size.flops_per_data;
    t.work.bytes *= size.data;
}

/// Rates of this host measured for the model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostRates {
    /// `dgemm` GFLOP/s of one Legion CPU processor, as the programs call it.
    pub dgemm_gflops: f64,
    /// GB/s one core copies (bytes read plus bytes written per second).
    pub copy_gbps: f64,
    /// GB/s all cores copy together: the system memory's bandwidth.
    pub node_copy_gbps: f64,
}

/// GB/s (bytes read and written per second) `threads` cores copy
/// together: each copies its own 64 MiB five times, the best round counts.
pub fn measure_copy_gbps(threads: usize) -> f64 {
    let n = 8 << 20;
    let threads = threads.max(1);
    let mut buffers: Vec<(Vec<f64>, Vec<f64>)> = (0..threads)
        .map(|_| (vec![1.0f64; n], vec![0.0f64; n]))
        .collect();
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        std::thread::scope(|scope| {
            for (from, to) in buffers.iter_mut() {
                scope.spawn(move || {
                    to.copy_from_slice(from);
                    std::hint::black_box(to);
                });
            }
        });
        best = best.min(start.elapsed().as_secs_f64());
    }
    (2 * n * 8 * threads) as f64 / best / 1e9
}

/// The `dgemm` rate of one Legion CPU processor: the cannon program at
/// n = 512 (a size no row runs) on one processor, its own GFLOPS line,
/// the best of three runs.
pub fn measure_dgemm_gflops(config: &LegionConfig) -> Result<f64, String> {
    let mut one = config.clone();
    one.cpus = 1;
    let backend = LegionBackend::new(one);
    let app = std::sync::Arc::new(App::builtin("cannon").ok_or("no cannon description")?);
    let machine = std::sync::Arc::new(Machine::preset("p100x4").ok_or("no machine preset")?);
    let mapper = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA C_order;\n";
    let template = backend.template(&RunRequest::new(mapper, app.clone(), machine.clone()))?;
    let command = CommandBackend::new(crate::backend::command::CommandConfig::new(format!(
        "{template} -n 512 -i 5 -warmup 1"
    )));
    let mut best: Option<f64> = None;
    for _ in 0..3 {
        let out = command.run(&RunRequest::new(mapper, app.clone(), machine.clone()));
        match (&out.status, out.throughput) {
            (RunStatus::Ok, Some(g)) => best = Some(best.map_or(g, |b: f64| b.max(g))),
            _ => {
                return Err(format!(
                    "the dgemm calibration run failed ({}):\n{}",
                    out.status.as_str(),
                    out.raw_output
                ))
            }
        }
    }
    best.ok_or_else(|| "the dgemm calibration printed no GFLOPS".into())
}

/// `host` (as the mapper reported it) with the measured rates in place of
/// the guessed ones: processors peak at `dgemm / GEMM_EFF_HOST` (so the
/// model's GEMM runs at the measured rate), system memory at what all
/// cores copy together, one processor's access at what one core copies.
pub fn host_model(host: &Machine, rates: HostRates) -> Machine {
    let mut m = host.clone();
    let peak = rates.dgemm_gflops / model::GEMM_EFF_HOST;
    for p in &mut m.node.processors {
        if matches!(p.kind, ProcKind::Cpu | ProcKind::Util) {
            p.gflops_fp64 = peak;
            p.gflops_fp32 = 2.0 * peak;
            p.notes = format!(
                "measured: dgemm {:.2} GFLOP/s on one Legion CPU processor",
                rates.dgemm_gflops
            );
            p.guess = None;
        }
    }
    for mem in &mut m.node.memories {
        if mem.kind == MemKind::Sysmem {
            mem.bandwidth_gbps = rates.node_copy_gbps;
        }
    }
    for a in &mut m.node.affinities {
        if a.mem == MemKind::Sysmem {
            a.bandwidth_gbps = rates.copy_gbps;
            a.notes = format!("measured: {:.1} GB/s copied by one core", rates.copy_gbps);
            a.guess = None;
        }
    }
    m.notes
        .push("rates measured by mapwright bench sim-validate (validate::real)".into());
    m
}

/// This host as the model sees it: the machine the mapper reports through
/// Legion with the rates measured here ([`host_model`]), and the rates.
pub fn measured_host(backend: &LegionBackend) -> Result<(Machine, HostRates), String> {
    let host = backend.host_machine()?;
    let rates = HostRates {
        dgemm_gflops: measure_dgemm_gflops(&backend.config)?,
        copy_gbps: measure_copy_gbps(1),
        node_copy_gbps: measure_copy_gbps(
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        ),
    };
    Ok((host_model(&host, rates), rates))
}

/// `expert` made to run on CPUs: its GPU and OpenMP machines become the
/// CPU machine (the only change; docs/legion.md).
pub fn on_cpus(expert: &str) -> String {
    expert
        .replace("Machine(GPU)", "Machine(CPU)")
        .replace("Machine(OMP)", "Machine(CPU)")
}

/// The mapper variants of `app` measured against the expert on CPUs
/// (first): `(name, mapper)`.
pub fn variants(app: &App) -> Vec<(String, String)> {
    let Some(expert) = app.expert_text() else {
        return Vec::new();
    };
    let baseline = on_cpus(expert);
    let index_tasks: Vec<&str> = app
        .tasks
        .iter()
        .filter(|t| t.launch == crate::app::Launch::Index)
        .map(|t| t.name.as_str())
        .collect();
    let mut out = vec![
        ("expert on CPUs".to_string(), baseline.clone()),
        (
            "Legion's default (Task * CPU;)".to_string(),
            "Task * CPU;\n".to_string(),
        ),
    ];
    // Every point on the first CPU, the expert's layouts kept.
    let layouts: String = expert
        .lines()
        .filter(|l| l.trim_start().starts_with("Layout"))
        .map(|l| format!("{l}\n"))
        .collect();
    out.push((
        "poor: every point on CPU 0".to_string(),
        format!(
            "Task * CPU;\nRegion * * CPU SYSMEM;\n{layouts}mw_cpus = Machine(CPU);\n\
             def mw_first_cpu(Task task) {{\n    return mw_cpus[0, 0];\n}}\n\
             IndexTaskMap {} mw_first_cpu;\n",
            index_tasks.join(",")
        ),
    ));
    // The layout the kernels reject, where the expert names one.
    // The GEMMs' dgemm wants C_order (their library constraint), stencil's
    // kernel F_order strides; circuit's regions are 1-D, so any order runs.
    let rejected = if !app.library_constraints.is_empty() {
        Some(baseline.replace("SOA C_order", "SOA F_order"))
    } else if app.name == "stencil" {
        Some(baseline.replace("SOA F_order", "SOA C_order"))
    } else {
        None
    };
    if let Some(text) = rejected.filter(|t| *t != baseline) {
        out.push(("poor: the layout the kernel rejects".to_string(), text));
    }
    out
}

/// Repeated real runs of one mapper.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Elapsed times of the runs that succeeded, sorted.
    pub times: Vec<f64>,
    /// How the first failed run ended (its status), if one did.
    pub failure: Option<String>,
    /// Per task, the mean time of one point-task run in each run that
    /// succeeded, as Realm measured it for the mapper.
    pub point_means: BTreeMap<String, Vec<f64>>,
}

impl Measured {
    pub fn median(&self) -> Option<f64> {
        (!self.times.is_empty()).then(|| self.times[self.times.len() / 2])
    }
    /// The min-max spread relative to the median (the whole range: one slow
    /// run widens the tie band by all of its excess).
    pub fn spread(&self) -> f64 {
        match (self.times.first(), self.times.last(), self.median()) {
            (Some(lo), Some(hi), Some(m)) if m > 0.0 => (hi - lo) / m,
            _ => 0.0,
        }
    }
}

/// Runs `mapper` `repeats` times on real Legion; stops at the first
/// failure (a failing mapper fails every time).
pub fn measure(
    backend: &LegionBackend,
    app: &App,
    machine: &Machine,
    mapper: &str,
    repeats: usize,
) -> Measured {
    let app = std::sync::Arc::new(app.clone());
    let machine = std::sync::Arc::new(machine.clone());
    let mut times = Vec::new();
    let mut point_means: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for _ in 0..repeats.max(1) {
        let out = backend.run(&RunRequest::new(mapper, app.clone(), machine.clone()));
        match (&out.status, out.elapsed_s) {
            (RunStatus::Ok, Some(t)) => {
                times.push(t);
                for (task, figures) in &out.metrics.tasks {
                    point_means
                        .entry(task.clone())
                        .or_default()
                        .push(figures.mean_s);
                }
            }
            (status, _) => {
                return Measured {
                    times,
                    failure: Some(status.as_str().to_string()),
                    point_means,
                }
            }
        }
    }
    times.sort_by(f64::total_cmp);
    Measured {
        times,
        failure: None,
        point_means,
    }
}

/// The simulator's elapsed time, or how its run ends.
pub fn predict(app: &App, machine: &Machine, mapper: &str) -> Result<f64, String> {
    let out = SimBackend::embedded().run_source(mapper, app, machine, 0, 0.0);
    match (&out.status, out.elapsed_s) {
        (RunStatus::Ok, Some(t)) => Ok(t),
        (status, _) => Err(status.as_str().to_string()),
    }
}

/// -1 faster, 0 tie, 1 slower (or failed) than the baseline, with a tie
/// band of `tie` relative difference.
fn side(variant: Option<f64>, baseline: f64, tie: f64) -> i32 {
    match variant {
        None => 1,
        Some(v) => {
            let r = v / baseline;
            if (r - 1.0).abs() <= tie {
                0
            } else if r > 1.0 {
                1
            } else {
                -1
            }
        }
    }
}

/// The rows of one application: each variant predicted and measured,
/// ordered against the baseline, the first variant that ran (the expert on
/// CPUs where it runs here).
pub fn app_rows(
    source: &str,
    app: &App,
    machine: &Machine,
    measured: &[(String, String, Measured)],
) -> Vec<Row> {
    let Some(base_index) = measured.iter().position(|(_, _, m)| m.failure.is_none()) else {
        return measured
            .iter()
            .map(|(name, _, m)| Row {
                source: source.to_string(),
                app: app.name.clone(),
                what: name.clone(),
                predicted: None,
                measured: None,
                unit: "s".into(),
                ordering: None,
                note: format!("no variant ran here: {:?}", m.failure),
            })
            .collect();
    };
    // Each variant simulated once; the baseline's prediction is one of them.
    let predictions: Vec<Result<f64, String>> = measured
        .iter()
        .map(|(_, mapper, _)| predict(app, machine, mapper))
        .collect();
    let base = &measured[base_index].2;
    let base_pred = predictions[base_index].as_ref().ok().copied();
    let base_meas = base.median();
    let mut rows = Vec::new();
    for (i, ((name, _, m), predicted)) in measured.iter().zip(&predictions).enumerate() {
        let ordering = match (i == base_index, base_pred, base_meas) {
            (true, _, _) | (_, None, _) | (_, _, None) => None,
            (_, Some(bp), Some(bm)) => {
                // A measured difference inside the repeats' spread is a tie.
                let noise = (m.spread().max(base.spread())).max(TIE);
                Some(
                    side(predicted.as_ref().ok().copied(), bp, TIE)
                        == side(m.median().filter(|_| m.failure.is_none()), bm, noise),
                )
            }
        };
        let measured_text = match (&m.failure, m.median()) {
            (Some(f), _) => format!("measured: fails ({f})"),
            (None, Some(_)) => format!(
                "measured: median of {} runs, {:.3}-{:.3} s",
                m.times.len(),
                m.times[0],
                m.times[m.times.len() - 1]
            ),
            (None, None) => "measured: no run".into(),
        };
        let predicted_text = match predicted {
            Ok(_) => String::new(),
            Err(status) => format!("; predicted: fails ({status})"),
        };
        let explained = match (predicted.as_ref().ok(), m.median()) {
            (Some(p), Some(med)) if m.failure.is_none() && !(0.5..=2.0).contains(&(p / med)) => {
                format!(
                    "; not explained: the model is {:.1}x {}",
                    if p < &med { med / p } else { p / med },
                    if p < &med { "fast" } else { "slow" }
                )
            }
            _ => String::new(),
        };
        let role = if i == base_index { "baseline; " } else { "" };
        rows.push(Row {
            source: source.to_string(),
            app: app.name.clone(),
            what: name.clone(),
            predicted: predicted.as_ref().ok().copied(),
            measured: m.median().filter(|_| m.failure.is_none()),
            unit: "s".into(),
            ordering,
            note: format!("{role}{measured_text}{predicted_text}{explained}"),
        });
    }
    rows
}

/// The per-task rows of one application: for each task the baseline
/// (`name`, `mapper`, its runs `measured`) ran, the model's time of one
/// point-task run against the median of the measured mean per run. The
/// model's rates are the host's ([`HostRates`], from runs of their own),
/// with no constant fitted to a row. Rows have no ordering.
pub fn task_rows(
    source: &str,
    app: &App,
    machine: &Machine,
    name: &str,
    mapper: &str,
    measured: &Measured,
) -> Vec<Row> {
    let analysis = mapwright_grammar::analyze(mapper);
    let decisions = crate::resolve_mapping::resolve_mapping(&analysis, mapper, app, machine);
    let predicted = crate::sim::point_times(&decisions, app, machine).unwrap_or_default();
    let mut rows = Vec::new();
    for task in &app.tasks {
        let Some(means) = measured.point_means.get(&task.name) else {
            continue;
        };
        let mut sorted = means.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let p = predicted.get(&task.name).copied();
        let note = match p {
            None if task.inner => format!(
                "one point-task run of {name}: an inner task (it launches others; the model \
                 gives it no time of its own)"
            ),
            Some(_) => format!(
                "one point-task run of {name}: model (compute and memory access) against \
                 Realm's mean per run, median of {} runs ({})",
                sorted.len(),
                if task.timed { "timed" } else { "untimed" }
            ),
            None => format!(
                "one point-task run of {name}: not in the model's timed loop (a setup or \
                 untimed task)"
            ),
        };
        rows.push(Row {
            source: source.to_string(),
            app: app.name.clone(),
            what: format!("task {}", task.name),
            predicted: p.map(|s| s * 1e3),
            measured: Some(median * 1e3),
            unit: "ms".into(),
            ordering: None,
            note,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_descriptions_are_cpu_only_and_resized() {
        let cannon = program_description("cannon").unwrap();
        assert!(cannon.tasks.iter().all(|t| t.name != "init_cublas"));
        assert!(cannon
            .tasks
            .iter()
            .all(|t| t.variants == vec![ProcKind::Cpu]));
        let gemm = cannon.task("task_4").unwrap();
        // 2 x 512^3 flops: A 512 x 512 += B 512 x 512 x C.
        assert!((gemm.work.flops - 2.0 * 512f64.powi(3)).abs() / gemm.work.flops < 1e-9);
        assert_eq!(gemm.regions[0].shape, vec![512, 512]);
        assert_eq!(cannon.timed_iterations, 10);
    }

    #[test]
    fn task_rows_hold_the_models_point_time_against_the_measured_mean() {
        let app = program_description("cannon").unwrap();
        let host = host_model(
            &Machine::preset("p100x4").unwrap(),
            HostRates {
                dgemm_gflops: 8.0,
                copy_gbps: 10.0,
                node_copy_gbps: 15.0,
            },
        );
        let mapper = on_cpus(expert_mapper_text("cannon").unwrap());
        let measured = Measured {
            times: vec![1.0],
            failure: None,
            point_means: BTreeMap::from([
                ("task_4".to_string(), vec![0.009, 0.007, 0.008]),
                ("task_5".to_string(), vec![0.0001]),
            ]),
        };
        let rows = task_rows("here", &app, &host, "expert", &mapper, &measured);
        assert_eq!(rows.len(), 2, "{rows:#?}");
        let gemm = rows.iter().find(|r| r.what == "task task_4").unwrap();
        assert_eq!(gemm.unit, "ms");
        assert!(
            (gemm.measured.unwrap() - 8.0).abs() < 1e-9,
            "median: {gemm:?}"
        );
        // 2 x 512^3 flops a point at the 8 GFLOP/s dgemm measured: 33.6 ms
        // (memory access overlaps with it).
        let p = gemm.predicted.unwrap();
        let flops_ms = 2.0 * 512f64.powi(3) / 8e9 * 1e3;
        assert!(p >= flops_ms - 1e-6 && p < flops_ms * 1.2, "{gemm:?}");
        assert!(gemm.ordering.is_none());
        let inner = rows.iter().find(|r| r.what == "task task_5").unwrap();
        assert!(
            inner.predicted.is_none() && inner.note.contains("inner task"),
            "{inner:?}"
        );
    }

    #[test]
    fn measured_ties_follow_the_spread() {
        let noisy = Measured {
            times: vec![0.9, 1.0, 1.1],
            failure: None,
            point_means: BTreeMap::new(),
        };
        assert!((noisy.spread() - 0.2).abs() < 1e-9);
        assert_eq!(side(Some(1.05), 1.0, noisy.spread()), 0);
        assert_eq!(side(Some(1.5), 1.0, noisy.spread()), 1);
        assert_eq!(side(None, 1.0, 0.0), 1);
    }

    #[test]
    fn variants_start_with_the_expert_on_cpus() {
        let app = program_description("cannon").unwrap();
        let v = variants(&app);
        assert_eq!(v[0].0, "expert on CPUs");
        assert!(!v[0].1.contains("Machine(GPU)"));
        assert!(v
            .iter()
            .any(|(n, t)| n.contains("rejects") && t.contains("F_order")));
        assert!(v.iter().any(|(n, t)| n.contains("CPU 0")
            && t.contains("IndexTaskMap")
            && t.contains("task_5")));
    }

    #[test]
    fn the_host_model_takes_the_measured_rates() {
        let host = Machine::preset("p100x4").unwrap();
        let m = host_model(
            &host,
            HostRates {
                dgemm_gflops: 8.0,
                copy_gbps: 10.0,
                node_copy_gbps: 15.0,
            },
        );
        let cpu = m.processor(ProcKind::Cpu).unwrap();
        assert!((cpu.gflops_fp64 * model::GEMM_EFF_HOST - 8.0).abs() < 1e-9);
        assert!(measure_copy_gbps(2) > 0.0);
    }
}
