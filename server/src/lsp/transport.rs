//! A guard in front of tower-lsp's reader.
//!
//! tower-lsp answers a malformed message with a JSON-RPC error but then
//! stops reading (its framed reader ends after the first decoding error), so
//! one bad message would end the session. This pump reads the
//! Content-Length frames from stdin itself and passes valid messages through
//! unchanged; a body that is not JSON, or not a JSON-RPC message, is replaced
//! by a request to [`MALFORMED_METHOD`] with id `null`, which the server
//! answers with the protocol's parse error / invalid request, as the
//! JSON-RPC specification asks.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tower_lsp::jsonrpc::{Request, Response};

/// The internal method a malformed message is turned into.
pub const MALFORMED_METHOD: &str = "mapwright/malformedMessage";

/// Bodies larger than this are skipped (and answered as malformed).
const MAX_BODY: usize = 256 << 20;

/// A reader for the server that yields stdin's messages, sanitized.
pub fn guarded_stdin() -> DuplexStream {
    let (server_end, pump_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(pump(tokio::io::stdin(), pump_end));
    server_end
}

/// Copies frames from `input` to `out` until either ends.
pub async fn pump(input: impl AsyncRead + Unpin, mut out: DuplexStream) {
    let mut r = BufReader::new(input);
    while let Some(len) = read_header(&mut r).await {
        let body = if len > MAX_BODY {
            let skipped =
                tokio::io::copy(&mut (&mut r).take(len as u64), &mut tokio::io::sink()).await;
            if skipped.is_err() {
                break;
            }
            Vec::new()
        } else {
            let mut body = vec![0; len];
            if r.read_exact(&mut body).await.is_err() {
                break;
            }
            body
        };
        let body = sanitize(body);
        let frame = format!("Content-Length: {}\r\n\r\n", body.len());
        if out.write_all(frame.as_bytes()).await.is_err() || out.write_all(&body).await.is_err() {
            break;
        }
    }
    // Dropping `out` ends the server's input, as the end of stdin would.
}

/// Reads header lines up to the blank line; returns the Content-Length, or
/// `None` at the end of input. A header block without a usable length is
/// skipped; a length is also found after stray bytes on the same line (the
/// tail of a body whose length was wrong), so the stream resynchronizes.
async fn read_header(r: &mut (impl AsyncBufReadExt + Unpin)) -> Option<usize> {
    let mut length = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line).await.ok()? == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            if length.is_some() {
                return length;
            }
            continue;
        }
        if let Some(i) = text.find("Content-Length:") {
            length = text[i + "Content-Length:".len()..].trim().parse().ok();
        }
    }
}

/// The body unchanged if it is a JSON-RPC message tower-lsp can decode;
/// otherwise a request to [`MALFORMED_METHOD`] saying what was wrong.
pub fn sanitize(body: Vec<u8>) -> Vec<u8> {
    if serde_json::from_slice::<Request>(&body).is_ok()
        || serde_json::from_slice::<Response>(&body).is_ok()
    {
        return body;
    }
    let problem = if serde_json::from_slice::<serde_json::Value>(&body).is_ok() {
        "invalid"
    } else {
        "parse"
    };
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "method": MALFORMED_METHOD,
        "params": {"problem": problem},
    })
    .to_string()
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_messages_pass_and_others_are_replaced() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#.to_vec();
        assert_eq!(sanitize(ok.clone()), ok);
        let response = br#"{"jsonrpc":"2.0","id":1,"result":null}"#.to_vec();
        assert_eq!(sanitize(response.clone()), response);
        let bad = String::from_utf8(sanitize(b"{not json".to_vec())).unwrap();
        assert!(bad.contains(MALFORMED_METHOD) && bad.contains("parse"));
        let odd = String::from_utf8(sanitize(b"[1, 2]".to_vec())).unwrap();
        assert!(odd.contains("invalid"));
    }

    #[tokio::test]
    async fn frames_are_resynchronized_after_garbage() {
        let input: &[u8] =
            b"Content-Length: 5\r\n\r\nabcdeX-Junk: 1\r\n\r\nxyzContent-Length: 2\r\n\r\n{}";
        let (mut server_end, pump_end) = tokio::io::duplex(1 << 12);
        pump(input, pump_end).await;
        let mut out = String::new();
        server_end.read_to_string(&mut out).await.unwrap();
        let frames: Vec<&str> = out.split("Content-Length: ").skip(1).collect();
        assert_eq!(frames.len(), 2, "{out}");
        assert!(frames.iter().all(|f| f.contains(MALFORMED_METHOD)), "{out}");
    }
}
