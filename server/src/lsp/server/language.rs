//! Requests that read the document: completion, hover, signature help,
//! inlay hints, semantic tokens, folding ranges, document and workspace symbols.

use std::sync::Arc;

use tower_lsp::jsonrpc::Result;
use tower_lsp::lsp_types::*;

use crate::lsp::convert::{self};
use crate::lsp::providers::InlayQuery;

use super::*;

impl Backend {
    pub(super) async fn handle_completion(
        &self,
        params: CompletionParams,
    ) -> Result<Option<CompletionResponse>> {
        let pos = params.text_document_position;
        let Some((_, a)) = self.snapshot(&pos.text_document.uri).await? else {
            return Ok(None);
        };
        let project = self.state.project(&pos.text_document.uri);
        let target = self.state.target(&pos.text_document.uri);
        let flags = self.state.flags();
        let snippets = flags.snippets && self.state.settings().completion.snippets;
        let markdown = flags.completion_markdown;
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
            Some(proto::completion(&a, c, enc, snippets, markdown))
        })
        .await
    }

    pub(super) async fn handle_hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let pos = params.text_document_position_params;
        let Some((doc, a)) = self.snapshot(&pos.text_document.uri).await? else {
            return Ok(None);
        };
        let project = self.state.project(&pos.text_document.uri);
        let (target, resolution) = self.resolution(&doc).await?;
        let (enc, markdown) = (self.state.encoding(), self.state.flags().markdown);
        let last_run = self.state.last_run(&pos.text_document.uri);
        self.guarded("hover", || {
            let mut q = self.query(
                &a,
                project.as_deref(),
                target.as_deref(),
                resolution.as_deref(),
                pos.position,
            );
            q.last_run = last_run.as_deref();
            self.state
                .providers
                .hover(&q)
                .map(|h| proto::hover(&a, h, enc, markdown))
        })
        .await
    }

    pub(super) async fn handle_signature_help(
        &self,
        params: SignatureHelpParams,
    ) -> Result<Option<SignatureHelp>> {
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

    pub(super) async fn handle_inlay_hint(
        &self,
        params: InlayHintParams,
    ) -> Result<Option<Vec<InlayHint>>> {
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
                    settings.parameter_names || h.kind != crate::lsp::inlay::InlayKind::Parameter
                })
                .map(|h| proto::inlay_hint(&a, h, enc))
                .collect();
            Some(hints)
        })
        .await
    }

    pub(super) async fn handle_semantic_tokens_full(
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

    pub(super) async fn handle_semantic_tokens_range(
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

    pub(super) async fn handle_semantic_tokens_full_delta(
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

    pub(super) async fn handle_folding_range(
        &self,
        params: FoldingRangeParams,
    ) -> Result<Option<Vec<FoldingRange>>> {
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

    pub(super) async fn handle_document_symbol(
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
    pub(super) async fn handle_symbol(
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

    /// The semantic tokens of the document's current version, encoded
    /// (`None`: the document is not open).
    pub(super) async fn semantic_data(&self, uri: &Url) -> Result<Option<Arc<Vec<u32>>>> {
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
}
