//! `textDocument/onTypeFormatting`: after typing `;` or `}`, format the
//! top-level statement that character belongs to (the whole function after
//! a `;` inside its body), and only if that statement parsed cleanly: a
//! statement still being typed is left alone.

use mapwright_grammar::TextEdit;

use super::analysis::Analysis;
use super::formatting::format_selection;

/// The characters that trigger formatting.
pub const TRIGGERS: [&str; 2] = [";", "}"];

/// The capability announcing the triggers.
pub fn capability() -> tower_lsp::lsp_types::DocumentOnTypeFormattingOptions {
    tower_lsp::lsp_types::DocumentOnTypeFormattingOptions {
        first_trigger_character: TRIGGERS[0].to_string(),
        more_trigger_character: Some(TRIGGERS[1..].iter().map(|t| t.to_string()).collect()),
    }
}

/// Edits formatting the statement ended or continued by `ch`, typed just
/// before `offset`.
pub fn on_type(a: &Analysis, offset: usize, ch: &str) -> Vec<TextEdit> {
    if !TRIGGERS.contains(&ch) || offset == 0 {
        return Vec::new();
    }
    let typed_at = offset - 1;
    if a.text.get(typed_at..offset) != Some(ch) {
        return Vec::new();
    }
    let Some(stmt) = a
        .program()
        .stmts
        .iter()
        .find(|s| s.span.start() <= typed_at && typed_at < s.span.end())
    else {
        return Vec::new();
    };
    let broken = a
        .parsed
        .diagnostics
        .iter()
        .any(|d| d.span.start() <= stmt.span.end() && d.span.end() >= stmt.span.start());
    if broken {
        return Vec::new();
    }
    format_selection(a, stmt.span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_grammar::diagnostic::apply_edits;

    #[test]
    fn formats_the_statement_a_semicolon_ends_and_leaves_the_rest() {
        let src = "Task  *  GPU;\nRegion  * *  GPU FBMEM;\n";
        let a = Analysis::new(src);
        let end = src.find("FBMEM;").unwrap() + 6;
        let out = apply_edits(src, &on_type(&a, end, ";")).unwrap();
        assert_eq!(out, "Task  *  GPU;\nRegion * * GPU FBMEM;\n");
    }

    #[test]
    fn a_closing_brace_formats_the_function_and_broken_statements_are_left_alone() {
        let src = "def f(Task t) {\nreturn   t.ipoint;\n}\n";
        let a = Analysis::new(src);
        let out = apply_edits(src, &on_type(&a, src.len() - 1, "}")).unwrap();
        assert_eq!(out, "def f(Task t) {\n    return t.ipoint;\n}\n");
        let broken = "Task  * ;\n";
        let b = Analysis::new(broken);
        assert!(on_type(&b, broken.find(';').unwrap() + 1, ";").is_empty());
    }
}
