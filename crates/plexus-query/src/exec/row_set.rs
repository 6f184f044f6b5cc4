//! Rows (or grouping keys) seen so far, for DISTINCT, UNION, grouping and
//! `count(DISTINCT …)`: hashed on their order-preserving key encoding, then
//! confirmed with [`same_row`] inside a bucket, so the semantics are
//! exactly `same_row`'s (the encoding only narrows the candidates) at
//! linear cost.
//!
//! Every grouped or distinct row passes through here, so a lookup builds
//! one key and copies nothing: values with no integer inside are encoded
//! as they are (only integers need folding into floats), a row already
//! seen is compared where its owner keeps it, and the hash is Fx (the key
//! is a short byte string; SipHash was a tenth of a `count(DISTINCT n)`).

use crate::eval::equals;
use plexus_common::Value;
use rustc_hash::FxHashMap;

/// Whether two rows are the same row for DISTINCT and grouping: equal
/// values, nulls equal to each other, numbers equal across types only
/// inside lists and maps (`1` and `1.0` are two rows, `[1]` and `[1.0]` one).
pub(super) fn same_row(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x == y
                || (x.is_null() && y.is_null())
                || equals(x, y) == Some(true) && x.value_type() == y.value_type()
        })
}

/// The rows of one bucket: nearly always one (two rows share a key
/// encoding only when they are equal but for number types, or are
/// integers past 2^53 that fold into one float).
enum Bucket {
    One(usize),
    Many(Vec<usize>),
}

impl Bucket {
    fn indexes(&self) -> &[usize] {
        match self {
            Bucket::One(i) => std::slice::from_ref(i),
            Bucket::Many(v) => v,
        }
    }

    fn push(&mut self, index: usize) {
        match self {
            Bucket::One(i) => *self = Bucket::Many(vec![*i, index]),
            Bucket::Many(v) => v.push(index),
        }
    }
}

#[derive(Default)]
pub(crate) struct RowSet {
    buckets: FxHashMap<Vec<u8>, Bucket>,
    /// Rows of one or two nodes or relationships, by identity: the rows
    /// most DISTINCTs and groupings see (`count(DISTINCT b)`, IC4's
    /// `DISTINCT tag, post`, grouping by a node), found without building a
    /// key. Such a row equals no row of other values, so the two maps never
    /// hold one row between them.
    entities: FxHashMap<[u128; 2], usize>,
}

/// The identity of a node or relationship as an entity key: its kind above
/// its id, so a node and a relationship of one id differ.
fn entity(v: &Value) -> Option<u128> {
    match v {
        Value::Node(n) => Some(u128::from(n.id)),
        Value::Relationship(r) => Some(1 << 64 | u128::from(r.id)),
        _ => None,
    }
}

/// The entity key of a row of one or two entities; the second half of a
/// row of one is a value no entity has.
fn entity_key(vals: &[Value]) -> Option<[u128; 2]> {
    match vals {
        [a] => Some([entity(a)?, u128::MAX]),
        [a, b] => Some([entity(a)?, entity(b)?]),
        _ => None,
    }
}

/// Whether a value holds an integer, which the bucket key folds into a float.
fn has_int(v: &Value) -> bool {
    match v {
        Value::Int(_) => true,
        Value::List(items) => items.iter().any(has_int),
        Value::Map(m) => m.values().any(has_int),
        _ => false,
    }
}

/// `v` with every integer a float.
fn fold(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Float(*i as f64),
        Value::List(items) => Value::List(items.iter().map(fold).collect()),
        Value::Map(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), fold(v))).collect()),
        other => other.clone(),
    }
}

impl RowSet {
    /// The bucket of a row: its key encoding with every number as a float,
    /// so that values `same_row` calls equal (1 and 1.0 inside lists)
    /// always share a bucket.
    fn bucket(vals: &[Value]) -> Vec<u8> {
        let mut k = Vec::new();
        for v in vals {
            if has_int(v) {
                plexus_common::encode_key_value(&fold(v), &mut k);
            } else {
                plexus_common::encode_key_value(v, &mut k);
            }
        }
        k
    }

    /// The index of a row equal to `vals` among those added, where `seen`
    /// finds an added row by its index; when none is, `vals` is added as
    /// row `index` (one key built for both).
    pub(crate) fn find_or_add<'s>(
        &mut self,
        vals: &[Value],
        index: usize,
        seen: impl Fn(usize) -> &'s [Value],
    ) -> Option<usize> {
        use std::collections::hash_map::Entry;
        if let Some(key) = entity_key(vals) {
            return match self.entities.entry(key) {
                Entry::Occupied(e) => Some(*e.get()),
                Entry::Vacant(e) => {
                    e.insert(index);
                    None
                }
            };
        }
        match self.buckets.entry(Self::bucket(vals)) {
            Entry::Vacant(e) => {
                e.insert(Bucket::One(index));
                None
            }
            Entry::Occupied(mut e) => {
                let found = e
                    .get()
                    .indexes()
                    .iter()
                    .copied()
                    .find(|i| same_row(seen(*i), vals));
                if found.is_none() {
                    e.get_mut().push(index);
                }
                found
            }
        }
    }
}

/// The rows without repeats, each first one kept in its place.
pub(super) fn dedupe(rows: &mut Vec<Vec<Value>>) {
    let mut out: Vec<Vec<Value>> = Vec::with_capacity(rows.len());
    let mut set = RowSet::default();
    for r in rows.drain(..) {
        if set.find_or_add(&r, out.len(), |i| &out[i]).is_none() {
            out.push(r);
        }
    }
    *rows = out;
}

/// A node value of id `id` alone, for tests of distinct rows.
#[cfg(test)]
pub(super) fn test_node(id: u64) -> Value {
    Value::Node(std::sync::Arc::new(plexus_common::NodeValue {
        id,
        ..Default::default()
    }))
}

/// A relationship value of id `id` alone, for tests of distinct rows.
#[cfg(test)]
pub(super) fn test_rel(id: u64) -> Value {
    Value::Relationship(std::sync::Arc::new(plexus_common::RelValue {
        id,
        ..Default::default()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deduped(rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
        let mut rows = rows;
        dedupe(&mut rows);
        rows
    }

    #[test]
    fn rows_equal_as_distinct_sees_them_are_one() {
        let int = Value::Int;
        let list = Value::List;
        let big = 9_007_199_254_740_993; // 2^53 + 1: the same float as 2^53
        let rows = vec![
            vec![int(1)],
            vec![Value::Float(1.0)],
            vec![int(1)],
            vec![list(vec![int(1)])],
            vec![list(vec![Value::Float(1.0)])],
            vec![Value::Null],
            vec![Value::Null],
            vec![int(big)],
            vec![int(big - 1)],
            vec![int(big)],
            vec![Value::String("a".into()), int(2)],
            vec![Value::String("a".into()), int(2)],
            vec![Value::String("a".into()), int(3)],
        ];
        let got = deduped(rows);
        let want = vec![
            vec![int(1)],
            vec![Value::Float(1.0)],
            vec![list(vec![int(1)])],
            vec![Value::Null],
            vec![int(big)],
            vec![int(big - 1)],
            vec![Value::String("a".into()), int(2)],
            vec![Value::String("a".into()), int(3)],
        ];
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }

    /// Rows of nodes and relationships are found by identity, apart from
    /// every other row, as `same_row` sees them: against a pairwise check.
    #[test]
    fn rows_of_entities_are_one_by_identity() {
        let (node, rel) = (test_node, test_rel);
        let rows = vec![
            vec![node(1)],
            vec![rel(1)],
            vec![node(1)],
            vec![node(1), node(2)],
            vec![node(2), node(1)],
            vec![node(1), node(2)],
            vec![node(1), rel(2)],
            vec![node(1), Value::Null],
            vec![node(1), Value::Null],
            vec![node(u64::MAX)],
            vec![rel(u64::MAX)],
            vec![node(1), node(2), node(3)],
            vec![node(1), node(2), node(3)],
            vec![Value::Int(1)],
        ];
        let got = deduped(rows.clone());
        let mut want: Vec<Vec<Value>> = Vec::new();
        for r in rows {
            if !want.iter().any(|w| same_row(w, &r)) {
                want.push(r);
            }
        }
        assert_eq!(got.len(), 10);
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }

    #[test]
    fn find_or_add_adds_only_what_it_did_not_find() {
        let mut set = RowSet::default();
        let mut kept: Vec<Vec<Value>> = Vec::new();
        for (v, was) in [(1, None), (2, None), (1, Some(0)), (2, Some(1)), (3, None)] {
            let row = vec![Value::Int(v)];
            assert_eq!(set.find_or_add(&row, kept.len(), |i| &kept[i]), was, "{v}");
            if was.is_none() {
                kept.push(row);
            }
        }
        assert_eq!(kept.len(), 3);
    }
}
