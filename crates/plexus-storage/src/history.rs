//! System-time history: every committed change of a graph with history on,
//! kept as a version stamped with its commit's system time, so that the
//! graph can be read as it was at any earlier instant (DESIGN §6).
//!
//! **Written by the commit.** The commit leader, under the commit lock,
//! turns the logical writes of a batch (after list merges, before the
//! packed keyspaces are folded into blocks) into versions in the `history`
//! keyspace, in the same backend write: the current graph and its history
//! cannot disagree. The system time is a clock in microseconds that never
//! goes back (`max(now, last + 1)`, persisted with each stamped write).
//! Transactions written by one group commit share a stamp: they became
//! visible together.
//!
//! **Layout.** `g | ks | escaped(key after g) | 00 00 | !t → tag | value`
//! for the node and edge records, the id maps, label members, relationship
//! adjacency (one entry per edge and direction, in the adjacency's delta
//! form) and the counters. The escaping (`00` → `00 FF`, then the `00 00`
//! terminator) keeps the versions of one key together and in key order,
//! whatever the key's length; `!t` (the stamp inverted) puts the newest
//! version first. The tag is [`ABSENT`] or [`PRESENT`] followed by the
//! value. `g | 00` holds the instant history starts.
//!
//! **Reads as of `t`** go through [`AsOf`], a snapshot that answers for the
//! versioned keyspaces from the history: a point read is one seek to the
//! first version at or before `t` (O(log n), whatever the history's length
//! and the commits' sizes); a scan walks the versions in the range and
//! keeps the first at or before `t` of each key. Every reader of storage
//! (and so the algorithms and Cypher) works unchanged on it. Indexes are
//! not versioned: an as-of view has none, and its plans scan labels.

use crate::error::{Result, StorageError};
use crate::ids::{EdgeId, GraphId, NodeId};
use crate::keys::{
    edge_key, ADJ, DIR_IN, DIR_OUT, EDGES, EDGE_KEYS, HISTORY, INDEX_DATA, LABELS, META, NODES, NODE_KEYS,
    PROP_INDEX, STATS,
};
use crate::record::EdgeRecord;
use plexus_common::read_u64;
use plexus_kv::{
    decode_counter, KeyRange, Ks, KvIter, KvPair, Op, ScanOptions, Snapshot, WriteBatch,
};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// The keyspaces whose writes are versioned.
pub(crate) const VERSIONED: [Ks; 7] = [NODES, NODE_KEYS, EDGES, EDGE_KEYS, ADJ, LABELS, STATS];

/// The tag of a version that says the key held nothing.
const ABSENT: u8 = 0;
/// The tag of a version that holds a value (after the tag).
const PRESENT: u8 = 1;
/// `g | START`: the instant (µs) history starts, big-endian.
const START: u8 = 0;
/// The persisted system clock: the last stamp given, big-endian µs.
const META_CLOCK: &[u8] = b"system_clock";

/// Microseconds since the Unix epoch, by the wall clock.
fn wall_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The next system time, after every stamp given before, written to
/// `batch` so that it survives a restart.
fn tick(snap: &dyn Snapshot, batch: &mut WriteBatch) -> Result<u64> {
    let last = snap
        .get(META, META_CLOCK)?
        .and_then(|v| read_u64(&v, 0))
        .unwrap_or(0);
    let t = wall_micros().max(last.saturating_add(1));
    batch.put(META, META_CLOCK, t.to_be_bytes().to_vec());
    Ok(t)
}

/// The last system time given, or 0.
pub(crate) fn clock(snap: &dyn Snapshot) -> Result<u64> {
    Ok(snap
        .get(META, META_CLOCK)?
        .and_then(|v| read_u64(&v, 0))
        .unwrap_or(0))
}

fn start_key(g: u32) -> Vec<u8> {
    let mut k = g.to_be_bytes().to_vec();
    k.push(START);
    k
}

/// The instant history of graph `g` starts at, when it is kept.
pub(crate) fn started(snap: &dyn Snapshot, g: GraphId) -> Result<Option<u64>> {
    Ok(snap
        .get(HISTORY, &start_key(g.0))?
        .and_then(|v| read_u64(&v, 0)))
}

/// Appends `bytes` escaped: `00` becomes `00 FF`, so that `00 00` can end
/// a key and shorter keys sort before their extensions.
fn escape(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
}

/// `g | ks | escaped(key after g)`: the prefix every version of `key`
/// (and of every key it is a prefix of) starts with.
fn stem(ks: Ks, key: &[u8]) -> Vec<u8> {
    let (g, rest) = key.split_at(key.len().min(4));
    let mut out = Vec::with_capacity(key.len() + 16);
    out.extend_from_slice(g);
    out.push(ks_byte(ks));
    escape(&mut out, rest);
    out
}

fn ks_byte(ks: Ks) -> u8 {
    // Keyspace numbers are small constants (`keys.rs`); 0 is `META`, never
    // versioned, so `g | 00` is free for the start.
    u8::try_from(ks.0).unwrap_or(u8::MAX)
}

/// The key of the version of `key` (in `ks`) written at `t`.
fn version_key(ks: Ks, key: &[u8], t: u64) -> Vec<u8> {
    let mut k = stem(ks, key);
    k.extend_from_slice(&[0, 0]);
    k.extend_from_slice(&(!t).to_be_bytes());
    k
}

fn version_value(value: Option<&[u8]>) -> Vec<u8> {
    match value {
        None => vec![ABSENT],
        Some(v) => {
            let mut out = Vec::with_capacity(v.len() + 1);
            out.push(PRESENT);
            out.extend_from_slice(v);
            out
        }
    }
}

/// A version's key split into the stored key (graph and unescaped rest),
/// the length of its stem with the terminator, and its stamp.
fn split_version(k: &[u8]) -> Result<(Vec<u8>, usize, u64)> {
    let bad = || StorageError::Corrupt("history key".into());
    if k.len() < 4 + 1 + 2 + 8 {
        return Err(bad());
    }
    let mut key = k[..4].to_vec();
    let mut i = 5;
    loop {
        match (k.get(i), k.get(i + 1)) {
            (Some(0), Some(0)) => break,
            (Some(0), Some(0xFF)) => {
                key.push(0);
                i += 2;
            }
            (Some(&b), _) => {
                key.push(b);
                i += 1;
            }
            (None, _) => return Err(bad()),
        }
    }
    let t = read_u64(k, i + 2).ok_or_else(bad)?;
    Ok((key, i + 2, !t))
}

fn decode_version(v: &[u8]) -> Result<Option<&[u8]>> {
    match v.split_first() {
        Some((&ABSENT, _)) => Ok(None),
        Some((&PRESENT, rest)) => Ok(Some(rest)),
        _ => Err(StorageError::Corrupt("history value".into())),
    }
}

/// The graph ids a batch writes in versioned keyspaces.
fn graphs_written(batch: &WriteBatch) -> BTreeSet<u32> {
    batch
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::Put { ks, key, .. } | Op::Delete { ks, key } | Op::Add { ks, key, .. }
                if VERSIONED.contains(ks) =>
            {
                plexus_common::read_u32(key, 0)
            }
            _ => None,
        })
        .collect()
}

/// Adds to `batch` the versions of what it writes in graphs with history
/// on, stamped with a new system time. `snap` is the state the batch lands
/// on (under the commit lock); the batch holds logical writes, one key per
/// entry (before `settle`). Returns the stamp, when there was something to
/// version.
pub(crate) fn record(snap: &dyn Snapshot, batch: &mut WriteBatch) -> Result<Option<u64>> {
    let mut on = BTreeSet::new();
    for g in graphs_written(batch) {
        if started(snap, GraphId(g))?.is_some() {
            on.insert(g);
        }
    }
    if on.is_empty() {
        return Ok(None);
    }
    let versions = changes(snap, batch, &on)?;
    let t = tick(snap, batch)?;
    for ((ks, key), value) in versions {
        batch.put(HISTORY, version_key(ks, &key, t), version_value(value.as_deref()));
    }
    Ok(Some(t))
}

type Changes = BTreeMap<(Ks, Vec<u8>), Option<Vec<u8>>>;

/// The final value of each versioned key `batch` writes in the graphs
/// `on`: records and id maps as written, counters resolved against `snap`,
/// and adjacency derived from the edges created and deleted.
fn changes(snap: &dyn Snapshot, batch: &WriteBatch, on: &BTreeSet<u32>) -> Result<Changes> {
    let mut out = Changes::new();
    let mut counters: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
    let in_scope = |ks: &Ks, key: &[u8]| {
        VERSIONED.contains(ks) && plexus_common::read_u32(key, 0).is_some_and(|g| on.contains(&g))
    };
    for op in &batch.ops {
        match op {
            Op::Put { ks, key, value } if in_scope(ks, key) && *ks != ADJ => {
                if *ks == EDGES {
                    edge_adjacency(snap, key, Some(value), &mut out)?;
                }
                out.insert((*ks, key.clone()), Some(value.clone()));
            }
            Op::Delete { ks, key } if in_scope(ks, key) && *ks != ADJ => {
                if *ks == EDGES {
                    edge_adjacency(snap, key, None, &mut out)?;
                }
                out.insert((*ks, key.clone()), None);
            }
            Op::Add { ks, key, delta } if in_scope(ks, key) => {
                let base = match counters.get(key) {
                    Some(v) => *v,
                    None => snap.get(*ks, key)?.map_or(0, |v| decode_counter(&v)),
                };
                let now = base.saturating_add(*delta);
                counters.insert(key.clone(), now);
                let value = (now != 0).then(|| now.to_le_bytes().to_vec());
                out.insert((*ks, key.clone()), value);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The adjacency versions of an edge write: entries in both directions
/// when the edge is created, their removal when it is deleted. An edge's
/// endpoints and type never change, so an update leaves them alone.
fn edge_adjacency(
    snap: &dyn Snapshot,
    key: &[u8],
    new: Option<&[u8]>,
    out: &mut Changes,
) -> Result<()> {
    let (Some(g), Some(id)) = (plexus_common::read_u32(key, 0), read_u64(key, 4)) else {
        return Err(StorageError::Corrupt("edge key".into()));
    };
    let (g, id) = (GraphId(g), EdgeId(id));
    let old = stored_edge(snap, g, id)?;
    let (record, present) = match (old, new) {
        (None, Some(v)) => (EdgeRecord::decode(v)?, true),
        (Some(r), None) => (r, false),
        _ => return Ok(()),
    };
    for (key, _) in adjacency_keys(g, id, &record) {
        out.insert((ADJ, key), present.then(Vec::new));
    }
    Ok(())
}

/// The adjacency delta keys of an edge, both directions.
fn adjacency_keys(g: GraphId, id: EdgeId, r: &EdgeRecord) -> [(Vec<u8>, ()); 2] {
    let entry = |other: NodeId| crate::adjacency::Entry {
        rel_type: r.rel_type,
        node: other.0,
        edge: id.0,
    };
    [
        (crate::adjacency::delta_key(g, r.src, DIR_OUT, entry(r.dst)), ()),
        (crate::adjacency::delta_key(g, r.dst, DIR_IN, entry(r.src)), ()),
    ]
}

/// An edge's committed record, read from its block.
fn stored_edge(snap: &dyn Snapshot, g: GraphId, id: EdgeId) -> Result<Option<EdgeRecord>> {
    let block = crate::edge_blocks::block_key(g, id);
    let range = KeyRange {
        start: Bound::Included(block.clone()),
        end: Bound::Included(block),
    };
    let mut record = Vec::new();
    let mut found = Ok(false);
    snap.visit(EDGES, &range, &mut |_, v| {
        found = crate::edge_blocks::find(v, id, &mut record);
        Ok(false)
    })?;
    if found? {
        Ok(Some(EdgeRecord::decode(&record)?))
    } else {
        Ok(None)
    }
}

/// Writes, at a new stamp, a version of every versioned entry graph `g`
/// holds now, then marks history on from that stamp. `snap` (unpacked)
/// and `raw` are the same state; the caller holds the commit lock, so no
/// commit lands between. Returns the stamp.
pub(crate) fn baseline(
    kv: &dyn plexus_kv::KvStore,
    snap: &dyn Snapshot,
    raw: &dyn Snapshot,
    g: GraphId,
) -> Result<u64> {
    let mut batch = WriteBatch::new();
    let t = tick(raw, &mut batch)?;
    record_all(kv, (snap, raw), g, (t, t), batch)?;
    Ok(t)
}

/// After a bulk load into graph `g` (empty before it, under the commit
/// lock): when `g` keeps history, a version of everything it holds now.
pub(crate) fn record_load(kv: &dyn plexus_kv::KvStore, g: GraphId) -> Result<()> {
    let raw = kv.snapshot()?;
    let Some(start) = started(&*raw, g)? else {
        return Ok(());
    };
    let mut batch = WriteBatch::new();
    let t = tick(&*raw, &mut batch)?;
    let unpacked = crate::packed::Unpacked(kv.snapshot()?);
    record_all(kv, (&unpacked, &*raw), g, (t, start), batch)
}

/// Writes, stamped `t`, a version of every versioned entry of graph `g`
/// (`snap` unpacked, `raw` the same state), then `start` as `g`'s start.
fn record_all(
    kv: &dyn plexus_kv::KvStore,
    (snap, raw): (&dyn Snapshot, &dyn Snapshot),
    g: GraphId,
    (t, start): (u64, u64),
    mut batch: WriteBatch,
) -> Result<()> {
    const CHUNK: usize = 50_000;
    let prefix = g.0.to_be_bytes();
    let flush = |batch: &mut WriteBatch, force: bool| -> Result<()> {
        if force || batch.len() >= CHUNK {
            kv.write(std::mem::take(batch))?;
        }
        Ok(())
    };
    for ks in [NODES, NODE_KEYS, EDGE_KEYS, LABELS, STATS] {
        for pair in snap.scan(ks, &KeyRange::prefix(&prefix), ScanOptions::default()) {
            let (k, v) = pair?;
            batch.put(HISTORY, version_key(ks, &k, t), version_value(Some(&v)));
            flush(&mut batch, false)?;
        }
    }
    let mut failed = Ok(());
    raw.visit(EDGES, &KeyRange::prefix(&prefix), &mut |k, v| {
        failed = crate::edge_blocks::each(k, v, &mut |id, rec| {
            let r = EdgeRecord::decode(rec)?;
            batch.put(HISTORY, version_key(EDGES, &edge_key(g, id), t), version_value(Some(rec)));
            for (key, ()) in adjacency_keys(g, id, &r) {
                batch.put(HISTORY, version_key(ADJ, &key, t), version_value(Some(&[])));
            }
            flush(&mut batch, false)
        });
        Ok(failed.is_ok())
    })?;
    failed?;
    batch.put(HISTORY, start_key(g.0), start.to_be_bytes().to_vec());
    flush(&mut batch, true)
}

/// Deletes the whole history of graph `g` (history off).
pub(crate) fn clear(batch: &mut WriteBatch, g: GraphId) {
    let start = g.0.to_be_bytes().to_vec();
    let end = match g.0.checked_add(1) {
        Some(n) => n.to_be_bytes().to_vec(),
        None => vec![0xFF; 5],
    };
    batch.delete_range(HISTORY, start, end);
}

/// Removes the versions graph `g` no longer needs to answer reads as of
/// `before` or later: of each key, every version older than the newest at
/// or before `before`, and that one too when it says the key held nothing.
/// History then starts at `before`. Readers are never blocked: each write
/// is a backend batch of its own, and versions a reader as of `before` or
/// later needs are kept. Returns the versions removed.
pub(crate) fn prune(
    kv: &dyn plexus_kv::KvStore,
    snap: &dyn Snapshot,
    g: GraphId,
    before: u64,
) -> Result<u64> {
    const CHUNK: usize = 50_000;
    let mut start = WriteBatch::new();
    start.put(HISTORY, start_key(g.0), before.to_be_bytes().to_vec());
    kv.write(start)?;
    let mut batch = WriteBatch::new();
    let mut removed = 0u64;
    let mut range = KeyRange::prefix(&g.0.to_be_bytes());
    range.start = Bound::Excluded(start_key(g.0));
    let mut current: Option<Vec<u8>> = None;
    // Whether the current key's version at or before `before` was seen.
    let mut kept = false;
    for pair in snap.scan(HISTORY, &range, ScanOptions::default()) {
        let (k, v) = pair?;
        let (_, stem_len, t) = split_version(&k)?;
        if current.as_deref() != Some(&k[..stem_len]) {
            current = Some(k[..stem_len].to_vec());
            kept = false;
        }
        if t > before {
            continue;
        }
        let drop = kept || decode_version(&v)?.is_none();
        kept = true;
        if drop {
            batch.delete(HISTORY, k);
            removed += 1;
            if batch.len() >= CHUNK {
                kv.write(std::mem::take(&mut batch))?;
            }
        }
    }
    if !batch.is_empty() {
        kv.write(batch)?;
    }
    Ok(removed)
}

/// One version of an entry: its stamp and value (`None`: absent).
pub(crate) type Version = (u64, Option<Vec<u8>>);

/// Every version of `key` (in `ks`), newest first.
pub(crate) fn versions(snap: &dyn Snapshot, ks: Ks, key: &[u8]) -> Result<Vec<Version>> {
    let mut stem = stem(ks, key);
    stem.extend_from_slice(&[0, 0]);
    let mut out = Vec::new();
    for pair in snap.scan(HISTORY, &KeyRange::prefix(&stem), ScanOptions::default()) {
        let (k, v) = pair?;
        let (_, _, t) = split_version(&k)?;
        out.push((t, decode_version(&v)?.map(<[u8]>::to_vec)));
    }
    Ok(out)
}

/// A snapshot that reads graph `g` as it was at system time `t`: the
/// versioned keyspaces from the history, indexes empty, the rest (names,
/// manifest) as `inner` holds them.
pub(crate) struct AsOf {
    pub inner: Box<dyn Snapshot>,
    pub g: GraphId,
    pub t: u64,
}

impl AsOf {
    /// The history range holding the versions of the keys in `range`.
    fn history_range(&self, ks: Ks, range: &KeyRange) -> KeyRange {
        let g = self.g.0.to_be_bytes();
        let low = {
            let mut k = g.to_vec();
            k.push(ks_byte(ks));
            k
        };
        let high = {
            let mut k = g.to_vec();
            k.push(ks_byte(ks).saturating_add(1));
            k
        };
        // Where a bound's key lies relative to the graph's keys.
        let place = |key: &[u8]| -> std::cmp::Ordering {
            let head = &key[..key.len().min(4)];
            if head.len() == 4 && head == g {
                std::cmp::Ordering::Equal
            } else {
                head.cmp(&g[..])
            }
        };
        let after = |key: &[u8]| {
            let mut k = stem(ks, key);
            k.extend_from_slice(&[0, 1]);
            k
        };
        use std::cmp::Ordering::*;
        let start = match &range.start {
            Bound::Unbounded => Bound::Included(low.clone()),
            Bound::Included(k) | Bound::Excluded(k) if place(k) == Less => {
                Bound::Included(low.clone())
            }
            Bound::Included(k) | Bound::Excluded(k) if place(k) == Greater => {
                Bound::Included(high.clone())
            }
            Bound::Included(k) => Bound::Included(stem(ks, k)),
            Bound::Excluded(k) => Bound::Included(after(k)),
        };
        let end = match &range.end {
            Bound::Unbounded => Bound::Excluded(high),
            Bound::Included(k) | Bound::Excluded(k) if place(k) == Greater => Bound::Excluded(high),
            Bound::Included(k) | Bound::Excluded(k) if place(k) == Less => Bound::Excluded(low),
            Bound::Excluded(k) => Bound::Excluded(stem(ks, k)),
            Bound::Included(k) => Bound::Excluded(after(k)),
        };
        KeyRange { start, end }
    }

    fn as_of_scan(&self, ks: Ks, range: &KeyRange) -> KvIter<'_> {
        let inner = self
            .inner
            .scan(HISTORY, &self.history_range(ks, range), ScanOptions::default());
        Box::new(Latest {
            inner,
            t: self.t,
            current: None,
            decided: false,
        })
    }
}

/// The first version at or before `t` of each key, from the versions in
/// key order (newest first within a key); keys absent then are skipped.
struct Latest<'a> {
    inner: KvIter<'a>,
    t: u64,
    /// The stem of the key being walked.
    current: Option<Vec<u8>>,
    /// Whether its version as of `t` was found.
    decided: bool,
}

impl Iterator for Latest<'_> {
    type Item = plexus_kv::Result<KvPair>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (k, v) = match self.inner.next()? {
                Ok(pair) => pair,
                Err(e) => return Some(Err(e)),
            };
            let (key, stem_len, t) = match split_version(&k) {
                Ok(x) => x,
                Err(e) => return Some(Err(kv_err(e))),
            };
            if self.current.as_deref() != Some(&k[..stem_len]) {
                self.current = Some(k[..stem_len].to_vec());
                self.decided = false;
            }
            if self.decided || t > self.t {
                continue;
            }
            self.decided = true;
            match decode_version(&v) {
                Ok(Some(value)) => return Some(Ok((key, value.to_vec()))),
                Ok(None) => continue,
                Err(e) => return Some(Err(kv_err(e))),
            }
        }
    }
}

fn kv_err(e: StorageError) -> plexus_kv::KvError {
    match e {
        StorageError::Kv(e) => e,
        other => plexus_kv::KvError::Corrupt(other.to_string()),
    }
}

impl Snapshot for AsOf {
    fn get(&self, ks: Ks, key: &[u8]) -> plexus_kv::Result<Option<Vec<u8>>> {
        if ks == PROP_INDEX || ks == INDEX_DATA {
            return Ok(None);
        }
        if !VERSIONED.contains(&ks) {
            return self.inner.get(ks, key);
        }
        let mut stem = stem(ks, key);
        stem.extend_from_slice(&[0, 0]);
        let mut start = stem.clone();
        start.extend_from_slice(&(!self.t).to_be_bytes());
        let range = KeyRange {
            start: Bound::Included(start),
            end: KeyRange::prefix(&stem).end,
        };
        let opts = ScanOptions {
            limit: Some(1),
            ..Default::default()
        };
        match self.inner.scan(HISTORY, &range, opts).next() {
            None => Ok(None),
            Some(pair) => {
                let (_, v) = pair?;
                Ok(decode_version(&v).map_err(kv_err)?.map(<[u8]>::to_vec))
            }
        }
    }

    fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_> {
        if ks == PROP_INDEX || ks == INDEX_DATA {
            return Box::new(std::iter::empty());
        }
        if !VERSIONED.contains(&ks) {
            return self.inner.scan(ks, range, opts);
        }
        let limit = opts.limit.unwrap_or(usize::MAX);
        if opts.reverse {
            // Backwards scans as of an instant are rare: gathered forwards.
            let all: Vec<_> = self.as_of_scan(ks, range).collect();
            return Box::new(all.into_iter().rev().take(limit));
        }
        Box::new(self.as_of_scan(ks, range).take(limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_by_key_then_newest_first() {
        let a = version_key(NODES, &[0, 0, 0, 1, 0, 5], 10);
        let a_older = version_key(NODES, &[0, 0, 0, 1, 0, 5], 3);
        let longer = version_key(NODES, &[0, 0, 0, 1, 0, 5, 0], 1);
        let next = version_key(NODES, &[0, 0, 0, 1, 0, 6], 1);
        assert!(a < a_older, "the newer version first");
        assert!(a_older < longer, "a key before its extensions");
        assert!(longer < next);
        let (key, _, t) = split_version(&longer).unwrap();
        assert_eq!((key, t), (vec![0, 0, 0, 1, 0, 5, 0], 1));
    }

    struct Empty;
    impl Snapshot for Empty {
        fn get(&self, _: Ks, _: &[u8]) -> plexus_kv::Result<Option<Vec<u8>>> {
            Ok(None)
        }
        fn scan(&self, _: Ks, _: &KeyRange, _: ScanOptions) -> KvIter<'_> {
            Box::new(std::iter::empty())
        }
    }

    #[test]
    fn ranges_map_to_the_versions_of_their_keys() {
        let as_of = AsOf {
            inner: Box::new(Empty),
            g: GraphId(1),
            t: 5,
        };
        let r = as_of.history_range(NODES, &KeyRange::prefix(&[0, 0, 0, 1]));
        assert!(r.contains(&version_key(NODES, &[0, 0, 0, 1, 7], 4)));
        assert!(!r.contains(&version_key(NODES, &[0, 0, 0, 2, 7], 4)));
        assert!(!r.contains(&version_key(LABELS, &[0, 0, 0, 1, 7], 4)));
        let upto = KeyRange {
            start: Bound::Excluded(vec![0, 0, 0, 1, 3]),
            end: Bound::Included(vec![0, 0, 0, 1, 7]),
        };
        let r = as_of.history_range(NODES, &upto);
        assert!(!r.contains(&version_key(NODES, &[0, 0, 0, 1, 3], 4)));
        assert!(r.contains(&version_key(NODES, &[0, 0, 0, 1, 3, 0], 4)));
        assert!(r.contains(&version_key(NODES, &[0, 0, 0, 1, 7], 4)));
        assert!(!r.contains(&version_key(NODES, &[0, 0, 0, 1, 7, 0], 4)));
    }
}

impl crate::Storage {
    /// Keeps the history of `graph` from now on: every later commit's
    /// changes are kept as versions, so that the graph can be read as it
    /// was at any instant since ([`crate::Storage::read_as_of`]). What the
    /// graph holds now is written as the first version of each entry, under
    /// the commit lock (writers wait while it is written). Returns the
    /// instant history starts (µs since the epoch); a graph that keeps
    /// history already keeps its start.
    pub fn keep_history(&self, graph: &str) -> Result<u64> {
        self.writable()?;
        if self.shared.multi {
            return Err(StorageError::Unsupported(
                "history on a store that several processes write is not supported yet".into(),
            ));
        }
        let g = self.graph_id(graph)?;
        let _c = self
            .shared
            .commit_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let raw = self.shared.kv.snapshot()?;
        if let Some(start) = started(&*raw, g)? {
            return Ok(start);
        }
        // Stale versions of an earlier, interrupted start lie before the
        // new start, where no read reaches.
        let unpacked = crate::packed::Unpacked(self.shared.kv.snapshot()?);
        let t = baseline(&*self.shared.kv, &unpacked, &*raw, g)?;
        self.shared
            .history_kept
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(t)
    }

    /// Stops keeping the history of `graph` and deletes what was kept.
    pub fn drop_history(&self, graph: &str) -> Result<()> {
        self.writable()?;
        let g = self.graph_id(graph)?;
        let _c = self
            .shared
            .commit_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut batch = WriteBatch::new();
        clear(&mut batch, g);
        Ok(self.shared.kv.write(batch)?)
    }

    /// The instant (µs since the epoch) from which `graph`'s history is
    /// kept, or `None` when it keeps none.
    pub fn history_start(&self, graph: &str) -> Result<Option<u64>> {
        let g = self.graph_id(graph)?;
        started(&*self.shared.kv.snapshot()?, g)
    }

    /// The system time of the latest commit that kept history (µs since
    /// the epoch; 0 before any): reading as of it reads the current graph.
    pub fn system_time(&self) -> Result<u64> {
        clock(&*self.shared.kv.snapshot()?)
    }

    /// A read-only transaction that sees `graph` as it was at system time
    /// `at` (µs since the epoch): the state the last commit at or before
    /// `at` left. Every read works on it as on a current snapshot, except
    /// that it uses no index (its plans scan labels instead). Fails with
    /// [`StorageError::NoHistory`] when the history does not reach back to
    /// `at`.
    pub fn read_as_of(&self, graph: &str, at: u64) -> Result<crate::ReadTxn> {
        let mut core = self.core(graph, false, false)?;
        let raw = self.shared.kv.snapshot()?;
        match started(&*raw, core.g)? {
            Some(start) if start <= at => {}
            starts => {
                return Err(StorageError::NoHistory {
                    graph: graph.into(),
                    starts,
                    asked: at,
                })
            }
        }
        core.snap = Box::new(AsOf {
            inner: Box::new(crate::packed::Unpacked(raw)),
            g: core.g,
            t: at,
        });
        core.schema = Default::default();
        core.as_of = Some(at);
        Ok(crate::ReadTxn { core })
    }

    /// Removes the versions of `graph` that no read as of `before` or later
    /// needs; history then starts at `before`. Readers are never blocked.
    /// Returns how many versions were removed.
    pub fn prune_history(&self, graph: &str, before: u64) -> Result<u64> {
        self.writable()?;
        let g = self.graph_id(graph)?;
        let snap = self.shared.kv.snapshot()?;
        let Some(start) = started(&*snap, g)? else {
            return Err(StorageError::NoHistory {
                graph: graph.into(),
                starts: None,
                asked: before,
            });
        };
        if before <= start {
            return Ok(0);
        }
        prune(&*self.shared.kv, &*snap, g, before)
    }

    /// Every version of node `id` of `graph`, newest first: the system
    /// time of the commit that wrote it and the node it left (`None`:
    /// deleted, or not yet created).
    pub fn node_history(
        &self,
        graph: &str,
        id: NodeId,
    ) -> Result<Vec<(u64, Option<crate::Node>)>> {
        let r = self.read(graph)?;
        let c = &r.core;
        let raw = self.shared.kv.snapshot()?;
        let key = crate::keys::node_key(c.g, id);
        versions(&*raw, NODES, &key)?
            .into_iter()
            .map(|(t, v)| {
                let node = match v {
                    Some(bytes) => Some(crate::read::to_node(
                        c,
                        id,
                        crate::record::NodeRecord::decode(&bytes)?,
                    )?),
                    None => None,
                };
                Ok((t, node))
            })
            .collect()
    }
}
