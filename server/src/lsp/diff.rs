//! Minimal text edits between two versions of a text.
//!
//! Editors keep the cursor, selections and undo granularity only for the
//! text an edit actually touches, so formatting returns small edits instead
//! of one whole-document replacement. Lines are diffed first (bounded work on
//! big files), then each changed run of lines is refined to characters.

use std::time::{Duration, Instant};

use mapwright_grammar::{Span, TextEdit};
use similar::{capture_diff_slices_deadline, Algorithm, DiffOp};

/// A changed run of lines larger than this many characters is replaced as a
/// whole instead of diffed character by character.
const MAX_CHAR_DIFF: usize = 20_000;

/// Edits that turn `old` into `new`: sorted, non-overlapping, on character
/// boundaries of `old`. Applying them (`apply_edits`) yields exactly `new`.
pub fn minimal_edits(old: &str, new: &str) -> Vec<TextEdit> {
    if old == new {
        return Vec::new();
    }
    let deadline = Some(Instant::now() + Duration::from_millis(200));
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let old_starts = starts(&old_lines);
    let new_starts = starts(&new_lines);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &old_lines, &new_lines, deadline);
    let mut edits = Vec::new();
    for (old_range, new_range) in changed_runs(&ops) {
        let old_span = Span::new(old_starts[old_range.start], old_starts[old_range.end]);
        let new_text = &new[new_starts[new_range.start]..new_starts[new_range.end]];
        refine(old, old_span, new_text, deadline, &mut edits);
    }
    merge_adjacent(edits)
}

/// Byte offset of the start of each line, plus the total length at the end.
fn starts(lines: &[&str]) -> Vec<usize> {
    let mut out = Vec::with_capacity(lines.len() + 1);
    let mut at = 0;
    out.push(0);
    for l in lines {
        at += l.len();
        out.push(at);
    }
    out
}

/// Maximal runs of non-equal ops as (old line range, new line range).
fn changed_runs(ops: &[DiffOp]) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let mut runs: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = Vec::new();
    for op in ops {
        if matches!(op, DiffOp::Equal { .. }) {
            continue;
        }
        let (o, n) = (op.old_range(), op.new_range());
        match runs.last_mut() {
            Some((lo, ln)) if lo.end == o.start && ln.end == n.start => {
                lo.end = o.end;
                ln.end = n.end;
            }
            _ => runs.push((o, n)),
        }
    }
    runs
}

/// Replaces `old[span]` by `new_text` with the smallest character edits.
fn refine(
    old: &str,
    span: Span,
    new_text: &str,
    deadline: Option<Instant>,
    out: &mut Vec<TextEdit>,
) {
    let old_text = span.text(old);
    // Trim the common prefix and suffix first: cheap and usually most of it.
    let prefix = common_prefix(old_text, new_text);
    let suffix = common_suffix(&old_text[prefix..], &new_text[prefix..]);
    let o = &old_text[prefix..old_text.len() - suffix];
    let n = &new_text[prefix..new_text.len() - suffix];
    let base = span.start() + prefix;
    if o.len() + n.len() > MAX_CHAR_DIFF {
        out.push(TextEdit {
            span: Span::new(base, base + o.len()),
            text: n.to_string(),
        });
        return;
    }
    let oc: Vec<(usize, char)> = o.char_indices().collect();
    let nc: Vec<(usize, char)> = n.char_indices().collect();
    let ochars: Vec<char> = oc.iter().map(|c| c.1).collect();
    let nchars: Vec<char> = nc.iter().map(|c| c.1).collect();
    let obyte = |i: usize| oc.get(i).map_or(o.len(), |c| c.0);
    let nbyte = |i: usize| nc.get(i).map_or(n.len(), |c| c.0);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &ochars, &nchars, deadline);
    for (or, nr) in changed_runs(&ops) {
        out.push(TextEdit {
            span: Span::new(base + obyte(or.start), base + obyte(or.end)),
            text: n[nbyte(nr.start)..nbyte(nr.end)].to_string(),
        });
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    let mut n = 0;
    for (x, y) in a.chars().zip(b.chars()) {
        if x != y {
            break;
        }
        n += x.len_utf8();
    }
    n
}

fn common_suffix(a: &str, b: &str) -> usize {
    let mut n = 0;
    for (x, y) in a.chars().rev().zip(b.chars().rev()) {
        if x != y {
            break;
        }
        n += x.len_utf8();
    }
    n
}

/// Joins edits that touch, so no two edits share an offset (clients reject
/// an insertion and a replacement at the same position in some orders).
fn merge_adjacent(edits: Vec<TextEdit>) -> Vec<TextEdit> {
    let mut out: Vec<TextEdit> = Vec::with_capacity(edits.len());
    for e in edits {
        match out.last_mut() {
            Some(last) if last.span.end() == e.span.start() => {
                last.span = last.span.with_end(e.span.end());
                last.text.push_str(&e.text);
            }
            _ => out.push(e),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_grammar::diagnostic::apply_edits;

    fn check(old: &str, new: &str) -> Vec<TextEdit> {
        let edits = minimal_edits(old, new);
        assert_eq!(apply_edits(old, &edits).as_deref(), Some(new), "{edits:?}");
        for w in edits.windows(2) {
            assert!(w[0].span.end() < w[1].span.start(), "{edits:?}");
        }
        edits
    }

    #[test]
    fn small_changes_give_small_edits() {
        let edits = check("Task  *   GPU;\nx=1;\n", "Task * GPU;\nx = 1;\n");
        assert!(
            edits.iter().all(|e| e.span.len() <= 2 && e.text.len() <= 1),
            "{edits:?}"
        );
        assert_eq!(edits.len(), 4);
        assert!(check("same\n", "same\n").is_empty());
    }

    #[test]
    fn edits_are_exact_on_unicode_crlf_and_line_changes() {
        check("# é😀\r\na=1;\r\n", "# é😀\r\na = 1;\r\n");
        check("a\nb\nc\n", "a\nc\n");
        check("a\nc\n", "a\nb\nc\n");
        check("", "x\n");
        check("x", "");
        check("😀😀", "😀é😀");
        check("no newline", "no newline\n");
    }

    #[test]
    fn big_rewrites_stay_correct() {
        let old: String = (0..3000).map(|i| format!("x{i}=({i},{i});\n")).collect();
        let new: String = (0..3000).map(|i| format!("x{i} = ({i}, {i});\n")).collect();
        check(&old, &new);
        let reversed: String = (0..3000).rev().map(|i| format!("y{i};\n")).collect();
        check(&old, &reversed);
    }
}
