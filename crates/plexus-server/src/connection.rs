//! One client connection's state machine (Bolt 5.0–5.8), run on a worker
//! thread of its own: queries block, so one slow query holds only its own
//! connection. The reader task ([`crate::server`]) decodes requests and
//! hands them over; a RESET it sees interrupts the running query at once.

use crate::admin;
use crate::auth::{Auth, User};
use crate::message::{self, Request};
use crate::packstream::{Encoder, Pack};
use crate::status::{self, Failure};
use crate::Version;
use plexus::{CancelHandle, Cursor, Database, QueryKind, QueryOptions, Session, Transaction};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The writing half of a connection, written from the worker thread: the
/// worker blocks on the runtime until its bytes are out (so a client that
/// stops reading stops only its own worker, and no task hop is paid).
pub struct Output {
    wr: Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
    rt: tokio::runtime::Handle,
}

impl Output {
    /// Must be made inside the runtime the worker belongs to.
    pub fn new(wr: Box<dyn tokio::io::AsyncWrite + Unpin + Send>) -> Output {
        Output {
            wr,
            rt: tokio::runtime::Handle::current(),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> bool {
        use tokio::io::AsyncWriteExt;
        let wr = &mut self.wr;
        self.rt
            .block_on(async { wr.write_all(bytes).await.is_ok() })
    }

    fn close(&mut self) {
        use tokio::io::AsyncWriteExt;
        let wr = &mut self.wr;
        self.rt.block_on(async {
            let _ = wr.shutdown().await;
        });
    }
}

/// What the reader task and the worker share.
#[derive(Default)]
pub struct Control {
    /// RESETs read but not yet handled: requests queued before them are
    /// IGNORED, as the protocol asks.
    pub interrupts: AtomicUsize,
    /// The cancel handle of the query running now, if any.
    pub running: Mutex<Option<CancelHandle>>,
}

impl Control {
    /// Stops the running query (a RESET arrived, or the client left).
    pub fn interrupt(&self) {
        if let Some(c) = self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            c.cancel();
        }
    }

    fn set_running(&self, c: Option<CancelHandle>) {
        *self.running.lock().unwrap_or_else(|p| p.into_inner()) = c;
    }
}

/// What every connection of a server shares.
pub struct Shared {
    pub db: Database,
    pub auth: Auth,
    /// The graph `db: null`, `""` and `"neo4j"` mean.
    pub default_graph: String,
    /// Host and port clients reach this server at (ROUTE tables).
    pub advertised: String,
    pub connections: AtomicU64,
    /// Bookmarks are opaque to clients; one counter per server orders them.
    pub bookmarks: AtomicU64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Authentication,
    Ready,
    Streaming,
    TxReady,
    TxStreaming,
    Failed,
    Defunct,
}

/// An open result and where it came from.
struct Open {
    qid: i64,
    cursor: Cursor,
    kind: QueryKind,
    graph: String,
    started: Instant,
}

struct Tx {
    /// `None` in the `system` database, whose commands are not transactional.
    tx: Option<Transaction>,
    graph: String,
    read_only: bool,
    deadline: Option<Instant>,
    next_qid: i64,
}

/// Neo4j's administration database.
const SYSTEM: &str = "system";

/// Flush queued output once this much is buffered during a PULL.
const FLUSH_AT: usize = 64 * 1024;

pub struct Connection {
    shared: Arc<Shared>,
    control: Arc<Control>,
    version: Version,
    out: Output,
    buf: Vec<u8>,
    scratch: Encoder,
    state: State,
    /// Who logged on; `None` before LOGON and after LOGOFF.
    user: Option<User>,
    results: Vec<Open>,
    tx: Option<Tx>,
}

impl Connection {
    pub fn new(shared: Arc<Shared>, control: Arc<Control>, version: Version, out: Output) -> Self {
        Connection {
            shared,
            control,
            version,
            out,
            buf: Vec::new(),
            scratch: Encoder::default(),
            state: State::Authentication,
            user: None,
            results: Vec::new(),
            tx: None,
        }
    }

    /// Handles requests until the client says GOODBYE, leaves, or breaks
    /// the protocol. Dropping an open transaction rolls it back.
    pub fn run(mut self, mut requests: mpsc::Receiver<Result<Request, message::MessageError>>) {
        let mut hello = false;
        while let Some(req) = requests.blocking_recv() {
            match req {
                Ok(Request::Goodbye) => break,
                Ok(req) if !hello => {
                    let Request::Hello { extra } = req else {
                        self.fail_protocol(&format!("{} before HELLO", req.name()));
                        break;
                    };
                    hello = true;
                    self.hello(&extra);
                }
                Ok(req) => self.handle(req),
                Err(message::MessageError::Param(e)) => self.fail(Failure::new(
                    status::REQUEST_INVALID,
                    format!("invalid parameter: {e}"),
                )),
                Err(e) => self.fail_protocol(&e.to_string()),
            }
            if self.state == State::Defunct {
                break;
            }
            // Answers to pipelined requests (RUN then PULL) leave together.
            if !requests.is_empty() && self.buf.len() < FLUSH_AT {
                continue;
            }
            if !self.flush() {
                break;
            }
        }
        self.control.set_running(None);
        let _ = self.flush();
        self.out.close();
    }

    /// Sends what is buffered; false once the client is gone.
    fn flush(&mut self) -> bool {
        if self.buf.is_empty() {
            return true;
        }
        let sent = self.out.write(&self.buf);
        self.buf.clear();
        sent
    }

    fn success(&mut self, meta: Pack) {
        message::success(&mut self.buf, &meta);
    }

    fn fail(&mut self, f: Failure) {
        let mut meta = vec![
            ("code".to_string(), Pack::string(f.code)),
            ("message".to_string(), Pack::string(f.message.clone())),
        ];
        if self.version >= Version(5, 7) {
            meta.push(("neo4j_code".into(), Pack::string(f.code)));
            meta.push(("gql_status".into(), Pack::string(f.gql_status())));
            meta.push(("description".into(), Pack::string(f.message)));
            meta.push((
                "diagnostic_record".into(),
                Pack::map([
                    ("OPERATION", Pack::string("")),
                    ("OPERATION_CODE", Pack::string("0")),
                    ("CURRENT_SCHEMA", Pack::string("/")),
                ]),
            ));
        }
        message::failure(&mut self.buf, &Pack::Map(meta));
        self.control.set_running(None);
        self.results.clear();
        if self.state != State::Authentication && self.state != State::Defunct {
            self.state = State::Failed;
        }
    }

    fn fail_protocol(&mut self, why: &str) {
        self.fail(Failure::new(status::REQUEST_INVALID, why.to_string()));
        self.state = State::Defunct;
    }

    fn hello(&mut self, extra: &Pack) {
        let n = self.shared.connections.fetch_add(1, Ordering::Relaxed);
        let mut meta = vec![
            (
                "server".to_string(),
                Pack::string(concat!("Plexus/", env!("CARGO_PKG_VERSION"))),
            ),
            (
                "connection_id".to_string(),
                Pack::string(format!("bolt-{n}")),
            ),
            ("hints".to_string(), Pack::Map(vec![])),
        ];
        meta.push((
            "protocol_version".into(),
            Pack::string(self.version.to_string()),
        ));
        if self.version >= Version(5, 1) {
            message::success(&mut self.buf, &Pack::Map(meta));
            self.state = State::Authentication;
            return;
        }
        // Bolt 5.0: the credentials come with HELLO.
        match self.shared.auth.check(extra) {
            Ok(user) => {
                message::success(&mut self.buf, &Pack::Map(meta));
                self.user = Some(user);
                self.state = State::Ready;
            }
            Err(f) => {
                self.fail(f);
                self.state = State::Defunct;
            }
        }
    }

    fn handle(&mut self, req: Request) {
        if self.control.interrupts.load(Ordering::Acquire) > 0 && req != Request::Reset {
            message::ignored(&mut self.buf);
            return;
        }
        match (self.state, req) {
            (_, Request::Reset) => self.reset(),
            (State::Failed, _) => message::ignored(&mut self.buf),
            (State::Authentication, Request::Logon { auth }) => match self.shared.auth.check(&auth)
            {
                Ok(user) => {
                    self.user = Some(user);
                    self.state = State::Ready;
                    self.success(Pack::Map(vec![]));
                }
                Err(f) => {
                    self.fail(f);
                    self.state = State::Defunct;
                }
            },
            (State::Ready, Request::Logoff) => {
                self.user = None;
                self.state = State::Authentication;
                self.success(Pack::Map(vec![]));
            }
            (State::Ready, Request::Telemetry) => self.success(Pack::Map(vec![])),
            (State::Ready, Request::Route { extra }) => self.route(&extra),
            (
                State::Ready,
                Request::Run {
                    query,
                    params,
                    extra,
                },
            ) => self.run_auto(&query, &params, &extra),
            (State::Ready, Request::Begin { extra }) => self.begin(&extra),
            (State::Streaming | State::TxStreaming, Request::Pull { n, qid }) => {
                self.pull(n, qid, true)
            }
            (State::Streaming | State::TxStreaming, Request::Discard { n, qid }) => {
                self.pull(n, qid, false)
            }
            (
                State::TxReady | State::TxStreaming,
                Request::Run {
                    query,
                    params,
                    extra: _,
                },
            ) => self.run_in_tx(&query, &params),
            (State::TxReady | State::TxStreaming, Request::Commit) => self.commit(),
            (State::TxReady | State::TxStreaming, Request::Rollback) => {
                self.results.clear();
                self.tx = None;
                self.state = State::Ready;
                self.success(Pack::Map(vec![]));
            }
            (state, req) => self.fail(Failure::new(
                status::INVALID_STATE,
                format!("{} cannot be sent in state {state:?}", req.name()),
            )),
        }
    }

    fn reset(&mut self) {
        self.control.interrupts.fetch_sub(1, Ordering::AcqRel);
        self.control.set_running(None);
        self.results.clear();
        self.tx = None; // rolled back
        self.state = if self.state == State::Authentication {
            State::Authentication
        } else {
            State::Ready
        };
        self.success(Pack::Map(vec![]));
    }

    /// The graph a `db` field names.
    fn graph_of(&self, extra: &Pack) -> String {
        match extra.get("db").and_then(Pack::as_str) {
            None | Some("") | Some("neo4j") => self.shared.default_graph.clone(),
            Some(name) => name.to_string(),
        }
    }

    fn session(&self, graph: &str) -> Result<Session, Failure> {
        let user = self.user()?;
        if !user.may_use(graph) {
            return Err(Failure::new(
                status::FORBIDDEN,
                format!(
                    "the user '{}' may not use the database '{graph}'",
                    user.name
                ),
            ));
        }
        // Opening the session checks that the graph exists.
        self.shared.db.session(graph).map_err(|e| match e {
            plexus::Error::Storage(plexus::StorageError::UnknownGraph(_)) => Failure::new(
                status::DATABASE_NOT_FOUND,
                format!("Database does not exist. Database name: '{graph}'."),
            ),
            e => status::of(&e),
        })
    }

    fn options(&self, extra: &Pack, deadline: Option<Instant>) -> Result<QueryOptions, Failure> {
        let mut timeout = match extra.get("tx_timeout").and_then(Pack::as_int) {
            Some(ms) if ms > 0 => Some(Duration::from_millis(ms as u64)),
            _ => None,
        };
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Failure::new(
                    status::TIMED_OUT,
                    "the transaction has timed out",
                ));
            }
            timeout = Some(timeout.map_or(left, |t| t.min(left)));
        }
        let cancel = CancelHandle::default();
        self.control.set_running(Some(cancel.clone()));
        Ok(QueryOptions {
            timeout,
            memory_limit: None,
            cancel: Some(cancel),
            // EXPLAIN and PROFILE answer as Neo4j's do: the plan in the
            // closing SUCCESS (`plan` / `profile`), PROFILE with its rows.
            plan_apart: true,
        })
    }

    /// Refuses a write in a read-mode session or by a user read-only on `graph`.
    fn may(&self, kind: QueryKind, read_mode: bool, graph: &str) -> Result<(), Failure> {
        if kind == QueryKind::Read {
            return Ok(());
        }
        if read_mode {
            return Err(Failure::new(
                status::ACCESS_MODE,
                "Writing in read access mode not allowed.",
            ));
        }
        match &self.user {
            Some(u) if u.role_on(graph).can_write() => Ok(()),
            Some(u) => Err(Failure::new(
                status::FORBIDDEN,
                format!(
                    "Write operations are not allowed for user '{}' (role {} on {graph}).",
                    u.name,
                    u.role_on(graph).name()
                ),
            )),
            None => Err(Failure::new(status::UNAUTHORIZED, "not logged on")),
        }
    }

    /// Runs an administration command (the only thing the system database runs).
    fn administer(
        &self,
        query: &str,
        params: &plexus::Params,
    ) -> Result<(Cursor, QueryKind), Failure> {
        let Some(cmd) = admin::parse(query) else {
            return Err(Failure::new(
                status::UNSUPPORTED_ADMIN,
                "the system database runs administration commands only \
                 (SHOW DATABASES, CREATE/DROP DATABASE, SHOW USERS, CREATE/ALTER/DROP USER, GRANT ROLE)",
            ));
        };
        let user = self.user()?;
        let env = admin::Env {
            db: &self.shared.db,
            default: &self.shared.default_graph,
            auth: &self.shared.auth,
            user,
        };
        admin::run(&env, cmd, params)
    }

    /// The user logged on (every request after LOGON has one).
    fn user(&self) -> Result<&User, Failure> {
        self.user
            .as_ref()
            .ok_or_else(|| Failure::new(status::UNAUTHORIZED, "not logged on"))
    }

    fn read_only(extra: &Pack) -> bool {
        extra.get("mode").and_then(Pack::as_str) == Some("r")
    }

    fn run_auto(&mut self, query: &str, params: &plexus::Params, extra: &Pack) {
        let graph = self.graph_of(extra);
        let started = Instant::now();
        let cursor = if graph == SYSTEM || admin::parse(query).is_some() {
            self.administer(query, params)
        } else {
            self.start_auto(&graph, query, params, extra)
        };
        match cursor {
            Ok((cursor, kind)) => {
                self.open_result(
                    Open {
                        qid: -1,
                        cursor,
                        kind,
                        graph,
                        started,
                    },
                    false,
                );
                self.state = State::Streaming;
            }
            Err(f) => self.fail(f),
        }
    }

    fn start_auto(
        &self,
        graph: &str,
        query: &str,
        params: &plexus::Params,
        extra: &Pack,
    ) -> Result<(Cursor, QueryKind), Failure> {
        let session = self.session(graph)?;
        let kind = self
            .shared
            .db
            .query_kind(query)
            .map_err(|e| status::of(&e))?;
        self.may(kind, Self::read_only(extra), graph)?;
        let opts = self.options(extra, None)?;
        let cursor = session
            .stream(query, params, &opts)
            .map_err(|e| status::of(&e))?;
        Ok((cursor, kind))
    }

    fn open_result(&mut self, open: Open, with_qid: bool) {
        let fields = open
            .cursor
            .columns()
            .iter()
            .map(|c| Pack::string(c.clone()))
            .collect();
        let mut meta = vec![
            ("fields".to_string(), Pack::List(fields)),
            (
                "t_first".to_string(),
                Pack::Int(millis(open.started.elapsed())),
            ),
        ];
        if with_qid {
            meta.push(("qid".into(), Pack::Int(open.qid)));
        }
        if self.version >= Version(5, 8) {
            meta.push(("db".into(), Pack::string(open.graph.clone())));
        }
        self.success(Pack::Map(meta));
        self.results.push(open);
    }

    fn begin(&mut self, extra: &Pack) {
        let graph = self.graph_of(extra);
        let deadline = match extra.get("tx_timeout").and_then(Pack::as_int) {
            Some(ms) if ms > 0 => Some(Instant::now() + Duration::from_millis(ms as u64)),
            _ => None,
        };
        let read_only = Self::read_only(extra);
        // A read-mode transaction (`execute_read` in the drivers) reads one
        // snapshot and buffers nothing.
        let tx = if graph == SYSTEM {
            Ok(None)
        } else {
            self.session(&graph).and_then(|s| {
                let tx = if read_only { s.begin_read() } else { s.begin() };
                tx.map(Some).map_err(|e| status::of(&e))
            })
        };
        match tx {
            Ok(tx) => {
                self.tx = Some(Tx {
                    tx,
                    graph: graph.clone(),
                    read_only,
                    deadline,
                    next_qid: 0,
                });
                self.state = State::TxReady;
                let mut meta = vec![];
                if self.version >= Version(5, 8) {
                    meta.push(("db".to_string(), Pack::string(graph)));
                }
                self.success(Pack::Map(meta));
            }
            Err(f) => self.fail(f),
        }
    }

    fn run_in_tx(&mut self, query: &str, params: &plexus::Params) {
        let started = Instant::now();
        let Some(mut tx) = self.tx.take() else {
            return self.fail(Failure::new(status::INVALID_STATE, "no open transaction"));
        };
        let ran = (|| {
            let Some(inner) = tx.tx.as_mut() else {
                return self.administer(query, params);
            };
            if admin::parse(query).is_some() {
                return Err(Failure::new(
                    status::UNSUPPORTED_ADMIN,
                    "administration commands run on the system database",
                ));
            }
            let kind = self
                .shared
                .db
                .query_kind(query)
                .map_err(|e| status::of(&e))?;
            self.may(kind, tx.read_only, &tx.graph)?;
            let opts = self.options(&Pack::Null, tx.deadline)?;
            let cursor = inner
                .run_with(query, params, &opts)
                .map_err(|e| status::of(&e))?;
            Ok((cursor, kind))
        })();
        self.control.set_running(None);
        match ran {
            Ok((cursor, kind)) => {
                let qid = tx.next_qid;
                tx.next_qid += 1;
                let graph = tx.graph.clone();
                self.tx = Some(tx);
                self.open_result(
                    Open {
                        qid,
                        cursor,
                        kind,
                        graph,
                        started,
                    },
                    true,
                );
                self.state = State::TxStreaming;
            }
            Err(f) => {
                // The transaction stays open for ROLLBACK or RESET, but a
                // write that failed midway may have left part of its effects:
                // the facade refuses to commit it.
                self.tx = Some(tx);
                self.fail(f);
            }
        }
    }

    fn pull(&mut self, n: i64, qid: i64, keep: bool) {
        let at = if qid < 0 {
            self.results.len().checked_sub(1)
        } else {
            self.results.iter().position(|r| r.qid == qid)
        };
        let Some(at) = at else {
            return self.fail(Failure::new(
                status::INVALID_STATE,
                format!("no open result with qid {qid}"),
            ));
        };
        let want = if n < 0 {
            usize::MAX
        } else {
            usize::try_from(n).unwrap_or(usize::MAX)
        };
        let mut sent = 0usize;
        let more = loop {
            let open = &mut self.results[at];
            if sent >= want {
                match open.cursor.has_more() {
                    Ok(more) => break Ok(more),
                    Err(e) => break Err(status::of(&e)),
                }
            }
            match open.cursor.next_row() {
                Ok(Some(row)) => {
                    if keep {
                        message::record(&mut self.buf, &mut self.scratch, &row);
                        if self.buf.len() >= FLUSH_AT && !self.flush() {
                            return;
                        }
                    }
                    sent += 1;
                }
                Ok(None) => break Ok(false),
                Err(e) => break Err(status::of(&e)),
            }
        };
        match more {
            Ok(true) => self.success(Pack::map([("has_more", Pack::Bool(true))])),
            Ok(false) => self.finish(at),
            Err(f) => self.fail(f),
        }
    }

    /// The summary of a result read to its end.
    fn finish(&mut self, at: usize) {
        let open = self.results.remove(at);
        let kind = match open.kind {
            QueryKind::Read => "r",
            QueryKind::Write => "rw",
        };
        let mut meta = vec![
            ("type".to_string(), Pack::string(kind)),
            (
                "t_last".to_string(),
                Pack::Int(millis(open.started.elapsed())),
            ),
            ("db".to_string(), Pack::string(open.graph)),
        ];
        if let Some(stats) = stats(&open.cursor.summary().counters) {
            meta.push(("stats".into(), stats));
        }
        if let Some(plan) = open.cursor.plan() {
            let (key, tree) = crate::plan::entry(plan);
            meta.push((key.into(), tree));
        }
        if self.tx.is_none() {
            meta.push(("bookmark".into(), Pack::string(self.bookmark())));
            self.control.set_running(None);
            self.state = State::Ready;
        } else if self.results.is_empty() {
            self.state = State::TxReady;
        }
        self.success(Pack::Map(meta));
    }

    fn bookmark(&self) -> String {
        format!(
            "plexus:{}",
            self.shared.bookmarks.fetch_add(1, Ordering::Relaxed) + 1
        )
    }

    fn commit(&mut self) {
        self.results.clear();
        let Some(tx) = self.tx.take() else {
            return self.fail(Failure::new(status::INVALID_STATE, "no open transaction"));
        };
        self.state = State::Ready;
        let committed = match tx.tx {
            Some(t) => t.commit(),
            None => Ok(()),
        };
        match committed {
            Ok(()) => {
                let b = self.bookmark();
                self.success(Pack::map([("bookmark", Pack::string(b))]));
            }
            Err(e) => self.fail(status::of(&e)),
        }
    }

    fn route(&mut self, extra: &Pack) {
        let db = self.graph_of(extra);
        let me = Pack::List(vec![Pack::string(self.shared.advertised.clone())]);
        let server =
            |role: &str| Pack::map([("addresses", me.clone()), ("role", Pack::string(role))]);
        let rt = Pack::map([
            ("ttl", Pack::Int(300)),
            ("db", Pack::string(db)),
            (
                "servers",
                Pack::List(vec![server("ROUTE"), server("READ"), server("WRITE")]),
            ),
        ]);
        self.success(Pack::map([("rt", rt)]));
    }
}

/// A summary's `stats`: the nonzero counters and `contains-updates`;
/// `None` for a query that changed nothing.
fn stats(c: &plexus::Counters) -> Option<Pack> {
    if !c.contains_updates() {
        return None;
    }
    let mut stats: Vec<(String, Pack)> = c
        .named()
        .into_iter()
        .map(|(k, n)| {
            (
                k.to_string(),
                Pack::Int(i64::try_from(n).unwrap_or(i64::MAX)),
            )
        })
        .collect();
    stats.push(("contains-updates".into(), Pack::Bool(true)));
    Some(Pack::Map(stats))
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
