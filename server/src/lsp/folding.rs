//! Folding ranges: function bodies and other multi-line statements, and runs
//! of full-line comments.

use super::analysis::Analysis;

/// What a fold holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldKind {
    Code,
    Comment,
}

/// A fold over whole lines (zero-based, inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fold {
    pub start_line: u32,
    pub end_line: u32,
    pub kind: FoldKind,
}

/// Every fold of the document, in source order.
pub fn folds(a: &Analysis) -> Vec<Fold> {
    let idx = &a.index;
    let mut out = Vec::new();
    for stmt in &a.program().stmts {
        if stmt.span.is_empty() {
            continue;
        }
        let start = idx.line_of(stmt.span.start());
        let mut end = idx.line_of(stmt.span.end() - 1);
        // Keep a closing `}` on its own line visible, as editors do for
        // brace languages.
        let (ls, le) = idx.line_span(end);
        if end > start && a.text[ls..le].trim_start().starts_with('}') {
            end -= 1;
        }
        if end > start {
            out.push(Fold {
                start_line: start as u32,
                end_line: end as u32,
                kind: FoldKind::Code,
            });
        }
    }
    // Runs of comments that each start their line.
    let mut run: Option<(usize, usize)> = None;
    let flush = |run: &mut Option<(usize, usize)>, out: &mut Vec<Fold>| {
        if let Some((s, e)) = run.take() {
            if e > s {
                out.push(Fold {
                    start_line: s as u32,
                    end_line: e as u32,
                    kind: FoldKind::Comment,
                });
            }
        }
    };
    for c in &a.parsed.comments {
        let line = idx.line_of(c.span.start());
        let (ls, _) = idx.line_span(line);
        let own_line = a.text[ls..c.span.start()].trim().is_empty();
        if !own_line {
            flush(&mut run, &mut out);
            continue;
        }
        run = match run {
            Some((s, e)) if e + 1 == line => Some((s, line)),
            other => {
                let mut other = other;
                flush(&mut other, &mut out);
                Some((line, line))
            }
        };
    }
    flush(&mut run, &mut out);
    out.sort_by_key(|f| (f.start_line, f.end_line));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_statements_and_comment_blocks() {
        let src = "# a\n# b\n# c\nTask * GPU;\ndef f(Task t) {\n    # inside\n    return 0;\n}\nTask a,\n  b GPU; # trailing\n# lone\n";
        let f = folds(&Analysis::new(src));
        assert_eq!(
            f,
            [
                Fold {
                    start_line: 0,
                    end_line: 2,
                    kind: FoldKind::Comment
                },
                Fold {
                    start_line: 4,
                    end_line: 6,
                    kind: FoldKind::Code
                },
                Fold {
                    start_line: 8,
                    end_line: 9,
                    kind: FoldKind::Code
                },
            ]
        );
    }
}
