//! Equivalence of incremental and full analysis: after random edit sequences
//! on corpus files (public and probes), the incremental re-parse gives the
//! same tree (spans included), tokens, comments and diagnostics as a full
//! parse, and checking it gives the same diagnostics and names.
//!
//! The edits are what an editor sends while someone types: single
//! characters (letters, digits, punctuation, `#`, newlines), deletions,
//! whole statements and pasted pieces of the file itself. The test also
//! counts the edits that took the incremental path, and fails if fewer
//! than a third did (the property would then compare a full parse with
//! itself; 1,230 of 1,247 did in one run of the 192 cases).
//!
//! The same edit sequences drive incremental checking (each statement's
//! check reused from the previous analysis when what it read is unchanged,
//! see `check::memo`): the result must equal a full check, diagnostics with
//! their spans, names, symbol types and return types. The generated
//! 5,000-line files of the benchmark are covered by
//! `tests/tests/incremental_check.rs` in the `mapwright-tests` crate.

use std::cell::Cell;
use std::path::Path;

use mapwright_grammar::check::{check, Checked, Reuse};
use mapwright_grammar::incremental::{
    reanalyze_consuming, reanalyze_remembering, reparse, reparse_owned, Reparse,
};
use mapwright_grammar::token::TokenKind;
use mapwright_grammar::{analyze, analyze_remembering, parse, Parsed};
use proptest::prelude::*;

fn corpus_files() -> Vec<String> {
    let mut out = Vec::new();
    for folder in ["public", "probes"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/corpus")
            .join(folder);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        for path in names {
            if path.extension().is_some_and(|e| e == "mapper") {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    out
}

const INSERTS: &[&str] = &[
    "a",
    "x",
    "_",
    "1",
    "0",
    " ",
    "\n",
    // (Lone `\r` and `\r\n` are line breaks too: the line starts are
    // spliced across them.)
    "\r",
    "\r\n",
    ";",
    "}",
    "{",
    "(",
    ")",
    ",",
    "#",
    "*",
    "+",
    "=",
    ".",
    "\"",
    "GPU",
    "Task",
    "def",
    "return ",
    "Task * GPU;\n",
    "m = Machine(CPU);\n",
    "def g(Task t) {\n  return 1;\n}\n",
    "IndexTaskMap t g;\n",
    "é",
];

/// One edit: where (a fraction of the text), how much to delete, what to
/// insert (a fixed fragment or a piece of the text itself).
#[derive(Debug, Clone)]
struct Edit {
    at: f64,
    delete: usize,
    insert: Insert,
}

#[derive(Debug, Clone)]
enum Insert {
    Fragment(usize),
    Paste { from: f64, len: usize },
}

fn edit() -> impl Strategy<Value = Edit> {
    let insert = prop_oneof![
        4 => (0..INSERTS.len()).prop_map(Insert::Fragment),
        1 => (0.0..1.0f64, 0usize..60).prop_map(|(from, len)| Insert::Paste { from, len }),
    ];
    let delete = prop_oneof![3 => Just(0usize), 2 => 1usize..3, 1 => 3usize..40];
    (0.0..1.0f64, delete, insert).prop_map(|(at, delete, insert)| Edit { at, delete, insert })
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &str, e: &Edit) -> String {
    let at = floor_boundary(text, (e.at * text.len() as f64) as usize);
    let end = floor_boundary(text, at + e.delete);
    let inserted = match e.insert {
        Insert::Fragment(i) => INSERTS[i].to_string(),
        Insert::Paste { from, len } => {
            let a = floor_boundary(text, (from * text.len() as f64) as usize);
            text[a..floor_boundary(text, a + len)].to_string()
        }
    };
    format!("{}{}{}", &text[..at], inserted, &text[end..])
}

fn same_parse(inc: &Parsed, full: &Parsed) -> Result<(), String> {
    if inc.program != full.program {
        return Err("trees differ".into());
    }
    if inc.tokens != full.tokens || inc.comments != full.comments {
        return Err("tokens or comments differ".into());
    }
    if inc.diagnostics != full.diagnostics {
        return Err("diagnostics differ".into());
    }
    Ok(())
}

fn same_check(inc: &Parsed, full: &Parsed, source: &str) -> Result<(), String> {
    same_checked(&check(inc, source), &check(full, source))
}

/// Everything a check gives (diagnostics with spans, names, types), equal.
fn same_checked(a: &Checked, b: &Checked) -> Result<(), String> {
    if a.diagnostics != b.diagnostics {
        return Err("check diagnostics differ".into());
    }
    if a.resolved.symbols != b.resolved.symbols
        || a.resolved.references != b.resolved.references
        || a.resolved.unresolved != b.resolved.unresolved
    {
        return Err("names differ".into());
    }
    if a.symbol_types != b.symbol_types || a.returns != b.returns {
        return Err("types differ".into());
    }
    // (Spliced after an incremental re-parse, scanned after a full one.)
    if a.lines != b.lines {
        return Err("line starts differ".into());
    }
    Ok(())
}

/// A copy of `parsed` whose statements are its own (not shared `Arc`s), as
/// the language server hands its old parse to [`reparse_owned`].
fn deep_copy(parsed: &Parsed) -> Parsed {
    let mut copy = parsed.clone();
    for s in &mut copy.program.stmts {
        *s = std::sync::Arc::new(mapwright_grammar::ast::Stmt::clone(s));
    }
    copy
}

/// Applies `edits` to `text` one by one, each analysed incrementally from
/// the previous analysis (re-parse and memoised check) and in full: the
/// two must agree after every edit.
fn analyses_agree(mut text: String, edits: &[Edit]) -> Result<(), TestCaseError> {
    let mut analysis = analyze_remembering(&text);
    for e in edits {
        let next = apply(&text, e);
        let (owned, _, _) = reparse_owned(deep_copy(&analysis.parsed), &text, &next);
        if let Err(why) = same_parse(&owned, &parse(&next)) {
            return Err(TestCaseError::fail(format!(
                "consuming re-parse: {why} after {e:?}\n--- before\n{text}\n--- after\n{next}"
            )));
        }
        let (inc, how, reuse) =
            reanalyze_remembering(&analysis.parsed, &analysis.checked.memo, &text, &next);
        let full = analyze(&next);
        let same = same_parse(&inc.parsed, &full.parsed)
            .and_then(|_| same_checked(&inc.checked, &full.checked));
        if let Err(why) = same {
            return Err(TestCaseError::fail(format!(
                "{why} after {e:?} ({how:?}, {reuse:?})\n--- before\n{text}\n--- after\n{next}"
            )));
        }
        // The language server's path: the old analysis consumed, names
        // resolved again only in the re-parsed window.
        let old = mapwright_grammar::Analysis {
            parsed: deep_copy(&analysis.parsed),
            checked: analysis.checked.clone(),
        };
        let (consumed, how, reuse) = reanalyze_consuming(old, &text, &next);
        let same = same_parse(&consumed.parsed, &full.parsed)
            .and_then(|_| same_checked(&consumed.checked, &full.checked));
        if let Err(why) = same {
            return Err(TestCaseError::fail(format!(
                "consuming re-analysis: {why} after {e:?} ({how:?}, {reuse:?})\n--- before\n{text}\n--- after\n{next}"
            )));
        }
        text = next;
        analysis = consumed;
    }
    Ok(())
}

/// Random edit sequences on random corpus files: after each edit the
/// re-parse (borrowing and consuming) equals a full parse, and checking it
/// equals checking the full parse. Run through proptest's runner (cases
/// and failure seeds as the `proptest!` tests here) so that, after all
/// cases, it can also fail when too few edits took the incremental path:
/// then the property would compare a full parse with itself.
#[test]
fn incremental_and_full_analysis_agree() {
    let files = corpus_files();
    assert!(!files.is_empty(), "no corpus files found");
    let (incremental, total) = (Cell::new(0usize), Cell::new(0usize));
    // (Contextualized as `proptest!` does: PROPTEST_CASES and the other
    // variables still apply.)
    let config = proptest::test_runner::contextualize_config(ProptestConfig {
        cases: 192,
        source_file: Some(file!()),
        ..ProptestConfig::default()
    });
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let cases = (
        any::<prop::sample::Index>(),
        prop::collection::vec(edit(), 1..12),
    );
    let outcome = runner.run(&cases, |(file, edits)| {
        let mut text = files[file.index(files.len())].clone();
        let mut parsed = parse(&text);
        for e in &edits {
            let next = apply(&text, e);
            let (inc, how) = reparse(&parsed, &text, &next);
            total.set(total.get() + 1);
            if matches!(how, Reparse::Incremental { .. }) {
                incremental.set(incremental.get() + 1);
            }
            let full = parse(&next);
            // The consuming re-parse, given a parse that alone holds its
            // statements (so they are shifted in place), makes the same.
            let (owned, _, _) = reparse_owned(deep_copy(&parsed), &text, &next);
            if let Err(why) = same_parse(&owned, &full) {
                return Err(TestCaseError::fail(format!(
                    "consuming re-parse: {why} after {e:?}"
                )));
            }
            if let Err(why) = same_parse(&inc, &full).and_then(|_| same_check(&inc, &full, &next)) {
                return Err(TestCaseError::fail(format!(
                    "{why} after {e:?} ({how:?})\n--- before\n{text}\n--- after\n{next}"
                )));
            }
            text = next;
            parsed = inc;
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    eprintln!(
        "{} of {} edits took the incremental path",
        incremental.get(),
        total.get()
    );
    assert!(
        incremental.get() * 3 > total.get(),
        "only {} of {} edits took the incremental path",
        incremental.get(),
        total.get()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn incremental_and_full_checking_agree(
        file in any::<prop::sample::Index>(),
        edits in prop::collection::vec(edit(), 1..12),
    ) {
        let files = corpus_files();
        prop_assume!(!files.is_empty());
        analyses_agree(files[file.index(files.len())].clone(), &edits)?;
    }
}

/// Syntax mistakes put into a file before the random edits, so that the
/// re-parse has to reuse statements next to old syntax diagnostics: stray
/// tokens, a missing `;`, an unclosed `{` and `(`, a bad character, an
/// unterminated string, a Python-style `def`, a keyword used as a name
/// (its fix renames every occurrence in the file) and a legacy three-field
/// task map (its fix depends on whether the wrapper is defined anywhere).
const MISTAKES: &[&str] = &[
    ")",
    "Task Task;\n",
    "Region * r GPU FBMEM\n",
    "def f(Task t) {\n  return 1;\n",
    "x = (1 + ;\n",
    "@",
    "\"abc",
    "def h(Task t):\n  return 1\n",
    "size = 3;\n",
    "IndexTaskMap t m g;\n",
    "def g_m(",
    "}",
    "Layout * * * SOA Bogus;\n",
];

fn mistake() -> impl Strategy<Value = (f64, usize)> {
    (0.0..1.0f64, 0..MISTAKES.len())
}

/// `text` with `mistakes` inserted at line starts (fractions of the text).
fn with_mistakes(text: &str, mistakes: &[(f64, usize)]) -> String {
    let mut text = text.to_string();
    for &(at, which) in mistakes {
        let at = floor_boundary(&text, (at * text.len() as f64) as usize);
        let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
        text.insert_str(line, MISTAKES[which]);
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The same property on corpus files with syntax mistakes put in first.
    #[test]
    fn incremental_and_full_analysis_agree_near_syntax_errors(
        file in any::<prop::sample::Index>(),
        mistakes in prop::collection::vec(mistake(), 1..6),
        edits in prop::collection::vec(edit(), 1..12),
    ) {
        let files = corpus_files();
        prop_assume!(!files.is_empty());
        analyses_agree(with_mistakes(&files[file.index(files.len())], &mistakes), &edits)?;
    }
}

/// The property above only means something if edits next to syntax errors
/// reuse statements: most of them must.
#[test]
fn edits_near_syntax_errors_reuse_statements() {
    let files = corpus_files();
    assert!(!files.is_empty(), "no corpus files found");
    let (mut reused, mut total) = (0, 0);
    for (n, text) in files.iter().enumerate() {
        let text = with_mistakes(
            text,
            &[(0.3, n % MISTAKES.len()), (0.7, (n + 5) % MISTAKES.len())],
        );
        let parsed = parse(&text);
        if parsed.program.stmts.len() < 6 {
            continue;
        }
        let step = (parsed.tokens.len() / 20).max(1);
        for t in parsed.tokens.iter().step_by(step) {
            let next = format!("{}z{}", &text[..t.span.end()], &text[t.span.end()..]);
            let (inc, how) = reparse(&parsed, &text, &next);
            assert!(same_parse(&inc, &parse(&next)).is_ok(), "{how:?}\n{next}");
            total += 1;
            reused += matches!(how, Reparse::Incremental { reused_stmts, .. } if reused_stmts > 0)
                as usize;
        }
    }
    assert!(
        total > 100 && reused * 10 > total * 8,
        "{reused} of {total} edits reused statements"
    );
}

/// Incremental checking only means something if statements are reused:
/// typing into names of corpus files must replay most statements' checks.
#[test]
fn typing_replays_most_statements_checks() {
    let (mut replayed, mut checked) = (0, 0);
    let (mut typed, mut names_reused) = (0, 0);
    // (Of the language server's way, which consumes the old analysis.)
    let (mut trusted, mut consumed_replays) = (0, 0);
    for text in corpus_files() {
        let analysis = analyze_remembering(&text);
        let step = (analysis.parsed.tokens.len() / 10).max(1);
        for t in analysis.parsed.tokens.iter().step_by(step) {
            if t.kind == TokenKind::Ident {
                let next = format!("{}z{}", &text[..t.span.end()], &text[t.span.end()..]);
                let (inc, _, reuse) =
                    reanalyze_remembering(&analysis.parsed, &analysis.checked.memo, &text, &next);
                let full = analyze(&next);
                assert!(same_checked(&inc.checked, &full.checked).is_ok());
                replayed += reuse.replayed;
                checked += reuse.checked;
                let old = mapwright_grammar::Analysis {
                    parsed: deep_copy(&analysis.parsed),
                    checked: analysis.checked.clone(),
                };
                let (consumed, _, reuse) = reanalyze_consuming(old, &text, &next);
                assert!(
                    same_checked(&consumed.checked, &full.checked).is_ok(),
                    "{next}"
                );
                typed += 1;
                names_reused += reuse.names_reused as usize;
                trusted += reuse.trusted;
                consumed_replays += reuse.replayed;
            }
        }
    }
    assert!(
        replayed > 4 * checked,
        "{replayed} statements replayed, {checked} checked again"
    );
    // A name typed into is a use far more often than a definition: the
    // names must mostly be resolved again in the window only.
    assert!(
        names_reused * 2 > typed,
        "names reused on {names_reused} of {typed} edits"
    );
    // Most statements the edit cannot reach are replayed without their
    // reads checked (in this unoptimised build they are checked all the
    // same, and must hold: see `Checker::replay`).
    assert!(
        trusted * 2 > consumed_replays,
        "{trusted} of {consumed_replays} replayed records trusted"
    );
}

/// The property above only means something if edits take the incremental
/// path: typing inside statements of a clean corpus file mostly should.
#[test]
fn typing_inside_statements_takes_the_incremental_path() {
    let files = corpus_files();
    assert!(!files.is_empty(), "no corpus files found");
    let (mut incremental, mut total) = (0, 0);
    for text in &files {
        let parsed = parse(text);
        // By design a syntax error nearby forces a full parse, and so does
        // an edit in a file too short to have statements on both sides.
        if !parsed.diagnostics.is_empty() || parsed.program.stmts.len() < 3 {
            continue;
        }
        // Extend names across the file (`foo` -> `fooz`), as typing does.
        let step = (parsed.tokens.len() / 20).max(1);
        for t in parsed.tokens.iter().step_by(step) {
            if t.kind == TokenKind::Ident {
                let next = format!("{}z{}", &text[..t.span.end()], &text[t.span.end()..]);
                let (inc, how) = reparse(&parsed, text, &next);
                assert!(same_parse(&inc, &parse(&next)).is_ok());
                total += 1;
                incremental += matches!(how, Reparse::Incremental { .. }) as usize;
            }
        }
    }
    assert!(
        total > 100 && incremental * 10 > total * 9,
        "{incremental} of {total} edits were incremental"
    );
}

/// `after` analysed from `before`'s analysis both ways, borrowing it and
/// consuming it: each must equal a full analysis. How the re-parse went,
/// and what each way reused.
fn both_ways_equal_a_full_analysis(before: &str, after: &str) -> (Reparse, Reuse, Reuse) {
    let full = analyze(after);
    let old = analyze_remembering(before);
    let (inc, how, reuse) = reanalyze_remembering(&old.parsed, &old.checked.memo, before, after);
    assert_eq!(
        same_checked(&inc.checked, &full.checked),
        Ok(()),
        "{after:?}"
    );
    let (consumed, _, consumed_reuse) = reanalyze_consuming(old, before, after);
    assert_eq!(
        same_checked(&consumed.checked, &full.checked),
        Ok(()),
        "{after:?}"
    );
    (how, reuse, consumed_reuse)
}

/// A statement re-parsed with the same text but a different tree: the
/// Python-style `def h` ends its body at the next line's indentation, and
/// whether `return 1` is a statement depends on the `}` typed after it. Its
/// old check (return type int) must not be replayed.
#[test]
fn same_text_with_another_tree_is_checked_again() {
    let before = "GPUyout * * * SOA Bogus;\ndef h(Task t):\n  return 1\ndef f(Task taska):\nTask Task;\n    return 0;\n";
    let after = before.replacen("return 1", "return 1}", 1);
    let (how, _, _) = both_ways_equal_a_full_analysis(before, &after);
    assert!(matches!(how, Reparse::Incremental { .. }), "{how:?}");
}

/// A statement the re-parse kept (with a syntax error) must replay its own
/// record, not another statement's of the same text: the two Python-style
/// `def h` read alike, but a `}` breaks the first one's body.
#[test]
fn a_kept_statement_replays_only_its_own_record() {
    let before = "def h(Task t):\n  y = 1\n  z = 2}\nx = 1;\nTask * GPU;\ndef h(Task t):\n  y = 1\n  z = 2\nTask * GPU;\n";
    let after = before.replacen("x = 1;", "Task * CPU;", 1);
    both_ways_equal_a_full_analysis(before, &after);
}

/// The shadowed-rule findings are reused after an edit that touches no
/// rule statement, moved with the text, and found again after one that
/// edits a rule, even one that keeps the number of rules.
#[test]
fn shadowed_rules_are_reused_only_while_no_rule_is_edited() {
    let before = "Task * GPU;\nx = 1;\nw = 2;\nTask * GPU;\nLayout * * * SOA;\ny = x;\nv = y;\nu = v;\nt = u;\ns = t;\nLayout * * * SOA;\nTask foo CPU;\nTask foo CPU;\n";
    let edits = [
        // Not a rule (nor the statement after it, which the re-parse may
        // take in too): reused, the rules after it moved.
        (before.replacen("x = 1;", "x = 12345;", 1), true),
        (before.replacen("u = v;\n", "", 1), true),
        // A rule's task renamed: as many rules, but not the same ones.
        (
            before.replacen(
                "Task foo CPU;\nTask foo CPU;",
                "Task foo CPU;\nTask bar CPU;",
                1,
            ),
            false,
        ),
        // A rule typed, one removed.
        (before.replacen("x = 1;", "x = 1; Task * GPU;", 1), false),
        (before.replacen("Task * GPU;\n", "", 1), false),
    ];
    for (after, reused) in edits {
        let (how, reuse, consumed_reuse) = both_ways_equal_a_full_analysis(before, &after);
        assert_eq!(reuse.shadowed_reused, reused, "{after:?} {how:?}");
        assert_eq!(consumed_reuse.shadowed_reused, reused, "{after:?} {how:?}");
        assert!(analyze(&after)
            .checked
            .diagnostics
            .iter()
            .any(|d| d.code == "W0218"));
    }
}

/// A mapping statement naming an undefined function suggests the nearest
/// function name. Replaying it asks again only when the file's function
/// names changed (see `check::memo::function_names`): a rename, and a
/// rename back, must change the suggestion as a full check does, while an
/// edit elsewhere replays it.
#[test]
fn the_nearest_function_follows_renames() {
    let text = |def: &str, x: &str| {
        format!(
            "m = Machine(GPU);\ndef {def}(Task task) {{\n  return m[0];\n}}\nIndexTaskMap work pick_onx;\nx = {x};\n"
        )
    };
    let suggestion = |source: &str| {
        analyze(source)
            .checked
            .diagnostics
            .iter()
            .find(|d| d.code == "E0202")
            .and_then(|d| d.fixes.first().map(|f| f.title.clone()))
    };
    let first = text("pick_one", "1");
    assert_eq!(suggestion(&first).as_deref(), Some("use `pick_one`"));
    // An edit elsewhere: the mapping statement is replayed.
    let (_, reuse, _) = both_ways_equal_a_full_analysis(&first, &text("pick_one", "2"));
    assert!(reuse.replayed > 0, "{reuse:?}");
    // Renamed, and renamed back, one edit after the other.
    let steps = [
        text("pick_onz", "1"),
        text("pick_onz", "2"),
        text("pick_one", "2"),
        text("far_away_name", "2"),
    ];
    let mut before = first.clone();
    let mut old = analyze_remembering(&first);
    for after in steps {
        let (inc, _, _) = reanalyze_remembering(&old.parsed, &old.checked.memo, &before, &after);
        assert_eq!(
            same_checked(&inc.checked, &analyze(&after).checked),
            Ok(()),
            "{after:?}"
        );
        both_ways_equal_a_full_analysis(&before, &after);
        old = inc;
        before = after;
    }
    assert_eq!(
        suggestion(&text("pick_onz", "1")).as_deref(),
        Some("use `pick_onz`")
    );
    assert_eq!(suggestion(&text("far_away_name", "1")), None);
}

/// The whole-file passes' diagnostics (unused and undefined names,
/// shadowed rules) are taken over from the last check where the edit left
/// what they are made of alone, and built again where it did not: a new
/// line before the winning rule (its line number is in the message), an
/// edit on the shadowed rule's line (its fix removes the line), a function
/// header deleted (its local becomes a global: "variable", not "local
/// variable"), a name defined that an undefined one is now nearest to (its
/// fix).
#[test]
fn the_passes_diagnostics_are_taken_over_only_where_the_edit_left_them() {
    let before = "x = 1;\n# c d\nTask * GPU;\ndef f(Task t) {\n  y = 2;\n  return 3;\n}\nw = 4;\nTask * GPU;\nv = 5;\nu = qwertz;\n";
    let carried = |after: &str| {
        let (_, _, consumed) = both_ways_equal_a_full_analysis(before, after);
        consumed.carried
    };
    // x, y, f, w, v and u unused, `qwertz` undefined, the second
    // `Task * GPU;` shadowed: all eight taken over after a keystroke in a
    // number.
    assert_eq!(carried(&before.replacen("w = 4;", "w = 45;", 1)), 8);
    // A line added before the winning rule: its line number changed.
    let pushed = carried(&before.replacen("# c d", "# c\n# d", 1));
    assert_eq!(pushed, 7, "the shadowed rule's message names a new line");
    // The shadowed rule's line edited: built again (and so is `v`'s, the
    // statement re-parsed with it).
    let edited = carried(&before.replacen("Task * GPU;\nv", "Task * GPU; \nv", 1));
    assert!(edited < 8, "{edited}");
    // The header deleted: `y` is a global now.
    let headless = before.replacen("def f(Task t) {\n", "", 1);
    let full = analyze(&headless).checked.diagnostics;
    assert!(
        full.iter().any(|d| d.message == "unused variable `y`"),
        "{full:?}"
    );
    assert!(carried(&headless) > 0, "an incremental re-parse");
    // A name near `qwertz` defined: the undefined name's fix is new.
    let nearer = before.replacen("w = 4;", "qwerty = 4;", 1);
    let full = analyze(&nearer).checked.diagnostics;
    assert!(full
        .iter()
        .any(|d| d.fixes.iter().any(|f| f.title == "use `qwerty`")));
    carried(&nearer);
}
