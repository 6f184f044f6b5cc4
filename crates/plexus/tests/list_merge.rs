//! List updates that commute (`WriteTxn::list_add`, `list_remove`, `list_union`): many
//! writers attaching sources to one shared node or relationship do not
//! conflict with each other, yet still conflict with a concurrent write or
//! delete of it, and indexes on the list stay right.

use plexus::{Database, EdgeId, Entity, ErrorKind, GraphRead, NodeId, Params, Props, Value};

/// A database with one `Doc` node, after `schema` ran; the node's list
/// `refs` holds `first` when given.
fn with_doc(schema: Option<&str>, first: Option<&str>) -> (Database, NodeId) {
    let db = Database::in_memory().unwrap();
    if let Some(s) = schema {
        db.query("default", s, &Params::new()).unwrap();
    }
    let mut t = db.write("default").unwrap();
    let n = t.create_node(Some("doc"), &["Doc"], &Props::new()).unwrap();
    if let Some(f) = first {
        t.list_add(n, "refs", Value::from(f)).unwrap();
    }
    t.commit().unwrap();
    (db, n)
}

fn setup(indexed: bool) -> (Database, NodeId) {
    let index = "CREATE INDEX FOR (n:Doc) ON EACH (n.refs)";
    with_doc(indexed.then_some(index), Some("a"))
}

fn refs(db: &Database, n: NodeId) -> Value {
    let r = db.read("default").unwrap();
    r.node_property(n, "refs").unwrap().unwrap_or(Value::Null)
}

fn strings(items: &[&str]) -> Value {
    Value::List(items.iter().map(|s| Value::from(*s)).collect())
}

/// The nodes the list-element index holds under `key`; Cypher, which
/// checks each candidate's list, must find the same.
fn found(db: &Database, key: &str) -> usize {
    let r = db.read("default").unwrap();
    let held = r.find_nodes_with_element(Some("Doc"), "refs", &Value::from(key));
    let held = held.unwrap().len();
    let p = Params::from([("k".to_string(), Value::from(key))]);
    let q = "MATCH (n:Doc) WHERE $k IN n.refs RETURN n";
    assert_eq!(
        db.query("default", q, &p).unwrap().rows.len(),
        held,
        "{key}"
    );
    held
}

/// The list `refs` of a node or relationship, as `r` reads it.
fn list_in(r: &impl GraphRead, of: Entity) -> Option<Value> {
    match of {
        Entity::Node(n) => r.node_property(n, "refs").unwrap(),
        Entity::Edge(e) => r.edge_property(e, "refs").unwrap(),
    }
}

/// Three transactions open at once update the list `refs` (["a"]) of
/// `of`: an add, a union and a remove. All commit, in that order, to
/// ["b", "c"].
fn three_writers_commit(db: &Database, of: Entity) {
    let mut add = db.write("default").unwrap();
    let mut other = db.write("default").unwrap();
    let mut remove = db.write("default").unwrap();
    assert!(add.list_add(of, "refs", Value::from("b")).unwrap());
    // A transaction reads its own update; an update that changes nothing
    // says so.
    assert_eq!(list_in(&add, of), Some(strings(&["a", "b"])));
    assert!(!add.list_add(of, "refs", Value::from("a")).unwrap());
    let union = vec![Value::from("c"), Value::from("a")];
    assert!(other.list_union(of, "refs", union).unwrap());
    assert!(remove.list_remove(of, "refs", Value::from("a")).unwrap());
    add.commit().unwrap();
    other.commit().unwrap();
    remove.commit().unwrap();
    let r = db.read("default").unwrap();
    assert_eq!(list_in(&r, of), Some(strings(&["b", "c"])));
}

#[test]
fn concurrent_list_updates_of_one_node_all_commit() {
    let (db, n) = setup(true);
    three_writers_commit(&db, Entity::Node(n));
    // The list-element index follows the merged list, not each writer's.
    assert_eq!(
        (found(&db, "a"), found(&db, "b"), found(&db, "c")),
        (0, 1, 1)
    );
}

/// A list update of `of` conflicts with `write` of it, whichever commits
/// first, and with `delete` of it.
fn conflicts_with_a_write_or_delete(
    db: &Database,
    of: Entity,
    write: impl Fn(&mut plexus::WriteTxn),
    delete: impl Fn(&mut plexus::WriteTxn),
) {
    for first_writes in [true, false] {
        let mut list = db.write("default").unwrap();
        let mut set = db.write("default").unwrap();
        list.list_add(of, "refs", Value::from("x")).unwrap();
        write(&mut set);
        let (winner, loser) = if first_writes {
            (set, list)
        } else {
            (list, set)
        };
        winner.commit().unwrap();
        assert_eq!(loser.commit().unwrap_err().kind(), ErrorKind::Conflict);
    }
    let mut list = db.write("default").unwrap();
    let mut gone = db.write("default").unwrap();
    list.list_add(of, "refs", Value::from("y")).unwrap();
    delete(&mut gone);
    gone.commit().unwrap();
    assert_eq!(list.commit().unwrap_err().kind(), ErrorKind::Conflict);
}

#[test]
fn a_list_update_still_conflicts_with_a_write_or_delete_of_the_node() {
    let (db, n) = setup(false);
    conflicts_with_a_write_or_delete(
        &db,
        Entity::Node(n),
        |t| t.set_node_property(n, "name", Value::from("doc")).unwrap(),
        |t| assert!(t.delete_node(n, plexus::DeleteMode::Detach).unwrap()),
    );
}

#[test]
fn a_unique_index_on_the_list_keeps_updates_conflicting() {
    let unique = "CREATE CONSTRAINT FOR (n:Doc) REQUIRE n.refs IS UNIQUE";
    let (db, n) = with_doc(Some(unique), None);
    let mut one = db.write("default").unwrap();
    let mut two = db.write("default").unwrap();
    one.list_add(n, "refs", Value::from("a")).unwrap();
    two.list_add(n, "refs", Value::from("b")).unwrap();
    one.commit().unwrap();
    assert_eq!(two.commit().unwrap_err().kind(), ErrorKind::Conflict);
}

#[test]
fn many_threads_attach_sources_to_one_node_without_a_conflict() {
    let (db, n) = setup(true);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut conflicts = 0;
                for i in 0..40 {
                    let mut w = db.write("default").unwrap();
                    w.list_add(n, "refs", Value::from(format!("t{t}-{i}")))
                        .unwrap();
                    match w.commit() {
                        Ok(()) => {}
                        Err(e) if e.kind() == ErrorKind::Conflict => conflicts += 1,
                        Err(e) => panic!("{e}"),
                    }
                }
                conflicts
            })
        })
        .collect();
    let conflicts: u32 = threads.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(conflicts, 0);
    match refs(&db, n) {
        Value::List(items) => assert_eq!(items.len(), 1 + 8 * 40),
        other => panic!("{other:?}"),
    }
    assert_eq!(found(&db, "t7-39"), 1);
    assert_eq!(found(&db, "t0-0"), 1);
}

/// From Cypher: `plexus.list.add` / `plexus.list.remove`, in two explicit
/// transactions open at once, both committing.
#[test]
fn cypher_list_updates_commute_too() {
    let (db, n) = setup(true);
    let call = |t: &mut plexus::Transaction, proc_: &str, k: &str| -> Value {
        let p = Params::from([("k".to_string(), Value::from(k))]);
        let text =
            format!("MATCH (n:Doc) CALL {proc_}(n, 'refs', $k) YIELD changed RETURN changed");
        t.query(&text, &p).unwrap().rows[0][0].clone()
    };
    let s = db.session("default").unwrap();
    let mut one = s.begin().unwrap();
    let mut two = s.begin().unwrap();
    assert_eq!(call(&mut one, "plexus.list.add", "b"), Value::Bool(true));
    assert_eq!(call(&mut one, "plexus.list.add", "b"), Value::Bool(false));
    assert_eq!(call(&mut two, "plexus.list.remove", "a"), Value::Bool(true));
    assert_eq!(call(&mut two, "plexus.list.add", "c"), Value::Bool(true));
    two.commit().unwrap();
    one.commit().unwrap();
    // In commit order: the second transaction's updates, then the first's.
    assert_eq!(refs(&db, n), strings(&["c", "b"]));
    let e = db
        .query(
            "default",
            "MATCH (n:Doc) CALL plexus.list.add(n, 'refs', [1]) YIELD changed RETURN changed",
            &Params::new(),
        )
        .map(|_| ());
    assert!(e.is_ok(), "a list may hold lists: {e:?}");
    let e = db
        .query(
            "default",
            "CALL plexus.list.add(1, 'refs', 'x') YIELD changed RETURN changed",
            &Params::new(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("plexus.list.add"), "{e}");
}

/// `plexus.list.union` adds what the list lacks, in order, in one write;
/// two transactions doing so at once both commit.
#[test]
fn cypher_list_unions_commute() {
    let (db, n) = setup(true);
    let call = |t: &mut plexus::Transaction, ks: &[&str]| -> Value {
        let ks = Value::List(ks.iter().map(|k| Value::from(*k)).collect());
        let p = Params::from([("ks".to_string(), ks)]);
        let text = "MATCH (n:Doc) CALL plexus.list.union(n, 'refs', $ks) YIELD changed \
                    RETURN changed";
        t.query(text, &p).unwrap().rows[0][0].clone()
    };
    let s = db.session("default").unwrap();
    let mut one = s.begin().unwrap();
    let mut two = s.begin().unwrap();
    assert_eq!(call(&mut one, &["b", "a", "c", "b"]), Value::Bool(true));
    assert_eq!(call(&mut one, &["c", "a"]), Value::Bool(false));
    assert_eq!(call(&mut two, &["d", "a"]), Value::Bool(true));
    assert_eq!(call(&mut two, &[]), Value::Bool(false));
    one.commit().unwrap();
    two.commit().unwrap();
    assert_eq!(refs(&db, n), strings(&["a", "b", "c", "d"]));
    assert_eq!(
        found(&db, "d"),
        1,
        "the list-element index follows the merge"
    );
    let e = db
        .query(
            "default",
            "MATCH (n:Doc) CALL plexus.list.union(n, 'refs', 'x') YIELD changed RETURN changed",
            &Params::new(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("must be a list"), "{e}");
}

/// Found by the model below: a remove that changed nothing in its own
/// snapshot must still land after an add that commits before it, as the
/// two would in serial order.
#[test]
fn an_update_that_changed_nothing_in_its_snapshot_still_lands() {
    let (db, n) = with_doc(None, None);
    let mut add = db.write("default").unwrap();
    let mut remove = db.write("default").unwrap();
    assert!(add.list_add(n, "refs", Value::from("k0")).unwrap());
    assert!(!remove.list_remove(n, "refs", Value::from("k0")).unwrap());
    add.commit().unwrap();
    remove.commit().unwrap();
    assert_eq!(refs(&db, n), Value::List(vec![]));
}

/// A merged node's rewrite replaces only its own index entries: a
/// relationship index entry of the same transaction ends in an id too, and
/// one equal to the node's must survive.
#[test]
fn a_merge_keeps_relationship_index_entries_of_the_same_id() {
    let db = Database::in_memory().unwrap();
    db.query(
        "default",
        "CREATE INDEX FOR ()-[r:CITES]-() ON (r.year)",
        &Params::new(),
    )
    .unwrap();
    let mut t = db.write("default").unwrap();
    let mut nodes = Vec::new();
    for i in 0..4 {
        nodes.push(
            t.create_node(Some(&format!("n{i}")), &["Doc"], &Props::new())
                .unwrap(),
        );
    }
    let mut edges = Vec::new();
    for i in 0..4 {
        edges.push(
            t.create_edge(None, nodes[i], nodes[(i + 1) % 4], "CITES", &Props::new())
                .unwrap(),
        );
    }
    t.commit().unwrap();
    // Every pair of a node and a relationship with the same id.
    let mut pairs = 0;
    for n in &nodes {
        let Some(e) = edges.iter().find(|e| e.0 == n.0) else {
            continue;
        };
        pairs += 1;
        let mut t = db.write("default").unwrap();
        assert!(t.list_add(*n, "refs", Value::from("k")).unwrap());
        t.set_edge_property(*e, "year", Value::Int(2000 + n.0 as i64))
            .unwrap();
        t.commit().unwrap();
        let p = Params::from([("y".to_string(), Value::Int(2000 + n.0 as i64))]);
        let q = "MATCH ()-[r:CITES]->() WHERE r.year = $y RETURN r";
        let rows = db.query("default", q, &p).unwrap().rows;
        assert_eq!(rows.len(), 1, "the index lost relationship {}", e.0);
    }
    assert!(pairs > 0, "no node shares an id with a relationship");
}

/// A database with two `Doc` nodes joined by a `CITES` relationship whose
/// list `refs` holds "a", and a list-element index on relationships' `refs`.
fn with_cites() -> (Database, EdgeId) {
    let db = Database::in_memory().unwrap();
    let index = "CREATE INDEX FOR ()-[r]-() ON EACH (r.refs)";
    db.query("default", index, &Params::new()).unwrap();
    let mut t = db.write("default").unwrap();
    let a = t.create_node(Some("a"), &["Doc"], &Props::new()).unwrap();
    let b = t.create_node(Some("b"), &["Doc"], &Props::new()).unwrap();
    let e = t.create_edge(None, a, b, "CITES", &Props::new()).unwrap();
    t.list_add(e, "refs", Value::from("a")).unwrap();
    t.commit().unwrap();
    (db, e)
}

fn edge_refs(db: &Database, e: EdgeId) -> Value {
    let r = db.read("default").unwrap();
    list_in(&r, Entity::Edge(e)).unwrap_or(Value::Null)
}

/// The relationships the list-element index holds under `key`; Cypher,
/// starting from that index and checking each candidate, must find the same.
fn edges_found(db: &Database, key: &str) -> usize {
    let r = db.read("default").unwrap();
    let held = r.find_edges_with_element(None, "refs", &Value::from(key));
    let held = held.unwrap().len();
    let p = Params::from([("k".to_string(), Value::from(key))]);
    let q = "MATCH ()-[r]->() WHERE $k IN r.refs RETURN r";
    let plan = db.query("default", &format!("EXPLAIN {q}"), &p).unwrap();
    assert_eq!(plan.rows[0][1], Value::from("RelationshipIndexSeek"));
    assert_eq!(
        db.query("default", q, &p).unwrap().rows.len(),
        held,
        "{key}"
    );
    held
}

#[test]
fn concurrent_list_updates_of_one_relationship_all_commit() {
    let (db, e) = with_cites();
    three_writers_commit(&db, Entity::Edge(e));
    assert_eq!(
        (
            edges_found(&db, "a"),
            edges_found(&db, "b"),
            edges_found(&db, "c")
        ),
        (0, 1, 1)
    );
    // A value that is not a list is refused, naming the relationship.
    let mut t = db.write("default").unwrap();
    t.set_edge_property(e, "year", Value::Int(1)).unwrap();
    let err = t.list_add(e, "year", Value::from("x")).unwrap_err();
    assert!(err.to_string().contains("relationship"), "{err}");
}

#[test]
fn a_list_update_still_conflicts_with_a_write_or_delete_of_the_relationship() {
    let (db, e) = with_cites();
    conflicts_with_a_write_or_delete(
        &db,
        Entity::Edge(e),
        |t| t.set_edge_property(e, "year", Value::Int(2020)).unwrap(),
        |t| assert!(t.delete_edge(e).unwrap()),
    );
    assert_eq!(edges_found(&db, "y"), 0);
}

/// A remove that found nothing in its snapshot, committed after an add of
/// the same element, leaves neither the element nor its index entry.
#[test]
fn a_relationship_index_follows_the_merged_list() {
    let (db, e) = with_cites();
    let mut add = db.write("default").unwrap();
    let mut remove = db.write("default").unwrap();
    assert!(add.list_add(e, "refs", Value::from("k")).unwrap());
    assert!(!remove.list_remove(e, "refs", Value::from("k")).unwrap());
    add.commit().unwrap();
    remove.commit().unwrap();
    assert_eq!(edge_refs(&db, e), strings(&["a"]));
    assert_eq!(edges_found(&db, "k"), 0);
}

/// From Cypher, on a relationship: two explicit transactions open at once
/// both commit, applied in commit order.
#[test]
fn cypher_list_updates_of_a_relationship_commute() {
    let (db, e) = with_cites();
    let call = |t: &mut plexus::Transaction, proc_: &str, k: Value| -> Value {
        let p = Params::from([("k".to_string(), k)]);
        let text = format!(
            "MATCH ()-[r:CITES]->() CALL {proc_}(r, 'refs', $k) YIELD changed RETURN changed"
        );
        t.query(&text, &p).unwrap().rows[0][0].clone()
    };
    let s = db.session("default").unwrap();
    let mut one = s.begin().unwrap();
    let mut two = s.begin().unwrap();
    assert_eq!(
        call(&mut one, "plexus.list.add", Value::from("b")),
        Value::Bool(true)
    );
    assert_eq!(
        call(&mut two, "plexus.list.remove", Value::from("a")),
        Value::Bool(true)
    );
    assert_eq!(
        call(&mut two, "plexus.list.union", strings(&["c", "d"])),
        Value::Bool(true)
    );
    two.commit().unwrap();
    one.commit().unwrap();
    assert_eq!(edge_refs(&db, e), strings(&["c", "d", "b"]));
    assert_eq!(edges_found(&db, "d"), 1);
}

mod model {
    //! Random transactions of list updates on a few nodes, open at once and
    //! committed in a random order, against a model that applies each
    //! committed transaction's updates, in commit order, to the lists as
    //! they are then. The list-element index must agree with the lists.
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum How {
        Add,
        Remove,
        /// `list_union` of these values and the first.
        Union(Vec<u8>),
    }

    #[derive(Debug, Clone)]
    struct Update {
        /// Which of the three nodes and two relationships.
        node: usize,
        how: How,
        value: u8,
    }

    fn update() -> impl Strategy<Value = Update> {
        let how = prop_oneof![
            Just(How::Add),
            Just(How::Remove),
            prop::collection::vec(0..6u8, 0..4).prop_map(How::Union),
        ];
        (0..5usize, how, 0..6u8).prop_map(|(node, how, value)| Update { node, how, value })
    }

    fn key(v: u8) -> String {
        format!("k{v}")
    }

    /// The values an update names, in order.
    fn values(u: &Update) -> Vec<u8> {
        match &u.how {
            How::Union(more) => std::iter::once(u.value)
                .chain(more.iter().copied())
                .collect(),
            _ => vec![u.value],
        }
    }

    fn apply(list: &mut Vec<String>, u: &Update) {
        for v in values(u).into_iter().map(key) {
            match u.how {
                How::Remove => list.retain(|x| *x != v),
                _ if !list.contains(&v) => list.push(v),
                _ => {}
            }
        }
    }

    proptest! {
        // 64 cases in the suite; PROPTEST_CASES asks for more.
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
            ..ProptestConfig::default()
        })]
        #[test]
        fn merged_lists_equal_the_model(
            txns in prop::collection::vec(prop::collection::vec(update(), 1..6), 1..6),
            order in prop::collection::vec(any::<prop::sample::Index>(), 6),
        ) {
            let db = Database::in_memory().unwrap();
            db.query("default", "CREATE INDEX FOR (n:Doc) ON EACH (n.refs)", &Params::new()).unwrap();
            db.query("default", "CREATE INDEX FOR ()-[r]-() ON EACH (r.refs)", &Params::new()).unwrap();
            let mut t = db.write("default").unwrap();
            let ids: Vec<NodeId> = (0..3)
                .map(|i| t.create_node(Some(&format!("d{i}")), &["Doc"], &Props::new()).unwrap())
                .collect();
            // Three nodes, then two relationships.
            let mut nodes: Vec<Entity> = ids.iter().map(|n| Entity::Node(*n)).collect();
            for (a, b) in [(0, 1), (1, 2)] {
                let e = t.create_edge(None, ids[a], ids[b], "CITES", &Props::new()).unwrap();
                nodes.push(Entity::Edge(e));
            }
            // Each list starts as [k0, k1], so removes find something.
            let first = || vec![Value::from(key(0)), Value::from(key(1))];
            for n in &nodes {
                t.list_union(*n, "refs", first()).unwrap();
            }
            t.commit().unwrap();
            // Every transaction opens before any commits.
            let mut open: Vec<(plexus::WriteTxn, &Vec<Update>)> = txns
                .iter()
                .map(|ups| {
                    let mut w = db.write("default").unwrap();
                    for u in ups {
                        let v = Value::from(key(u.value));
                        let n = nodes[u.node];
                        match u.how {
                            How::Add => w.list_add(n, "refs", v).unwrap(),
                            How::Remove => w.list_remove(n, "refs", v).unwrap(),
                            How::Union(_) => {
                                let vs = values(u).into_iter().map(|v| Value::from(key(v)));
                                w.list_union(n, "refs", vs.collect()).unwrap()
                            }
                        };
                    }
                    (w, ups)
                })
                .collect();
            let mut model: Vec<Vec<String>> = vec![vec![key(0), key(1)]; 5];
            for pick in order.iter().take(txns.len()) {
                let (w, ups) = open.remove(pick.index(open.len()));
                // List updates never conflict with each other.
                w.commit().unwrap();
                for u in ups {
                    apply(&mut model[u.node], u);
                }
            }
            let r = db.read("default").unwrap();
            for (i, n) in nodes.iter().enumerate() {
                let got = match list_in(&r, *n) {
                    Some(Value::List(items)) => items
                        .into_iter()
                        .map(|v| match v {
                            Value::String(s) => s,
                            other => panic!("{other:?}"),
                        })
                        .collect(),
                    None => Vec::new(),
                    Some(other) => panic!("{other:?}"),
                };
                prop_assert_eq!(&got, &model[i], "entity {}", i);
            }
            for value in 0..6 {
                let k = format!("k{value}");
                let members = |lists: &[Vec<String>]| lists.iter().filter(|l| l.contains(&k)).count();
                prop_assert_eq!(found(&db, &k), members(&model[..3]), "node index on {}", k);
                prop_assert_eq!(edges_found(&db, &k), members(&model[3..]), "relationship index on {}", k);
            }
        }
    }
}

/// `list_add_then`: two transactions open at once attach the source `k`
/// to one node, each with its own pipeline run. Both commit, without a
/// conflict; the run of the first to commit goes with `k`, the other's
/// not, as if they had run one after the other (cognee's rule: a run is
/// recorded only where it first attached the source). The list-element
/// index on the runs holds exactly that. Then the same through Cypher's
/// `plexus.list.add(…, then)`.
#[test]
fn an_add_then_adds_the_rest_only_for_the_first_to_commit() {
    let (db, n) = with_doc(Some("CREATE INDEX FOR (n:Doc) ON EACH (n.runs)"), None);
    let attach = |t: &mut plexus::WriteTxn, run: &str| {
        let then = vec![
            ("runs".to_string(), Value::from(run)),
            ("datasets".to_string(), Value::from("d1")),
        ];
        t.list_add_then(n, "refs", Value::from("k"), then, &["datasets"])
            .unwrap()
    };
    let mut first = db.write("default").unwrap();
    let mut second = db.write("default").unwrap();
    // Each adds `k` as far as its snapshot shows.
    assert!(attach(&mut second, "r2"));
    assert!(attach(&mut first, "r1"));
    first.commit().unwrap();
    second.commit().unwrap();
    let r = db.read("default").unwrap();
    let list = |key: &str| r.node_property(n, key).unwrap().unwrap_or(Value::Null);
    assert_eq!(list("refs"), strings(&["k"]));
    assert_eq!(list("runs"), strings(&["r1"]));
    assert_eq!(list("datasets"), strings(&["d1"]));
    let runs_of = |run: &str| {
        r.find_nodes_with_element(Some("Doc"), "runs", &Value::from(run))
            .unwrap()
            .len()
    };
    assert_eq!((runs_of("r1"), runs_of("r2")), (1, 0));
    // A new element brings its runs; the old one brings none again.
    let cypher = "MATCH (n:Doc) CALL plexus.list.add(n, 'refs', $k, {runs: [$run], datasets: \
                  null}) YIELD changed RETURN changed";
    let call = |k: &str, run: &str| {
        let p = Params::from([
            ("k".to_string(), Value::from(k)),
            ("run".to_string(), Value::from(run)),
        ]);
        db.query("default", cypher, &p).unwrap().rows
    };
    assert_eq!(call("k", "r3"), [[Value::Bool(false)]]);
    assert_eq!(call("k2", "r3"), [[Value::Bool(true)]]);
    assert_eq!(refs(&db, n), strings(&["k", "k2"]));
    let r = db.read("default").unwrap();
    assert_eq!(
        r.node_property(n, "runs").unwrap(),
        Some(strings(&["r1", "r3"]))
    );
    // Sorted lists: inserts in order, from transactions committed in any
    // order.
    let mut writers: Vec<plexus::WriteTxn> = ["m", "c", "x", "c"]
        .iter()
        .map(|x| {
            let mut t = db.write("default").unwrap();
            t.list_add_then(n, "sets", Value::from(*x), vec![], &["sets"])
                .unwrap();
            t
        })
        .collect();
    while let Some(t) = writers.pop() {
        t.commit().unwrap();
    }
    let sorted_add = "MATCH (n:Doc) CALL plexus.list.add(n, 'sets', $k, null, ['sets']) \
                      YIELD changed RETURN changed";
    let p = Params::from([("k".to_string(), Value::from("d"))]);
    assert_eq!(
        db.query("default", sorted_add, &p).unwrap().rows,
        [[Value::Bool(true)]]
    );
    let r = db.read("default").unwrap();
    assert_eq!(
        r.node_property(n, "sets").unwrap(),
        Some(strings(&["c", "d", "m", "x"]))
    );
    let e = db
        .query(
            "default",
            "MATCH (n:Doc) CALL plexus.list.add(n, 'refs', 'x', {runs: 'r'}) YIELD changed \
             RETURN changed",
            &Params::new(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadInput, "{e}");
    assert!(e.to_string().contains("'runs'"), "{e}");
}
