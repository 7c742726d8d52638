//! Navigation requests: definition, references, document highlight, rename.

use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::*;

use crate::lsp::convert::{self};

use super::*;

impl Backend {
    pub(super) async fn handle_goto_definition(
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

    pub(super) async fn handle_references(
        &self,
        params: ReferenceParams,
    ) -> Result<Option<Vec<Location>>> {
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

    pub(super) async fn handle_document_highlight(
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

    pub(super) async fn handle_prepare_rename(
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

    pub(super) async fn handle_rename(
        &self,
        params: RenameParams,
    ) -> Result<Option<WorkspaceEdit>> {
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

    pub(super) async fn handle_goto_declaration(
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

    pub(super) async fn handle_selection_range(
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
}
