//! The record of an optimization run: one entry per candidate.

use std::collections::BTreeMap;

use mapwright_grammar::TextEdit;
use serde::{Deserialize, Serialize};

use super::runner::Evaluation;
use super::space::Spec;

/// One evaluated candidate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// 0 is the user's mapper; proposals count from 1.
    pub iteration: usize,
    pub proposer: String,
    pub rationale: String,
    pub source: String,
    pub evaluation: Evaluation,
    /// Higher is better (see [`Evaluation::score`]).
    pub score: f64,
    /// Score relative to the application's expert mapper (1.0 = expert).
    pub normalized: Option<f64>,
    /// What the candidate decides, parameter by parameter (for the metrics).
    pub parameters: BTreeMap<String, String>,
    #[serde(skip)]
    pub spec: Option<Spec>,
    /// Seconds spent evaluating.
    pub seconds: f64,
}

impl Record {
    /// AutoGuide's mechanical edit for this outcome, if any.
    pub fn edit(&self) -> Option<&Vec<TextEdit>> {
        self.evaluation
            .feedback
            .iter()
            .find_map(|f| f.edit.as_ref())
    }
}

#[cfg(test)]
impl Record {
    /// A record of iteration `iteration` scoring `score` (`ok` above 0,
    /// `failed` else) that decided `params`, for tests of what is derived
    /// from records.
    pub(crate) fn scored(iteration: usize, score: f64, params: &[(&str, &str)]) -> Record {
        Record {
            iteration,
            proposer: String::new(),
            rationale: String::new(),
            source: format!("# {score}\n"),
            evaluation: Evaluation {
                status: if score > 0.0 { "ok" } else { "failed" }.into(),
                elapsed_s: None,
                throughput: Some(score),
                raw_output: String::new(),
                decisions: None,
                feedback: Vec::new(),
                metrics: Default::default(),
            },
            score,
            normalized: None,
            parameters: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            spec: None,
            seconds: 0.0,
        }
    }
}

/// LLM usage accounting.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub requests: u64,
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Estimated from the per-token prices given in the configuration.
    pub cost_usd: f64,
}
