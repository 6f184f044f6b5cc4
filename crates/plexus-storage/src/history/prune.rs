//! Pruning history, and the change log that makes it incremental.
//!
//! A prune before `b` removes, of each key, every version older than the
//! newest at or before `b`, and that one too when it says absent. Read
//! over the whole history, that costs as much as the history is long,
//! on every prune, although a retention policy prunes every tenth of its
//! window and only keys written since the last prune have anything to give
//! back.
//!
//! So once a graph's change log has started, every stamped commit also
//! writes the keys it versioned, per graph: `g | 01 | 01 | t | seq →
//! (ks, key after g)*`, one entry per 64 KiB of keys. A prune before `b`
//! then visits only the keys of log entries from the last prune up to `b`
//! and deletes those entries. Which keys can hold a removable version? A
//! key's versions at or before the last prune's cutoff were already
//! reduced to one present version; so a key has one to give back only if
//! it was written after that cutoff and at or before `b`, which the log
//! holds. Each such key is visited once, from the log entry of its newest
//! version at or before `b` (entries of its older versions are skipped,
//! without a set of the keys seen).
//!
//! The log starts with the first prune or when a retention policy is set
//! ([`start_log`]): a graph that is never pruned does not pay for it.
//! `g | 01 | 00` holds the stamp after which every commit is logged: the
//! last stamp given when the log started, or a later bulk load's stamp
//! (its versions are written apart from any commit, unlogged). A prune is
//! incremental only when that stamp lies strictly before the current
//! start; the first prunes read the whole history, which also takes the
//! versions an interrupted earlier start left below it (ARCHITECTURE.md,
//! "History").

use super::{
    decode_version, setting_key, split_version, version_key, versions_prefix, write_chunk, START,
};
use crate::error::{Result, StorageError};
use crate::ids::GraphId;
use crate::keys::HISTORY;
use plexus_common::read_u64;
use plexus_kv::{KeyRange, Ks, ScanOptions, Snapshot, WriteBatch};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// The change log lives between `g | 01` (the retention policy) and the
/// first version key (`g | 02 | …`, nodes): keyspace 1, the catalog, is
/// never versioned, so no version key starts `g | 01`. Before the versions,
/// not after them, so that a commit's sorted run of versions into an empty
/// history still lies past the keyspace's last key (the backend then
/// appends it in full pages).
const LOG_SPACE: u8 = 1;
/// `g | 01 | 00`: the stamp after which every commit to `g` is logged.
const LOGGED: u8 = 0;
/// `g | 01 | 01 | t | seq`: the keys the commit stamped `t` versioned.
const LOG: u8 = 1;
/// The bytes of keys one log entry holds, at most (about): a large value
/// takes contiguous pages, which a fragmented store has few of.
const LOG_ENTRY_BYTES: usize = 64 << 10;

pub(super) fn logged_key(g: u32) -> Vec<u8> {
    let mut k = setting_key(g, LOG_SPACE);
    k.push(LOGGED);
    k
}

fn log_key(g: u32, t: u64, seq: u32) -> Vec<u8> {
    let mut k = setting_key(g, LOG_SPACE);
    k.push(LOG);
    k.extend_from_slice(&t.to_be_bytes());
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// The stamp after which every commit to `g` is logged, if one is.
pub(super) fn logged_since(snap: &dyn Snapshot, g: GraphId) -> Result<Option<u64>> {
    Ok(snap
        .get(HISTORY, &logged_key(g.0))?
        .and_then(|v| read_u64(&v, 0)))
}

/// Adds to `batch` the change log of the commit stamped `t`: the
/// versioned keys `keys` (each with its graph's 4 bytes first) of the
/// graphs among `on` that log (see [`start_log`]), grouped by graph.
pub(super) fn log_commit<'k>(
    snap: &dyn Snapshot,
    batch: &mut WriteBatch,
    t: u64,
    on: &BTreeSet<u32>,
    keys: impl Iterator<Item = (Ks, &'k [u8])>,
) -> Result<()> {
    let mut logging = BTreeSet::new();
    for &g in on {
        if logged_since(snap, GraphId(g))?.is_some() {
            logging.insert(g);
        }
    }
    if logging.is_empty() {
        return Ok(());
    }
    // Per graph: the entry being filled.
    let mut open: BTreeMap<u32, Entry> = BTreeMap::new();
    for (ks, key) in keys {
        let Some(g) = plexus_common::read_u32(key, 0).filter(|g| logging.contains(g)) else {
            continue;
        };
        let entry = open.entry(g).or_default();
        if entry.value.len() >= LOG_ENTRY_BYTES {
            let full = std::mem::take(entry);
            entry.seq = full.seq + 1;
            batch.put(HISTORY, log_key(g, t, full.seq), full.value);
        }
        entry.push(ks, &key[4..])?;
    }
    for (g, entry) in open {
        batch.put(HISTORY, log_key(g, t, entry.seq), entry.value);
    }
    Ok(())
}

/// Starts graph `g`'s change log, unless it has one: every commit after
/// the last stamp given logs its keys. The caller holds the commit lock;
/// with several processes writing the store, the mark is made inside its
/// serialized write, so that no commit lands unlogged after the stamp it
/// records.
pub(crate) fn start_log(shared: &crate::storage::Shared, g: GraphId) -> Result<()> {
    let mark = |snap: &dyn Snapshot| -> Result<WriteBatch> {
        let mut batch = WriteBatch::new();
        if logged_since(snap, g)?.is_none() && super::started(snap, g)?.is_some() {
            let since = super::clock(snap)?.to_be_bytes().to_vec();
            batch.put(HISTORY, logged_key(g.0), since);
        }
        Ok(batch)
    };
    if shared.multi {
        return crate::coord::write_serialized(&*shared.kv, &mut |snap| mark(snap));
    }
    let batch = mark(&*shared.kv.snapshot()?)?;
    if !batch.is_empty() {
        shared.kv.write(batch)?;
    }
    Ok(())
}

/// A log entry being written. Each key (after its graph) is written as
/// `ks | shared (u16) | len (u32) | the rest`, `shared` being the bytes it
/// shares with the key before it: a commit's keys come sorted, so
/// neighbours share most of their bytes, which the log then stores once.
#[derive(Default)]
struct Entry {
    value: Vec<u8>,
    last: Vec<u8>,
    seq: u32,
}

impl Entry {
    fn push(&mut self, ks: Ks, key: &[u8]) -> Result<()> {
        let shared = self
            .last
            .iter()
            .zip(key)
            .take(usize::from(u16::MAX))
            .take_while(|(a, b)| a == b)
            .count();
        let rest = &key[shared..];
        let len = u32::try_from(rest.len())
            .map_err(|_| StorageError::Corrupt("a key over 4 GiB".into()))?;
        self.value.push(super::ks_byte(ks));
        // `shared` is at most u16::MAX (the `take` above).
        self.value
            .extend_from_slice(&u16::try_from(shared).unwrap_or(u16::MAX).to_le_bytes());
        self.value.extend_from_slice(&len.to_le_bytes());
        self.value.extend_from_slice(rest);
        self.last.clear();
        self.last.extend_from_slice(key);
        Ok(())
    }
}

/// The keys of one log entry's value (see [`Entry`]), each with its graph.
fn log_keys(g: GraphId, value: &[u8]) -> impl Iterator<Item = Result<(Ks, Vec<u8>)>> + '_ {
    let mut at = 0;
    let mut last: Vec<u8> = Vec::new();
    std::iter::from_fn(move || {
        if at >= value.len() {
            return None;
        }
        let entry = (|| {
            let ks = *value.get(at)?;
            let shared = u16::from_le_bytes(value.get(at + 1..at + 3)?.try_into().ok()?);
            let len = u32::from_le_bytes(value.get(at + 3..at + 7)?.try_into().ok()?);
            let len = usize::try_from(len).ok()?;
            let rest = value.get(at + 7..(at + 7).checked_add(len)?)?;
            last.truncate(usize::from(shared));
            if last.len() < usize::from(shared) {
                return None;
            }
            last.extend_from_slice(rest);
            at += 7 + len;
            let mut key = g.0.to_be_bytes().to_vec();
            key.extend_from_slice(&last);
            Some((Ks(usize::from(ks)), key))
        })();
        match entry {
            Some(e) => Some(Ok(e)),
            None => {
                at = value.len();
                Some(Err(StorageError::Corrupt("history change log".into())))
            }
        }
    })
}

/// Where a pass gives each version key it finds removable.
type Sink<'a> = &'a mut dyn FnMut(Vec<u8>) -> Result<()>;

/// The versions of `g` a prune before `before` removes, each given to
/// `drop` once. Incremental when the change log covers every commit since
/// the current start (see the module); otherwise a pass over the whole
/// history.
pub(super) fn removable(
    snap: &dyn Snapshot,
    g: GraphId,
    before: u64,
    drop: Sink<'_>,
) -> Result<()> {
    let start = super::started(snap, g)?;
    let logged = logged_since(snap, g)?;
    match (start, logged) {
        (Some(start), Some(logged)) if logged < start => from_log(snap, g, before, drop),
        _ => everything(snap, g, before, drop),
    }
}

/// Whether a version at `t` holding `value` goes, where `kept` says that
/// a newer version of its key at or before `before` was met (versions
/// come newest first) and is set when this one is such a version.
fn goes(t: u64, value: &[u8], before: u64, kept: &mut bool) -> Result<bool> {
    if t > before {
        return Ok(false);
    }
    let go = *kept || decode_version(value)?.is_none();
    *kept = true;
    Ok(go)
}

/// Every version of the graph, key by key.
fn everything(snap: &dyn Snapshot, g: GraphId, before: u64, drop: Sink<'_>) -> Result<()> {
    // Past the start, the retention policy, the change log and a load's
    // mark (`g | 02`, exactly: the nodes' versions follow it).
    let mut range = KeyRange::prefix(&g.0.to_be_bytes());
    range.start = Bound::Excluded(setting_key(g.0, super::LOADING));
    let mut current: Option<Vec<u8>> = None;
    let mut kept = false;
    for pair in snap.scan(HISTORY, &range, ScanOptions::default()) {
        let (k, v) = pair?;
        let (_, stem_len, t) = split_version(&k)?;
        if current.as_deref() != Some(&k[..stem_len]) {
            current = Some(k[..stem_len].to_vec());
            kept = false;
        }
        if goes(t, &v, before, &mut kept)? {
            drop(k)?;
        }
    }
    Ok(())
}

/// The keys the change log names up to `before`, each from the entry of
/// its newest version at or before `before`.
fn from_log(snap: &dyn Snapshot, g: GraphId, before: u64, drop: Sink<'_>) -> Result<()> {
    let range = KeyRange {
        start: Bound::Included(log_key(g.0, 0, 0)),
        end: Bound::Excluded(log_end(g, before)),
    };
    for pair in snap.scan(HISTORY, &range, ScanOptions::default()) {
        let (k, v) = pair?;
        let t = read_u64(&k, 6).ok_or_else(|| StorageError::Corrupt("history log key".into()))?;
        for key in log_keys(g, &v) {
            let (ks, key) = key?;
            // From its newest version at or before `before` (newer ones
            // sort first and are never removed): one seek, not a walk
            // past every version since.
            let mut range = KeyRange::prefix(&versions_prefix(ks, &key));
            range.start = Bound::Included(version_key(ks, &key, before));
            let mut kept = false;
            for pair in snap.scan(HISTORY, &range, ScanOptions::default()) {
                let (vk, vv) = pair?;
                let (_, _, vt) = split_version(&vk)?;
                if !kept && vt != t {
                    // That version is not this entry's: its own entry
                    // visits the key.
                    break;
                }
                if goes(vt, &vv, before, &mut kept)? {
                    drop(vk)?;
                }
            }
        }
    }
    Ok(())
}

/// The first log key after every entry stamped `before` or earlier.
fn log_end(g: GraphId, before: u64) -> Vec<u8> {
    match before.checked_add(1) {
        Some(next) => log_key(g.0, next, 0),
        None => {
            let mut k = setting_key(g.0, LOG_SPACE);
            k.push(LOG + 1);
            k
        }
    }
}

/// Removes the versions graph `g` no longer needs to answer reads as of
/// `before` or later (see [`removable`]), and the change log up to
/// `before`. History then starts at `before`. Readers are never blocked:
/// each write is a backend batch of its own, and versions a reader as of
/// `before` or later needs are kept. Returns the versions removed.
pub(crate) fn prune(
    kv: &dyn plexus_kv::KvStore,
    snap: &dyn Snapshot,
    g: GraphId,
    before: u64,
) -> Result<u64> {
    let mut start = WriteBatch::new();
    start.put(
        HISTORY,
        setting_key(g.0, START),
        before.to_be_bytes().to_vec(),
    );
    kv.write(start)?;
    let mut batch = WriteBatch::new();
    let mut removed = 0u64;
    removable(snap, g, before, &mut |k| {
        batch.delete(HISTORY, k);
        removed += 1;
        write_chunk(kv, &mut batch, false)
    })?;
    // Only once every version it names is gone: a prune cut short leaves
    // the log for the next one.
    batch.delete_range(HISTORY, log_key(g.0, 0, 0), log_end(g, before));
    write_chunk(kv, &mut batch, true)?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeleteMode, GraphRead, Props, Storage};
    use plexus_common::Value;
    use proptest::prelude::*;

    /// One change of a commit: a node's value set (`Some`) or the node
    /// deleted with its edges, and perhaps an edge from it to another.
    type Change = (u8, Option<i64>, Option<u8>);

    fn apply(db: &Storage, commit: &[Change]) {
        let mut t = db.write("default").unwrap();
        for &(n, value, link) in commit {
            let key = format!("n{}", n % 6);
            match value {
                Some(v) => {
                    let props: Props = [("v".to_string(), Value::Int(v))].into();
                    let id = t.put_node(&key, &["N"], &props).unwrap();
                    if let Some(other) = link {
                        let dst = t.put_node(&format!("n{}", other % 6), &[], &Props::new());
                        let dst = dst.unwrap();
                        t.create_edge(None, id, dst, "E", &Props::new()).unwrap();
                    }
                }
                None => {
                    if let Some(id) = t.node_id(&key).unwrap() {
                        t.delete_node(id, DeleteMode::Detach).unwrap();
                    }
                }
            }
        }
        t.commit().unwrap();
    }

    fn collect(
        pass: fn(&dyn Snapshot, GraphId, u64, Sink<'_>) -> Result<()>,
        snap: &dyn Snapshot,
        g: GraphId,
        before: u64,
    ) -> BTreeSet<Vec<u8>> {
        let mut out = BTreeSet::new();
        pass(snap, g, before, &mut |k| {
            assert!(out.insert(k), "a version given twice");
            Ok(())
        })
        .unwrap();
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// The change log finds exactly the versions a pass over the whole
        /// history finds, prune after prune; and reads as of every
        /// instant from the cutoff on are what they were before it.
        #[test]
        fn the_log_finds_what_a_full_pass_finds(
            commits in prop::collection::vec(
                prop::collection::vec(
                    (0u8..6, prop::option::weighted(0.8, 0i64..4), prop::option::of(0u8..6)),
                    1..5,
                ),
                2..14,
            ),
            prunes in prop::collection::btree_set(0usize..14, 1..5),
            policy in any::<bool>(),
        ) {
            let db = Storage::in_memory().unwrap();
            apply(&db, &commits[0]);
            db.keep_history("default").unwrap();
            if policy {
                // A policy starts the log at once; its prunes do nothing
                // here (a year, before the start).
                db.set_history_retention("default", Some(365 * 86_400_000_000)).unwrap();
            }
            let g = db.graph_id("default").unwrap();
            let mut stamps = Vec::new();
            let mut seen = Vec::new();
            for (i, commit) in commits.iter().enumerate().skip(1) {
                apply(&db, commit);
                let t = db.system_time().unwrap();
                stamps.push(t);
                let r = db.read("default").unwrap();
                let state: Vec<_> = r.nodes().map(|n| {
                    let n = r.node(n.unwrap()).unwrap().unwrap();
                    (n.key, n.props.get("v").cloned(), r.degree(n.id, crate::Direction::Both, None).unwrap())
                }).collect();
                seen.push((t, state));
                if !prunes.contains(&i) {
                    continue;
                }
                // Before the commit before this one, when there is one.
                let Some(&before) = stamps.len().checked_sub(2).and_then(|k| stamps.get(k)) else {
                    continue;
                };
                let snap = db.shared.kv.snapshot().unwrap();
                let start = crate::history::started(&*snap, g).unwrap().unwrap();
                if before <= start {
                    continue;
                }
                let full = collect(everything, &*snap, g, before);
                let logged = logged_since(&*snap, g).unwrap();
                // Where `removable` reads the log, or (with a policy, whose
                // log starts with history) wherever it could.
                if policy || logged.is_some_and(|l| l < start) {
                    let from_log = collect(from_log, &*snap, g, before);
                    prop_assert_eq!(&full, &from_log);
                }
                drop(snap);
                let removed = db.prune_history("default", before).unwrap();
                prop_assert_eq!(removed, full.len() as u64);
                if policy {
                    let snap = db.shared.kv.snapshot().unwrap();
                    let start = crate::history::started(&*snap, g).unwrap().unwrap();
                    prop_assert!(logged_since(&*snap, g).unwrap().is_some_and(|l| l < start));
                }
                for (t, state) in seen.iter().filter(|(t, _)| *t >= before) {
                    let r = db.read_as_of("default", *t).unwrap();
                    let now: Vec<_> = r.nodes().map(|n| {
                        let n = r.node(n.unwrap()).unwrap().unwrap();
                        (n.key, n.props.get("v").cloned(), r.degree(n.id, crate::Direction::Both, None).unwrap())
                    }).collect();
                    prop_assert_eq!(&now, state);
                }
            }
        }
    }

    #[test]
    fn log_entries_share_prefixes_and_read_back() {
        let keys: [(Ks, &[u8]); 4] = [
            (Ks(2), b"\0\0\0\x03node-a"),
            (Ks(2), b"\0\0\0\x03node-ab"),
            (Ks(2), b"\0\0\0\x03node-b"),
            (Ks(6), b"\0\0\0\x03x"),
        ];
        let mut e = Entry::default();
        for (ks, key) in keys {
            e.push(ks, &key[4..]).unwrap();
        }
        // `node-ab` and `node-b` store only what differs.
        assert_eq!(e.value.len(), 4 * 7 + "node-a".len() + 1 + 1 + 1);
        let back: Vec<_> = log_keys(GraphId(3), &e.value).map(Result::unwrap).collect();
        let want: Vec<_> = keys.iter().map(|(ks, k)| (*ks, k.to_vec())).collect();
        assert_eq!(back, want);
    }

    #[test]
    fn a_log_entry_that_lies_is_refused() {
        let g = GraphId(3);
        let mut long = vec![2u8];
        long.extend_from_slice(&0u16.to_le_bytes());
        long.extend_from_slice(&100u32.to_le_bytes());
        long.extend_from_slice(b"short");
        // Sharing more than the key before it had.
        let mut shared = vec![2u8];
        shared.extend_from_slice(&9u16.to_le_bytes());
        shared.extend_from_slice(&1u32.to_le_bytes());
        shared.push(b'x');
        for value in [long, shared] {
            let keys: Vec<_> = log_keys(g, &value).collect();
            assert_eq!(keys.len(), 1);
            assert!(matches!(keys[0], Err(StorageError::Corrupt(_))));
        }
    }
}
