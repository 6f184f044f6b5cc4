//! The valid-time graph as of an instant: the nodes with a label, a
//! node's relationships and neighbours, and shortest paths over them.
//!
//! Index entries (valid-time keyspace, after the graph's prefix), written
//! by the first version that gives an entity the label or the endpoint:
//! `L | label | node id` → node id, `O | source | type | edge id` → edge
//! id, `I | target | type | edge id` → edge id (each part escaped). They
//! list every entity that ever had the label or the endpoint; a read seeks
//! each one's timeline at the instant (one seek, `timeline::covering`) and
//! keeps those whose version holding then still has it. So a label scan
//! or a neighbourhood as of an instant costs a prefix scan and a seek per
//! candidate, whatever the history's length.
//!
//! Property values get the same treatment: `P | key | value | node id` →
//! node id for every scalar value (integer, float, string, boolean) a
//! version ever gave a node's property, the value in a canonical form
//! where equal numbers meet (`1` and `1.0`), long ones cut and completed
//! by a hash. An equality lookup as of an instant scans one value's
//! prefix and seeks each candidate's timeline. The marker `M props` says
//! every node version of the graph has its entries (it is written with
//! the graph's first node version, or by [`rebuild_indexes`] for a store
//! written before this index existed); without it lookups scan.
//!
//! [`rebuild_indexes`]: crate::rebuild_indexes

use crate::error::Result;
use crate::read::as_of;
use crate::timeline::any_entity;
use crate::timeline::subject;
use crate::version::{Kind, State, Version};
use plexus_common::{push_escaped, push_i64, Value};
use plexus_storage::{GraphRead, WriteTxn};
use std::collections::{HashMap, HashSet, VecDeque};

const LABELS: u8 = b'L';
const OUT: u8 = b'O';
const IN: u8 = b'I';
const PROPS: u8 = b'P';
/// Present when every node version has its property entries.
const PROPS_COMPLETE: &[u8] = b"Mprops";
/// Canonical values longer than this are cut and completed by a hash
/// (LMDB keys are short; candidates are checked against their version).
const MAX_VALUE_PART: usize = 64;

fn key(tag: u8, parts: &[&str]) -> Vec<u8> {
    let mut k = vec![tag];
    for p in parts {
        push_escaped(&mut k, p.as_bytes());
    }
    k
}

/// Writes index entry `key` → `id` unless it is there, with the entity as
/// its conflict subject.
pub(crate) fn put_once(txn: &mut WriteTxn, kind: Kind, id: &str, key: Vec<u8>) -> Result<()> {
    if txn.valid_time_get(&key)?.is_none() {
        txn.valid_time_write(&subject(kind, id), &key, Some(id.as_bytes().to_vec()))?;
    }
    Ok(())
}

/// A scalar value in the form equal values share (`stored_equal`'s
/// equality: an integral float is the integer it equals), cut to
/// [`MAX_VALUE_PART`] bytes with a hash of the rest. `None`: not indexed
/// (lists, maps, temporal values, NaN — lookups of those scan).
fn value_part(v: &Value) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match v {
        Value::Int(i) => {
            out.push(b'i');
            push_i64(&mut out, *i);
        }
        Value::Float(f) if f.is_nan() => return None,
        // Exactly when `numbers_equal` finds an integer equal to it.
        Value::Float(f) if f.fract() == 0.0 && (*f as i64) as f64 == *f => {
            out.push(b'i');
            push_i64(&mut out, *f as i64);
        }
        Value::Float(f) => {
            out.push(b'f');
            out.extend_from_slice(&f.to_bits().to_be_bytes());
        }
        Value::String(s) => {
            out.push(b's');
            out.extend_from_slice(s.as_bytes());
        }
        Value::Bool(b) => out.extend_from_slice(if *b { b"b1" } else { b"b0" }),
        _ => return None,
    }
    if out.len() > MAX_VALUE_PART {
        let hash = out[MAX_VALUE_PART..]
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
            });
        out.truncate(MAX_VALUE_PART);
        out.extend_from_slice(&hash.to_be_bytes());
    }
    Some(out)
}

/// `P | key | value` (each part escaped), with the node id after it in an
/// entry.
fn prop_prefix(key: &str, value: &[u8]) -> Vec<u8> {
    let mut k = vec![PROPS];
    push_escaped(&mut k, key.as_bytes());
    push_escaped(&mut k, value);
    k
}

/// Writes the marker that every node version has its property entries,
/// when this is the graph's first node version.
fn mark_props_complete(txn: &mut WriteTxn, id: &str) -> Result<()> {
    if txn.valid_time_get(PROPS_COMPLETE)?.is_none() && !any_entity(txn, Kind::Node)? {
        // The entity as the subject: two first writes of different nodes
        // both write the same marker and need not conflict.
        txn.valid_time_write(&subject(Kind::Node, id), PROPS_COMPLETE, Some(vec![1]))?;
    }
    Ok(())
}

/// After a rebuild: every node version has its property entries.
pub(crate) fn props_rebuilt(txn: &mut WriteTxn) -> Result<()> {
    if txn.valid_time_get(PROPS_COMPLETE)?.is_none() {
        txn.valid_time_write(PROPS_COMPLETE, PROPS_COMPLETE, Some(vec![1]))?;
    }
    Ok(())
}

/// The ids of every node that ever had `value` (a scalar) as its property
/// `key`, in id order; `None` when the index cannot answer (the value is
/// not a scalar, or the graph holds node versions written before the
/// index existed).
pub(crate) fn ever_valued(
    r: &(impl GraphRead + ?Sized),
    key: &str,
    value: &Value,
) -> Result<Option<Vec<String>>> {
    let Some(part) = value_part(value) else {
        return Ok(None);
    };
    if r.valid_time_get(PROPS_COMPLETE)?.is_none() && any_entity(r, Kind::Node)? {
        return Ok(None);
    }
    ids(r, prop_prefix(key, &part)).map(Some)
}

/// Indexes what a new version of a node or an edge gives its entity.
pub(crate) fn index(txn: &mut WriteTxn, v: &Version) -> Result<()> {
    if v.kind == Kind::Node {
        mark_props_complete(txn, &v.logical_id)?;
    }
    match &v.state {
        State::Node(n) => {
            let id = &v.logical_id;
            for l in &n.labels {
                put_once(txn, Kind::Node, id, key(LABELS, &[l, id]))?;
            }
            for (k, value) in &n.props {
                if let Some(part) = value_part(value) {
                    let mut entry = prop_prefix(k, &part);
                    push_escaped(&mut entry, id.as_bytes());
                    put_once(txn, Kind::Node, id, entry)?;
                }
            }
        }
        State::Edge(e) => {
            let id = &v.logical_id;
            put_once(txn, Kind::Edge, id, key(OUT, &[&e.src, &e.rel_type, id]))?;
            put_once(txn, Kind::Edge, id, key(IN, &[&e.dst, &e.rel_type, id]))?;
        }
        State::Claim(_) | State::None => {}
    }
    Ok(())
}

/// The ids under an index prefix (every prefix ends a part: `00 01`, and
/// no key holds `00 02`).
pub(crate) fn ids(r: &(impl GraphRead + ?Sized), prefix: Vec<u8>) -> Result<Vec<String>> {
    let mut hi = prefix.clone();
    if let Some(last) = hi.last_mut() {
        *last += 1;
    }
    crate::timeline::values_between(r, &prefix, &hi)
}

/// The ids of every node that ever had `label`, in id order.
pub(crate) fn ever_labelled(r: &(impl GraphRead + ?Sized), label: &str) -> Result<Vec<String>> {
    ids(r, key(LABELS, &[label]))
}

/// The ids of every relationship that ever had `node` as its source
/// (`outgoing`) or its target (of type `rel_type` when given), in id
/// order, once each.
pub(crate) fn ever_attached(
    r: &(impl GraphRead + ?Sized),
    node: &str,
    outgoing: bool,
    rel_type: Option<&str>,
) -> Result<Vec<String>> {
    let tag = if outgoing { OUT } else { IN };
    let prefix = match rel_type {
        Some(t) => key(tag, &[node, t]),
        None => key(tag, &[node]),
    };
    let mut out = ids(r, prefix)?;
    out.sort();
    out.dedup();
    Ok(out)
}

/// The versions of the nodes that have label `label` at valid time `at`,
/// in node id order.
pub fn nodes_as_of(r: &(impl GraphRead + ?Sized), label: &str, at: i64) -> Result<Vec<Version>> {
    let mut out = Vec::new();
    for id in ever_labelled(r, label)? {
        if let Some(v) = as_of(r, Kind::Node, &id, at)? {
            if matches!(&v.state, State::Node(n) if n.labels.iter().any(|l| l == label)) {
                out.push(v);
            }
        }
    }
    Ok(out)
}

/// Which relationships of a node to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Out,
    In,
    Both,
}

/// A relationship followed from a node: its version, and the node at its
/// other end.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub edge: Version,
    pub neighbor: String,
}

/// The relationships of node `id` at valid time `at` (of type `rel_type`
/// when given), each with the node at its other end; a loop once.
pub fn neighbors_as_of(
    r: &(impl GraphRead + ?Sized),
    id: &str,
    dir: Direction,
    rel_type: Option<&str>,
    at: i64,
) -> Result<Vec<Step>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let sides: &[bool] = match dir {
        Direction::Out => &[true],
        Direction::In => &[false],
        Direction::Both => &[true, false],
    };
    for &outgoing in sides {
        for eid in ever_attached(r, id, outgoing, rel_type)? {
            if seen.contains(&eid) {
                continue;
            }
            let Some(v) = as_of(r, Kind::Edge, &eid, at)? else {
                continue;
            };
            let State::Edge(e) = &v.state else { continue };
            let (here, there) = if outgoing {
                (&e.src, &e.dst)
            } else {
                (&e.dst, &e.src)
            };
            if here != id || rel_type.is_some_and(|t| t != e.rel_type) {
                continue;
            }
            let neighbor = there.clone();
            seen.insert(eid);
            out.push(Step { edge: v, neighbor });
        }
    }
    Ok(out)
}

/// A shortest path from `from` to `to` over the relationships holding at
/// valid time `at` (breadth first, at most `max_hops`), as its steps;
/// `Some(vec![])` when `from` is `to`.
pub fn shortest_path_as_of(
    r: &(impl GraphRead + ?Sized),
    from: &str,
    to: &str,
    dir: Direction,
    rel_type: Option<&str>,
    at: i64,
    max_hops: usize,
) -> Result<Option<Vec<Step>>> {
    if from == to {
        return Ok(Some(Vec::new()));
    }
    // Each node reached, with the node and the step that reached it first.
    let mut parent: HashMap<String, (String, Step)> = HashMap::new();
    let mut frontier = VecDeque::from([(from.to_string(), 0usize)]);
    let mut reached = HashSet::from([from.to_string()]);
    while let Some((node, hops)) = frontier.pop_front() {
        if hops >= max_hops {
            continue;
        }
        for step in neighbors_as_of(r, &node, dir, rel_type, at)? {
            let next = step.neighbor.clone();
            if !reached.insert(next.clone()) {
                continue;
            }
            parent.insert(next.clone(), (node.clone(), step));
            if next == to {
                let mut path = Vec::new();
                let mut cur = next;
                while let Some((prev, s)) = parent.remove(&cur) {
                    path.push(s);
                    cur = prev;
                }
                path.reverse();
                return Ok(Some(path));
            }
            frontier.push_back((next, hops + 1));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    /// Values `stored_equal` finds equal share a part; others do not.
    #[test]
    fn equal_values_share_their_index_part() {
        use plexus_storage::stored_equal;
        let values = [
            Value::Int(0),
            Value::Float(0.0),
            Value::Float(-0.0),
            Value::Int(1),
            Value::Float(1.0),
            Value::Float(1.5),
            Value::Int(-7),
            Value::Float(-7.0),
            Value::Int(i64::MAX),
            Value::Float(9.3e18),
            Value::Float(2f64.powi(63)),
            Value::Int(9_007_199_254_740_993),
            Value::Float(9_007_199_254_740_992.0),
            Value::String("1".into()),
            Value::String("x".repeat(200)),
            Value::String(format!("{}y", "x".repeat(199))),
            Value::Bool(true),
            Value::Bool(false),
        ];
        for a in &values {
            for b in &values {
                let (pa, pb) = (value_part(a).unwrap(), value_part(b).unwrap());
                assert_eq!(pa == pb, stored_equal(a, b), "{a:?} and {b:?}");
                assert!(pa.len() <= MAX_VALUE_PART + 8);
            }
        }
        assert_eq!(value_part(&Value::Float(f64::NAN)), None);
        assert_eq!(value_part(&Value::List(vec![])), None);
    }

    use super::*;
    use crate::claim::{ClaimObject, ClaimQuery, ClaimState};
    use crate::read::claims_as_of;
    use crate::version::{EdgeState, NodeState};
    use crate::write::{commit_versions, rebuild_indexes, VersionWrite};
    use crate::Interval;
    use plexus_storage::Storage;

    /// A store whose versions lack their index entries (as one written
    /// before the indexes existed) gets them back from `rebuild_indexes`.
    #[test]
    fn a_rebuild_restores_every_index_entry() {
        let db = Storage::in_memory().unwrap();
        let person = NodeState {
            labels: vec!["Person".into()],
            props: [("age".to_string(), Value::Int(40))].into(),
        };
        let knows = EdgeState {
            src: "ann".into(),
            dst: "bob".into(),
            rel_type: "KNOWS".into(),
            ..EdgeState::default()
        };
        let claim = ClaimState::new("ann", "LIKES", ClaimObject::Entity("tea".into()), "a");
        commit_versions(
            &db,
            "default",
            &[
                VersionWrite::assert_node("ann", person, Interval::from(0)),
                VersionWrite::assert_edge("k", knows, Interval::from(0)),
                VersionWrite::assert_claim(claim.clone(), Interval::from(0)),
            ],
        )
        .unwrap();
        let q = ClaimQuery::statement("default", "ann", "LIKES", ClaimObject::Entity("tea".into()));
        let counts = |db: &Storage| {
            let r = db.read("default").unwrap();
            (
                nodes_as_of(&r, "Person", 1).unwrap().len(),
                neighbors_as_of(&r, "bob", Direction::In, None, 1)
                    .unwrap()
                    .len(),
                claims_as_of(&r, &q, 1).unwrap().len(),
                ever_valued(&r, "age", &Value::Float(40.0)).unwrap(),
            )
        };
        let all = (1, 1, 1, Some(vec!["ann".to_string()]));
        assert_eq!(counts(&db), all);
        let mut t = db.write("default").unwrap();
        let mut lost = vec![
            key(LABELS, &["Person", "ann"]),
            key(OUT, &["ann", "KNOWS", "k"]),
            key(IN, &["bob", "KNOWS", "k"]),
        ];
        let mut c = vec![b'C'];
        for part in ["default", "LIKES", "ann"] {
            push_escaped(&mut c, part.as_bytes());
        }
        push_escaped(&mut c, b"etea");
        c.extend_from_slice(claim.claim_id().as_bytes());
        lost.push(c);
        let mut p = prop_prefix("age", &value_part(&Value::Int(40)).unwrap());
        push_escaped(&mut p, b"ann");
        lost.push(p);
        lost.push(PROPS_COMPLETE.to_vec());
        for k in &lost {
            assert!(t.valid_time_get(k).unwrap().is_some(), "{k:?}");
            t.valid_time_write(b"x", k, None).unwrap();
        }
        t.commit().unwrap();
        // Without its marker the property index does not answer (a scan
        // does), where an empty answer would be wrong.
        assert_eq!(counts(&db), (0, 0, 0, None));
        // Two versions a transaction: the batches follow one another.
        assert_eq!(
            crate::write::rebuild_in_batches(&db, "default", 2).unwrap(),
            3
        );
        assert_eq!(counts(&db), all);
        assert_eq!(rebuild_indexes(&db, "default").unwrap(), 3, "idempotent");
        assert_eq!(counts(&db), all);
    }
}
