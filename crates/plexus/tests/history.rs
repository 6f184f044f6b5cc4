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

/// A read as of an instant seeks the property indexes the graph had then:
/// one there when history started (its entries are in the first versions),
/// one created later (scanned for before it existed), one dropped since
/// (still sought then); each answer is the graph's at that instant.
#[test]
fn reads_as_of_an_instant_seek_the_indexes_it_had() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    q(
        &db,
        "CREATE INDEX person_name FOR (p:Person) ON (p.name)",
        &none,
    );
    q(
        &db,
        "UNWIND range(1, 50) AS i CREATE (:Person {name: 'p' + i, age: i})",
        &none,
    );
    let start = db.keep_history("default").unwrap();
    q(
        &db,
        "MATCH (p:Person {name: 'p7'}) SET p.name = 'seven'",
        &none,
    );
    q(
        &db,
        "CREATE INDEX person_age FOR (p:Person) ON (p.age)",
        &none,
    );
    let indexed = db.system_time().unwrap();
    q(&db, "DROP INDEX person_name", &none);
    q(&db, "MATCH (p:Person {age: 9}) SET p.age = 90", &none);
    let now = db.system_time().unwrap();
    let params = |t: u64, key: &str, v: Value| {
        Params::from([
            ("t".to_string(), Value::Int(t as i64)),
            (key.to_string(), v),
        ])
    };
    let by_name = "MATCH (p:Person {name: $name}) FOR SYSTEM_TIME AS OF $t RETURN p.age AS a";
    let by_age = "MATCH (p:Person) FOR SYSTEM_TIME AS OF $t WHERE p.age = $age RETURN p.name AS a";
    let first_operator = |text: &str, p: &Params| {
        let plan = db.query("default", &format!("EXPLAIN {text}"), p).unwrap();
        let i = plan.columns.iter().position(|c| c == "operator").unwrap();
        plan.rows[0][i].clone()
    };
    let name = |t, n: &str| params(t, "name", Value::from(n));
    let age = |t, a: i64| params(t, "age", Value::Int(a));
    let seek = Value::from("NodeIndexSeek");
    // Without an index, an equality is one pass over the nodes.
    let scan = Value::from("NodeByPropertyScan");
    // At the start: the name index of the first versions; no age index yet.
    assert_eq!(first_operator(by_name, &name(start, "p7")), seek);
    assert_eq!(q(&db, by_name, &name(start, "p7")), [[Value::Int(7)]]);
    assert!(q(&db, by_name, &name(start, "seven")).is_empty());
    assert_eq!(first_operator(by_age, &age(start, 9)), scan);
    assert_eq!(q(&db, by_age, &age(start, 9)), [[Value::from("p9")]]);
    // Once the age index exists, both are sought, with the renamed entry.
    assert_eq!(first_operator(by_name, &name(indexed, "seven")), seek);
    assert_eq!(q(&db, by_name, &name(indexed, "seven")), [[Value::Int(7)]]);
    assert!(q(&db, by_name, &name(indexed, "p7")).is_empty());
    assert_eq!(first_operator(by_age, &age(indexed, 9)), seek);
    assert_eq!(q(&db, by_age, &age(indexed, 9)), [[Value::from("p9")]]);
    // Now: the name index is gone, the age entry changed.
    assert_eq!(first_operator(by_name, &name(now, "seven")), scan);
    assert_eq!(q(&db, by_name, &name(now, "seven")), [[Value::Int(7)]]);
    assert!(q(&db, by_age, &age(now, 9)).is_empty());
    assert_eq!(q(&db, by_age, &age(now, 90)), [[Value::from("p9")]]);
    assert_eq!(q(&db, by_age, &age(indexed, 90)), Vec::<Vec<Value>>::new());
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

/// The `employer` the version holding `ann` at `at` gives, through Cypher.
fn employer(db: &Database, at: &str) -> Option<Value> {
    let params = Params::from([("at".to_string(), Value::from(at))]);
    let rows = q(
        db,
        "CALL plexus.temporal.asOf('node', 'ann', $at) YIELD properties RETURN properties.employer AS e",
        &params,
    );
    rows.first().map(|r| r[0].clone())
}

#[test]
fn valid_time_versions_from_cypher() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    let v1 = q(
        &db,
        "CALL plexus.temporal.assertNode('ann', ['Person'], {employer: 'Acme'}, '2019-01-01T00:00:00Z', '2022-01-01T00:00:00Z') YIELD versionId RETURN versionId",
        &none,
    )[0][0]
        .clone();
    q(
        &db,
        "CALL plexus.temporal.assertNode('ann', ['Person'], {employer: 'Initech'}, datetime('2022-01-01T00:00:00Z'))",
        &none,
    );
    assert_eq!(employer(&db, "2018-06-01T00:00:00Z"), None);
    assert_eq!(
        employer(&db, "2020-06-01T00:00:00Z"),
        Some(Value::from("Acme"))
    );
    assert_eq!(
        employer(&db, "2030-06-01T00:00:00Z"),
        Some(Value::from("Initech"))
    );

    // A correction of the first version: over its interval unless told.
    let Value::String(v1) = v1 else {
        panic!("{v1:?}")
    };
    let params = Params::from([("v".to_string(), Value::from(v1.as_str()))]);
    q(
        &db,
        "CALL plexus.temporal.correct($v, {employer: 'Acme Corp'})",
        &params,
    );
    assert_eq!(
        employer(&db, "2020-06-01T00:00:00Z"),
        Some(Value::from("Acme Corp"))
    );
    // Retracted for 2023: absent then, Initech around it.
    q(
        &db,
        "CALL plexus.temporal.retract('node', 'ann', '2023-01-01T00:00:00Z', '2024-01-01T00:00:00Z', 'sabbatical')",
        &none,
    );
    assert_eq!(employer(&db, "2023-06-01T00:00:00Z"), None);
    assert_eq!(
        employer(&db, "2024-06-01T00:00:00Z"),
        Some(Value::from("Initech"))
    );

    let ops = q(
        &db,
        "CALL plexus.temporal.versions('node', 'ann') YIELD operation, reason, supersedes RETURN operation, reason, supersedes IS NOT NULL AS corrects",
        &none,
    );
    assert_eq!(
        ops,
        vec![
            vec![Value::from("assert"), Value::Null, Value::Bool(false)],
            vec![Value::from("assert"), Value::Null, Value::Bool(false)],
            vec![Value::from("correct"), Value::Null, Value::Bool(true)],
            vec![
                Value::from("retract"),
                Value::from("sabbatical"),
                Value::Bool(false)
            ],
        ]
    );

    q(
        &db,
        "CALL plexus.temporal.assertRelationship('r1', 'ann', 'acme', 'WORKS_AT', {role: 'dev'}, 0, 100)",
        &none,
    );
    let rel = q(
        &db,
        "CALL plexus.temporal.asOf('relationship', 'r1', 99) YIELD source, target, type, validFrom, validTo RETURN source, target, type, validTo",
        &none,
    );
    assert_eq!(rel.len(), 1);
    assert_eq!(
        rel[0][..3],
        [
            Value::from("ann"),
            Value::from("acme"),
            Value::from("WORKS_AT")
        ]
    );
    assert!(q(
        &db,
        "CALL plexus.temporal.asOf('relationship', 'r1', 100)",
        &none
    )
    .is_empty());

    let bad = |text: &str| db.query("default", text, &none).unwrap_err().to_string();
    assert!(bad("CALL plexus.temporal.correct('nope', {})").contains("no version with id 'nope'"));
    assert!(bad("CALL plexus.temporal.assertNode('x', [], {}, 5, 5)").contains("is empty"));
    assert!(bad("CALL plexus.temporal.asOf('thing', 'x', 5)").contains("neither 'node'"));
    assert!(bad("CALL plexus.temporal.asOf('node', 'x', true)").contains("not BOOL"));
}

#[test]
fn valid_time_reads_as_known_at_a_system_time_are_bitemporal() {
    let db = Database::in_memory().unwrap();
    db.keep_history("default").unwrap();
    let none = Params::new();
    let v = q(
        &db,
        "CALL plexus.temporal.assertNode('ann', [], {employer: 'Acme'}, 0, 100) YIELD versionId RETURN versionId",
        &none,
    )[0][0]
        .clone();
    let before_correction = db.system_time().unwrap();
    let params = Params::from([("v".to_string(), v)]);
    q(
        &db,
        "CALL plexus.temporal.correct($v, {employer: 'Acme Corp'})",
        &params,
    );
    let read = "CALL plexus.temporal.asOf('node', 'ann', 50) FOR SYSTEM_TIME AS OF $t \
                YIELD properties RETURN properties.employer AS e";
    assert_eq!(
        q(&db, read, &at(before_correction)),
        [[Value::from("Acme")]]
    );
    assert_eq!(
        q(&db, read, &at(db.system_time().unwrap())),
        [[Value::from("Acme Corp")]]
    );
    let e = db
        .query(
            "default",
            "CALL plexus.temporal.retract('node', 'ann', 0, 10) FOR SYSTEM_TIME AS OF 1",
            &none,
        )
        .unwrap_err();
    assert!(e.to_string().contains("cannot write"), "{e}");
}

/// The valid-time graph from Cypher: label members, neighbours and a
/// shortest path as of an instant.
#[test]
fn valid_time_traversals_from_cypher() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    for (id, from) in [("ann", 0), ("bob", 0), ("cy", 5)] {
        q(
            &db,
            &format!("CALL plexus.temporal.assertNode('{id}', ['Person'], {{}}, {from}) YIELD versionId RETURN versionId"),
            &none,
        );
    }
    // ann knows bob until 10; bob knows cy from 5; ann knows cy from 20.
    for (id, s, d, from, to) in [
        ("k1", "ann", "bob", 0, "10"),
        ("k2", "bob", "cy", 5, "null"),
        ("k3", "ann", "cy", 20, "null"),
    ] {
        q(
            &db,
            &format!(
                "CALL plexus.temporal.assertRelationship('{id}', '{s}', '{d}', 'KNOWS', {{}}, {from}, {to}) \
                 YIELD versionId RETURN versionId"
            ),
            &none,
        );
    }
    let people = |at: i64| -> Vec<Vec<Value>> {
        q(
            &db,
            &format!("CALL plexus.temporal.nodes('Person', {at}) YIELD id RETURN id ORDER BY id"),
            &none,
        )
    };
    assert_eq!(people(1).len(), 2);
    assert_eq!(people(6).len(), 3);
    let path = |at: i64| -> Vec<Vec<Value>> {
        q(
            &db,
            &format!("CALL plexus.temporal.shortestPath('ann', 'cy', {at}) YIELD nodes, relationships RETURN size(relationships) AS hops, nodes"),
            &none,
        )
    };
    assert!(path(2).is_empty(), "cy is not reachable before 5");
    let s = |x: &str| Value::String(x.into());
    assert_eq!(
        path(7),
        [[
            Value::Int(2),
            Value::List(vec![s("ann"), s("bob"), s("cy")])
        ]]
    );
    assert!(path(15).is_empty(), "ann no longer knows bob");
    assert_eq!(
        path(25),
        [[Value::Int(1), Value::List(vec![s("ann"), s("cy")])]]
    );
    let around_bob = q(
        &db,
        "CALL plexus.temporal.neighbors('bob', 7, 'both') YIELD id RETURN id ORDER BY id",
        &none,
    );
    assert_eq!(around_bob, [[s("k1")], [s("k2")]]);
    let typed = q(
        &db,
        "CALL plexus.temporal.neighbors('bob', 7, 'in', 'LIKES') YIELD id RETURN id",
        &none,
    );
    assert!(typed.is_empty());
    let e = db
        .query(
            "default",
            "CALL plexus.temporal.neighbors('bob', 7, 'sideways') YIELD id RETURN id",
            &none,
        )
        .unwrap_err();
    assert!(e.to_string().contains("sideways"), "{e}");
}

/// The names and scores a vector search returns, through Cypher.
fn nearest(db: &Database, text: &str, angle: f64, t: Option<u64>) -> Vec<(String, f64)> {
    let mut p = Params::from([(
        "q".to_string(),
        Value::List(vec![
            Value::Float(angle.to_radians().cos()),
            Value::Float(angle.to_radians().sin()),
        ]),
    )]);
    if let Some(t) = t {
        p.insert("t".into(), Value::Int(t as i64));
    }
    q(db, text, &p)
        .into_iter()
        .map(|r| match (&r[0], &r[1]) {
            (Value::String(n), Value::Float(s)) => (n.clone(), *s),
            other => panic!("unexpected row {other:?}"),
        })
        .collect()
}

/// The `k` of `docs` (name, angle in degrees, even) nearest `angle` by
/// cosine, the even ones only when `even`, with Neo4j's scores: what an
/// exact search returns.
fn ranked(docs: &[(String, f64, bool)], angle: f64, k: usize, even: bool) -> Vec<(String, f64)> {
    let mut all: Vec<(String, f64)> = docs
        .iter()
        .filter(|d| d.2 || !even)
        .map(|(n, a, _)| (n.clone(), (1.0 + (a - angle).to_radians().cos()) / 2.0))
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.truncate(k);
    all
}

/// The error of a node search of `index` as of `t`.
fn node_search_refused(db: &Database, index: &str, t: u64) -> String {
    let text = format!(
        "CALL db.index.vector.queryNodes('{index}', 1, [1.0, 0.0]) FOR SYSTEM_TIME AS OF $t \
         YIELD node RETURN node"
    );
    db.query("default", &text, &at(t)).unwrap_err().to_string()
}

/// `got` names what `want` names, in order, with scores within `within`.
fn same_ranking(got: &[(String, f64)], want: &[(String, f64)], within: f64, what: &str) {
    let names = |r: &[(String, f64)]| r.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(got), names(want), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g.1 - w.1).abs() < within,
            "{what}: score {} against {}",
            g.1,
            w.1
        );
    }
}

#[test]
fn vector_search_as_of_a_system_time_ranks_the_vectors_held_then() {
    let db = Database::in_memory().unwrap();
    db.keep_history("default").unwrap();
    let none = Params::new();
    q(
        &db,
        "CREATE VECTOR INDEX emb FOR (n:Doc) ON n.v \
         OPTIONS {indexConfig: {`vector.dimensions`: 2, `vector.similarity_function`: 'cosine'}}",
        &none,
    );
    let create = "UNWIND $docs AS d CREATE (:Doc {name: d[0], v: [cos(radians(d[1])), \
                  sin(radians(d[1]))], even: d[2]})";
    let rows = |docs: &[(String, f64, bool)]| {
        let list = docs
            .iter()
            .map(|(n, a, e)| {
                Value::List(vec![
                    Value::from(n.as_str()),
                    Value::Float(*a),
                    Value::Bool(*e),
                ])
            })
            .collect();
        Params::from([("docs".to_string(), Value::List(list))])
    };
    // Doc i points at 10·i degrees; every other one is "even".
    let then: Vec<(String, f64, bool)> = (0..36)
        .map(|i| (format!("d{i}"), 10.0 * i as f64, i % 2 == 0))
        .collect();
    q(&db, create, &rows(&then));
    let first = db.system_time().unwrap();
    // Later: a third of the docs turn by 95 degrees, a sixth are deleted,
    // and new ones arrive, so the answers before and after differ.
    q(
        &db,
        "MATCH (d:Doc) WHERE toInteger(substring(d.name, 1)) % 3 = 0 \
         SET d.v = [cos(radians(toInteger(substring(d.name, 1)) * 10 + 95)), \
                    sin(radians(toInteger(substring(d.name, 1)) * 10 + 95))]",
        &none,
    );
    q(
        &db,
        "MATCH (d:Doc) WHERE toInteger(substring(d.name, 1)) % 6 = 1 DETACH DELETE d",
        &none,
    );
    let late: Vec<(String, f64, bool)> = (0..12)
        .map(|i| (format!("n{i}"), 30.0 * i as f64 + 5.0, true))
        .collect();
    q(&db, create, &rows(&late));
    let now: Vec<(String, f64, bool)> = then
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 6 != 1)
        .map(|(i, (n, a, e))| (n.clone(), if i % 3 == 0 { a + 95.0 } else { *a }, *e))
        .chain(late)
        .collect();
    let past = "CALL db.index.vector.queryNodes('emb', 4, $q) FOR SYSTEM_TIME AS OF $t \
                YIELD node, score RETURN node.name AS name, score";
    let current = "CALL db.index.vector.queryNodes('emb', 4, $q) YIELD node, score \
                   RETURN node.name AS name, score";
    let past_even = "CALL db.index.vector.queryNodes('emb', 3, $q) FOR SYSTEM_TIME AS OF $t \
                     YIELD node, score WHERE node.even RETURN node.name AS name, score";
    for angle in [0.0, 47.0, 133.0, 181.0, 299.0] {
        same_ranking(
            &nearest(&db, past, angle, Some(first)),
            &ranked(&then, angle, 4, false),
            1e-5,
            &format!("as of the first commit, at {angle} degrees"),
        );
        same_ranking(
            &nearest(&db, current, angle, None),
            &ranked(&now, angle, 4, false),
            // The live index holds f16 codes (quantization is on by default).
            1e-3,
            &format!("now, at {angle} degrees"),
        );
        same_ranking(
            &nearest(&db, past_even, angle, Some(first)),
            &ranked(&then, angle, 3, true),
            1e-5,
            &format!("the even ones as of the first commit, at {angle} degrees"),
        );
    }
    // What held then and now differ, so the two answers cannot agree by
    // chance.
    assert_ne!(ranked(&then, 0.0, 4, false), ranked(&now, 0.0, 4, false));
    // An index created later is not there as of the first commit.
    q(
        &db,
        "CREATE VECTOR INDEX later FOR (n:Doc) ON n.w \
         OPTIONS {indexConfig: {`vector.dimensions`: 2}}",
        &none,
    );
    let e = node_search_refused(&db, "later", first);
    assert!(e.contains("later"), "{e}");
}

/// A relationship vector index as of a system time: the relationships of
/// its type as they were, ranked exactly.
#[test]
fn relationship_vector_search_as_of_a_system_time() {
    let db = Database::in_memory().unwrap();
    db.keep_history("default").unwrap();
    let none = Params::new();
    q(
        &db,
        "CREATE VECTOR INDEX cites FOR ()-[r:CITES]-() ON (r.e) \
         OPTIONS {indexConfig: {`vector.dimensions`: 2, `vector.similarity_function`: 'euclidean'}}",
        &none,
    );
    // r_i points at (i, 0) and CITES; a LINKS beside each holds a vector
    // too, which the index does not cover.
    q(
        &db,
        "UNWIND range(0, 9) AS i CREATE (a:Doc {name: 'a' + i})-[:CITES {name: 'r' + i, \
         e: [toFloat(i), 0.0]}]->(:Doc)<-[:LINKS {name: 'l' + i, e: [toFloat(i), 0.0]}]-(a)",
        &none,
    );
    let first = db.system_time().unwrap();
    q(
        &db,
        "MATCH ()-[r:CITES]->() WHERE r.name IN ['r2', 'r3'] SET r.e = [50.0, 0.0]",
        &none,
    );
    q(&db, "MATCH ()-[r:CITES {name: 'r4'}]->() DELETE r", &none);
    let near = |t: Option<u64>| -> Vec<Value> {
        let mut p = Params::from([(
            "q".to_string(),
            Value::List(vec![Value::Float(3.2), Value::Float(0.0)]),
        )]);
        let clause = match t {
            Some(t) => {
                p.insert("t".into(), Value::Int(t as i64));
                "FOR SYSTEM_TIME AS OF $t"
            }
            None => "",
        };
        let text = format!(
            "CALL db.index.vector.queryRelationships('cites', 3, $q) {clause} \
             YIELD relationship RETURN relationship.name"
        );
        q(&db, &text, &p)
            .into_iter()
            .map(|r| r[0].clone())
            .collect()
    };
    assert_eq!(near(Some(first)), ["r3", "r4", "r2"].map(Value::from));
    assert_eq!(near(None), ["r5", "r1", "r6"].map(Value::from));
    // A node search of a relationship index is refused as of then too.
    let e = node_search_refused(&db, "cites", first);
    assert!(e.contains("relationships"), "{e}");
}
