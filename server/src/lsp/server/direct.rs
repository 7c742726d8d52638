//! Requests answered straight to the output: their result is serialized
//! from its typed form into the frame, without tower-lsp's `Value` tree.
//!
//! Why: tower-lsp turns each handler's result into a `serde_json::Value`
//! before writing it, and that tree takes several times the bytes of its
//! JSON (a map per object, a `String` per key and string). A code action
//! request over the whole of a 5,000-line mapper answers about 790 KB of
//! JSON; with its tree, the server's live heap rose from 8.5 to 22.7 MB for
//! that one answer (`MAPWRIGHT_HEAP_TRACE`, see the memory runs in
//! README.md's git history), which made the resident peak of `lsp_memory`.
//!
//! Only `textDocument/codeAction`, and only once the server is initialized
//! and not shutting down and when it writes its own output (stdio); every
//! other case, and every error answer, goes through tower-lsp as before.
//! The handler is the same one tower-lsp calls (`handle_code_action`), so
//! the answer is the same JSON (with the keys in the types' order rather
//! than sorted). A `$/cancelRequest` does not reach such a request: it is
//! answered in full, which the protocol allows.

use std::future::Future;
use std::pin::Pin;

use tower_lsp::jsonrpc::{Error, Request, Response};
use tower_lsp::lsp_types::CodeActionParams;
use tower_lsp::{ExitedError, LspService};

use super::Backend;

/// The future a service call returns (tower-lsp's own type).
type Answer = Pin<Box<dyn Future<Output = Result<Option<Response>, ExitedError>> + Send>>;

/// The methods answered directly.
const DIRECT: &[&str] = &["textDocument/codeAction"];

/// Wraps the service, answering [`DIRECT`] methods straight to the output.
pub struct DirectAnswers {
    inner: LspService<Backend>,
}

impl DirectAnswers {
    pub fn new(inner: LspService<Backend>) -> DirectAnswers {
        DirectAnswers { inner }
    }

    /// Whether `req` is answered here.
    fn takes(&self, req: &Request) -> bool {
        let state = &self.inner.inner().state;
        req.id().is_some()
            && DIRECT.contains(&req.method())
            && state.is_ready()
            && !state.shutdown_requested()
            && state.outbox().is_some()
    }
}

impl tower_service::Service<Request> for DirectAnswers {
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = Answer;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        if !self.takes(&req) {
            return self.inner.call(req);
        }
        let backend = self.inner.inner().clone();
        let (_, id, params) = req.into_parts();
        // (`takes` checked that there is an id.)
        let id = id.unwrap_or(tower_lsp::jsonrpc::Id::Null);
        Box::pin(async move {
            let params = match serde_json::from_value::<CodeActionParams>(
                params.unwrap_or(serde_json::Value::Null),
            ) {
                Ok(p) => p,
                Err(e) => {
                    return Ok(Some(Response::from_error(
                        id,
                        Error::invalid_params(e.to_string()),
                    )))
                }
            };
            match backend.handle_code_action(params).await {
                Ok(result) => {
                    let sent = backend
                        .state
                        .outbox()
                        .is_some_and(|outbox| outbox.respond(&id, &result));
                    if sent {
                        Ok(None)
                    } else {
                        let value =
                            serde_json::to_value(result).map_err(|_| Error::internal_error());
                        Ok(Some(match value {
                            Ok(v) => Response::from_ok(id, v),
                            Err(e) => Response::from_error(id, e),
                        }))
                    }
                }
                Err(e) => Ok(Some(Response::from_error(id, e))),
            }
        })
    }
}
