//! Diagnostics of the whole-file passes taken over from the previous
//! check, moved with the text, instead of built again.
//!
//! Why: on a big file with many mistakes most of the kept diagnostics are
//! the passes' (unused names and shadowed rules: about 760 of the 1,000
//! kept in the language-server benchmark's files), and an edit changes
//! almost none of them. Building each again on every keystroke (its
//! message formatted, its note, related span and fix allocated) and
//! freeing the previous ones was a large part of a keystroke's check. The
//! language server hands the previous check's diagnostics over with the
//! old analysis it consumes (`check_after_reparse`); a pass about to build
//! a diagnostic first asks for the old one ([`Carried::take`]).
//!
//! When an old diagnostic is the one the pass would build: the same code
//! at the same place (its old span, moved back by the edit), with every
//! span it holds outside the bytes the edit changed, and the inputs its
//! text is made of unchanged. Which inputs those are is each pass's own
//! (see `Checker::unused_symbols` and `Checker::report_shadowed`);
//! `tests/incremental_equivalence.rs` compares the result with a full
//! check after random edits.

use crate::diagnostic::{Diagnostic, Severity};
use crate::incremental::{shift_diagnostic, Window};
use crate::Span;

/// The previous check's diagnostics (in span order, as
/// [`super::Checked::diagnostics`] keeps them) and the edit since.
#[derive(Debug)]
pub(super) struct Carried {
    old: Vec<Diagnostic>,
    /// The bytes the edit changed: `(start, old_end, new_end)`.
    changed: (usize, usize, usize),
    delta: isize,
    /// Whether every line number outside the edit is the same after it.
    same_lines: bool,
    /// How many diagnostics were taken.
    pub(super) taken: usize,
    /// Just after the last one taken: each pass asks in the order of the
    /// text, mostly, so the next one asked for is usually a little
    /// further on.
    next: usize,
}

impl Carried {
    /// `old`, the diagnostics of the last check, for a check after the
    /// edit that `window` re-parsed; `same_lines`: whether the two texts
    /// have as many lines (then the text after the edit has the same line
    /// numbers, since the text before it is the same).
    pub(super) fn new(old: Vec<Diagnostic>, window: &Window, same_lines: bool) -> Carried {
        let (_, old_end, new_end) = window.changed;
        Carried {
            old,
            changed: window.changed,
            delta: new_end as isize - old_end as isize,
            same_lines,
            taken: 0,
            next: 0,
        }
    }

    /// Whether the line numbers of the new text are those of the old.
    pub(super) fn same_lines(&self) -> bool {
        self.same_lines
    }

    /// Whether `span` ends before the changed bytes (its offsets, and its
    /// line numbers, are the same in both texts).
    pub(super) fn before(&self, span: Span) -> bool {
        span.end() < self.changed.0
    }

    /// Whether `span` (of the new text) lies outside the changed bytes,
    /// not even touching them.
    pub(super) fn untouched(&self, span: Span) -> bool {
        let (start, _, new_end) = self.changed;
        span.end() < start || span.start() > new_end
    }

    /// Where `span`, untouched by the edit, was in the old text.
    pub(super) fn old_span(&self, span: Span) -> Option<Span> {
        let (start, _, new_end) = self.changed;
        if span.end() < start {
            Some(span)
        } else if span.start() > new_end {
            let back = |o: usize| o.checked_add_signed(-self.delta);
            Some(Span::new(back(span.start())?, back(span.end())?))
        } else {
            None
        }
    }

    /// The old diagnostic with `code` at the old place of `span` (which
    /// must be untouched by the edit) that `same` accepts, moved to the
    /// new text; it is taken (a second request does not find it).
    pub(super) fn take(
        &mut self,
        code: &str,
        span: Span,
        same: impl Fn(&Diagnostic) -> bool,
    ) -> Option<Diagnostic> {
        let old_span = self.old_span(span)?;
        let from = self.first_at_or_after(old_span);
        let at = (from..self.old.len())
            .take_while(|&i| self.old[i].span == old_span)
            .find(|&i| self.old[i].code == code && same(&self.old[i]))?;
        let placeholder = Diagnostic::new("", Severity::Info, old_span, String::new());
        let mut d = std::mem::replace(&mut self.old[at], placeholder);
        let (_, old_end, _) = self.changed;
        shift_diagnostic(&mut d, old_end, self.delta);
        self.taken += 1;
        self.next = at + 1;
        Some(d)
    }

    /// The index of the first old diagnostic whose span is not before
    /// `span` (in the list's order). Searched from just after the last one
    /// taken, going further by doubling steps, when that is not past it.
    /// Why: a search of the whole list for each of the hundreds taken read
    /// a diagnostic scattered through it at each step, cold in a language
    /// server, where the next one is usually a few places on.
    fn first_at_or_after(&self, span: Span) -> usize {
        let key = |s: Span| (s.start() as u32, s.end() as u32);
        let below = |d: &Diagnostic| key(d.span) < key(span);
        let n = self.old.len();
        let hint = self.next.min(n);
        let found = if hint > 0 && !below(&self.old[hint - 1]) {
            self.old[..hint].partition_point(below)
        } else {
            // Every one before `lo` is before `span`.
            let (mut lo, mut step) = (hint, 1);
            while lo + step <= n && below(&self.old[lo + step - 1]) {
                lo += step;
                step *= 2;
            }
            let hi = (lo + step).min(n);
            lo + self.old[lo..hi].partition_point(below)
        };
        debug_assert_eq!(found, self.old.partition_point(below));
        found
    }

    /// What is left of the old diagnostics, to free.
    pub(super) fn into_leftovers(self) -> Vec<Diagnostic> {
        self.old
    }
}
