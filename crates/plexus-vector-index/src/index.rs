//! One vector index's live state: an HNSW graph over slots, and for each
//! slot the node it holds and the index sequence numbers between which it
//! is that node's vector (`born` ≤ seq < `died`).
//!
//! A transaction that writes a vector reserves a new slot and writes the
//! `v` entry (`layout.rs`); its commit publishes the slot (stores the
//! vector, stamps `born`, stamps `died` on the node's old slot) and then,
//! outside every lock, links it into the graph. Until linked, a published
//! slot is *pending* and searches score it exactly, so nothing committed is
//! ever missed. Slots are never reused: a replaced or deleted vector stays
//! as a waypoint, and a rolled-back one stays a hole nobody links.

use crate::config::{vector_of, Config};
use crate::error::VectorIndexError;
use crate::layout::*;
use plexus_storage::{Cause, IndexEntries, IndexInfo, MaintainedIndex, NodeId, Staged};
use plexus_vector::{prepare, Codes, Hnsw, Scratch};
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};

/// Not yet (born) or not ever (died).
const NEVER: u64 = u64::MAX;

/// Linking this many slots or more at once uses every core.
const PARALLEL_LINKS: usize = 256;

/// What a transaction's write of one node's vector leaves for its commit.
pub(crate) struct Change {
    node: u64,
    /// The new slot and its vector as stored (`Codes::encode`: half the
    /// bytes of the f32 vector under f16, for commits of millions).
    new: Option<(u32, Vec<u8>)>,
    /// The slot the node's vector had before, if any.
    old: Option<u32>,
}

struct Inner {
    hnsw: Hnsw,
    born: Vec<u64>,
    died: Vec<u64>,
    node: Vec<u64>,
    /// Each node's slots, oldest first (one per vector it has had that a
    /// snapshot may see): for searches among given nodes.
    by_node: std::collections::HashMap<u64, Vec<u32>>,
}

impl Inner {
    fn ensure(&mut self, slot: u32) {
        let n = slot as usize + 1;
        if self.born.len() < n {
            self.born.resize(n, NEVER);
            self.died.resize(n, NEVER);
            self.node.resize(n, 0);
        }
    }

    fn visible(&self, slot: u32, seq: u64) -> bool {
        let s = slot as usize;
        s < self.born.len() && self.born[s] <= seq && seq < self.died[s]
    }
}

/// A vector index shared by every transaction of a store.
pub struct VectorIndex {
    config: Config,
    inner: RwLock<Inner>,
    /// The next slot a write reserves (u64, so that running out shows).
    next_slot: AtomicU64,
    /// Published, not linked yet.
    pending: Mutex<BTreeSet<u32>>,
    linked_since_checkpoint: AtomicUsize,
    /// Turns prepared vectors into the stored bytes.
    encoder: Codes,
}

fn downcast(s: &Staged) -> Option<&Change> {
    s.downcast_ref::<Change>()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl VectorIndex {
    fn empty(config: Config) -> VectorIndex {
        VectorIndex {
            config,
            inner: RwLock::new(Inner {
                hnsw: Hnsw::new(config.metric, config.dim, config.precision, config.params),
                born: Vec::new(),
                died: Vec::new(),
                node: Vec::new(),
                by_node: Default::default(),
            }),
            next_slot: AtomicU64::new(0),
            pending: Mutex::default(),
            linked_since_checkpoint: AtomicUsize::new(0),
            encoder: Codes::new(config.metric, config.dim, config.precision),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The state of an index from its stored entries (in key order).
    pub fn load(
        info: &IndexInfo,
        entries: &mut dyn Iterator<Item = plexus_storage::Result<(Vec<u8>, Vec<u8>)>>,
    ) -> Result<VectorIndex, VectorIndexError> {
        let config = Config::from_options(&info.options)?;
        let index = VectorIndex::empty(config);
        let mut links: BTreeMap<u32, Vec<Vec<u32>>> = BTreeMap::new();
        let mut unlinked = Vec::new();
        {
            let mut inner = index.write();
            for e in entries {
                let (k, v) = e?;
                let (tag, n) = read_key(&k)?;
                let (slot, code, node) = match tag {
                    LINKS => {
                        links.insert(n as u32, decode_links(&v)?);
                        continue;
                    }
                    VECTOR => {
                        let (slot, code) = read_vector_value(&v)?;
                        (slot, code, Some(n))
                    }
                    _ => (n as u32, &v[..], None),
                };
                if inner.born.get(slot as usize).is_some_and(|b| *b != NEVER) {
                    return Err(VectorIndexError::Corrupt(format!(
                        "slot {slot} stored twice"
                    )));
                }
                inner.hnsw.place_encoded(slot, code)?;
                inner.ensure(slot);
                inner.born[slot as usize] = 0;
                match node {
                    Some(node) => {
                        inner.node[slot as usize] = node;
                        inner.by_node.entry(node).or_default().push(slot);
                        if !links.contains_key(&slot) {
                            unlinked.push(slot);
                        }
                    }
                    None => inner.died[slot as usize] = 0,
                }
            }
            for (slot, layers) in &links {
                if inner.born.get(*slot as usize).is_some_and(|b| *b != NEVER) {
                    inner.hnsw.restore_links(*slot, layers);
                }
            }
            index.next_slot.store(inner.hnsw.len() as u64, Relaxed);
        }
        // Vectors committed after the last checkpoint.
        lock(&index.pending).extend(unlinked.iter().copied());
        index.link(&unlinked);
        Ok(index)
    }

    /// A new slot for a vector being written.
    fn reserve(&self) -> Result<u32, VectorIndexError> {
        let slot = self.next_slot.fetch_add(1, Relaxed);
        u32::try_from(slot).map_err(|_| VectorIndexError::Vector(plexus_vector::VectorError::Full))
    }

    fn stage_change(
        &self,
        entries: &mut IndexEntries<'_>,
        node: NodeId,
        new: Option<&plexus_common::Value>,
    ) -> Result<Change, VectorIndexError> {
        let new = match new {
            Some(v) => {
                let q = prepare(self.config.metric, self.config.dim, &vector_of(v)?)?;
                Some((self.reserve()?, self.encoder.encode(&q)))
            }
            None => None,
        };
        let key = vector_key(node.0);
        let old = match entries.get(&key)? {
            Some(b) => {
                let (slot, code) = read_vector_value(&b)?;
                entries.put(&slot_key(WAYPOINT, slot), code.to_vec());
                Some(slot)
            }
            None => None,
        };
        match &new {
            Some((slot, code)) => entries.put(&key, vector_value(*slot, code)),
            None => entries.delete(&key),
        }
        Ok(Change {
            node: node.0,
            new,
            old,
        })
    }

    /// Links slots into the graph (on every core when there are many) and
    /// takes them off the pending list.
    fn link(&self, slots: &[u32]) {
        if slots.is_empty() {
            return;
        }
        let next = AtomicUsize::new(0);
        let work = || {
            let mut s = Scratch::default();
            loop {
                let i = next.fetch_add(1, Relaxed);
                let Some(&slot) = slots.get(i) else { break };
                // A read lock per slot, so that commits (which publish under
                // the write lock) wait for one link, not for all of them.
                self.read().hnsw.link_slot(slot, &mut s);
            }
        };
        let threads = if slots.len() >= PARALLEL_LINKS {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            1
        };
        if threads > 1 {
            std::thread::scope(|sc| {
                for _ in 0..threads {
                    sc.spawn(work);
                }
            });
        } else {
            work();
        }
        let mut pending = lock(&self.pending);
        for s in slots {
            pending.remove(s);
        }
        self.linked_since_checkpoint.fetch_add(slots.len(), Relaxed);
    }

    /// The `k` nodes nearest `query` that a transaction at index sequence
    /// `seq` sees (with its own changes `own`), that `filter` passes,
    /// nearest first, with their distances. Exactly `min(k, passing)`.
    pub fn search(
        &self,
        seq: u64,
        own: &[Staged],
        query: &[f32],
        k: usize,
        ef: usize,
        filter: Option<&dyn Fn(NodeId) -> bool>,
    ) -> Result<Vec<(NodeId, f32)>, VectorIndexError> {
        let q = prepare(self.config.metric, self.config.dim, query)?;
        let (killed, mine) = own_view(own);
        let passes = |n: u64| filter.is_none_or(|f| f(NodeId(n)));
        let inner = self.read();
        let accept = |slot: u32| {
            inner.visible(slot, seq) && !killed.contains(&slot) && passes(inner.node[slot as usize])
        };
        let found = SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            inner
                .hnsw
                .search(query, k, ef.max(k), Some(&accept), &mut s)
        })?;
        let mut all: BTreeMap<u32, f32> = found.into_iter().collect();
        for slot in lock(&self.pending).iter().copied().filter(|s| accept(*s)) {
            all.insert(slot, inner.hnsw.codes().distance(&q, slot));
        }
        let mut hits: Vec<(NodeId, f32)> = all
            .into_iter()
            .map(|(slot, d)| (NodeId(inner.node[slot as usize]), d))
            .collect();
        drop(inner);
        for (node, code) in mine.into_iter().filter(|(n, _)| passes(*n)) {
            hits.push((NodeId(node), self.own_distance(&q, code)?));
        }
        Ok(nearest_k(hits, k))
    }

    /// A transaction's own vector, scored as the index will hold it (f16
    /// rounding included).
    fn own_distance(&self, q: &[f32], code: &[u8]) -> Result<f32, VectorIndexError> {
        let mut c = Codes::new(self.config.metric, self.config.dim, self.config.precision);
        c.set_encoded(0, code)?;
        Ok(c.distance(q, 0))
    }

    /// [`VectorIndex::search`] among `nodes` only, by an exact scan of
    /// their vectors: for few candidates (those an index lookup gives), it
    /// costs one distance each, where a walk would wade through the graph
    /// looking for them.
    pub fn search_among(
        &self,
        seq: u64,
        own: &[Staged],
        query: &[f32],
        k: usize,
        nodes: &[NodeId],
        filter: Option<&dyn Fn(NodeId) -> bool>,
    ) -> Result<Vec<(NodeId, f32)>, VectorIndexError> {
        let q = prepare(self.config.metric, self.config.dim, query)?;
        let (killed, mine) = own_view(own);
        let mut nodes = nodes.to_vec();
        nodes.sort_unstable();
        nodes.dedup();
        let inner = self.read();
        let mut hits = Vec::new();
        for n in nodes.into_iter().filter(|n| filter.is_none_or(|f| f(*n))) {
            if let Some(code) = mine.get(&n.0) {
                hits.push((n, self.own_distance(&q, code)?));
                continue;
            }
            let visible = inner.by_node.get(&n.0).and_then(|slots| {
                slots
                    .iter()
                    .rev()
                    .find(|s| inner.visible(**s, seq) && !killed.contains(*s))
            });
            if let Some(&slot) = visible {
                hits.push((n, inner.hnsw.codes().distance(&q, slot)));
            }
        }
        Ok(nearest_k(hits, k))
    }

    /// Slots holding a vector some snapshot may still see, and all slots.
    pub fn sizes(&self) -> (usize, usize) {
        let inner = self.read();
        let live = inner.died.iter().filter(|d| **d == NEVER).count();
        (live, inner.hnsw.len())
    }
}

/// A transaction's own changes: the slots it replaced or deleted, and its
/// new vectors by node (the last write of each node).
fn own_view(own: &[Staged]) -> (HashSet<u32>, BTreeMap<u64, &[u8]>) {
    let mut killed = HashSet::new();
    let mut mine: BTreeMap<u64, &[u8]> = BTreeMap::new();
    for c in own.iter().filter_map(downcast) {
        if let Some(old) = c.old {
            killed.insert(old);
        }
        match &c.new {
            Some((_, v)) => mine.insert(c.node, v),
            None => mine.remove(&c.node),
        };
    }
    (killed, mine)
}

/// The `k` nearest, nearest first (ties by node).
fn nearest_k(mut hits: Vec<(NodeId, f32)>, k: usize) -> Vec<(NodeId, f32)> {
    hits.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    hits.truncate(k);
    hits
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

fn cause(e: VectorIndexError) -> Cause {
    Box::new(e)
}

impl MaintainedIndex for VectorIndex {
    fn stage(
        &self,
        entries: &mut IndexEntries<'_>,
        node: NodeId,
        _old: Option<&plexus_common::Value>,
        new: Option<&plexus_common::Value>,
    ) -> Result<Option<Staged>, Cause> {
        let change = self.stage_change(entries, node, new).map_err(cause)?;
        Ok(Some(Arc::new(change)))
    }

    fn publish(&self, staged: &[Staged], seq: u64) {
        let mut inner = self.write();
        let mut pending = lock(&self.pending);
        for c in staged.iter().filter_map(downcast) {
            if let Some(old) = c.old {
                if let Some(d) = inner.died.get_mut(old as usize) {
                    *d = (*d).min(seq);
                }
            }
            if let Some((slot, code)) = &c.new {
                // The code was made from a checked vector by this index's
                // encoder: it cannot be refused.
                if inner.hnsw.place_encoded(*slot, code).is_err() {
                    continue;
                }
                inner.ensure(*slot);
                let s = *slot as usize;
                inner.born[s] = seq;
                inner.node[s] = c.node;
                inner.by_node.entry(c.node).or_default().push(*slot);
                pending.insert(*slot);
            }
        }
    }

    fn retract(&self, staged: &[Staged]) {
        let mut inner = self.write();
        let mut pending = lock(&self.pending);
        for c in staged.iter().rev().filter_map(downcast) {
            if let Some((slot, _)) = &c.new {
                if let Some(b) = inner.born.get_mut(*slot as usize) {
                    *b = NEVER;
                }
                if let Some(slots) = inner.by_node.get_mut(&c.node) {
                    slots.retain(|s| s != slot);
                }
                pending.remove(slot);
            }
            if let Some(old) = c.old {
                if let Some(d) = inner.died.get_mut(old as usize) {
                    *d = NEVER;
                }
            }
        }
    }

    fn settle(&self, staged: &[Staged]) {
        let slots: Vec<u32> = {
            let inner = self.read();
            let pending = lock(&self.pending);
            staged
                .iter()
                .filter_map(downcast)
                .filter_map(|c| c.new.as_ref().map(|(s, _)| *s))
                // Replaced in the same commit: never seen, never linked.
                .filter(|s| {
                    let i = *s as usize;
                    pending.contains(s) && inner.died[i] != inner.born[i]
                })
                .collect()
        };
        self.link(&slots);
        // The replaced ones leave the pending list unlinked.
        let mut pending = lock(&self.pending);
        for c in staged.iter().filter_map(downcast) {
            if let Some((s, _)) = &c.new {
                pending.remove(s);
            }
        }
    }

    fn checkpoint(&self, force: bool) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
        let since = self.linked_since_checkpoint.load(Relaxed);
        let inner = self.read();
        let due = since > 0 && (force || since >= (inner.hnsw.len() / 8).max(1024));
        if !due {
            return None;
        }
        self.linked_since_checkpoint.store(0, Relaxed);
        let pending = lock(&self.pending).clone();
        let out = (0..inner.hnsw.len() as u32)
            .filter(|s| {
                inner.born.get(*s as usize).is_some_and(|b| *b != NEVER) && !pending.contains(s)
            })
            .map(|s| (slot_key(LINKS, s), encode_links(&inner.hnsw.links_of(s))))
            .collect();
        Some(out)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
