//! Diagnostics as data: a stable code, a severity, a primary span, a message,
//! related spans, notes, and machine-applicable fixes.
//!
//! Diagnostics are produced once and rendered twice (the CLI's snippets and
//! the LSP), and AutoGuide reuses the fixes, so everything a renderer needs is
//! in the value itself.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::packed::PackedDiagnostics;
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
    /// The most likely repair, but a choice the user should see: the
    /// nearest spelling of a name or keyword when another could be meant,
    /// a statement moved past others. Offered, never preferred nor applied
    /// in bulk (fix-all on save); AutoGuide proposes it, since its
    /// proposals are checked and run before they are kept.
    Likely,
    /// A plausible repair that may change behaviour; offer, do not auto-apply.
    Unsafe,
}

impl Applicability {
    /// Whether AutoGuide may propose a fix of this kind as its edit: safe
    /// ones and likely ones (a proposal is checked and run before the
    /// optimizer keeps it, so a likely guess costs one evaluation).
    pub fn worth_proposing(self) -> bool {
        matches!(self, Applicability::Safe | Applicability::Likely)
    }
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
    pub title: Text,
    pub edits: Vec<TextEdit>,
    pub applicability: Applicability,
}

impl Fix {
    /// A fix that is safe to apply automatically.
    pub fn safe(title: impl Into<Text>, edits: Vec<(Span, String)>) -> Fix {
        Fix::new(title, edits, Applicability::Safe)
    }

    /// A fix that needs the user's judgement.
    pub fn unsafe_(title: impl Into<Text>, edits: Vec<(Span, String)>) -> Fix {
        Fix::new(title, edits, Applicability::Unsafe)
    }

    /// The most likely repair, offered but never applied in bulk (see
    /// [`Applicability::Likely`]).
    pub fn likely(title: impl Into<Text>, edits: Vec<(Span, String)>) -> Fix {
        Fix::new(title, edits, Applicability::Likely)
    }

    /// Replaces `word`, a user's name at `span`, by `best`, the nearest
    /// defined name (a "did you mean"). Safe only when the two differ in
    /// case alone; otherwise likely, not safe: a name is as likely a typo
    /// of the nearest one as a name not defined yet (`f2` before its
    /// `def`), and a fix-all on save must not rewrite which function or
    /// variable a statement names.
    pub fn respell_name(title: impl Into<Text>, span: Span, word: &str, best: &str) -> Fix {
        let applicability = if word.eq_ignore_ascii_case(best) {
            Applicability::Safe
        } else {
            Applicability::Likely
        };
        Fix::new(title, vec![(span, best.to_string())], applicability)
    }

    /// Replaces `word` at `span` by `best`, the nearest of the keywords
    /// that fit there (`candidates`, a closed list: no one can define
    /// another). Safe when `best` is the only one that near
    /// ([`crate::suggest::sole_nearest`]); likely, not safe, when another
    /// keyword is as near, where the choice is a guess.
    pub fn respell_keyword<'c>(
        title: impl Into<Text>,
        span: Span,
        word: &str,
        best: &str,
        candidates: impl IntoIterator<Item = &'c str>,
    ) -> Fix {
        let applicability = if crate::suggest::sole_nearest(word, best, candidates) {
            Applicability::Safe
        } else {
            Applicability::Likely
        };
        Fix::new(title, vec![(span, best.to_string())], applicability)
    }

    fn new(
        title: impl Into<Text>,
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
/// line break (clamped to `source`; never panics on a stale span). Lines end
/// at `\n`, `\r\n` or a lone `\r`, as in [`crate::LineIndex`].
pub fn line_extent(source: &str, span: Span) -> (usize, usize) {
    let s = span.start().min(source.len());
    let e = span.end().min(source.len());
    let start = source
        .get(..s)
        .and_then(|t| t.rfind(['\n', '\r']))
        .map(|i| i + 1)
        .unwrap_or(0);
    let end = source
        .get(e..)
        .and_then(|t| t.find(['\n', '\r']))
        .map(|i| {
            let crlf = source.as_bytes()[e + i] == b'\r'
                && source.as_bytes().get(e + i + 1) == Some(&b'\n');
            e + i + if crlf { 2 } else { 1 }
        })
        .unwrap_or(source.len());
    (start, end)
}

/// What deleting `span` should delete: its whole lines when nothing but
/// blanks (and a trailing comment) shares them, else just the span.
pub fn line_or_span(source: &str, span: Span) -> Span {
    let (start, end) = line_extent(source, span);
    let before = source.get(start..span.start()).unwrap_or("x");
    let after = source.get(span.end()..end).unwrap_or("x");
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
    sorted.sort_by_key(|e| (e.span.start(), e.span.end()));
    let mut out = String::with_capacity(source.len() + 16);
    let mut cursor = 0;
    for edit in sorted {
        let (start, end) = (edit.span.start(), edit.span.end());
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

/// A diagnostic's label, note, related message or fix title: most are
/// fixed texts, borrowed rather than copied. A language server builds (or
/// copies from its memo) every diagnostic of a file on each keystroke,
/// 1,500 of them in a big file with many mistakes; with these as `String`s
/// that was a third of the check's allocations.
pub type Text = Cow<'static, str>;

/// A secondary span with a message ("first defined here").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Related {
    pub span: Span,
    pub message: Text,
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
    pub label: Option<Text>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
    /// Explanations and help lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Text>,
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

    pub fn with_label(mut self, label: impl Into<Text>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<Text>) -> Self {
        // Most diagnostics have one note, related span or fix: exact
        // capacity instead of a first growth to 4 (see bench/memory).
        self.notes.reserve_exact(1);
        self.notes.push(note.into());
        self
    }

    pub fn with_related(mut self, span: Span, message: impl Into<Text>) -> Self {
        self.related.reserve_exact(1);
        self.related.push(Related {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fixes.reserve_exact(1);
        self.fixes.push(fix);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Sorts diagnostics by span (start, then end), keeping the order of those
/// at the same span. A list already in order (the usual case: each stage
/// reports in source order) is left as it is; otherwise the sort's scratch
/// is the keys (`sort_by_cached_key`: 12 bytes per diagnostic, key and
/// index), not a copy of the 152-byte diagnostics as `sort_by_key`'s is.
pub fn sort_by_span(list: &mut [Diagnostic]) {
    let key = |d: &Diagnostic| (d.span.start() as u32, d.span.end() as u32);
    if list.windows(2).any(|w| key(&w[0]) > key(&w[1])) {
        list.sort_by_cached_key(key);
    }
}

/// The syntax and the semantic diagnostics of a file as one list in source
/// order (what `mapwright check` reports): a stable sort by span, so at
/// equal spans the syntax ones come first. Borrowed, for a caller that
/// keeps the two lists apart (the language server reuses the syntax ones
/// across edits).
pub fn in_source_order<'a>(
    syntax: &'a [Diagnostic],
    check: &'a [Diagnostic],
) -> Vec<&'a Diagnostic> {
    let mut all = Vec::with_capacity(syntax.len() + check.len());
    all.extend(syntax);
    all.extend(check);
    all.sort_by_key(|d| (d.span.start(), d.span.end()));
    all
}

/// Most diagnostics kept for one stage of one file (lexing and parsing
/// together; checking): past this a file is noise, not code, and a
/// diagnostic per bad byte would cost far more memory than the input (about
/// 300 bytes each). The rest are counted and summed up in one final `I0001`,
/// as rustc and ruff do.
pub const MAX_DIAGNOSTICS: usize = 1000;

/// The code of the final note that counts the diagnostics left out.
pub const CAPPED_CODE: &str = "I0001";

/// What a light list ([`CappedDiagnostics::light`]) keeps of a diagnostic.
pub type LightDiagnostic = (Span, Severity);

/// Makes room for one more element of a full `list` by a quarter of its
/// length (at least 4, at most up to the cap) instead of doubling it: a
/// diagnostic is 152 bytes, and a doubling holds the old and the new block
/// (three times the list) while it moves, then up to half of it unused.
fn grow_gently<T>(list: &mut Vec<T>) {
    if list.len() == list.capacity() {
        let more = (list.len() / 4).max(4);
        let room = MAX_DIAGNOSTICS.saturating_sub(list.len()).max(1);
        list.reserve_exact(more.min(room));
    }
}

/// Diagnostics of one stage, at most [`MAX_DIAGNOSTICS`] kept (the first
/// ones pushed); the others are only counted.
#[derive(Debug, Clone, Default)]
pub struct CappedDiagnostics {
    kept: Vec<Diagnostic>,
    /// Where the first diagnostic left out was, and how many were.
    dropped: Dropped,
    /// In a light list ([`CappedDiagnostics::light`]): the span and
    /// severity of each diagnostic kept, instead of `kept`.
    light: Option<Vec<LightDiagnostic>>,
    /// In a packed list ([`CappedDiagnostics::packed`]): the diagnostics
    /// kept, as bytes, instead of `kept`.
    packed: Option<PackedDiagnostics>,
    /// In a light list: how many kept ones were handed over by
    /// [`CappedDiagnostics::take_light`] (still counted as kept).
    handed_over: usize,
}

impl CappedDiagnostics {
    /// An empty list that keeps only the span and severity of each
    /// diagnostic (read back with [`CappedDiagnostics::into_light`]): for a
    /// caller that only asks where the errors are (the formatter), so that
    /// a file full of errors does not hold a 152-byte diagnostic and its
    /// text per error. Which diagnostics are kept, and the count of those
    /// left out, are the same as in a full list.
    pub fn light() -> Self {
        CappedDiagnostics {
            light: Some(Vec::new()),
            ..CappedDiagnostics::default()
        }
    }

    /// An empty list that keeps its diagnostics packed
    /// ([`PackedDiagnostics`], read back with
    /// [`CappedDiagnostics::into_packed`]): for a caller that only reports
    /// them, so that a file full of errors holds a few bytes per error
    /// instead of a 152-byte diagnostic and its texts. Which diagnostics are
    /// kept, and the count of those left out, are the same as in a full
    /// list.
    pub fn packed() -> Self {
        CappedDiagnostics {
            packed: Some(PackedDiagnostics::default()),
            ..CappedDiagnostics::default()
        }
    }

    /// An empty full list with room for `n` diagnostics (at most the cap):
    /// for a check that knows how many the last one kept (the language
    /// server's, from its memo), so that the list is allocated once rather
    /// than grown and moved a quarter at a time while it fills.
    pub fn with_capacity(n: usize) -> Self {
        CappedDiagnostics {
            kept: Vec::with_capacity(n.min(MAX_DIAGNOSTICS + 1)),
            ..CappedDiagnostics::default()
        }
    }

    /// How long [`CappedDiagnostics::into_vec`]'s list will be: those
    /// kept, and the `I0001` that counts the others if there were any.
    pub fn final_len(&self) -> usize {
        self.len() + usize::from(self.dropped.0.is_some())
    }

    /// True for a list made by [`CappedDiagnostics::packed`].
    pub fn is_packed(&self) -> bool {
        self.packed.is_some()
    }

    /// How many diagnostics are kept.
    fn len(&self) -> usize {
        match (&self.light, &self.packed) {
            (Some(light), _) => self.handed_over + light.len(),
            (None, Some(packed)) => packed.len(),
            (None, None) => self.kept.len(),
        }
    }

    /// Adds the diagnostics of a later stage of the same kind of list
    /// (e.g. the parser's after the lexer's), in order: those over the
    /// cap are counted, as are the ones `other` left out. `source` is the
    /// text they were found in (a packed list builds some diagnostics from
    /// it, see [`PackedDiagnostics::push_rebuilt`]).
    pub fn append(&mut self, other: CappedDiagnostics, source: &str) {
        let CappedDiagnostics {
            kept,
            dropped,
            light,
            packed,
            handed_over,
        } = other;
        // Kept, then handed over: counted as kept here too.
        self.handed_over += handed_over;
        let n = kept.len() + light.as_ref().map_or(0, Vec::len);
        let room = MAX_DIAGNOSTICS.saturating_sub(self.len()).min(n);
        // Exact room: merging allocates once, not by doubling.
        match (&mut self.light, &self.packed) {
            (Some(l), _) => l.reserve_exact(room),
            (None, Some(_)) => {}
            (None, None) => self.kept.reserve_exact(room),
        }
        for d in kept {
            self.push(d);
        }
        if let Some(packed) = packed {
            for i in 0..packed.len() {
                self.push(packed.get(i, source));
            }
        }
        for (span, severity) in light.unwrap_or_default() {
            self.push_light(span, severity);
        }
        self.dropped.add_all(dropped);
    }

    /// Adds diagnostics left out elsewhere (where the first was, how many).
    pub fn count_dropped(&mut self, dropped: Option<(Span, usize)>) {
        self.dropped.add_all(Dropped(dropped));
    }

    /// True once [`MAX_DIAGNOSTICS`] are kept: a new one is only counted.
    pub fn is_full(&self) -> bool {
        self.len() >= MAX_DIAGNOSTICS
    }

    /// Whether a diagnostic pushed now would be kept whole: not past the
    /// cap, nor in a light list (which keeps only span and severity). A
    /// caller may skip building what would be dropped (a costly fix).
    pub fn keeps_the_next_whole(&self) -> bool {
        !self.is_full() && self.light.is_none()
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.push_in(d, "");
    }

    /// [`CappedDiagnostics::push`] of a diagnostic found in `source`: a
    /// packed list stores the texts that quote its span as templates
    /// ([`PackedDiagnostics::push_in`]; with no source, as they are).
    pub(crate) fn push_in(&mut self, d: Diagnostic, source: &str) {
        if self.light.is_some() {
            self.push_light(d.span, d.severity);
        } else if self.len() >= MAX_DIAGNOSTICS {
            self.count_over(d.span);
        } else if let Some(packed) = &mut self.packed {
            packed.push_in(&d, source);
        } else {
            grow_gently(&mut self.kept);
            self.kept.push(d);
        }
    }

    /// Adds `build(span, source)`: a packed list keeps only `span` and
    /// `build`, and builds the diagnostic again when it is read
    /// ([`PackedDiagnostics::push_rebuilt`]); other lists build it now.
    pub(crate) fn push_rebuilt(&mut self, build: crate::packed::Rebuild, span: Span, source: &str) {
        if self.is_full() {
            self.count_over(span);
        } else if let (None, Some(packed)) = (&self.light, &mut self.packed) {
            packed.push_rebuilt(build, span);
        } else {
            self.push(build(span, source));
        }
    }

    /// [`CappedDiagnostics::push`] of a diagnostic's span and severity
    /// (its text dropped when the list is light).
    fn push_light(&mut self, span: Span, severity: Severity) {
        if self.len() >= MAX_DIAGNOSTICS {
            self.count_over(span);
        } else if let Some(light) = &mut self.light {
            grow_gently(light);
            light.push((span, severity));
        } else {
            // A light list appended to a full one: only this much is known.
            self.push(Diagnostic::new("", severity, span, String::new()));
        }
    }

    /// How many more diagnostics would be kept (0 once full).
    pub fn room(&self) -> usize {
        MAX_DIAGNOSTICS.saturating_sub(self.len())
    }

    /// Counts one diagnostic over the cap, at `span`: what
    /// [`CappedDiagnostics::push`] does with a diagnostic once the list is
    /// full, for a caller that then need not build it (its text and fixes
    /// would be dropped at once).
    pub fn count_over(&mut self, span: Span) {
        self.dropped.add(span, 1);
    }

    /// How many diagnostics were pushed: those kept and those left out.
    pub fn total(&self) -> usize {
        self.len() + self.dropped.0.map_or(0, |(_, n)| n)
    }

    /// A light list's spans and severities kept since the last call
    /// (empty for a full or packed list), handed over so that a caller
    /// that reads them as they come does not hold them all; they still
    /// count toward the cap (the list keeps the same ones as if none were
    /// taken).
    pub fn take_light(&mut self) -> Vec<LightDiagnostic> {
        let taken = self.light.as_mut().map(std::mem::take).unwrap_or_default();
        self.handed_over += taken.len();
        taken
    }

    /// A light list's spans and severities (empty for a full list), and
    /// what was left out.
    pub fn into_light(self) -> (Vec<LightDiagnostic>, Option<(Span, usize)>) {
        (self.light.unwrap_or_default(), self.dropped.0)
    }

    /// The kept diagnostics and what was left out, without the summary.
    pub fn into_parts(self) -> (Vec<Diagnostic>, Option<(Span, usize)>) {
        (self.kept, self.dropped.0)
    }

    /// The kept diagnostics, followed by one `I0001` saying how many more
    /// there were, if any. `source` is the text they were found in (see
    /// [`CappedDiagnostics::append`]).
    pub fn into_vec(self, source: &str) -> Vec<Diagnostic> {
        let mut out = self.kept;
        if let Some(packed) = self.packed {
            out = (0..packed.len()).map(|i| packed.get(i, source)).collect();
        }
        if let Some((span, n)) = self.dropped.0 {
            // One more, not a doubling of a full list (1,000 x 152 bytes).
            out.reserve_exact(1);
            out.push(summary(span, n));
        }
        out
    }

    /// A packed list (`self`, the lexer's) and the packed list of a later
    /// stage (`later`, the parser's), each sorted by span: what
    /// [`CappedDiagnostics::append`] then [`CappedDiagnostics::into_packed`]
    /// give as one list, without copying the later one into the first
    /// (which held both at once: the peak of `mapwright check` on a small
    /// file of broken lines). Read together with [`crate::packed::merged`],
    /// the first before the later at equal spans, they are that list: the
    /// later's diagnostics past the cap are left out and counted, and the
    /// `I0001` summary, pushed last, sorts after those at its span.
    pub(crate) fn into_packed_with(
        self,
        later: CappedDiagnostics,
    ) -> (PackedDiagnostics, PackedDiagnostics) {
        let mut first = self.packed.unwrap_or_default();
        for d in &self.kept {
            first.push(d);
        }
        let mut second = later.packed.unwrap_or_default();
        for d in &later.kept {
            second.push(d);
        }
        let mut dropped = self.dropped;
        let room = MAX_DIAGNOSTICS.saturating_sub(first.len());
        for i in room..second.len() {
            dropped.add(second.span_of(i), 1);
        }
        second.truncate(room);
        dropped.add_all(later.dropped);
        first.sort_by_span();
        second.sort_by_span();
        if let Some((span, n)) = dropped.0 {
            second.insert_by_span(&summary(span, n));
        }
        first.finished();
        second.finished();
        (first, second)
    }

    /// [`CappedDiagnostics::into_vec`] sorted by span
    /// ([`sort_by_span`]), packed ([`CappedDiagnostics::packed`]; a full
    /// list is packed here).
    pub fn into_packed(self) -> PackedDiagnostics {
        let mut out = self.packed.unwrap_or_default();
        for d in &self.kept {
            out.push(d);
        }
        if let Some((span, n)) = self.dropped.0 {
            out.push(&summary(span, n));
        }
        out.sort_by_span();
        out.finished();
        out
    }
}

/// Diagnostics left out: where the first one was, and how many.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Dropped(pub(crate) Option<(Span, usize)>);

impl Dropped {
    /// `n` more left out, at `span`.
    pub(crate) fn add(&mut self, span: Span, n: usize) {
        let (first, count) = self.0.unwrap_or((span, 0));
        self.0 = Some((first.min(span), count + n));
    }

    /// The others' too.
    pub(crate) fn add_all(&mut self, other: Dropped) {
        if let Some((span, n)) = other.0 {
            self.add(span, n);
        }
    }
}

/// The final `I0001` of a list that left `n` diagnostics out, the first at
/// `span`.
pub(crate) fn summary(span: Span, n: usize) -> Diagnostic {
    Diagnostic::info(
        CAPPED_CODE,
        span,
        format!("{n} more diagnostic(s) not reported, the first of them here"),
    )
    .with_note(format!(
        "at most {MAX_DIAGNOSTICS} are reported per file and stage; fix the ones above first"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn respelling_is_safe_only_when_it_is_no_guess() {
        let at = Span::new(0, 3);
        let name = |word, best| Fix::respell_name("t", at, word, best).applicability;
        assert_eq!(name("MGPU", "mgpu"), Applicability::Safe);
        assert_eq!(name("mgpx", "mgpu"), Applicability::Likely);
        let kinds = ["CPU", "GPU", "OMP"];
        let keyword = |word, best| Fix::respell_keyword("t", at, word, best, kinds).applicability;
        assert_eq!(keyword("gpu", "GPU"), Applicability::Safe);
        assert_eq!(keyword("GPX", "GPU"), Applicability::Safe);
        assert_eq!(keyword("TPU", "CPU"), Applicability::Likely);
        let fix = Fix::respell_name("t", Span::new(0, 4), "mgpx", "mgpu");
        assert_eq!(fix.apply("mgpx;"), Some("mgpu;".to_string()));
    }

    #[test]
    fn edits_apply_from_the_end() {
        let fix = Fix::safe(
            "t",
            vec![(Span::new(0, 1), "X".into()), (Span::new(3, 3), ";".into())],
        );
        assert_eq!(fix.apply("abc").as_deref(), Some("Xbc;"));
    }

    #[test]
    fn diagnostics_past_the_cap_are_counted_not_kept() {
        let mut capped = CappedDiagnostics::default();
        for i in 0..MAX_DIAGNOSTICS + 5 {
            capped.push(Diagnostic::error("E0001", Span::at(i), "x"));
        }
        let all = capped.into_vec("");
        assert_eq!(all.len(), MAX_DIAGNOSTICS + 1);
        let last = &all[MAX_DIAGNOSTICS];
        assert_eq!((last.code, last.span), ("I0001", Span::at(MAX_DIAGNOSTICS)));
        assert!(last.message.starts_with("5 more"), "{}", last.message);
    }

    /// A light list keeps the same diagnostics (by span and severity) and
    /// counts the same ones left out as a full list, pushed one by one or
    /// appended as a later stage's list.
    #[test]
    fn a_light_list_keeps_what_a_full_list_keeps() {
        let d = |i: usize| {
            let span = Span::at(7 * i % 1013);
            if matches!(i % 3, 0) {
                Diagnostic::warning("W0001", span, "w").with_note("n")
            } else {
                Diagnostic::error("E0001", span, "e")
            }
        };
        let (first, second) = (600, 700);
        let fill = |mut list: CappedDiagnostics, range: std::ops::Range<usize>| {
            for i in range {
                list.push(d(i));
            }
            list
        };
        let mut full = fill(CappedDiagnostics::default(), 0..first);
        full.append(
            fill(CappedDiagnostics::default(), first..first + second),
            "",
        );
        let mut light = fill(CappedDiagnostics::light(), 0..first);
        light.append(fill(CappedDiagnostics::light(), first..first + second), "");
        let (kept, full_dropped) = full.into_parts();
        let (light_kept, light_dropped) = light.into_light();
        let expected: Vec<LightDiagnostic> = kept.iter().map(|d| (d.span, d.severity)).collect();
        assert_eq!(light_kept, expected);
        assert_eq!(kept.len(), MAX_DIAGNOSTICS);
        assert_eq!(light_dropped, full_dropped);
        assert_eq!(
            full_dropped.map(|(_, n)| n),
            Some(first + second - MAX_DIAGNOSTICS)
        );
        // Appending equals pushing everything into one list.
        let one = fill(CappedDiagnostics::default(), 0..first + second);
        assert_eq!(one.into_parts(), (kept, full_dropped));
    }

    /// Taking a light list's spans as they come keeps the same ones, in
    /// the same order, and the same count left out, as reading it at the end.
    #[test]
    fn taking_a_light_list_as_it_grows_changes_nothing() {
        let n = MAX_DIAGNOSTICS + 40;
        let at = |i: usize| Span::at(3 * i % 997);
        let mut whole = CappedDiagnostics::light();
        let mut taken = CappedDiagnostics::light();
        let mut got = Vec::new();
        for i in 0..n {
            whole.push(Diagnostic::error("E0001", at(i), "e"));
            taken.push(Diagnostic::error("E0001", at(i), "e"));
            if i % 7 == 0 {
                got.extend(taken.take_light());
            }
        }
        got.extend(taken.take_light());
        assert_eq!(taken.total(), whole.total());
        assert_eq!(taken.total(), n);
        let (kept, dropped) = whole.into_light();
        assert_eq!(got, kept);
        assert_eq!(got.len(), MAX_DIAGNOSTICS);
        assert_eq!(taken.into_light(), (Vec::new(), dropped));
    }

    #[test]
    fn line_extent_knows_every_line_break() {
        for (src, line) in [
            ("a\nbc\nd", "bc\n"),
            ("a\r\nbc\r\nd", "bc\r\n"),
            ("a\rbc\rd", "bc\r"),
            ("a\rbc", "bc"),
        ] {
            let at = src.find('b').unwrap();
            let (start, end) = line_extent(src, Span::new(at, at + 1));
            assert_eq!(&src[start..end], line, "{src:?}");
        }
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
