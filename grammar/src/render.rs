//! Renders diagnostics for people (rustc-style snippets) and for tools (JSON).
//!
//! Colours are used only when the output is a terminal; the text is otherwise
//! identical, so snapshot tests see exactly what users see.

use crate::line_index::Encoding;
use crate::{Diagnostic, LineIndex, Severity};
use serde_json::json;

/// Terminal styling, off when writing to a pipe or file.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

fn severity_word(s: Severity) -> (&'static str, &'static str) {
    match s {
        Severity::Error => ("error", "1;31"),
        Severity::Warning => ("warning", "1;33"),
        Severity::Info => ("info", "1;36"),
        Severity::Hint => ("hint", "1;32"),
    }
}

/// Renders one diagnostic with the source line(s) it points at:
///
/// ```text
/// error[E0101]: missing `;` at the end of the statement
///  --> circuit.mapper:5:32
///   |
/// 5 | Region * ghost_region GPU ZCMEM
///   |                                ^ add `;` here
///   = help: insert `;`
/// ```
pub fn render_diagnostic(
    d: &Diagnostic,
    path: &str,
    source: &str,
    index: &LineIndex,
    style: Style,
) -> String {
    let (word, color) = severity_word(d.severity);
    let start = index.line_col(d.span.start(), Encoding::Utf8);
    let line_no = start.line as usize + 1;
    let gutter = line_no.to_string().len().max(
        d.related
            .iter()
            .map(|r| (index.line_of(r.span.start()) + 1).to_string().len())
            .max()
            .unwrap_or(1),
    );
    let pad = " ".repeat(gutter);
    let mut out = String::new();
    out.push_str(&style.paint(color, &format!("{word}[{}]", d.code)));
    out.push_str(&style.paint("1", &format!(": {}", clip(&d.message, MAX_TEXT_WIDTH))));
    out.push('\n');
    out.push_str(&format!(
        "{pad}{} {path}:{}:{}\n",
        style.paint("1;34", "-->"),
        line_no,
        char_col(source, index, d.span.start()) + 1
    ));
    out.push_str(&format!("{pad} {}\n", style.paint("1;34", "|")));
    snippet(
        &mut out,
        source,
        index,
        d.span,
        d.label.as_deref().unwrap_or(""),
        gutter,
        style,
        color,
        '^',
    );
    for r in &d.related {
        snippet(
            &mut out, source, index, r.span, &r.message, gutter, style, "1;34", '-',
        );
    }
    for note in &d.notes {
        out.push_str(&format!(
            "{pad} {} note: {}\n",
            style.paint("1;34", "="),
            clip(note, MAX_TEXT_WIDTH)
        ));
    }
    for fix in &d.fixes {
        out.push_str(&format!(
            "{pad} {} help: {}\n",
            style.paint("1;34", "="),
            clip(&fix.title, MAX_TEXT_WIDTH)
        ));
    }
    out
}

/// The column of `offset` in characters (what a reader counts).
fn char_col(source: &str, index: &LineIndex, offset: usize) -> usize {
    let line = index.line_of(offset);
    let (start, _) = index.line_span(line);
    source
        .get(start..offset.min(source.len()))
        .map(|s| s.chars().count())
        .unwrap_or(0)
}

/// Widest source excerpt a snippet shows, in characters. Longer lines
/// (minified or generated input, a 200 KB expression) are cut around the
/// column with `...`, as rustc does, so one diagnostic stays one screenful.
pub const MAX_SNIPPET_WIDTH: usize = 120;

/// Longest message, label or help text printed; the rest becomes `...`.
/// Some messages quote source text (a suggested replacement), which can be
/// as long as the line.
const MAX_TEXT_WIDTH: usize = 400;

/// `text` cut to `max` characters, with `...` when cut.
fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some((cut, _)) => format!("{}...", &text[..cut]).into(),
    }
}

/// The part of a line of `len` characters to show for a mark at column
/// `col` (characters): a window of at most
/// [`MAX_SNIPPET_WIDTH`] characters that starts a little before the mark,
/// so its left context is visible, and ends at the line's end if that is
/// close.
fn window(len: usize, col: usize) -> std::ops::Range<usize> {
    if len <= MAX_SNIPPET_WIDTH {
        return 0..len;
    }
    let context = MAX_SNIPPET_WIDTH / 4;
    // Show the mark's start with some context; a wide mark is cut on the right.
    let start = col.saturating_sub(context).min(len - MAX_SNIPPET_WIDTH);
    start..start + MAX_SNIPPET_WIDTH
}

#[allow(clippy::too_many_arguments)]
fn snippet(
    out: &mut String,
    source: &str,
    index: &LineIndex,
    span: crate::Span,
    label: &str,
    gutter: usize,
    style: Style,
    color: &str,
    marker: char,
) {
    let line = index.line_of(span.start());
    let (ls, le) = index.line_span(line);
    let line_text = source.get(ls..le).unwrap_or("");
    let col = char_col(source, index, span.start());
    let end = span.end().min(le).max(span.start());
    let width = source
        .get(span.start()..end)
        .map(|s| s.chars().count())
        .unwrap_or(0)
        .max(1);
    let len = line_text.chars().count();
    let shown = window(len, col);
    let cut_left = shown.start > 0;
    let cut_right = shown.end < len;
    let mut text: String = line_text
        .chars()
        .skip(shown.start)
        .take(shown.len())
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    if cut_left {
        text.insert_str(0, "...");
    }
    if cut_right {
        text.push_str("...");
    }
    // The mark, in the window's coordinates: shifted past a leading `...`,
    // and cut where the shown text ends.
    let shift = if cut_left { 3 } else { 0 };
    let mark_start = col.clamp(shown.start, shown.end);
    let mark_end = (col + width).min(shown.end);
    let width = mark_end.saturating_sub(mark_start).max(1);
    let col = mark_start - shown.start + shift;
    let bar = style.paint("1;34", "|");
    out.push_str(&format!(
        "{} {bar} {text}\n",
        style.paint("1;34", &format!("{:>gutter$}", line + 1))
    ));
    let marks = marker.to_string().repeat(width);
    let label = if label.is_empty() {
        String::new()
    } else {
        format!(" {}", clip(label, MAX_TEXT_WIDTH))
    };
    out.push_str(&format!(
        "{} {bar} {}{}\n",
        " ".repeat(gutter),
        " ".repeat(col),
        style.paint(color, &format!("{marks}{label}"))
    ));
}

/// One diagnostic as JSON, with 1-based line/column (UTF-8 columns counted in
/// characters) and the byte span, for tools.
pub fn diagnostic_json(
    d: &Diagnostic,
    path: &str,
    index: &LineIndex,
    source: &str,
) -> serde_json::Value {
    let pos = |offset: usize| json!({ "line": index.line_of(offset) + 1, "column": char_col(source, index, offset) + 1 });
    json!({
        "file": path,
        "code": d.code,
        "severity": d.severity,
        "message": d.message,
        "label": d.label,
        "start": pos(d.span.start()),
        "end": pos(d.span.end()),
        "span": d.span,
        "related": d.related,
        "notes": d.notes,
        "fixes": d.fixes,
    })
}

/// Diagnostics in a compact, stable text form, one line each
/// (`CODE Severity LINE:COL message [label]`, 1-based, UTF-8 columns in
/// bytes), then its related spans, notes and fix titles indented, or
/// `(no diagnostics)`: what the snapshot tests of the checker and of the
/// mapping resolution compare.
pub fn describe_compact<'d>(
    source: &str,
    diagnostics: impl IntoIterator<Item = &'d Diagnostic>,
) -> String {
    let index = LineIndex::new(source);
    let mut out = String::new();
    for d in diagnostics {
        let at = index.line_col(d.span.start(), Encoding::Utf8);
        out.push_str(&format!(
            "{} {:?} {}:{} {}",
            d.code,
            d.severity,
            at.line + 1,
            at.col + 1,
            d.message
        ));
        if let Some(label) = &d.label {
            out.push_str(&format!(" [{label}]"));
        }
        out.push('\n');
        for r in &d.related {
            let line = index.line_of(r.span.start()) + 1;
            out.push_str(&format!("  related {line}: {}\n", r.message));
        }
        for n in &d.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        for f in &d.fixes {
            out.push_str(&format!("  fix ({:?}): {}\n", f.applicability, f.title));
        }
    }
    if out.is_empty() {
        out.push_str("(no diagnostics)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Span;

    fn render(source: &str, span: Span, label: &str) -> String {
        let d = Diagnostic::error("E0125", span, "deep").with_label(label.to_string());
        let index = LineIndex::new(source);
        render_diagnostic(&d, "f.mapper", source, &index, Style { color: false })
    }

    /// The source line and the marker line of a rendered snippet.
    fn snippet_lines(out: &str) -> (String, String) {
        let lines: Vec<&str> = out.lines().collect();
        let text = lines[3].split_once("| ").map(|x| x.1).unwrap_or("");
        let marks = lines[4].split_once("| ").map(|x| x.1).unwrap_or("");
        (text.to_string(), marks.to_string())
    }

    #[test]
    fn a_long_line_is_cut_around_the_column() {
        // The issue's input: 100,000 `(` on one 200 KB line.
        let n = 100_000;
        let source = format!("x = {}1{};", "(".repeat(n), ")".repeat(n));
        let col = 4 + 70_000;
        let out = render(&source, Span::new(col, col + 1), "too deeply nested");
        assert!(out.len() < 1_000, "{} bytes", out.len());
        assert!(out.contains(&format!("f.mapper:1:{}", col + 1)));
        let (text, marks) = snippet_lines(&out);
        assert!(text.starts_with("...") && text.ends_with("..."), "{text}");
        assert!(text.chars().count() <= MAX_SNIPPET_WIDTH + 6);
        // The caret stands under the character the span starts at.
        let caret = marks.find('^').unwrap();
        assert_eq!(&text[caret..caret + 1], "(");
        assert!(marks.ends_with("^ too deeply nested"), "{marks}");
    }

    #[test]
    fn the_mark_keeps_its_place_near_either_end() {
        let source = format!("x = {};", "a".repeat(1_000));
        let out = render(&source, Span::new(0, 1), "here");
        let (text, marks) = snippet_lines(&out);
        assert!(text.starts_with("x = a") && text.ends_with("..."), "{text}");
        assert_eq!(marks, "^ here");
        let end = source.len() - 1;
        let out = render(&source, Span::new(end, end + 1), "end");
        let (text, marks) = snippet_lines(&out);
        assert!(text.starts_with("...") && text.ends_with("a;"), "{text}");
        assert_eq!(&text[marks.find('^').unwrap()..], ";");
    }

    #[test]
    fn a_wide_mark_is_cut_with_the_line_and_long_labels_are_clipped() {
        let source = format!("x = {};", "a".repeat(10_000));
        let label = "b".repeat(10_000);
        let out = render(&source, Span::new(4, 10_004), &label);
        assert!(out.len() < 2_000, "{} bytes", out.len());
        let (_, marks) = snippet_lines(&out);
        let carets = marks.chars().filter(|&c| c == '^').count();
        assert!((1..=MAX_SNIPPET_WIDTH).contains(&carets), "{carets}");
        assert!(marks.ends_with("..."));
    }

    #[test]
    fn short_lines_are_shown_whole() {
        let out = render("x = 1 +;", Span::new(7, 8), "expected an operand");
        let (text, marks) = snippet_lines(&out);
        assert_eq!(text, "x = 1 +;");
        assert_eq!(marks, "       ^ expected an operand");
    }
}
