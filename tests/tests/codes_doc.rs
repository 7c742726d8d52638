//! `docs/codes.md` cannot rot: it has one section per diagnostic code of
//! the codes tables (grammar and mapping resolution), in table order, with
//! the table's summary; each section's example really produces its code,
//! and the fixed example (where there is one) no longer does.
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
//! ```mapper fixed                     <- optional: the example after the fix
//! ...
//! ```
//! ````

use std::path::Path;

use mapwright_grammar::{analyze, codes};
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

/// The codes `text` produces: the front end's, plus resolution's when an
/// application and machine are named.
fn codes_of(text: &str, attrs: &[(String, String)]) -> Vec<&'static str> {
    let attr = |k: &str| attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
    let analysis = analyze(text);
    let mut out: Vec<&'static str> = analysis.diagnostics().iter().map(|d| d.code).collect();
    if let Some(app) = attr("app") {
        let app = App::builtin(app).unwrap_or_else(|| panic!("no built-in app {app}"));
        let name = attr("machine").unwrap_or("p100x4");
        let mut machine = Machine::preset(name).unwrap_or_else(|| panic!("no preset {name}"));
        if attr("without") == Some("OMP") {
            machine.node.processors.retain(|p| p.kind != ProcKind::Omp);
            machine.node.affinities.retain(|a| a.proc != ProcKind::Omp);
        }
        let decisions = resolve_mapping(&analysis, text, &app, &machine);
        out.extend(decisions.diagnostics.iter().map(|d| d.code));
    }
    out
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
