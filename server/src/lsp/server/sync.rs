//! Document sync and diagnostics: open/change/save/close, settings and
//! workspace changes, publishing, malformed messages, `mapwright/documentInfo`.

use std::sync::Arc;
use std::time::Duration;

use mapwright_grammar::line_index::Encoding;
use serde_json::{json, Value};
use tower_lsp::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp::lsp_types::*;
use tower_lsp::Client;

use crate::lsp::analysis::Analysis;
use crate::lsp::config::PROJECT_FILE;
use crate::lsp::convert::{self};
use crate::lsp::outbox::PublishBuilder;
use crate::lsp::publish_limit;
use crate::lsp::resolve_thread;
use crate::lsp::state::{Change, Document, State};
use crate::lsp::target::{merged_diagnostic_refs, Target};

use super::*;

impl Backend {
    pub(super) async fn handle_did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
        let doc = self.state.open(d.uri.clone(), d.version, d.text);
        self.refresh_project(&d.uri).await;
        publish(&self.state, &self.client, doc).await;
    }

    pub(super) async fn handle_did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        // Applied before any `.await`: see the module comment.
        let change = guard::catch(|| self.state.change(&uri, version, &params.content_changes));
        let doc = match change {
            Ok(Change::Applied(doc)) => Some(doc),
            Ok(Change::OutOfOrder { doc, have }) => {
                self.log(
                    MessageType::WARNING,
                    format!(
                        "mapwright: change to {uri} has version {version}, not above {have}; applied as sent (the editor's text is authoritative)"
                    ),
                )
                .await;
                Some(doc)
            }
            Ok(Change::Unknown) => {
                self.log(
                    MessageType::WARNING,
                    format!("mapwright: change to {uri}, which is not open"),
                )
                .await;
                None
            }
            Err(msg) => {
                self.log(
                    MessageType::ERROR,
                    format!("mapwright: internal error applying a change to {uri}: {msg}"),
                )
                .await;
                None
            }
        };
        if let Some(doc) = doc {
            {
                let state = self.state.clone();
                let client = self.client.clone();
                let delay = Duration::from_millis(self.state.settings().diagnostics.debounce_ms);
                tokio::spawn(async move {
                    // (A zero sleep would still wait for the timer's next
                    // millisecond tick.)
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    publish(&state, &client, doc).await;
                });
            }
        }
    }

    pub(super) async fn handle_did_save(&self, params: DidSaveTextDocumentParams) {
        if let Some(doc) = self.state.doc(&params.text_document.uri) {
            publish(&self.state, &self.client, doc).await;
        }
    }

    pub(super) async fn handle_did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.state.close(&uri);
        // (A client that pulls drops a closed document's diagnostics itself.)
        if !self.state.flags().pull_diagnostics {
            send_diagnostics(&self.state, &self.client, &uri, Vec::new(), None).await;
        }
    }

    pub(super) async fn handle_did_change_configuration(
        &self,
        params: DidChangeConfigurationParams,
    ) {
        // Clients either push the settings or send `null` and expect a pull.
        let pushed = params.settings.is_object()
            && params.settings.as_object().is_some_and(|o| !o.is_empty());
        if pushed {
            if let Err(e) = self.state.update_settings(&params.settings) {
                self.log(MessageType::WARNING, format!("mapwright: {e}"))
                    .await;
            }
        } else {
            self.pull_configuration().await;
        }
        self.state.forget_targets();
        self.republish_all().await;
    }

    pub(super) async fn handle_did_change_workspace_folders(
        &self,
        params: DidChangeWorkspaceFoldersParams,
    ) {
        let mut folders = self.state.folders();
        let removed: Vec<_> = params
            .event
            .removed
            .iter()
            .filter_map(|f| f.uri.to_file_path().ok())
            .collect();
        folders.retain(|f| !removed.contains(f));
        folders.extend(
            params
                .event
                .added
                .iter()
                .filter_map(|f| f.uri.to_file_path().ok()),
        );
        self.state.set_folders(folders);
        self.state.forget_targets();
        for doc in self.state.all_docs() {
            self.refresh_project(&doc.uri).await;
        }
        self.republish_all().await;
    }

    pub(super) async fn handle_did_change_watched_files(
        &self,
        params: DidChangeWatchedFilesParams,
    ) {
        let touches_project = params
            .changes
            .iter()
            .any(|c| c.uri.path().ends_with(PROJECT_FILE));
        let touches_description = params.changes.iter().any(|c| {
            c.uri
                .to_file_path()
                .is_ok_and(|p| self.state.target_reads(&p))
        });
        if !touches_project && !touches_description {
            return;
        }
        self.state.forget_targets();
        for doc in self.state.all_docs() {
            self.refresh_project(&doc.uri).await;
        }
        self.republish_all().await;
    }

    /// Finds and loads the project file of `uri`, logging problems.
    pub(super) async fn refresh_project(&self, uri: &Url) {
        let result = self.state.refresh_project(uri);
        match result {
            Ok(Some(p)) => {
                self.log(
                    MessageType::INFO,
                    format!(
                        "mapwright: {} uses {} (app: {}, machine: {})",
                        uri,
                        p.path.display(),
                        p.app.as_deref().unwrap_or("-"),
                        p.machine.as_deref().unwrap_or("-")
                    ),
                )
                .await
            }
            Ok(None) => {}
            Err(e) => {
                self.log(MessageType::WARNING, format!("mapwright: {e}"))
                    .await;
            }
        }
    }

    /// Pulls `workspace/configuration` (section `mapwright`) if the client
    /// supports it, and applies it.
    pub(super) async fn pull_configuration(&self) {
        if !self.state.flags().configuration {
            return;
        }
        let items = vec![ConfigurationItem {
            scope_uri: None,
            section: Some("mapwright".into()),
        }];
        match self.client.configuration(items).await {
            Ok(values) => {
                if let Some(v) = values.first() {
                    if let Err(e) = self.state.update_settings(v) {
                        self.log(MessageType::WARNING, format!("mapwright: {e}"))
                            .await;
                    }
                }
            }
            Err(e) => {
                self.log(
                    MessageType::WARNING,
                    format!("mapwright: workspace/configuration failed: {e}"),
                )
                .await
            }
        }
    }

    /// Re-publishes diagnostics of every open document (after settings or
    /// project files changed), and asks the client to refresh what depends
    /// on the application and machine (code lenses, inlay hints).
    pub(super) async fn republish_all(&self) {
        self.state.diagnostics_changed();
        for doc in self.state.all_docs() {
            publish(&self.state, &self.client, doc).await;
        }
        self.refresh_pulled_diagnostics().await;
        let flags = self.state.flags();
        if flags.code_lens_refresh {
            let _ = self.client.code_lens_refresh().await;
        }
        if flags.inlay_hint_refresh {
            let _ = self.client.inlay_hint_refresh().await;
        }
    }

    /// Asks a client that pulls diagnostics to pull them again (their
    /// result ids changed without an edit: settings, project, a run).
    ///
    /// Sent to every client that pulls: the capability that says a client
    /// takes it is `workspace.diagnostics.refreshSupport` in the
    /// specification, but lsp-types 0.94 reads `workspace.diagnostic`, so
    /// the server cannot see it; a client without it answers with an error,
    /// which is ignored, and pulls again at its next edit.
    pub(super) async fn refresh_pulled_diagnostics(&self) {
        if self.state.flags().pull_diagnostics {
            let _ = self.client.workspace_diagnostic_refresh().await;
        }
    }

    /// The stand-in for a message that could not be decoded (see
    /// [`crate::lsp::transport`]): answered with the JSON-RPC error it deserves.
    pub async fn malformed_message(&self, params: Value) -> Result<Value> {
        let problem = params["problem"].as_str().unwrap_or("invalid");
        let (log, error) = if problem == "parse" {
            (
                "mapwright: received a message that is not JSON".to_string(),
                Error::parse_error(),
            )
        } else if let Some(method) = problem.strip_prefix("unknown: ") {
            (
                format!("mapwright: unknown request {method}"),
                Error {
                    code: ErrorCode::MethodNotFound,
                    message: format!("method not found: {method}").into(),
                    data: None,
                },
            )
        } else if let Some(what) = problem.strip_prefix("too large: ") {
            let text = format!("message too large: {what}; skipped");
            (
                format!("mapwright: {text}"),
                Error {
                    code: ErrorCode::InvalidRequest,
                    message: text.into(),
                    data: None,
                },
            )
        } else {
            (
                "mapwright: received JSON that is not a JSON-RPC message".to_string(),
                Error::invalid_request(),
            )
        };
        self.log(MessageType::ERROR, log).await;
        Err(error)
    }

    /// `mapwright/documentInfo`: version, encoding, project and settings.
    pub async fn document_info(&self, params: DocumentInfoParams) -> Result<Value> {
        let uri = params.text_document.uri;
        let doc = self.state.doc(&uri);
        let project = self.state.project(&uri);
        Ok(json!({
            "open": doc.is_some(),
            "version": doc.as_ref().map(|d| d.version),
            "positionEncoding": match self.state.encoding() {
                Encoding::Utf8 => "utf-8",
                Encoding::Utf16 => "utf-16",
            },
            "project": project.map(|p| json!({
                "path": (!p.path.as_os_str().is_empty()).then(|| p.path.display().to_string()),
                "app": p.app,
                "machine": p.machine,
            })),
            "settings": self.state.settings(),
            "workspaceFolders": self.state.folders().iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        }))
    }
}

/// Computes and publishes the diagnostics of `doc` if it is still the
/// current version (a newer version publishes its own). Nothing is pushed
/// to a client that pulls diagnostics (see [`super::pull`]).
pub(super) async fn publish(state: &Arc<State>, client: &Client, doc: Arc<Document>) {
    // Before the settings are final, nothing is published: `initialized`
    // republishes every open document once they are (see `State::set_ready`).
    if !state.is_current(&doc) || !state.is_ready() || state.flags().pull_diagnostics {
        return;
    }
    if let Some(outbox) = state.outbox() {
        // Written directly, reusing the JSON of unchanged diagnostics.
        let encode = {
            let (state, outbox) = (state.clone(), outbox.clone());
            move |doc: &Document, a: &Analysis, all: &[&mapwright_grammar::Diagnostic]| {
                let mut cache = state.publish_cache();
                let mut built = outbox.publish_builder(&doc.uri, cache.last_len());
                cache.encode(
                    &doc.uri,
                    doc.version,
                    &a.index,
                    all,
                    state.encoding(),
                    state.flags().diagnostic_fields,
                    built.items(),
                );
                Some(built)
            }
        };
        match collect_diagnostics(state, &doc, true, encode).await {
            Ok((built, more)) => {
                if state.is_current(&doc) {
                    // (None: diagnostics are off, an empty list clears them.)
                    let built = built.unwrap_or_else(|| PublishBuilder::new(&doc.uri, 0));
                    outbox.publish_built(built, &more, Some(doc.version));
                }
            }
            Err(msg) => log_diagnostics_error(client, &msg).await,
        }
        return;
    }
    match diagnostics_of(state, &doc, true).await {
        Ok(diags) => {
            if state.is_current(&doc) {
                send_diagnostics(state, client, &doc.uri, diags, Some(doc.version)).await;
            }
        }
        Err(msg) => log_diagnostics_error(client, &msg).await,
    }
}

/// Tells the client, in its log, that computing a document's diagnostics
/// failed (a caught panic or a failed blocking job): the server goes on.
async fn log_diagnostics_error(client: &Client, msg: &str) {
    client
        .log_message(
            MessageType::ERROR,
            format!("mapwright: internal error computing diagnostics: {msg}"),
        )
        .await
}

/// Sends `publishDiagnostics`: straight to the output when serving stdio
/// (see [`crate::lsp::outbox`]), else through tower-lsp.
async fn send_diagnostics(
    state: &State,
    client: &Client,
    uri: &Url,
    diags: Vec<Diagnostic>,
    version: Option<i32>,
) {
    match state.outbox() {
        Some(outbox) => outbox.publish_diagnostics(uri, &diags, version),
        None => {
            client
                .publish_diagnostics(uri.clone(), diags, version)
                .await
        }
    }
}

/// The diagnostics of `doc`, as published or pulled: the front end's, the
/// mapping resolution's when an application or machine is configured
/// (computed on the resolving thread, [`resolve_thread`]: resolution
/// verifies its quick fixes by resolving again), problems loading them, and AutoGuide's feedback of the
/// last `mapwright.run` of this version. With `skip_stale`, a version that
/// is no longer current gets none (a newer one publishes its own).
pub(super) async fn diagnostics_of(
    state: &Arc<State>,
    doc: &Arc<Document>,
    skip_stale: bool,
) -> std::result::Result<Vec<Diagnostic>, String> {
    let enc = state.encoding();
    let fields = state.flags().diagnostic_fields;
    let convert = move |doc: &Document, a: &Analysis, all: &[&mapwright_grammar::Diagnostic]| {
        all.iter()
            .map(|d| convert::diagnostic(&doc.uri, doc.version, &a.index, d, enc, fields, false))
            .collect::<Vec<_>>()
    };
    let (mut diags, more) = collect_diagnostics(state, doc, skip_stale, convert).await?;
    diags.extend(more);
    Ok(diags)
}

/// The parts of [`diagnostics_of`]: the merged diagnostics of the analysis
/// and the resolution as `convert` makes them (LSP diagnostics, or their
/// JSON when publishing directly), and the LSP diagnostics that follow
/// them (problems loading the target, a run's feedback).
async fn collect_diagnostics<T, F>(
    state: &Arc<State>,
    doc: &Arc<Document>,
    skip_stale: bool,
    convert: F,
) -> std::result::Result<(T, Vec<Diagnostic>), String>
where
    T: Default + Send + 'static,
    F: FnOnce(&Document, &Analysis, &[&mapwright_grammar::Diagnostic]) -> T + Send + 'static,
{
    let (enabled, max_published) = {
        let s = state.settings();
        (s.diagnostics.enable, s.diagnostics.max_published)
    };
    let target = if enabled {
        state.target(&doc.uri)
    } else {
        None
    };
    let project_uri = state
        .project(&doc.uri)
        .filter(|p| !p.path.as_os_str().is_empty())
        .and_then(|p| Url::from_file_path(&p.path).ok());
    let compute = {
        let doc = doc.clone();
        let target = target.clone();
        let state = state.clone();
        move || {
            guard::catch(move || {
                // A newer version may have arrived while this one waited
                // for the resolving thread: it publishes its own.
                if !enabled || (skip_stale && !state.is_current(&doc)) {
                    return (T::default(), Vec::new());
                }
                let a = doc.analysis();
                let resolution = target.as_ref().map(|t| doc.resolution(t));
                let all = merged_diagnostic_refs(&a, resolution.as_deref());
                // Too many for the editor: the most useful ones, and a note
                // counting the rest (see `publish_limit`).
                let chosen = publish_limit::select(
                    all,
                    max_published,
                    doc.focus,
                    &a.index,
                    doc.uri.as_str().len(),
                );
                let note = (chosen.omitted > 0)
                    .then(|| publish_limit::omitted_note(chosen.omitted, max_published));
                let mut sent = chosen.kept;
                if let Some(note) = &note {
                    sent.insert(0, note);
                }
                let converted = convert(&doc, &a, &sent);
                let more = match &target {
                    Some(t) => target_problems(t, project_uri.as_ref()),
                    None => Vec::new(),
                };
                (converted, more)
            })
        }
    };
    let (converted, mut more) = if target.is_some() {
        // The analysis is made here, on the worker, as without a target;
        // the resolving thread only resolves. (When resolving ran on
        // blocking threads, which come and go, a kept analysis made there
        // pinned that thread's allocator pages past its end: with 100
        // documents and an application, moving the analysis here took the
        // resident peak from 68-80 MB to 59-62 MB, see the memory runs in
        // README.md's git history.) (Not for a stale version: the job skips it.)
        // Where the analysis is made now, the resolution starts beside the
        // check (see `Document::analysis_resolving`), and the job below
        // finds it made.
        let held = match &target {
            Some(t) if enabled && (!skip_stale || state.is_current(doc)) => {
                let wanted = {
                    let (state, doc) = (state.clone(), doc.clone());
                    move || !skip_stale || state.is_current(&doc)
                };
                Some(guard::catch(|| doc.analysis_resolving(t, wanted))?)
            }
            _ => None,
        };
        let ready = target.as_ref().is_some_and(|t| doc.resolution_ready(t));
        let compute = move || {
            let out = compute();
            drop(held);
            out
        };
        if ready {
            // The resolution is made (beside the check, which is the
            // longer of the two on a big file): what is left (merging,
            // choosing and encoding the diagnostics) allocates little, and
            // is done here rather than handed to the resolving thread and
            // back, two thread wake-ups on every keystroke.
            compute()
        } else {
            // On the warm resolving thread, which gives memory back when
            // it idles (see `lsp::resolve_thread`). `compute` catches its
            // panics; an error here is one it did not.
            resolve_thread::run(compute).await.and_then(|r| r)
        }
    } else {
        compute()
    }?;
    if enabled {
        more.extend(state.run_feedback(&doc.uri, doc.version));
    }
    Ok((converted, more))
}

/// Problems loading the application or machine, as a warning on the first
/// character (pointing at the project file when there is one).
pub(super) fn target_problems(t: &Target, project: Option<&Url>) -> Vec<Diagnostic> {
    t.problems
        .iter()
        .map(|p| Diagnostic {
            range: Range::new(Position::new(0, 0), Position::new(0, 0)),
            severity: Some(DiagnosticSeverity::WARNING),
            code: Some(NumberOrString::String("project".into())),
            source: Some("mapwright".into()),
            message: format!("application/machine not loaded: {p}"),
            related_information: project.map(|u| {
                vec![DiagnosticRelatedInformation {
                    location: Location::new(u.clone(), Range::default()),
                    message: format!("configured in {PROJECT_FILE}"),
                }]
            }),
            ..Default::default()
        })
        .collect()
}
