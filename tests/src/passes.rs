//! Every pass a mapper text can reach from the command line, in process:
//! `check` (parse, type-check, rendered and JSON diagnostics), `fmt`
//! (whole-document and range formatting), and `explain` (mapping resolution
//! against a built-in application, rendered as the decision table).
//!
//! [`run_editor`] does the same for an editor session: `didChange` edits
//! and the language server's features after each.
//!
//! Used by the deep-input tests and the fuzzer, so both exercise the same
//! code the binary runs.

use std::panic::{catch_unwind, AssertUnwindSafe};

use mapwright::render::{diagnostic_json, render_diagnostic, Style};
use mapwright_grammar::format::{format_file, format_parsed, format_range};
use mapwright_grammar::{analyze, analyze_tree, LineIndex, Span};
use mapwright_runtime::app::App;
use mapwright_runtime::machine::Machine;
use mapwright_runtime::resolve_mapping::{render_decisions, resolve_mapping};

/// An application with the machine it is resolved on.
pub struct Target {
    pub app: App,
    pub machine: Machine,
}

/// Every built-in application on the default machine (`p100x4`).
pub fn builtin_targets() -> Vec<Target> {
    let machine = Machine::preset("p100x4").expect("the p100x4 preset exists");
    App::builtin_names()
        .iter()
        .filter_map(|name| App::builtin(name))
        .map(|app| Target {
            app,
            machine: machine.clone(),
        })
        .collect()
}

/// What one run of the passes saw (so callers can assert on it).
#[derive(Debug, Default)]
pub struct Outcome {
    /// Codes of the check diagnostics.
    pub codes: Vec<&'static str>,
    /// Bytes of rendered output (diagnostics, formatted text, explain tables).
    pub rendered_bytes: usize,
}

/// Runs `source` through check, fmt and (for each of `targets`) resolution
/// and `explain`. Panics propagate; see [`run_caught`].
pub fn run(source: &str, targets: &[Target]) -> Outcome {
    let analysis = analyze(source);
    let index = LineIndex::new(source);
    let mut out = Outcome::default();
    let style = Style { color: false };
    let diagnostics = analysis.diagnostics();
    for d in &diagnostics {
        out.codes.push(d.code);
        out.rendered_bytes += render_diagnostic(d, "fuzz.mapper", source, &index, style).len();
        out.rendered_bytes += diagnostic_json(d, "fuzz.mapper", &index, source)
            .to_string()
            .len();
    }
    let formatted = format_parsed(source, &analysis.parsed);
    out.rendered_bytes += formatted.len();
    // What `mapwright check` (without an application) and `mapwright fmt`
    // run: the parse that forgets its tokens must give the same answers.
    let streamed = analyze_tree(source).into_diagnostics();
    assert!(streamed == diagnostics, "analyze_tree differs from analyze");
    assert!(
        format_file(source).0 == formatted,
        "format_file differs from format_parsed"
    );
    // Range formatting over the middle third (char boundaries may not hold:
    // it must cope with any range).
    let third = source.len() / 3;
    if let Some(edit) = format_range(source, Span::new(third, 2 * third)) {
        out.rendered_bytes += edit.text.len();
    }
    for t in targets {
        let decisions = resolve_mapping(&analysis, source, &t.app, &t.machine);
        out.rendered_bytes += render_decisions(&decisions, source, &t.app, &t.machine).len();
        for d in &decisions.diagnostics {
            out.rendered_bytes += render_diagnostic(d, "fuzz.mapper", source, &index, style).len();
        }
    }
    out
}

/// [`run`] with panics caught: `Err` holds the panic message.
pub fn run_caught(source: &str, targets: &[Target]) -> Result<Outcome, String> {
    catch_unwind(AssertUnwindSafe(|| run(source, targets))).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string())
    })
}

/// What an editor session reaches, in process: `edits` applied one by one
/// as `didChange` range edits (positions in `enc`, possibly past the end of
/// a line or of the file, possibly inside a character), and after each the
/// language server's pure features: semantic tokens, folding, outline,
/// formatting, inlay hints, and at each of `offsets` hover, completion,
/// signature help, definition, references, highlights and rename.
///
/// Each edit is `(start line, start column, end line, end column, text)`.
pub fn run_editor(
    source: &str,
    edits: &[(u32, u32, u32, u32, String)],
    offsets: &[usize],
    enc: mapwright_grammar::line_index::Encoding,
) -> usize {
    use mapwright::lsp::analysis::Analysis;
    use mapwright::lsp::providers::{InlayQuery, Providers, Query};
    use mapwright::lsp::{
        convert, cursor, folding, formatting, navigation, semantic_tokens, signature, symbols,
    };
    let providers = Providers::builtin();
    let mut text = source.to_string();
    let mut seen = 0usize;
    for (sl, sc, el, ec, new_text) in edits {
        // The change event is built from JSON, as it arrives from a client.
        let change = serde_json::from_value(serde_json::json!({
            "range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
            "text": new_text,
        }))
        .expect("a well-formed change event");
        convert::apply_change(&mut text, &change, enc);
        let a = Analysis::new(&text);
        let classified = semantic_tokens::classify(&a);
        seen += semantic_tokens::encode(&a, &classified, enc).len();
        seen += folding::folds(&a).len() + symbols::outline(&a).len();
        seen += formatting::format_document(&a).len();
        seen += providers
            .inlay_hints(&InlayQuery::plain(&a, Span::new(0, text.len())))
            .len();
        for &raw in offsets {
            let mut offset = raw % (text.len() + 1);
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            let q = Query::plain(&a, offset);
            seen += providers.hover(&q).map_or(0, |h| h.markdown.len());
            seen += providers.complete(&q).items.len();
            seen += signature::signature_help(&a, offset).map_or(0, |_| 1);
            let _ = cursor::cursor_at(&a, offset);
            seen += navigation::definition(&a, offset).len();
            seen += navigation::references(&a, offset, true).len();
            seen += navigation::highlights(&a, offset).len();
            if navigation::prepare_rename(&a, offset).is_some() {
                seen += navigation::rename(&a, offset, "renamed").map_or(0, |e| e.len());
            }
        }
    }
    seen
}

/// [`run_editor`] with panics caught.
pub fn run_editor_caught(
    source: &str,
    edits: &[(u32, u32, u32, u32, String)],
    offsets: &[usize],
    enc: mapwright_grammar::line_index::Encoding,
) -> Result<usize, String> {
    catch_unwind(AssertUnwindSafe(|| run_editor(source, edits, offsets, enc))).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string())
    })
}
