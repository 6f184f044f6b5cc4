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
use plexus_common::Value;
use plexus_kv::{Op, Snapshot, WriteBatch};
use std::collections::HashMap;

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
    /// The graph's property indexes (the transaction's schema; a schema
    /// change conflicts with it).
    pub indexes: Vec<IndexDef>,
}

/// Rewrites the record and index entries of each merged node in `batch`
/// (the members' merges in commit order) from the record `snap` holds.
pub(crate) fn merge(snap: &dyn Snapshot, batch: &mut WriteBatch, merges: &[&Merge]) -> Result<()> {
    if merges.is_empty() {
        return Ok(());
    }
    // node → (the stored record, the record after every member's updates).
    let mut nodes: HashMap<(GraphId, NodeId), (NodeRecord, NodeRecord, Vec<IndexDef>)> =
        HashMap::new();
    for m in merges {
        let (_, latest, _) = match nodes.entry((m.g, m.node)) {
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
                e.insert((stored.clone(), stored, m.indexes.clone()))
            }
        };
        for (key, op) in &m.ops {
            apply(latest, *key, op)?;
        }
    }
    // What the members wrote for these nodes was built on older records.
    batch.ops.retain(|op| match op {
        Op::Put { ks, key, .. } | Op::Delete { ks, key } if *ks == NODES || *ks == PROP_INDEX => {
            !nodes.keys().any(|(g, n)| owns(*ks, key, *g, *n))
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
    for ((g, n), (stored, latest, indexes)) in &nodes {
        batch.put(NODES, node_key(*g, *n), latest.encode());
        for def in indexes {
            let old = def.entries(stored).unwrap_or_default();
            let new = def.entries(latest)?;
            for vk in old.iter().filter(|v| !new.contains(v)) {
                batch.delete(PROP_INDEX, index_entry_key(*g, def.id, vk, n.0));
            }
            for vk in new.iter().filter(|v| !old.contains(v)) {
                batch.put(PROP_INDEX, index_entry_key(*g, def.id, vk, n.0), vec![]);
            }
        }
    }
    Ok(())
}

/// Whether `key` of `ks` is node `n`'s record or one of its index entries
/// (which end in the node's id).
fn owns(ks: plexus_kv::Ks, key: &[u8], g: GraphId, n: NodeId) -> bool {
    if ks == NODES {
        return key == node_key(g, n).as_slice();
    }
    key.starts_with(&g.0.to_be_bytes()) && key.ends_with(&n.0.to_be_bytes())
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
