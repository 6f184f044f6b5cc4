//! The procedures clients call without registering them: the catalog,
//! `dbms.components()`, and the APOC subset cognee sends on every write.

use plexus::{Database, Params, Value};

fn q(db: &Database, text: &str) -> Vec<Vec<Value>> {
    db.query("default", text, &Params::new())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .rows
}

fn s(x: &str) -> Value {
    Value::String(x.into())
}

#[test]
fn components_report_a_neo4j_compatible_version() {
    let db = Database::in_memory().unwrap();
    let rows = q(&db, "CALL dbms.components() YIELD name, versions, edition RETURN name, versions[0] AS v, edition");
    assert_eq!(rows, vec![vec![s("Plexus"), s("5.26.0"), s("community")]]);
}

#[test]
fn catalog_procedures_list_what_is_used() {
    let db = Database::in_memory().unwrap();
    q(&db, "CREATE (:A {x: 1})-[:T]->(:B)");
    let labels = q(
        &db,
        "CALL db.labels() YIELD label RETURN label ORDER BY label",
    );
    assert_eq!(labels, vec![vec![s("A")], vec![s("B")]]);
    let types = q(
        &db,
        "CALL db.relationshipTypes() YIELD relationshipType RETURN collect(relationshipType) AS t",
    );
    assert_eq!(types, vec![vec![Value::List(vec![s("T")])]]);
    assert_eq!(q(&db, "CALL db.propertyKeys()"), vec![vec![s("x")]]);
}

#[test]
fn add_labels_adds_dynamic_labels_in_a_write() {
    let db = Database::in_memory().unwrap();
    // As cognee's adapter sends it.
    let mut p = Params::new();
    p.insert("label".into(), s("Entity"));
    let rows = db
        .query(
            "default",
            "MERGE (n:`__Node__` {id: 'a'}) WITH n CALL apoc.create.addLabels(n, [$label]) YIELD node AS labeledNode \
             RETURN ID(labeledNode) AS internal_id, labeledNode.id AS nodeId, labels(labeledNode) AS l",
            &p,
        )
        .unwrap()
        .rows;
    assert_eq!(rows[0][1], s("a"));
    assert_eq!(rows[0][2], Value::List(vec![s("Entity"), s("__Node__")]));
    let wrong = db.query(
        "default",
        "MATCH (n) CALL apoc.create.addLabels(n, [1]) YIELD node RETURN node",
        &p,
    );
    assert!(
        wrong.unwrap_err().to_string().contains("label"),
        "labels must be strings"
    );
}

#[test]
fn merge_relationship_creates_once_then_matches() {
    let db = Database::in_memory().unwrap();
    q(&db, "CREATE (:N {id: 'a'}), (:N {id: 'b'})");
    let merge = "MATCH (a:N {id: 'a'}), (b:N {id: 'b'}) \
                 CALL apoc.merge.relationship(a, $t, {source_node_id: 'a', target_node_id: 'b'}, {created: 1}, b, {matched: true}) YIELD rel \
                 RETURN type(rel) AS t, rel.created AS c, rel.matched AS m";
    let mut p = Params::new();
    p.insert("t".into(), s("works_at"));
    let first = db.query("default", merge, &p).unwrap().rows;
    assert_eq!(first, vec![vec![s("works_at"), Value::Int(1), Value::Null]]);
    let second = db.query("default", merge, &p).unwrap().rows;
    assert_eq!(
        second,
        vec![vec![s("works_at"), Value::Int(1), Value::Bool(true)]]
    );
    assert_eq!(
        q(&db, "MATCH ()-[r]->() RETURN count(r)"),
        vec![vec![Value::Int(1)]]
    );
    // Other identifying properties make another relationship.
    let other = merge.replace("source_node_id: 'a'", "source_node_id: 'z'");
    db.query("default", &other, &p).unwrap();
    assert_eq!(
        q(&db, "MATCH ()-[r]->() RETURN count(r)"),
        vec![vec![Value::Int(2)]]
    );
    p.insert("t".into(), s(""));
    assert!(
        db.query("default", merge, &p).is_err(),
        "a relationship type is needed"
    );
}

#[test]
fn write_procedures_make_the_query_a_write() {
    let db = Database::in_memory().unwrap();
    let session = db.session("default").unwrap();
    let kind = session
        .kind_of("MATCH (n) CALL apoc.create.addLabels(n, ['X']) YIELD node RETURN node")
        .unwrap();
    assert_eq!(kind, plexus::QueryKind::Write);
    assert_eq!(
        session.kind_of("CALL db.labels()").unwrap(),
        plexus::QueryKind::Read
    );
}

#[test]
fn arity_is_checked_before_running() {
    let db = Database::in_memory().unwrap();
    let e = db
        .query("default", "CALL dbms.components(1)", &Params::new())
        .unwrap_err();
    assert!(e.to_string().contains("takes 0 argument"), "{e}");
    let e = db
        .query(
            "default",
            "MATCH (a), (b) CALL apoc.merge.relationship(a, 'T', {}, {}) YIELD rel RETURN rel",
            &Params::new(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("5 to 6"), "{e}");
}

#[test]
fn to_set_keeps_the_first_of_equal_elements() {
    let db = Database::in_memory().unwrap();
    let rows = q(
        &db,
        "RETURN apoc.coll.toSet(['b', 'a', 'b', null, 1, 'a']) AS s, apoc.coll.toSet(null) AS n",
    );
    assert_eq!(
        rows,
        vec![vec![
            Value::List(vec![s("b"), s("a"), Value::Null, Value::Int(1)]),
            Value::Null
        ]]
    );
}
