//! Vector indexes inside transactions: a committed vector is found, a
//! rolled-back one never, a deleted node never appears, readers see exactly
//! their snapshot and a writer its own changes; the index survives a reopen
//! with and without a checkpoint; a bulk load and `create_index` on existing
//! data fill it; and a property test against exact search over a model.

use plexus_common::Value;
use plexus_storage::{
    DeleteMode, GraphRead, IndexKind, IndexSpec, NodeId, Props, Storage, StorageError,
};
use plexus_vector_index::{search, VectorMaintainer};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

fn open(dir: &Path) -> Storage {
    let kv = plexus_kv::open(
        plexus_kv::Backend::Lmdb,
        dir,
        plexus_storage::KEYSPACE_NAMES,
        &plexus_kv::KvOptions::default(),
    )
    .unwrap();
    let s = Storage::open(kv).unwrap();
    s.register_maintainer(IndexKind::Vector, Arc::new(VectorMaintainer))
        .unwrap();
    s
}

fn memory() -> Storage {
    let s = Storage::in_memory().unwrap();
    s.register_maintainer(IndexKind::Vector, Arc::new(VectorMaintainer))
        .unwrap();
    s
}

fn options(dim: i64, similarity: &str) -> Vec<(String, Value)> {
    vec![
        ("vector.dimensions".into(), Value::Int(dim)),
        (
            "vector.similarity_function".into(),
            Value::String(similarity.into()),
        ),
    ]
}

fn create_index(s: &Storage, dim: i64, similarity: &str) {
    let mut t = s.write("default").unwrap();
    t.create_index(IndexSpec::vector("Doc", "v", options(dim, similarity)).named("docs"))
        .unwrap();
    t.commit().unwrap();
}

fn props(v: &[f32]) -> Props {
    let mut p = Props::new();
    p.insert(
        "v".into(),
        Value::List(v.iter().map(|x| Value::Float(f64::from(*x))).collect()),
    );
    p
}

/// The user ids of the `k` nearest, as `txn` sees them.
fn nearest(txn: &dyn GraphRead, q: &[f32], k: usize) -> Vec<String> {
    search(txn, "docs", q, k, None, None)
        .unwrap()
        .iter()
        .map(|h| txn.node(h.node).unwrap().unwrap().key)
        .collect()
}

#[test]
fn committed_found_rolled_back_never_deleted_never() {
    let s = memory();
    create_index(&s, 2, "euclidean");
    let mut t = s.write("default").unwrap();
    t.create_node(Some("a"), &["Doc"], &props(&[0.0, 0.0]))
        .unwrap();
    t.create_node(Some("b"), &["Doc"], &props(&[5.0, 5.0]))
        .unwrap();
    // Not indexed: another label.
    t.create_node(Some("x"), &["Other"], &props(&[0.1, 0.1]))
        .unwrap();
    t.commit().unwrap();
    let before = s.read("default").unwrap();

    let mut t = s.write("default").unwrap();
    t.create_node(Some("c"), &["Doc"], &props(&[0.1, 0.0]))
        .unwrap();
    // A transaction sees its own vector before it commits.
    assert_eq!(nearest(&t, &[0.1, 0.0], 1), ["c"]);
    t.rollback();
    assert_eq!(
        nearest(&s.read("default").unwrap(), &[0.1, 0.0], 3),
        ["a", "b"]
    );

    let mut t = s.write("default").unwrap();
    let c = t
        .create_node(Some("c"), &["Doc"], &props(&[0.1, 0.0]))
        .unwrap();
    t.commit().unwrap();
    assert_eq!(nearest(&s.read("default").unwrap(), &[0.1, 0.0], 1), ["c"]);
    // A reader from before the commit does not see it.
    assert_eq!(nearest(&before, &[0.1, 0.0], 3), ["a", "b"]);

    let mut t = s.write("default").unwrap();
    t.delete_node(c, DeleteMode::Detach).unwrap();
    assert_eq!(nearest(&t, &[0.1, 0.0], 3), ["a", "b"]);
    t.commit().unwrap();
    assert_eq!(
        nearest(&s.read("default").unwrap(), &[0.1, 0.0], 3),
        ["a", "b"]
    );
}

#[test]
fn a_changed_vector_moves_and_a_removed_one_goes() {
    let s = memory();
    create_index(&s, 2, "cosine");
    let mut t = s.write("default").unwrap();
    let a = t
        .create_node(Some("a"), &["Doc"], &props(&[1.0, 0.0]))
        .unwrap();
    t.create_node(Some("b"), &["Doc"], &props(&[0.0, 1.0]))
        .unwrap();
    t.commit().unwrap();
    let old = s.read("default").unwrap();
    let mut t = s.write("default").unwrap();
    t.set_node_property(
        a,
        "v",
        Value::List(vec![Value::Float(0.0), Value::Float(2.0)]),
    )
    .unwrap();
    t.set_node_property(
        a,
        "v",
        Value::List(vec![Value::Float(-1.0), Value::Float(0.0)]),
    )
    .unwrap();
    assert_eq!(nearest(&t, &[-1.0, 0.1], 1), ["a"]);
    t.commit().unwrap();
    let r = s.read("default").unwrap();
    let hits = search(&r, "docs", &[-1.0, 0.0], 2, None, None).unwrap();
    assert_eq!(hits.len(), 2);
    assert!((hits[0].score - 1.0).abs() < 1e-3, "{hits:?}");
    // The old reader still sees a where it was.
    assert_eq!(nearest(&old, &[1.0, 0.0], 1), ["a"]);
    // Removing the property, or the label, takes the node out.
    let mut t = s.write("default").unwrap();
    t.set_node_property(a, "v", Value::Null).unwrap();
    t.commit().unwrap();
    assert_eq!(nearest(&s.read("default").unwrap(), &[-1.0, 0.0], 5), ["b"]);
}

#[test]
fn bad_vectors_are_refused_with_the_index_and_node() {
    let s = memory();
    create_index(&s, 3, "cosine");
    let mut t = s.write("default").unwrap();
    for (bad, says) in [
        (props(&[1.0, 2.0]), "2 dimensions where the index takes 3"),
        (props(&[0.0, 0.0, 0.0]), "zero vector"),
    ] {
        let e = t.create_node(Some("n"), &["Doc"], &bad).unwrap_err();
        assert!(matches!(e, StorageError::Maintained { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("docs") && msg.contains("'n'") && msg.contains(says),
            "{msg}"
        );
    }
    let mut p = Props::new();
    p.insert("v".into(), Value::String("text".into()));
    assert!(t.create_node(Some("n"), &["Doc"], &p).is_err());
    // The failed writes left nothing: the id is free.
    t.create_node(Some("n"), &["Doc"], &props(&[1.0, 2.0, 3.0]))
        .unwrap();
    t.commit().unwrap();
    assert_eq!(
        nearest(&s.read("default").unwrap(), &[1.0, 2.0, 3.0], 5),
        ["n"]
    );
    // Options are checked when the index is made.
    let mut t = s.write("default").unwrap();
    let e = t
        .create_index(IndexSpec::vector("Doc", "w", options(0, "cosine")))
        .unwrap_err();
    assert!(e.to_string().contains("vector.dimensions"), "{e}");
}

#[test]
fn an_index_made_on_existing_data_and_dropped() {
    let s = memory();
    let mut t = s.write("default").unwrap();
    for i in 0..300 {
        let x = i as f32;
        t.create_node(Some(&format!("n{i}")), &["Doc"], &props(&[x, 1.0]))
            .unwrap();
    }
    t.commit().unwrap();
    create_index(&s, 2, "euclidean");
    let r = s.read("default").unwrap();
    assert_eq!(nearest(&r, &[150.2, 1.0], 3), ["n150", "n151", "n149"]);
    let info = r.indexes().unwrap();
    assert_eq!(info.len(), 1);
    assert_eq!(info[0].kind, IndexKind::Vector);
    assert!(info[0]
        .options
        .contains(&("vector.dimensions".into(), Value::Int(2))));
    let mut t = s.write("default").unwrap();
    t.drop_index("docs").unwrap();
    t.commit().unwrap();
    let r = s.read("default").unwrap();
    assert!(search(&r, "docs", &[1.0, 1.0], 1, None, None).is_err());
    assert!(r.indexes().unwrap().is_empty());
}

#[test]
fn a_filter_keeps_exactly_k() {
    let s = memory();
    create_index(&s, 2, "euclidean");
    let mut t = s.write("default").unwrap();
    let mut ids = Vec::new();
    for i in 0..2000 {
        let x = (i % 97) as f32;
        let y = (i / 97) as f32;
        ids.push(
            t.create_node(Some(&format!("n{i}")), &["Doc"], &props(&[x, y]))
                .unwrap(),
        );
    }
    t.commit().unwrap();
    let r = s.read("default").unwrap();
    // One node in 100 passes; the nearest of them are far from the query.
    let pass = |n: NodeId| n.0.is_multiple_of(100);
    let hits = search(&r, "docs", &[50.0, 10.0], 10, None, Some(&pass)).unwrap();
    assert_eq!(hits.len(), 10);
    assert!(hits.iter().all(|h| pass(h.node)));
}

/// A filter passing about 1% of 6,000 vectors: the search estimates the
/// share from a sample and scans the passing vectors instead of walking.
/// Its answer must be the exact nearest among what the transaction sees:
/// committed vectors that pass, minus the one it deleted, plus its own new
/// one, with their distances.
#[test]
fn a_very_selective_filter_scans_and_finds_the_exact_nearest() {
    let s = memory();
    create_index(&s, 3, "euclidean");
    let vec_of = |i: usize| [(i % 89) as f32, (i / 89) as f32, (i % 7) as f32];
    let mut t = s.write("default").unwrap();
    for i in 0..6000 {
        t.create_node(Some(&format!("n{i}")), &["Doc"], &props(&vec_of(i)))
            .unwrap();
    }
    t.commit().unwrap();
    let passing = |key: &str| key.trim_start_matches('n').parse::<usize>().unwrap() % 97 == 5;
    let mut t = s.write("default").unwrap();
    let gone = t.node_by_key("n5").unwrap().unwrap().id;
    t.delete_node(gone, DeleteMode::Detach).unwrap();
    t.create_node(Some("n9705"), &["Doc"], &props(&[30.0, 30.0, 2.0]))
        .unwrap();
    let q = [30.0, 30.0, 3.0];
    // A cheap filter, as one an in-memory set answers: the search scans
    // only for such (one reading each node's record would walk).
    let mut passes = vec![false; 7000];
    for i in (0..6000).chain([9705]) {
        if let Some(n) = t.node_by_key(&format!("n{i}")).unwrap() {
            passes[n.id.0 as usize] = passing(&n.key);
        }
    }
    let pass = |n: NodeId| passes.get(n.0 as usize).copied().unwrap_or(false);
    let got: Vec<(String, f64)> = search(&t, "docs", &q, 10, None, Some(&pass))
        .unwrap()
        .iter()
        .map(|h| (t.node(h.node).unwrap().unwrap().key, h.score))
        .collect();
    let mut want: Vec<(String, f32)> = (0..6000)
        .filter(|i| *i != 5)
        .map(|i| (i, vec_of(i)))
        .chain(std::iter::once((9705, [30.0, 30.0, 2.0])))
        .filter(|(i, _)| passing(&format!("n{i}")))
        .map(|(i, v)| {
            let d: f32 = v.iter().zip(&q).map(|(a, b)| (a - b) * (a - b)).sum();
            (format!("n{i}"), d)
        })
        .collect();
    want.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    assert_eq!(got.len(), 10);
    assert_eq!(got[0].0, "n9705", "the transaction's own vector");
    // Euclidean scores are 1 / (1 + d²); each hit's score is its own
    // node's, and they are the best there are.
    let score = |d: f32| 1.0 / (1.0 + f64::from(d));
    for (g, w) in got.iter().zip(&want) {
        let own = want.iter().find(|x| x.0 == g.0).expect("a passing node");
        assert!((g.1 - score(own.1)).abs() < 1e-6, "{g:?} is {own:?}");
        assert!((g.1 - score(w.1)).abs() < 1e-6, "{got:?} against {want:?}");
    }
}

#[test]
fn a_search_among_candidates_sees_what_the_transaction_sees() {
    let s = memory();
    create_index(&s, 2, "euclidean");
    let mut t = s.write("default").unwrap();
    let ids: Vec<NodeId> = (0..50)
        .map(|i| {
            t.create_node(Some(&format!("n{i}")), &["Doc"], &props(&[i as f32, 0.0]))
                .unwrap()
        })
        .collect();
    t.commit().unwrap();
    let among = |txn: &dyn GraphRead, nodes: &[NodeId]| -> Vec<String> {
        plexus_vector_index::search_among(txn, "docs", &[20.2, 0.0], 3, None, nodes, None)
            .unwrap()
            .iter()
            .map(|h| txn.node(h.node).unwrap().unwrap().key)
            .collect()
    };
    let evens: Vec<NodeId> = ids.iter().copied().step_by(2).collect();
    let old = s.read("default").unwrap();
    assert_eq!(among(&old, &evens), ["n20", "n22", "n18"]);
    let mut t = s.write("default").unwrap();
    t.set_node_property(
        ids[40],
        "v",
        Value::List(vec![Value::Float(20.0), Value::Float(0.0)]),
    )
    .unwrap();
    t.delete_node(ids[20], DeleteMode::Detach).unwrap();
    assert_eq!(among(&t, &evens), ["n40", "n22", "n18"]);
    t.commit().unwrap();
    assert_eq!(
        among(&s.read("default").unwrap(), &evens),
        ["n40", "n22", "n18"]
    );
    // The reader from before sees the vectors as they were.
    assert_eq!(among(&old, &evens), ["n20", "n22", "n18"]);
    // Also a node moved far away since: the reader measures the vector
    // it sees, not the node's newest.
    let mut t = s.write("default").unwrap();
    t.set_node_property(
        ids[22],
        "v",
        Value::List(vec![Value::Float(1000.0), Value::Float(0.0)]),
    )
    .unwrap();
    t.commit().unwrap();
    assert_eq!(among(&old, &evens), ["n20", "n22", "n18"]);
    assert_eq!(
        among(&s.read("default").unwrap(), &evens),
        ["n40", "n18", "n24"]
    );
    // Many candidates: the walk accepting only them.
    let many: Vec<NodeId> = (0..5000).map(NodeId).chain(evens.clone()).collect();
    assert_eq!(among(&s.read("default").unwrap(), &many).len(), 3);
}

#[test]
fn survives_reopen_with_and_without_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let want;
    {
        let s = open(dir.path());
        create_index(&s, 4, "cosine");
        let mut t = s.write("default").unwrap();
        for i in 0..500 {
            let f = i as f32;
            t.create_node(
                Some(&format!("n{i}")),
                &["Doc"],
                &props(&[f.sin(), f.cos(), (f * 0.3).sin(), 1.0]),
            )
            .unwrap();
        }
        t.commit().unwrap();
        let mut t = s.write("default").unwrap();
        let n7 = t.node_by_key("n7").unwrap().unwrap();
        t.delete_node(n7.id, DeleteMode::Detach).unwrap();
        t.commit().unwrap();
        want = nearest(&s.read("default").unwrap(), &[0.5, 0.5, 0.1, 1.0], 20);
        assert!(!want.contains(&"n7".to_string()));
        // No checkpoint: the next open links what it finds.
    }
    {
        let s = open(dir.path());
        let got = nearest(&s.read("default").unwrap(), &[0.5, 0.5, 0.1, 1.0], 20);
        assert_eq!(got, want);
        let mut t = s.write("default").unwrap();
        t.create_node(Some("late"), &["Doc"], &props(&[0.5, 0.5, 0.1, 1.0]))
            .unwrap();
        t.commit().unwrap();
        s.checkpoint_indexes().unwrap();
    }
    let s = open(dir.path());
    let got = nearest(&s.read("default").unwrap(), &[0.5, 0.5, 0.1, 1.0], 21);
    assert_eq!(got[0], "late");
    assert_eq!(got[1..], want[..]);
}

#[test]
fn a_bulk_load_fills_the_index() {
    let s = memory();
    create_index(&s, 2, "euclidean");
    let mut rows = (0..1000).map(|i| {
        Ok(plexus_storage::BulkNode {
            key: format!("n{i}"),
            labels: vec!["Doc".into()],
            props: props(&[i as f32, 0.0]),
            origin: plexus_storage::Origin::new(format!("row {i}")),
        })
    });
    s.bulk_load("default", &mut rows, &mut std::iter::empty())
        .unwrap();
    let r = s.read("default").unwrap();
    assert!(!r.indexes().unwrap()[0].stale);
    assert_eq!(nearest(&r, &[500.4, 0.0], 2), ["n500", "n501"]);
}

#[derive(Debug, Clone)]
enum Op {
    Put(u8, [i8; 3]),
    Delete(u8),
    Commit,
    Rollback,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..40, any::<[i8; 3]>()).prop_map(|(n, v)| Op::Put(n, v)),
        2 => (0u8..40).prop_map(Op::Delete),
        2 => Just(Op::Commit),
        1 => Just(Op::Rollback),
    ]
}

fn vec_of(v: [i8; 3]) -> [f32; 3] {
    [f32::from(v[0]), f32::from(v[1]), f32::from(v[2]) + 0.5]
}

/// Exact search over the model: squared Euclidean distance, then id.
fn exact(model: &BTreeMap<u8, [f32; 3]>, q: &[f32; 3], k: usize) -> Vec<(f32, String)> {
    let mut all: Vec<(f32, String)> = model
        .iter()
        .map(|(n, v)| {
            let d = v.iter().zip(q).map(|(a, b)| (a - b) * (a - b)).sum::<f32>();
            (d, format!("n{n}"))
        })
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    all.truncate(k);
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Writes, deletes, commits and rollbacks; after each step, the index
    /// as the writer and as a fresh reader sees it returns the exact
    /// nearest of the model (distances compared, since ties may order
    /// either way).
    #[test]
    fn the_index_agrees_with_exact_search(ops in proptest::collection::vec(op(), 1..60), q in any::<[i8; 3]>()) {
        let s = memory();
        create_index(&s, 3, "euclidean");
        let q = vec_of(q);
        let mut committed: BTreeMap<u8, [f32; 3]> = BTreeMap::new();
        let mut model = committed.clone();
        let mut t = s.write("default").unwrap();
        for op in ops {
            match op {
                Op::Put(n, v) => {
                    let key = format!("n{n}");
                    let id = match t.node_by_key(&key).unwrap() {
                        Some(node) => node.id,
                        None => t.create_node(Some(&key), &["Doc"], &Props::new()).unwrap(),
                    };
                    let v = vec_of(v);
                    t.set_node_property(id, "v", Value::List(v.iter().map(|x| Value::Float(f64::from(*x))).collect())).unwrap();
                    model.insert(n, v);
                }
                Op::Delete(n) => {
                    if let Some(node) = t.node_by_key(&format!("n{n}")).unwrap() {
                        t.delete_node(node.id, DeleteMode::Detach).unwrap();
                    }
                    model.remove(&n);
                }
                Op::Commit => {
                    t.commit().unwrap();
                    committed = model.clone();
                    t = s.write("default").unwrap();
                }
                Op::Rollback => {
                    t.rollback();
                    model = committed.clone();
                    t = s.write("default").unwrap();
                }
            }
            for (txn, m) in [(&t as &dyn GraphRead, &model), (&s.read("default").unwrap() as &dyn GraphRead, &committed)] {
                let want = exact(m, &q, 5);
                let got = search(txn, "docs", &q, 5, None, None).unwrap();
                prop_assert_eq!(got.len(), want.len());
                for (h, (d, _)) in got.iter().zip(&want) {
                    let gd = 1.0 / h.score - 1.0;
                    prop_assert!((gd - f64::from(*d)).abs() < 1e-2 * (1.0 + f64::from(*d)), "{} vs {}", gd, d);
                }
            }
        }
    }
}

/// Entries of the one vector index (`index_data` holds nothing else here).
fn index_entries(s: &Storage) -> u64 {
    let space = s.space().unwrap();
    space
        .keyspaces
        .iter()
        .find(|k| k.name == "index_data")
        .unwrap()
        .entries
}

/// 4,096 components of f32: 16 KiB codes, three to a block.
fn wide(v: [f32; 3]) -> Vec<f32> {
    let mut w = vec![0.0; 4096];
    w[..3].copy_from_slice(&v);
    w
}

fn wide_index(s: &Storage) {
    let mut o = options(4096, "euclidean");
    o.push(("vector.quantization.enabled".into(), Value::Bool(false)));
    let mut t = s.write("default").unwrap();
    t.create_index(IndexSpec::vector("Doc", "v", o).named("docs"))
        .unwrap();
    t.commit().unwrap();
}

#[test]
fn codes_go_in_blocks_at_once_or_at_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path());
        wide_index(&s);
        let mut t = s.write("default").unwrap();
        for i in 0..10 {
            t.create_node(
                Some(&format!("n{i}")),
                &["Doc"],
                &props(&wide([i as f32, 0.0, 0.0])),
            )
            .unwrap();
        }
        t.commit().unwrap();
        // Ten `v` entries, three full blocks, slot 9's code alone.
        assert_eq!(index_entries(&s), 10 + 3 + 1);
        s.checkpoint_indexes().unwrap();
        // Slot 9 gathered into the fourth block; links for all ten.
        assert_eq!(index_entries(&s), 10 + 4 + 10);
        let mut t = s.write("default").unwrap();
        let n3 = t.node_by_key("n3").unwrap().unwrap().id;
        t.set_node_property(
            n3,
            "v",
            Value::List(
                wide([3.4, 0.0, 0.0])
                    .into_iter()
                    .map(|x| Value::Float(f64::from(x)))
                    .collect(),
            ),
        )
        .unwrap();
        t.commit().unwrap();
        // The new vector's code alone (slot 10); slot 3 a waypoint.
        assert_eq!(index_entries(&s), 10 + 4 + 1 + 10);
    }
    let s = open(dir.path());
    let r = s.read("default").unwrap();
    assert_eq!(nearest(&r, &wide([3.3, 0.0, 0.0]), 3), ["n3", "n4", "n2"]);
    assert_eq!(nearest(&r, &wide([9.0, 0.0, 0.0]), 1), ["n9"]);
}

#[derive(Debug, Clone)]
enum Step {
    Op(Op),
    Checkpoint,
    Reopen,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// As above, on disk with codes of 16 KiB (three to a block), with
    /// checkpoints and reopenings between the steps: whatever mix of
    /// blocks, loose codes, waypoints and links the entries hold, a reader
    /// finds the exact nearest of what was committed.
    #[test]
    fn blocks_checkpoints_and_reopens_keep_every_vector(
        steps in proptest::collection::vec(prop_oneof![
            8 => op().prop_map(Step::Op),
            1 => Just(Step::Checkpoint),
            1 => Just(Step::Reopen),
        ], 1..50),
        q in any::<[i8; 3]>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = open(dir.path());
        wide_index(&s);
        let q = vec_of(q);
        let mut committed: BTreeMap<u8, [f32; 3]> = BTreeMap::new();
        let mut t = Some(s.write("default").unwrap());
        for step in steps {
            let w = t.as_mut().unwrap();
            match step {
                Step::Op(Op::Put(n, v)) => {
                    let key = format!("n{n}");
                    let id = match w.node_by_key(&key).unwrap() {
                        Some(node) => node.id,
                        None => w.create_node(Some(&key), &["Doc"], &Props::new()).unwrap(),
                    };
                    let list = wide(vec_of(v)).into_iter().map(|x| Value::Float(f64::from(x))).collect();
                    w.set_node_property(id, "v", Value::List(list)).unwrap();
                }
                Step::Op(Op::Delete(n)) => {
                    if let Some(node) = w.node_by_key(&format!("n{n}")).unwrap() {
                        w.delete_node(node.id, DeleteMode::Detach).unwrap();
                    }
                }
                Step::Op(Op::Commit) => {
                    t.take().unwrap().commit().unwrap();
                    committed = model_of(&s);
                }
                Step::Op(Op::Rollback) => t.take().unwrap().rollback(),
                Step::Checkpoint => s.checkpoint_indexes().unwrap(),
                Step::Reopen => {
                    drop(t.take());
                    drop(s);
                    s = open(dir.path());
                }
            }
            if t.is_none() {
                t = Some(s.write("default").unwrap());
            }
            let want = exact(&committed, &q, 5);
            let got = search(&s.read("default").unwrap(), "docs", &wide(q), 5, None, None).unwrap();
            prop_assert_eq!(got.len(), want.len());
            for (h, (d, _)) in got.iter().zip(&want) {
                let gd = 1.0 / h.score - 1.0;
                prop_assert!((gd - f64::from(*d)).abs() < 1e-2 * (1.0 + f64::from(*d)), "{} vs {}", gd, d);
            }
        }
    }
}

/// The committed vectors, read back from the nodes (not from the index).
fn model_of(s: &Storage) -> BTreeMap<u8, [f32; 3]> {
    let r = s.read("default").unwrap();
    let mut m = BTreeMap::new();
    for id in r.nodes_with_label("Doc") {
        let node = r.node(id.unwrap()).unwrap().unwrap();
        if let Some(Value::List(xs)) = node.props.get("v") {
            let f = |i: usize| match xs[i] {
                Value::Float(x) => x as f32,
                _ => f32::NAN,
            };
            m.insert(node.key[1..].parse().unwrap(), [f(0), f(1), f(2)]);
        }
    }
    m
}

/// Found by `blocks_checkpoints_and_reopens_keep_every_vector`: a vector
/// replaced in its own commit is never linked; a checkpoint that wrote
/// (empty) links for its slot made it, at the next open, the graph's entry
/// (its layer is the highest), from which a walk found nothing else.
#[test]
fn a_slot_never_linked_is_not_restored_as_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path());
        wide_index(&s);
        let mut t = s.write("default").unwrap();
        let a = t
            .create_node(Some("a"), &["Doc"], &props(&wide([0.0, 0.0, 0.5])))
            .unwrap();
        let list = wide([0.0, 0.0, 1.5])
            .into_iter()
            .map(|x| Value::Float(f64::from(x)));
        t.set_node_property(a, "v", Value::List(list.collect()))
            .unwrap();
        t.create_node(Some("b"), &["Doc"], &props(&wide([0.0, 0.0, 0.5])))
            .unwrap();
        t.commit().unwrap();
        s.checkpoint_indexes().unwrap();
        let mut t = s.write("default").unwrap();
        for (key, z) in [("c", -0.5), ("d", 0.5), ("e", 0.5), ("f", 0.5), ("g", -5.5)] {
            t.create_node(Some(key), &["Doc"], &props(&wide([0.0, 0.0, z])))
                .unwrap();
        }
        t.commit().unwrap();
    }
    let s = open(dir.path());
    // Fewer than all seven, so that the walk answers (not the exact scan
    // that follows a walk finding too few).
    let mut got = nearest(&s.read("default").unwrap(), &wide([0.0, 0.0, 0.5]), 5);
    got[..4].sort();
    assert_eq!(got[..4], ["b", "d", "e", "f"]);
    assert!(got[4] == "a" || got[4] == "c", "{got:?}");
}

/// 1,500 vectors of 128 components: past the size where scans among many
/// candidates rank them by sign codes and measure only a shortlist. The
/// candidates' nearest are still found (against exact distances computed
/// here), in the committing process and after reopening. (16 clusters, so
/// that every third row covers them all: a query none of whose cluster is
/// among the candidates is far from all of them, and sign codes rank such
/// candidates worse — 71% of the top 10 in the shortlist with 15 clusters
/// at 64 components.)
#[test]
fn searches_among_many_candidates_keep_their_recall() {
    let dim = 128;
    let rows: Vec<Vec<f32>> = plexus_vector::sample::gaussian_mixture(1500, dim, 16, 3)
        .chunks(dim)
        .map(<[f32]>::to_vec)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let check = |s: &Storage| {
        let r = s.read("default").unwrap();
        let mut nodes = Vec::new();
        for i in 0..rows.len() {
            nodes.push(r.node_by_key(&format!("n{i}")).unwrap().unwrap().id);
        }
        // Every third node is a candidate: 500, more than the shortlist.
        let among: Vec<NodeId> = nodes.iter().copied().step_by(3).collect();
        let (mut hit, mut total) = (0, 0);
        for qi in (0..rows.len()).step_by(50) {
            let q = &rows[qi];
            let mut want: Vec<(f32, usize)> = (0..rows.len())
                .step_by(3)
                .map(|i| {
                    let d = rows[i].iter().zip(q).map(|(a, b)| (a - b) * (a - b)).sum();
                    (d, i)
                })
                .collect();
            want.sort_by(|a, b| a.0.total_cmp(&b.0));
            let got =
                plexus_vector_index::search_among(&r, "docs", q, 10, None, &among, None).unwrap();
            assert_eq!(got.len(), 10);
            let got: Vec<NodeId> = got.iter().map(|h| h.node).collect();
            hit += want[..10]
                .iter()
                .filter(|(_, i)| got.contains(&nodes[*i]))
                .count();
            total += 10;
        }
        let share = hit as f64 / total as f64;
        assert!(share >= 0.95, "{share}");
    };
    {
        let s = open(dir.path());
        create_index(&s, dim as i64, "euclidean");
        let mut t = s.write("default").unwrap();
        for (i, v) in rows.iter().enumerate() {
            t.create_node(Some(&format!("n{i}")), &["Doc"], &props(v))
                .unwrap();
        }
        t.commit().unwrap();
        check(&s);
    }
    check(&open(dir.path()));
}

/// Many candidates (more than the shortlist) and a reader from before a
/// node's vector moved far away: the reader must rank the vector it sees,
/// the old one, not the node's newest (which a scan of newest slots,
/// checking visibility only for those it measures, would miss).
#[test]
fn an_old_reader_among_many_candidates_measures_what_it_sees() {
    let dim = 128;
    let rows: Vec<Vec<f32>> = plexus_vector::sample::gaussian_mixture(1500, dim, 16, 5)
        .chunks(dim)
        .map(<[f32]>::to_vec)
        .collect();
    let s = memory();
    create_index(&s, dim as i64, "euclidean");
    let mut t = s.write("default").unwrap();
    let ids: Vec<NodeId> = rows
        .iter()
        .enumerate()
        .map(|(i, v)| {
            t.create_node(Some(&format!("n{i}")), &["Doc"], &props(v))
                .unwrap()
        })
        .collect();
    t.commit().unwrap();
    let nearest = |txn: &dyn GraphRead| -> String {
        let hits =
            plexus_vector_index::search_among(txn, "docs", &rows[0], 1, None, &ids, None).unwrap();
        txn.node(hits[0].node).unwrap().unwrap().key
    };
    let old = s.read("default").unwrap();
    assert_eq!(nearest(&old), "n0");
    let mut t = s.write("default").unwrap();
    t.set_node_property(ids[0], "v", props(&vec![100.0; dim])["v"].clone())
        .unwrap();
    t.commit().unwrap();
    assert_eq!(nearest(&old), "n0", "the reader from before");
    assert_ne!(
        nearest(&s.read("default").unwrap()),
        "n0",
        "a reader from after"
    );
}
