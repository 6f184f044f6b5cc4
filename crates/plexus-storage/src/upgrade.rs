//! Converting a store written by an older format, in place.
//!
//! Format 1 kept one adjacency key per edge and direction (the key a delta
//! has now, with the value of an added one), a degree counter per (node,
//! direction, type), a type index, one key per edge record and id map
//! values of 8 bytes big-endian. Format 2 packs the adjacency into blocks
//! (`adjacency.rs`) and edge records into blocks of 64 ids
//! (`edge_blocks.rs`), keeps no degree counters and no type index, and
//! writes id map values as varints. Format 3 packs the id maps, label
//! members and index entries into blocks of sorted keys (`packed.rs`) and
//! stores the user ids of an edge block's records prefix-compressed
//! (`edge_blocks.rs`). Each part converts in steps
//! of bounded size, each its own write, and every step leaves a store the
//! next run can finish: format 1's adjacency keys read as added deltas,
//! per-edge records merge into any block already written, and edge blocks
//! and id map blocks of this format are told from older ones by their
//! first bytes. The type
//! index is cleared and the format version written last, in one write.

use crate::adjacency::{self, Group, BLOCK_KEY_LEN};
use crate::edge_blocks;
use crate::error::{Result, StorageError};
use crate::ids::{EdgeId, GraphId};
use crate::keys::{ADJ, EDGES, META, META_FORMAT, STATS, TYPES_V1};
use crate::packed;
use crate::storage::FORMAT_VERSION;
use plexus_common::{read_u32, read_u64};
use plexus_kv::{KeyRange, KvStore, ScanOptions, WriteBatch};
use std::ops::Bound;

/// The stats kind of the degree counters of format 1.
const V1_STAT_DEGREE: u8 = 4;
/// Keys a conversion step reads before it writes what it has (smaller in
/// unit tests, so that small stores take many steps).
const STEP_KEYS: usize = if cfg!(test) { 5 } else { 200_000 };

/// What [`crate::Storage::upgrade`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpgradeReport {
    /// The format the store had.
    pub from: u32,
    /// The format it has now.
    pub to: u32,
    /// Adjacency blocks written.
    pub blocks: u64,
    /// Per-edge adjacency keys folded into them.
    pub entries: u64,
    /// Degree counters deleted.
    pub counters: u64,
    /// Edge records moved into blocks of consecutive ids, or rewritten in
    /// this format's block layout.
    pub edge_records: u64,
    /// Id map entries (user id → internal id) packed into blocks.
    pub id_values: u64,
    /// Label members and property index entries packed into blocks.
    pub index_entries: u64,
}

/// What an older format this build converts lacks, for the advice to
/// run `plexus upgrade`; `None` for a format it does not convert.
pub fn convertible(format: u32) -> Option<&'static str> {
    match format {
        1 => Some("adjacency not packed"),
        2 => Some("id maps not packed"),
        _ => None,
    }
}

/// The store's format version; `None` when it has none (not a database).
pub(crate) fn format_of(kv: &dyn KvStore) -> Result<Option<u32>> {
    let snap = kv.snapshot()?;
    snap.get(META, META_FORMAT)?
        .map(|v| read_u32(&v, 0).ok_or_else(|| StorageError::Corrupt("format version".into())))
        .transpose()
}

/// Converts `kv` to [`FORMAT_VERSION`]; `progress` hears the keys done so
/// far after each step.
pub(crate) fn upgrade(kv: &dyn KvStore, progress: &mut dyn FnMut(u64)) -> Result<UpgradeReport> {
    let from = format_of(kv)?.ok_or_else(|| {
        StorageError::Corrupt("the store has no Plexus format version (not a database?)".into())
    })?;
    let mut report = UpgradeReport {
        from,
        to: FORMAT_VERSION,
        ..Default::default()
    };
    match from {
        FORMAT_VERSION => return Ok(report),
        1 | 2 => {}
        v => {
            return Err(StorageError::Unsupported(format!(
                "cannot convert format version {v}; this build of Plexus converts versions 1 and 2 to {FORMAT_VERSION}"
            )))
        }
    }
    // Each part reports the keys of each step; `progress` hears the total.
    let mut done = 0u64;
    let mut step = |n: u64| {
        done += n;
        progress(done);
    };
    if from == 1 {
        pack_adjacency(kv, &mut report, &mut step)?;
        pack_edges(kv, &mut report, &mut step)?;
        drop_degree_counters(kv, &mut report, &mut step)?;
    }
    repack_edge_blocks(kv, &mut report, &mut step)?;
    pack_keyspaces(kv, &mut report, &mut step)?;
    let mut b = WriteBatch::new();
    // Format 1's type index: nothing reads it now. Every key starts with a
    // 4-byte graph id, so this range holds them all (LMDB refuses an empty
    // key as a bound).
    b.delete_range(TYPES_V1, vec![0], vec![0xff; 5]);
    b.put(META, META_FORMAT, FORMAT_VERSION.to_be_bytes().to_vec());
    kv.write(b)?;
    Ok(report)
}

/// Runs `step` on the range from the start of a keyspace, then again from
/// where each run says the next starts, until a run says it finished.
pub(crate) fn in_steps(
    mut step: impl FnMut(KeyRange) -> Result<Option<Bound<Vec<u8>>>>,
) -> Result<()> {
    let mut from: Bound<Vec<u8>> = Bound::Unbounded;
    loop {
        let range = KeyRange {
            start: from,
            end: Bound::Unbounded,
        };
        match step(range)? {
            Some(next) => from = next,
            None => return Ok(()),
        }
    }
}

/// Folds every group of the adjacency keyspace into its block, a step of
/// whole groups at a time.
fn pack_adjacency(
    kv: &dyn KvStore,
    report: &mut UpgradeReport,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    in_steps(|range| {
        let snap = kv.snapshot()?;
        let mut batch = WriteBatch::new();
        let mut head: Option<Vec<u8>> = None;
        let mut group = Group::default();
        let mut keys = 0usize;
        let mut last = None;
        for pair in snap.scan(ADJ, &range, ScanOptions::default()) {
            let (k, v) = pair?;
            let h = k
                .get(..BLOCK_KEY_LEN)
                .ok_or_else(|| StorageError::Corrupt("adjacency key".into()))?;
            if head.as_deref() != Some(h) {
                if let Some(done) = head.take() {
                    finish(&mut batch, &done, std::mem::take(&mut group), report);
                    // A step ends between groups, never inside one.
                    if keys >= STEP_KEYS {
                        last = Some(done);
                        break;
                    }
                }
                head = Some(h.to_vec());
            }
            if k.len() != BLOCK_KEY_LEN {
                batch.delete(ADJ, k.clone());
                report.entries += 1;
            }
            group.take(&k, &v, None, true)?;
            keys += 1;
        }
        if last.is_none() {
            if let Some(done) = head.take() {
                finish(&mut batch, &done, group, report);
            }
        }
        drop(snap);
        kv.write(batch)?;
        progress(keys as u64);
        // On past the last group written (its block sorts before every
        // key of the next group; its deltas are gone).
        Ok(last
            .and_then(|done| plexus_kv::prefix_successor(&done))
            .map(Bound::Included))
    })
}

fn finish(batch: &mut WriteBatch, head: &[u8], group: Group, report: &mut UpgradeReport) {
    let entries = group.into_entries();
    if entries.is_empty() {
        batch.delete(ADJ, head.to_vec());
        return;
    }
    let mut block = Vec::new();
    adjacency::encode(&entries, &mut block);
    batch.put(ADJ, head.to_vec(), block);
    report.blocks += 1;
}

/// Moves format 1's edge records (one key per edge) into blocks
/// (`edge_blocks.rs`), a step of whole blocks at a time, merging any block
/// an interrupted run already wrote.
fn pack_edges(
    kv: &dyn KvStore,
    report: &mut UpgradeReport,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    loop {
        let snap = kv.snapshot()?;
        let mut batch = WriteBatch::new();
        let mut keys = 0usize;
        let mut deletes = Vec::new();
        let mut last_block: Option<Vec<u8>> = None;
        for pair in snap.scan(EDGES, &KeyRange::all(), ScanOptions::default()) {
            let (k, v) = pair?;
            if k.len() != edge_blocks::EDGE_KEY_LEN {
                continue; // a block already
            }
            let id = read_u64(&k, 4).ok_or_else(|| StorageError::Corrupt("edge key".into()))?;
            let g =
                GraphId(read_u32(&k, 0).ok_or_else(|| StorageError::Corrupt("edge key".into()))?);
            let block = edge_blocks::block_key(g, EdgeId(id));
            if keys >= STEP_KEYS && last_block.as_ref() != Some(&block) {
                break;
            }
            last_block = Some(block);
            // The per-edge key goes; its record is put as a transaction's
            // per-edge write would be, and settled into its block below.
            deletes.push(k.clone());
            batch.put(EDGES, k, v);
            keys += 1;
        }
        if keys == 0 {
            return Ok(());
        }
        edge_blocks::settle(&*snap, &mut batch)?;
        drop(snap);
        for k in deletes {
            batch.delete(EDGES, k);
        }
        kv.write(batch)?;
        report.edge_records += keys as u64;
        progress(keys as u64);
    }
}

/// Rewrites format 2's edge blocks (whole records) in this format's layout
/// (user ids prefix-compressed), a step at a time; blocks already in it
/// are left as they are.
fn repack_edge_blocks(
    kv: &dyn KvStore,
    report: &mut UpgradeReport,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    in_steps(|range| {
        let snap = kv.snapshot()?;
        let mut batch = WriteBatch::new();
        let mut records = 0u64;
        let mut last = None;
        for pair in snap.scan(EDGES, &range, ScanOptions::default()) {
            let (k, v) = pair?;
            if !edge_blocks::is_current(&v) {
                let (block, n) = edge_blocks::convert_v2(&k, &v)?;
                batch.put(EDGES, k.clone(), block);
                records += n;
            }
            last = Some(k);
            if records as usize >= STEP_KEYS {
                break;
            }
        }
        drop(snap);
        if records > 0 {
            kv.write(batch)?;
            report.edge_records += records;
            progress(records);
        }
        Ok(last
            .filter(|_| records as usize >= STEP_KEYS)
            .map(Bound::Excluded))
    })
}

/// Packs the single entries of the id maps, label members and index
/// entries into blocks (`packed.rs`), a step at a time.
fn pack_keyspaces(
    kv: &dyn KvStore,
    report: &mut UpgradeReport,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    for ks in packed::PACKED {
        let n = packed::pack_singles(kv, ks, STEP_KEYS, progress)?;
        if packed::kind(ks) == Some(packed::Kind::Ids) {
            report.id_values += n;
        } else {
            report.index_entries += n;
        }
    }
    Ok(())
}

/// Deletes format 1's degree counters, a step at a time.
fn drop_degree_counters(
    kv: &dyn KvStore,
    report: &mut UpgradeReport,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    loop {
        let snap = kv.snapshot()?;
        let mut batch = WriteBatch::new();
        for pair in snap.scan(STATS, &KeyRange::all(), ScanOptions::default()) {
            let (k, _) = pair?;
            // graph (4) | kind (1) | node (8) | direction (1) | type (4)
            if k.len() == 18 && k[4] == V1_STAT_DEGREE {
                batch.delete(STATS, k);
                if batch.ops.len() >= STEP_KEYS {
                    break;
                }
            }
        }
        drop(snap);
        let n = batch.ops.len();
        if n == 0 {
            return Ok(());
        }
        kv.write(batch)?;
        report.counters += n as u64;
        progress(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, GraphRead, Props, Storage};
    use plexus_kv::Snapshot;
    use std::sync::Arc;

    /// Rewrites a store of this format as format 1 laid it out: one
    /// adjacency key per edge and direction, one key per edge record.
    fn to_format_1(kv: &dyn KvStore) {
        let snap = kv.snapshot().unwrap();
        let mut b = WriteBatch::new();
        for pair in snap.scan(ADJ, &KeyRange::all(), ScanOptions::default()) {
            let (k, v) = pair.unwrap();
            b.delete(ADJ, k.clone());
            let mut es = Vec::new();
            adjacency::decode(&v, None, &mut es).unwrap();
            for e in es {
                b.put(ADJ, adjacency::delta_key_under(&k, e), Vec::new());
            }
        }
        for pair in snap.scan(EDGES, &KeyRange::all(), ScanOptions::default()) {
            let (k, v) = pair.unwrap();
            b.delete(EDGES, k.clone());
            edge_blocks::each(&k, &v, &mut |id, r| {
                let mut ek = k[..4].to_vec();
                ek.extend_from_slice(&id.0.to_be_bytes());
                b.put(EDGES, ek, r.to_vec());
                Ok(())
            })
            .unwrap();
        }
        drop(snap);
        kv.write(b).unwrap();
        unpack(kv, |id| id.to_be_bytes().to_vec());
        let mut b = WriteBatch::new();
        b.put(META, META_FORMAT, 1u32.to_be_bytes().to_vec());
        kv.write(b).unwrap();
    }

    /// Rewrites the packed keyspaces as one entry per key, an id map's
    /// value `value(id)`.
    fn unpack(kv: &dyn KvStore, value: fn(u64) -> Vec<u8>) {
        let snap = kv.snapshot().unwrap();
        let view = packed::Unpacked(kv.snapshot().unwrap());
        for ks in packed::PACKED {
            let mut b = WriteBatch::new();
            for pair in snap.scan(ks, &KeyRange::all(), ScanOptions::default()) {
                b.delete(ks, pair.unwrap().0);
            }
            kv.write(b).unwrap();
            let mut b = WriteBatch::new();
            for pair in view.scan(ks, &KeyRange::all(), ScanOptions::default()) {
                let (k, v) = pair.unwrap();
                let v = match packed::kind(ks) {
                    Some(packed::Kind::Ids) => value(crate::keys::read_id_value(&v).unwrap()),
                    _ => v,
                };
                b.put(ks, k, v);
            }
            kv.write(b).unwrap();
        }
    }

    /// Rewrites a store of this format as format 2 laid it out: one entry
    /// per user id, its id a varint.
    fn to_format_2(kv: &dyn KvStore) {
        unpack(kv, crate::keys::id_value);
        let snap = kv.snapshot().unwrap();
        let mut b = WriteBatch::new();
        // Edge blocks of whole records: `varint low, varint length, record`.
        for pair in snap.scan(EDGES, &KeyRange::all(), ScanOptions::default()) {
            let (k, v) = pair.unwrap();
            let mut old = Vec::new();
            edge_blocks::each(&k, &v, &mut |id, r| {
                plexus_common::write_varint(&mut old, id.0 & 63);
                plexus_common::write_varint(&mut old, r.len() as u64);
                old.extend_from_slice(r);
                Ok(())
            })
            .unwrap();
            b.put(EDGES, k, old);
        }
        drop(snap);
        b.put(META, META_FORMAT, 2u32.to_be_bytes().to_vec());
        kv.write(b).unwrap();
    }

    /// A store whose writes fail once `left` reaches 0, as a crash or a full
    /// disk would stop a conversion between two of its steps.
    struct Failing {
        inner: Arc<dyn KvStore>,
        left: std::sync::atomic::AtomicI64,
    }

    impl KvStore for Failing {
        fn snapshot(&self) -> plexus_kv::Result<Box<dyn plexus_kv::Snapshot>> {
            self.inner.snapshot()
        }
        fn write(&self, batch: WriteBatch) -> plexus_kv::Result<()> {
            if self.left.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) <= 0 {
                return Err(plexus_kv::KvError::Io(std::io::Error::other("stopped")));
            }
            self.inner.write(batch)
        }
        fn bulk_append(
            &self,
            ks: plexus_kv::Ks,
            pairs: &mut dyn Iterator<Item = plexus_kv::KvPair>,
        ) -> plexus_kv::Result<u64> {
            self.inner.bulk_append(ks, pairs)
        }
        fn disk_size(&self) -> plexus_kv::Result<u64> {
            self.inner.disk_size()
        }
        fn stored_sizes(&self) -> plexus_kv::Result<Vec<u64>> {
            self.inner.stored_sizes()
        }
        fn backend(&self) -> plexus_kv::Backend {
            self.inner.backend()
        }
    }

    /// A memory store with a small graph, laid out as `format`, and the
    /// neighbours of its nodes as this format read them before.
    fn old_store(
        format: u32,
    ) -> (
        Arc<dyn KvStore>,
        Vec<crate::NodeId>,
        Vec<Vec<crate::Neighbor>>,
    ) {
        let kv: Arc<dyn KvStore> = plexus_kv::open(
            plexus_kv::Backend::Memory,
            std::path::Path::new(""),
            crate::KEYSPACE_NAMES,
            &Default::default(),
        )
        .unwrap();
        let s = Storage::open(kv.clone()).unwrap();
        let mut t = s.write("default").unwrap();
        let nodes: Vec<_> = (0..30)
            .map(|i| {
                t.create_node(Some(&format!("n{i}")), &[], &Props::new())
                    .unwrap()
            })
            .collect();
        for i in 0..200 {
            let (a, b) = (nodes[i % 30], nodes[(i * 7 + 3) % 30]);
            let key = format!("e{i}");
            let key = (i % 2 == 0).then_some(key.as_str());
            t.create_edge(key, a, b, ["A", "B"][i % 2], &Props::new())
                .unwrap();
        }
        t.commit().unwrap();
        let r = s.read("default").unwrap();
        let before = nodes
            .iter()
            .map(|n| r.neighbors(*n, Direction::Both, None).unwrap())
            .collect();
        drop((r, s));
        match format {
            1 => to_format_1(&*kv),
            _ => to_format_2(&*kv),
        }
        (kv, nodes, before)
    }

    fn converted_as_before(
        kv: Arc<dyn KvStore>,
        nodes: &[crate::NodeId],
        before: &[Vec<crate::Neighbor>],
    ) {
        let s = Storage::open(kv).unwrap();
        let r = s.read("default").unwrap();
        let after: Vec<_> = nodes
            .iter()
            .map(|n| r.neighbors(*n, Direction::Both, None).unwrap())
            .collect();
        assert_eq!(after, before);
        for (i, n) in nodes.iter().enumerate() {
            assert_eq!(r.node_id(&format!("n{i}")).unwrap(), Some(*n));
        }
        for i in 0..200 {
            let e = r.edge_id(&format!("e{i}")).unwrap();
            assert_eq!(e.is_some(), i % 2 == 0, "e{i}");
        }
        assert_eq!(r.node_id("n30").unwrap(), None);
        let check = s.check_integrity("default").unwrap();
        assert!(check.is_ok(), "{:?}", check.problems);
    }

    /// Stopped after any of its steps, a conversion run again finishes it.
    #[test]
    fn a_conversion_stopped_at_any_step_finishes_when_run_again() {
        for format in [1, 2] {
            let (kv, _, _) = old_store(format);
            let mut writes = 0;
            upgrade(&*kv, &mut |_| writes += 1).unwrap();
            for stop in 0..writes + 1 {
                let (kv, nodes, before) = old_store(format);
                let failing = Failing {
                    inner: kv.clone(),
                    left: std::sync::atomic::AtomicI64::new(stop),
                };
                assert!(
                    upgrade(&failing, &mut |_| {}).is_err(),
                    "stopped after {stop} writes"
                );
                assert!(Storage::open(kv.clone()).is_err(), "still format {format}");
                let report = upgrade(&*kv, &mut |_| {}).unwrap();
                assert_eq!(report.from, format);
                converted_as_before(kv, &nodes, &before);
            }
        }
    }

    #[test]
    fn a_format_1_layout_converts_in_many_steps() {
        let (kv, nodes, before) = old_store(1);
        assert!(Storage::open(kv.clone()).is_err());
        let mut steps = 0;
        let report = upgrade(&*kv, &mut |_| steps += 1).unwrap();
        assert_eq!(
            (
                report.from,
                report.edge_records,
                report.entries,
                report.id_values
            ),
            (1, 200, 400, 130)
        );
        assert!(steps > 20, "{steps} steps");
        converted_as_before(kv, &nodes, &before);
    }

    #[test]
    fn a_format_2_layout_converts_its_id_maps_and_edge_blocks() {
        let (kv, nodes, before) = old_store(2);
        let e = Storage::open(kv.clone()).err().unwrap();
        assert!(e.to_string().contains("format version 2"), "{e}");
        let mut steps = 0;
        let report = upgrade(&*kv, &mut |_| steps += 1).unwrap();
        assert_eq!(
            (
                report.from,
                report.edge_records,
                report.entries,
                report.id_values
            ),
            (2, 200, 0, 130)
        );
        // Four edge blocks, then the id maps five entries a step.
        assert_eq!(steps, 4 + 130usize.div_ceil(STEP_KEYS), "{steps} steps");
        converted_as_before(kv, &nodes, &before);
    }
}
