//! The hybrid proposer: the LLM proposes strategies, search tunes their
//! parameters. LLMs are good at picking a structure (which tasks where, which
//! kind of distribution) and poor at systematic parameter search, so every
//! third proposal goes to the LLM and the others are search moves starting
//! from the best mapper so far.

use super::llm::LlmProposer;
use super::search::SearchProposer;
use super::{Proposal, ProposalContext, ProposeError, Proposer};
use crate::optimize::history::Usage;

/// How a hybrid proposal from the LLM's turn begins its rationale.
pub const LLM_TURN: &str = "LLM strategy: ";
/// What a search move that stood in for an unusable LLM answer says.
pub const LLM_UNUSABLE: &str = "the LLM's answer was unusable";

pub struct HybridProposer {
    llm: LlmProposer,
    seed: u64,
    /// Search restarted from each new best strategy the LLM found.
    search: SearchProposer,
    /// The text search currently builds on.
    strategy: Option<String>,
    calls: usize,
}

impl HybridProposer {
    pub fn new(llm: LlmProposer, seed: u64) -> HybridProposer {
        HybridProposer {
            llm,
            seed,
            search: SearchProposer::new(seed),
            strategy: None,
            calls: 0,
        }
    }
}

impl Proposer for HybridProposer {
    fn name(&self) -> &str {
        "hybrid"
    }

    fn propose(&mut self, ctx: &ProposalContext<'_>) -> Result<Proposal, ProposeError> {
        self.calls += 1;
        let best = ctx.history.iter().filter(|r| r.score > 0.0).max_by(|a, b| {
            a.score
                .partial_cmp(&b.score)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        // The best mapper so far, which both build on: the LLM's strategy is
        // a change of it (so a repair search found is kept), and search
        // tunes it.
        let best_base = best.and_then(|b| {
            let decisions = (ctx.resolve)(&b.source)?;
            Some((crate::optimize::space::strip_block(&b.source), decisions))
        });
        let best_ctx = best_base.as_ref().map(|(base, decisions)| ProposalContext {
            base,
            base_decisions: decisions,
            app: ctx.app,
            machine: ctx.machine,
            space: ctx.space,
            history: ctx.history,
            feedback_mode: ctx.feedback_mode,
            resolve: ctx.resolve,
            as_block: ctx.as_block,
        });
        let mut unusable = None;
        if self.calls % 3 == 1 {
            match self.llm.propose(best_ctx.as_ref().unwrap_or(ctx)) {
                Ok(mut p) => {
                    p.rationale = format!("{LLM_TURN}{}", p.rationale);
                    return Ok(p);
                }
                // The iteration is not lost: search moves instead, and says why.
                Err(e) => unusable = Some(e),
            }
        }
        let note = |mut p: Proposal| {
            if !p.rationale.starts_with("search") {
                p.rationale = format!("search: {}", p.rationale);
            }
            if let Some(e) = &unusable {
                p.rationale = format!("{} ({LLM_UNUSABLE}: {e})", p.rationale);
            }
            p
        };
        if let Some(best) = best {
            if self.strategy.as_deref() != Some(best.source.as_str()) {
                self.strategy = Some(best.source.clone());
                self.search = SearchProposer::new(self.seed.wrapping_add(self.calls as u64));
            }
        }
        // Tune the best mapper so far (often an LLM strategy) with search
        // moves; while nothing runs, search repairs from the user's mapper.
        let Some(best_ctx) = &best_ctx else {
            return self.search.propose(ctx).map(note);
        };
        let mut p = self.search.propose(best_ctx)?;
        p.rationale = format!("search tuning the best strategy: {}", p.rationale);
        Ok(note(p))
    }

    fn usage(&self) -> Option<Usage> {
        self.llm.usage()
    }

    fn set_cancel(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.llm.set_cancel(flag);
    }
}
