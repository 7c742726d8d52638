//! Just enough HTTP/1.1 for the runtime service and its client: one request
//! per connection (`Connection: close`), `Content-Length` bodies only, with
//! limits on header and body size. No chunked encoding, no keep-alive, no TLS
//! (the service binds loopback by default; put a TLS proxy in front of it
//! otherwise).

use std::io::{BufRead, BufReader, Read, Write};

/// Most bytes of request line plus headers accepted.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// A connection read under one deadline for the whole request: each read
/// waits at most until the deadline, so a client that trickles a byte at a
/// time (slowloris) loses its connection when the deadline passes instead of
/// resetting a per-read timeout forever.
pub struct Deadline<'a> {
    stream: &'a std::net::TcpStream,
    until: std::time::Instant,
}

impl<'a> Deadline<'a> {
    pub fn new(stream: &'a std::net::TcpStream, within: std::time::Duration) -> Deadline<'a> {
        Deadline {
            stream,
            until: std::time::Instant::now() + within,
        }
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self
            .until
            .saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the request took too long to arrive",
            ));
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

/// 408 when the client was too slow (see [`Deadline`]), else 400.
fn read_error(what: &str, e: &std::io::Error) -> HttpError {
    let slow = matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    );
    HttpError::new(if slow { 408 } else { 400 }, format!("{what}: {e}"))
}

/// A parsed request.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path without the query string.
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first header called `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request could not be read, with the status to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    pub status: u16,
    pub message: String,
}

impl HttpError {
    pub fn new(status: u16, message: impl Into<String>) -> HttpError {
        HttpError {
            status,
            message: message.into(),
        }
    }
}

/// Reads one request, refusing heads over [`MAX_HEAD_BYTES`] and bodies
/// over `max_body`.
pub fn read_request(stream: impl Read, max_body: usize) -> Result<Request, HttpError> {
    let mut reader = BufReader::new(stream);
    let mut head_bytes = 0usize;
    let mut line = String::new();
    let mut read_line = |reader: &mut BufReader<_>, line: &mut String| -> Result<(), HttpError> {
        line.clear();
        let n = reader
            .by_ref()
            .take((MAX_HEAD_BYTES - head_bytes.min(MAX_HEAD_BYTES)) as u64 + 1)
            .read_line(line)
            .map_err(|e| read_error("cannot read the request", &e))?;
        head_bytes += n;
        if head_bytes > MAX_HEAD_BYTES {
            return Err(HttpError::new(431, "request header too large"));
        }
        if n == 0 {
            return Err(HttpError::new(
                400,
                "connection closed before the request ended",
            ));
        }
        Ok(())
    };
    read_line(&mut reader, &mut line)?;
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(HttpError::new(400, "malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(HttpError::new(505, "only HTTP/1.x is supported"));
    }
    let method = method.to_string();
    let path = target.split('?').next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        read_line(&mut reader, &mut line)?;
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        let Some((name, value)) = l.split_once(':') else {
            return Err(HttpError::new(400, "malformed header line"));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut req = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if req
        .header("transfer-encoding")
        .is_some_and(|v| !v.eq_ignore_ascii_case("identity"))
    {
        return Err(HttpError::new(
            411,
            "chunked bodies are not supported; send Content-Length",
        ));
    }
    let len = match req.header("content-length") {
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| HttpError::new(400, "bad Content-Length"))?,
        None => 0,
    };
    if len > max_body {
        return Err(HttpError::new(
            413,
            format!("request body of {len} bytes exceeds the limit of {max_body}"),
        ));
    }
    let mut body = vec![0u8; len];
    reader
        .read_exact(&mut body)
        .map_err(|e| read_error("cannot read the request body", &e))?;
    req.body = body;
    Ok(req)
}

/// The reason phrase of a status code.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// Writes a JSON response and closes the exchange.
pub fn write_json(
    mut stream: impl Write,
    status: u16,
    body: &str,
    extra_headers: &[(&str, String)],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    for (k, v) in extra_headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

/// A response as the client reads it.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Reads a response (status line, headers, `Content-Length` body or
/// everything up to the close), refusing bodies over `max_body`.
pub fn read_response(stream: impl Read, max_body: usize) -> std::io::Result<Response> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| bad("malformed status line"))?;
    let mut len: Option<usize> = None;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().ok();
            }
        }
    }
    let mut body = Vec::new();
    match len {
        Some(n) if n > max_body => return Err(bad("response too large")),
        Some(n) => {
            body.resize(n, 0);
            reader.read_exact(&mut body)?;
        }
        None => {
            reader.take(max_body as u64 + 1).read_to_end(&mut body)?;
            if body.len() > max_body {
                return Err(bad("response too large"));
            }
        }
    }
    Ok(Response { status, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_with_limits() {
        let raw = b"POST /v1/run?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nAuthorization: Bearer t\r\n\r\n{}";
        let r = read_request(&raw[..], 10).unwrap();
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v1/run"));
        assert_eq!(r.header("authorization"), Some("Bearer t"));
        assert_eq!(r.body, b"{}");
        assert_eq!(read_request(&raw[..], 1).unwrap_err().status, 413);
        assert_eq!(
            read_request(&b"garbage\r\n\r\n"[..], 10)
                .unwrap_err()
                .status,
            400
        );
        let huge = format!(
            "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEAD_BYTES)
        );
        assert_eq!(read_request(huge.as_bytes(), 10).unwrap_err().status, 431);
    }

    #[test]
    fn responses_round_trip() {
        let mut out = Vec::new();
        write_json(
            &mut out,
            429,
            "{\"error\":\"busy\"}",
            &[("Retry-After", "1".into())],
        )
        .unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
        let r = read_response(&out[..], 1000).unwrap();
        assert_eq!(r.status, 429);
        assert_eq!(r.body, b"{\"error\":\"busy\"}");
    }
}
