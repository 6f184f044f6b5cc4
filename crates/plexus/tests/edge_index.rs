//! Relationship property indexes (`CREATE INDEX … FOR ()-[r:T]-() ON
//! (r.key)`, and `ON EACH (r.key)` for list elements): `r.key = $v`,
//! `$v IN r.key` and `[r:T {key: $v}]` start the walk from the
//! relationships they find (EXPLAIN says `RelationshipIndexSeek`), the
//! answers equal those of the same queries without the indexes in every
//! direction and position, and writes keep the indexes current. AI-memory
//! clients ask which relationships carry a source key, or an `edge_text`,
//! on every delete.

use plexus::{Database, Params, Table, Value};

fn q(db: &Database, text: &str, params: &Params) -> Table {
    db.query("default", text, params)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn k(v: Value) -> Params {
    Params::from([("k".to_string(), v)])
}

const INDEXES: [&str; 5] = [
    "CREATE INDEX texts FOR ()-[r:T]-() ON (r.edge_text)",
    "CREATE INDEX texts_u FOR ()-[r:U]-() ON (r.edge_text)",
    "CREATE INDEX refs FOR ()-[r:T]-() ON EACH (r.refs)",
    "CREATE INDEX refs_u FOR ()-[r:U]-() ON EACH (r.refs)",
    "CREATE INDEX weights FOR ()-[r:T]-() ON (r.w)",
];

/// Random relationships in two databases; the first gets the indexes,
/// half of them before the data and half after (filled from it).
fn pair() -> (Database, Database) {
    let (indexed, plain) = (
        Database::in_memory().unwrap(),
        Database::in_memory().unwrap(),
    );
    for text in &INDEXES[..2] {
        q(&indexed, text, &Params::new());
    }
    // A fixed pseudo-random sequence (an LCG): the same data every run.
    let mut state = 11u64;
    let mut below = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    for db in [&indexed, &plain] {
        q(
            db,
            "UNWIND range(0, 59) AS i CREATE (:N {id: i})",
            &Params::new(),
        );
    }
    for i in 0..300 {
        let refs: Vec<Value> = (0..below(4))
            .map(|_| Value::from(format!("ref{}", below(20))))
            .collect();
        let w = if below(2) == 0 {
            Value::Int(below(5) as i64)
        } else {
            Value::Float(below(5) as f64)
        };
        let p = Params::from([
            ("i".to_string(), Value::Int(i)),
            ("a".to_string(), Value::Int(below(60) as i64)),
            ("b".to_string(), Value::Int(below(60) as i64)),
            (
                "text".to_string(),
                Value::from(format!("text{}", below(12))),
            ),
            ("refs".to_string(), Value::List(refs)),
            ("w".to_string(), w),
        ]);
        // Some relationships lack a property, or have a null list.
        let text = match i % 9 {
            0 => "MATCH (a:N {id: $a}), (b:N {id: $b}) CREATE (a)-[:T {id: $i}]->(b)",
            1..=3 => {
                "MATCH (a:N {id: $a}), (b:N {id: $b}) \
                 CREATE (a)-[:U {id: $i, edge_text: $text, refs: $refs}]->(b)"
            }
            _ => {
                "MATCH (a:N {id: $a}), (b:N {id: $b}) \
                 CREATE (a)-[:T {id: $i, edge_text: $text, refs: $refs, w: $w}]->(b)"
            }
        };
        for db in [&indexed, &plain] {
            q(db, text, &p);
        }
    }
    for text in &INDEXES[2..] {
        q(&indexed, text, &Params::new());
    }
    (indexed, plain)
}

/// Queries that a relationship seek can start, each with the value it asks for.
fn queries() -> Vec<(&'static str, Value)> {
    let text = Value::from("text3");
    let reference = Value::from("ref7");
    vec![
        (
            "MATCH (a)-[r:T]->(b) WHERE r.edge_text = $k RETURN a.id, b.id, r.id ORDER BY r.id",
            text.clone(),
        ),
        (
            "MATCH (a)<-[r:T]-(b) WHERE r.edge_text = $k RETURN a.id, b.id, r.id ORDER BY r.id",
            text.clone(),
        ),
        (
            "MATCH (a)-[r:T]-(b) WHERE r.edge_text = $k RETURN a.id, b.id, r.id ORDER BY r.id, a.id",
            text.clone(),
        ),
        (
            "MATCH (a)-[r:T|U]->(b) WHERE r.edge_text = $k RETURN r.id ORDER BY r.id",
            text.clone(),
        ),
        (
            "MATCH (a)-[r:T {edge_text: $k}]->(b) RETURN r.id ORDER BY r.id",
            text.clone(),
        ),
        (
            "MATCH (a)-[r:T]->(b)-[s:U]->(c) WHERE r.edge_text = $k \
             RETURN r.id, s.id, c.id ORDER BY r.id, s.id",
            text.clone(),
        ),
        (
            "MATCH (c)-[s:U]->(a)-[r:T]->(b) WHERE r.edge_text = $k \
             RETURN r.id, s.id, c.id ORDER BY r.id, s.id",
            text.clone(),
        ),
        (
            "MATCH ()-[r:T]->() WHERE r.edge_text = $k RETURN count(*) AS c",
            text.clone(),
        ),
        (
            "MATCH (a)-[r:T]->(b) WHERE $k IN r.refs RETURN r.id ORDER BY r.id",
            reference.clone(),
        ),
        (
            "MATCH (a)-[r:T|U]-(b) WHERE $k IN r.refs AND a.id < 30 \
             RETURN r.id, a.id ORDER BY r.id, a.id",
            reference.clone(),
        ),
        (
            "MATCH (a)-[r:T]->(b) WHERE r.w = $k RETURN r.id ORDER BY r.id",
            Value::Int(2),
        ),
        (
            "MATCH (a)-[r:T]->(b) WHERE r.w = $k RETURN r.id ORDER BY r.id",
            Value::Float(3.0),
        ),
        (
            "MATCH (a)-[r:T]->(b) WHERE r.edge_text = $k RETURN r.id",
            Value::Null,
        ),
        // Ranges seek the same indexes (integers and floats are one range).
        (
            "MATCH (a)-[r:T]->(b) WHERE r.w >= $k RETURN r.id, r.w ORDER BY r.id",
            Value::Int(3),
        ),
        (
            "MATCH (a)-[r:T]-(b) WHERE r.w > $k AND r.w < 3.5 \
             RETURN r.id, a.id ORDER BY r.id, a.id",
            Value::Float(0.5),
        ),
        (
            "MATCH (a)<-[r:T]-(b) WHERE $k > r.w RETURN r.id ORDER BY r.id",
            Value::Int(2),
        ),
        (
            "MATCH (a)-[r:T|U]->(b) WHERE r.edge_text <= $k RETURN r.id ORDER BY r.id",
            Value::from("text3"),
        ),
        (
            "MATCH (c)-[s:U]->(a)-[r:T]->(b) WHERE r.w < $k \
             RETURN r.id, s.id ORDER BY r.id, s.id",
            Value::Int(2),
        ),
        (
            "MATCH ()-[r:T]->() WHERE r.w >= $k RETURN count(*) AS c",
            Value::Float(2.5),
        ),
        (
            "MATCH ()-[r:T]->() WHERE r.w >= $k RETURN count(*) AS c",
            Value::from("a"),
        ),
    ]
}

fn agree(indexed: &Database, plain: &Database) -> usize {
    let mut found = 0;
    for (text, v) in queries() {
        let a = q(indexed, text, &k(v.clone()));
        assert_eq!(
            a.rows,
            q(plain, text, &k(v.clone())).rows,
            "{text} with {v:?}"
        );
        found += a.rows.len();
    }
    found
}

fn first_operator(db: &Database, text: &str, v: Value) -> Value {
    q(db, &format!("EXPLAIN {text}"), &k(v)).rows[0][1].clone()
}

#[test]
fn relationship_indexes_answer_as_a_walk_does() {
    let (indexed, plain) = pair();
    for (text, v) in queries() {
        assert_eq!(
            first_operator(&indexed, text, v.clone()),
            Value::from("RelationshipIndexSeek"),
            "{text}"
        );
        assert_ne!(
            first_operator(&plain, text, v),
            Value::from("RelationshipIndexSeek"),
            "{text}"
        );
    }
    let found = agree(&indexed, &plain);
    assert!(found > 100, "the queries found relationships: {found}");
    assert!(indexed.check("default").unwrap().is_ok());
}

#[test]
fn writes_keep_relationship_indexes_current() {
    let (indexed, plain) = pair();
    let changes = [
        "MATCH ()-[r:T]->() WHERE r.id % 5 = 0 SET r.edge_text = 'text3'",
        "MATCH ()-[r:T]->() WHERE r.id % 7 = 0 REMOVE r.edge_text",
        "MATCH ()-[r:T]->() WHERE r.id % 11 = 0 SET r.refs = ['ref7']",
        "MATCH ()-[r:U]->() WHERE r.id % 4 = 1 DELETE r",
        "MATCH (n:N) WHERE n.id % 13 = 0 DETACH DELETE n",
        "MATCH (a:N {id: 1}), (b:N {id: 2}) CREATE (a)-[:T {id: 1000, edge_text: 'text3', refs: ['ref7'], w: 2.0}]->(b)",
    ];
    for text in changes {
        for db in [&indexed, &plain] {
            q(db, text, &Params::new());
        }
        agree(&indexed, &plain);
    }
    assert!(indexed.check("default").unwrap().is_ok());
}

#[test]
fn relationship_index_definitions_and_errors() {
    let db = Database::in_memory().unwrap();
    for text in INDEXES {
        q(&db, text, &Params::new());
    }
    let shown = q(&db, "SHOW INDEXES", &Params::new());
    let col = |c: &str| shown.columns.iter().position(|x| x == c).unwrap();
    let (name, kind, entity) = (col("name"), col("type"), col("entityType"));
    let mut rows: Vec<Vec<Value>> = shown
        .rows
        .iter()
        .filter(|r| r[name] == "texts".into() || r[name] == "refs".into())
        .map(|r| vec![r[name].clone(), r[kind].clone(), r[entity].clone()])
        .collect();
    rows.sort_by_key(|r| r[0].to_string());
    assert_eq!(
        rows,
        vec![
            vec!["refs".into(), "LIST ELEMENT".into(), "RELATIONSHIP".into()],
            vec!["texts".into(), "RANGE".into(), "RELATIONSHIP".into()],
        ]
    );
    // A list-element index refuses a value that is not a list, naming it.
    let err = db
        .query(
            "default",
            "CREATE (a)-[:T {refs: 'one'}]->(b)",
            &Params::new(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("refs") && err.contains("LIST"), "{err}");
    assert_eq!(
        q(&db, "MATCH ()-[r]->() RETURN count(r) AS c", &Params::new()).rows,
        vec![vec![Value::Int(0)]],
        "nothing of the failed statement stays"
    );
    let err = db
        .query(
            "default",
            "CREATE CONSTRAINT FOR ()-[r:T]-() REQUIRE r.id IS UNIQUE",
            &Params::new(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("constraints are on nodes"), "{err}");
}

/// The Rust API finds relationships through the same indexes.
#[test]
fn the_rust_api_finds_relationships_by_property() {
    use plexus::GraphRead;
    let (indexed, plain) = pair();
    let r = indexed.read("default").unwrap();
    let by_text = r
        .find_edges(Some("T"), "edge_text", &"text3".into())
        .unwrap();
    let by_ref = r
        .find_edges_with_element(Some("U"), "refs", &"ref7".into())
        .unwrap();
    let count = |text: &str| match &q(&plain, text, &Params::new()).rows[0][0] {
        Value::Int(n) => *n as usize,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        by_text.len(),
        count("MATCH ()-[r:T]->() WHERE r.edge_text = 'text3' RETURN count(r)")
    );
    assert_eq!(
        by_ref.len(),
        count("MATCH ()-[r:U]->() WHERE 'ref7' IN r.refs RETURN count(r)")
    );
    let (two, three) = (Value::Int(2), Value::Float(3.0));
    let between = r
        .find_edges_in_range(
            Some("T"),
            "w",
            std::ops::Bound::Included(&two),
            std::ops::Bound::Excluded(&three),
        )
        .unwrap();
    assert_eq!(
        between.len(),
        count("MATCH ()-[r:T]->() WHERE r.w >= 2 AND r.w < 3.0 RETURN count(r)")
    );
    assert!(!between.is_empty());
    let err = r
        .find_edges(Some("U"), "w", &2.into())
        .unwrap_err()
        .to_string();
    assert!(err.contains("relationship property index on :U.w"), "{err}");
}

/// Relationships an import loads are indexed when it returns, and the
/// indexes' definitions and entries survive reopening the database.
#[test]
fn imported_relationships_are_indexed_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes.csv");
    std::fs::write(&nodes, "id:ID,:LABEL\na,N\nb,N\nc,N\n").unwrap();
    let edges = dir.path().join("edges.csv");
    std::fs::write(
        &edges,
        ":START_ID,:END_ID,:TYPE,edge_text,refs:STRING[]\n\
         a,b,T,knows,r1;r2\nb,c,T,likes,r2\na,c,T,knows,r3\n",
    )
    .unwrap();
    let path = dir.path().join("db");
    let find = "MATCH (a)-[r:T]->(b) WHERE $k IN r.refs RETURN elementId(a), elementId(b) ORDER BY elementId(b)";
    {
        let db = plexus::Database::create(&path, Default::default()).unwrap();
        q(&db, INDEXES[0], &Params::new());
        q(&db, INDEXES[2], &Params::new());
        db.import(
            "default",
            &[plexus::ingest::Input::parse(nodes.to_str().unwrap())],
            &[plexus::ingest::Input::parse(edges.to_str().unwrap())],
            &Default::default(),
            &mut |_| {},
            None,
        )
        .unwrap();
        assert!(db.check("default").unwrap().is_ok());
    }
    let db = plexus::Database::open(&path, Default::default()).unwrap();
    assert_eq!(
        first_operator(&db, find, "r2".into()),
        Value::from("RelationshipIndexSeek")
    );
    assert_eq!(
        q(&db, find, &k("r2".into())).rows,
        vec![vec!["a".into(), "b".into()], vec!["b".into(), "c".into()]]
    );
    let texts = "MATCH ()-[r:T {edge_text: $k}]->() RETURN count(*)";
    assert_eq!(
        q(&db, texts, &k("knows".into())).rows,
        vec![vec![Value::Int(2)]]
    );
    assert!(db.check("default").unwrap().is_ok());
}

/// An index of every relationship type (`FOR ()-[r]-()`) serves a pattern
/// that names no type, and one that names types.
#[test]
fn an_index_of_every_type_serves_untyped_patterns() {
    let (indexed, plain) = pair();
    q(
        &indexed,
        "CREATE INDEX any_refs FOR ()-[r]-() ON EACH (r.refs)",
        &Params::new(),
    );
    let untyped = "MATCH (a)-[r]->(b) WHERE $k IN r.refs RETURN r.id, type(r) ORDER BY r.id";
    assert_eq!(
        first_operator(&indexed, untyped, "ref4".into()),
        Value::from("RelationshipIndexSeek")
    );
    for key in ["ref4", "ref11", "nothing"] {
        assert_eq!(
            q(&indexed, untyped, &k(key.into())).rows,
            q(&plain, untyped, &k(key.into())).rows
        );
    }
    q(
        &indexed,
        "MATCH ()-[r:U]->() SET r.refs = ['ref4']",
        &Params::new(),
    );
    q(
        &plain,
        "MATCH ()-[r:U]->() SET r.refs = ['ref4']",
        &Params::new(),
    );
    assert_eq!(
        q(&indexed, untyped, &k("ref4".into())).rows,
        q(&plain, untyped, &k("ref4".into())).rows
    );
    assert!(indexed.check("default").unwrap().is_ok());
}

/// A range on a key that an index of every type holds: with no type, and
/// with one type (the index's entries are then narrowed to it).
#[test]
fn an_index_of_every_type_serves_ranges() {
    let (indexed, plain) = pair();
    q(
        &indexed,
        "CREATE INDEX any_ids FOR ()-[r]-() ON (r.id)",
        &Params::new(),
    );
    let texts = [
        "MATCH (a)-[r]->(b) WHERE r.id >= $k AND r.id < 150 RETURN r.id, type(r) ORDER BY r.id",
        "MATCH (a)-[r:U]->(b) WHERE r.id < $k RETURN r.id, a.id ORDER BY r.id",
        "MATCH (a)-[r:T|U]-(b) WHERE r.id > $k RETURN count(*) AS c",
    ];
    for text in texts {
        assert_eq!(
            first_operator(&indexed, text, Value::Int(100)),
            Value::from("RelationshipIndexSeek"),
            "{text}"
        );
        for v in [Value::Int(100), Value::Float(40.5), Value::Int(-3)] {
            let got = q(&indexed, text, &k(v.clone())).rows;
            assert_eq!(
                got,
                q(&plain, text, &k(v.clone())).rows,
                "{text} with {v:?}"
            );
        }
    }
    let u = q(&indexed, texts[1], &k(Value::Int(100))).rows;
    assert!(u.len() > 10, "the U relationships below 100: {}", u.len());
}
