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
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde::Serialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tower_lsp::lsp_types::{Diagnostic, Url};

/// Sends whole frames to the writer task.
#[derive(Clone, Debug)]
pub struct Outbox {
    frames: UnboundedSender<Frame>,
    spare: Spare,
}

/// One large frame buffer, handed back by the writer task once written and
/// taken by the next publish. Why: a big file's publish is hundreds of KB,
/// and a fresh buffer that size comes from the system each time (the
/// allocator gives freed memory back at once, see `main.rs`), its pages
/// faulted in on first write; this was most of the cost of copying the
/// publish together.
type Spare = Arc<Mutex<Vec<u8>>>;

/// Frames at least this large are kept as the spare.
const SPARE_MIN: usize = 64 * 1024;

/// One message with its header: `bytes[start..]` (a publish is written
/// after room for its header, see [`PublishBuilder`]).
#[derive(Debug)]
struct Frame {
    bytes: Vec<u8>,
    start: usize,
}

impl Frame {
    fn whole(bytes: Vec<u8>) -> Frame {
        Frame { bytes, start: 0 }
    }
}

/// The `AsyncWrite` tower-lsp writes its messages into.
pub struct FrameSplitter {
    frames: UnboundedSender<Frame>,
    pending: Vec<u8>,
}

/// A writer for tower-lsp and an outbox, both writing frames to `out` (the
/// writer task runs until both are dropped).
pub fn outbox<W: AsyncWrite + Unpin + Send + 'static>(out: W) -> (FrameSplitter, Outbox) {
    let (tx, rx) = unbounded_channel();
    let spare = Spare::default();
    tokio::spawn(write_frames(rx, out, spare.clone()));
    (
        FrameSplitter {
            frames: tx.clone(),
            pending: Vec::new(),
        },
        Outbox { frames: tx, spare },
    )
}

async fn write_frames<W: AsyncWrite + Unpin>(
    mut rx: UnboundedReceiver<Frame>,
    mut out: W,
    spare: Spare,
) {
    while let Some(frame) = rx.recv().await {
        if out.write_all(&frame.bytes[frame.start..]).await.is_err() {
            return;
        }
        if frame.bytes.capacity() >= SPARE_MIN {
            let mut spare = spare.lock().unwrap_or_else(|e| e.into_inner());
            if spare.capacity() < frame.bytes.capacity() {
                let mut bytes = frame.bytes;
                bytes.clear();
                *spare = bytes;
            }
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
            let _ = self.frames.send(Frame::whole(frame(&body)));
        }
    }
}

/// Room before a publish for its header: `Content-Length: ` and up to 20
/// digits and the blank line.
const HEADER_ROOM: usize = 40;

/// A `textDocument/publishDiagnostics` written in place: the message up to
/// its diagnostics array after room for the header, then the diagnostics
/// already encoded as JSON ([`PublishBuilder::items`]), then the rest
/// ([`Outbox::publish_built`]). A big file's publish is hundreds of KB:
/// written once, never copied into a frame.
#[derive(Debug)]
pub struct PublishBuilder {
    buf: Vec<u8>,
}

impl PublishBuilder {
    /// The start of the publish of `uri`'s diagnostics, with room for
    /// `capacity` bytes of them.
    pub fn new(uri: &Url, capacity: usize) -> PublishBuilder {
        PublishBuilder::in_buffer(Vec::new(), uri, capacity)
    }

    fn in_buffer(mut buf: Vec<u8>, uri: &Url, capacity: usize) -> PublishBuilder {
        buf.clear();
        buf.reserve(HEADER_ROOM + 256 + capacity);
        buf.resize(HEADER_ROOM, b' ');
        buf.extend_from_slice(
            br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"#,
        );
        // (Serializing a URL cannot fail: it is a string.)
        let _ = serde_json::to_writer(&mut buf, uri);
        buf.extend_from_slice(br#","diagnostics":["#);
        PublishBuilder { buf }
    }

    /// Where the diagnostics go, as the items of a JSON array
    /// (comma-separated, as
    /// [`crate::lsp::publish_cache::PublishCache::encode`] writes them).
    pub fn items(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
}

impl Outbox {
    /// [`PublishBuilder::new`] in the spare buffer if there is one.
    pub fn publish_builder(&self, uri: &Url, capacity: usize) -> PublishBuilder {
        let spare = std::mem::take(&mut *self.spare.lock().unwrap_or_else(|e| e.into_inner()));
        PublishBuilder::in_buffer(spare, uri, capacity)
    }

    /// Sends the publish `built` with `more` diagnostics after its encoded
    /// ones: the same bytes as [`Outbox::publish_diagnostics`] with all of
    /// them.
    pub fn publish_built(&self, built: PublishBuilder, more: &[Diagnostic], version: Option<i32>) {
        let mut body = built.buf;
        for d in more {
            if body.last() != Some(&b'[') {
                body.push(b',');
            }
            // (Serializing these types cannot fail: no map has non-string
            // keys.)
            if serde_json::to_writer(&mut body, d).is_err() {
                return;
            }
        }
        body.push(b']');
        if let Some(v) = version {
            body.extend_from_slice(format!(r#","version":{v}"#).as_bytes());
        }
        body.extend_from_slice(b"}}");
        let header = format!("Content-Length: {}\r\n\r\n", body.len() - HEADER_ROOM);
        let start = HEADER_ROOM - header.len();
        body[start..HEADER_ROOM].copy_from_slice(header.as_bytes());
        let _ = self.frames.send(Frame { bytes: body, start });
    }
}

#[derive(Serialize)]
struct Answer<'a, R, I> {
    jsonrpc: &'static str,
    result: &'a R,
    id: &'a I,
}

impl Outbox {
    /// Sends `window/showMessage` now, ahead of anything tower-lsp writes
    /// after this call: a command's message then comes before the
    /// command's response. Why: lsp-mode 8.0 (Debian 12) stops reading a
    /// chunk of output at the response to a request it waits for, and
    /// loses a notification that follows the response in the same chunk
    /// (issue 39: the Explain message, seen about half the time).
    pub fn show_message(&self, typ: tower_lsp::lsp_types::MessageType, message: &str) {
        let params = tower_lsp::lsp_types::ShowMessageParams {
            typ,
            message: message.to_string(),
        };
        let body = serde_json::to_vec(&Notification {
            jsonrpc: "2.0",
            method: "window/showMessage",
            params: &params,
        });
        if let Ok(body) = body {
            let _ = self.frames.send(Frame::whole(frame(&body)));
        }
    }

    /// Sends the answer `result` to the request `id`, serialized straight
    /// from its typed form into the frame (tower-lsp would first turn it
    /// into a `Value` tree, several times the size of its JSON; see
    /// `server::direct`). Returns false, sending nothing, if `result`
    /// could not be serialized.
    pub fn respond<R: Serialize, I: Serialize>(&self, id: &I, result: &R) -> bool {
        let mut body = vec![b' '; HEADER_ROOM];
        let answer = Answer {
            jsonrpc: "2.0",
            result,
            id,
        };
        if serde_json::to_writer(&mut body, &answer).is_err() {
            return false;
        }
        let header = format!("Content-Length: {}\r\n\r\n", body.len() - HEADER_ROOM);
        let start = HEADER_ROOM - header.len();
        body[start..HEADER_ROOM].copy_from_slice(header.as_bytes());
        let _ = self.frames.send(Frame { bytes: body, start });
        true
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
                let _ = self
                    .frames
                    .send(Frame::whole(std::mem::take(&mut self.pending)));
                return;
            };
            let total = end_of_header + 4 + length;
            if self.pending.len() < total {
                return;
            }
            let rest = self.pending.split_off(total);
            let whole = std::mem::replace(&mut self.pending, rest);
            let _ = self.frames.send(Frame::whole(whole));
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

    /// A publish written from already-encoded items is the same frame as
    /// one serialized whole.
    #[tokio::test]
    async fn an_encoded_publish_is_the_same_frame_as_a_serialized_one() {
        use tower_lsp::lsp_types::{Position, Range};
        let (client, mut server_out) = tokio::io::duplex(1 << 20);
        let (splitter, outbox) = outbox(client);
        let uri = Url::parse("file:///a%20b/x.mapper").unwrap();
        let d = |line: u32, message: &str| Diagnostic {
            range: Range::new(Position::new(line, 0), Position::new(line, 2)),
            message: message.into(),
            ..Default::default()
        };
        let (a, b, c) = (d(0, "a \"quoted\" é"), d(1, "b"), d(2, "c"));
        let items = |ds: &[&Diagnostic]| {
            ds.iter()
                .map(|d| serde_json::to_string(d).unwrap())
                .collect::<Vec<_>>()
                .join(",")
        };
        // Big enough (over `SPARE_MIN`) for its buffer to be kept and
        // taken again by the next publish.
        let big: Vec<Diagnostic> = (0..1500).map(|i| d(i, "a long enough message")).collect();
        let cases: Vec<(Vec<Diagnostic>, Vec<Diagnostic>, Option<i32>)> = vec![
            (vec![], vec![], Some(1)),
            (vec![a.clone()], vec![], None),
            (big.clone(), vec![], Some(4)),
            (vec![], vec![b.clone()], Some(2)),
            (big.clone(), vec![c.clone()], Some(5)),
            (
                vec![a.clone(), b.clone()],
                vec![c.clone(), a.clone()],
                Some(3),
            ),
        ];
        let mut spares = 0;
        for (encoded, more, version) in &cases {
            let all: Vec<Diagnostic> = encoded.iter().chain(more).cloned().collect();
            outbox.publish_diagnostics(&uri, &all, *version);
            let refs: Vec<&Diagnostic> = encoded.iter().collect();
            spares += usize::from(outbox.spare.lock().unwrap().capacity() > 0);
            let mut built = outbox.publish_builder(&uri, 0);
            built.items().extend_from_slice(items(&refs).as_bytes());
            outbox.publish_built(built, more, *version);
            // Let the writer task write (and hand back the buffer).
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
        }
        // The first big publish's buffer was taken by each publish after it
        // that found it handed back.
        assert_eq!(spares, 3);
        drop(splitter);
        drop(outbox);
        let mut got = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut server_out, &mut got)
            .await
            .unwrap();
        let text = String::from_utf8(got).unwrap();
        let frames: Vec<&str> = text.split("Content-Length: ").skip(1).collect();
        assert_eq!(frames.len(), 2 * cases.len());
        for pair in frames.chunks(2) {
            assert_eq!(pair[0], pair[1]);
        }
    }

    /// A direct answer is the JSON tower-lsp writes for the same result
    /// (as a value: tower-lsp's keys come sorted), with a correct header.
    #[tokio::test]
    async fn a_direct_answer_is_the_response_tower_lsp_writes() {
        use tower_lsp::jsonrpc::{Id, Response};
        use tower_lsp::lsp_types::{
            CodeAction, CodeActionKind, CodeActionOrCommand, Position, Range, TextEdit,
            WorkspaceEdit,
        };
        let (client, mut server_out) = tokio::io::duplex(1 << 20);
        let (splitter, outbox) = outbox(client);
        let uri = Url::parse("file:///x.mapper").unwrap();
        let edit = TextEdit::new(
            Range::new(Position::new(1, 2), Position::new(1, 4)),
            "é \"new\"".into(),
        );
        let action = CodeAction {
            title: "Replace".into(),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![Diagnostic {
                message: "m".into(),
                ..Default::default()
            }]),
            edit: Some(WorkspaceEdit::new(
                [(uri.clone(), vec![edit])].into_iter().collect(),
            )),
            is_preferred: Some(true),
            ..Default::default()
        };
        let some = Some(vec![CodeActionOrCommand::CodeAction(action)]);
        let none: Option<Vec<CodeActionOrCommand>> = None;
        let cases = [(Id::Number(7), &some), (Id::String("s".into()), &none)];
        for (id, result) in &cases {
            assert!(outbox.respond(id, result));
        }
        drop(splitter);
        drop(outbox);
        let mut got = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut server_out, &mut got)
            .await
            .unwrap();
        let text = String::from_utf8(got).unwrap();
        let mut rest = text.as_str();
        for (id, result) in &cases {
            let (header, after) = rest.split_once("\r\n\r\n").unwrap();
            let len: usize = header
                .strip_prefix("Content-Length: ")
                .unwrap()
                .parse()
                .unwrap();
            let body: serde_json::Value = serde_json::from_str(&after[..len]).unwrap();
            let expected = Response::from_ok(id.clone(), serde_json::to_value(result).unwrap());
            assert_eq!(body, serde_json::to_value(&expected).unwrap());
            rest = &after[len..];
        }
        assert!(rest.is_empty());
    }
}
