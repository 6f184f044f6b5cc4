//! Cypher beyond openCypher 9 that GraphRAG clients send: Neo4j 5.26's
//! dynamic labels (`SET n:$(expr)`, graphiti).

use plexus::{Database, Params, Value};

fn q(db: &Database, text: &str, params: &Params) -> Result<Vec<Vec<Value>>, plexus::Error> {
    Ok(db.query("default", text, params)?.rows)
}

fn s(x: &str) -> Value {
    Value::String(x.into())
}

#[test]
fn dynamic_labels_are_set_and_removed() {
    let db = Database::in_memory().unwrap();
    let p = Params::from([
        (
            "labels".to_string(),
            Value::List(vec![s("Entity"), s("Person")]),
        ),
        ("one".to_string(), s("Admin")),
    ]);
    // As graphiti writes nodes.
    q(&db, "CREATE (n:Base {id: 1}) SET n:$($labels)", &p).unwrap();
    q(&db, "MATCH (n {id: 1}) SET n:$($one):Static", &p).unwrap();
    let labels = q(&db, "MATCH (n {id: 1}) RETURN labels(n) AS l", &p).unwrap();
    assert_eq!(
        labels,
        vec![vec![Value::List(vec![
            s("Admin"),
            s("Base"),
            s("Entity"),
            s("Person"),
            s("Static")
        ])]]
    );
    q(
        &db,
        "MATCH (n {id: 1}) REMOVE n:$($labels), n:$('Static')",
        &p,
    )
    .unwrap();
    let labels = q(&db, "MATCH (n {id: 1}) RETURN labels(n) AS l", &p).unwrap();
    assert_eq!(labels, vec![vec![Value::List(vec![s("Admin"), s("Base")])]]);
}

#[test]
fn a_dynamic_label_must_be_a_string() {
    let db = Database::in_memory().unwrap();
    q(&db, "CREATE (:N)", &Params::new()).unwrap();
    for bad in [
        "MATCH (n) SET n:$(1)",
        "MATCH (n) SET n:$('')",
        "MATCH (n) SET n:$([null])",
    ] {
        let e = q(&db, bad, &Params::new()).unwrap_err().to_string();
        assert!(e.contains("dynamic label"), "{bad}: {e}");
    }
    let e = q(&db, "MATCH (n) SET n:$(x)", &Params::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains('x'), "an unknown variable is named: {e}");
    let e = q(&db, "MATCH (n) SET n:$(1", &Params::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.to_lowercase().contains("syntax") || e.contains("expected"),
        "{e}"
    );
}

#[test]
fn call_scope_clauses_import_variables() {
    let db = Database::in_memory().unwrap();
    let p = Params::new();
    let rows = q(
        &db,
        "UNWIND [1, 2] AS x CALL (x) { RETURN x * 10 AS y } RETURN x, y ORDER BY x",
        &p,
    )
    .unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Value::Int(1), Value::Int(10)],
            vec![Value::Int(2), Value::Int(20)]
        ]
    );
    let rows = q(
        &db,
        "WITH 1 AS a, 2 AS b CALL (*) { RETURN a + b AS c } RETURN c",
        &p,
    )
    .unwrap();
    assert_eq!(rows, vec![vec![Value::Int(3)]]);
    let rows = q(&db, "CALL () { RETURN 5 AS z } RETURN z", &p).unwrap();
    assert_eq!(rows, vec![vec![Value::Int(5)]]);
    // In every part of a UNION, as neo4j-graphrag's hybrid search sends it.
    let rows = q(
        &db,
        "WITH 3 AS k CALL (k) { RETURN k AS v UNION RETURN k + 1 AS v } RETURN v ORDER BY v",
        &p,
    )
    .unwrap();
    assert_eq!(rows, vec![vec![Value::Int(3)], vec![Value::Int(4)]]);
    // Only what the scope clause names is seen inside.
    let e = q(
        &db,
        "WITH 1 AS a, 2 AS b CALL (a) { RETURN b AS c } RETURN c",
        &p,
    )
    .unwrap_err();
    assert!(e.to_string().contains('b'), "{e}");
}

#[test]
fn in_transactions_runs_as_one_auto_commit_query() {
    let db = Database::in_memory().unwrap();
    let p = Params::new();
    q(
        &db,
        "UNWIND range(1, 10) AS i CALL (i) { CREATE (:B {i: i}) } IN TRANSACTIONS OF 3 ROWS",
        &p,
    )
    .unwrap();
    assert_eq!(
        q(&db, "MATCH (b:B) RETURN count(b)", &p).unwrap(),
        vec![vec![Value::Int(10)]]
    );
    // As graphiti deletes.
    q(
        &db,
        "MATCH (n:B) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 4 ROWS",
        &p,
    )
    .unwrap();
    assert_eq!(
        q(&db, "MATCH (b:B) RETURN count(b)", &p).unwrap(),
        vec![vec![Value::Int(0)]]
    );
    let e = q(&db, "CALL { CREATE (:X) } IN TRANSACTIONS OF -1 ROWS", &p).unwrap_err();
    assert!(e.to_string().contains("batch size"), "{e}");
    let e = q(
        &db,
        "CALL { CREATE (:X) } IN TRANSACTIONS ON ERROR CONTINUE",
        &p,
    )
    .unwrap_err();
    assert!(e.to_string().contains("ON ERROR FAIL"), "{e}");
    // Not inside an explicit transaction, as in Neo4j.
    let s = db.session("default").unwrap();
    let mut tx = s.begin().unwrap();
    let e = tx
        .run("CALL { CREATE (:X) } IN TRANSACTIONS", &p)
        .unwrap_err();
    assert!(e.to_string().contains("auto-commit"), "{e}");
}

/// `SHOW … YIELD … WHERE … RETURN …`, as neo4j-graphrag reads a vector
/// index's dimensions, and the other forms of Neo4j's SHOW grammar.
#[test]
fn show_takes_yield_where_and_return() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    q(
        &db,
        "CREATE VECTOR INDEX chunks IF NOT EXISTS FOR (n:Chunk) ON n.embedding OPTIONS \
         {indexConfig: {`vector.dimensions`: 4, `vector.similarity_function`: 'cosine'}}",
        &none,
    )
    .unwrap();
    q(&db, "CREATE INDEX FOR (n:Person) ON (n.name)", &none).unwrap();
    let p = Params::from([("index_name".to_string(), s("chunks"))]);
    let t = db
        .query(
            "default",
            "SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options \
             WHERE name = $index_name RETURN labelsOrTypes AS labels, properties, \
             options.indexConfig.`vector.dimensions` AS dimensions",
            &p,
        )
        .unwrap();
    assert_eq!(t.columns, ["labels", "properties", "dimensions"]);
    assert_eq!(
        t.rows,
        vec![vec![
            Value::List(vec![s("Chunk")]),
            Value::List(vec![s("embedding")]),
            Value::Int(4)
        ]]
    );
    // No RETURN: the yielded columns, in the YIELD's order, after its
    // ORDER BY, SKIP and LIMIT.
    let t = db
        .query(
            "default",
            "SHOW INDEXES YIELD type, name AS n ORDER BY n DESC LIMIT 1",
            &none,
        )
        .unwrap();
    assert_eq!(t.columns, ["type", "n"]);
    assert_eq!(t.rows, vec![vec![s("RANGE"), s("idx_Person_name")]]);
    // A bare WHERE keeps the columns shown without a YIELD; YIELD * lists
    // every column, in the listing's order.
    let t = db
        .query(
            "default",
            "SHOW FUNCTIONS WHERE category = 'Aggregating' AND name STARTS WITH 'st'",
            &none,
        )
        .unwrap();
    assert_eq!(t.columns, ["name", "category", "description"]);
    let names: Vec<&Value> = t.rows.iter().map(|r| &r[0]).collect();
    assert_eq!(names, [&s("stDev"), &s("stDevP")]);
    let all = db
        .query(
            "default",
            "SHOW FUNCTIONS YIELD * WHERE name = 'range'",
            &none,
        )
        .unwrap();
    assert_eq!(all.columns[..3], ["name", "category", "description"]);
    assert!(all.columns.len() > 3 && all.columns.contains(&"signature".to_string()));
    assert_eq!(all.rows.len(), 1);
    // Aggregation over the listing.
    let t = db
        .query(
            "default",
            "SHOW FUNCTIONS YIELD category RETURN count(DISTINCT category) AS c",
            &none,
        )
        .unwrap();
    assert!(matches!(t.rows[0][0], Value::Int(n) if n >= 8), "{t:?}");
    // A column the listing does not have is named, where it was written.
    let e = db
        .query("default", "SHOW INDEXES YIELD nme", &none)
        .unwrap_err()
        .to_string();
    assert!(e.contains("nme") && e.contains("column 20"), "{e}");
    let t = db
        .query(
            "default",
            "SHOW CONSTRAINTS YIELD * RETURN count(*) AS n",
            &none,
        )
        .unwrap();
    assert_eq!(t.rows, vec![vec![Value::Int(0)]]);
    // An index type: those of it (none of a type Plexus does not have, as
    // LightRAG and neo4j-graphrag ask for full-text ones), and a clear
    // refusal to create one of those.
    let t = db
        .query("default", "SHOW RANGE INDEXES YIELD name", &none)
        .unwrap();
    assert_eq!(t.rows, vec![vec![s("idx_Person_name")]]);
    let t = db.query("default", "SHOW FULLTEXT INDEXES", &none).unwrap();
    assert!(t.rows.is_empty() && t.columns.contains(&"labelsOrTypes".to_string()));
    let e = db
        .query(
            "default",
            "CREATE FULLTEXT INDEX names FOR (n:Person) ON EACH [n.name]",
            &none,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("no FULLTEXT indexes"), "{e}");
}

/// `SHOW PROCEDURES` lists every built-in procedure with what it does, its
/// mode and signature; each one listed is one a CALL finds.
#[test]
fn procedures_are_listed() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    let t = db.query("default", "SHOW PROCEDURES", &none).unwrap();
    assert_eq!(t.columns, ["name", "description", "mode", "worksOnSystem"]);
    assert!(t.rows.len() >= 30, "{t:?}");
    let t = db
        .query(
            "default",
            "SHOW PROCEDURES YIELD name, mode, signature, description",
            &none,
        )
        .unwrap();
    let mut writes = 0;
    for r in &t.rows {
        let [Value::String(name), Value::String(mode), Value::String(sig), Value::String(d)] =
            &r[..]
        else {
            panic!("{r:?}");
        };
        assert!(sig.starts_with(&format!("{name}(")), "{sig}");
        assert!(d.ends_with('.') && d.len() > 10, "{name}: {d}");
        writes += usize::from(mode == "WRITE");
        // Listed means callable: a CALL of it with no arguments is refused
        // for its arguments, never as an unknown procedure.
        if let Err(e) = db.query("default", &format!("CALL {name}()"), &none) {
            assert!(!e.to_string().contains("ProcedureNotFound"), "{name}: {e}");
        }
    }
    assert!(writes > 0 && writes < t.rows.len(), "{t:?}");
    let t = db
        .query(
            "default",
            "SHOW PROCEDURES YIELD name, signature WHERE name = 'db.index.vector.queryNodes' \
             RETURN signature",
            &none,
        )
        .unwrap();
    assert_eq!(
        t.rows,
        vec![vec![s(
            "db.index.vector.queryNodes(indexName :: STRING, numberOfNearestNeighbours :: \
             INTEGER, query :: ANY) :: (node, score)"
        )]]
    );
}
