//! The listener: accepts connections, negotiates the protocol version,
//! then runs each connection as a reader task and a worker
//! thread ([`crate::connection`]).

use crate::auth::Auth;
use crate::connection::{Connection, Control, Shared};
use crate::message::{self, ReadError, Request};
use crate::status;
use crate::Version;
use plexus::Database;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

/// The versions this server speaks, newest first.
pub const SUPPORTED: [Version; 9] = [
    Version(5, 8),
    Version(5, 7),
    Version(5, 6),
    Version(5, 5),
    Version(5, 4),
    Version(5, 3),
    Version(5, 2),
    Version(5, 1),
    Version(5, 0),
];

/// How long a stopping server waits for its connections to close.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

const MAGIC: [u8; 4] = [0x60, 0x60, 0xB0, 0x17];
/// The slot a client sends to offer manifest-style negotiation.
const MANIFEST_V1: [u8; 4] = [0x00, 0x00, 0x01, 0xFF];

/// How a server runs.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// The address put in routing tables; the listen address when unset.
    pub advertised: Option<String>,
    pub auth: Auth,
    /// The graph a client gets when it names no database (or `neo4j`).
    pub default_graph: String,
    /// Connections served at once; more are closed right after accepting.
    pub max_connections: usize,
    /// The largest message a client may send.
    pub max_message: usize,
    /// A client must finish its handshake within this time.
    pub handshake_timeout: Duration,
    /// TLS (`bolt+s://`): every connection must negotiate it.
    pub tls: Option<Tls>,
}

/// A TLS acceptor ([`crate::tls::acceptor`]).
#[derive(Clone)]
pub struct Tls(pub tokio_rustls::TlsAcceptor);

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

impl Config {
    pub fn new(listen: SocketAddr) -> Config {
        Config {
            listen,
            advertised: None,
            auth: Auth::None,
            default_graph: plexus::DEFAULT_GRAPH.to_string(),
            max_connections: 256,
            max_message: 64 << 20,
            handshake_timeout: Duration::from_secs(10),
            tls: None,
        }
    }
}

#[derive(Debug)]
pub enum ServerError {
    Bind {
        addr: SocketAddr,
        error: std::io::Error,
    },
    /// Authentication off on an address others can reach.
    UnsafeNoAuth(SocketAddr),
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerError::Bind { addr, error } => write!(f, "cannot listen on {addr}: {error}"),
            ServerError::UnsafeNoAuth(a) => write!(
                f,
                "authentication can be turned off only on a loopback address, not {a}"
            ),
        }
    }
}

impl std::error::Error for ServerError {}

/// A running server; dropping the handle does not stop it, [`Handle::shutdown`] does.
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
    config: Config,
    active: Arc<AtomicUsize>,
    /// Connections over the limit being told so.
    refusing: Arc<AtomicUsize>,
}

/// Stops a running server.
#[derive(Clone)]
pub struct Handle {
    stop: watch::Sender<bool>,
}

impl Handle {
    /// Stops accepting; connections finish the request they are on, and
    /// an open transaction is rolled back when its connection closes.
    pub fn shutdown(&self) {
        let _ = self.stop.send(true);
    }
}

impl Server {
    /// Binds the listening socket (so its port is known before serving).
    pub async fn bind(db: Database, config: Config) -> Result<Server, ServerError> {
        if matches!(config.auth, Auth::None) && !config.listen.ip().is_loopback() {
            return Err(ServerError::UnsafeNoAuth(config.listen));
        }
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|error| ServerError::Bind {
                    addr: config.listen,
                    error,
                })?;
        let local = listener.local_addr().map_err(|error| ServerError::Bind {
            addr: config.listen,
            error,
        })?;
        let shared = Arc::new(Shared {
            db,
            auth: config.auth.clone(),
            default_graph: config.default_graph.clone(),
            advertised: config
                .advertised
                .clone()
                .unwrap_or_else(|| local.to_string()),
            connections: AtomicU64::new(0),
            bookmarks: AtomicU64::new(0),
        });
        Ok(Server {
            listener,
            shared,
            config,
            active: Arc::new(AtomicUsize::new(0)),
            refusing: Arc::new(AtomicUsize::new(0)),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.config.listen)
    }

    /// Serves until `handle.shutdown()`.
    pub async fn serve(self, stop: watch::Receiver<bool>) {
        let mut stop = stop;
        loop {
            let accepted = tokio::select! {
                a = self.listener.accept() => a,
                _ = stop.changed() => break,
            };
            let Ok((stream, _peer)) = accepted else {
                // Out of file descriptors and the like: back off, keep serving.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            if self.active.load(Ordering::Acquire) >= self.config.max_connections {
                self.refuse(stream);
                continue;
            }
            self.active.fetch_add(1, Ordering::AcqRel);
            let (shared, config, active) = (
                self.shared.clone(),
                self.config.clone(),
                self.active.clone(),
            );
            let stop = stop.clone();
            tokio::spawn(async move {
                serve_connection(stream, shared, &config, stop).await;
                active.fetch_sub(1, Ordering::AcqRel);
            });
        }
        // Connections saw the stop too: each stops its query, rolls back its
        // transaction and closes. Wait for them, a while.
        let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
        while self.active.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A connection beyond the limit: told why in a FAILURE to its first
    /// message (a transient error, which drivers retry), then closed. Only
    /// a few are answered at once, each for at most two seconds; past that
    /// the connection is just closed.
    fn refuse(&self, stream: TcpStream) {
        const AT_ONCE: usize = 32;
        if self.refusing.fetch_add(1, Ordering::AcqRel) >= AT_ONCE || self.config.tls.is_some() {
            self.refusing.fetch_sub(1, Ordering::AcqRel);
            return; // dropped: the client sees the connection close
        }
        let (refusing, limit) = (self.refusing.clone(), self.config.max_connections);
        tokio::spawn(async move {
            let mut stream = stream;
            let _ = tokio::time::timeout(Duration::from_secs(2), async {
                if let Ok(Some(_)) = handshake(&mut stream).await {
                    if message::read(&mut stream, 1 << 16).await.is_ok() {
                        let mut out = Vec::new();
                        let why = format!(
                            "the server has its maximum of {limit} connections; try again later"
                        );
                        message::failure(
                            &mut out,
                            &crate::packstream::Pack::map([
                                ("code", crate::packstream::Pack::string(status::NO_THREADS)),
                                ("message", crate::packstream::Pack::string(why)),
                            ]),
                        );
                        let _ = stream.write_all(&out).await;
                    }
                }
            })
            .await;
            refusing.fetch_sub(1, Ordering::AcqRel);
        });
    }

    /// A handle and the receiver [`Server::serve`] takes.
    pub fn handle() -> (Handle, watch::Receiver<bool>) {
        let (stop, rx) = watch::channel(false);
        (Handle { stop }, rx)
    }
}

/// Reads the client's offer and answers; `None` when there is no common
/// version (the client has been told, and the connection ends).
async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
) -> std::io::Result<Option<Version>> {
    let mut hello = [0u8; 20];
    s.read_exact(&mut hello).await?;
    if hello[..4] != MAGIC {
        return Ok(None);
    }
    let offers: Vec<[u8; 4]> = hello[4..]
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    if offers.contains(&MANIFEST_V1) {
        return manifest(s).await;
    }
    let chosen = offers.iter().find_map(pick);
    match chosen {
        Some(v) => s.write_all(&[0, 0, v.1, v.0]).await?,
        None => s.write_all(&[0, 0, 0, 0]).await?,
    }
    Ok(chosen)
}

/// The newest supported version in one offer slot: `[0, range, minor, major]`
/// offers `major.minor` down to `major.(minor - range)`.
fn pick(o: &[u8; 4]) -> Option<Version> {
    let (range, minor, major) = (o[1], o[2], o[3]);
    SUPPORTED
        .iter()
        .copied()
        .find(|v| v.0 == major && v.1 <= minor && v.1 >= minor.saturating_sub(range))
}

/// Manifest v1: list every version we speak; the client picks one.
async fn manifest<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
) -> std::io::Result<Option<Version>> {
    let newest = SUPPORTED[0];
    let range = (SUPPORTED.len() - 1) as u8;
    // One offer covering 5.0 to 5.8, then no capabilities.
    s.write_all(&[
        0x00, 0x00, 0x01, 0xFF, 0x01, 0x00, range, newest.1, newest.0, 0x00,
    ])
    .await?;
    let mut chosen = [0u8; 4];
    s.read_exact(&mut chosen).await?;
    // The client's capabilities, a varint we do not use.
    loop {
        let b = s.read_u8().await?;
        if b & 0x80 == 0 {
            break;
        }
    }
    let v = Version(chosen[3], chosen[2]);
    Ok(SUPPORTED.contains(&v).then_some(v))
}

async fn serve_connection(
    stream: TcpStream,
    shared: Arc<Shared>,
    config: &Config,
    stop: watch::Receiver<bool>,
) {
    match &config.tls {
        None => run_connection(stream, shared, config, stop).await,
        Some(tls) => {
            let accepted =
                tokio::time::timeout(config.handshake_timeout, tls.0.accept(stream)).await;
            if let Ok(Ok(stream)) = accepted {
                run_connection(stream, shared, config, stop).await;
            }
        }
    }
}

async fn run_connection<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    mut stream: S,
    shared: Arc<Shared>,
    config: &Config,
    mut stop: watch::Receiver<bool>,
) {
    let version = match tokio::time::timeout(config.handshake_timeout, handshake(&mut stream)).await
    {
        Ok(Ok(Some(v))) => v,
        _ => return, // no common version, a timeout or a broken peer
    };
    let (mut rd, wr) = tokio::io::split(stream);
    let control = Arc::new(Control::default());
    let (req_tx, req_rx) = mpsc::channel(64);
    let out = crate::connection::Output::new(Box::new(wr));
    let conn = Connection::new(shared, control.clone(), version, out);
    let worker = tokio::task::spawn_blocking(move || conn.run(req_rx));
    let limit = config.max_message;
    loop {
        let read = tokio::select! {
            r = message::read(&mut rd, limit) => r,
            _ = stop.changed() => break,
        };
        let bytes = match read {
            Ok(b) => b,
            Err(ReadError::TooLarge { limit }) => {
                let e = message::MessageError::Protocol(format!(
                    "a message larger than the server's limit of {limit} bytes"
                ));
                let _ = req_tx.send(Err(e)).await;
                break;
            }
            Err(ReadError::Closed | ReadError::Io(_)) => break,
        };
        let req = message::parse(&bytes);
        if matches!(req, Ok(Request::Reset)) {
            // Interrupt now, not when the worker gets to it.
            control.interrupts.fetch_add(1, Ordering::AcqRel);
            control.interrupt();
        }
        let last = matches!(
            req,
            Ok(Request::Goodbye)
                | Err(message::MessageError::Protocol(_) | message::MessageError::Decode(_))
        );
        if req_tx.send(req).await.is_err() || last {
            break;
        }
    }
    // The client left (or said goodbye): stop its query; the worker ends
    // when the requests run out and rolls back an open transaction.
    control.interrupt();
    drop(req_tx);
    let _ = worker.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_common_version_is_picked_from_a_range() {
        assert_eq!(pick(&[0, 8, 8, 5]), Some(Version(5, 8)));
        assert_eq!(pick(&[0, 0, 4, 5]), Some(Version(5, 4)));
        assert_eq!(pick(&[0, 2, 4, 4]), None);
        assert_eq!(pick(&[0, 3, 12, 5]), None, "5.9 to 5.12 are not spoken");
        assert_eq!(pick(&[0, 5, 10, 5]), Some(Version(5, 8)));
        assert_eq!(pick(&[0, 2, 7, 5]), Some(Version(5, 7)));
        assert_eq!(pick(&[0, 0, 0, 6]), None);
    }
}
