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
pub struct Hnsw {
    params: Params,
    codes: Codes,
    layer_of: Vec<u8>,
    /// Layer 0: `2m` links per slot; `count0[slot]` of them in use.
    links0: Vec<u32>,
    count0: Vec<u16>,
    /// Layers 1 and up, per slot (empty for the slots of layer 0 only).
    upper: Vec<Vec<Vec<u32>>>,
    deleted: Vec<bool>,
    live: usize,
    entry: Option<u32>,
    /// For linking (`insert` has the graph to itself).
    scratch: Scratch,
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
            entry: None,
            scratch: Scratch::default(),
        }
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
            .flat_map(|layers| layers.iter().map(|l| l.len() * 4))
            .sum();
        self.links0.len() * 4 + self.count0.len() * 2 + self.layer_of.len() + upper
    }

    fn cap(&self, layer: u8) -> usize {
        if layer == 0 {
            2 * self.params.m
        } else {
            self.params.m
        }
    }

    fn links(&self, slot: u32, layer: u8) -> &[u32] {
        if layer == 0 {
            let at = slot as usize * 2 * self.params.m;
            &self.links0[at..at + self.count0[slot as usize] as usize]
        } else {
            &self.upper[slot as usize][layer as usize - 1]
        }
    }

    fn set_links(&mut self, slot: u32, layer: u8, links: &[u32]) {
        if layer == 0 {
            let at = slot as usize * 2 * self.params.m;
            self.links0[at..at + links.len()].copy_from_slice(links);
            self.count0[slot as usize] = links.len() as u16;
        } else {
            let l = &mut self.upper[slot as usize][layer as usize - 1];
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

    /// Adds a vector; its slot is the number of slots before it.
    pub fn insert(&mut self, v: &[f32]) -> Result<u32, VectorError> {
        let q = prepare(self.codes.metric(), self.codes.dim(), v)?;
        let slot = u32::try_from(self.len()).map_err(|_| VectorError::Full)?;
        self.codes.push(&q);
        let layer = self.draw_layer(slot);
        self.layer_of.push(layer);
        self.links0.resize(self.links0.len() + 2 * self.params.m, 0);
        self.count0.push(0);
        self.upper.push(vec![Vec::new(); layer as usize]);
        self.deleted.push(false);
        self.live += 1;
        let Some(entry) = self.entry else {
            self.entry = Some(slot);
            return Ok(slot);
        };
        let top = self.layer_of[entry as usize];
        let mut ep = Near {
            d: self.codes.distance(&q, entry),
            slot: entry,
        };
        for l in (layer.saturating_add(1)..=top).rev() {
            ep = self.greedy(&q, ep, l);
        }
        let mut eps = vec![ep];
        let mut scratch = std::mem::take(&mut self.scratch);
        for l in (0..=layer.min(top)).rev() {
            let found = self.search_layer(
                &q,
                &eps,
                self.params.ef_construction,
                l,
                &|_| true,
                &mut scratch,
            );
            let chosen = self.select(&found, self.params.m);
            self.set_links(slot, l, &chosen);
            for &n in &chosen {
                self.connect(n, slot, l);
            }
            eps = found;
        }
        self.scratch = scratch;
        if layer > top {
            self.entry = Some(slot);
        }
        Ok(slot)
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
    fn connect(&mut self, n: u32, new: u32, layer: u8) {
        let cap = self.cap(layer);
        let current = self.links(n, layer);
        if current.len() < cap {
            let mut links = current.to_vec();
            links.push(new);
            self.set_links(n, layer, &links);
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
        self.set_links(n, layer, &chosen);
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
    fn greedy(&self, q: &[f32], mut ep: Near, layer: u8) -> Near {
        loop {
            let mut moved = false;
            for &n in self.links(ep.slot, layer) {
                let d = self.codes.distance(q, n);
                if d < ep.d {
                    ep = Near { d, slot: n };
                    moved = true;
                }
            }
            if !moved {
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
        while let Some(Reverse(c)) = s.candidates.pop() {
            let worst = s.results.peek().map_or(f32::INFINITY, |w| w.d);
            if s.results.len() >= ef && c.d > worst {
                break;
            }
            for &n in self.links(c.slot, layer) {
                if !s.visit(n) {
                    continue;
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
        if let (Some(entry), true) = (self.entry, k > 0) {
            let mut ep = Near {
                d: self.codes.distance(&q, entry),
                slot: entry,
            };
            for l in (1..=self.layer_of[entry as usize]).rev() {
                ep = self.greedy(&q, ep, l);
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
