//! List updates that commute: adding an element to a node's list property
//! if it is absent, or removing one (`WriteTxn::list_add`, `list_remove`).
//!
//! AI-memory tools attach provenance (source keys) to shared nodes from
//! many writers at once. As ordinary writes, two transactions adding
//! different keys to one node conflict (first committer wins) and one must
//! retry. As list updates they commute: a node that a transaction changed
//! only through them *shares* the node's conflict key instead of writing
//! it (conflicting with a concurrent write or delete of the node, not with
//! another list update), and at commit, with the store as it is under the
//! commit lock, its record is rebuilt from the latest stored one with the
//! updates applied in order, its property-index entries recomputed against
//! that record ([`merge`], like adjacency's settling).
//!
//! Not merged (written as ordinary writes, so conflicting as before): a
//! node the transaction also changed otherwise, one under a unique or
//! maintained (vector) index on the list's key, and any write while index
//! maintenance is deferred.

use crate::error::{Result, StorageError};
use crate::ids::{GraphId, NodeId};
use crate::keys::{node_key, node_version_key, NODES, PROP_INDEX, STATS};
use crate::record::NodeRecord;
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
}

/// A list property as the node holds it: absent is empty.
pub(crate) fn list_of(rec: &NodeRecord, key: u32) -> Result<Vec<Value>> {
    match crate::record::prop(&rec.props, key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::List(items)) => Ok(items.clone()),
        Some(other) => Err(StorageError::Invalid(format!(
            "node '{}' holds {} there, not a list",
            rec.key,
            other.value_type().name()
        ))),
    }
}

/// Applies `op` to the list `key` of `rec`; false when nothing changed.
pub(crate) fn apply(rec: &mut NodeRecord, key: u32, op: &ListOp) -> Result<bool> {
    let mut list = list_of(rec, key)?;
    let changed = match op {
        ListOp::Add(v) if list.contains(v) => false,
        ListOp::Add(v) => {
            list.push(v.clone());
            true
        }
        ListOp::Remove(v) => {
            let before = list.len();
            list.retain(|x| x != v);
            list.len() != before
        }
    };
    if changed {
        crate::record::set_prop(&mut rec.props, key, Value::List(list));
    }
    Ok(changed)
}

/// The list updates one transaction made to one node, to apply again at
/// commit to the node as it is then.
#[derive(Debug, Clone)]
pub(crate) struct Merge {
    pub g: GraphId,
    pub node: NodeId,
    pub ops: Vec<(u32, ListOp)>,
    /// The graph's node property indexes on the updated keys (the
    /// transaction's schema; a schema change conflicts with it).
    pub indexes: Vec<IndexDef>,
}

/// A merged node: its stored record, the record after every member's
/// updates, and the indexes on the keys those updates touched.
struct Merged {
    stored: NodeRecord,
    latest: NodeRecord,
    indexes: Vec<IndexDef>,
}

/// Rewrites the record and index entries of each merged node in `batch`
/// (the members' merges in commit order) from the record `snap` holds.
pub(crate) fn merge(snap: &dyn Snapshot, batch: &mut WriteBatch, merges: &[&Merge]) -> Result<()> {
    if merges.is_empty() {
        return Ok(());
    }
    let mut nodes: HashMap<(GraphId, NodeId), Merged> = HashMap::new();
    for m in merges {
        let merged = match nodes.entry((m.g, m.node)) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let stored = snap
                    .get(NODES, &node_key(m.g, m.node))?
                    .ok_or_else(|| {
                        // A delete of the node conflicts with the update (it
                        // shares the node): reaching here means damaged data.
                        StorageError::Corrupt(format!("merged node {} is not stored", m.node))
                    })
                    .and_then(|b| NodeRecord::decode(&b))?;
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
    }
    // What the members wrote for these nodes was built on older records:
    // the record, and the entries of the indexes on the lists they
    // updated (nothing else of a merged node changed). Looked up by the
    // ids in each key, since a batch holds every member's writes.
    let entries: HashSet<(u32, u32, u64)> = nodes
        .iter()
        .flat_map(|((g, n), m)| m.indexes.iter().map(move |d| (g.0, d.id, n.0)))
        .collect();
    batch.ops.retain(|op| match op {
        Op::Put { ks, key, .. } | Op::Delete { ks, key } if *ks == NODES => {
            !node_of(key).is_some_and(|gn| nodes.contains_key(&gn))
        }
        Op::Put { ks, key, .. } | Op::Delete { ks, key } if *ks == PROP_INDEX => {
            !index_entry_of(key).is_some_and(|e| entries.contains(&e))
        }
        _ => true,
    });
    let mut graphs: Vec<GraphId> = nodes.keys().map(|(g, _)| *g).collect();
    graphs.sort();
    graphs.dedup();
    for g in graphs {
        // A new version of the graph's node records (`columns.rs`).
        batch.add(STATS, node_version_key(g), 1);
    }
    for ((g, n), m) in &nodes {
        batch.put(NODES, node_key(*g, *n), m.latest.encode());
        for def in &m.indexes {
            let old: HashSet<Vec<u8>> = def
                .entries(&m.stored)
                .unwrap_or_default()
                .into_iter()
                .collect();
            let new: HashSet<Vec<u8>> = def.entries(&m.latest)?.into_iter().collect();
            for vk in old.difference(&new) {
                batch.delete(PROP_INDEX, index_entry_key(*g, def.id, vk, n.0));
            }
            for vk in new.difference(&old) {
                batch.put(PROP_INDEX, index_entry_key(*g, def.id, vk, n.0), vec![]);
            }
        }
    }
    Ok(())
}

/// The graph and node of a node record's key.
fn node_of(key: &[u8]) -> Option<(GraphId, NodeId)> {
    match key.len() {
        12 => Some((GraphId(read_u32(key, 0)?), NodeId(read_u64(key, 4)?))),
        _ => None,
    }
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
}
