//! Behaviour of the graph storage: upserts, deletes, indexes, constraints,
//! index modes, named graphs, isolation, and bad input leaving no trace.

use plexus_common::{ErrorKind, Value, ValueType};
use plexus_storage::*;
use std::ops::Bound;

fn mem() -> Storage {
    Storage::in_memory().unwrap()
}

fn props(pairs: &[(&str, Value)]) -> Props {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Everything a reader can observe of a graph, for "nothing changed" checks.
fn fingerprint(db: &Storage, graph: &str) -> String {
    let r = db.read(graph).unwrap();
    let mut out = String::new();
    for n in r.nodes() {
        out += &format!("{:?}\n", r.node(n.unwrap()).unwrap());
    }
    for e in r.edges() {
        out += &format!("{:?}\n", r.edge(e.unwrap()).unwrap());
    }
    out += &format!(
        "{:?} {:?} {} {}\n",
        r.label_counts().unwrap(),
        r.type_counts().unwrap(),
        r.node_count().unwrap(),
        r.edge_count().unwrap()
    );
    out += &format!("{:?}\n{:?}", r.indexes().unwrap(), r.constraints().unwrap());
    assert!(
        db.check_integrity(graph).unwrap().is_ok(),
        "{:?}",
        db.check_integrity(graph).unwrap()
    );
    out
}

fn sample(db: &Storage) -> (NodeId, NodeId) {
    let mut t = db.write("default").unwrap();
    let a = t
        .create_node(
            Some("a"),
            &["Person"],
            &props(&[("name", "Ann".into()), ("age", 30.into())]),
        )
        .unwrap();
    let b = t
        .create_node(
            Some("b"),
            &["Person", "Admin"],
            &props(&[("name", "Bob".into()), ("age", 40.into())]),
        )
        .unwrap();
    t.create_edge(Some("ab"), a, b, "KNOWS", &props(&[("since", 2020.into())]))
        .unwrap();
    t.commit().unwrap();
    (a, b)
}

/// Nodes created without an id get generated ones that sort in creation
/// order, within a transaction and across transactions, so each goes at
/// the end of the id map.
#[test]
fn generated_node_ids_sort_as_created() {
    let db = mem();
    let mut ids = Vec::new();
    for per in [3, 1, 2] {
        let mut t = db.write("default").unwrap();
        let made: Vec<NodeId> = (0..per)
            .map(|_| t.create_node(None, &[], &Props::new()).unwrap())
            .collect();
        t.commit().unwrap();
        let r = db.read("default").unwrap();
        for n in made {
            ids.push(r.node_user_id(n).unwrap().unwrap());
        }
    }
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(ids, sorted);
}

#[test]
fn upserts_replace_or_merge_as_documented() {
    let db = mem();
    let (a, _) = sample(&db);
    let mut t = db.write("default").unwrap();
    t.merge_node(
        "a",
        &["Admin"],
        &props(&[("age", Value::Null), ("city", "Oslo".into())]),
    )
    .unwrap();
    let n = t.node(a).unwrap().unwrap();
    assert_eq!(n.labels, vec!["Admin", "Person"]);
    assert_eq!(
        n.props,
        props(&[("name", "Ann".into()), ("city", "Oslo".into())])
    );
    t.put_node("a", &["X"], &props(&[("k", 1.into())])).unwrap();
    let n = t.node(a).unwrap().unwrap();
    assert_eq!(n.labels, vec!["X"]);
    assert_eq!(n.props, props(&[("k", 1.into())]));
    t.commit().unwrap();
    let r = db.read("default").unwrap();
    assert_eq!(r.label_count("Person").unwrap(), 1);
    assert_eq!(r.label_count("X").unwrap(), 1);
    assert_eq!(r.node_by_key("a").unwrap().unwrap().id, a);
    assert!(db.check_integrity("default").unwrap().is_ok());
}

#[test]
fn parallel_edges_self_loops_and_degrees() {
    let db = mem();
    let (a, b) = sample(&db);
    let mut t = db.write("default").unwrap();
    t.create_edge(None, a, b, "KNOWS", &Props::new()).unwrap();
    t.create_edge(None, a, a, "SELF", &Props::new()).unwrap();
    t.commit().unwrap();
    let r = db.read("default").unwrap();
    assert_eq!(
        r.neighbors(a, Direction::Out, Some("KNOWS")).unwrap().len(),
        2
    );
    assert_eq!(r.degree(a, Direction::Out, None).unwrap(), 3);
    assert_eq!(r.degree(a, Direction::In, None).unwrap(), 1);
    assert_eq!(
        r.degree(a, Direction::Both, None).unwrap(),
        3,
        "a self-loop counts once"
    );
    assert_eq!(r.neighbors(a, Direction::Both, None).unwrap().len(), 3);
    assert_eq!(r.degree(b, Direction::In, Some("KNOWS")).unwrap(), 2);
    assert_eq!(
        r.type_counts().unwrap(),
        vec![("KNOWS".into(), 2), ("SELF".into(), 1)]
    );
    drop(r);
    let mut t = db.write("default").unwrap();
    assert!(t.delete_node(a, DeleteMode::Detach).unwrap());
    t.commit().unwrap();
    let r = db.read("default").unwrap();
    assert_eq!(r.edge_count().unwrap(), 0);
    assert_eq!(r.degree(b, Direction::Both, None).unwrap(), 0);
    assert!(db.check_integrity("default").unwrap().is_ok());
}

#[test]
fn indexes_answer_exact_range_and_list_lookups() {
    let db = mem();
    sample(&db);
    let mut t = db.write("default").unwrap();
    t.create_index(IndexSpec::property("Person", "age"))
        .unwrap();
    t.create_index(IndexSpec::list("Doc", "tags")).unwrap();
    t.create_node(Some("c"), &["Person"], &props(&[("age", 35.5.into())]))
        .unwrap();
    t.create_node(
        Some("d"),
        &["Doc"],
        &props(&[("tags", Value::from(vec!["x", "y"]))]),
    )
    .unwrap();
    t.create_node(
        Some("e"),
        &["Doc"],
        &props(&[("tags", Value::from(vec!["y"]))]),
    )
    .unwrap();
    t.commit().unwrap();
    let r = db.read("default").unwrap();
    let keys = |ids: Vec<NodeId>| {
        ids.iter()
            .map(|i| r.node(*i).unwrap().unwrap().key)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        keys(r.find_nodes(Some("Person"), "age", &30.into()).unwrap()),
        vec!["a"]
    );
    assert_eq!(
        keys(
            r.find_nodes(Some("Person"), "age", &Value::Float(40.0))
                .unwrap()
        ),
        vec!["b"],
        "1 = 1.0"
    );
    let lo = Value::Int(31);
    assert_eq!(
        keys(
            r.find_nodes_in_range(
                Some("Person"),
                "age",
                Bound::Included(&lo),
                Bound::Unbounded
            )
            .unwrap()
        ),
        vec!["b", "c"]
    );
    let hi = Value::Float(35.5);
    assert_eq!(
        keys(
            r.find_nodes_in_range(
                Some("Person"),
                "age",
                Bound::Excluded(&lo),
                Bound::Excluded(&hi)
            )
            .unwrap()
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        keys(
            r.find_nodes_in_range(
                Some("Person"),
                "age",
                Bound::Unbounded,
                Bound::Included(&hi)
            )
            .unwrap()
        ),
        vec!["a", "c"]
    );
    assert_eq!(
        keys(
            r.find_nodes_with_element(Some("Doc"), "tags", &"y".into())
                .unwrap()
        ),
        vec!["d", "e"]
    );
    let e = r
        .find_nodes(Some("Person"), "name", &"Ann".into())
        .unwrap_err();
    assert!(matches!(e, StorageError::NoIndex(_)), "{e}");
}

#[test]
fn long_values_are_indexed_exactly() {
    let db = mem();
    let mut t = db.write("default").unwrap();
    t.create_index(IndexSpec::property("T", "s")).unwrap();
    let base = "x".repeat(300);
    for (i, suffix) in ["a", "b", "c"].iter().enumerate() {
        t.create_node(
            Some(&format!("n{i}")),
            &["T"],
            &props(&[("s", format!("{base}{suffix}").into())]),
        )
        .unwrap();
    }
    t.commit().unwrap();
    let r = db.read("default").unwrap();
    let hit = r
        .find_nodes(Some("T"), "s", &format!("{base}b").into())
        .unwrap();
    assert_eq!(hit.len(), 1);
    assert_eq!(r.node(hit[0]).unwrap().unwrap().key, "n1");
    let lo: Value = format!("{base}b").into();
    let range = r
        .find_nodes_in_range(Some("T"), "s", Bound::Included(&lo), Bound::Unbounded)
        .unwrap();
    assert_eq!(range.len(), 2);
}

#[test]
fn bad_input_is_refused_and_leaves_nothing() {
    let db = mem();
    let (a, _) = sample(&db);
    {
        let mut t = db.write("default").unwrap();
        t.create_constraint(ConstraintSpec {
            name: None,
            label: "Person".into(),
            key: "name".into(),
            kind: ConstraintKind::Unique,
        })
        .unwrap();
        t.create_index(IndexSpec::property("Person", "age").typed(ValueType::Int))
            .unwrap();
        t.commit().unwrap();
    }
    let before = fingerprint(&db, "default");
    let mut t = db.write("default").unwrap();
    // Each failing operation is undone; the transaction stays usable.
    let e = t
        .create_node(Some("c"), &["Person"], &props(&[("name", "Ann".into())]))
        .unwrap_err();
    assert!(matches!(e, StorageError::UniqueViolation { .. }), "{e}");
    let e = t.create_node(Some("a"), &[], &Props::new()).unwrap_err();
    assert!(matches!(e, StorageError::AlreadyExists { .. }), "{e}");
    let e = t
        .create_edge(None, a, NodeId(999), "KNOWS", &Props::new())
        .unwrap_err();
    assert!(matches!(e, StorageError::NotFound { .. }), "{e}");
    // A node this transaction deleted is no endpoint.
    let gone = t.create_node(Some("gone"), &[], &Props::new()).unwrap();
    t.delete_node(gone, DeleteMode::Refuse).unwrap();
    let e = t
        .create_edge(None, a, gone, "KNOWS", &Props::new())
        .unwrap_err();
    assert!(matches!(e, StorageError::NotFound { .. }), "{e}");
    let e = t
        .create_node(Some("d"), &["Person"], &props(&[("age", "old".into())]))
        .unwrap_err();
    assert!(
        matches!(
            e,
            StorageError::WrongType {
                expected: ValueType::Int,
                found: ValueType::String,
                ..
            }
        ),
        "{e}"
    );
    let e = t.delete_node(a, DeleteMode::Refuse).unwrap_err();
    assert!(matches!(e, StorageError::HasEdges { edges: 1, .. }), "{e}");
    let e = t.put_edge("ab", a, a, "KNOWS", &Props::new()).unwrap_err();
    assert!(matches!(e, StorageError::EdgeMismatch { .. }), "{e}");
    let e = t
        .create_node(Some(&"z".repeat(MAX_ID_LEN + 1)), &[], &Props::new())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadInput);
    t.commit().unwrap();
    assert_eq!(fingerprint(&db, "default"), before);
    assert!(matches!(
        db.write("nope").err().unwrap(),
        StorageError::UnknownGraph(_)
    ));
    // A constraint the data does not satisfy is refused whole.
    let mut t = db.write("default").unwrap();
    t.create_node(Some("dup"), &["City"], &props(&[("n", 1.into())]))
        .unwrap();
    t.create_node(Some("dup2"), &["City"], &props(&[("n", 1.into())]))
        .unwrap();
    let e = t
        .create_constraint(ConstraintSpec {
            name: None,
            label: "City".into(),
            key: "n".into(),
            kind: ConstraintKind::Unique,
        })
        .unwrap_err();
    assert!(matches!(e, StorageError::UniqueViolation { .. }));
    let e = t
        .create_constraint(ConstraintSpec {
            name: None,
            label: "Person".into(),
            key: "zip".into(),
            kind: ConstraintKind::NotNull,
        })
        .unwrap_err();
    assert!(matches!(e, StorageError::NotNullViolation { .. }));
    assert!(t.constraints().unwrap().len() == 1);
    t.rollback();
    assert_eq!(fingerprint(&db, "default"), before);
}

#[test]
fn deferred_indexes_refuse_until_rebuilt() {
    let db = mem();
    sample(&db);
    let mut t = db.write("default").unwrap();
    t.create_index(IndexSpec::property("Person", "age"))
        .unwrap();
    t.commit().unwrap();
    let mut t = db.write("default").unwrap();
    t.set_index_mode(IndexMode::Defer);
    t.create_node(Some("c"), &["Person"], &props(&[("age", 30.into())]))
        .unwrap();
    t.commit().unwrap();
    let r = db.read("default").unwrap();
    assert_eq!(r.stale_indexes(), vec!["idx_Person_age"]);
    assert!(matches!(
        r.find_nodes(Some("Person"), "age", &30.into()),
        Err(StorageError::IndexStale(_))
    ));
    assert!(db.check_integrity("default").unwrap().is_ok());
    assert_eq!(
        db.rebuild_indexes("default").unwrap(),
        vec!["idx_Person_age"]
    );
    let r = db.read("default").unwrap();
    assert_eq!(
        r.find_nodes(Some("Person"), "age", &30.into())
            .unwrap()
            .len(),
        2
    );
    let mut t = db.write("default").unwrap();
    t.set_index_mode(IndexMode::DeferRebuild);
    t.create_node(Some("d"), &["Person"], &props(&[("age", 30.into())]))
        .unwrap();
    t.commit().unwrap();
    let r = db.read("default").unwrap();
    assert!(r.stale_indexes().is_empty());
    assert_eq!(
        r.find_nodes(Some("Person"), "age", &30.into())
            .unwrap()
            .len(),
        3
    );
    assert!(db.check_integrity("default").unwrap().is_ok());
}

#[test]
fn named_graphs_are_isolated() {
    let db = mem();
    sample(&db);
    db.create_graph("other").unwrap();
    assert!(matches!(
        db.create_graph("other"),
        Err(StorageError::GraphExists(_))
    ));
    let mut t = db.write("other").unwrap();
    t.create_node(Some("a"), &["Thing"], &Props::new()).unwrap();
    t.commit().unwrap();
    assert_eq!(db.graphs(), vec!["default", "other"]);
    assert_eq!(db.read("other").unwrap().node_count().unwrap(), 1);
    assert_eq!(db.read("default").unwrap().node_count().unwrap(), 2);
    let stale = db.write("other").unwrap();
    db.drop_graph("other").unwrap();
    assert_eq!(db.graphs(), vec!["default"]);
    assert_eq!(db.read("default").unwrap().node_count().unwrap(), 2);
    let mut stale = stale;
    stale.create_node(Some("late"), &[], &Props::new()).unwrap();
    assert_eq!(
        stale.commit().unwrap_err().kind(),
        ErrorKind::Conflict,
        "writes to a dropped graph fail"
    );
    db.create_graph("other").unwrap();
    assert_eq!(
        db.read("other").unwrap().node_count().unwrap(),
        0,
        "a new graph starts empty"
    );
}

#[test]
fn lost_update_is_prevented() {
    let db = mem();
    let (a, _) = sample(&db);
    let mut t1 = db.write("default").unwrap();
    let mut t2 = db.write("default").unwrap();
    let age1 = t1.node(a).unwrap().unwrap().props["age"].as_int().unwrap();
    let age2 = t2.node(a).unwrap().unwrap().props["age"].as_int().unwrap();
    t1.set_node_property(a, "age", (age1 + 1).into()).unwrap();
    t2.set_node_property(a, "age", (age2 + 1).into()).unwrap();
    t1.commit().unwrap();
    let e = t2.commit().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(
        db.read("default").unwrap().node(a).unwrap().unwrap().props["age"],
        Value::Int(31)
    );
}

/// Two on-call doctors; each transaction checks that the other is on call
/// and takes itself off. Snapshot isolation allows both (write skew);
/// serializable refuses the second.
fn write_skew(iso: Isolation) -> (bool, bool) {
    let db = mem();
    let mut t = db.write("default").unwrap();
    let x = t
        .create_node(Some("x"), &["Doctor"], &props(&[("on_call", true.into())]))
        .unwrap();
    let y = t
        .create_node(Some("y"), &["Doctor"], &props(&[("on_call", true.into())]))
        .unwrap();
    t.commit().unwrap();
    let mut t1 = db.write_with("default", iso).unwrap();
    let mut t2 = db.write_with("default", iso).unwrap();
    assert_eq!(
        t1.node(y).unwrap().unwrap().props["on_call"],
        Value::Bool(true)
    );
    t1.set_node_property(x, "on_call", false.into()).unwrap();
    assert_eq!(
        t2.node(x).unwrap().unwrap().props["on_call"],
        Value::Bool(true)
    );
    t2.set_node_property(y, "on_call", false.into()).unwrap();
    (t1.commit().is_ok(), t2.commit().is_ok())
}

#[test]
fn write_skew_is_allowed_under_snapshot_and_refused_when_serializable() {
    assert_eq!(write_skew(Isolation::Snapshot), (true, true));
    assert_eq!(write_skew(Isolation::Serializable), (true, false));
}

#[test]
fn concurrent_edges_to_a_hub_do_not_conflict_but_a_delete_does() {
    let db = mem();
    let (a, b) = sample(&db);
    let mut t1 = db.write("default").unwrap();
    let mut t2 = db.write("default").unwrap();
    t1.create_edge(None, a, b, "KNOWS", &Props::new()).unwrap();
    t2.create_edge(None, a, b, "KNOWS", &Props::new()).unwrap();
    t1.commit().unwrap();
    t2.commit().unwrap();
    let mut t3 = db.write("default").unwrap();
    let mut t4 = db.write("default").unwrap();
    t3.create_edge(None, a, b, "KNOWS", &Props::new()).unwrap();
    t4.delete_node(b, DeleteMode::Detach).unwrap();
    t3.commit().unwrap();
    assert_eq!(t4.commit().unwrap_err().kind(), ErrorKind::Conflict);
    assert!(db.check_integrity("default").unwrap().is_ok());
}

#[test]
fn readers_keep_their_snapshot_while_writers_commit() {
    let db = mem();
    let (a, _) = sample(&db);
    let r = db.read("default").unwrap();
    let mut t = db.write("default").unwrap();
    t.delete_node(a, DeleteMode::Detach).unwrap();
    t.commit().unwrap();
    assert!(r.node(a).unwrap().is_some());
    assert_eq!(r.edge_count().unwrap(), 1);
    assert!(db.read("default").unwrap().node(a).unwrap().is_none());
}

#[test]
fn many_writer_threads_make_progress() {
    let db = mem();
    sample(&db);
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let db = db.clone();
            std::thread::spawn(move || {
                for j in 0..50 {
                    loop {
                        let mut t = db.write("default").unwrap();
                        let a = t.node_id("a").unwrap().unwrap();
                        let n = t
                            .create_node(Some(&format!("t{i}-{j}")), &["W"], &Props::new())
                            .unwrap();
                        t.create_edge(None, a, n, "MADE", &Props::new()).unwrap();
                        match t.commit() {
                            Ok(()) => break,
                            Err(e) if e.kind() == ErrorKind::Conflict => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let r = db.read("default").unwrap();
    assert_eq!(r.label_count("W").unwrap(), 200);
    let a = r.node_id("a").unwrap().unwrap();
    assert_eq!(r.degree(a, Direction::Out, Some("MADE")).unwrap(), 200);
    assert!(db.check_integrity("default").unwrap().is_ok());
}

#[test]
fn nodes_equal_filters_one_property_in_one_pass() {
    let db = mem();
    let mut t = db.write(DEFAULT_GRAPH).unwrap();
    for i in 0..50i64 {
        let label = if i % 2 == 0 { "Even" } else { "Odd" };
        let mut p = props(&[("grp", Value::Int(i % 5))]);
        if i % 7 == 0 {
            p.remove("grp");
        }
        t.create_node(Some(&format!("n{i}")), &[label], &p).unwrap();
    }
    t.commit().unwrap();
    // The same answer as reading the property of each node.
    let r = db.read(DEFAULT_GRAPH).unwrap();
    let slow = |label: Option<&str>| -> Vec<NodeId> {
        let ids: Vec<NodeId> = match label {
            Some(l) => r.nodes_with_label(l).map(|x| x.unwrap()).collect(),
            None => r.nodes().map(|x| x.unwrap()).collect(),
        };
        ids.into_iter()
            .filter(|n| r.node_property(*n, "grp").unwrap() == Some(Value::Int(3)))
            .collect()
    };
    let fast = |label: Option<&str>| r.nodes_equal(label, "grp", &Value::Int(3)).unwrap();
    assert_eq!(fast(None), slow(None));
    assert_eq!(fast(Some("Odd")), slow(Some("Odd")));
    assert!(!fast(None).is_empty() && fast(Some("Odd")).len() < fast(None).len());
    assert!(fast(Some("NoSuchLabel")).is_empty());
    assert!(r
        .nodes_equal(None, "no_such_key", &Value::Int(3))
        .unwrap()
        .is_empty());
    // Numbers compare as numbers: 3.0 finds the integer 3.
    assert_eq!(
        r.nodes_equal(None, "grp", &Value::Float(3.0)).unwrap(),
        slow(None)
    );
    assert!(r
        .nodes_equal(None, "grp", &Value::Float(3.5))
        .unwrap()
        .is_empty());
    // A write transaction sees its own writes.
    let mut t = db.write(DEFAULT_GRAPH).unwrap();
    let n = t
        .create_node(Some("new"), &["Odd"], &props(&[("grp", Value::Int(3))]))
        .unwrap();
    let seen = t.nodes_equal(Some("Odd"), "grp", &Value::Int(3)).unwrap();
    assert!(seen.contains(&n));
}

/// Many nodes' edges in one read give what one node at a time gives, in
/// each direction, by type, with self-loops and the transaction's own
/// writes.
#[test]
fn neighbors_of_many_nodes_at_once() {
    let db = Storage::in_memory().unwrap();
    let mut t = db.write("default").unwrap();
    let ids: Vec<NodeId> = (0..20)
        .map(|i| {
            t.create_node(Some(&format!("n{i}")), &["N"], &Props::new())
                .unwrap()
        })
        .collect();
    for i in 0..20usize {
        for j in [i * 3 % 20, i * 7 % 20, i] {
            let ty = if j % 2 == 0 { "A" } else { "B" };
            t.create_edge(None, ids[i], ids[j], ty, &Props::new())
                .unwrap();
        }
    }
    t.commit().unwrap();
    let check = |r: &dyn GraphRead| {
        let a = r.type_id("A");
        for dir in [Direction::Out, Direction::In, Direction::Both] {
            for ty in [None, a] {
                let mut many: Vec<Vec<Neighbor>> = Vec::new();
                r.neighbors_many(&ids, dir, ty, &mut many).unwrap();
                assert_eq!(many.len(), ids.len());
                for (n, got) in ids.iter().zip(&many) {
                    let mut one = Vec::new();
                    r.neighbors_into(*n, dir, ty, &mut one).unwrap();
                    assert_eq!(got, &one, "{n:?} {dir:?} {ty:?}");
                }
            }
        }
    };
    check(&db.read("default").unwrap());
    // With writes of its own the transaction merges them.
    let mut w = db.write("default").unwrap();
    w.create_edge(None, ids[1], ids[2], "A", &Props::new())
        .unwrap();
    let e = w.neighbors(ids[3], Direction::Out, None).unwrap()[0].edge;
    w.delete_edge(e).unwrap();
    check(&w);
}

#[test]
fn a_transaction_knows_what_it_deleted() {
    let db = mem();
    let mut t = db.write("default").unwrap();
    let a = t.create_node(Some("a"), &[], &Props::new()).unwrap();
    let b = t.create_node(Some("b"), &[], &Props::new()).unwrap();
    let e = t.create_edge(None, a, b, "R", &Props::new()).unwrap();
    t.commit().unwrap();
    let mut t = db.write("default").unwrap();
    assert!(!t.deleted_node(a) && !t.deleted_edge(e));
    assert!(t.delete_edge(e).unwrap());
    t.delete_node(a, DeleteMode::Refuse).unwrap();
    assert!(t.deleted_node(a) && t.deleted_edge(e));
    assert!(!t.deleted_node(b));
    // Another transaction, and a reader, see nothing of it.
    assert!(!db.write("default").unwrap().deleted_node(a));
    assert!(!db.read("default").unwrap().deleted_node(a));
    t.commit().unwrap();
    assert!(!db.read("default").unwrap().deleted_node(a));
}
