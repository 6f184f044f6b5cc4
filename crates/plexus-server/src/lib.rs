//! `plexus serve`: a Bolt 5 server, so that the official Neo4j drivers and
//! the tools built on them (cognee, graphiti, LightRAG, neo4j-graphrag)
//! use a Plexus database unchanged.
//!
//! Layers, each a module: [`packstream`] (the value encoding), [`message`]
//! (framing and the request/response messages), [`values`] (Plexus values
//! in Bolt structures), [`plan`] (EXPLAIN's and PROFILE's plans as summary
//! metadata), [`status`] (errors as Neo4j status codes),
//! [`auth`] (users), [`admin`] (database administration commands),
//! [`connection`] (one client's state machine over the facade's sessions,
//! transactions and cursors), [`server`] (listening and negotiation).

pub mod admin;
pub mod auth;
pub mod connection;
pub mod message;
pub mod packstream;
pub mod plan;
pub mod server;
pub mod status;
pub mod tls;
pub mod values;

pub use auth::{Auth, Role, User, Users};
pub use server::{Config, Handle, Server, ServerError, Tls};

/// A Bolt protocol version, major then minor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u8, pub u8);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

/// Serves `db` on a multi-threaded runtime of its own until the handle
/// given to `on_ready` (called once listening) shuts it down, or, when
/// `signals` is set, Ctrl-C (SIGINT) or SIGTERM. For programs that have
/// no runtime.
pub fn serve_blocking(
    db: plexus::Database,
    config: Config,
    signals: bool,
    on_ready: impl FnOnce(std::net::SocketAddr, Handle),
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(config.max_connections + 16)
        .thread_name("plexus-bolt")
        .build()?;
    rt.block_on(async move {
        let server = Server::bind(db, config).await?;
        let (handle, stop) = Server::handle();
        if signals {
            let h = handle.clone();
            tokio::spawn(async move {
                stop_signal().await;
                h.shutdown();
            });
        }
        on_ready(server.local_addr(), handle);
        server.serve(stop).await;
        Ok(())
    })
}

/// Ctrl-C, or SIGTERM (what service managers and `kill` send) on Unix.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
