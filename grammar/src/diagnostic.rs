//! Diagnostics as data: a stable code, a severity, a primary span, a message,
//! related spans, notes, and machine-applicable fixes.
//!
//! Diagnostics are produced once and rendered twice (the CLI's snippets and
//! the LSP), and AutoGuide reuses the fixes, so everything a renderer needs is
//! in the value itself.

use serde::{Deserialize, Serialize};

use crate::Span;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

/// Whether a fix can be applied without a human looking at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Keeps the meaning the user evidently intended; safe to apply blindly.
    Safe,
    /// A plausible repair that may change behaviour; offer, do not auto-apply.
    Unsafe,
}

/// One replacement of the byte range `span` by `text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextEdit {
    pub span: Span,
    pub text: String,
}

/// A named set of edits that repairs a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<TextEdit>,
    pub applicability: Applicability,
}

impl Fix {
    /// A fix that is safe to apply automatically.
    pub fn safe(title: impl Into<String>, edits: Vec<(Span, String)>) -> Fix {
        Fix::new(title, edits, Applicability::Safe)
    }

    /// A fix that needs the user's judgement.
    pub fn unsafe_(title: impl Into<String>, edits: Vec<(Span, String)>) -> Fix {
        Fix::new(title, edits, Applicability::Unsafe)
    }

    fn new(
        title: impl Into<String>,
        edits: Vec<(Span, String)>,
        applicability: Applicability,
    ) -> Fix {
        Fix {
            title: title.into(),
            edits: edits
                .into_iter()
                .map(|(span, text)| TextEdit { span, text })
                .collect(),
            applicability,
        }
    }

    /// Applies the edits to `source`. Edits must not overlap; they are applied
    /// from the end so earlier offsets stay valid. Returns `None` if an edit is
    /// out of range, overlaps another, or splits a character.
    pub fn apply(&self, source: &str) -> Option<String> {
        apply_edits(source, &self.edits)
    }
}

/// From the start of `span`'s first line to just after its last line's
/// newline (clamped to `source`; never panics on a stale span).
pub fn line_extent(source: &str, span: Span) -> (usize, usize) {
    let s = span.start.min(source.len());
    let e = span.end.min(source.len());
    let start = source
        .get(..s)
        .and_then(|t| t.rfind('\n'))
        .map(|i| i + 1)
        .unwrap_or(0);
    let end = source
        .get(e..)
        .and_then(|t| t.find('\n'))
        .map(|i| e + i + 1)
        .unwrap_or(source.len());
    (start, end)
}

/// What deleting `span` should delete: its whole lines when nothing but
/// blanks (and a trailing comment) shares them, else just the span.
pub fn line_or_span(source: &str, span: Span) -> Span {
    let (start, end) = line_extent(source, span);
    let before = source.get(start..span.start).unwrap_or("x");
    let after = source.get(span.end..end).unwrap_or("x");
    if before.trim().is_empty()
        && (after.trim().is_empty() || after.trim_start().starts_with(['#', '/']))
    {
        Span::new(start, end)
    } else {
        span
    }
}

/// Applies non-overlapping edits to `source` (see [`Fix::apply`]).
pub fn apply_edits(source: &str, edits: &[TextEdit]) -> Option<String> {
    let mut sorted: Vec<&TextEdit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(source.len() + 16);
    let mut cursor = 0;
    for edit in sorted {
        let Span { start, end } = edit.span;
        if start < cursor || end < start || end > source.len() {
            return None;
        }
        if !source.is_char_boundary(start) || !source.is_char_boundary(end) {
            return None;
        }
        out.push_str(&source[cursor..start]);
        out.push_str(&edit.text);
        cursor = end;
    }
    out.push_str(&source[cursor..]);
    Some(out)
}

/// A secondary span with a message ("first defined here").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Related {
    pub span: Span,
    pub message: String,
}

/// One finding about the source text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Stable identifier, e.g. `E0101`. Never reused for a different meaning.
    pub code: &'static str,
    pub severity: Severity,
    /// The primary location (byte offsets).
    pub span: Span,
    pub message: String,
    /// Short text shown under the primary span ("expected `;` here").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
    /// Explanations and help lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<Fix>,
}

impl Diagnostic {
    pub fn new(
        code: &'static str,
        severity: Severity,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            severity,
            span,
            message: message.into(),
            label: None,
            related: Vec::new(),
            notes: Vec::new(),
            fixes: Vec::new(),
        }
    }

    pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic::new(code, Severity::Error, span, message)
    }

    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic::new(code, Severity::Warning, span, message)
    }

    pub fn info(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic::new(code, Severity::Info, span, message)
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> Self {
        self.related.push(Related {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fixes.push(fix);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_from_the_end() {
        let fix = Fix::safe(
            "t",
            vec![(Span::new(0, 1), "X".into()), (Span::new(3, 3), ";".into())],
        );
        assert_eq!(fix.apply("abc").as_deref(), Some("Xbc;"));
    }

    #[test]
    fn bad_edits_are_refused() {
        let overlapping = Fix::safe(
            "t",
            vec![(Span::new(0, 2), "".into()), (Span::new(1, 3), "".into())],
        );
        assert_eq!(overlapping.apply("abc"), None);
        let out_of_range = Fix::safe("t", vec![(Span::new(2, 9), "".into())]);
        assert_eq!(out_of_range.apply("abc"), None);
        let split_char = Fix::safe("t", vec![(Span::new(1, 1), "".into())]);
        assert_eq!(split_char.apply("é"), None);
    }
}
