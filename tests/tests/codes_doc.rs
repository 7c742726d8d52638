//! `docs/codes.md` cannot rot: it has one section per diagnostic code of
//! the codes tables (grammar and mapping resolution), in table order, with
//! the table's summary; each section's example really produces its code,
//! the fixed example (where there is one) no longer does, and the quick
//! fix the section names is the example's, as safe as the page says.
//!
//! Section format (what the language server's `codeDescription` links to by
//! the heading's anchor, `#e0201`):
//!
//! ````text
//! ## E0201
//!
//! undefined name                      <- the table's summary, verbatim
//!
//! ```mapper                           <- the example (attributes: app=NAME
//! ...                                    machine=PRESET without=KIND for
//! ```                                    resolution codes; repeat=N for the
//!                                        text N times over)
//!
//! ... message and explanation ...
//!
//! Fix (quick fix, HOW): TITLE ...     <- optional: the example's fix, HOW
//!                                        its applicability (`how_safe`)
//!
//! ```mapper fixed                     <- optional: the example after the fix
//! ...
//! ```
//! ````

use std::path::Path;

use mapwright_grammar::diagnostic::Applicability;
use mapwright_grammar::{analyze, codes, Diagnostic};
use mapwright_runtime::app::App;
use mapwright_runtime::machine::{Machine, ProcKind};
use mapwright_runtime::resolve_mapping::{self, resolve_mapping};

/// One fenced `mapper` block: its attributes and text.
struct Block {
    attrs: Vec<(String, String)>,
    fixed: bool,
    text: String,
}

struct Section {
    code: String,
    summary: String,
    blocks: Vec<Block>,
    /// From the line `Fix (quick fix, HOW): TEXT`: HOW and TEXT.
    quick_fix: Option<(String, String)>,
}

fn page() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/codes.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sections(page: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if let Some(code) = line.strip_prefix("## ") {
            out.push(Section {
                code: code.trim().to_string(),
                summary: String::new(),
                blocks: Vec::new(),
                quick_fix: None,
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            continue;
        };
        if let Some(info) = line.strip_prefix("```mapper") {
            let mut text = String::new();
            for l in lines.by_ref() {
                if l == "```" {
                    break;
                }
                text.push_str(l);
                text.push('\n');
            }
            let words: Vec<&str> = info.split_whitespace().collect();
            // `repeat=N`: codes that only a long file raises (I0001) are
            // shown as one line and checked as N of them.
            let times = words
                .iter()
                .find_map(|w| w.strip_prefix("repeat="))
                .map_or(1, |n| n.parse().expect("repeat=N takes a number"));
            let text = text.repeat(times);
            section.blocks.push(Block {
                fixed: words.contains(&"fixed"),
                attrs: words
                    .iter()
                    .filter_map(|w| w.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                text,
            });
        } else if let Some((how, text)) = line
            .strip_prefix("Fix (quick fix, ")
            .and_then(|rest| rest.split_once("): "))
        {
            section.quick_fix = Some((how.to_string(), text.to_string()));
        } else if section.summary.is_empty() && !line.trim().is_empty() {
            section.summary = line.trim().to_string();
        }
    }
    out
}

fn all_codes() -> Vec<&'static codes::CodeInfo> {
    codes::CODES
        .iter()
        .chain(resolve_mapping::CODES.iter())
        .collect()
}

/// The diagnostics `text` gets: the front end's, plus resolution's when
/// an application and machine are named.
fn diagnostics_of(text: &str, attrs: &[(String, String)]) -> Vec<Diagnostic> {
    let attr = |k: &str| attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
    let analysis = analyze(text);
    let mut out: Vec<Diagnostic> = analysis.diagnostics();
    if let Some(app) = attr("app") {
        let app = App::builtin(app).unwrap_or_else(|| panic!("no built-in app {app}"));
        let name = attr("machine").unwrap_or("p100x4");
        let mut machine = Machine::preset(name).unwrap_or_else(|| panic!("no preset {name}"));
        if attr("without") == Some("OMP") {
            machine.node.processors.retain(|p| p.kind != ProcKind::Omp);
            machine.node.affinities.retain(|a| a.proc != ProcKind::Omp);
        }
        let decisions = resolve_mapping(&analysis, text, &app, &machine);
        out.extend(decisions.diagnostics);
    }
    out
}

/// The codes `text` produces (see [`diagnostics_of`]).
fn codes_of(text: &str, attrs: &[(String, String)]) -> Vec<&'static str> {
    diagnostics_of(text, attrs).iter().map(|d| d.code).collect()
}

/// How the page words each applicability in a section's
/// `Fix (quick fix, HOW): TITLE ...` line.
fn how_safe(applicability: Applicability) -> &'static str {
    match applicability {
        Applicability::Safe => "safe to apply automatically",
        Applicability::Likely => "the likeliest repair, not applied by fix-all",
        Applicability::Unsafe => "check the result",
    }
}

#[test]
fn the_page_has_one_section_per_code_in_table_order_with_its_summary() {
    let sections = sections(&page());
    let listed: Vec<&str> = sections.iter().map(|s| s.code.as_str()).collect();
    let table: Vec<&str> = all_codes().iter().map(|c| c.code).collect();
    assert_eq!(listed, table, "docs/codes.md sections vs the codes tables");
    for (s, c) in sections.iter().zip(all_codes()) {
        assert_eq!(
            s.summary, c.summary,
            "{}: summary differs from the table",
            s.code
        );
    }
}

#[test]
fn every_example_produces_its_code_and_every_fixed_example_does_not() {
    let mut failures = Vec::new();
    for s in sections(&page()) {
        let examples: Vec<&Block> = s.blocks.iter().filter(|b| !b.fixed).collect();
        if examples.is_empty() {
            failures.push(format!("{}: no example", s.code));
        }
        for b in &s.blocks {
            let produced = codes_of(&b.text, &b.attrs);
            let has = produced.contains(&s.code.as_str());
            if b.fixed && has {
                failures.push(format!("{}: the fixed example still produces it", s.code));
            } else if !b.fixed && !has {
                failures.push(format!("{}: the example produces {produced:?}", s.code));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each `Fix (quick fix, HOW): TITLE` line tells the truth: the section's
/// example gets a fix of its code whose title the line starts with, and
/// HOW is that fix's applicability (fix-all on save applies only the safe
/// ones, so a page that calls a guess safe misleads). A section without
/// such a line has an example whose diagnostic offers no fix.
#[test]
fn every_quick_fix_line_names_the_fix_and_how_safe_it_is() {
    let mut failures = Vec::new();
    for s in sections(&page()) {
        let Some(example) = s.blocks.iter().find(|b| !b.fixed) else {
            continue;
        };
        let fixes: Vec<_> = diagnostics_of(&example.text, &example.attrs)
            .into_iter()
            .filter(|d| d.code == s.code)
            .flat_map(|d| d.fixes)
            .collect();
        match &s.quick_fix {
            None if !fixes.is_empty() => failures.push(format!(
                "{}: the example has the fix {:?} but the page names none",
                s.code, fixes[0].title
            )),
            None => {}
            Some((how, said)) => {
                let Some(fix) = fixes.iter().find(|f| said.starts_with(&*f.title)) else {
                    failures.push(format!(
                        "{}: the page says {said:?}, the example's fixes are {:?}",
                        s.code,
                        fixes.iter().map(|f| &f.title).collect::<Vec<_>>()
                    ));
                    continue;
                };
                if how != how_safe(fix.applicability) {
                    failures.push(format!(
                        "{}: the page says {how:?}, the fix {:?} is {:?} ({:?})",
                        s.code,
                        fix.title,
                        fix.applicability,
                        how_safe(fix.applicability)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
