//! Extension points for hover, completion and inlay hints.
//!
//! The built-in providers know the syntax and the names of one file; the
//! application- and machine-aware ones ([`super::app_aware`]: task and region
//! names from the application description, machine-model sizes on the
//! configured machine, launch-point distributions) read the loaded
//! [`Target`] and the document's [`Resolution`] from the same [`Query`].
//! Each provider adds its part; the protocol glue does not change.

use mapwright_grammar::Span;

use super::analysis::Analysis;
use super::app_aware::{AppCompletion, AppHover, AppInlayHints};
use super::completion::{Completion, SyntaxCompletion};
use super::config::ProjectConfig;
use super::cursor::{cursor_at, Cursor};
use super::hover::SyntaxHover;
use super::inlay::{InlayHint, ParameterNameHints};
use super::target::{Resolution, Target};

/// What a provider is asked about.
pub struct Query<'a> {
    pub analysis: &'a Analysis,
    /// The `mapwright.toml` that applies to the document (if any), or the
    /// settings' fallback application and machine.
    pub project: Option<&'a ProjectConfig>,
    /// The loaded application and machine (if the project names any).
    pub target: Option<&'a Target>,
    /// This version resolved against `target`.
    pub resolution: Option<&'a Resolution>,
    /// Byte offset of the cursor (clamped to the text).
    pub offset: usize,
}

impl<'a> Query<'a> {
    /// A query without a project (syntax-only features, tests).
    pub fn plain(analysis: &'a Analysis, offset: usize) -> Query<'a> {
        Query {
            analysis,
            project: None,
            target: None,
            resolution: None,
            offset,
        }
    }
}

/// What an inlay-hint provider is asked about.
pub struct InlayQuery<'a> {
    pub analysis: &'a Analysis,
    pub project: Option<&'a ProjectConfig>,
    pub target: Option<&'a Target>,
    pub resolution: Option<&'a Resolution>,
    /// The byte range the client shows.
    pub range: Span,
}

impl<'a> InlayQuery<'a> {
    /// A query without a project.
    pub fn plain(analysis: &'a Analysis, range: Span) -> InlayQuery<'a> {
        InlayQuery {
            analysis,
            project: None,
            target: None,
            resolution: None,
            range,
        }
    }
}

/// One part of a hover: Markdown and the span it describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoverSection {
    pub span: Span,
    pub markdown: String,
}

/// Adds to the hover at a cursor.
pub trait HoverProvider: Send + Sync {
    fn hover(&self, q: &Query) -> Option<HoverSection>;
}

/// Adds completion items for a cursor context.
pub trait CompletionProvider: Send + Sync {
    fn complete(&self, q: &Query, cursor: &Cursor, out: &mut Vec<Completion>);
}

/// Adds inlay hints within a byte range of a document.
pub trait InlayHintProvider: Send + Sync {
    fn inlay_hints(&self, q: &InlayQuery) -> Vec<InlayHint>;
}

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

/// A completion answer: the items and the span they replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completions {
    pub replace: Span,
    pub items: Vec<Completion>,
}

impl Providers {
    /// The built-in providers: syntax-level, then application- and
    /// machine-aware (which add nothing without a target). Application
    /// completions come first so their richer items win the deduplication.
    pub fn builtin() -> Providers {
        Providers {
            hover: vec![Box::new(SyntaxHover), Box::new(AppHover)],
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
