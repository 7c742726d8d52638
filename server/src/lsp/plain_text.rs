//! Markdown as plain text, for clients that declare they cannot render
//! Markdown (issue 39: eglot without `markdown-mode` declares `plaintext`
//! only, and showed our code fences, `**bold**` and tables raw).
//!
//! Only the Markdown our hovers and documentation use: code fences (the
//! code kept, the fence lines dropped), inline code and emphasis markers
//! (dropped), headings (the `#`s dropped), tables (columns aligned with
//! spaces, the separator row dropped), `\` escapes. Everything else passes
//! through as written.

/// `markdown` rendered as plain text.
pub fn markdown_to_plain(markdown: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut table: Vec<Vec<String>> = Vec::new();
    let mut in_fence = false;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            out.push(line.to_string());
            continue;
        }
        if trimmed.starts_with('|') {
            if !is_separator_row(trimmed) {
                table.push(table_cells(trimmed));
            }
            continue;
        }
        flush_table(&mut table, &mut out);
        let text = trimmed.trim_start_matches('#');
        let text = if text.len() < trimmed.len() {
            text.trim_start()
        } else {
            line
        };
        out.push(inline(text));
    }
    flush_table(&mut table, &mut out);
    out.join("\n")
}

/// A table row's cells, rendered inline.
fn table_cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| inline(c.trim())).collect()
}

/// `|---|:--:|` and the like.
fn is_separator_row(row: &str) -> bool {
    row.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// The rows of a table with their columns padded to one width.
fn flush_table(table: &mut Vec<Vec<String>>, out: &mut Vec<String>) {
    if table.is_empty() {
        return;
    }
    let columns = table.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            table
                .iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in table.drain(..) {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<width$}", width = widths[i]))
            .collect();
        out.push(cells.join("  ").trim_end().to_string());
    }
}

/// One line without inline code and emphasis markers or escapes; the
/// text of a code span is kept as written. A run of one or two `*` is
/// emphasis only when it opens a word and a run of the same length later
/// closes one (`*processor*`, `**Memory placement.**`); the DSL's
/// wildcard (`Task * GPU`, `TASK|*`) and a product (`a*b`) stay.
fn inline(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let dropped = emphasis_markers(&chars);
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '`' => in_code = !in_code,
            _ if in_code => out.push(c),
            '\\' if i + 1 < chars.len() => {
                out.push(chars[i + 1]);
                i += 1;
            }
            _ if dropped.contains(&i) => {}
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// The indices of the `*` that mark emphasis (outside code spans).
fn emphasis_markers(chars: &[char]) -> Vec<usize> {
    // Runs of `*` outside code spans: (start, length).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut in_code = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '`' => in_code = !in_code,
            '*' if !in_code => {
                let start = i;
                while i < chars.len() && chars[i] == '*' {
                    i += 1;
                }
                runs.push((start, i - start));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    let is_space = |i: Option<usize>| space_or_end(i.and_then(|i| chars.get(i)));
    let opens = |(s, n): (usize, usize)| {
        n <= 2
            && !is_space(Some(s + n))
            && (s == 0 || chars[s - 1].is_whitespace() || chars[s - 1] == '(')
    };
    let closes = |(s, n): (usize, usize)| {
        n <= 2 && s > 0 && !chars[s - 1].is_whitespace() && punct_or_end(chars.get(s + n))
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < runs.len() {
        if opens(runs[k]) {
            if let Some(m) =
                (k + 1..runs.len()).find(|&m| runs[m].1 == runs[k].1 && closes(runs[m]))
            {
                for r in [runs[k], runs[m]] {
                    out.extend(r.0..r.0 + r.1);
                }
                k = m + 1;
                continue;
            }
        }
        k += 1;
    }
    out
}

/// Whether `c` (a character or the end of the line) is white space.
fn space_or_end(c: Option<&char>) -> bool {
    match c {
        None => true,
        Some(c) => c.is_whitespace(),
    }
}

/// Whether `c` may follow a closing emphasis marker: white space,
/// punctuation or the end of the line.
fn punct_or_end(c: Option<&char>) -> bool {
    match c {
        None => true,
        Some(c) => c.is_whitespace() || matches!(c, '.' | ',' | ':' | ';' | ')' | '!' | '?'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_bold_and_inline_code_go() {
        let md = "```mapper\nTask NAME|* PROC[,PROC...];\n```\n\n**Processor placement.** The first kind for which `Task` has a variant wins.";
        assert_eq!(
            markdown_to_plain(md),
            "Task NAME|* PROC[,PROC...];\n\nProcessor placement. The first kind for which Task has a variant wins."
        );
    }

    #[test]
    fn tables_are_aligned() {
        let md = "Regions:\n\n| arg | region | memory |\n|---|---|---|\n| 0 | `A` | FBMEM (default) |\n| 10 | `Bee` | ZCMEM |\nafter";
        assert_eq!(
            markdown_to_plain(md),
            "Regions:\n\narg  region  memory\n0    A       FBMEM (default)\n10   Bee     ZCMEM\nafter"
        );
    }

    #[test]
    fn wildcards_and_headings_stay_readable() {
        assert_eq!(
            markdown_to_plain("### Layout * * *\nTask \\* GPU;"),
            "Layout * * *\nTask * GPU;"
        );
    }

    #[test]
    fn emphasis_goes_and_wildcards_stay() {
        assert_eq!(
            markdown_to_plain("the third field is a *processor* kind, `*` or TASK|* a*b"),
            "the third field is a processor kind, * or TASK|* a*b"
        );
        assert_eq!(
            markdown_to_plain("**Memory placement.** When TASK|* runs, **Note**: x * y"),
            "Memory placement. When TASK|* runs, Note: x * y"
        );
    }

    #[test]
    fn no_markup_is_left_in_the_builtin_documentation() {
        use crate::lsp::docs::{property_doc, token_doc};
        use mapwright_grammar::ast::Prop;
        use mapwright_grammar::token::TokenKind as T;
        let mut docs: Vec<String> = Prop::ALL
            .iter()
            .map(|p| property_doc(*p).markdown())
            .collect();
        for k in [T::KwTask, T::KwRegion, T::KwLayout] {
            docs.extend(token_doc(k).map(|d| d.markdown()));
        }
        assert!(docs.len() > 10);
        for md in docs {
            let plain = markdown_to_plain(&md);
            assert!(!plain.contains("```"), "{plain}");
            assert!(!plain.contains("**"), "{plain}");
            assert!(!plain.contains('`'), "{plain}");
        }
    }
}
