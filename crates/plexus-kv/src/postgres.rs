//! The PostgreSQL backend: each keyspace a table `(k bytea primary key, v
//! bytea)` in a schema of its own, so that the store runs on PostgreSQL and
//! on the engines that speak its protocol and SQL (CockroachDB, YugabyteDB:
//! ordered keys, ranged scans, transactions).
//!
//! * A snapshot is a `REPEATABLE READ, READ ONLY` transaction held on a
//!   connection of its own for the snapshot's life: PostgreSQL's snapshot
//!   is taken by the transaction's first statement, which `snapshot` runs.
//! * A write batch is one transaction. Runs of puts (or deletes) to one
//!   keyspace go as one statement over arrays (`unnest`, `= ANY`), so a
//!   commit of thousands of keys costs a few round trips, not one a key;
//!   counters are read `FOR UPDATE` and written in the same transaction.
//!   A serialization failure or deadlock (SQLSTATE 40001, 40P01) rolls the
//!   whole transaction back, so it is retried, with backoff.
//! * Sorted runs and bulk appends go through `COPY … (FORMAT binary)` into
//!   a temporary table, then one `INSERT … ON CONFLICT` into the keyspace.
//! * Connections are pooled: made when none is idle, at most
//!   [`IDLE_CONNECTIONS`] kept idle.
//!
//! `bytea` compares as unsigned bytes, then by length: the order every
//! other backend keeps.

use crate::batch::add_counter;
use crate::{
    Backend, KeyRange, Ks, KvError, KvIter, KvOptions, KvPair, KvStore, Op, RangeVisitor, Result,
    Run, ScanOptions, Snapshot, SortedCheck, WriteBatch,
};
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, GenericClient, NoTls, Row, Statement};
use std::collections::HashMap;
use std::io::Write;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Idle connections kept for the next snapshot or write, unless the URL
/// says otherwise (`pool_size`).
pub const IDLE_CONNECTIONS: usize = 8;
/// The longest key: a B-tree entry must fit in a third of a page (8 KB).
pub const MAX_KEY: usize = 2000;
/// The one-row table whose row every write locks first.
const WRITER_LOCK: &str = "plexus_writer";
/// Rows a scan fetches per round trip.
const PAGE: i64 = 1024;
/// Times a write is tried when the store reports a serialization failure.
const ATTEMPTS: u32 = 8;

fn pg_error(e: postgres::Error) -> KvError {
    let message = match e.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => e.to_string(),
    };
    KvError::Backend {
        backend: "postgres",
        message,
    }
}

/// An error and its causes, one after the other (a TLS failure is the
/// cause of the connection's error).
fn cause_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// Whether the store rolled the transaction back for a reason that a new
/// attempt may not meet.
fn transient(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    )
}

/// A name PostgreSQL takes unquoted and unchanged: lower-case ASCII
/// letters, digits and `_`, not starting with a digit, at most 63 bytes.
fn check_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(KvError::Unsupported(format!(
            "the {what} '{name}' must be 1 to 63 lower-case letters, digits or _, not starting with a digit"
        )))
    }
}

/// A connection and the statements prepared on it, by their SQL: a
/// statement is prepared once per connection (a round trip), then each use
/// is one.
struct Conn {
    client: Client,
    stmts: HashMap<String, Statement>,
}

/// The statement for `sql` on a connection, prepared on first use.
fn cached<C: GenericClient>(
    c: &mut C,
    stmts: &mut HashMap<String, Statement>,
    trips: &AtomicU64,
    sql: &str,
) -> Result<Statement, postgres::Error> {
    if let Some(st) = stmts.get(sql) {
        return Ok(st.clone());
    }
    trips.fetch_add(1, Relaxed);
    let st = c.prepare(sql)?;
    stmts.insert(sql.to_string(), st.clone());
    Ok(st)
}

/// A transaction on a pooled connection (begun and ended by
/// [`PgStore::transaction`]), counting its round trips.
struct Tx<'c> {
    t: &'c mut Client,
    stmts: &'c mut HashMap<String, Statement>,
    trips: &'c AtomicU64,
}

impl Tx<'_> {
    fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, postgres::Error> {
        let st = cached(self.t, self.stmts, self.trips, sql)?;
        self.trips.fetch_add(1, Relaxed);
        self.t.execute(&st, params)
    }

    fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        let st = cached(self.t, self.stmts, self.trips, sql)?;
        self.trips.fetch_add(1, Relaxed);
        self.t.query_opt(&st, params)
    }

    fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
        self.trips.fetch_add(1, Relaxed);
        self.t.batch_execute(sql)
    }
}

struct Pool {
    url: String,
    /// TLS to the server, when the URL asks for it (`pg_connect.rs`).
    tls: Option<Arc<tokio_rustls::rustls::ClientConfig>>,
    /// Idle connections kept.
    keep: usize,
    durable: bool,
    read_only: bool,
    idle: Mutex<Vec<Conn>>,
    /// Round trips to the server so far (statements, prepares, transaction
    /// ends), for `KvStore::round_trips`.
    trips: AtomicU64,
}

impl Pool {
    fn take(&self) -> Result<Conn> {
        if let Some(c) = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Ok(c);
        }
        let connected = match &self.tls {
            Some(config) => Client::connect(&self.url, crate::pg_connect::Rustls(config.clone())),
            None => Client::connect(&self.url, NoTls),
        };
        let mut c = connected.map_err(|e| KvError::Backend {
            backend: "postgres",
            message: format!("cannot connect to the store: {}", cause_chain(&e)),
        })?;
        let mut setup = String::new();
        if !self.durable {
            setup.push_str("SET synchronous_commit = off;");
        }
        if self.read_only {
            setup.push_str("SET default_transaction_read_only = on;");
        }
        if !setup.is_empty() {
            c.batch_execute(&setup).map_err(pg_error)?;
        }
        Ok(Conn {
            client: c,
            stmts: HashMap::new(),
        })
    }

    /// Gives a connection back, unless it is broken or enough are idle.
    fn give(&self, c: Conn) {
        if c.client.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < self.keep {
            idle.push(c);
        }
    }

    /// Runs statements with the simple protocol: one round trip.
    fn batch(&self, c: &mut Conn, sql: &str) -> Result<()> {
        self.trips.fetch_add(1, Relaxed);
        c.client.batch_execute(sql).map_err(pg_error)
    }
}

/// A store in PostgreSQL: one table per keyspace in `schema`.
pub(crate) struct PgStore {
    pool: Arc<Pool>,
    /// The keyspaces' tables, schema-qualified.
    tables: Vec<String>,
    schema: String,
}

impl PgStore {
    /// Connects to `url` and creates, where absent, the schema and a table
    /// per keyspace.
    pub(crate) fn open(
        url: &str,
        schema: &str,
        keyspaces: &[&str],
        opts: &KvOptions,
    ) -> Result<PgStore> {
        check_name("schema", schema)?;
        for ks in keyspaces {
            check_name("keyspace", ks)?;
        }
        let target = crate::pg_connect::target(url)?;
        let pool = Arc::new(Pool {
            url: target.url,
            tls: target.tls,
            keep: target.pool,
            durable: opts.durable,
            read_only: opts.read_only,
            idle: Mutex::new(Vec::new()),
            trips: AtomicU64::new(0),
        });
        let tables: Vec<String> = keyspaces
            .iter()
            .map(|k| format!("{schema}.kv_{k}"))
            .collect();
        let mut c = pool.take()?;
        if opts.read_only {
            let found: i64 = c
                .client
                .query_one(
                    "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
                    &[&schema],
                )
                .map_err(pg_error)?
                .get(0);
            if found == 0 {
                return Err(KvError::Unsupported(format!(
                    "there is no store in schema '{schema}' to open read-only"
                )));
            }
        } else {
            let mut ddl = format!(
                "CREATE SCHEMA IF NOT EXISTS {schema}; \
                 CREATE TABLE IF NOT EXISTS {schema}.{WRITER_LOCK} (id int PRIMARY KEY); \
                 INSERT INTO {schema}.{WRITER_LOCK} VALUES (0) ON CONFLICT DO NOTHING;"
            );
            for t in &tables {
                ddl.push_str(&format!(
                    "CREATE TABLE IF NOT EXISTS {t} (k bytea PRIMARY KEY, v bytea NOT NULL);"
                ));
            }
            pool.batch(&mut c, &ddl)?;
        }
        pool.give(c);
        Ok(PgStore {
            pool,
            tables,
            schema: schema.to_string(),
        })
    }

    fn table(&self, ks: Ks) -> Result<&str> {
        self.tables
            .get(ks.0)
            .map(String::as_str)
            .ok_or(KvError::NoSuchKeyspace(ks.0))
    }

    /// The statements that begin a write: the transaction, then the
    /// writers' lock row, which every write of every process takes first.
    /// Writes are thereby applied one at a time, so that a write prepared
    /// from what the store holds (`write_serialized`) finds it unchanged.
    fn begin_write(&self) -> String {
        format!(
            "BEGIN ISOLATION LEVEL READ COMMITTED; \
             SELECT 1 FROM {}.{WRITER_LOCK} WHERE id = 0 FOR UPDATE",
            self.schema
        )
    }

    /// Runs `body` in a write transaction on a pooled connection, again
    /// when the store rolled it back for a serialization failure or a
    /// deadlock.
    fn transaction(&self, body: &mut dyn FnMut(&mut Tx<'_>) -> Result<(), Failure>) -> Result<()> {
        if self.pool.read_only {
            return Err(KvError::ReadOnly);
        }
        let mut c = self.pool.take()?;
        let mut attempt = 0;
        let out = loop {
            attempt += 1;
            match self.attempt(&mut c, body) {
                Ok(()) => break Ok(()),
                Err(Failure::Pg(e)) if transient(&e) && attempt < ATTEMPTS => {
                    std::thread::sleep(Duration::from_millis(2u64 << attempt));
                }
                Err(Failure::Pg(e)) => break Err(pg_error(e)),
                Err(Failure::Kv(e)) => break Err(e),
            }
        };
        self.pool.give(c);
        out
    }

    /// One try of a write transaction: begun, `body`, committed; rolled
    /// back when anything fails.
    fn attempt(
        &self,
        c: &mut Conn,
        body: &mut dyn FnMut(&mut Tx<'_>) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let trips = &self.pool.trips;
        trips.fetch_add(1, Relaxed);
        let Conn { client, stmts } = c;
        let result = client
            .batch_execute(&self.begin_write())
            .map_err(Failure::Pg)
            .and_then(|()| {
                let mut tx = Tx {
                    t: client,
                    stmts,
                    trips,
                };
                body(&mut tx)?;
                trips.fetch_add(1, Relaxed);
                tx.t.batch_execute("COMMIT").map_err(Failure::Pg)
            });
        if result.is_err() {
            // What a failed transaction prepared is not trusted.
            c.stmts.clear();
            trips.fetch_add(1, Relaxed);
            let _ = c.client.batch_execute("ROLLBACK");
        }
        result
    }
}

/// Why a transaction's body stopped: the store, or what fed it.
enum Failure {
    Pg(postgres::Error),
    Kv(KvError),
}

impl From<postgres::Error> for Failure {
    fn from(e: postgres::Error) -> Self {
        Failure::Pg(e)
    }
}

impl From<KvError> for Failure {
    fn from(e: KvError) -> Self {
        Failure::Kv(e)
    }
}

fn check_key(key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY {
        return Err(KvError::KeyTooLong {
            len: key.len(),
            max: MAX_KEY,
        });
    }
    Ok(())
}

/// What [`PgStore::copy_into`] copies: a function handing each pair to the
/// sink it is given.
type Feed<'f> = dyn FnMut(&mut dyn FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> + 'f;

/// The most bytes of keys and values one statement carries: a message to
/// the server may not pass 1 GB, so a large commit goes as several
/// statements (in its one transaction).
const STATEMENT_BYTES: usize = 64 << 20;
/// The largest value the server stores (a `bytea` field's limit, 1 GB,
/// less room for the rest of the row).
pub const MAX_VALUE: usize = (1 << 30) - (1 << 20);

/// `items` cut into runs of at most [`STATEMENT_BYTES`] (by `size`), each
/// run one statement; an item larger than that alone.
fn statements<T>(items: &[T], size: impl Fn(&T) -> usize) -> impl Iterator<Item = &[T]> {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0;
        let n = rest
            .iter()
            .take_while(|x| {
                bytes += size(x);
                bytes <= STATEMENT_BYTES
            })
            .count()
            .max(1);
        let (part, after) = rest.split_at(n);
        rest = after;
        Some(part)
    })
}

/// Consecutive puts or deletes to one keyspace, sent as one statement.
enum Group {
    None,
    Puts(Ks, Vec<(Vec<u8>, Vec<u8>)>),
    Deletes(Ks, Vec<Vec<u8>>),
}

impl PgStore {
    fn flush(&self, t: &mut Tx<'_>, g: &mut Group) -> Result<(), Failure> {
        match std::mem::replace(g, Group::None) {
            Group::None => {}
            Group::Puts(ks, mut pairs) => {
                // One statement may not set a row twice: the last put wins.
                pairs.reverse();
                let mut seen = std::collections::HashSet::new();
                let last: Vec<bool> = pairs
                    .iter()
                    .map(|(k, _)| seen.insert(k.as_slice()))
                    .collect();
                drop(seen);
                let pairs: Vec<(Vec<u8>, Vec<u8>)> = pairs
                    .into_iter()
                    .zip(last)
                    .filter_map(|(pair, last)| last.then_some(pair))
                    .collect();
                let sql = format!(
                    "INSERT INTO {} (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) \
                     ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
                    self.table(ks)?
                );
                for part in statements(&pairs, |(k, v)| k.len() + v.len()) {
                    let (keys, values): (Vec<&[u8]>, Vec<&[u8]>) = part
                        .iter()
                        .map(|(k, v)| (k.as_slice(), v.as_slice()))
                        .unzip();
                    t.execute(&sql, &[&keys, &values])?;
                }
            }
            Group::Deletes(ks, keys) => {
                let sql = format!("DELETE FROM {} WHERE k = ANY($1)", self.table(ks)?);
                for part in statements(&keys, Vec::len) {
                    t.execute(&sql, &[&part])?;
                }
            }
        }
        Ok(())
    }

    fn apply(&self, t: &mut Tx<'_>, ops: &[Op]) -> Result<(), Failure> {
        let mut group = Group::None;
        for op in ops {
            match (op, &mut group) {
                (Op::Put { ks, key, value }, Group::Puts(g, pairs)) if g == ks => {
                    pairs.push((key.clone(), value.clone()));
                }
                (Op::Delete { ks, key }, Group::Deletes(g, keys)) if g == ks => {
                    keys.push(key.clone());
                }
                _ => {
                    self.flush(t, &mut group)?;
                    match op {
                        Op::Put { ks, key, value } => {
                            group = Group::Puts(*ks, vec![(key.clone(), value.clone())]);
                        }
                        Op::Delete { ks, key } => group = Group::Deletes(*ks, vec![key.clone()]),
                        Op::DeleteRange { ks, start, end } => {
                            let sql = format!(
                                "DELETE FROM {} WHERE k >= $1 AND k < $2",
                                self.table(*ks)?
                            );
                            t.execute(&sql, &[start, end])?;
                        }
                        Op::Add { ks, key, delta } => self.add(t, *ks, key, *delta)?,
                    }
                }
            }
        }
        self.flush(t, &mut group)
    }

    /// A counter's delta: read under a row lock, written or deleted.
    fn add(&self, t: &mut Tx<'_>, ks: Ks, key: &[u8], delta: i64) -> Result<(), Failure> {
        let table = self.table(ks)?;
        let old: Option<Vec<u8>> = t
            .query_opt(
                &format!("SELECT v FROM {table} WHERE k = $1 FOR UPDATE"),
                &[&key],
            )?
            .map(|r| r.get(0));
        match add_counter(old.as_deref(), delta) {
            Some(v) => {
                let sql = format!(
                    "INSERT INTO {table} (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
                );
                t.execute(&sql, &[&key, &v.as_slice()])?;
            }
            None => {
                t.execute(&format!("DELETE FROM {table} WHERE k = $1"), &[&key])?;
            }
        }
        Ok(())
    }

    /// Copies sorted pairs into `ks`: `COPY` into a temporary table, then
    /// one upsert. `feed` hands each pair to the sink it is given, so that
    /// a run is streamed from where it lies, never copied whole. Returns
    /// how many.
    fn copy_into(&self, t: &mut Tx<'_>, ks: Ks, feed: &mut Feed<'_>) -> Result<u64, Failure> {
        let table = self.table(ks)?;
        t.batch_execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS plexus_load (k bytea, v bytea) ON COMMIT DROP; \
             TRUNCATE plexus_load",
        )?;
        let mut n = 0u64;
        {
            t.trips.fetch_add(1, Relaxed);
            let mut w =
                t.t.copy_in("COPY plexus_load (k, v) FROM STDIN (FORMAT binary)")?;
            w.write_all(b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0")
                .map_err(KvError::Io)?;
            let mut row = Vec::new();
            feed(&mut |k, v| {
                check_key(k)?;
                row.clear();
                row.extend_from_slice(&2i16.to_be_bytes());
                for field in [k, v] {
                    let len = i32::try_from(field.len()).map_err(|_| {
                        KvError::Unsupported(format!(
                            "a value of {} bytes is larger than the store takes (1 GB)",
                            field.len()
                        ))
                    })?;
                    row.extend_from_slice(&len.to_be_bytes());
                    row.extend_from_slice(field);
                }
                w.write_all(&row)?;
                n += 1;
                Ok(())
            })?;
            w.write_all(&(-1i16).to_be_bytes()).map_err(KvError::Io)?;
            w.finish()?;
        }
        t.execute(
            &format!(
                "INSERT INTO {table} (k, v) SELECT k, v FROM plexus_load \
                 ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
            ),
            &[],
        )?;
        Ok(n)
    }

    fn sizes(&self) -> Result<Vec<u64>> {
        let mut c = self.pool.take()?;
        let mut out = Vec::with_capacity(self.tables.len());
        for t in &self.tables {
            self.pool.trips.fetch_add(1, Relaxed);
            let bytes: i64 = c
                .client
                .query_one("SELECT pg_total_relation_size($1::text::regclass)", &[t])
                .map_err(pg_error)?
                .get(0);
            out.push(u64::try_from(bytes).unwrap_or(0));
        }
        self.pool.give(c);
        Ok(out)
    }
}

impl KvStore for PgStore {
    fn snapshot(&self) -> Result<Box<dyn Snapshot>> {
        let mut c = self.pool.take()?;
        // The snapshot is taken by the first statement of the transaction.
        self.pool.batch(
            &mut c,
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 1",
        )?;
        Ok(Box::new(PgSnapshot {
            client: Mutex::new(Some(c)),
            pool: self.pool.clone(),
            tables: self.tables.clone(),
        }))
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        self.check_batch(&batch)?;
        if batch.ops.is_empty() {
            return Ok(());
        }
        self.transaction(&mut |t| self.apply(t, &batch.ops))
    }

    fn shared(&self) -> bool {
        true
    }

    fn get_now(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let sql = format!("SELECT v FROM {} WHERE k = $1", self.table(ks)?);
        let mut c = self.pool.take()?;
        let trips = &self.pool.trips;
        let row = cached(&mut c.client, &mut c.stmts, trips, &sql).and_then(|st| {
            trips.fetch_add(1, Relaxed);
            c.client.query_opt(&st, &[&key])
        });
        self.pool.give(c);
        Ok(row.map_err(pg_error)?.map(|r| r.get(0)))
    }

    fn write_serialized(&self, prepare: &mut crate::Prepare<'_>) -> Result<()> {
        if self.pool.read_only {
            return Err(KvError::ReadOnly);
        }
        let mut c = self.pool.take()?;
        // With the writers' lock held, each statement of the view reads
        // what the write will land on (READ COMMITTED reads the latest
        // commit, and no other write can commit meanwhile).
        self.pool.batch(&mut c, &self.begin_write())?;
        let view = PgSnapshot {
            client: Mutex::new(Some(c)),
            pool: self.pool.clone(),
            tables: self.tables.clone(),
        };
        let prepared = prepare(&view).and_then(|b| self.check_batch(&b).map(|()| b));
        let taken = view.client.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut c =
            taken.ok_or_else(|| KvError::Corrupt("a write's connection was lost".into()))?;
        let trips = &self.pool.trips;
        let result = match prepared {
            Ok(batch) => {
                let mut tx = Tx {
                    t: &mut c.client,
                    stmts: &mut c.stmts,
                    trips,
                };
                self.apply(&mut tx, &batch.ops).and_then(|()| {
                    trips.fetch_add(1, Relaxed);
                    tx.t.batch_execute("COMMIT").map_err(Failure::Pg)
                })
            }
            Err(e) => Err(Failure::Kv(e)),
        };
        if result.is_err() {
            c.stmts.clear();
            trips.fetch_add(1, Relaxed);
            let _ = c.client.batch_execute("ROLLBACK");
        }
        self.pool.give(c);
        match result {
            Ok(()) => Ok(()),
            // Rolled back whole: nothing landed, and `prepare` (which runs
            // once) is the caller's to run again.
            Err(Failure::Pg(e)) if transient(&e) => Err(KvError::Retry(pg_error(e).to_string())),
            Err(Failure::Pg(e)) => Err(pg_error(e)),
            Err(Failure::Kv(e)) => Err(e),
        }
    }

    fn bulk_append(&self, ks: Ks, pairs: &mut dyn Iterator<Item = KvPair>) -> Result<u64> {
        self.table(ks)?;
        let mut buffered: Vec<KvPair> = Vec::new();
        let mut check = SortedCheck::new(pairs);
        buffered.extend(&mut check);
        if check.out_of_order {
            return Err(KvError::NotSorted);
        }
        let mut n = 0;
        self.transaction(&mut |t| {
            n = self.copy_into(t, ks, &mut |put| {
                buffered.iter().try_for_each(|(k, v)| put(k, v))
            })?;
            Ok(())
        })?;
        self.analyze(&[ks])?;
        Ok(n)
    }

    fn write_sorted(
        &self,
        runs: &mut dyn Iterator<Item = Result<(Ks, Arc<Run>)>>,
        batch: WriteBatch,
    ) -> Result<()> {
        // Runs are shared and may block: take them all before the
        // transaction, so that a retry has them again.
        let runs: Vec<(Ks, Arc<Run>)> = runs.collect::<Result<_>>()?;
        for (ks, run) in &runs {
            self.table(*ks)?;
            run.check_sorted()?;
        }
        self.transaction(&mut |t| {
            for (ks, run) in &runs {
                self.copy_into(t, *ks, &mut |put| run.visit(put))?;
            }
            self.apply(t, &batch.ops)
        })?;
        let loaded: Vec<Ks> = runs.iter().map(|(ks, _)| *ks).collect();
        self.analyze(&loaded)
    }

    fn disk_size(&self) -> Result<u64> {
        Ok(self.sizes()?.iter().sum())
    }

    fn stored_sizes(&self) -> Result<Vec<u64>> {
        self.sizes()
    }

    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn round_trips(&self) -> Option<u64> {
        Some(self.pool.trips.load(Relaxed))
    }
}

impl PgStore {
    /// Has the server gather statistics of tables a bulk load filled: until
    /// it does (autovacuum, some time later), its planner takes them for
    /// empty, and a point read or a join of ranges becomes a scan of the
    /// whole table (at 600,000 keys, 1.7 ms a point read instead of 0.1).
    fn analyze(&self, keyspaces: &[Ks]) -> Result<()> {
        let mut tables = Vec::new();
        for ks in keyspaces {
            let t = self.table(*ks)?;
            if !tables.contains(&t) {
                tables.push(t);
            }
        }
        if tables.is_empty() {
            return Ok(());
        }
        let mut c = self.pool.take()?;
        let done = self
            .pool
            .batch(&mut c, &format!("ANALYZE {}", tables.join(", ")));
        self.pool.give(c);
        done
    }

    /// Refuses a batch naming a keyspace the store lacks or a key too long.
    fn check_batch(&self, batch: &WriteBatch) -> Result<()> {
        let n = self.tables.len();
        if let Some(ks) = batch.ops.iter().map(Op::keyspace).find(|ks| ks.0 >= n) {
            return Err(KvError::NoSuchKeyspace(ks.0));
        }
        for op in &batch.ops {
            match op {
                Op::Put { key, value, .. } => {
                    check_key(key)?;
                    if value.len() > MAX_VALUE {
                        return Err(KvError::Unsupported(format!(
                            "a value of {} bytes is larger than the store takes ({MAX_VALUE} bytes)",
                            value.len()
                        )));
                    }
                }
                Op::Delete { key, .. } | Op::Add { key, .. } => check_key(key)?,
                Op::DeleteRange { .. } => {}
            }
        }
        Ok(())
    }

    /// Drops the store's schema and every table in it.
    pub(crate) fn destroy(&self) -> Result<()> {
        let mut c = self.pool.take()?;
        self.pool.batch(
            &mut c,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema),
        )?;
        self.pool.give(c);
        Ok(())
    }
}

/// A snapshot: a read-only repeatable-read transaction on its own
/// connection, ended (and the connection pooled again) when dropped.
struct PgSnapshot {
    client: Mutex<Option<Conn>>,
    pool: Arc<Pool>,
    tables: Vec<String>,
}

impl Drop for PgSnapshot {
    fn drop(&mut self) {
        let c = self
            .client
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(mut c) = c {
            if self.pool.batch(&mut c, "ROLLBACK").is_ok() {
                self.pool.give(c);
            }
        }
    }
}

/// The `WHERE` of a range after `$first`, and its parameters.
fn range_sql(range: &KeyRange, first: usize) -> (String, Vec<Vec<u8>>) {
    let mut cond = Vec::new();
    let mut params = Vec::new();
    let mut bound = |b: &Bound<Vec<u8>>, incl: &str, excl: &str| match b {
        Bound::Included(k) => {
            params.push(k.clone());
            cond.push(format!("k {incl} ${}", first + params.len()));
        }
        Bound::Excluded(k) => {
            params.push(k.clone());
            cond.push(format!("k {excl} ${}", first + params.len()));
        }
        Bound::Unbounded => {}
    };
    bound(&range.start, ">=", ">");
    bound(&range.end, "<=", "<");
    let sql = if cond.is_empty() {
        "TRUE".to_string()
    } else {
        cond.join(" AND ")
    };
    (sql, params)
}

impl PgSnapshot {
    /// Runs the prepared `sql` with `params` on the snapshot's connection.
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let mut guard = self.client.lock().unwrap_or_else(|p| p.into_inner());
        let c = guard
            .as_mut()
            .ok_or_else(|| KvError::Corrupt("a snapshot used after it ended".into()))?;
        let trips = &self.pool.trips;
        let st = cached(&mut c.client, &mut c.stmts, trips, sql).map_err(pg_error)?;
        trips.fetch_add(1, Relaxed);
        c.client.query(&st, params).map_err(pg_error)
    }

    fn table(&self, ks: Ks) -> Result<&str> {
        self.tables
            .get(ks.0)
            .map(String::as_str)
            .ok_or(KvError::NoSuchKeyspace(ks.0))
    }

    /// Up to `limit` pairs of `range`, in order.
    fn page(&self, ks: Ks, range: &KeyRange, reverse: bool, limit: i64) -> Result<Vec<KvPair>> {
        let table = self.table(ks)?;
        let (cond, params) = range_sql(range, 0);
        let order = if reverse { "DESC" } else { "ASC" };
        let sql = format!("SELECT k, v FROM {table} WHERE {cond} ORDER BY k {order} LIMIT {limit}");
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        let rows = self.query(&sql, &refs)?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }
}

impl Snapshot for PgSnapshot {
    fn get(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let sql = format!("SELECT v FROM {} WHERE k = $1", self.table(ks)?);
        Ok(self
            .query(&sql, &[&key])?
            .into_iter()
            .next()
            .map(|r| r.get(0)))
    }

    fn multi_get(&self, ks: Ks, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>> {
        if keys.len() < 2 {
            return keys.iter().map(|k| self.get(ks, k)).collect();
        }
        let sql = format!("SELECT k, v FROM {} WHERE k = ANY($1)", self.table(ks)?);
        let asked: Vec<&[u8]> = keys.to_vec();
        let found: HashMap<Vec<u8>, Vec<u8>> = self
            .query(&sql, &[&asked])?
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        Ok(keys.iter().map(|k| found.get(*k).cloned()).collect())
    }

    /// One statement for every range that starts at a key (or anywhere)
    /// and ends before one (or nowhere), as prefix ranges do; others one
    /// by one.
    fn visit_ranges(&self, ks: Ks, ranges: &[KeyRange], f: &mut RangeVisitor<'_>) -> Result<()> {
        // Ranges bounded at both ends (as adjacency groups are) go in one
        // statement; any other shape, one by one.
        let mut lo: Vec<Vec<u8>> = Vec::with_capacity(ranges.len());
        let mut hi: Vec<Vec<u8>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match (&r.start, &r.end) {
                (Bound::Included(s), Bound::Excluded(e)) => {
                    lo.push(s.clone());
                    hi.push(e.clone());
                }
                (Bound::Unbounded, Bound::Excluded(e)) => {
                    lo.push(Vec::new());
                    hi.push(e.clone());
                }
                _ => return crate::visit_ranges_one_by_one(self, ks, ranges, f),
            }
        }
        if ranges.len() < 2 {
            return crate::visit_ranges_one_by_one(self, ks, ranges, f);
        }
        // LATERAL: one index range scan per range, whatever the planner
        // thinks of the table (a plain join may scan it whole).
        let sql = format!(
            "SELECT r.i, t.k, t.v FROM unnest($1::bytea[], $2::bytea[]) WITH ORDINALITY AS r(lo, hi, i) \
             CROSS JOIN LATERAL (SELECT k, v FROM {} WHERE k >= r.lo AND k < r.hi ORDER BY k) t \
             ORDER BY r.i, t.k",
            self.table(ks)?
        );
        for row in self.query(&sql, &[&lo, &hi])? {
            let i: i64 = row.get(0);
            let k: &[u8] = row.get(1);
            let v: &[u8] = row.get(2);
            let at = usize::try_from(i - 1)
                .map_err(|_| KvError::Corrupt("a range's position out of bounds".into()))?;
            if !f(at, k, v)? {
                break;
            }
        }
        Ok(())
    }

    fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_> {
        if let Err(e) = self.table(ks) {
            return Box::new(std::iter::once(Err(e)));
        }
        if range.is_empty() {
            return Box::new(std::iter::empty());
        }
        Box::new(Pages {
            snap: self,
            ks,
            range: range.clone(),
            reverse: opts.reverse,
            left: opts.limit.unwrap_or(usize::MAX),
            buffer: std::collections::VecDeque::new(),
            done: false,
        })
    }
}

/// A scan fetched a page at a time, each page's range starting past the
/// last key of the one before.
struct Pages<'a> {
    snap: &'a PgSnapshot,
    ks: Ks,
    range: KeyRange,
    reverse: bool,
    left: usize,
    buffer: std::collections::VecDeque<KvPair>,
    done: bool,
}

impl Iterator for Pages<'_> {
    type Item = Result<KvPair>;

    fn next(&mut self) -> Option<Result<KvPair>> {
        if self.left == 0 {
            return None;
        }
        if self.buffer.is_empty() && !self.done {
            let want = PAGE.min(i64::try_from(self.left).unwrap_or(PAGE));
            match self.snap.page(self.ks, &self.range, self.reverse, want) {
                Ok(rows) => {
                    self.done = (rows.len() as i64) < want;
                    if let Some((last, _)) = rows.last() {
                        if self.reverse {
                            self.range.end = Bound::Excluded(last.clone());
                        } else {
                            self.range.start = Bound::Excluded(last.clone());
                        }
                    }
                    self.buffer.extend(rows);
                }
                Err(e) => {
                    self.done = true;
                    self.left = 0;
                    return Some(Err(e));
                }
            }
        }
        let pair = self.buffer.pop_front()?;
        self.left -= 1;
        Some(Ok(pair))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_writes_go_as_several_statements() {
        let big = STATEMENT_BYTES / 3 + 1;
        let items = vec![big; 7];
        let parts: Vec<usize> = statements(&items, |n| *n).map(<[usize]>::len).collect();
        assert_eq!(parts, [2, 2, 2, 1]);
        let huge = vec![STATEMENT_BYTES * 2, 1];
        let parts: Vec<usize> = statements(&huge, |n| *n).map(<[usize]>::len).collect();
        assert_eq!(parts, [1, 1], "an item larger than a statement goes alone");
        assert_eq!(statements(&[] as &[usize], |n| *n).count(), 0);
    }
}
