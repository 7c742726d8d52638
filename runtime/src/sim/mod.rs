//! The `sim` backend: a deterministic model of a Legion run of an
//! application's resolved mapping decisions on a machine description.
//!
//! [`simulate`] is the core: decisions + application + machine + seed +
//! noise -> [`RunOutcome`] with the raw text a real run prints (success
//! lines or the exact failure text of `shared/apps/ERRORS.md`) and metrics.
//! [`SimBackend`] wraps it behind [`Backend`], resolving the mapper source
//! with a [`Resolver`] it is given.
//!
//! Modules:
//! - `model`     efficiency factors and runtime costs, each with its source.
//! - `topology`  dense processor/memory ids, copy routes and link resources.
//! - `plan`      decisions -> per-task units, argument memories, flows.
//! - `task_plan` what the plan holds per task and per flow.
//! - `engine`    failure checks and the steady-state iteration schedule.
//! - `gemm`      per-algorithm tile schedules of the six DISTAL matmuls.
//! - `output`    the programs' printed lines; seeded noise (splitmix64).
//! - [`reference`] hand-built decisions (default, all-CPU, zero-copy,
//!   expert-like) for tests, tables and benchmarks.
//!
//! The model in one paragraph: each launch point runs on its processor for
//! `max(flops / (peak x efficiency), bytes / (bandwidth x layout
//! efficiency))` plus launch costs; data a task needs where it is not is
//! copied over the link between the memories, copies sharing a link share
//! its bandwidth, and a launch ends with its slowest processor. See
//! `runtime/SIMULATION.md` for the constants and their sources.

pub(crate) mod engine;
pub(crate) mod gemm;
pub mod model;
pub(crate) mod output;
pub(crate) mod plan;
pub mod reference;
pub(crate) mod task_plan;
pub(crate) mod topology;

#[cfg(test)]
mod tests;

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::app::App;
use crate::backend::{Backend, Metrics, Resolver, RunOutcome, RunRequest, RunStatus};
use crate::decisions::Decisions;
use crate::machine::Machine;

pub use output::SplitMix64;

/// A failure as a real run reports it: stable kind and printed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: String,
    pub text: String,
}

impl Failure {
    pub fn new(kind: impl Into<String>, text: impl Into<String>) -> Failure {
        Failure {
            kind: kind.into(),
            text: text.into(),
        }
    }
}

impl From<Failure> for RunOutcome {
    fn from(f: Failure) -> RunOutcome {
        RunOutcome::failure(f.kind, f.text)
    }
}

/// Simulates one run of `decisions` for `app` on `machine`.
///
/// Deterministic: the same inputs and seed give the same outcome. `noise`
/// is the relative standard deviation of per-iteration measurement noise
/// (0 for none; clamped to [`model::MAX_NOISE`]).
pub fn simulate(
    decisions: &Decisions,
    app: &App,
    machine: &Machine,
    seed: u64,
    noise: f64,
) -> RunOutcome {
    scheduled(decisions, app, machine, |plan, measured| {
        finish(plan, measured, seed, noise)
    })
    .unwrap_or_else(RunOutcome::from)
}

/// Plans and schedules one run of `decisions` for `app` on `machine` and
/// hands the plan and the scheduled iteration to `then`, or says how the
/// run fails before it is scheduled.
fn scheduled<T>(
    decisions: &Decisions,
    app: &App,
    machine: &Machine,
    then: impl FnOnce(&plan::Plan, engine::Measured) -> T,
) -> Result<T, Failure> {
    if let Some(f) = &decisions.fatal {
        return Err(Failure::new(f.kind.clone(), f.raw_output.clone()));
    }
    // The problem as it runs on this machine, as resolution saw it.
    let scaled = app.on_machine(machine);
    let topo = topology::Topo::new(machine);
    let plan = plan::Plan::build(decisions, &scaled, topo)?;
    let usage = engine::check(&plan)?;
    let measured = engine::schedule(&plan, usage);
    Ok(then(&plan, measured))
}

/// Per timed task, the model's time of one point-task run on its
/// processor, seconds (its compute and memory access, without the copies
/// that bring its data), for `decisions` of `app` on `machine`: what a real
/// run's measured mean per run (`Metrics::tasks`) is held against.
pub fn point_times(
    decisions: &Decisions,
    app: &App,
    machine: &Machine,
) -> Result<std::collections::BTreeMap<String, f64>, Failure> {
    scheduled(decisions, app, machine, |plan, m| {
        plan.tasks
            .iter()
            .enumerate()
            .filter(|(i, _)| m.task_execs[*i] > 0)
            .map(|(i, t)| {
                (
                    t.task.name.clone(),
                    m.task_compute_s[i] / m.task_execs[i] as f64,
                )
            })
            .collect()
    })
}

/// Turns a measured iteration into the printed output and metrics.
fn finish(plan: &plan::Plan, m: engine::Measured, seed: u64, noise: f64) -> RunOutcome {
    let app = plan.app;
    let topo = &plan.topo;
    let style = output::Style::of(app);
    let iterations = app.timed_iterations.max(1) as usize;
    let factors = output::noise_factors(seed, noise, iterations);
    let iters: Vec<f64> = factors.iter().map(|f| f * m.iteration_s).collect();
    let untimed = f64::from(app.untimed_iterations) * m.iteration_s;
    let (text, elapsed, throughput) = output::success(
        style,
        &iters,
        m.flops,
        m.setup_s,
        untimed,
        machine_nodes(plan),
    );

    let scale = iterations as f64;
    let mut metrics = Metrics {
        basis: crate::backend::MetricsBasis::Model,
        ..Metrics::default()
    };
    for (t, s) in plan.tasks.iter().zip(&m.task_s) {
        if *s > 0.0 {
            metrics.task_time_s.insert(t.task.name.clone(), s * scale);
        }
    }
    for (res, bytes) in &m.copy_bytes {
        *metrics
            .copy_bytes
            .entry(topo.resource_label(*res))
            .or_insert(0.0) += bytes * scale;
    }
    // Imbalance over the processors of the kind doing most of the timed
    // work (idle processors of that kind count): one slow kind's spread is
    // what bounds the launches.
    let kinds = engine::timed_kinds(plan);
    let mut per_kind: Vec<(crate::machine::ProcKind, Vec<f64>)> =
        kinds.iter().map(|k| (*k, Vec::new())).collect();
    for (p, s) in m.busy_s.iter().enumerate() {
        let (_, kind, _) = topo.proc_info(p);
        if *s > 0.0 {
            metrics.proc_busy_s.insert(topo.proc_label(p), s * scale);
        }
        if let Some(e) = per_kind.iter_mut().find(|e| e.0 == kind) {
            e.1.push(*s);
        }
    }
    let busiest = per_kind.iter().max_by(|a, b| {
        let sa: f64 = a.1.iter().sum();
        let sb: f64 = b.1.iter().sum();
        sa.total_cmp(&sb)
    });
    metrics.imbalance = busiest.map_or(1.0, |(_, busy)| {
        let mean = busy.iter().sum::<f64>() / busy.len().max(1) as f64;
        let max = busy.iter().copied().fold(0.0, f64::max);
        if mean > 0.0 {
            max / mean
        } else {
            1.0
        }
    });
    metrics.copy_time_s = m.copy_s * scale;
    for (mem, bytes) in m.mem_bytes.iter().enumerate() {
        if *bytes > 0 {
            metrics
                .memory_bytes
                .insert(topo.mem_label(mem), *bytes as f64);
        }
    }
    RunOutcome {
        status: RunStatus::Ok,
        elapsed_s: Some(elapsed),
        throughput: Some(throughput),
        throughput_unit: style.unit().to_string(),
        raw_output: text,
        metrics,
    }
}

/// The node count the program prints: Legion's `DEFAULT_TUNABLE_NODE_COUNT`,
/// the number of address spaces, so with several ranks per node
/// (`App::ranks_per_node`) every rank counts (johnson on one 4-GPU node run
/// one rank per GPU prints "On 4 nodes"). The physical topology the model
/// schedules on does not change: ranks of one node share its links.
fn machine_nodes(plan: &plan::Plan) -> u32 {
    let ranks = plan.app.ranks_per_node.on(plan.topo.machine);
    plan.topo.nodes().saturating_mul(ranks)
}

/// The crate's own mapping resolution as a [`Resolver`]: parse and check
/// the source ([`mapwright_grammar::analyze`]), then
/// [`crate::resolve_mapping::resolve_mapping`].
pub fn default_resolver() -> Resolver {
    std::sync::Arc::new(|source: &str, app: &App, machine: &Machine| {
        let analysis = mapwright_grammar::analyze(source);
        crate::resolve_mapping::resolve_mapping(&analysis, source, app, machine)
    })
}

/// The embedded simulator as a [`Backend`]: resolves the request's mapper
/// with the resolver it was built with, then [`simulate`]s the decisions.
#[derive(Clone)]
pub struct SimBackend {
    resolver: Resolver,
}

impl SimBackend {
    /// A simulator that resolves mappers with `resolver` (normally
    /// `resolve_mapping` over the grammar's analysis).
    pub fn new(resolver: Resolver) -> SimBackend {
        SimBackend { resolver }
    }

    /// A simulator that resolves mappers with [`default_resolver`].
    pub fn embedded() -> SimBackend {
        SimBackend::new(default_resolver())
    }

    /// Resolves and simulates in one call, without a [`RunRequest`].
    pub fn run_source(
        &self,
        mapper: &str,
        app: &App,
        machine: &Machine,
        seed: u64,
        noise: f64,
    ) -> RunOutcome {
        // A panic in resolution or simulation is a bug, but it must not take
        // a service or the language server down: report it as a failed run.
        let result = catch_unwind(AssertUnwindSafe(|| {
            let decisions = (self.resolver)(mapper, app, machine);
            simulate(&decisions, app, machine, seed, noise)
        }));
        result.unwrap_or_else(|_| {
            RunOutcome::failure(
                "internal_error",
                "mapwright: the simulator failed internally on this mapper (a bug; please report it)\n",
            )
        })
    }
}

impl std::fmt::Debug for SimBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimBackend").finish_non_exhaustive()
    }
}

impl Backend for SimBackend {
    fn name(&self) -> &str {
        "sim"
    }

    fn run(&self, request: &RunRequest) -> RunOutcome {
        self.run_source(
            &request.mapper,
            &request.app,
            &request.machine,
            request.seed,
            request.noise,
        )
    }
}
