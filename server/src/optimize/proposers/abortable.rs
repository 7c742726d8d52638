//! LLM requests whose connection a cancel closes. Cancelling an LLM request
//! shuts its socket down, so the model server (llama.cpp, vLLM, Ollama, a
//! hosted API) sees its client go and stops generating, instead of finishing
//! an answer nobody will read.
//!
//! - `http://`: [`post`], a chat-completions POST over a socket kept in a
//!   [`Socket`].
//! - `https://`: ureq with [`CancellableTls`], which keeps the TCP socket
//!   under the TLS session in a [`Socket`] when it connects.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Holds the socket of the request in flight, for [`Socket::abort`].
#[derive(Debug, Default)]
pub struct Socket(Mutex<Slot>);

#[derive(Debug, Default)]
struct Slot {
    stream: Option<TcpStream>,
    /// Aborted: a socket kept from now on is shut down at once.
    aborted: bool,
}

impl Socket {
    /// A slot with no request in flight.
    pub fn new() -> Arc<Socket> {
        Arc::new(Socket::default())
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps (a clone of) the request's socket; after [`Socket::abort`] it
    /// is shut down instead (a cancel that came while it connected).
    pub fn keep(&self, stream: TcpStream) {
        let mut slot = self.slot();
        if slot.aborted {
            let _ = stream.shutdown(Shutdown::Both);
        } else {
            slot.stream = Some(stream);
        }
    }

    /// Forgets the socket (the request is over).
    fn release(&self) {
        self.slot().stream.take();
    }

    /// Closes the request's connection both ways (the server's next write
    /// or read fails); the request then ends with an error.
    pub fn abort(&self) {
        let mut slot = self.slot();
        slot.aborted = true;
        if let Some(s) = slot.stream.take() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// ureq's rustls connector, keeping each connection's TCP socket in a
/// [`Socket`] before the TLS handshake, so that a cancel can shut it down
/// (ureq gives no other way to reach it).
pub struct CancellableTls {
    pub config: Arc<ureq::rustls::ClientConfig>,
    pub socket: Arc<Socket>,
}

impl ureq::TlsConnector for CancellableTls {
    fn connect(
        &self,
        dns_name: &str,
        io: Box<dyn ureq::ReadWrite>,
    ) -> Result<Box<dyn ureq::ReadWrite>, ureq::Error> {
        if let Some(clone) = io.socket().and_then(|s| s.try_clone().ok()) {
            self.socket.keep(clone);
        }
        ureq::TlsConnector::connect(&self.config, dns_name, io)
    }
}

/// The TLS settings of LLM requests: the roots browsers trust (Mozilla's,
/// as ureq has by default) and the certificates of `ca_file` (PEM), for an
/// endpoint behind a private certificate authority (a self-hosted vLLM).
pub fn tls_config(
    ca_file: Option<&std::path::Path>,
) -> Result<Arc<ureq::rustls::ClientConfig>, String> {
    use ureq::rustls;
    use ureq::rustls::pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = ca_file {
        let what = || format!("the CA file {}", path.display());
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("{}: {e}", what()))?;
        if certs.is_empty() {
            return Err(format!("{}: no PEM certificate in it", what()));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| format!("{}: {e}", what()))?;
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(
        rustls::crypto::ring::default_provider().into(),
    )
    .with_protocol_versions(&[&rustls::version::TLS12, &rustls::version::TLS13])
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(Arc::new(config))
}

/// What went wrong.
#[derive(Debug)]
pub enum PostError {
    /// No answer within the timeout.
    Timeout,
    /// Anything else, said for the user.
    Other(String),
}

/// POSTs `body` to `url` (`http://host[:port]/path`) with `headers`, and
/// returns the status and the body of the answer. The socket is kept in
/// `socket` while the request is in flight.
pub fn post(
    url: &str,
    headers: &[(&str, String)],
    body: &str,
    timeout: Duration,
    socket: &Socket,
) -> Result<(u16, String), PostError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| PostError::Other(format!("not an http:// URL: {url}")))?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let addr_text = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:80")
    };
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => PostError::Timeout,
        _ => PostError::Other(e.to_string()),
    };
    let addr = addr_text
        .to_socket_addrs()
        .map_err(io)?
        .next()
        .ok_or_else(|| PostError::Other(format!("no address for {host}")))?;
    let mut stream =
        TcpStream::connect_timeout(&addr, timeout.min(Duration::from_secs(30))).map_err(io)?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    if let Ok(clone) = stream.try_clone() {
        socket.keep(clone);
    }
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let sent = stream
        .write_all(head.as_bytes())
        .and_then(|_| stream.write_all(body.as_bytes()));
    let mut raw = Vec::new();
    let read = sent.and_then(|_| stream.read_to_end(&mut raw));
    socket.release();
    read.map_err(io)?;
    parse(&raw)
}

/// Status and body of a whole HTTP/1.1 answer (the server closed the
/// connection after it): `Content-Length` or chunked.
fn parse(raw: &[u8]) -> Result<(u16, String), PostError> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| PostError::Other("the connection closed before an answer".into()))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut body = &raw[split + 4..];
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| PostError::Other("a malformed status line".into()))?;
    let header = |name: &str| {
        head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let chunked = header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let text = if chunked {
        let mut out = Vec::new();
        loop {
            let end = body
                .windows(2)
                .position(|w| w == b"\r\n")
                .ok_or_else(|| PostError::Other("a cut-off chunked answer".into()))?;
            let size_text = String::from_utf8_lossy(&body[..end]);
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| PostError::Other("a malformed chunk size".into()))?;
            body = &body[end + 2..];
            if size == 0 {
                break;
            }
            if body.len() < size {
                return Err(PostError::Other("a cut-off chunked answer".into()));
            }
            out.extend_from_slice(&body[..size]);
            body = body.get(size + 2..).unwrap_or(&[]);
        }
        out
    } else {
        match header("content-length").and_then(|v| v.parse::<usize>().ok()) {
            Some(n) if n <= body.len() => body[..n].to_vec(),
            Some(_) => return Err(PostError::Other("a cut-off answer".into())),
            None => body.to_vec(),
        }
    };
    Ok((status, String::from_utf8_lossy(&text).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_with_a_length_or_in_chunks_are_read_whole() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(parse(plain).unwrap(), (200, "hello".into()));
        let chunked =
            b"HTTP/1.1 404 X\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse(chunked).unwrap(), (404, "abcde".into()));
        assert!(matches!(
            parse(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello"),
            Err(PostError::Other(_))
        ));
        assert!(parse(b"HTTP/1.1 200").is_err());
    }
}
