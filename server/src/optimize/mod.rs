//! The optimizer: the generative-optimization loop of the ASI paper.
//!
//! propose -> static check -> resolve -> run -> AutoGuide -> record -> propose
//! again, for N iterations or a time budget, keeping the best mapper that
//! runs. Every candidate, its raw output and its feedback are saved under
//! `.mapwright/runs/<timestamp>-<proposer>/`, each record appended to
//! `records.jsonl` as it is made and the whole run in `report.json` at the
//! start and the end (so a long run costs the same per iteration at 1,000 as
//! at 10); a run can be resumed from that folder, even one that was killed;
//! cancelling leaves the user's file untouched.
//!
//! Module map:
//! - [`space`]     the search space and the tuned-rules block it renders to.
//! - [`pins`]      statements the user pinned (`# mapwright: keep`): out of the
//!   space, never edited, every proposal checked against them.
//! - [`inplace`]   a point of the space as minimal edits of the user's own statements.
//! - [`prune`]     the applied mapper without statements that decide nothing new.
//! - [`verdict`]   whether the best candidate's gain is worth applying.
//! - [`changes`]   each applied change with the gain attributed to it.
//! - [`proposers`] search (default), random, scalar (OpenTuner-like), llm, hybrid.
//! - [`repair`]    the first candidates when the user's mapper does not compile.
//! - [`executors`] running a resolved candidate (simulator, any backend).
//! - [`runner`]    evaluating one candidate (check, resolve, execute, AutoGuide).
//! - [`history`]   the records of a run.
//! - [`metrics`]   trajectory, success rate, parameter entropy, feedback sensitivity.
//! - [`plot`]      the SVG trajectory plot.
//! - [`timeline_svg`] a measured run's per-processor timeline (SVG).
//! - [`pictures`]  the report's plot and timeline, written side by side.
//! - [`rng`]       the seeded PRNG proposers use.

pub mod changes;
pub mod executors;
pub mod history;
pub mod inplace;
pub mod metrics;
pub mod pictures;
pub mod pins;
pub mod plot;
pub mod proposers;
pub mod prune;
pub mod repair;
pub mod rng;
pub mod runner;
pub mod space;
pub mod timeline_svg;
pub mod verdict;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use mapwright_grammar::analyze;
use mapwright_grammar::diagnostic::apply_edits;
use mapwright_runtime::decisions::Decisions;
use serde::{Deserialize, Serialize};

use crate::autoguide::FeedbackMode;
use changes::{explain_changes, Change};
use history::{Record, Usage};
use pins::Pins;
use proposers::{ProposalContext, Proposer};
use runner::{Evaluation, Runner};
use space::{strip_block, Space, BLOCK_END, BLOCK_START};
use verdict::{judge, rerun_with, Verdict};

/// How a run is configured.
pub struct Config {
    /// Proposals after the user's own mapper.
    pub iterations: usize,
    /// Stop proposing once this much time has passed.
    pub time_budget: Option<Duration>,
    pub seed: u64,
    pub feedback_mode: FeedbackMode,
    /// Where candidates and the report are saved (`None`: nowhere).
    pub run_dir: Option<PathBuf>,
    /// Set to stop after the current candidate.
    pub cancel: Arc<AtomicBool>,
    /// Write candidates as a stacked tuned-rules block instead of edits of
    /// the user's statements (`--as-block`).
    pub as_block: bool,
    /// The relative gain over the mapper as written below which the best
    /// candidate is not applied, on a deterministic model (see [`verdict`]).
    pub min_gain: f64,
    /// Runs of the start and of the best candidate on a measuring backend.
    pub repeats: usize,
    /// Screen proposals on the simulator before running them (`--screen
    /// FACTOR`): a proposal the model predicts more than FACTOR times slower
    /// than the best candidate so far is recorded as screened out and not
    /// run. For a measuring backend, where a run costs seconds; `None`: off.
    pub screen: Option<f64>,
}

impl Config {
    /// `iterations` proposals with `seed`: suggest feedback, nothing saved,
    /// no time budget, edits of the user's statements, the default minimum
    /// gain and repeats.
    pub fn new(iterations: usize, seed: u64) -> Config {
        Config {
            iterations,
            time_budget: None,
            seed,
            feedback_mode: FeedbackMode::Suggest,
            run_dir: None,
            cancel: Arc::new(AtomicBool::new(false)),
            as_block: false,
            min_gain: verdict::DEFAULT_MIN_GAIN,
            screen: None,
            repeats: verdict::DEFAULT_REPEATS,
        }
    }
}

/// The outcome of a run, as saved in `report.json` and printed by `--json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub app: String,
    pub machine: String,
    pub proposer: String,
    pub seed: u64,
    pub feedback_mode: String,
    pub iterations_requested: usize,
    /// The expert mapper's score on the same machine (what 1.0x means).
    pub expert_score: Option<f64>,
    pub best_iteration: usize,
    pub best_score: f64,
    pub best_normalized: Option<f64>,
    pub best_mapper: String,
    /// Best score after each iteration (index 0: the user's mapper),
    /// relative to `trajectory_basis`: the expert's score where it is
    /// known (the normalized score), else the start's.
    pub trajectory: Vec<f64>,
    /// What `trajectory` is relative to.
    #[serde(default)]
    pub trajectory_basis: metrics::TrajectoryBasis,
    pub success_rate: f64,
    pub parameter_entropy: f64,
    pub feedback_sensitivity: f64,
    pub cancelled: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub usage: Option<Usage>,
    /// Whether `best_mapper` is worth applying, and why (`None` in a report
    /// saved before the run ended).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub verdict: Option<Verdict>,
    /// What applying `best_mapper` changes, statement by statement.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub changes: Vec<Change>,
    /// The statements pinned by `# mapwright: keep`, as written.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub pinned: Vec<String>,
    pub records: Vec<Record>,
}

impl Report {
    /// Recomputes everything derived from the records, metrics included
    /// (O(records x parameters): at the end of a run, not per iteration).
    fn refresh(&mut self) {
        self.refresh_best();
        self.parameter_entropy = metrics::parameter_entropy(&self.records);
        self.feedback_sensitivity = metrics::feedback_sensitivity(&self.records);
    }

    /// The best record, trajectory and success rate: what progress shows
    /// after each candidate.
    fn refresh_best(&mut self) {
        let best = self
            .records
            .iter()
            .enumerate()
            .max_by(|a, b| {
                a.1.score
                    .partial_cmp(&b.1.score)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(b.0.cmp(&a.0))
            })
            .map(|(i, _)| i)
            .unwrap_or(0);
        self.best_iteration = best;
        if let Some(r) = self.records.get(best) {
            self.best_score = r.score;
            self.best_normalized = r.normalized;
            self.best_mapper = r.source.clone();
        }
        self.trajectory_basis = metrics::trajectory_basis(&self.records, self.expert_score);
        self.trajectory = metrics::trajectory(&self.records, &self.trajectory_basis);
        self.success_rate = metrics::success_rate(&self.records);
    }

    /// Whether `best_mapper` should replace the user's mapper: it improves
    /// on it by a gain the run can defend ([`verdict`]).
    pub fn worth_applying(&self) -> bool {
        self.improved() && self.verdict.as_ref().is_some_and(|v| v.apply)
    }

    /// Why the best mapper is not applied, and where the best candidate is
    /// for the user to take by hand (`run_dir`: where the run was saved;
    /// `elsewhere`: where it is otherwise).
    pub fn not_applied(&self, run_dir: Option<&Path>, elsewhere: &str) -> String {
        let reason = self
            .verdict
            .as_ref()
            .map_or("no candidate beat the mapper as written", |v| {
                v.reason.as_str()
            });
        if self.best_iteration == 0 {
            return format!("no change worth applying: {reason}");
        }
        let at = match run_dir {
            Some(d) => format!("saved as {}", d.join("best.mapper").display()),
            None => elsewhere.to_string(),
        };
        format!(
            "no change worth applying: {reason}; the best candidate (iteration {}) is {at}, to take by hand",
            self.best_iteration
        )
    }

    /// What the run measured for the best candidate against the mapper as
    /// written ([`verdict::measured_gain`]).
    pub fn measured_gain(&self) -> Option<String> {
        let (start, best) = self
            .records
            .first()
            .zip(self.records.get(self.best_iteration))?;
        verdict::measured_gain(start, best, self.verdict.as_ref())
    }

    /// The best mapper improves on the user's.
    pub fn improved(&self) -> bool {
        self.best_iteration > 0
            && self
                .records
                .first()
                .is_some_and(|first| self.best_score > first.score)
    }
}

/// What the loop tells its caller while it works.
#[derive(Debug, Clone, Copy)]
pub enum Event<'r> {
    /// A candidate ran (or was rejected before running): its record, the
    /// best normalized score so far and the iterations asked for.
    Candidate {
        record: &'r Record,
        best: Option<f64>,
        total: usize,
    },
    /// The mapper as written and the best candidate run again, in turn, to
    /// confirm the gain on a measuring backend: repeated run `run` of `of`
    /// starts. Real runs take seconds each, so a user watching sees them.
    Confirming { run: usize, of: usize },
    /// Candidate `iteration` (of the `total` asked for) is at `stage`: a
    /// model's answer and a real run take seconds.
    UnderWay {
        stage: Stage,
        iteration: usize,
        total: usize,
    },
}

/// What a candidate is waiting for ([`Event::UnderWay`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Its proposal is being made.
    Proposing,
    /// It starts to run (candidate 0: the mapper as written). A proposal
    /// that is not run (it breaks a pin, or is screened out) has no such
    /// stage.
    Running,
}

impl Stage {
    /// `proposing candidate 3/8`, `running candidate 3/8`, `running your
    /// mapper as written`.
    pub fn describe(self, iteration: usize, total: usize) -> String {
        match (self, iteration) {
            (Stage::Running, 0) => "running your mapper as written".into(),
            (Stage::Running, _) => format!("running candidate {iteration}/{total}"),
            (Stage::Proposing, _) => format!("proposing candidate {iteration}/{total}"),
        }
    }
}

/// Progress callback: told of each [`Event`] as it happens.
pub type Progress<'a> = &'a mut dyn FnMut(Event<'_>);

/// The repeated runs [`optimize`] makes after the loop to confirm a gain on
/// a backend that measures: each of the two mappers `repeats - 1` more times.
pub fn confirming_runs(repeats: usize, measures: bool) -> usize {
    if measures {
        2 * repeats.saturating_sub(1)
    } else {
        0
    }
}

/// Runs the loop on `source` (the user's mapper text).
pub fn optimize(
    source: &str,
    runner: &Runner<'_>,
    proposer: &mut dyn Proposer,
    config: &Config,
    expert_score: Option<f64>,
    previous: Option<Report>,
    progress: Progress<'_>,
) -> Report {
    let start = Instant::now();
    let mut base = strip_block(source);
    let resolve = |text: &str| runner.decisions(text);
    let base_decisions = runner.decisions(&base);
    // A mapper that does not compile is repaired first, for every proposer.
    let mut needs_repair = base_decisions.is_none();
    let mut base_decisions = base_decisions.unwrap_or_default();
    // What the user wrote: pruning and the report of what changed compare
    // with it, also after a repair.
    let (user_base, user_decisions) = (base.clone(), base_decisions.clone());
    let mut pins = Pins::of(&base, &base_decisions);
    let mut space = Space::new(runner.app, runner.machine).pinned(&pins);
    let mut report = previous.unwrap_or_else(|| Report {
        app: runner.app.name.clone(),
        machine: runner.machine.name.clone(),
        proposer: proposer.name().to_string(),
        seed: config.seed,
        feedback_mode: format!("{:?}", config.feedback_mode),
        iterations_requested: config.iterations,
        expert_score,
        best_iteration: 0,
        best_score: 0.0,
        best_normalized: None,
        best_mapper: source.to_string(),
        trajectory: Vec::new(),
        trajectory_basis: metrics::TrajectoryBasis::default(),
        success_rate: 0.0,
        parameter_entropy: 0.0,
        feedback_sensitivity: 0.0,
        cancelled: false,
        usage: None,
        verdict: None,
        changes: Vec::new(),
        pinned: Vec::new(),
        records: Vec::new(),
    });
    report.pinned = pins.pins.iter().map(|p| p.text.clone()).collect();
    report.iterations_requested = config.iterations;
    let normalize = |score: f64| expert_score.filter(|e| *e > 0.0).map(|e| score / e);
    // The model's time of a mapper, for screening (cached by text).
    let mut predictions: std::collections::HashMap<String, Option<f64>> = Default::default();
    let mut predict = |text: &str| -> Option<f64> {
        if let Some(p) = predictions.get(text) {
            return *p;
        }
        let p = runner.decisions(text).and_then(|d| {
            let o = mapwright_runtime::sim::simulate(&d, runner.app, runner.machine, 0, 0.0);
            o.status.is_ok().then_some(o.elapsed_s).flatten()
        });
        predictions.insert(text.to_string(), p);
        p
    };
    let evaluate =
        |iteration: usize, text: String, rationale: String, spec: Option<space::Spec>| {
            let t0 = Instant::now();
            let evaluation = runner.evaluate(&text, config.seed.wrapping_add(iteration as u64));
            let score = evaluation.score();
            let parameters = evaluation
                .decisions
                .as_ref()
                .map(space::parameters)
                .unwrap_or_default();
            Record {
                iteration,
                proposer: if iteration == 0 {
                    "user".into()
                } else {
                    String::new()
                },
                rationale,
                source: text,
                // A failure is 0x the expert, when there is an expert figure.
                normalized: if evaluation.ok() {
                    normalize(score)
                } else {
                    normalize(0.0)
                },
                evaluation,
                score,
                parameters,
                spec,
                seconds: t0.elapsed().as_secs_f64(),
            }
        };
    if let Some(dir) = &config.run_dir {
        let _ = start_log(dir, &report);
    }
    let total = config.iterations;
    if report.records.is_empty() {
        progress(Event::UnderWay {
            stage: Stage::Running,
            iteration: 0,
            total,
        });
        let record = evaluate(0, source.to_string(), "the mapper as written".into(), None);
        save_candidate(config.run_dir.as_deref(), &record);
        report.records.push(record);
        report.refresh_best();
        progress(Event::Candidate {
            record: &report.records[0],
            best: report.best_normalized,
            total,
        });
    }
    while report.records.len() <= config.iterations {
        if config.cancel.load(Ordering::SeqCst) {
            report.cancelled = true;
            break;
        }
        if config.time_budget.is_some_and(|b| start.elapsed() >= b) {
            break;
        }
        let iteration = report.records.len();
        if std::mem::take(&mut needs_repair) {
            let compiles = |text: &str| runner.decisions(text).is_some();
            if let Some((text, steps)) = repair::make_compile(&base, &compiles) {
                progress(Event::UnderWay {
                    stage: Stage::Running,
                    iteration,
                    total,
                });
                let mut record = evaluate(
                    iteration,
                    text.clone(),
                    format!("make it compile: {}", steps.join("; ")),
                    None,
                );
                record.proposer = proposer.name().to_string();
                save_candidate(config.run_dir.as_deref(), &record);
                report.records.push(record);
                report.refresh_best();
                if let Some(last) = report.records.last() {
                    progress(Event::Candidate {
                        record: last,
                        best: report.best_normalized,
                        total,
                    });
                }
                // Proposals build on the text that compiles.
                base_decisions = runner.decisions(&text).unwrap_or_default();
                base = text;
                pins = Pins::of(&base, &base_decisions);
                space = Space::new(runner.app, runner.machine).pinned(&pins);
                report.pinned = pins.pins.iter().map(|p| p.text.clone()).collect();
                continue;
            }
        }
        let ctx = ProposalContext {
            base: &base,
            base_decisions: &base_decisions,
            app: runner.app,
            machine: runner.machine,
            space: &space,
            history: &report.records,
            feedback_mode: config.feedback_mode,
            resolve: &resolve,
            as_block: config.as_block,
        };
        progress(Event::UnderWay {
            stage: Stage::Proposing,
            iteration,
            total,
        });
        let mut record = match proposer.propose(&ctx) {
            Ok(p) => match (!pins.is_empty())
                .then(|| pins.violation(&p.source, runner.decisions(&p.source).as_ref()))
                .flatten()
            {
                // Whoever made it, a candidate that changes a pinned
                // statement is never run, so it can never be applied.
                Some(why) => rejected(
                    iteration,
                    p.source,
                    p.rationale,
                    "pinned_changed",
                    &why,
                    normalize(0.0),
                ),
                None => {
                    let best = &report.records[report.best_iteration].source;
                    match config.screen.and_then(|factor| {
                        let (mine, theirs) = (predict(&p.source)?, predict(best)?);
                        (mine > theirs * factor).then_some((mine, theirs))
                    }) {
                        Some((mine, theirs)) => rejected(
                            iteration,
                            p.source,
                            p.rationale,
                            "screened",
                            &format!(
                                "screened out: the model predicts {mine:.3} s, {:.2}x the best \
                                 candidate's {theirs:.3} s",
                                mine / theirs
                            ),
                            normalize(0.0),
                        ),
                        None => {
                            progress(Event::UnderWay {
                                stage: Stage::Running,
                                iteration,
                                total,
                            });
                            evaluate(iteration, p.source, p.rationale, p.spec)
                        }
                    }
                }
            },
            Err(e) => {
                // A proposer failure is an outcome too (e.g. a malformed LLM
                // answer): the mapper as written runs again in its place.
                progress(Event::UnderWay {
                    stage: Stage::Running,
                    iteration,
                    total,
                });
                let mut r = evaluate(
                    iteration,
                    report.records[0].source.clone(),
                    format!("proposer failed: {e}"),
                    None,
                );
                r.evaluation.status = "proposer_error".into();
                r.evaluation.raw_output = e.to_string();
                // Not a proposal: the entropy and sensitivity leave it out.
                r.parameters.clear();
                r.score = 0.0;
                r.normalized = normalize(0.0);
                r
            }
        };
        record.proposer = proposer.name().to_string();
        save_candidate(config.run_dir.as_deref(), &record);
        report.records.push(record);
        report.refresh_best();
        report.usage = proposer.usage();
        if let Some(last) = report.records.last() {
            progress(Event::Candidate {
                record: last,
                best: report.best_normalized,
                total,
            });
        }
    }
    report.refresh();
    report.best_mapper = tidy(&report.best_mapper);
    if !config.as_block {
        // Proposers that sample the space write the stacked form; the best
        // one is given to the user as edits of their own statements.
        if let Some(text) = report
            .records
            .get(report.best_iteration)
            .filter(|r| r.source.contains(BLOCK_START))
            .and_then(|r| r.spec.as_ref())
            .and_then(|spec| {
                inplace::render_in_place(
                    &base,
                    &base_decisions,
                    spec,
                    runner.app,
                    runner.machine,
                    &resolve,
                )
            })
        {
            report.best_mapper = text;
        }
    }
    if !config.as_block && report.best_iteration > 0 {
        report.best_mapper =
            prune::drop_redundant(&user_base, &user_decisions, &report.best_mapper, &resolve);
    }
    if !report.cancelled {
        judge_best(
            &mut report,
            runner,
            config,
            (&user_base, &user_decisions),
            progress,
        );
    }
    report.usage = proposer.usage();
    if let Some(dir) = &config.run_dir {
        let _ = save_report(dir, &report);
        if report.best_iteration > 0 {
            let _ = std::fs::write(dir.join("best.mapper"), &report.best_mapper);
        }
    }
    report
}

/// Fills in the report's verdict and, when the best candidate is to be
/// applied, the changes it makes. Each repeated run is told to `progress`
/// as it starts.
fn judge_best(
    report: &mut Report,
    runner: &Runner<'_>,
    config: &Config,
    (base, start): (&str, &Decisions),
    progress: Progress<'_>,
) {
    let (Some(first), Some(best)) = (
        report.records.first(),
        report.records.get(report.best_iteration),
    ) else {
        return;
    };
    let mut rerun_once = rerun_with(runner, config.seed);
    let measures = runner.executor.measures();
    let of = confirming_runs(config.repeats, measures);
    let mut run = 0;
    // A cancel while they run stops them (the run under way is killed by
    // the executor) and the loop ends cancelled: nothing is applied on a
    // verdict of killed runs.
    let mut rerun = |text: &str, i: usize| {
        if config.cancel.load(Ordering::SeqCst) {
            return 0.0;
        }
        run += 1;
        progress(Event::Confirming { run, of });
        rerun_once(text, i)
    };
    let verdict = judge(
        first,
        best,
        report.best_iteration == 0,
        config.min_gain,
        measures,
        config.repeats,
        &mut rerun,
    );
    if config.cancel.load(Ordering::SeqCst) {
        report.cancelled = true;
        report.changes.clear();
        return;
    }
    report.changes = match runner.decisions(&report.best_mapper) {
        Some(after) if report.best_iteration > 0 => {
            explain_changes(&report.records, base, start, &report.best_mapper, &after)
        }
        _ => Vec::new(),
    };
    report.verdict = Some(verdict);
}

/// The record of a proposal that was not run because it breaks a pin.
fn rejected(
    iteration: usize,
    source: String,
    rationale: String,
    status: &str,
    why: &str,
    normalized: Option<f64>,
) -> Record {
    Record {
        iteration,
        proposer: String::new(),
        rationale,
        source,
        evaluation: Evaluation {
            status: status.into(),
            elapsed_s: None,
            throughput: None,
            raw_output: format!("rejected before running: {why}"),
            decisions: None,
            feedback: Vec::new(),
            metrics: Default::default(),
        },
        score: 0.0,
        normalized,
        parameters: Default::default(),
        spec: None,
        seconds: 0.0,
    }
}

/// Removes rules of the user's text that a tuned rule shadows (they can
/// never take effect), so the final mapper says each thing once.
pub fn tidy(text: &str) -> String {
    let (Some(start), Some(end)) = (text.find(BLOCK_START), text.find(BLOCK_END)) else {
        return text.to_string();
    };
    let block = mapwright_grammar::Span::new(start, end);
    let mut current = text.to_string();
    for _ in 0..200 {
        let diagnostics = analyze(&current).diagnostics();
        let Some(fix) = diagnostics
            .iter()
            .filter(|d| {
                d.code == "W0218"
                    && d.related
                        .iter()
                        .any(|r| block.start() <= r.span.start() && r.span.end() <= block.end())
            })
            .find_map(|d| d.fixes.first())
        else {
            break;
        };
        match apply_edits(&current, &fix.edits) {
            Some(next) if next != current => current = next,
            _ => break,
        }
    }
    current
}

/// `.mapwright/runs/<unix-seconds>-<proposer>` next to the mapper file
/// (`-2`, `-3`, ... appended when a run of that second already has it).
pub fn default_run_dir(mapper: &Path, proposer: &str) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let runs = mapper
        .parent()
        .unwrap_or(Path::new("."))
        .join(".mapwright")
        .join("runs");
    let mut dir = runs.join(format!("{stamp}-{proposer}"));
    let mut n = 2;
    while dir.exists() && n < 1000 {
        dir = runs.join(format!("{stamp}-{proposer}-{n}"));
        n += 1;
    }
    dir
}

/// The append-only log of a run's records, one JSON object per line.
const RECORD_LOG: &str = "records.jsonl";

/// Writes the report as it stands and a record log holding exactly its
/// records, so that appending new records keeps the two consistent (also
/// for a resumed run whose folder predates the log).
fn start_log(dir: &Path, report: &Report) -> anyhow::Result<()> {
    save_report(dir, report)?;
    let mut log = String::new();
    for r in &report.records {
        log.push_str(&serde_json::to_string(r)?);
        log.push('\n');
    }
    std::fs::write(dir.join(RECORD_LOG), log)
        .with_context(|| format!("cannot write {}/{RECORD_LOG}", dir.display()))
}

fn append_record(dir: &Path, record: &Record) -> anyhow::Result<()> {
    use std::io::Write;
    let mut line = serde_json::to_string(record)?;
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(RECORD_LOG))?
        .write_all(line.as_bytes())?;
    Ok(())
}

fn save_candidate(dir: Option<&Path>, record: &Record) {
    let Some(dir) = dir else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let _ = append_record(dir, record);
    let i = record.iteration;
    let _ = std::fs::write(dir.join(format!("candidate-{i:03}.mapper")), &record.source);
    let _ = std::fs::write(
        dir.join(format!("output-{i:03}.txt")),
        &record.evaluation.raw_output,
    );
    if let Ok(json) = serde_json::to_string_pretty(&record.evaluation.feedback) {
        let _ = std::fs::write(dir.join(format!("feedback-{i:03}.json")), json);
    }
}

/// Writes `report.json` into `dir`.
pub fn save_report(dir: &Path, report: &Report) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let json = serde_json::to_string_pretty(report)?;
    std::fs::write(dir.join("report.json"), json)
        .with_context(|| format!("cannot write {}/report.json", dir.display()))
}

/// Loads a saved run to resume it: `report.json`, with the records of
/// `records.jsonl` when the log holds more (a run stopped before its end).
/// A torn last line (the process killed mid-write) is dropped.
pub fn load_report(dir: &Path) -> anyhow::Result<Report> {
    let text = std::fs::read_to_string(dir.join("report.json"))
        .with_context(|| format!("no report.json in {}", dir.display()))?;
    let mut report: Report = serde_json::from_str(&text)
        .with_context(|| format!("{}/report.json is not a mapwright report", dir.display()))?;
    if let Ok(log) = std::fs::read_to_string(dir.join(RECORD_LOG)) {
        let logged: Vec<Record> = log
            .lines()
            .map_while(|l| serde_json::from_str(l).ok())
            .collect();
        if logged.len() > report.records.len() {
            report.records = logged;
            report.refresh();
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::executors::SimExecutor;
    use super::proposers::random::RandomProposer;
    use super::*;
    use mapwright_runtime::app::App;
    use mapwright_runtime::machine::Machine;

    /// Circuit on p100x4, and the simulator with `noise` (above 0 it
    /// measures, so a gain is confirmed by repeated runs).
    fn circuit_on_the_simulator(noise: f64) -> (App, Machine, SimExecutor) {
        let app = App::builtin("circuit").unwrap();
        let machine = Machine::preset("p100x4").unwrap();
        let executor = SimExecutor {
            app: Arc::new(app.clone()),
            machine: Arc::new(machine.clone()),
            noise,
        };
        (app, machine, executor)
    }

    /// The search from `start` on circuit, each event told to `on`.
    fn search_circuit(
        noise: f64,
        start: &str,
        config: &Config,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Report {
        let (app, machine, executor) = circuit_on_the_simulator(noise);
        let runner = Runner::new(&app, &machine, &executor);
        let mut proposer = super::proposers::search::SearchProposer::new(0);
        optimize(start, &runner, &mut proposer, config, None, None, on)
    }

    /// An event as a test compares it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Seen {
        Proposing(usize),
        Running(usize),
        Candidate(usize),
        Confirming(usize, usize),
    }

    /// The events a caller sees, in order.
    fn events(noise: f64, start: &str, iterations: usize) -> (Report, Vec<Seen>) {
        let mut seen = Vec::new();
        let report = search_circuit(noise, start, &Config::new(iterations, 0), &mut |e| {
            seen.push(match e {
                Event::Candidate { record, total, .. } => {
                    assert_eq!(total, iterations);
                    assert!(record.iteration <= iterations);
                    Seen::Candidate(record.iteration)
                }
                Event::Confirming { run, of } => Seen::Confirming(run, of),
                Event::UnderWay {
                    stage,
                    iteration,
                    total,
                } => {
                    assert_eq!(total, iterations);
                    match stage {
                        Stage::Proposing => Seen::Proposing(iteration),
                        Stage::Running => Seen::Running(iteration),
                    }
                }
            })
        });
        (report, seen)
    }

    /// Each candidate is told as it is proposed and as it starts to run
    /// (a model's answer and a real run take seconds), then with its
    /// result; the mapper as written runs first, proposed by nobody.
    #[test]
    fn each_candidate_is_told_as_it_is_proposed_and_run_then_with_its_result() {
        let (report, seen) = events(0.0, "Task * CPU;\n", 4);
        let mut expected = vec![Seen::Running(0), Seen::Candidate(0)];
        for i in 1..=4 {
            expected.extend([Seen::Proposing(i), Seen::Running(i), Seen::Candidate(i)]);
        }
        assert_eq!(seen, expected);
        assert_eq!(report.records.len(), 5);
        let words: Vec<String> = [
            (Stage::Running, 0),
            (Stage::Proposing, 3),
            (Stage::Running, 3),
        ]
        .iter()
        .map(|&(stage, iteration)| stage.describe(iteration, 4))
        .collect();
        assert_eq!(
            words,
            [
                "running your mapper as written",
                "proposing candidate 3/4",
                "running candidate 3/4"
            ]
        );

        // A proposal that is not run (screened out) is proposed and then
        // reported, with no run between.
        let (app, machine, executor) = circuit_on_the_simulator(0.0);
        let runner = Runner::new(&app, &machine, &executor);
        let mut config = Config::new(12, 3);
        config.screen = Some(1.0);
        let mut proposer = RandomProposer::new(3);
        let mut seen = Vec::new();
        let report = optimize(
            app.expert_text().unwrap(),
            &runner,
            &mut proposer,
            &config,
            None,
            None,
            &mut |e| {
                if let Event::UnderWay {
                    stage: Stage::Running,
                    iteration,
                    ..
                } = e
                {
                    seen.push(iteration);
                }
            },
        );
        let ran: Vec<usize> = report
            .records
            .iter()
            .filter(|r| r.evaluation.status != "screened")
            .map(|r| r.iteration)
            .collect();
        assert!(ran.len() < report.records.len(), "some were screened");
        assert_eq!(seen, ran);
    }

    /// On a backend that measures, the repeated runs that confirm the gain
    /// are told as they start, after every candidate, numbered to the count
    /// announced; a deterministic model has none.
    #[test]
    fn the_runs_that_confirm_a_gain_are_told_as_they_start() {
        let slow = "Task * CPU;\n";
        let (report, seen) = events(0.02, slow, 4);
        let verdict = report.verdict.as_ref().expect("a verdict");
        let of = confirming_runs(Config::new(4, 0).repeats, true);
        assert_eq!(of, 2 * (verdict::DEFAULT_REPEATS - 1));
        assert!(report.best_iteration > 0, "search beats all-CPU");
        assert_eq!(verdict.best_runs.len(), verdict::DEFAULT_REPEATS);
        let confirming_at = seen
            .iter()
            .position(|e| matches!(e, Seen::Confirming(..)))
            .expect("confirming runs");
        let candidates = seen[..confirming_at]
            .iter()
            .filter(|e| matches!(e, Seen::Candidate(_)))
            .count();
        assert_eq!(candidates, report.records.len());
        assert_eq!(
            seen[confirming_at..],
            (1..=of)
                .map(|run| Seen::Confirming(run, of))
                .collect::<Vec<_>>()
        );

        // A cancel during them: no further run, and the loop ends
        // cancelled with no verdict, so nothing is applied.
        let config = Config::new(4, 0);
        let cancel = config.cancel.clone();
        let mut confirming = 0;
        let report = search_circuit(0.02, slow, &config, &mut |e| {
            if let Event::Confirming { .. } = e {
                confirming += 1;
                cancel.store(true, Ordering::SeqCst);
            }
        });
        assert_eq!(confirming, 1);
        assert!(report.cancelled);
        assert!(report.verdict.is_none() && !report.worth_applying());

        let (report, seen) = events(0.0, slow, 4);
        assert!(report.verdict.is_some());
        assert!(
            !seen.iter().any(|e| matches!(e, Seen::Confirming(..))),
            "{seen:?}"
        );
        assert_eq!(confirming_runs(3, false), 0);
    }

    /// On the simulator the screen's prediction is the run itself, so a
    /// screened proposal is one that would have lost: screening skips runs
    /// and finds the same best as running everything.
    #[test]
    fn screening_skips_what_the_model_puts_behind_and_keeps_the_best() {
        let (app, machine, executor) = circuit_on_the_simulator(0.0);
        let runner = Runner::new(&app, &machine, &executor);
        let start = app.expert_text().unwrap();
        let run = |screen: Option<f64>| {
            let mut config = Config::new(12, 3);
            config.screen = screen;
            let mut proposer = RandomProposer::new(3);
            optimize(
                start,
                &runner,
                &mut proposer,
                &config,
                None,
                None,
                &mut |_| {},
            )
        };
        let all = run(None);
        let screened = run(Some(1.0));
        let skipped: Vec<&Record> = screened
            .records
            .iter()
            .filter(|r| r.evaluation.status == "screened")
            .collect();
        assert!(
            !skipped.is_empty(),
            "random proposals from the expert mostly lose"
        );
        for r in &skipped {
            assert!(
                r.evaluation
                    .raw_output
                    .contains("screened out: the model predicts"),
                "{}",
                r.evaluation.raw_output
            );
            // What would have run in its place lost too.
            let ran = &all.records[r.iteration];
            assert!(
                ran.score
                    <= screened.records[..r.iteration]
                        .iter()
                        .map(|x| x.score)
                        .fold(0.0, f64::max)
            );
        }
        assert_eq!(screened.best_score, all.best_score);
        assert!(all
            .records
            .iter()
            .all(|r| r.evaluation.status != "screened"));
    }
}
