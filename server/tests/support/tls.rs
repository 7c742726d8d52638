//! HTTPS on 127.0.0.1 for the tests: a private certificate authority and a
//! server certificate for 127.0.0.1 signed by it, made at test time with the
//! `openssl` command, and a rustls server (ureq's, the one mapwright links)
//! that serves one connection with them.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use ureq::rustls;
use ureq::rustls::pki_types::pem::PemObject;
use ureq::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A private CA and a server certificate it signed, in a folder of their own.
pub struct TestCa {
    pub dir: PathBuf,
}

impl TestCa {
    /// Makes the CA and the server certificate (`openssl` must be on PATH).
    pub fn new(name: &str) -> TestCa {
        let dir = std::env::temp_dir().join(format!("mw-tls-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("server.ext"),
            "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\n",
        )
        .unwrap();
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
        openssl(
            &dir,
            &[
                &["req", "-x509", "-nodes"][..],
                &ec,
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.pem",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=mapwright test CA",
                ],
            ]
            .concat(),
        );
        openssl(
            &dir,
            &[
                &["req", "-new", "-nodes"][..],
                &ec,
                &[
                    "-keyout",
                    "server.key",
                    "-out",
                    "server.csr",
                    "-subj",
                    "/CN=127.0.0.1",
                ],
            ]
            .concat(),
        );
        openssl(
            &dir,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                "server.pem",
            ],
        );
        TestCa { dir }
    }

    /// The CA certificate (PEM): what a client trusts.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(self.dir.join("server.pem"))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        let key = PrivateKeyDer::from_pem_file(self.dir.join("server.key")).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(
            rustls::crypto::ring::default_provider().into(),
        )
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
        Arc::new(config)
    }

    /// Serves one HTTPS connection on 127.0.0.1 on a thread: `handle` gets
    /// the TLS stream once the request (head and body) is read, and a clone
    /// of the TCP socket under it. Returns the port.
    pub fn serve_one<F>(&self, handle: F) -> u16
    where
        F: FnOnce(&mut rustls::StreamOwned<rustls::ServerConnection, TcpStream>, &TcpStream)
            + Send
            + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let config = self.server_config();
        std::thread::spawn(move || {
            let Some(Ok(tcp)) = listener.incoming().next() else {
                return;
            };
            tcp.set_read_timeout(Some(std::time::Duration::from_secs(60)))
                .unwrap();
            let raw = tcp.try_clone().unwrap();
            let conn = rustls::ServerConnection::new(config).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            if read_request(&mut tls).is_some() {
                handle(&mut tls, &raw);
            }
        });
        port
    }
}

impl Drop for TestCa {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command makes the test certificates (install openssl)");
    assert!(
        out.status.success(),
        "openssl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Reads one HTTP request (head and `Content-Length` body); `None` when the
/// connection fails first (a client that refused the certificate).
fn read_request(stream: &mut impl Read) -> Option<Vec<u8>> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if raw.len() >= end + 4 + length {
                return Some(raw);
            }
        }
        match stream.read(&mut buf) {
            Ok(n) if n > 0 => raw.extend_from_slice(&buf[..n]),
            _ => return None,
        }
    }
}

/// Writes an HTTP answer with `body`.
pub fn answer(stream: &mut impl Write, body: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}
