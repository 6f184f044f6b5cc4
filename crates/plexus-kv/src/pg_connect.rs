//! How the PostgreSQL backend connects: the URL's parameters that Plexus
//! reads itself, and TLS with rustls (the TLS the Bolt server already
//! uses: no C library).
//!
//! * `pool_size=N`: connections kept open between uses (default
//!   [`crate::postgres::IDLE_CONNECTIONS`]); more are opened while more
//!   snapshots are held at once.
//! * `sslrootcert=<file>` and `sslmode`, as libpq's: `sslmode=require` (or
//!   `verify-ca`, `verify-full`) encrypts, and then the server's
//!   certificate is always verified — chain and host name — against
//!   `sslrootcert=<file>` when given, else the system's roots
//!   (`SSL_CERT_FILE`, else `/etc/ssl/certs/ca-certificates.crt`). So
//!   `require` is as strict as libpq's `verify-full`: a connection that
//!   encrypts to whoever answers is not offered. Without `sslmode`, or with
//!   `disable` or `prefer`, connections are plain, as before.

use crate::{KvError, Result};
use postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use postgres::Socket;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

/// A connection URL made ready for the client, and what else it asks for.
pub(crate) struct Target {
    /// The URL without the parameters only Plexus reads (`sslrootcert`,
    /// `pool_size`), `verify-*` modes given to the client as `require`.
    pub url: String,
    /// The TLS configuration, when the URL asks for TLS.
    pub tls: Option<Arc<ClientConfig>>,
    /// Idle connections to keep.
    pub pool: usize,
}

fn bad(message: String) -> KvError {
    KvError::Backend {
        backend: "postgres",
        message,
    }
}

/// Reads the TLS parameters of a `postgres://…?…` URL.
pub(crate) fn target(url: &str) -> Result<Target> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    let mut mode = None;
    let mut root = None;
    let mut pool = crate::postgres::IDLE_CONNECTIONS;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslrootcert", file)) => root = Some(file.to_string()),
            Some(("pool_size", n)) => {
                pool = n
                    .parse()
                    .ok()
                    .filter(|n| (1..=1000).contains(n))
                    .ok_or_else(|| {
                        bad(format!("pool_size '{n}' must be a number from 1 to 1000"))
                    })?;
            }
            Some(("sslmode", m)) => {
                mode = Some(m.to_string());
                let m = if m.starts_with("verify-") {
                    "require"
                } else {
                    m
                };
                kept.push(format!("sslmode={m}"));
            }
            _ => kept.push(pair.to_string()),
        }
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let wants_tls = matches!(
        mode.as_deref(),
        Some("require" | "verify-ca" | "verify-full")
    );
    if !wants_tls {
        if root.is_some() {
            return Err(bad(
                "sslrootcert is given but TLS is not asked for: add sslmode=require".into(),
            ));
        }
        return Ok(Target {
            url,
            tls: None,
            pool,
        });
    }
    Ok(Target {
        url,
        tls: Some(Arc::new(config(root.as_deref())?)),
        pool,
    })
}

/// A client configuration trusting the certificates of `root` (a PEM
/// file), or the system's.
fn config(root: Option<&str>) -> Result<ClientConfig> {
    let file = match root {
        Some(f) => f.to_string(),
        None => std::env::var("SSL_CERT_FILE")
            .unwrap_or_else(|_| "/etc/ssl/certs/ca-certificates.crt".into()),
    };
    let pem = std::fs::read(&file)
        .map_err(|e| bad(format!("cannot read the certificates in {file}: {e}")))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| bad(format!("{file} holds a damaged certificate: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| bad(format!("{file} holds a certificate rustls refuses: {e}")))?;
    }
    if roots.is_empty() {
        return Err(bad(format!("{file} holds no certificate")));
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The connector handed to the client: one TLS handshake per connection.
pub(crate) struct Rustls(pub Arc<ClientConfig>);

impl MakeTlsConnect<Socket> for Rustls {
    type Stream = Stream;
    type TlsConnect = Connect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> io::Result<Connect> {
        let name = ServerName::try_from(domain.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(Connect {
            config: self.0.clone(),
            name,
        })
    }
}

pub(crate) struct Connect {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
}

type Handshake = Pin<Box<dyn Future<Output = io::Result<Stream>> + Send>>;

impl TlsConnect<Socket> for Connect {
    type Stream = Stream;
    type Error = io::Error;
    type Future = Handshake;

    fn connect(self, socket: Socket) -> Handshake {
        Box::pin(async move {
            let connector = tokio_rustls::TlsConnector::from(self.config);
            Ok(Stream(connector.connect(self.name, socket).await?))
        })
    }
}

/// A TLS connection to the server.
pub(crate) struct Stream(tokio_rustls::client::TlsStream<Socket>);

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

impl TlsStream for Stream {
    fn channel_binding(&self) -> ChannelBinding {
        // SCRAM's channel binding is not offered; password auth is unchanged.
        ChannelBinding::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_what_the_client_reads() {
        let t = target("postgres://u@h:5432/db").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.url, "postgres://u@h:5432/db");
        assert!(t.tls.is_none());
        let t = target("postgres://u@h/db?sslmode=disable&pool_size=3&connect_timeout=5")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.url, "postgres://u@h/db?sslmode=disable&connect_timeout=5");
        assert!(t.tls.is_none());
        assert_eq!(t.pool, 3);
        let e = target("postgres://u@h/db?pool_size=0")
            .err()
            .map(|e| e.to_string());
        assert!(e.unwrap_or_default().contains("pool_size '0'"));
        // A root file that is not there is named.
        let e = target("postgres://u@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
        let e = target("postgres://u@h/db?sslrootcert=/x.pem")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("sslmode=require"), "{e}");
    }
}
