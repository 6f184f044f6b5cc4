//! Vector indexes in the Plexus graph: the maintainer that storage calls on
//! every write of an indexed vector property (`plexus_storage`'s
//! maintained-index seam), the state every transaction shares (an HNSW
//! graph from `plexus-vector`, with the sequence numbers that make each
//! transaction see exactly its snapshot), and its entries in the key-value
//! store. The facade registers [`VectorMaintainer`] when it opens a
//! database; the query engine searches through [`search`]. Read as of a
//! system time (`Storage::read_as_of`), a search ranks the vectors the
//! graph held then, exactly (`past.rs`): the index's own data keeps no
//! history.
//!
//! ```
//! use plexus_storage::{GraphRead, IndexKind, IndexSpec, Props, Storage};
//! use plexus_common::Value;
//! use std::sync::Arc;
//! let db = Storage::in_memory().unwrap();
//! db.register_maintainer(IndexKind::Vector, Arc::new(plexus_vector_index::VectorMaintainer)).unwrap();
//! let mut t = db.write("default").unwrap();
//! let dims = vec![("vector.dimensions".to_string(), Value::Int(2))];
//! t.create_index(IndexSpec::vector("Doc", "embedding", dims).named("docs")).unwrap();
//! for (id, v) in [("a", [1.0, 0.0]), ("b", [0.0, 1.0])] {
//!     let mut p = Props::new();
//!     p.insert("embedding".into(), Value::List(v.iter().map(|x| Value::Float(*x)).collect()));
//!     t.create_node(Some(id), &["Doc"], &p).unwrap();
//! }
//! t.commit().unwrap();
//! let r = db.read("default").unwrap();
//! let hits = plexus_vector_index::search(&r, "docs", &[0.9, 0.1], 1, None, None).unwrap();
//! assert_eq!(r.node(hits[0].node).unwrap().unwrap().key, "a");
//! ```

mod config;
mod error;
mod index;
mod layout;
mod node_slots;
mod past;

pub use config::{vector_of, Config, MAX_DIMENSIONS};
pub use error::VectorIndexError;
pub use index::VectorIndex;

use plexus_storage::{
    Cause, EdgeId, GraphRead, IndexInfo, IndexMaintainer, MaintainedIndex, NodeId,
};
use plexus_vector::Metric;
use std::sync::Arc;

/// The maintainer of vector indexes, for `Storage::register_maintainer`.
pub struct VectorMaintainer;

impl IndexMaintainer for VectorMaintainer {
    fn define(
        &self,
        options: &[(String, plexus_common::Value)],
    ) -> Result<Vec<(String, plexus_common::Value)>, Cause> {
        Ok(Config::from_options(options)?.to_options())
    }

    fn load(
        &self,
        index: &IndexInfo,
        entries: &mut dyn Iterator<Item = plexus_storage::Result<(Vec<u8>, Vec<u8>)>>,
        _seq: u64,
    ) -> plexus_storage::Result<Arc<dyn MaintainedIndex>> {
        match VectorIndex::load(index, entries) {
            Ok(v) => Ok(Arc::new(v)),
            Err(VectorIndexError::Storage(e)) => Err(e),
            Err(e) => Err(plexus_storage::StorageError::Maintained {
                index: index.name.clone(),
                node: String::new(),
                cause: Box::new(e),
            }),
        }
    }
}

/// One result of a vector search of nodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub node: NodeId,
    /// Higher is closer, as Neo4j reports it (cosine: `(1 + cos) / 2`;
    /// Euclidean: `1 / (1 + d²)`; dot: the dot product).
    pub score: f64,
}

/// One result of a vector search of relationships.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeHit {
    pub edge: EdgeId,
    /// As [`Hit::score`].
    pub score: f64,
}

/// The candidates a search keeps when the caller does not say: enough for
/// a recall@10 of about 0.96 on 200k × 1,024 embeddings (`docs/benchmarks`).
pub const DEFAULT_EF: usize = 64;

/// The vector index `index` as `txn` sees it, when it holds relationships
/// if `edges` (nodes if not).
fn view(
    txn: &dyn GraphRead,
    index: &str,
    edges: bool,
) -> Result<(plexus_storage::MaintainedView, Metric), VectorIndexError> {
    let view = txn.maintained_index(index)?;
    let on_edges = view.info.kind.on_relationships();
    if on_edges != edges {
        return Err(VectorIndexError::WrongEntity {
            index: index.into(),
            holds: if on_edges { "relationships" } else { "nodes" },
        });
    }
    let metric = state_of(&view, index)?.config().metric;
    Ok((view, metric))
}

fn state_of<'v>(
    view: &'v plexus_storage::MaintainedView,
    index: &str,
) -> Result<&'v VectorIndex, VectorIndexError> {
    view.state
        .as_any()
        .downcast_ref::<VectorIndex>()
        .ok_or_else(|| VectorIndexError::Corrupt(format!("index '{index}' is not a vector index")))
}

fn hits(found: Vec<(u64, f32)>, metric: Metric) -> Vec<Hit> {
    found
        .into_iter()
        .map(|(node, d)| Hit {
            node: NodeId(node),
            score: f64::from(metric.score(d)),
        })
        .collect()
}

/// Candidate lists up to this many nodes, or a fiftieth of the index, are
/// scanned: a distance per candidate costs less than a walk looking for
/// them among the others (`docs/benchmarks`, "Vectors"). An index with sign
/// codes (`VectorIndex::has_signs`) scans up to an eighth of the index,
/// ranking by those first and measuring only the nearest exactly: at
/// 200,000 × 1,024 such a scan took 0.29 ms for 2,065 candidates and 0.85
/// ms for 19,991, where the walk accepting them took 0.96 ms.
pub const EXACT_AMONG: usize = 4096;

/// The `k` nodes among `nodes` (the candidates an index lookup gave)
/// nearest `query` that `filter` passes, as [`search`] finds them: exactly
/// `min(k, passing)`. Few candidates are scanned exactly; many are searched
/// for by a walk of the graph that accepts only them.
pub fn search_among(
    txn: &dyn GraphRead,
    index: &str,
    query: &[f32],
    k: usize,
    ef: Option<usize>,
    nodes: &[NodeId],
    filter: Option<&dyn Fn(NodeId) -> bool>,
) -> Result<Vec<Hit>, VectorIndexError> {
    if let Some(info) = past::index_then(txn, index, false)? {
        let accept = |n: u64| filter.is_none_or(|f| f(NodeId(n)));
        let (found, metric) = past::search(txn, &info, query, k, Some(nodes), &accept)?;
        return Ok(hits(found, metric));
    }
    let (view, metric) = view(txn, index, false)?;
    let state = state_of(&view, index)?;
    let slots = state.slot_count();
    let share = if state.has_signs() { 8 } else { 50 };
    if nodes.len() <= EXACT_AMONG.max(slots / share) {
        let found = state.search_among(view.seq, &view.own, query, k, nodes, filter)?;
        return Ok(hits(found, metric));
    }
    let among: rustc_hash::FxHashSet<u64> = nodes.iter().map(|n| n.0).collect();
    let accept = |n: u64| among.contains(&n) && filter.is_none_or(|f| f(NodeId(n)));
    let ef = ef.unwrap_or_else(|| DEFAULT_EF.max(k));
    let found = state.search(view.seq, &view.own, query, k, ef, Some(&accept))?;
    Ok(hits(found, metric))
}

/// The `k` nodes nearest `query` in the vector index `index`, as the
/// transaction `txn` sees them (its snapshot and its own writes), that
/// `filter` passes: nearest first, exactly `min(k, passing)` of them.
pub fn search(
    txn: &dyn GraphRead,
    index: &str,
    query: &[f32],
    k: usize,
    ef: Option<usize>,
    filter: Option<&dyn Fn(NodeId) -> bool>,
) -> Result<Vec<Hit>, VectorIndexError> {
    let pass = |n: u64| filter.is_none_or(|f| f(NodeId(n)));
    let filter = filter.map(|_| &pass as &dyn Fn(u64) -> bool);
    let (found, metric) = search_ids(txn, index, query, k, ef, filter, false)?;
    Ok(hits(found, metric))
}

/// As [`search`], in a vector index of relationships
/// (`IndexSpec::relationship_vector`).
pub fn search_relationships(
    txn: &dyn GraphRead,
    index: &str,
    query: &[f32],
    k: usize,
    ef: Option<usize>,
    filter: Option<&dyn Fn(EdgeId) -> bool>,
) -> Result<Vec<EdgeHit>, VectorIndexError> {
    let pass = |e: u64| filter.is_none_or(|f| f(EdgeId(e)));
    let filter = filter.map(|_| &pass as &dyn Fn(u64) -> bool);
    let (found, metric) = search_ids(txn, index, query, k, ef, filter, true)?;
    Ok(found
        .into_iter()
        .map(|(e, d)| EdgeHit {
            edge: EdgeId(e),
            score: f64::from(metric.score(d)),
        })
        .collect())
}

/// The search of [`search`] over raw ids, of nodes or of relationships.
fn search_ids(
    txn: &dyn GraphRead,
    index: &str,
    query: &[f32],
    k: usize,
    ef: Option<usize>,
    filter: Option<&dyn Fn(u64) -> bool>,
    edges: bool,
) -> Result<(Vec<(u64, f32)>, Metric), VectorIndexError> {
    if let Some(info) = past::index_then(txn, index, edges)? {
        let accept = |id: u64| filter.is_none_or(|f| f(id));
        return past::search(txn, &info, query, k, None, &accept);
    }
    let (view, metric) = view(txn, index, edges)?;
    let found = state_of(&view, index)?.search(
        view.seq,
        &view.own,
        query,
        k,
        ef.unwrap_or_else(|| DEFAULT_EF.max(k)),
        filter,
    )?;
    Ok((found, metric))
}
