//! Each node's slots, one per vector it has had that a snapshot may see:
//! for searches among given nodes (`VectorIndex::search_among`).
//!
//! The newest slot per node sits in a vector indexed by node id while ids
//! are dense enough (the usual case: ids count up from zero), so a scan of
//! candidates in node order reads it in order; once the largest id outgrows
//! `DENSE_PER_NODE` times the nodes held (plus `DENSE_FLOOR`), in a hash
//! map. Older slots, oldest first, sit in a map beside it (few nodes have
//! them).

use rustc_hash::FxHashMap;

/// A node without a slot in the dense vector.
const NONE: u32 = u32::MAX;
/// The dense vector may hold this many entries per node it maps...
const DENSE_PER_NODE: u64 = 16;
/// ...plus this many, so that a small index keeps it.
const DENSE_FLOOR: u64 = 1 << 16;

#[derive(Default)]
pub(crate) struct NodeSlots {
    dense: Vec<u32>,
    /// Instead of `dense`, once ids are too sparse for it.
    sparse: Option<FxHashMap<u64, u32>>,
    /// Nodes with a newest slot.
    nodes: u64,
    older: FxHashMap<u64, Vec<u32>>,
}

impl NodeSlots {
    /// The newest slot of `node`.
    pub fn newest(&self, node: u64) -> Option<u32> {
        match &self.sparse {
            Some(map) => map.get(&node).copied(),
            None => usize::try_from(node)
                .ok()
                .and_then(|i| self.dense.get(i))
                .copied()
                .filter(|s| *s != NONE),
        }
    }

    /// Sets (or clears) the newest slot of `node`; returns the one before.
    fn set_newest(&mut self, node: u64, slot: Option<u32>) -> Option<u32> {
        let before = self.newest(node);
        match (before, slot) {
            (None, Some(_)) => self.nodes += 1,
            (Some(_), None) => self.nodes -= 1,
            _ => {}
        }
        let bound = self.nodes.saturating_mul(DENSE_PER_NODE) + DENSE_FLOOR;
        if self.sparse.is_none() && node >= bound && slot.is_some() {
            // Too sparse for the vector: move to the map.
            let map = self
                .dense
                .iter()
                .enumerate()
                .filter(|(_, s)| **s != NONE)
                .map(|(n, s)| (n as u64, *s))
                .collect();
            self.sparse = Some(map);
            self.dense = Vec::new();
        }
        match &mut self.sparse {
            Some(map) => {
                match slot {
                    Some(s) => map.insert(node, s),
                    None => map.remove(&node),
                };
            }
            None => {
                // `node < bound`, which fits in memory by construction.
                let i = node as usize;
                if i >= self.dense.len() {
                    if slot.is_none() {
                        return before;
                    }
                    let grown = (i + 1).max(self.dense.len() * 2).min(bound as usize);
                    self.dense.resize(grown.max(i + 1), NONE);
                }
                self.dense[i] = slot.unwrap_or(NONE);
            }
        }
        before
    }

    pub fn add(&mut self, node: u64, slot: u32) {
        if let Some(prev) = self.set_newest(node, Some(slot)) {
            self.older.entry(node).or_default().push(prev);
        }
    }

    /// Takes back the newest slot `add` gave `node` (a retracted publish).
    pub fn remove(&mut self, node: u64, slot: u32) {
        if self.newest(node) != Some(slot) {
            return;
        }
        let prev = self.older.get_mut(&node).and_then(Vec::pop);
        if self.older.get(&node).is_some_and(Vec::is_empty) {
            self.older.remove(&node);
        }
        self.set_newest(node, prev);
    }

    /// The newest of `node`'s slots that `ok` accepts.
    pub fn find(&self, node: u64, ok: impl Fn(u32) -> bool) -> Option<u32> {
        let newest = self.newest(node)?;
        if ok(newest) {
            return Some(newest);
        }
        self.older
            .get(&node)?
            .iter()
            .rev()
            .copied()
            .find(|s| ok(*s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn newest_first_and_taken_back() {
        let mut n = NodeSlots::default();
        n.add(3, 10);
        n.add(3, 11);
        assert_eq!(n.find(3, |_| true), Some(11));
        assert_eq!(n.find(3, |s| s != 11), Some(10));
        n.remove(3, 11);
        assert_eq!(n.find(3, |_| true), Some(10));
        n.remove(3, 10);
        assert_eq!(n.find(3, |_| true), None);
        assert_eq!(n.nodes, 0);
        // An id far past the nodes held moves them to the map.
        n.add(1, 1);
        n.add(u64::MAX - 1, 2);
        assert!(n.sparse.is_some() && n.dense.is_empty());
        assert_eq!((n.newest(1), n.newest(u64::MAX - 1)), (Some(1), Some(2)));
    }

    proptest! {
        /// Against a model of slot lists, on ids dense and sparse.
        #[test]
        fn agrees_with_a_model(ops in proptest::collection::vec(
            (prop_oneof![0u64..50, Just(1u64 << 40), any::<u64>()], any::<bool>()), 1..200)
        ) {
            let mut n = NodeSlots::default();
            let mut model: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
            for (slot, (node, add)) in ops.into_iter().enumerate() {
                let slot = slot as u32;
                if add {
                    n.add(node, slot);
                    model.entry(node).or_default().push(slot);
                } else if let Some(&last) = model.get(&node).and_then(|v| v.last()) {
                    n.remove(node, last);
                    model.get_mut(&node).unwrap().pop();
                }
                for (node, slots) in &model {
                    prop_assert_eq!(n.newest(*node), slots.last().copied());
                    prop_assert_eq!(n.find(*node, |s| s % 2 == 0), slots.iter().rev().copied().find(|s| s % 2 == 0));
                }
            }
        }
    }
}
