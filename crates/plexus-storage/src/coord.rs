//! Several processes writing one store: a store on a server
//! ([`KvStore::shared`], the PostgreSQL backend), which two Plexus
//! processes — or two servers behind a load balancer — may open at once.
//!
//! A process that owns its store keeps in memory what only it writes: the
//! id counters, the commits an open transaction may still conflict with
//! (`occ.rs`), the names it interned, the live state of maintained
//! indexes. Once several processes write, each of these moves into the
//! store and is read and written under the store's writer lock
//! ([`KvStore::write_serialized`]), so the store's own transactions decide:
//!
//! * **The commit log.** `META` holds the number of the latest commit
//!   (`commit_seq`) and, per commit, its footprint (`commit_log/` + number:
//!   what it wrote, shared and touched). A write transaction reads the
//!   number from its snapshot; at commit, under the writer lock, it is
//!   validated against every logged commit after it — the same rule as
//!   `Occ::validate`, over the commits of every process — then its own
//!   footprint is logged with the next number, in the same store
//!   transaction as its data. Entries older than [`LOG_KEEP`] commits are
//!   trimmed; a transaction that began before the oldest entry kept fails
//!   as a conflict (retry it).
//! * **Ids.** Each process reserves blocks of node, edge and schema ids
//!   from the counters in `META` ([`IdCounter`]); blocks grow as it creates
//!   more, so ids stay unique and mostly dense.
//! * **Names** are interned under the writer lock, the store asked first
//!   (`catalog.rs`); **graphs** likewise.
//! * **Maintained indexes** loaded by one process are loaded again when
//!   another process changed them ([`IndexSync`], `maintain.rs`).

use crate::error::{Result, StorageError};
use crate::keys::META;
use crate::occ::Footprint;
use plexus_kv::{KeyRange, KvStore, Snapshot, WriteBatch};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// The number of the latest commit logged.
const COMMIT_SEQ: &[u8] = b"commit_seq";
/// Commits up to this number may be missing from the log (trimmed).
const LOG_FLOOR: &[u8] = b"commit_log_floor";
/// `commit_log/` + number (big-endian) → footprint.
const LOG_PREFIX: &[u8] = b"commit_log/";
/// Commits kept in the log: a write transaction may span this many
/// commits of other processes before it must be retried.
pub(crate) const LOG_KEEP: u64 = 20_000;
/// How often (in commits) the log is trimmed.
const TRIM_EVERY: u64 = 256;

fn log_key(seq: u64) -> Vec<u8> {
    let mut k = LOG_PREFIX.to_vec();
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// A `META` counter; `missing` when absent.
pub(crate) fn meta_u64(snap: &dyn Snapshot, key: &[u8], missing: u64) -> Result<u64> {
    Ok(match snap.get(META, key)? {
        Some(v) => u64::from_le_bytes(v.as_slice().try_into().map_err(|_| {
            StorageError::Corrupt(format!("META {}", String::from_utf8_lossy(key)))
        })?),
        None => missing,
    })
}

/// The number of the latest commit of a shared store that `snap` sees.
pub(crate) fn commit_seq(snap: &dyn Snapshot) -> Result<u64> {
    meta_u64(snap, COMMIT_SEQ, 0)
}

/// Refuses a commit that began at `start` (the commit number its snapshot
/// saw) when a logged commit after it conflicts with `fp`. `snap` must be
/// the view under the writer lock.
pub(crate) fn validate(
    snap: &dyn Snapshot,
    start: u64,
    fp: &Footprint,
    serializable: bool,
    logged: &[(u64, Footprint)],
) -> Result<()> {
    if start < meta_u64(snap, LOG_FLOOR, 0)? {
        return Err(StorageError::Conflict(format!(
            "more than {LOG_KEEP} commits landed while this transaction was open"
        )));
    }
    for (_, other) in logged.iter().filter(|(s, _)| *s > start) {
        if let Some(why) = fp.conflict_with(other, serializable) {
            return Err(StorageError::Conflict(format!(
                "{why} (in another process)"
            )));
        }
    }
    Ok(())
}

/// The logged commits after `start`, oldest first.
pub(crate) fn logged_since(snap: &dyn Snapshot, start: u64) -> Result<Vec<(u64, Footprint)>> {
    let range = KeyRange {
        start: std::ops::Bound::Excluded(log_key(start)),
        end: std::ops::Bound::Included(log_key(u64::MAX)),
    };
    let mut out = Vec::new();
    let mut bad = None;
    snap.visit(META, &range, &mut |k, v| {
        let seq = k
            .get(LOG_PREFIX.len()..)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_be_bytes);
        match (seq, Footprint::decode(v)) {
            (Some(s), Some(fp)) => out.push((s, fp)),
            _ => bad = Some(StorageError::Corrupt("a commit log entry".into())),
        }
        Ok(bad.is_none())
    })?;
    match bad {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Logs a commit with footprint `fp` in `b`, numbered after the latest
/// (`seq`, as the view under the writer lock sees it), trimming old
/// entries now and then. Returns the new number.
pub(crate) fn log_commit(b: &mut WriteBatch, seq: u64, fp: &Footprint) -> u64 {
    let next = seq + 1;
    b.put(META, log_key(next), fp.encode());
    b.put(META, COMMIT_SEQ, next.to_le_bytes().to_vec());
    if next.is_multiple_of(TRIM_EVERY) && next > LOG_KEEP {
        let floor = next - LOG_KEEP;
        b.delete_range(META, log_key(0), log_key(floor + 1));
        b.put(META, LOG_FLOOR, floor.to_le_bytes().to_vec());
    }
    next
}

/// [`KvStore::write_serialized`] with a `prepare` that fails with this
/// crate's errors, which come back as they were.
pub(crate) fn write_serialized(
    kv: &dyn KvStore,
    prepare: &mut dyn FnMut(&dyn Snapshot) -> Result<WriteBatch>,
) -> Result<()> {
    let mut failure = None;
    let written = kv.write_serialized(&mut |snap| {
        prepare(snap).map_err(|e| {
            let why = e.to_string();
            failure = Some(e);
            plexus_kv::KvError::Aborted(why)
        })
    });
    match (written, failure) {
        (Err(_), Some(e)) => Err(e),
        (written, _) => Ok(written?),
    }
}

/// One id counter (nodes, edges or schema entries): a plain atomic in a
/// store one process owns, blocks reserved from the store's counter when
/// several processes share it.
pub(crate) struct IdCounter {
    key: &'static [u8],
    /// The next id this process gives.
    next: AtomicU64,
    /// Shared store: the block held (`next..end`) and the next block's size.
    block: Option<Mutex<(u64, u64)>>,
}

/// The first block a process reserves, and the largest.
const FIRST_BLOCK: u64 = 64;
const LARGEST_BLOCK: u64 = 1 << 16;

impl IdCounter {
    /// A counter at `next` (as stored under `key`); `shared` for a store
    /// other processes write.
    pub fn new(key: &'static [u8], next: u64, shared: bool) -> IdCounter {
        IdCounter {
            key,
            next: AtomicU64::new(next),
            block: shared.then(|| Mutex::new((0, FIRST_BLOCK))),
        }
    }

    /// A new id.
    pub fn take(&self, kv: &dyn KvStore) -> Result<u64> {
        let Some(block) = &self.block else {
            return Ok(self.next.fetch_add(1, Relaxed));
        };
        let mut size = block.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = self.next.load(Relaxed);
        if next >= size.0 {
            let start = self.reserve(kv, size.1)?;
            next = start;
            size.0 = start + size.1;
            size.1 = (size.1 * 2).min(LARGEST_BLOCK);
        }
        self.next.store(next + 1, Relaxed);
        Ok(next)
    }

    /// Moves the store's counter past a block of `n` ids and returns the
    /// block's first.
    fn reserve(&self, kv: &dyn KvStore, n: u64) -> Result<u64> {
        let key = self.key;
        let mut start = 0;
        let mut overflow = false;
        kv.write_serialized(&mut |snap| {
            start = meta_u64_kv(snap, key)?;
            let mut b = WriteBatch::new();
            match start.checked_add(n) {
                Some(end) => b.put(META, key, end.to_le_bytes().to_vec()),
                None => overflow = true,
            }
            Ok(b)
        })?;
        if overflow {
            return Err(StorageError::Unsupported(
                "the id space is exhausted".into(),
            ));
        }
        Ok(start)
    }

    /// No id this process gives later is below this one.
    pub fn floor(&self) -> u64 {
        self.next.load(Relaxed)
    }

    /// In a store one process owns, the counter is written with each commit.
    pub fn persist(&self, b: &mut WriteBatch) {
        if self.block.is_none() {
            b.put(
                META,
                self.key,
                self.next.load(Relaxed).to_le_bytes().to_vec(),
            );
        }
    }
}

/// `meta_u64` (ids start at 1) where a key-value error is wanted.
fn meta_u64_kv(snap: &dyn Snapshot, key: &[u8]) -> plexus_kv::Result<u64> {
    Ok(match snap.get(META, key)? {
        Some(v) => u64::from_le_bytes(
            v.as_slice()
                .try_into()
                .map_err(|_| plexus_kv::KvError::Corrupt("an id counter".into()))?,
        ),
        None => 1,
    })
}

/// What this process knows of other processes' changes to maintained
/// indexes (a shared store only), so that a live index state it loaded is
/// used only while no other process changed it since.
///
/// `synced`: the index sequence number up to which this process has seen
/// what every process did (the store's number at its last commit, plus
/// its own change). `floor`: the latest number at or before which another
/// process may have changed an index (seen at a commit). A state loaded at
/// `loaded` reflects the store at `at` when `at <= loaded`, or when
/// `floor <= loaded` and `at <= synced`: between `loaded` and `at` only
/// this process changed indexes, and it published those changes into the
/// state itself.
#[derive(Default)]
pub(crate) struct IndexSync {
    synced: AtomicU64,
    floor: AtomicU64,
}

impl IndexSync {
    pub fn new(seq: u64) -> IndexSync {
        IndexSync {
            synced: AtomicU64::new(seq),
            floor: AtomicU64::new(seq),
        }
    }

    /// Whether a state loaded at `loaded` reflects the store at `at`.
    pub fn current(&self, loaded: u64, at: u64) -> bool {
        at <= loaded || (self.floor.load(Relaxed) <= loaded && at <= self.synced.load(Relaxed))
    }

    /// At a commit, under the writer lock: the store's index number is
    /// `stored`. Called before the commit publishes anything.
    pub fn before_commit(&self, stored: u64) {
        if stored > self.synced.load(Relaxed) {
            self.floor.store(stored, Relaxed);
        }
    }

    /// After a commit that left the store's index number at `now`.
    pub fn after_commit(&self, now: u64) {
        self.synced.fetch_max(now, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_current_until_another_process_changes_an_index() {
        let s = IndexSync::new(10);
        assert!(s.current(10, 10));
        // This process commits index changes 11 and 12 into the state.
        s.before_commit(10);
        s.after_commit(11);
        s.before_commit(11);
        s.after_commit(12);
        assert!(s.current(10, 12));
        assert!(!s.current(10, 13), "13 is not known to be ours");
        // Another process committed 13; this one finds it at its next commit.
        s.before_commit(13);
        s.after_commit(14);
        assert!(!s.current(10, 14), "the state loaded at 10 lacks 13");
        assert!(s.current(13, 14), "one loaded at 13 has it, and 14 is ours");
        assert!(s.current(15, 15));
    }

    #[test]
    fn the_log_refuses_what_conflicts_after_the_start() {
        let kv = plexus_kv::open(
            plexus_kv::Backend::Memory,
            std::path::Path::new(""),
            crate::keys::KEYSPACES,
            &plexus_kv::KvOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let fp = |w: &[u64]| Footprint {
            writes: w.iter().copied().collect(),
            ..Default::default()
        };
        let mut seq = 0;
        for w in [1, 2, 3] {
            let mut b = WriteBatch::new();
            seq = log_commit(&mut b, seq, &fp(&[w]));
            kv.write(b).unwrap_or_else(|e| panic!("{e}"));
        }
        let snap = kv.snapshot().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(commit_seq(&*snap).ok(), Some(3));
        let logged = logged_since(&*snap, 1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(logged.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [2, 3]);
        assert!(validate(&*snap, 1, &fp(&[1]), false, &logged).is_ok());
        assert!(validate(&*snap, 1, &fp(&[2]), false, &logged).is_err());
        assert!(validate(&*snap, 2, &fp(&[2]), false, &logged).is_ok());
    }
}
