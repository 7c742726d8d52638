//! Proposers: where the next candidate comes from. All share one trait so the
//! loop, the metrics and the benchmark treat them alike.
//!
//! - [`search`]  built-in structured search guided by AutoGuide (default, no LLM).
//! - [`random`]  uniformly random points of the space (baseline).
//! - [`scalar`]  an OpenTuner-like tuner that only sees the score (baseline).
//! - [`llm`]     an OpenAI-compatible chat-completions model.
//! - [`hybrid`]  the LLM proposes a strategy, search tunes its parameters.
//! - [`chat_text`] the mapper in a chat answer's code block (both LLM modes).
//! - [`abortable`] a request to a local `http://` model server that a cancel
//!   really aborts (the socket is shut down).

pub mod abortable;
pub mod chat_text;
pub mod hybrid;
pub mod llm;
pub mod random;
pub mod scalar;
pub mod search;
pub mod structured;

use mapwright_runtime::app::App;
use mapwright_runtime::decisions::Decisions;
use mapwright_runtime::machine::Machine;

use super::history::Record;
use super::inplace::render_in_place;
use super::space::{render, Space, Spec};
use crate::autoguide::FeedbackMode;

/// Everything a proposer may use to make its next proposal.
pub struct ProposalContext<'a> {
    /// The user's mapper (without a previous tuned block).
    pub base: &'a str,
    /// What the base mapper decides.
    pub base_decisions: &'a Decisions,
    pub app: &'a App,
    pub machine: &'a Machine,
    pub space: &'a Space,
    /// Every candidate so far with its outcome, oldest first (index 0 is the
    /// user's own mapper).
    pub history: &'a [Record],
    pub feedback_mode: FeedbackMode,
    /// Resolves a mapper text into decisions (`None` if it does not compile).
    pub resolve: &'a dyn Fn(&str) -> Option<Decisions>,
    /// Write candidates as a stacked tuned-rules block (`--as-block`)
    /// instead of edits of the user's own statements.
    pub as_block: bool,
}

impl ProposalContext<'_> {
    /// The mapper text for `spec` relative to `base` (whose decisions are
    /// `base_decisions`): edits of the user's own statements, or the tuned
    /// block when asked for or when the edits cannot reach exactly the
    /// block's decisions.
    pub fn render(&self, base: &str, base_decisions: &Decisions, spec: &Spec) -> String {
        if !self.as_block {
            if let Some(text) = render_in_place(
                base,
                base_decisions,
                spec,
                self.app,
                self.machine,
                self.resolve,
            ) {
                return text;
            }
        }
        render(base, base_decisions, spec, self.app)
    }
}

/// One proposal: the full mapper text, and the spec it came from if any.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub source: String,
    pub spec: Option<Spec>,
    /// Why (shown in the report and progress line).
    pub rationale: String,
}

/// Errors a proposer can report (the loop records them and goes on).
#[derive(Debug, thiserror::Error)]
pub enum ProposeError {
    #[error("LLM request failed: {0}")]
    Request(String),
    /// Every answer of one proposal was unusable; why, per attempt.
    #[error("unusable answer: {}", problems.join("; "))]
    Answer { problems: Vec<String> },
    #[error("LLM request timed out after {0:.0} s")]
    Timeout(f64),
    #[error("cancelled while waiting for the model")]
    Cancelled,
    #[error("the search space is exhausted")]
    Exhausted,
}

/// A source of candidates.
pub trait Proposer {
    fn name(&self) -> &str;
    fn propose(&mut self, ctx: &ProposalContext<'_>) -> Result<Proposal, ProposeError>;
    /// Token and cost accounting (LLM proposers).
    fn usage(&self) -> Option<super::history::Usage> {
        None
    }
    /// A flag that, once set, stops waiting for a remote model (Ctrl-C).
    fn set_cancel(&mut self, _flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {}
}
