//! `mapwright run FILE --app NAME|FILE --machine PRESET|FILE`: runs a mapper
//! on a backend and prints what the run printed, then a summary: time,
//! throughput, and both relative to the application's expert mapper run the
//! same way (same backend, machine, seed and noise). `--json` prints one
//! object instead; `--bench N` measures simulated evaluations per second.
//!
//! Exit status: 0 when the run succeeded, 1 when it failed (the failure is
//! the output), 2 for usage errors.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::bail;
use clap::Args;
use mapwright_runtime::app::App;
use mapwright_runtime::backend::{
    Backend, Metrics, MetricsBasis, Resolver, RunOutcome, RunRequest,
};
use mapwright_runtime::legion::measured::describe_task;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::sim::{simulate, SimBackend};
use serde_json::json;

use super::backend_args::{BackendArgs, BackendKind, RuntimeChoice};
use super::read_input;
use crate::project::target;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The mapper file (`-` for standard input).
    pub file: String,
    /// Built-in application name or application description (JSON).
    #[arg(long)]
    pub app: Option<String>,
    /// Machine preset (p100x4, h200, 2x4gpu, 4x4gpu, 16x4gpu) or machine
    /// description (JSON/TOML). Default: mapwright.toml, else p100x4.
    #[arg(long)]
    pub machine: Option<String>,
    #[command(flatten)]
    pub backend_args: BackendArgs,
    /// Seed of the measurement noise.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Relative measurement noise of the simulator (0.01 = 1 %).
    #[arg(long, default_value_t = 0.0)]
    pub noise: f64,
    /// Do not run the expert mapper for the normalized figure.
    #[arg(long)]
    pub no_normalize: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Measure: run N simulated evaluations and print evaluations per second.
    #[arg(long, value_name = "N")]
    pub bench: Option<u64>,
}

/// Mapping resolution for the sim backend: the runtime's own
/// (`grammar::analyze` then `resolve_mapping`).
pub(crate) fn resolver() -> Resolver {
    mapwright_runtime::sim::default_resolver()
}

/// A backend, and for the `cuda` one the simulator's prediction of the
/// same problem beside each outcome.
enum Runner {
    Plain(Box<dyn Backend>),
    #[cfg(feature = "cuda")]
    Cuda(Box<mapwright_runtime::cuda::CudaBackend>),
}

impl Runner {
    fn name(&self) -> &str {
        match self {
            Runner::Plain(b) => b.name(),
            #[cfg(feature = "cuda")]
            Runner::Cuda(b) => b.name(),
        }
    }

    /// The outcome and, for the `cuda` backend, the predicted seconds.
    fn run(&self, request: &RunRequest) -> (RunOutcome, Option<f64>) {
        match self {
            Runner::Plain(b) => (b.run(request), None),
            #[cfg(feature = "cuda")]
            Runner::Cuda(b) => {
                let r = b.run_detailed(
                    &request.mapper,
                    &request.app,
                    &request.machine,
                    request.seed,
                );
                (r.outcome, r.predicted_s)
            }
        }
    }
}

/// The `cuda` backend with its GPUs opened, or the message saying why not.
#[cfg(feature = "cuda")]
fn cuda_backend() -> Result<mapwright_runtime::cuda::CudaBackend, String> {
    let b = mapwright_runtime::cuda::CudaBackend::embedded();
    b.open().map_err(|e| e.to_string())?;
    Ok(b)
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    #[cfg(not(feature = "cuda"))]
    if args.backend_args.backend == Some(BackendKind::Cuda) {
        errln!(
            "error: the `cuda` backend runs real kernels on local GPUs and needs a mapwright \
             built with the `cuda` feature on a machine with an NVIDIA GPU; this build has no \
             CUDA support. Use `--backend sim` (the default) or `--backend command`."
        );
        return Ok(ExitCode::from(2));
    }
    #[cfg(feature = "cuda")]
    let cuda = if args.backend_args.backend == Some(BackendKind::Cuda) {
        match cuda_backend() {
            Ok(b) => Some(b),
            Err(e) => {
                errln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
        }
    } else {
        None
    };
    if !(args.noise.is_finite() && args.noise >= 0.0) {
        bail!("--noise must be a non-negative number");
    }
    let source = read_input(&args.file)?;
    let mapper_path = (args.file != "-").then(|| Path::new(&args.file));
    let (app, machine, project) =
        target(mapper_path, args.app.as_deref(), args.machine.as_deref())?;
    // The cuda backend maps onto this machine unless a machine is named.
    #[cfg(feature = "cuda")]
    let machine = match (
        &cuda,
        &args.machine,
        project.as_ref().and_then(|p| p.machine.as_ref()),
    ) {
        (Some(_), None, None) => mapwright_runtime::cuda::discover_machine()
            .map(|(m, _)| m)
            .unwrap_or(machine),
        _ => machine,
    };
    let named = args.machine.is_some() || project.as_ref().is_some_and(|p| p.machine.is_some());
    let machine = args
        .backend_args
        .machine_for(project.as_ref(), named, machine)?;
    let app = Arc::new(args.backend_args.app_for(project.as_ref(), app)?);
    let machine = Arc::new(machine);

    if let Some(n) = args.bench {
        return bench(&source, &app, &machine, n, &args, project.as_ref());
    }

    let backend = match args.backend_args.choice(project.as_ref())? {
        RuntimeChoice::Embedded => Runner::Plain(Box::new(SimBackend::new(resolver()))),
        RuntimeChoice::Remote(url) => Runner::Plain(Box::new(BackendArgs::remote(&url)?)),
        RuntimeChoice::Command => Runner::Plain(Box::new(
            args.backend_args.command_backend(project.as_ref())?,
        )),
        RuntimeChoice::Legion => Runner::Plain(Box::new(args.backend_args.legion_backend()?)),
        #[cfg(feature = "cuda")]
        RuntimeChoice::Cuda => match cuda {
            Some(b) => Runner::Cuda(Box::new(b)),
            None => unreachable!("opened above"),
        },
        #[cfg(not(feature = "cuda"))]
        RuntimeChoice::Cuda => unreachable!("handled above"),
    };
    let mut request = RunRequest::new(source, app.clone(), machine.clone());
    request.seed = args.seed;
    request.noise = args.noise;
    request.source_name = mapper_path.map(|p| p.display().to_string());
    let (outcome, predicted) = backend.run(&request);

    let expert = if args.no_normalize {
        None
    } else {
        app.expert_text().map(|text| {
            let mut r = request.clone();
            r.mapper = text.to_string();
            r.source_name = None;
            backend.run(&r)
        })
    };
    let expert_predicted = expert.as_ref().and_then(|e| e.1);
    let expert = expert.map(|e| e.0);
    let normalized = expert.as_ref().and_then(|e| outcome.normalized_to(e));

    if args.json {
        let expert_json = expert.as_ref().map(|e| {
            json!({
                "status": e.status,
                "elapsed_s": e.elapsed_s,
                "throughput": e.throughput,
            })
        });
        let mut v = json!({
            "status": outcome.status,
            "elapsed_s": outcome.elapsed_s,
            "throughput": outcome.throughput,
            "throughput_unit": outcome.throughput_unit,
            "normalized": normalized,
            "raw_output": outcome.raw_output,
            "backend": backend.name(),
            "app": app.name,
            "machine": machine.name,
            "seed": args.seed,
            "expert": expert_json,
            "metrics": outcome.metrics,
        });
        if args.backend_args.backend == Some(BackendKind::Cuda) {
            // The simulator's time for the problem the kernels ran.
            v["predicted_elapsed_s"] = json!(predicted);
            if let Some(e) = v.get_mut("expert").filter(|e| e.is_object()) {
                e["predicted_elapsed_s"] = json!(expert_predicted);
            }
        }
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        // Real Legion's start-up noise says one thing each: that, in one
        // line (the whole output stays in --json's raw_output).
        let (mut text, notes) = if backend.name() == "legion" {
            mapwright_runtime::backend::legion::quiet_startup(
                &outcome.raw_output,
                args.backend_args.legion.legion_cpus,
            )
        } else {
            (outcome.raw_output.clone(), Vec::new())
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for note in notes {
            text.push_str(&format!("mapwright: {note}\n"));
        }
        text.push_str(&summary(
            &outcome,
            expert.as_ref(),
            normalized,
            &args,
            &app,
            &machine,
            backend.name(),
        ));
        if let Some(p) = predicted {
            text.push_str(&format!(
                "\npredicted:  {p:.6} s (simulator, same problem size)"
            ));
        }
        text.push('\n');
        out!("{text}")?;
    }
    Ok(if outcome.status.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The lines after the raw output. They avoid the programs' own prefixes
/// (`ELAPSED TIME = `, `GFLOPS = `, `Execution time: `), so the output of
/// `mapwright run` parses the same as the program's.
fn summary(
    o: &RunOutcome,
    expert: Option<&RunOutcome>,
    normalized: Option<f64>,
    args: &RunArgs,
    app: &App,
    machine: &Machine,
    backend: &str,
) -> String {
    let mut s = String::from("---\n");
    s.push_str(&format!(
        "mapwright run: {} on {} ({backend} backend, seed {})\n",
        app.name, machine.name, args.seed
    ));
    s.push_str(&format!("status:     {}\n", o.status));
    if let Some(t) = o.elapsed_s {
        s.push_str(&format!("time:       {t:.6} s\n"));
    }
    if let Some(t) = o.throughput {
        s.push_str(&format!("throughput: {t:.3} {}\n", o.throughput_unit));
    }
    match (normalized, expert) {
        (Some(n), _) => s.push_str(&format!("normalized: {n:.3}x the expert mapper\n")),
        (None, Some(e)) if !e.status.is_ok() => s.push_str(&format!(
            "normalized: n/a (the expert mapper's run: {})\n",
            e.status
        )),
        (None, Some(_)) => s.push_str("normalized: n/a (this run failed)\n"),
        (None, None) if args.no_normalize => {}
        (None, None) => s.push_str("normalized: n/a (no expert mapper for this application)\n"),
    }
    if o.status.is_ok() && o.metrics.imbalance > 0.0 {
        s.push_str(&format!(
            "imbalance:  {:.2} (busiest processor / mean, {})\n",
            o.metrics.imbalance,
            o.metrics.basis.word()
        ));
    }
    if o.status.is_ok() && o.metrics.basis == MetricsBasis::Measured {
        s.push_str(&measured_summary(&o.metrics));
    }
    s.trim_end().to_string()
}

/// What Realm measured, for the human output: the tasks that took the
/// most time, the copies, and what the measurement covers.
fn measured_summary(m: &Metrics) -> String {
    let mut tasks: Vec<(&String, &f64)> = m.task_time_s.iter().collect();
    tasks.sort_by(|a, b| b.1.total_cmp(a.1));
    let mut s = String::from("measured:\n");
    for (name, _) in tasks.iter().take(5) {
        if let Some(t) = m.tasks.get(*name) {
            s.push_str(&format!("  {}\n", describe_task(name, t)));
        }
    }
    let copied: f64 = m.copy_bytes.values().sum();
    s.push_str(&format!(
        "  copies: {:.1} MB between memories, {:.1} ms of it with no task running\n",
        copied / 1e6,
        m.copy_time_s * 1e3
    ));
    s.push_str(&format!("  ({})\n", m.coverage));
    s
}

/// `--bench N`: N simulated evaluations of the decisions (simulation only),
/// then N of resolution plus simulation, on one thread (per core).
fn bench(
    source: &str,
    app: &Arc<App>,
    machine: &Arc<Machine>,
    n: u64,
    args: &RunArgs,
    project: Option<&crate::project::ProjectFile>,
) -> anyhow::Result<ExitCode> {
    if args.backend_args.choice(project)? != RuntimeChoice::Embedded {
        bail!("--bench measures the embedded simulator only (pass --backend sim)");
    }
    let n = n.max(1);
    let resolve = resolver();
    let decisions = resolve(source, app, machine);
    let mut sink = 0.0;
    let t0 = Instant::now();
    for i in 0..n {
        let o = simulate(
            &decisions,
            app,
            machine,
            args.seed.wrapping_add(i),
            args.noise,
        );
        sink += o.elapsed_s.unwrap_or(0.0);
    }
    let sim_s = t0.elapsed().as_secs_f64();
    let backend = SimBackend::new(resolve);
    let t1 = Instant::now();
    for i in 0..n {
        let o = backend.run_source(source, app, machine, args.seed.wrapping_add(i), args.noise);
        sink += o.elapsed_s.unwrap_or(0.0);
    }
    let full_s = t1.elapsed().as_secs_f64();
    let status = simulate(&decisions, app, machine, args.seed, args.noise).status;
    let per_s = |s: f64| n as f64 / s.max(1e-12);
    let text = if args.json {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({
                "app": app.name,
                "machine": machine.name,
                "evaluations": n,
                "status": status,
                "simulate_evals_per_s": per_s(sim_s),
                "resolve_and_simulate_evals_per_s": per_s(full_s),
                "checksum": sink,
            }))?
        )
    } else {
        format!(
            "bench: {} on {}, {n} evaluations per measurement, one thread (run status: {status})\n\
             \x20 simulate:            {:>10.0} evals/s ({:.1} us each)\n\
             \x20 resolve + simulate:  {:>10.0} evals/s ({:.1} us each)\n",
            app.name,
            machine.name,
            per_s(sim_s),
            sim_s / n as f64 * 1e6,
            per_s(full_s),
            full_s / n as f64 * 1e6
        )
    };
    out!("{text}")?;
    Ok(ExitCode::SUCCESS)
}
