//! The `LanguageServer` implementation: capability negotiation, document
//! sync, diagnostics publishing, and one thin handler per request.
//!
//! Every handler follows the same shape: take an owned snapshot of the
//! document (never a map guard), run the pure analysis under
//! [`guard::catch`], convert the result with [`proto`]. Notifications that
//! change state do so before their first `.await`, because tower-lsp polls
//! handlers concurrently and only the synchronous prefix runs in arrival
//! order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mapwright_grammar::line_index::Encoding;
use mapwright_grammar::Span;
use serde_json::{json, Value};
use tower_lsp::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp::lsp_types::*;
use tower_lsp::{Client, ClientSocket, LanguageServer, LspService};

use super::analysis::Analysis;
use super::code_actions::missing_machines;
use super::commands::{self, CommandArgs, Setup, Step};
use super::config::PROJECT_FILE;
use super::convert::{self, DiagnosticData, FixData};
use super::diff::minimal_edits;
use super::formatting::{format_document, format_selection};
use super::providers::{InlayQuery, Query};
use super::semantic_range;
use super::state::{Change, ClientFlags, Document, State};
use super::target::{merged_diagnostics, Resolution, Target};
use super::{
    folding, guard, navigation, on_type, proto, selection, semantic_tokens, signature, symbols,
};

/// The hidden command that panics on purpose, to prove a panic inside a
/// handler leaves the server running.
pub const DEBUG_PANIC_COMMAND: &str = "mapwright.debugPanic";

/// The custom request that reports what the server knows about a document.
pub const DOCUMENT_INFO_METHOD: &str = "mapwright/documentInfo";

/// Builds the service (the backend plus mapwright's custom methods) over
/// shared `state`.
pub fn service(state: Arc<State>) -> (LspService<Backend>, ClientSocket) {
    LspService::build(|client| Backend { client, state })
        .custom_method(DOCUMENT_INFO_METHOD, Backend::document_info)
        .custom_method(
            super::transport::MALFORMED_METHOD,
            Backend::malformed_message,
        )
        .custom_method(
            "window/workDoneProgress/cancel",
            Backend::work_done_progress_cancel,
        )
        .finish()
}

/// Wraps the service to signal `exit` the moment it arrives (tower-lsp
/// handles `exit` itself and only stops at the next message).
pub struct StopOnExit<S> {
    inner: S,
    exit: Arc<tokio::sync::Notify>,
}

impl<S> StopOnExit<S> {
    pub fn new(inner: S, exit: Arc<tokio::sync::Notify>) -> StopOnExit<S> {
        StopOnExit { inner, exit }
    }
}

impl<S> tower_service::Service<tower_lsp::jsonrpc::Request> for StopOnExit<S>
where
    S: tower_service::Service<tower_lsp::jsonrpc::Request>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::result::Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: tower_lsp::jsonrpc::Request) -> Self::Future {
        let is_exit = req.method() == "exit";
        let fut = self.inner.call(req);
        if is_exit {
            // `notify_one` stores a permit, so the signal is not lost if
            // the server is not waiting yet.
            self.exit.notify_one();
        }
        fut
    }
}

/// The language server.
pub struct Backend {
    client: Client,
    state: Arc<State>,
}

/// Parameters of `mapwright/documentInfo`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentInfoParams {
    pub text_document: TextDocumentIdentifier,
}

impl Backend {
    /// Runs `f` under `catch_unwind`; a panic becomes an internal-error
    /// response and an error in the client's log.
    async fn guarded<T>(&self, what: &str, f: impl FnOnce() -> T) -> Result<T> {
        match guard::catch(f) {
            Ok(v) => Ok(v),
            Err(msg) => {
                let text = format!("mapwright: internal error in {what}: {msg}");
                self.client.log_message(MessageType::ERROR, &text).await;
                Err(Error {
                    code: ErrorCode::InternalError,
                    message: text.into(),
                    data: None,
                })
            }
        }
    }

    /// The document and its analysis, for a request (`None` if the
    /// document is not open).
    /// The semantic tokens of the document's current version, encoded
    /// (`None`: the document is not open).
    async fn semantic_data(&self, uri: &Url) -> Result<Option<Arc<Vec<u32>>>> {
        let Some((_, a)) = self.snapshot(uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let data = self
            .guarded("semantic tokens", || {
                semantic_tokens::encode(&a, &semantic_tokens::classify(&a), enc)
            })
            .await?;
        Ok(Some(Arc::new(data)))
    }

    async fn snapshot(&self, uri: &Url) -> Result<Option<(Arc<Document>, Arc<Analysis>)>> {
        let Some(doc) = self.state.doc(uri) else {
            return Ok(None);
        };
        let analysis = self.guarded("analysis", || doc.analysis()).await?;
        Ok(Some((doc, analysis)))
    }

    /// Answers a request whose result depends on the exact text: if the
    /// document changed while it was computed, the client gets
    /// `ContentModified` and asks again, instead of edits for old text.
    fn unless_stale<T>(&self, doc: &Arc<Document>, value: T) -> Result<T> {
        if self.state.is_current(doc) {
            Ok(value)
        } else {
            Err(Error {
                code: ErrorCode::ContentModified,
                message: "the document changed while the request ran".into(),
                data: None,
            })
        }
    }

    fn query<'a>(
        &self,
        a: &'a Analysis,
        project: Option<&'a super::config::ProjectConfig>,
        target: Option<&'a Target>,
        resolution: Option<&'a Resolution>,
        pos: Position,
    ) -> Query<'a> {
        Query {
            analysis: a,
            project,
            target,
            resolution,
            offset: convert::offset(&a.index, pos, self.state.encoding()),
        }
    }

    /// The target of `uri` and the resolution of `doc` against it (computed
    /// now if no diagnostics run computed it yet).
    async fn resolution(
        &self,
        doc: &Arc<Document>,
    ) -> Result<(Option<Arc<Target>>, Option<Arc<Resolution>>)> {
        let Some(target) = self.state.target(&doc.uri) else {
            return Ok((None, None));
        };
        let r = self
            .guarded("mapping resolution", || doc.resolution(&target))
            .await?;
        Ok((Some(target), Some(r)))
    }

    async fn log(&self, ty: MessageType, text: impl Into<String>) {
        self.client.log_message(ty, text.into()).await;
    }

    /// Finds and loads the project file of `uri`, logging problems.
    async fn refresh_project(&self, uri: &Url) {
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
    async fn pull_configuration(&self) {
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
    async fn republish_all(&self) {
        for doc in self.state.all_docs() {
            publish(&self.state, &self.client, doc).await;
        }
        let flags = self.state.flags();
        if flags.code_lens_refresh {
            let _ = self.client.code_lens_refresh().await;
        }
        if flags.inlay_hint_refresh {
            let _ = self.client.inlay_hint_refresh().await;
        }
    }

    /// The stand-in for a message that could not be decoded (see
    /// [`super::transport`]): answered with the JSON-RPC error it deserves.
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
/// current version (a newer version publishes its own): the front end's,
/// the mapping resolution's when an application or machine is configured
/// (computed on a blocking thread: resolution verifies its quick fixes by
/// resolving again), problems loading them, and AutoGuide's feedback of the
/// last `mapwright.run` of this version.
async fn publish(state: &Arc<State>, client: &Client, doc: Arc<Document>) {
    // Before the settings are final, nothing is published: `initialized`
    // republishes every open document once they are (see `State::set_ready`).
    if !state.is_current(&doc) || !state.is_ready() {
        return;
    }
    let enc = state.encoding();
    let flags = state.flags();
    let enabled = state.settings().diagnostics.enable;
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
            guard::catch(|| {
                // A newer version may have arrived while this one waited
                // for a blocking thread: it publishes its own.
                if !enabled || !state.is_current(&doc) {
                    return Vec::new();
                }
                let a = doc.analysis();
                let resolution = target.as_ref().map(|t| doc.resolution(t));
                let all = merged_diagnostics(&a, resolution.as_deref());
                let mut out = convert::diagnostics(
                    &doc.uri,
                    doc.version,
                    &a.index,
                    &all,
                    enc,
                    flags.related_information,
                );
                if let Some(t) = &target {
                    out.extend(target_problems(t, project_uri.as_ref()));
                }
                out
            })
        }
    };
    let result = if target.is_some() {
        match tokio::task::spawn_blocking(compute).await {
            Ok(r) => r,
            Err(e) => Err(e.to_string()),
        }
    } else {
        compute()
    };
    match result {
        Ok(mut diags) => {
            if enabled {
                diags.extend(state.run_feedback(&doc.uri, doc.version));
            }
            if state.is_current(&doc) {
                client
                    .publish_diagnostics(doc.uri.clone(), diags, Some(doc.version))
                    .await;
            }
        }
        Err(msg) => {
            client
                .log_message(
                    MessageType::ERROR,
                    format!("mapwright: internal error computing diagnostics: {msg}"),
                )
                .await
        }
    }
}

/// Problems loading the application or machine, as a warning on the first
/// character (pointing at the project file when there is one).
fn target_problems(t: &Target, project: Option<&Url>) -> Vec<Diagnostic> {
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

/// Reads what the client can do.
fn client_flags(caps: &ClientCapabilities) -> ClientFlags {
    let text = caps.text_document.as_ref();
    let workspace = caps.workspace.as_ref();
    ClientFlags {
        snippets: text
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.snippet_support)
            .unwrap_or(false),
        related_information: text
            .and_then(|t| t.publish_diagnostics.as_ref())
            .and_then(|p| p.related_information)
            .unwrap_or(false),
        // (A match rather than `Option::is_none_or`, which is newer than
        // the workspace's minimum Rust.)
        markdown: match text
            .and_then(|t| t.hover.as_ref())
            .and_then(|h| h.content_format.as_ref())
        {
            Some(formats) => formats.contains(&MarkupKind::Markdown),
            None => true,
        },
        configuration: workspace.and_then(|w| w.configuration).unwrap_or(false),
        watched_files_dynamic: workspace
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false),
        line_folding_only: text
            .and_then(|t| t.folding_range.as_ref())
            .and_then(|f| f.line_folding_only)
            .unwrap_or(false),
        work_done_progress: caps
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false),
        show_document: caps
            .window
            .as_ref()
            .and_then(|w| w.show_document.as_ref())
            .is_some_and(|d| d.support),
        apply_edit: workspace.and_then(|w| w.apply_edit).unwrap_or(false),
        document_changes: workspace
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false),
        create_files: workspace
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.resource_operations.as_ref())
            .is_some_and(|ops| ops.contains(&ResourceOperationKind::Create)),
        code_lens_refresh: workspace
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false),
        inlay_hint_refresh: workspace
            .and_then(|w| w.inlay_hint.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false),
    }
}

/// UTF-8 if the client offers it (no conversion needed), else UTF-16, the
/// protocol's default that every client supports.
fn negotiate_encoding(caps: &ClientCapabilities) -> Encoding {
    let offered = caps
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(list) if list.contains(&PositionEncodingKind::UTF8) => Encoding::Utf8,
        _ => Encoding::Utf16,
    }
}

fn capabilities(enc: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(convert::encoding_kind(enc)),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                will_save: None,
                will_save_wait_until: None,
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
            },
        )),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into()]),
            ..Default::default()
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec!["(".into(), ",".into()]),
            retrigger_characters: Some(vec![",".into()]),
            work_done_progress_options: Default::default(),
        }),
        definition_provider: Some(OneOf::Left(true)),
        declaration_provider: Some(DeclarationCapability::Simple(true)),
        selection_range_provider: Some(SelectionRangeProviderCapability::Simple(true)),
        document_on_type_formatting_provider: Some(on_type::capability()),
        references_provider: Some(OneOf::Left(true)),
        document_highlight_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::SOURCE,
                CodeActionKind::new(SOURCE_FORMAT),
                CodeActionKind::new(SOURCE_ADD_MACHINE),
                CodeActionKind::new(SOURCE_EXPLAIN),
                CodeActionKind::new(SOURCE_OPTIMIZE),
            ]),
            ..Default::default()
        })),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_range_formatting_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: semantic_tokens::TOKEN_TYPES
                        .iter()
                        .map(|t| SemanticTokenType::new(t))
                        .collect(),
                    token_modifiers: semantic_tokens::TOKEN_MODIFIERS
                        .iter()
                        .map(|m| SemanticTokenModifier::new(m))
                        .collect(),
                },
                full: Some(SemanticTokensFullOptions::Delta { delta: Some(true) }),
                range: Some(true),
                work_done_progress_options: Default::default(),
            },
        )),
        inlay_hint_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            // The debug command is deliberately not advertised.
            commands: commands::COMMANDS.iter().map(|c| c.to_string()).collect(),
            work_done_progress_options: WorkDoneProgressOptions {
                work_done_progress: Some(true),
            },
        }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        ..Default::default()
    }
}

/// Kind of the "Format" source action.
const SOURCE_FORMAT: &str = "source.format";
/// Kind of the "Add missing `mgpu = Machine(GPU);`" source action.
const SOURCE_ADD_MACHINE: &str = "source.addMissingMachine";
/// Kind of the "Explain mapping decisions" source action.
const SOURCE_EXPLAIN: &str = "source.explainMapping";
/// Kind of the "Optimize this mapper" source action.
const SOURCE_OPTIMIZE: &str = "source.optimizeMapper";

/// True if an action of `kind` passes the request's `only` filter (a filter
/// entry matches its own kind and every sub-kind: `source` matches
/// `source.format`).
fn kind_allowed(only: &Option<Vec<CodeActionKind>>, kind: &CodeActionKind) -> bool {
    match only {
        None => true,
        Some(list) => list.iter().any(|o| {
            let (o, k) = (o.as_str(), kind.as_str());
            k == o || k.starts_with(&format!("{o}."))
        }),
    }
}

#[tower_lsp::async_trait]
impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let enc = negotiate_encoding(&params.capabilities);
        self.state.set_encoding(enc);
        self.state.set_flags(client_flags(&params.capabilities));
        let mut folders: Vec<std::path::PathBuf> = params
            .workspace_folders
            .iter()
            .flatten()
            .filter_map(|f| f.uri.to_file_path().ok())
            .collect();
        #[allow(deprecated)] // `rootUri` is what older clients (Neovim 0.7) send.
        if folders.is_empty() {
            if let Some(root) = params.root_uri.as_ref().and_then(|u| u.to_file_path().ok()) {
                folders.push(root);
            }
        }
        self.state.set_folders(folders);
        let mut warning = None;
        if let Some(options) = &params.initialization_options {
            if let Err(e) = self.state.update_settings(options) {
                warning = Some(e);
            }
        }
        if let Some(w) = warning {
            self.log(MessageType::WARNING, format!("mapwright: {w}"))
                .await;
        }
        if let Some(pid) = params.process_id {
            tokio::spawn(super::lifecycle::watch_parent(pid, self.state.clone()));
        }
        {
            // A client that never sends `initialized` (or never answers the
            // configuration pull) still gets diagnostics, a little later.
            let state = self.state.clone();
            let client = self.client.clone();
            tokio::spawn(async move {
                tokio::time::sleep(super::lifecycle::READY_FALLBACK).await;
                if !state.is_ready() {
                    state.set_ready();
                    for doc in state.all_docs() {
                        publish(&state, &client, doc).await;
                    }
                }
            });
        }
        Ok(InitializeResult {
            capabilities: capabilities(enc),
            server_info: Some(ServerInfo {
                name: "mapwright".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        if self.state.flags().watched_files_dynamic {
            let options = DidChangeWatchedFilesRegistrationOptions {
                watchers: vec![
                    FileSystemWatcher {
                        glob_pattern: GlobPattern::String(format!("**/{PROJECT_FILE}")),
                        kind: None,
                    },
                    // Application and machine descriptions named by path.
                    FileSystemWatcher {
                        glob_pattern: GlobPattern::String("**/*.{json,toml}".into()),
                        kind: None,
                    },
                ],
            };
            let registration = Registration {
                id: "mapwright-project-files".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: serde_json::to_value(options).ok(),
            };
            if let Err(e) = self.client.register_capability(vec![registration]).await {
                self.log(
                    MessageType::WARNING,
                    format!("mapwright: cannot watch {PROJECT_FILE} files: {e}"),
                )
                .await;
            }
        }
        self.pull_configuration().await;
        let enc = match self.state.encoding() {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
        };
        self.log(
            MessageType::INFO,
            format!(
                "mapwright {} ready (position encoding {enc})",
                env!("CARGO_PKG_VERSION")
            ),
        )
        .await;
        // Documents opened before the configuration arrived get diagnostics
        // with the final settings (the first time: see `publish`).
        self.state.set_ready();
        self.republish_all().await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.state.set_shutdown();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
        let doc = self.state.open(d.uri.clone(), d.version, d.text);
        self.refresh_project(&d.uri).await;
        publish(&self.state, &self.client, doc).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
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

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        if let Some(doc) = self.state.doc(&params.text_document.uri) {
            publish(&self.state, &self.client, doc).await;
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.state.close(&uri);
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
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

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
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

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
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

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let pos = params.text_document_position;
        let Some((_, a)) = self.snapshot(&pos.text_document.uri).await? else {
            return Ok(None);
        };
        let project = self.state.project(&pos.text_document.uri);
        let target = self.state.target(&pos.text_document.uri);
        let snippets = self.state.flags().snippets && self.state.settings().completion.snippets;
        let enc = self.state.encoding();
        self.guarded("completion", || {
            let q = self.query(
                &a,
                project.as_deref(),
                target.as_deref(),
                None,
                pos.position,
            );
            let c = self.state.providers.complete(&q);
            Some(proto::completion(&a, c, enc, snippets))
        })
        .await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let pos = params.text_document_position_params;
        let Some((doc, a)) = self.snapshot(&pos.text_document.uri).await? else {
            return Ok(None);
        };
        let project = self.state.project(&pos.text_document.uri);
        let (target, resolution) = self.resolution(&doc).await?;
        let (enc, markdown) = (self.state.encoding(), self.state.flags().markdown);
        self.guarded("hover", || {
            let q = self.query(
                &a,
                project.as_deref(),
                target.as_deref(),
                resolution.as_deref(),
                pos.position,
            );
            self.state
                .providers
                .hover(&q)
                .map(|h| proto::hover(&a, h, enc, markdown))
        })
        .await
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let pos = params.text_document_position_params;
        let Some((_, a)) = self.snapshot(&pos.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        self.guarded("signature help", || {
            let offset = convert::offset(&a.index, pos.position, enc);
            signature::signature_help(&a, offset).map(proto::signature_help)
        })
        .await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let pos = params.text_document_position_params;
        let uri = pos.text_document.uri;
        let Some((_, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        self.guarded("go to definition", || {
            let offset = convert::offset(&a.index, pos.position, enc);
            let defs = navigation::definition(&a, offset);
            let locs = proto::locations(&a, &uri, &defs, enc);
            match locs.len() {
                0 => None,
                1 => locs.into_iter().next().map(GotoDefinitionResponse::Scalar),
                _ => Some(GotoDefinitionResponse::Array(locs)),
            }
        })
        .await
    }

    async fn goto_declaration(
        &self,
        params: request::GotoDeclarationParams,
    ) -> Result<Option<request::GotoDeclarationResponse>> {
        let pos = params.text_document_position_params;
        let Some((_, a)) = self.snapshot(&pos.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        self.guarded("go to declaration", || {
            let offset = convert::offset(&a.index, pos.position, enc);
            let span = selection::declaration(&a, offset)?;
            let locs = proto::locations(&a, &pos.text_document.uri, &[span], enc);
            locs.into_iter()
                .next()
                .map(request::GotoDeclarationResponse::Scalar)
        })
        .await
    }

    async fn selection_range(
        &self,
        params: SelectionRangeParams,
    ) -> Result<Option<Vec<SelectionRange>>> {
        let Some((_, a)) = self.snapshot(&params.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        self.guarded("selection ranges", || {
            let ranges = params.positions.iter().map(|p| {
                let offset = convert::offset(&a.index, *p, enc);
                let spans = selection::selection_spans(&a, offset);
                // Built outermost first, each the parent of the next.
                spans.iter().rev().fold(None, |parent, span| {
                    Some(SelectionRange {
                        range: convert::range(&a.index, *span, enc),
                        parent: parent.map(Box::new),
                    })
                })
            });
            ranges.collect::<Option<Vec<_>>>()
        })
        .await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let pos = params.text_document_position;
        let uri = pos.text_document.uri;
        let Some((_, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let include = params.context.include_declaration;
        self.guarded("references", || {
            let offset = convert::offset(&a.index, pos.position, enc);
            let spans = navigation::references(&a, offset, include);
            (!spans.is_empty()).then(|| proto::locations(&a, &uri, &spans, enc))
        })
        .await
    }

    async fn document_highlight(
        &self,
        params: DocumentHighlightParams,
    ) -> Result<Option<Vec<DocumentHighlight>>> {
        let pos = params.text_document_position_params;
        let Some((_, a)) = self.snapshot(&pos.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        self.guarded("document highlight", || {
            let offset = convert::offset(&a.index, pos.position, enc);
            let hs = navigation::highlights(&a, offset);
            (!hs.is_empty()).then(|| proto::highlights(&a, &hs, enc))
        })
        .await
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        let Some((_, a)) = self.snapshot(&params.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        self.guarded("prepare rename", || {
            let offset = convert::offset(&a.index, params.position, enc);
            navigation::prepare_rename(&a, offset).map(|(span, name)| {
                PrepareRenameResponse::RangeWithPlaceholder {
                    range: convert::range(&a.index, span, enc),
                    placeholder: name,
                }
            })
        })
        .await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let pos = params.text_document_position;
        let uri = pos.text_document.uri;
        let Some((doc, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let result = self
            .guarded("rename", || {
                let offset = convert::offset(&a.index, pos.position, enc);
                navigation::rename(&a, offset, &params.new_name).map(|edits| {
                    let edits: Vec<TextEdit> = edits
                        .into_iter()
                        .map(|(s, t)| TextEdit::new(convert::range(&a.index, s, enc), t))
                        .collect();
                    proto::workspace_edit(&uri, edits)
                })
            })
            .await?;
        match result {
            Ok(edit) => self.unless_stale(&doc, Some(edit)),
            Err(why) => Err(Error::invalid_params(why)),
        }
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let Some((_, a)) = self.snapshot(&params.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        self.guarded("document symbols", || {
            let items = symbols::outline(&a)
                .into_iter()
                .map(|i| proto::document_symbol(&a, i, enc))
                .collect();
            Some(DocumentSymbolResponse::Nested(items))
        })
        .await
    }

    #[allow(deprecated)] // `SymbolInformation::deprecated` must be set.
    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<Vec<SymbolInformation>>> {
        let docs = self.state.all_docs();
        let enc = self.state.encoding();
        self.guarded("workspace symbols", || {
            let mut out = Vec::new();
            for doc in docs {
                let a = doc.analysis();
                for item in symbols::outline(&a) {
                    let searchable = matches!(
                        item.kind,
                        symbols::OutlineKind::Function | symbols::OutlineKind::Global
                    );
                    if searchable && symbols::matches_query(&params.query, &item.name) {
                        out.push(SymbolInformation {
                            name: item.name,
                            kind: proto::symbol_kind(item.kind),
                            tags: None,
                            deprecated: None,
                            location: Location::new(
                                doc.uri.clone(),
                                convert::range(&a.index, item.selection, enc),
                            ),
                            container_name: None,
                        });
                    }
                }
            }
            Some(out)
        })
        .await
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        let Some((_, a)) = self.snapshot(&params.text_document.uri).await? else {
            return Ok(None);
        };
        self.guarded("folding ranges", || {
            Some(
                folding::folds(&a)
                    .into_iter()
                    .map(proto::folding_range)
                    .collect(),
            )
        })
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let uri = params.text_document.uri;
        let Some(data) = self.semantic_data(&uri).await? else {
            return Ok(None);
        };
        let id = self.state.store_semantic(&uri, data.clone());
        Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
            result_id: Some(id),
            data: proto::semantic_tokens(&data),
        })))
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        let Some((_, a)) = self.snapshot(&params.text_document.uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let data = self
            .guarded("semantic tokens of a range", || {
                let range = convert::span(&a.index, params.range, enc);
                semantic_range::tokens_in_range(&a, range, enc)
            })
            .await?;
        Ok(Some(SemanticTokensRangeResult::Tokens(SemanticTokens {
            result_id: None,
            data: proto::semantic_tokens(&data),
        })))
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri;
        let Some(data) = self.semantic_data(&uri).await? else {
            return Ok(None);
        };
        let previous = self.state.semantic_result(&uri);
        let id = self.state.store_semantic(&uri, data.clone());
        match previous {
            Some((prev_id, prev)) if prev_id == params.previous_result_id => {
                let edits = semantic_tokens::delta(&prev, &data)
                    .into_iter()
                    .map(|e| SemanticTokensEdit {
                        start: e.start,
                        delete_count: e.delete_count,
                        data: Some(proto::semantic_tokens(&e.data)),
                    })
                    .collect();
                Ok(Some(SemanticTokensFullDeltaResult::TokensDelta(
                    SemanticTokensDelta {
                        result_id: Some(id),
                        edits,
                    },
                )))
            }
            // Unknown previous result: send everything.
            _ => Ok(Some(SemanticTokensFullDeltaResult::Tokens(
                SemanticTokens {
                    result_id: Some(id),
                    data: proto::semantic_tokens(&data),
                },
            ))),
        }
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri;
        let Some((doc, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let project = self.state.project(&uri);
        let (target, resolution) = self.resolution(&doc).await?;
        let enc = self.state.encoding();
        let settings = self.state.settings().inlay_hints;
        self.guarded("inlay hints", || {
            let range = convert::span(&a.index, params.range, enc);
            let q = InlayQuery {
                analysis: &a,
                project: project.as_deref(),
                target: target.as_deref(),
                resolution: resolution.as_deref(),
                range,
            };
            let hints = self
                .state
                .providers
                .inlay_hints(&q)
                .into_iter()
                .filter(|h| {
                    settings.parameter_names || h.kind != super::inlay::InlayKind::Parameter
                })
                .map(|h| proto::inlay_hint(&a, h, enc))
                .collect();
            Some(hints)
        })
        .await
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
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

    async fn range_formatting(
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

    async fn on_type_formatting(
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

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let Some((doc, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let target = self.state.target(&uri);
        let resolution = target.as_ref().and_then(|t| doc.cached_resolution(t));
        let has_app = target.as_ref().is_some_and(|t| t.app.is_some());
        let actions = self
            .guarded("code actions", || {
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
        self.unless_stale(&doc, Some(actions))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        if self.state.doc(&uri).is_none() {
            return Ok(None);
        }
        let Some(target) = self.state.target(&uri).filter(|t| t.app.is_some()) else {
            return Ok(None);
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
        let machine = target.machine_name().to_string();
        Ok(Some(vec![
            lens(
                format!(
                    "Optimize this mapper ({proposer}, {} iterations)",
                    settings.optimize.iterations
                ),
                commands::OPTIMIZE,
                false,
            ),
            lens(format!("Run on {machine}"), commands::RUN, false),
            lens(
                "Explain mapping decisions".to_string(),
                commands::EXPLAIN,
                true,
            ),
        ]))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        // A command sent right after `initialized` runs with the configured
        // settings, not the defaults (see `State::set_ready`).
        self.state
            .wait_ready(super::lifecycle::READY_FALLBACK)
            .await;
        let command = params.command.as_str();
        match command {
            DEBUG_PANIC_COMMAND => {
                self.guarded("mapwright.debugPanic", || -> Option<Value> {
                    panic!("mapwright.debugPanic was called (deliberate panic)")
                })
                .await
            }
            commands::EXPLAIN | commands::RUN | commands::OPTIMIZE => {
                let args = commands::parse_args(&params.arguments)
                    .map_err(|e| Error::invalid_params(format!("{command}: {e}")))?;
                let result = match command {
                    commands::EXPLAIN => self.explain(args).await,
                    commands::RUN => self.run_mapper(args).await,
                    _ => {
                        self.optimize(args, params.work_done_progress_params.work_done_token)
                            .await
                    }
                };
                if let Err(e) = &result {
                    self.log(
                        MessageType::WARNING,
                        format!("mapwright: {command} failed: {}", e.message),
                    )
                    .await;
                }
                result
            }
            other => Err(Error::invalid_params(format!("unknown command `{other}`"))),
        }
    }
}

/// The source actions that run a command: "Explain mapping decisions" and
/// "Optimize this mapper".
fn command_actions(uri: &Url, only: &Option<Vec<CodeActionKind>>) -> Vec<CodeActionOrCommand> {
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

/// The key of a progress token in the state's cancel table.
fn token_key(t: &ProgressToken) -> String {
    match t {
        NumberOrString::Number(n) => format!("#{n}"),
        NumberOrString::String(s) => s.clone(),
    }
}

/// Cleans up after `mapwright.optimize` however its future ends: marks the
/// document free, forgets the progress token, and if the request was
/// dropped before it finished (`$/cancelRequest`), stops the loop and ends
/// the progress.
struct Running {
    state: Arc<State>,
    client: Client,
    uri: Url,
    token: Option<ProgressToken>,
    cancel: Arc<AtomicBool>,
    done: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.state.stop_optimizing(&self.uri);
        if let Some(t) = &self.token {
            self.state.end_progress(&token_key(t));
        }
        if self.done {
            return;
        }
        self.cancel.store(true, Ordering::SeqCst);
        if let (Some(token), Ok(handle)) =
            (self.token.clone(), tokio::runtime::Handle::try_current())
        {
            let client = self.client.clone();
            handle.spawn(async move {
                client
                    .send_notification::<notification::Progress>(ProgressParams {
                        token,
                        value: ProgressParamsValue::WorkDone(WorkDoneProgress::End(
                            WorkDoneProgressEnd {
                                message: Some("cancelled".into()),
                            },
                        )),
                    })
                    .await;
            });
        }
    }
}

impl Backend {
    /// `window/workDoneProgress/cancel`: stops the work behind the token.
    pub async fn work_done_progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        let key = token_key(&params.token);
        if !self.state.cancel_progress(&key) {
            self.log(
                MessageType::INFO,
                format!("mapwright: cancel for unknown progress token {key}"),
            )
            .await;
        }
    }

    /// The open document at `uri`, or an error for the command.
    fn open_doc(&self, uri: &Url) -> Result<Arc<Document>> {
        self.state
            .doc(uri)
            .ok_or_else(|| Error::invalid_params(format!("{uri} is not open")))
    }

    /// What a run of `uri` needs (settings and project file), or why not.
    fn setup(&self, uri: &Url) -> Result<Setup> {
        let target = self.state.target(uri);
        let project = self.state.project(uri);
        Setup::new(
            target.as_deref(),
            project.as_deref(),
            &self.state.settings(),
        )
        .map_err(Error::invalid_params)
    }

    /// Runs `f` on a blocking thread under [`guard::catch`]; a panic
    /// becomes an internal error (logged).
    async fn blocking<T: Send + 'static>(
        &self,
        what: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let msg = match tokio::task::spawn_blocking(move || guard::catch(f)).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(m)) => m,
            Err(e) => e.to_string(),
        };
        let text = format!("mapwright: internal error in {what}: {msg}");
        self.log(MessageType::ERROR, &text).await;
        Err(Error {
            code: ErrorCode::InternalError,
            message: text.into(),
            data: None,
        })
    }

    /// Shows a command's text: as a document when the client can open one
    /// (written under `.mapwright/` next to the mapper), else as a message.
    async fn show_text(&self, uri: &Url, name: &str, text: &str) {
        if self.state.flags().show_document {
            if let Ok(path) = uri.to_file_path() {
                let stem = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "mapper".into());
                let dir = path
                    .parent()
                    .unwrap_or(std::path::Path::new("."))
                    .join(".mapwright");
                let file = dir.join(format!("{stem}.{name}.txt"));
                let written =
                    std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, text));
                if let (Ok(()), Ok(file_uri)) = (written, Url::from_file_path(&file)) {
                    let shown = self
                        .client
                        .show_document(ShowDocumentParams {
                            uri: file_uri,
                            external: Some(false),
                            take_focus: Some(true),
                            selection: None,
                        })
                        .await;
                    if matches!(shown, Ok(true)) {
                        return;
                    }
                }
            }
        }
        self.client.show_message(MessageType::INFO, text).await;
    }

    /// `mapwright.explain`: the decisions as text (`text`, `summary`).
    async fn explain(&self, args: CommandArgs) -> Result<Option<Value>> {
        let doc = self.open_doc(&args.uri)?;
        let setup = self.setup(&args.uri)?;
        let target = self
            .state
            .target(&args.uri)
            .ok_or_else(|| Error::invalid_params("no application is configured"))?;
        let d = doc.clone();
        let text = self
            .blocking("mapwright.explain", move || {
                let r = d.resolution(&target);
                r.decisions.as_ref().map(|decisions| {
                    mapwright_runtime::resolve_mapping::render_decisions(
                        decisions,
                        &d.text,
                        &setup.app,
                        &setup.machine,
                    )
                })
            })
            .await?
            .ok_or_else(|| Error::invalid_params("the mapping could not be resolved"))?;
        if args.show {
            self.show_text(&args.uri, "explain", &text).await;
        }
        let summary = text.lines().take(2).collect::<Vec<_>>().join("; ");
        Ok(Some(json!({
            "text": text,
            "summary": summary,
            "version": doc.version,
        })))
    }

    /// `mapwright.run`: runs the mapper once; shows the result as a message
    /// and AutoGuide's feedback as diagnostics until the next edit.
    async fn run_mapper(&self, args: CommandArgs) -> Result<Option<Value>> {
        let doc = self.open_doc(&args.uri)?;
        let setup = self.setup(&args.uri)?;
        let text = doc.text.clone();
        let result = self
            .blocking("mapwright.run", move || commands::run_once(&setup, &text))
            .await?
            .map_err(Error::invalid_params)?;
        let diags =
            commands::feedback_diagnostics(&doc.text, doc.version, &result, self.state.encoding());
        self.state.set_run_feedback(&doc.uri, doc.version, diags);
        publish(&self.state, &self.client, doc.clone()).await;
        let ty = if result.ok() {
            MessageType::INFO
        } else {
            MessageType::WARNING
        };
        self.client
            .show_message(ty, format!("Mapper run: {}", result.summary))
            .await;
        Ok(Some(result.to_json()))
    }

    async fn progress(&self, token: &Option<ProgressToken>, value: WorkDoneProgress) {
        if let Some(token) = token {
            self.client
                .send_notification::<notification::Progress>(ProgressParams {
                    token: token.clone(),
                    value: ProgressParamsValue::WorkDone(value),
                })
                .await;
        }
    }

    /// The token to report progress with: the client's, or one the server
    /// creates when the client supports that; its cancel flag is `cancel`.
    async fn progress_token(
        &self,
        given: Option<ProgressToken>,
        cancel: &Arc<AtomicBool>,
    ) -> Option<ProgressToken> {
        let token = match given {
            Some(t) => t,
            None if self.state.flags().work_done_progress => {
                let t =
                    NumberOrString::String(self.state.next_progress_token("mapwright-optimize"));
                let created = self
                    .client
                    .send_request::<request::WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                        token: t.clone(),
                    })
                    .await;
                if let Err(e) = created {
                    self.log(
                        MessageType::WARNING,
                        format!("mapwright: window/workDoneProgress/create failed: {e}"),
                    )
                    .await;
                    return None;
                }
                t
            }
            None => return None,
        };
        self.state
            .register_progress(token_key(&token), cancel.clone());
        Some(token)
    }

    /// `mapwright.optimize`: the optimizer loop in the background with
    /// progress, then the best mapper applied as one edit of minimal text
    /// changes if the document did not change meanwhile, else offered as a
    /// new document.
    async fn optimize(
        &self,
        args: CommandArgs,
        given_token: Option<ProgressToken>,
    ) -> Result<Option<Value>> {
        let uri = args.uri.clone();
        let doc = self.open_doc(&uri)?;
        let setup = self.setup(&uri)?;
        // Configuration problems are reported before anything starts.
        setup.proposer().map_err(Error::invalid_params)?;
        setup.executor().map_err(Error::invalid_params)?;
        let cancel = Arc::new(AtomicBool::new(false));
        if !self.state.start_optimizing(&uri, cancel.clone()) {
            return Err(Error::invalid_params(format!(
                "{uri} is already being optimized"
            )));
        }
        let token = self.progress_token(given_token, &cancel).await;
        let mut running = Running {
            state: self.state.clone(),
            client: self.client.clone(),
            uri: uri.clone(),
            token: token.clone(),
            cancel: cancel.clone(),
            done: false,
        };
        self.progress(
            &token,
            WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: "Optimizing mapper".into(),
                cancellable: Some(true),
                message: Some(format!(
                    "{} · {} iterations · {} on {} ({})",
                    setup.proposer,
                    setup.optimize.iterations,
                    setup.app.name,
                    setup.machine.name,
                    setup.runtime_name()
                )),
                percentage: Some(0),
            }),
        )
        .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Step>();
        let text = doc.text.clone();
        let path = uri.to_file_path().ok();
        let loop_setup = setup.clone();
        let loop_cancel = cancel.clone();
        let handle = tokio::task::spawn_blocking(move || {
            guard::catch(move || {
                let mut step = |s: Step| {
                    let _ = tx.send(s);
                };
                commands::optimize_blocking(
                    &loop_setup,
                    &text,
                    path.as_deref(),
                    loop_cancel,
                    &mut step,
                )
            })
        });
        while let Some(step) = rx.recv().await {
            self.progress(
                &token,
                WorkDoneProgress::Report(WorkDoneProgressReport {
                    cancellable: Some(true),
                    message: Some(step.message()),
                    percentage: Some(step.percentage()),
                }),
            )
            .await;
        }
        let failure = match handle.await {
            Ok(Ok(Ok(optimized))) => {
                let value = self.finish_optimize(&doc, &setup, optimized).await;
                let summary = value["summary"].as_str().unwrap_or("done").to_string();
                self.progress(
                    &token,
                    WorkDoneProgress::End(WorkDoneProgressEnd {
                        message: Some(summary),
                    }),
                )
                .await;
                running.done = true;
                return Ok(Some(value));
            }
            Ok(Ok(Err(msg))) => Error::invalid_params(msg),
            Ok(Err(panic)) => Error {
                code: ErrorCode::InternalError,
                message: format!("mapwright: internal error in mapwright.optimize: {panic}").into(),
                data: None,
            },
            Err(join) => Error {
                code: ErrorCode::InternalError,
                message: format!("mapwright: internal error in mapwright.optimize: {join}").into(),
                data: None,
            },
        };
        self.progress(
            &token,
            WorkDoneProgress::End(WorkDoneProgressEnd {
                message: Some(failure.message.to_string()),
            }),
        )
        .await;
        running.done = true;
        Err(failure)
    }

    /// Applies or offers the best mapper; returns the command's result.
    async fn finish_optimize(
        &self,
        doc: &Arc<Document>,
        setup: &Setup,
        optimized: commands::Optimized,
    ) -> Value {
        let report = &optimized.report;
        let best = report.best_mapper.clone();
        let initial = report.records.first().and_then(|r| r.normalized);
        let candidates = report.records.len().saturating_sub(1);
        let mut new_document: Option<Url> = None;
        let mut applied = false;
        let summary = if report.cancelled {
            format!(
                "cancelled after {candidates} candidate(s); the mapper was left unchanged (best so far {})",
                commands::times(report.best_normalized)
            )
        } else if !report.improved() || best == doc.text {
            format!(
                "no candidate beat the mapper as written ({} the expert mapper after {candidates} candidate(s)); nothing to apply",
                commands::times(initial)
            )
        } else {
            let current = self.state.doc(&doc.uri);
            let result = match &current {
                Some(c) if c.version == doc.version => self.apply_in_place(doc, &best).await,
                Some(c) => Err(format!(
                    "the mapper changed while the optimizer ran (version {} -> {})",
                    doc.version, c.version
                )),
                None => Err("the mapper was closed while the optimizer ran".to_string()),
            };
            match result {
                Ok(()) => {
                    applied = true;
                    format!(
                        "applied the best mapper (iteration {}): {} the expert mapper, was {}",
                        report.best_iteration,
                        commands::times(report.best_normalized),
                        commands::times(initial)
                    )
                }
                Err(why) => {
                    new_document = self.offer_document(&doc.uri, &best).await;
                    let offered = match &new_document {
                        Some(u) => format!("; it is offered as {u}"),
                        None => "; it is in the command's result".to_string(),
                    };
                    format!(
                        "{why}, so the best mapper (iteration {}, {} the expert mapper) was not applied{offered}",
                        report.best_iteration,
                        commands::times(report.best_normalized)
                    )
                }
            }
        };
        let ty = if applied || report.cancelled || !report.improved() {
            MessageType::INFO
        } else {
            MessageType::WARNING
        };
        self.client
            .show_message(ty, format!("Mapper optimize: {summary}"))
            .await;
        json!({
            "best_normalized": report.best_normalized,
            "best_iteration": report.best_iteration,
            "initial_normalized": initial,
            "applied": applied,
            "cancelled": report.cancelled,
            "candidates": candidates,
            "summary": summary,
            "report_dir": optimized.report_dir.as_ref().map(|d| d.display().to_string()),
            "new_document": new_document,
            "best_mapper": best,
            "proposer": setup.proposer,
            "runtime": setup.runtime_name(),
        })
    }

    /// One `workspace/applyEdit` of minimal changes from `doc`'s text to
    /// `best`, versioned when the client supports it.
    async fn apply_in_place(
        &self,
        doc: &Arc<Document>,
        best: &str,
    ) -> std::result::Result<(), String> {
        let flags = self.state.flags();
        if !flags.apply_edit {
            return Err("the editor cannot apply workspace edits".into());
        }
        let enc = self.state.encoding();
        let edits = guard::catch(|| {
            let a = doc.analysis();
            proto::text_edits(&a, &minimal_edits(&doc.text, best), enc)
        })
        .map_err(|msg| format!("internal error computing the edit: {msg}"))?;
        let edit = if flags.document_changes {
            WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri: doc.uri.clone(),
                        version: Some(doc.version),
                    },
                    edits: edits.into_iter().map(OneOf::Left).collect(),
                }])),
                ..Default::default()
            }
        } else {
            proto::workspace_edit(&doc.uri, edits)
        };
        let response = self
            .client
            .send_request::<request::ApplyWorkspaceEdit>(ApplyWorkspaceEditParams {
                label: Some("Optimize mapper".into()),
                edit,
            })
            .await
            .map_err(|e| format!("workspace/applyEdit failed: {e}"))?;
        if response.applied {
            Ok(())
        } else {
            Err(format!(
                "the editor did not apply the edit{}",
                response
                    .failure_reason
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            ))
        }
    }

    /// Offers `best` as `NAME.optimized.mapper` next to the mapper: created
    /// through the editor when it can create files, else written to disk;
    /// shown when the editor can show documents.
    async fn offer_document(&self, uri: &Url, best: &str) -> Option<Url> {
        let path = uri.to_file_path().ok()?;
        let new_path = commands::optimized_path(&path);
        let new_uri = Url::from_file_path(&new_path).ok()?;
        let flags = self.state.flags();
        let mut created = false;
        if flags.apply_edit && flags.document_changes && flags.create_files {
            let edit = WorkspaceEdit {
                document_changes: Some(DocumentChanges::Operations(vec![
                    DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                        uri: new_uri.clone(),
                        options: Some(CreateFileOptions {
                            overwrite: Some(true),
                            ignore_if_exists: None,
                        }),
                        annotation_id: None,
                    })),
                    DocumentChangeOperation::Edit(TextDocumentEdit {
                        text_document: OptionalVersionedTextDocumentIdentifier {
                            uri: new_uri.clone(),
                            version: None,
                        },
                        edits: vec![OneOf::Left(TextEdit::new(
                            Range::default(),
                            best.to_string(),
                        ))],
                    }),
                ])),
                ..Default::default()
            };
            created = self
                .client
                .send_request::<request::ApplyWorkspaceEdit>(ApplyWorkspaceEditParams {
                    label: Some("Optimized mapper".into()),
                    edit,
                })
                .await
                .is_ok_and(|r| r.applied);
        }
        if !created && std::fs::write(&new_path, best).is_err() {
            return None;
        }
        if flags.show_document {
            let _ = self
                .client
                .show_document(ShowDocumentParams {
                    uri: new_uri.clone(),
                    external: Some(false),
                    take_focus: Some(true),
                    selection: None,
                })
                .await;
        }
        Some(new_uri)
    }
}

/// Quick fixes from the diagnostics' data, plus the source actions.
fn code_actions(
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
                Some(data) if data.version == doc.version => data.fixes,
                // Fixes for another version would edit the wrong text.
                Some(_) => continue,
                // A client that drops `data`: recompute from the current
                // parse (AutoGuide's fixes are not recomputed).
                None if source == Some("mapwright") => {
                    current_fixes(uri, doc, a, resolution, d, enc)
                }
                None => continue,
            };
            let preferred = fixes.len() == 1 && fixes[0].safe;
            for fix in fixes {
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: fix.title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![d.clone()]),
                    edit: Some(proto::workspace_edit(uri, fix.edits)),
                    is_preferred: preferred.then_some(true),
                    ..Default::default()
                }));
            }
        }
    }
    let span = convert::span(&a.index, range, enc);
    for m in missing_machines(a) {
        let touches = m
            .uses
            .iter()
            .any(|u| u.start <= span.end && span.start <= u.end);
        let kind = if touches {
            CodeActionKind::QUICKFIX
        } else {
            CodeActionKind::new(SOURCE_ADD_MACHINE)
        };
        if !kind_allowed(&context.only, &kind) {
            continue;
        }
        let edit = TextEdit::new(
            convert::range(&a.index, Span::at(m.insert_at), enc),
            m.text.clone(),
        );
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Add missing `{} = Machine({});`", m.name, m.kind),
            kind: Some(kind),
            edit: Some(proto::workspace_edit(uri, vec![edit])),
            ..Default::default()
        }));
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

/// The fixes of the current diagnostic with the same code and range as `d`.
fn current_fixes(
    uri: &Url,
    doc: &Document,
    a: &Analysis,
    resolution: Option<&Resolution>,
    d: &Diagnostic,
    enc: Encoding,
) -> Vec<FixData> {
    let all = merged_diagnostics(a, resolution);
    let current = convert::diagnostics(uri, doc.version, &a.index, &all, enc, true);
    current
        .into_iter()
        .find(|c| c.range == d.range && c.code == d.code)
        .and_then(|c| c.data)
        .and_then(|v| serde_json::from_value::<DiagnosticData>(v).ok())
        .map(|data| data.fixes)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn encoding_negotiation() {
        let mut caps = ClientCapabilities::default();
        assert_eq!(negotiate_encoding(&caps), Encoding::Utf16);
        caps.general = Some(GeneralClientCapabilities {
            position_encodings: Some(vec![
                PositionEncodingKind::UTF16,
                PositionEncodingKind::UTF8,
            ]),
            ..Default::default()
        });
        assert_eq!(negotiate_encoding(&caps), Encoding::Utf8);
    }
}
