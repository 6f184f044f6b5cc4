//! The in-memory backend: copy-on-write B-trees, for tests and scratch work.
//!
//! A snapshot shares the maps of the moment it was taken; a write clones
//! only the keyspaces it touches while a snapshot still holds them.

use crate::batch::add_counter;
use crate::{
    Backend, KeyRange, Ks, KvError, KvIter, KvPair, KvStore, Op, PairVisitor, Result, ScanOptions,
    Snapshot, SortedCheck, WriteBatch,
};
use key::Key;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, RwLock};

mod key;

type Map = BTreeMap<Key, Vec<u8>>;

pub(crate) struct MemoryStore {
    maps: RwLock<Vec<Arc<Map>>>,
}

struct MemorySnapshot {
    maps: Vec<Arc<Map>>,
}

impl MemoryStore {
    pub(crate) fn new(keyspaces: usize) -> Self {
        MemoryStore {
            maps: RwLock::new((0..keyspaces).map(|_| Arc::new(Map::new())).collect()),
        }
    }
}

fn map_mut(maps: &mut [Arc<Map>], ks: Ks) -> Result<&mut Map> {
    maps.get_mut(ks.0)
        .map(Arc::make_mut)
        .ok_or(KvError::NoSuchKeyspace(ks.0))
}

impl KvStore for MemoryStore {
    fn snapshot(&self) -> Result<Box<dyn Snapshot>> {
        let maps = self.maps.read().unwrap_or_else(|p| p.into_inner()).clone();
        Ok(Box::new(MemorySnapshot { maps }))
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        let mut guard = self.maps.write().unwrap_or_else(|p| p.into_inner());
        // The only way an op can fail is a keyspace that does not exist:
        // check them all first, so that a failing batch leaves nothing and
        // the ops can then work on the maps in place (a map is copied only
        // while a snapshot still shares it).
        let n = guard.len();
        if let Some(ks) = batch.ops.iter().map(Op::keyspace).find(|ks| ks.0 >= n) {
            return Err(KvError::NoSuchKeyspace(ks.0));
        }
        let maps = &mut *guard;
        for op in batch.ops {
            match op {
                Op::Put { ks, key, value } => {
                    map_mut(maps, ks)?.insert(Key::from(key), value);
                }
                Op::Delete { ks, key } => {
                    map_mut(maps, ks)?.remove(key.as_slice());
                }
                Op::DeleteRange { ks, start, end } => {
                    let m = map_mut(maps, ks)?;
                    let range = (Bound::Included(&start[..]), Bound::Excluded(&end[..]));
                    let doomed: Vec<Key> =
                        m.range::<[u8], _>(range).map(|(k, _)| k.clone()).collect();
                    doomed.iter().for_each(|k| {
                        m.remove(k);
                    });
                }
                Op::Add { ks, key, delta } => {
                    let m = map_mut(maps, ks)?;
                    match add_counter(m.get(key.as_slice()).map(Vec::as_slice), delta) {
                        Some(v) => m.insert(Key::from(key), v.to_vec()),
                        None => m.remove(key.as_slice()),
                    };
                }
            }
        }
        Ok(())
    }

    fn bulk_append(&self, ks: Ks, pairs: &mut dyn Iterator<Item = KvPair>) -> Result<u64> {
        let mut check = SortedCheck::new(pairs);
        let mut batch = WriteBatch::new();
        for (k, v) in &mut check {
            batch.put(ks, k, v);
        }
        if check.out_of_order {
            return Err(KvError::NotSorted);
        }
        let n = batch.len() as u64;
        self.write(batch)?;
        Ok(n)
    }

    fn disk_size(&self) -> Result<u64> {
        Ok(0)
    }

    fn stored_sizes(&self) -> Result<Vec<u64>> {
        let maps = self.maps.read().unwrap_or_else(|p| p.into_inner());
        Ok(maps
            .iter()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.as_slice().len() + v.len()) as u64)
                    .sum()
            })
            .collect())
    }

    fn backend(&self) -> Backend {
        Backend::Memory
    }
}

impl Snapshot for MemorySnapshot {
    fn get(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let m = self.maps.get(ks.0).ok_or(KvError::NoSuchKeyspace(ks.0))?;
        Ok(find(m, key).cloned())
    }

    fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_> {
        let Some(m) = self.maps.get(ks.0) else {
            return Box::new(std::iter::once(Err(KvError::NoSuchKeyspace(ks.0))));
        };
        if range.is_empty() {
            return Box::new(std::iter::empty());
        }
        let r = m.range::<[u8], _>(range.as_slices());
        let limit = opts.limit.unwrap_or(usize::MAX);
        let owned = |(k, v): (&Key, &Vec<u8>)| Ok((k.as_slice().to_vec(), v.clone()));
        if opts.reverse {
            Box::new(r.rev().take(limit).map(owned))
        } else {
            Box::new(r.take(limit).map(owned))
        }
    }

    // The borrowing reads lend the map's own bytes, as LMDB lends its
    // pages: the defaults go through `get` and `scan`, which copy every
    // key and value (an adjacency block read for its count, a hub's block
    // read for one neighbour).
    fn get_with(&self, ks: Ks, key: &[u8], f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        let m = self.maps.get(ks.0).ok_or(KvError::NoSuchKeyspace(ks.0))?;
        match find(m, key) {
            Some(v) => f(v).map(|()| true),
            None => Ok(false),
        }
    }

    fn visit(&self, ks: Ks, range: &KeyRange, f: &mut PairVisitor<'_>) -> Result<()> {
        self.visit_in(ks, range, false, f)
    }

    fn visit_rev(&self, ks: Ks, range: &KeyRange, f: &mut PairVisitor<'_>) -> Result<()> {
        self.visit_in(ks, range, true, f)
    }

    // One search for the pair, without building the range the default
    // visits backwards (two keys copied, an iterator boxed): a packed
    // index's equality seek starts with a floor.
    fn floor(&self, ks: Ks, min: &[u8], key: &[u8], f: &mut PairVisitor<'_>) -> Result<()> {
        let m = self.maps.get(ks.0).ok_or(KvError::NoSuchKeyspace(ks.0))?;
        let found = match Key::inline(key) {
            Some(k) => m.range(..=k).next_back(),
            None => m
                .range::<[u8], _>((Bound::Unbounded, Bound::Included(key)))
                .next_back(),
        };
        if let Some((k, v)) = found.filter(|(k, _)| k.as_slice() >= min) {
            f(k.as_slice(), v)?;
        }
        Ok(())
    }
}

/// The value of `key`: searched as an inline [`Key`] when it is short
/// enough, whose comparisons are cheaper than the bytes'.
fn find<'m>(m: &'m Map, key: &[u8]) -> Option<&'m Vec<u8>> {
    match Key::inline(key) {
        Some(k) => m.get(&k),
        None => m.get(key),
    }
}

/// A range's bound as an inline [`Key`] to search with (see [`find`]);
/// `None` when it is too long to be one.
fn probe(b: Bound<&[u8]>) -> Option<Bound<Key>> {
    match b {
        Bound::Included(s) => Key::inline(s).map(Bound::Included),
        Bound::Excluded(s) => Key::inline(s).map(Bound::Excluded),
        Bound::Unbounded => Some(Bound::Unbounded),
    }
}

type Pairs<'m> = Box<dyn Iterator<Item = (&'m Key, &'m Vec<u8>)> + 'm>;

/// The pairs from `start` on (forward) or up to `end` (backward), the
/// other end left open.
fn pairs_from<'m>(m: &'m Map, start: Bound<&[u8]>, end: Bound<&[u8]>, reverse: bool) -> Pairs<'m> {
    match (reverse, probe(if reverse { end } else { start })) {
        (false, Some(s)) => Box::new(m.range((s, Bound::Unbounded))),
        (false, None) => Box::new(m.range::<[u8], _>((start, Bound::Unbounded))),
        (true, Some(e)) => Box::new(m.range((Bound::Unbounded, e)).rev()),
        (true, None) => Box::new(m.range::<[u8], _>((Bound::Unbounded, end)).rev()),
    }
}

/// Whether `key` is at or after a range's `start`.
fn after_start(start: Bound<&[u8]>, key: &[u8]) -> bool {
    match start {
        Bound::Included(s) => key >= s,
        Bound::Excluded(s) => key > s,
        Bound::Unbounded => true,
    }
}

/// Whether `key` is at or before a range's `end`.
fn before_end(end: Bound<&[u8]>, key: &[u8]) -> bool {
    match end {
        Bound::Included(e) => key <= e,
        Bound::Excluded(e) => key < e,
        Bound::Unbounded => true,
    }
}

impl MemorySnapshot {
    fn visit_in(
        &self,
        ks: Ks,
        range: &KeyRange,
        reverse: bool,
        f: &mut PairVisitor<'_>,
    ) -> Result<()> {
        let m = self.maps.get(ks.0).ok_or(KvError::NoSuchKeyspace(ks.0))?;
        if range.is_empty() {
            return Ok(());
        }
        // `BTreeMap::range` seeks both of its ends before the first pair,
        // each a descent comparing keys on the way; a visit mostly stops
        // after a few pairs (an adjacency group, an index hit), so it seeks
        // only the end it starts from and checks the other per pair.
        let (start, end) = range.as_slices();
        for (k, v) in pairs_from(m, start, end, reverse) {
            let k = k.as_slice();
            let beyond = match reverse {
                true => !after_start(start, k),
                false => !before_end(end, k),
            };
            if beyond || !f(k, v)? {
                break;
            }
        }
        Ok(())
    }
}
