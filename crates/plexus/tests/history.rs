//! Cypher over a graph's history: `MATCH … FOR SYSTEM_TIME AS OF t`.

use plexus::{Database, ErrorKind, Params, QueryOptions, Value};

fn q(db: &Database, text: &str, params: &Params) -> Vec<Vec<Value>> {
    db.query("default", text, params).unwrap().rows
}

fn at(t: u64) -> Params {
    Params::from([("t".to_string(), Value::Int(t as i64))])
}

/// A small social graph changed over three commits; the system time after
/// each.
fn history() -> (Database, [u64; 3]) {
    let db = Database::in_memory().unwrap();
    db.keep_history("default").unwrap();
    let none = Params::new();
    q(
        &db,
        "CREATE (a:Person {name: 'Ann'})-[:KNOWS {since: 2020}]->(b:Person {name: 'Bob'}), \
         (b)-[:KNOWS]->(:Person {name: 'Cy'})",
        &none,
    );
    let first = db.system_time().unwrap();
    q(
        &db,
        "MATCH (a {name: 'Ann'}), (c {name: 'Cy'}) CREATE (a)-[:KNOWS]->(c) SET a.age = 40",
        &none,
    );
    let second = db.system_time().unwrap();
    q(&db, "MATCH (b {name: 'Bob'}) DETACH DELETE b", &none);
    let third = db.system_time().unwrap();
    (db, [first, second, third])
}

#[test]
fn traversals_read_the_graph_as_it_was() {
    let (db, [first, second, third]) = history();
    let friends_of_friends = "MATCH (a:Person {name: 'Ann'})-[:KNOWS*1..2]->(f) \
         FOR SYSTEM_TIME AS OF $t RETURN f.name AS name ORDER BY name";
    let names = |t| -> Vec<Value> {
        q(&db, friends_of_friends, &at(t))
            .into_iter()
            .map(|r| r[0].clone())
            .collect()
    };
    assert_eq!(names(first), [Value::from("Bob"), Value::from("Cy")]);
    assert_eq!(
        names(second),
        [Value::from("Bob"), Value::from("Cy"), Value::from("Cy")],
        "two ways to Cy"
    );
    assert_eq!(names(third), [Value::from("Cy")]);
    let count = "MATCH (n:Person) FOR SYSTEM_TIME AS OF $t RETURN count(n) AS n";
    assert_eq!(q(&db, count, &at(first)), [[Value::Int(3)]]);
    assert_eq!(q(&db, count, &at(third)), [[Value::Int(2)]]);
    let age = "MATCH (a {name: 'Ann'}) FOR SYSTEM_TIME AS OF $t RETURN a.age AS age";
    assert_eq!(q(&db, age, &at(first)), [[Value::Null]]);
    assert_eq!(q(&db, age, &at(second)), [[Value::Int(40)]]);
    let since = "MATCH ()-[k:KNOWS]->({name: 'Bob'}) FOR SYSTEM_TIME AS OF $t RETURN k.since AS s";
    assert_eq!(q(&db, since, &at(second)), [[Value::Int(2020)]]);
    assert!(q(&db, since, &at(third)).is_empty());
    // The current graph is unchanged by all this.
    let now = "MATCH (n:Person) RETURN count(n) AS n";
    assert_eq!(q(&db, now, &Params::new()), [[Value::Int(2)]]);
}

#[test]
fn the_instant_may_be_a_datetime_or_an_iso_string_and_streams_alike() {
    let (db, [first, second, _]) = history();
    let datetime = plexus::DateTime::from_epoch_micros;
    let count = "MATCH (n:Person)-[k:KNOWS]->() FOR SYSTEM_TIME AS OF $t RETURN count(k) AS n";
    let as_value = Params::from([("t".to_string(), Value::DateTime(datetime(second)))]);
    assert_eq!(q(&db, count, &as_value), [[Value::Int(3)]]);
    let as_text = Params::from([("t".to_string(), Value::from(datetime(first).to_string()))]);
    assert_eq!(q(&db, count, &as_text), [[Value::Int(2)]]);
    let session = db.session("default").unwrap();
    let cursor = session
        .stream(
            "MATCH (n:Person) FOR SYSTEM_TIME AS OF $t RETURN n.name AS name ORDER BY name",
            &at(first),
            &QueryOptions::default(),
        )
        .unwrap();
    let rows = cursor.into_table().unwrap().rows;
    assert_eq!(rows.len(), 3);
}

#[test]
fn what_cannot_be_read_as_of_an_instant_is_refused_clearly() {
    let (db, [first, ..]) = history();
    let e = db
        .query(
            "default",
            "MATCH (n) FOR SYSTEM_TIME AS OF $t SET n.x = 1",
            &at(first),
        )
        .unwrap_err();
    assert!(e.to_string().contains("cannot write"), "{e}");
    let e = db
        .query(
            "default",
            "MATCH (n) WHERE EXISTS { MATCH (n)-->() FOR SYSTEM_TIME AS OF 1 } RETURN n",
            &Params::new(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("subquery"), "{e}");
    let e = db
        .query(
            "default",
            "MATCH (n) FOR SYSTEM_TIME AS OF $t RETURN n",
            &at(1),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadInput);
    assert!(e.to_string().contains("keeps history from"), "{e}");
    let e = db
        .query(
            "default",
            "MATCH (n) FOR VALID_TIME AS OF 1 RETURN n",
            &Params::new(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("VALID_TIME"), "{e}");
    let mut txn = db.session("default").unwrap().begin().unwrap();
    let e = txn
        .run("MATCH (n) FOR SYSTEM_TIME AS OF $t RETURN n", &at(first))
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("outside an explicit transaction"),
        "{e}"
    );
    db.create_graph("plain").unwrap();
    let e = db
        .query(
            "plain",
            "MATCH (n) FOR SYSTEM_TIME AS OF 5 RETURN n",
            &Params::new(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("keeps no history"), "{e}");
}
