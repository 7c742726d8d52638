//! The server's output: one writer for tower-lsp's messages and for the
//! diagnostics the server publishes itself.
//!
//! Why: tower-lsp turns every outgoing notification into a
//! `serde_json::Value` tree before writing it. For a big file's
//! `publishDiagnostics` (over a thousand diagnostics, hundreds of KB) that
//! tree was the largest cost of a keystroke: a map per diagnostic and per
//! position, all allocated, serialized and freed again. Published
//! diagnostics are instead serialized straight from their typed form into
//! the frame ([`Outbox::publish_diagnostics`]).
//!
//! How: tower-lsp writes into a [`FrameSplitter`], which cuts its byte
//! stream at message boundaries (`Content-Length` frames) and hands whole
//! frames to one writer task; [`Outbox`] hands it whole frames too. The
//! writer task writes frames one at a time, so messages from both sources
//! never interleave, and each source's own order is kept.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde::Serialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tower_lsp::lsp_types::{Diagnostic, Url};

/// Sends whole frames to the writer task.
#[derive(Clone, Debug)]
pub struct Outbox {
    frames: UnboundedSender<Vec<u8>>,
}

/// The `AsyncWrite` tower-lsp writes its messages into.
pub struct FrameSplitter {
    frames: UnboundedSender<Vec<u8>>,
    pending: Vec<u8>,
}

/// A writer for tower-lsp and an outbox, both writing frames to `out` (the
/// writer task runs until both are dropped).
pub fn outbox<W: AsyncWrite + Unpin + Send + 'static>(out: W) -> (FrameSplitter, Outbox) {
    let (tx, rx) = unbounded_channel();
    tokio::spawn(write_frames(rx, out));
    (
        FrameSplitter {
            frames: tx.clone(),
            pending: Vec::new(),
        },
        Outbox { frames: tx },
    )
}

async fn write_frames<W: AsyncWrite + Unpin>(mut rx: UnboundedReceiver<Vec<u8>>, mut out: W) {
    while let Some(frame) = rx.recv().await {
        if out.write_all(&frame).await.is_err() {
            return;
        }
        // Flush once the queue is drained (a burst goes out together).
        if rx.is_empty() && out.flush().await.is_err() {
            return;
        }
    }
}

#[derive(Serialize)]
struct Notification<'a, P> {
    jsonrpc: &'static str,
    method: &'static str,
    params: &'a P,
}

#[derive(Serialize)]
struct PublishParams<'a> {
    uri: &'a Url,
    diagnostics: &'a [Diagnostic],
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i32>,
}

impl Outbox {
    /// Sends `textDocument/publishDiagnostics`, serialized directly.
    pub fn publish_diagnostics(&self, uri: &Url, diagnostics: &[Diagnostic], version: Option<i32>) {
        let body = serde_json::to_vec(&Notification {
            jsonrpc: "2.0",
            method: "textDocument/publishDiagnostics",
            params: &PublishParams {
                uri,
                diagnostics,
                version,
            },
        });
        // (Serializing these types cannot fail: no map has non-string keys.)
        if let Ok(body) = body {
            let _ = self.frames.send(frame(&body));
        }
    }
}

/// `body` with its `Content-Length` header.
fn frame(body: &[u8]) -> Vec<u8> {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    let mut out = Vec::with_capacity(header.len() + body.len());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(body);
    out
}

impl FrameSplitter {
    /// Sends every complete frame at the start of `pending`.
    fn split(&mut self) {
        loop {
            let Some(end_of_header) = find(&self.pending, b"\r\n\r\n") else {
                return;
            };
            let header = String::from_utf8_lossy(&self.pending[..end_of_header]);
            let length = header.lines().find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            });
            let Some(length) = length else {
                // Not a header tower-lsp writes: pass the bytes on as they are.
                let _ = self.frames.send(std::mem::take(&mut self.pending));
                return;
            };
            let total = end_of_header + 4 + length;
            if self.pending.len() < total {
                return;
            }
            let rest = self.pending.split_off(total);
            let whole = std::mem::replace(&mut self.pending, rest);
            let _ = self.frames.send(whole);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl AsyncWrite for FrameSplitter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.frames.is_closed() {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        self.pending.extend_from_slice(buf);
        self.split();
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_from_both_sources_come_out_whole_and_in_order() {
        let (client, mut server_out) = tokio::io::duplex(1 << 20);
        let (mut splitter, outbox) = outbox(client);
        let a = frame(br#"{"a":1}"#);
        // tower-lsp's frame written in pieces, the outbox's in between.
        splitter.write_all(&a[..5]).await.unwrap();
        let uri = Url::parse("file:///x.mapper").unwrap();
        outbox.publish_diagnostics(&uri, &[], Some(3));
        splitter.write_all(&a[5..]).await.unwrap();
        splitter.write_all(&frame(b"{}")).await.unwrap();
        drop(splitter);
        drop(outbox);
        let mut got = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut server_out, &mut got)
            .await
            .unwrap();
        let text = String::from_utf8(got).unwrap();
        let publish = r#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///x.mapper","diagnostics":[],"version":3}}"#;
        assert_eq!(
            text,
            format!(
                "Content-Length: {}\r\n\r\n{publish}Content-Length: 7\r\n\r\n{{\"a\":1}}Content-Length: 2\r\n\r\n{{}}",
                publish.len()
            )
        );
    }
}
