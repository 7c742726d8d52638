//! The server's commands (`workspace/executeCommand`), minus the protocol
//! glue in [`super::server`]:
//!
//! - `mapwright.explain`: the mapping decisions as text
//!   ([`mapwright_runtime::resolve_mapping::render_decisions`]).
//! - `mapwright.run`: one run of the mapper on the configured runtime (the
//!   embedded simulator, or a `mapwright serve` URL), normalized against the
//!   application's expert mapper, with AutoGuide's feedback.
//! - `mapwright.optimize`: the optimizer loop ([`crate::optimize::optimize`])
//!   with a progress callback and a cancel flag.
//!
//! Arguments: `[uri]` (what the editors send) or `[{"uri": ..., "show":
//! bool}]`. Everything here is blocking and runs on a blocking thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::optimize::metrics::StartRelative;
use crate::optimize::pictures::{self, Pictures};
use mapwright_grammar::{LineIndex, Span};
use mapwright_runtime::app::App;
use mapwright_runtime::machine::Machine;
use serde_json::Value;
use tower_lsp::lsp_types::{self as lsp, Url};

use super::config::{OptimizeSettings, ProjectConfig, Settings};
use super::convert::{self, DiagnosticData, FixData};
use super::target::Target;
use crate::autoguide::{Category, Feedback, FeedbackMode};
use crate::optimize::executors::{
    command_backend, legion_backend, remote_backend, BackendExecutor, SimExecutor,
};
use crate::optimize::history::Record;
use crate::optimize::proposers::hybrid::HybridProposer;
use crate::optimize::proposers::llm::{LlmConfig, LlmProposer};
use crate::optimize::proposers::random::RandomProposer;
use crate::optimize::proposers::scalar::ScalarProposer;
use crate::optimize::proposers::search::SearchProposer;
use crate::optimize::proposers::Proposer;
use crate::optimize::runner::{Execute, Runner};
use crate::optimize::{confirming_runs, default_run_dir, optimize, Config, Event, Report};

pub const OPTIMIZE: &str = "mapwright.optimize";
pub const RUN: &str = "mapwright.run";
pub const EXPLAIN: &str = "mapwright.explain";

/// The commands the server advertises.
pub const COMMANDS: [&str; 3] = [OPTIMIZE, RUN, EXPLAIN];

/// A command's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandArgs {
    pub uri: Url,
    /// Show the result in the editor (a document or a message) rather than
    /// only returning it: set by the server's own code lenses and actions,
    /// whose results editors do not display.
    pub show: bool,
}

/// Reads `[uri]` or `[{"uri": uri, "show": bool}]`.
pub fn parse_args(args: &[Value]) -> Result<CommandArgs, String> {
    let first = args
        .first()
        .ok_or("expected the mapper's URI as the first argument")?;
    let (uri, show) = match first {
        Value::String(s) => (s.as_str(), false),
        Value::Object(o) => (
            o.get("uri")
                .and_then(Value::as_str)
                .ok_or("expected an object with a `uri` string")?,
            o.get("show").and_then(Value::as_bool).unwrap_or(false),
        ),
        _ => return Err("expected the mapper's URI (a string) or {\"uri\": ...}".into()),
    };
    let uri = Url::parse(uri).map_err(|e| format!("`{uri}` is not a URI: {e}"))?;
    Ok(CommandArgs { uri, show })
}

/// Everything a run or an optimization needs, read from the settings and
/// the project file (whose keys win) when the command starts.
#[derive(Debug, Clone)]
pub struct Setup {
    pub app: Arc<App>,
    pub machine: Arc<Machine>,
    /// A `mapwright serve` URL; `None`: the embedded simulator.
    pub runtime_url: Option<String>,
    /// The user's program, when the project says `runtime = "command"`:
    /// (template, timeout in seconds, folder it runs in).
    pub command: Option<(String, Option<u64>, Option<PathBuf>)>,
    pub proposer: String,
    pub llm_base_url: Option<String>,
    pub llm_model: Option<String>,
    pub llm_api_key_env: String,
    pub llm_timeout_s: Option<u64>,
    /// `[llm] ca_file`, relative to the project file's folder.
    pub llm_ca_file: Option<PathBuf>,
    pub optimize: OptimizeSettings,
}

impl Setup {
    /// The setup for a document with `target`; an error says what is missing.
    pub fn new(
        target: Option<&Target>,
        project: Option<&ProjectConfig>,
        settings: &Settings,
    ) -> Result<Setup, String> {
        let target = target.ok_or(
            "no application is configured: set `app` (and `machine`) in mapwright.toml next to \
             the mapper, or the `mapwright.app` setting",
        )?;
        if let Some(p) = target.problems.first() {
            return Err(p.clone());
        }
        let app = target.app.clone().ok_or(
            "no application is configured: set `app` in mapwright.toml or the `mapwright.app` \
             setting",
        )?;
        let machine = target
            .machine
            .clone()
            .ok_or("the machine could not be loaded")?;
        let runtime_url = project
            .and_then(|p| p.runtime.clone())
            .or_else(|| settings.runtime_url.clone())
            .map(|u| u.trim().to_string())
            .filter(|u| !u.is_empty() && u != "embedded" && u != "sim");
        let command = match runtime_url.as_deref() {
            Some("command") => Some((
                project
                    .and_then(|p| p.command_template.clone())
                    .ok_or("runtime = \"command\" needs a [command] template in mapwright.toml")?,
                project.and_then(|p| p.command_timeout_s),
                project.and_then(|p| p.dir().map(Path::to_path_buf)),
            )),
            _ => None,
        };
        let runtime_url = runtime_url.filter(|u| u != "command");
        // Real Legion runs on this host: describe it as Legion does.
        let machine = if runtime_url.as_deref() == Some("legion") {
            let backend =
                legion_backend(mapwright_runtime::backend::legion::default_cpus(), 0, None)
                    .map_err(|e| format!("runtime = \"legion\": {e}"))?;
            Arc::new(
                backend
                    .host_machine()
                    .map_err(|e| format!("runtime = \"legion\": {e}"))?,
            )
        } else {
            machine
        };
        Ok(Setup {
            app,
            machine,
            runtime_url,
            command,
            proposer: project
                .and_then(|p| p.proposer.clone())
                .or_else(|| settings.proposer.clone())
                .unwrap_or_else(|| "search".into()),
            llm_base_url: project
                .and_then(|p| p.llm_base_url.clone())
                .or_else(|| settings.llm.base_url.clone()),
            llm_model: project
                .and_then(|p| p.llm_model.clone())
                .or_else(|| settings.llm.model.clone()),
            llm_api_key_env: project
                .and_then(|p| p.llm_api_key_env.clone())
                .or_else(|| settings.llm.api_key_env.clone())
                .unwrap_or_else(|| "OPENAI_API_KEY".into()),
            llm_timeout_s: project.and_then(|p| p.llm_timeout_s),
            llm_ca_file: project.and_then(|p| {
                let file = p.llm_ca_file.as_deref()?;
                Some(crate::project::resolve_path(file, p.dir()))
            }),
            optimize: OptimizeSettings {
                min_gain: crate::project::check_min_gain(
                    project
                        .and_then(|p| p.min_gain)
                        .unwrap_or(settings.optimize.min_gain),
                )
                .map_err(|e| format!("[optimize] min_gain / mapwright.optimize.minGain: {e}"))?,
                ..settings.optimize.clone()
            },
        })
    }

    /// What runs candidates: the simulator, the user's program, or the
    /// remote service.
    pub fn executor(&self) -> Result<Box<dyn Execute>, String> {
        self.executor_until(None)
    }

    /// [`Setup::executor`] whose program runs stop (their process group
    /// killed) as soon as `cancel` is set.
    pub fn executor_until(
        &self,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Result<Box<dyn Execute>, String> {
        if let Some((template, timeout, dir)) = &self.command {
            let backend =
                command_backend(template, dir.clone(), timeout.map(|t| t as f64), &[], &[])
                    .map_err(|e| format!("[command] in mapwright.toml: {e}"))?;
            return Ok(Box::new(BackendExecutor {
                backend: Box::new(backend),
                app: self.app.clone(),
                machine: self.machine.clone(),
                cancel: cancel.clone(),
            }));
        }
        if self.runtime_url.as_deref() == Some("legion") {
            let backend =
                legion_backend(mapwright_runtime::backend::legion::default_cpus(), 0, None)
                    .map_err(|e| format!("runtime = \"legion\": {e}"))?;
            return Ok(Box::new(BackendExecutor {
                backend: Box::new(backend),
                app: self.app.clone(),
                machine: self.machine.clone(),
                cancel: cancel.clone(),
            }));
        }
        match &self.runtime_url {
            None => Ok(Box::new(SimExecutor {
                app: self.app.clone(),
                machine: self.machine.clone(),
                noise: 0.0,
            })),
            Some(url) => {
                let backend =
                    remote_backend(url).map_err(|e| format!("mapwright.runtimeUrl: {e}"))?;
                Ok(Box::new(BackendExecutor {
                    backend: Box::new(backend),
                    app: self.app.clone(),
                    machine: self.machine.clone(),
                    cancel,
                }))
            }
        }
    }

    /// Where runs happen, for messages.
    pub fn runtime_name(&self) -> String {
        match (&self.command, &self.runtime_url) {
            (Some((template, _, _)), _) => format!("`{template}`"),
            (None, None) => "simulator".to_string(),
            (None, Some(u)) if u == "legion" => "real Legion on this host".to_string(),
            (None, Some(u)) => u.clone(),
        }
    }

    /// The proposer named by the settings or the project file.
    pub fn proposer(&self) -> Result<Box<dyn Proposer>, String> {
        let seed = self.optimize.seed;
        Ok(match self.proposer.as_str() {
            "search" => Box::new(SearchProposer::new(seed)),
            "random" => Box::new(RandomProposer::new(seed)),
            "scalar" => Box::new(ScalarProposer::new(seed)),
            "llm" => Box::new(LlmProposer::new(self.llm_config()?)?),
            "hybrid" => Box::new(HybridProposer::new(
                LlmProposer::new(self.llm_config()?)?,
                seed,
            )),
            other => {
                return Err(format!(
                    "unknown proposer `{other}` (search, random, scalar, llm, hybrid)"
                ))
            }
        })
    }

    fn llm_config(&self) -> Result<LlmConfig, String> {
        let base_url = self.llm_base_url.clone().ok_or(
            "the LLM proposer needs an endpoint: set `mapwright.llm.baseUrl` or [llm] base_url \
             in mapwright.toml",
        )?;
        let mut config = LlmConfig {
            base_url,
            ..LlmConfig::default()
        };
        if let Some(m) = &self.llm_model {
            config.model = m.clone();
        }
        config.api_key = std::env::var(&self.llm_api_key_env)
            .ok()
            .filter(|k| !k.is_empty());
        if let Some(t) = self.llm_timeout_s {
            config.timeout = Duration::from_secs(t);
        }
        config.ca_file = self.llm_ca_file.clone();
        Ok(config)
    }
}

/// The outcome of `mapwright.run`.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub status: String,
    pub elapsed_s: Option<f64>,
    pub throughput: Option<f64>,
    pub normalized: Option<f64>,
    pub summary: String,
    pub raw_output: String,
    pub feedback: Vec<Feedback>,
    /// Where the run failed, when the resolution knows (for diagnostics).
    pub fatal_rule: Option<Span>,
    /// What the run measured (or the model predicted).
    pub metrics: mapwright_runtime::backend::Metrics,
}

impl RunResult {
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }

    /// The JSON result of the command.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "status": self.status,
            "elapsed_s": self.elapsed_s,
            "throughput": self.throughput,
            "normalized": self.normalized,
            "summary": self.summary,
            "raw_output": self.raw_output,
            "feedback": self.feedback,
            "metrics": self.metrics,
        })
    }
}

/// Runs `source` once (blocking).
pub fn run_once(setup: &Setup, source: &str) -> Result<RunResult, String> {
    let executor = setup.executor()?;
    let runner = Runner::new(&setup.app, &setup.machine, executor.as_ref());
    let seed = setup.optimize.seed;
    let e = runner.evaluate(source, seed);
    let expert = runner.expert_score(seed);
    let normalized = match expert {
        Some(x) if x > 0.0 && e.ok() => Some(e.score() / x),
        _ => None,
    };
    let summary = run_summary(
        setup,
        &e.status,
        e.elapsed_s,
        e.throughput,
        normalized,
        &e.raw_output,
    );
    let fatal_rule = e
        .decisions
        .as_ref()
        .and_then(|d| d.fatal.as_ref())
        .and_then(|f| f.rule);
    Ok(RunResult {
        status: e.status.clone(),
        elapsed_s: e.elapsed_s,
        throughput: e.throughput,
        normalized,
        summary,
        raw_output: e.raw_output.clone(),
        feedback: e.feedback.clone(),
        fatal_rule,
        metrics: e.metrics.clone(),
    })
}

fn run_summary(
    setup: &Setup,
    status: &str,
    elapsed: Option<f64>,
    throughput: Option<f64>,
    normalized: Option<f64>,
    raw: &str,
) -> String {
    let mut s = format!(
        "{} on {} ({}): {status}",
        setup.app.name,
        setup.machine.name,
        setup.runtime_name()
    );
    if status == "ok" {
        if let Some(t) = elapsed {
            s.push_str(&format!(", {t:.6} s"));
        }
        if let Some(t) = throughput {
            s.push_str(&format!(", throughput {t:.4}"));
        }
        match normalized {
            Some(n) => s.push_str(&format!(", {n:.3}x the expert mapper")),
            None => s.push_str(", not normalized (no expert mapper result)"),
        }
    } else if let Some(line) = raw.lines().find(|l| !l.trim().is_empty()) {
        s.push_str(&format!(": {}", super::analysis::one_line(line, 160)));
    }
    s
}

/// AutoGuide's feedback as diagnostics (source `autoguide`, code = the
/// rule, linked to the rule's section of `docs/autoguide.md` when the
/// client takes `codeDescription`), each with its mechanical edit as a
/// quick fix. The range is the edit's, else the statement the run failed
/// on, else the first line.
pub fn feedback_diagnostics(
    text: &str,
    version: i32,
    result: &RunResult,
    enc: mapwright_grammar::line_index::Encoding,
    code_description: bool,
) -> Vec<lsp::Diagnostic> {
    let index = LineIndex::new(text);
    let first_line = Span::new(0, text.find('\n').unwrap_or(text.len()));
    result
        .feedback
        .iter()
        .map(|f| {
            let span = f
                .edit
                .as_ref()
                .and_then(|e| e.first())
                .map(|e| e.span)
                .or(result.fatal_rule)
                .unwrap_or(first_line);
            let severity = match f.category {
                Category::CompileError | Category::ExecutionError => lsp::DiagnosticSeverity::ERROR,
                Category::Performance => lsp::DiagnosticSeverity::INFORMATION,
            };
            let fixes = f
                .edit
                .as_ref()
                .map(|edits| {
                    vec![FixData {
                        title: format!("AutoGuide: {}", first_sentence(&f.suggest)),
                        safe: false,
                        edits: edits
                            .iter()
                            .map(|e| {
                                lsp::TextEdit::new(
                                    convert::range(&index, e.span, enc),
                                    e.text.clone(),
                                )
                            })
                            .collect(),
                    }]
                })
                .unwrap_or_default();
            lsp::Diagnostic {
                range: convert::range(&index, span, enc),
                severity: Some(severity),
                code: Some(lsp::NumberOrString::String(f.rule.clone())),
                code_description: code_description
                    .then(|| super::diagnostic_extras::rule_description(&f.rule))
                    .flatten(),
                source: Some("autoguide".into()),
                message: f.render(FeedbackMode::Suggest),
                related_information: None,
                tags: None,
                data: serde_json::to_value(DiagnosticData { version, fixes }).ok(),
            }
        })
        .collect()
}

fn first_sentence(s: &str) -> String {
    let end = s.find(". ").map(|i| i + 1).unwrap_or(s.len());
    super::analysis::one_line(&s[..end], 80)
}

/// One progress step of the optimizer.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub iteration: usize,
    pub total: usize,
    pub status: String,
    pub normalized: Option<f64>,
    pub best: Option<f64>,
    pub rationale: String,
    /// The candidate's own measured figure (`0.84 s`), where it ran.
    pub measured: Option<String>,
    /// The candidate's and the best speed relative to the first mapper
    /// that ran (the user's, where it runs): what progress shows where no
    /// expert figure exists.
    pub relative: Option<f64>,
    pub best_relative: Option<f64>,
    /// The repeated runs that confirm the gain after the loop, where the
    /// backend measures (so the bar keeps room for them).
    pub confirm_runs: usize,
    /// Set while they run: repeated run `.0` of `.1` has started.
    pub confirming: Option<(usize, usize)>,
    /// What is under way while candidate `iteration` is proposed or run
    /// (`running candidate 3/8`, see [`crate::optimize::Stage::describe`]);
    /// the figures are the last result's.
    pub under_way: Option<String>,
}

impl Step {
    fn of(
        r: &Record,
        best: Option<f64>,
        total: usize,
        confirm_runs: usize,
        start: &mut StartRelative,
    ) -> Step {
        let ok = r.evaluation.ok() && r.score > 0.0;
        let relative = start.record(r);
        let measured = ok.then(|| match (r.evaluation.throughput, r.evaluation.elapsed_s) {
            (Some(t), _) if t > 0.0 => format!("throughput {t:.4}"),
            (_, Some(e)) => format!("{e:.3} s"),
            _ => format!("score {:.4}", r.score),
        });
        Step {
            iteration: r.iteration,
            total,
            status: r.evaluation.status.clone(),
            normalized: r.normalized,
            best,
            rationale: r.rationale.clone(),
            measured,
            relative,
            best_relative: start.best(),
            confirm_runs,
            confirming: None,
            under_way: None,
        }
    }

    /// The step while candidate `iteration` of `total` is proposed or run
    /// (`under_way` says which), with the last result's figures (none
    /// before the first run).
    fn under_way(
        last: Option<&Step>,
        iteration: usize,
        total: usize,
        confirm_runs: usize,
        under_way: String,
    ) -> Step {
        let fresh = || Step {
            total,
            confirm_runs,
            ..Step::default()
        };
        Step {
            iteration,
            under_way: Some(under_way),
            ..last.cloned().unwrap_or_else(fresh)
        }
    }

    /// The last candidate's step, now that repeated run `run` of `of` of
    /// the mapper as written and the best candidate has started.
    fn confirming(last: &Step, run: usize, of: usize) -> Step {
        Step {
            confirming: Some((run, of)),
            ..last.clone()
        }
    }

    /// `iteration 3/10: ok 0.95x · best 1.00x` against the expert; where
    /// there is no expert figure, `iteration 3/10: ok 0.84 s (1.82x yours)
    /// · best 1.82x yours`. Never a dash where a figure belongs.
    pub fn message(&self) -> String {
        let x = |v: f64| format!("{v:.2}x");
        let best = match (self.best, self.best_relative) {
            (Some(b), _) => format!("best {}", x(b)),
            (None, Some(b)) => format!("best {} yours", x(b)),
            (None, None) => "nothing has run yet".to_string(),
        };
        if let Some((run, of)) = self.confirming {
            return format!(
                "confirming {run}/{of}: yours and the best run again, in turn · {best}"
            );
        }
        if let Some(now) = &self.under_way {
            return format!("{now} · {best}");
        }
        let own = match (self.best, self.best_relative) {
            (Some(_), _) => self.normalized.map(x).unwrap_or_default(),
            (None, Some(_)) => match (&self.measured, self.relative) {
                (Some(m), Some(r)) => format!("{m} ({} yours)", x(r)),
                (Some(m), None) => m.clone(),
                _ => String::new(),
            },
            (None, None) => String::new(),
        };
        let own = if own.is_empty() {
            String::new()
        } else {
            format!(" {own}")
        };
        format!(
            "iteration {}/{}: {}{own} · {best}",
            self.iteration, self.total, self.status
        )
    }

    /// The share of the runs done: the candidates' (`total + 1` with the
    /// mapper as written), then the confirming ones. A confirming step
    /// counts its run as started, so the bar never reaches 100 before the
    /// end; a candidate being proposed or run counts those before it.
    pub fn percentage(&self) -> u32 {
        let runs = self.total + 1 + self.confirm_runs;
        let done = match (self.confirming, &self.under_way) {
            (Some((run, _)), _) => self.total + run,
            (None, Some(_)) => self.iteration,
            (None, None) => self.iteration + 1,
        };
        ((done * 100) / runs.max(1)).min(100) as u32
    }
}

/// The outcome of the optimizer loop.
pub struct Optimized {
    pub report: Report,
    pub report_dir: Option<PathBuf>,
    /// The report's plot and the best run's timeline, written into the run
    /// folder (`report.svg`, `report.timeline.svg`), or why they could not
    /// be; `None` without a run folder.
    pub pictures: Option<Result<Pictures, String>>,
}

/// Runs the optimizer loop on `source` (blocking). `step` is called as
/// each candidate is proposed and starts to run, and after it (then the
/// test delay, if any, passes); `cancel` stops the loop after the current
/// candidate.
pub fn optimize_blocking(
    setup: &Setup,
    source: &str,
    mapper_path: Option<&Path>,
    cancel: Arc<AtomicBool>,
    step: &mut dyn FnMut(Step),
) -> Result<Optimized, String> {
    // A cancel also stops the run under way: the user's program is killed.
    let executor = setup.executor_until(Some(cancel.clone()))?;
    let mut proposer = setup.proposer()?;
    let runner = Runner::new(&setup.app, &setup.machine, executor.as_ref());
    let seed = setup.optimize.seed;
    let expert = runner.expert_score(seed);
    let run_dir = match mapper_path {
        Some(p) if setup.optimize.save_runs => Some(default_run_dir(p, &setup.proposer)),
        _ => None,
    };
    let config = Config {
        iterations: setup.optimize.iterations,
        time_budget: None,
        seed,
        feedback_mode: FeedbackMode::Suggest,
        run_dir: run_dir.clone(),
        cancel,
        as_block: false,
        min_gain: setup.optimize.min_gain,
        repeats: crate::optimize::verdict::DEFAULT_REPEATS,
        screen: None,
    };
    let delay = Duration::from_millis(setup.optimize.delay_ms);
    let mut start = StartRelative::default();
    let confirm_runs = confirming_runs(config.repeats, executor.measures());
    let mut last: Option<Step> = None;
    let mut progress = |event: Event<'_>| match event {
        Event::Candidate {
            record,
            best,
            total,
        } => {
            let s = Step::of(record, best, total, confirm_runs, &mut start);
            last = Some(s.clone());
            step(s);
            if !delay.is_zero() {
                std::thread::sleep(delay);
            }
        }
        Event::Confirming { run, of } => {
            if let Some(last) = &last {
                step(Step::confirming(last, run, of));
            }
        }
        Event::UnderWay {
            stage,
            iteration,
            total,
        } => step(Step::under_way(
            last.as_ref(),
            iteration,
            total,
            confirm_runs,
            stage.describe(iteration, total),
        )),
    };
    let report = optimize(
        source,
        &runner,
        proposer.as_mut(),
        &config,
        expert,
        None,
        &mut progress,
    );
    let pictures = run_dir.as_ref().map(|dir| {
        let plot = dir.join("report.svg");
        pictures::write(
            &report,
            (&setup.app.name, &setup.machine.name),
            Vec::new(),
            &plot,
        )
        .map_err(|e| format!("cannot write {}: {e}", plot.display()))
    });
    Ok(Optimized {
        report,
        report_dir: run_dir,
        pictures,
    })
}

/// `mapper.optimized.mapper` next to `mapper.mapper`.
pub fn optimized_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mapper".into());
    path.with_file_name(format!("{stem}.optimized.mapper"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_accept_a_uri_or_an_object() {
        let a = parse_args(&[json!("file:///a/m.mapper")]).unwrap();
        assert_eq!(a.uri.as_str(), "file:///a/m.mapper");
        assert!(!a.show);
        let b = parse_args(&[json!({"uri": "file:///a/m.mapper", "show": true})]).unwrap();
        assert!(b.show);
        assert!(parse_args(&[]).is_err());
        assert!(parse_args(&[json!(3)]).is_err());
        assert!(parse_args(&[json!("not a uri")]).is_err());
    }

    /// Progress counts every run: the candidates, then the repeated runs
    /// that confirm the gain, which say what they are and keep the best.
    #[test]
    fn confirming_runs_have_their_own_message_and_share_of_the_bar() {
        let mut start = StartRelative::default();
        let mut r = Record::scored(4, 2.0, &[]);
        r.evaluation.status = "ok".into();
        r.evaluation.elapsed_s = Some(0.5);
        let last = Step::of(&r, Some(1.25), 4, 4, &mut start);
        // Five candidate runs of nine.
        assert_eq!(last.percentage(), 55);
        assert!(
            last.message().starts_with("iteration 4/4: ok"),
            "{}",
            last.message()
        );
        let confirming = Step::confirming(&last, 2, 4);
        assert_eq!(
            confirming.message(),
            "confirming 2/4: yours and the best run again, in turn · best 1.25x"
        );
        assert_eq!(confirming.percentage(), 66);
        assert!(Step::confirming(&last, 4, 4).percentage() < 100);
        // Without confirming runs the last candidate fills the bar.
        assert_eq!(Step::of(&r, Some(1.25), 4, 0, &mut start).percentage(), 100);
        let first = Step::of(&Record::scored(0, 1.0, &[]), None, 4, 0, &mut start);
        assert_eq!(first.percentage(), 20);
    }

    /// While a candidate is proposed or run, progress says so, with the
    /// last result's best figure, and the bar counts the runs before it:
    /// it never goes back, and a result moves it on.
    #[test]
    fn what_is_under_way_has_its_message_and_keeps_the_bar_moving_forward() {
        let mut start = StartRelative::default();
        let first = Step::under_way(None, 0, 4, 4, "running your mapper as written".into());
        assert_eq!(
            first.message(),
            "running your mapper as written · nothing has run yet"
        );
        assert_eq!(first.percentage(), 0);
        let mut r = Record::scored(2, 2.0, &[]);
        r.evaluation.status = "ok".into();
        r.evaluation.elapsed_s = Some(0.5);
        let done = Step::of(&r, Some(1.25), 4, 4, &mut start);
        let proposing = Step::under_way(Some(&done), 3, 4, 4, "proposing candidate 3/4".into());
        let running = Step::under_way(Some(&done), 3, 4, 4, "running candidate 3/4".into());
        assert_eq!(proposing.message(), "proposing candidate 3/4 · best 1.25x");
        assert_eq!(running.message(), "running candidate 3/4 · best 1.25x");
        r.iteration = 3;
        let next = Step::of(&r, Some(1.25), 4, 4, &mut start);
        let bar: Vec<u32> = [&first, &done, &proposing, &running, &next]
            .iter()
            .map(|s| s.percentage())
            .collect();
        // Nine runs in all: 0, then 3 done, 3 done before candidate 3, 4.
        assert_eq!(bar, [0, 33, 33, 33, 44]);
    }

    #[test]
    fn optimized_documents_sit_next_to_the_mapper() {
        assert_eq!(
            optimized_path(Path::new("/x/cannon.mapper")),
            Path::new("/x/cannon.optimized.mapper")
        );
    }

    #[test]
    fn setups_need_an_application_and_know_their_runtime() {
        let settings = Settings::default();
        assert!(Setup::new(None, None, &settings)
            .unwrap_err()
            .contains("no application"));
        let t = Target::load(super::super::target::TargetKey {
            dir: None,
            app: Some("cannon".into()),
            machine: None,
        });
        let s = Setup::new(Some(&t), None, &settings).unwrap();
        assert_eq!(s.runtime_name(), "simulator");
        assert_eq!(s.proposer, "search");
        let r = run_once(&s, "Task * GPU,CPU;\n").unwrap();
        assert!(!r.ok(), "{}", r.summary);
        assert!(!r.feedback.is_empty());
        let diags = feedback_diagnostics(
            "Task * GPU,CPU;\n",
            3,
            &r,
            mapwright_grammar::line_index::Encoding::Utf16,
            true,
        );
        assert_eq!(diags[0].source.as_deref(), Some("autoguide"));
        let Some(lsp::NumberOrString::String(rule)) = &diags[0].code else {
            panic!("no rule: {:?}", diags[0]);
        };
        let href = &diags[0].code_description.as_ref().expect("a link").href;
        assert!(
            href.as_str().ends_with(&format!("/autoguide.md#{rule}")),
            "{href}"
        );
        let mut remote = settings.clone();
        remote.runtime_url = Some("https://nope".into());
        let s = Setup::new(Some(&t), None, &remote).unwrap();
        assert!(s.executor().err().unwrap().contains("http://"));
        remote.proposer = Some("llm".into());
        let s = Setup::new(Some(&t), None, &remote).unwrap();
        assert!(s.proposer().err().unwrap().contains("baseUrl"));
    }

    #[test]
    fn the_project_files_minimum_gain_wins_and_a_bad_one_is_refused() {
        let t = Target::load(super::super::target::TargetKey {
            dir: None,
            app: Some("circuit".into()),
            machine: None,
        });
        let mut settings = Settings::default();
        settings.optimize.min_gain = 0.1;
        let s = Setup::new(Some(&t), None, &settings).unwrap();
        assert_eq!(s.optimize.min_gain, 0.1);
        let mut project = ProjectConfig {
            min_gain: Some(0.0),
            ..ProjectConfig::default()
        };
        let s = Setup::new(Some(&t), Some(&project), &settings).unwrap();
        assert_eq!(s.optimize.min_gain, 0.0);
        project.min_gain = Some(-1.0);
        let e = Setup::new(Some(&t), Some(&project), &settings).unwrap_err();
        assert!(e.contains("min_gain"), "{e}");
    }

    #[test]
    fn a_project_can_run_candidates_with_its_own_program() {
        let t = Target::load(super::super::target::TargetKey {
            dir: None,
            app: Some("stencil".into()),
            machine: None,
        });
        let tmp = crate::testing::temp_dir("mw-lsp-command", "program");
        let dir = tmp.to_path_buf();
        let mut project = ProjectConfig {
            path: dir.join("mapwright.toml"),
            runtime: Some("command".into()),
            ..ProjectConfig::default()
        };
        let settings = Settings::default();
        assert!(Setup::new(Some(&t), Some(&project), &settings)
            .unwrap_err()
            .contains("[command] template"));
        // A stand-in program: runs in the project's folder and prints a time
        // in the benchmarks' format when the mapper exists.
        project.command_template =
            Some("test -s {mapper} && pwd > where.txt && echo 'ELAPSED TIME = 2.500 s'".into());
        let s = Setup::new(Some(&t), Some(&project), &settings).unwrap();
        assert!(
            s.runtime_name().contains("ELAPSED TIME"),
            "{}",
            s.runtime_name()
        );
        let r = run_once(&s, "Task * GPU;\n").unwrap();
        assert!(r.ok(), "{}", r.summary);
        assert_eq!(r.elapsed_s, Some(2.5));
        let ran_in = std::fs::read_to_string(dir.join("where.txt")).unwrap();
        assert_eq!(
            std::fs::canonicalize(ran_in.trim()).unwrap(),
            std::fs::canonicalize(&dir).unwrap()
        );
    }
}
