//! `mapwright bench sim-validate`: the simulator against every measured
//! figure available (`mapwright_runtime::validate`): the ASI paper's
//! relative results and the wrapper logs' timing lines, with predicted vs
//! measured, their ratio, whether the ordering of variants matches, and
//! "N of M orderings match". With `--backend legion`, a second section
//! measured on this host (`validate::real`): per application with a real
//! Legion program, the expert on CPUs, Legion's default, poor mappers and
//! the optimizer's best, predicted against median real runs.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::anyhow;
use clap::Args;
use mapwright_runtime::app::App;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::validate::{self, real};

use super::backend_args::BenchBackend;
use crate::optimize::executors::SimExecutor;
use crate::optimize::proposers::search::SearchProposer;
use crate::optimize::runner::Runner;
use crate::optimize::{optimize, Config};

#[derive(Debug, Args)]
pub struct SimValidateArgs {
    /// Directory of the mapper-logging-wrapper logs (`cannon.log` is read
    /// for its `task_4` timing lines). Without it, or when the file is
    /// missing, the figures recorded from the shared logs are used.
    #[arg(long)]
    pub logs: Option<PathBuf>,
    /// `legion` adds the section measured on this host with real Legion.
    #[arg(long, value_enum, default_value = "sim")]
    pub backend: BenchBackend,
    /// Applications of the real-run section (default: every built program).
    #[arg(long, value_delimiter = ',')]
    pub apps: Vec<String>,
    /// Real runs per variant (median and min-max reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Iterations of the search that finds the optimizer's best (on the
    /// model of this host; 0 leaves that variant out).
    #[arg(long, default_value_t = 10)]
    pub iterations: usize,
    #[command(flatten)]
    pub legion: super::backend_args::LegionArgs,
}

pub fn run(args: SimValidateArgs) -> anyhow::Result<ExitCode> {
    let cannon = args
        .logs
        .as_ref()
        .and_then(|d| std::fs::read_to_string(d.join("cannon.log")).ok());
    let rows = validate::rows(cannon.as_deref());
    out!("{}", validate::render(&rows))?;
    if args.logs.is_some() && cannon.is_none() {
        errln!("mapwright: no cannon.log in the logs directory; recorded figures used");
    }
    if args.backend == BenchBackend::Legion {
        let rows = real_section(&args)?;
        out!("\n{}", validate::render(&rows))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The search's best mapper from `start` on the model of this host, if it
/// improves on the start.
fn optimizer_best(app: &App, machine: &Machine, start: &str, iterations: usize) -> Option<String> {
    let app = Arc::new(app.clone());
    let machine = Arc::new(machine.clone());
    let executor = SimExecutor {
        app: app.clone(),
        machine: machine.clone(),
        noise: 0.0,
    };
    let runner = Runner::new(&app, &machine, &executor);
    let config = Config::new(iterations, 0);
    let mut proposer = SearchProposer::new(0);
    let report = optimize(
        start,
        &runner,
        &mut proposer,
        &config,
        None,
        None,
        &mut |_| {},
    );
    (report.best_iteration > 0).then_some(report.best_mapper)
}

/// The applications to run on real Legion: `asked`, each of which must
/// have a built program, or every built-in that has one.
pub(super) fn programs_to_run(
    backend: &mapwright_runtime::backend::legion::LegionBackend,
    asked: &[String],
) -> anyhow::Result<Vec<String>> {
    let built = backend.config.programs();
    if asked.is_empty() {
        return Ok(App::builtin_names()
            .iter()
            .map(|s| s.to_string())
            .filter(|a| built.contains(a))
            .collect());
    }
    match asked.iter().find(|a| !built.contains(a)) {
        Some(name) => Err(anyhow!(
            "no real Legion program for `{name}` (built: {})",
            built.join(", ")
        )),
        None => Ok(asked.to_vec()),
    }
}

fn real_section(args: &SimValidateArgs) -> anyhow::Result<Vec<validate::Row>> {
    let backend = args.legion.backend(None)?;
    let (model, rates) =
        real::measured_host(&backend).map_err(|e| anyhow!("--backend legion: {e}"))?;
    let source = format!(
        "real Legion here ({} CPU proc.)",
        backend.config.cpus.max(1)
    );
    errln!(
        "this host: {} Legion CPU processors; measured dgemm {:.2} GFLOP/s per processor, \
         copy {:.1} GB/s on one core, {:.1} GB/s on all",
        backend.config.cpus,
        rates.dgemm_gflops,
        rates.copy_gbps,
        rates.node_copy_gbps
    );
    let apps = programs_to_run(&backend, &args.apps)?;
    let mut rows = Vec::new();
    for name in &apps {
        let Some(app) = real::program_description(name) else {
            errln!("{name}: no description of its program's size yet; left out");
            continue;
        };
        let mut variants = real::variants(&app);
        if args.iterations > 0 {
            if let Some(best) = variants
                .first()
                .and_then(|(_, start)| optimizer_best(&app, &model, start, args.iterations))
            {
                variants.push((
                    format!(
                        "optimizer's best (search, {} it. on the model)",
                        args.iterations
                    ),
                    best,
                ));
            }
        }
        let mut measured = Vec::new();
        for (what, mapper) in variants {
            let m = real::measure(&backend, &app, &model, &mapper, args.repeats);
            errln!(
                "{name:<10} {what:<48} {}",
                match (&m.failure, m.median()) {
                    (Some(f), _) => format!("fails ({f})"),
                    (None, Some(t)) => format!("median {t:.3} s over {} runs", m.times.len()),
                    (None, None) => "no run".into(),
                }
            );
            measured.push((what, mapper, m));
        }
        rows.extend(real::app_rows(&source, &app, &model, &measured));
        // Per task, for the baseline (the first variant that ran).
        if let Some((what, mapper, m)) = measured.iter().find(|(_, _, m)| m.failure.is_none()) {
            rows.extend(real::task_rows(&source, &app, &model, what, mapper, m));
        }
    }
    Ok(rows)
}
