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
//! **Layout.** `g | ks | escaped(key after g) | 00 01 | !t → tag | value`
//! for the node and edge records, the id maps, label members, relationship
//! adjacency (one entry per edge and direction, in the adjacency's delta
//! form), the counters, the valid-time entries, and the index and
//! constraint definitions with the property and list-element index
//! entries. The escaping (`plexus_common::push_escaped`: `00` → `00 FF`,
//! then the `00 01` terminator) keeps the versions of one key together and
//! in key order, whatever the key's length; `!t` (the stamp inverted) puts the newest
//! version first. The tag is [`ABSENT`] or [`PRESENT`] followed by the
//! value. `g | 00` holds the instant history starts, `g | 01` its
//! retention policy (`retention.rs`), `g | 02` the stamp of a bulk load
//! whose versions are not written yet; `g | 01 | 00` and
//! `g | 01 | 01 | t | seq` the change log that lets a prune visit only what changed since the
//! last (`prune.rs`).
//!
//! **Reads as of `t`** go through [`AsOf`] (`as_of.rs`), a snapshot that answers for the
//! versioned keyspaces from the history: a point read is one seek to the
//! first version at or before `t` (O(log n), whatever the history's length
//! and the commits' sizes); a scan walks the versions in the range and
//! keeps the first at or before `t` of each key. Every reader of storage
//! (and so the algorithms and Cypher) works unchanged on it. An as-of view
//! has the indexes its graph had at `t` and seeks them; a history older
//! than their versioning has no version of their definitions, so it has
//! none and scans. Vector indexes (`index_data`) are not versioned.

use crate::error::{Result, StorageError};
use crate::ids::{EdgeId, GraphId, NodeId};
use crate::keys::{
    edge_key, ADJ, DIR_IN, DIR_OUT, EDGES, EDGE_KEYS, HISTORY, LABELS, META, META_SYSTEM_CLOCK,
    NODES, NODE_KEYS, PROP_INDEX, SCHEMA, STATS, VALID, VALID_UNVERSIONED,
};
use crate::record::EdgeRecord;
use plexus_common::{read_escaped, read_u64, KEY_PART_END};
use plexus_kv::{decode_counter, KeyRange, Ks, Op, ScanOptions, Snapshot, WriteBatch};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// The keyspaces whose writes are versioned: the graph, its counters, its
/// valid-time entries, and its index definitions with their entries (so a
/// read as of an instant seeks the indexes that existed then).
pub(crate) const VERSIONED: [Ks; 10] = [
    NODES, NODE_KEYS, EDGES, EDGE_KEYS, ADJ, LABELS, STATS, VALID, SCHEMA, PROP_INDEX,
];

/// The tag of a version that says the key held nothing.
const ABSENT: u8 = 0;
/// The tag of a version that holds a value (after the tag).
const PRESENT: u8 = 1;
/// `g | START`: the instant (µs) history starts, big-endian.
pub(super) const START: u8 = 0;

/// Microseconds since the Unix epoch, by the wall clock.
fn wall_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The next system time, after every stamp given before, written to
/// `batch` so that it survives a restart.
fn tick(snap: &dyn Snapshot, batch: &mut WriteBatch) -> Result<u64> {
    let t = wall_micros().max(clock(snap)?.saturating_add(1));
    batch.put(META, META_SYSTEM_CLOCK, t.to_le_bytes().to_vec());
    Ok(t)
}

/// What a valid-time key holds from [`crate::WriteTxn::valid_time_stamp`]
/// until its commit replaces it with the commit's stamp ([`stamp`]). Nine
/// bytes, so it never reads as a stamp; `valid_time_write` refuses it.
pub const PENDING_STAMP: [u8; 9] = *b"\xFF\x00pending";

/// Whether `batch` holds a valid-time key waiting for its commit's stamp.
pub(crate) fn has_pending_stamps(batch: &WriteBatch) -> bool {
    batch.ops.iter().any(is_pending)
}

fn is_pending(op: &Op) -> bool {
    matches!(op, Op::Put { ks, value, .. }
        if (*ks == VALID || *ks == VALID_UNVERSIONED) && value[..] == PENDING_STAMP)
}

/// Gives the keys of `batch` waiting for their commit's stamp a new system
/// time, and returns it (`None` when none waits). `snap` is the state the
/// batch lands on, under the commit lock.
pub(crate) fn stamp(snap: &dyn Snapshot, batch: &mut WriteBatch) -> Result<Option<u64>> {
    // One pass: the ops before the first pending one hold none.
    let Some(first) = batch.ops.iter().position(is_pending) else {
        return Ok(None);
    };
    let t = tick(snap, batch)?;
    for op in &mut batch.ops[first..] {
        if is_pending(op) {
            if let Op::Put { value, .. } = op {
                *value = t.to_be_bytes().to_vec();
            }
        }
    }
    Ok(Some(t))
}

/// The last system time given, or 0.
pub(crate) fn clock(snap: &dyn Snapshot) -> Result<u64> {
    crate::coord::meta_u64(snap, META_SYSTEM_CLOCK, 0)
}

/// `g | tag`: one of a graph's history settings (start, retention, a
/// load's mark, the change log's start). A setting's key is exactly five
/// bytes and a version's is longer (its stem ends in the terminator and
/// the stamp), so the two never meet.
pub(super) fn setting_key(g: u32, tag: u8) -> Vec<u8> {
    let mut k = g.to_be_bytes().to_vec();
    k.push(tag);
    k
}

fn start_key(g: u32) -> Vec<u8> {
    setting_key(g, START)
}

/// The instant history of graph `g` starts at, when it is kept.
pub(crate) fn started(snap: &dyn Snapshot, g: GraphId) -> Result<Option<u64>> {
    Ok(snap
        .get(HISTORY, &start_key(g.0))?
        .and_then(|v| read_u64(&v, 0)))
}

/// `g | ks | escaped(key after g)`: the prefix every version of `key`
/// (and of every key it is a prefix of) starts with.
fn stem(ks: Ks, key: &[u8]) -> Vec<u8> {
    let (g, rest) = key.split_at(key.len().min(4));
    let mut out = Vec::with_capacity(key.len() + 16);
    out.extend_from_slice(g);
    out.push(ks_byte(ks));
    plexus_common::push_escaped(&mut out, rest);
    // Without the end: the stem of a key prefixes those of its extensions.
    out.truncate(out.len() - KEY_PART_END.len());
    out
}

pub(super) fn ks_byte(ks: Ks) -> u8 {
    // Keyspace numbers are small constants (`keys.rs`); 0 is `META`, never
    // versioned, so `g | 00` is free for the start.
    u8::try_from(ks.0).unwrap_or(u8::MAX)
}

/// The prefix of the versions of `key` (in `ks`), and of no other key's.
pub(super) fn versions_prefix(ks: Ks, key: &[u8]) -> Vec<u8> {
    let mut k = stem(ks, key);
    k.extend_from_slice(&KEY_PART_END);
    k
}

/// The key of the version of `key` (in `ks`) written at `t`.
pub(super) fn version_key(ks: Ks, key: &[u8], t: u64) -> Vec<u8> {
    let mut k = versions_prefix(ks, key);
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
pub(super) fn split_version(k: &[u8]) -> Result<(Vec<u8>, usize, u64)> {
    let bad = || StorageError::Corrupt("history key".into());
    if k.len() < 4 + 1 + 2 + 8 {
        return Err(bad());
    }
    let (rest, used) = read_escaped(&k[5..]).ok_or_else(bad)?;
    let key = [&k[..4], &rest[..]].concat();
    let stem_len = 5 + used;
    let t = read_u64(k, stem_len).ok_or_else(bad)?;
    Ok((key, stem_len, !t))
}

pub(super) fn decode_version(v: &[u8]) -> Result<Option<&[u8]>> {
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
/// entry (before `settle`). `stamped` is the system time [`stamp`] gave
/// the batch, which its versions then share.
pub(crate) fn record(
    snap: &dyn Snapshot,
    batch: &mut WriteBatch,
    stamped: Option<u64>,
) -> Result<()> {
    let mut on = BTreeSet::new();
    for g in graphs_written(batch) {
        if started(snap, GraphId(g))?.is_some() {
            on.insert(g);
        }
    }
    if on.is_empty() {
        return Ok(());
    }
    let t = match stamped {
        Some(t) => t,
        None => tick(snap, batch)?,
    };
    let changes = changes(snap, batch, &on)?;
    let mut log = WriteBatch::new();
    prune::log_commit(
        snap,
        &mut log,
        t,
        &on,
        changes.iter().map(|((ks, k), _)| (*ks, &k[..])),
    )?;
    let versions: Vec<Op> = changes
        .into_iter()
        .map(|((ks, key), value)| Op::Put {
            ks: HISTORY,
            key: version_key(ks, &key, t),
            value: version_value(value.as_deref()),
        })
        .collect();
    // Exactly: a doubling would copy every op of a large commit again.
    batch.ops.reserve_exact(versions.len() + log.ops.len() + 8);
    batch.ops.extend(versions);
    batch.ops.extend(log.ops);
    Ok(())
}

/// The final value of each versioned key, borrowed from the batch where it
/// holds them (a large commit is not copied twice over), in key order.
/// Gathered in a list and sorted once, which costs less than a map's insert
/// per key: the batch's own writes come mostly in order (about 3% of a
/// commit of 7,000 valid-time versions, `plexus-bench temporal`).
type Changes<'a> = Vec<Change<'a>>;
type Change<'a> = ((Ks, Cow<'a, [u8]>), Option<Cow<'a, [u8]>>);

/// The final value of each versioned key `batch` writes in the graphs
/// `on`: records and id maps as written, counters resolved against `snap`,
/// and adjacency derived from the edges created and deleted.
fn changes<'a>(
    snap: &dyn Snapshot,
    batch: &'a WriteBatch,
    on: &BTreeSet<u32>,
) -> Result<Changes<'a>> {
    let mut out = Changes::with_capacity(batch.ops.len());
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
                out.push(((*ks, Cow::Borrowed(key)), Some(Cow::Borrowed(value))));
            }
            Op::Delete { ks, key } if in_scope(ks, key) && *ks != ADJ => {
                if *ks == EDGES {
                    edge_adjacency(snap, key, None, &mut out)?;
                }
                out.push(((*ks, Cow::Borrowed(key)), None));
            }
            Op::Add { ks, key, delta } if in_scope(ks, key) => {
                let base = match counters.get(key) {
                    Some(v) => *v,
                    None => snap.get(*ks, key)?.map_or(0, |v| decode_counter(&v)),
                };
                let now = base.saturating_add(*delta);
                counters.insert(key.clone(), now);
                let value = (now != 0).then(|| now.to_le_bytes().to_vec());
                out.push(((*ks, Cow::Borrowed(key)), value.map(Cow::Owned)));
            }
            _ => {}
        }
    }
    // Stable, so a key written twice keeps its writes in order, and the
    // last is the one kept, as a map's insert would.
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            std::mem::swap(&mut later.1, &mut kept.1);
        }
        same
    });
    Ok(out)
}

/// The adjacency versions of an edge write: entries in both directions
/// when the edge is created, their removal when it is deleted. An edge's
/// endpoints and type never change, so an update leaves them alone.
fn edge_adjacency(
    snap: &dyn Snapshot,
    key: &[u8],
    new: Option<&[u8]>,
    out: &mut Changes<'_>,
) -> Result<()> {
    let (Some(g), Some(id)) = (plexus_common::read_u32(key, 0), read_u64(key, 4)) else {
        return Err(StorageError::Corrupt("edge key".into()));
    };
    let (g, id) = (GraphId(g), EdgeId(id));
    let old = match crate::edge_blocks::record(snap, g, id)? {
        Some(r) => Some(EdgeRecord::decode(&r)?),
        None => None,
    };
    let (record, present) = match (old, new) {
        (None, Some(v)) => (EdgeRecord::decode(v)?, true),
        (Some(r), None) => (r, false),
        _ => return Ok(()),
    };
    for key in adjacency_keys(g, id, &record) {
        out.push((
            (ADJ, Cow::Owned(key)),
            present.then_some(Cow::Borrowed(&[][..])),
        ));
    }
    Ok(())
}

/// The adjacency delta keys of an edge, both directions.
fn adjacency_keys(g: GraphId, id: EdgeId, r: &EdgeRecord) -> [Vec<u8>; 2] {
    let entry = |other: NodeId| crate::adjacency::Entry {
        rel_type: r.rel_type,
        node: other.0,
        edge: id.0,
    };
    [
        crate::adjacency::delta_key(g, r.src, DIR_OUT, entry(r.dst)),
        crate::adjacency::delta_key(g, r.dst, DIR_IN, entry(r.src)),
    ]
}

/// Writes, at a new stamp, a version of every versioned entry graph `g`
/// holds now, then marks history on from that stamp. `snap` is the
/// stored snapshot (packed keyspaces are read entry by entry); the caller
/// holds the commit lock, so no commit lands meanwhile. Returns the stamp.
pub(crate) fn baseline(
    kv: &dyn plexus_kv::KvStore,
    snap: &dyn Snapshot,
    g: GraphId,
) -> Result<u64> {
    let mut batch = WriteBatch::new();
    let t = tick(snap, &mut batch)?;
    record_all(snap, g, (t, t), &mut batch, &mut |b, force| {
        write_chunk(kv, b, force)
    })?;
    Ok(t)
}

/// [`baseline`] into one batch, for a store that several processes write:
/// built inside the serialized write that stamps it, so that no commit of
/// another process lands between the versions and the start.
pub(crate) fn baseline_in(snap: &dyn Snapshot, g: GraphId, batch: &mut WriteBatch) -> Result<u64> {
    let t = tick(snap, batch)?;
    record_all(snap, g, (t, t), batch, &mut |_, _| Ok(()))?;
    Ok(t)
}

/// `g | LOADING`: the stamp of a bulk load's versions, from the load's own
/// write until they are written.
pub(super) const LOADING: u8 = 2;

fn loading_key(g: u32) -> Vec<u8> {
    setting_key(g, LOADING)
}

/// Into the write of a bulk load into graph `g`, which keeps history: the
/// stamp its versions will have, kept until [`record_load`] has written
/// them, so that a crash or an error in between leaves them to be written
/// at the next open ([`finish_load`]). Returns the stamp.
pub(crate) fn begin_load(snap: &dyn Snapshot, g: GraphId, batch: &mut WriteBatch) -> Result<u64> {
    let t = tick(snap, batch)?;
    batch.put(HISTORY, loading_key(g.0), t.to_be_bytes().to_vec());
    Ok(t)
}

/// After a bulk load into graph `g` (empty before it, under the commit
/// lock, or at open with nothing else running): a version of everything
/// it holds, stamped `t`, then the mark of the load cleared. Writing it
/// again is harmless (the same versions).
pub(crate) fn record_load(kv: &dyn plexus_kv::KvStore, g: GraphId, t: u64) -> Result<()> {
    let snap = kv.snapshot()?;
    let Some(start) = started(&*snap, g)? else {
        return Ok(());
    };
    let mut batch = WriteBatch::new();
    record_all(&*snap, g, (t, start), &mut batch, &mut |b, force| {
        write_chunk(kv, b, force)
    })?;
    let mut done = WriteBatch::new();
    done.delete(HISTORY, loading_key(g.0));
    Ok(kv.write(done)?)
}

/// At open: writes the versions of a bulk load into graph `g` that a crash
/// or an error left unwritten. Decision: stamped as the load said, since
/// nothing could commit to the graph between the load and a crash (the
/// load held the commit lock); after an error that the process outlived,
/// commits made before this open show in the versions from the load's
/// stamp on (documented in ARCHITECTURE.md).
pub(crate) fn finish_load(kv: &dyn plexus_kv::KvStore, g: GraphId) -> Result<()> {
    let stamp = kv
        .snapshot()?
        .get(HISTORY, &loading_key(g.0))?
        .and_then(|v| read_u64(&v, 0));
    match stamp {
        Some(t) => record_load(kv, g, t),
        None => Ok(()),
    }
}

/// Writes, stamped `t`, a version of every versioned entry of graph `g`
/// (`snap` unpacked; edge blocks pass through it), then `start` as `g`'s
/// start.
fn record_all(
    snap: &dyn Snapshot,
    g: GraphId,
    (t, start): (u64, u64),
    batch: &mut WriteBatch,
    flush: &mut dyn FnMut(&mut WriteBatch, bool) -> Result<()>,
) -> Result<()> {
    let prefix = g.0.to_be_bytes();
    let range = KeyRange::prefix(&prefix);
    for ks in [
        NODES, NODE_KEYS, EDGE_KEYS, LABELS, STATS, VALID, SCHEMA, PROP_INDEX,
    ] {
        let mut failed = Ok(());
        crate::packed::visit_entries(snap, ks, &range, &mut |k, v| {
            batch.put(HISTORY, version_key(ks, k, t), version_value(Some(v)));
            failed = flush(batch, false);
            Ok(failed.is_ok())
        })?;
        failed?;
    }
    let mut failed = Ok(());
    snap.visit(EDGES, &range, &mut |k, v| {
        failed = crate::edge_blocks::each(k, v, &mut |id, rec| {
            let r = EdgeRecord::decode(rec)?;
            batch.put(
                HISTORY,
                version_key(EDGES, &edge_key(g, id), t),
                version_value(Some(rec)),
            );
            for key in adjacency_keys(g, id, &r) {
                batch.put(HISTORY, version_key(ADJ, &key, t), version_value(Some(&[])));
            }
            flush(batch, false)
        });
        Ok(failed.is_ok())
    })?;
    failed?;
    // A change log that was started goes on after these versions, which
    // it does not hold (`prune.rs`).
    if prune::logged_since(snap, g)?.is_some() {
        batch.put(HISTORY, prune::logged_key(g.0), t.to_be_bytes().to_vec());
    }
    batch.put(HISTORY, start_key(g.0), start.to_be_bytes().to_vec());
    flush(batch, true)
}

/// Operations one backend write takes in the passes over a whole graph
/// (recording it, pruning), so that none holds it all in memory.
const CHUNK: usize = 50_000;

/// Writes `batch` once it holds a chunk, or (with `force`) whatever it holds.
pub(super) fn write_chunk(
    kv: &dyn plexus_kv::KvStore,
    batch: &mut WriteBatch,
    force: bool,
) -> Result<()> {
    if (force && !batch.is_empty()) || batch.len() >= CHUNK {
        kv.write(std::mem::take(batch))?;
    }
    Ok(())
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

/// One version of an entry: its stamp and value (`None`: absent).
pub(crate) type Version = (u64, Option<Vec<u8>>);

/// Every version of `key` (in `ks`), newest first.
pub(crate) fn versions(snap: &dyn Snapshot, ks: Ks, key: &[u8]) -> Result<Vec<Version>> {
    let prefix = versions_prefix(ks, key);
    let mut out = Vec::new();
    for pair in snap.scan(HISTORY, &KeyRange::prefix(&prefix), ScanOptions::default()) {
        let (k, v) = pair?;
        let (_, _, t) = split_version(&k)?;
        out.push((t, decode_version(&v)?.map(<[u8]>::to_vec)));
    }
    Ok(out)
}

/// The stamp of the oldest version of `key` (in `ks`) the history holds:
/// when it was first written, or the start of history for a key older than
/// that (and after a prune, the oldest version kept). `None` when the
/// history holds none (history off, or the key never written since).
pub(crate) fn first_stamp(snap: &dyn Snapshot, ks: Ks, key: &[u8]) -> Result<Option<u64>> {
    let prefix = versions_prefix(ks, key);
    let opts = ScanOptions {
        reverse: true,
        limit: Some(1),
    };
    match snap.scan(HISTORY, &KeyRange::prefix(&prefix), opts).next() {
        Some(pair) => Ok(Some(split_version(&pair?.0)?.2)),
        None => Ok(None),
    }
}

mod api;
mod as_of;
mod prune;
mod retention;

use prune::{prune, start_log};

pub(crate) use as_of::AsOf;
pub(crate) use retention::{after_commit, prune_graph, stored as stored_retention, Policies};

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

    /// The changes of a batch are its keys in order, each once with its
    /// last value, counters summed onto the stored count; other graphs'
    /// keys and keyspaces without history are left out.
    #[test]
    fn changes_keep_each_key_once_with_its_last_value() {
        let kv = plexus_kv::open(
            plexus_kv::Backend::Memory,
            std::path::Path::new(""),
            crate::keys::KEYSPACES,
            &Default::default(),
        )
        .unwrap();
        let mut stored = WriteBatch::new();
        stored.add(STATS, vec![0, 0, 0, 1, 9], 5);
        kv.write(stored).unwrap();
        let snap = kv.snapshot().unwrap();
        let mut b = WriteBatch::new();
        b.put(NODES, vec![0, 0, 0, 1, 2], b"two".to_vec());
        b.put(NODES, vec![0, 0, 0, 1, 1], b"first".to_vec());
        b.add(STATS, vec![0, 0, 0, 1, 9], 2);
        b.put(NODES, vec![0, 0, 0, 1, 1], b"last".to_vec());
        b.add(STATS, vec![0, 0, 0, 1, 9], -3);
        b.put(NODES, vec![0, 0, 0, 2, 1], b"another graph".to_vec());
        b.put(HISTORY, vec![0, 0, 0, 1, 1], b"not versioned".to_vec());
        let on = BTreeSet::from([1]);
        let got: Vec<(Ks, Vec<u8>, Option<Vec<u8>>)> = changes(&*snap, &b, &on)
            .unwrap()
            .into_iter()
            .map(|((ks, k), v)| (ks, k.into_owned(), v.map(Cow::into_owned)))
            .collect();
        let nodes = |k: u8, v: &[u8]| (NODES, vec![0, 0, 0, 1, k], Some(v.to_vec()));
        let mut want = vec![
            nodes(1, b"last"),
            nodes(2, b"two"),
            (
                STATS,
                vec![0, 0, 0, 1, 9],
                Some(4i64.to_le_bytes().to_vec()),
            ),
        ];
        want.sort();
        assert_eq!(got, want);
    }
}
