//! Typed traversals and seeded sampling from Python, by user id: each call
//! reads one snapshot of the graph without the GIL and answers in ids.

use crate::errors;
use plexus::algo::{self, Filter, Hop, PathSemantics, Rng, SampleMode, StoreView, WalkBias};
use plexus::{Direction, GraphRead, NodeId, ReadTxn};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;

/// Which way to follow relationships, and of which types.
pub struct Way {
    dir: Direction,
    types: Vec<String>,
}

impl Way {
    pub fn new(direction: &str, types: Option<Vec<String>>) -> PyResult<Way> {
        let dir = match direction {
            "out" | "outgoing" => Direction::Out,
            "in" | "incoming" => Direction::In,
            "both" | "any" => Direction::Both,
            other => {
                return Err(PyValueError::new_err(format!(
                    "direction must be 'out', 'in' or 'both', not {other:?}"
                )))
            }
        };
        Ok(Way {
            dir,
            types: types.unwrap_or_default(),
        })
    }

    /// One way per hop of a path pattern (each hop's types, or any).
    pub fn hops(direction: &str, hops: Vec<Option<Vec<String>>>) -> PyResult<Vec<Way>> {
        hops.into_iter()
            .map(|types| Way::new(direction, types))
            .collect()
    }

    /// The filter over any view (type names resolve to its type ids).
    pub fn filter_of(&self, view: &impl algo::GraphView) -> Filter {
        let names: Vec<&str> = self.types.iter().map(String::as_str).collect();
        Filter::new(view, self.dir, &names)
    }
}

/// Errors of a traversal before they meet the GIL.
pub enum Fail {
    Db(plexus::Error),
    Algo(algo::AlgoError),
    Storage(plexus::StorageError),
    NoNode(String),
}

impl From<plexus::Error> for Fail {
    fn from(e: plexus::Error) -> Self {
        Fail::Db(e)
    }
}
impl From<algo::AlgoError> for Fail {
    fn from(e: algo::AlgoError) -> Self {
        Fail::Algo(e)
    }
}
impl From<plexus::StorageError> for Fail {
    fn from(e: plexus::StorageError) -> Self {
        Fail::Storage(e)
    }
}

impl From<Fail> for PyErr {
    fn from(f: Fail) -> PyErr {
        match f {
            Fail::Db(e) => errors::to_py(e),
            Fail::Algo(e) => errors::algo(e),
            Fail::Storage(e) => errors::to_py(plexus::Error::Storage(e)),
            Fail::NoNode(id) => PyKeyError::new_err(format!("no node with id {id:?}")),
        }
    }
}

/// One read snapshot with id translation both ways.
pub struct Snapshot {
    txn: ReadTxn,
}

impl Snapshot {
    pub fn open(db: &plexus::Database, graph: &str) -> Result<Snapshot, Fail> {
        Ok(Snapshot {
            txn: db.read(graph)?,
        })
    }

    fn view(&self) -> StoreView<'_, ReadTxn> {
        StoreView(&self.txn)
    }

    fn node(&self, id: &str) -> Result<NodeId, Fail> {
        self.txn
            .node_id(id)?
            .ok_or_else(|| Fail::NoNode(id.to_string()))
    }

    fn nodes(&self, ids: &[String]) -> Result<Vec<NodeId>, Fail> {
        ids.iter().map(|i| self.node(i)).collect()
    }

    fn key(&self, n: NodeId) -> Result<String, Fail> {
        // A node a traversal reached exists in the same snapshot.
        Ok(self.txn.node_user_id(n)?.unwrap_or_default())
    }

    fn keys(&self, ns: impl IntoIterator<Item = NodeId>) -> Result<Vec<String>, Fail> {
        ns.into_iter().map(|n| self.key(n)).collect()
    }

    pub fn neighbors(&self, id: &str, way: &Way) -> Result<Vec<String>, Fail> {
        let view = self.view();
        let mut steps = Vec::new();
        algo::GraphView::steps(&view, self.node(id)?, &way.filter_of(&view), &mut steps)?;
        self.keys(steps.into_iter().map(|s| s.node))
    }

    pub fn degree(&self, id: &str, way: &Way) -> Result<u64, Fail> {
        let n = self.node(id)?;
        if way.types.is_empty() {
            return Ok(self.txn.degree(n, way.dir, None)?);
        }
        let mut total = 0u64;
        for t in &way.types {
            total = total.saturating_add(self.txn.degree(n, way.dir, Some(t))?);
        }
        Ok(total)
    }

    pub fn bfs(&self, id: &str, max_depth: u32, way: &Way) -> Result<Vec<(String, u32)>, Fail> {
        let view = self.view();
        let order = algo::bfs(&view, self.node(id)?, &way.filter_of(&view), max_depth)?;
        order
            .into_iter()
            .map(|(n, d)| Ok((self.key(n)?, d)))
            .collect()
    }

    pub fn count_paths(&self, id: &str, hops: &[Way], sem: PathSemantics) -> Result<u64, Fail> {
        let view = self.view();
        let hops: Vec<Hop> = hops.iter().map(|w| Hop::new(w.filter_of(&view))).collect();
        Ok(algo::count_paths(&view, self.node(id)?, &hops, sem)?)
    }

    pub fn sample_paths(
        &self,
        id: &str,
        hops: &[Way],
        sizes: &[usize],
        seed: u64,
    ) -> Result<Vec<Vec<String>>, Fail> {
        let view = self.view();
        let hops: Vec<Hop> = hops.iter().map(|w| Hop::new(w.filter_of(&view))).collect();
        let paths = algo::sample_paths(&view, self.node(id)?, &hops, sizes, &mut Rng::new(seed))?;
        paths.into_iter().map(|p| self.keys(p.nodes)).collect()
    }

    pub fn shortest_path(
        &self,
        from: &str,
        to: &str,
        way: &Way,
        max_depth: Option<u32>,
    ) -> Result<Option<Vec<String>>, Fail> {
        let view = self.view();
        let (a, b) = (self.node(from)?, self.node(to)?);
        match algo::shortest_path(&view, a, b, &way.filter_of(&view), max_depth)? {
            Some(p) => Ok(Some(self.keys(p.nodes)?)),
            None => Ok(None),
        }
    }

    /// For each node, the ids `pick` gives, with one generator seeded once
    /// for the whole call (so the same seed gives the same answers).
    fn per_node(
        &self,
        ids: &[String],
        way: &Way,
        seed: u64,
        pick: impl Fn(&StoreView<'_, ReadTxn>, &Filter, NodeId, &mut Rng) -> algo::Result<Vec<NodeId>>,
    ) -> Result<Vec<Vec<String>>, Fail> {
        let view = self.view();
        let filter = way.filter_of(&view);
        let mut rng = Rng::new(seed);
        let mut out = Vec::with_capacity(ids.len());
        for n in self.nodes(ids)? {
            out.push(self.keys(pick(&view, &filter, n, &mut rng)?)?);
        }
        Ok(out)
    }

    pub fn sample_neighbors(
        &self,
        ids: &[String],
        k: usize,
        way: &Way,
        mode: &SampleMode,
        seed: u64,
    ) -> Result<Vec<Vec<String>>, Fail> {
        self.per_node(ids, way, seed, |view, filter, n, rng| {
            let steps = algo::sample_neighbors(view, n, filter, k, mode, rng)?;
            Ok(steps.into_iter().map(|s| s.node).collect())
        })
    }

    pub fn random_walks(
        &self,
        ids: &[String],
        length: usize,
        way: &Way,
        bias: WalkBias,
        seed: u64,
    ) -> Result<Vec<Vec<String>>, Fail> {
        self.per_node(ids, way, seed, |view, filter, n, rng| {
            algo::random_walk(view, n, length, filter, bias, rng)
        })
    }

    /// Layer-wise (GraphSAGE) sampling: each layer's new nodes and the
    /// sampled `(from, to)` edges that reached them.
    #[expect(clippy::type_complexity, reason = "the Python return shape")]
    pub fn sample_layers(
        &self,
        seeds: &[String],
        fanouts: &[usize],
        way: &Way,
        seed: u64,
    ) -> Result<Vec<(Vec<String>, Vec<(String, String)>)>, Fail> {
        let view = self.view();
        let mut rng = Rng::new(seed);
        let layers = algo::layerwise_sample(
            &view,
            &self.nodes(seeds)?,
            fanouts,
            &way.filter_of(&view),
            &mut rng,
        )?;
        layers
            .into_iter()
            .map(|l| {
                let edges = l
                    .edges
                    .into_iter()
                    .map(|(a, b, _)| Ok((self.key(a)?, self.key(b)?)))
                    .collect::<Result<Vec<_>, Fail>>()?;
                Ok((self.keys(l.nodes)?, edges))
            })
            .collect()
    }
}

/// A sampling mode by name: `uniform`, `with_replacement`, `unique`, or
/// `weighted:<property>`.
pub fn sample_mode(name: &str) -> PyResult<SampleMode> {
    if let Some(property) = name.strip_prefix("weighted:") {
        return Ok(SampleMode::Weighted(property.to_string()));
    }
    Ok(match name {
        "uniform" => SampleMode::Uniform,
        "with_replacement" => SampleMode::WithReplacement,
        "unique" => SampleMode::UniqueNeighbors,
        other => {
            return Err(PyValueError::new_err(format!(
                "mode must be 'uniform', 'with_replacement', 'unique' or 'weighted:<property>', \
                 not {other:?}"
            )))
        }
    })
}

/// Path semantics by name: `walk` (an edge may repeat) or `trail`.
pub fn path_semantics(name: &str) -> PyResult<PathSemantics> {
    match name {
        "walk" => Ok(PathSemantics::Walk),
        "trail" => Ok(PathSemantics::Trail),
        other => Err(PyValueError::new_err(format!(
            "semantics must be 'walk' or 'trail', not {other:?}"
        ))),
    }
}
