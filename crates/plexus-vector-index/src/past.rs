//! Vector search as of a system time (`Storage::read_as_of`).
//!
//! A vector index's graph and codes (`index_data`) are the index as it is
//! now; they keep no history. Read as of an earlier instant, the graph's
//! history still has every vector property as it was, and the index's
//! definition as it was (the schema is versioned): the search then ranks
//! every node (or relationship) the index covered then by its exact
//! distance, in full precision. It costs a scan of the index's label
//! (type) rather than a walk of the graph, and holds only the best `k`.

use crate::config::{vector_of, Config};
use crate::error::VectorIndexError;
use plexus_storage::{EdgeId, GraphRead, IndexInfo, NodeId};
use plexus_vector::{prepare, Metric};
use std::collections::BinaryHeap;

/// The definition of `index` when `txn` reads as of a system time and the
/// index is a vector index there; `None` reading the graph as it is.
pub(crate) fn index_then(
    txn: &dyn GraphRead,
    index: &str,
    edges: bool,
) -> Result<Option<IndexInfo>, VectorIndexError> {
    if txn.system_time().is_none() {
        return Ok(None);
    }
    let Some(info) = txn.indexes()?.into_iter().find(|i| i.name == index) else {
        return Ok(None);
    };
    if !info.kind.is_maintained() {
        return Ok(None);
    }
    if info.kind.on_relationships() != edges {
        return Err(VectorIndexError::WrongEntity {
            index: index.into(),
            holds: if edges { "nodes" } else { "relationships" },
        });
    }
    Ok(Some(info))
}

/// A candidate and its distance; the heap keeps the farthest on top.
#[derive(PartialEq)]
struct Ranked(f32, u64);

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// The exact `k` nearest of the nodes (`edges` false) or relationships
/// that `info` covered as `txn` reads them, that `accept` passes, among
/// `among` when given: nearest first, with their distances.
pub(crate) fn search(
    txn: &dyn GraphRead,
    info: &IndexInfo,
    query: &[f32],
    k: usize,
    among: Option<&[NodeId]>,
    accept: &dyn Fn(u64) -> bool,
) -> Result<(Vec<(u64, f32)>, Metric), VectorIndexError> {
    let config = Config::from_options(&info.options)?;
    let q = prepare(config.metric, config.dim, query)?;
    let edges = info.kind.on_relationships();
    let label = info.label.as_deref();
    let candidates: Box<dyn Iterator<Item = plexus_storage::Result<u64>>> = match (among, label) {
        (Some(nodes), _) => Box::new(nodes.iter().map(|n| Ok(n.0))),
        (None, Some(t)) if edges => Box::new(txn.edges_with_type(t).map(|e| e.map(|e| e.0))),
        (None, None) if edges => Box::new(txn.edges().map(|e| e.map(|e| e.0))),
        (None, Some(l)) => Box::new(txn.nodes_with_label(l).map(|n| n.map(|n| n.0))),
        (None, None) => Box::new(txn.nodes().map(|n| n.map(|n| n.0))),
    };
    let mut best = BinaryHeap::with_capacity(k.saturating_add(1));
    for id in candidates {
        let id = id?;
        if !accept(id) {
            continue;
        }
        let value = if edges {
            txn.edge_property(EdgeId(id), &info.key)?
        } else {
            // Candidates given by the caller may lack the index's label.
            if let (Some(_), Some(l)) = (among, label) {
                if !txn.node_has_label(NodeId(id), l)? {
                    continue;
                }
            }
            txn.node_property(NodeId(id), &info.key)?
        };
        // The index refused any other value when it was written, so a
        // value that is no vector of its dimension was not in it then.
        let Some(v) = value.filter(|v| !v.is_null()) else {
            continue;
        };
        let Ok(v) = vector_of(&v).and_then(|v| Ok(prepare(config.metric, config.dim, &v)?)) else {
            continue;
        };
        best.push(Ranked(config.metric.distance(&q, &v), id));
        if best.len() > k {
            best.pop();
        }
    }
    let found = best
        .into_sorted_vec()
        .into_iter()
        .map(|Ranked(d, id)| (id, d))
        .collect();
    Ok((found, config.metric))
}
