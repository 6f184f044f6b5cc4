//! Packed adjacency against a model: a hub large enough that its block
//! keeps deltas between folds, written by single and concurrent
//! transactions, rolled back, and read inside transactions with pending
//! writes. Neighbours (exact order), degrees, edges by type and the
//! integrity check must agree with the model after every step.

use plexus_kv::{Backend, KvOptions};
use plexus_storage::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

const TYPES: [&str; 3] = ["A", "B", "C"];
const LEAVES: usize = 12;

#[derive(Debug, Clone)]
enum Op {
    /// An edge between the hub and a leaf (leaf 0 is the hub: a loop).
    Add { ty: usize, leaf: usize, out: bool },
    /// Deletes the n-th edge of the model, if any.
    Remove(prop::sample::Index),
    /// Two transactions open at once, each doing one change; both commit.
    Concurrent(Box<Op>, Box<Op>),
    /// A transaction that adds and removes, then rolls back.
    RolledBack(usize, prop::sample::Index),
    /// Adds an edge and removes it in the same transaction, removing an
    /// existing one too, checking what the transaction reads before commit.
    AddThenRemove {
        ty: usize,
        leaf: usize,
        pick: prop::sample::Index,
    },
}

fn simple() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..TYPES.len(), 0..LEAVES, any::<bool>()).prop_map(|(ty, leaf, out)| Op::Add { ty, leaf, out }),
        2 => any::<prop::sample::Index>().prop_map(Op::Remove),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => simple(),
        2 => (simple(), simple()).prop_map(|(a, b)| Op::Concurrent(Box::new(a), Box::new(b))),
        1 => (0..TYPES.len(), any::<prop::sample::Index>()).prop_map(|(t, i)| Op::RolledBack(t, i)),
        1 => (0..TYPES.len(), 0..LEAVES, any::<prop::sample::Index>()).prop_map(|(ty, leaf, pick)| Op::AddThenRemove { ty, leaf, pick }),
    ]
}

/// Edges by id: (source, target, type).
type Model = BTreeMap<EdgeId, (NodeId, NodeId, usize)>;

struct World {
    db: Storage,
    _dir: tempfile::TempDir,
    nodes: Vec<NodeId>,
    model: Model,
}

fn open(backend: Backend) -> (Storage, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let kv = plexus_kv::open(
        backend,
        dir.path(),
        KEYSPACE_NAMES,
        &KvOptions {
            durable: false,
            ..Default::default()
        },
    )
    .unwrap();
    (Storage::open(kv).unwrap(), dir)
}

/// A hub (node 0) with `initial` edges to and from leaves, loaded in bulk
/// or by one transaction.
fn world(backend: Backend, initial: usize, bulk: bool) -> World {
    let (db, dir) = open(backend);
    let key = |i: usize| format!("n{i}");
    let ends = |i: usize| {
        let leaf = 1 + i % (LEAVES - 1);
        if i.is_multiple_of(3) {
            (leaf, 0)
        } else {
            (0, leaf)
        }
    };
    if bulk {
        let mut nodes = (0..LEAVES).map(|i| {
            Ok(BulkNode {
                key: key(i),
                labels: vec![],
                props: Props::new(),
                origin: Origin::new("nodes"),
            })
        });
        let mut edges = (0..initial).map(|i| {
            let (s, d) = ends(i);
            Ok(BulkEdge {
                key: None,
                src: key(s),
                dst: key(d),
                rel_type: TYPES[i % TYPES.len()].into(),
                props: Props::new(),
                origin: Origin::new("edges"),
            })
        });
        db.bulk_load("default", &mut nodes, &mut edges).unwrap();
    } else {
        let mut t = db.write("default").unwrap();
        for i in 0..LEAVES {
            t.create_node(Some(&key(i)), &[], &Props::new()).unwrap();
        }
        for i in 0..initial {
            let (s, d) = ends(i);
            let (s, d) = (
                t.node_id(&key(s)).unwrap().unwrap(),
                t.node_id(&key(d)).unwrap().unwrap(),
            );
            t.create_edge(None, s, d, TYPES[i % TYPES.len()], &Props::new())
                .unwrap();
        }
        t.commit().unwrap();
    }
    let r = db.read("default").unwrap();
    let nodes: Vec<NodeId> = (0..LEAVES)
        .map(|i| r.node_id(&key(i)).unwrap().unwrap())
        .collect();
    let mut model = Model::new();
    for e in r.edges() {
        let e = r.edge(e.unwrap()).unwrap().unwrap();
        let ty = TYPES.iter().position(|t| *t == e.rel_type).unwrap();
        model.insert(e.id, (e.src, e.dst, ty));
    }
    assert_eq!(model.len(), initial);
    drop(r);
    World {
        db,
        _dir: dir,
        nodes,
        model,
    }
}

/// What the model says the neighbours of `n` are, in storage's order:
/// outgoing then incoming, each by type, neighbour and edge; with `Both`,
/// a loop once.
fn expected(
    model: &Model,
    n: NodeId,
    dir: Direction,
    ty: Option<usize>,
) -> Vec<(bool, EdgeId, NodeId, usize)> {
    let mut out = Vec::new();
    for outgoing in [true, false] {
        if (dir == Direction::Out && !outgoing) || (dir == Direction::In && outgoing) {
            continue;
        }
        let mut side: Vec<(usize, NodeId, EdgeId)> = model
            .iter()
            .filter(|(_, (s, d, t))| {
                ty.is_none_or(|ty| ty == *t)
                    && if outgoing {
                        *s == n
                    } else {
                        *d == n && !(dir == Direction::Both && *s == n)
                    }
            })
            .map(|(e, (s, d, t))| (*t, if outgoing { *d } else { *s }, *e))
            .collect();
        side.sort();
        out.extend(side.into_iter().map(|(t, o, e)| (outgoing, e, o, t)));
    }
    out
}

fn agrees(r: &impl GraphRead, model: &Model, nodes: &[NodeId]) -> Result<(), TestCaseError> {
    for (i, name) in TYPES.iter().enumerate() {
        let got: Vec<EdgeId> = r.edges_with_type(name).map(Result::unwrap).collect();
        let want: Vec<EdgeId> = model
            .iter()
            .filter(|(_, v)| v.2 == i)
            .map(|(e, _)| *e)
            .collect();
        prop_assert_eq!(got, want, "edges of type {}", name);
    }
    for &n in &nodes[..3] {
        for dir in [Direction::Out, Direction::In, Direction::Both] {
            for ty in [None, Some(0), Some(2)] {
                let got: Vec<_> = r
                    .neighbors(n, dir, ty.map(|t| TYPES[t]))
                    .unwrap()
                    .into_iter()
                    .map(|nb| {
                        let name = r.type_name(nb.rel_type).unwrap();
                        let t = TYPES.iter().position(|t| **t == *name).unwrap();
                        (nb.outgoing, nb.edge, nb.node, t)
                    })
                    .collect();
                let want = expected(model, n, dir, ty);
                prop_assert_eq!(&got, &want, "neighbours of {:?} {:?} {:?}", n, dir, ty);
                let degree = r.degree(n, dir, ty.map(|t| TYPES[t])).unwrap();
                prop_assert_eq!(
                    degree,
                    want.len() as u64,
                    "degree of {:?} {:?} {:?}",
                    n,
                    dir,
                    ty
                );
            }
        }
    }
    Ok(())
}

/// Applies one simple change in `t`, to the model `m` as well; what a
/// concurrent commit will have to apply.
fn change(w: &World, t: &mut WriteTxn, m: &mut Model, op: &Op) -> Option<EdgeId> {
    match op {
        Op::Add { ty, leaf, out } => {
            let (hub, leaf) = (w.nodes[0], w.nodes[*leaf]);
            let (s, d) = if *out { (hub, leaf) } else { (leaf, hub) };
            let e = t
                .create_edge(None, s, d, TYPES[*ty], &Props::new())
                .unwrap();
            m.insert(e, (s, d, *ty));
            None
        }
        Op::Remove(i) => {
            if m.is_empty() {
                return None;
            }
            let e = *m.keys().nth(i.index(m.len())).unwrap();
            assert!(t.delete_edge(e).unwrap());
            m.remove(&e);
            Some(e)
        }
        _ => unreachable!("only simple changes"),
    }
}

fn run(w: &mut World, op: &Op) -> Result<(), TestCaseError> {
    match op {
        Op::Add { .. } | Op::Remove(_) => {
            let mut t = w.db.write("default").unwrap();
            let mut m = w.model.clone();
            change(w, &mut t, &mut m, op);
            agrees(&t, &m, &w.nodes)?;
            t.commit().unwrap();
            w.model = m;
        }
        Op::Concurrent(a, b) => {
            let mut ta = w.db.write("default").unwrap();
            let mut tb = w.db.write("default").unwrap();
            let mut ma = w.model.clone();
            let mut mb = w.model.clone();
            let ra = change(w, &mut ta, &mut ma, a);
            let rb = change(w, &mut tb, &mut mb, b);
            ta.commit().unwrap();
            // Both removing one edge: the second must conflict.
            let same = ra.is_some() && ra == rb;
            match tb.commit() {
                Ok(()) => prop_assert!(!same, "two deletes of one edge both committed"),
                Err(e) => prop_assert!(same, "unexpected failure: {e}"),
            }
            let mut merged = ma;
            if !same {
                for (e, v) in &mb {
                    if !w.model.contains_key(e) {
                        merged.insert(*e, *v);
                    }
                }
                if let Some(e) = rb {
                    merged.remove(&e);
                }
            }
            w.model = merged;
        }
        Op::RolledBack(ty, i) => {
            let mut t = w.db.write("default").unwrap();
            let mut m = w.model.clone();
            change(
                w,
                &mut t,
                &mut m,
                &Op::Add {
                    ty: *ty,
                    leaf: 1,
                    out: true,
                },
            );
            change(w, &mut t, &mut m, &Op::Remove(*i));
            agrees(&t, &m, &w.nodes)?;
            t.rollback();
        }
        Op::AddThenRemove { ty, leaf, pick } => {
            let mut t = w.db.write("default").unwrap();
            let mut m = w.model.clone();
            let (hub, leaf) = (w.nodes[0], w.nodes[*leaf]);
            let e = t
                .create_edge(None, hub, leaf, TYPES[*ty], &Props::new())
                .unwrap();
            m.insert(e, (hub, leaf, *ty));
            agrees(&t, &m, &w.nodes)?;
            assert!(t.delete_edge(e).unwrap());
            m.remove(&e);
            change(w, &mut t, &mut m, &Op::Remove(*pick));
            agrees(&t, &m, &w.nodes)?;
            t.commit().unwrap();
            w.model = m;
        }
    }
    let r = w.db.read("default").unwrap();
    agrees(&r, &w.model, &w.nodes)?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn a_hubs_adjacency_agrees_with_a_model(
        initial in 60usize..260,
        bulk in any::<bool>(),
        lmdb in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        let backend = if lmdb { Backend::Lmdb } else { Backend::Memory };
        let mut w = world(backend, initial, bulk);
        agrees(&w.db.read("default").unwrap(), &w.model, &w.nodes)?;
        for op in &ops {
            run(&mut w, op)?;
        }
        let report = w.db.check_integrity("default").unwrap();
        prop_assert!(report.is_ok(), "{:?}", report.problems);
    }
}

/// Deleting every node of a hub's neighbourhood leaves no adjacency behind:
/// emptied blocks are deleted, and so are the deltas of removed edges.
#[test]
fn deleting_everything_leaves_no_adjacency_keys() {
    let mut w = world(Backend::Lmdb, 300, true);
    // Some deltas first, so that removals meet both blocks and deltas.
    add_from_every_leaf(&mut w, 1, true);
    for n in w.nodes.iter().rev() {
        let mut t = w.db.write("default").unwrap();
        t.delete_node(*n, DeleteMode::Detach).unwrap();
        t.commit().unwrap();
    }
    assert_eq!(adjacency_entries(&w.db), 0);
    assert!(w.db.check_integrity("default").unwrap().is_ok());
}

/// A node deleted with its block and committed deltas: the commit drops
/// them without reading them (`adjacency::settle`), and nothing of them
/// is left for the integrity check or its neighbours to find.
#[test]
fn a_deleted_hub_leaves_nothing_at_it_or_at_its_neighbours() {
    for backend in [Backend::Lmdb, Backend::Memory] {
        let mut w = world(backend, 300, true);
        add_from_every_leaf(&mut w, 2, false);
        let before = adjacency_entries(&w.db);
        let hub = w.nodes[0];
        let mut t = w.db.write("default").unwrap();
        t.delete_node(hub, DeleteMode::Detach).unwrap();
        t.commit().unwrap();
        let r = w.db.read("default").unwrap();
        for n in &w.nodes[1..] {
            assert_eq!(r.degree(*n, Direction::Both, None).unwrap(), 0);
        }
        assert!(w.db.check_integrity("default").unwrap().is_ok());
        assert!(adjacency_entries(&w.db) < before);
    }
}

/// One edge of type `ty` between the hub and each leaf, in one commit:
/// deltas on the hub's block.
fn add_from_every_leaf(w: &mut World, ty: usize, out: bool) {
    let mut t = w.db.write("default").unwrap();
    let mut m = w.model.clone();
    for leaf in 1..LEAVES {
        change(w, &mut t, &mut m, &Op::Add { ty, leaf, out });
    }
    t.commit().unwrap();
    w.model = m;
}

fn adjacency_entries(db: &Storage) -> u64 {
    let space = db.space().unwrap();
    space
        .keyspaces
        .iter()
        .find(|k| k.name == "adjacency")
        .map_or(0, |k| k.entries)
}

/// Nodes deleted together: inside the transaction none of them has edges
/// (its adjacency is not rewritten entry by entry, yet no read finds it),
/// the survivors lose the edges to them, and after the commit nothing of
/// theirs is left. Refused, the call deletes nothing.
#[test]
fn nodes_deleted_together_have_no_adjacency_before_or_after_the_commit() {
    for backend in [Backend::Lmdb, Backend::Memory] {
        let mut w = world(backend, 300, true);
        add_from_every_leaf(&mut w, 0, true);
        let (hub, leaves) = (w.nodes[0], w.nodes[1..4].to_vec());
        let mut t = w.db.write("default").unwrap();
        let refused = t.delete_nodes(&leaves, DeleteMode::Refuse);
        assert!(matches!(refused, Err(StorageError::HasEdges { .. })));
        assert!(
            t.node(leaves[0]).unwrap().is_some(),
            "refused: none deleted"
        );
        let kept = |m: &Model| {
            m.iter()
                .filter(|(_, (s, d, _))| !leaves.contains(s) && !leaves.contains(d))
                .count() as u64
        };
        let want = kept(&w.model);
        let twice = [leaves.clone(), leaves.clone()].concat();
        assert_eq!(t.delete_nodes(&twice, DeleteMode::Detach).unwrap(), 3);
        for n in &leaves {
            assert!(t.neighbors(*n, Direction::Both, None).unwrap().is_empty());
            assert_eq!(t.degree(*n, Direction::In, None).unwrap(), 0);
        }
        assert!(t.adjacency().all(|r| !leaves.contains(&r.unwrap().0)));
        let at_hub = t.neighbors(hub, Direction::Both, None).unwrap();
        assert!(at_hub.iter().all(|n| !leaves.contains(&n.node)));
        t.commit().unwrap();
        let r = w.db.read("default").unwrap();
        assert_eq!(r.neighbors(hub, Direction::Both, None).unwrap(), at_hub);
        assert_eq!(r.adjacency().count() as u64, 2 * want);
        assert!(w.db.check_integrity("default").unwrap().is_ok());
    }
}
