//! Which diagnostics go to the editor when a document has more than it can
//! use: at most `mapwright.diagnostics.maxPublished` of them (200 unless
//! set; 0 sends all), in about [`BUDGET_BYTES`] of JSON, errors first, then
//! warnings, then the rest, and within each severity the nearest to the
//! last edit first. One `I0001` note at the top of the file counts the
//! ones left out.
//!
//! Why: a 5,000-line file with 1,500 mistakes published every one of them
//! on every keystroke, 670 KB of JSON (about 430 bytes a diagnostic, the
//! ranges alone 81). Writing, sending and parsing that was most of a
//! keystroke's cost on both sides, and no one reads 1,500 problems: the
//! ones where the user is typing matter. Editors draw the same line
//! themselves: VS Code's extension host keeps at most 1,000 markers per
//! file, errors first, and adds "Not showing N further errors and
//! warnings". Doing it here, nearest the edit, keeps what is being typed
//! visible, and keeps the cost of a keystroke bounded by the budget rather
//! than by the file. `mapwright check` still lists every diagnostic, and
//! code actions (fix all included) still see every one.

use mapwright_grammar::diagnostic::{Severity, CAPPED_CODE};
use mapwright_grammar::{Diagnostic, LineIndex, Span};

/// Bytes of diagnostic JSON a publish aims to stay under (estimated per
/// diagnostic by [`estimated_json_bytes`]), so that one publish is under
/// 100 KB with every optional field.
pub const BUDGET_BYTES: usize = 90 * 1024;

/// The default of `mapwright.diagnostics.maxPublished`.
pub const DEFAULT_MAX_PUBLISHED: usize = 200;

/// What to send of a document's diagnostics.
#[derive(Debug)]
pub struct Selection<'a> {
    /// The diagnostics to send, in source order.
    pub kept: Vec<&'a Diagnostic>,
    /// How many were left out (0: all are sent).
    pub omitted: usize,
}

/// Chooses what to send of `all` (in source order) under `max` (0: no
/// limit) and [`BUDGET_BYTES`], preferring errors, then diagnostics near
/// `focus` (the byte offset of the last edit). The checker's own `I0001`
/// notes (they count what the checker did not keep) are always sent.
/// `uri_len` is the length of the document's URI, which each related note
/// repeats.
pub fn select<'a>(
    all: Vec<&'a Diagnostic>,
    max: usize,
    focus: usize,
    index: &LineIndex,
    uri_len: usize,
) -> Selection<'a> {
    if max == 0 || (all.len() <= max && fits(&all, uri_len)) {
        return Selection {
            kept: all,
            omitted: 0,
        };
    }
    let focus_line = index.line_of(focus);
    let total = all.len();
    // Priority: the capped-notes first (always kept), then by severity
    // (`Severity` orders errors first), then by lines away from the edit,
    // then in source order.
    let mut ranked: Vec<(bool, Severity, usize, usize, &Diagnostic)> = all
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            let line = index.line_of(d.span.start());
            let counted = d.code != CAPPED_CODE;
            (counted, d.severity, line.abs_diff(focus_line), i, d)
        })
        .collect();
    let key =
        |&(counted, severity, distance, i, _): &(bool, Severity, usize, usize, &Diagnostic)| {
            (counted, severity, distance, i)
        };
    // At most the uncounted notes and `max` others are sent: only those
    // first ones are put in order (the keys are unique, so the order is
    // the full sort's), not all of a big file's diagnostics.
    let uncounted = ranked.iter().filter(|r| !r.0).count();
    let first = (uncounted + max).min(total);
    if first < total {
        ranked.select_nth_unstable_by_key(first, key);
        ranked.truncate(first);
    }
    ranked.sort_unstable_by_key(key);
    let mut kept = Vec::with_capacity(max.min(total));
    let (mut bytes, mut sent) = (0, 0);
    for (counted, _, _, i, d) in ranked {
        let size = estimated_json_bytes(d, uri_len);
        if counted {
            if sent >= max || bytes + size > BUDGET_BYTES {
                break;
            }
            sent += 1;
        }
        bytes += size;
        kept.push((i, d));
    }
    kept.sort_unstable_by_key(|&(i, _)| i);
    let omitted = total - kept.len();
    Selection {
        kept: kept.into_iter().map(|(_, d)| d).collect(),
        omitted,
    }
}

/// The note that says how many diagnostics were left out, at the start of
/// the file (where the editor lists a file's problems first).
pub fn omitted_note(omitted: usize, max: usize) -> Diagnostic {
    Diagnostic::info(
        CAPPED_CODE,
        Span::at(0),
        format!(
            "{} more diagnostic(s) not shown here: the editor gets at most {max} \
             (mapwright.diagnostics.maxPublished; 0 sends all) in about {} KB, \
             errors first, then those nearest the last edit",
            omitted,
            BUDGET_BYTES / 1024
        ),
    )
    .with_note("`mapwright check FILE` lists every diagnostic")
}

fn fits(all: &[&Diagnostic], uri_len: usize) -> bool {
    let mut bytes = 0;
    all.iter().all(|d| {
        bytes += estimated_json_bytes(d, uri_len);
        bytes <= BUDGET_BYTES
    })
}

/// About the bytes of `d`'s LSP JSON with every optional field: its texts
/// plus what every diagnostic carries (range, severity, code and its
/// documentation link, source, version: 230-300 bytes on the benchmark's
/// files) and, per related note, its location (the document's URI, of
/// `uri_len` bytes, and a range).
pub fn estimated_json_bytes(d: &Diagnostic, uri_len: usize) -> usize {
    const FIXED: usize = 300;
    const PER_RELATED: usize = 120;
    FIXED
        + d.message.len()
        + d.label.as_ref().map_or(0, |l| l.len() + 4)
        + d.notes.iter().map(|n| n.len() + 4).sum::<usize>()
        + d.related
            .iter()
            .map(|r| PER_RELATED + uri_len + r.message.len())
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of_lines(n: usize) -> String {
        (0..n).map(|i| format!("x{i} = 1;\n")).collect()
    }

    /// One diagnostic per line, errors on lines divisible by `every`.
    fn diags(text: &str, every: usize) -> Vec<Diagnostic> {
        let index = LineIndex::new(text);
        (0..index.line_count() - 1)
            .map(|line| {
                let (start, _) = index.line_span(line);
                let span = Span::new(start, start + 2);
                if line % every == 0 {
                    Diagnostic::error("E0200", span, "undefined")
                } else {
                    Diagnostic::warning("W0201", span, "unused")
                }
            })
            .collect()
    }

    #[test]
    fn under_the_limits_everything_is_sent_in_order() {
        let text = text_of_lines(50);
        let all = diags(&text, 3);
        let index = LineIndex::new(&text);
        let sel = select(all.iter().collect(), 200, 0, &index, 30);
        assert_eq!(sel.omitted, 0);
        assert_eq!(sel.kept.len(), 50);
        assert!(sel
            .kept
            .windows(2)
            .all(|w| w[0].span.start() < w[1].span.start()));
    }

    #[test]
    fn errors_first_then_nearest_the_edit_in_source_order() {
        let text = text_of_lines(1000);
        let all = diags(&text, 10); // 100 errors, 900 warnings
        let index = LineIndex::new(&text);
        let focus = index.line_span(700).0;
        let sel = select(all.iter().collect(), 150, focus, &index, 30);
        assert_eq!(sel.kept.len(), 150);
        assert_eq!(sel.omitted, 850);
        let errors = sel.kept.iter().filter(|d| d.is_error()).count();
        assert_eq!(errors, 100, "every error is kept before any warning");
        // The 50 warnings kept are the 50 nearest line 700.
        let lines: Vec<usize> = sel
            .kept
            .iter()
            .filter(|d| !d.is_error())
            .map(|d| index.line_of(d.span.start()))
            .collect();
        assert!(lines.iter().all(|l| l.abs_diff(700) <= 28), "{lines:?}");
        assert!(sel
            .kept
            .windows(2)
            .all(|w| w[0].span.start() < w[1].span.start()));
    }

    #[test]
    fn the_byte_budget_bounds_long_messages() {
        let text = text_of_lines(1000);
        let long = "m".repeat(2000);
        let index = LineIndex::new(&text);
        let all: Vec<Diagnostic> = diags(&text, 1)
            .into_iter()
            .map(|mut d| {
                d.message = long.clone();
                d
            })
            .collect();
        let sel = select(all.iter().collect(), 200, 0, &index, 30);
        let bytes: usize = sel.kept.iter().map(|d| estimated_json_bytes(d, 30)).sum();
        assert!(bytes <= BUDGET_BYTES);
        assert!(sel.kept.len() < 200 && !sel.kept.is_empty());
        assert_eq!(sel.kept.len() + sel.omitted, 1000);
    }

    #[test]
    fn zero_sends_all_and_capped_notes_always_go() {
        let text = text_of_lines(400);
        let index = LineIndex::new(&text);
        let mut all = diags(&text, 1);
        all.push(Diagnostic::info(CAPPED_CODE, Span::at(5), "1 more"));
        all.sort_by_key(|d| d.span.start());
        assert_eq!(
            select(all.iter().collect(), 0, 0, &index, 30).kept.len(),
            401
        );
        let sel = select(all.iter().collect(), 10, 0, &index, 30);
        assert_eq!(sel.kept.len(), 11);
        assert!(sel.kept.iter().any(|d| d.code == CAPPED_CODE));
        assert_eq!(sel.omitted, 390);
    }

    /// Only the first `max` (and the notes) are put in order: the choice
    /// is the one sorting every diagnostic gives, for every focus and
    /// limit, with errors, warnings and notes mixed.
    #[test]
    fn ordering_only_the_first_ones_chooses_as_sorting_all_does() {
        let text = text_of_lines(600);
        let index = LineIndex::new(&text);
        let mut all = diags(&text, 7);
        for at in [0, 37, 300] {
            all.push(Diagnostic::info(CAPPED_CODE, Span::at(at), "more"));
        }
        all.sort_by_key(|d| d.span.start());
        let reference = |max: usize, focus: usize| {
            let focus_line = index.line_of(focus);
            let mut ranked: Vec<_> = all
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let distance = index.line_of(d.span.start()).abs_diff(focus_line);
                    (d.code != CAPPED_CODE, d.severity, distance, i)
                })
                .collect();
            ranked.sort_unstable();
            let (mut kept, mut sent, mut bytes) = (Vec::new(), 0, 0);
            for (counted, _, _, i) in ranked {
                let size = estimated_json_bytes(&all[i], 30);
                if counted {
                    if sent >= max || bytes + size > BUDGET_BYTES {
                        break;
                    }
                    sent += 1;
                }
                bytes += size;
                kept.push(i);
            }
            kept.sort_unstable();
            kept
        };
        for max in [1, 2, 10, 150, 599, 700] {
            for line in [0, 1, 250, 599] {
                let focus = index.line_span(line).0;
                let sel = select(all.iter().collect(), max, focus, &index, 30);
                let got: Vec<usize> = sel
                    .kept
                    .iter()
                    .map(|k| all.iter().position(|d| std::ptr::eq(d, *k)).unwrap())
                    .collect();
                assert_eq!(got, reference(max, focus), "max {max}, line {line}");
                assert_eq!(sel.omitted, all.len() - got.len());
            }
        }
    }

    #[test]
    fn the_note_counts_and_names_the_setting() {
        let note = omitted_note(1343, 200);
        assert_eq!(note.code, CAPPED_CODE);
        assert_eq!(note.severity, Severity::Info);
        assert!(note.message.starts_with("1343 more diagnostic(s)"));
        assert!(note.message.contains("mapwright.diagnostics.maxPublished"));
    }
}
