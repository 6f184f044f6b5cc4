//! What a transaction changed, counted where records change
//! (`WriteTxn::write_node` / `write_edge`) so that every path — Cypher,
//! the Rust API, procedures — is counted the same way. A failed operation
//! is undone together with its counts. These are the counters a Bolt
//! result summary carries (`nodes-created`, …).

use crate::record::{EdgeRecord, NodeRecord};
use plexus_common::Value;

/// Changes made by a transaction (or, as a difference, by one query).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub nodes_created: u64,
    pub nodes_deleted: u64,
    pub relationships_created: u64,
    pub relationships_deleted: u64,
    /// Properties given a new value or removed (a property set to the
    /// value it had is not a change).
    pub properties_set: u64,
    pub labels_added: u64,
    pub labels_removed: u64,
    pub indexes_added: u64,
    pub indexes_removed: u64,
    pub constraints_added: u64,
    pub constraints_removed: u64,
}

/// Properties of `new` that `old` lacks or holds another value of, plus
/// those `old` has and `new` lacks. Both lists are sorted by key.
fn props_changed(old: &[(u32, Value)], new: &[(u32, Value)]) -> u64 {
    let changed_or_added = new
        .iter()
        .filter(|(k, v)| {
            old.iter()
                .find(|(o, _)| o == k)
                .is_none_or(|(_, ov)| ov != v)
        })
        .count();
    let removed = old
        .iter()
        .filter(|(k, _)| !new.iter().any(|(n, _)| n == k))
        .count();
    (changed_or_added + removed) as u64
}

/// Members of `a` not in `b` (sorted label lists).
fn missing(a: &[u32], b: &[u32]) -> u64 {
    a.iter().filter(|l| b.binary_search(l).is_err()).count() as u64
}

impl Counters {
    pub fn contains_updates(&self) -> bool {
        *self != Counters::default()
    }

    /// What was counted after `before` (counters only grow).
    pub fn since(&self, before: &Counters) -> Counters {
        Counters {
            nodes_created: self.nodes_created.saturating_sub(before.nodes_created),
            nodes_deleted: self.nodes_deleted.saturating_sub(before.nodes_deleted),
            relationships_created: self
                .relationships_created
                .saturating_sub(before.relationships_created),
            relationships_deleted: self
                .relationships_deleted
                .saturating_sub(before.relationships_deleted),
            properties_set: self.properties_set.saturating_sub(before.properties_set),
            labels_added: self.labels_added.saturating_sub(before.labels_added),
            labels_removed: self.labels_removed.saturating_sub(before.labels_removed),
            indexes_added: self.indexes_added.saturating_sub(before.indexes_added),
            indexes_removed: self.indexes_removed.saturating_sub(before.indexes_removed),
            constraints_added: self
                .constraints_added
                .saturating_sub(before.constraints_added),
            constraints_removed: self
                .constraints_removed
                .saturating_sub(before.constraints_removed),
        }
    }

    /// The counters by their Bolt names, nonzero ones only.
    pub fn named(&self) -> Vec<(&'static str, u64)> {
        [
            ("nodes-created", self.nodes_created),
            ("nodes-deleted", self.nodes_deleted),
            ("relationships-created", self.relationships_created),
            ("relationships-deleted", self.relationships_deleted),
            ("properties-set", self.properties_set),
            ("labels-added", self.labels_added),
            ("labels-removed", self.labels_removed),
            ("indexes-added", self.indexes_added),
            ("indexes-removed", self.indexes_removed),
            ("constraints-added", self.constraints_added),
            ("constraints-removed", self.constraints_removed),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect()
    }

    pub(crate) fn node(&mut self, old: Option<&NodeRecord>, new: Option<&NodeRecord>) {
        match (old, new) {
            (None, Some(n)) => {
                self.nodes_created += 1;
                self.labels_added += n.labels.len() as u64;
                self.properties_set += n.props.len() as u64;
            }
            (Some(_), None) => self.nodes_deleted += 1,
            (Some(o), Some(n)) => {
                self.labels_added += missing(&n.labels, &o.labels);
                self.labels_removed += missing(&o.labels, &n.labels);
                self.properties_set += props_changed(&o.props, &n.props);
            }
            (None, None) => {}
        }
    }

    pub(crate) fn edge(&mut self, old: Option<&EdgeRecord>, new: Option<&EdgeRecord>) {
        match (old, new) {
            (None, Some(n)) => {
                self.relationships_created += 1;
                self.properties_set += n.props.len() as u64;
            }
            (Some(_), None) => self.relationships_deleted += 1,
            (Some(o), Some(n)) => self.properties_set += props_changed(&o.props, &n.props),
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_changes_count_new_changed_and_removed_values() {
        let old = vec![(1, Value::Int(1)), (2, Value::Int(2)), (3, Value::Int(3))];
        let new = vec![(1, Value::Int(1)), (2, Value::Int(20)), (4, Value::Null)];
        assert_eq!(
            props_changed(&old, &new),
            3,
            "2 changed, 4 added, 3 removed"
        );
        assert_eq!(props_changed(&old, &old), 0);
    }

    #[test]
    fn differences_and_names() {
        let mut c = Counters::default();
        assert!(!c.contains_updates());
        let before = c;
        c.nodes_created = 2;
        c.labels_added = 1;
        let d = c.since(&before);
        assert!(d.contains_updates());
        assert_eq!(d.named(), vec![("nodes-created", 2), ("labels-added", 1)]);
    }
}
