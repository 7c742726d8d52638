//! What providers are asked and what they answer: the queries, the
//! provider traits and the results (hover sections, completion items, inlay
//! hints).
//!
//! A leaf of the provider layer: the concrete providers ([`super::completion`],
//! [`super::hover`], [`super::inlay`], [`super::app_aware`]) implement these
//! traits and import only this module, the analysis and the helpers below
//! them, never each other; [`super::providers`], the registry, is the one
//! module that knows them all (`server/tests/lsp_module_graph.rs` checks the
//! modules import each other without a cycle).

use mapwright_grammar::Span;

use super::analysis::Analysis;
use super::config::ProjectConfig;
use super::cursor::Cursor;
use super::target::{Resolution, Target};

// ---------------------------------------------------------------------------
// Queries and provider traits
// ---------------------------------------------------------------------------

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
    /// What the document's last real run measured, if it had measurements.
    pub last_run: Option<&'a LastRun>,
}

/// A document's last run with measured figures (`mapwright.run` or the
/// best candidate of `mapwright.optimize` on real Legion, or a program
/// linked with mapwright's mapper): what hover and the code lenses show.
#[derive(Debug, Clone)]
pub struct LastRun {
    /// The document version that ran.
    pub version: i32,
    pub metrics: mapwright_runtime::backend::Metrics,
    /// Which run it was, for the hover (`mapwright.run on legion-host`).
    pub what: String,
}

impl<'a> Query<'a> {
    /// A query without a project (syntax-only features, tests).
    pub fn plain(analysis: &'a Analysis, offset: usize) -> Query<'a> {
        Query {
            analysis,
            project: None,
            target: None,
            resolution: None,
            last_run: None,
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

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

/// A completion answer: the items and the span they replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completions {
    pub replace: Span,
    pub items: Vec<Completion>,
}

/// What an item is (mapped to the client's icons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    Keyword,
    Snippet,
    Function,
    Variable,
    Parameter,
    /// A processor or memory kind.
    Kind,
    Property,
    Method,
    Type,
    Constraint,
    /// A task name (from this file; later from the application).
    Task,
    /// A region name.
    Region,
}

/// One completion item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
    /// Markdown.
    pub documentation: Option<String>,
    /// Snippet text (`${1:name}` placeholders) for clients that support it.
    pub snippet: Option<String>,
    /// Plain text to insert when snippets are off (defaults to the label).
    pub plain: Option<String>,
    /// Lower sorts first; ties sort by label.
    pub rank: u8,
}

impl Completion {
    /// An item with only a label, a kind and a rank.
    pub fn new(label: impl Into<String>, kind: CompletionKind, rank: u8) -> Completion {
        Completion {
            label: label.into(),
            kind,
            detail: None,
            documentation: None,
            snippet: None,
            plain: None,
            rank,
        }
    }

    /// With a detail line.
    pub fn detail(mut self, d: impl Into<String>) -> Completion {
        self.detail = Some(d.into());
        self
    }

    /// With Markdown documentation.
    pub fn docs(mut self, d: impl Into<String>) -> Completion {
        self.documentation = Some(d.into());
        self
    }

    /// With a snippet and its plain-text fallback.
    pub fn snippet(mut self, s: impl Into<String>, plain: impl Into<String>) -> Completion {
        self.snippet = Some(s.into());
        self.plain = Some(plain.into());
        self
    }
}

/// What a hint shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlayKind {
    /// A parameter name before an argument.
    Parameter,
    /// A type or value after an expression.
    Type,
}

/// One inlay hint at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    pub offset: usize,
    pub label: String,
    pub kind: InlayKind,
    pub tooltip: Option<String>,
}
