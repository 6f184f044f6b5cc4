//! The LMDB backend, through `heed`: zero-copy B+tree reads, MVCC snapshots
//! that never block the single writer, and an append mode for sorted loads.
//!
//! LMDB needs a fixed map size. Plexus starts with a large map (address
//! space, not disk: the file grows only as data is written) and doubles it
//! when a write reports `MDB_MAP_FULL`. LMDB allows resizing only while no
//! transaction of this process is open, so snapshots register with a gate:
//! a resize closes the gate, waits for open snapshots to finish, grows the
//! map and retries the write.
//!
//! A compaction ([`KvStore::compact`], `compact.rs`) writes a compact copy
//! into a new *generation* (`generation.rs`) and swaps it in: the store
//! holds the live generation behind a lock that readers take only to
//! clone it.

use crate::batch::add_counter;
use crate::{
    Backend, Compaction, KeyRange, Ks, KvError, KvIter, KvOptions, KvPair, KvStore, Op, Result,
    Run, ScanOptions, Snapshot, WriteBatch,
};
use heed::types::Bytes;
use heed::{Database, Env, EnvFlags, EnvOpenOptions, MdbError, PutFlags, RoTxn, WithoutTls};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

/// 256 GiB of address space; on 64-bit Linux this reserves no memory or disk.
pub(crate) const DEFAULT_MAP_SIZE: usize = 256 << 30;

/// LMDB's page size here (the operating system's, 4 KiB on the machines
/// Plexus runs on; the map's room is measured in it).
const PAGE: usize = 4096;

/// How long a resize waits for open snapshots before giving up.
const RESIZE_WAIT: Duration = Duration::from_secs(30);

type Db = Database<Bytes, Bytes, KeyOrder>;

mod compact;
mod generation;
mod order;

use order::KeyOrder;

pub(crate) struct LmdbStore {
    /// The store's folder: its generations live in it.
    folder: PathBuf,
    keyspaces: Vec<String>,
    opts: KvOptions,
    /// The generation reads and writes go to; a compaction replaces it.
    live: RwLock<Arc<Generation>>,
    /// Serialises writers here (LMDB would too) so a resize or a
    /// compaction can run between them.
    write_lock: Mutex<Writer>,
    /// Signalled when a compaction ends (bulk writes wait for it).
    compacted: Condvar,
    read_only: bool,
}

/// What the write lock guards.
struct Writer {
    map_size: usize,
    /// While a compaction copies: the batches committed since its
    /// snapshot, to write again into the copy before it is swapped in.
    log: Option<Vec<WriteBatch>>,
}

/// One LMDB environment of the store: what a compaction writes anew.
struct Generation {
    number: u64,
    env: Env<WithoutTls>,
    dbs: Arc<Vec<Db>>,
    gate: Arc<Gate>,
    idle: Arc<Idle>,
}

/// An open read transaction and its place at the gate.
type Open = (RoTxn<'static, WithoutTls>, GateGuard);

/// Read transactions of one generation kept open between snapshots while
/// they still see the latest commit, so that the next snapshot reuses one.
///
/// Opening an LMDB read transaction takes a reader slot under the reader
/// table's lock (`MDB_NOTLS`), and a fresh one looks up each named
/// database's root again the first time it reads it: for a point query
/// that was about a third of its time (the Cypher lookup of
/// `plexus-bench compare`). A kept transaction is reused only when LMDB's
/// last committed transaction is still the one it reads
/// (`mdb_env_info`), so a snapshot always sees every commit made before it
/// is taken, as a fresh one would. A kept transaction pins no page a writer
/// could reuse, since it reads the latest state, and every commit of this
/// process drops the kept ones (no other process writes: the facade locks
/// the folder; a read-only store, beside a writing process, keeps none).
/// A resize and a compaction's retirement of the generation drop them too,
/// since both wait for every reader.
struct Idle {
    env: Env<WithoutTls>,
    kept: Mutex<Vec<Open>>,
    /// Keeps nothing more: the generation is retired (or read-only).
    closed: AtomicBool,
}

/// The most read transactions a generation keeps open idle (about the
/// threads that query at once).
const IDLE_MAX: usize = 16;

impl Idle {
    fn new(env: &Env<WithoutTls>, closed: bool) -> Idle {
        Idle {
            env: env.clone(),
            kept: Mutex::new(Vec::new()),
            closed: AtomicBool::new(closed),
        }
    }

    fn kept(&self) -> MutexGuard<'_, Vec<Open>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_latest(&self, txn: &RoTxn<'static, WithoutTls>) -> bool {
        txn.id() == self.env.info().last_txn_id
    }

    /// A kept transaction that still reads the latest commit.
    fn take(&self) -> Option<Open> {
        let mut kept = self.kept();
        let open = kept.pop()?;
        if self.is_latest(&open.0) {
            return Some(open);
        }
        // All were kept at a commit older than the latest.
        let stale = std::mem::take(&mut *kept);
        drop(kept);
        drop((open, stale));
        None
    }

    /// Keeps `open` for the next snapshot, or closes it. Decided under the
    /// lock [`Idle::drop_all`] takes, so a transaction is never kept after
    /// a commit, resize or retirement has emptied the pool.
    fn park(&self, open: Open) {
        let mut kept = self.kept();
        let keep = !self.closed.load(SeqCst)
            && !open.1 .0.resizing.load(SeqCst)
            && kept.len() < IDLE_MAX
            && self.is_latest(&open.0);
        if keep {
            kept.push(open);
        } else {
            drop(kept);
            drop(open);
        }
    }

    /// Every kept transaction, kept no more.
    fn take_all(&self) -> Vec<Open> {
        std::mem::take(&mut *self.kept())
    }

    /// Closes every kept transaction.
    fn drop_all(&self) {
        drop(self.take_all());
    }

    /// Closes every kept transaction and keeps none from now on.
    fn close(&self) {
        self.closed.store(true, SeqCst);
        self.drop_all();
    }
}

#[derive(Default)]
struct Gate {
    /// Snapshots open now, and snapshots about to check `resizing`.
    readers: AtomicUsize,
    resizing: AtomicBool,
    /// Held to wait on `changed`, and to change `resizing` or wake a
    /// waiter, so no wake-up is lost between a check and a wait.
    state: Mutex<()>,
    changed: Condvar,
}

struct GateGuard(Arc<Gate>);

// Every snapshot passes the gate twice, so its way through is two atomic
// updates, not a lock (two locks were a tenth of opening a read
// transaction). A reader counts itself, then looks at `resizing`; a resize
// sets `resizing`, then looks at the count: with sequentially consistent
// order one of them sees the other, so a resize never runs beside a
// snapshot.
impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Snapshots open now.
    fn readers(&self) -> usize {
        self.readers.load(SeqCst)
    }

    fn enter(self: &Arc<Self>) -> GateGuard {
        loop {
            self.readers.fetch_add(1, SeqCst);
            if !self.resizing.load(SeqCst) {
                return GateGuard(self.clone());
            }
            // A resize is waiting for the readers to leave: step back out
            // and wait for it to end.
            self.leave();
            let mut s = self.lock();
            while self.resizing.load(SeqCst) {
                s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
            }
        }
    }

    fn leave(&self) {
        // Only a resize waits for readers, and only for the last one: a
        // wake-up costs a system call, which every snapshot would pay.
        if self.readers.fetch_sub(1, SeqCst) == 1 && self.resizing.load(SeqCst) {
            let _s = self.lock();
            self.changed.notify_all();
        }
    }
}

impl Drop for GateGuard {
    fn drop(&mut self) {
        self.0.leave();
    }
}

fn backend_err(e: heed::Error) -> KvError {
    match e {
        heed::Error::Io(io) => KvError::Io(io),
        other => KvError::Backend {
            backend: "lmdb",
            message: other.to_string(),
        },
    }
}

fn is_map_full(e: &heed::Error) -> bool {
    matches!(e, heed::Error::Mdb(MdbError::MapFull))
}

impl LmdbStore {
    pub(crate) fn open(path: &Path, keyspaces: &[&str], opts: &KvOptions) -> Result<Self> {
        if !opts.read_only {
            std::fs::create_dir_all(path)?;
        }
        let number = generation::current(path)?;
        if !opts.read_only {
            generation::clear_others(path, number)?;
        }
        let map_size = opts.lmdb_initial_map_size.max(PAGE).div_ceil(PAGE) * PAGE;
        let live = Generation::open(path, number, keyspaces, opts, map_size)?;
        Ok(LmdbStore {
            folder: path.to_path_buf(),
            keyspaces: keyspaces.iter().map(|k| k.to_string()).collect(),
            opts: opts.clone(),
            live: RwLock::new(Arc::new(live)),
            write_lock: Mutex::new(Writer {
                map_size,
                log: None,
            }),
            compacted: Condvar::new(),
            read_only: opts.read_only,
        })
    }

    /// The live generation.
    fn live(&self) -> Arc<Generation> {
        self.live.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Takes the map size another process grew the file to (LMDB answers a
    /// new transaction with `MDB_MAP_RESIZED` until this process does).
    fn adopt_map_size(&self) -> Result<()> {
        let _w = self.writer();
        let g = self.live();
        g.resize(0, g.env.info().map_size)
    }

    fn writer(&self) -> MutexGuard<'_, Writer> {
        self.write_lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The write lock, once no compaction runs (waited for with the lock
    /// released).
    fn after_compaction<'a>(&self, mut w: MutexGuard<'a, Writer>) -> MutexGuard<'a, Writer> {
        while w.log.is_some() {
            w = self.compacted.wait(w).unwrap_or_else(|p| p.into_inner());
        }
        w
    }

    /// Runs `f` in one write transaction on the live generation, growing
    /// the map and retrying when full. `batch` is what `f` writes, kept
    /// for a running compaction; a write without one (a sorted run, too
    /// large to keep) waits for the compaction to end.
    fn with_write_txn(
        &self,
        batch: Option<&WriteBatch>,
        f: &mut dyn FnMut(&Generation, &mut heed::RwTxn<'_>) -> Result<(), WriteErr>,
    ) -> Result<()> {
        let mut w = self.writer();
        if batch.is_none() {
            w = self.after_compaction(w);
        }
        loop {
            // Read under the write lock: a compaction swaps it under that lock.
            let g = self.live();
            let mut wtxn = g.env.write_txn().map_err(backend_err)?;
            let result = f(&g, &mut wtxn).and_then(|()| wtxn.commit().map_err(WriteErr::Heed));
            match result {
                Ok(()) => {
                    // They read the state before this commit.
                    g.idle.drop_all();
                    if let (Some(log), Some(batch)) = (w.log.as_mut(), batch) {
                        log.push(batch.clone());
                    }
                    return Ok(());
                }
                // Growing the map now would wait for the copy's snapshot
                // and grow a map about to be replaced: wait for the
                // compaction instead, then try again on its copy.
                Err(WriteErr::Heed(e)) if is_map_full(&e) && w.log.is_some() => {
                    w = self.after_compaction(w);
                }
                Err(WriteErr::Heed(e)) if is_map_full(&e) => g.grow(&mut w.map_size)?,
                Err(WriteErr::Heed(e)) => return Err(backend_err(e)),
                Err(WriteErr::Kv(e)) => return Err(e),
            }
        }
    }
}

impl Generation {
    /// Opens generation `number` of the store in `store`.
    fn open(
        store: &Path,
        number: u64,
        keyspaces: &[&str],
        opts: &KvOptions,
        map_size: usize,
    ) -> Result<Generation> {
        let path = generation::folder(store, number);
        let mut options = EnvOpenOptions::new().read_txn_without_tls();
        options
            .map_size(map_size)
            .max_dbs(keyspaces.len() as u32 + 1)
            .max_readers(4096);
        if !opts.durable {
            // SAFETY: NO_SYNC only skips fsync; a process crash still keeps
            // every committed write (it is in the page cache). An OS crash
            // may lose recent commits or, pages written out of order, damage
            // the file: the caller asked for exactly this trade (documented
            // on `KvOptions::durable`).
            unsafe {
                options.flags(EnvFlags::NO_SYNC);
            }
        }
        if opts.read_only {
            // SAFETY: READ_ONLY only forbids writes; LMDB shares the file
            // with the writing process through its own lock file.
            unsafe {
                options.flags(EnvFlags::READ_ONLY);
            }
        }
        // SAFETY: heed requires that the same environment is not opened twice
        // in one process; the Plexus facade holds an exclusive lock file on
        // the database folder for as long as it is open, and each
        // generation has a folder of its own.
        let env = unsafe { options.open(&path) }.map_err(backend_err)?;
        let dbs = if opts.read_only {
            Self::existing_keyspaces(&env, keyspaces)?
        } else {
            let mut wtxn = env.write_txn().map_err(backend_err)?;
            let mut dbs = Vec::with_capacity(keyspaces.len());
            for name in keyspaces {
                dbs.push(
                    env.database_options()
                        .types::<Bytes, Bytes>()
                        .key_comparator::<KeyOrder>()
                        .name(name)
                        .create(&mut wtxn)
                        .map_err(backend_err)?,
                );
            }
            wtxn.commit().map_err(backend_err)?;
            dbs
        };
        Ok(Generation {
            number,
            idle: Arc::new(Idle::new(&env, opts.read_only)),
            env,
            dbs: Arc::new(dbs),
            gate: Arc::default(),
        })
    }

    /// The keyspaces of a store opened read-only: they must all exist.
    fn existing_keyspaces(env: &Env<WithoutTls>, keyspaces: &[&str]) -> Result<Vec<Db>> {
        let rtxn = env.read_txn().map_err(backend_err)?;
        let dbs = keyspaces
            .iter()
            .map(|name| {
                env.database_options()
                    .types::<Bytes, Bytes>()
                    .key_comparator::<KeyOrder>()
                    .name(name)
                    .open(&rtxn)
                    .map_err(backend_err)?
                    .ok_or_else(|| KvError::MissingKeyspace((*name).to_string()))
            })
            .collect::<Result<Vec<_>>>()?;
        // Handles opened in a transaction are private to it until it
        // commits (an aborted one closes them): commit, though it read.
        rtxn.commit().map_err(backend_err)?;
        Ok(dbs)
    }

    fn db(&self, ks: Ks) -> Result<Db> {
        self.dbs
            .get(ks.0)
            .copied()
            .ok_or(KvError::NoSuchKeyspace(ks.0))
    }

    /// Checks the keys a batch writes, before any is written: a bad one
    /// fails the write with nothing of it written.
    fn check_keys(&self, batch: &WriteBatch) -> Result<()> {
        for op in &batch.ops {
            if let Op::Put { key, .. } | Op::Add { key, .. } = op {
                self.check_key(key)?;
            }
        }
        Ok(())
    }

    fn check_key(&self, key: &[u8]) -> Result<()> {
        let max = self.env.max_key_size();
        if key.len() > max || key.is_empty() {
            return Err(KvError::KeyTooLong {
                len: key.len(),
                max,
            });
        }
        Ok(())
    }

    /// Doubles the map. Called with the write lock held and no write
    /// transaction open; waits for snapshots of this process to close.
    /// Bytes of the map past its last used page (free pages inside it not
    /// counted: a lower bound of what fits).
    fn room(&self) -> usize {
        let info = self.env.info();
        let used = info.last_page_number.saturating_add(1).saturating_mul(PAGE);
        info.map_size.saturating_sub(used)
    }

    fn grow(&self, map_size: &mut usize) -> Result<()> {
        let new_size = map_size.saturating_mul(2);
        self.resize(new_size, *map_size)?;
        *map_size = new_size;
        Ok(())
    }

    /// Sets the map size (0: the size the file records) once no snapshot of
    /// this process is open; `current` names the size in errors.
    fn resize(&self, new_size: usize, current: usize) -> Result<()> {
        let gate = &self.gate;
        let s = gate.lock();
        gate.resizing.store(true, SeqCst);
        // Kept transactions are readers too, and none is kept while
        // resizing; they are closed outside the lock their guards take.
        let kept = self.idle.take_all();
        drop(s);
        drop(kept);
        let mut s = gate.lock();
        let deadline = Instant::now() + RESIZE_WAIT;
        while gate.readers() > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                gate.resizing.store(false, SeqCst);
                gate.changed.notify_all();
                return Err(KvError::Full(format!(
                    "the LMDB map ({} MiB) must grow, but {} read snapshots stayed open for {}s",
                    current >> 20,
                    gate.readers(),
                    RESIZE_WAIT.as_secs()
                )));
            }
            s = gate
                .changed
                .wait_timeout(s, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        // SAFETY: no transaction of this process is open: writers are
        // excluded by the write lock we hold, readers by the closed gate.
        let r = unsafe { self.env.resize(new_size) };
        gate.resizing.store(false, SeqCst);
        gate.changed.notify_all();
        drop(s);
        r.map_err(backend_err)
    }

    /// Applies a batch's operations inside an open write transaction.
    fn apply(&self, wtxn: &mut heed::RwTxn<'_>, batch: &WriteBatch) -> Result<(), WriteErr> {
        let mut rest = &batch.ops[..];
        while let Some(op) = rest.first() {
            if let Op::Put { ks, .. } = op {
                let run = put_run(rest, *ks);
                self.put_run(wtxn, self.db(*ks)?, &rest[..run])?;
                rest = &rest[run..];
                continue;
            }
            rest = &rest[1..];
            match op {
                Op::Put { .. } => {}
                Op::Delete { ks, key } => {
                    self.db(*ks)?.delete(wtxn, key)?;
                }
                Op::DeleteRange { ks, start, end } => {
                    if start < end {
                        let r = (
                            Bound::Included(start.as_slice()),
                            Bound::Excluded(end.as_slice()),
                        );
                        self.db(*ks)?.delete_range(wtxn, &r)?;
                    }
                }
                Op::Add { ks, key, delta } => {
                    let db = self.db(*ks)?;
                    match add_counter(db.get(wtxn, key)?, *delta) {
                        Some(v) => db.put(wtxn, key, &v)?,
                        None => {
                            db.delete(wtxn, key)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes a run of puts into one keyspace, keys ascending ([`put_run`]):
    /// those up to the keyspace's last key each by a search, those past it
    /// (new ids, which mostly grow: a large commit writes many) appended
    /// through one cursor, without searching, onto full pages.
    fn put_run(&self, wtxn: &mut heed::RwTxn<'_>, db: Db, run: &[Op]) -> Result<(), WriteErr> {
        let pairs: Vec<(&[u8], &[u8])> = run
            .iter()
            .filter_map(|op| match op {
                Op::Put { key, value, .. } => Some((key.as_slice(), value.as_slice())),
                _ => None,
            })
            .collect();
        let split = match db.last(wtxn)? {
            Some((last, _)) => pairs.partition_point(|(k, _)| *k <= last),
            None => 0,
        };
        for (k, v) in &pairs[..split] {
            db.put(wtxn, k, v)?;
        }
        // Past the last key, ascending (`put_run`), and checked with the
        // batch's other keys (`check_keys`) before any was written.
        append_through_cursor(wtxn, db, pairs[split..].iter().copied(), &mut |_| Ok(()))
    }

    /// Writes one sorted run: in append mode (no searching, full pages) when
    /// every key lies past the keyspace's current last key. Each key is
    /// checked as it is written (past the one before it, of a size LMDB
    /// takes): a bad one fails the transaction, so nothing of it lands, and
    /// the run is read once rather than once more to check it first.
    fn append_run(&self, wtxn: &mut heed::RwTxn<'_>, db: Db, run: &Run) -> Result<(), WriteErr> {
        if !run.parted() {
            return self.append_pairs(wtxn, db, &mut run.iter());
        }
        // Parts in files are merged as they are read: pairs come to a
        // callback (valid for the call only, so the previous key is copied),
        // which reports a write error as the transaction's own.
        let append = appends(db.last(wtxn)?.map(|(k, _)| k), run.first_key()?.as_deref());
        let mut prev: Option<Vec<u8>> = None;
        let mut checked = |k: &[u8]| -> Result<(), WriteErr> {
            self.check_next(prev.as_deref(), k)?;
            let p = prev.get_or_insert_with(Vec::new);
            p.clear();
            p.extend_from_slice(k);
            Ok(())
        };
        if append {
            let mut cursor = db.iter_mut(wtxn)?;
            run.visit(&mut |k, v| -> Result<(), WriteErr> {
                checked(k)?;
                // SAFETY: as in `append_pairs`.
                unsafe { cursor.put_current_with_options::<Bytes>(PutFlags::APPEND, k, v)? };
                Ok(())
            })
        } else {
            run.visit(&mut |k, v| -> Result<(), WriteErr> {
                checked(k)?;
                Ok(db.put(wtxn, k, v)?)
            })
        }
    }

    /// Writes sorted pairs, appending when they lie past the last key, and
    /// checking each key as `append_run` says.
    fn append_pairs<'p>(
        &self,
        wtxn: &mut heed::RwTxn<'_>,
        db: Db,
        pairs: &mut dyn Iterator<Item = (&'p [u8], &'p [u8])>,
    ) -> Result<(), WriteErr> {
        let mut pairs = pairs.peekable();
        let first = pairs.peek().map(|(k, _)| *k);
        let mut prev: Option<&[u8]> = None;
        if !appends(db.last(wtxn)?.map(|(k, _)| k), first) {
            for (k, v) in pairs {
                self.check_next(prev.replace(k), k)?;
                db.put(wtxn, k, v)?;
            }
            return Ok(());
        }
        append_through_cursor(wtxn, db, pairs, &mut |k| {
            self.check_next(prev.replace(k), k)
        })
    }

    /// Fails unless `key` lies past `prev` (the key before it in a sorted
    /// run) and has a size LMDB takes.
    fn check_next(&self, prev: Option<&[u8]>, key: &[u8]) -> Result<()> {
        if prev.is_some_and(|p| p >= key) {
            return Err(KvError::NotSorted);
        }
        self.check_key(key)
    }
}

/// Appends pairs that lie past the keyspace's last key, ascending, through
/// one cursor (`mdb_put` would set one up per pair); `check` sees each key
/// before it is written.
fn append_through_cursor<'p>(
    wtxn: &mut heed::RwTxn<'_>,
    db: Db,
    pairs: impl Iterator<Item = (&'p [u8], &'p [u8])>,
    check: &mut dyn FnMut(&'p [u8]) -> Result<()>,
) -> Result<(), WriteErr> {
    let mut cursor = db.iter_mut(wtxn)?;
    for (k, v) in pairs {
        check(k)?;
        // SAFETY: nothing read through this cursor is held while it
        // writes; keys and values come from the caller's run.
        unsafe { cursor.put_current_with_options::<Bytes>(PutFlags::APPEND, k, v)? };
    }
    Ok(())
}

/// How many of `ops`' first operations are puts into `ks` with keys in
/// strictly ascending order (a transaction's batch lists each keyspace's
/// keys so): at least one when the first is such a put.
fn put_run(ops: &[Op], ks: Ks) -> usize {
    let mut prev: Option<&[u8]> = None;
    ops.iter()
        .take_while(|op| match op {
            Op::Put { ks: k, key, .. } if *k == ks && prev.is_none_or(|p| p < key.as_slice()) => {
                prev = Some(key);
                true
            }
            _ => false,
        })
        .count()
}

/// Whether a sorted run starting at `first` can be appended to a keyspace
/// whose last key is `last`.
fn appends(last: Option<&[u8]>, first: Option<&[u8]>) -> bool {
    match (last, first) {
        (Some(l), Some(f)) => f > l,
        _ => true,
    }
}

/// An error inside a write transaction: heed's (to spot a full map) or ours.
enum WriteErr {
    Heed(heed::Error),
    Kv(KvError),
}

impl From<heed::Error> for WriteErr {
    fn from(e: heed::Error) -> Self {
        WriteErr::Heed(e)
    }
}

impl From<KvError> for WriteErr {
    fn from(e: KvError) -> Self {
        WriteErr::Kv(e)
    }
}

impl KvStore for LmdbStore {
    fn snapshot(&self) -> Result<Box<dyn Snapshot>> {
        loop {
            let g = self.live();
            if let Some(open) = g.idle.take() {
                return Ok(Box::new(LmdbSnapshot::new(open, &g)));
            }
            let guard = g.gate.enter();
            match g.env.clone().static_read_txn() {
                Ok(txn) => return Ok(Box::new(LmdbSnapshot::new((txn, guard), &g))),
                // Another process grew the file past this process's map.
                Err(heed::Error::Mdb(MdbError::MapResized)) => {
                    drop(guard);
                    self.adopt_map_size()?;
                }
                Err(e) => return Err(backend_err(e)),
            }
        }
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        if self.read_only {
            return Err(KvError::ReadOnly);
        }
        self.with_write_txn(Some(&batch), &mut |g, wtxn| {
            g.check_keys(&batch)?;
            g.apply(wtxn, &batch)
        })
    }

    fn bulk_append(&self, ks: Ks, pairs: &mut dyn Iterator<Item = KvPair>) -> Result<u64> {
        if self.read_only {
            return Err(KvError::ReadOnly);
        }
        // Kept for a retry after the map grows; checked as they are written.
        let pairs: Vec<KvPair> = pairs.collect();
        self.with_write_txn(None, &mut |g, wtxn| {
            let mut it = pairs.iter().map(|(k, v)| (k.as_slice(), v.as_slice()));
            g.append_pairs(wtxn, g.db(ks)?, &mut it)
        })?;
        Ok(pairs.len() as u64)
    }

    fn write_sorted(
        &self,
        runs: &mut dyn Iterator<Item = Result<(Ks, Arc<Run>)>>,
        batch: WriteBatch,
    ) -> Result<()> {
        if self.read_only {
            return Err(KvError::ReadOnly);
        }
        // Runs are written as they arrive. A transaction retried after
        // growing the map writes them again, so a run is kept until the
        // commit — unless the map's free room surely holds everything
        // written so far (half the room, against twice a run's memory and
        // 16 bytes an entry), as with the default map or after `reserve`:
        // then it is freed once written, which keeps a bulk load's runs
        // out of its peak memory. Should the map fill after one was freed,
        // nothing is written and the write is refused.
        let mut budget = None;
        let mut freed = false;
        let mut arrived: Vec<(Ks, Arc<Run>)> = Vec::new();
        self.with_write_txn(None, &mut |g, wtxn| {
            g.check_keys(&batch)?;
            // The room as the first attempt found it.
            let budget = budget.get_or_insert_with(|| g.room() / 2);
            if freed {
                return Err(WriteErr::Kv(KvError::Full(
                    "the load outgrew the LMDB map while it was written; nothing was written and the map has grown: run it again".into(),
                )));
            }
            let mut written = 0;
            loop {
                if written == arrived.len() {
                    match runs.next().transpose()? {
                        Some(run) => arrived.push(run),
                        None => break,
                    }
                }
                let (ks, run) = &arrived[written];
                g.append_run(wtxn, g.db(*ks)?, run)?;
                let need = run
                    .memory()
                    .saturating_mul(2)
                    .saturating_add(run.len().saturating_mul(16));
                if !run.spilled() && need <= *budget {
                    *budget -= need;
                    arrived[written].1 = Arc::new(Run::new());
                    freed = true;
                }
                written += 1;
            }
            g.apply(wtxn, &batch)
        })
    }

    fn reserve(&self, bytes: u64) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        // A bulk load that follows waits for a running compaction anyway,
        // and growing now would wait on the copy's snapshot.
        let mut w = self.after_compaction(self.writer());
        let g = self.live();
        let room = g.room();
        let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        if room < bytes {
            let new_size = w
                .map_size
                .saturating_add(bytes - room)
                .max(w.map_size.saturating_mul(2));
            g.resize(new_size, w.map_size)?;
            w.map_size = new_size;
        }
        Ok(())
    }

    fn disk_size(&self) -> Result<u64> {
        self.live().env.real_disk_size().map_err(backend_err)
    }

    fn compact(&self) -> Result<Compaction> {
        if self.read_only {
            return Err(KvError::ReadOnly);
        }
        self.compact_beside_writers()
    }

    fn stored_sizes(&self) -> Result<Vec<u64>> {
        let g = self.live();
        let _guard = g.gate.enter();
        let txn = g.env.read_txn().map_err(backend_err)?;
        g.dbs
            .iter()
            .map(|db| {
                let s = db.stat(&txn).map_err(backend_err)?;
                let pages = s.branch_pages + s.leaf_pages + s.overflow_pages;
                Ok(pages as u64 * u64::from(s.page_size))
            })
            .collect()
    }

    fn backend(&self) -> Backend {
        Backend::Lmdb
    }
}

/// A read transaction, handed back to its generation's [`Idle`] pool when
/// dropped. An [`Open`] drops the transaction (and its handle on the
/// environment) before the guard, which `retire` relies on.
struct LmdbSnapshot {
    /// Always `Some` until dropped.
    open: Option<Open>,
    dbs: Arc<Vec<Db>>,
    idle: Arc<Idle>,
}

impl Drop for LmdbSnapshot {
    fn drop(&mut self) {
        if let Some(open) = self.open.take() {
            self.idle.park(open);
        }
    }
}

impl LmdbSnapshot {
    fn new(open: Open, g: &Generation) -> LmdbSnapshot {
        LmdbSnapshot {
            open: Some(open),
            dbs: g.dbs.clone(),
            idle: g.idle.clone(),
        }
    }

    fn txn(&self) -> Result<&RoTxn<'static, WithoutTls>> {
        // Lazily: every read asks, and the message is a heap string.
        self.open
            .as_ref()
            .map(|o| &o.0)
            .ok_or_else(|| KvError::Backend {
                backend: "lmdb",
                message: "the read transaction was closed".into(),
            })
    }

    fn db(&self, ks: Ks) -> Result<Db> {
        self.dbs
            .get(ks.0)
            .copied()
            .ok_or(KvError::NoSuchKeyspace(ks.0))
    }
}

impl Snapshot for LmdbSnapshot {
    fn get(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if key.is_empty() {
            return Ok(None);
        }
        let v = self.db(ks)?.get(self.txn()?, key).map_err(backend_err)?;
        Ok(v.map(<[u8]>::to_vec))
    }

    fn get_with(&self, ks: Ks, key: &[u8], f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        if key.is_empty() {
            return Ok(false);
        }
        match self.db(ks)?.get(self.txn()?, key).map_err(backend_err)? {
            Some(v) => f(v).map(|()| true),
            None => Ok(false),
        }
    }

    fn visit(&self, ks: Ks, range: &KeyRange, f: &mut crate::PairVisitor<'_>) -> Result<()> {
        let db = self.db(ks)?;
        if range.is_empty() {
            return Ok(());
        }
        for pair in db
            .range(self.txn()?, &range.as_slices())
            .map_err(backend_err)?
        {
            let (k, v) = pair.map_err(backend_err)?;
            if !f(k, v)? {
                break;
            }
        }
        Ok(())
    }

    fn floor(&self, ks: Ks, min: &[u8], key: &[u8], f: &mut crate::PairVisitor<'_>) -> Result<()> {
        if key.is_empty() {
            return Ok(());
        }
        let found = self
            .db(ks)?
            .get_lower_than_or_equal_to(self.txn()?, key)
            .map_err(backend_err)?;
        if let Some((k, v)) = found.filter(|(k, _)| *k >= min) {
            f(k, v)?;
        }
        Ok(())
    }

    fn visit_rev(&self, ks: Ks, range: &KeyRange, f: &mut crate::PairVisitor<'_>) -> Result<()> {
        let db = self.db(ks)?;
        if range.is_empty() {
            return Ok(());
        }
        for pair in db
            .rev_range(self.txn()?, &range.as_slices())
            .map_err(backend_err)?
        {
            let (k, v) = pair.map_err(backend_err)?;
            if !f(k, v)? {
                break;
            }
        }
        Ok(())
    }

    fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_> {
        let db = match self.db(ks) {
            Ok(db) => db,
            Err(e) => return Box::new(std::iter::once(Err(e))),
        };
        if range.is_empty() {
            return Box::new(std::iter::empty());
        }
        let txn = match self.txn() {
            Ok(t) => t,
            Err(e) => return Box::new(std::iter::once(Err(e))),
        };
        let bounds = range.as_slices();
        let limit = opts.limit.unwrap_or(usize::MAX);
        let owned = |r: heed::Result<(&[u8], &[u8])>| {
            r.map(|(k, v)| (k.to_vec(), v.to_vec()))
                .map_err(backend_err)
        };
        let iter: KvIter<'_> = if opts.reverse {
            match db.rev_range(txn, &bounds) {
                Ok(it) => Box::new(it.take(limit).map(owned)),
                Err(e) => Box::new(std::iter::once(Err(backend_err(e)))),
            }
        } else {
            match db.range(txn, &bounds) {
                Ok(it) => Box::new(it.take(limit).map(owned)),
                Err(e) => Box::new(std::iter::once(Err(backend_err(e)))),
            }
        };
        iter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(ks: usize, key: &[u8]) -> Op {
        Op::Put {
            ks: Ks(ks),
            key: key.to_vec(),
            value: Vec::new(),
        }
    }

    fn store(dir: &tempfile::TempDir) -> LmdbStore {
        let opts = KvOptions {
            durable: false,
            lmdb_initial_map_size: 1 << 20,
            ..KvOptions::default()
        };
        LmdbStore::open(dir.path(), &["a"], &opts).unwrap()
    }

    /// A snapshot's transaction is kept once closed and reused by the next
    /// one while no commit lands; a commit closes the kept ones.
    #[test]
    fn read_transactions_are_kept_until_a_commit() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(&dir);
        let g = s.live();
        drop(s.snapshot().unwrap());
        assert_eq!(g.idle.kept().len(), 1);
        let snap = s.snapshot().unwrap();
        assert_eq!(g.idle.kept().len(), 0, "the kept one is reused");
        drop(snap);
        let mut b = WriteBatch::new();
        b.put(Ks(0), b"k".to_vec(), b"v".to_vec());
        s.write(b).unwrap();
        assert_eq!(g.idle.kept().len(), 0);
        assert_eq!(g.gate.readers(), 0);
    }

    /// A compaction retires the old generation once its readers are gone:
    /// the transactions it kept are closed at the swap, not held for good.
    #[test]
    fn a_compaction_closes_the_old_generations_kept_transactions() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(&dir);
        let mut b = WriteBatch::new();
        b.put(Ks(0), b"k".to_vec(), b"v".to_vec());
        s.write(b).unwrap();
        drop(s.snapshot().unwrap());
        let old = s.live();
        assert_eq!(old.gate.readers(), 1, "one transaction kept");
        s.compact().unwrap();
        assert_eq!(old.gate.readers(), 0);
        drop(s.snapshot().unwrap());
        assert_eq!(old.idle.kept().len(), 0, "the old generation keeps none");
        assert_eq!(s.live().idle.kept().len(), 1);
    }

    /// A run ends at another keyspace, another kind of write, or a key not
    /// past the one before it.
    #[test]
    fn put_runs_are_ascending_puts_into_one_keyspace() {
        let ops = [put(0, b"a"), put(0, b"b"), put(1, b"c")];
        assert_eq!(put_run(&ops, Ks(0)), 2);
        let ops = [put(0, b"a"), put(0, b"a"), put(0, b"b")];
        assert_eq!(put_run(&ops, Ks(0)), 1);
        let ops = [put(0, b"b"), put(0, b"a")];
        assert_eq!(put_run(&ops, Ks(0)), 1);
        let delete = Op::Delete {
            ks: Ks(0),
            key: b"c".to_vec(),
        };
        let ops = [put(0, b"a"), put(0, b"b"), delete, put(0, b"d")];
        assert_eq!(put_run(&ops, Ks(0)), 2);
        assert_eq!(put_run(&ops[2..], Ks(0)), 0);
    }
}
