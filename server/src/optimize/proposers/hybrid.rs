//! The hybrid proposer: the LLM proposes strategies, search tunes their
//! parameters. LLMs are good at picking a structure (which tasks where, which
//! kind of distribution) and poor at systematic parameter search, so every
//! third proposal goes to the LLM and the others are search moves.
//!
//! Search goes on as it would alone, and takes up an LLM strategy only when
//! the strategy runs faster than anything search had found, and search had
//! found something that runs. It sees its own candidates (with their own
//! rationale, which its repair rules read) and those strategies, not the
//! LLM's failures nor its slower strategies: a strategy that does not help
//! costs the hybrid the LLM's turn, not search's way to what it finds alone
//! (before this, search repaired the LLM's failed strategies and tuned a
//! slower one it had adopted while its own repairs were under way, and
//! ended below search alone: cannon, 0.852x against 1.046x in 10
//! iterations, a real-model run).

use std::collections::HashMap;

use super::llm::LlmProposer;
use super::search::SearchProposer;
use super::{Proposal, ProposalContext, ProposeError, Proposer};
use crate::optimize::history::{Record, Usage};

/// How a hybrid proposal from the LLM's turn begins its rationale.
pub const LLM_TURN: &str = "LLM strategy: ";
/// What a search move that stood in for an unusable LLM answer says.
pub const LLM_UNUSABLE: &str = "the LLM's answer was unusable";

pub struct HybridProposer {
    llm: LlmProposer,
    search: SearchProposer,
    /// Search's own proposals: their text and search's own rationale.
    searched: HashMap<String, String>,
    /// What search sees of the history: every record to here was judged.
    view: Vec<Record>,
    judged: usize,
    calls: usize,
}

impl HybridProposer {
    pub fn new(llm: LlmProposer, seed: u64) -> HybridProposer {
        HybridProposer {
            llm,
            search: SearchProposer::new(seed),
            searched: HashMap::new(),
            view: Vec::new(),
            judged: 0,
            calls: 0,
        }
    }

    /// Brings search's view up to `history`: the user's mapper and search's
    /// own candidates (their rationale as search wrote it), and an LLM
    /// strategy that runs faster than every record in the view when one of
    /// them runs. Judged once per record, so the view only grows.
    fn update_view(&mut self, history: &[Record]) {
        for r in history.iter().skip(self.judged) {
            let best = self.view.iter().map(|v| v.score).fold(0.0, f64::max);
            if let Some(own) = self.searched.get(&r.source) {
                let mut r = r.clone();
                r.rationale = own.clone();
                self.view.push(r);
            } else if r.iteration == 0 || (best > 0.0 && r.score > best) {
                self.view.push(r.clone());
            }
        }
        self.judged = history.len();
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
        // The best mapper so far: the LLM's strategy is a change of it (so a
        // repair search found is kept).
        let best_base = best.and_then(|b| {
            let decisions = (ctx.resolve)(&b.source)?;
            Some((crate::optimize::space::strip_block(&b.source), decisions))
        });
        let best_ctx = best_base.as_ref().map(|(base, decisions)| ProposalContext {
            base,
            base_decisions: decisions,
            ..*ctx
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
        self.update_view(ctx.history);
        let view = ProposalContext {
            history: &self.view,
            ..*ctx
        };
        let mut p = self.search.propose(&view)?;
        self.searched.insert(p.source.clone(), p.rationale.clone());
        p.rationale = format!("search: {}", p.rationale);
        if let Some(e) = &unusable {
            p.rationale = format!("{} ({LLM_UNUSABLE}: {e})", p.rationale);
        }
        Ok(p)
    }

    fn usage(&self) -> Option<Usage> {
        self.llm.usage()
    }

    fn set_cancel(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.llm.set_cancel(flag);
    }
}
