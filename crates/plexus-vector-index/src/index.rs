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
use crate::node_slots::NodeSlots;
use plexus_storage::{Cause, EntryWrite, IndexEntries, IndexInfo, MaintainedIndex, NodeId, Staged};
use plexus_vector::{prepare, Codes, Hnsw, Scratch};
use rustc_hash::FxHashSet;
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};

/// Not yet (born) or not ever (died).
const NEVER: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct Life {
    born: u64,
    died: u64,
}

impl Life {
    const UNBORN: Life = Life {
        born: NEVER,
        died: NEVER,
    };
}

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
    /// Per slot, the index sequence numbers between which it is visible
    /// (`born` ≤ seq < `died`), side by side: a scan among candidates
    /// checks both for each, one cache line.
    life: Vec<Life>,
    node: Vec<u64>,
    /// Each node's slots: for searches among given nodes.
    by_node: NodeSlots,
    /// The highest sequence number a publish stamped: a snapshot at or
    /// past it sees every node's newest slot or none of the node's.
    latest: u64,
}

/// Indexes of vectors this long or longer get sign codes once they hold
/// this many (`Codes::center_signs`); shorter ones are cheap to scan, and
/// their few bits rank coarsely.
const SIGNS_DIM: usize = 128;
const SIGNS_FROM: usize = 1024;

/// How many of `n` candidates ranked by sign codes are measured exactly
/// for the `k` nearest. Fewer than 8,192 are all measured (about a
/// millisecond at 1,024 dimensions): few candidates are more often all far
/// from the query, or all near it and near each other, and sign codes rank
/// both badly. A 10% filter over 5,000 vectors of 100 clusters kept 91% of
/// the top 10 in its best 100 of 535; the 4,800 members of one node set
/// among a million chunks clustered by topic (`plexus-bench memory`) kept
/// 70% in the best 512. Of more: ten times `k`, a fiftieth of them, at
/// least 256 (at 1,024 dimensions, a 10% filter over 200,000 vectors kept
/// every true top-10 among its best 320 by sign codes, and 160 kept 97%).
/// Shorter vectors have fewer sign bits to rank by, and cost less to
/// measure: under 1,024 dimensions the shortlist grows as the code shrinks
/// (four times at 256), which keeps the bytes measured about the same. Real
/// text embeddings of 256 dimensions (`docs/benchmarks`, "Real text") kept
/// only 96% of the top 10 of a 10% filter in the best 399 of 19,991.
fn shortlist_size(k: usize, n: usize, dim: usize) -> usize {
    if n < 8192 {
        return n;
    }
    let floor = 256;
    let widen = (1024 / dim.max(1)).max(1);
    k.saturating_mul(10)
        .max(n / 50)
        .max(floor)
        .saturating_mul(widen)
}

/// A filtered search over at least this many slots first estimates the
/// share the filter passes, from this many slots spread over the index...
const ESTIMATE_FROM: usize = 4096;
const ESTIMATE_SAMPLE: usize = 256;
/// ...and below this share scans the passing vectors instead of walking,
/// when the filter is cheap: a walk wades through about `1 / share` slots
/// for each one it may keep and measures each (a 1% filter over 200,000
/// vectors of 1,024 components: 12 ms), where a scan tests the filter on
/// every slot and measures few. A filter that reads each node's record
/// (microseconds) would make testing every slot the dearer, so the sample
/// also times the filter, and only one under `CHEAP_FILTER` gets a scan.
const SCAN_BELOW: f64 = 0.03;
const CHEAP_FILTER: std::time::Duration = std::time::Duration::from_nanos(200);

impl Inner {
    fn ensure(&mut self, slot: u32) {
        let n = slot as usize + 1;
        if self.life.len() < n {
            self.life.resize(n, Life::UNBORN);
            self.node.resize(n, 0);
        }
    }

    /// A stored code, as a waypoint until a `v` entry names its node.
    fn place_stored(&mut self, slot: u32, code: &[u8]) -> Result<(), VectorIndexError> {
        if self
            .life
            .get(slot as usize)
            .is_some_and(|l| l.born != NEVER)
        {
            return Err(VectorIndexError::Corrupt(format!(
                "slot {slot} stored twice"
            )));
        }
        self.hnsw.place_encoded(slot, code)?;
        self.ensure(slot);
        self.life[slot as usize] = Life { born: 0, died: 0 };
        Ok(())
    }

    /// Gives each (node, slot) of the `v` entries its node; returns the
    /// named slots the checkpointed `links` miss, to link now.
    fn name_slots(
        &mut self,
        named: &[(u64, u32)],
        links: &BTreeMap<u32, Vec<Vec<u32>>>,
    ) -> Result<Vec<u32>, VectorIndexError> {
        let mut unlinked = Vec::new();
        for &(node, slot) in named {
            let s = slot as usize;
            if self.life.get(s).is_none_or(|l| l.born == NEVER) {
                return Err(VectorIndexError::Corrupt(format!(
                    "node {node}'s vector (slot {slot}) is not stored"
                )));
            }
            if self.life[s].died != 0 {
                return Err(VectorIndexError::Corrupt(format!(
                    "slot {slot} named twice"
                )));
            }
            self.life[s].died = NEVER;
            self.node[s] = node;
            self.by_node.add(node, slot);
            if !links.contains_key(&slot) {
                unlinked.push(slot);
            }
        }
        Ok(unlinked)
    }

    /// Sign codes for an index of long vectors, once it holds enough of
    /// them for their mean to be a center.
    fn center_signs_when_due(&mut self, dim: usize) {
        if dim >= SIGNS_DIM && !self.hnsw.codes().has_signs() && self.hnsw.len() >= SIGNS_FROM {
            self.hnsw.center_signs();
        }
    }

    fn visible(&self, slot: u32, seq: u64) -> bool {
        let s = slot as usize;
        self.life
            .get(s)
            .is_some_and(|l| l.born <= seq && seq < l.died)
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
    /// Committed slots whose code is in a `c` entry, not in its block yet.
    loose: Mutex<BTreeSet<u32>>,
    /// Slots per block (`layout::block_slots`).
    per_block: u32,
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
                life: Vec::new(),
                latest: 0,
                node: Vec::new(),
                by_node: Default::default(),
            }),
            next_slot: AtomicU64::new(0),
            pending: Mutex::default(),
            linked_since_checkpoint: AtomicUsize::new(0),
            loose: Mutex::default(),
            per_block: block_slots(config.dim * config.precision.bytes()),
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
        let code_bytes = index.encoder.code_bytes();
        let mut links: BTreeMap<u32, Vec<Vec<u32>>> = BTreeMap::new();
        // `v` entries come after the codes (key order): applied at the end.
        let mut named = Vec::new();
        {
            let mut inner = index.write();
            let mut loose = lock(&index.loose);
            for e in entries {
                let (k, v) = e?;
                let (tag, n) = read_key(&k)?;
                match tag {
                    LINKS => {
                        links.insert(n as u32, decode_links(&v)?);
                    }
                    BLOCK => {
                        for (i, code) in read_block(&v, code_bytes)? {
                            let slot = (n as u32).checked_add(u32::from(i)).ok_or_else(|| {
                                VectorIndexError::Corrupt("block past the last slot".into())
                            })?;
                            inner.place_stored(slot, code)?;
                        }
                    }
                    CODE | WAYPOINT => {
                        inner.place_stored(n as u32, &v)?;
                        if tag == CODE {
                            loose.insert(n as u32);
                        }
                    }
                    _ => {
                        let (slot, code) = read_vector_value(&v)?;
                        if let Some(code) = code {
                            inner.place_stored(slot, code)?;
                        }
                        named.push((n, slot));
                    }
                }
            }
            let unlinked = inner.name_slots(&named, &links)?;
            inner.center_signs_when_due(index.config.dim);
            for (slot, layers) in &links {
                if inner
                    .life
                    .get(*slot as usize)
                    .is_some_and(|l| l.born != NEVER)
                {
                    inner.hnsw.restore_links(*slot, layers);
                }
            }
            index.next_slot.store(inner.hnsw.len() as u64, Relaxed);
            drop((inner, loose));
            // Vectors committed after the last checkpoint.
            lock(&index.pending).extend(unlinked.iter().copied());
            index.link(&unlinked);
        }
        Ok(index)
    }

    /// A new slot for a vector being written.
    fn reserve(&self) -> Result<u32, VectorIndexError> {
        let slot = self.next_slot.fetch_add(1, Relaxed);
        // u32::MAX stays free: `NodeSlots` marks "none" with it.
        u32::try_from(slot)
            .ok()
            .filter(|s| *s != u32::MAX)
            .ok_or(VectorIndexError::Vector(plexus_vector::VectorError::Full))
    }

    fn stage_change(
        &self,
        entries: &mut IndexEntries<'_>,
        node: u64,
        new: Option<&plexus_common::Value>,
    ) -> Result<Change, VectorIndexError> {
        let new = match new {
            Some(v) => {
                let q = prepare(self.config.metric, self.config.dim, &vector_of(v)?)?;
                Some((self.reserve()?, self.encoder.encode(&q)))
            }
            None => None,
        };
        let key = vector_key(node);
        let old = match entries.get(&key)? {
            Some(b) => {
                let (slot, code) = read_vector_value(&b)?;
                // The first layout kept the code in the `v` entry: the slot
                // becomes a waypoint, which needs its code of its own.
                if let Some(code) = code {
                    entries.put(&slot_key(CODE, slot), code.to_vec());
                }
                Some(slot)
            }
            None => None,
        };
        match &new {
            Some((slot, code)) => {
                entries.put(&key, slot.to_le_bytes().to_vec());
                entries.put(&slot_key(CODE, *slot), code.clone());
                self.gather_block(entries, *slot);
            }
            None => entries.delete(&key),
        }
        Ok(Change { node, new, old })
    }

    /// When `slot` ends a block whose every slot this transaction wrote (a
    /// load of many vectors), puts their codes in the block at once.
    fn gather_block(&self, entries: &mut IndexEntries<'_>, slot: u32) {
        let first = block_of(slot, self.per_block);
        if slot - first != self.per_block - 1 {
            return;
        }
        let keys: Vec<Vec<u8>> = (first..=slot).map(|s| slot_key(CODE, s)).collect();
        let mut codes = Vec::with_capacity(keys.len());
        for k in &keys {
            match entries.own(k) {
                Some(Some(code)) => codes.push(code),
                _ => return,
            }
        }
        let span = self.per_block as u16;
        let value = block_value(span, (0..span).zip(codes));
        for k in &keys {
            entries.forget(k);
        }
        entries.put(&slot_key(BLOCK, first), value);
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
        filter: Option<&dyn Fn(u64) -> bool>,
    ) -> Result<Vec<(u64, f32)>, VectorIndexError> {
        let q = prepare(self.config.metric, self.config.dim, query)?;
        let (killed, mine) = own_view(own);
        let passes = |n: u64| filter.is_none_or(|f| f(n));
        let inner = self.read();
        let accept = |slot: u32| {
            inner.visible(slot, seq) && !killed.contains(&slot) && passes(inner.node[slot as usize])
        };
        if filter.is_some() && Self::scan_pays(&inner, seq, &accept) {
            let slots: Vec<u32> = (0..inner.hnsw.len() as u32)
                .filter(|s| accept(*s))
                .collect();
            let mut hits: Vec<(u64, f32)> = Self::scan(&inner, &q, k, &slots)
                .map(|(i, d)| (inner.node[slots[i] as usize], d))
                .collect();
            drop(inner);
            for (node, code) in mine.into_iter().filter(|(n, _)| passes(*n)) {
                hits.push((node, self.own_distance(&q, code)?));
            }
            return Ok(nearest_k(hits, k));
        }
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
        let mut hits: Vec<(u64, f32)> = all
            .into_iter()
            .map(|(slot, d)| (inner.node[slot as usize], d))
            .collect();
        drop(inner);
        for (node, code) in mine.into_iter().filter(|(n, _)| passes(*n)) {
            hits.push((node, self.own_distance(&q, code)?));
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

    /// [`VectorIndex::search`] among `nodes` only (a node index's), by an exact scan of
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
    ) -> Result<Vec<(u64, f32)>, VectorIndexError> {
        let q = prepare(self.config.metric, self.config.dim, query)?;
        let (killed, mine) = own_view(own);
        // An index lookup gives them in order and once already: copied
        // only when not.
        let mut owned;
        let nodes = if nodes.windows(2).all(|w| w[0] < w[1]) {
            nodes
        } else {
            owned = nodes.to_vec();
            owned.sort_unstable();
            owned.dedup();
            &owned[..]
        };
        let inner = self.read();
        let mut hits = Vec::new();
        // Slots first, then their distances in one pass that loads each
        // vector ahead of scoring it. The loop runs once per candidate (tens
        // of thousands): the transaction's own changes are looked up only
        // when it has some.
        let (mut slots, mut of) = (
            Vec::with_capacity(nodes.len()),
            Vec::with_capacity(nodes.len()),
        );
        let own_changes = !killed.is_empty() || !mine.is_empty();
        let candidates = || {
            nodes
                .iter()
                .copied()
                .filter(|n| filter.is_none_or(|f| f(*n)))
                .map(|n| n.0)
        };
        // A snapshot no publish has passed, with no changes of its own,
        // sees each node's newest slot unless the node is deleted: rank the
        // newest slots unchecked and check only those measured. A deleted
        // node among them (a caller may pass one) could have kept a live
        // one out, so then the checked way below answers instead.
        if !own_changes && inner.latest <= seq {
            for n in candidates() {
                if let Some(slot) = inner.by_node.newest(n) {
                    slots.push(slot);
                    of.push(n);
                }
            }
            let found: Vec<(usize, f32)> = Self::scan(&inner, &q, k, &slots).collect();
            if found.iter().all(|(i, _)| inner.visible(slots[*i], seq)) {
                let hits = found.into_iter().map(|(i, d)| (of[i], d)).collect();
                return Ok(nearest_k(hits, k));
            }
            slots.clear();
            of.clear();
        }
        for n in candidates() {
            if own_changes {
                if let Some(code) = mine.get(&n) {
                    hits.push((n, self.own_distance(&q, code)?));
                    continue;
                }
            }
            let visible = inner.by_node.find(n, |s| {
                inner.visible(s, seq) && (!own_changes || !killed.contains(&s))
            });
            if let Some(slot) = visible {
                slots.push(slot);
                of.push(n);
            }
        }
        hits.extend(Self::scan(&inner, &q, k, &slots).map(|(i, d)| (of[i], d)));
        Ok(nearest_k(hits, k))
    }

    /// Whether a filtered search should scan the vectors `accept` passes
    /// rather than walk: the index is large, and in a sample spread over
    /// it the filter passes few of the visible slots and costs little.
    fn scan_pays(inner: &Inner, seq: u64, accept: &dyn Fn(u32) -> bool) -> bool {
        let n = inner.hnsw.len();
        if n < ESTIMATE_FROM {
            return false;
        }
        let step = n / ESTIMATE_SAMPLE;
        let (mut seen, mut passed) = (0u32, 0u32);
        let start = std::time::Instant::now();
        for slot in (0..n).step_by(step).map(|s| s as u32) {
            if inner.visible(slot, seq) {
                seen += 1;
                passed += u32::from(accept(slot));
            }
        }
        let each = start.elapsed() / seen.max(1);
        // Mostly waypoints: too few seen to judge, so walk as before.
        seen >= 32 && f64::from(passed) < SCAN_BELOW * f64::from(seen) && each < CHEAP_FILTER
    }

    /// The nearest `k` of `slots` (or more, unordered), as positions in
    /// `slots` with their distances: many are ranked by sign codes first
    /// and only a shortlist measured exactly.
    fn scan(
        inner: &Inner,
        q: &[f32],
        k: usize,
        slots: &[u32],
    ) -> impl Iterator<Item = (usize, f32)> {
        let codes = inner.hnsw.codes();
        let keep = codes.shortlist(q, slots, shortlist_size(k, slots.len(), q.len()));
        let chosen: Vec<u32> = keep.iter().map(|i| slots[*i]).collect();
        let mut ds = Vec::with_capacity(chosen.len());
        codes.distances(q, &chosen, &mut ds);
        keep.into_iter().zip(ds)
    }

    /// Blocks for the loose codes (`c` entries) of blocks whose every slot
    /// is committed (of all blocks with loose codes when `force`), and the
    /// deletes of those `c` entries. A block is written whole from the
    /// codes in memory: it may already hold some of them.
    fn gather_loose(
        &self,
        inner: &Inner,
        settled: &dyn Fn(u32) -> bool,
        force: bool,
    ) -> Vec<EntryWrite> {
        let per = self.per_block;
        let mut loose = lock(&self.loose);
        let firsts: BTreeSet<u32> = loose.iter().map(|s| block_of(*s, per)).collect();
        let mut out = Vec::new();
        for first in firsts {
            let slots = (first..first.saturating_add(per)).map(|s| (s, settled(s)));
            if !force && slots.clone().any(|(_, ok)| !ok) {
                continue;
            }
            let mut codes = Vec::new();
            let mut offsets = Vec::new();
            for (s, _) in slots.filter(|(_, ok)| *ok) {
                offsets.push((s - first) as u16);
                inner.hnsw.codes().encoded(s, &mut codes);
            }
            let width = self.encoder.code_bytes();
            let value = block_value(
                per as u16,
                offsets.iter().copied().zip(codes.chunks_exact(width)),
            );
            out.push((slot_key(BLOCK, first), Some(value)));
            let done: Vec<u32> = loose
                .range(first..first.saturating_add(per))
                .copied()
                .collect();
            for s in done.into_iter().filter(|s| settled(*s)) {
                out.push((slot_key(CODE, s), None));
                loose.remove(&s);
            }
        }
        out
    }

    /// Whether scans among many candidates rank them by sign codes first.
    pub fn has_signs(&self) -> bool {
        self.read().hnsw.codes().has_signs()
    }

    /// All slots, holes and waypoints included.
    pub fn slot_count(&self) -> usize {
        self.read().hnsw.len()
    }
}

/// A transaction's own changes: the slots it replaced or deleted, and its
/// new vectors by node (the last write of each node).
fn own_view(own: &[Staged]) -> (FxHashSet<u32>, BTreeMap<u64, &[u8]>) {
    let mut killed = FxHashSet::default();
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
fn nearest_k(mut hits: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
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
        node: u64,
        _old: Option<&plexus_common::Value>,
        new: Option<&plexus_common::Value>,
    ) -> Result<Option<Staged>, Cause> {
        let change = self.stage_change(entries, node, new).map_err(cause)?;
        Ok(Some(Arc::new(change)))
    }

    fn publish(&self, staged: &[Staged], seq: u64) {
        let mut inner = self.write();
        let mut pending = lock(&self.pending);
        inner.latest = inner.latest.max(seq);
        for c in staged.iter().filter_map(downcast) {
            if let Some(old) = c.old {
                if let Some(d) = inner.life.get_mut(old as usize).map(|l| &mut l.died) {
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
                inner.life[s].born = seq;
                inner.node[s] = c.node;
                inner.by_node.add(c.node, *slot);
                pending.insert(*slot);
            }
        }
        inner.center_signs_when_due(self.config.dim);
    }

    fn retract(&self, staged: &[Staged]) {
        let mut inner = self.write();
        let mut pending = lock(&self.pending);
        for c in staged.iter().rev().filter_map(downcast) {
            if let Some((slot, _)) = &c.new {
                if let Some(b) = inner.life.get_mut(*slot as usize).map(|l| &mut l.born) {
                    *b = NEVER;
                }
                inner.by_node.remove(c.node, *slot);
                pending.remove(slot);
            }
            if let Some(old) = c.old {
                if let Some(d) = inner.life.get_mut(old as usize).map(|l| &mut l.died) {
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
                    pending.contains(s) && inner.life[i].died != inner.life[i].born
                })
                .collect()
        };
        self.link(&slots);
        // The replaced ones leave the pending list unlinked.
        let mut pending = lock(&self.pending);
        let new: Vec<u32> = staged
            .iter()
            .filter_map(downcast)
            .filter_map(|c| c.new.as_ref().map(|(s, _)| *s))
            .collect();
        for s in &new {
            pending.remove(s);
        }
        drop(pending);
        // Codes of blocks this commit filled went there at once
        // (`gather_block`); the others are loose until a checkpoint.
        let mut per_block: HashMap<u32, u32> = HashMap::new();
        for s in &new {
            *per_block.entry(block_of(*s, self.per_block)).or_default() += 1;
        }
        lock(&self.loose).extend(
            new.iter()
                .filter(|s| per_block[&block_of(**s, self.per_block)] < self.per_block),
        );
    }

    fn checkpoint(&self, force: bool) -> Option<Vec<EntryWrite>> {
        let since = self.linked_since_checkpoint.load(Relaxed);
        let inner = self.read();
        let due = since > 0 && (force || since >= (inner.hnsw.len() / 8).max(1024));
        if !due {
            return None;
        }
        self.linked_since_checkpoint.store(0, Relaxed);
        let pending = lock(&self.pending).clone();
        // Committed: published and settled (so its batch is written).
        let settled = |s: u32| {
            inner.life.get(s as usize).is_some_and(|l| l.born != NEVER) && !pending.contains(&s)
        };
        // Only slots linked into the graph: one never linked (replaced in
        // its own commit) restored as linked could become the entry, alone.
        let mut out: Vec<_> = (0..inner.hnsw.len() as u32)
            .filter(|s| settled(*s))
            .map(|s| (s, inner.hnsw.links_of(s)))
            .filter(|(_, links)| links.first().is_some_and(|l| !l.is_empty()))
            .map(|(s, links)| (slot_key(LINKS, s), Some(encode_links(&links))))
            .collect();
        out.extend(self.gather_loose(&inner, &settled, force));
        Some(out)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
