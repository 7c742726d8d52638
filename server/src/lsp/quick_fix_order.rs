//! The order of the quick fixes in a code-action answer (issue 39): a
//! client that applies the first preferred action on Enter (eglot) must
//! get the fix of the diagnostic the user asked about.
//!
//! The fixes of the diagnostics in the request's context come first, then
//! those of the other current diagnostics under the range; within each,
//! a diagnostic that overlaps the requested range comes before one that
//! only touches it, and a narrower diagnostic before a wider one (a missing
//! `;` at the end of a statement before a layout error reported on the
//! whole statement). At most one action per diagnostic is preferred: its
//! fix when it has exactly one and that one is safe.

use tower_lsp::lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Diagnostic, Position, Range, Url,
};

use super::convert::FixData;
use super::proto;

/// One diagnostic's fixes, and whether the client named the diagnostic in
/// the request's context.
pub struct FixGroup {
    pub diagnostic: Diagnostic,
    pub fixes: Vec<FixData>,
    pub in_context: bool,
}

/// The quick-fix actions of `groups`, in the order above (stable: equal
/// groups keep the order they came in).
pub fn quick_fix_actions(
    uri: &Url,
    mut groups: Vec<FixGroup>,
    asked: Range,
) -> Vec<CodeActionOrCommand> {
    groups.sort_by_key(|g| {
        (
            !g.in_context,
            !overlaps(g.diagnostic.range, asked),
            extent(g.diagnostic.range),
        )
    });
    let mut out = Vec::new();
    for g in groups {
        let preferred = g.fixes.len() == 1 && g.fixes[0].safe;
        for fix in g.fixes {
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![g.diagnostic.clone()]),
                edit: Some(proto::workspace_edit(uri, fix.edits)),
                is_preferred: preferred.then_some(true),
                ..Default::default()
            }));
        }
    }
    out
}

/// Whether two ranges share more than an end point (an empty range counts
/// when it lies inside the other or at its start).
fn overlaps(a: Range, b: Range) -> bool {
    let before = |x: Position, y: Position| (x.line, x.character) < (y.line, y.character);
    let empty = |r: Range| r.start == r.end;
    if empty(a) || empty(b) {
        !before(a.start, b.start) && !before(b.end, a.start)
            || !before(b.start, a.start) && !before(a.end, b.start)
    } else {
        before(a.start, b.end) && before(b.start, a.end)
    }
}

/// How much text a range spans: lines, then characters on its last line
/// (enough to tell a token from a statement).
fn extent(r: Range) -> (u32, u32) {
    let lines = r.end.line.saturating_sub(r.start.line);
    let chars = if lines == 0 {
        r.end.character.saturating_sub(r.start.character)
    } else {
        r.end.character
    };
    (lines, chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Range {
        Range::new(Position::new(l0, c0), Position::new(l1, c1))
    }

    fn group(code: &str, r: Range, in_context: bool, safe: bool) -> FixGroup {
        FixGroup {
            diagnostic: Diagnostic {
                range: r,
                code: Some(tower_lsp::lsp_types::NumberOrString::String(code.into())),
                ..Default::default()
            },
            fixes: vec![FixData {
                title: format!("fix {code}"),
                safe,
                edits: Vec::new(),
            }],
            in_context,
        }
    }

    fn titles(actions: &[CodeActionOrCommand]) -> Vec<(String, bool)> {
        actions
            .iter()
            .map(|a| match a {
                CodeActionOrCommand::CodeAction(c) => {
                    (c.title.clone(), c.is_preferred == Some(true))
                }
                CodeActionOrCommand::Command(c) => (c.title.clone(), false),
            })
            .collect()
    }

    fn uri() -> Url {
        Url::parse("file:///x.mapper").unwrap()
    }

    /// Issue 39: `Task * GPU` with cannon; E0305 on the whole statement,
    /// E0101 (missing `;`) at its end; eglot asks at `GPU` with both in the
    /// context, E0305 first. The `;` comes first.
    #[test]
    fn the_narrower_diagnostic_under_the_cursor_comes_first() {
        let groups = vec![
            group("E0305", range(0, 0, 0, 10), true, true),
            group("E0101", range(0, 10, 0, 10), true, true),
        ];
        let got = titles(&quick_fix_actions(&uri(), groups, range(0, 7, 0, 10)));
        assert_eq!(
            got,
            [
                ("fix E0101".to_string(), true),
                ("fix E0305".to_string(), true)
            ]
        );
    }

    #[test]
    fn context_diagnostics_come_before_the_rest() {
        let groups = vec![
            group("E0305", range(0, 0, 0, 10), false, true),
            group("E0101", range(0, 10, 0, 10), true, true),
        ];
        let got = titles(&quick_fix_actions(&uri(), groups, range(0, 0, 0, 10)));
        assert_eq!(got[0].0, "fix E0101");
        // Only the context's diagnostic is asked about; the rest follow.
        let groups = vec![
            group("W0306", range(0, 0, 0, 3), true, false),
            group("E0101", range(0, 10, 0, 10), false, true),
        ];
        let got = titles(&quick_fix_actions(&uri(), groups, range(0, 0, 0, 10)));
        assert_eq!(
            got,
            [
                ("fix W0306".to_string(), false),
                ("fix E0101".to_string(), true)
            ]
        );
    }

    #[test]
    fn one_preferred_action_at_most_per_diagnostic() {
        let mut g = group("E0102", range(0, 0, 0, 3), true, true);
        g.fixes.push(FixData {
            title: "another".into(),
            safe: true,
            edits: Vec::new(),
        });
        let got = titles(&quick_fix_actions(&uri(), vec![g], range(0, 0, 0, 0)));
        assert_eq!(got.iter().filter(|(_, p)| *p).count(), 0);
    }

    #[test]
    fn overlap_and_extent() {
        assert!(overlaps(range(0, 0, 0, 10), range(0, 7, 0, 10)));
        assert!(overlaps(range(0, 10, 0, 10), range(0, 7, 0, 10)));
        assert!(!overlaps(range(0, 0, 0, 5), range(0, 7, 0, 10)));
        assert!(!overlaps(range(0, 0, 0, 7), range(0, 7, 0, 10)));
        assert!(extent(range(0, 10, 0, 10)) < extent(range(0, 0, 0, 10)));
        assert!(extent(range(0, 0, 0, 30)) < extent(range(0, 0, 1, 0)));
    }
}
