//! The `LanguageServer` implementation: capability negotiation, document
//! sync, diagnostics publishing, and one thin handler per request.
//!
//! Every handler follows the same shape: take an owned snapshot of the
//! document (never a map guard), run the pure analysis under
//! [`guard::catch`], convert the result with [`proto`]. Notifications that
//! change state do so before their first `.await`, because tower-lsp polls
//! handlers concurrently and only the synchronous prefix runs in arrival
//! order.

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
use super::config::PROJECT_FILE;
use super::convert::{self, DiagnosticData, FixData};
use super::formatting::{format_document, format_selection};
use super::providers::Query;
use super::state::{Change, ClientFlags, Document, State};
use super::{folding, guard, navigation, proto, semantic_tokens, signature, symbols};

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
        pos: Position,
    ) -> Query<'a> {
        Query {
            analysis: a,
            project,
            offset: convert::offset(&a.index, pos, self.state.encoding()),
        }
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
    /// project files changed).
    async fn republish_all(&self) {
        for doc in self.state.all_docs() {
            publish(&self.state, &self.client, doc).await;
        }
    }

    /// The stand-in for a message that could not be decoded (see
    /// [`super::transport`]): answered with the JSON-RPC error it deserves.
    pub async fn malformed_message(&self, params: Value) -> Result<Value> {
        let parse = params["problem"] == "parse";
        self.log(
            MessageType::ERROR,
            if parse {
                "mapwright: received a message that is not JSON"
            } else {
                "mapwright: received JSON that is not a JSON-RPC message"
            },
        )
        .await;
        Err(if parse {
            Error::parse_error()
        } else {
            Error::invalid_request()
        })
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
/// current version (a newer version publishes its own).
async fn publish(state: &State, client: &Client, doc: Arc<Document>) {
    if !state.is_current(&doc) {
        return;
    }
    let enc = state.encoding();
    let flags = state.flags();
    let enabled = state.settings().diagnostics.enable;
    let result = guard::catch(|| {
        if !enabled {
            return Vec::new();
        }
        let a = doc.analysis();
        convert::diagnostics(
            &doc.uri,
            doc.version,
            &a.index,
            &a.diagnostics,
            enc,
            flags.related_information,
        )
    });
    match result {
        Ok(diags) => {
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
                range: None,
                work_done_progress_options: Default::default(),
            },
        )),
        inlay_hint_provider: Some(OneOf::Left(true)),
        execute_command_provider: Some(ExecuteCommandOptions {
            // The debug command is deliberately not advertised.
            commands: Vec::new(),
            work_done_progress_options: Default::default(),
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
                watchers: vec![FileSystemWatcher {
                    glob_pattern: GlobPattern::String(format!("**/{PROJECT_FILE}")),
                    kind: None,
                }],
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
        // with the final settings.
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
        match change {
            Ok(Change::Applied(doc)) => {
                let state = self.state.clone();
                let client = self.client.clone();
                let delay = Duration::from_millis(self.state.settings().diagnostics.debounce_ms);
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    publish(&state, &client, doc).await;
                });
            }
            Ok(Change::Stale { have, got }) => {
                self.log(
                    MessageType::WARNING,
                    format!("mapwright: ignored change to {uri} version {got} (have {have})"),
                )
                .await
            }
            Ok(Change::Unknown) => {
                self.log(
                    MessageType::WARNING,
                    format!("mapwright: change to {uri}, which is not open"),
                )
                .await
            }
            Err(msg) => {
                self.log(
                    MessageType::ERROR,
                    format!("mapwright: internal error applying a change to {uri}: {msg}"),
                )
                .await
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
        for doc in self.state.all_docs() {
            self.refresh_project(&doc.uri).await;
        }
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let touches_project = params
            .changes
            .iter()
            .any(|c| c.uri.path().ends_with(PROJECT_FILE));
        if !touches_project {
            return;
        }
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
        let snippets = self.state.flags().snippets && self.state.settings().completion.snippets;
        let enc = self.state.encoding();
        self.guarded("completion", || {
            let q = self.query(&a, project.as_deref(), pos.position);
            let c = self.state.providers.complete(&q);
            Some(proto::completion(&a, c, enc, snippets))
        })
        .await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let pos = params.text_document_position_params;
        let Some((_, a)) = self.snapshot(&pos.text_document.uri).await? else {
            return Ok(None);
        };
        let project = self.state.project(&pos.text_document.uri);
        let (enc, markdown) = (self.state.encoding(), self.state.flags().markdown);
        self.guarded("hover", || {
            let q = self.query(&a, project.as_deref(), pos.position);
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
        let Some((_, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let data = self
            .guarded("semantic tokens", || {
                semantic_tokens::encode(&a, &semantic_tokens::classify(&a), enc)
            })
            .await?;
        let data = Arc::new(data);
        let id = self.state.store_semantic(&uri, data.clone());
        Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
            result_id: Some(id),
            data: proto::semantic_tokens(&data),
        })))
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri;
        let Some((_, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let data = self
            .guarded("semantic tokens", || {
                semantic_tokens::encode(&a, &semantic_tokens::classify(&a), enc)
            })
            .await?;
        let data = Arc::new(data);
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
        let Some((_, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let project = self.state.project(&uri);
        let enc = self.state.encoding();
        let settings = self.state.settings().inlay_hints;
        self.guarded("inlay hints", || {
            let range = convert::span(&a.index, params.range, enc);
            let hints = self
                .state
                .providers
                .inlay_hints(&a, project.as_deref(), range)
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

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let Some((doc, a)) = self.snapshot(&uri).await? else {
            return Ok(None);
        };
        let enc = self.state.encoding();
        let actions = self
            .guarded("code actions", || {
                code_actions(&uri, &doc, &a, &params.context, params.range, enc)
            })
            .await?;
        self.unless_stale(&doc, Some(actions))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        match params.command.as_str() {
            DEBUG_PANIC_COMMAND => {
                self.guarded("mapwright.debugPanic", || -> Option<Value> {
                    panic!("mapwright.debugPanic was called (deliberate panic)")
                })
                .await
            }
            other => Err(Error::invalid_params(format!("unknown command `{other}`"))),
        }
    }
}

/// Quick fixes from the diagnostics' data, plus the source actions.
fn code_actions(
    uri: &Url,
    doc: &Document,
    a: &Analysis,
    context: &CodeActionContext,
    range: Range,
    enc: Encoding,
) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    if kind_allowed(&context.only, &CodeActionKind::QUICKFIX) {
        for d in &context.diagnostics {
            if d.source.as_deref() != Some("mapwright") {
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
                // A client that drops `data`: recompute from the current parse.
                None => current_fixes(uri, doc, a, d, enc),
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
    d: &Diagnostic,
    enc: Encoding,
) -> Vec<FixData> {
    let current = convert::diagnostics(uri, doc.version, &a.index, &a.diagnostics, enc, true);
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
