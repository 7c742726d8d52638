//! Renders diagnostics for people (rustc-style snippets) and for tools (JSON).
//!
//! Colours are used only when the output is a terminal; the text is otherwise
//! identical, so snapshot tests see exactly what users see.

use mapwright_grammar::line_index::Encoding;
use mapwright_grammar::{Diagnostic, LineIndex, Severity};
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
    let start = index.line_col(d.span.start, Encoding::Utf8);
    let line_no = start.line as usize + 1;
    let gutter = line_no.to_string().len().max(
        d.related
            .iter()
            .map(|r| (index.line_of(r.span.start) + 1).to_string().len())
            .max()
            .unwrap_or(1),
    );
    let pad = " ".repeat(gutter);
    let mut out = String::new();
    out.push_str(&style.paint(color, &format!("{word}[{}]", d.code)));
    out.push_str(&style.paint("1", &format!(": {}", d.message)));
    out.push('\n');
    out.push_str(&format!(
        "{pad}{} {path}:{}:{}\n",
        style.paint("1;34", "-->"),
        line_no,
        char_col(source, index, d.span.start) + 1
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
            "{pad} {} note: {note}\n",
            style.paint("1;34", "=")
        ));
    }
    for fix in &d.fixes {
        out.push_str(&format!(
            "{pad} {} help: {}\n",
            style.paint("1;34", "="),
            fix.title
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

#[allow(clippy::too_many_arguments)]
fn snippet(
    out: &mut String,
    source: &str,
    index: &LineIndex,
    span: mapwright_grammar::Span,
    label: &str,
    gutter: usize,
    style: Style,
    color: &str,
    marker: char,
) {
    let line = index.line_of(span.start);
    let (ls, le) = index.line_span(line);
    let text = source.get(ls..le).unwrap_or("").replace('\t', " ");
    let col = char_col(source, index, span.start);
    let end = span.end.min(le).max(span.start);
    let width = source
        .get(span.start..end)
        .map(|s| s.chars().count())
        .unwrap_or(0)
        .max(1);
    let bar = style.paint("1;34", "|");
    out.push_str(&format!(
        "{} {bar} {text}\n",
        style.paint("1;34", &format!("{:>gutter$}", line + 1))
    ));
    let marks = marker.to_string().repeat(width);
    let label = if label.is_empty() {
        String::new()
    } else {
        format!(" {label}")
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
        "start": pos(d.span.start),
        "end": pos(d.span.end),
        "span": d.span,
        "related": d.related,
        "notes": d.notes,
        "fixes": d.fixes,
    })
}
