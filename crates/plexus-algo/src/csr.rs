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

impl Side {
    fn append(&mut self, mut other: Side) {
        self.target.append(&mut other.target);
        self.edge.append(&mut other.edge);
        self.rel.append(&mut other.rel);
    }
}

/// One thread's share of a parallel build.
struct Chunk {
    /// Index of the chunk's first node.
    first: usize,
    out: Side,
    inc: Side,
    out_count: Vec<usize>,
    in_count: Vec<usize>,
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
    /// Builds the snapshot of the graph `r` reads, on this thread.
    pub fn build(r: &impl GraphRead) -> Result<Csr> {
        let mut csr = Csr::skeleton(r)?;
        let chunk = csr.scan_chunk(r, NodeId(0), None)?;
        csr.fill(r, vec![chunk])?;
        Ok(csr)
    }

    /// Builds the snapshot of `graph` with `threads` threads, each scanning
    /// the adjacency of its own range of nodes in its own transaction; all
    /// the transactions see the same commit.
    pub fn build_parallel(storage: &Storage, graph: &str, threads: usize) -> Result<Csr> {
        let mut txns = storage.read_consistent(graph, threads.max(1))?;
        let mut csr = Csr::skeleton(&txns[0])?;
        let (n, parts) = (csr.ids.len(), txns.len());
        let bound = |k: usize| csr.ids.get(k * n / parts).copied();
        let ranges: Vec<(NodeId, Option<NodeId>)> = (0..parts)
            .map(|k| (bound(k).unwrap_or(NodeId(u64::MAX)), bound(k + 1)))
            .collect();
        let main_txn = txns.remove(0);
        let chunks = std::thread::scope(|scope| {
            let csr = &csr;
            // Each thread owns its transaction: LMDB read transactions may
            // move between threads but not be shared by them.
            let handles: Vec<_> = txns
                .into_iter()
                .zip(ranges[1..].iter().copied())
                .map(|(t, (from, to))| scope.spawn(move || csr.scan_chunk(&t, from, to)))
                .collect();
            let mine = csr.scan_chunk(&main_txn, ranges[0].0, ranges[0].1);
            std::iter::once(mine)
                .chain(
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("a CSR build thread panicked")),
                )
                .collect::<Result<Vec<_>>>()
        })?;
        csr.fill(&main_txn, chunks)?;
        Ok(csr)
    }

    /// The node ids and the id → index table, before any adjacency.
    fn skeleton(r: &impl GraphRead) -> Result<Csr> {
        let ids: Vec<NodeId> = r.nodes().collect::<Result<_, _>>()?;
        let max = ids.last().map_or(0, |n| n.0);
        let table = (max < ids.len() as u64 * 4 + 1024).then(|| {
            let mut t = vec![u32::MAX; max as usize + 1];
            for (i, n) in ids.iter().enumerate() {
                t[n.0 as usize] = i as u32;
            }
            t
        });
        Ok(Csr {
            graph: r.graph_name().to_string(),
            version: r.version(),
            ids,
            table,
            out: Side::default(),
            inc: Side::default(),
            types: HashMap::new(),
            weights: None,
        })
    }

    /// The adjacency of the nodes with ids in `[from, to)`, as two sides
    /// with per-node counts (for the nodes of that range, in order).
    fn scan_chunk(&self, r: &impl GraphRead, from: NodeId, to: Option<NodeId>) -> Result<Chunk> {
        let first = self.ids.partition_point(|n| *n < from);
        let last = to.map_or(self.ids.len(), |t| self.ids.partition_point(|n| *n < t));
        let mut c = Chunk {
            first,
            out: Side::default(),
            inc: Side::default(),
            out_count: vec![0; last - first],
            in_count: vec![0; last - first],
        };
        for entry in r.adjacency_between(from, to) {
            let (node, s) = entry?;
            let (i, j) = (self.index(node)? - first, self.index(s.node)?);
            let (side, count) = if s.outgoing {
                (&mut c.out, &mut c.out_count)
            } else {
                (&mut c.inc, &mut c.in_count)
            };
            side.target.push(j as u32);
            side.edge.push(s.edge.0);
            side.rel.push(s.rel_type.0);
            count[i] += 1;
        }
        Ok(c)
    }

    /// Joins the chunks (in node order) into the final arrays.
    fn fill(&mut self, r: &impl GraphRead, chunks: Vec<Chunk>) -> Result<()> {
        let (mut out_count, mut in_count) = (
            Vec::with_capacity(self.ids.len()),
            Vec::with_capacity(self.ids.len()),
        );
        for c in chunks {
            debug_assert_eq!(c.first, out_count.len());
            self.out.append(c.out);
            self.inc.append(c.inc);
            out_count.extend(c.out_count);
            in_count.extend(c.in_count);
        }
        self.out.off = prefix_sums(&out_count);
        self.inc.off = prefix_sums(&in_count);
        let mut seen: Vec<u32> = self.out.rel.clone();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            self.types
                .insert(r.type_name(TypeId(t))?.to_string(), TypeId(t));
        }
        Ok(())
    }

    /// Builds the snapshot and keeps each edge's numeric `weight_key`
    /// property, for weighted paths and sampling.
    pub fn build_with_weights(r: &impl GraphRead, weight_key: &str) -> Result<Csr> {
        Csr::build(r)?.with_weights(r, weight_key)
    }

    /// Adds each edge's numeric `weight_key` property, read through `r`
    /// (which must see the commit this snapshot reflects).
    pub fn with_weights(mut self, r: &impl GraphRead, weight_key: &str) -> Result<Csr> {
        let mut w = HashMap::with_capacity(self.out.edge.len());
        for &e in &self.out.edge {
            if let Some(x) = numeric(
                EdgeId(e),
                weight_key,
                r.edge_property(EdgeId(e), weight_key)?,
            )? {
                w.insert(e, x);
            }
        }
        self.weights = Some((weight_key.to_string(), w));
        Ok(self)
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
