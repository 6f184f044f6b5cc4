//! Edge records packed by id: one value holds the records of up to 64
//! consecutive edge ids.
//!
//! An LMDB entry costs its key and about ten bytes of header: with a
//! 12-byte key per edge, that was 22 of the 50 bytes an edge record took.
//! So the `edges` keyspace holds *blocks*, key `g|id >> 6|0` (13 bytes:
//! longer than a per-edge key, so the two never meet). A block's value is
//! [`MARK`], then per record in id order: `varint (id & 63)`, the record's
//! user id stored after the previous record's (`prefix.rs`: edges loaded
//! together have ids like `e1234560`, `e1234561`), `varint length` and
//! the record after its user id. Format 2 stored whole records, without
//! the mark ([`each_v2`], for `plexus upgrade`).
//!
//! Transactions still write one key per edge (`g|id`, 12 bytes) into their
//! overlay, and read their own writes by it; such keys never reach the
//! store. The commit leader turns them into block rewrites against the
//! latest committed blocks ([`settle`], beside the adjacency's), so two
//! transactions creating neighbouring edges commute as before. A block is
//! small (64 records), so every commit rewrites the blocks it touches.

use crate::error::{Result, StorageError};
use crate::ids::{EdgeId, GraphId};
use crate::keys::{edge_key, EDGES};
use crate::record::{join_key, split_key};
use plexus_common::{read_u32, read_u64, write_varint, Reader};
use plexus_kv::{KeyRange, Op, Snapshot, WriteBatch};
use std::collections::BTreeMap;
use std::ops::Bound;

const SHIFT: u32 = 6;
/// The length of a block key: graph (4), block number (8), a zero.
pub(crate) const BLOCK_KEY_LEN: usize = 13;
/// The length of a per-edge key, as transactions write them.
pub(crate) const EDGE_KEY_LEN: usize = 12;
/// The first byte of a block (format 3): format 2's blocks began with an
/// id's low bits, below 64.
pub(crate) const MARK: u8 = 0x80;

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt(format!("edge block {what}"))
}

/// The key of the block holding edge `id`.
pub(crate) fn block_key(g: GraphId, id: EdgeId) -> Vec<u8> {
    let mut k = edge_key(g, EdgeId(id.0 >> SHIFT));
    k.push(0);
    k
}

/// The first edge id a block key covers.
fn base_of(key: &[u8]) -> Result<u64> {
    if key.len() != BLOCK_KEY_LEN {
        return Err(corrupt("key"));
    }
    let n = read_u64(key, 4).ok_or_else(|| corrupt("key"))?;
    n.checked_shl(SHIFT)
        .filter(|b| b >> SHIFT == n)
        .ok_or_else(|| corrupt("key"))
}

/// Whether a block has this format's layout (not format 2's).
pub(crate) fn is_current(block: &[u8]) -> bool {
    block.first() == Some(&MARK)
}

/// The next record's id low bits, above the last one's.
fn next_low(r: &mut Reader<'_>, last: &mut Option<u64>) -> Result<u64> {
    let low = r.varint().map_err(|_| corrupt("record"))?;
    if low >> SHIFT != 0 || last.is_some_and(|l| l >= low) {
        return Err(corrupt("record order"));
    }
    *last = Some(low);
    Ok(low)
}

/// What [`walk`] calls per record: id low bits, user id, the rest.
type RecordVisitor<'a> = dyn FnMut(u64, &[u8], &[u8]) -> Result<bool> + 'a;

/// Walks a block's records in id order, handing `f` each one's id low
/// bits, user id and the record after it, until `f` returns false. Callers
/// rebuild only the records they keep. Without `users`, the user ids are
/// skipped, not rebuilt, and `f` gets an empty one.
fn walk(block: &[u8], users: bool, f: &mut RecordVisitor<'_>) -> Result<()> {
    let bad = |_| corrupt("record");
    let mut r = Reader::new(block);
    if r.byte().map_err(bad)? != MARK {
        return Err(corrupt("mark"));
    }
    // Sized for a typical user id and record, so that neither grows by
    // doubling from nothing on every read of one relationship.
    let mut user = Vec::with_capacity(32);
    let mut last = None;
    while !r.is_empty() {
        let low = next_low(&mut r, &mut last)?;
        if users {
            crate::prefix::next(&mut r, &mut user, false).map_err(bad)?;
        } else {
            crate::prefix::read(&mut r).map_err(bad)?;
        }
        let len = r.len().map_err(bad)?;
        if !f(low, &user, r.bytes(len).map_err(bad)?)? {
            break;
        }
    }
    Ok(())
}

/// Calls `f` with each record of a block, in id order.
pub(crate) fn each(
    key: &[u8],
    block: &[u8],
    f: &mut dyn FnMut(EdgeId, &[u8]) -> Result<()>,
) -> Result<()> {
    let base = base_of(key)?;
    let mut record = Vec::new();
    walk(block, true, &mut |low, user, rest| {
        join_key(user, rest, &mut record);
        f(EdgeId(base | low), &record)?;
        Ok(true)
    })
}

/// Calls `f` with each edge id a block holds, in order, without rebuilding
/// the records.
pub(crate) fn each_id(key: &[u8], block: &[u8], f: &mut dyn FnMut(EdgeId)) -> Result<()> {
    let base = base_of(key)?;
    walk(block, false, &mut |low, _, _| {
        f(EdgeId(base | low));
        Ok(true)
    })
}

/// Format 2's blocks, `varint (id & 63), varint length, record` per record:
/// what [`each`] is to this format's.
pub(crate) fn each_v2(
    key: &[u8],
    block: &[u8],
    f: &mut dyn FnMut(EdgeId, &[u8]) -> Result<()>,
) -> Result<()> {
    let base = base_of(key)?;
    let bad = |_| corrupt("record");
    let mut r = Reader::new(block);
    let mut last = None;
    while !r.is_empty() {
        let low = next_low(&mut r, &mut last)?;
        let len = r.len().map_err(bad)?;
        f(EdgeId(base | low), r.bytes(len).map_err(bad)?)?;
    }
    Ok(())
}

/// A format 2 block in this format's layout, and how many records it holds.
pub(crate) fn convert_v2(key: &[u8], block: &[u8]) -> Result<(Vec<u8>, u64)> {
    let mut records = BTreeMap::new();
    each_v2(key, block, &mut |id, r| {
        records.insert(id.0 & ((1 << SHIFT) - 1), r.to_vec());
        Ok(())
    })?;
    Ok((encode(&records)?, records.len() as u64))
}

/// The committed record bytes of edge `id` of graph `g`, rebuilt from its
/// block in `snap`.
pub(crate) fn record(snap: &dyn Snapshot, g: GraphId, id: EdgeId) -> Result<Option<Vec<u8>>> {
    in_snapshot(snap, &block_key(g, id), id, true, |user, rest| {
        let mut record = Vec::with_capacity(user.len() + rest.len() + 2);
        join_key(user, rest, &mut record);
        Ok(record)
    })
}

/// `f` of edge `id`'s record in the block at `key` in `snap`, read in
/// place (lent by the store): its user id (empty unless `users`) and the
/// rest ([`find`]).
fn in_snapshot<T>(
    snap: &dyn Snapshot,
    key: &[u8],
    id: EdgeId,
    users: bool,
    f: impl FnOnce(&[u8], &[u8]) -> Result<T>,
) -> Result<Option<T>> {
    let (mut f, mut out) = (Some(f), Ok(None));
    snap.get_with(EDGES, key, &mut |v| {
        if let Some(f) = f.take() {
            out = find(v, id, users, f);
        }
        Ok(())
    })?;
    out
}

/// The blocks a transaction may keep at most this large: an edge with a
/// long vector property makes a block of megabytes.
const CACHED_BLOCK_BYTES: usize = 256 << 10;

/// A block kept by a [`BlockCache`]: its bytes, where each record's part
/// after its user id lies in them, and the user ids once one was asked for.
#[derive(Default)]
struct Held {
    bytes: Vec<u8>,
    /// Per record in id order: its id low bits, where its rest starts and
    /// where it ends in `bytes`.
    rests: Vec<(u8, u32, u32)>,
    /// The records' user ids one after another, and where each ends, in the
    /// order of `rests`: rebuilt from their prefixes only when needed
    /// (`elementId(r)`, a whole record); a property read needs none.
    users: Option<(Vec<u8>, Vec<u32>)>,
}

impl Held {
    /// The block `bytes` held, indexed (a block holds at most 64 records).
    fn new(bytes: Vec<u8>) -> Result<Held> {
        let mut rests = Vec::with_capacity(1 << SHIFT);
        let start = bytes.as_ptr() as usize;
        walk(&bytes, false, &mut |low, _, rest| {
            let at = rest.as_ptr() as usize - start;
            let (lo, s, e) = (
                u8::try_from(low),
                u32::try_from(at),
                u32::try_from(at + rest.len()),
            );
            let (Ok(lo), Ok(s), Ok(e)) = (lo, s, e) else {
                return Err(corrupt("size"));
            };
            rests.push((lo, s, e));
            Ok(true)
        })?;
        Ok(Held {
            bytes,
            rests,
            users: None,
        })
    }

    /// The user id (empty unless `users`) and the rest of the record with
    /// id low bits `low`.
    fn get(&mut self, low: u64, users: bool) -> Result<Option<(&[u8], &[u8])>> {
        let Ok(i) = self
            .rests
            .binary_search_by_key(&low, |&(l, _, _)| u64::from(l))
        else {
            return Ok(None);
        };
        if users && self.users.is_none() {
            let (mut ids, mut ends) = (Vec::new(), Vec::with_capacity(self.rests.len()));
            walk(&self.bytes, true, &mut |_, user, _| {
                ids.extend_from_slice(user);
                ends.push(u32::try_from(ids.len()).map_err(|_| corrupt("size"))?);
                Ok(true)
            })?;
            self.users = Some((ids, ends));
        }
        let (_, s, e) = self.rests[i];
        let rest = self
            .bytes
            .get(s as usize..e as usize)
            .ok_or_else(|| corrupt("record"))?;
        let user = match &self.users {
            Some((ids, ends)) if users => {
                let start = i.checked_sub(1).map_or(0, |p| ends[p]);
                ids.get(start as usize..ends[i] as usize)
                    .ok_or_else(|| corrupt("record"))?
            }
            _ => &[],
        };
        Ok(Some((user, rest)))
    }
}

/// The edge blocks a transaction read last (up to [`KEPT_BLOCKS`]). A
/// block read once is only remembered; read again, it is copied and
/// indexed, so that each further read is a binary search. A delete of a
/// document reads its relationships in id order, each twice (its owners,
/// then the record it removes): 64 of them share a block. A node's
/// relationships come in neighbour order, their ids spread over a few
/// blocks (LDBC's IS3 reads 228 `KNOWS` of one person across four blocks,
/// alternating); reading one relationship's properties one after another
/// (`r.creationDate` as a sort key, then as a column) reads its block
/// twice. But a walk that reads one relationship per block (IC5's
/// memberships: 2,106 of 3,072 reads the first of their block) would copy
/// a block for one record, so a first read walks the block in place,
/// skipping the user ids it does not need. A transaction's snapshot never
/// changes, so what is kept stays right; its own writes are read before it
/// (`read.rs`).
#[derive(Default)]
pub(crate) struct BlockCache {
    /// Oldest first; the oldest goes when a new one comes past the limit.
    blocks: std::collections::VecDeque<Kept>,
}

/// Blocks a transaction keeps: with [`CACHED_BLOCK_BYTES`] each, at most
/// 2 MiB.
const KEPT_BLOCKS: usize = 8;

struct Kept {
    key: Vec<u8>,
    state: State,
}

enum State {
    /// Read once, not kept.
    Seen,
    /// Too large to keep: read in place every time.
    Large,
    /// Kept (empty when the snapshot has no such block).
    Held(Held),
}

impl BlockCache {
    /// `f` of the user id and the rest of edge `id`'s committed record
    /// (`split_key`), through the cache; `None` when the edge is not there.
    /// Without `users`, the user id is not rebuilt and `f` gets an empty
    /// one: a property read needs none.
    pub(crate) fn read<T>(
        &mut self,
        snap: &dyn Snapshot,
        g: GraphId,
        id: EdgeId,
        users: bool,
        f: impl FnOnce(&[u8], &[u8]) -> Result<T>,
    ) -> Result<Option<T>> {
        let block = block_key(g, id);
        let Some(kept) = self.blocks.iter_mut().find(|k| k.key == block) else {
            let out = in_snapshot(snap, &block, id, users, f)?;
            if self.blocks.len() == KEPT_BLOCKS {
                self.blocks.pop_front();
            }
            self.blocks.push_back(Kept {
                key: block,
                state: State::Seen,
            });
            return Ok(out);
        };
        if let State::Seen = kept.state {
            kept.state = held(snap, &kept.key)?;
        }
        match &mut kept.state {
            State::Held(held) => held
                .get(id.0 & ((1 << SHIFT) - 1), users)?
                .map(|(user, rest)| f(user, rest))
                .transpose(),
            State::Seen | State::Large => in_snapshot(snap, &kept.key, id, users, f),
        }
    }
}

/// The block at `key` in `snap`, copied and indexed unless too large.
fn held(snap: &dyn Snapshot, key: &[u8]) -> Result<State> {
    let mut bytes = None;
    snap.get_with(EDGES, key, &mut |v| {
        bytes = Some((v.len() <= CACHED_BLOCK_BYTES).then(|| v.to_vec()));
        Ok(())
    })?;
    Ok(match bytes {
        None => State::Held(Held::default()),
        Some(None) => State::Large,
        Some(Some(bytes)) => State::Held(Held::new(bytes)?),
    })
}

/// `f` of the user id (empty unless `users`) and the rest of the record of
/// `id` in `block`; `None` when the block does not hold it.
fn find<T>(
    block: &[u8],
    id: EdgeId,
    users: bool,
    f: impl FnOnce(&[u8], &[u8]) -> Result<T>,
) -> Result<Option<T>> {
    let want = id.0 & ((1 << SHIFT) - 1);
    let (mut f, mut out) = (Some(f), None);
    walk(block, users, &mut |low, user, rest| {
        if low == want {
            if let Some(f) = f.take() {
                out = Some(f(user, rest)?);
            }
        }
        Ok(low < want)
    })?;
    Ok(out)
}

/// Appends one record to a block being built, after the record before it
/// (`prev` holds that one's user id).
fn push(out: &mut Vec<u8>, prev: &mut Vec<u8>, low: u64, record: &[u8]) -> Result<()> {
    if out.is_empty() {
        out.push(MARK);
        prev.clear();
    }
    let (user, rest) = split_key(record)?;
    write_varint(out, low);
    crate::prefix::push(out, prev, user);
    write_varint(out, rest.len() as u64);
    out.extend_from_slice(rest);
    Ok(())
}

/// Packs records, given by id low bits in ascending order, into a block.
fn encode(records: &BTreeMap<u64, Vec<u8>>) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(records.values().map(|r| r.len() + 3).sum());
    let mut prev = Vec::new();
    for (low, r) in records {
        push(&mut out, &mut prev, *low, r)?;
    }
    Ok(out)
}

/// Appends records to blocks as a bulk load assigns ids, in id order.
#[derive(Default)]
pub(crate) struct Packer {
    key: Vec<u8>,
    block: Vec<u8>,
    prev: Vec<u8>,
}

impl Packer {
    /// Adds the record of `id`, which is larger than every id added before.
    pub fn add(
        &mut self,
        g: GraphId,
        id: EdgeId,
        record: &[u8],
        run: &mut plexus_kv::Run,
    ) -> Result<()> {
        let key = block_key(g, id);
        if key != self.key {
            self.finish(run);
            self.key = key;
        }
        push(
            &mut self.block,
            &mut self.prev,
            id.0 & ((1 << SHIFT) - 1),
            record,
        )
    }

    pub fn finish(&mut self, run: &mut plexus_kv::Run) {
        if !self.block.is_empty() {
            run.push(&self.key, &self.block);
            self.block.clear();
        }
    }
}

/// Turns a commit's per-edge record writes into rewrites of their blocks,
/// read from `snap`, the latest committed state (the commit leader calls
/// it under the commit lock, right before the batch is written).
pub(crate) fn settle(snap: &dyn Snapshot, batch: &mut WriteBatch) -> Result<()> {
    // Block key → (id low bits → record, or None to delete).
    let mut blocks: BTreeMap<Vec<u8>, BTreeMap<u64, Option<Vec<u8>>>> = BTreeMap::new();
    let mut failed = None;
    batch.ops.retain_mut(|op| {
        let (key, value) = match op {
            Op::Put { ks, key, value } if *ks == EDGES && key.len() == EDGE_KEY_LEN => {
                (key, Some(std::mem::take(value)))
            }
            Op::Delete { ks, key } if *ks == EDGES && key.len() == EDGE_KEY_LEN => (key, None),
            _ => return true,
        };
        let (Some(g), Some(id)) = (read_u32(key, 0), read_u64(key, 4)) else {
            failed = Some(corrupt("edge key"));
            return true;
        };
        blocks
            .entry(block_key(GraphId(g), EdgeId(id)))
            .or_default()
            .insert(id & ((1 << SHIFT) - 1), value);
        false
    });
    if let Some(e) = failed {
        return Err(e);
    }
    for (bk, changes) in blocks {
        let mut records = BTreeMap::new();
        let range = KeyRange {
            start: Bound::Included(bk.clone()),
            end: Bound::Included(bk.clone()),
        };
        let mut inner = None;
        snap.visit(EDGES, &range, &mut |k, v| {
            // A format 2 block (a conversion still running) reads as well.
            let each = if is_current(v) { each } else { each_v2 };
            inner = Some(each(k, v, &mut |id, r| {
                records.insert(id.0 & ((1 << SHIFT) - 1), r.to_vec());
                Ok(())
            }));
            Ok(false)
        })?;
        inner.transpose()?;
        for (low, change) in changes {
            match change {
                Some(r) => records.insert(low, r),
                None => records.remove(&low),
            };
        }
        if records.is_empty() {
            batch.delete(EDGES, bk);
        } else {
            batch.put(EDGES, bk, encode(&records)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn blocks_hold_what_was_packed(ids in proptest::collection::btree_set(0u64..1000, 0..80), flip in any::<u8>(), at in any::<prop::sample::Index>()) {
            let g = GraphId(3);
            let mut run = plexus_kv::Run::new();
            let mut p = Packer::default();
            let record = |id: u64| {
                let mut r = Vec::new();
                join_key(format!("e{}", id / 3).as_bytes(), format!("r{id}").as_bytes(), &mut r);
                r
            };
            for id in &ids {
                p.add(g, EdgeId(*id), &record(*id), &mut run).unwrap();
            }
            p.finish(&mut run);
            let mut seen = Vec::new();
            let joined = |u: &[u8], r: &[u8]| {
                let mut out = Vec::new();
                join_key(u, r, &mut out);
                Ok(out)
            };
            for (k, v) in run.iter() {
                each(k, v, &mut |id, r| {
                    assert_eq!(r, record(id.0));
                    assert_eq!(find(v, id, true, joined).unwrap().as_deref(), Some(r));
                    seen.push(id.0);
                    Ok(())
                }).unwrap();
                let base = base_of(k).unwrap();
                for id in base..base + 64 {
                    let want = ids.contains(&id).then(|| record(id));
                    prop_assert_eq!(&find(v, EdgeId(id), true, joined).unwrap(), &want);
                    // Without the user ids, the same rest and no user id.
                    let rest = find(v, EdgeId(id), false, |u, r| Ok((u.to_vec(), r.to_vec())));
                    let want = want.map(|w| (Vec::new(), split_key(&w).unwrap().1.to_vec()));
                    prop_assert_eq!(rest.unwrap(), want);
                }
            }
            prop_assert_eq!(seen, ids.iter().copied().collect::<Vec<_>>());
            // Damage never panics.
            if let Some((k, v)) = run.iter().next() {
                let mut v = v.to_vec();
                let i = at.index(v.len());
                v[i] ^= flip;
                let _ = each(k, &v, &mut |_, _| Ok(()));
                let _ = find(&v, EdgeId(5), true, |_, _| Ok(()));
                let _ = Held::new(v.clone()).and_then(|mut h| h.get(5, true).map(|_| ()));
            }
        }
    }

    proptest! {
        /// Reads through the cache, in any order and repeated, find what
        /// reads of the block itself find: over up to 19 blocks, so blocks
        /// are dropped for newer ones and read again.
        #[test]
        fn the_cache_reads_what_the_blocks_hold(
            ids in proptest::collection::btree_set(0u64..1200, 0..400),
            reads in proptest::collection::vec(0u64..1220, 0..300),
        ) {
            let g = GraphId(2);
            let snap = packed(g, ids.iter().map(|&id| {
                let mut r = Vec::new();
                join_key(format!("e{id}").as_bytes(), &id.to_le_bytes(), &mut r);
                (id, r)
            }));
            let mut cache = BlockCache::default();
            // Each id twice in a row (the block kept), then its neighbour;
            // the rest alone, then the whole record, then the rest again
            // (the user ids rebuilt between).
            for (n, id) in reads.iter().flat_map(|&i| [i, i, i + 1]).enumerate() {
                let want = record(&*snap, g, EdgeId(id)).unwrap();
                prop_assert_eq!(want.is_some(), ids.contains(&id));
                if n % 3 == 1 {
                    let through = cache.read(&*snap, g, EdgeId(id), true, |user, rest| {
                        let mut r = Vec::new();
                        join_key(user, rest, &mut r);
                        Ok(r)
                    });
                    prop_assert_eq!(through.unwrap(), want);
                } else {
                    let rest = cache.read(&*snap, g, EdgeId(id), false, |user, rest| {
                        assert!(user.is_empty());
                        Ok(rest.to_vec())
                    });
                    let want = want.map(|w| split_key(&w).unwrap().1.to_vec());
                    prop_assert_eq!(rest.unwrap(), want);
                }
            }
        }
    }

    /// A memory store's snapshot of `records` (edge id, record) of graph
    /// `g`, packed into blocks.
    fn packed(g: GraphId, records: impl IntoIterator<Item = (u64, Vec<u8>)>) -> Box<dyn Snapshot> {
        let mut run = plexus_kv::Run::new();
        let mut p = Packer::default();
        for (id, r) in records {
            p.add(g, EdgeId(id), &r, &mut run).unwrap();
        }
        p.finish(&mut run);
        let ks: Vec<String> = (0..=EDGES.0).map(|k| format!("ks{k}")).collect();
        let names: Vec<&str> = ks.iter().map(String::as_str).collect();
        let kv = plexus_kv::open(
            plexus_kv::Backend::Memory,
            std::path::Path::new(""),
            &names,
            &plexus_kv::KvOptions::default(),
        )
        .unwrap();
        let mut batch = WriteBatch::new();
        for (k, v) in run.iter() {
            batch.put(EDGES, k.to_vec(), v.to_vec());
        }
        kv.write(batch).unwrap();
        kv.snapshot().unwrap()
    }

    /// A block too large to keep is read in place every time, whole
    /// records and rests alike.
    #[test]
    fn a_block_too_large_to_keep_is_read_in_place() {
        let g = GraphId(1);
        let records: Vec<Vec<u8>> = [10usize, CACHED_BLOCK_BYTES, 7]
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                let mut r = Vec::new();
                join_key(format!("e{i}").as_bytes(), &vec![i as u8; len], &mut r);
                r
            })
            .collect();
        let snap = packed(
            g,
            records
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, r)| (i as u64, r)),
        );
        let mut cache = BlockCache::default();
        for id in [0u64, 2, 1, 0, 3, 2] {
            let whole = cache.read(&*snap, g, EdgeId(id), true, |u, r| {
                let mut out = Vec::new();
                join_key(u, r, &mut out);
                Ok(out)
            });
            assert_eq!(whole.unwrap().as_ref(), records.get(id as usize));
            let rest = cache.read(&*snap, g, EdgeId(id), false, |_, r| Ok(r.len()));
            let want = records
                .get(id as usize)
                .map(|r| split_key(r).unwrap().1.len());
            assert_eq!(rest.unwrap(), want);
        }
        assert!(matches!(cache.blocks[0].state, State::Large));
    }

    #[test]
    fn records_loaded_together_share_their_user_ids() {
        let mut run = plexus_kv::Run::new();
        let mut p = Packer::default();
        let mut whole = 0;
        for id in 0..64u64 {
            let mut r = Vec::new();
            join_key(format!("e12345{id:02}").as_bytes(), &[7; 10], &mut r);
            whole += r.len();
            p.add(GraphId(1), EdgeId(id), &r, &mut run).unwrap();
        }
        p.finish(&mut run);
        let (_, v) = run.iter().next().unwrap();
        // Per record: low bits, one prefix byte, one or two bytes of user
        // id, the length and ten bytes: at most 15 of a whole record's 20.
        assert_eq!(whole, 64 * 20);
        assert!(v.len() <= 64 * 15 + 8, "{} of {whole}", v.len());
    }
}
