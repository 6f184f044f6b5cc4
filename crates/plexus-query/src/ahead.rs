//! Reading adjacency ahead on a remote store.
//!
//! The pattern matcher walks depth first, one node at a time: on a local
//! store each node's adjacency is a memory read, but on a remote one
//! (`GraphRead::remote`, the postgres backend) each is a round trip. So
//! where the matcher knows which nodes it will expand next — the
//! neighbours just read, a breadth-first level, a batch of start
//! candidates — it reads all their adjacency for that hop in one call
//! (`GraphRead::neighbors_many`: one round trip) and keeps it here for
//! the expansions that follow. On a local store this does nothing.

use plexus_storage::{Direction, GraphRead, Neighbor, NodeId, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;

/// Which relationships a hop follows: its pattern (by address, stable for
/// the query's life) and the direction it is walked in.
pub(crate) type HopKey = (usize, Direction);

/// The most nodes read ahead at once (one statement's worth).
pub(crate) const BATCH: usize = 1024;
/// Neighbours kept before the cache starts over (memory bound: about
/// 8 MiB; past it, nodes are read one by one again, as on a local store).
const MAX_KEPT: usize = 1 << 18;

#[derive(Default)]
struct Kept {
    lists: HashMap<(HopKey, NodeId), Vec<Neighbor>>,
    neighbours: usize,
}

/// Adjacency read ahead, by hop and node.
pub(crate) struct ReadAhead {
    on: bool,
    kept: RefCell<Kept>,
}

impl ReadAhead {
    pub fn new(g: &dyn GraphRead) -> ReadAhead {
        ReadAhead {
            on: g.remote(),
            kept: RefCell::default(),
        }
    }

    /// Whether reading ahead pays (a remote store).
    pub fn on(&self) -> bool {
        self.on
    }

    /// The neighbours of `node` over the hop, if read ahead.
    pub fn get(&self, hop: HopKey, node: NodeId) -> Option<Vec<Neighbor>> {
        if !self.on {
            return None;
        }
        self.kept.borrow().lists.get(&(hop, node)).cloned()
    }

    /// Whether `node`'s neighbours over the hop are kept.
    pub fn has(&self, hop: HopKey, node: NodeId) -> bool {
        self.on && self.kept.borrow().lists.contains_key(&(hop, node))
    }

    /// Reads the neighbours over the hop (of relationship types `types`,
    /// any type when `None`) of those of `nodes` not kept yet, in calls of
    /// up to [`BATCH`] nodes. Nothing on a local store, or for one node
    /// (the matcher reads it when it gets there).
    pub fn fill(
        &self,
        g: &dyn GraphRead,
        hop: HopKey,
        types: Option<&[TypeId]>,
        nodes: impl Iterator<Item = NodeId>,
    ) -> plexus_storage::Result<()> {
        if !self.on {
            return Ok(());
        }
        let mut todo: Vec<NodeId> = nodes.filter(|n| !self.has(hop, *n)).collect();
        todo.sort_unstable();
        todo.dedup();
        if todo.len() < 2 {
            return Ok(());
        }
        let mut kept = self.kept.borrow_mut();
        if kept.neighbours > MAX_KEPT {
            *kept = Kept::default();
        }
        let mut out = Vec::new();
        for chunk in todo.chunks(BATCH) {
            let mut lists: Vec<Vec<Neighbor>> = vec![Vec::new(); chunk.len()];
            match types {
                None => {
                    g.neighbors_many(chunk, hop.1, None, &mut out)?;
                    lists = std::mem::take(&mut out);
                }
                Some(types) => {
                    for t in types {
                        g.neighbors_many(chunk, hop.1, Some(*t), &mut out)?;
                        for (list, more) in lists.iter_mut().zip(out.drain(..)) {
                            list.extend(more);
                        }
                    }
                }
            }
            for (n, list) in chunk.iter().zip(lists) {
                kept.neighbours += list.len();
                kept.lists.insert((hop, *n), list);
            }
        }
        Ok(())
    }
}
