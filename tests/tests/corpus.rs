//! Every file of the shared corpus gets the reference parser's verdict.
//!
//! Reads `../shared/corpus/{public,probes}/EXPECT` (`NAME accept` or
//! `NAME reject LINE`), so files dropped into those folders are covered
//! without touching this test. A rejection's first error must be on LINE, or,
//! for a missing `;`, at the end of the statement before the token on LINE
//! (the reference reports the line of the next token).

use std::path::{Path, PathBuf};

use mapwright_grammar::token::lex;
use mapwright_grammar::{parse, LineIndex};

fn corpus_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(name)
}

/// The 1-based line the reference would report for a diagnostic at `offset`
/// about a missing `;`: the line of the next token, or last line + 1 at EOF.
fn next_token_line(source: &str, offset: usize) -> usize {
    let idx = LineIndex::new(source);
    match lex(source).tokens.iter().find(|t| t.span.start() >= offset) {
        Some(t) => idx.line_of(t.span.start()) + 1,
        None => source.matches('\n').count() + 1,
    }
}

fn check_folder(name: &str) -> (usize, Vec<String>) {
    let dir = corpus_dir(name);
    let expect = std::fs::read_to_string(dir.join("EXPECT"))
        .unwrap_or_else(|e| panic!("cannot read {}/EXPECT: {e}", dir.display()));
    let mut failures = Vec::new();
    let mut listed = std::collections::BTreeSet::new();
    let mut count = 0;
    for line in expect.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let file = fields[0];
        listed.insert(file.to_string());
        let bytes = std::fs::read(dir.join(file)).unwrap_or_default();
        let source = String::from_utf8_lossy(&bytes).into_owned();
        let parsed = parse(&source);
        count += 1;
        let first_error = parsed.diagnostics.iter().find(|d| d.is_error());
        match (fields.get(1).copied(), first_error) {
            (Some("accept"), None) => {}
            (Some("accept"), Some(d)) => failures.push(format!(
                "{name}/{file}: expected accept, got {} `{}` at line {}",
                d.code,
                d.message,
                LineIndex::new(&source).line_of(d.span.start()) + 1
            )),
            (Some("reject"), None) => {
                failures.push(format!("{name}/{file}: expected reject, got accept"))
            }
            (Some("reject"), Some(d)) => {
                let want: usize = fields.get(2).and_then(|l| l.parse().ok()).unwrap_or(0);
                let got = LineIndex::new(&source).line_of(d.span.start()) + 1;
                let reference_line = if d.code == "E0101" {
                    next_token_line(&source, d.span.start())
                } else {
                    got
                };
                if got != want && reference_line != want {
                    failures.push(format!(
                        "{name}/{file}: expected first error on line {want}, got {} `{}` on line {got}",
                        d.code, d.message
                    ));
                }
            }
            (other, _) => failures.push(format!("{name}/{file}: bad EXPECT entry {other:?}")),
        }
    }
    for entry in std::fs::read_dir(&dir).expect("corpus folder").flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if file.ends_with(".mapper") && !listed.contains(&file) {
            failures.push(format!("{name}/{file}: not listed in EXPECT"));
        }
    }
    (count, failures)
}

#[test]
fn public_corpus_matches_reference_verdicts() {
    let (count, failures) = check_folder("public");
    assert!(
        count > 100,
        "expected the public corpus, found {count} files"
    );
    assert!(
        failures.is_empty(),
        "{} of {count} files disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn probe_corpus_matches_reference_verdicts() {
    let (count, failures) = check_folder("probes");
    assert!(count > 50, "expected the probes, found {count} files");
    assert!(
        failures.is_empty(),
        "{} of {count} files disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
