//! Vector search in Cypher as Neo4j 5 clients send it: `CREATE VECTOR
//! INDEX … OPTIONS`, `SHOW VECTOR INDEXES`, `db.index.vector.queryNodes`
//! with a `WHERE` pushed into the search, the hybrid GraphRAG pattern
//! (search, then expand around the hits) as one query,
//! `vector.similarity.*`, `db.create.setNodeVectorProperty`, explicit
//! transactions, reopening, and the errors.

use plexus::{Database, Options, Params, Value};

fn q(db: &Database, text: &str, params: &Params) -> Result<Vec<Vec<Value>>, plexus::Error> {
    Ok(db.query("default", text, params)?.rows)
}

fn s(x: &str) -> Value {
    Value::String(x.into())
}

fn vector(xs: &[f64]) -> Value {
    Value::List(xs.iter().map(|x| Value::Float(*x)).collect())
}

fn params(pairs: &[(&str, Value)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

const CREATE: &str = "CREATE VECTOR INDEX chunks IF NOT EXISTS FOR (c:Chunk) ON c.embedding \
     OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}";

/// 60 chunks around three directions, in groups 0..2, each citing the
/// next; `doc` nodes own them.
fn load(db: &Database) {
    q(db, CREATE, &Params::new()).unwrap();
    let rows: Vec<Value> = (0..60)
        .map(|i| {
            let axis = i % 3;
            let mut v = [0.05 * (i as f64 / 60.0); 3];
            v[axis] = 1.0;
            Value::Map(
                [
                    ("id".to_string(), Value::Int(i as i64)),
                    ("grp".to_string(), Value::Int((i / 20) as i64)),
                    ("v".to_string(), vector(&v)),
                ]
                .into(),
            )
        })
        .collect();
    q(
        db,
        "UNWIND $rows AS r CREATE (:Chunk {id: r.id, grp: r.grp, embedding: r.v})",
        &params(&[("rows", Value::List(rows))]),
    )
    .unwrap();
    q(
        db,
        "MATCH (a:Chunk), (b:Chunk) WHERE b.id = a.id + 1 CREATE (a)-[:CITES]->(b)",
        &Params::new(),
    )
    .unwrap();
}

fn ids(rows: &[Vec<Value>]) -> Vec<i64> {
    rows.iter()
        .map(|r| match r[0] {
            Value::Int(i) => i,
            ref other => panic!("not an id: {other:?}"),
        })
        .collect()
}

#[test]
fn create_show_query_and_drop() {
    let db = Database::in_memory().unwrap();
    load(&db);
    // Again with IF NOT EXISTS: nothing changes.
    q(&db, CREATE, &Params::new()).unwrap();
    let shown = db
        .query("default", "SHOW VECTOR INDEXES", &Params::new())
        .unwrap();
    assert_eq!(shown.rows.len(), 1);
    let col = |name: &str| shown.columns.iter().position(|c| c == name).unwrap();
    assert_eq!(shown.rows[0][col("name")], s("chunks"));
    assert_eq!(shown.rows[0][col("type")], s("VECTOR"));
    assert_eq!(
        shown.rows[0][col("properties")],
        Value::List(vec![s("embedding")])
    );
    let Value::Map(options) = &shown.rows[0][col("options")] else {
        panic!("options")
    };
    let Some(Value::Map(config)) = options.get("indexConfig") else {
        panic!("indexConfig")
    };
    assert_eq!(config.get("vector.dimensions"), Some(&Value::Int(3)));
    assert_eq!(config.get("vector.similarity_function"), Some(&s("cosine")));

    let p = params(&[("q", vector(&[0.0, 1.0, 0.0]))]);
    let rows = q(
        &db,
        "CALL db.index.vector.queryNodes('chunks', 5, $q) YIELD node, score \
         RETURN node.id, score",
        &p,
    )
    .unwrap();
    assert_eq!(rows.len(), 5);
    assert!(ids(&rows).iter().all(|i| i % 3 == 1), "{rows:?}");
    let scores: Vec<f64> = rows
        .iter()
        .map(|r| match r[1] {
            Value::Float(f) => f,
            _ => panic!("score"),
        })
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]));
    assert!(scores[0] > 0.99 && scores[0] <= 1.0, "{scores:?}");

    q(&db, "DROP INDEX chunks", &Params::new()).unwrap();
    let e = q(
        &db,
        "CALL db.index.vector.queryNodes('chunks', 5, $q) YIELD node RETURN node",
        &p,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("no vector index named 'chunks'"),
        "{e}"
    );
}

#[test]
fn a_where_on_the_node_is_pushed_into_the_search() {
    let db = Database::in_memory().unwrap();
    load(&db);
    let p = params(&[("q", vector(&[0.0, 1.0, 0.0])), ("g", Value::Int(2))]);
    // Group 2 holds only 6 or 7 chunks near the query's axis among 20;
    // pushed down, the search still returns 10 of group 2.
    let rows = q(
        &db,
        "CALL db.index.vector.queryNodes('chunks', 10, $q) YIELD node, score \
         WHERE node.grp = $g RETURN node.id, node.grp",
        &p,
    )
    .unwrap();
    assert_eq!(rows.len(), 10);
    assert!(rows.iter().all(|r| r[1] == Value::Int(2)));
    // Those of group 2 on the axis come first.
    assert!(ids(&rows[..6]).iter().all(|i| i % 3 == 1), "{rows:?}");
    // With an index on the property, the candidates come from it and are
    // scanned exactly: the same answer.
    q(&db, "CREATE INDEX FOR (c:Chunk) ON (c.grp)", &Params::new()).unwrap();
    let indexed = q(
        &db,
        "CALL db.index.vector.queryNodes('chunks', 10, $q) YIELD node, score \
         WHERE $g = node.grp RETURN node.id, node.grp",
        &p,
    )
    .unwrap();
    assert_eq!(indexed, rows);
    // A predicate on the score filters after the search.
    let rows = q(
        &db,
        "CALL db.index.vector.queryNodes('chunks', 10, $q) YIELD node, score \
         WHERE score > 0.9 AND node.grp = $g RETURN node.id",
        &p,
    )
    .unwrap();
    assert!(rows.len() < 10, "{rows:?}");
    assert!(ids(&rows).iter().all(|i| i % 3 == 1 && *i >= 40));
}

#[test]
fn the_hybrid_pattern_runs_as_one_query() {
    let db = Database::in_memory().unwrap();
    load(&db);
    let p = params(&[("q", vector(&[1.0, 0.0, 0.0]))]);
    let rows = q(
        &db,
        "CALL db.index.vector.queryNodes('chunks', 3, $q) YIELD node, score \
         MATCH (node)-[:CITES]->(next:Chunk) \
         RETURN node.id AS hit, next.id AS next, \
                vector.similarity.cosine(node.embedding, $q) AS sim \
         ORDER BY sim DESC, hit",
        &p,
    )
    .unwrap();
    assert_eq!(rows.len(), 3);
    for r in &rows {
        let (Value::Int(hit), Value::Int(next)) = (&r[0], &r[1]) else {
            panic!("{r:?}")
        };
        assert_eq!(hit % 3, 0);
        assert_eq!(*next, hit + 1);
    }
    let e = q(
        &db,
        "RETURN vector.similarity.euclidean([1, 2], [1, 2, 3]) AS x",
        &Params::new(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("same"), "{e}");
    let one = q(
        &db,
        "RETURN vector.similarity.euclidean([0, 0], [1, 1]) AS x",
        &Params::new(),
    )
    .unwrap();
    assert_eq!(one, vec![vec![Value::Float(1.0 / 3.0)]]);
}

#[test]
fn set_node_vector_property_and_transactions() {
    let db = Database::in_memory().unwrap();
    load(&db);
    let p = params(&[("q", vector(&[-1.0, -1.0, -1.0]))]);
    let nearest = |db: &Database| {
        ids(&q(
            db,
            "CALL db.index.vector.queryNodes('chunks', 1, $q) YIELD node RETURN node.id",
            &p,
        )
        .unwrap())
    };
    let before = nearest(&db);
    let session = db.session("default").unwrap();
    let mut t = session.begin().unwrap();
    t.query(
        "MATCH (c:Chunk {id: 7}) CALL db.create.setNodeVectorProperty(c, 'embedding', $q)",
        &p,
    )
    .unwrap();
    // The transaction sees its own write; others do not.
    let inside = t
        .query(
            "CALL db.index.vector.queryNodes('chunks', 1, $q) YIELD node RETURN node.id",
            &p,
        )
        .unwrap();
    assert_eq!(ids(&inside.rows), [7]);
    assert_eq!(nearest(&db), before);
    t.rollback();
    assert_eq!(nearest(&db), before);
    let mut t = session.begin().unwrap();
    t.query(
        "MATCH (c:Chunk {id: 7}) CALL db.create.setNodeVectorProperty(c, 'embedding', $q)",
        &p,
    )
    .unwrap();
    t.commit().unwrap();
    assert_eq!(nearest(&db), [7]);
    q(&db, "MATCH (c:Chunk {id: 7}) DETACH DELETE c", &p).unwrap();
    assert_ne!(nearest(&db), [7]);
}

#[test]
fn bad_calls_are_clear_errors() {
    let db = Database::in_memory().unwrap();
    load(&db);
    let cases = [
        (
            "CALL db.index.vector.queryNodes('chunks', 3, [1.0, 2.0]) YIELD node RETURN node",
            "2 dimensions where the index takes 3",
        ),
        (
            "CALL db.index.vector.queryNodes('chunks', 0, [1.0, 2.0, 3.0]) YIELD node RETURN node",
            "from 1 to",
        ),
        (
            "CALL db.index.vector.queryNodes('chunks', 3, 'text') YIELD node RETURN node",
            "list of numbers",
        ),
        (
            "CREATE (:Chunk {embedding: [1.0, 'x', 3.0]})",
            "position 1",
        ),
        (
            "CREATE VECTOR INDEX other FOR (d:Doc) ON d.v OPTIONS {indexConfig: {`vector.dimensions`: 'x'}}",
            "vector.dimensions",
        ),
        (
            "CREATE VECTOR INDEX other FOR (d:Doc) ON d.v",
            "required",
        ),
    ];
    for (text, says) in cases {
        let e = q(&db, text, &Params::new()).unwrap_err();
        assert!(e.to_string().contains(says), "{text}: {e}");
    }
}

#[test]
fn the_index_is_there_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let p = params(&[("q", vector(&[0.0, 0.0, 1.0]))]);
    let query = "CALL db.index.vector.queryNodes('chunks', 4, $q) YIELD node RETURN node.id";
    let want = {
        let db = Database::create(&path, Options::default()).unwrap();
        load(&db);
        ids(&q(&db, query, &p).unwrap())
    };
    let db = Database::open(&path, Options::default()).unwrap();
    assert_eq!(ids(&q(&db, query, &p).unwrap()), want);
}

/// Vectors arrive through the importers as list columns (`FLOAT[]` in CSV,
/// arrays in JSON lines) and are searchable when the import returns.
#[test]
fn imported_lists_are_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("chunks.csv");
    std::fs::write(
        &csv,
        "id:ID,embedding:FLOAT[],:LABEL\na,1;0;0,Chunk\nb,0;1;0,Chunk\nc,0;0;1,Chunk\n",
    )
    .unwrap();
    let jsonl = dir.path().join("more.jsonl");
    std::fs::write(
        &jsonl,
        "{\"id\": \"d\", \"tag\": \"d\", \"labels\": [\"Chunk\"], \"embedding\": [0.9, 0.1, 0.0]}\n",
    )
    .unwrap();
    let db = Database::in_memory().unwrap();
    q(&db, CREATE, &Params::new()).unwrap();
    for (graph, file) in [("default", &csv), ("other", &jsonl)] {
        db.create_graph(graph).ok();
        if graph == "other" {
            db.query(graph, CREATE, &Params::new()).unwrap();
        }
        db.import(
            graph,
            &[plexus::ingest::Input::parse(file.to_str().unwrap())],
            &[],
            &Default::default(),
            &mut |_| {},
            None,
        )
        .unwrap();
    }
    let query =
        "CALL db.index.vector.queryNodes('chunks', 1, [0.0, 0.9, 0.1]) YIELD node RETURN node.id";
    let found = db.query("default", query, &Params::new()).unwrap().rows;
    assert_eq!(found, vec![vec![s("b")]]);
    let query =
        "CALL db.index.vector.queryNodes('chunks', 1, [1.0, 0.0, 0.0]) YIELD node RETURN node.tag";
    let found = db.query("other", query, &Params::new()).unwrap().rows;
    assert_eq!(found, vec![vec![s("d")]]);
}

const CREATE_RELS: &str =
    "CREATE VECTOR INDEX cites IF NOT EXISTS FOR ()-[r:CITES]-() ON (r.embedding) \
     OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}";

/// Relationship vector indexes, as Neo4j 5 has them: the index fills from
/// the relationships already there, follows every write (set, rollback,
/// delete, a deleted node's relationships), and `queryRelationships`
/// yields the relationships with a `WHERE` pushed into the search.
#[test]
fn relationship_indexes_are_searched_and_kept() {
    let db = Database::in_memory().unwrap();
    load(&db);
    // The 59 CITES relationships get the vector of the chunk they start at,
    // then the index is made: it fills from them.
    q(
        &db,
        "MATCH (a:Chunk)-[r:CITES]->() SET r.embedding = a.embedding, r.grp = a.grp",
        &Params::new(),
    )
    .unwrap();
    q(&db, CREATE_RELS, &Params::new()).unwrap();
    let shown = q(&db, "SHOW VECTOR INDEXES", &Params::new()).unwrap();
    assert_eq!(shown.len(), 2);
    let rel_row = shown.iter().find(|r| r[0] == s("cites")).unwrap();
    assert!(rel_row.contains(&s("RELATIONSHIP")), "{rel_row:?}");
    assert!(
        rel_row.contains(&Value::List(vec![s("CITES")])),
        "{rel_row:?}"
    );

    let p = params(&[("q", vector(&[1.0, 0.0, 0.0])), ("g", Value::Int(1))]);
    let near = "CALL db.index.vector.queryRelationships('cites', 5, $q) YIELD relationship, score \
                RETURN startNode(relationship).id AS id, type(relationship), score";
    let rows = q(&db, near, &p).unwrap();
    assert_eq!(rows.len(), 5);
    assert!(ids(&rows).iter().all(|i| i % 3 == 0), "{rows:?}");
    assert!(rows.iter().all(|r| r[1] == s("CITES")));
    // Pushed down: exactly k of group 1, where filtering after the search
    // would have left none of the five.
    let rows = q(
        &db,
        "CALL db.index.vector.queryRelationships('cites', 5, $q) YIELD relationship, score \
         WHERE relationship.grp = $g RETURN startNode(relationship).id, relationship.grp",
        &p,
    )
    .unwrap();
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r[1] == Value::Int(1)), "{rows:?}");
    assert!(ids(&rows)
        .iter()
        .all(|i| i % 3 == 0 && (20..40).contains(i)));

    // A relationship set through the procedure is found at once; rolled
    // back it never was; deleted (with its node) it is gone.
    let session = db.session("default").unwrap();
    let mut t = session.begin().unwrap();
    t.query(
        "MATCH (a:Chunk {id: 0}), (b:Chunk {id: 59}) CREATE (a)-[r:CITES]->(b) \
         WITH r CALL db.create.setRelationshipVectorProperty(r, 'embedding', [0.0, 0.0, -1.0]) \
         RETURN 1",
        &Params::new(),
    )
    .unwrap();
    let down = params(&[("q", vector(&[0.0, 0.0, -1.0]))]);
    let top = "CALL db.index.vector.queryRelationships('cites', 1, $q) YIELD relationship, score \
               RETURN endNode(relationship).id, score";
    let mine = t.query(top, &down).unwrap().rows;
    assert_eq!(mine[0][0], Value::Int(59));
    t.rollback();
    let after = q(&db, top, &down).unwrap();
    assert_ne!(after[0][0], Value::Int(59), "{after:?}");
    q(
        &db,
        "MATCH (a:Chunk {id: 0}), (b:Chunk {id: 59}) CREATE (a)-[r:CITES {embedding: [0.0, 0.0, -1.0]}]->(b)",
        &Params::new(),
    )
    .unwrap();
    assert_eq!(q(&db, top, &down).unwrap()[0][0], Value::Int(59));
    q(
        &db,
        "MATCH (b:Chunk {id: 59}) DETACH DELETE b",
        &Params::new(),
    )
    .unwrap();
    let gone = q(
        &db,
        "CALL db.index.vector.queryRelationships('cites', 100, $q) YIELD relationship \
         RETURN count(*), max(endNode(relationship).id)",
        &down,
    )
    .unwrap();
    // 59 relationships, less the one that ended at the deleted chunk.
    assert_eq!(gone, vec![vec![Value::Int(58), Value::Int(58)]]);

    // The wrong procedure for an index is a clear error, both ways.
    let e = q(
        &db,
        "CALL db.index.vector.queryNodes('cites', 1, $q) YIELD node RETURN node",
        &down,
    )
    .unwrap_err();
    assert!(e.to_string().contains("holds relationships"), "{e}");
    let e = q(
        &db,
        "CALL db.index.vector.queryRelationships('chunks', 1, $q) YIELD relationship RETURN 1",
        &down,
    )
    .unwrap_err();
    assert!(e.to_string().contains("holds nodes"), "{e}");
    // A relationship property index beside the vector index: both kept.
    q(
        &db,
        "CREATE INDEX FOR ()-[r:CITES]-() ON (r.grp)",
        &Params::new(),
    )
    .unwrap();
    assert!(db.check("default").unwrap().is_ok());
}

/// A relationship index is loaded again on reopening, and a bulk import
/// of relationships with vector columns fills it.
#[test]
fn relationship_indexes_after_reopening_and_import() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let nodes = dir.path().join("chunks.csv");
    std::fs::write(
        &nodes,
        "id:ID,name,:LABEL\na,a,Chunk\nb,b,Chunk\nc,c,Chunk\n",
    )
    .unwrap();
    let rels = dir.path().join("cites.csv");
    std::fs::write(
        &rels,
        ":START_ID,:END_ID,:TYPE,embedding:FLOAT[]\na,b,CITES,1;0;0\nb,c,CITES,0;1;0\nc,a,CITES,0;0;1\n",
    )
    .unwrap();
    let p = params(&[("q", vector(&[0.1, 0.9, 0.2]))]);
    let query = "CALL db.index.vector.queryRelationships('cites', 3, $q) YIELD relationship \
                 RETURN startNode(relationship).name";
    let want = vec![vec![s("b")], vec![s("c")], vec![s("a")]];
    {
        let db = Database::create(&path, Options::default()).unwrap();
        q(&db, CREATE_RELS, &Params::new()).unwrap();
        db.import(
            "default",
            &[plexus::ingest::Input::parse(nodes.to_str().unwrap())],
            &[plexus::ingest::Input::parse(rels.to_str().unwrap())],
            &Default::default(),
            &mut |_| {},
            None,
        )
        .unwrap();
        assert_eq!(q(&db, query, &p).unwrap(), want);
    }
    let db = Database::open(&path, Options::default()).unwrap();
    assert_eq!(q(&db, query, &p).unwrap(), want);
}
