//! `mapwright optimize FILE`: improve a mapper by measurement (the benchmark
//! of every proposer is in [`super::bench_optimize`]).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use clap::{Args, ValueEnum};

use super::backend_args::{BackendArgs, RuntimeChoice};
use super::read_utf8;
use crate::autoguide::FeedbackMode;
use crate::optimize::changes::render_changes;
use crate::optimize::history::Record;
use crate::optimize::pictures;
use crate::optimize::plot::Series;
use crate::optimize::proposers::hybrid::HybridProposer;
use crate::optimize::proposers::llm::{LlmConfig, LlmProposer, OutputMode};
use crate::optimize::proposers::random::RandomProposer;
use crate::optimize::proposers::scalar::ScalarProposer;
use crate::optimize::proposers::search::SearchProposer;
use crate::optimize::proposers::Proposer;
use crate::optimize::runner::Runner;
use crate::optimize::{default_run_dir, load_report, optimize, Config, Event, Report};
use crate::project::{check_min_gain, target, ProjectFile};

/// The proposers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProposerKind {
    /// Structured search guided by AutoGuide (no LLM).
    Search,
    /// OpenAI-compatible chat model.
    Llm,
    /// LLM strategies tuned by search.
    Hybrid,
    /// Uniform random baseline.
    Random,
    /// OpenTuner-like tuner that sees only the score.
    Scalar,
}

impl ProposerKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ProposerKind::Search => "search",
            ProposerKind::Llm => "llm",
            ProposerKind::Hybrid => "hybrid",
            ProposerKind::Random => "random",
            ProposerKind::Scalar => "scalar",
        }
    }
}

/// LLM endpoint options (flags override `[llm]` in mapwright.toml).
#[derive(Debug, Clone, Args)]
pub struct LlmArgs {
    /// Base URL of an OpenAI-compatible API (e.g. http://127.0.0.1:8000/v1).
    #[arg(long)]
    pub llm_base_url: Option<String>,
    /// Model name.
    #[arg(long)]
    pub llm_model: Option<String>,
    /// Environment variable that holds the API key.
    #[arg(long)]
    pub llm_key_env: Option<String>,
    /// How the model answers: a JSON schema of the decisions (structured),
    /// a mapper in a code block (text), or structured where the endpoint
    /// takes it (auto, the default).
    #[arg(long, value_enum)]
    pub llm_output: Option<OutputMode>,
    /// Seconds per request.
    #[arg(long)]
    pub llm_timeout: Option<u64>,
    /// Most tokens per answer (sent as max_tokens).
    #[arg(long)]
    pub llm_max_tokens: Option<u32>,
    #[arg(long)]
    pub llm_temperature: Option<f64>,
    /// Extra attempts per proposal when an answer cannot be used.
    #[arg(long)]
    pub llm_retries: Option<usize>,
    /// PEM certificates to trust for an https:// endpoint besides the usual
    /// roots (a private certificate authority).
    #[arg(long)]
    pub llm_ca_file: Option<PathBuf>,
    /// Leave the last real runs' measured figures (per task time, processor
    /// spread, copies per argument) out of the structured prompt.
    #[arg(long)]
    pub llm_no_measurements: bool,
}

#[derive(Debug, Args)]
pub struct OptimizeArgs {
    /// The mapper to improve.
    pub file: PathBuf,
    /// Built-in application name or application description file.
    #[arg(long)]
    pub app: Option<String>,
    /// Machine preset (e.g. p100x4) or machine description file.
    #[arg(long)]
    pub machine: Option<String>,
    #[arg(long, value_enum)]
    pub proposer: Option<ProposerKind>,
    /// Proposals after the mapper as written.
    #[arg(long, default_value_t = 10)]
    pub iterations: usize,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Stop after this many seconds.
    #[arg(long)]
    pub time_budget: Option<u64>,
    /// What the proposer sees of AutoGuide's feedback.
    #[arg(long, value_enum, default_value = "suggest")]
    pub feedback: FeedbackMode,
    /// Write the best mapper back into FILE (only if its gain is worth
    /// applying: see --min-gain).
    #[arg(long, conflicts_with = "diff")]
    pub in_place: bool,
    /// Print the change as a unified diff (only if its gain is worth
    /// applying).
    #[arg(long)]
    pub diff: bool,
    /// The relative gain over FILE below which the best candidate is not
    /// applied on a deterministic model, e.g. 0.02 for 2 % (default: [optimize]
    /// min_gain in mapwright.toml, else 0.02). On a measuring backend the gain
    /// must also beat the spread of repeated runs.
    #[arg(long, value_name = "FRACTION")]
    pub min_gain: Option<f64>,
    /// Write the changes as a stacked block of tuned rules at the top of the
    /// file (the first rule for a key wins) instead of editing the
    /// statements that decide.
    #[arg(long)]
    pub as_block: bool,
    /// Screen proposals on the simulator before running them: a proposal
    /// the model (the application and machine descriptions) predicts more
    /// than FACTOR times slower than the best candidate so far is recorded
    /// as `screened` and not run. For a measuring backend (`legion`,
    /// `command`), where each run takes seconds.
    #[arg(long, value_name = "FACTOR")]
    pub screen: Option<f64>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Draw the trajectory as an SVG file.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Where to save candidates (default .mapwright/runs/<time>-<proposer>/ beside FILE).
    #[arg(long)]
    pub run_dir: Option<PathBuf>,
    /// Do not save candidates.
    #[arg(long)]
    pub no_save: bool,
    /// Continue a saved run (its folder).
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// Relative measurement noise of the simulator (0 = deterministic).
    #[arg(long, default_value_t = 0.0)]
    pub noise: f64,
    /// Where candidates run (default: the embedded simulator).
    #[command(flatten)]
    pub backend_args: BackendArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// Builds the LLM configuration from flags, the project file and the environment.
fn llm_config(args: &LlmArgs, project: Option<&ProjectFile>) -> anyhow::Result<LlmConfig> {
    let section = project.map(|p| p.llm.clone()).unwrap_or_default();
    let base_url = args
        .llm_base_url
        .clone()
        .or(section.base_url)
        .ok_or_else(|| anyhow!("the LLM proposer needs an endpoint: --llm-base-url URL or [llm] base_url in mapwright.toml"))?;
    let mut config = LlmConfig {
        base_url,
        ..LlmConfig::default()
    };
    if let Some(m) = args.llm_model.clone().or(section.model) {
        config.model = m;
    }
    let key_env = args
        .llm_key_env
        .clone()
        .or(section.api_key_env)
        .unwrap_or_else(|| "OPENAI_API_KEY".into());
    config.api_key = std::env::var(&key_env).ok().filter(|k| !k.is_empty());
    if let Some(t) = args.llm_timeout.or(section.timeout_s) {
        config.timeout = Duration::from_secs(t);
    }
    if let Some(name) = section.output.as_deref() {
        config.output = OutputMode::from_str(name, true).map_err(|_| {
            anyhow!("unknown [llm] output `{name}` in mapwright.toml (auto, structured, text)")
        })?;
    }
    if let Some(o) = args.llm_output {
        config.output = o;
    }
    if let Some(n) = args.llm_max_tokens.or(section.max_tokens) {
        config.max_tokens = n;
    }
    if let Some(t) = args.llm_temperature.or(section.temperature) {
        config.temperature = t;
    }
    if let Some(r) = args.llm_retries {
        config.max_retries = r;
    }
    config.measurements = !args.llm_no_measurements;
    config.ca_file = args.llm_ca_file.clone().or_else(|| {
        let file = section.ca_file.as_deref()?;
        Some(crate::project::resolve_path(
            file,
            project.and_then(|p| p.dir.as_deref()),
        ))
    });
    config.price_prompt_per_mtok = section.price_prompt_per_mtok.unwrap_or(0.0);
    config.price_completion_per_mtok = section.price_completion_per_mtok.unwrap_or(0.0);
    Ok(config)
}

fn llm_proposer(args: &LlmArgs, project: Option<&ProjectFile>) -> anyhow::Result<LlmProposer> {
    LlmProposer::new(llm_config(args, project)?).map_err(|e| anyhow!(e))
}

pub(crate) fn make_proposer(
    kind: ProposerKind,
    seed: u64,
    llm: &LlmArgs,
    project: Option<&ProjectFile>,
) -> anyhow::Result<Box<dyn Proposer>> {
    Ok(match kind {
        ProposerKind::Search => Box::new(SearchProposer::new(seed)),
        ProposerKind::Random => Box::new(RandomProposer::new(seed)),
        ProposerKind::Scalar => Box::new(ScalarProposer::new(seed)),
        ProposerKind::Llm => Box::new(llm_proposer(llm, project)?),
        ProposerKind::Hybrid => Box::new(HybridProposer::new(llm_proposer(llm, project)?, seed)),
    })
}

/// Ctrl-C sets the flag; the loop stops after the current candidate.
fn install_interrupt(flag: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
                errln!("\ninterrupted: finishing the current candidate; FILE will not be changed");
            }
        });
    });
}

/// One candidate's line. `best` is the best normalized score so far, or,
/// where no expert figure exists, the best relative to the first mapper
/// that ran (`yours`).
fn progress_line(r: &Record, best: Option<f64>, relative: bool, total: usize) -> String {
    let norm = |v: Option<f64>| {
        v.map(|x| format!("{x:.2}x"))
            .unwrap_or_else(|| "  -  ".into())
    };
    let best = match (best, relative) {
        (Some(b), true) => format!("{b:.2}x yours"),
        (b, _) => norm(b),
    };
    format!(
        "[{:>2}/{total}] {:<7} {:<16} {:>7}  best {:>7}  {}",
        r.iteration,
        if r.iteration == 0 {
            "user"
        } else {
            r.proposer.as_str()
        },
        r.evaluation.status,
        match (r.normalized, r.evaluation.elapsed_s) {
            (None, Some(t)) => format!("{t:.3} s"),
            (n, _) => norm(n),
        },
        best,
        r.rationale.chars().take(70).collect::<String>()
    )
}

/// `[confirm 2/4] yours and the best run again, in turn, to measure the gain`
fn confirming_line(run: usize, of: usize) -> String {
    format!("[confirm {run}/{of}] yours and the best run again, in turn, to measure the gain")
}

pub fn run(args: OptimizeArgs) -> anyhow::Result<ExitCode> {
    // (Strict: the best mapper may be written over the file.)
    let source = read_utf8(&args.file.to_string_lossy())?;
    let (app, machine, project) = target(
        Some(&args.file),
        args.app.as_deref(),
        args.machine.as_deref(),
    )?;
    let kind = match args.proposer {
        Some(k) => k,
        None => match project.as_ref().and_then(|p| p.proposer.as_deref()) {
            Some(name) => ProposerKind::from_str(name, true)
                .map_err(|_| anyhow!("unknown proposer `{name}` in mapwright.toml"))?,
            None => ProposerKind::Search,
        },
    };
    let mut proposer = make_proposer(kind, args.seed, &args.llm, project.as_ref())?;
    let named = args.machine.is_some() || project.as_ref().is_some_and(|p| p.machine.is_some());
    let machine = args
        .backend_args
        .machine_for(project.as_ref(), named, machine)?;
    let app = Arc::new(args.backend_args.app_for(project.as_ref(), app)?);
    let machine = Arc::new(machine);
    let executor = args
        .backend_args
        .executor(project.as_ref(), &app, &machine, args.noise)?;
    let runner = Runner::new(&app, &machine, executor.as_ref());
    let expert = match runner.run_expert(args.seed) {
        Some(e) if e.ok() => Some(e.score()),
        Some(e) => {
            // On a real runtime usually the runtime itself (a wrong command,
            // a service that is down); on the simulator, this machine.
            let hint = match args.backend_args.choice(project.as_ref())? {
                RuntimeChoice::Embedded => "the expert mapper does not fit this machine",
                _ => "check the backend",
            };
            errln!(
                "warning: the expert mapper of {} did not run here ({}): {}\n         normalized figures are unavailable; {hint}",
                app.name,
                e.status,
                e.raw_output.lines().find(|l| !l.trim().is_empty()).unwrap_or("no output")
            );
            None
        }
        None => None,
    };
    let min_gain = check_min_gain(
        args.min_gain
            .or(project.as_ref().and_then(|p| p.optimize.min_gain))
            .unwrap_or(crate::optimize::verdict::DEFAULT_MIN_GAIN),
    )
    .map_err(|e| anyhow!("--min-gain / [optimize] min_gain: {e}"))?;
    let cancel = Arc::new(AtomicBool::new(false));
    install_interrupt(cancel.clone());
    proposer.set_cancel(cancel.clone());
    let previous = match &args.resume {
        Some(dir) => Some(load_report(dir)?),
        None => None,
    };
    let run_dir = if args.no_save {
        None
    } else {
        Some(
            args.resume
                .clone()
                .or(args.run_dir.clone())
                .unwrap_or_else(|| default_run_dir(&args.file, kind.name())),
        )
    };
    if let Some(f) = args.screen {
        if !(f.is_finite() && f >= 1.0) {
            bail!("--screen takes a factor of at least 1.0 (1.2: skip what the model puts 20 % behind the best), not {f}");
        }
    }
    let config = Config {
        iterations: args.iterations,
        time_budget: args.time_budget.map(Duration::from_secs),
        seed: args.seed,
        feedback_mode: args.feedback,
        run_dir: run_dir.clone(),
        cancel: cancel.clone(),
        as_block: args.as_block,
        min_gain,
        repeats: crate::optimize::verdict::DEFAULT_REPEATS,
        screen: args.screen,
    };
    let quiet = args.json;
    let tty = std::io::stderr().is_terminal();
    // Without an expert figure, progress is relative to the first mapper
    // that ran (the user's, where it runs).
    let mut relative = crate::optimize::metrics::StartRelative::default();
    let mut progress = |event: Event<'_>| {
        let line = match event {
            Event::Candidate {
                record: r,
                best,
                total,
            } => {
                relative.record(r);
                match best {
                    Some(_) => progress_line(r, best, false, total),
                    None => progress_line(r, relative.best(), true, total),
                }
            }
            Event::Confirming { run, of } => confirming_line(run, of),
            Event::UnderWay {
                stage,
                iteration,
                total,
            } => {
                // On a terminal, what runs now stays on the line until the
                // next line replaces it (a real run takes seconds); logs
                // and pipes get only the results.
                if tty && !quiet {
                    use std::io::Write as _;
                    let mut err = std::io::stderr();
                    let _ = write!(err, "\x1b[2K{}...\r", stage.describe(iteration, total));
                    let _ = err.flush();
                }
                return;
            }
        };
        if !quiet {
            if tty {
                errln!("\x1b[2K{line}");
            } else {
                errln!("{line}");
            }
        }
    };
    let report = optimize(
        &source,
        &runner,
        proposer.as_mut(),
        &config,
        expert,
        previous,
        &mut progress,
    );

    if let Some(path) = &args.report {
        let runs_folder = match &run_dir {
            Some(dir) => dir.parent().map(Path::to_path_buf),
            None => default_run_dir(&args.file, kind.name())
                .parent()
                .map(Path::to_path_buf),
        };
        let series = earlier_runs(runs_folder.as_deref(), run_dir.as_deref(), &report);
        let written = pictures::write(&report, (&app.name, &machine.name), series, path)
            .with_context(|| format!("cannot write {} and its timeline", path.display()))?;
        if let Some(timeline) = &written.timeline {
            errln!("timeline of the best run: {}", timeline.display());
        }
    }
    // Printed first, in the order a reader expects, but a failure to print
    // (a full disk behind `> file`) is told only after the mapper was
    // written: the run's result is not lost to its report.
    let printed = (|| -> anyhow::Result<()> {
        if args.json {
            outln!("{}", serde_json::to_string(&report)?)?;
        } else {
            print_table(&report)?;
            if let Some(dir) = &run_dir {
                errln!("candidates and report: {}", dir.display());
            }
        }
        if args.diff && report.worth_applying() {
            print_diff(&source, &report.best_mapper, &args.file)?;
        }
        Ok(())
    })();
    if args.in_place {
        if report.cancelled {
            errln!("cancelled: {} left unchanged", args.file.display());
        } else if report.worth_applying() && report.best_mapper != source {
            std::fs::write(&args.file, &report.best_mapper)
                .with_context(|| format!("cannot write {}", args.file.display()))?;
            errln!(
                "applied the best mapper (iteration {}) to {}",
                report.best_iteration,
                args.file.display()
            );
        } else {
            errln!(
                "{}; {} left unchanged",
                report.not_applied(run_dir.as_deref(), "in the report's best_mapper (--json)"),
                args.file.display()
            );
        }
    } else if args.diff && !report.cancelled && !report.worth_applying() {
        errln!(
            "{}; no diff",
            report.not_applied(run_dir.as_deref(), "in the report's best_mapper (--json)")
        );
    }
    printed?;
    Ok(ExitCode::SUCCESS)
}

/// How many earlier runs the plot shows at most (the most recent ones).
const EARLIER_RUNS_PLOTTED: usize = 7;

/// The trajectories of the runs saved earlier in `folder` for the same
/// application and machine (every proposer tried on this mapper), oldest
/// first; `this_run`'s own folder is left out. Unreadable runs are skipped.
fn earlier_runs(folder: Option<&Path>, this_run: Option<&Path>, report: &Report) -> Vec<Series> {
    let Some(entries) = folder.and_then(|f| std::fs::read_dir(f).ok()) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && Some(p.as_path()) != this_run)
        .collect();
    dirs.sort();
    let runs: Vec<Series> =
        dirs.iter()
            .filter_map(|dir| {
                let r = load_report(dir).ok()?;
                (r.app == report.app && r.machine == report.machine && !r.trajectory.is_empty())
                    .then(|| Series {
                        label: format!(
                            "{} (seed {}, {})",
                            r.proposer,
                            r.seed,
                            dir.file_name().unwrap_or_default().to_string_lossy()
                        ),
                        values: r.trajectory,
                    })
            })
            .collect();
    let skip = runs.len().saturating_sub(EARLIER_RUNS_PLOTTED);
    runs.into_iter().skip(skip).collect()
}

/// The best candidate's figure: against the expert where its score is
/// known, else what was measured against the mapper as written.
fn best_figure(report: &Report) -> String {
    if let Some(v) = report.best_normalized {
        return format!("{v:.3}x the expert mapper");
    }
    let measured = report.measured_gain();
    match (measured, report.trajectory.last()) {
        (Some(m), _) => m,
        (None, Some(x)) if *x > 0.0 && report.trajectory_basis.relative_to == "start" => {
            format!("{x:.3}x your mapper")
        }
        _ => format!("score {:.4}", report.best_score),
    }
}

fn print_table(report: &Report) -> anyhow::Result<()> {
    outln!("iter  proposer  status            normalized  rationale")?;
    for r in &report.records {
        outln!(
            "{:>4}  {:<8}  {:<16}  {:>10}  {}",
            r.iteration,
            if r.iteration == 0 {
                "user"
            } else {
                r.proposer.as_str()
            },
            r.evaluation.status,
            // Without an expert to normalize to (it does not run here), the
            // time the run reported.
            r.normalized
                .map(|v| format!("{v:.3}x"))
                .or_else(|| r.evaluation.elapsed_s.map(|t| format!("{t:.3} s")))
                .unwrap_or_else(|| "-".into()),
            r.rationale.chars().take(60).collect::<String>()
        )?;
    }
    outln!(
        "best: iteration {} at {}; success rate {:.0}%; parameter entropy {:.2} bits; feedback sensitivity {:.2}",
        report.best_iteration,
        best_figure(report),
        report.success_rate * 100.0,
        report.parameter_entropy,
        report.feedback_sensitivity
    )?;
    if !report.pinned.is_empty() {
        outln!("pinned (# mapwright: keep), left as written:")?;
        for p in &report.pinned {
            outln!("  {p}")?;
        }
    }
    if let Some(v) = &report.verdict {
        let head = if report.worth_applying() {
            "worth applying"
        } else {
            "no change worth applying"
        };
        outln!("{head}: {}", v.reason)?;
    }
    if !report.changes.is_empty() {
        outln!("changes of the best mapper (gain when first made):")?;
        for line in render_changes(&report.changes) {
            outln!("  {line}")?;
        }
    }
    if let Some(u) = &report.usage {
        outln!(
            "LLM: {} requests ({} retries), {} prompt + {} completion tokens, ~${:.4}",
            u.requests,
            u.retries,
            u.prompt_tokens,
            u.completion_tokens,
            u.cost_usd
        )?;
    }
    Ok(())
}

fn print_diff(old: &str, new: &str, path: &Path) -> anyhow::Result<()> {
    let diff = similar::TextDiff::from_lines(old, new);
    let name = path.display().to_string();
    out!(
        "{}",
        diff.unified_diff().context_radius(3).header(&name, &name)
    )
}

impl ProposerKind {
    /// Whether the proposer reads AutoGuide's feedback (and so has ablation rows).
    pub(crate) fn reads_feedback(self) -> bool {
        matches!(
            self,
            ProposerKind::Search | ProposerKind::Llm | ProposerKind::Hybrid
        )
    }
}
