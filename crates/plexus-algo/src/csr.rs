//! A compressed sparse row snapshot of one graph: immutable arrays of
//! neighbours per node in both directions, built from one read snapshot
//! with a single sequential scan of the adjacency index.
//!
//! It records the commit version it reflects; `check_current` refuses a
//! stale snapshot instead of silently answering from old data.

use crate::error::{AlgoError, Result};
use crate::view::{numeric, skip_self_loops, Filter, GraphView, Split, Step, TypeFilter};
use plexus_storage::{Direction, EdgeId, GraphRead, NodeId, Storage, TypeId};
use std::collections::HashMap;

/// Neighbour lists of one direction: node `i`'s entries are
/// `off[i]..off[i+1]`, sorted by type, neighbour and edge.
#[derive(Debug, Default)]
struct Side {
    off: Vec<usize>,
    target: Vec<u32>,
    edge: Vec<u64>,
    rel: Vec<u32>,
}

/// An immutable in-memory snapshot for heavy traversal and sampling.
#[derive(Debug)]
pub struct Csr {
    graph: String,
    version: u64,
    ids: Vec<NodeId>,
    /// Internal id → dense index, when ids are dense enough for a table.
    table: Option<Vec<u32>>,
    out: Side,
    inc: Side,
    types: HashMap<String, TypeId>,
    weights: Option<(String, HashMap<u64, f64>)>,
}

impl Csr {
    /// Builds the snapshot of the graph `r` reads.
    pub fn build(r: &impl GraphRead) -> Result<Csr> {
        let ids: Vec<NodeId> = r.nodes().collect::<Result<_, _>>()?;
        let max = ids.last().map_or(0, |n| n.0);
        let table = (max < ids.len() as u64 * 4 + 1024).then(|| {
            let mut t = vec![u32::MAX; max as usize + 1];
            for (i, n) in ids.iter().enumerate() {
                t[n.0 as usize] = i as u32;
            }
            t
        });
        let mut csr = Csr {
            graph: r.graph_name().to_string(),
            version: r.version(),
            ids,
            table,
            out: Side::default(),
            inc: Side::default(),
            types: HashMap::new(),
            weights: None,
        };
        let n = csr.ids.len();
        let (mut out_count, mut in_count) = (vec![0usize; n], vec![0usize; n]);
        for entry in r.adjacency() {
            let (node, s) = entry?;
            let (i, j) = (csr.index(node)?, csr.index(s.node)?);
            let side = if s.outgoing {
                &mut csr.out
            } else {
                &mut csr.inc
            };
            side.target.push(j as u32);
            side.edge.push(s.edge.0);
            side.rel.push(s.rel_type.0);
            if s.outgoing {
                out_count[i] += 1
            } else {
                in_count[i] += 1
            }
        }
        csr.out.off = prefix_sums(&out_count);
        csr.inc.off = prefix_sums(&in_count);
        let mut seen: Vec<u32> = csr.out.rel.clone();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            csr.types
                .insert(r.type_name(TypeId(t))?.to_string(), TypeId(t));
        }
        Ok(csr)
    }

    /// Builds the snapshot and keeps each edge's numeric `weight_key`
    /// property, for weighted paths and sampling.
    pub fn build_with_weights(r: &impl GraphRead, weight_key: &str) -> Result<Csr> {
        let mut csr = Csr::build(r)?;
        let mut w = HashMap::with_capacity(csr.out.edge.len());
        for &e in &csr.out.edge {
            if let Some(x) = numeric(
                EdgeId(e),
                weight_key,
                r.edge_property(EdgeId(e), weight_key)?,
            )? {
                w.insert(e, x);
            }
        }
        csr.weights = Some((weight_key.to_string(), w));
        Ok(csr)
    }

    fn index(&self, n: NodeId) -> Result<usize> {
        let i = match &self.table {
            Some(t) => t
                .get(n.0 as usize)
                .copied()
                .filter(|i| *i != u32::MAX)
                .map(|i| i as usize),
            None => self.ids.binary_search(&n).ok(),
        };
        i.ok_or_else(|| {
            AlgoError::BadInput(format!(
                "node {n} is not in this snapshot of graph '{}'",
                self.graph
            ))
        })
    }

    /// The commit version this snapshot reflects.
    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn node_count(&self) -> usize {
        self.ids.len()
    }

    pub fn edge_count(&self) -> usize {
        self.out.edge.len()
    }

    /// Fails when a commit happened in `storage` after this snapshot was taken.
    pub fn check_current(&self, storage: &Storage) -> Result<()> {
        let now = storage.version();
        if now != self.version {
            return Err(AlgoError::BadInput(format!(
                "this snapshot of graph '{}' reflects version {} but the database is at version {now}; rebuild it",
                self.graph, self.version
            )));
        }
        Ok(())
    }
}

fn prefix_sums(counts: &[usize]) -> Vec<usize> {
    let mut off = Vec::with_capacity(counts.len() + 1);
    let mut total = 0;
    off.push(0);
    for c in counts {
        total += c;
        off.push(total);
    }
    off
}

impl GraphView for Csr {
    fn steps(&self, node: NodeId, filter: &Filter, out: &mut Vec<Step>) -> Result<()> {
        let i = self.index(node)?;
        for d in filter.dir.split() {
            let (side, outgoing) = if *d == Direction::Out {
                (&self.out, true)
            } else {
                (&self.inc, false)
            };
            let start = out.len();
            for k in side.off[i]..side.off[i + 1] {
                let t = TypeId(side.rel[k]);
                if let TypeFilter::Only(_) = filter.types {
                    if !filter.allows(t) {
                        continue;
                    }
                }
                out.push(Step {
                    edge: EdgeId(side.edge[k]),
                    node: self.ids[side.target[k] as usize],
                    rel_type: t,
                    outgoing,
                });
            }
            if filter.dir == Direction::Both && *d == Direction::In {
                skip_self_loops(out, start, node);
            }
        }
        Ok(())
    }

    fn weight(&self, edge: EdgeId, key: &str) -> Result<Option<f64>> {
        match &self.weights {
            Some((k, w)) if k == key => Ok(w.get(&edge.0).copied()),
            _ => Err(AlgoError::BadInput(format!(
                "this snapshot was built without weights '{key}' (use build_with_weights)"
            ))),
        }
    }

    fn type_id(&self, name: &str) -> Option<TypeId> {
        self.types.get(name).copied()
    }
}
