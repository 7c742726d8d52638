//! Pinned statements: a top-level statement whose line ends with the
//! comment `# mapwright: keep` is one the user does not want a tool to
//! change or remove (the optimizer honours it; `explain` and hover show it).
//!
//! The mark is syntax, not semantics: it is found from the parse's comment
//! table alone, so every tool agrees on which statements are pinned.

use crate::ast::Program;
use crate::token::Token;
use crate::Span;

/// The comment text (after `#`) that pins the statement it follows.
pub const KEEP_MARK: &str = "mapwright: keep";

/// Whether a comment's text is the pin mark (`# mapwright: keep`, spaces
/// around the colon free, anything after `keep` a note for the reader).
pub fn is_keep_comment(comment: &str) -> bool {
    let body = comment.trim_start_matches(['#', '/']).trim();
    let Some(rest) = body.strip_prefix("mapwright") else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix(':') else {
        return false;
    };
    let rest = rest.trim_start();
    rest.strip_prefix("keep")
        .is_some_and(|after| after.is_empty() || !after.starts_with(|c: char| c.is_alphanumeric()))
}

/// The spans of the top-level statements pinned by a trailing keep comment,
/// in source order: the comment starts after the statement on the
/// statement's last line.
pub fn pinned_statements(program: &Program, comments: &[Token], source: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut next = 0;
    for stmt in &program.stmts {
        let end = stmt.span.end();
        // Comments are in source order: skip those before this statement's end.
        while comments.get(next).is_some_and(|c| c.span.start() < end) {
            next += 1;
        }
        let Some(comment) = comments.get(next) else {
            continue;
        };
        let between = source.get(end..comment.span.start()).unwrap_or("\n");
        let text = source
            .get(comment.span.start()..comment.span.end())
            .unwrap_or("");
        if !between.contains('\n') && is_keep_comment(text) {
            out.push(stmt.span);
        }
    }
    out
}

/// The pinned statement covering byte `offset` (its line, keep comment
/// included), if any.
pub fn pinned_at(pinned: &[Span], source: &str, offset: usize) -> Option<Span> {
    pinned.iter().copied().find(|s| {
        let line_end = source
            .get(s.end()..)
            .and_then(|rest| rest.find('\n'))
            .map_or(source.len(), |i| s.end() + i);
        s.start() <= offset && offset <= line_end
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    fn pinned(src: &str) -> Vec<&str> {
        let p = parse(src);
        pinned_statements(&p.program, &p.comments, src)
            .into_iter()
            .map(|s| s.text(src))
            .collect()
    }

    #[test]
    fn a_trailing_keep_comment_pins_its_statement_only() {
        let src = "Task * GPU,CPU;\nRegion * rp_ghost GPU ZCMEM;  # mapwright: keep\n# mapwright: keep\nLayout * * * SOA C_order;\n";
        assert_eq!(pinned(src), vec!["Region * rp_ghost GPU ZCMEM;"]);
    }

    #[test]
    fn the_mark_tolerates_spacing_and_a_note_but_not_other_words() {
        assert!(is_keep_comment("# mapwright: keep"));
        assert!(is_keep_comment("#mapwright :keep (expert's choice)"));
        assert!(is_keep_comment(
            "# mapwright: keep, measured on the cluster"
        ));
        assert!(!is_keep_comment("# mapwright: keeping an eye on it"));
        assert!(!is_keep_comment("# keep"));
        assert!(!is_keep_comment("# mapwright: tuned rules"));
    }

    #[test]
    fn a_multi_line_statement_is_pinned_by_a_comment_after_its_end() {
        let src = "def f(Task task) {\n    return m[0];\n}  # mapwright: keep\nTask * GPU;\n";
        assert_eq!(pinned(src).len(), 1);
        assert!(pinned(src)[0].starts_with("def f"));
        let p = parse(src);
        let spans = pinned_statements(&p.program, &p.comments, src);
        assert!(pinned_at(&spans, src, src.find("keep").unwrap()).is_some());
        assert!(pinned_at(&spans, src, src.find("Task *").unwrap()).is_none());
    }
}
