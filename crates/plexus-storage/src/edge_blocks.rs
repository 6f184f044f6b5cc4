//! Edge records packed by id: one value holds the records of up to 64
//! consecutive edge ids.
//!
//! An LMDB entry costs its key and about ten bytes of header: with a
//! 12-byte key per edge, that was 22 of the 50 bytes an edge record took.
//! So the `edges` keyspace holds *blocks*, key `g|id >> 6|0` (13 bytes:
//! longer than a per-edge key, so the two never meet), value, per record
//! in id order, `varint (id & 63), varint length, record`.
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
use plexus_common::{read_u32, read_u64, write_varint, Reader};
use plexus_kv::{KeyRange, Op, Snapshot, WriteBatch};
use std::collections::BTreeMap;
use std::ops::Bound;

const SHIFT: u32 = 6;
/// The length of a block key: graph (4), block number (8), a zero.
pub(crate) const BLOCK_KEY_LEN: usize = 13;
/// The length of a per-edge key, as transactions write them.
pub(crate) const EDGE_KEY_LEN: usize = 12;

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

/// Calls `f` with each record of a block, in id order.
pub(crate) fn each(
    key: &[u8],
    block: &[u8],
    f: &mut dyn FnMut(EdgeId, &[u8]) -> Result<()>,
) -> Result<()> {
    let base = base_of(key)?;
    let bad = |_| corrupt("record");
    let mut r = Reader::new(block);
    let mut last = None;
    while !r.is_empty() {
        let low = r.varint().map_err(bad)?;
        if low >> SHIFT != 0 || last.is_some_and(|l| l >= low) {
            return Err(corrupt("record order"));
        }
        last = Some(low);
        let len = r.len().map_err(bad)?;
        f(EdgeId(base | low), r.bytes(len).map_err(bad)?)?;
    }
    Ok(())
}

/// The record of `id` in its block, if there.
pub(crate) fn find(block: &[u8], id: EdgeId) -> Result<Option<&[u8]>> {
    let want = id.0 & ((1 << SHIFT) - 1);
    let bad = |_| corrupt("record");
    let mut r = Reader::new(block);
    while !r.is_empty() {
        let low = r.varint().map_err(bad)?;
        let len = r.len().map_err(bad)?;
        let bytes = r.bytes(len).map_err(bad)?;
        if low == want {
            return Ok(Some(bytes));
        }
        if low > want {
            break;
        }
    }
    Ok(None)
}

/// Packs records, given by id low bits in ascending order, into a block.
fn encode(records: &BTreeMap<u64, Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::with_capacity(records.values().map(|r| r.len() + 3).sum());
    for (low, r) in records {
        write_varint(&mut out, *low);
        write_varint(&mut out, r.len() as u64);
        out.extend_from_slice(r);
    }
    out
}

/// Appends records to blocks as a bulk load assigns ids, in id order.
#[derive(Default)]
pub(crate) struct Packer {
    key: Vec<u8>,
    block: Vec<u8>,
}

impl Packer {
    /// Adds the record of `id`, which is larger than every id added before.
    pub fn add(&mut self, g: GraphId, id: EdgeId, record: &[u8], run: &mut plexus_kv::Run) {
        let key = block_key(g, id);
        if key != self.key {
            self.finish(run);
            self.key = key;
        }
        write_varint(&mut self.block, id.0 & ((1 << SHIFT) - 1));
        write_varint(&mut self.block, record.len() as u64);
        self.block.extend_from_slice(record);
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
            batch.put(EDGES, bk, encode(&records));
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
            for id in &ids {
                p.add(g, EdgeId(*id), format!("r{id}").as_bytes(), &mut run);
            }
            p.finish(&mut run);
            let mut seen = Vec::new();
            for (k, v) in run.iter() {
                each(k, v, &mut |id, r| {
                    assert_eq!(r, format!("r{}", id.0).as_bytes());
                    assert_eq!(find(v, id).unwrap(), Some(r));
                    seen.push(id.0);
                    Ok(())
                }).unwrap();
                let base = base_of(k).unwrap();
                for id in base..base + 64 {
                    let want = format!("r{id}");
                    let want = ids.contains(&id).then_some(want.as_bytes());
                    prop_assert_eq!(find(v, EdgeId(id)).unwrap(), want);
                }
            }
            prop_assert_eq!(seen, ids.iter().copied().collect::<Vec<_>>());
            // Damage never panics.
            if let Some((k, v)) = run.iter().next() {
                let mut v = v.to_vec();
                let i = at.index(v.len());
                v[i] ^= flip;
                let _ = each(k, &v, &mut |_, _| Ok(()));
                let _ = find(&v, EdgeId(5));
            }
        }
    }
}
