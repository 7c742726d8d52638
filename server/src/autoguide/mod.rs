//! AutoGuide: turns raw output (our checker's diagnostics, a run's error text,
//! a run's performance lines) into an explanation, a suggestion and, where the
//! repair is mechanical, a concrete edit of the mapper.
//!
//! The rules are a table ([`rules::RULES`]): each rule says which raw output it
//! recognises, what it explains and suggests, and optionally how to compute
//! an edit. Adding a rule is adding a row. [`measured`] reads a real run's
//! measured figures for the performance rules; [`placement_fns`] writes the
//! placement functions their edits (and the optimizer) add. The optimizer feeds the result back
//! into its proposers; the language server shows it as diagnostics and quick
//! fixes.

pub mod edits;
pub mod measured;
pub mod placement_fns;
pub mod rules;

use mapwright_grammar::{Analysis, Diagnostic, TextEdit};
use mapwright_runtime::app::App;
use mapwright_runtime::backend::Metrics;
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::Machine;
use serde::{Deserialize, Serialize};

/// What kind of output a rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// The mapper does not compile (parse or static errors).
    CompileError,
    /// The run aborted.
    ExecutionError,
    /// The run succeeded; the rule reads its performance.
    Performance,
}

/// How much of AutoGuide's output a proposer sees (the paper's ablation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackMode {
    /// Only the raw execution output.
    ExecutionOnly,
    /// Raw output plus the explanation.
    Explain,
    /// Raw output, explanation and suggestion (the default).
    Suggest,
}

/// AutoGuide's reading of one outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    /// The rule that produced it (stable id, e.g. `slice-out-of-bound`).
    pub rule: String,
    pub category: Category,
    pub explain: String,
    pub suggest: String,
    /// A mechanical repair of the mapper, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit: Option<Vec<TextEdit>>,
}

impl Feedback {
    /// The text a proposer sees in `mode` (the raw output is passed separately).
    pub fn render(&self, mode: FeedbackMode) -> String {
        match mode {
            FeedbackMode::ExecutionOnly => String::new(),
            FeedbackMode::Explain => format!("Explain: {}", self.explain),
            FeedbackMode::Suggest => {
                format!("Explain: {}\nSuggest: {}", self.explain, self.suggest)
            }
        }
    }
}

/// Everything a rule may look at.
pub struct Context<'a> {
    /// The mapper the output came from.
    pub source: &'a str,
    pub analysis: &'a Analysis,
    /// The resolved decisions, when the mapper compiled.
    pub decisions: Option<&'a Decisions>,
    /// The raw output of the run (or the checker).
    pub raw_output: &'a str,
    /// The application, when known (library constraints, variants).
    pub app: Option<&'a App>,
    /// The machine, when known (processor counts for imbalance).
    pub machine: Option<&'a Machine>,
    /// `analysis.diagnostics()`, computed once: most rules read them.
    pub diagnostics: Vec<Diagnostic>,
    /// What the run measured (or the model predicted): the performance
    /// rules quote these figures. None where the run has none.
    pub metrics: Option<&'a Metrics>,
}

impl<'a> Context<'a> {
    pub fn new(
        source: &'a str,
        analysis: &'a Analysis,
        decisions: Option<&'a Decisions>,
        raw_output: &'a str,
        app: Option<&'a App>,
        machine: Option<&'a Machine>,
    ) -> Context<'a> {
        let diagnostics = analysis.diagnostics();
        Context {
            source,
            analysis,
            decisions,
            raw_output,
            app,
            machine,
            diagnostics,
            metrics: None,
        }
    }
}

/// Applies every matching rule, most specific first (table order); a rule
/// fires at most once. Performance rules fire only when no error rule did.
pub fn guide(ctx: &Context<'_>) -> Vec<Feedback> {
    let mut out: Vec<Feedback> = Vec::new();
    for rule in rules::RULES {
        if rule.category == Category::Performance
            && out.iter().any(|f| f.category != Category::Performance)
        {
            continue;
        }
        if rule.fallback && out.iter().any(|f| f.category != Category::Performance) {
            continue;
        }
        if !(rule.matches)(ctx) {
            continue;
        }
        let edit = rule
            .edit
            .and_then(|make| make(ctx))
            .filter(|e| !e.is_empty());
        out.push(Feedback {
            rule: rule.id.to_string(),
            category: rule.category,
            explain: (rule.explain)(ctx),
            suggest: rule.suggest.to_string(),
            edit,
        });
    }
    out
}
