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
    assert_eq!(scan.rows[0][1], Value::from("NodeByLabelScan"), "{scan:?}");
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
