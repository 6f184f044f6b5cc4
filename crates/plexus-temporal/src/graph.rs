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
//! Property values have an index of the same kind (`props.rs`).

use crate::error::Result;
use crate::props;
use crate::read::as_of;
use crate::timeline::subject;
use crate::version::{Kind, State, Version};
use plexus_common::push_escaped;
use plexus_storage::{GraphRead, ValidWrite, WriteTxn, VALID_KEY_ROOM};
use std::collections::{HashMap, HashSet, VecDeque};

const LABELS: u8 = b'L';
const OUT: u8 = b'O';
const IN: u8 = b'I';

fn key(tag: u8, parts: &[&str]) -> Vec<u8> {
    // Sized for every part and its end (an escaped zero byte aside): grown
    // part by part, a relationship's endpoint keys were reallocated twice
    // each, for every version a batch writes.
    let room = 1 + VALID_KEY_ROOM;
    let mut k = Vec::with_capacity(room + parts.iter().map(|p| p.len() + 2).sum::<usize>());
    k.push(tag);
    for p in parts {
        push_escaped(&mut k, p.as_bytes());
    }
    k
}

/// Writes index entry `key` → `id` unless it is there, with the entity as
/// its conflict subject.
pub(crate) fn put_once(txn: &mut WriteTxn, kind: Kind, id: &str, key: Vec<u8>) -> Result<()> {
    if crate::keyspace::get(txn, &key)?.is_none() {
        crate::keyspace::write(txn, &subject(kind, id), &key, Some(id.as_bytes().to_vec()))?;
    }
    Ok(())
}

/// Indexes what a new version of a node or an edge gives its entity
/// (`known`: the entity had versions before, see [`unwritten`]).
pub(crate) fn index(txn: &mut WriteTxn, v: &Version, known: bool) -> Result<()> {
    if let Some(of) = props::Of::for_kind(v.kind) {
        props::mark_first(txn, of, &v.logical_id)?;
    }
    let id = &v.logical_id;
    let put = |k| (k, ValidWrite::Put(id.as_bytes().to_vec()));
    let new = unwritten(txn, entries(v), known)?;
    let new = new.into_iter().map(put).collect();
    Ok(crate::keyspace::write_all(
        txn,
        &[&subject(v.kind, id)],
        new,
    )?)
}

/// Of index entries `keys` of one entity, once each, those not stored
/// yet. Those of an entity with no version before (`known` false) are not
/// looked up: each names its entity, so there are none, and writing one
/// again would write what is there.
pub(crate) fn unwritten(
    r: &(impl GraphRead + ?Sized),
    mut keys: Vec<Vec<u8>>,
    known: bool,
) -> Result<Vec<Vec<u8>>> {
    keys.sort_unstable();
    keys.dedup();
    if !known {
        return Ok(keys);
    }
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        if crate::keyspace::get(r, &k)?.is_none() {
            out.push(k);
        }
    }
    Ok(out)
}

/// The keys of the index entries a version of a node or an edge gives
/// its entity: its labels or endpoints, and its property values.
pub(crate) fn entries(v: &Version) -> Vec<Vec<u8>> {
    let id = &v.logical_id;
    let mut out = Vec::new();
    match &v.state {
        State::Node(n) => {
            for l in &n.labels {
                out.push(key(LABELS, &[l, id]));
            }
            props::entries(props::Of::Nodes, id, &n.props, &mut out);
        }
        State::Edge(e) => {
            out.push(key(OUT, &[&e.src, &e.rel_type, id]));
            out.push(key(IN, &[&e.dst, &e.rel_type, id]));
            props::entries(props::Of::Relationships, id, &e.props, &mut out);
        }
        State::Claim(_) | State::None => {}
    }
    out
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
    use super::*;
    use crate::claim::{ClaimObject, ClaimQuery, ClaimState};
    use crate::read::claims_as_of;
    use crate::version::{EdgeState, NodeState};
    use crate::write::{commit_versions, rebuild_indexes, VersionWrite};
    use crate::Interval;
    use plexus_common::Value;
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
                props::ever_valued(&r, props::Of::Nodes, "age", &Value::Float(40.0)).unwrap(),
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
        lost.push(crate::props::entry_key("age", &Value::Int(40), "ann"));
        lost.push(crate::props::PROPS_COMPLETE.to_vec());
        for k in &lost {
            assert!(crate::keyspace::get(&t, k).unwrap().is_some(), "{k:?}");
            crate::keyspace::write(&mut t, b"x", k, None).unwrap();
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
