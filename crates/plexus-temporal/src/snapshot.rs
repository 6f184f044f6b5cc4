//! Temporal CSR snapshots of the valid-time graph, and leakage-safe
//! sampling on them.
//!
//! A snapshot holds the relationships that hold at an instant, or whose
//! stretches of validity overlap (or lie within) a window, in compressed
//! sparse rows by source, each slot with its relationship id and the
//! validity arrays `valid_from` / `valid_to` (`i64::MAX`: open). A
//! relationship whose timeline has several stretches in a window has a
//! slot per stretch. The nodes are the relationships' endpoints, in id
//! order. Built from the endpoint index (`graph.rs`): every relationship
//! ever stored, then one timeline seek (as of) or scan (window) each.
//!
//! Sampling takes a temporal context: [`Snapshot::walk`] is causal (each
//! step follows a relationship valid from no earlier than the one before
//! it, so a walk never goes back in time), and [`Snapshot::negatives`]
//! draws nodes the source has no relationship to at any valid time (read
//! from the store, not only the snapshot) — a hard negative is never a
//! positive of the future.

use crate::error::Result;
use crate::timeline::{segments, values_between};
use crate::version::{Kind, State};
use plexus_storage::GraphRead;
use std::collections::{BTreeMap, BTreeSet};

/// How a window selects stretches of validity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Those that overlap `[from, to)`.
    Overlap,
    /// Those that lie within it.
    Contained,
}

/// A temporal CSR snapshot; see the module.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Node ids, sorted; a node's index is its place here.
    pub nodes: Vec<String>,
    /// Per node, where its slots start (one more entry than nodes).
    pub offsets: Vec<usize>,
    /// Per slot: the target node's index, the relationship id, its
    /// validity.
    pub targets: Vec<u32>,
    pub edges: Vec<String>,
    pub valid_from: Vec<i64>,
    pub valid_to: Vec<i64>,
}

/// One stretch of a relationship: source, target, id, validity.
type Slot = (String, String, String, i64, i64);

/// Every relationship id the endpoint index holds.
fn all_edges(r: &(impl GraphRead + ?Sized)) -> Result<BTreeSet<String>> {
    Ok(values_between(r, b"O", b"P")?.into_iter().collect())
}

impl Snapshot {
    /// The relationships holding at valid time `at`.
    pub fn as_of(r: &(impl GraphRead + ?Sized), at: i64) -> Result<Snapshot> {
        let mut slots = Vec::new();
        for id in all_edges(r)? {
            if let Some((held, v)) = crate::read::holding(r, Kind::Edge, &id, at)? {
                if let State::Edge(e) = v.state {
                    slots.push((e.src, e.dst, id, held.from, held.end()));
                }
            }
        }
        Ok(Snapshot::from_slots(slots))
    }

    /// The relationships' stretches of validity that overlap, or lie
    /// within, `[from, to)`.
    pub fn window(
        r: &(impl GraphRead + ?Sized),
        from: i64,
        to: i64,
        how: Window,
    ) -> Result<Snapshot> {
        let mut slots = Vec::new();
        for id in all_edges(r)? {
            // The stretch covering `from`, then those starting inside.
            let mut stretches = Vec::new();
            if let Some((held, v)) = crate::read::holding(r, Kind::Edge, &id, from)? {
                if held.from < from {
                    stretches.push((held, v));
                }
            }
            for s in segments(r, Kind::Edge, &id, Some(from), Some(to))? {
                let v = crate::version::Version::decode(&s.version, &s.record)?;
                stretches.push((s.valid, v));
            }
            for (held, v) in stretches {
                let inside = held.from >= from && held.end() <= to;
                if how == Window::Contained && !inside {
                    continue;
                }
                if let State::Edge(e) = v.state {
                    slots.push((e.src, e.dst, id.clone(), held.from, held.end()));
                }
            }
        }
        Ok(Snapshot::from_slots(slots))
    }

    fn from_slots(mut slots: Vec<Slot>) -> Snapshot {
        let names: BTreeSet<&String> = slots.iter().flat_map(|s| [&s.0, &s.1]).collect();
        let nodes: Vec<String> = names.into_iter().cloned().collect();
        let index: BTreeMap<&str, u32> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect();
        slots.sort_by(|a, b| (&a.0, a.3, &a.2).cmp(&(&b.0, b.3, &b.2)));
        let mut snap = Snapshot {
            offsets: vec![0; nodes.len() + 1],
            ..Snapshot::default()
        };
        for (src, dst, id, from, to) in slots {
            snap.offsets[index[src.as_str()] as usize + 1] += 1;
            snap.targets.push(index[dst.as_str()]);
            snap.edges.push(id);
            snap.valid_from.push(from);
            snap.valid_to.push(to);
        }
        for i in 1..snap.offsets.len() {
            snap.offsets[i] += snap.offsets[i - 1];
        }
        snap.nodes = nodes;
        snap
    }

    /// The index of node `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.nodes.binary_search_by(|n| n.as_str().cmp(id)).ok()
    }

    /// The slots of node `i`'s relationships.
    pub fn slots(&self, i: usize) -> std::ops::Range<usize> {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => a..b,
            _ => 0..0,
        }
    }

    /// A causal random walk of at most `len` steps from node `start`: each
    /// step follows a relationship valid from no earlier than the last
    /// one followed (the walk's slots, in order). It stops early where no
    /// such relationship leaves the node.
    pub fn walk(&self, start: usize, len: usize, seed: u64) -> Vec<usize> {
        let mut rng = SplitMix(seed);
        let mut out = Vec::with_capacity(len);
        let (mut at, mut since) = (start, i64::MIN);
        for _ in 0..len {
            let ok: Vec<usize> = self
                .slots(at)
                .filter(|&s| self.valid_from[s] >= since)
                .collect();
            if ok.is_empty() {
                break;
            }
            let s = ok[rng.below(ok.len())];
            out.push(s);
            since = self.valid_from[s];
            at = self.targets[s] as usize;
        }
        out
    }

    /// Up to `k` distinct nodes of the snapshot, other than `source`, that
    /// `source` has no relationship to at any valid time, before the
    /// snapshot, in it or after it (read from `r`): a hard negative is
    /// never a positive of the future. Drawn at random.
    pub fn negatives(
        &self,
        r: &(impl GraphRead + ?Sized),
        source: usize,
        k: usize,
        seed: u64,
    ) -> Result<Vec<usize>> {
        let Some(name) = self.nodes.get(source) else {
            return Ok(Vec::new());
        };
        let mut ever = BTreeSet::new();
        for id in crate::graph::ever_attached(r, name, true, None)? {
            for seg in segments(r, Kind::Edge, &id, None, None)? {
                let v = crate::version::Version::decode(&seg.version, &seg.record)?;
                if let State::Edge(e) = v.state {
                    if e.src == *name {
                        ever.insert(e.dst);
                    }
                }
            }
        }
        let mut pool: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| n != source && !ever.contains(&self.nodes[n]))
            .collect();
        let mut rng = SplitMix(seed);
        let k = k.min(pool.len());
        for i in 0..k {
            let j = i + rng.below(pool.len() - i);
            pool.swap(i, j);
        }
        pool.truncate(k);
        Ok(pool)
    }
}

/// A small seeded generator (SplitMix64): samples repeat for a seed.
struct SplitMix(u64);

impl SplitMix {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z % n.max(1) as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::EdgeState;
    use crate::write::{commit_versions, VersionWrite};
    use crate::{Interval, Kind};
    use plexus_storage::Storage;

    fn knows(db: &Storage, id: &str, s: &str, d: &str, from: i64, to: Option<i64>) {
        let e = EdgeState {
            src: s.into(),
            dst: d.into(),
            rel_type: "KNOWS".into(),
            ..EdgeState::default()
        };
        let w = VersionWrite::assert_edge(id, e, Interval::new(from, to).unwrap());
        commit_versions(db, "default", &[w]).unwrap();
    }

    /// a→b [0,10), b→c [5,∞), a→c [20,∞), c→a [12,15), and a→b again
    /// over [30,40).
    fn graph() -> Storage {
        let db = Storage::in_memory().unwrap();
        knows(&db, "ab", "a", "b", 0, Some(10));
        knows(&db, "bc", "b", "c", 5, None);
        knows(&db, "ac", "a", "c", 20, None);
        knows(&db, "ca", "c", "a", 12, Some(15));
        knows(&db, "ab2", "a", "b", 30, Some(40));
        db
    }

    #[test]
    fn snapshots_as_of_and_over_windows() {
        let db = graph();
        let r = db.read("default").unwrap();
        let ids = |s: &Snapshot| {
            let mut e = s.edges.clone();
            e.sort();
            e
        };
        assert_eq!(ids(&Snapshot::as_of(&r, 7).unwrap()), ["ab", "bc"]);
        assert_eq!(ids(&Snapshot::as_of(&r, 13).unwrap()), ["bc", "ca"]);
        let over = Snapshot::window(&r, 8, 16, Window::Overlap).unwrap();
        assert_eq!(ids(&over), ["ab", "bc", "ca"]);
        let within = Snapshot::window(&r, 8, 16, Window::Contained).unwrap();
        assert_eq!(ids(&within), ["ca"]);
        let a = over.index_of("a").unwrap();
        let s = over.slots(a).next().unwrap();
        assert_eq!((over.valid_from[s], over.valid_to[s]), (0, 10));
        // A retraction narrows a stretch: the snapshot has what is left.
        let gone = VersionWrite::retract(Kind::Edge, "bc", Interval::from(50));
        commit_versions(&db, "default", &[gone]).unwrap();
        let r = db.read("default").unwrap();
        let late = Snapshot::window(&r, 45, 60, Window::Overlap).unwrap();
        let b = late.index_of("b").unwrap();
        let s = late.slots(b).next().unwrap();
        assert_eq!((late.valid_from[s], late.valid_to[s]), (5, 50));
    }

    #[test]
    fn walks_never_go_back_in_time_and_negatives_never_leak() {
        let db = graph();
        let r = db.read("default").unwrap();
        let all = Snapshot::window(&r, 0, 100, Window::Overlap).unwrap();
        let mut longest = 0;
        for seed in 0..200 {
            for start in 0..all.nodes.len() {
                let w = all.walk(start, 6, seed);
                for pair in w.windows(2) {
                    assert!(all.valid_from[pair[1]] >= all.valid_from[pair[0]], "{w:?}");
                    let reached = all.targets[pair[0]] as usize;
                    assert!(all.slots(reached).contains(&pair[1]));
                }
                longest = longest.max(w.len());
            }
        }
        // a→b(0) b→c(5) c→a(12) a→c(20)… is a walk of four steps or more.
        assert!(longest >= 4);
        // a's relationships reach b and c at some time: no negative for it,
        // even in a snapshot from before a→c holds.
        let a = all.index_of("a").unwrap();
        assert!(all.negatives(&r, a, 5, 1).unwrap().is_empty());
        let early = Snapshot::as_of(&r, 13).unwrap();
        let ea = early.index_of("a").unwrap();
        assert_eq!(early.nodes, ["a", "b", "c"]);
        assert!(
            early.negatives(&r, ea, 5, 1).unwrap().is_empty(),
            "c is a future positive"
        );
        // b reaches only c: a is its one negative (a→b goes the other way).
        let b = all.index_of("b").unwrap();
        assert_eq!(all.negatives(&r, b, 5, 1).unwrap(), [a]);
    }
}
