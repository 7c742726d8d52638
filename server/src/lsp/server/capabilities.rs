//! `initialize`, `initialized` and `shutdown`: what the client can do
//! ([`ClientFlags`]), the position encoding, and the server's capabilities.

use mapwright_grammar::line_index::Encoding;
use tower_lsp::jsonrpc::Result;
use tower_lsp::lsp_types::*;

use crate::lsp::commands::{self};
use crate::lsp::config::PROJECT_FILE;
use crate::lsp::convert::{self, DiagnosticFields};
use crate::lsp::state::ClientFlags;

use super::editing::{
    SOURCE_ADD_MACHINE, SOURCE_EXPLAIN, SOURCE_FIX_ALL, SOURCE_FORMAT, SOURCE_OPTIMIZE,
};
use super::sync::publish;
use super::*;

impl Backend {
    pub(super) async fn handle_initialize(
        &self,
        params: InitializeParams,
    ) -> Result<InitializeResult> {
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
            tokio::spawn(crate::lsp::lifecycle::watch_parent(pid, self.state.clone()));
        }
        {
            // A client that never sends `initialized` (or never answers the
            // configuration pull) still gets diagnostics, a little later.
            let state = self.state.clone();
            let client = self.client.clone();
            tokio::spawn(async move {
                tokio::time::sleep(crate::lsp::lifecycle::READY_FALLBACK).await;
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

    pub(super) async fn handle_initialized(&self, _: InitializedParams) {
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

    pub(super) async fn handle_shutdown(&self) -> Result<()> {
        self.state.set_shutdown();
        Ok(())
    }
}

/// Reads what the client can do.
pub(super) fn client_flags(caps: &ClientCapabilities) -> ClientFlags {
    let text = caps.text_document.as_ref();
    let workspace = caps.workspace.as_ref();
    // (A match rather than `Option::is_none_or`, which is newer than the
    // workspace's minimum Rust.)
    let hover_markdown = match text
        .and_then(|t| t.hover.as_ref())
        .and_then(|h| h.content_format.as_ref())
    {
        Some(formats) => formats.contains(&MarkupKind::Markdown),
        None => true,
    };
    ClientFlags {
        snippets: text
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.snippet_support)
            .unwrap_or(false),
        diagnostic_fields: diagnostic_fields(text.and_then(|t| t.publish_diagnostics.as_ref())),
        pull_diagnostics: text.is_some_and(|t| t.diagnostic.is_some()),
        code_action_resolve: text
            .and_then(|t| t.code_action.as_ref())
            .and_then(|c| c.resolve_support.as_ref())
            .is_some_and(|r| r.properties.iter().any(|p| p == "edit")),
        markdown: hover_markdown,
        // A client that gives no documentation format for completion but
        // one for hovers without Markdown (eglot) cannot show it there
        // either.
        completion_markdown: match text
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.documentation_format.as_ref())
        {
            Some(formats) => formats.contains(&MarkupKind::Markdown),
            None => hover_markdown,
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

/// The optional diagnostic fields a client advertised.
fn diagnostic_fields(caps: Option<&PublishDiagnosticsClientCapabilities>) -> DiagnosticFields {
    DiagnosticFields {
        related_information: caps.and_then(|p| p.related_information).unwrap_or(false),
        code_description: caps
            .and_then(|p| p.code_description_support)
            .unwrap_or(false),
        tags: caps.is_some_and(|p| p.tag_support.is_some()),
        data: caps.and_then(|p| p.data_support).unwrap_or(false),
    }
}

/// UTF-8 if the client offers it (no conversion needed), else UTF-16, the
/// protocol's default that every client supports.
pub(super) fn negotiate_encoding(caps: &ClientCapabilities) -> Encoding {
    let offered = caps
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(list) if list.contains(&PositionEncodingKind::UTF8) => Encoding::Utf8,
        _ => Encoding::Utf16,
    }
}

pub(super) fn capabilities(enc: Encoding) -> ServerCapabilities {
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
                CodeActionKind::new(SOURCE_FIX_ALL),
                CodeActionKind::new(SOURCE_EXPLAIN),
                CodeActionKind::new(SOURCE_OPTIMIZE),
            ]),
            resolve_provider: Some(true),
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
        document_link_provider: Some(DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: Default::default(),
        }),
        diagnostic_provider: Some(super::pull::capability()),
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

#[cfg(test)]
mod tests {
    use super::*;

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
