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
use plexus_query::{CancelHandle, Guard, QueryLimits, Table};
use plexus_storage::{Isolation, WriteTxn};
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
            self.cancel.clone().unwrap_or_default(),
        )
    }
}

/// Whether a statement read, wrote or changed the schema (Bolt's `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    Read,
    Write,
}

/// What is known about a query once it has run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub kind: QueryKind,
    /// Rows the query produced.
    pub rows: usize,
    /// Time until the result was ready.
    pub elapsed: Duration,
}

/// The result of a query: columns first, then rows as they are pulled.
///
/// ```
/// use plexus::{Database, Params};
/// let db = Database::in_memory().unwrap();
/// let session = db.session("default").unwrap();
/// let mut c = session.run("UNWIND range(1, 5) AS x RETURN x * 10 AS y", &Params::new()).unwrap();
/// assert_eq!(c.columns(), ["y"]);
/// assert_eq!(c.fetch(2).len(), 2);
/// assert_eq!(c.next().map(|r| r[0].clone()), Some(plexus::Value::Int(30)));
/// let summary = c.consume(); // the rest is discarded
/// assert_eq!(summary.rows, 5);
/// ```
#[derive(Debug)]
pub struct Cursor {
    columns: Vec<String>,
    rows: std::vec::IntoIter<Vec<Value>>,
    summary: Summary,
}

impl Cursor {
    fn new(table: Table, kind: QueryKind, started: Instant) -> Cursor {
        let summary = Summary {
            kind,
            rows: table.rows.len(),
            elapsed: started.elapsed(),
        };
        Cursor {
            columns: table.columns,
            rows: table.rows.into_iter(),
            summary,
        }
    }

    /// The column names, in order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Up to `n` more rows (fewer at the end).
    pub fn fetch(&mut self, n: usize) -> Vec<Vec<Value>> {
        self.rows.by_ref().take(n).collect()
    }

    /// Whether rows remain to be pulled.
    pub fn has_more(&self) -> bool {
        self.rows.len() > 0
    }

    /// Discards the rows not pulled yet and returns the summary.
    pub fn consume(self) -> Summary {
        self.summary
    }

    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The rest of the result as a table.
    pub fn into_table(self) -> Table {
        Table {
            columns: self.columns,
            rows: self.rows.collect(),
        }
    }
}

impl Iterator for Cursor {
    type Item = Vec<Value>;

    fn next(&mut self) -> Option<Vec<Value>> {
        self.rows.next()
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

    /// Runs one auto-commit query (see [`Database::query`]).
    pub fn run(&self, text: &str, params: &Params) -> Result<Cursor> {
        self.run_with(text, params, &QueryOptions::default())
    }

    /// [`Session::run`] with limits and a cancellation handle.
    pub fn run_with(&self, text: &str, params: &Params, opts: &QueryOptions) -> Result<Cursor> {
        let started = Instant::now();
        let plan = self.db.plans().get(text)?;
        let kind = if plan.is_write() {
            QueryKind::Write
        } else {
            QueryKind::Read
        };
        let table = self.db.query_with(&self.graph, text, params, opts)?;
        Ok(Cursor::new(table, kind, started))
    }

    /// Opens an explicit transaction (snapshot isolation).
    pub fn begin(&self) -> Result<Transaction> {
        self.begin_with(Isolation::Snapshot)
    }

    pub fn begin_with(&self, isolation: Isolation) -> Result<Transaction> {
        Ok(Transaction {
            db: self.db.clone(),
            txn: Some(self.db.write_with(&self.graph, isolation)?),
            failed: None,
        })
    }
}

/// An explicit transaction: queries see each other's writes; nothing is
/// visible to others before [`Transaction::commit`]. Dropping it rolls back.
pub struct Transaction {
    db: Database,
    txn: Option<WriteTxn>,
    /// Why the transaction can only be rolled back now.
    failed: Option<String>,
}

impl Transaction {
    /// Runs a query inside the transaction.
    pub fn run(&mut self, text: &str, params: &Params) -> Result<Cursor> {
        self.run_with(text, params, &QueryOptions::default())
    }

    pub fn run_with(&mut self, text: &str, params: &Params, opts: &QueryOptions) -> Result<Cursor> {
        let started = Instant::now();
        if let Some(why) = &self.failed {
            return Err(Error::TransactionFailed(why.clone()));
        }
        let plan = self.db.plans().get(text)?;
        let txn = self.txn.as_mut().ok_or(Error::TransactionClosed)?;
        let guard = opts.guard(&self.db);
        match plan.run_write(txn, params, None, &guard) {
            Ok(table) => {
                let kind = if plan.is_write() {
                    QueryKind::Write
                } else {
                    QueryKind::Read
                };
                Ok(Cursor::new(table, kind, started))
            }
            Err(e) => {
                // Part of the query's writes may be in the transaction.
                if plan.is_write() {
                    self.failed = Some(e.to_string());
                }
                Err(Error::Query(e))
            }
        }
    }

    /// Runs a query and returns its whole result.
    pub fn query(&mut self, text: &str, params: &Params) -> Result<Table> {
        Ok(self.run(text, params)?.into_table())
    }

    /// Commits every write of the transaction atomically; `Conflict` when a
    /// concurrent commit won.
    pub fn commit(mut self) -> Result<()> {
        if let Some(why) = self.failed.take() {
            return Err(Error::TransactionFailed(why));
        }
        let txn = self.txn.take().ok_or(Error::TransactionClosed)?;
        Ok(txn.commit()?)
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
