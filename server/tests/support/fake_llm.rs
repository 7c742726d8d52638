//! A fake OpenAI-compatible chat-completions server on 127.0.0.1 that speaks
//! the real wire protocol (HTTP/1.1, JSON bodies) and answers from a script.
//! Requests are recorded so tests can inspect the prompts.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One scripted answer: HTTP status and body.
pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl Reply {
    /// A successful completion whose message content is `content`.
    pub fn content(content: &str, prompt_tokens: u64, completion_tokens: u64) -> Reply {
        let body = serde_json::json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
        });
        Reply {
            status: 200,
            body: body.to_string(),
        }
    }

    pub fn raw(status: u16, body: &str) -> Reply {
        Reply {
            status,
            body: body.to_string(),
        }
    }
}

/// The running server.
pub struct FakeLlm {
    pub base_url: String,
    pub requests: Arc<Mutex<Vec<serde_json::Value>>>,
    pub auth_headers: Arc<Mutex<Vec<String>>>,
}

impl FakeLlm {
    /// Starts a server answering with `script` in order (the last reply repeats).
    pub fn start(script: Vec<Reply>) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let auth_headers = Arc::new(Mutex::new(Vec::new()));
        let (req, auth) = (requests.clone(), auth_headers.clone());
        std::thread::spawn(move || {
            let mut n = 0usize;
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let reply = &script[n.min(script.len() - 1)];
                n += 1;
                serve(stream, reply, &req, &auth);
            }
        });
        FakeLlm {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            requests,
            auth_headers,
        }
    }
}

fn serve(
    stream: TcpStream,
    reply: &Reply,
    requests: &Mutex<Vec<serde_json::Value>>,
    auth: &Mutex<Vec<String>>,
) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() || line == "\r\n" || line.is_empty() {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("authorization:") {
            auth.lock().unwrap().push(line.trim().to_string());
        }
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    assert!(
        request_line.starts_with("POST /v1/chat/completions "),
        "unexpected request: {request_line}"
    );
    if let Ok(v) = serde_json::from_slice(&body) {
        requests.lock().unwrap().push(v);
    }
    let mut stream = stream;
    let response = format!(
        "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        reply.status,
        reply.body.len(),
        reply.body
    );
    let _ = stream.write_all(response.as_bytes());
}
