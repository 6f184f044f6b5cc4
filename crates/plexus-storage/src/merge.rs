//! List updates that commute: adding an element to a node's or a
//! relationship's list property if it is absent, or removing one
//! (`WriteTxn::list_add`, `list_remove`, `list_union`).
//!
//! AI-memory tools attach provenance (source keys) to shared nodes and
//! relationships from many writers at once. As ordinary writes, two
//! transactions adding different keys to one node conflict (first
//! committer wins) and one must retry. As list updates they commute: an
//! entity that a transaction changed only through them *shares* its
//! conflict key instead of writing it (conflicting with a concurrent write
//! or delete of it, not with another list update), and at commit, with the
//! store as it is under the commit lock, its record is rebuilt from the
//! latest stored one with the updates applied in order, its property-index
//! entries recomputed against that record ([`merge`], like adjacency's
//! settling).
//!
//! Not merged (written as ordinary writes, so conflicting as before): an
//! entity the transaction also changed otherwise, one under a unique or
//! maintained (vector) index on the list's key, and any write while index
//! maintenance is deferred.

use crate::error::{Result, StorageError};
use crate::ids::{EdgeId, GraphId, NodeId};
use crate::keys::{
    edge_key, node_key, node_version_key, record_key, EDGES, NODES, PROP_INDEX, STATS,
};
use crate::read::Entity;
use crate::record::{EdgeRecord, NodeRecord};
use crate::schema::IndexDef;
use crate::write::index_entry_key;
use plexus_common::{read_u32, read_u64, Value};
use plexus_kv::{Op, Snapshot, WriteBatch};
use std::collections::{HashMap, HashSet};

/// One list update.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ListOp {
    /// Append the element unless the list holds it.
    Add(Value),
    /// Remove every occurrence of the element.
    Remove(Value),
    /// Insert the element unless the list holds it, before the first
    /// element that sorts after it (`plexus_common::encode_key_value`
    /// order): a list only ever changed so stays sorted, in whatever order
    /// the inserts come, as a set kept in order.
    Insert(Value),
    /// The first update (an add or an insert), and only when it changed
    /// the list, each (list, update) of the rest: decided at commit against
    /// the entity as it is then, so of two writers attaching one element,
    /// only the first to commit makes the rest (cognee records which
    /// pipeline run first attached a source this way).
    AddThen(Box<ListOp>, Vec<(u32, ListOp)>),
}

impl ListOp {
    /// The elements the update writes.
    pub(crate) fn values(&self) -> Vec<&Value> {
        match self {
            ListOp::Add(v) | ListOp::Insert(v) | ListOp::Remove(v) => vec![v],
            ListOp::AddThen(first, then) => first
                .values()
                .into_iter()
                .chain(then.iter().flat_map(|(_, op)| op.values()))
                .collect(),
        }
    }

    /// Whether the update, applied to the list `own`, may change the list
    /// `key`.
    pub(crate) fn touches(&self, own: u32, key: u32) -> bool {
        own == key
            || matches!(self, ListOp::AddThen(_, then) if then.iter().any(|(k, _)| *k == key))
    }
}

/// A record whose list properties merges update: a node's or a
/// relationship's.
pub(crate) trait Listed: Clone {
    /// "node" or "relationship", for errors.
    const WHAT: &'static str;
    fn user_key(&self) -> &str;
    fn props(&self) -> &[(u32, Value)];
    fn props_mut(&mut self) -> &mut Vec<(u32, Value)>;
    fn encode(&self) -> Vec<u8>;
    /// The entries of a property index this record holds.
    fn entries(&self, def: &IndexDef) -> Result<Vec<Vec<u8>>>;
    /// The committed record of entity `id` of graph `g`.
    fn stored(snap: &dyn Snapshot, g: GraphId, id: u64) -> Result<Option<Self>>;
    /// The record's key as transactions write it.
    fn key(g: GraphId, id: u64) -> Vec<u8>;
}

/// The accessors of [`Listed`] both records have as fields.
macro_rules! record_fields {
    () => {
        fn user_key(&self) -> &str {
            &self.key
        }
        fn props(&self) -> &[(u32, Value)] {
            &self.props
        }
        fn props_mut(&mut self) -> &mut Vec<(u32, Value)> {
            &mut self.props
        }
    };
}

impl Listed for NodeRecord {
    const WHAT: &'static str = "node";
    record_fields!();
    fn encode(&self) -> Vec<u8> {
        NodeRecord::encode(self)
    }
    fn entries(&self, def: &IndexDef) -> Result<Vec<Vec<u8>>> {
        def.entries(self)
    }
    fn stored(snap: &dyn Snapshot, g: GraphId, id: u64) -> Result<Option<Self>> {
        snap.get(NODES, &record_key(g, id))?
            .map(|b| NodeRecord::decode(&b))
            .transpose()
    }
    fn key(g: GraphId, id: u64) -> Vec<u8> {
        node_key(g, NodeId(id))
    }
}

impl Listed for EdgeRecord {
    const WHAT: &'static str = "relationship";
    record_fields!();
    fn encode(&self) -> Vec<u8> {
        EdgeRecord::encode(self)
    }
    fn entries(&self, def: &IndexDef) -> Result<Vec<Vec<u8>>> {
        def.edge_entries(self)
    }
    fn stored(snap: &dyn Snapshot, g: GraphId, id: u64) -> Result<Option<Self>> {
        crate::edge_blocks::record(snap, g, EdgeId(id))?
            .map(|b| EdgeRecord::decode(&b))
            .transpose()
    }
    fn key(g: GraphId, id: u64) -> Vec<u8> {
        edge_key(g, EdgeId(id))
    }
}

/// A list property as the record holds it: absent is empty.
pub(crate) fn list_of<R: Listed>(rec: &R, key: u32) -> Result<Vec<Value>> {
    match crate::record::prop(rec.props(), key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::List(items)) => Ok(items.clone()),
        Some(other) => Err(StorageError::Invalid(format!(
            "{} '{}' holds {} there, not a list",
            R::WHAT,
            rec.user_key(),
            other.value_type().name()
        ))),
    }
}

/// Applies `op` to the list `key` of `rec`; false when nothing changed
/// (an [`ListOp::AddThen`]: when its own element was there).
pub(crate) fn apply(rec: &mut impl Listed, key: u32, op: &ListOp) -> Result<bool> {
    if let ListOp::AddThen(first, then) = op {
        let added = apply(rec, key, first)?;
        if added {
            for (k, op) in then {
                apply(rec, *k, op)?;
            }
        }
        return Ok(added);
    }
    let mut list = list_of(rec, key)?;
    let changed = match op {
        ListOp::Add(v) | ListOp::Insert(v) if list.contains(v) => false,
        ListOp::Add(v) => {
            list.push(v.clone());
            true
        }
        ListOp::Insert(v) => {
            let v_key = sort_key(v);
            let at = list
                .iter()
                .position(|x| sort_key(x) > v_key)
                .unwrap_or(list.len());
            list.insert(at, v.clone());
            true
        }
        ListOp::Remove(v) => {
            let before = list.len();
            list.retain(|x| x != v);
            list.len() != before
        }
        // Handled above.
        ListOp::AddThen(..) => false,
    };
    if changed {
        crate::record::set_prop(rec.props_mut(), key, Value::List(list));
    }
    Ok(changed)
}

/// The key encoding a list kept in order sorts by (the property indexes'
/// order: strings by their bytes, numbers as numbers).
fn sort_key(v: &Value) -> Vec<u8> {
    let mut k = Vec::new();
    plexus_common::encode_key_value(v, &mut k);
    k
}

/// The list updates one transaction made to one entity, to apply again
/// at commit to the entity as it is then.
#[derive(Debug, Clone)]
pub(crate) struct Merge {
    pub g: GraphId,
    pub target: Entity,
    pub ops: Vec<(u32, ListOp)>,
    /// The graph's property indexes of the entity's kind on the updated
    /// keys (the transaction's schema; a schema change conflicts with it).
    pub indexes: Vec<IndexDef>,
}

/// A merged entity: its stored record, the record after every member's
/// updates, and the indexes on the keys those updates touched.
struct Merged<R> {
    stored: R,
    latest: R,
    indexes: Vec<IndexDef>,
}

/// The merged entities of one kind, by graph and id.
struct Rewrites<R>(HashMap<(u32, u64), Merged<R>>);

impl<R: Listed> Rewrites<R> {
    fn new() -> Self {
        Rewrites(HashMap::new())
    }

    /// Applies `m`'s updates to entity `id`, read from `snap` first.
    fn gather(&mut self, snap: &dyn Snapshot, m: &Merge, id: u64) -> Result<()> {
        let merged = match self.0.entry((m.g.0, id)) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                // A delete of the entity conflicts with the update (it
                // shares the entity): reaching here means damaged data.
                let stored = R::stored(snap, m.g, id)?.ok_or_else(|| {
                    StorageError::Corrupt(format!("merged {} {id} is not stored", R::WHAT))
                })?;
                e.insert(Merged {
                    latest: stored.clone(),
                    stored,
                    indexes: Vec::new(),
                })
            }
        };
        for (key, op) in &m.ops {
            apply(&mut merged.latest, *key, op)?;
        }
        for def in &m.indexes {
            if !merged.indexes.iter().any(|d| d.id == def.id) {
                merged.indexes.push(def.clone());
            }
        }
        Ok(())
    }

    /// Whether `key` (12 bytes: graph, id) is a merged entity's record.
    fn holds(&self, key: &[u8]) -> bool {
        key.len() == 12
            && read_u32(key, 0)
                .zip(read_u64(key, 4))
                .is_some_and(|gid| self.0.contains_key(&gid))
    }

    /// (graph, index, id) of every index entry the merges recompute.
    fn entries(&self) -> impl Iterator<Item = (u32, u32, u64)> + '_ {
        self.0
            .iter()
            .flat_map(|((g, id), m)| m.indexes.iter().map(move |d| (*g, d.id, *id)))
    }

    /// Writes each merged record and its index entries' changes.
    fn write(&self, batch: &mut WriteBatch, ks: plexus_kv::Ks) -> Result<()> {
        for ((g, id), m) in &self.0 {
            let g = GraphId(*g);
            batch.put(ks, R::key(g, *id), m.latest.encode());
            for def in &m.indexes {
                let old: HashSet<Vec<u8>> = m
                    .stored
                    .entries(def)
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                let new: HashSet<Vec<u8>> = m.latest.entries(def)?.into_iter().collect();
                for vk in old.difference(&new) {
                    batch.delete(PROP_INDEX, index_entry_key(g, def.id, vk, *id));
                }
                for vk in new.difference(&old) {
                    batch.put(PROP_INDEX, index_entry_key(g, def.id, vk, *id), vec![]);
                }
            }
        }
        Ok(())
    }
}

/// Rewrites the record and index entries of each merged entity in `batch`
/// (the members' merges in commit order) from the record `snap` holds.
pub(crate) fn merge(snap: &dyn Snapshot, batch: &mut WriteBatch, merges: &[&Merge]) -> Result<()> {
    if merges.is_empty() {
        return Ok(());
    }
    let mut nodes = Rewrites::<NodeRecord>::new();
    let mut edges = Rewrites::<EdgeRecord>::new();
    for m in merges {
        match m.target {
            Entity::Node(n) => nodes.gather(snap, m, n.0)?,
            Entity::Edge(e) => edges.gather(snap, m, e.0)?,
        }
    }
    // What the members wrote for these entities was built on older
    // records: the record, and the entries of the indexes on the lists
    // they updated (nothing else of a merged entity changed). Looked up by
    // the ids in each key, since a batch holds every member's writes.
    let entries: HashSet<(u32, u32, u64)> = nodes.entries().chain(edges.entries()).collect();
    batch.ops.retain(|op| match op {
        Op::Put { ks, key, .. } | Op::Delete { ks, key } => match *ks {
            NODES => !nodes.holds(key),
            EDGES => !edges.holds(key),
            PROP_INDEX => !index_entry_of(key).is_some_and(|e| entries.contains(&e)),
            _ => true,
        },
        _ => true,
    });
    let mut graphs: Vec<u32> = nodes.0.keys().map(|(g, _)| *g).collect();
    graphs.sort();
    graphs.dedup();
    for g in graphs {
        // A new version of the graph's node records (`columns.rs`).
        batch.add(STATS, node_version_key(GraphId(g)), 1);
    }
    nodes.write(batch, NODES)?;
    edges.write(batch, EDGES)
}

/// The graph, index and entity of a property-index entry's key (graph,
/// index, the value's part, the entity's id).
fn index_entry_of(key: &[u8]) -> Option<(u32, u32, u64)> {
    let id = read_u64(key, key.len().checked_sub(8)?)?;
    Some((read_u32(key, 0)?, read_u32(key, 4)?, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(list: Option<Vec<&str>>) -> NodeRecord {
        NodeRecord {
            key: "n".into(),
            labels: vec![],
            props: list
                .map(|l| vec![(3, Value::List(l.into_iter().map(Value::from).collect()))])
                .unwrap_or_default(),
        }
    }

    #[test]
    fn adds_are_idempotent_and_removes_take_every_copy() {
        let mut r = rec(None);
        assert!(apply(&mut r, 3, &ListOp::Add(Value::from("a"))).unwrap_or(false));
        assert!(!apply(&mut r, 3, &ListOp::Add(Value::from("a"))).unwrap_or(true));
        assert_eq!(list_of(&r, 3).unwrap_or_default(), vec![Value::from("a")]);
        let mut r = rec(Some(vec!["a", "b", "a"]));
        assert!(apply(&mut r, 3, &ListOp::Remove(Value::from("a"))).unwrap_or(false));
        assert_eq!(list_of(&r, 3).unwrap_or_default(), vec![Value::from("b")]);
        assert!(!apply(&mut r, 3, &ListOp::Remove(Value::from("z"))).unwrap_or(true));
        let mut r = NodeRecord {
            props: vec![(3, Value::Int(1))],
            ..rec(None)
        };
        assert!(
            apply(&mut r, 3, &ListOp::Add(Value::Int(2))).is_err(),
            "not a list"
        );
    }

    #[test]
    fn inserts_keep_a_list_sorted_whatever_their_order() {
        let mut a = rec(None);
        let mut b = rec(None);
        for x in ["m", "c", "x", "c", "a"] {
            apply(&mut a, 3, &ListOp::Insert(Value::from(x))).unwrap_or(false);
        }
        for x in ["a", "x", "m", "c"] {
            apply(&mut b, 3, &ListOp::Insert(Value::from(x))).unwrap_or(false);
        }
        let sorted: Vec<Value> = ["a", "c", "m", "x"].map(Value::from).to_vec();
        assert_eq!(list_of(&a, 3).unwrap_or_default(), sorted);
        assert_eq!(list_of(&b, 3).unwrap_or_default(), sorted);
        assert!(!apply(&mut a, 3, &ListOp::Insert(Value::from("m"))).unwrap_or(true));
    }

    #[test]
    fn an_add_then_adds_the_rest_only_when_its_own_element_was_new() {
        let attach = |run: &str| {
            ListOp::AddThen(
                Box::new(ListOp::Add(Value::from("k"))),
                vec![
                    (4, ListOp::Add(Value::from(run))),
                    (5, ListOp::Insert(Value::from("d"))),
                ],
            )
        };
        let mut r = rec(None);
        assert!(apply(&mut r, 3, &attach("r1")).unwrap_or(false));
        assert!(!apply(&mut r, 3, &attach("r2")).unwrap_or(true));
        assert_eq!(list_of(&r, 3).unwrap_or_default(), vec![Value::from("k")]);
        assert_eq!(list_of(&r, 4).unwrap_or_default(), vec![Value::from("r1")]);
        assert_eq!(list_of(&r, 5).unwrap_or_default(), vec![Value::from("d")]);
        let op = attach("r1");
        assert!(op.touches(3, 4) && op.touches(3, 3) && !op.touches(3, 6));
        assert!(!ListOp::Add(Value::Null).touches(3, 4));
        assert_eq!(op.values().len(), 3);
    }
}
