//! Evaluating one candidate: static check -> mapping resolution -> run on the
//! configured backend -> AutoGuide. A candidate that does not compile is
//! reported the way the reference reports it, so AutoGuide and the LLM see
//! the same text a real run would print.

use mapwright_grammar::{analyze, LineIndex};
use mapwright_runtime::app::App;
use mapwright_runtime::backend::{Metrics, MetricsBasis, RunOutcome};
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::Machine;
use serde::{Deserialize, Serialize};

use crate::autoguide::{guide, Context, Feedback};

/// The measured outcome of one candidate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Evaluation {
    /// `ok`, `compile_error`, or the runtime's error kind.
    pub status: String,
    pub elapsed_s: Option<f64>,
    pub throughput: Option<f64>,
    pub raw_output: String,
    #[serde(skip)]
    pub decisions: Option<Decisions>,
    pub feedback: Vec<Feedback>,
    /// What the run measured (or the model predicted), per task, processor,
    /// copy and memory; empty for a candidate that did not run.
    #[serde(default)]
    pub metrics: Metrics,
}

impl Evaluation {
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }

    /// Higher is better: throughput when the program reports one, else the
    /// inverse of the elapsed time; 0 for a failure.
    pub fn score(&self) -> f64 {
        if !self.ok() {
            return 0.0;
        }
        match (self.throughput, self.elapsed_s) {
            (Some(t), _) if t > 0.0 => t,
            (_, Some(e)) if e > 0.0 => 1.0 / e,
            _ => 0.0,
        }
    }
}

/// What runs a candidate once it compiled and resolved.
pub trait Execute {
    /// Runs `decisions` (resolved from `source`) and reports what happened.
    fn execute(&self, source: &str, decisions: &Decisions, seed: u64) -> RunOutcome;

    /// Whether two runs of one mapper can measure differently (a real
    /// machine, a noisy model): then a gain must beat the spread of repeated
    /// runs to count (see [`super::verdict`]).
    fn measures(&self) -> bool {
        true
    }
}

/// Resolves a mapper into decisions (the runtime's mapping resolution).
pub type Resolve = fn(&mapwright_grammar::Analysis, &str, &App, &Machine) -> Decisions;

/// Evaluates candidates for one application on one machine.
pub struct Runner<'a> {
    pub app: &'a App,
    pub machine: &'a Machine,
    pub resolve: Resolve,
    pub executor: &'a dyn Execute,
}

impl<'a> Runner<'a> {
    /// A runner with the runtime's own mapping resolution.
    pub fn new(app: &'a App, machine: &'a Machine, executor: &'a dyn Execute) -> Runner<'a> {
        Runner {
            app,
            machine,
            resolve: mapwright_runtime::resolve_mapping::resolve_mapping,
            executor,
        }
    }

    /// The application's expert mapper run here, seed `seed`: what 1.0x
    /// means (`None`: the application has no built-in expert).
    pub fn run_expert(&self, seed: u64) -> Option<Evaluation> {
        let text = self.app.expert_text()?;
        Some(self.evaluate(text, seed))
    }

    /// The expert's score, when it ran.
    pub fn expert_score(&self, seed: u64) -> Option<f64> {
        self.run_expert(seed).filter(|e| e.ok()).map(|e| e.score())
    }

    /// Resolves a mapper without running it (`None` if it does not compile).
    pub fn decisions(&self, source: &str) -> Option<Decisions> {
        let analysis = analyze(source);
        if analysis.diagnostics().iter().any(|d| d.is_error()) {
            return None;
        }
        Some((self.resolve)(&analysis, source, self.app, self.machine))
    }

    pub fn evaluate(&self, source: &str, seed: u64) -> Evaluation {
        let analysis = analyze(source);
        let errors: Vec<_> = analysis
            .diagnostics()
            .into_iter()
            .filter(|d| d.is_error())
            .collect();
        let (status, elapsed_s, throughput, raw_output, decisions, metrics) =
            if let Some(first) = errors.first() {
                // The reference stops at the first error and prints its line.
                let line = LineIndex::new(source).line_of(first.span.start()) + 1;
                let raw = format!(
                    "Error at line {line}:\n\t{} [{}]",
                    first.message, first.code
                );
                (
                    "compile_error".to_string(),
                    None,
                    None,
                    raw,
                    None,
                    Metrics::default(),
                )
            } else {
                let decisions = (self.resolve)(&analysis, source, self.app, self.machine);
                if let Some(fatal) = &decisions.fatal {
                    (
                        fatal.kind.clone(),
                        None,
                        None,
                        fatal.raw_output.clone(),
                        Some(decisions),
                        Metrics::default(),
                    )
                } else {
                    let o = self.executor.execute(source, &decisions, seed);
                    (
                        o.status.as_str().to_string(),
                        o.elapsed_s,
                        o.throughput,
                        o.raw_output,
                        Some(decisions),
                        o.metrics,
                    )
                }
            };
        let mut ctx = Context::new(
            source,
            &analysis,
            decisions.as_ref(),
            &raw_output,
            Some(self.app),
            Some(self.machine),
        );
        ctx.metrics = Some(&metrics).filter(|m| m.basis != MetricsBasis::None);
        let feedback = guide(&ctx);
        Evaluation {
            status,
            elapsed_s,
            throughput,
            raw_output,
            decisions,
            feedback,
            metrics,
        }
    }
}
