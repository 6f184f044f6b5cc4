//! List-element indexes through Cypher (`CREATE INDEX … ON EACH (n.key)`):
//! `x IN n.key` seeks them (EXPLAIN says so), the answers equal those of
//! the same queries without the index, and writes keep them current.
//! AI-memory clients keep provenance as lists of strings and ask
//! `$key IN n.source_ref_keys` on every delete.

use plexus::{Database, Params, Table, Value};

fn q(db: &Database, text: &str, params: &Params) -> Table {
    db.query("default", text, params)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn key(k: &str) -> Params {
    Params::from([("k".to_string(), Value::from(k))])
}

/// The same random nodes in two databases, one with the index.
fn pair() -> (Database, Database) {
    let (indexed, plain) = (
        Database::in_memory().unwrap(),
        Database::in_memory().unwrap(),
    );
    q(
        &indexed,
        "CREATE INDEX refs FOR (n:Chunk) ON EACH (n.source_ref_keys)",
        &Params::new(),
    );
    // A fixed pseudo-random sequence (an LCG): the same data every run.
    let mut state = 7u64;
    let mut below = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    for i in 0..400 {
        let n = below(4);
        let keys: Vec<Value> = (0..n)
            .map(|_| Value::from(format!("ref{}", below(30))))
            .collect();
        let mut p = Params::from([("i".to_string(), Value::Int(i))]);
        // Some nodes have no list at all, some an empty one.
        let text = if i % 7 == 0 {
            "CREATE (:Chunk {id: $i})"
        } else {
            p.insert("keys".into(), Value::List(keys));
            "CREATE (:Chunk {id: $i, source_ref_keys: $keys})"
        };
        for db in [&indexed, &plain] {
            q(db, text, &p);
        }
    }
    (indexed, plain)
}

const FIND: &str = "MATCH (n:Chunk) WHERE $k IN n.source_ref_keys RETURN n.id AS id ORDER BY id";

#[test]
fn a_list_element_index_answers_in_as_a_scan_does() {
    let (indexed, plain) = pair();
    let plan = q(&indexed, &format!("EXPLAIN {FIND}"), &key("ref3"));
    assert_eq!(
        plan.rows[0][1],
        Value::from("NodeListElementSeek"),
        "{plan:?}"
    );
    let scan = q(&plain, &format!("EXPLAIN {FIND}"), &key("ref3"));
    // Without the index: the property's column, the WHERE once per list.
    assert_eq!(
        scan.rows[0][1],
        Value::from("NodePropertyFilterScan"),
        "{scan:?}"
    );
    let mut found = 0;
    for k in (0..32).map(|i| format!("ref{i}")) {
        let a = q(&indexed, FIND, &key(&k));
        assert_eq!(a.rows, q(&plain, FIND, &key(&k)).rows, "{k}");
        found += a.rows.len();
    }
    assert!(found > 300, "the keys were found: {found}");
    // With other conjuncts, and null, which is in no list.
    let both = "MATCH (n:Chunk) WHERE $k IN n.source_ref_keys AND n.id > 100 RETURN count(*) AS c";
    assert_eq!(
        q(&indexed, both, &key("ref5")).rows,
        q(&plain, both, &key("ref5")).rows
    );
    let null = Params::from([("k".to_string(), Value::Null)]);
    assert_eq!(q(&indexed, FIND, &null).rows.len(), 0);
    let idx = q(&indexed, "SHOW INDEXES", &Params::new());
    assert!(format!("{idx:?}").contains("LIST ELEMENT"), "{idx:?}");
}

#[test]
fn writes_keep_a_list_element_index_current() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    q(&db, "CREATE INDEX FOR (n:Chunk) ON EACH (n.refs)", &none);
    q(
        &db,
        "CREATE (:Chunk {id: 1, refs: ['a', 'b']}), (:Chunk {id: 2, refs: [1, 2]})",
        &none,
    );
    let ids = |k: Value| -> Vec<Vec<Value>> {
        let p = Params::from([("k".to_string(), k)]);
        q(
            &db,
            "MATCH (n:Chunk) WHERE $k IN n.refs RETURN n.id ORDER BY n.id",
            &p,
        )
        .rows
    };
    assert_eq!(ids(Value::from("a")), vec![vec![Value::Int(1)]]);
    // Cypher's equality: 2.0 is in [1, 2].
    assert_eq!(ids(Value::Float(2.0)), vec![vec![Value::Int(2)]]);
    q(
        &db,
        "MATCH (n:Chunk {id: 1}) SET n.refs = [x IN n.refs WHERE x <> 'a'] + 'c'",
        &none,
    );
    assert!(ids(Value::from("a")).is_empty());
    assert_eq!(ids(Value::from("c")), vec![vec![Value::Int(1)]]);
    q(&db, "MATCH (n:Chunk {id: 1}) REMOVE n.refs", &none);
    assert!(ids(Value::from("b")).is_empty());
    q(&db, "MATCH (n:Chunk {id: 2}) DETACH DELETE n", &none);
    assert!(ids(Value::Int(1)).is_empty());
    let e = db
        .query(
            "default",
            "CREATE VECTOR INDEX FOR (n:Chunk) ON EACH (n.v)",
            &none,
        )
        .unwrap_err();
    assert!(e.to_string().contains("ON EACH"), "{e}");
}

/// Vector search scoped to node sets (cognee's `belongs_to_set` lists):
/// the `WHERE` on the yielded node takes its candidates from the
/// list-element index, and the search returns the k nearest members —
/// the same nodes an exact scan of the members ranks first.
#[test]
fn vector_search_scoped_to_node_sets() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    q(
        &db,
        "CREATE VECTOR INDEX emb FOR (n:Chunk) ON n.v \
         OPTIONS {indexConfig: {`vector.dimensions`: 2, `vector.similarity_function`: 'cosine'}}",
        &none,
    );
    q(
        &db,
        "CREATE INDEX sets FOR (n:Chunk) ON EACH (n.belongs_to_set)",
        &none,
    );
    // Node i points at angle i degrees; its sets follow i.
    let sets_of = |i: i64| -> Vec<&'static str> {
        let mut s = vec![if i % 3 == 0 { "A" } else { "B" }];
        if i % 5 == 0 {
            s.push("C");
        }
        s
    };
    for i in 0..360 {
        let a = (i as f64).to_radians();
        let p = Params::from([
            ("i".to_string(), Value::Int(i)),
            (
                "v".to_string(),
                Value::List(vec![Value::Float(a.cos()), Value::Float(a.sin())]),
            ),
            (
                "s".to_string(),
                Value::List(sets_of(i).into_iter().map(Value::from).collect()),
            ),
        ]);
        q(
            &db,
            "CREATE (:Chunk {id: $i, v: $v, belongs_to_set: $s})",
            &p,
        );
    }
    // The query points at 100 degrees: members ranked by angular distance.
    let q_angle = 100i64;
    let expect = |member: &dyn Fn(i64) -> bool| -> Vec<Value> {
        let mut ids: Vec<i64> = (0..360).filter(|i| member(*i)).collect();
        ids.sort_by_key(|i| ((i - q_angle).abs().min(360 - (i - q_angle).abs()), *i));
        let mut top: Vec<i64> = ids.into_iter().take(4).collect();
        top.sort();
        top.into_iter().map(Value::Int).collect()
    };
    let a = (q_angle as f64).to_radians();
    let qp = Params::from([(
        "q".to_string(),
        Value::List(vec![Value::Float(a.cos()), Value::Float(a.sin())]),
    )]);
    let search = |filter: &str| -> Vec<Value> {
        let text = format!(
            "CALL db.index.vector.queryNodes('emb', 4, $q) YIELD node WHERE {filter} \
             RETURN node.id AS id ORDER BY id"
        );
        q(&db, &text, &qp)
            .rows
            .into_iter()
            .map(|r| r[0].clone())
            .collect()
    };
    assert_eq!(
        search("'A' IN node.belongs_to_set"),
        expect(&|i| i % 3 == 0)
    );
    assert_eq!(
        search("'A' IN node.belongs_to_set AND 'C' IN node.belongs_to_set"),
        expect(&|i| i % 15 == 0)
    );
    assert_eq!(
        search("('A' IN node.belongs_to_set OR 'C' IN node.belongs_to_set)"),
        expect(&|i| i % 3 == 0 || i % 5 == 0)
    );
    assert_eq!(search("'Z' IN node.belongs_to_set"), Vec::<Value>::new());
}

/// An index of one label does not answer a pattern without a label: the
/// nodes without that label would be missed (a bug found when indexes of
/// every relationship type were added).
#[test]
fn a_labelled_index_does_not_answer_for_every_node() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    q(&db, "CREATE INDEX FOR (n:A) ON (n.x)", &none);
    q(&db, "CREATE INDEX FOR (n:A) ON EACH (n.xs)", &none);
    q(
        &db,
        "CREATE (:A {x: 1, xs: [1]}), (:B {x: 1, xs: [1]}), ({x: 1, xs: [1]})",
        &none,
    );
    for text in [
        "MATCH (n) WHERE n.x = 1 RETURN count(n)",
        "MATCH (n {x: 1}) RETURN count(n)",
        "MATCH (n) WHERE 1 IN n.xs RETURN count(n)",
    ] {
        assert_eq!(
            q(&db, text, &none).rows,
            vec![vec![Value::Int(3)]],
            "{text}"
        );
    }
    assert_eq!(
        q(&db, "MATCH (n:A) WHERE n.x = 1 RETURN count(n)", &none).rows,
        vec![vec![Value::Int(1)]]
    );
    // An index of every node (`FOR (n)`) answers them all.
    q(&db, "CREATE INDEX FOR (n) ON EACH (n.xs)", &none);
    let text = "MATCH (n) WHERE 1 IN n.xs RETURN count(n)";
    let plan = q(&db, &format!("EXPLAIN {text}"), &none);
    assert_eq!(
        plan.rows[0][1],
        Value::from("NodeListElementSeek"),
        "{plan:?}"
    );
    assert_eq!(q(&db, text, &none).rows, vec![vec![Value::Int(3)]]);
}

/// A vector search whose `WHERE` a list-element index of the vector index's
/// label answers returns the same ten members an exact ranking of the
/// members puts first, for every query. The search takes its candidates
/// from that index (`candidates` in `exec.rs`, given the vector index's
/// label); at this size a walk would find the same ten, so which way it
/// went shows only at scale (`plexus-bench memory` at 1M nodes).
#[test]
fn vector_search_takes_its_candidates_from_the_labels_list_index() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    q(
        &db,
        "CREATE VECTOR INDEX emb FOR (n:Chunk) ON n.v \
         OPTIONS {indexConfig: {`vector.dimensions`: 8, `vector.similarity_function`: 'cosine'}}",
        &none,
    );
    q(
        &db,
        "CREATE INDEX sets FOR (n:Chunk) ON EACH (n.sets)",
        &none,
    );
    let mut state = 17u64;
    let mut unit = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let rows: Vec<Value> = (0..6000)
        .map(|i| {
            let v: Vec<Value> = (0..8).map(|_| Value::Float(unit() - 0.5)).collect();
            let sets = if i % 97 == 0 {
                vec!["rare"]
            } else {
                vec!["common"]
            };
            Value::Map(
                [
                    ("id".to_string(), Value::Int(i)),
                    ("v".to_string(), Value::List(v)),
                    (
                        "sets".to_string(),
                        Value::List(sets.into_iter().map(Value::from).collect()),
                    ),
                ]
                .into_iter()
                .collect(),
            )
        })
        .collect();
    q(
        &db,
        "UNWIND $rows AS r CREATE (:Chunk {id: r.id, v: r.v, sets: r.sets})",
        &Params::from([("rows".to_string(), Value::List(rows))]),
    );
    for _ in 0..30 {
        let query: Vec<Value> = (0..8).map(|_| Value::Float(unit() - 0.5)).collect();
        let p = Params::from([("q".to_string(), Value::List(query))]);
        let found = q(
            &db,
            "CALL db.index.vector.queryNodes('emb', 10, $q) YIELD node WHERE 'rare' IN node.sets \
             RETURN node.id AS id ORDER BY id",
            &p,
        );
        let exact = q(
            &db,
            "MATCH (n:Chunk) WHERE 'rare' IN n.sets \
             WITH n ORDER BY vector.similarity.cosine(n.v, $q) DESC LIMIT 10 \
             RETURN n.id AS id ORDER BY id",
            &p,
        );
        assert_eq!(found.rows, exact.rows);
    }
}
