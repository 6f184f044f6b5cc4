//! The valid-time graph as of an instant, as a graph read: every read of
//! the storage API (and so every Cypher clause, function and algorithm
//! that takes a `GraphRead`) sees the nodes and relationships whose
//! valid-time versions hold at the instant, with those versions' labels,
//! types and properties. Cypher's `MATCH … FOR VALID_TIME AS OF at` runs
//! on it.
//!
//! * A node is there when a version of it holds at the instant. A
//!   relationship is there when a version of it holds and so do its two
//!   nodes: a pattern never reaches a node that a node scan would not find.
//! * Over a range of valid time ([`When::Within`]), an entity is there when
//!   a version of it holds at some instant of the range, as the latest such
//!   version; a relationship, when its two nodes are there too (each at
//!   some instant of the range, not necessarily the same).
//! * Valid-time entities are named by their ids (strings); the view gives
//!   them numeric ids as it meets them, for this view only. `elementId(n)`
//!   is the entity's id, the stable identity.
//! * Each read costs what the valid-time indexes cost (`graph.rs`): a node
//!   by id is one seek of its timeline; a label scan and a node's
//!   relationships, a prefix scan of the index and a seek per candidate.
//!   A node property equality or range goes through the valid-time
//!   property index the same way (`props.rs`). Whole-graph reads (all
//!   nodes, all relationships, counts) scan the entity logs; `indexes()`
//!   lists none.
//! * Versions read are kept for the view's life, up to [`MAX_CACHED`].
//!
//! Reads outside the valid-time graph (the valid-time keyspace itself, the
//! graph's name and commit number) go to the read underneath, so a
//! bitemporal read is this view over a read as of a system time.

use crate::error::TemporalError;
use crate::graph::{ever_attached, ever_labelled};
use crate::props::{self, Of};
use crate::read::{as_of, latest_within};
use crate::timeline::entity_ids;
use crate::version::{EdgeState, Kind, NodeState, State, Version};
use plexus_common::Value;
use plexus_storage::{
    ConstraintInfo, Direction, Edge, EdgeId, Entity, GraphRead, IdIter, IndexInfo, IndexKind,
    MaintainedView, Neighbor, Node, NodeId, PairFn, StorageError, TxnCore, TypeId, ValidPart,
    ValidVersion,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::rc::Rc;
use std::sync::Arc;

/// The most versions a view keeps decoded (then it starts over).
pub const MAX_CACHED: usize = 1 << 16;

type Result<T> = plexus_storage::Result<T>;

/// A valid-time read's failure as storage reports it: its storage cause
/// as it was, a corrupt record as corruption.
fn storage(e: TemporalError) -> StorageError {
    match e {
        TemporalError::Storage(e) => e,
        TemporalError::Corrupt(what) => StorageError::Corrupt(what),
        other => StorageError::Internal(other.to_string()),
    }
}

/// Names to dense numbers from 1, in the order they are met.
#[derive(Default)]
struct Names {
    names: Vec<Arc<str>>,
    numbers: HashMap<Arc<str>, u64>,
}

impl Names {
    fn number(&mut self, name: &str) -> u64 {
        if let Some(&n) = self.numbers.get(name) {
            return n;
        }
        let name: Arc<str> = name.into();
        self.names.push(name.clone());
        let n = self.names.len() as u64;
        self.numbers.insert(name, n);
        n
    }

    fn name(&self, n: u64) -> Option<Arc<str>> {
        let i = usize::try_from(n.checked_sub(1)?).ok()?;
        self.names.get(i).cloned()
    }
}

/// A node version holding at the instant, or a relationship version
/// holding with its two nodes.
type Held = Option<Rc<Version>>;

#[derive(Default)]
struct Cache {
    nodes: Names,
    edges: Names,
    types: Names,
    node_versions: HashMap<u64, Held>,
    edge_versions: HashMap<u64, Held>,
}

/// What valid time a view reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// One instant.
    At(i64),
    /// Some instant of `[from, to)`: an entity holding at any instant of
    /// the range is there, as its latest version within it.
    Within { from: i64, to: i64 },
}

/// The valid-time graph of the read `inner` as of valid time `at`
/// (microseconds since 1970), or over a range of it.
pub struct ValidTimeView<'a> {
    inner: &'a dyn GraphRead,
    when: When,
    state: RefCell<Cache>,
}

impl<'a> ValidTimeView<'a> {
    /// The graph as of the instant `at`.
    pub fn new(inner: &'a dyn GraphRead, at: i64) -> ValidTimeView<'a> {
        ValidTimeView::reading(inner, When::At(at))
    }

    /// The graph as of `when`.
    pub fn reading(inner: &'a dyn GraphRead, when: When) -> ValidTimeView<'a> {
        ValidTimeView {
            inner,
            when,
            state: RefCell::default(),
        }
    }

    /// What valid time the view reads.
    pub fn when(&self) -> When {
        self.when
    }

    /// The version of the entity the view shows.
    fn held(&self, kind: Kind, name: &str) -> Result<Option<Version>> {
        match self.when {
            When::At(at) => as_of(self.inner, kind, name, at),
            When::Within { from, to } => latest_within(self.inner, kind, name, from, to),
        }
        .map_err(storage)
    }

    fn node_number(&self, name: &str) -> NodeId {
        NodeId(self.state.borrow_mut().nodes.number(name))
    }

    fn edge_number(&self, name: &str) -> EdgeId {
        EdgeId(self.state.borrow_mut().edges.number(name))
    }

    fn type_number(&self, name: &str) -> TypeId {
        TypeId(self.state.borrow_mut().types.number(name) as u32)
    }

    fn node_name(&self, id: NodeId) -> Option<Arc<str>> {
        self.state.borrow().nodes.name(id.0)
    }

    /// The version of node `id` that holds at the instant.
    fn node_version(&self, id: NodeId) -> Result<Held> {
        if let Some(held) = self.state.borrow().node_versions.get(&id.0) {
            return Ok(held.clone());
        }
        let Some(name) = self.node_name(id) else {
            return Ok(None);
        };
        let held = self
            .held(Kind::Node, &name)?
            .filter(|v| matches!(v.state, State::Node(_)))
            .map(Rc::new);
        let mut s = self.state.borrow_mut();
        if s.node_versions.len() >= MAX_CACHED {
            s.node_versions.clear();
        }
        s.node_versions.insert(id.0, held.clone());
        Ok(held)
    }

    /// The version of relationship `id` that holds at the instant, when
    /// its two nodes hold too.
    fn edge_version(&self, id: EdgeId) -> Result<Held> {
        if let Some(held) = self.state.borrow().edge_versions.get(&id.0) {
            return Ok(held.clone());
        }
        let Some(name) = self.state.borrow().edges.name(id.0) else {
            return Ok(None);
        };
        let mut held = self.held(Kind::Edge, &name)?.map(Rc::new);
        if let Some(e) = held.as_deref().and_then(edge_state) {
            let (src, dst) = (self.node_number(&e.src), self.node_number(&e.dst));
            if self.node_version(src)?.is_none() || self.node_version(dst)?.is_none() {
                held = None;
            }
        } else {
            held = None;
        }
        let mut s = self.state.borrow_mut();
        if s.edge_versions.len() >= MAX_CACHED {
            s.edge_versions.clear();
        }
        s.edge_versions.insert(id.0, held.clone());
        Ok(held)
    }

    /// `f` of node `id`'s state at the instant, when it holds (read in
    /// place: a property read copies one value, not the node).
    fn with_node<T>(&self, id: NodeId, f: impl FnOnce(&NodeState) -> T) -> Result<Option<T>> {
        Ok(self.node_version(id)?.and_then(|v| match &v.state {
            State::Node(n) => Some(f(n)),
            _ => None,
        }))
    }

    /// `f` of relationship `id`'s state and its nodes' numbers, when it
    /// holds.
    fn with_edge<T>(
        &self,
        id: EdgeId,
        f: impl FnOnce(&EdgeState, NodeId, NodeId) -> T,
    ) -> Result<Option<T>> {
        Ok(self
            .edge_version(id)?
            .as_deref()
            .and_then(edge_state)
            .map(|e| {
                let (src, dst) = (self.node_number(&e.src), self.node_number(&e.dst));
                f(e, src, dst)
            }))
    }

    /// The nodes among `names` that hold at the instant, in number order.
    fn live_nodes(
        &self,
        names: &[String],
        keep: impl Fn(&NodeState) -> bool,
    ) -> Result<Vec<NodeId>> {
        let mut out = Vec::new();
        for name in names {
            let id = self.node_number(name);
            if self.with_node(id, &keep)? == Some(true) {
                out.push(id);
            }
        }
        out.sort();
        Ok(out)
    }

    /// The candidates a property index gave (`None`: it cannot answer)
    /// that hold at the instant with `label` and a value of `key` that
    /// passes `keep`.
    fn indexed_nodes(
        &self,
        names: Option<Vec<String>>,
        label: Option<&str>,
        key: &str,
        keep: impl Fn(&Value) -> bool,
    ) -> Result<Vec<NodeId>> {
        let Some(names) = names else {
            return Err(no_index(key));
        };
        self.live_nodes(&names, |n| {
            label.is_none_or(|l| n.labels.iter().any(|x| x == l))
                && n.props.get(key).is_some_and(&keep)
        })
    }

    /// The candidates a property index gave (`None`: it cannot answer)
    /// that hold at the instant with type `rel_type` and a value of `key`
    /// that passes `keep`.
    fn indexed_edges(
        &self,
        names: Option<Vec<String>>,
        rel_type: Option<&str>,
        key: &str,
        keep: impl Fn(&Value) -> bool,
    ) -> Result<Vec<EdgeId>> {
        let Some(names) = names else {
            return Err(no_index(key));
        };
        self.live_edges_among(&names, |e| {
            rel_type.is_none_or(|t| e.rel_type == t) && e.props.get(key).is_some_and(&keep)
        })
    }

    /// The entities of kind `of` that ever had a value of `key` in the
    /// keys of the range between the bounds (`None`: the index cannot
    /// answer), and those keys; `Ok(None)` when no value can be in range.
    fn ever_between(
        &self,
        of: Of,
        key: &str,
        lo: Bound<&Value>,
        hi: Bound<&Value>,
    ) -> Result<Option<Candidates>> {
        let range = match props::range_keys(of, key, lo, hi) {
            None => return Err(no_index(key)),
            Some(None) => return Ok(None),
            Some(Some(range)) => range,
        };
        let names = props::ever_in_range(self.inner, of, &range).map_err(storage)?;
        Ok(Some((names, range)))
    }

    /// The relationships that hold at the instant (with `keep`), in
    /// number order.
    fn live_edges(&self, keep: impl Fn(&EdgeState) -> bool) -> Result<Vec<EdgeId>> {
        let names = entity_ids(self.inner, Kind::Edge).map_err(storage)?;
        self.live_edges_among(&names, keep)
    }

    /// The relationships among `names` that hold at the instant (with
    /// `keep`), in number order.
    fn live_edges_among(
        &self,
        names: &[String],
        keep: impl Fn(&EdgeState) -> bool,
    ) -> Result<Vec<EdgeId>> {
        let mut out = Vec::new();
        for name in names {
            let id = self.edge_number(name);
            if self.with_edge(id, |e, _, _| keep(e))? == Some(true) {
                out.push(id);
            }
        }
        out.sort();
        Ok(out)
    }

    fn all_nodes(&self) -> Result<Vec<NodeId>> {
        let names = entity_ids(self.inner, Kind::Node).map_err(storage)?;
        self.live_nodes(&names, |_| true)
    }

    fn labelled(&self, label: &str) -> Result<Vec<NodeId>> {
        let names = ever_labelled(self.inner, label).map_err(storage)?;
        self.live_nodes(&names, |n| n.labels.iter().any(|l| l == label))
    }

    /// The nodes (with `label`) whose property `key` passes `pred`: a scan.
    fn scan_nodes(
        &self,
        label: Option<&str>,
        key: &str,
        pred: &mut dyn FnMut(&Value) -> bool,
    ) -> Result<Vec<NodeId>> {
        let candidates = match label {
            Some(l) => self.labelled(l)?,
            None => self.all_nodes()?,
        };
        let mut out = Vec::new();
        for id in candidates {
            if let Some(v) = self.node_property(id, key)? {
                if pred(&v) {
                    out.push(id);
                }
            }
        }
        Ok(out)
    }

    /// The relationships at node `id` on one side, as neighbours.
    fn side(
        &self,
        id: NodeId,
        outgoing: bool,
        rel_type: Option<&str>,
        skip_loops: bool,
        out: &mut Vec<Neighbor>,
    ) -> Result<()> {
        let Some(name) = self.node_name(id) else {
            return Ok(());
        };
        for eid in ever_attached(self.inner, &name, outgoing, rel_type).map_err(storage)? {
            let edge = self.edge_number(&eid);
            let step = self.with_edge(edge, |e, src, dst| {
                let (here, there) = if outgoing { (src, dst) } else { (dst, src) };
                let wanted = here == id
                    && rel_type.is_none_or(|t| t == e.rel_type)
                    && !(skip_loops && src == dst);
                wanted.then(|| (there, self.type_number(&e.rel_type)))
            })?;
            if let Some(Some((node, rel_type))) = step {
                out.push(Neighbor {
                    edge,
                    node,
                    rel_type,
                    outgoing,
                });
            }
        }
        Ok(())
    }
}

/// How often each name occurs, by name.
/// Entity names a property index gave (`None`: it cannot answer), and
/// the index keys they were found under.
type Candidates = (Option<Vec<String>>, props::KeyRange);

fn counts_by(names: impl Iterator<Item = String>) -> Vec<(String, u64)> {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for n in names {
        *counts.entry(n).or_default() += 1;
    }
    counts.into_iter().collect()
}

fn edge_state(v: &Version) -> Option<&EdgeState> {
    match &v.state {
        State::Edge(e) => Some(e),
        _ => None,
    }
}

fn ids<T: 'static>(ids: Result<Vec<T>>) -> IdIter<'static, T> {
    match ids {
        Ok(ids) => Box::new(ids.into_iter().map(Ok)),
        Err(e) => Box::new(std::iter::once(Err(e))),
    }
}

fn no_index(what: &str) -> StorageError {
    StorageError::NoIndex(format!(
        "{what}: the valid-time graph has no property indexes (a read as of a valid time scans)"
    ))
}

impl GraphRead for ValidTimeView<'_> {
    fn core(&self) -> &TxnCore {
        self.inner.core()
    }

    fn graph_name(&self) -> &str {
        self.inner.graph_name()
    }

    fn node(&self, id: NodeId) -> Result<Option<Node>> {
        let Some(name) = self.node_name(id) else {
            return Ok(None);
        };
        self.with_node(id, |n| Node {
            id,
            key: name.to_string(),
            labels: n.labels.clone(),
            props: n.props.clone(),
        })
    }

    fn node_id(&self, key: &str) -> Result<Option<NodeId>> {
        let id = self.node_number(key);
        Ok(self.node_version(id)?.map(|_| id))
    }

    fn edge(&self, id: EdgeId) -> Result<Option<Edge>> {
        let Some(name) = self.state.borrow().edges.name(id.0) else {
            return Ok(None);
        };
        self.with_edge(id, |e, src, dst| Edge {
            id,
            key: name.to_string(),
            src,
            dst,
            rel_type: e.rel_type.clone(),
            props: e.props.clone(),
        })
    }

    fn edge_id(&self, key: &str) -> Result<Option<EdgeId>> {
        let id = self.edge_number(key);
        Ok(self.edge_version(id)?.map(|_| id))
    }

    fn nodes(&self) -> IdIter<'_, NodeId> {
        ids(self.all_nodes())
    }

    fn nodes_with_label(&self, label: &str) -> IdIter<'_, NodeId> {
        ids(self.labelled(label))
    }

    fn edges(&self) -> IdIter<'_, EdgeId> {
        ids(self.live_edges(|_| true))
    }

    fn edges_with_type(&self, rel_type: &str) -> IdIter<'_, EdgeId> {
        ids(self.live_edges(|e| e.rel_type == rel_type))
    }

    fn type_id(&self, name: &str) -> Option<TypeId> {
        Some(self.type_number(name))
    }

    fn neighbors_into(
        &self,
        node: NodeId,
        dir: Direction,
        rel_type: Option<TypeId>,
        out: &mut Vec<Neighbor>,
    ) -> Result<()> {
        let t = match rel_type {
            Some(t) => Some(self.type_name(t)?),
            None => None,
        };
        let t = t.as_deref();
        match dir {
            Direction::Out => self.side(node, true, t, false, out),
            Direction::In => self.side(node, false, t, false, out),
            // A loop once, as outgoing (as storage reports it).
            Direction::Both => {
                self.side(node, true, t, false, out)?;
                self.side(node, false, t, true, out)
            }
        }
    }

    fn remote(&self) -> bool {
        false
    }

    /// Entities get their numbers as the view meets them.
    fn stable_ids(&self) -> bool {
        false
    }

    /// A range no index serves is one pass over the versions (`nodes_where`).
    fn columns_serve(&self) -> bool {
        true
    }

    fn prefetch_nodes(&self, _nodes: &[NodeId]) -> Result<()> {
        Ok(())
    }

    fn neighbors_many(
        &self,
        nodes: &[NodeId],
        dir: Direction,
        rel_type: Option<TypeId>,
        out: &mut Vec<Vec<Neighbor>>,
    ) -> Result<()> {
        out.clear();
        for &n in nodes {
            let mut edges = Vec::new();
            self.neighbors_into(n, dir, rel_type, &mut edges)?;
            out.push(edges);
        }
        Ok(())
    }

    fn adjacency_between(
        &self,
        from: NodeId,
        to: Option<NodeId>,
    ) -> IdIter<'_, (NodeId, Neighbor)> {
        let entries = self.all_nodes().and_then(|nodes| {
            let mut out = Vec::new();
            for n in nodes
                .into_iter()
                .filter(|n| *n >= from && to.is_none_or(|t| *n < t))
            {
                let mut edges = Vec::new();
                self.side(n, true, None, false, &mut edges)?;
                self.side(n, false, None, false, &mut edges)?;
                out.extend(edges.into_iter().map(|e| (n, e)));
            }
            Ok(out)
        });
        ids(entries)
    }

    fn valid_time_get(&self, part: ValidPart, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.valid_time_get(part, key)
    }

    fn valid_time_scan(
        &self,
        part: ValidPart,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        reverse: bool,
        f: &mut PairFn<'_>,
    ) -> Result<()> {
        self.inner.valid_time_scan(part, from, to, reverse, f)
    }

    fn property_keys(&self) -> Vec<String> {
        let mut keys = BTreeSet::new();
        let nodes = self.all_nodes().unwrap_or_default();
        for id in nodes {
            let _ = self.with_node(id, |n| keys.extend(n.props.keys().cloned()));
        }
        for id in self.live_edges(|_| true).unwrap_or_default() {
            let _ = self.with_edge(id, |e, _, _| keys.extend(e.props.keys().cloned()));
        }
        keys.into_iter().collect()
    }

    fn nodes_equal(&self, label: Option<&str>, key: &str, value: &Value) -> Result<Vec<NodeId>> {
        self.scan_nodes(label, key, &mut |v| plexus_storage::stored_equal(v, value))
    }

    fn nodes_where(
        &self,
        label: Option<&str>,
        key: &str,
        pred: &mut dyn FnMut(&Value) -> bool,
    ) -> Result<Option<Vec<NodeId>>> {
        self.scan_nodes(label, key, pred).map(Some)
    }

    /// No column holds the valid-time graph: a grouped count reads it.
    fn column_groups(&self, _: Option<&str>, _: &str) -> Result<Option<Vec<(NodeId, u64)>>> {
        Ok(None)
    }

    fn node_user_id(&self, node: NodeId) -> Result<Option<String>> {
        let Some(name) = self.node_name(node) else {
            return Ok(None);
        };
        Ok(self.node_version(node)?.map(|_| name.to_string()))
    }

    fn with_node_property(
        &self,
        node: NodeId,
        key: &str,
        f: &mut dyn FnMut(Option<&Value>),
    ) -> Result<()> {
        f(self.node_property(node, key)?.as_ref());
        Ok(())
    }

    fn node_property(&self, node: NodeId, key: &str) -> Result<Option<Value>> {
        Ok(self
            .with_node(node, |n| n.props.get(key).cloned())?
            .flatten())
    }

    fn node_has_label(&self, node: NodeId, label: &str) -> Result<bool> {
        Ok(self.with_node(node, |n| n.labels.iter().any(|l| l == label))? == Some(true))
    }

    fn edge_property(&self, edge: EdgeId, key: &str) -> Result<Option<Value>> {
        Ok(self
            .with_edge(edge, |e, _, _| e.props.get(key).cloned())?
            .flatten())
    }

    fn edge_key_and_type(&self, edge: EdgeId) -> Result<Option<(String, Arc<str>)>> {
        let Some(name) = self.state.borrow().edges.name(edge.0) else {
            return Ok(None);
        };
        self.with_edge(edge, |e, _, _| {
            (name.to_string(), e.rel_type.as_str().into())
        })
    }

    fn version(&self) -> u64 {
        self.inner.version()
    }

    fn degree(&self, node: NodeId, dir: Direction, rel_type: Option<&str>) -> Result<u64> {
        Ok(self.neighbors(node, dir, rel_type)?.len() as u64)
    }

    fn type_name(&self, t: TypeId) -> Result<Arc<str>> {
        self.state
            .borrow()
            .types
            .name(u64::from(t.0))
            .ok_or_else(|| StorageError::NotFound {
                what: "relationship type",
                id: t.0.to_string(),
            })
    }

    fn node_count(&self) -> Result<u64> {
        Ok(self.all_nodes()?.len() as u64)
    }

    fn edge_count(&self) -> Result<u64> {
        Ok(self.live_edges(|_| true)?.len() as u64)
    }

    fn label_count(&self, label: &str) -> Result<u64> {
        Ok(self.labelled(label)?.len() as u64)
    }

    fn type_count(&self, rel_type: &str) -> Result<u64> {
        Ok(self.live_edges(|e| e.rel_type == rel_type)?.len() as u64)
    }

    fn label_counts(&self) -> Result<Vec<(String, u64)>> {
        let mut labels = Vec::new();
        for id in self.all_nodes()? {
            self.with_node(id, |n| labels.extend(n.labels.iter().cloned()))?;
        }
        Ok(counts_by(labels.into_iter()))
    }

    fn type_counts(&self) -> Result<Vec<(String, u64)>> {
        let mut types = Vec::new();
        for id in self.live_edges(|_| true)? {
            self.with_edge(id, |e, _, _| types.push(e.rel_type.clone()))?;
        }
        Ok(counts_by(types.into_iter()))
    }

    /// Through the valid-time property index (`props.rs`): the nodes that
    /// ever had the value, each kept when the version the view shows has
    /// it (and the label).
    fn find_nodes(&self, label: Option<&str>, key: &str, value: &Value) -> Result<Vec<NodeId>> {
        let names = props::ever_valued(self.inner, Of::Nodes, key, value).map_err(storage)?;
        self.indexed_nodes(names, label, key, |v| {
            plexus_storage::stored_equal(v, value)
        })
    }

    /// Through the valid-time property index: the nodes that ever had a
    /// value in the range's keys, each kept when the version the view
    /// shows has one there (and the label). A superset when bounds are
    /// exclusive or numbers pass 2^53: the query's WHERE narrows it.
    fn find_nodes_in_range(
        &self,
        label: Option<&str>,
        key: &str,
        lo: Bound<&Value>,
        hi: Bound<&Value>,
    ) -> Result<Vec<NodeId>> {
        let Some((names, range)) = self.ever_between(Of::Nodes, key, lo, hi)? else {
            return Ok(Vec::new());
        };
        self.indexed_nodes(names, label, key, |v| {
            props::within(Of::Nodes, key, v, &range)
        })
    }

    fn find_nodes_with_element(
        &self,
        _: Option<&str>,
        key: &str,
        _: &Value,
    ) -> Result<Vec<NodeId>> {
        Err(no_index(key))
    }

    /// A relationship property equality through the valid-time property
    /// index (list elements scan).
    fn edges_through(
        &self,
        kind: IndexKind,
        rel_type: Option<&str>,
        key: &str,
        value: &Value,
    ) -> Result<Vec<EdgeId>> {
        if kind != IndexKind::RelationshipProperty {
            return Err(no_index(key));
        }
        let names =
            props::ever_valued(self.inner, Of::Relationships, key, value).map_err(storage)?;
        self.indexed_edges(names, rel_type, key, |v| {
            plexus_storage::stored_equal(v, value)
        })
    }

    /// A relationship property range through the valid-time property
    /// index: the relationships that ever had a value in the range's keys,
    /// each kept when the version the view shows has one there (and the
    /// type). A superset as [`GraphRead::find_nodes_in_range`]'s is.
    fn find_edges_in_range(
        &self,
        rel_type: Option<&str>,
        key: &str,
        lo: Bound<&Value>,
        hi: Bound<&Value>,
    ) -> Result<Vec<EdgeId>> {
        let Some((names, range)) = self.ever_between(Of::Relationships, key, lo, hi)? else {
            return Ok(Vec::new());
        };
        self.indexed_edges(names, rel_type, key, |v| {
            props::within(Of::Relationships, key, v, &range)
        })
    }

    fn valid_time_recorded(&self, key: &[u8]) -> Result<Option<u64>> {
        self.inner.valid_time_recorded(key)
    }

    fn maintained_index(&self, name: &str) -> Result<MaintainedView> {
        Err(no_index(name))
    }

    fn indexes(&self) -> Result<Vec<IndexInfo>> {
        Ok(Vec::new())
    }

    fn constraints(&self) -> Result<Vec<ConstraintInfo>> {
        Ok(Vec::new())
    }

    fn valid_version(&self, entity: Entity) -> Result<Option<ValidVersion>> {
        let held = match entity {
            Entity::Node(n) => self.node_version(n)?,
            Entity::Edge(e) => self.edge_version(e)?,
        };
        let Some(v) = held else { return Ok(None) };
        Ok(Some(ValidVersion {
            id: v.id.clone(),
            from: v.valid.from,
            to: v.valid.to,
            system_from: match crate::timeline::recorded(self.inner, &v.id)? {
                Some(t) => Some(t),
                // Recorded before versions were stamped: the history's
                // first version of its record, when the graph keeps one.
                None => self
                    .inner
                    .valid_time_recorded(&crate::timeline::version_key(&v.id))?,
            },
        }))
    }

    fn stale_indexes(&self) -> Vec<String> {
        Vec::new()
    }
}
