//! Formatting as minimal edits: the grammar's formatter decides the text,
//! [`minimal_edits`] turns "old -> new" into the few edits an editor applies.

use mapwright_grammar::format::{format_parsed, format_range};
use mapwright_grammar::{Span, TextEdit};

use super::analysis::Analysis;
use super::diff::minimal_edits;

/// Edits that format the whole document (empty if it is formatted).
/// Statements with syntax errors are left as written by the formatter.
pub fn format_document(a: &Analysis) -> Vec<TextEdit> {
    let formatted = format_parsed(&a.text, &a.parsed);
    minimal_edits(&a.text, &formatted)
}

/// Edits that format the top-level statements overlapping `range`.
pub fn format_selection(a: &Analysis, range: Span) -> Vec<TextEdit> {
    let Some(edit) = format_range(&a.text, range) else {
        return Vec::new();
    };
    let old = edit.span.text(&a.text);
    minimal_edits(old, &edit.text)
        .into_iter()
        .map(|e| TextEdit {
            span: Span::new(
                e.span.start() + edit.span.start(),
                e.span.end() + edit.span.start(),
            ),
            text: e.text,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_grammar::diagnostic::apply_edits;

    #[test]
    fn document_and_selection() {
        let src = "Task  *  GPU;\nmgpu=Machine(GPU);\n";
        let a = Analysis::new(src);
        let out = apply_edits(src, &format_document(&a)).unwrap();
        assert_eq!(out, "Task * GPU;\nmgpu = Machine(GPU);\n");
        let second = src.find("mgpu").unwrap();
        let sel = format_selection(&a, Span::new(second, second + 3));
        let out = apply_edits(src, &sel).unwrap();
        assert_eq!(out, "Task  *  GPU;\nmgpu = Machine(GPU);\n");
        assert!(format_document(&Analysis::new("Task * GPU;\n")).is_empty());
    }
}
