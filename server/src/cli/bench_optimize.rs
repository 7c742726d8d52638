//! `mapwright bench optimize`: every proposer on every built-in application,
//! from one or many starting mappers, several seeds; the targets
//! checked on the figures; and where a proposer beats the expert mapper, by
//! how much and through which decisions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use mapwright_runtime::app::App;
use mapwright_runtime::validate::real;

use super::backend_args::BenchBackend;
use super::optimize::{make_proposer, LlmArgs, ProposerKind};
use crate::autoguide::FeedbackMode;
use crate::optimize::executors::{BackendExecutor, SimExecutor};
use crate::optimize::plot::{trajectory_svg, Series};
use crate::optimize::runner::{Execute, Runner};
use crate::optimize::space::parameters;
use crate::optimize::{optimize, Config};

#[derive(Debug, Args)]
pub struct BenchOptimizeArgs {
    /// `legion`: every candidate runs as the application's real Legion
    /// program on this host (the machine is this host; the expert is the
    /// expert on CPUs, measured `--expert-repeats` times).
    #[arg(long, value_enum, default_value = "sim")]
    pub backend: BenchBackend,
    #[command(flatten)]
    pub legion: super::backend_args::LegionArgs,
    /// Real runs of the expert whose median is 1.0x (`--backend legion`).
    #[arg(long, default_value_t = 3)]
    pub expert_repeats: usize,
    /// Applications (default: all nine built-ins).
    #[arg(long, value_delimiter = ',')]
    pub apps: Vec<String>,
    #[arg(long, default_value = "p100x4")]
    pub machine: String,
    /// Proposers to compare.
    #[arg(long, value_delimiter = ',', default_values_t = vec!["search".to_string(), "random".to_string(), "scalar".to_string()])]
    pub proposers: Vec<String>,
    /// Seeds per (start, proposer, app).
    #[arg(long, default_value_t = 3)]
    pub seeds: u64,
    #[arg(long, default_value_t = 10)]
    pub iterations: usize,
    /// Iterations of the long scalar-tuner run (0 to skip).
    #[arg(long, default_value_t = 1000)]
    pub scalar_long: usize,
    /// Feedback modes for the proposers that read AutoGuide (search, llm,
    /// hybrid): several modes give the ablation rows.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = vec![FeedbackMode::Suggest])]
    pub feedback: Vec<FeedbackMode>,
    /// Run every proposer from every `.mapper` file in this folder (default:
    /// from the naive mapper `Task * GPU,CPU;` alone). `bench/starts/` holds
    /// the shipped set.
    #[arg(long)]
    pub starts: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    /// Draw every run's trajectory into one SVG.
    #[arg(long)]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// The mapper a benchmark run starts from without `--starts`: what a user
/// writes first.
pub const NAIVE_MAPPER: &str =
    "# A first mapper: everything on the GPU where possible.\nTask * GPU,CPU;\n";

/// One (start, proposer, feedback, iterations, app) over the seeds.
#[derive(Debug, serde::Serialize)]
struct BenchRow {
    start: String,
    proposer: String,
    /// `-` for proposers that see only the score.
    feedback: String,
    app: String,
    iterations: usize,
    mean: f64,
    worst: f64,
    best: f64,
    /// The best normalized figure of each seed's run, seed 0 first.
    per_seed: Vec<f64>,
    success_rate: f64,
    /// Proposals that are mappers that compile (an LLM's answer could be
    /// used and checks).
    valid_share: f64,
    parameter_entropy: f64,
    feedback_sensitivity: f64,
    /// `llm` and `hybrid`: the LLM's turns over all seeds, (answers that
    /// became a mapper that compiles, turns).
    llm_turns: Option<(usize, usize)>,
}

/// A run whose best mapper beats the expert mapper.
#[derive(Debug, serde::Serialize)]
struct Headroom {
    start: String,
    app: String,
    proposer: String,
    iterations: usize,
    seed: u64,
    normalized: f64,
    /// `parameter: expert's value -> the best mapper's value`, for every
    /// decision in which the two differ.
    differences: Vec<String>,
}

/// The expert's measured score, 1.0x for its application: the median of
/// its runs, and their spread.
#[derive(Debug, serde::Serialize)]
struct ExpertScore {
    app: String,
    /// Runs measured (one on a deterministic model).
    runs: usize,
    median: f64,
    min: f64,
    max: f64,
}

impl ExpertScore {
    /// Half the min-max range relative to the median: a run figure within
    /// 1.0x +- this is inside the expert's own noise.
    fn spread(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / 2.0 / self.median
        } else {
            0.0
        }
    }
}

/// The name a feedback mode has on the command line and in the table.
fn feedback_name(mode: FeedbackMode) -> &'static str {
    match mode {
        FeedbackMode::ExecutionOnly => "execution-only",
        FeedbackMode::Explain => "explain",
        FeedbackMode::Suggest => "suggest",
    }
}

/// The starting mappers: every `.mapper` file in `dir`, by name, or the
/// naive mapper alone.
fn load_starts(dir: Option<&Path>) -> anyhow::Result<Vec<(String, String)>> {
    let Some(dir) = dir else {
        return Ok(vec![("naive".into(), NAIVE_MAPPER.into())]);
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the starts folder {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mapper"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(anyhow!("no .mapper file in {}", dir.display()));
    }
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok((name, text))
        })
        .collect()
}

/// The decisions in which `best` differs from `expert`, as `explain` names
/// them (`proc:TASK`, `mem:TASK:REGION`, `layout:TASK:REGION`, `place:TASK`).
fn decision_differences(runner: &Runner<'_>, expert: &str, best: &str) -> Vec<String> {
    let (Some(e), Some(b)) = (runner.decisions(expert), runner.decisions(best)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // What `parameters` leaves out: backpressure and instance collection
    // (few, and often what decides a GEMM app), listed first.
    for t in &b.tasks {
        let Some(x) = e.tasks.iter().find(|x| x.task == t.task) else {
            continue;
        };
        if x.instance_limit != t.instance_limit {
            let show = |l: Option<u64>| l.map_or("none".to_string(), |n| n.to_string());
            out.push(format!(
                "instance_limit:{}: {} -> {}",
                t.task,
                show(x.instance_limit),
                show(t.instance_limit)
            ));
        }
        if x.collect_memory != t.collect_memory {
            out.push(format!(
                "collect:{}: {} -> {}",
                t.task, x.collect_memory, t.collect_memory
            ));
        }
    }
    let (e, b) = (parameters(&e), parameters(&b));
    for (key, value) in &b {
        let before = e.get(key).map(String::as_str).unwrap_or("-");
        if before != value {
            let short = |v: &str| {
                if v.len() > 24 {
                    format!("{}...", &v[..v.floor_char_boundary(21)])
                } else {
                    v.to_string()
                }
            };
            out.push(format!("{key}: {} -> {}", short(before), short(value)));
        }
    }
    out
}

/// The median of `xs` (upper median for an even count).
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The expert's score over `repeats` runs (one on a deterministic model),
/// or how its run ended.
fn measured_expert(
    runner: &Runner<'_>,
    app: &str,
    expert: &str,
    repeats: usize,
) -> Result<ExpertScore, String> {
    let mut scores = Vec::new();
    for seed in 0..repeats.max(1) as u64 {
        let e = runner.evaluate(expert, seed);
        if !e.ok() {
            return Err(e.status.clone());
        }
        scores.push(e.score());
    }
    Ok(ExpertScore {
        app: app.to_string(),
        runs: scores.len(),
        median: median(&scores),
        min: scores.iter().copied().fold(f64::INFINITY, f64::min),
        max: scores.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

pub fn bench(args: BenchOptimizeArgs) -> anyhow::Result<ExitCode> {
    let here = match args.backend {
        BenchBackend::Legion | BenchBackend::HostModel => Some(
            args.legion
                .backend(None)
                .map_err(|e| anyhow!("--backend legion: {e}"))?,
        ),
        BenchBackend::Sim => None,
    };
    let machine = Arc::new(match (&here, args.backend) {
        (Some(b), BenchBackend::HostModel) => {
            real::measured_host(b)
                .map_err(|e| anyhow!("--backend host-model: {e}"))?
                .0
        }
        (Some(b), _) => b
            .host_machine()
            .map_err(|e| anyhow!("--backend legion: {e}"))?,
        (None, _) => crate::project::load_machine(&args.machine, None)?,
    });
    // Real runs (the simulator on this host's model predicts them).
    let legion = here.filter(|_| args.backend == BenchBackend::Legion);
    let apps: Vec<String> = if args.apps.is_empty() {
        App::builtin_names().iter().map(|s| s.to_string()).collect()
    } else {
        args.apps.clone()
    };
    let starts = load_starts(args.starts.as_deref())?;
    // (proposer, iterations, feedback mode or None for score-only proposers)
    let mut plan: Vec<(ProposerKind, usize, Option<FeedbackMode>)> = Vec::new();
    for name in &args.proposers {
        let kind =
            ProposerKind::from_str(name, true).map_err(|_| anyhow!("unknown proposer `{name}`"))?;
        if kind.reads_feedback() {
            for mode in &args.feedback {
                plan.push((kind, args.iterations, Some(*mode)));
            }
        } else {
            plan.push((kind, args.iterations, None));
        }
    }
    if args.scalar_long > 0 {
        plan.push((ProposerKind::Scalar, args.scalar_long, None));
    }
    let mut rows = Vec::new();
    let mut series = Vec::new();
    let mut headroom: Vec<Headroom> = Vec::new();
    let mut experts: Vec<ExpertScore> = Vec::new();
    for app_name in &apps {
        let app = Arc::new(match args.backend {
            // The program as built: CPU variants, its own problem size.
            BenchBackend::Legion | BenchBackend::HostModel => {
                real::program_description(app_name)
                    .ok_or_else(|| anyhow!("no real Legion program for `{app_name}`"))?
            }
            BenchBackend::Sim => crate::project::load_app(app_name, None)?,
        });
        let executor: Box<dyn Execute> = match &legion {
            Some(b) => Box::new(BackendExecutor {
                backend: Box::new(b.clone()),
                app: app.clone(),
                machine: machine.clone(),
                cancel: None,
            }),
            None => Box::new(SimExecutor {
                app: app.clone(),
                machine: machine.clone(),
                noise: 0.0,
            }),
        };
        let runner = Runner::new(&app, &machine, executor.as_ref());
        let builtin_expert = mapwright_runtime::app::expert_mapper_text(app_name).unwrap_or("");
        let expert_text = match args.backend {
            BenchBackend::Legion | BenchBackend::HostModel => real::on_cpus(builtin_expert),
            BenchBackend::Sim => builtin_expert.to_string(),
        };
        // Real runs are noisy: the expert's median over repeats is 1.0x.
        let repeats = if legion.is_some() {
            args.expert_repeats
        } else {
            1
        };
        let expert = match measured_expert(&runner, app_name, &expert_text, repeats) {
            Ok(score) => {
                let median = score.median;
                experts.push(score);
                median
            }
            Err(status) if args.backend != BenchBackend::Sim => {
                errln!(
                    "{app_name}: left out: its expert on CPUs does not run on {} ({status}; its \
                     placement functions assume more processors than --legion-cpus {})",
                    if legion.is_some() {
                        "this host"
                    } else {
                        "this host's model"
                    },
                    args.legion.legion_cpus
                );
                continue;
            }
            Err(_) => {
                return Err(anyhow!(
                    "the expert mapper of {app_name} does not run on {}",
                    machine.name
                ))
            }
        };
        let expert_text = expert_text.as_str();
        for (start_name, start_text) in &starts {
            for (kind, iterations, mode) in &plan {
                let proposer_name = kind.name();
                let feedback = mode.map(feedback_name).unwrap_or("-");
                let mut finals = Vec::new();
                let mut successes = Vec::new();
                let mut valid = Vec::new();
                let mut entropies = Vec::new();
                let mut sensitivities = Vec::new();
                let mut llm_turns: Option<(usize, usize)> = None;
                for seed in 0..args.seeds {
                    let mut proposer = make_proposer(*kind, seed, &args.llm, None)?;
                    let config = Config {
                        iterations: *iterations,
                        time_budget: None,
                        seed,
                        feedback_mode: mode.unwrap_or(FeedbackMode::Suggest),
                        run_dir: None,
                        cancel: Arc::new(AtomicBool::new(false)),
                        as_block: false,
                        // The benchmark compares proposers; nothing is applied.
                        min_gain: crate::optimize::verdict::DEFAULT_MIN_GAIN,
                        // Real runs are noisy: the best candidate runs again
                        // and its median counts (below).
                        repeats: if legion.is_some() {
                            crate::optimize::verdict::DEFAULT_REPEATS
                        } else {
                            1
                        },
                        screen: None,
                    };
                    let report = optimize(
                        start_text,
                        &runner,
                        proposer.as_mut(),
                        &config,
                        Some(expert),
                        None,
                        &mut |_| {},
                    );
                    // On real runs the best candidate's median over its
                    // repeated runs, not its luckiest one.
                    let best = report
                        .verdict
                        .as_ref()
                        .filter(|v| !v.best_runs.is_empty())
                        .map(|v| median(&v.best_runs) / expert)
                        .or(report.best_normalized)
                        .unwrap_or(0.0);
                    finals.push(best);
                    successes.push(report.success_rate);
                    valid.push(crate::optimize::metrics::valid_share(&report.records));
                    entropies.push(report.parameter_entropy);
                    sensitivities.push(report.feedback_sensitivity);
                    if let Some((v, n)) =
                        crate::optimize::metrics::llm_turns(proposer_name, &report.records)
                    {
                        let (sv, sn) = llm_turns.unwrap_or((0, 0));
                        llm_turns = Some((sv + v, sn + n));
                    }
                    // Beats the expert by more than the simulator's rounding.
                    if best > 1.0005 {
                        headroom.push(Headroom {
                            start: start_name.clone(),
                            app: app_name.clone(),
                            proposer: proposer_name.to_string(),
                            iterations: *iterations,
                            seed,
                            normalized: best,
                            differences: decision_differences(
                                &runner,
                                expert_text,
                                &report.best_mapper,
                            ),
                        });
                    }
                    if *iterations == args.iterations && args.report.is_some() {
                        let mut label = format!("{proposer_name}/{app_name}/s{seed}");
                        if let Some(m) = mode.filter(|_| args.feedback.len() > 1) {
                            label =
                                format!("{proposer_name}[{}]/{app_name}/s{seed}", feedback_name(m));
                        }
                        if starts.len() > 1 {
                            label = format!("{start_name}: {label}");
                        }
                        series.push(Series {
                            label,
                            values: report.trajectory.clone(),
                        });
                    }
                }
                let n = finals.len().max(1) as f64;
                let row = BenchRow {
                    start: start_name.clone(),
                    proposer: proposer_name.to_string(),
                    feedback: feedback.to_string(),
                    app: app_name.clone(),
                    iterations: *iterations,
                    mean: finals.iter().sum::<f64>() / n,
                    worst: finals.iter().copied().fold(f64::INFINITY, f64::min),
                    best: finals.iter().copied().fold(0.0, f64::max),
                    per_seed: finals.clone(),
                    success_rate: successes.iter().sum::<f64>() / n,
                    valid_share: valid.iter().sum::<f64>() / n,
                    parameter_entropy: entropies.iter().sum::<f64>() / n,
                    feedback_sensitivity: sensitivities.iter().sum::<f64>() / n,
                    llm_turns,
                };
                if !args.json {
                    errln!(
                        "{:<28} {:<8} {:<14} {:>5} it  {:<10} mean {:.3}x  worst {:.3}x  best {:.3}x  seeds {}",
                        row.start,
                        row.proposer,
                        row.feedback,
                        row.iterations,
                        row.app,
                        row.mean,
                        row.worst,
                        row.best,
                        seeds_text(&row.per_seed)
                    );
                }
                rows.push(row);
            }
        }
    }
    if let Some(path) = &args.report {
        std::fs::write(
            path,
            trajectory_svg(
                &format!("mapwright bench optimize on {}", machine.name),
                &series,
                "expert",
            ),
        )?;
    }
    if args.json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            rows: &'a [BenchRow],
            headroom: &'a [Headroom],
            experts: &'a [ExpertScore],
        }
        outln!(
            "{}",
            serde_json::to_string(&Out {
                rows: &rows,
                headroom: &headroom,
                experts: &experts
            })?
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    print_rows(&rows, &args, &machine.name, starts.len())?;
    if experts.iter().any(|e| e.runs > 1) {
        outln!("\nthe experts (1.0x): median score over repeated runs, min-max, and the half-range a figure must exceed to differ from 1.0x:")?;
        for e in &experts {
            outln!(
                "{:<10} {:>10.4} over {} runs, {:.4}-{:.4} (+-{:.1} %)",
                e.app,
                e.median,
                e.runs,
                e.min,
                e.max,
                100.0 * e.spread()
            )?;
        }
    }
    let by_start = summarize(&rows, true);
    if starts.len() > 1 {
        outln!("\nper start, over apps and seeds (normalized to each app's expert mapper):")?;
        outln!(
            "{:<28} {:<8} {:<14} {:>6} {:>8} {:>8} {:>8}",
            "start",
            "proposer",
            "feedback",
            "iters",
            "mean",
            "worst",
            "best"
        )?;
        for s in &by_start {
            outln!(
                "{:<28} {:<8} {:<14} {:>6} {:>7.3}x {:>7.3}x {:>7.3}x",
                s.start,
                s.proposer,
                s.feedback,
                s.iterations,
                s.mean,
                s.worst,
                s.best
            )?;
        }
    }
    outln!()?;
    let overall = summarize(&rows, false);
    for s in &overall {
        outln!(
            "{:<8} {:<14} {:>6} iterations: mean over starts and apps {:.3}x, worst start/app/seed {:.3}x, best {:.3}x",
            s.proposer, s.feedback, s.iterations, s.mean, s.worst, s.best
        )?;
    }
    print_targets(&overall, args.iterations, args.scalar_long)?;
    print_hybrid_against_search(&rows)?;
    print_headroom(&headroom)?;
    Ok(ExitCode::SUCCESS)
}

fn print_rows(
    rows: &[BenchRow],
    args: &BenchOptimizeArgs,
    machine: &str,
    starts: usize,
) -> anyhow::Result<()> {
    outln!(
        "\nnormalized throughput vs the expert mapper after N iterations ({} seeds, machine {machine}):",
        args.seeds
    )?;
    let start_col = |s: &str| {
        if starts > 1 {
            format!("{s:<28} ")
        } else {
            String::new()
        }
    };
    outln!(
        "{}{:<8} {:<14} {:>6}  {:<10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}",
        start_col("start"),
        "proposer",
        "feedback",
        "iters",
        "app",
        "mean",
        "worst",
        "best",
        "success",
        "valid",
        "entropy",
        "sensit.",
        "LLM valid"
    )?;
    for r in rows {
        outln!(
            "{}{:<8} {:<14} {:>6}  {:<10} {:>7.3}x {:>7.3}x {:>7.3}x {:>7.0}% {:>7.0}% {:>8.2} {:>8.2} {:>9}",
            start_col(&r.start),
            r.proposer,
            r.feedback,
            r.iterations,
            r.app,
            r.mean,
            r.worst,
            r.best,
            r.success_rate * 100.0,
            r.valid_share * 100.0,
            r.parameter_entropy,
            r.feedback_sensitivity,
            r.llm_turns
                .map_or("-".to_string(), |(v, n)| format!("{v}/{n}"))
        )?;
    }
    Ok(())
}

/// Rows averaged over the applications (and, unless `per_start`, the starts).
#[derive(Debug, PartialEq)]
struct Summary {
    start: String,
    proposer: String,
    feedback: String,
    iterations: usize,
    /// Mean over (start, app) of the per-seed mean.
    mean: f64,
    /// Worst single (start, app, seed).
    worst: f64,
    /// Best single (start, app, seed).
    best: f64,
}

fn summarize(rows: &[BenchRow], per_start: bool) -> Vec<Summary> {
    let key = |r: &BenchRow| {
        (
            if per_start {
                r.start.clone()
            } else {
                String::new()
            },
            r.proposer.clone(),
            r.feedback.clone(),
            r.iterations,
        )
    };
    let mut groups: BTreeMap<(String, String, String, usize), Vec<&BenchRow>> = BTreeMap::new();
    for r in rows {
        groups.entry(key(r)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|((start, proposer, feedback, iterations), sel)| Summary {
            mean: sel.iter().map(|r| r.mean).sum::<f64>() / sel.len().max(1) as f64,
            worst: sel.iter().map(|r| r.worst).fold(f64::INFINITY, f64::min),
            best: sel.iter().map(|r| r.best).fold(0.0, f64::max),
            start,
            proposer,
            feedback,
            iterations,
        })
        .collect()
}

/// The targets, checked on this run's figures: from every start, search
/// reaches 0.95x the expert on every app within `iterations`, and its mean
/// over starts and apps is within 2 % of the scalar tuner's after
/// `scalar_long` iterations.
fn print_targets(overall: &[Summary], iterations: usize, scalar_long: usize) -> anyhow::Result<()> {
    let find = |p: &str, f: &str, it: usize| {
        overall
            .iter()
            .find(|s| s.proposer == p && s.feedback == f && s.iterations == it)
    };
    let Some(search) = find("search", "suggest", iterations) else {
        return Ok(());
    };
    outln!(
        "\ntarget: search (suggest) >= 0.95x on every start, app and seed within {iterations} iterations: worst {:.3}x -> {}",
        search.worst,
        if search.worst >= 0.95 { "met" } else { "NOT met" }
    )?;
    if let Some(scalar) = find("scalar", "-", scalar_long).filter(|_| scalar_long > 0) {
        let ratio = search.mean / scalar.mean.max(f64::MIN_POSITIVE);
        outln!(
            "target: search@{iterations} mean within 2% of scalar@{scalar_long} mean: {:.3}x / {:.3}x = {ratio:.3} -> {}",
            search.mean,
            scalar.mean,
            if ratio >= 0.98 { "met" } else { "NOT met" }
        )?;
    }
    Ok(())
}

/// `1.046 1.000 1.046`: each seed's best, seed 0 first.
fn seeds_text(per_seed: &[f64]) -> String {
    per_seed
        .iter()
        .map(|v| format!("{v:.3}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where `hybrid` ends below `search` with the same seed, start, feedback
/// and iterations: (app, seed, hybrid's best, search's best), and how many
/// (app, seed) pairs were compared.
fn hybrid_below_search(rows: &[BenchRow]) -> (Vec<(String, u64, f64, f64)>, usize) {
    let mut below = Vec::new();
    let mut compared = 0;
    for h in rows.iter().filter(|r| r.proposer == "hybrid") {
        let Some(s) = rows.iter().find(|r| {
            r.proposer == "search"
                && r.start == h.start
                && r.feedback == h.feedback
                && r.iterations == h.iterations
                && r.app == h.app
        }) else {
            continue;
        };
        for (seed, (hv, sv)) in h.per_seed.iter().zip(&s.per_seed).enumerate() {
            compared += 1;
            // Below by more than the simulator's rounding.
            if *hv < sv - 5e-4 {
                below.push((h.app.clone(), seed as u64, *hv, *sv));
            }
        }
    }
    (below, compared)
}

/// The target for the LLM: `hybrid` reaches at least what `search`
/// alone reaches, on every app and seed (each pair with the same seed).
fn print_hybrid_against_search(rows: &[BenchRow]) -> anyhow::Result<()> {
    let (below, compared) = hybrid_below_search(rows);
    if compared == 0 {
        return Ok(());
    }
    outln!(
        "
target: hybrid >= search on every app and seed (same seed): {}/{compared} -> {}",
        compared - below.len(),
        if below.is_empty() { "met" } else { "NOT met" }
    )?;
    for (app, seed, h, s) in &below {
        outln!("  {app}, seed {seed}: hybrid {h:.3}x < search {s:.3}x")?;
    }
    Ok(())
}

/// Where a proposer beat the expert mapper: the largest margin per app, and
/// the decisions that differ from the expert's.
fn print_headroom(headroom: &[Headroom]) -> anyhow::Result<()> {
    outln!("\nheadroom above the expert mapper (best normalized > 1.0005):")?;
    if headroom.is_empty() {
        outln!("  none: no proposer beat the expert mapper on any app from any start")?;
        return Ok(());
    }
    let mut best_per_app: BTreeMap<&str, &Headroom> = BTreeMap::new();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for h in headroom {
        *count.entry(&h.app).or_default() += 1;
        let e = best_per_app.entry(&h.app).or_insert(h);
        if h.normalized > e.normalized {
            *e = h;
        }
    }
    for (app, h) in best_per_app {
        outln!(
            "  {app}: {:.3}x ({} runs above 1.0x; best: {} from {}, {} iterations, seed {})",
            h.normalized,
            count[app],
            h.proposer,
            h.start,
            h.iterations,
            h.seed
        )?;
        for d in h.differences.iter().take(8) {
            outln!("      {d}")?;
        }
        if h.differences.len() > 8 {
            outln!("      ... {} more", h.differences.len() - 8)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(start: &str, app: &str, mean: f64, worst: f64) -> BenchRow {
        BenchRow {
            start: start.into(),
            proposer: "search".into(),
            feedback: "suggest".into(),
            app: app.into(),
            iterations: 10,
            mean,
            worst,
            best: mean,
            per_seed: vec![worst, mean],
            success_rate: 1.0,
            valid_share: 1.0,
            parameter_entropy: 0.0,
            feedback_sensitivity: 0.0,
            llm_turns: None,
        }
    }

    #[test]
    fn summaries_average_over_apps_and_keep_the_worst() {
        let rows = vec![
            row("a", "cannon", 1.0, 1.0),
            row("a", "circuit", 0.5, 0.25),
            row("b", "cannon", 0.9, 0.8),
        ];
        let per_start = summarize(&rows, true);
        assert_eq!(per_start.len(), 2);
        assert_eq!(per_start[0].start, "a");
        assert!((per_start[0].mean - 0.75).abs() < 1e-12);
        assert_eq!(per_start[0].worst, 0.25);
        let overall = summarize(&rows, false);
        assert_eq!(overall.len(), 1);
        assert!((overall[0].mean - 0.8).abs() < 1e-12);
        assert_eq!(overall[0].worst, 0.25);
        assert_eq!(overall[0].best, 1.0);
    }

    #[test]
    fn hybrid_is_compared_with_search_seed_by_seed() {
        let mut rows = vec![row("a", "cannon", 1.0, 1.0), row("a", "circuit", 1.0, 1.0)];
        rows[0].per_seed = vec![1.0, 1.046, 0.9];
        rows[1].per_seed = vec![1.0, 1.0];
        let mut h = row("a", "cannon", 1.0, 1.0);
        h.proposer = "hybrid".into();
        h.per_seed = vec![1.0, 1.0, 0.95];
        rows.push(h);
        let (below, compared) = hybrid_below_search(&rows);
        assert_eq!(compared, 3, "only cannon has both, three seeds");
        assert_eq!(below, vec![("cannon".to_string(), 1, 1.0, 1.046)]);
    }

    #[test]
    fn the_shipped_starts_load_in_name_order() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/starts");
        let starts = load_starts(Some(&dir)).expect("bench/starts loads");
        assert!(starts.len() >= 10, "at least ten starts ship");
        let names: Vec<&String> = starts.iter().map(|(n, _)| n).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(load_starts(Some(Path::new("/nonexistent-starts"))).is_err());
    }
}
