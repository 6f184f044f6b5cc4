//! A hierarchical navigable small-world graph (Malkov and Yashunin, 2016)
//! over the vectors of one index, by dense slot.
//!
//! Layer 0 holds every slot with up to `2m` links, in one flat array (a
//! search reads a slot's links from one place); the few slots that reach
//! higher layers keep up to `m` links per layer. A slot's layer is drawn
//! from a hash of the slot and the seed, so a build is repeatable. Links
//! are chosen with the paper's heuristic (a candidate is kept only if it is
//! closer to the new vector than to every neighbour kept before it), which
//! keeps links spread across clusters.
//!
//! Removal marks a slot deleted: it still guides searches but is never a
//! result. A filter works the same way: slots that fail it are walked
//! through but not returned, and the walk goes on until it holds `ef` that
//! pass; when the graph cannot give `k` (a filter few slots pass, or many
//! removals), the search falls back to an exact scan, so it returns `k`
//! results whenever `k` slots pass.

use crate::exact;
use crate::metric::{prepare, Codes, Metric, Precision};
use crate::VectorError;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Mutex;

/// Build parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Links per slot above layer 0 (twice this on layer 0).
    pub m: usize,
    /// Candidates kept while linking a new slot.
    pub ef_construction: usize,
    /// Draws the slots' layers.
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            m: 16,
            ef_construction: 128,
            seed: 0x005E_ED0F_91E8_u64,
        }
    }
}

/// The highest layer a slot may reach.
const MAX_LAYER: u8 = 15;

/// A slot at a distance, ordered by distance (then slot, so ties are
/// ordered too).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Near {
    pub d: f32,
    pub slot: u32,
}

impl Eq for Near {}

impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Near) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Near {
    fn cmp(&self, other: &Near) -> Ordering {
        self.d.total_cmp(&other.d).then(self.slot.cmp(&other.slot))
    }
}

/// What one search needs besides the graph, kept by the caller between
/// searches (one per thread) so that none allocates.
#[derive(Default)]
pub struct Scratch {
    stamps: Vec<u32>,
    now: u32,
    candidates: BinaryHeap<Reverse<Near>>,
    results: BinaryHeap<Near>,
    query: Vec<f32>,
    links: Vec<u32>,
}

impl Scratch {
    /// Forgets every slot visited, for a graph of `n` slots.
    fn start(&mut self, n: usize) {
        self.now = self.now.wrapping_add(1);
        if self.now == 0 {
            self.stamps.iter_mut().for_each(|s| *s = 0);
            self.now = 1;
        }
        if self.stamps.len() < n {
            self.stamps.resize(n, 0);
        }
        self.candidates.clear();
        self.results.clear();
    }

    /// Marks `slot` visited; false when it was already.
    fn visit(&mut self, slot: u32) -> bool {
        let s = &mut self.stamps[slot as usize];
        let fresh = *s != self.now;
        *s = self.now;
        fresh
    }
}

/// An HNSW graph with its vectors.
///
/// Linking takes `&self`, so that a bulk build links on several threads
/// (`Hnsw::build`): layer-0 links are atomics (a reader sees each link
/// whole, a list being rewritten may show old and new links, which a walk
/// tolerates), and a slot's writer holds that slot's lock, which also
/// guards its higher layers.
pub struct Hnsw {
    params: Params,
    codes: Codes,
    layer_of: Vec<u8>,
    /// Layer 0: `2m` links per slot; `count0[slot]` of them in use.
    links0: Vec<AtomicU32>,
    count0: Vec<AtomicU32>,
    /// Per slot, its layers 1 and up (empty for most), behind the lock a
    /// writer of any of its layers holds.
    upper: Vec<Mutex<Vec<Vec<u32>>>>,
    deleted: Vec<bool>,
    live: usize,
    /// The entry slot and its layer.
    top: Mutex<Option<(u32, u8)>>,
    /// Slots being linked now or lately (`Linking`).
    linking: Mutex<Linking>,
    /// For linking (`insert` has the graph to itself).
    scratch: Scratch,
}

/// How long (in `Linking`'s clock: a tick per link begun or ended) a
/// finished link is still introduced to the links that begin after it.
/// One that ended just before another began can still be out of that
/// one's reach: while slots are linked on several threads, the graph can
/// be cut for a moment where a slot between them is not linked yet. Points
/// on a line, linked in order, lost a link once in about thirty builds so:
/// 272 ended, 273 began and found only 274, the line cut at 273 itself.
const RECENT: u64 = 16;

/// How far back (in `Linking`'s clock) a link's horizon may reach: past
/// it, a thread stalled for long would make every link meanwhile meet
/// every other (a cost that grows with the square of the stall).
const HORIZON_CAP: u64 = 512;

/// How many vectors ahead of the one being scored a walk asks the CPU to
/// load (`Codes::prefetch`): enough to hide memory's latency behind the
/// distances computed meanwhile, few enough to stay in the L1 cache.
pub(crate) const PREFETCH_AHEAD: usize = 2;

/// Slots linked at the same time on several threads may each miss the
/// other (neither was reachable when the other searched), and on data
/// where each slot keeps few links (points on a line keep two) that cuts
/// the graph. So each link is logged with the times it started and ended,
/// and a slot, once linked, is introduced to the slots whose linking
/// overlapped its own or ended shortly ([`RECENT`]) before it began — or
/// ended at any time since the oldest link still running when it began
/// did (its *horizon*): a thread descheduled in the middle of a link
/// leaves the graph cut at that slot for as long as it waits, while the
/// other threads link many more (on a loaded machine, points on a line
/// lost a link in about one build of 250 with the fixed window alone).
#[derive(Default)]
struct Linking {
    clock: u64,
    log: Vec<Link>,
}

/// One slot's linking in [`Linking`]'s log.
struct Link {
    slot: u32,
    started: u64,
    /// `u64::MAX` while running.
    ended: u64,
    /// The start of the oldest link running when this one began (its own
    /// start if none): links ended since may be out of its reach.
    horizon: u64,
}

impl Linking {
    /// Begins `slot`'s linking; its start, for [`Linking::end`].
    fn begin(&mut self, slot: u32) -> u64 {
        self.clock += 1;
        let started = self.clock;
        let horizon = self
            .log
            .iter()
            .filter(|e| e.ended == u64::MAX)
            .map(|e| e.started)
            .min()
            .unwrap_or(started)
            .max(started.saturating_sub(HORIZON_CAP));
        self.log.push(Link {
            slot,
            started,
            ended: u64::MAX,
            horizon,
        });
        started
    }

    /// The earliest horizon of the links running: what ended after it
    /// may still be introduced to one of them.
    fn oldest(&self) -> Option<u64> {
        self.log
            .iter()
            .filter(|e| e.ended == u64::MAX)
            .map(|e| e.horizon)
            .min()
    }

    /// Ends `slot`'s linking; the slots whose linking overlapped it, or
    /// ended shortly before its horizon.
    fn end(&mut self, slot: u32, started: u64) -> Vec<u32> {
        self.clock += 1;
        let now = self.clock;
        let own = self
            .log
            .iter()
            .position(|e| e.slot == slot && e.started == started);
        let since = own
            .map_or(started, |i| self.log[i].horizon)
            .saturating_sub(RECENT);
        let peers = (self.log.iter().enumerate())
            .filter(|&(i, e)| Some(i) != own && e.ended > since)
            .map(|(_, e)| e.slot)
            .collect();
        if let Some(i) = own {
            self.log[i].ended = now;
        }
        // A finished link matters to links running when it ended, and to
        // those whose horizon lies shortly before it ended.
        let oldest = self.oldest().unwrap_or(now);
        self.log
            .retain(|e| e.ended == u64::MAX || e.ended.saturating_add(RECENT) > oldest);
        peers
    }
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while linking leaves links that are each valid.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Hnsw {
    pub fn new(metric: Metric, dim: usize, precision: Precision, params: Params) -> Hnsw {
        let params = Params {
            m: params.m.clamp(2, 512),
            ef_construction: params.ef_construction.max(1),
            ..params
        };
        Hnsw {
            params,
            codes: Codes::new(metric, dim, precision),
            layer_of: Vec::new(),
            links0: Vec::new(),
            count0: Vec::new(),
            upper: Vec::new(),
            deleted: Vec::new(),
            live: 0,
            top: Mutex::new(None),
            linking: Mutex::default(),
            scratch: Scratch::default(),
        }
    }

    /// An index of `rows` (vectors of `dim`, one after another; slot `i`
    /// is row `i`), linked on `threads` threads.
    pub fn build(
        metric: Metric,
        dim: usize,
        precision: Precision,
        params: Params,
        rows: &[f32],
        threads: usize,
    ) -> Result<Hnsw, VectorError> {
        let mut h = Hnsw::new(metric, dim, precision, params);
        if dim == 0 || !rows.len().is_multiple_of(dim) {
            return Err(VectorError::Dimension {
                expected: dim,
                got: rows.len() % dim.max(1),
            });
        }
        for row in rows.chunks(dim) {
            let q = prepare(metric, dim, row)?;
            h.push_slot(&q)?;
        }
        let next = AtomicUsize::new(0);
        let n = h.len();
        let h_ref = &h;
        std::thread::scope(|sc| {
            for _ in 0..threads.max(1) {
                sc.spawn(|| {
                    let mut s = Scratch::default();
                    let mut q = Vec::new();
                    loop {
                        // A slot is claimed and its link begun at once: a
                        // thread descheduled between the two would leave
                        // the graph cut at a slot no link knows is coming.
                        let (i, started) = {
                            let mut l = locked(&h_ref.linking);
                            let i = next.fetch_add(1, AtomicOrdering::Relaxed);
                            if i >= n {
                                break;
                            }
                            (i as u32, l.begin(i as u32))
                        };
                        h_ref.codes.get(i, &mut q);
                        h_ref.link_begun(i, started, &q, &mut s);
                    }
                });
            }
        });
        Ok(h)
    }

    /// Gives the stored vectors sign codes ([`Codes::center_signs`]), for
    /// owners that scan many of them.
    pub fn center_signs(&mut self) {
        self.codes.center_signs();
    }

    pub fn codes(&self) -> &Codes {
        &self.codes
    }

    /// Slots, deleted ones included.
    pub fn len(&self) -> usize {
        self.layer_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots not deleted.
    pub fn live(&self) -> usize {
        self.live
    }

    pub fn is_deleted(&self, slot: u32) -> bool {
        self.deleted.get(slot as usize).copied().unwrap_or(true)
    }

    /// Bytes of the links (the vectors are `codes().bytes()`).
    pub fn link_bytes(&self) -> usize {
        let upper: usize = self
            .upper
            .iter()
            .map(|u| locked(u).iter().map(|l| l.len() * 4).sum::<usize>())
            .sum();
        (self.links0.len() + self.count0.len()) * 4 + self.layer_of.len() + upper
    }

    fn cap(&self, layer: u8) -> usize {
        if layer == 0 {
            2 * self.params.m
        } else {
            self.params.m
        }
    }

    /// The links of `slot` on `layer`, into `out`.
    fn links_into(&self, slot: u32, layer: u8, out: &mut Vec<u32>) {
        if layer == 0 {
            self.links_into_locked(slot, 0, &[], out);
        } else {
            let layers = locked(&self.upper[slot as usize]);
            self.links_into_locked(slot, layer, &layers, out);
        }
    }

    /// As `links_into`, for a caller that holds the slot's lock.
    fn links_into_locked(&self, slot: u32, layer: u8, layers: &[Vec<u32>], out: &mut Vec<u32>) {
        out.clear();
        if layer == 0 {
            let at = slot as usize * 2 * self.params.m;
            let n = (self.count0[slot as usize].load(AtomicOrdering::Acquire) as usize)
                .min(2 * self.params.m);
            out.extend(
                self.links0[at..at + n]
                    .iter()
                    .map(|l| l.load(AtomicOrdering::Relaxed)),
            );
        } else if let Some(l) = layers.get(layer as usize - 1) {
            out.extend_from_slice(l);
        }
    }

    /// Sets the links of `slot` on `layer`; the caller holds its lock
    /// (`layers`).
    fn store_links(&self, slot: u32, layer: u8, layers: &mut [Vec<u32>], links: &[u32]) {
        if layer == 0 {
            let at = slot as usize * 2 * self.params.m;
            for (cell, l) in self.links0[at..].iter().zip(links) {
                cell.store(*l, AtomicOrdering::Relaxed);
            }
            self.count0[slot as usize].store(links.len() as u32, AtomicOrdering::Release);
        } else if let Some(l) = layers.get_mut(layer as usize - 1) {
            l.clear();
            l.extend_from_slice(links);
        }
    }

    /// The layer a new slot reaches: geometric, with a ratio of `1/m`.
    fn draw_layer(&self, slot: u32) -> u8 {
        let mut x = self.params.seed ^ u64::from(slot).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // splitmix64
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        let u = ((x >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let layer = -u.ln() / (self.params.m as f64).ln();
        (layer as u8).min(MAX_LAYER)
    }

    /// Stores a prepared vector in a new slot, not linked yet.
    fn push_slot(&mut self, q: &[f32]) -> Result<u32, VectorError> {
        let slot = u32::try_from(self.len()).map_err(|_| VectorError::Full)?;
        self.place(slot, q);
        Ok(slot)
    }

    /// Grows the graph to `n` slots; the new ones are holes (deleted,
    /// without links) until a vector is placed in them.
    fn grow_to(&mut self, n: usize) {
        for slot in self.len()..n {
            let layer = self.draw_layer(slot as u32);
            self.layer_of.push(layer);
            self.upper
                .push(Mutex::new(vec![Vec::new(); layer as usize]));
            self.count0.push(AtomicU32::new(0));
            self.deleted.push(true);
        }
        self.links0
            .resize_with(n * 2 * self.params.m, || AtomicU32::new(0));
        // Holes get zero vectors, so a damaged link to one is only a
        // poor waypoint.
        if n > self.codes.len() {
            self.codes.set(n as u32 - 1, &vec![0.0; self.codes.dim()]);
        }
    }

    /// Stores a prepared vector (see [`prepare`]) in `slot`, not linked
    /// yet: for owners that number slots themselves (the database's
    /// index reserves a slot per written vector, so slots of rolled-back
    /// writes stay holes). Slots skipped over are holes.
    pub fn place(&mut self, slot: u32, prepared: &[f32]) {
        self.grow_to(self.len().max(slot as usize + 1));
        self.codes.set(slot, prepared);
        self.revive(slot);
    }

    /// As [`Hnsw::place`], from the bytes [`Codes::encode`] wrote.
    pub fn place_encoded(&mut self, slot: u32, bytes: &[u8]) -> Result<(), VectorError> {
        self.grow_to(self.len().max(slot as usize + 1));
        self.codes.set_encoded(slot, bytes)?;
        self.revive(slot);
        Ok(())
    }

    fn revive(&mut self, slot: u32) {
        if let Some(d) = self.deleted.get_mut(slot as usize) {
            if *d {
                *d = false;
                self.live += 1;
            }
        }
    }

    /// Links a slot given a vector by [`Hnsw::place`] into the graph;
    /// takes `&self`, so several threads may link at once, beside
    /// searches.
    pub fn link_slot(&self, slot: u32, s: &mut Scratch) {
        let mut q = std::mem::take(&mut s.query);
        self.codes.get(slot, &mut q);
        self.link(slot, &q, s);
        s.query = q;
    }

    /// The links of `slot`, layer 0 first: what its owner persists.
    pub fn links_of(&self, slot: u32) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        if slot as usize >= self.len() {
            return out;
        }
        for layer in 0..=self.layer_of[slot as usize] {
            let mut l = Vec::new();
            self.links_into(slot, layer, &mut l);
            out.push(l);
        }
        out
    }

    /// Gives `slot` links persisted by [`Hnsw::links_of`]; links to slots
    /// beyond the graph and layers above the slot's are dropped, lists
    /// cut to their capacity. The slot with the highest layer so
    /// restored becomes the entry.
    pub fn restore_links(&mut self, slot: u32, layers: &[Vec<u32>]) {
        if slot as usize >= self.len() {
            return;
        }
        let n = self.len() as u32;
        let top = self.layer_of[slot as usize];
        for (layer, links) in layers.iter().enumerate().take(top as usize + 1) {
            let layer = layer as u8;
            let kept: Vec<u32> = links
                .iter()
                .copied()
                .filter(|&l| l < n && l != slot)
                .take(self.cap(layer))
                .collect();
            let mut upper = locked(&self.upper[slot as usize]);
            self.store_links(slot, layer, &mut upper, &kept);
        }
        let t = self.top.get_mut().unwrap_or_else(|p| p.into_inner());
        if t.is_none_or(|(_, tl)| top > tl) {
            *t = Some((slot, top));
        }
    }

    /// Adds a vector; its slot is the number of slots before it.
    pub fn insert(&mut self, v: &[f32]) -> Result<u32, VectorError> {
        let q = prepare(self.codes.metric(), self.codes.dim(), v)?;
        let slot = self.push_slot(&q)?;
        let mut scratch = std::mem::take(&mut self.scratch);
        self.link(slot, &q, &mut scratch);
        self.scratch = scratch;
        Ok(slot)
    }

    /// Links a stored slot into the graph (the first becomes the entry),
    /// then to the slots linked at the same time that are as close as its
    /// links.
    fn link(&self, slot: u32, q: &[f32], s: &mut Scratch) {
        let started = locked(&self.linking).begin(slot);
        self.link_begun(slot, started, q, s);
    }

    /// [`Hnsw::link`] of a slot whose link began (`Linking::begin`) at
    /// `started`.
    fn link_begun(&self, slot: u32, started: u64, q: &[f32], s: &mut Scratch) {
        self.link_alone(slot, q, s);
        let peers = locked(&self.linking).end(slot, started);
        for p in peers {
            let d = self.codes.distance(q, p);
            if self.within_reach(slot, d) {
                self.connect(slot, p, 0);
            }
            if self.within_reach(p, d) {
                self.connect(p, slot, 0);
            }
        }
    }

    /// Whether a slot at distance `d` from `n` belongs among `n`'s layer-0
    /// links: no farther than the farthest of them, or `n` has none.
    fn within_reach(&self, n: u32, d: f32) -> bool {
        let mut links = Vec::new();
        self.links_into(n, 0, &mut links);
        if links.is_empty() {
            return true;
        }
        let mut base = Vec::new();
        self.codes.get(n, &mut base);
        links.iter().any(|&l| self.codes.distance(&base, l) >= d)
    }

    fn link_alone(&self, slot: u32, q: &[f32], s: &mut Scratch) {
        let layer = self.layer_of[slot as usize];
        let (entry, top) = {
            let mut t = locked(&self.top);
            match *t {
                Some(x) => x,
                None => {
                    *t = Some((slot, layer));
                    return;
                }
            }
        };
        let mut ep = Near {
            d: self.codes.distance(q, entry),
            slot: entry,
        };
        for l in (layer.saturating_add(1)..=top).rev() {
            ep = self.greedy(q, ep, l, s);
        }
        let mut eps = vec![ep];
        for l in (0..=layer.min(top)).rev() {
            let mut found =
                self.search_layer(q, &eps, self.params.ef_construction, l, &|_| true, s);
            // Another thread may have linked this slot on a layer above.
            found.retain(|n| n.slot != slot);
            let mut chosen = self.select(&found, self.params.m);
            {
                let mut layers = locked(&self.upper[slot as usize]);
                // Slots linked on other threads meanwhile may have linked
                // themselves to this one already: keep those links (they
                // are the way back to them) among the chosen.
                let mut current = Vec::new();
                self.links_into_locked(slot, l, &layers, &mut current);
                if current.iter().any(|c| !chosen.contains(c)) {
                    let mut cands: Vec<Near> = chosen
                        .iter()
                        .chain(current.iter().filter(|c| !chosen.contains(c)))
                        .map(|&s| Near {
                            d: self.codes.distance(q, s),
                            slot: s,
                        })
                        .collect();
                    cands.sort_unstable();
                    chosen = self.select(&cands, self.cap(l));
                }
                self.store_links(slot, l, &mut layers, &chosen);
            }
            for &n in &chosen {
                self.connect(n, slot, l);
            }
            if !found.is_empty() {
                eps = found;
            }
        }
        if layer > top {
            let mut t = locked(&self.top);
            if t.is_none_or(|(_, tl)| layer > tl) {
                *t = Some((slot, layer));
            }
        }
    }

    /// Marks a slot deleted: never a result again.
    pub fn remove(&mut self, slot: u32) {
        if let Some(d) = self.deleted.get_mut(slot as usize) {
            if !*d {
                *d = true;
                self.live -= 1;
            }
        }
    }

    /// Links `new` from `n` on `layer`; when `n` has no room, its links are
    /// chosen again among the old ones and `new`.
    fn connect(&self, n: u32, new: u32, layer: u8) {
        let cap = self.cap(layer);
        let mut layers = locked(&self.upper[n as usize]);
        let mut current = Vec::with_capacity(cap + 1);
        self.links_into_locked(n, layer, &layers, &mut current);
        if current.contains(&new) {
            return;
        }
        if current.len() < cap {
            current.push(new);
            self.store_links(n, layer, &mut layers, &current);
            return;
        }
        let mut base = Vec::new();
        self.codes.get(n, &mut base);
        let mut cands: Vec<Near> = current
            .iter()
            .chain(std::iter::once(&new))
            .map(|&s| Near {
                d: self.codes.distance(&base, s),
                slot: s,
            })
            .collect();
        cands.sort_unstable();
        let chosen = self.select(&cands, cap);
        self.store_links(n, layer, &mut layers, &chosen);
    }

    /// The paper's heuristic over candidates sorted by distance: a
    /// candidate is kept when it is closer to the base than to every one
    /// kept before it, up to `m`.
    fn select(&self, sorted: &[Near], m: usize) -> Vec<u32> {
        let mut kept: Vec<u32> = Vec::with_capacity(m);
        let mut v = Vec::new();
        for c in sorted {
            if kept.len() == m {
                break;
            }
            self.codes.get(c.slot, &mut v);
            if kept.iter().all(|&k| self.codes.distance(&v, k) > c.d) {
                kept.push(c.slot);
            }
        }
        kept
    }

    /// From `ep`, the closest slot on `layer` found by moving to a closer
    /// neighbour while there is one.
    fn greedy(&self, q: &[f32], mut ep: Near, layer: u8, s: &mut Scratch) -> Near {
        let mut links = std::mem::take(&mut s.links);
        loop {
            let mut moved = false;
            self.links_into(ep.slot, layer, &mut links);
            for &n in &links {
                let d = self.codes.distance(q, n);
                if d < ep.d {
                    ep = Near { d, slot: n };
                    moved = true;
                }
            }
            if !moved {
                s.links = links;
                return ep;
            }
        }
    }

    /// The `ef` closest slots that `accept` passes, found on `layer` from
    /// `eps`, closest first. Slots it refuses are walked through.
    fn search_layer(
        &self,
        q: &[f32],
        eps: &[Near],
        ef: usize,
        layer: u8,
        accept: &dyn Fn(u32) -> bool,
        s: &mut Scratch,
    ) -> Vec<Near> {
        s.start(self.len());
        for &ep in eps {
            if s.visit(ep.slot) {
                s.candidates.push(Reverse(ep));
                if accept(ep.slot) {
                    s.results.push(ep);
                }
            }
        }
        while s.results.len() > ef {
            s.results.pop();
        }
        let mut links = std::mem::take(&mut s.links);
        while let Some(Reverse(c)) = s.candidates.pop() {
            let worst = s.results.peek().map_or(f32::INFINITY, |w| w.d);
            if s.results.len() >= ef && c.d > worst {
                break;
            }
            self.links_into(c.slot, layer, &mut links);
            links.retain(|n| s.visit(*n));
            for &n in links.iter().take(PREFETCH_AHEAD) {
                self.codes.prefetch(n);
            }
            for (i, &n) in links.iter().enumerate() {
                if let Some(&next) = links.get(i + PREFETCH_AHEAD) {
                    self.codes.prefetch(next);
                }
                let d = self.codes.distance(q, n);
                let worst = s.results.peek().map_or(f32::INFINITY, |w| w.d);
                if s.results.len() < ef || d < worst {
                    let near = Near { d, slot: n };
                    s.candidates.push(Reverse(near));
                    if accept(n) {
                        s.results.push(near);
                        if s.results.len() > ef {
                            s.results.pop();
                        }
                    }
                }
            }
        }
        s.links = links;
        let mut out: Vec<Near> = s.results.drain().collect();
        out.sort_unstable();
        out
    }

    /// The `k` closest live slots that `filter` passes (all when `None`),
    /// closest first, with their distances: a walk keeping `ef` candidates
    /// (at least `k`), then an exact scan if the walk found fewer than `k`.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        ef: usize,
        filter: Option<&dyn Fn(u32) -> bool>,
        scratch: &mut Scratch,
    ) -> Result<Vec<(u32, f32)>, VectorError> {
        let mut q = std::mem::take(&mut scratch.query);
        q.clear();
        q.extend(prepare(self.codes.metric(), self.codes.dim(), query)?);
        let accept = |slot: u32| !self.deleted[slot as usize] && filter.is_none_or(|f| f(slot));
        let mut found = Vec::new();
        let top = *locked(&self.top);
        if let (Some((entry, layer)), true) = (top, k > 0) {
            let mut ep = Near {
                d: self.codes.distance(&q, entry),
                slot: entry,
            };
            for l in (1..=layer).rev() {
                ep = self.greedy(&q, ep, l, scratch);
            }
            found = self.search_layer(&q, &[ep], ef.max(k), 0, &accept, scratch);
            found.truncate(k);
            if found.len() < k && found.len() < self.live {
                found = exact::top_k(&self.codes, &q, k, &accept);
            }
        }
        scratch.query = q;
        Ok(found.into_iter().map(|n| (n.slot, n.d)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// While slot 0's link stalls, 40 more begin and end one after another
    /// (80 ticks, past `RECENT`): one beginning then still meets the first
    /// of them, which may be cut off from it by the stalled slot; a link
    /// beginning after the stalled one ended meets only the recent ones.
    #[test]
    fn a_link_meets_what_ended_since_the_oldest_running_began() {
        let mut l = Linking::default();
        let stalled = l.begin(0);
        for slot in 1..=40 {
            let s = l.begin(slot);
            l.end(slot, s);
        }
        let late = l.begin(41);
        let peers = l.end(41, late);
        assert!(peers.contains(&1) && peers.contains(&0), "{peers:?}");
        l.end(0, stalled);
        for slot in 42..=80 {
            let s = l.begin(slot);
            l.end(slot, s);
        }
        let after = l.begin(81);
        let peers = l.end(81, after);
        assert!(!peers.contains(&1) && !peers.contains(&42), "{peers:?}");
        assert!(peers.contains(&80), "{peers:?}");
    }

    /// A stall longer than `HORIZON_CAP` ticks: the horizon stops there.
    #[test]
    fn a_horizon_reaches_back_at_most_its_cap() {
        let mut l = Linking::default();
        let _stalled = l.begin(0);
        let n = (HORIZON_CAP / 2 + 50) as u32;
        for slot in 1..=n {
            let s = l.begin(slot);
            l.end(slot, s);
        }
        let late = l.begin(n + 1);
        let peers = l.end(n + 1, late);
        assert!(!peers.contains(&1), "{} peers", peers.len());
        assert!(
            peers.contains(&0) && peers.contains(&n),
            "{} peers",
            peers.len()
        );
    }
}
