//! Sessions, explicit transactions and result cursors: the API the Bolt
//! server and the Python module are built on.
//!
//! A [`Session`] belongs to one graph. It runs auto-commit queries
//! ([`Session::run`]: a query that only reads runs on a snapshot, one that
//! writes in a transaction of its own) or opens an explicit
//! [`Transaction`] that spans several queries and sees its own writes. A
//! query's result is a [`Cursor`]: its columns are known before the first
//! row, rows are pulled one at a time or `n` at a time, the rest can be
//! discarded, and a [`CancelHandle`] stops a query that is still running.
//!
//! A query that fails inside an explicit transaction may have written part
//! of its effects, so the transaction is then marked failed (as Neo4j
//! does): later queries and `commit` are refused and only `rollback`
//! remains.

use crate::database::Database;
use crate::error::{Error, Result};
use crate::query::Params;
use plexus_common::Value;
use plexus_query::{CancelHandle, Guard, Planned, Prepared, QueryLimits, QueryPlan, Table};
use plexus_storage::{Counters, Isolation, ReadTxn, WriteTxn};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Limits and cancellation for one query; unset fields take the
/// database's defaults ([`crate::Options`]).
#[derive(Debug, Clone, Default)]
pub struct QueryOptions {
    /// Fail with a resource-limit error once the query has run this long.
    pub timeout: Option<Duration>,
    /// The bytes the query may hold in rows, groups, sort buffers and lists.
    pub memory_limit: Option<usize>,
    /// A handle another thread can use to cancel the query.
    pub cancel: Option<CancelHandle>,
    /// An EXPLAIN or a PROFILE gives its plan as the cursor's
    /// [`Cursor::plan`] instead of as rows: EXPLAIN then yields no rows and
    /// PROFILE the query's own, as Neo4j answers them over Bolt.
    pub plan_apart: bool,
}

impl QueryOptions {
    /// The guard a run checks: these options over the database's defaults.
    pub(crate) fn guard(&self, db: &Database) -> Guard {
        let defaults = db.query_defaults();
        Guard::new(
            QueryLimits {
                timeout: self.timeout.or(defaults.timeout),
                memory: self.memory_limit.or(defaults.memory),
            },
            self.cancel.clone().unwrap_or_else(CancelHandle::none),
        )
    }
}

/// Whether a statement read, wrote or changed the schema (Bolt's `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    Read,
    Write,
}

impl QueryKind {
    pub(crate) fn of(plan: &Prepared) -> QueryKind {
        if plan.is_write() {
            QueryKind::Write
        } else {
            QueryKind::Read
        }
    }
}

/// What is known about a query once it has run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub kind: QueryKind,
    /// Rows the query produced.
    pub rows: usize,
    /// Time until the result was ready.
    pub elapsed: Duration,
    /// What the query changed (all zero for a query that only reads).
    pub counters: Counters,
}

/// The result of a query: columns first, then rows as they are pulled.
///
/// A cursor from [`Session::run`] or [`Transaction::run`] holds the rows
/// the query produced; one from [`Session::stream`] is fed while the query
/// runs on a thread of its own, a few batches ahead of the reader, so a
/// huge result never sits in memory and its first rows arrive before its
/// last are computed. Dropping a streaming cursor (or [`Cursor::consume`])
/// cancels the query.
///
/// ```
/// use plexus::{Database, Params};
/// let db = Database::in_memory().unwrap();
/// let session = db.session("default").unwrap();
/// let mut c = session.run("UNWIND range(1, 5) AS x RETURN x * 10 AS y", &Params::new()).unwrap();
/// assert_eq!(c.columns(), ["y"]);
/// assert_eq!(c.fetch(2).unwrap().len(), 2);
/// assert_eq!(c.next_row().unwrap().map(|r| r[0].clone()), Some(plexus::Value::Int(30)));
/// let summary = c.consume().unwrap(); // the rest is discarded
/// assert_eq!(summary.rows, 5);
/// ```
pub struct Cursor {
    columns: Vec<String>,
    source: Source,
    summary: Summary,
    /// When the query began; `None` when no one reads its time
    /// ([`Transaction::query`] returns rows only), which saves both
    /// clock reads of a short query.
    started: Option<Instant>,
    plan: Option<QueryPlan>,
}

/// The time since `started`, zero when untimed.
fn since(started: Option<Instant>) -> Duration {
    started.map_or(Duration::ZERO, |t| t.elapsed())
}

enum Source {
    Rows(std::vec::IntoIter<Vec<Value>>),
    Stream(Stream),
}

/// The reading end of a query running on a worker thread.
struct Stream {
    rx: mpsc::Receiver<Msg>,
    batch: std::vec::IntoIter<Vec<Value>>,
    done: bool,
    cancel: CancelHandle,
}

/// What a streaming query's thread sends: its columns once, then batches
/// of rows, then how it ended.
enum Msg {
    Columns(Vec<String>),
    Rows(Vec<Vec<Value>>),
    Done(Result<()>),
}

/// A streaming query whose columns may not have arrived yet
/// ([`Session::start`]). Dropping it cancels the query.
pub struct Started {
    stream: Option<Stream>,
    ready: Option<Cursor>,
    started: Instant,
}

impl Started {
    /// Waits for the query's columns — at most `timeout`, or for as long
    /// as it takes with `None` — and returns the cursor, or `None` when
    /// the time ran out first (ask again). A query that fails before its
    /// first row fails here.
    pub fn poll(&mut self, timeout: Option<Duration>) -> Result<Option<Cursor>> {
        if let Some(c) = self.ready.take() {
            return Ok(Some(c));
        }
        let Some(stream) = self.stream.as_mut() else {
            return Err(Error::TransactionClosed);
        };
        // The columns come first; rows may come with them.
        let columns = loop {
            match stream.recv(timeout) {
                Ok(Msg::Columns(c)) => break c,
                Ok(Msg::Done(r)) => {
                    stream.done = true;
                    r?;
                    break vec![];
                }
                Ok(Msg::Rows(rows)) => stream.batch = rows.into_iter(),
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::Query(plexus_query::QueryError::Cancelled))
                }
            }
        };
        let stream = self.stream.take().ok_or(Error::TransactionClosed)?;
        Ok(Some(Cursor {
            columns,
            source: Source::Stream(stream),
            summary: Summary {
                kind: QueryKind::Read,
                rows: 0,
                elapsed: Duration::ZERO,
                counters: Counters::default(),
            },
            started: Some(self.started),
            plan: None,
        }))
    }

    /// Stops the query (its thread ends at its next check).
    pub fn cancel(&self) {
        if let Some(s) = &self.stream {
            s.cancel.cancel();
        }
    }
}

/// What [`Cursor::poll_row`] found.
#[derive(Debug, PartialEq)]
pub enum Polled {
    Row(Vec<Value>),
    /// No more rows.
    End,
    /// No row arrived in the time given; the query is still running.
    Pending,
}

/// Rows per message from a streaming query's thread, and messages it may
/// run ahead of its reader.
const STREAM_BATCH: usize = 256;
const STREAM_AHEAD: usize = 4;

impl Stream {
    /// The next row; `None` at the end, an error when the query failed.
    fn next(&mut self) -> Result<Option<Vec<Value>>> {
        match self.poll(None)? {
            Polled::Row(r) => Ok(Some(r)),
            Polled::End | Polled::Pending => Ok(None),
        }
    }

    /// The next message, waiting at most `wait` (`None`: as long as it takes).
    fn recv(&self, wait: Option<Duration>) -> std::result::Result<Msg, RecvTimeoutError> {
        match wait {
            None => self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(t) => self.rx.recv_timeout(t),
        }
    }

    /// The next row, waiting at most `wait` (`None`: as long as it takes).
    fn poll(&mut self, wait: Option<Duration>) -> Result<Polled> {
        loop {
            if let Some(row) = self.batch.next() {
                return Ok(Polled::Row(row));
            }
            if self.done {
                return Ok(Polled::End);
            }
            match self.recv(wait) {
                Ok(Msg::Rows(rows)) => self.batch = rows.into_iter(),
                Ok(Msg::Done(r)) => {
                    self.done = true;
                    r?;
                }
                Ok(Msg::Columns(_)) => {}
                Err(RecvTimeoutError::Timeout) => return Ok(Polled::Pending),
                Err(RecvTimeoutError::Disconnected) => {
                    self.done = true;
                    return Err(Error::Query(plexus_query::QueryError::Cancelled));
                }
            }
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // The worker stops at its next check, or at its next send.
        self.cancel.cancel();
    }
}

impl Cursor {
    fn new(table: Table, kind: QueryKind, started: Option<Instant>, counters: Counters) -> Cursor {
        let summary = Summary {
            kind,
            rows: table.rows.len(),
            elapsed: since(started),
            counters,
        };
        Cursor {
            columns: table.columns,
            source: Source::Rows(table.rows.into_iter()),
            summary,
            started,
            plan: None,
        }
    }

    /// The cursor of a run whose plan may be apart from its rows.
    fn planned(
        ran: Planned,
        kind: QueryKind,
        started: Option<Instant>,
        counters: Counters,
    ) -> Cursor {
        Cursor {
            plan: ran.plan,
            ..Cursor::new(ran.rows, kind, started, counters)
        }
    }

    /// The plan of an EXPLAIN or a PROFILE run with
    /// [`QueryOptions::plan_apart`]; `None` otherwise.
    pub fn plan(&self) -> Option<&QueryPlan> {
        self.plan.as_ref()
    }

    /// A cursor over rows computed elsewhere (a server's own commands).
    pub fn from_table(table: Table, kind: QueryKind) -> Cursor {
        Cursor::new(table, kind, Some(Instant::now()), Counters::default())
    }

    /// The column names, in order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The next row, `None` at the end; an error when a streaming query
    /// failed after its first rows.
    pub fn next_row(&mut self) -> Result<Option<Vec<Value>>> {
        match &mut self.source {
            Source::Rows(rows) => Ok(rows.next()),
            Source::Stream(s) => {
                let row = s.next()?;
                match &row {
                    Some(_) => self.summary.rows += 1,
                    None => self.summary.elapsed = since(self.started),
                }
                Ok(row)
            }
        }
    }

    /// The next row if one comes within `wait`: a reader that must stay
    /// responsive (to Ctrl-C, to a shutdown) pulls with a short wait and
    /// does its checks between polls.
    pub fn poll_row(&mut self, wait: Duration) -> Result<Polled> {
        match &mut self.source {
            Source::Rows(rows) => Ok(rows.next().map_or(Polled::End, Polled::Row)),
            Source::Stream(s) => {
                let polled = s.poll(Some(wait))?;
                match &polled {
                    Polled::Row(_) => self.summary.rows += 1,
                    Polled::End => self.summary.elapsed = since(self.started),
                    Polled::Pending => {}
                }
                Ok(polled)
            }
        }
    }

    /// Stops a streaming query now (its thread ends at its next check);
    /// rows already received can still be pulled.
    pub fn cancel(&self) {
        if let Source::Stream(s) = &self.source {
            s.cancel.cancel();
        }
    }

    /// Up to `n` more rows (fewer at the end).
    pub fn fetch(&mut self, n: usize) -> Result<Vec<Vec<Value>>> {
        let mut out = Vec::new();
        while out.len() < n {
            match self.next_row()? {
                Some(row) => out.push(row),
                None => break,
            }
        }
        Ok(out)
    }

    /// Whether rows remain to be pulled (a streaming cursor may wait for
    /// the query to produce the next one).
    pub fn has_more(&mut self) -> Result<bool> {
        match &mut self.source {
            Source::Rows(rows) => Ok(rows.len() > 0),
            Source::Stream(s) => {
                if s.batch.len() > 0 {
                    return Ok(true);
                }
                match s.next()? {
                    Some(row) => {
                        // Put the row back in front of the rest of its batch.
                        let rest: Vec<Vec<Value>> =
                            std::iter::once(row).chain(s.batch.by_ref()).collect();
                        s.batch = rest.into_iter();
                        Ok(true)
                    }
                    None => Ok(false),
                }
            }
        }
    }

    /// Discards the rows not pulled yet (a streaming query is cancelled)
    /// and returns the summary; for a streaming cursor its `rows` counts
    /// the rows pulled.
    pub fn consume(mut self) -> Result<Summary> {
        if let Source::Stream(s) = &self.source {
            s.cancel.cancel();
            self.summary.elapsed = since(self.started);
        }
        Ok(self.summary.clone())
    }

    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The rest of the result as a table.
    pub fn into_table(mut self) -> Result<Table> {
        let rows = match &mut self.source {
            // The rows as the run made them: the same allocation, not a
            // copy row by row (a one-row query's table was a tenth of it).
            Source::Rows(rows) => std::mem::take(rows).collect(),
            Source::Stream(_) => {
                let mut rows = Vec::new();
                while let Some(row) = self.next_row()? {
                    rows.push(row);
                }
                rows
            }
        };
        Ok(Table {
            columns: std::mem::take(&mut self.columns),
            rows,
        })
    }
}

impl std::fmt::Debug for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("columns", &self.columns)
            .field("streaming", &matches!(self.source, Source::Stream(_)))
            .field("summary", &self.summary)
            .finish()
    }
}

impl Iterator for Cursor {
    type Item = Result<Vec<Value>>;

    fn next(&mut self) -> Option<Result<Vec<Value>>> {
        self.next_row().transpose()
    }
}

/// The sink a streaming query's thread runs into: rows batched onto the
/// channel; a closed channel (the cursor went away) stops the query.
struct ChannelSink {
    tx: mpsc::SyncSender<Msg>,
    batch: Vec<Vec<Value>>,
}

impl ChannelSink {
    fn send(&self, msg: Msg) -> std::result::Result<(), plexus_query::QueryError> {
        self.tx
            .send(msg)
            .map_err(|_| plexus_query::QueryError::Cancelled)
    }

    fn flush(&mut self) -> std::result::Result<(), plexus_query::QueryError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let rows = std::mem::replace(&mut self.batch, Vec::with_capacity(STREAM_BATCH));
        self.send(Msg::Rows(rows))
    }
}

impl plexus_query::RowSink for ChannelSink {
    fn columns(&mut self, columns: &[String]) -> std::result::Result<(), plexus_query::QueryError> {
        self.send(Msg::Columns(columns.to_vec()))
    }

    fn row(&mut self, row: Vec<Value>) -> std::result::Result<(), plexus_query::QueryError> {
        self.batch.push(row);
        if self.batch.len() >= STREAM_BATCH {
            self.flush()?;
        }
        Ok(())
    }
}

/// Queries on one graph of a database. Cheap; one per client or thread.
#[derive(Clone)]
pub struct Session {
    db: Database,
    graph: String,
}

impl Session {
    pub(crate) fn new(db: Database, graph: &str) -> Result<Session> {
        // Fails now, not at the first query, when the graph is unknown.
        db.read(graph)?;
        Ok(Session {
            db,
            graph: graph.to_string(),
        })
    }

    pub fn graph(&self) -> &str {
        &self.graph
    }

    /// Whether `text` writes (see [`Database::query_kind`]).
    pub fn kind_of(&self, text: &str) -> Result<QueryKind> {
        self.db.query_kind(text)
    }

    /// Runs one auto-commit query (see [`Database::query`]).
    pub fn run(&self, text: &str, params: &Params) -> Result<Cursor> {
        self.run_with(text, params, &QueryOptions::default())
    }

    /// [`Session::run`] with limits and a cancellation handle.
    pub fn run_with(&self, text: &str, params: &Params, opts: &QueryOptions) -> Result<Cursor> {
        let started = Instant::now();
        let plan = self.db.plans().get(text)?;
        let kind = QueryKind::of(&plan);
        let (ran, counters) = self.db.run_prepared(&self.graph, &plan, params, opts)?;
        Ok(Cursor::planned(ran, kind, Some(started), counters))
    }

    /// Runs an auto-commit query whose rows are produced while they are
    /// pulled: a query that only reads runs on a thread of its own, on a
    /// snapshot, a few batches ahead of the reader (one that writes runs
    /// as [`Session::run`] does). Errors found before the first row come
    /// here; later ones from the cursor.
    pub fn stream(&self, text: &str, params: &Params, opts: &QueryOptions) -> Result<Cursor> {
        let mut started = self.start(text, params, opts)?;
        loop {
            if let Some(cursor) = started.poll(None)? {
                return Ok(cursor);
            }
        }
    }

    /// [`Session::stream`] without waiting for the columns: the caller
    /// polls the returned [`Started`] (with a timeout, so it can do other
    /// work between polls, such as noticing that its user pressed Ctrl-C,
    /// and then [`Started::cancel`]). A query that writes has run to its
    /// end when this returns.
    pub fn start(&self, text: &str, params: &Params, opts: &QueryOptions) -> Result<Started> {
        let started = Instant::now();
        let plan = self.db.plans().get(text)?;
        // A plan given apart comes with the rows' end: nothing to stream.
        if plan.is_write() || (opts.plan_apart && plan.shows_plan()) {
            let cursor = self.run_with(text, params, opts)?;
            return Ok(Started {
                stream: None,
                ready: Some(cursor),
                started,
            });
        }
        let cancel = opts.cancel.clone().unwrap_or_default();
        let opts = QueryOptions {
            cancel: Some(cancel.clone()),
            ..opts.clone()
        };
        let (tx, rx) = mpsc::sync_channel(STREAM_AHEAD);
        let (db, graph, params) = (self.db.clone(), self.graph.clone(), params.clone());
        crate::workers::workers()
            .run(Box::new(move || {
                let mut sink = ChannelSink {
                    tx,
                    batch: Vec::with_capacity(STREAM_BATCH),
                };
                let guard = opts.guard(&db);
                let ran = db
                    .read_for(&graph, &plan, &params, &guard)
                    .and_then(|snap| {
                        plan.run_read_into(&snap, &params, &guard, &mut sink)
                            .and_then(|()| sink.flush())
                            .map_err(Error::Query)
                    });
                let _ = sink.tx.send(Msg::Done(ran));
            }))
            .map_err(Error::Thread)?;
        Ok(Started {
            stream: Some(Stream {
                rx,
                batch: Vec::new().into_iter(),
                done: false,
                cancel,
            }),
            ready: None,
            started,
        })
    }

    /// Opens an explicit transaction (snapshot isolation).
    pub fn begin(&self) -> Result<Transaction> {
        self.begin_with(Isolation::Snapshot)
    }

    pub fn begin_with(&self, isolation: Isolation) -> Result<Transaction> {
        Ok(Transaction {
            db: self.db.clone(),
            txn: Some(Txn::Write(Box::new(
                self.db.write_with(&self.graph, isolation)?,
            ))),
            failed: None,
            last: None,
        })
    }

    /// Opens a read-only explicit transaction: every query in it reads one
    /// snapshot (repeatable reads, as Bolt's `BEGIN` in read mode asks for),
    /// a query that writes is refused with
    /// [`Error::WriteInReadTransaction`], and nothing is buffered or checked
    /// for conflicts, so its reads cost what an auto-commit read's do.
    ///
    /// ```
    /// use plexus::{Database, Params};
    /// let db = Database::in_memory().unwrap();
    /// let s = db.session("default").unwrap();
    /// let mut tx = s.begin_read().unwrap();
    /// db.query("default", "CREATE (:N)", &Params::new()).unwrap();
    /// // The transaction's snapshot predates the node.
    /// let t = tx.query("MATCH (n) RETURN count(n)", &Params::new()).unwrap();
    /// assert_eq!(t.rows[0][0], plexus::Value::Int(0));
    /// assert!(tx.query("CREATE (:N)", &Params::new()).is_err());
    /// ```
    pub fn begin_read(&self) -> Result<Transaction> {
        Ok(Transaction {
            db: self.db.clone(),
            txn: Some(Txn::Read(self.db.read(&self.graph)?)),
            failed: None,
            last: None,
        })
    }
}

/// An explicit transaction reads one snapshot, which a query reading
/// committed history as of another instant cannot share.
fn refuse_as_of(plan: &Prepared, params: &Params, guard: &Guard) -> Result<()> {
    if plan.as_of(params, guard).map_err(Error::Query)?.is_some() {
        return Err(Error::Query(plexus_query::QueryError::Semantic {
            code: "InvalidTimeQualifier",
            message: "a query with FOR SYSTEM_TIME AS OF reads committed history: \
                      run it outside an explicit transaction"
                .into(),
        }));
    }
    Ok(())
}

/// What an explicit transaction holds: a write transaction (which sees its
/// own writes) or, for a read-only one, a snapshot.
enum Txn {
    /// Boxed: a write transaction's state is hundreds of bytes, a
    /// snapshot's a pointer.
    Write(Box<WriteTxn>),
    Read(ReadTxn),
}

/// An explicit transaction: queries see each other's writes; nothing is
/// visible to others before [`Transaction::commit`]. Dropping it rolls back.
pub struct Transaction {
    db: Database,
    txn: Option<Txn>,
    /// Why the transaction can only be rolled back now.
    failed: Option<String>,
    /// The last query's text and plan: a transaction that runs one query
    /// again and again with other parameters finds it without the shared
    /// cache's lock and hash.
    last: Option<(Box<str>, std::sync::Arc<Prepared>)>,
}

impl Transaction {
    /// Runs a query inside the transaction.
    pub fn run(&mut self, text: &str, params: &Params) -> Result<Cursor> {
        self.run_with(text, params, &QueryOptions::default())
    }

    pub fn run_with(&mut self, text: &str, params: &Params, opts: &QueryOptions) -> Result<Cursor> {
        self.run_timed(text, params, opts, Some(Instant::now()))
    }

    /// [`Transaction::run_with`], begun at `started` (`None`: untimed).
    fn run_timed(
        &mut self,
        text: &str,
        params: &Params,
        opts: &QueryOptions,
        started: Option<Instant>,
    ) -> Result<Cursor> {
        if let Some(why) = &self.failed {
            return Err(Error::TransactionFailed(why.clone()));
        }
        let plan = match &self.last {
            Some((last, plan)) if **last == *text => plan.clone(),
            _ => {
                let plan = self.db.plans().get(text)?;
                self.last = Some((text.into(), plan.clone()));
                plan
            }
        };
        if plan.in_transactions() {
            return Err(Error::Query(plexus_query::QueryError::Semantic {
                code: "ImplicitTransactionRequired",
                message:
                    "a query with CALL { … } IN TRANSACTIONS runs only as an auto-commit query, \
                          not inside an explicit transaction"
                        .into(),
            }));
        }
        let txn = match self.txn.as_mut().ok_or(Error::TransactionClosed)? {
            Txn::Write(txn) => txn,
            Txn::Read(snap) => return Self::run_read(&self.db, snap, &plan, params, opts, started),
        };
        let guard = opts.guard(&self.db);
        refuse_as_of(&plan, params, &guard)?;
        let before = txn.counters();
        match plan
            .run_write_planned(txn, params, None, &guard, opts.plan_apart)
            .map_err(Error::Query)
        {
            Ok(ran) => {
                let kind = QueryKind::of(&plan);
                let counters = txn.counters().since(&before);
                Ok(Cursor::planned(ran, kind, started, counters))
            }
            Err(e) => {
                // Part of the query's writes may be in the transaction.
                if plan.is_write() {
                    self.failed = Some(e.to_string());
                }
                Err(e)
            }
        }
    }

    /// A query in a read-only transaction: on its snapshot, or refused
    /// when it writes. A failure leaves nothing to undo, so the
    /// transaction stays usable.
    fn run_read(
        db: &Database,
        snap: &ReadTxn,
        plan: &Prepared,
        params: &Params,
        opts: &QueryOptions,
        started: Option<Instant>,
    ) -> Result<Cursor> {
        if plan.is_write() {
            return Err(Error::WriteInReadTransaction);
        }
        let guard = opts.guard(db);
        refuse_as_of(plan, params, &guard)?;
        let ran = plan
            .run_read_planned(snap, params, &guard, opts.plan_apart)
            .map_err(Error::Query)?;
        Ok(Cursor::planned(
            ran,
            QueryKind::Read,
            started,
            Counters::default(),
        ))
    }

    /// Runs a query and returns its whole result.
    pub fn query(&mut self, text: &str, params: &Params) -> Result<Table> {
        // Untimed: a table has no summary to hold the time.
        self.run_timed(text, params, &QueryOptions::default(), None)?
            .into_table()
    }

    /// Whether the transaction was begun read-only ([`Session::begin_read`]).
    pub fn is_read_only(&self) -> bool {
        matches!(self.txn, Some(Txn::Read(_)))
    }

    /// Commits every write of the transaction atomically; `Conflict` when a
    /// concurrent commit won.
    pub fn commit(mut self) -> Result<()> {
        if let Some(why) = self.failed.take() {
            return Err(Error::TransactionFailed(why));
        }
        match self.txn.take().ok_or(Error::TransactionClosed)? {
            Txn::Write(txn) => Ok((*txn).commit()?),
            // Nothing to write: ending it releases the snapshot.
            Txn::Read(_) => Ok(()),
        }
    }

    /// Discards every write of the transaction.
    pub fn rollback(mut self) {
        self.txn.take();
    }

    /// Whether a failed query left the transaction fit only for rollback.
    pub fn is_failed(&self) -> bool {
        self.failed.is_some()
    }
}
