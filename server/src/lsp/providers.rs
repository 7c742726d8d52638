//! The provider registry for hover, completion and inlay hints.
//!
//! The built-in providers know the syntax and the names of one file; the
//! application- and machine-aware ones ([`super::app_aware`]: task and region
//! names from the application description, machine-model sizes on the
//! configured machine, launch-point distributions) read the loaded target
//! and the document's resolution from the same [`Query`]. Each provider adds
//! its part; the protocol glue does not change.
//!
//! The queries, traits and results live in [`super::provider_api`] (re-exported
//! here for the protocol glue); this is the only module that imports the
//! concrete providers.

use super::app_aware::{AppCompletion, AppHover, AppInlayHints};
use super::completion::SyntaxCompletion;
use super::cursor::cursor_at;
use super::hover::{PinHover, SyntaxHover};
use super::inlay::ParameterNameHints;
pub use super::provider_api::{
    CompletionProvider, Completions, HoverProvider, HoverSection, InlayHint, InlayHintProvider,
    InlayQuery, Query,
};

/// The providers the server consults, in order.
pub struct Providers {
    pub hover: Vec<Box<dyn HoverProvider>>,
    pub completion: Vec<Box<dyn CompletionProvider>>,
    pub inlay: Vec<Box<dyn InlayHintProvider>>,
}

impl Default for Providers {
    fn default() -> Providers {
        Providers::builtin()
    }
}

impl Providers {
    /// The built-in providers: syntax-level, then application- and
    /// machine-aware (which add nothing without a target). Application
    /// completions come first so their richer items win the deduplication.
    pub fn builtin() -> Providers {
        Providers {
            hover: vec![
                Box::new(SyntaxHover),
                Box::new(AppHover),
                Box::new(PinHover),
            ],
            completion: vec![Box::new(AppCompletion), Box::new(SyntaxCompletion)],
            inlay: vec![Box::new(ParameterNameHints), Box::new(AppInlayHints)],
        }
    }

    /// Every provider's section, joined by rules; the span is the first one's.
    pub fn hover(&self, q: &Query) -> Option<HoverSection> {
        let sections: Vec<HoverSection> = self.hover.iter().filter_map(|p| p.hover(q)).collect();
        let first = sections.first()?;
        Some(HoverSection {
            span: first.span,
            markdown: sections
                .iter()
                .map(|s| s.markdown.as_str())
                .collect::<Vec<_>>()
                .join("\n\n---\n\n"),
        })
    }

    /// Completions at the cursor, deduplicated by label (first provider wins).
    pub fn complete(&self, q: &Query) -> Completions {
        let cursor = cursor_at(q.analysis, q.offset);
        let mut items = Vec::new();
        for p in &self.completion {
            p.complete(q, &cursor, &mut items);
        }
        let mut seen = std::collections::HashSet::new();
        items.retain(|c| seen.insert(c.label.clone()));
        Completions {
            replace: cursor.prefix,
            items,
        }
    }

    /// Every provider's hints in the query's range, in source order.
    pub fn inlay_hints(&self, q: &InlayQuery) -> Vec<InlayHint> {
        let mut out: Vec<InlayHint> = self.inlay.iter().flat_map(|p| p.inlay_hints(q)).collect();
        out.sort_by_key(|h| h.offset);
        out
    }
}
