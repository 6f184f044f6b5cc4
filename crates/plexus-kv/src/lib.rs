//! The ordered key-value layer under Plexus.
//!
//! One trait, [`KvStore`], with named keyspaces, consistent read snapshots,
//! write batches that are atomic across keyspaces, ranged scans with limits,
//! multi-gets and a sorted bulk-append path. It is batch-shaped on purpose so
//! that a remote store can implement it later without chatty round trips.
//!
//! Backends: LMDB through `heed` (the default), `fjall` (an LSM tree, behind
//! the `fjall` feature), PostgreSQL (tables of a schema in a server, behind
//! the `postgres` feature; [`open_postgres`]) and an in-memory map for
//! tests. One conformance suite (`tests/conformance.rs`) runs against all
//! of them.

mod batch;
mod error;
mod fence;
#[cfg(feature = "fjall")]
mod fjall_backend;
mod lmdb;
mod memory;
#[cfg(feature = "postgres")]
mod pg_connect;
#[cfg(feature = "postgres")]
mod postgres;
mod run;

pub use batch::{decode_counter, Op, WriteBatch};
pub use error::{KvError, Result};
pub use fence::FencedKv;
pub use run::{Pairs, Run, Visitor};

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

/// A handle to a keyspace: its position in the list given to [`open`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ks(pub usize);

/// An owned key and value.
pub type KvPair = (Vec<u8>, Vec<u8>);

/// A lazy scan over a snapshot.
pub type KvIter<'a> = Box<dyn Iterator<Item = Result<KvPair>> + 'a>;

/// What [`Snapshot::visit`] hands each pair to: true to go on.
pub type PairVisitor<'f> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'f;

/// What [`Snapshot::visit_ranges`] hands each pair to, with the position
/// of its range: true to go on.
pub type RangeVisitor<'f> = dyn FnMut(usize, &[u8], &[u8]) -> Result<bool> + 'f;

/// A range of keys, each bound inclusive, exclusive or open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    pub start: Bound<Vec<u8>>,
    pub end: Bound<Vec<u8>>,
}

impl KeyRange {
    /// Every key that starts with `prefix`.
    pub fn prefix(prefix: &[u8]) -> KeyRange {
        KeyRange::prefix_of(prefix.to_vec())
    }

    /// [`KeyRange::prefix`] of a prefix the caller gives up (no copy of it).
    pub fn prefix_of(prefix: Vec<u8>) -> KeyRange {
        KeyRange {
            end: match prefix_successor(&prefix) {
                Some(s) => Bound::Excluded(s),
                None => Bound::Unbounded,
            },
            start: Bound::Included(prefix),
        }
    }

    /// Every key in the keyspace.
    pub fn all() -> KeyRange {
        KeyRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
        }
    }

    /// Whether `key` lies in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        let after_start = match &self.start {
            Bound::Included(s) => key >= s.as_slice(),
            Bound::Excluded(s) => key > s.as_slice(),
            Bound::Unbounded => true,
        };
        let before_end = match &self.end {
            Bound::Included(e) => key <= e.as_slice(),
            Bound::Excluded(e) => key < e.as_slice(),
            Bound::Unbounded => true,
        };
        after_start && before_end
    }

    /// The bounds as borrowed slices, the shape backends take.
    pub fn as_slices(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (as_slice(&self.start), as_slice(&self.end))
    }

    /// True when no key can be in the range (for example start after end).
    pub fn is_empty(&self) -> bool {
        match (&self.start, &self.end) {
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s), Bound::Excluded(e))
            | (Bound::Excluded(s), Bound::Included(e))
            | (Bound::Excluded(s), Bound::Excluded(e)) => s >= e,
            _ => false,
        }
    }
}

fn as_slice(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(v) => Bound::Included(v.as_slice()),
        Bound::Excluded(v) => Bound::Excluded(v.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The smallest key greater than every key starting with `prefix`, or `None`
/// when the prefix is all 0xff bytes (then the range runs to the end).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    into_prefix_successor(prefix.to_vec())
}

/// [`prefix_successor`] made in `prefix`'s own buffer (a caller that built
/// the prefix for this spares a copy).
pub fn into_prefix_successor(mut prefix: Vec<u8>) -> Option<Vec<u8>> {
    while let Some(last) = prefix.pop() {
        if last < 0xff {
            prefix.push(last + 1);
            return Some(prefix);
        }
    }
    None
}

/// How to scan: direction and an optional limit on the number of pairs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanOptions {
    pub reverse: bool,
    pub limit: Option<usize>,
}

/// A consistent, read-only view of every keyspace at one moment.
///
/// A snapshot never sees writes committed after it was taken, and never
/// blocks writers.
pub trait Snapshot: Send {
    /// The value under `key`, if any.
    fn get(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Hands `f` the value under `key`, borrowed where the backend can lend
    /// it (LMDB: straight from its pages, nothing copied); false when there
    /// is none. For reads of one field of a large value.
    fn get_with(&self, ks: Ks, key: &[u8], f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        match self.get(ks, key)? {
            Some(v) => f(&v).map(|()| true),
            None => Ok(false),
        }
    }

    /// The values under several keys, in the order asked.
    fn multi_get(&self, ks: Ks, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>> {
        keys.iter().map(|k| self.get(ks, k)).collect()
    }

    /// The pairs whose keys lie in `range`, in key order (or reversed).
    fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_>;

    /// Hands `f` each pair in `range`, in key order, borrowed where the
    /// backend can lend it (LMDB: straight from its pages, nothing copied);
    /// `f` returns false to stop. For passes over many values that keep
    /// little of each.
    fn visit(&self, ks: Ks, range: &KeyRange, f: &mut PairVisitor<'_>) -> Result<()> {
        for pair in self.scan(ks, range, ScanOptions::default()) {
            let (k, v) = pair?;
            if !f(&k, &v)? {
                break;
            }
        }
        Ok(())
    }

    /// Hands `f` the pairs of several ranges: range by range in the order
    /// given, each in key order, with the range's position in `ranges`; `f`
    /// returns false to stop. A remote store answers all of them in one
    /// round trip (the adjacency of a whole frontier, say).
    fn visit_ranges(&self, ks: Ks, ranges: &[KeyRange], f: &mut RangeVisitor<'_>) -> Result<()> {
        visit_ranges_one_by_one(self, ks, ranges, f)
    }

    /// Hands `f` the last pair whose key is at most `key` and at least
    /// `min`, if there is one: one cursor seek (the block holding a key,
    /// when a block's key is its first entry's).
    fn floor(&self, ks: Ks, min: &[u8], key: &[u8], f: &mut PairVisitor<'_>) -> Result<()> {
        floor_by_visit_rev(self, ks, min, key, f)
    }

    /// [`Snapshot::visit`] in reverse key order.
    fn visit_rev(&self, ks: Ks, range: &KeyRange, f: &mut PairVisitor<'_>) -> Result<()> {
        let opts = ScanOptions {
            reverse: true,
            limit: None,
        };
        for pair in self.scan(ks, range, opts) {
            let (k, v) = pair?;
            if !f(&k, &v)? {
                break;
            }
        }
        Ok(())
    }
}

/// [`Snapshot::visit_ranges`] as one [`Snapshot::visit`] per range: the
/// default, and for wrappers that change what a keyspace's pairs are.
pub fn visit_ranges_one_by_one<S: Snapshot + ?Sized>(
    snap: &S,
    ks: Ks,
    ranges: &[KeyRange],
    f: &mut RangeVisitor<'_>,
) -> Result<()> {
    each_range(ranges, f, &mut |r, g| snap.visit(ks, r, g))
}

/// Hands `f` the pairs of each range in turn, as `visit` reads one range
/// (for readers of ranges that are not a [`Snapshot`]).
pub fn each_range(
    ranges: &[KeyRange],
    f: &mut RangeVisitor<'_>,
    visit: &mut dyn FnMut(&KeyRange, &mut PairVisitor<'_>) -> Result<()>,
) -> Result<()> {
    for (i, r) in ranges.iter().enumerate() {
        let mut more = true;
        visit(r, &mut |k, v| {
            more = f(i, k, v)?;
            Ok(more)
        })?;
        if !more {
            break;
        }
    }
    Ok(())
}

/// [`Snapshot::floor`] through [`Snapshot::visit_rev`]: the default, and
/// for wrappers that change what a keyspace's pairs are.
pub fn floor_by_visit_rev<S: Snapshot + ?Sized>(
    snap: &S,
    ks: Ks,
    min: &[u8],
    key: &[u8],
    f: &mut PairVisitor<'_>,
) -> Result<()> {
    let range = KeyRange {
        start: Bound::Included(min.to_vec()),
        end: Bound::Included(key.to_vec()),
    };
    snap.visit_rev(ks, &range, &mut |k, v| {
        f(k, v)?;
        Ok(false)
    })
}

/// Which backend stores the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    Lmdb,
    Fjall,
    Memory,
    /// A PostgreSQL server (or an engine speaking its protocol), opened by
    /// URL with [`open_postgres`].
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Lmdb => "lmdb",
            Backend::Fjall => "fjall",
            Backend::Memory => "memory",
            Backend::Postgres => "postgres",
        }
    }

    pub fn parse(s: &str) -> Option<Backend> {
        match s.to_ascii_lowercase().as_str() {
            "lmdb" => Some(Backend::Lmdb),
            "fjall" => Some(Backend::Fjall),
            "memory" => Some(Backend::Memory),
            "postgres" => Some(Backend::Postgres),
            _ => None,
        }
    }

    /// The backends compiled into this build, default first.
    pub fn available() -> Vec<Backend> {
        let mut v = vec![Backend::Lmdb];
        if cfg!(feature = "fjall") {
            v.push(Backend::Fjall);
        }
        v.push(Backend::Memory);
        if cfg!(feature = "postgres") {
            v.push(Backend::Postgres);
        }
        v
    }
}

/// An ordered key-value store with atomic multi-keyspace batches.
pub trait KvStore: Send + Sync {
    /// A consistent read view of every keyspace.
    fn snapshot(&self) -> Result<Box<dyn Snapshot>>;

    /// Applies every operation of `batch` atomically, in order, or none.
    fn write(&self, batch: WriteBatch) -> Result<()>;

    /// Writes pairs given in ascending key order into `ks` atomically. The
    /// backend uses its fastest sorted path where it has one (LMDB's append
    /// mode when every key is past the keyspace's last key). Keys out of
    /// order are an error and nothing is written.
    fn bulk_append(&self, ks: Ks, pairs: &mut dyn Iterator<Item = KvPair>) -> Result<u64>;

    /// Makes room for a write of about `bytes` (a bulk load, before
    /// [`KvStore::write_sorted`]): a backend with a fixed-size map grows it
    /// now, between transactions, so that the write need not be replayed
    /// (and may free each run once written). The default does nothing.
    fn reserve(&self, _bytes: u64) -> Result<()> {
        Ok(())
    }

    /// Writes sorted runs (pairs in strictly ascending key order, one run
    /// per keyspace) and then `batch`, all atomically. The sorted path lets
    /// a backend append instead of searching; the default applies it as one
    /// ordinary batch. `runs` may block between runs: a backend that can
    /// writes each as it comes, so a caller overlaps preparing the next run
    /// (sorting it) with writing this one. Runs are shared: the caller may
    /// go on reading one while it is written. An item that is an error
    /// stops the write: nothing lands, and that error is returned.
    fn write_sorted(
        &self,
        runs: &mut dyn Iterator<Item = Result<(Ks, Arc<Run>)>>,
        batch: WriteBatch,
    ) -> Result<()> {
        let mut all = WriteBatch::new();
        for item in runs {
            let (ks, run) = item?;
            run.check_sorted()?;
            run.visit(&mut |k, v| -> Result<()> {
                all.put(ks, k.to_vec(), v.to_vec());
                Ok(())
            })?;
        }
        all.ops.extend(batch.ops);
        self.write(all)
    }

    /// Bytes the store occupies on disk (0 in memory).
    fn disk_size(&self) -> Result<u64>;

    /// Bytes each keyspace occupies, in the order the keyspaces were
    /// opened: LMDB's pages (branch, leaf and overflow pages times the page
    /// size), fjall's tables on disk, the keys and values held in memory.
    fn stored_sizes(&self) -> Result<Vec<u64>>;

    /// Which backend this is.
    fn backend(&self) -> Backend;

    /// Round trips to a remote store since it was opened (statements,
    /// prepares, transaction ends): what a remote backend's cost is
    /// counted in. `None` for a local store.
    fn round_trips(&self) -> Option<u64> {
        None
    }

    /// The value of `key` as the store holds it now, outside any snapshot:
    /// one round trip on a server (no transaction begun and ended). For
    /// entries that never change once written, where any committed value
    /// will do (interned names).
    fn get_now(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.snapshot()?.get(ks, key)
    }

    /// Rewrites the store compactly and swaps the copy in, giving back the
    /// space that deletes freed (LMDB reuses freed pages but never shrinks
    /// its file). Snapshots go on reading throughout, the old ones on the
    /// old files; writes go on too, and wait only while the copy takes
    /// what they wrote during it. Only the process that writes
    /// the store may have it open. Backends that reclaim space by
    /// themselves refuse it.
    fn compact(&self) -> Result<Compaction> {
        Err(KvError::Unsupported(format!(
            "the {} backend has no compaction on demand (LMDB stores do)",
            self.backend().name()
        )))
    }

    /// Whether other processes may write this store while this one has it
    /// open (a store on a server). The layers above then keep nothing
    /// written in memory that another process could change unseen, and
    /// commit through [`KvStore::write_serialized`].
    fn shared(&self) -> bool {
        false
    }

    /// Runs `prepare` on a view of the store as it is now and writes the
    /// batch it returns, atomically, with no other write landing in
    /// between — from this process or, in a [shared](KvStore::shared)
    /// store, from any other. `prepare` runs once; when it fails nothing
    /// is written and its error is returned.
    ///
    /// The default serves a store that one process owns, whose caller
    /// already keeps its own writes apart (the storage layer's commit
    /// lock): a snapshot, then a write.
    fn write_serialized(&self, prepare: &mut Prepare<'_>) -> Result<()> {
        let snap = self.snapshot()?;
        let batch = prepare(&*snap)?;
        drop(snap);
        self.write(batch)
    }
}

/// What a [compaction](KvStore::compact) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compaction {
    /// Bytes the store's file took before.
    pub bytes_before: u64,
    /// Bytes its compact copy takes.
    pub bytes_after: u64,
    /// Batches committed while the copy was made, written into it again.
    pub batches_replayed: u64,
    /// How long writers waited: the replay, sync and swap at the end.
    pub writes_held: std::time::Duration,
}

/// What [`KvStore::write_serialized`] runs to build its batch.
pub type Prepare<'a> = dyn FnMut(&dyn Snapshot) -> Result<WriteBatch> + 'a;

/// Options common to every backend.
#[derive(Debug, Clone)]
pub struct KvOptions {
    /// Sync every write to disk before it is acknowledged (the default).
    /// When false, a process crash still loses nothing acknowledged, but an
    /// operating-system crash or power loss may lose the latest commits; on
    /// LMDB (`MDB_NOSYNC`) it may also damage the file, as the system may
    /// write pages out of order when nothing syncs them. fjall's journal
    /// recovers to the last commit it holds whole.
    pub durable: bool,
    /// LMDB's first map size. The map grows by itself when full, so this
    /// only matters for tests of that growth.
    pub lmdb_initial_map_size: usize,
    /// Open an existing store for reading only, beside a process that may
    /// be writing it (LMDB only; the store must exist). Writes fail with
    /// [`KvError::ReadOnly`].
    pub read_only: bool,
}

impl Default for KvOptions {
    fn default() -> Self {
        KvOptions {
            durable: true,
            lmdb_initial_map_size: lmdb::DEFAULT_MAP_SIZE,
            read_only: false,
        }
    }
}

/// Opens (creating when absent) a store with the given keyspaces at `path`.
/// `path` is ignored by the memory backend.
pub fn open(
    backend: Backend,
    path: &Path,
    keyspaces: &[&str],
    opts: &KvOptions,
) -> Result<Arc<dyn KvStore>> {
    Ok(match backend {
        Backend::Lmdb => Arc::new(lmdb::LmdbStore::open(path, keyspaces, opts)?),
        #[cfg(feature = "fjall")]
        Backend::Fjall if opts.read_only => {
            return Err(KvError::Unsupported(
                "a fjall database can be open in one process only; \
                 read-only access beside a writing process needs the LMDB backend"
                    .into(),
            ))
        }
        #[cfg(feature = "fjall")]
        Backend::Fjall => Arc::new(fjall_backend::FjallStore::open(path, keyspaces, opts)?),
        #[cfg(not(feature = "fjall"))]
        Backend::Fjall => {
            return Err(KvError::Unsupported(
                "this build of Plexus has no fjall backend (build with the `fjall` feature)".into(),
            ))
        }
        Backend::Memory => Arc::new(memory::MemoryStore::new(keyspaces.len())),
        Backend::Postgres => {
            return Err(KvError::Unsupported(
                "a postgres store is opened by its URL (open_postgres), not by a path".into(),
            ))
        }
    })
}

/// Opens (creating where absent) a store in the PostgreSQL server at `url`
/// (`postgres://user@host:port/database`, or `host=… dbname=…`): a table
/// per keyspace in the schema `schema` (lower-case letters, digits, `_`),
/// so that one database holds many stores.
#[cfg(feature = "postgres")]
pub fn open_postgres(
    url: &str,
    schema: &str,
    keyspaces: &[&str],
    opts: &KvOptions,
) -> Result<Arc<dyn KvStore>> {
    Ok(Arc::new(postgres::PgStore::open(
        url, schema, keyspaces, opts,
    )?))
}

/// Removes a store made by [`open_postgres`]: its schema and every table in
/// it.
#[cfg(feature = "postgres")]
pub fn destroy_postgres(url: &str, schema: &str) -> Result<()> {
    postgres::PgStore::open(url, schema, &[], &KvOptions::default())?.destroy()
}

/// Checks that every pair of an iterator comes in strictly ascending key
/// order; backends use it on the bulk path.
pub(crate) struct SortedCheck<'a> {
    inner: &'a mut dyn Iterator<Item = KvPair>,
    last: Option<Vec<u8>>,
    pub(crate) out_of_order: bool,
}

impl<'a> SortedCheck<'a> {
    pub(crate) fn new(inner: &'a mut dyn Iterator<Item = KvPair>) -> Self {
        SortedCheck {
            inner,
            last: None,
            out_of_order: false,
        }
    }
}

impl Iterator for SortedCheck<'_> {
    type Item = KvPair;
    fn next(&mut self) -> Option<KvPair> {
        let (k, v) = self.inner.next()?;
        if self.last.as_deref().is_some_and(|l| l >= k.as_slice()) {
            self.out_of_order = true;
            return None;
        }
        self.last = Some(k.clone());
        Some((k, v))
    }
}
