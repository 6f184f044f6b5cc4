//! Reading a graph: the methods every transaction has.

use crate::adjacency;
use crate::catalog::Token;
use crate::edge_blocks;
use crate::error::{Result, StorageError};
use crate::ids::{Direction, EdgeId, NodeId, TypeId};
use crate::keys::*;
use crate::occ::Subject;
use crate::record::{prop, EdgeRecord, NodeRecord};
use crate::schema::{
    push_value_key, ConstraintInfo, ConstraintKind, IndexDef, IndexInfo, IndexKind, TRUNCATED_LEN,
};
use crate::view::TxnCore;
use plexus_common::{encode_key_value, read_u32, read_u64, Value};
use plexus_kv::{prefix_successor, KeyRange, Ks, ScanOptions};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

/// Properties as users see them: names to values.
pub type Props = BTreeMap<String, Value>;

/// A node as users see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub id: NodeId,
    /// The user's id (given or generated).
    pub key: String,
    pub labels: Vec<String>,
    pub props: Props,
}

/// An edge as users see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub id: EdgeId,
    pub key: String,
    pub src: NodeId,
    pub dst: NodeId,
    pub rel_type: String,
    pub props: Props,
}

/// One step from a node along an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Neighbor {
    pub edge: EdgeId,
    pub node: NodeId,
    pub rel_type: TypeId,
    /// True when the edge leaves the node asked about.
    pub outgoing: bool,
}

/// A node or a relationship of a graph read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entity {
    Node(NodeId),
    Edge(EdgeId),
}

impl From<NodeId> for Entity {
    fn from(n: NodeId) -> Entity {
        Entity::Node(n)
    }
}

impl From<EdgeId> for Entity {
    fn from(e: EdgeId) -> Entity {
        Entity::Edge(e)
    }
}

/// The valid-time version an entity of a valid-time view is
/// ([`GraphRead::valid_version`]): its id, the valid interval it was
/// written for, `[from, to)` (`to` `None`: open), in microseconds, and when
/// it was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidVersion {
    pub id: String,
    pub from: i64,
    pub to: Option<i64>,
    /// The system time the version was recorded at, when the graph's
    /// history holds it ([`GraphRead::valid_time_recorded`]).
    pub system_from: Option<u64>,
}

/// A maintained index as one transaction sees it
/// ([`GraphRead::maintained_index`]).
pub struct MaintainedView {
    pub info: IndexInfo,
    /// The live state every transaction shares.
    pub state: Arc<dyn crate::maintain::MaintainedIndex>,
    /// The index sequence number of the transaction's snapshot: it sees
    /// changes published at this number or lower.
    pub seq: u64,
    /// The transaction's own changes, not committed yet, in order.
    pub own: Vec<crate::maintain::Staged>,
}

/// A lazy sequence of ids.
pub type IdIter<'a, T> = Box<dyn Iterator<Item = Result<T>> + 'a>;

/// The id of the property key `key`, recording the read of `node` (for
/// serializable transactions); `None` when no property has that name.
fn property_read(c: &TxnCore, node: NodeId, key: &str) -> Option<u32> {
    let k = c.lookup(Token::PropKey, key)?;
    c.read(Subject::Node(c.g.0, node.0));
    Some(k)
}

/// Property `k` of `node`, decoded from its record.
fn record_property(c: &TxnCore, node: NodeId, k: u32) -> Result<Option<Value>> {
    let found = c.with_value(NODES, &record_key(c.g, node.0), |b| {
        crate::record::node_prop(b, k)
    })?;
    Ok(found.flatten())
}

/// The internal id the id map `ks` holds for the user id `key`.
fn mapped_id(c: &TxnCore, ks: plexus_kv::Ks, key: &str) -> Result<Option<u64>> {
    match c.get(ks, &user_id_key(c.g, key))? {
        Some(v) => Ok(Some(read_id_value(&v).ok_or_else(bad_id_value)?)),
        None => Ok(None),
    }
}

fn bad_id_value() -> StorageError {
    StorageError::Corrupt("id map value".into())
}

fn id_at<T>(key: &[u8], at: usize, f: fn(u64) -> T) -> Result<T> {
    read_u64(key, at)
        .map(f)
        .ok_or_else(|| StorageError::Corrupt(format!("short key {key:?}")))
}

/// Whether two values are equal numbers (an integer and a float equal
/// when the float is that integer exactly).
fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Int(i), Value::Float(f)) | (Value::Float(f), Value::Int(i)) => {
            f.fract() == 0.0 && *f == *i as f64 && (*f as i64) == *i
        }
        _ => false,
    }
}

fn counter_u64(v: i64) -> u64 {
    v.max(0) as u64
}

/// The read methods of every transaction. Import this trait to use them.
/// A visitor of key-value pairs; false stops the walk.
pub type PairFn<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'a;

/// The two parts of a graph's valid-time keyspace (`plexus-temporal` says
/// which of its entries goes where).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidPart {
    /// Entries that change (an entity's timeline): kept in the graph's
    /// history, so a read as of a system time sees them as they were.
    Versioned,
    /// Entries written once and never changed (version records, index
    /// entries): kept outside the history, which halves what each costs to
    /// write and store; a read as of a system time sees them as they are
    /// now, and the caller tells the later ones by their stamps.
    Unversioned,
}

/// Spare bytes a valid-time key's buffer may keep for the graph prefix
/// [`crate::WriteTxn::valid_time_write_all`] puts before the key: with them
/// the key is moved within its buffer, not copied into a new one (a large
/// batch's every key was allocated twice).
pub const VALID_KEY_ROOM: usize = 4;

/// What [`crate::WriteTxn::valid_time_write_all`] writes under a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidWrite {
    /// This value.
    Put(Vec<u8>),
    /// The commit's system time ([`crate::WriteTxn::valid_time_stamp`]).
    Stamp,
    /// Nothing: the key is deleted.
    Delete,
}

impl ValidPart {
    pub(crate) fn keyspace(self) -> Ks {
        match self {
            ValidPart::Versioned => VALID,
            ValidPart::Unversioned => VALID_UNVERSIONED,
        }
    }
}

pub trait GraphRead {
    #[doc(hidden)]
    fn core(&self) -> &TxnCore;

    /// The name of the graph this transaction works on.
    fn graph_name(&self) -> &str {
        &self.core().graph_name
    }

    /// Whether this transaction deleted the node (so a query that reads it
    /// afterwards can say so rather than read nothing).
    fn deleted_node(&self, node: NodeId) -> bool {
        deleted_here(self.core(), node)
    }

    /// Whether this transaction deleted the edge.
    fn deleted_edge(&self, edge: EdgeId) -> bool {
        let c = self.core();
        c.overlay
            .as_ref()
            .is_some_and(|o| o.pending(EDGES, &record_key(c.g, edge.0)) == Some(None))
    }

    /// The node with this internal id.
    fn node(&self, id: NodeId) -> Result<Option<Node>> {
        match node_record(self.core(), id)? {
            Some(r) => Ok(Some(to_node(self.core(), id, r)?)),
            None => Ok(None),
        }
    }

    /// The internal id of the node with this user id: one point lookup.
    fn node_id(&self, key: &str) -> Result<Option<NodeId>> {
        let c = self.core();
        c.read(Subject::NodeKey(c.g.0, key));
        Ok(mapped_id(c, NODE_KEYS, key)?.map(NodeId))
    }

    fn node_by_key(&self, key: &str) -> Result<Option<Node>> {
        match self.node_id(key)? {
            Some(id) => self.node(id),
            None => Ok(None),
        }
    }

    fn edge(&self, id: EdgeId) -> Result<Option<Edge>> {
        let c = self.core();
        match edge_record(c, id)? {
            Some(r) => Ok(Some(Edge {
                id,
                key: r.key,
                src: r.src,
                dst: r.dst,
                rel_type: c.shared.catalog.name(Token::Type, r.rel_type)?.to_string(),
                props: named_props(c, &r.props)?,
            })),
            None => Ok(None),
        }
    }

    fn edge_id(&self, key: &str) -> Result<Option<EdgeId>> {
        let c = self.core();
        c.read(Subject::EdgeKey(c.g.0, key));
        Ok(mapped_id(c, EDGE_KEYS, key)?.map(EdgeId))
    }

    fn edge_by_key(&self, key: &str) -> Result<Option<Edge>> {
        match self.edge_id(key)? {
            Some(id) => self.edge(id),
            None => Ok(None),
        }
    }

    /// Every node of the graph, in id order.
    fn nodes(&self) -> IdIter<'_, NodeId> {
        let c = self.core();
        c.read(Subject::AllNodes(c.g.0));
        ids_under(c, NODES, graph_prefix(c.g), NodeId)
    }

    /// Every node with the label, in id order (none for an unknown label).
    fn nodes_with_label(&self, label: &str) -> IdIter<'_, NodeId> {
        members(self.core(), Token::Label, label, NodeId)
    }

    /// Every edge of the graph, in id order.
    fn edges(&self) -> IdIter<'_, EdgeId> {
        let c = self.core();
        c.read(Subject::AllEdges(c.g.0));
        match edge_ids(c) {
            Ok(ids) => Box::new(ids.into_iter().map(Ok)),
            Err(e) => Box::new(std::iter::once(Err(e))),
        }
    }

    /// Every edge of the type, in id order. Walks the outgoing adjacency
    /// of every node (no index keeps edges by type since format 2: nothing
    /// in a query plan starts from one, and it cost a sixth of the file).
    fn edges_with_type(&self, rel_type: &str) -> IdIter<'_, EdgeId> {
        let c = self.core();
        let Some(t) = c.lookup(Token::Type, rel_type) else {
            return Box::new(std::iter::empty());
        };
        c.read(Subject::Type(c.g.0, t));
        let mut ids = Vec::new();
        for pair in self.adjacency() {
            match pair {
                Ok((_, n)) if n.outgoing && n.rel_type.0 == t => ids.push(n.edge),
                Ok(_) => {}
                Err(e) => return Box::new(std::iter::once(Err(e))),
            }
        }
        ids.sort_unstable();
        Box::new(ids.into_iter().map(Ok))
    }

    /// The edges at a node, optionally of one type, straight from the
    /// adjacency index: no edge record is read.
    fn neighbors(
        &self,
        node: NodeId,
        dir: Direction,
        rel_type: Option<&str>,
    ) -> Result<Vec<Neighbor>> {
        let t = match rel_type {
            Some(name) => match self.type_id(name) {
                Some(t) => Some(t),
                None => return Ok(vec![]),
            },
            None => None,
        };
        let mut out = Vec::new();
        self.neighbors_into(node, dir, t, &mut out)?;
        Ok(out)
    }

    /// The id of a relationship type name, if it was ever used.
    fn type_id(&self, name: &str) -> Option<TypeId> {
        self.core()
            .shared
            .catalog
            .lookup(Token::Type, name)
            .map(TypeId)
    }

    /// Appends the edges at a node (optionally of one type) to `out`: the
    /// allocation-free form of [`GraphRead::neighbors`] for traversals.
    fn neighbors_into(
        &self,
        node: NodeId,
        dir: Direction,
        rel_type: Option<TypeId>,
        out: &mut Vec<Neighbor>,
    ) -> Result<()> {
        let c = self.core();
        c.read(Subject::Adjacency(c.g.0, node.0));
        for &d in stored_dirs(dir) {
            let group = group(c, node, d, rel_type.map(|t| t.0), true)?;
            push_entries(out, group, node, dir, d);
        }
        Ok(())
    }

    /// Whether an internal id names one entity for the whole read, so an
    /// id not found now is no entity's: true of the store's own ids; a
    /// view that numbers its entities as it meets them says false.
    fn stable_ids(&self) -> bool {
        true
    }

    /// Whether [`GraphRead::nodes_where`] may answer from a property's
    /// column in this read, without building one: not as of an earlier
    /// instant, nor in a transaction that changed nodes itself (a column
    /// past its memory budget is found refused only when built). EXPLAIN
    /// asks, to name the start a range no index serves takes.
    fn columns_serve(&self) -> bool {
        crate::columns::may_serve(self.core())
    }

    /// Whether the store is remote (each read a round trip): then reading
    /// many nodes at once ([`GraphRead::neighbors_many`]) pays.
    fn remote(&self) -> bool {
        self.core().shared.kv.round_trips().is_some()
    }

    /// Reads the records of `nodes` at once (one round trip on a remote
    /// store) and keeps them for this transaction's reads of them: for a
    /// walk that will read the nodes it reaches. Does nothing on a local
    /// store, where a read is a memory access.
    fn prefetch_nodes(&self, nodes: &[NodeId]) -> Result<()> {
        if !self.remote() {
            return Ok(());
        }
        let c = self.core();
        let keys: Vec<Vec<u8>> = {
            let fetched = c.fetched.borrow();
            nodes
                .iter()
                .map(|n| node_key(c.g, *n))
                .filter(|k| c.own_write(NODES, k).is_none() && !fetched.contains_key(k))
                .collect()
        };
        if keys.len() < 2 {
            return Ok(());
        }
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let values = c.snap.multi_get(NODES, &refs)?;
        let mut fetched = c.fetched.borrow_mut();
        if fetched.len() + keys.len() > crate::view::MAX_FETCHED {
            fetched.clear();
        }
        fetched.extend(keys.into_iter().zip(values));
        Ok(())
    }

    /// [`GraphRead::neighbors_into`] for many nodes at once: `out[i]` gets
    /// the edges at `nodes[i]`. One read of the store for all of them (one
    /// round trip on a remote store), where node by node costs one each.
    fn neighbors_many(
        &self,
        nodes: &[NodeId],
        dir: Direction,
        rel_type: Option<TypeId>,
        out: &mut Vec<Vec<Neighbor>>,
    ) -> Result<()> {
        let c = self.core();
        let dirs = stored_dirs(dir);
        let t = rel_type.map(|t| t.0);
        let mut ranges = Vec::with_capacity(nodes.len() * dirs.len());
        for &n in nodes {
            c.read(Subject::Adjacency(c.g.0, n.0));
            for &d in dirs {
                ranges.push(adjacency::group_range(c.g, n, d, t));
            }
        }
        let mut groups: Vec<adjacency::Group> =
            (0..ranges.len()).map(|_| Default::default()).collect();
        let mut failed = None;
        c.visit_ranges(
            ADJ,
            &ranges,
            &mut |i, k, v| match groups[i].take(k, v, t, true) {
                Ok(()) => Ok(true),
                Err(e) => {
                    failed = Some(e);
                    Ok(false)
                }
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
        out.clear();
        let mut groups = groups.into_iter();
        for &n in nodes {
            let mut edges = Vec::new();
            let gone = deleted_here(c, n);
            for &d in dirs {
                let Some(group) = groups.next() else { break };
                if !gone {
                    push_entries(&mut edges, group, n, dir, d);
                }
            }
            out.push(edges);
        }
        Ok(())
    }

    /// Every adjacency entry of the graph in key order: by node, outgoing
    /// before incoming, then by type, neighbour and edge. One sequential
    /// scan, for building compact snapshots such as a CSR.
    fn adjacency(&self) -> IdIter<'_, (NodeId, Neighbor)> {
        self.adjacency_between(NodeId(0), None)
    }

    /// The adjacency entries of the nodes with ids in `[from, to)` (to the
    /// end without `to`), in key order: one slice of [`GraphRead::adjacency`].
    fn adjacency_between(
        &self,
        from: NodeId,
        to: Option<NodeId>,
    ) -> IdIter<'_, (NodeId, Neighbor)> {
        let c = self.core();
        c.read(Subject::AllEdges(c.g.0));
        let start = Bound::Included(node_key(c.g, from));
        let end = match to {
            Some(t) => Bound::Excluded(node_key(c.g, t)),
            None => prefix_successor(&graph_prefix(c.g)).map_or(Bound::Unbounded, Bound::Excluded),
        };
        let it = c.scan(ADJ, &KeyRange { start, end }, ScanOptions::default());
        let groups = adjacency::Groups::new(it);
        if c.overlay.is_none() {
            return Box::new(groups);
        }
        Box::new(groups.filter(move |r| !matches!(r, Ok((n, _)) if deleted_here(c, *n))))
    }

    /// The value under `key` (after the graph's prefix) in the graph's
    /// valid-time keyspace `part` (`WriteTxn::valid_time_write`).
    fn valid_time_get(&self, part: ValidPart, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let c = self.core();
        let mut k = graph_prefix(c.g);
        k.extend_from_slice(key);
        c.get(part.keyspace(), &k)
    }

    /// Hands `f` the pairs of the valid-time keyspace `part` with keys
    /// (after the graph's prefix) between `from` and `to`, in key order or
    /// reversed, until it returns false.
    fn valid_time_scan(
        &self,
        part: ValidPart,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        reverse: bool,
        f: &mut PairFn<'_>,
    ) -> Result<()> {
        let c = self.core();
        let g = graph_prefix(c.g);
        let within = |b: Bound<&[u8]>, end: bool| match b {
            Bound::Included(k) => Bound::Included([&g[..], k].concat()),
            Bound::Excluded(k) => Bound::Excluded([&g[..], k].concat()),
            Bound::Unbounded if end => {
                prefix_successor(&g).map_or(Bound::Unbounded, Bound::Excluded)
            }
            Bound::Unbounded => Bound::Included(g.clone()),
        };
        let range = KeyRange {
            start: within(from, false),
            end: within(to, true),
        };
        let opts = ScanOptions {
            reverse,
            limit: None,
        };
        for pair in c.scan(part.keyspace(), &range, opts) {
            let (k, v) = pair?;
            if !f(&k[g.len()..], &v)? {
                break;
            }
        }
        Ok(())
    }

    /// Every property key the database has interned (as Neo4j's
    /// `db.propertyKeys()`: keys once used stay listed).
    fn property_keys(&self) -> Vec<String> {
        self.core().shared.catalog.names(Token::PropKey)
    }

    /// The nodes (with `label`, when given) whose property `key` equals
    /// `value` — exactly for strings and booleans, numerically for numbers
    /// (`1 = 1.0`) — in id order: one sequential pass over the node records
    /// that compares encoded bytes and builds no value, where reading the
    /// property of each node by id would search the records' tree once per
    /// node. For filters no index answers (`MATCH (n) WHERE n.grp = 7`).
    /// Lists and maps compare as stored values (no numeric folding inside).
    fn nodes_equal(&self, label: Option<&str>, key: &str, value: &Value) -> Result<Vec<NodeId>> {
        let c = self.core();
        let Some((k, l)) = filter_tokens(c, label, key) else {
            return Ok(vec![]);
        };
        if let Some(column) = crate::columns::column(c, k)? {
            return Ok(column.select(l, |v| stored_equal(v, value)));
        }
        scan_nodes_equal(c, l, k, value)
    }

    /// The nodes (with `label`, when given) whose property `key` satisfies
    /// `pred`, in id order, from the property's column (see `columns.rs`):
    /// `pred` sees each distinct value once. `None` when no column serves —
    /// this transaction changed nodes itself, or the column would not fit
    /// its memory budget — and the caller reads the nodes instead. For
    /// filters no index answers (`WHERE n.age > 30`).
    fn nodes_where(
        &self,
        label: Option<&str>,
        key: &str,
        pred: &mut dyn FnMut(&Value) -> bool,
    ) -> Result<Option<Vec<NodeId>>> {
        let c = self.core();
        let Some((k, l)) = filter_tokens(c, label, key) else {
            return Ok(Some(vec![]));
        };
        Ok(crate::columns::column(c, k)?.map(|column| column.select(l, pred)))
    }

    /// The nodes (with `label`, when given) holding property `key`, grouped
    /// by its value as stored: per distinct value, the first node holding
    /// it and how many do, in the order of those first nodes — from the
    /// property's column, without reading a node. `None` when no column
    /// serves (as [`GraphRead::nodes_where`]). For a grouped count
    /// (`MATCH (n:L) RETURN n.key, count(*)`).
    fn column_groups(&self, label: Option<&str>, key: &str) -> Result<Option<Vec<(NodeId, u64)>>> {
        let c = self.core();
        let Some((k, l)) = filter_tokens(c, label, key) else {
            return Ok(Some(vec![]));
        };
        Ok(crate::columns::column(c, k)?.map(|column| column.groups(l)))
    }

    /// A node's user id (its element id), without decoding the rest of it.
    fn node_user_id(&self, node: NodeId) -> Result<Option<String>> {
        let c = self.core();
        c.read(Subject::Node(c.g.0, node.0));
        c.with_value(NODES, &record_key(c.g, node.0), crate::record::node_user_id)
    }

    /// One property of a node, without decoding names or other properties.
    fn node_property(&self, node: NodeId, key: &str) -> Result<Option<Value>> {
        let c = self.core();
        let Some(k) = property_read(c, node, key) else {
            return Ok(None);
        };
        match crate::members::node_property(c, node, k)? {
            Some(v) => Ok(v),
            None => record_property(c, node, k),
        }
    }

    /// `f` of one property of a node, lent from the property's column when
    /// one is held (a comparison then copies nothing: the clone of a string
    /// was a sixth of a Cypher reach that compares each end's id), else
    /// read as [`GraphRead::node_property`] reads it. A view that overrides
    /// `node_property` overrides this too.
    fn with_node_property(
        &self,
        node: NodeId,
        key: &str,
        f: &mut dyn FnMut(Option<&Value>),
    ) -> Result<()> {
        let c = self.core();
        let Some(k) = property_read(c, node, key) else {
            f(None);
            return Ok(());
        };
        if !crate::members::with_node_property(c, node, k, f)? {
            f(record_property(c, node, k)?.as_ref());
        }
        Ok(())
    }

    /// Whether the node has the label, without decoding its properties' names.
    fn node_has_label(&self, node: NodeId, label: &str) -> Result<bool> {
        let c = self.core();
        let Some(l) = c.lookup(Token::Label, label) else {
            return Ok(false);
        };
        c.read(Subject::Node(c.g.0, node.0));
        if let Some(has) = crate::members::has_label(c, node, l)? {
            return Ok(has);
        }
        let found = c.with_value(NODES, &record_key(c.g, node.0), |b| {
            crate::record::node_has_label(b, l)
        })?;
        Ok(found.unwrap_or(false))
    }

    /// One property of an edge, without decoding names or other properties.
    fn edge_property(&self, edge: EdgeId, key: &str) -> Result<Option<Value>> {
        let c = self.core();
        let Some(k) = c.lookup(Token::PropKey, key) else {
            return Ok(None);
        };
        c.read(Subject::Edge(c.g.0, edge.0));
        Ok(with_edge(c, edge, false, |_, rest| crate::record::edge_prop(rest, k))?.flatten())
    }

    /// An edge's user id and type name, without decoding its properties.
    fn edge_key_and_type(&self, edge: EdgeId) -> Result<Option<(String, Arc<str>)>> {
        let c = self.core();
        c.read(Subject::Edge(c.g.0, edge.0));
        with_edge(c, edge, true, |user, rest| {
            let (key, t) = crate::record::edge_key_and_type(user, rest)?;
            Ok((key, c.shared.catalog.name(Token::Type, t)?))
        })
    }

    /// The commit sequence this transaction's snapshot reflects (at least):
    /// a later commit in this process has a larger number.
    fn version(&self) -> u64 {
        let c = self.core();
        if c.shared.multi {
            // The store's commit number, as `Storage::version` gives it.
            return crate::coord::commit_seq(&*c.snap).unwrap_or(u64::MAX);
        }
        c.version
    }

    /// The number of edges at a node, from maintained counters (no scan of
    /// the edges). With `Both`, a self-loop counts once.
    fn degree(&self, node: NodeId, dir: Direction, rel_type: Option<&str>) -> Result<u64> {
        let c = self.core();
        c.read(Subject::Adjacency(c.g.0, node.0));
        let t = match rel_type {
            Some(name) => match c.lookup(Token::Type, name) {
                Some(t) => Some(t),
                None => return Ok(0),
            },
            None => None,
        };
        let one_dir = |d: u8| -> Result<u64> { Ok(group(c, node, d, t, false)?.degree()) };
        Ok(match dir {
            Direction::Out => one_dir(DIR_OUT)?,
            Direction::In => one_dir(DIR_IN)?,
            Direction::Both => {
                // The outgoing block decoded once: its size, and its loops
                // (listed in both directions, counted once).
                let out = group(c, node, DIR_OUT, t, true)?.into_entries();
                let loops = out.iter().filter(|e| e.node == node.0).count() as u64;
                out.len() as u64 + one_dir(DIR_IN)? - loops
            }
        })
    }

    fn type_name(&self, t: TypeId) -> Result<Arc<str>> {
        self.core().shared.catalog.name(Token::Type, t.0)
    }

    /// Nodes in the graph, from a counter.
    fn node_count(&self) -> Result<u64> {
        let c = self.core();
        c.read(Subject::AllNodes(c.g.0));
        Ok(counter_u64(
            c.counter(STATS, &stat_key(c.g, STAT_NODES, &[]))?,
        ))
    }

    fn edge_count(&self) -> Result<u64> {
        let c = self.core();
        c.read(Subject::AllEdges(c.g.0));
        Ok(counter_u64(
            c.counter(STATS, &stat_key(c.g, STAT_EDGES, &[]))?,
        ))
    }

    fn label_count(&self, label: &str) -> Result<u64> {
        let c = self.core();
        let Some(l) = c.lookup(Token::Label, label) else {
            return Ok(0);
        };
        c.read(Subject::Label(c.g.0, l));
        Ok(counter_u64(c.counter(
            STATS,
            &stat_key(c.g, STAT_LABEL, &l.to_be_bytes()),
        )?))
    }

    fn type_count(&self, rel_type: &str) -> Result<u64> {
        let c = self.core();
        let Some(t) = c.lookup(Token::Type, rel_type) else {
            return Ok(0);
        };
        c.read(Subject::Type(c.g.0, t));
        Ok(counter_u64(c.counter(
            STATS,
            &stat_key(c.g, STAT_TYPE, &t.to_be_bytes()),
        )?))
    }

    /// Labels in use with their node counts, by name.
    fn label_counts(&self) -> Result<Vec<(String, u64)>> {
        token_counts(self.core(), STAT_LABEL, Token::Label)
    }

    /// Relationship types in use with their edge counts, by name.
    fn type_counts(&self) -> Result<Vec<(String, u64)>> {
        token_counts(self.core(), STAT_TYPE, Token::Type)
    }

    /// Nodes whose property equals `value` (numbers compare as Cypher
    /// does: 1 = 1.0), through a property index on (label, key) or on key.
    fn find_nodes(&self, label: Option<&str>, key: &str, value: &Value) -> Result<Vec<NodeId>> {
        let c = self.core();
        let (def, label_filter) = choose_index(c, label, key, IndexKind::Property)?;
        let mut out = Vec::new();
        for v in numeric_twins(value) {
            lookup_value(c, def, &v, label_filter, &mut out)?;
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Nodes whose property lies between the bounds, through a property
    /// index. Integers and floats are one numeric range; other types match
    /// only values of the bounds' type. At least one bound is needed.
    fn find_nodes_in_range(
        &self,
        label: Option<&str>,
        key: &str,
        lo: Bound<&Value>,
        hi: Bound<&Value>,
    ) -> Result<Vec<NodeId>> {
        let c = self.core();
        let (def, label_filter) = choose_index(c, label, key, IndexKind::Property)?;
        each_section(lo, hi, |section, out| {
            range_nodes(c, def, section, label_filter, out)
        })
    }

    /// Nodes whose list property contains `element`, through a list-element index.
    fn find_nodes_with_element(
        &self,
        label: Option<&str>,
        key: &str,
        element: &Value,
    ) -> Result<Vec<NodeId>> {
        let c = self.core();
        let (def, label_filter) = choose_index(c, label, key, IndexKind::ListElement)?;
        let mut out = Vec::new();
        for v in numeric_twins(element) {
            lookup_value(c, def, &v, label_filter, &mut out)?;
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Relationships whose property equals `value` (numbers compare as
    /// Cypher does), through a relationship property index on (type, key)
    /// or on key for every type.
    fn find_edges(&self, rel_type: Option<&str>, key: &str, value: &Value) -> Result<Vec<EdgeId>> {
        self.edges_through(IndexKind::RelationshipProperty, rel_type, key, value)
    }

    /// Relationships whose property lies between the bounds, through a
    /// relationship property index on (type, key) or on key for every
    /// type; the bounds as [`GraphRead::find_nodes_in_range`] takes them.
    fn find_edges_in_range(
        &self,
        rel_type: Option<&str>,
        key: &str,
        lo: Bound<&Value>,
        hi: Bound<&Value>,
    ) -> Result<Vec<EdgeId>> {
        let c = self.core();
        let (def, type_filter) = choose_index(c, rel_type, key, IndexKind::RelationshipProperty)?;
        each_section(lo, hi, |section, out| {
            range_edges(c, def, section, type_filter, out)
        })
    }

    /// Relationships whose list property contains `element`, through a
    /// relationship list-element index.
    fn find_edges_with_element(
        &self,
        rel_type: Option<&str>,
        key: &str,
        element: &Value,
    ) -> Result<Vec<EdgeId>> {
        self.edges_through(IndexKind::RelationshipListElement, rel_type, key, element)
    }

    #[doc(hidden)]
    fn edges_through(
        &self,
        kind: IndexKind,
        rel_type: Option<&str>,
        key: &str,
        value: &Value,
    ) -> Result<Vec<EdgeId>> {
        let c = self.core();
        let (def, type_filter) = choose_index(c, rel_type, key, kind)?;
        let mut out = Vec::new();
        for v in numeric_twins(value) {
            lookup_edges(c, def, &v, type_filter, &mut out)?;
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The system time the transaction reads the graph as of
    /// (`Storage::read_as_of`); `None` for the graph as it is.
    fn system_time(&self) -> Option<u64> {
        self.core().as_of
    }

    /// A maintained index (a vector index) as this transaction sees it.
    fn maintained_index(&self, name: &str) -> Result<MaintainedView> {
        let c = self.core();
        let def = c
            .schema
            .indexes
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| StorageError::NoIndex(format!("named '{name}'")))?;
        if !def.kind.is_maintained() {
            return Err(StorageError::NoIndex(format!(
                "named '{name}' of a maintained kind (it is a {:?} index)",
                def.kind
            )));
        }
        if def.stale {
            return Err(StorageError::IndexStale(name.into()));
        }
        if c.as_of.is_some() {
            // Its data (`index_data`) is the index's as it is now.
            return Err(StorageError::Unsupported(format!(
                "index '{name}' keeps no history: read as of a system time, it cannot be searched \
                 (a vector search as of a system time scans the nodes instead)"
            )));
        }
        Ok(MaintainedView {
            info: def.info(&c.shared.catalog)?,
            state: crate::maintain::state_for(c, def)?,
            seq: crate::maintain::index_seq(&*c.snap)?,
            own: c.effects.staged(c.g, def.id),
        })
    }

    fn indexes(&self) -> Result<Vec<IndexInfo>> {
        let c = self.core();
        let cat = &c.shared.catalog;
        c.schema.indexes.iter().map(|d| d.info(cat)).collect()
    }

    fn constraints(&self) -> Result<Vec<ConstraintInfo>> {
        let c = self.core();
        let cat = &c.shared.catalog;
        let mut out = Vec::new();
        for d in c.schema.indexes.iter().filter(|d| d.unique) {
            out.push(ConstraintInfo {
                name: d.name.clone(),
                label: d
                    .label
                    .map(|l| cat.name(Token::Label, l))
                    .transpose()?
                    .map(|s| s.to_string())
                    .unwrap_or_default(),
                key: cat.name(Token::PropKey, d.key)?.to_string(),
                kind: ConstraintKind::Unique,
            });
        }
        for d in &c.schema.not_null {
            out.push(ConstraintInfo {
                name: d.name.clone(),
                label: cat.name(Token::Label, d.label)?.to_string(),
                key: cat.name(Token::PropKey, d.key)?.to_string(),
                kind: ConstraintKind::NotNull,
            });
        }
        Ok(out)
    }

    /// The system time at which `key` of the graph's valid-time keyspace
    /// was first written, as the graph's history records it (the start of
    /// history for a key older than it); `None` when the graph keeps no
    /// history of it.
    fn valid_time_recorded(&self, key: &[u8]) -> Result<Option<u64>> {
        let c = self.core();
        let full = [&graph_prefix(c.g)[..], key].concat();
        crate::history::first_stamp(&*c.snap, VALID, &full)
    }

    /// The valid-time version `entity` is, when this read is a view of the
    /// valid-time graph as of an instant (`plexus_temporal::ValidTimeView`,
    /// Cypher's `FOR VALID_TIME AS OF`); `None` on the graph itself, whose
    /// nodes and relationships are not versions.
    fn valid_version(&self, entity: Entity) -> Result<Option<ValidVersion>> {
        let _ = entity;
        Ok(None)
    }

    /// Names of indexes whose maintenance was deferred and not yet rebuilt.
    fn stale_indexes(&self) -> Vec<String> {
        let c = self.core();
        c.schema
            .indexes
            .iter()
            .filter(|d| d.stale)
            .map(|d| d.name.clone())
            .collect()
    }
}

/// The key and label ids of a filter over every node, recorded as a read
/// of all nodes; `None` when the key or the label was never used (nothing
/// matches).
fn filter_tokens(c: &TxnCore, label: Option<&str>, key: &str) -> Option<(u32, Option<u32>)> {
    let k = c.lookup(Token::PropKey, key)?;
    let l = match label {
        Some(name) => Some(c.lookup(Token::Label, name)?),
        None => None,
    };
    c.read(Subject::AllNodes(c.g.0));
    Some((k, l))
}

/// Whether a stored value equals `want` as `nodes_equal` compares: numbers
/// numerically (`1 = 1.0`, `-0.0 = 0.0`), everything else as stored.
pub fn stored_equal(v: &Value, want: &Value) -> bool {
    match want {
        Value::Int(_) | Value::Float(_) => numbers_equal(v, want),
        _ => v == want,
    }
}

/// `nodes_equal` by reading the records: for a transaction that changed
/// nodes itself, or a column over the memory budget. Compares encoded
/// bytes and decodes only numbers.
fn scan_nodes_equal(c: &TxnCore, l: Option<u32>, k: u32, value: &Value) -> Result<Vec<NodeId>> {
    let mut want = Vec::new();
    plexus_common::encode_value(value, &mut want);
    let numeric = matches!(value, Value::Int(_) | Value::Float(_));
    let mut out = Vec::new();
    let mut bad: Option<StorageError> = None;
    c.visit(
        NODES,
        &KeyRange::prefix(&graph_prefix(c.g)),
        &mut |key_bytes, record| {
            let hit = match crate::record::node_label_prop_raw(record, l, k) {
                // Numbers have several encodings of one value (`1`,
                // `1.0`, `-0.0`): decode just those.
                Ok(Some(raw)) if numeric => {
                    match plexus_common::decode_value(&mut plexus_common::Reader::new(raw)) {
                        Ok(v) => numbers_equal(&v, value),
                        Err(e) => {
                            bad = Some(e.into());
                            return Ok(false);
                        }
                    }
                }
                Ok(Some(raw)) => raw == want.as_slice(),
                Ok(None) => false,
                Err(e) => {
                    bad = Some(e);
                    return Ok(false);
                }
            };
            if hit {
                match id_at(key_bytes, key_bytes.len().saturating_sub(8), NodeId) {
                    Ok(id) => out.push(id),
                    Err(e) => {
                        bad = Some(e);
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        },
    )?;
    match bad {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The ids ending the keys under `prefix` (the last 8 bytes of each key).
fn ids_under<T: 'static>(
    c: &TxnCore,
    ks: plexus_kv::Ks,
    prefix: Vec<u8>,
    f: fn(u64) -> T,
) -> IdIter<'_, T> {
    let it = c.scan(ks, &KeyRange::prefix(&prefix), ScanOptions::default());
    Box::new(it.map(move |r| {
        let k = r?.0;
        id_at(&k, k.len().saturating_sub(8), f)
    }))
}

/// The members of a label.
fn members<'a, T: 'static>(
    c: &'a TxnCore,
    kind: Token,
    name: &str,
    f: fn(u64) -> T,
) -> IdIter<'a, T> {
    let Some(l) = c.lookup(kind, name) else {
        return Box::new(std::iter::empty());
    };
    c.read(Subject::Label(c.g.0, l));
    ids_under(c, LABELS, token_prefix(c.g, l), f)
}

/// The block and deltas of one node in one direction (of type `t` only,
/// with one); the block's entries decoded only when `decode` is true.
/// The stored directions a traversal direction reads, outgoing first.
fn stored_dirs(dir: Direction) -> &'static [u8] {
    match dir {
        Direction::Out => &[DIR_OUT],
        Direction::In => &[DIR_IN],
        Direction::Both => &[DIR_OUT, DIR_IN],
    }
}

/// The edges of `node`'s adjacency group in stored direction `d` as
/// neighbours; read for `Both`, a self-loop only once (as outgoing).
fn push_entries(
    out: &mut Vec<Neighbor>,
    group: adjacency::Group,
    node: NodeId,
    dir: Direction,
    d: u8,
) {
    let outgoing = d == DIR_OUT;
    let entries = group.into_entries();
    out.reserve(entries.len());
    for e in entries {
        if dir == Direction::Both && !outgoing && e.node == node.0 {
            continue; // a self-loop was reported as outgoing
        }
        out.push(e.neighbor(outgoing));
    }
}

fn group(
    c: &TxnCore,
    node: NodeId,
    d: u8,
    t: Option<u32>,
    decode: bool,
) -> Result<adjacency::Group> {
    let mut group = adjacency::Group::default();
    if deleted_here(c, node) {
        return Ok(group);
    }
    // Kept only while the transaction has written no adjacency: its
    // snapshot never changes, so what was read stays right.
    let cacheable = c.overlay.as_ref().is_none_or(|o| !o.has_writes(ADJ));
    let key = (node.0, d, t, decode);
    if cacheable {
        if let Some(g) = c.group_cache.borrow().get(key) {
            return Ok(g.clone());
        }
    }
    let mut failed = None;
    c.visit(
        ADJ,
        &adjacency::group_range(c.g, node, d, t),
        &mut |k, v| match group.take(k, v, t, decode) {
            Ok(()) => Ok(true),
            Err(e) => {
                failed = Some(e);
                Ok(false)
            }
        },
    )?;
    if let Some(e) = failed {
        return Err(e);
    }
    let small = || {
        group.entries.len() + group.added.len() + group.removed.len()
            <= crate::view::GroupCache::MAX_ENTRIES
    };
    if cacheable && small() {
        let mut cache = c.group_cache.borrow_mut();
        if cache.read_again(key) {
            cache.put(key, group.clone());
        }
    }
    Ok(group)
}

/// Whether the transaction of `c` deleted `node`: then the node has no
/// adjacency, whatever its keys still say (a deleted node's edges are
/// taken out at their other end only; the commit drops its adjacency whole).
fn deleted_here(c: &TxnCore, node: NodeId) -> bool {
    c.overlay
        .as_ref()
        .is_some_and(|o| o.pending(NODES, &record_key(c.g, node.0)) == Some(None))
}

pub(crate) fn node_record(c: &TxnCore, id: NodeId) -> Result<Option<NodeRecord>> {
    c.read(Subject::Node(c.g.0, id.0));
    c.get(NODES, &record_key(c.g, id.0))?
        .map(|b| NodeRecord::decode(&b))
        .transpose()
}

/// Whether node `id` exists, its record neither copied nor decoded (a
/// chunk's node carries its whole embedding; an edge's endpoints are
/// checked on every edge created).
pub(crate) fn node_exists(c: &TxnCore, id: NodeId) -> Result<bool> {
    c.read(Subject::Node(c.g.0, id.0));
    Ok(c.with_value(NODES, &record_key(c.g, id.0), |_| Ok(()))?
        .is_some())
}

pub(crate) fn edge_record(c: &TxnCore, id: EdgeId) -> Result<Option<EdgeRecord>> {
    c.read(Subject::Edge(c.g.0, id.0));
    with_edge(c, id, true, EdgeRecord::decode_parts)
}

/// `f` of the record of edge `id`, cut into its user id and the rest
/// (`record::split_key`): the transaction's own write, else the record
/// from its block (`edge_blocks.rs`), lent where the block cache holds it.
/// Without `users`, a block's record does not rebuild its user id and `f`
/// may get an empty one: a property read needs none.
fn with_edge<T>(
    c: &TxnCore,
    id: EdgeId,
    users: bool,
    f: impl FnOnce(&[u8], &[u8]) -> Result<T>,
) -> Result<Option<T>> {
    if let Some(written) = c
        .overlay
        .as_ref()
        .and_then(|o| o.pending(EDGES, &record_key(c.g, id.0)))
    {
        return written.map(|r| whole(r, f)).transpose();
    }
    if c.as_of.is_some() {
        // The history keeps one version per edge, not blocks.
        return c
            .snap
            .get(EDGES, &record_key(c.g, id.0))?
            .map(|r| whole(&r, f))
            .transpose();
    }
    c.edge_block.borrow_mut().read(&*c.snap, c.g, id, users, f)
}

/// `f` of a whole record cut as [`with_edge`] hands it on.
fn whole<T>(record: &[u8], f: impl FnOnce(&[u8], &[u8]) -> Result<T>) -> Result<T> {
    let (user, rest) = crate::record::split_key(record)?;
    f(user, rest)
}

/// Every edge id of the graph, in order: the committed blocks' with the
/// transaction's own creations and deletions applied.
fn edge_ids(c: &TxnCore) -> Result<Vec<EdgeId>> {
    let prefix = graph_prefix(c.g);
    let mut ids = Vec::new();
    let mut inner = Ok(());
    c.snap
        .visit(EDGES, &KeyRange::prefix(&prefix), &mut |k, v| {
            if c.as_of.is_some() {
                // The history keeps one version per edge, not blocks.
                inner = id_at(k, 4, EdgeId).map(|id| ids.push(id));
                return Ok(inner.is_ok());
            }
            inner = edge_blocks::each_id(k, v, &mut |id| ids.push(id));
            Ok(inner.is_ok())
        })?;
    inner?;
    if let Some(o) = &c.overlay {
        let mut gone = std::collections::HashSet::new();
        for (k, v) in o.written_under(EDGES, &prefix) {
            let id = id_at(k, 4, EdgeId)?;
            match v {
                Some(_) => ids.push(id),
                None => {
                    gone.insert(id);
                }
            }
        }
        ids.retain(|id| !gone.contains(id));
        ids.sort_unstable();
        ids.dedup();
    }
    Ok(ids)
}

fn named_props(c: &TxnCore, props: &[(u32, Value)]) -> Result<Props> {
    props
        .iter()
        .map(|(k, v)| {
            Ok((
                c.shared.catalog.name(Token::PropKey, *k)?.to_string(),
                v.clone(),
            ))
        })
        .collect()
}

pub(crate) fn to_node(c: &TxnCore, id: NodeId, r: NodeRecord) -> Result<Node> {
    let mut labels = r
        .labels
        .iter()
        .map(|l| Ok(c.shared.catalog.name(Token::Label, *l)?.to_string()))
        .collect::<Result<Vec<_>>>()?;
    labels.sort();
    Ok(Node {
        id,
        key: r.key,
        labels,
        props: named_props(c, &r.props)?,
    })
}

fn token_counts(c: &TxnCore, kind: u8, token: Token) -> Result<Vec<(String, u64)>> {
    let mut out = Vec::new();
    for (k, v) in c.counters(STATS, &stat_key(c.g, kind, &[]))? {
        let id = read_u32(&k, 5).ok_or_else(|| StorageError::Corrupt("stat key".into()))?;
        out.push((
            c.shared.catalog.name(token, id)?.to_string(),
            counter_u64(v),
        ));
    }
    out.sort();
    Ok(out)
}

/// The index to answer a lookup: one on exactly (label, key) first, else one
/// on the key for every node (then the label is checked per hit).
fn choose_index<'a>(
    c: &'a TxnCore,
    label: Option<&str>,
    key: &str,
    kind: IndexKind,
) -> Result<(&'a IndexDef, Option<u32>)> {
    let describe = || {
        let what = match kind {
            IndexKind::ListElement => "list-element index",
            IndexKind::RelationshipListElement => "relationship list-element index",
            IndexKind::RelationshipProperty => "relationship property index",
            _ => "property index",
        };
        format!(
            "{what} on {}{key}",
            label.map(|l| format!(":{l}.")).unwrap_or_default()
        )
    };
    let k = c.lookup(Token::PropKey, key);
    let token = if kind.on_relationships() {
        Token::Type
    } else {
        Token::Label
    };
    let l = label.map(|l| c.lookup(token, l));
    let candidates = c
        .schema
        .indexes
        .iter()
        .filter(|d| Some(d.key) == k && d.kind == kind);
    // Without a label, only an index of every node (or every type) holds
    // every answer.
    let exact = candidates.clone().find(|d| match l {
        None => d.label.is_none(),
        Some(l) => l.is_some() && d.label == l,
    });
    let (def, filter) = match (exact, l) {
        (Some(d), _) => (d, None),
        (None, Some(l)) => match candidates.clone().find(|d| d.label.is_none()) {
            Some(d) => (d, Some(l.unwrap_or(u32::MAX))),
            None => return Err(StorageError::NoIndex(describe())),
        },
        (None, None) => return Err(StorageError::NoIndex(describe())),
    };
    if def.stale {
        return Err(StorageError::IndexStale(def.name.clone()));
    }
    c.read(Subject::Index(c.g.0, def.id));
    Ok((def, filter))
}

/// A value and, for numbers, its equal of the other numeric type; the
/// value is lent, not copied (most seeks are of one string).
fn numeric_twins(v: &Value) -> impl Iterator<Item = std::borrow::Cow<'_, Value>> {
    let twin = match v {
        Value::Int(i) if (*i as f64) as i64 == *i && (*i as f64).is_finite() => {
            Some(Value::Float(*i as f64))
        }
        Value::Float(f) if f.fract() == 0.0 && *f >= -9.2e18 && *f <= 9.2e18 => {
            Some(Value::Int(*f as i64))
        }
        _ => None,
    };
    std::iter::once(std::borrow::Cow::Borrowed(v)).chain(twin.map(std::borrow::Cow::Owned))
}

fn index_prefix(c: &TxnCore, def: &IndexDef) -> Vec<u8> {
    token_prefix(c.g, def.id)
}

/// The node a cut index entry points to still holds a value that, encoded
/// in full, passes `keep`.
fn confirm(c: &TxnCore, def: &IndexDef, n: NodeId, keep: &dyn Fn(&[u8]) -> bool) -> Result<bool> {
    let Some(rec) = node_record(c, n)? else {
        return Ok(false);
    };
    Ok(holds_full(def, &rec.props, keep))
}

/// Whether these properties hold, under the index's key, a value (or for a
/// list-element index an element) that, encoded in full, passes `keep`.
fn holds_full(def: &IndexDef, props: &[(u32, Value)], keep: &dyn Fn(&[u8]) -> bool) -> bool {
    let Some(v) = prop(props, def.key) else {
        return false;
    };
    let values: Vec<&Value> = match (def.kind.per_element(), v) {
        (true, Value::List(items)) => items.iter().collect(),
        _ => vec![v],
    };
    values.iter().any(|v| {
        let mut full = Vec::new();
        encode_key_value(v, &mut full);
        keep(&full)
    })
}

fn has_label(c: &TxnCore, n: NodeId, l: u32) -> Result<bool> {
    if let Some(has) = crate::members::has_label(c, n, l)? {
        return Ok(has);
    }
    Ok(c.get(LABELS, &token_member_key(c.g, l, n.0))?.is_some())
}

fn lookup_value(
    c: &TxnCore,
    def: &IndexDef,
    v: &Value,
    label: Option<u32>,
    out: &mut Vec<NodeId>,
) -> Result<()> {
    let (found, cut) = index_hits(c, def, v)?;
    if out.is_empty() && cut.is_none() && label.is_none() {
        // Nothing to check: the ids as found (collected in place, the
        // same allocation).
        *out = found.into_iter().map(NodeId).collect();
        return Ok(());
    }
    for n in found.into_iter().map(NodeId) {
        if let Some(full) = &cut {
            if !confirm(c, def, n, &|f| f == full.as_slice())? {
                continue;
            }
        }
        if let Some(l) = label {
            if !has_label(c, n, l)? {
                continue;
            }
        }
        out.push(n);
    }
    Ok(())
}

/// Bytes enough for most values' index keys ([`push_value_key`]): a
/// string's or bytes' own length and their markers (an escaped zero byte
/// takes two), any other scalar's at most 17; a key is cut at
/// [`TRUNCATED_LEN`].
fn value_key_room(v: &Value) -> usize {
    let raw = match v {
        Value::String(s) => s.len() + 3,
        Value::Bytes(b) => b.len() + 3,
        _ => 17,
    };
    raw.min(TRUNCATED_LEN)
}

/// The ids an index holds under exactly the value `v`, and `v` encoded in
/// full when its key was cut (each hit must then be confirmed).
fn index_hits(c: &TxnCore, def: &IndexDef, v: &Value) -> Result<(Vec<u64>, Option<Vec<u8>>)> {
    // The prefix built in one buffer, which the range then owns: an
    // equality seek starts most queries, and each copy was an allocation
    // (so was each growth of the buffer while the value's key went in).
    let mut prefix = token_prefix_with_room(c.g, def.id, value_key_room(v));
    let vk_len = push_value_key(v, &mut prefix);
    let len = prefix.len();
    // The entries' ids first, read in place (an equality seek is most
    // queries' start), then the checks that read other keys.
    let mut found = Vec::new();
    c.visit(PROP_INDEX, &KeyRange::prefix_of(prefix), &mut |k, _| {
        // A longer value that merely starts with these bytes is skipped;
        // the rest end in the 8 bytes of an id.
        if k.len() == len + 8 {
            found.extend(read_u64(k, len));
        }
        Ok(true)
    })?;
    let cut = (vk_len == TRUNCATED_LEN).then(|| {
        let mut full = Vec::new();
        encode_key_value(v, &mut full);
        full
    });
    Ok((found, cut))
}

/// As [`lookup_value`], in a relationship index: the relationships of type
/// `rel_type` (when the index covers every type) holding `v`.
fn lookup_edges(
    c: &TxnCore,
    def: &IndexDef,
    v: &Value,
    rel_type: Option<u32>,
    out: &mut Vec<EdgeId>,
) -> Result<()> {
    let (found, cut) = index_hits(c, def, v)?;
    for e in found.into_iter().map(EdgeId) {
        if cut.is_none() && rel_type.is_none() {
            out.push(e);
            continue;
        }
        let Some(rec) = edge_record(c, e)? else {
            continue;
        };
        if rel_type.is_some_and(|t| t != rec.rel_type) {
            continue;
        }
        if let Some(full) = &cut {
            if !holds_full(def, &rec.props, &|f| f == full.as_slice()) {
                continue;
            }
        }
        out.push(e);
    }
    Ok(())
}

type Section = (Bound<Value>, Bound<Value>);

/// Splits a range into per-type sections: numbers span the integer and the
/// float sections, with the bounds converted for each.
fn range_sections(lo: Bound<&Value>, hi: Bound<&Value>) -> Result<Vec<Section>> {
    let ty = |b: &Bound<&Value>| match b {
        Bound::Included(v) | Bound::Excluded(v) => Some(v.value_type()),
        Bound::Unbounded => None,
    };
    let numeric = |t: Option<plexus_common::ValueType>| {
        matches!(
            t,
            Some(plexus_common::ValueType::Int | plexus_common::ValueType::Float)
        )
    };
    let (tl, th) = (ty(&lo), ty(&hi));
    if tl.is_none() && th.is_none() {
        return Err(StorageError::Unsupported(
            "a range lookup needs at least one bound".into(),
        ));
    }
    if matches!(tl, Some(plexus_common::ValueType::Null))
        || matches!(th, Some(plexus_common::ValueType::Null))
    {
        return Ok(vec![]);
    }
    let owned = |b: Bound<&Value>| b.map(Value::clone);
    if numeric(tl) || numeric(th) {
        if (tl.is_some() && !numeric(tl)) || (th.is_some() && !numeric(th)) {
            return Ok(vec![]);
        }
        let as_float = |b: Bound<&Value>| {
            b.map(|v| match v {
                Value::Int(i) => Value::Float(*i as f64),
                other => other.clone(),
            })
        };
        let int_lo = int_bound(lo, true);
        let int_hi = int_bound(hi, false);
        let mut out = vec![(as_float(lo), as_float(hi))];
        if let (Some(a), Some(b)) = (int_lo, int_hi) {
            out.push((a, b));
        }
        return Ok(out);
    }
    if tl.is_some() && th.is_some() && tl != th {
        return Ok(vec![]);
    }
    Ok(vec![(owned(lo), owned(hi))])
}

/// What `scan` finds in each type's section of a range, sorted, once each.
fn each_section<T: Ord>(
    lo: Bound<&Value>,
    hi: Bound<&Value>,
    mut scan: impl FnMut(&Section, &mut Vec<T>) -> Result<()>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for section in range_sections(lo, hi)? {
        scan(&section, &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// A numeric bound as an integer bound; `None` when no integer can match.
fn int_bound(b: Bound<&Value>, lower: bool) -> Option<Bound<Value>> {
    match b {
        Bound::Unbounded => Some(Bound::Unbounded),
        Bound::Included(Value::Int(i)) => Some(Bound::Included(Value::Int(*i))),
        Bound::Excluded(Value::Int(i)) => Some(Bound::Excluded(Value::Int(*i))),
        Bound::Included(Value::Float(f)) | Bound::Excluded(Value::Float(f)) => {
            if f.is_nan() {
                return None;
            }
            let inclusive = matches!(b, Bound::Included(_));
            let r = if lower { f.ceil() } else { f.floor() };
            let mut i = if r >= 9.2e18 {
                if lower {
                    return None;
                } else {
                    i64::MAX
                }
            } else if r <= -9.2e18 {
                if lower {
                    i64::MIN
                } else {
                    return None;
                }
            } else {
                r as i64
            };
            if !inclusive && r == *f {
                i = if lower {
                    i.checked_add(1)?
                } else {
                    i.checked_sub(1)?
                };
            }
            Some(Bound::Included(Value::Int(i)))
        }
        _ => None,
    }
}

/// The first byte of a type's key encoding: its section of the index.
fn section_tag(v: &Value) -> u8 {
    let mut k = Vec::new();
    encode_key_value(v, &mut k);
    k[0]
}

/// What a range scan passes on for each entry: its id, and whether the
/// entry alone shows the value in range (`Some`) or the record must be
/// read and its value tested with the given test (`None`: the key was cut).
type RangeEntry<'a> = &'a mut dyn FnMut(u64, Option<bool>, &dyn Fn(&[u8]) -> bool) -> Result<()>;

/// The ids an index holds between the bounds (one type's section), each
/// passed to `found` (see [`RangeEntry`]).
fn range_scan(
    c: &TxnCore,
    def: &IndexDef,
    lo: &Bound<Value>,
    hi: &Bound<Value>,
    found: RangeEntry<'_>,
) -> Result<()> {
    let sample = match (lo, hi) {
        (Bound::Included(v) | Bound::Excluded(v), _)
        | (_, Bound::Included(v) | Bound::Excluded(v)) => v,
        _ => return Ok(()),
    };
    let base = index_prefix(c, def);
    let with = |bytes: &[u8]| [base.as_slice(), bytes].concat();
    let tag = section_tag(sample);
    let full = |v: &Value| {
        let mut k = Vec::new();
        encode_key_value(v, &mut k);
        k
    };
    let (lo_full, hi_full) = (lo.as_ref().map(full), hi.as_ref().map(full));
    // Cut keys (long values) only order by their first bytes: widen the
    // scan to those bytes, and confirm such entries against the record.
    let cut = |k: &[u8]| k[..k.len().min(crate::schema::MAX_VALUE_KEY)].to_vec();
    let start = match &lo_full {
        Bound::Unbounded => Bound::Included(with(&[tag])),
        Bound::Included(k) | Bound::Excluded(k) if k.len() > crate::schema::MAX_VALUE_KEY => {
            Bound::Included(with(&cut(k)))
        }
        Bound::Included(k) => Bound::Included(with(k)),
        Bound::Excluded(k) => match prefix_successor(&with(k)) {
            Some(s) => Bound::Included(s),
            None => return Ok(()),
        },
    };
    let end = match &hi_full {
        Bound::Unbounded => {
            prefix_successor(&with(&[tag])).map_or(Bound::Unbounded, Bound::Excluded)
        }
        Bound::Included(k) | Bound::Excluded(k) if k.len() > crate::schema::MAX_VALUE_KEY => {
            prefix_successor(&with(&cut(k))).map_or(Bound::Unbounded, Bound::Excluded)
        }
        Bound::Included(k) => prefix_successor(&with(k)).map_or(Bound::Unbounded, Bound::Excluded),
        Bound::Excluded(k) => Bound::Excluded(with(k)),
    };
    let in_range = |f: &[u8]| {
        let above = match &lo_full {
            Bound::Included(l) => f >= l.as_slice(),
            Bound::Excluded(l) => f > l.as_slice(),
            Bound::Unbounded => f.first() == Some(&tag),
        };
        let below = match &hi_full {
            Bound::Included(h) => f <= h.as_slice(),
            Bound::Excluded(h) => f < h.as_slice(),
            Bound::Unbounded => f.first() == Some(&tag),
        };
        above && below
    };
    let bounds_cut = [&lo_full, &hi_full].iter().any(|b| matches!(b, Bound::Included(k) | Bound::Excluded(k) if k.len() > crate::schema::MAX_VALUE_KEY));
    for pair in c.scan(PROP_INDEX, &KeyRange { start, end }, ScanOptions::default()) {
        let (k, _) = pair?;
        let id = id_at(&k, k.len() - 8, |id| id)?;
        let vk = &k[base.len()..k.len() - 8];
        let sure = vk.len() != TRUNCATED_LEN && !bounds_cut;
        found(id, sure.then(|| in_range(vk)), &in_range)?;
    }
    Ok(())
}

/// The nodes (with label `label`) an index holds between the bounds.
fn range_nodes(
    c: &TxnCore,
    def: &IndexDef,
    (lo, hi): &Section,
    label: Option<u32>,
    out: &mut Vec<NodeId>,
) -> Result<()> {
    range_scan(c, def, lo, hi, &mut |id, sure, in_range| {
        let n = NodeId(id);
        let keep = match sure {
            Some(keep) => keep,
            None => confirm(c, def, n, in_range)?,
        };
        let labelled = match label {
            Some(l) => has_label(c, n, l)?,
            None => true,
        };
        if keep && labelled {
            out.push(n);
        }
        Ok(())
    })
}

/// The relationships (of type `rel_type`) an index holds between the bounds.
fn range_edges(
    c: &TxnCore,
    def: &IndexDef,
    (lo, hi): &Section,
    rel_type: Option<u32>,
    out: &mut Vec<EdgeId>,
) -> Result<()> {
    range_scan(c, def, lo, hi, &mut |id, sure, in_range| {
        let e = EdgeId(id);
        if sure == Some(false) {
            return Ok(());
        }
        if sure.is_some() && rel_type.is_none() {
            out.push(e);
            return Ok(());
        }
        let Some(rec) = edge_record(c, e)? else {
            return Ok(());
        };
        let typed = rel_type.is_none_or(|t| t == rec.rel_type);
        if typed && (sure.is_some() || holds_full(def, &rec.props, in_range)) {
            out.push(e);
        }
        Ok(())
    })
}
