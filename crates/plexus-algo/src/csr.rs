//! A compressed sparse row snapshot of one graph: immutable arrays of
//! neighbours per node in both directions, built from one read snapshot
//! with a single sequential scan of the adjacency index.
//!
//! It records the commit version it reflects; `check_current` refuses a
//! stale snapshot instead of silently answering from old data.

use crate::buf::Buf;
use crate::error::{AlgoError, Result};
use crate::view::{numeric, skip_self_loops, Filter, GraphView, Split, Step, TypeFilter};
use plexus_storage::{Direction, EdgeId, GraphRead, NodeId, Storage, TypeId};
use std::collections::HashMap;

/// Neighbour lists of one direction while they are built.
#[derive(Debug, Default)]
struct SideVecs {
    target: Vec<u32>,
    edge: Vec<u64>,
    rel: Vec<u32>,
}

impl SideVecs {
    fn append(&mut self, mut other: SideVecs) {
        self.target.append(&mut other.target);
        self.edge.append(&mut other.edge);
        self.rel.append(&mut other.rel);
    }

    fn freeze(self, counts: &[usize]) -> Side {
        Side {
            off: prefix_sums(counts).into(),
            target: self.target.into(),
            edge: self.edge.into(),
            rel: self.rel.into(),
        }
    }
}

/// Neighbour lists of one direction: node `i`'s entries are
/// `off[i]..off[i+1]` (indexes into the other arrays), sorted by type,
/// neighbour and edge; `target` holds dense node indexes.
#[derive(Debug, Default)]
pub(crate) struct Side {
    pub(crate) off: Buf<u64>,
    pub(crate) target: Buf<u32>,
    pub(crate) edge: Buf<u64>,
    pub(crate) rel: Buf<u32>,
}

impl Side {
    /// The entries of node `i`.
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        // Offsets are validated (non-decreasing, within the arrays) when a
        // snapshot is built or opened, so they fit in usize.
        self.off[i] as usize..self.off[i + 1] as usize
    }
}

/// The user id of each node, by dense index: `bytes[off[i]..off[i+1]]`.
#[derive(Debug, Default)]
pub(crate) struct Keys {
    pub(crate) off: Buf<u64>,
    pub(crate) bytes: Buf<u8>,
}

/// One thread's share of a parallel build.
struct Chunk {
    /// Index of the chunk's first node.
    first: usize,
    out: SideVecs,
    inc: SideVecs,
    out_count: Vec<usize>,
    in_count: Vec<usize>,
}

/// An immutable in-memory snapshot for heavy traversal and sampling.
#[derive(Debug)]
pub struct Csr {
    pub(crate) graph: String,
    pub(crate) version: u64,
    /// Internal node ids, ascending: the dense index is the position.
    pub(crate) ids: Buf<u64>,
    /// Internal id → dense index, when ids are dense enough for a table.
    pub(crate) table: Option<Vec<u32>>,
    pub(crate) out: Side,
    pub(crate) inc: Side,
    pub(crate) types: HashMap<String, TypeId>,
    pub(crate) weights: Option<(String, HashMap<u64, f64>)>,
    /// User ids by dense index, when asked for ([`Csr::with_keys`]).
    pub(crate) keys: Option<Keys>,
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
        let bound = |k: usize| csr.ids.get(k * n / parts).map(|i| NodeId(*i));
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
        let ids: Vec<u64> = r
            .nodes()
            .map(|n| n.map(|n| n.0))
            .collect::<Result<_, _>>()?;
        Ok(Csr {
            graph: r.graph_name().to_string(),
            version: r.version(),
            table: id_table(&ids),
            ids: ids.into(),
            out: Side::default(),
            inc: Side::default(),
            types: HashMap::new(),
            weights: None,
            keys: None,
        })
    }

    /// The adjacency of the nodes with ids in `[from, to)`, as two sides
    /// with per-node counts (for the nodes of that range, in order).
    fn scan_chunk(&self, r: &impl GraphRead, from: NodeId, to: Option<NodeId>) -> Result<Chunk> {
        let first = self.ids.partition_point(|n| *n < from.0);
        let last = to.map_or(self.ids.len(), |t| self.ids.partition_point(|n| *n < t.0));
        let mut c = Chunk {
            first,
            out: SideVecs::default(),
            inc: SideVecs::default(),
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
        let (mut out, mut inc) = (SideVecs::default(), SideVecs::default());
        for c in chunks {
            debug_assert_eq!(c.first, out_count.len());
            out.append(c.out);
            inc.append(c.inc);
            out_count.extend(c.out_count);
            in_count.extend(c.in_count);
        }
        self.out = out.freeze(&out_count);
        self.inc = inc.freeze(&in_count);
        let mut seen: Vec<u32> = self.out.rel.to_vec();
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
        for &e in self.out.edge.iter() {
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
            None => self.ids.binary_search(&n.0).ok(),
        };
        i.ok_or_else(|| {
            AlgoError::BadInput(format!(
                "node {n} is not in this snapshot of graph '{}'",
                self.graph
            ))
        })
    }

    /// Adds each node's user id (read through `r`, which must see the
    /// commit this snapshot reflects), for id maps and saving.
    pub fn with_keys(mut self, r: &impl GraphRead) -> Result<Csr> {
        let mut off = Vec::with_capacity(self.ids.len() + 1);
        let mut bytes = Vec::new();
        off.push(0u64);
        for &n in self.ids.iter() {
            let key = r.node_user_id(NodeId(n))?.unwrap_or_default();
            bytes.extend_from_slice(key.as_bytes());
            off.push(bytes.len() as u64);
        }
        self.keys = Some(Keys {
            off: off.into(),
            bytes: bytes.into(),
        });
        Ok(self)
    }

    /// The user id of the node at dense index `i` (`None` without keys or
    /// out of range).
    pub fn key(&self, i: usize) -> Option<&str> {
        let k = self.keys.as_ref()?;
        let (a, b) = (*k.off.get(i)? as usize, *k.off.get(i + 1)? as usize);
        std::str::from_utf8(k.bytes.get(a..b)?).ok()
    }

    /// The dense index of internal node `n`.
    pub fn index_of(&self, n: NodeId) -> Result<usize> {
        self.index(n)
    }

    /// The internal node id at dense index `i`.
    pub fn node_at(&self, i: usize) -> Option<NodeId> {
        self.ids.get(i).map(|n| NodeId(*n))
    }

    /// The CSR arrays of one direction (`Out` or `In`): per-node offsets
    /// (`n + 1`), neighbour dense indexes, edge ids and relationship type
    /// ids. `Both` has no arrays of its own and gives the outgoing ones.
    pub fn arrays(&self, dir: Direction) -> (&[u64], &[u32], &[u64], &[u32]) {
        let s = if dir == Direction::In {
            &self.inc
        } else {
            &self.out
        };
        (&s.off, &s.target, &s.edge, &s.rel)
    }

    /// Relationship type names and their ids.
    pub fn types(&self) -> &HashMap<String, TypeId> {
        &self.types
    }

    /// The graph this snapshot was taken of.
    pub fn graph(&self) -> &str {
        &self.graph
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

fn prefix_sums(counts: &[usize]) -> Vec<u64> {
    let mut off = Vec::with_capacity(counts.len() + 1);
    let mut total = 0u64;
    off.push(0);
    for &c in counts {
        total += c as u64;
        off.push(total);
    }
    off
}

/// The internal id → dense index table, when ids are dense enough for one
/// (else lookups binary-search the ids).
pub(crate) fn id_table(ids: &[u64]) -> Option<Vec<u32>> {
    let max = ids.last().copied().unwrap_or(0);
    (max < ids.len() as u64 * 4 + 1024).then(|| {
        let mut t = vec![u32::MAX; max as usize + 1];
        for (i, n) in ids.iter().enumerate() {
            t[*n as usize] = i as u32;
        }
        t
    })
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
            for k in side.range(i) {
                let t = TypeId(side.rel[k]);
                if let TypeFilter::Only(_) = filter.types {
                    if !filter.allows(t) {
                        continue;
                    }
                }
                out.push(Step {
                    edge: EdgeId(side.edge[k]),
                    node: NodeId(self.ids[side.target[k] as usize]),
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
