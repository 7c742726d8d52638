//! The `LanguageServer` implementation: protocol wiring only. Every method
//! of the trait is a one-line delegation to the module of its request
//! family; the helpers those share (panic guard, snapshots, staleness,
//! queries, resolution) live here.
//!
//! Request families:
//! - [`capabilities`] `initialize`/`initialized`/`shutdown`: client flags,
//!   position-encoding negotiation, the server's capabilities.
//! - [`sync`]         document sync, settings, workspace folders, watched
//!   files, diagnostics publishing, `mapwright/documentInfo`.
//! - [`language`]     completion, hover, signature help, inlay hints,
//!   semantic tokens, folding, document and workspace symbols.
//! - [`goto`]         definition, references, highlights, rename.
//! - [`pull`]         pull diagnostics (`textDocument/diagnostic`).
//! - [`editing`]      formatting, code actions, code lenses.
//! - [`links`]        document links (description files in `mapwright.toml`).
//! - [`running`]      `workspace/executeCommand`: explain, run, optimize
//!   with `$/progress`, apply in place, cancellation.
//! - [`direct`]       the service wrapper that answers code actions straight
//!   to the output (no `Value` tree of a large answer).
//!
//! Every handler follows the same shape: take an owned snapshot of the
//! document (never a map guard), run the pure analysis under
//! [`guard::catch`], convert the result with [`proto`]. Notifications that
//! change state do so before their first `.await`, because tower-lsp polls
//! handlers concurrently and only the synchronous prefix runs in arrival
//! order.

mod capabilities;
pub mod direct;
mod editing;
mod goto;
mod language;
mod links;
mod pull;
mod running;
mod sync;

use std::sync::Arc;

use serde_json::Value;
use tower_lsp::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp::lsp_types::*;
use tower_lsp::{Client, ClientSocket, LanguageServer, LspService};

use super::analysis::Analysis;
use super::convert;
use super::providers::Query;
use super::state::{Document, State};
use super::target::{Resolution, Target};
use super::{
    folding, guard, navigation, on_type, proto, selection, semantic_range, semantic_tokens,
    signature, symbols,
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

/// The language server. (Cloned for a request answered outside tower-lsp,
/// see [`direct`]: a client handle and the shared state.)
#[derive(Clone)]
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
            last_run: None,
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
}

#[tower_lsp::async_trait]
impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        self.handle_initialize(params).await
    }

    async fn initialized(&self, params: InitializedParams) {
        self.handle_initialized(params).await
    }

    async fn shutdown(&self) -> Result<()> {
        self.handle_shutdown().await
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        self.handle_did_open(params).await
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        self.handle_did_change(params).await
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        self.handle_did_save(params).await
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.handle_did_close(params).await
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        self.handle_did_change_configuration(params).await
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        self.handle_did_change_workspace_folders(params).await
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        self.handle_did_change_watched_files(params).await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        self.handle_completion(params).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        self.handle_hover(params).await
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        self.handle_signature_help(params).await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        self.handle_goto_definition(params).await
    }

    async fn goto_declaration(
        &self,
        params: request::GotoDeclarationParams,
    ) -> Result<Option<request::GotoDeclarationResponse>> {
        self.handle_goto_declaration(params).await
    }

    async fn selection_range(
        &self,
        params: SelectionRangeParams,
    ) -> Result<Option<Vec<SelectionRange>>> {
        self.handle_selection_range(params).await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        self.handle_references(params).await
    }

    async fn document_highlight(
        &self,
        params: DocumentHighlightParams,
    ) -> Result<Option<Vec<DocumentHighlight>>> {
        self.handle_document_highlight(params).await
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        self.handle_prepare_rename(params).await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        self.handle_rename(params).await
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        self.handle_document_symbol(params).await
    }

    #[allow(deprecated)] // `SymbolInformation::deprecated` must be set.
    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<Vec<SymbolInformation>>> {
        self.handle_symbol(params).await
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.handle_folding_range(params).await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        self.handle_semantic_tokens_full(params).await
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        self.handle_semantic_tokens_range(params).await
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        self.handle_semantic_tokens_full_delta(params).await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        self.handle_inlay_hint(params).await
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        self.handle_formatting(params).await
    }

    async fn range_formatting(
        &self,
        params: DocumentRangeFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>> {
        self.handle_range_formatting(params).await
    }

    async fn on_type_formatting(
        &self,
        params: DocumentOnTypeFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>> {
        self.handle_on_type_formatting(params).await
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        self.handle_diagnostic(params).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        self.handle_code_action(params).await
    }

    async fn code_action_resolve(&self, params: CodeAction) -> Result<CodeAction> {
        self.handle_code_action_resolve(params).await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        self.handle_code_lens(params).await
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        self.handle_document_link(params).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        self.handle_execute_command(params).await
    }
}
