//! What algorithms read: steps from a node along filtered edges.

use crate::error::{AlgoError, Result};
use plexus_common::Value;
use plexus_storage::{Direction, EdgeId, GraphRead, Neighbor, NodeId, TypeId};

/// One step from a node: the edge, the node at its other end, its type,
/// and whether it was followed forwards.
pub type Step = Neighbor;

/// Which relationship types a traversal may follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeFilter {
    Any,
    /// Only these types (an empty list follows nothing).
    Only(Vec<TypeId>),
}

/// A direction and a type filter: which edges one hop may follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub dir: Direction,
    pub types: TypeFilter,
}

impl Filter {
    /// Every edge in `dir`.
    pub fn any(dir: Direction) -> Filter {
        Filter {
            dir,
            types: TypeFilter::Any,
        }
    }

    /// Edges in `dir` of the named types (all types when `names` is empty;
    /// unknown names match nothing).
    pub fn new(view: &impl GraphView, dir: Direction, names: &[&str]) -> Filter {
        if names.is_empty() {
            return Filter::any(dir);
        }
        let ids = names.iter().filter_map(|n| view.type_id(n)).collect();
        Filter {
            dir,
            types: TypeFilter::Only(ids),
        }
    }

    /// The same types, followed the other way.
    pub fn reversed(&self) -> Filter {
        let dir = match self.dir {
            Direction::Out => Direction::In,
            Direction::In => Direction::Out,
            Direction::Both => Direction::Both,
        };
        Filter {
            dir,
            types: self.types.clone(),
        }
    }

    pub fn allows(&self, t: TypeId) -> bool {
        match &self.types {
            TypeFilter::Any => true,
            TypeFilter::Only(ts) => ts.contains(&t),
        }
    }
}

/// One hop of a typed path: which edges, and at most how many per node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    pub filter: Filter,
    pub fanout: Option<usize>,
}

impl Hop {
    pub fn new(filter: Filter) -> Hop {
        Hop {
            filter,
            fanout: None,
        }
    }
}

/// A path: `nodes.len() == edges.len() + 1`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path {
    pub nodes: Vec<NodeId>,
    pub edges: Vec<EdgeId>,
}

impl Path {
    pub fn single(n: NodeId) -> Path {
        Path {
            nodes: vec![n],
            edges: vec![],
        }
    }

    /// Number of edges.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    pub fn end(&self) -> NodeId {
        *self.nodes.last().expect("a path has at least one node")
    }
}

/// A read-only graph as the algorithms see it.
pub trait GraphView {
    /// Appends the steps from `node` that `filter` allows to `out`. With
    /// `Direction::Both` a self-loop is one step.
    fn steps(&self, node: NodeId, filter: &Filter, out: &mut Vec<Step>) -> Result<()>;

    /// Whether [`GraphView::steps_many`] reads many nodes at once (a
    /// remote store); if not, traversals go node by node into one buffer.
    fn reads_in_batches(&self) -> bool {
        false
    }

    /// [`GraphView::steps`] of many nodes: `out[i]` gets the steps from
    /// `nodes[i]`. A view over a remote store reads them all at once.
    fn steps_many(
        &self,
        nodes: &[NodeId],
        filter: &Filter,
        out: &mut Vec<Vec<Step>>,
    ) -> Result<()> {
        steps_one_by_one(self, nodes, filter, out)
    }

    /// The numeric value of an edge's weight property.
    fn weight(&self, edge: EdgeId, key: &str) -> Result<Option<f64>>;

    /// The id of a relationship type name.
    fn type_id(&self, name: &str) -> Option<TypeId>;
}

/// A storage transaction as a [`GraphView`]: reads the adjacency index of
/// its snapshot directly.
pub struct StoreView<'a, R: GraphRead + ?Sized>(pub &'a R);

impl<R: GraphRead + ?Sized> GraphView for StoreView<'_, R> {
    fn reads_in_batches(&self) -> bool {
        self.0.remote()
    }

    fn steps(&self, node: NodeId, filter: &Filter, out: &mut Vec<Step>) -> Result<()> {
        // Order: outgoing then incoming, each by type, neighbour and edge,
        // as the adjacency keys sort (and as a Csr lists them).
        for &d in filter.dir.split() {
            let start = out.len();
            match &filter.types {
                TypeFilter::Any => self.0.neighbors_into(node, d, None, out)?,
                TypeFilter::Only(ts) => {
                    let mut ts = ts.clone();
                    ts.sort();
                    ts.dedup();
                    for t in ts {
                        self.0.neighbors_into(node, d, Some(t), out)?;
                    }
                }
            }
            if filter.dir == Direction::Both && d == Direction::In {
                skip_self_loops(out, start, node);
            }
        }
        Ok(())
    }

    fn steps_many(
        &self,
        nodes: &[NodeId],
        filter: &Filter,
        out: &mut Vec<Vec<Step>>,
    ) -> Result<()> {
        // Every type: one read for all the nodes, in the order `steps`
        // gives (outgoing, then incoming without self-loops).
        if filter.types == TypeFilter::Any {
            return Ok(self.0.neighbors_many(nodes, filter.dir, None, out)?);
        }
        steps_one_by_one(self, nodes, filter, out)
    }

    fn weight(&self, edge: EdgeId, key: &str) -> Result<Option<f64>> {
        numeric(edge, key, self.0.edge_property(edge, key)?)
    }

    fn type_id(&self, name: &str) -> Option<TypeId> {
        self.0.type_id(name)
    }
}

/// With `Direction::Both`, a self-loop was already listed as outgoing.
/// [`GraphView::steps_many`] as one [`GraphView::steps`] per node.
fn steps_one_by_one<V: GraphView + ?Sized>(
    v: &V,
    nodes: &[NodeId],
    filter: &Filter,
    out: &mut Vec<Vec<Step>>,
) -> Result<()> {
    out.clear();
    for &n in nodes {
        let mut steps = Vec::new();
        v.steps(n, filter, &mut steps)?;
        out.push(steps);
    }
    Ok(())
}

pub(crate) fn skip_self_loops(out: &mut Vec<Step>, from: usize, node: NodeId) {
    let tail: Vec<Step> = out.drain(from..).filter(|s| s.node != node).collect();
    out.extend(tail);
}

/// The single directions a direction covers, outgoing first.
pub(crate) trait Split {
    fn split(self) -> &'static [Direction];
}

impl Split for Direction {
    fn split(self) -> &'static [Direction] {
        match self {
            Direction::Out => &[Direction::Out],
            Direction::In => &[Direction::In],
            Direction::Both => &[Direction::Out, Direction::In],
        }
    }
}

pub(crate) fn numeric(edge: EdgeId, key: &str, v: Option<Value>) -> Result<Option<f64>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Int(i)) => Ok(Some(i as f64)),
        Some(Value::Float(f)) => Ok(Some(f)),
        Some(other) => Err(AlgoError::BadInput(format!(
            "edge {edge} has a {} in '{key}', not a number",
            other.value_type()
        ))),
    }
}
