//! Making a mapper that does not compile compile: the loop's first
//! candidates when the user's mapper fails to compile, whatever the
//! proposer.
//!
//! The checker's own fixes come first (safe ones, then likely ones: the
//! nearest name, a statement moved), one error at a time; an error with no
//! fix (`ControlReplicate *;`: E0100, `*` is not supported there) has its
//! statement dropped. Each step is said in words, so the report tells what
//! was changed. Proposers then build on the repaired text.

use mapwright_grammar::analyze;
use mapwright_grammar::diagnostic::{apply_edits, Applicability, TextEdit};

use crate::autoguide::edits::whole_line;

/// The most repair steps tried on one text.
const MAX_STEPS: usize = 20;

/// A text that compiles, reached from `source` by the checker's fixes and by
/// dropping statements that have none, with what was done; `None` when
/// `source` already compiles or no such text was reached.
pub fn make_compile(
    source: &str,
    compiles: &dyn Fn(&str) -> bool,
) -> Option<(String, Vec<String>)> {
    if compiles(source) {
        return None;
    }
    let mut text = source.to_string();
    let mut steps = Vec::new();
    for _ in 0..MAX_STEPS {
        let analysis = analyze(&text);
        let diagnostics = analysis.diagnostics();
        let Some(error) = diagnostics.iter().find(|d| d.is_error()) else {
            break;
        };
        let fix = [Applicability::Safe, Applicability::Likely]
            .iter()
            .find_map(|a| error.fixes.iter().find(|f| f.applicability == *a));
        let next = fix
            .and_then(|f| {
                let next = apply_edits(&text, &f.edits)?;
                Some((
                    next,
                    format!("{} ({}: {})", f.title, error.code, error.message),
                ))
            })
            .filter(|(next, _)| *next != text)
            .or_else(|| {
                // No fix: drop the statement the error is in.
                let stmt = analysis
                    .parsed
                    .program
                    .stmts
                    .iter()
                    .find(|s| {
                        s.span.start() <= error.span.start() && error.span.end() <= s.span.end()
                    })
                    .map(|s| s.span)
                    .unwrap_or(error.span);
                let span = whole_line(&text, stmt);
                let dropped = text[stmt.start()..stmt.end()].trim().to_string();
                let next = apply_edits(
                    &text,
                    &[TextEdit {
                        span,
                        text: String::new(),
                    }],
                )?;
                Some((
                    next,
                    format!("dropped `{dropped}` ({}: {})", error.code, error.message),
                ))
            })
            .filter(|(next, _)| *next != text);
        let Some((next, step)) = next else {
            break;
        };
        text = next;
        steps.push(step);
        if compiles(&text) {
            return Some((text, steps));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(text: &str) -> bool {
        !analyze(text).diagnostics().iter().any(|d| d.is_error())
    }

    #[test]
    fn an_error_without_a_fix_has_its_statement_dropped() {
        let (text, steps) =
            make_compile("ControlReplicate *;\nTask * GPU,CPU;\n", &clean).expect("a repair");
        assert_eq!(text, "Task * GPU,CPU;\n");
        assert_eq!(steps.len(), 1);
        assert!(
            steps[0].starts_with("dropped `ControlReplicate *;` (E0100"),
            "{steps:?}"
        );
    }

    #[test]
    fn the_checkers_fix_comes_first() {
        let (text, steps) = make_compile("Task * GPU,CPU\n", &clean).expect("a repair");
        assert_eq!(text.trim(), "Task * GPU,CPU;");
        assert!(!steps[0].starts_with("dropped"), "{steps:?}");
    }

    #[test]
    fn a_mapper_that_compiles_needs_none() {
        assert!(make_compile("Task * GPU;\n", &clean).is_none());
    }
}
