//! `textDocument/documentLink`: in `mapwright.toml`, the application and
//! machine description files it names ([`crate::lsp::document_link`]).
//!
//! Editors do not sync project files with the server (they are not
//! mappers, and the server would analyse them as such): the text is the
//! synced one when a client does open it, else the file on disk. Other
//! documents have no links.

use mapwright_grammar::line_index::LineIndex;
use tower_lsp::jsonrpc::Result;
use tower_lsp::lsp_types::*;

use super::Backend;
use crate::lsp::config::PROJECT_FILE;
use crate::lsp::convert;
use crate::lsp::document_link::description_links;

impl Backend {
    pub(super) async fn handle_document_link(
        &self,
        params: DocumentLinkParams,
    ) -> Result<Option<Vec<DocumentLink>>> {
        let uri = params.text_document.uri;
        let Ok(path) = uri.to_file_path() else {
            return Ok(None);
        };
        if path.file_name().and_then(|n| n.to_str()) != Some(PROJECT_FILE) {
            return Ok(None);
        }
        let Some(dir) = path.parent() else {
            return Ok(None);
        };
        let text = match self.state.doc(&uri) {
            Some(doc) => String::clone(&doc.text),
            // A project file is a few lines: read it on this thread.
            None => match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(_) => return Ok(None),
            },
        };
        let enc = self.state.encoding();
        let links = self
            .guarded("documentLink", || {
                let index = LineIndex::new(&text);
                description_links(&text, dir)
                    .into_iter()
                    .map(|l| DocumentLink {
                        range: convert::range(&index, l.span, enc),
                        target: Url::from_file_path(&l.target).ok(),
                        tooltip: Some(format!("{} description: {}", l.key, l.target.display())),
                        data: None,
                    })
                    .collect::<Vec<_>>()
            })
            .await?;
        Ok(Some(links))
    }
}
