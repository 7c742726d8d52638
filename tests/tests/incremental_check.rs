//! Incremental analysis equals a full one on the benchmark's generated
//! 5,000-line files (1,500+ diagnostics of every kind, syntax errors
//! included): after each edit of a random sequence, the analysis reused
//! from the previous one (re-parse of the statements the edit touches,
//! each statement's check replayed when what it read is unchanged) has the
//! same tree, tokens, diagnostics with their spans, names, symbol types
//! and return types as `analyze` of the new text.
//!
//! The edits are what typing sends: characters and short words inserted
//! or deleted at random places, newlines, `;`, braces, and a name defined
//! elsewhere in the file pasted in. The corpus files are covered by the
//! property test in `grammar/tests/incremental_equivalence.rs`.
//!
//! These files reach the checker's cap on kept diagnostics, past which it
//! only counts what it finds instead of building it: both analyses are
//! also compared with `check_building_all`, the checker that builds every
//! diagnostic and lets the cap drop them, on these files and on one whose
//! statements alone fill the cap (so that replayed statements are over it).

use mapwright_grammar::check::check_building_all;
use mapwright_grammar::diagnostic::CAPPED_CODE;
use mapwright_grammar::incremental::{
    reanalyze_consuming, reanalyze_remembering, reparse, Reparse,
};
use mapwright_grammar::{analyze, analyze_remembering, parse, Analysis};
use mapwright_tests::generated::{corpus_mappers, generated, keystrokes, Rng};

const EDITS_PER_FILE: usize = 12;

/// One random edit of `text`: an insertion or a deletion at a character
/// boundary.
fn edit(rng: &mut Rng, text: &str) -> String {
    const INSERTS: [&str; 12] = [
        "x", "ab", " 1", "+1", "q;", "_z", "\n", ";", "}", "{", "(", "# ",
    ];
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let mut out = text.to_string();
    if rng.unit() < 0.3 {
        let mut end = (at + 1 + rng.below(3)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.replace_range(at..end, "");
    } else if rng.unit() < 0.1 {
        // A word of the file (likely a defined name) pasted in.
        let from = text[..at].rfind(char::is_whitespace).unwrap_or(0);
        let word: String = text[from..at].trim().chars().take(12).collect();
        out.insert_str(at, &word);
    } else {
        out.insert_str(at, INSERTS[rng.below(INSERTS.len())]);
    }
    out
}

fn differences(inc: &Analysis, full: &Analysis) -> Vec<&'static str> {
    let (a, b) = (&inc.checked, &full.checked);
    let checks = [
        ("tree", inc.parsed.program == full.parsed.program),
        ("tokens", inc.parsed.tokens == full.parsed.tokens),
        ("comments", inc.parsed.comments == full.parsed.comments),
        (
            "syntax diagnostics",
            inc.parsed.diagnostics == full.parsed.diagnostics,
        ),
        ("check diagnostics", a.diagnostics == b.diagnostics),
        ("symbols", a.resolved.symbols == b.resolved.symbols),
        ("references", a.resolved.references == b.resolved.references),
        ("unresolved", a.resolved.unresolved == b.resolved.unresolved),
        ("symbol types", a.symbol_types == b.symbol_types),
        ("return types", a.returns == b.returns),
    ];
    checks
        .into_iter()
        .filter(|(_, same)| !same)
        .map(|(what, _)| what)
        .collect()
}

#[test]
fn incremental_and_full_analysis_agree_on_generated_files() {
    let corpus = corpus_mappers();
    let (mut replayed, mut checked, mut names_reused) = (0, 0, 0);
    for seed in [1u64, 2, 3] {
        let mut text = generated(seed, 5_000, &corpus);
        let mut rng = Rng(seed ^ 0xED17);
        let mut analysis = analyze_remembering(&text);
        for step in 0..EDITS_PER_FILE {
            let next = edit(&mut rng, &text);
            let (inc, how, reuse) =
                reanalyze_remembering(&analysis.parsed, &analysis.checked.memo, &text, &next);
            let full = analyze(&next);
            let differ = differences(&inc, &full);
            assert!(
                differ.is_empty(),
                "seed {seed}, edit {step} ({how:?}, {reuse:?}): {differ:?} differ"
            );
            // The language server's path: the old analysis consumed, the
            // names resolved again only in the re-parsed window.
            let (consumed, how, reuse) = reanalyze_consuming(analysis, &text, &next);
            let differ = differences(&consumed, &full);
            assert!(
                differ.is_empty(),
                "seed {seed}, edit {step} ({how:?}, {reuse:?}): {differ:?} differ after the consuming re-analysis"
            );
            names_reused += reuse.names_reused as usize;
            assert_eq!(
                full.checked.diagnostics,
                check_building_all(&full.parsed, &next).diagnostics,
                "seed {seed}, edit {step}: counting over the cap differs from building"
            );
            assert!(full
                .checked
                .diagnostics
                .iter()
                .any(|d| d.code == CAPPED_CODE));
            replayed += reuse.replayed;
            checked += reuse.checked;
            text = next;
            analysis = consumed;
            drop(inc);
        }
    }
    // Most statements' checks must have been reused, or the test compares
    // a full check with itself; and most edits' names.
    assert!(
        replayed > 10 * checked,
        "{replayed} statements replayed, {checked} checked again"
    );
    assert!(
        names_reused * 2 > 3 * EDITS_PER_FILE,
        "names reused after {names_reused} of {} edits",
        3 * EDITS_PER_FILE
    );
}

/// The keystroke benchmark's own keystrokes (`lsp_bench`, 110 per file),
/// replayed in-process on the three generated files: every re-parse equals
/// a full parse, and it reuses statements on nearly every keystroke even
/// though these files have a syntax mistake about every fourth statement.
/// Prints how many re-parses were full and how many statements were
/// parsed again (the fallback rate of the keystroke runs in README.md's git
/// history).
#[test]
fn bench_keystrokes_reparse_incrementally_on_generated_files() {
    let corpus = corpus_mappers();
    let (mut full_parses, mut total, mut reparsed, mut reused) = (0, 0, 0, 0);
    for seed in [1u64, 2, 3] {
        let mut text = generated(seed, 5_000, &corpus);
        let mut parsed = parse(&text);
        for key in keystrokes(&text.clone(), seed, 110) {
            let mut next = text.clone();
            next.replace_range(key.from..key.to, &key.insert);
            let (inc, how) = reparse(&parsed, &text, &next);
            let full = parse(&next);
            assert!(
                inc.program == full.program
                    && inc.tokens == full.tokens
                    && inc.comments == full.comments
                    && inc.diagnostics == full.diagnostics,
                "seed {seed}, {key:?} ({how:?}): the re-parse differs from a full parse"
            );
            total += 1;
            match how {
                Reparse::Full => full_parses += 1,
                Reparse::Incremental {
                    reparsed_stmts,
                    reused_stmts,
                    ..
                } => {
                    reparsed += reparsed_stmts;
                    reused += reused_stmts;
                }
            }
            text = next;
            parsed = inc;
        }
    }
    println!(
        "{full_parses} of {total} keystrokes parsed the whole file; the others parsed {reparsed} statements again and reused {reused}"
    );
    assert!(
        full_parses * 20 < total && reused > 100 * reparsed,
        "{full_parses} of {total} full parses; {reparsed} statements parsed again, {reused} reused"
    );
}

/// A file whose statements alone raise more diagnostics than the cap keeps
/// (1,100 `print`s with a missing argument, then a generated file): every
/// statement after the cap is reached is replayed over it, and its
/// diagnostics are only counted, at their moved spans. After each random
/// edit the incremental check equals the check that builds every
/// diagnostic.
#[test]
fn replays_over_the_cap_count_what_building_would_drop() {
    let corpus = corpus_mappers();
    let mut text = "print(\"{} {}\", 1);\n".repeat(1_100) + &generated(4, 5_000, &corpus);
    let mut rng = Rng(0xCA9);
    let mut analysis = analyze_remembering(&text);
    // The whole-file passes' warnings (unused names, shadowed rules) are
    // all over the cap: the statements filled it.
    let kept = &analysis.checked.diagnostics;
    assert!(
        !kept
            .iter()
            .any(|d| ["W0213", "W0214", "W0218", "W0217"].contains(&d.code)),
        "the statements do not fill the cap"
    );
    let mut replayed = 0;
    for step in 0..8 {
        let next = edit(&mut rng, &text);
        let (inc, how, reuse) =
            reanalyze_remembering(&analysis.parsed, &analysis.checked.memo, &text, &next);
        let reference = check_building_all(&parse(&next), &next);
        assert!(
            inc.checked.diagnostics == reference.diagnostics,
            "edit {step} ({how:?}, {reuse:?}): counting over the cap differs from building"
        );
        replayed += reuse.replayed;
        text = next;
        analysis = inc;
    }
    assert!(replayed > 1_000, "{replayed} statements replayed");
}

/// Only the undefined names the cap keeps are asked for a suggestion
/// (asking all of them over every name was quadratic): the cap falling in
/// the middle of them, and edits that move it, give what building every
/// diagnostic gives, suggestions included.
#[test]
fn undefined_names_past_the_cap_are_not_asked_and_change_nothing() {
    let mut text = "print(\"{} {}\", 1);\n".repeat(900);
    for i in 0..300 {
        text += &format!("y{i} = q{i} + w{i};\nq{i}x = 1;\n");
    }
    let mut rng = Rng(0x5EED);
    let mut analysis = analyze_remembering(&text);
    let reference = check_building_all(&parse(&text), &text);
    assert!(analysis.checked.diagnostics == reference.diagnostics);
    let suggested = reference
        .diagnostics
        .iter()
        .filter(|d| d.code == "E0201" && !d.fixes.is_empty())
        .count();
    assert!(
        suggested > 50,
        "{suggested} undefined names with a suggestion kept"
    );
    for step in 0..6 {
        let next = edit(&mut rng, &text);
        let (inc, how, _) =
            reanalyze_remembering(&analysis.parsed, &analysis.checked.memo, &text, &next);
        let reference = check_building_all(&parse(&next), &next);
        assert!(
            inc.checked.diagnostics == reference.diagnostics,
            "edit {step} ({how:?}): the suggestions differ from building every diagnostic"
        );
        text = next;
        analysis = inc;
    }
}
