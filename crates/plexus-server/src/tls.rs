//! TLS for `bolt+s://` and `neo4j+s://`: rustls (with the `ring` provider,
//! no C++ and no system OpenSSL) from a PEM certificate chain and key.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::TlsAcceptor;

#[derive(Debug)]
pub enum TlsError {
    /// A file that could not be read or holds no PEM object of the kind.
    Pem { path: PathBuf, why: String },
    /// rustls refused the certificate and key (they do not match, …).
    Config(String),
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsError::Pem { path, why } => write!(f, "{}: {why}", path.display()),
            TlsError::Config(why) => write!(f, "the TLS certificate and key are not usable: {why}"),
        }
    }
}

impl std::error::Error for TlsError {}

/// The acceptor for a certificate chain and private key in PEM files.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsError> {
    let pem = |path: &Path, why: String| TlsError::Pem {
        path: path.to_path_buf(),
        why,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| pem(cert, e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem(cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(pem(cert, "no certificate in the file".into()));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| pem(key, e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
