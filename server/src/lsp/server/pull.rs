//! Pull diagnostics (`textDocument/diagnostic`, LSP 3.17), for clients
//! that advertise `textDocument.diagnostic`.
//!
//! Design:
//! - The report is what [`super::sync::publish`] would push: the same
//!   computation ([`super::sync::diagnostics_of`]), with no debounce (the
//!   client decides when to ask).
//! - `resultId` is `"<version>.<generation>"`: the document version and a
//!   counter bumped whenever diagnostics can change without an edit
//!   (settings, project or description files, a `mapwright.run`'s
//!   feedback; [`crate::lsp::state::State::diagnostics_changed`]). A
//!   request whose `previousResultId` equals it gets an `unchanged` report
//!   and nothing is computed.
//! - A client that pulls is never pushed to: two copies of every report
//!   would cost twice the time and bytes, and VS Code would show both.
//!   Instead, when the generation changes the server sends
//!   `workspace/diagnostic/refresh` and the client pulls again (see
//!   `Backend::refresh_pulled_diagnostics` for why every pulling client
//!   gets it).
//! - `interFileDependencies: false` (a mapper's diagnostics depend on its
//!   own text and the project's application and machine only) and no
//!   workspace diagnostics (only open documents are analysed).

use std::time::Duration;

use tower_lsp::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp::lsp_types::*;

use super::sync::diagnostics_of;
use super::*;

/// How long a pull made before `initialized` waits for the settings.
const READY_WAIT: Duration = Duration::from_secs(2);

/// The server's `diagnosticProvider`.
pub(super) fn capability() -> DiagnosticServerCapabilities {
    DiagnosticServerCapabilities::Options(DiagnosticOptions {
        identifier: Some("mapwright".into()),
        inter_file_dependencies: false,
        workspace_diagnostics: false,
        work_done_progress_options: Default::default(),
    })
}

impl Backend {
    pub(super) async fn handle_diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        self.state.wait_ready(READY_WAIT).await;
        let uri = params.text_document.uri;
        let Some(doc) = self.state.doc(&uri) else {
            return Ok(full_report(None, Vec::new()));
        };
        let result_id = self.state.diagnostics_result_id(&doc);
        if params.previous_result_id.as_deref() == Some(result_id.as_str()) {
            return Ok(DocumentDiagnosticReportResult::Report(
                DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
                    related_documents: None,
                    unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport {
                        result_id,
                    },
                }),
            ));
        }
        match diagnostics_of(&self.state, &doc, false).await {
            Ok(items) => Ok(full_report(Some(result_id), items)),
            Err(msg) => {
                let text = format!("mapwright: internal error computing diagnostics: {msg}");
                self.log(MessageType::ERROR, text.clone()).await;
                Err(Error {
                    code: ErrorCode::InternalError,
                    message: text.into(),
                    data: None,
                })
            }
        }
    }
}

fn full_report(
    result_id: Option<String>,
    items: Vec<Diagnostic>,
) -> DocumentDiagnosticReportResult {
    DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(
        RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id, items },
        },
    ))
}
