//! Write transactions: buffered changes, index maintenance, and commit.
//!
//! Every change goes through two functions, [`WriteTxn::write_node`] and
//! [`WriteTxn::write_edge`], which take the old and the new record and
//! derive everything else from the difference: id index, label and type
//! members, adjacency in both directions, property index entries, counts
//! and degrees, constraint checks and conflict keys. One write path means
//! the records and their indexes cannot disagree.

use crate::adjacency;
use crate::catalog::Token;
use crate::counters::Counters;
use crate::error::{Result, StorageError};
use crate::ids::{Direction, EdgeId, GraphId, NodeId};
use crate::keys::*;
use crate::merge::ListOp;
use crate::occ::{Footprint, Subject};
use crate::read::{
    edge_record, node_exists, node_record, Entity, GraphRead, Props, ValidPart, ValidWrite,
};
use crate::record::{set_prop, EdgeRecord, NodeRecord};
use crate::schema::{
    ConstraintDef, ConstraintKind, ConstraintSpec, IndexDef, IndexKind, IndexMode, IndexSpec,
};
use crate::storage::{parse_schema, Isolation};
use crate::view::{Overlay, TxnCore};
use plexus_common::{push_u64, Value};
use plexus_kv::{KeyRange, ScanOptions};
use std::collections::BTreeSet;

/// Longest user id of a node or an edge, in bytes (key-length limits of the backends).
pub const MAX_ID_LEN: usize = 400;

/// What to do with the edges of a node being deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteMode {
    /// Delete the node's edges too.
    Detach,
    /// Refuse when the node has edges.
    Refuse,
}

/// A write transaction. Changes are buffered and invisible to others until
/// [`WriteTxn::commit`]; dropping the transaction rolls it back. No lock is
/// held while it is open.
pub struct WriteTxn {
    /// Boxed, as `ReadTxn`'s.
    core: Box<TxnCore>,
    start: u64,
    isolation: Isolation,
    fp: Footprint,
    mode: IndexMode,
    counters: Counters,
    /// List updates per node or relationship, merged at commit (`merge.rs`).
    merges: rustc_hash::FxHashMap<Entity, Vec<(u32, crate::merge::ListOp)>>,
    /// Entities changed otherwise than by list updates: written as they are.
    written: rustc_hash::FxHashSet<Entity>,
    /// Set while a list update writes its entity.
    listing: bool,
}

impl GraphRead for WriteTxn {
    fn core(&self) -> &TxnCore {
        &self.core
    }
}

impl Drop for WriteTxn {
    fn drop(&mut self) {
        self.core.shared.occ.end(self.start);
    }
}

fn user_id(what: &'static str, key: Option<&str>) -> Result<String> {
    let key = match key {
        Some(k) => k.to_string(),
        // Time-ordered (UUID version 7): a new id goes after those before
        // it in the id map, so its packed block grows at its end.
        None => uuid::Uuid::now_v7().to_string(),
    };
    if key.is_empty() || key.len() > MAX_ID_LEN {
        return Err(StorageError::InvalidName {
            what,
            name: key.chars().take(40).collect(),
            why: "ids must be 1 to 400 bytes long",
        });
    }
    Ok(key)
}

impl WriteTxn {
    pub(crate) fn new(core: Box<TxnCore>, start: u64, isolation: Isolation) -> Self {
        let mut fp = Footprint::default();
        // Every write relies on the graph's schema (and existence) staying
        // as it was: schema changes and graph drops write this key.
        fp.shares.insert(Subject::Schema(core.g.0).hash());
        WriteTxn {
            core,
            start,
            isolation,
            fp,
            mode: IndexMode::Maintain,
            counters: Counters::default(),
            merges: Default::default(),
            written: Default::default(),
            listing: false,
        }
    }

    fn g(&self) -> GraphId {
        self.core.g
    }

    /// The transaction's own copy of its schema, to change (the cached one
    /// stays as other transactions share it).
    fn schema_mut(&mut self) -> &mut crate::schema::Schema {
        std::sync::Arc::make_mut(&mut self.core.schema)
    }

    fn ov(&mut self) -> &mut Overlay {
        self.core
            .overlay
            .as_mut()
            .expect("a write transaction always has an overlay")
    }

    /// Runs one public operation: all of it, or (on error) none of it.
    fn op<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.ov().begin_op();
        let counted = self.counters;
        let effects = self.core.effects.mark();
        let r = f(self);
        match &r {
            Ok(_) => self.ov().end_op(),
            Err(_) => {
                self.ov().rollback_op();
                self.counters = counted;
                self.core.effects.undo_to(effects);
                let g = self.g();
                let scan = self.core.scan(
                    SCHEMA,
                    &KeyRange::prefix(&graph_prefix(g)),
                    ScanOptions::default(),
                );
                self.core.schema = std::sync::Arc::new(parse_schema(scan)?);
            }
        }
        r
    }

    /// What this transaction has changed so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// How property indexes are maintained by the rest of this transaction.
    pub fn set_index_mode(&mut self, mode: IndexMode) {
        self.mode = mode;
    }

    fn intern_labels(&self, labels: &[&str]) -> Result<Vec<u32>> {
        let set = labels
            .iter()
            .map(|l| self.core.shared.catalog.intern(Token::Label, l))
            .collect::<Result<BTreeSet<u32>>>()?;
        Ok(set.into_iter().collect())
    }

    fn intern_props(&self, props: &Props) -> Result<Vec<(u32, Value)>> {
        let mut out = Vec::with_capacity(props.len());
        for (k, v) in props {
            let id = self.core.shared.catalog.intern(Token::PropKey, k)?;
            set_prop(&mut out, id, v.clone());
        }
        Ok(out)
    }

    fn existing_node(&self, id: NodeId) -> Result<NodeRecord> {
        node_record(&self.core, id)?.ok_or_else(|| node_missing(id))
    }

    /// Fails as [`WriteTxn::existing_node`] does, without decoding.
    fn ensure_node(&self, id: NodeId) -> Result<()> {
        if node_exists(&self.core, id)? {
            return Ok(());
        }
        Err(node_missing(id))
    }

    fn existing_edge(&self, id: EdgeId) -> Result<EdgeRecord> {
        edge_record(&self.core, id)?.ok_or_else(|| StorageError::NotFound {
            what: "edge",
            id: id.to_string(),
        })
    }

    /// Creates a node; fails when a node with this user id exists. Without
    /// an id, a UUID is generated. Null properties are not stored.
    pub fn create_node(
        &mut self,
        key: Option<&str>,
        labels: &[&str],
        props: &Props,
    ) -> Result<NodeId> {
        self.op(|t| {
            let key = user_id("node id", key)?;
            if t.node_id(&key)?.is_some() {
                return Err(StorageError::AlreadyExists {
                    what: "node",
                    id: key,
                });
            }
            let rec = NodeRecord {
                key,
                labels: t.intern_labels(labels)?,
                props: t.intern_props(props)?,
            };
            let id = NodeId(t.core.shared.next_node.take(&*t.core.shared.kv)?);
            t.write_node(id, None, Some(&rec))?;
            Ok(id)
        })
    }

    /// Upsert, replacing: creates the node, or sets its labels and
    /// properties to exactly those given.
    pub fn put_node(&mut self, key: &str, labels: &[&str], props: &Props) -> Result<NodeId> {
        self.upsert_node(key, labels, props, false)
    }

    /// Upsert, merging: creates the node, or adds the labels and sets the
    /// given properties (a null value removes a property), keeping the rest.
    pub fn merge_node(&mut self, key: &str, labels: &[&str], props: &Props) -> Result<NodeId> {
        self.upsert_node(key, labels, props, true)
    }

    fn upsert_node(
        &mut self,
        key: &str,
        labels: &[&str],
        props: &Props,
        merge: bool,
    ) -> Result<NodeId> {
        let Some(id) = self.node_id(key)? else {
            return self.create_node(Some(key), labels, props);
        };
        self.op(|t| {
            let old = t.existing_node(id)?;
            let mut new = old.clone();
            let labels = t.intern_labels(labels)?;
            if merge {
                new.labels = old
                    .labels
                    .iter()
                    .chain(&labels)
                    .copied()
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                for (k, v) in props {
                    let k = t.core.shared.catalog.intern(Token::PropKey, k)?;
                    set_prop(&mut new.props, k, v.clone());
                }
            } else {
                new.labels = labels;
                new.props = t.intern_props(props)?;
            }
            t.write_node(id, Some(&old), Some(&new))?;
            Ok(id)
        })
    }

    /// Changes an existing node's record through `f`, as one operation.
    fn update_node(
        &mut self,
        node: NodeId,
        f: impl FnOnce(&Self, &mut NodeRecord) -> Result<()>,
    ) -> Result<()> {
        self.op(|t| {
            let old = t.existing_node(node)?;
            let mut new = old.clone();
            f(t, &mut new)?;
            t.write_node(node, Some(&old), Some(&new))
        })
    }

    /// Adds `value` to the list property `key` of a node or relationship
    /// unless the list holds it (an absent property is an empty list);
    /// whether it changed. Transactions that update the same entity's list
    /// this way at the same time do not conflict with each other: each
    /// update is applied again at commit to the entity as it is then
    /// (`merge.rs`).
    pub fn list_add(&mut self, of: impl Into<Entity>, key: &str, value: Value) -> Result<bool> {
        self.list_update(of.into(), key, &[], |_| vec![ListOp::Add(value)])
    }

    /// [`WriteTxn::list_add`], and only when it adds `value`, an add of
    /// each element of `then` (a list name and an element) to its list
    /// unless there; whether `value` was added. The lists `sorted` names
    /// (`key`'s or those of `then`) get their element inserted in order
    /// instead of appended (before the first element that sorts after it:
    /// a list only changed so stays sorted, as a set). It commutes as
    /// `list_add` does, and the condition is decided again at commit
    /// against the entity as it is then: of two transactions adding one
    /// element at once, only the first to commit adds the rest (cognee
    /// records the pipeline run that first attached a source this way).
    pub fn list_add_then(
        &mut self,
        of: impl Into<Entity>,
        key: &str,
        value: Value,
        then: Vec<(String, Value)>,
        sorted: &[&str],
    ) -> Result<bool> {
        let update = |list: &str, v: Value| match sorted.contains(&list) {
            true => ListOp::Insert(v),
            false => ListOp::Add(v),
        };
        let first = update(key, value);
        let names: Vec<&str> = then.iter().map(|(k, _)| k.as_str()).collect();
        let rest: Vec<ListOp> = then.iter().map(|(k, v)| update(k, v.clone())).collect();
        self.list_update(of.into(), key, &names, |keys| {
            let rest = keys.iter().copied().zip(rest).collect::<Vec<_>>();
            match rest.is_empty() {
                true => vec![first],
                false => vec![ListOp::AddThen(Box::new(first), rest)],
            }
        })
    }

    /// Removes every occurrence of `value` from the list property `key` of
    /// a node or relationship; whether it changed. Commutes as
    /// [`WriteTxn::list_add`] does.
    pub fn list_remove(&mut self, of: impl Into<Entity>, key: &str, value: Value) -> Result<bool> {
        self.list_update(of.into(), key, &[], |_| vec![ListOp::Remove(value)])
    }

    /// Adds each of `values` that the list property `key` of a node or
    /// relationship does not hold, in order (a union of the lists, the
    /// entity's first); whether it changed. One write of the entity;
    /// commutes as [`WriteTxn::list_add`] does.
    pub fn list_union(
        &mut self,
        of: impl Into<Entity>,
        key: &str,
        values: Vec<Value>,
    ) -> Result<bool> {
        self.list_update(of.into(), key, &[], |_| {
            values.into_iter().map(ListOp::Add).collect()
        })
    }

    /// The list updates `build` makes (given the ids of the names in
    /// `then`) to the list `key` of `of`, merged at commit where that keeps
    /// every index right.
    fn list_update(
        &mut self,
        of: Entity,
        key: &str,
        then: &[&str],
        build: impl FnOnce(&[u32]) -> Vec<ListOp>,
    ) -> Result<bool> {
        self.op(|t| {
            let catalog = &t.core.shared.catalog;
            let k = catalog.intern(Token::PropKey, key)?;
            let then = then
                .iter()
                .map(|name| catalog.intern(Token::PropKey, name))
                .collect::<Result<Vec<u32>>>()?;
            let ops = build(&then);
            for v in ops.iter().flat_map(ListOp::values) {
                storable(&[(0, v.clone())])?;
            }
            // Merged only where a merge keeps every index right.
            let mergeable = t.mode == IndexMode::Maintain
                && !t.core.schema.indexes.iter().any(|d| {
                    (d.key == k || then.contains(&d.key)) && (d.unique || d.kind.is_maintained())
                });
            t.listing = mergeable;
            let changed = match of {
                Entity::Node(n) => t.list_write(
                    k,
                    &ops,
                    |t| t.existing_node(n),
                    |t, old, new| t.write_node(n, Some(old), Some(new)),
                ),
                Entity::Edge(e) => t.list_write(
                    k,
                    &ops,
                    |t| t.existing_edge(e),
                    |t, old, new| t.write_edge(e, Some(old), Some(new)),
                ),
            };
            t.listing = false;
            let changed = changed?;
            // Merged even when it changed nothing here: another
            // transaction committing first may make it change something
            // (an add after a concurrent remove), as in serial order.
            if mergeable {
                let merges = t.merges.entry(of).or_default();
                merges.extend(ops.into_iter().map(|op| (k, op)));
            }
            Ok(changed)
        })
    }

    /// Applies list updates to one entity's record (read by `read`) and
    /// writes it (by `write`) if they changed it; whether they did.
    fn list_write<R: crate::merge::Listed>(
        &mut self,
        k: u32,
        ops: &[ListOp],
        read: impl FnOnce(&Self) -> Result<R>,
        write: impl FnOnce(&mut Self, &R, &R) -> Result<()>,
    ) -> Result<bool> {
        let old = read(self)?;
        let mut new = old.clone();
        let mut changed = false;
        for op in ops {
            changed |= crate::merge::apply(&mut new, k, op)?;
        }
        if changed {
            write(self, &old, &new)?;
        }
        Ok(changed)
    }

    /// Sets one property of a node; a null value removes it.
    pub fn set_node_property(&mut self, node: NodeId, key: &str, value: Value) -> Result<()> {
        self.update_node(node, |t, new| {
            set_prop(
                &mut new.props,
                t.core.shared.catalog.intern(Token::PropKey, key)?,
                value,
            );
            Ok(())
        })
    }

    pub fn add_label(&mut self, node: NodeId, label: &str) -> Result<()> {
        self.update_node(node, |t, new| {
            let l = t.core.shared.catalog.intern(Token::Label, label)?;
            if let Err(i) = new.labels.binary_search(&l) {
                new.labels.insert(i, l);
            }
            Ok(())
        })
    }

    pub fn remove_label(&mut self, node: NodeId, label: &str) -> Result<()> {
        self.update_node(node, |t, new| {
            if let Some(l) = t.core.shared.catalog.lookup(Token::Label, label) {
                new.labels.retain(|x| *x != l);
            }
            Ok(())
        })
    }

    /// Deletes a node; returns false when it did not exist. With
    /// [`DeleteMode::Refuse`] a node that has edges is not deleted.
    pub fn delete_node(&mut self, node: NodeId, mode: DeleteMode) -> Result<bool> {
        self.delete_nodes(&[node], mode).map(|n| n > 0)
    }

    /// Deletes nodes (those that exist; the number deleted is returned). With
    /// [`DeleteMode::Refuse`] none is deleted when one has edges; with
    /// [`DeleteMode::Detach`] their edges go too. Deleting a document's nodes
    /// at once costs less than one by one: an edge between two of them is
    /// taken out of neither's adjacency, which the commit drops whole.
    pub fn delete_nodes(&mut self, nodes: &[NodeId], mode: DeleteMode) -> Result<u64> {
        self.op(|t| {
            let mut found = Vec::with_capacity(nodes.len());
            let mut edges = Vec::new();
            let mut seen = rustc_hash::FxHashSet::default();
            for &node in nodes {
                if !seen.insert(node) {
                    continue;
                }
                let Some(old) = node_record(&t.core, node)? else {
                    continue;
                };
                let at = t.neighbors(node, Direction::Both, None)?;
                if !at.is_empty() && mode == DeleteMode::Refuse {
                    return Err(StorageError::HasEdges {
                        node: old.key,
                        edges: at.len() as u64,
                    });
                }
                found.push((node, old, !at.is_empty()));
                edges.extend(at.into_iter().map(|n| n.edge));
            }
            // The nodes go first: removing an edge then leaves alone the
            // adjacency of an end that is gone (`write_edge`), and the
            // commit drops a gone node's adjacency whole.
            let g = t.g();
            for (node, old, had_edges) in &found {
                t.write_node(*node, Some(old), None)?;
                if *had_edges {
                    t.ov().delete(ADJ, adjacency::drop_marker(g, *node));
                }
            }
            // An edge between two of the nodes was listed at both.
            edges.sort_unstable();
            edges.dedup();
            for e in edges {
                if let Some(r) = edge_record(&t.core, e)? {
                    t.write_edge(e, Some(&r), None)?;
                }
            }
            Ok(found.len() as u64)
        })
    }

    /// Creates an edge between two existing nodes; fails when an edge with
    /// this user id exists. Parallel edges and self-loops are allowed.
    /// Without an id the edge has none, as a bulk-loaded edge without one:
    /// it is reached through its endpoints and its internal id, and costs
    /// no id index entry (a generated id would land at a random place of
    /// that index, a page written per edge).
    pub fn create_edge(
        &mut self,
        key: Option<&str>,
        src: NodeId,
        dst: NodeId,
        rel_type: &str,
        props: &Props,
    ) -> Result<EdgeId> {
        self.op(|t| {
            let key = match key {
                Some(k) => user_id("edge id", Some(k))?,
                None => String::new(),
            };
            if !key.is_empty() && t.edge_id(&key)?.is_some() {
                return Err(StorageError::AlreadyExists {
                    what: "edge",
                    id: key,
                });
            }
            t.ensure_node(src)?;
            t.ensure_node(dst)?;
            let rec = EdgeRecord {
                key,
                src,
                dst,
                rel_type: t.core.shared.catalog.intern(Token::Type, rel_type)?,
                props: t.intern_props(props)?,
            };
            let id = EdgeId(t.core.shared.next_edge.take(&*t.core.shared.kv)?);
            t.write_edge(id, None, Some(&rec))?;
            Ok(id)
        })
    }

    /// Upsert: creates the edge, or replaces the properties of the edge with
    /// this user id. Its endpoints and type must be the ones given.
    pub fn put_edge(
        &mut self,
        key: &str,
        src: NodeId,
        dst: NodeId,
        rel_type: &str,
        props: &Props,
    ) -> Result<EdgeId> {
        let Some(id) = self.edge_id(key)? else {
            return self.create_edge(Some(key), src, dst, rel_type, props);
        };
        self.op(|t| {
            let old = t.existing_edge(id)?;
            let old_type = t.core.shared.catalog.name(Token::Type, old.rel_type)?;
            if old.src != src || old.dst != dst || &*old_type != rel_type {
                return Err(StorageError::EdgeMismatch {
                    id: key.into(),
                    detail: format!("endpoints {} -> {} and type {old_type}", old.src, old.dst),
                });
            }
            let new = EdgeRecord {
                props: t.intern_props(props)?,
                ..old.clone()
            };
            t.write_edge(id, Some(&old), Some(&new))?;
            Ok(id)
        })
    }

    /// Sets one property of an edge; a null value removes it.
    pub fn set_edge_property(&mut self, edge: EdgeId, key: &str, value: Value) -> Result<()> {
        self.op(|t| {
            let old = t.existing_edge(edge)?;
            let mut new = old.clone();
            set_prop(
                &mut new.props,
                t.core.shared.catalog.intern(Token::PropKey, key)?,
                value,
            );
            t.write_edge(edge, Some(&old), Some(&new))
        })
    }

    /// Deletes an edge; returns false when it did not exist.
    pub fn delete_edge(&mut self, edge: EdgeId) -> Result<bool> {
        self.op(|t| match edge_record(&t.core, edge)? {
            Some(old) => t.write_edge(edge, Some(&old), None).map(|_| true),
            None => Ok(false),
        })
    }

    /// The single path by which a node record changes.
    fn write_node(
        &mut self,
        id: NodeId,
        old: Option<&NodeRecord>,
        new: Option<&NodeRecord>,
    ) -> Result<()> {
        if let Some(r) = new {
            storable(&r.props)?;
        }
        self.counters.node(old, new);
        let g = self.g();
        self.fp.writes.insert(Subject::Node(g.0, id.0).hash());
        if !self.listing {
            self.written.insert(Entity::Node(id));
        }
        let nk = node_key(g, id);
        match new {
            Some(r) => self.ov().put(NODES, nk, r.encode()),
            None => self.ov().delete(NODES, nk),
        }
        let created_or_deleted = match (old, new) {
            (None, Some(r)) => Some((r, 1)),
            (Some(r), None) => Some((r, -1)),
            _ => None,
        };
        if let Some((r, delta)) = created_or_deleted {
            self.fp.writes.insert(Subject::NodeKey(g.0, &r.key).hash());
            self.fp.touches.insert(Subject::AllNodes(g.0).hash());
            let ik = user_id_key(g, &r.key);
            if delta > 0 {
                self.ov().put(NODE_KEYS, ik, id_value(id.0));
            } else {
                self.ov().delete(NODE_KEYS, ik);
            }
            self.ov().add(STATS, stat_key(g, STAT_NODES, &[]), delta);
        }
        let empty = Vec::new();
        let old_labels = old.map_or(&empty, |r| &r.labels);
        let new_labels = new.map_or(&empty, |r| &r.labels);
        for l in old_labels.iter().filter(|l| !new_labels.contains(l)) {
            self.label_member(id, *l, -1);
        }
        for l in new_labels.iter().filter(|l| !old_labels.contains(l)) {
            self.label_member(id, *l, 1);
        }
        if let Some(r) = new {
            for c in &self.core.schema.not_null {
                if r.has_label(c.label) && crate::record::prop(&r.props, c.key).is_none() {
                    return Err(StorageError::NotNullViolation {
                        constraint: c.name.clone(),
                        node: r.key.clone(),
                        key: self
                            .core
                            .shared
                            .catalog
                            .name(Token::PropKey, c.key)?
                            .to_string(),
                    });
                }
            }
        }
        for i in 0..self.core.schema.indexes.len() {
            let kind = self.core.schema.indexes[i].kind;
            if kind.on_relationships() {
                continue;
            }
            if kind.is_maintained() {
                let def = self.core.schema.indexes[i].clone();
                self.stage(&def, id, old, new)?;
            } else {
                self.maintain_index(i, id, old, new)?;
            }
        }
        Ok(())
    }

    /// Hands a node's change to the maintainer of a maintained index
    /// (`maintain.rs`), when the indexed value changed.
    fn stage(
        &mut self,
        def: &IndexDef,
        id: NodeId,
        old: Option<&NodeRecord>,
        new: Option<&NodeRecord>,
    ) -> Result<()> {
        let old_v = old.and_then(|r| def.maintained_value(r));
        let new_v = new.and_then(|r| def.maintained_value(r));
        let key = || new.or(old).map(|r| r.key.clone()).unwrap_or_default();
        self.stage_value(def, id.0, key, old_v, new_v)
    }

    /// As [`Self::stage`], for a relationship in a relationship index.
    fn stage_edge(
        &mut self,
        def: &IndexDef,
        id: EdgeId,
        old: Option<&EdgeRecord>,
        new: Option<&EdgeRecord>,
    ) -> Result<()> {
        let old_v = old.and_then(|r| def.maintained_edge_value(r));
        let new_v = new.and_then(|r| def.maintained_edge_value(r));
        let key = || match new.or(old).map(|r| r.key.clone()) {
            Some(k) if !k.is_empty() => k,
            _ => format!("relationship {}", id.0),
        };
        self.stage_value(def, id.0, key, old_v, new_v)
    }

    /// Stages one change of an indexed value; `who` names the node or
    /// relationship in an error.
    fn stage_value(
        &mut self,
        def: &IndexDef,
        id: u64,
        who: impl FnOnce() -> String,
        old_v: Option<&Value>,
        new_v: Option<&Value>,
    ) -> Result<()> {
        // A stale index is rebuilt whole before it answers again.
        if old_v == new_v || def.stale {
            return Ok(());
        }
        let g = self.g();
        self.fp.touches.insert(Subject::Index(g.0, def.id).hash());
        let state = crate::maintain::state_for(&self.core, def)?;
        let mut entries = crate::maintain::entries_of(&mut self.core, def.id);
        let staged = state
            .stage(&mut entries, id, old_v, new_v)
            .map_err(|cause| StorageError::Maintained {
                index: def.name.clone(),
                node: who(),
                cause,
            })?;
        if let Some(s) = staged {
            self.core.effects.add(g, def.id, &state, s);
        }
        Ok(())
    }

    fn label_member(&mut self, id: NodeId, l: u32, delta: i64) {
        let g = self.g();
        self.fp.touches.insert(Subject::Label(g.0, l).hash());
        let k = token_member_key(g, l, id.0);
        if delta > 0 {
            self.ov().put(LABELS, k, vec![]);
        } else {
            self.ov().delete(LABELS, k);
        }
        self.ov()
            .add(STATS, stat_key(g, STAT_LABEL, &l.to_be_bytes()), delta);
    }

    fn maintain_index(
        &mut self,
        i: usize,
        id: NodeId,
        old: Option<&NodeRecord>,
        new: Option<&NodeRecord>,
    ) -> Result<()> {
        let def = self.core.schema.indexes[i].clone();
        let old_e = match old {
            Some(r) => def.entries(r).unwrap_or_default(),
            None => vec![],
        };
        // Type errors are checked even when maintenance is deferred, so a
        // later rebuild cannot fail.
        let new_e = match new {
            Some(r) => def.entries(r)?,
            None => vec![],
        };
        if !self.index_changes(i, &old_e, &new_e) {
            return Ok(());
        }
        if def.unique {
            self.check_unique(&def, id, new, new_e.iter().filter(|v| !old_e.contains(v)))?;
        }
        self.write_entries(def.id, id.0, &old_e, &new_e);
        Ok(())
    }

    /// Fails when another node holds one of `added` in unique index `def`.
    fn check_unique<'v>(
        &mut self,
        def: &IndexDef,
        id: NodeId,
        new: Option<&NodeRecord>,
        added: impl Iterator<Item = &'v Vec<u8>>,
    ) -> Result<()> {
        let g = self.g();
        for vk in added {
            self.fp
                .writes
                .insert(Subject::UniqueValue(g.0, def.id, vk).hash());
            if let Some(other) = self.index_holder(def, vk, id)? {
                let existing = node_record(&self.core, other)?
                    .map(|r| r.key)
                    .unwrap_or_default();
                let value = new
                    .and_then(|r| crate::record::prop(&r.props, def.key))
                    .cloned()
                    .unwrap_or(Value::Null);
                return Err(StorageError::UniqueViolation {
                    index: def.name.clone(),
                    value: value.to_string(),
                    existing,
                });
            }
        }
        Ok(())
    }

    /// Replaces `old_e` by `new_e` among the entries index `index` holds for
    /// the node or relationship `id`, touching only those that differ.
    fn write_entries(&mut self, index: u32, id: u64, old_e: &[Vec<u8>], new_e: &[Vec<u8>]) {
        let g = self.g();
        for vk in old_e.iter().filter(|v| !new_e.contains(v)) {
            self.ov()
                .delete(PROP_INDEX, index_entry_key(g, index, vk, id));
        }
        for vk in new_e.iter().filter(|v| !old_e.contains(v)) {
            self.ov()
                .put(PROP_INDEX, index_entry_key(g, index, vk, id), vec![]);
        }
    }

    /// Whether a change of index `i`'s entries from `old_e` to `new_e` is
    /// to be written now: not when nothing changed or the index is stale,
    /// nor when maintenance is deferred (the index is then marked stale).
    fn index_changes(&mut self, i: usize, old_e: &[Vec<u8>], new_e: &[Vec<u8>]) -> bool {
        let def = &self.core.schema.indexes[i];
        if old_e == new_e || def.stale {
            return false;
        }
        let g = self.g();
        if !def.unique && self.mode != IndexMode::Maintain {
            self.schema_mut().indexes[i].stale = true;
            let enc = self.core.schema.indexes[i].encode();
            let id = self.core.schema.indexes[i].id;
            self.ov().put(SCHEMA, schema_key(g, SCHEMA_INDEX, id), enc);
            return false;
        }
        let id = self.core.schema.indexes[i].id;
        self.fp.touches.insert(Subject::Index(g.0, id).hash());
        true
    }

    /// Keeps relationship property index `i` current as a relationship
    /// changes (such indexes are never unique).
    fn maintain_edge_index(
        &mut self,
        i: usize,
        id: EdgeId,
        old: Option<&EdgeRecord>,
        new: Option<&EdgeRecord>,
    ) -> Result<()> {
        let def = &self.core.schema.indexes[i];
        let old_e = match old {
            Some(r) => def.edge_entries(r).unwrap_or_default(),
            None => vec![],
        };
        let new_e = match new {
            Some(r) => def.edge_entries(r)?,
            None => vec![],
        };
        let index = def.id;
        if self.index_changes(i, &old_e, &new_e) {
            self.write_entries(index, id.0, &old_e, &new_e);
        }
        Ok(())
    }

    /// Another node holding this value key in the index, if any.
    fn index_holder(&self, def: &IndexDef, vk: &[u8], not: NodeId) -> Result<Option<NodeId>> {
        let mut prefix = token_prefix(self.g(), def.id);
        prefix.extend_from_slice(vk);
        for pair in self.core.scan(
            PROP_INDEX,
            &KeyRange::prefix(&prefix),
            ScanOptions::default(),
        ) {
            let (k, _) = pair?;
            if k.len() != prefix.len() + 8 {
                continue;
            }
            let n = NodeId(plexus_common::read_u64(&k, k.len() - 8).unwrap_or(0));
            if n != not {
                return Ok(Some(n));
            }
        }
        Ok(None)
    }

    /// The single path by which an edge record changes.
    fn write_edge(
        &mut self,
        id: EdgeId,
        old: Option<&EdgeRecord>,
        new: Option<&EdgeRecord>,
    ) -> Result<()> {
        if let Some(r) = new {
            storable(&r.props)?;
        }
        self.counters.edge(old, new);
        let g = self.g();
        self.fp.writes.insert(Subject::Edge(g.0, id.0).hash());
        if !self.listing {
            self.written.insert(Entity::Edge(id));
        }
        let ek = edge_key(g, id);
        match new {
            Some(r) => self.ov().put(EDGES, ek, r.encode()),
            None => self.ov().delete(EDGES, ek),
        }
        for i in 0..self.core.schema.indexes.len() {
            let kind = self.core.schema.indexes[i].kind;
            if !kind.on_relationships() {
                continue;
            }
            if kind.is_maintained() {
                let def = self.core.schema.indexes[i].clone();
                self.stage_edge(&def, id, old, new)?;
            } else {
                self.maintain_edge_index(i, id, old, new)?;
            }
        }
        let (r, delta) = match (old, new) {
            (None, Some(r)) => (r, 1),
            (Some(r), None) => (r, -1),
            _ => return Ok(()),
        };
        let fp = &mut self.fp;
        if !r.key.is_empty() {
            fp.writes.insert(Subject::EdgeKey(g.0, &r.key).hash());
        }
        fp.shares.insert(Subject::Node(g.0, r.src.0).hash());
        fp.shares.insert(Subject::Node(g.0, r.dst.0).hash());
        for s in [
            Subject::Adjacency(g.0, r.src.0),
            Subject::Adjacency(g.0, r.dst.0),
            Subject::Type(g.0, r.rel_type),
            Subject::AllEdges(g.0),
        ] {
            fp.touches.insert(s.hash());
        }
        if !r.key.is_empty() {
            let k = user_id_key(g, &r.key);
            if delta > 0 {
                self.ov().put(EDGE_KEYS, k, id_value(id.0));
            } else {
                self.ov().delete(EDGE_KEYS, k);
            }
        }
        for (node, dir, other) in [(r.src, DIR_OUT, r.dst), (r.dst, DIR_IN, r.src)] {
            let e = adjacency::Entry {
                rel_type: r.rel_type,
                node: other.0,
                edge: id.0,
            };
            if delta > 0 {
                let k = adjacency::delta_key(g, node, dir, e);
                self.ov().put(ADJ, k, adjacency::ADDED.to_vec());
            } else if !self.deleted_node(node) {
                // A node this transaction deleted keeps no adjacency: its
                // reads find none and the commit drops it whole
                // (`adjacency::settle`), so its end is left as it is.
                self.remove_adjacency(adjacency::delta_key(g, node, dir, e))?;
            }
        }
        let counters = [
            stat_key(g, STAT_EDGES, &[]),
            stat_key(g, STAT_TYPE, &r.rel_type.to_be_bytes()),
        ];
        for k in counters {
            self.ov().add(STATS, k, delta);
        }
        Ok(())
    }

    /// Removes an edge from a node's adjacency (`adjacency.rs`): an edge
    /// this transaction added is forgotten; one its snapshot holds as an
    /// added delta has that delta deleted; one in the block is marked
    /// removed. The commit leader settles the last two against what was
    /// committed since.
    fn remove_adjacency(&mut self, k: Vec<u8>) -> Result<()> {
        if self.ov().pending(ADJ, &k) == Some(Some(adjacency::ADDED)) {
            self.ov().forget(ADJ, k);
            return Ok(());
        }
        let committed = self.core.snap.get(ADJ, &k)?;
        if committed.as_deref() == Some(adjacency::ADDED) {
            self.ov().delete(ADJ, k);
        } else {
            self.ov().put(ADJ, k, adjacency::REMOVED.to_vec());
        }
        Ok(())
    }

    fn schema_name_taken(&self, name: &str) -> bool {
        self.core.schema.indexes.iter().any(|d| d.name == name)
            || self.core.schema.not_null.iter().any(|d| d.name == name)
    }

    /// Creates an index and fills it from the nodes already there. Returns its name.
    pub fn create_index(&mut self, spec: IndexSpec) -> Result<String> {
        self.op(|t| {
            t.counters.indexes_added += 1;
            let prefix = match spec.kind {
                IndexKind::ListElement => "list",
                IndexKind::RelationshipListElement => "rel_list",
                IndexKind::Vector | IndexKind::RelationshipVector => "vector",
                IndexKind::Property => "idx",
                IndexKind::RelationshipProperty => "rel_idx",
            };
            let mut def = t.new_index_def(
                spec.name.as_deref(),
                prefix,
                spec.label.as_deref(),
                &spec.key,
                spec.kind,
                spec.value_type,
                false,
            )?;
            if def.kind.is_maintained() {
                let m = t.core.shared.maintained.maintainer(def.kind)?;
                def.options =
                    m.define(&spec.options)
                        .map_err(|cause| StorageError::Maintained {
                            index: def.name.clone(),
                            node: String::new(),
                            cause,
                        })?;
            } else if !spec.options.is_empty() {
                return Err(StorageError::Invalid(format!(
                    "index '{}' takes no options",
                    def.name
                )));
            }
            t.install_index(def)
        })
    }

    /// Creates a constraint after checking that the data already satisfies it.
    pub fn create_constraint(&mut self, spec: ConstraintSpec) -> Result<String> {
        self.op(|t| {
            t.counters.constraints_added += 1;
            t.add_constraint(spec)
        })
    }

    fn add_constraint(&mut self, spec: ConstraintSpec) -> Result<String> {
        let t = self;
        match spec.kind {
            ConstraintKind::Unique => {
                let def = t.new_index_def(
                    spec.name.as_deref(),
                    "unique",
                    Some(&spec.label),
                    &spec.key,
                    IndexKind::Property,
                    None,
                    true,
                )?;
                t.install_index(def)
            }
            ConstraintKind::NotNull => {
                let name = spec
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("notnull_{}_{}", spec.label, spec.key));
                t.check_schema_name(&name)?;
                let cat = &t.core.shared.catalog;
                let def = ConstraintDef {
                    id: t.core.shared.schema_id()?,
                    name: name.clone(),
                    label: cat.intern(Token::Label, &spec.label)?,
                    key: cat.intern(Token::PropKey, &spec.key)?,
                };
                let members: Vec<NodeId> =
                    t.nodes_with_label(&spec.label).collect::<Result<_>>()?;
                for n in members {
                    let r = t.existing_node(n)?;
                    if crate::record::prop(&r.props, def.key).is_none() {
                        return Err(StorageError::NotNullViolation {
                            constraint: name,
                            node: r.key,
                            key: spec.key.clone(),
                        });
                    }
                }
                let g = t.g();
                t.fp.writes.insert(Subject::Schema(g.0).hash());
                t.ov().put(
                    SCHEMA,
                    schema_key(g, SCHEMA_CONSTRAINT, def.id),
                    def.encode(),
                );
                t.schema_mut().not_null.push(def);
                Ok(name)
            }
        }
    }

    fn check_schema_name(&self, name: &str) -> Result<()> {
        if name.is_empty() || name.len() > crate::catalog::MAX_NAME {
            return Err(StorageError::InvalidName {
                what: "index name",
                name: name.chars().take(40).collect(),
                why: "names must be 1 to 255 bytes long",
            });
        }
        if self.schema_name_taken(name) {
            return Err(StorageError::SchemaExists(name.into()));
        }
        Ok(())
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one private constructor for both index paths"
    )]
    fn new_index_def(
        &self,
        name: Option<&str>,
        prefix: &str,
        label: Option<&str>,
        key: &str,
        kind: IndexKind,
        value_type: Option<plexus_common::ValueType>,
        unique: bool,
    ) -> Result<IndexDef> {
        let name = name
            .map(String::from)
            .unwrap_or_else(|| format!("{prefix}_{}_{key}", label.unwrap_or("all")));
        self.check_schema_name(&name)?;
        let cat = &self.core.shared.catalog;
        let token = if kind.on_relationships() {
            Token::Type
        } else {
            Token::Label
        };
        let label = label.map(|l| cat.intern(token, l)).transpose()?;
        let key = cat.intern(Token::PropKey, key)?;
        if let Some(same) = self
            .core
            .schema
            .indexes
            .iter()
            .find(|d| d.label == label && d.key == key && d.kind == kind && d.unique == unique)
        {
            return Err(StorageError::SchemaExists(same.name.clone()));
        }
        Ok(IndexDef {
            id: self.core.shared.schema_id()?,
            name,
            label,
            key,
            kind,
            value_type,
            unique,
            stale: false,
            options: Vec::new(),
        })
    }

    fn install_index(&mut self, def: IndexDef) -> Result<String> {
        let g = self.g();
        self.fp.writes.insert(Subject::Schema(g.0).hash());
        self.fill_index(&def)?;
        self.ov()
            .put(SCHEMA, schema_key(g, SCHEMA_INDEX, def.id), def.encode());
        let name = def.name.clone();
        self.schema_mut().indexes.push(def);
        Ok(name)
    }

    /// Writes every entry of an index from the current nodes, as one sorted
    /// run; for a unique index, fails on the first duplicate value.
    fn fill_index(&mut self, def: &IndexDef) -> Result<()> {
        if def.kind.is_maintained() {
            return self.fill_maintained(def);
        }
        if def.kind.on_relationships() {
            return self.fill_edge_index(def);
        }
        let g = self.g();
        let ids = self.covered_nodes(def)?;
        let mut entries: Vec<(Vec<u8>, NodeId)> = Vec::new();
        for n in ids {
            let r = self.existing_node(n)?;
            entries.extend(def.entries(&r)?.into_iter().map(|vk| (vk, n)));
        }
        entries.sort();
        if def.unique {
            if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
                let a = self.existing_node(w[0].1)?;
                let b = self.existing_node(w[1].1)?;
                let v = crate::record::prop(&b.props, def.key)
                    .cloned()
                    .unwrap_or(Value::Null);
                return Err(StorageError::UniqueViolation {
                    index: def.name.clone(),
                    value: v.to_string(),
                    existing: a.key,
                });
            }
        }
        for (vk, n) in entries {
            self.ov()
                .put(PROP_INDEX, index_entry_key(g, def.id, &vk, n.0), vec![]);
        }
        Ok(())
    }

    /// As [`Self::fill_index`], for a relationship property index.
    fn fill_edge_index(&mut self, def: &IndexDef) -> Result<()> {
        let g = self.g();
        let mut entries: Vec<Vec<u8>> = Vec::new();
        for e in self.covered_edges(def)? {
            let r = edge_record(&self.core, e)?
                .ok_or_else(|| StorageError::Corrupt(format!("edge {} listed, not stored", e.0)))?;
            let vks = def.edge_entries(&r)?;
            entries.extend(vks.iter().map(|vk| index_entry_key(g, def.id, vk, e.0)));
        }
        entries.sort();
        for k in entries {
            self.ov().put(PROP_INDEX, k, vec![]);
        }
        Ok(())
    }

    /// The relationships a relationship index covers: its type's, or all.
    fn covered_edges(&self, def: &IndexDef) -> Result<Vec<EdgeId>> {
        Ok(match def.label {
            Some(t) => {
                let name = self.core.shared.catalog.name(Token::Type, t)?;
                self.edges_with_type(&name).collect::<Result<_>>()?
            }
            None => self.edges().collect::<Result<_>>()?,
        })
    }

    /// The nodes an index covers: its label's, or all.
    fn covered_nodes(&self, def: &IndexDef) -> Result<Vec<NodeId>> {
        Ok(match def.label {
            Some(l) => {
                let name = self.core.shared.catalog.name(Token::Label, l)?;
                self.nodes_with_label(&name).collect::<Result<_>>()?
            }
            None => self.nodes().collect::<Result<_>>()?,
        })
    }

    /// A new maintained index: an empty state of its own, installed when
    /// the transaction commits, given every node the index covers.
    fn fill_maintained(&mut self, def: &IndexDef) -> Result<()> {
        let g = self.g();
        let m = self.core.shared.maintained.maintainer(def.kind)?;
        let info = def.info(&self.core.shared.catalog)?;
        let state = m.load(&info, &mut std::iter::empty(), 0)?;
        self.core.effects.install(g, def.id, Some(state));
        if def.kind.on_relationships() {
            for e in self.covered_edges(def)? {
                let r = edge_record(&self.core, e)?.ok_or_else(|| {
                    StorageError::Corrupt(format!("edge {} listed, not stored", e.0))
                })?;
                self.stage_edge(def, e, None, Some(&r))?;
            }
            return Ok(());
        }
        for n in self.covered_nodes(def)? {
            let r = self.existing_node(n)?;
            self.stage(def, n, None, Some(&r))?;
        }
        Ok(())
    }

    fn clear_index(&mut self, def: &IndexDef) -> Result<()> {
        let prefix = token_prefix(self.g(), def.id);
        let ks = if def.kind.is_maintained() {
            let g = self.g();
            self.core.effects.install(g, def.id, None);
            INDEX_DATA
        } else {
            PROP_INDEX
        };
        let keys: Vec<Vec<u8>> = self
            .core
            .scan(ks, &KeyRange::prefix(&prefix), ScanOptions::default())
            .map(|p| p.map(|(k, _)| k))
            .collect::<Result<_, _>>()?;
        for k in keys {
            self.ov().delete(ks, k);
        }
        Ok(())
    }

    /// Drops an index (not one that backs a unique constraint).
    pub fn drop_index(&mut self, name: &str) -> Result<()> {
        self.op(|t| {
            t.counters.indexes_removed += 1;
            let i = t
                .core
                .schema
                .indexes
                .iter()
                .position(|d| d.name == name && !d.unique)
                .ok_or_else(|| StorageError::NoIndex(format!("named '{name}'")))?;
            t.remove_index(i)
        })
    }

    fn remove_index(&mut self, i: usize) -> Result<()> {
        let def = self.schema_mut().indexes.remove(i);
        let g = self.g();
        self.fp.writes.insert(Subject::Schema(g.0).hash());
        self.clear_index(&def)?;
        self.ov()
            .delete(SCHEMA, schema_key(g, SCHEMA_INDEX, def.id));
        Ok(())
    }

    /// Drops a unique or not-null constraint.
    pub fn drop_constraint(&mut self, name: &str) -> Result<()> {
        self.op(|t| {
            t.counters.constraints_removed += 1;
            if let Some(i) = t
                .core
                .schema
                .indexes
                .iter()
                .position(|d| d.name == name && d.unique)
            {
                return t.remove_index(i);
            }
            let i = t
                .core
                .schema
                .not_null
                .iter()
                .position(|d| d.name == name)
                .ok_or_else(|| StorageError::NoIndex(format!("or constraint named '{name}'")))?;
            let def = t.schema_mut().not_null.remove(i);
            let g = t.g();
            t.fp.writes.insert(Subject::Schema(g.0).hash());
            t.ov()
                .delete(SCHEMA, schema_key(g, SCHEMA_CONSTRAINT, def.id));
            Ok(())
        })
    }

    /// Rebuilds every stale index with a sorted bulk fill, and returns their names.
    pub fn rebuild_indexes(&mut self) -> Result<Vec<String>> {
        self.rebuild_where(|_| true)
    }

    /// Rebuilds the stale maintained indexes (vector) and relationship
    /// indexes, as a bulk load leaves them, and returns their names.
    pub fn rebuild_maintained_indexes(&mut self) -> Result<Vec<String>> {
        self.rebuild_where(|k| k.is_maintained() || k.on_relationships())
    }

    fn rebuild_where(&mut self, kinds: impl Fn(IndexKind) -> bool) -> Result<Vec<String>> {
        self.op(|t| {
            let g = t.g();
            let mut names = Vec::new();
            for i in 0..t.core.schema.indexes.len() {
                let def = &t.core.schema.indexes[i];
                if !def.stale || !kinds(def.kind) {
                    continue;
                }
                t.fp.writes.insert(Subject::Schema(g.0).hash());
                let mut def = t.core.schema.indexes[i].clone();
                t.clear_index(&def)?;
                def.stale = false;
                t.fill_index(&def)?;
                t.ov()
                    .put(SCHEMA, schema_key(g, SCHEMA_INDEX, def.id), def.encode());
                names.push(def.name.clone());
                t.schema_mut().indexes[i] = def;
            }
            Ok(names)
        })
    }

    /// Makes every change visible atomically, or fails with nothing applied
    /// ([`StorageError::Conflict`] when a concurrent commit won).
    pub fn commit(mut self) -> Result<()> {
        if self.mode == IndexMode::DeferRebuild {
            self.rebuild_indexes()?;
        }
        let mut overlay = self.core.overlay.take().unwrap_or_default();
        if overlay.is_empty() && self.merges.is_empty() {
            return Ok(());
        }
        if overlay.has_writes(NODES) {
            // A new version of the graph's node records: columns built
            // from the old one are no longer used (`columns.rs`).
            overlay.add(STATS, node_version_key(self.g()), 1);
        }
        if let Some(reads) = self.core.reads.take() {
            self.fp.reads = reads.into_inner();
        }
        let effects = std::mem::take(&mut self.core.effects);
        let merges = self.merged();
        // The snapshot must be closed before writing: LMDB can only grow
        // its map while no transaction of this process is open.
        self.core.snap = Box::new(crate::view::Closed);
        let shared = self.core.shared.clone();
        let req = crate::commit::Request {
            start: self.start,
            remote_start: self.core.remote_start,
            index_loaded: None,
            merges,
            fp: std::mem::take(&mut self.fp),
            serializable: self.isolation == Isolation::Serializable,
            batch: overlay.into_batch(),
            effects: effects.clone(),
        };
        let g = self.g();
        shared.committer.commit(&shared, req)?;
        settle(&shared, &effects)?;
        crate::history::after_commit(&shared, g);
        Ok(())
    }

    /// The nodes changed only by list updates, to merge at commit; each
    /// shares its conflict key instead of writing it.
    fn merged(&mut self) -> Vec<crate::merge::Merge> {
        let g = self.g();
        let indexes: Vec<_> = self
            .core
            .schema
            .indexes
            .iter()
            .filter(|d| !d.kind.is_maintained() && !d.stale)
            .cloned()
            .collect();
        let merges = std::mem::take(&mut self.merges);
        let mut out = Vec::new();
        for (target, ops) in merges
            .into_iter()
            .filter(|(e, _)| !self.written.contains(e))
        {
            let (key, edge) = match target {
                Entity::Node(n) => (Subject::Node(g.0, n.0).hash(), false),
                Entity::Edge(e) => (Subject::Edge(g.0, e.0).hash(), true),
            };
            self.fp.writes.remove(&key);
            self.fp.shares.insert(key);
            // Only the indexes of its kind on the updated lists can change.
            let indexes = indexes
                .iter()
                .filter(|d| d.kind.on_relationships() == edge)
                .filter(|d| ops.iter().any(|(k, op)| op.touches(*k, d.key)))
                .cloned()
                .collect();
            out.push(crate::merge::Merge {
                g,
                target,
                ops,
                indexes,
            });
        }
        out
    }

    /// Discards every change (dropping the transaction does the same).
    pub fn rollback(self) {}

    /// Relies on `subject` of the valid-time keyspace without changing it:
    /// a concurrent transaction that writes it conflicts with this one
    /// (whichever commits second is refused), another that shares it does
    /// not (see `occ.rs`).
    pub fn valid_time_share(&mut self, subject: &[u8]) {
        let g = self.g();
        self.fp
            .shares
            .insert(Subject::ValidTime(g.0, subject).hash());
    }

    /// Writes `value` under `key` (after the graph's prefix) in the
    /// graph's valid-time keyspace `part`, or deletes the key (`None`). The
    /// layout is `plexus-temporal`'s; storage keeps it with the
    /// transaction's other writes (the versioned part in the graph's
    /// history too) and decides conflicts by `subject`: a concurrent commit
    /// that wrote the same subject wins.
    pub fn valid_time_write(
        &mut self,
        part: ValidPart,
        subject: &[u8],
        key: &[u8],
        value: Option<Vec<u8>>,
    ) -> Result<()> {
        let w = value.map_or(ValidWrite::Delete, ValidWrite::Put);
        self.valid_time_write_all(&[subject], vec![(part, key.to_vec(), w)])
    }

    /// Writes, when this transaction commits, the commit's system time under
    /// `key` (after the graph's prefix) in the graph's valid-time keyspace:
    /// eight bytes, big-endian, microseconds since 1970, from the clock that
    /// stamps history, so that in a graph keeping history it equals the
    /// stamp of the commit's versions. A version can then tell when it was
    /// recorded without the graph keeping history. Until the commit, the
    /// transaction reads [`PENDING_STAMP`](crate::PENDING_STAMP)
    /// there. Conflicts are decided by `subject`, as for
    /// [`WriteTxn::valid_time_write`].
    pub fn valid_time_stamp(&mut self, part: ValidPart, subject: &[u8], key: &[u8]) -> Result<()> {
        self.valid_time_write_all(&[subject], vec![(part, key.to_vec(), ValidWrite::Stamp)])
    }

    /// Writes many entries of the graph's valid-time keyspace, as
    /// [`WriteTxn::valid_time_write`] and [`WriteTxn::valid_time_stamp`]
    /// write one each, with `subjects` as their conflict subjects: all of
    /// them or (a value that is the pending stamp) none. The entries go to
    /// the transaction's buffer without the undo record of an operation
    /// that may fail midway: many at once in one sorted pass, a few beside
    /// a large buffer one by one (`Overlay::extend`).
    pub fn valid_time_write_all(
        &mut self,
        subjects: &[&[u8]],
        entries: Vec<(ValidPart, Vec<u8>, ValidWrite)>,
    ) -> Result<()> {
        let pending = &crate::history::PENDING_STAMP[..];
        if entries
            .iter()
            .any(|(_, _, w)| matches!(w, ValidWrite::Put(v) if v[..] == *pending))
        {
            return Err(StorageError::Invalid(
                "a valid-time value may not be the pending commit stamp".into(),
            ));
        }
        let g = self.g();
        for s in subjects {
            self.fp.writes.insert(Subject::ValidTime(g.0, s).hash());
        }
        // Sized first: a large batch's vectors would otherwise be copied
        // at each doubling, onto fresh pages the kernel must zero.
        let held = entries
            .iter()
            .filter(|(p, _, _)| *p == ValidPart::Versioned)
            .count();
        let mut versioned = Vec::with_capacity(held);
        let mut unversioned = Vec::with_capacity(entries.len().saturating_sub(held));
        for (part, key, w) in entries {
            let k = graph_first(g, key);
            let v = match w {
                ValidWrite::Put(v) => Some(v),
                ValidWrite::Stamp => Some(pending.to_vec()),
                ValidWrite::Delete => None,
            };
            match part {
                ValidPart::Versioned => versioned.push((k, v)),
                ValidPart::Unversioned => unversioned.push((k, v)),
            }
        }
        let ov = self.ov();
        ov.extend(ValidPart::Versioned.keyspace(), versioned);
        ov.extend(ValidPart::Unversioned.keyspace(), unversioned);
        Ok(())
    }
}

/// `key` with graph `g`'s prefix before it, in `key`'s own buffer: moved
/// there, without a new allocation when the buffer has
/// [`crate::VALID_KEY_ROOM`] bytes to spare.
fn graph_first(g: GraphId, mut key: Vec<u8>) -> Vec<u8> {
    let prefix = graph_prefix_bytes(g);
    key.extend_from_slice(&prefix);
    key.rotate_right(prefix.len());
    key
}

/// After a commit: the slow part of its maintained-index changes, then a
/// checkpoint of each index changed, when one is due. The commit stands
/// whatever happens here; a failed checkpoint is only written later.
fn settle(
    shared: &std::sync::Arc<crate::storage::Shared>,
    effects: &crate::maintain::Effects,
) -> Result<()> {
    for c in &effects.changes {
        c.state.settle(&c.staged);
    }
    let mut seen = BTreeSet::new();
    for c in &effects.changes {
        if seen.insert((c.g.0, c.index)) {
            // Not an error of the commit, which landed: the links are
            // written by a later checkpoint or rebuilt at open.
            let _ = crate::maintain::checkpoint(shared, c.g, &*c.state, c.index, false);
        }
    }
    Ok(())
}

/// The key of an index entry: the index, the value key, then the id of
/// the node (or, in a relationship index, the relationship) holding it.
pub(crate) fn index_entry_key(g: GraphId, index: u32, vk: &[u8], id: u64) -> Vec<u8> {
    let mut k = token_prefix(g, index);
    k.reserve_exact(vk.len() + 8);
    k.extend_from_slice(vk);
    push_u64(&mut k, id);
    k
}

/// Refuses property values that hold graph entities (nodes, relationships,
/// paths): they exist only inside queries.
pub(crate) fn storable(props: &[(u32, Value)]) -> Result<()> {
    match props.iter().find(|(_, v)| !v.is_storable()) {
        Some((_, v)) => Err(StorageError::Invalid(format!(
            "a {} cannot be stored as a property value",
            v.value_type()
        ))),
        None => Ok(()),
    }
}

fn node_missing(id: NodeId) -> StorageError {
    StorageError::NotFound {
        what: "node",
        id: id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key moved behind the graph prefix reads as the prefix made
    /// apart then the key, with room to spare or without.
    #[test]
    fn a_key_gets_its_graph_prefix_in_place() {
        let g = GraphId(0x0102_0304);
        for room in [0, crate::VALID_KEY_ROOM] {
            let mut key = Vec::with_capacity(5 + room);
            key.extend_from_slice(b"Vabcd");
            let want = [graph_prefix(g), key.clone()].concat();
            assert_eq!(graph_first(g, key), want);
        }
        assert_eq!(graph_first(g, Vec::new()), graph_prefix(g));
    }
}
