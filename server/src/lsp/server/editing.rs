//! Editing requests: formatting, code actions (quick fixes and source
//! actions), code lenses.
//!
//! `codeAction/resolve`: a client whose `codeAction.resolveSupport` names
//! `edit` gets code actions without their edit (a file's source actions,
//! *Fix all* and *Format* especially, can be large), each with `data`
//! naming the document, its version and the request's range
//! ([`ResolveData`]). Resolving checks the version: an action of another
//! version is refused with `ContentModified` (its edit would be for other
//! text); otherwise the actions of that range and the action's kind are
//! computed again (with the action's own diagnostics as the context) and
//! the one with the same title gives its edit.

use mapwright_grammar::line_index::Encoding;
use mapwright_grammar::Span;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tower_lsp::jsonrpc::Result;
use tower_lsp::lsp_types::*;

use crate::lsp::analysis::Analysis;
use crate::lsp::code_actions::missing_machines;
use crate::lsp::commands::{self};
use crate::lsp::convert::{self, DiagnosticData, DiagnosticFields, FixData};
use crate::lsp::formatting::{format_document, format_selection};
use crate::lsp::quick_fix_order::{quick_fix_actions, FixGroup};
use crate::lsp::state::Document;
use crate::lsp::target::{merged_diagnostics, Resolution};

use super::*;

/// Kind of the "Format" source action.
pub(super) const SOURCE_FORMAT: &str = "source.format";
/// Kind of the "Add missing `mgpu = Machine(GPU);`" source action.
pub(super) const SOURCE_ADD_MACHINE: &str = "source.addMissingMachine";
/// Kind of the "Fix all safe problems" source action (fix-on-save).
pub(super) const SOURCE_FIX_ALL: &str = "source.fixAll.mapwright";
/// Kind of the "Explain mapping decisions" source action.
pub(super) const SOURCE_EXPLAIN: &str = "source.explainMapping";
/// Kind of the "Optimize this mapper" source action.
pub(super) const SOURCE_OPTIMIZE: &str = "source.optimizeMapper";

impl Backend {
    pub(super) async fn handle_formatting(
        &self,
        params: DocumentFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>> {
        let Some((doc, a)) = self.snapshot(&params.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let edits = self
            .guarded("formatting", || {
                proto::text_edits(&a, &format_document(&a), enc)
            })
            .await?;
        self.unless_stale(&doc, Some(edits))
    }

    pub(super) async fn handle_range_formatting(
        &self,
        params: DocumentRangeFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>> {
        let Some((doc, a)) = self.snapshot(&params.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let edits = self
            .guarded("range formatting", || {
                let range = convert::span(&a.index, params.range, enc);
                proto::text_edits(&a, &format_selection(&a, range), enc)
            })
            .await?;
        self.unless_stale(&doc, Some(edits))
    }

    pub(super) async fn handle_on_type_formatting(
        &self,
        params: DocumentOnTypeFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>> {
        let pos = params.text_document_position;
        let Some((doc, a)) = self.snapshot(&pos.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let edits = self
            .guarded("on-type formatting", || {
                let offset = convert::offset(&a.index, pos.position, enc);
                proto::text_edits(&a, &on_type::on_type(&a, offset, &params.ch), enc)
            })
            .await?;
        self.unless_stale(&doc, Some(edits))
    }

    pub(super) async fn handle_code_action(
        &self,
        params: CodeActionParams,
    ) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let Some((doc, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let target = self.state.target(&uri);
        let has_app = target.as_ref().is_some_and(|t| t.app.is_some());
        let actions = self
            .guarded("code actions", || {
                // (Inside the guard: the first code action on a version
                // resolves the mapping again, with its quick fixes.)
                let resolution = target.as_ref().and_then(|t| doc.cached_resolution(t));
                let mut out = code_actions(
                    &uri,
                    &doc,
                    &a,
                    resolution.as_deref(),
                    &params.context,
                    params.range,
                    enc,
                );
                if has_app {
                    out.extend(command_actions(&uri, &params.context.only));
                }
                out
            })
            .await?;
        let actions = if self.state.flags().code_action_resolve {
            defer_edits(actions, &uri, doc.version, params.range)
        } else {
            actions
        };
        self.unless_stale(&doc, Some(actions))
    }

    pub(super) async fn handle_code_action_resolve(
        &self,
        mut action: CodeAction,
    ) -> Result<CodeAction> {
        let Some(data) = action
            .data
            .clone()
            .and_then(|v| serde_json::from_value::<ResolveData>(v).ok())
        else {
            // Not one of ours to resolve (it already has what it needs).
            return Ok(action);
        };
        let Some((doc, a)) = self.snapshot(&data.uri).await? else {
            return Err(content_modified("the document is not open"));
        };
        if doc.version != data.version {
            return Err(content_modified(
                "the document changed since the action was offered",
            ));
        }
        let enc = self.state.encoding();
        let target = self.state.target(&data.uri);
        let context = CodeActionContext {
            diagnostics: action.diagnostics.clone().unwrap_or_default(),
            only: action.kind.clone().map(|k| vec![k]),
            trigger_kind: None,
        };
        let edit = self
            .guarded("code action resolve", || {
                let resolution = target.as_ref().and_then(|t| doc.cached_resolution(t));
                code_actions(
                    &data.uri,
                    &doc,
                    &a,
                    resolution.as_deref(),
                    &context,
                    data.range,
                    enc,
                )
                .into_iter()
                .find_map(|candidate| match candidate {
                    CodeActionOrCommand::CodeAction(c)
                        if c.title == action.title && c.kind == action.kind =>
                    {
                        c.edit
                    }
                    _ => None,
                })
            })
            .await?;
        match edit {
            Some(edit) => {
                action.edit = Some(edit);
                action.data = None;
                self.unless_stale(&doc, action)
            }
            None => Err(content_modified("the action no longer applies")),
        }
    }

    pub(super) async fn handle_code_lens(
        &self,
        params: CodeLensParams,
    ) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        let Some(doc) = self.state.doc(&uri) else {
            return Ok(None);
        };
        let Some(target) = self.state.target(&uri).filter(|t| t.app.is_some()) else {
            return Ok(None);
        };
        let measured = match self.state.last_run(&uri) {
            Some(run) => {
                let (_, resolution) = self.resolution(&doc).await?;
                let a = doc.analysis();
                measured_lenses(&a, resolution.as_deref(), &run, &uri, self.state.encoding())
            }
            None => Vec::new(),
        };
        let settings = self.state.settings();
        let project = self.state.project(&uri);
        let proposer = project
            .as_ref()
            .and_then(|p| p.proposer.clone())
            .or(settings.proposer.clone())
            .unwrap_or_else(|| "search".into());
        let at_top = Range::new(Position::new(0, 0), Position::new(0, 0));
        let lens = |title: String, command: &str, show: bool| CodeLens {
            range: at_top,
            command: Some(Command {
                title,
                command: command.to_string(),
                arguments: Some(vec![if show {
                    json!({"uri": uri, "show": true})
                } else {
                    json!(uri)
                }]),
            }),
            data: None,
        };
        let runtime = project
            .as_ref()
            .and_then(|p| p.runtime.clone())
            .or(settings.runtime_url.clone());
        let run_title = run_lens_title(runtime.as_deref(), target.machine_name());
        let mut lenses = vec![
            lens(
                format!(
                    "Optimize this mapper ({proposer}, {} iterations)",
                    settings.optimize.iterations
                ),
                commands::OPTIMIZE,
                false,
            ),
            lens(run_title, commands::RUN, false),
            lens(
                "Explain mapping decisions".to_string(),
                commands::EXPLAIN,
                true,
            ),
        ];
        lenses.extend(measured);
        Ok(Some(lenses))
    }
}

/// A statement's span and the measured tasks it decided, with their times.
type StatementTimes<'a> = (Span, Vec<(&'a str, f64)>);

/// A lens on each `Task`, `IndexTaskMap` and `SingleTaskMap` statement that
/// decided tasks the last real run measured: their measured time in all
/// (`measured 3.21 s: calculate_new_currents 3.19 s, ... (the run on
/// legion-host, version 4)`); clicking runs the mapper again.
/// The run lens's title: where `mapwright.run` runs the mapper. Real
/// Legion and a user's program run on this host, whatever machine model
/// the decisions are shown for; a runtime URL is another machine.
fn run_lens_title(runtime: Option<&str>, machine: &str) -> String {
    match runtime.map(str::trim) {
        Some("legion") => "Run on real Legion (this host)".into(),
        Some("command") => "Run your program".into(),
        Some(url) if !url.is_empty() && url != "embedded" && url != "sim" => {
            format!("Run on {url}")
        }
        _ => format!("Run on {machine}"),
    }
}

fn measured_lenses(
    a: &Analysis,
    resolution: Option<&Resolution>,
    run: &crate::lsp::provider_api::LastRun,
    uri: &Url,
    enc: Encoding,
) -> Vec<CodeLens> {
    let Some(decisions) = resolution.and_then(|r| r.decisions.as_ref()) else {
        return Vec::new();
    };
    // Statement start -> (its span, the measured tasks it decided).
    let mut by_stmt: std::collections::BTreeMap<usize, StatementTimes> =
        std::collections::BTreeMap::new();
    for d in &decisions.tasks {
        let Some(seconds) = run.metrics.task_time_s.get(&d.task) else {
            continue;
        };
        for span in [d.proc_rule, d.map_rule].into_iter().flatten() {
            let entry = by_stmt.entry(span.start()).or_insert((span, Vec::new()));
            entry.1.push((d.task.as_str(), *seconds));
        }
    }
    by_stmt
        .into_values()
        .map(|(span, mut tasks)| {
            tasks.sort_by(|x, y| y.1.total_cmp(&x.1));
            let total: f64 = tasks.iter().map(|t| t.1).sum();
            let shown: Vec<String> = tasks
                .iter()
                .take(3)
                .map(|(t, s)| {
                    format!(
                        "{t} {}",
                        mapwright_runtime::legion::measured::seconds_text(*s)
                    )
                })
                .collect();
            let more = if tasks.len() > 3 {
                format!(", {} more", tasks.len() - 3)
            } else {
                String::new()
            };
            let at = convert::position(&a.index, span.start(), enc);
            CodeLens {
                range: Range::new(at, at),
                command: Some(Command {
                    title: format!(
                        "measured {}: {}{more} ({}, version {})",
                        mapwright_runtime::legion::measured::seconds_text(total),
                        shown.join(", "),
                        run.what,
                        run.version
                    ),
                    command: commands::RUN.to_string(),
                    arguments: Some(vec![json!(uri)]),
                }),
                data: None,
            }
        })
        .collect()
}

/// What a code action sent without its edit carries to `codeAction/resolve`.
#[derive(Debug, Serialize, Deserialize)]
struct ResolveData {
    uri: Url,
    version: i32,
    /// The range of the `textDocument/codeAction` request.
    range: Range,
}

/// `actions` with their edits left out and the data to resolve them.
fn defer_edits(
    actions: Vec<CodeActionOrCommand>,
    uri: &Url,
    version: i32,
    range: Range,
) -> Vec<CodeActionOrCommand> {
    actions
        .into_iter()
        .map(|action| match action {
            CodeActionOrCommand::CodeAction(mut c) if c.edit.is_some() => {
                c.edit = None;
                c.data = serde_json::to_value(ResolveData {
                    uri: uri.clone(),
                    version,
                    range,
                })
                .ok();
                CodeActionOrCommand::CodeAction(c)
            }
            other => other,
        })
        .collect()
}

fn content_modified(why: &str) -> tower_lsp::jsonrpc::Error {
    tower_lsp::jsonrpc::Error {
        code: tower_lsp::jsonrpc::ErrorCode::ContentModified,
        message: why.to_string().into(),
        data: None,
    }
}

/// True if an action of `kind` passes the request's `only` filter (a filter
/// entry matches its own kind and every sub-kind: `source` matches
/// `source.format`).
pub(super) fn kind_allowed(only: &Option<Vec<CodeActionKind>>, kind: &CodeActionKind) -> bool {
    match only {
        None => true,
        Some(list) => list.iter().any(|o| {
            let (o, k) = (o.as_str(), kind.as_str());
            k == o || k.starts_with(&format!("{o}."))
        }),
    }
}

/// The source actions that run a command: "Explain mapping decisions" and
/// "Optimize this mapper".
pub(super) fn command_actions(
    uri: &Url,
    only: &Option<Vec<CodeActionKind>>,
) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    for (kind, title, command) in [
        (
            SOURCE_EXPLAIN,
            "Explain mapping decisions",
            commands::EXPLAIN,
        ),
        (SOURCE_OPTIMIZE, "Optimize this mapper", commands::OPTIMIZE),
    ] {
        let kind = CodeActionKind::new(kind);
        if !kind_allowed(only, &kind) {
            continue;
        }
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: title.to_string(),
            kind: Some(kind),
            command: Some(Command {
                title: title.to_string(),
                command: command.to_string(),
                arguments: Some(vec![json!({"uri": uri, "show": true})]),
            }),
            ..Default::default()
        }));
    }
    out
}

/// Quick fixes from the diagnostics' data, plus the source actions.
pub(super) fn code_actions(
    uri: &Url,
    doc: &Document,
    a: &Analysis,
    resolution: Option<&Resolution>,
    context: &CodeActionContext,
    range: Range,
    enc: Encoding,
) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    if kind_allowed(&context.only, &CodeActionKind::QUICKFIX) {
        let mut current = CurrentFixes {
            uri,
            doc,
            a,
            resolution,
            enc,
            converted: None,
        };
        let mut groups: Vec<FixGroup> = Vec::new();
        for d in &context.diagnostics {
            let source = d.source.as_deref();
            if source != Some("mapwright") && source != Some("autoguide") {
                continue;
            }
            let fixes = match d
                .data
                .clone()
                .and_then(|v| serde_json::from_value::<DiagnosticData>(v).ok())
            {
                // Published diagnostics carry no fixes: recompute them.
                Some(data) if data.version == doc.version && data.fixes.is_empty() => {
                    if source != Some("mapwright") {
                        continue;
                    }
                    current.of(d)
                }
                Some(data) if data.version == doc.version => data.fixes,
                // Fixes for another version would edit the wrong text.
                Some(_) => continue,
                // A client that drops `data`: recompute from the current
                // parse (AutoGuide's fixes are not recomputed).
                None if source == Some("mapwright") => current.of(d),
                None => continue,
            };
            groups.push(FixGroup {
                diagnostic: d.clone(),
                fixes,
                in_context: true,
            });
        }
        // Then the fixes of the other current diagnostics under the range
        // (all of them when the context held none of ours for this
        // version: the user typed since the last publish, or the client
        // sends no context).
        for d in current.touching(range) {
            let named = groups
                .iter()
                .any(|g| g.diagnostic.range == d.range && g.diagnostic.code == d.code);
            if named {
                continue;
            }
            let fixes = d
                .data
                .clone()
                .and_then(|v| serde_json::from_value::<DiagnosticData>(v).ok())
                .map(|data| data.fixes)
                .unwrap_or_default();
            groups.push(FixGroup {
                diagnostic: d,
                fixes,
                in_context: false,
            });
        }
        out.extend(quick_fix_actions(uri, groups, range));
    }
    let span = convert::span(&a.index, range, enc);
    for m in missing_machines(a) {
        let edit = TextEdit::new(
            convert::range(&a.index, Span::at(m.insert_at), enc),
            m.text.clone(),
        );
        let title = format!("Add missing `{} = Machine({});`", m.name, m.kind);
        // Always a source action (so `only: ["source"]` finds it); also a
        // quick fix at a use, unless the E0201 diagnostic's own fix already
        // adds this definition (it would be offered twice).
        let definition = format!("{} = Machine(", m.name);
        let already_fixed = out.iter().any(|action| match action {
            CodeActionOrCommand::CodeAction(c) => {
                c.kind == Some(CodeActionKind::QUICKFIX)
                    && c.edit.as_ref().is_some_and(|e| {
                        e.changes
                            .iter()
                            .flat_map(|ch| ch.values())
                            .flatten()
                            .any(|t: &TextEdit| t.new_text.starts_with(&definition))
                    })
            }
            CodeActionOrCommand::Command(_) => false,
        });
        let touches = m
            .uses
            .iter()
            .any(|u| u.start() <= span.end() && span.start() <= u.end());
        let mut kinds = vec![CodeActionKind::new(SOURCE_ADD_MACHINE)];
        if touches && !already_fixed {
            kinds.insert(0, CodeActionKind::QUICKFIX);
        }
        for kind in kinds {
            if !kind_allowed(&context.only, &kind) {
                continue;
            }
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: title.clone(),
                kind: Some(kind),
                edit: Some(proto::workspace_edit(uri, vec![edit.clone()])),
                ..Default::default()
            }));
        }
    }
    let fix_all_kind = CodeActionKind::new(SOURCE_FIX_ALL);
    // Only when asked for by kind: computing every fix of a big file on
    // each cursor move is wasted work.
    if context.only.is_some() && kind_allowed(&context.only, &fix_all_kind) {
        let all = merged_diagnostics(a, resolution);
        let edits = safe_fix_edits(&all);
        if !edits.is_empty() {
            let edits = edits
                .into_iter()
                .map(|e| TextEdit::new(convert::range(&a.index, e.span, enc), e.text))
                .collect();
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "Fix all safe problems".into(),
                kind: Some(fix_all_kind),
                edit: Some(proto::workspace_edit(uri, edits)),
                ..Default::default()
            }));
        }
    }
    let format_kind = CodeActionKind::new(SOURCE_FORMAT);
    if kind_allowed(&context.only, &format_kind) {
        let edits = format_document(a);
        if !edits.is_empty() {
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "Format".into(),
                kind: Some(format_kind),
                edit: Some(proto::workspace_edit(
                    uri,
                    proto::text_edits(a, &edits, enc),
                )),
                ..Default::default()
            }));
        }
    }
    out
}

/// The edits of every diagnostic whose only fix is safe (a choice between
/// fixes is left to the user), in text order; an edit that overlaps one
/// already taken is skipped, and the same edit from two diagnostics is
/// taken once.
pub(super) fn safe_fix_edits(
    diags: &[mapwright_grammar::Diagnostic],
) -> Vec<mapwright_grammar::diagnostic::TextEdit> {
    use mapwright_grammar::diagnostic::Applicability;
    let mut fixes: Vec<&mapwright_grammar::Fix> = diags
        .iter()
        .filter(|d| d.fixes.len() == 1 && d.fixes[0].applicability == Applicability::Safe)
        .map(|d| &d.fixes[0])
        .collect();
    fixes.sort_by_key(|f| f.edits.iter().map(|e| e.span.start()).min());
    let mut taken: Vec<mapwright_grammar::diagnostic::TextEdit> = Vec::new();
    for fix in fixes {
        let overlaps = |e: &mapwright_grammar::diagnostic::TextEdit| {
            taken.iter().any(|t| {
                t != e
                    && ((t.span.start() < e.span.end() && e.span.start() < t.span.end())
                        || t.span.start() == e.span.start())
            })
        };
        // A fix is taken whole or not at all.
        if fix.edits.iter().any(overlaps) {
            continue;
        }
        for e in &fix.edits {
            if !taken.contains(e) {
                taken.push(e.clone());
            }
        }
    }
    taken.sort_by_key(|e| (e.span.start(), e.span.end()));
    taken
}

/// The current diagnostics of `doc` with their fixes in `data`, converted
/// once per code-action request however many context diagnostics need them.
struct CurrentFixes<'a> {
    uri: &'a Url,
    doc: &'a Document,
    a: &'a Analysis,
    resolution: Option<&'a Resolution>,
    enc: Encoding,
    converted: Option<Vec<Diagnostic>>,
}

impl CurrentFixes<'_> {
    /// Every current diagnostic, converted with its fixes (once).
    fn all(&mut self) -> &[Diagnostic] {
        self.converted.get_or_insert_with(|| {
            let all = merged_diagnostics(self.a, self.resolution);
            convert::diagnostics(
                self.uri,
                self.doc.version,
                &self.a.index,
                &all,
                self.enc,
                DiagnosticFields::ALL,
                true,
            )
        })
    }

    /// The current diagnostics with fixes whose range touches `range`.
    fn touching(&mut self, range: Range) -> Vec<Diagnostic> {
        let at = |p: Position| (p.line, p.character);
        self.all()
            .iter()
            .filter(|d| at(d.range.start) <= at(range.end) && at(range.start) <= at(d.range.end))
            .filter(|d| {
                d.data
                    .clone()
                    .and_then(|v| serde_json::from_value::<DiagnosticData>(v).ok())
                    .is_some_and(|data| !data.fixes.is_empty())
            })
            .cloned()
            .collect()
    }

    /// The fixes of the current diagnostic with the same code and range as `d`.
    fn of(&mut self, d: &Diagnostic) -> Vec<FixData> {
        self.all()
            .iter()
            .find(|c| c.range == d.range && c.code == d.code)
            .and_then(|c| c.data.clone())
            .and_then(|v| serde_json::from_value::<DiagnosticData>(v).ok())
            .map(|data| data.fixes)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_run_lens_says_where_it_runs() {
        use super::run_lens_title;
        assert_eq!(run_lens_title(None, "p100x4"), "Run on p100x4");
        assert_eq!(run_lens_title(Some("sim"), "p100x4"), "Run on p100x4");
        assert_eq!(
            run_lens_title(Some("legion"), "p100x4"),
            "Run on real Legion (this host)"
        );
        assert_eq!(
            run_lens_title(Some("command"), "p100x4"),
            "Run your program"
        );
        assert_eq!(
            run_lens_title(Some("http://gpu-box:7878"), "p100x4"),
            "Run on http://gpu-box:7878"
        );
    }

    use super::*;

    #[test]
    fn code_action_kind_filter() {
        let only = Some(vec![CodeActionKind::SOURCE]);
        assert!(kind_allowed(&only, &CodeActionKind::new(SOURCE_FORMAT)));
        assert!(!kind_allowed(&only, &CodeActionKind::QUICKFIX));
        assert!(kind_allowed(&None, &CodeActionKind::QUICKFIX));
        let only = Some(vec![CodeActionKind::new("source.f")]);
        assert!(!kind_allowed(&only, &CodeActionKind::new(SOURCE_FORMAT)));
    }
}
