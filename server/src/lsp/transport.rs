//! A guard in front of tower-lsp's reader: every message a client can send
//! gets the answer the specifications ask for, and the session survives it.
//!
//! tower-lsp 0.20 (unmaintained) has gaps this pump closes before a message
//! reaches it. We normalise here rather than switch to the
//! `tower-lsp-server` fork: the fix is a few lines in one place, covers the
//! framing problems the fork shares, and leaves every handler as it is.
//! - A malformed message would end the session (its framed reader stops at
//!   the first decoding error). A body that is not JSON, or not a JSON-RPC
//!   message (`{"jsonrpc":"2.0"}`, a `method` that is not a string), is
//!   replaced by a request to [`MALFORMED_METHOD`], which the server answers
//!   with the parse error / invalid request JSON-RPC asks for, with the
//!   message's id when it had one.
//! - A request whose method starts with `$/` and has an id gets no reply from
//!   tower-lsp; the LSP specification wants MethodNotFound. It becomes a
//!   [`MALFORMED_METHOD`] request with the same id, answered that way.
//! - `"params": null` (Eglot, lsp4ij) is rejected by tower-lsp even where the
//!   specification says the params are `void` (`shutdown`, `exit`) or
//!   optional. We drop a null `params` (so `shutdown` succeeds and a method
//!   that needs params reports them missing), and give `initialized`, whose
//!   params are an empty object, `{}`. An empty object or array for
//!   `shutdown` or `exit` (lsp-mode sends `{}`) is dropped too.
//! - A header announcing more than [`MAX_BODY`] bytes is answered with an
//!   error and its body is not read: the stream is scanned for the next
//!   header instead, with bounded memory, so a wrong length (`Content-Length:
//!   99999999999`) does not make the server deaf.
//! - The end of input is reported ([`guarded_stdin`]'s signal): tower-lsp
//!   waits for its pending handlers at the end of input, and one awaiting
//!   the client's answer to a server request would wait forever.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Notify;
use tower_lsp::jsonrpc::{Request, Response};

/// The internal method a malformed message is turned into.
pub const MALFORMED_METHOD: &str = "mapwright/malformedMessage";

/// Largest message body accepted. Editors send whole documents in
/// `didOpen`; 64 MiB is far above any mapper.
pub const MAX_BODY: usize = 64 << 20;

/// Longest header line kept while looking for the next header; longer
/// lines (the body of an oversized message being skipped) keep their tail.
const MAX_HEADER_LINE: usize = 8 << 10;

/// A reader for the server that yields stdin's messages, sanitized, and a
/// signal raised when stdin ends.
pub fn guarded_stdin() -> (DuplexStream, Arc<Notify>) {
    let (server_end, pump_end) = tokio::io::duplex(1 << 16);
    let eof = Arc::new(Notify::new());
    let signal = eof.clone();
    tokio::spawn(async move {
        pump(tokio::io::stdin(), pump_end).await;
        // `notify_one` keeps a permit: the signal is not lost if nobody
        // waits yet.
        signal.notify_one();
    });
    (server_end, eof)
}

/// Copies frames from `input` to `out` until either ends.
pub async fn pump(input: impl AsyncRead + Unpin, mut out: DuplexStream) {
    let mut r = BufReader::new(input);
    while let Some(len) = read_header(&mut r).await {
        let body = if len > MAX_BODY {
            // Not read: the scan for the next header skips it (or finds that
            // the length was wrong).
            malformed(
                Value::Null,
                &format!("too large: {len} bytes (the limit is {MAX_BODY})"),
            )
        } else {
            let mut body = vec![0; len];
            if tokio::io::AsyncReadExt::read_exact(&mut r, &mut body)
                .await
                .is_err()
            {
                break;
            }
            sanitize(body)
        };
        let frame = format!("Content-Length: {}\r\n\r\n", body.len());
        if out.write_all(frame.as_bytes()).await.is_err() || out.write_all(&body).await.is_err() {
            break;
        }
    }
    // Dropping `out` ends the server's input, as the end of stdin would.
}

/// Reads one line (through `\n`) into `line`, keeping at most
/// [`MAX_HEADER_LINE`] bytes (the tail) so a huge line costs no memory.
/// Returns the number of bytes consumed (0 at the end of input).
async fn read_line_tail(
    r: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> std::io::Result<usize> {
    line.clear();
    let mut total = 0;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(total);
        }
        let (n, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        line.extend_from_slice(&buf[..n]);
        if line.len() > MAX_HEADER_LINE {
            line.drain(..line.len() - MAX_HEADER_LINE);
        }
        r.consume(n);
        total += n;
        if done {
            return Ok(total);
        }
    }
}

/// Reads header lines up to the blank line; returns the Content-Length, or
/// `None` at the end of input. A header block without a usable length is
/// skipped; a length is also found after stray bytes on the same line (the
/// tail of a body whose length was wrong), so the stream resynchronizes.
async fn read_header(r: &mut (impl AsyncBufRead + Unpin)) -> Option<usize> {
    let mut length = None;
    let mut line = Vec::new();
    loop {
        if read_line_tail(r, &mut line).await.ok()? == 0 {
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
            // A number too large for `usize` is still too large.
            let digits = text[i + "Content-Length:".len()..].trim();
            length = match digits.parse::<usize>() {
                Ok(n) => Some(n),
                Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                    Some(usize::MAX)
                }
                Err(_) => None,
            };
        }
    }
}

/// The stand-in request for a message that gets an error reply: `id` is the
/// message's (null if it had none or it could not be read).
fn malformed(id: Value, problem: &str) -> Vec<u8> {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": MALFORMED_METHOD,
        "params": {"problem": problem},
    })
    .to_string()
    .into_bytes()
}

/// Methods whose params the specification declares `void`.
const VOID_METHODS: &[&str] = &["shutdown", "exit"];

/// The body as tower-lsp should see it: unchanged when it is a JSON-RPC
/// message that needs nothing, normalised (`params: null`), or a request to
/// [`MALFORMED_METHOD`] saying what was wrong.
pub fn sanitize(body: Vec<u8>) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<Value>(&body) else {
        return malformed(Value::Null, "parse");
    };
    let Some(obj) = value.as_object_mut() else {
        return malformed(Value::Null, "invalid");
    };
    let id = match obj.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    let changed = match obj.get("method") {
        Some(Value::String(method)) => {
            let method = method.clone();
            if method.starts_with("$/") && obj.contains_key("id") {
                return malformed(id, &format!("unknown: {method}"));
            }
            normalise_params(&method, obj)
        }
        Some(_) => return malformed(id, "invalid"),
        // A response: needs an id and a result or an error.
        None => {
            if !obj.contains_key("id") || !(obj.contains_key("result") || obj.contains_key("error"))
            {
                return malformed(id, "invalid");
            }
            false
        }
    };
    let body = if changed {
        value.to_string().into_bytes()
    } else {
        body
    };
    if serde_json::from_slice::<Request>(&body).is_ok()
        || serde_json::from_slice::<Response>(&body).is_ok()
    {
        body
    } else {
        malformed(id, "invalid")
    }
}

/// Replaces a null or missing `params` by what the method's handler accepts;
/// returns whether anything changed.
fn normalise_params(method: &str, obj: &mut Map<String, Value>) -> bool {
    let params = obj.get("params");
    // lsp-mode sends `shutdown` with `"params": {}`, which tower-lsp also
    // rejects ("Unexpected params"), and it then kills the server (issue
    // 39): an empty object or array for a void method is no params too.
    let empty = match params {
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    };
    if empty && VOID_METHODS.contains(&method) {
        return obj.remove("params").is_some();
    }
    let missing = matches!(params, None | Some(Value::Null));
    if !missing {
        return false;
    }
    if method == "initialized" {
        obj.insert("params".into(), Value::Object(Map::new()));
        return true;
    }
    if VOID_METHODS.contains(&method) || params.is_some() {
        return obj.remove("params").is_some();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

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

    fn json(body: Vec<u8>) -> Value {
        serde_json::from_slice(&body).unwrap()
    }

    #[test]
    fn every_request_gets_a_reply_and_null_params_are_normalised() {
        // Only `jsonrpc`: invalid request, id null.
        let v = json(sanitize(br#"{"jsonrpc":"2.0"}"#.to_vec()));
        assert_eq!(v["method"], MALFORMED_METHOD);
        assert_eq!(v["params"]["problem"], "invalid");
        assert!(v["id"].is_null());
        // `$/` request with an id: MethodNotFound, same id.
        let v = json(sanitize(
            br#"{"jsonrpc":"2.0","id":7,"method":"$/x","params":{}}"#.to_vec(),
        ));
        assert_eq!(v["id"], 7);
        assert_eq!(v["params"]["problem"], "unknown: $/x");
        // A `$/` notification passes.
        let n = br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#.to_vec();
        assert_eq!(sanitize(n.clone()), n);
        // Null params: dropped for void methods, `{}` for `initialized`.
        let v = json(sanitize(
            br#"{"jsonrpc":"2.0","id":2,"method":"shutdown","params":null}"#.to_vec(),
        ));
        assert!(v.get("params").is_none() && v["method"] == "shutdown");
        // Empty params for a void method (lsp-mode's `shutdown`): dropped.
        for body in [
            br#"{"jsonrpc":"2.0","id":3,"method":"shutdown","params":{}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","method":"exit","params":[]}"#.to_vec(),
        ] {
            let v = json(sanitize(body));
            assert!(v.get("params").is_none(), "{v}");
        }
        // Other params of a void method are left for tower-lsp to refuse.
        let v = json(sanitize(
            br#"{"jsonrpc":"2.0","id":4,"method":"shutdown","params":{"a":1}}"#.to_vec(),
        ));
        assert_eq!(v["params"], serde_json::json!({"a": 1}));
        let v = json(sanitize(
            br#"{"jsonrpc":"2.0","method":"initialized","params":null}"#.to_vec(),
        ));
        assert_eq!(v["params"], serde_json::json!({}));
        let v = json(sanitize(
            br#"{"jsonrpc":"2.0","method":"initialized"}"#.to_vec(),
        ));
        assert_eq!(v["params"], serde_json::json!({}));
        // A method that is not a string: invalid, with the id.
        let v = json(sanitize(
            br#"{"jsonrpc":"2.0","id":"a","method":3}"#.to_vec(),
        ));
        assert_eq!(
            (v["id"].as_str(), v["params"]["problem"].as_str()),
            (Some("a"), Some("invalid"))
        );
    }

    #[tokio::test]
    async fn an_oversized_header_is_answered_and_the_next_message_still_read() {
        let mut input = b"Content-Length: 99999999999\r\n\r\n".to_vec();
        // Junk (the start of a body that never comes whole), a long line of it.
        input.extend(vec![b'x'; 100_000]);
        let ok = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        input.extend(format!("Content-Length: {}\r\n\r\n", ok.len()).bytes());
        input.extend(ok);
        let (mut server_end, pump_end) = tokio::io::duplex(1 << 20);
        pump(input.as_slice(), pump_end).await;
        let mut out = String::new();
        server_end.read_to_string(&mut out).await.unwrap();
        let frames: Vec<&str> = out.split("Content-Length: ").skip(1).collect();
        assert_eq!(frames.len(), 2, "{out}");
        assert!(frames[0].contains("too large"), "{out}");
        assert!(frames[1].contains("\"shutdown\""), "{out}");
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
