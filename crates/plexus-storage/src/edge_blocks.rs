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
/// rebuild only the records they keep.
fn walk(block: &[u8], f: &mut RecordVisitor<'_>) -> Result<()> {
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
        crate::prefix::next(&mut r, &mut user, false).map_err(bad)?;
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
    walk(block, &mut |low, user, rest| {
        join_key(user, rest, &mut record);
        f(EdgeId(base | low), &record)?;
        Ok(true)
    })
}

/// Calls `f` with each edge id a block holds, in order, without rebuilding
/// the records.
pub(crate) fn each_id(key: &[u8], block: &[u8], f: &mut dyn FnMut(EdgeId)) -> Result<()> {
    let base = base_of(key)?;
    walk(block, &mut |low, _, _| {
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
    let block = block_key(g, id);
    let range = KeyRange {
        start: Bound::Included(block.clone()),
        end: Bound::Included(block),
    };
    let mut record = Vec::with_capacity(64);
    let mut found = Ok(false);
    snap.visit(EDGES, &range, &mut |_, v| {
        found = find(v, id, &mut record);
        Ok(false)
    })?;
    Ok(found?.then_some(record))
}

/// The blocks a transaction may keep decoded at most this large: an edge
/// with a long vector property makes a block of megabytes.
const CACHED_BLOCK_BYTES: usize = 256 << 10;

/// A block's records, rebuilt into one buffer: each record's id low bits
/// and where it ends in `bytes`, in id order (one allocation per block,
/// not per record).
#[derive(Default)]
struct Records {
    ends: Vec<(u64, usize)>,
    bytes: Vec<u8>,
}

impl Records {
    fn get(&self, low: u64) -> Option<&[u8]> {
        let i = self.ends.binary_search_by_key(&low, |(l, _)| *l).ok()?;
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p].1);
        self.bytes.get(start..self.ends[i].1)
    }
}

/// The edge blocks a transaction read last (up to [`KEPT_BLOCKS`]), each
/// decoded once a second record of it is read. A delete of a document
/// reads its relationships in id order, each twice (its owners, then the
/// record it removes): 64 of them share a block, and each read walked half
/// the block after a seek. A node's relationships come in neighbour order,
/// their ids spread over a few blocks (LDBC's IS3 reads 228 `KNOWS` of one
/// person across four blocks, alternating): one block kept was dropped at
/// nearly every read, so each read walked its block again. The record read
/// last in a block is kept too, so reading one relationship's properties
/// one after another (`r.creationDate` as a sort key, then as a column)
/// copies that record instead of decoding its whole block. A transaction's
/// snapshot never changes, so what is kept stays right; its own writes are
/// read before it (`read.rs`).
#[derive(Default)]
pub(crate) struct BlockCache {
    /// Oldest first; the oldest goes when a new one comes past the limit.
    blocks: std::collections::VecDeque<Kept>,
}

/// Blocks a transaction keeps: with [`CACHED_BLOCK_BYTES`] each, at most
/// 2 MiB decoded.
const KEPT_BLOCKS: usize = 8;

struct Kept {
    key: Vec<u8>,
    /// The record read last in this block, by id (`None`: not there).
    last: Option<(EdgeId, Option<Vec<u8>>)>,
    /// The block's records, once decoded.
    records: Option<Records>,
}

impl BlockCache {
    /// [`record`], through the cache.
    pub(crate) fn record(
        &mut self,
        snap: &dyn Snapshot,
        g: GraphId,
        id: EdgeId,
    ) -> Result<Option<Vec<u8>>> {
        let block = block_key(g, id);
        let Some(kept) = self.blocks.iter_mut().find(|k| k.key == block) else {
            let found = record(snap, g, id)?;
            if self.blocks.len() == KEPT_BLOCKS {
                self.blocks.pop_front();
            }
            self.blocks.push_back(Kept {
                key: block,
                last: Some((id, found.clone())),
                records: None,
            });
            return Ok(found);
        };
        if let Some((last, found)) = &kept.last {
            if *last == id {
                return Ok(found.clone());
            }
        }
        if kept.records.is_none() {
            kept.records = decoded(snap, &kept.key)?;
        }
        let Some(records) = &kept.records else {
            return record(snap, g, id);
        };
        Ok(records.get(id.0 & ((1 << SHIFT) - 1)).map(<[u8]>::to_vec))
    }
}

/// Every record of the block at `key` in `snap` by id low bits, in order;
/// `None` for a block too large to keep.
fn decoded(snap: &dyn Snapshot, key: &[u8]) -> Result<Option<Records>> {
    let range = KeyRange {
        start: Bound::Included(key.to_vec()),
        end: Bound::Included(key.to_vec()),
    };
    let mut out = Ok(Some(Records::default()));
    snap.visit(EDGES, &range, &mut |_, v| {
        if v.len() > CACHED_BLOCK_BYTES {
            out = Ok(None);
            return Ok(false);
        }
        let mut records = Records::default();
        let mut record = Vec::new();
        out = walk(v, &mut |low, user, rest| {
            join_key(user, rest, &mut record);
            records.bytes.extend_from_slice(&record);
            records.ends.push((low, records.bytes.len()));
            Ok(true)
        })
        .map(|()| Some(records));
        Ok(false)
    })?;
    out
}

/// Puts the record of `id` from its block into `record`; false when the
/// block does not hold it.
pub(crate) fn find(block: &[u8], id: EdgeId, record: &mut Vec<u8>) -> Result<bool> {
    let want = id.0 & ((1 << SHIFT) - 1);
    let mut found = false;
    walk(block, &mut |low, user, rest| {
        if low == want {
            join_key(user, rest, record);
            found = true;
        }
        Ok(low < want)
    })?;
    Ok(found)
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
            let mut buf = Vec::new();
            for (k, v) in run.iter() {
                each(k, v, &mut |id, r| {
                    assert_eq!(r, record(id.0));
                    assert!(find(v, id, &mut buf).unwrap());
                    assert_eq!(buf, r);
                    seen.push(id.0);
                    Ok(())
                }).unwrap();
                let base = base_of(k).unwrap();
                for id in base..base + 64 {
                    let found = find(v, EdgeId(id), &mut buf).unwrap();
                    prop_assert_eq!(found, ids.contains(&id));
                    if found {
                        prop_assert_eq!(&buf, &record(id));
                    }
                }
            }
            prop_assert_eq!(seen, ids.iter().copied().collect::<Vec<_>>());
            // Damage never panics.
            if let Some((k, v)) = run.iter().next() {
                let mut v = v.to_vec();
                let i = at.index(v.len());
                v[i] ^= flip;
                let _ = each(k, &v, &mut |_, _| Ok(()));
                let _ = find(&v, EdgeId(5), &mut buf);
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
            let mut run = plexus_kv::Run::new();
            let mut p = Packer::default();
            for id in &ids {
                let mut r = Vec::new();
                join_key(format!("e{id}").as_bytes(), &id.to_le_bytes(), &mut r);
                p.add(g, EdgeId(*id), &r, &mut run).unwrap();
            }
            p.finish(&mut run);
            let ks: Vec<String> = (0..=EDGES.0).map(|k| format!("ks{k}")).collect();
            let names: Vec<&str> = ks.iter().map(String::as_str).collect();
            let kv = plexus_kv::open(
                plexus_kv::Backend::Memory,
                std::path::Path::new(""),
                &names,
                &plexus_kv::KvOptions::default(),
            ).unwrap();
            let mut batch = WriteBatch::new();
            for (k, v) in run.iter() {
                batch.put(EDGES, k.to_vec(), v.to_vec());
            }
            kv.write(batch).unwrap();
            let snap = kv.snapshot().unwrap();
            let mut cache = BlockCache::default();
            // Each id twice in a row (the record kept), then its
            // neighbour (the block decoded).
            for id in reads.iter().flat_map(|&i| [i, i, i + 1]) {
                let want = record(&*snap, g, EdgeId(id)).unwrap();
                prop_assert_eq!(want.is_some(), ids.contains(&id));
                prop_assert_eq!(cache.record(&*snap, g, EdgeId(id)).unwrap(), want);
            }
        }
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
