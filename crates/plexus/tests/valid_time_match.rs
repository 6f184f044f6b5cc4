//! Cypher over valid time: `MATCH … FOR VALID_TIME AS OF t` reads the
//! valid-time graph as of `t`; `BETWEEN a AND b` / `FROM a TO b`, every
//! entity holding in the range as its latest version there. Checked
//! against a reference: the same graph written as an ordinary graph from
//! the versions' point reads (`as_of`, checked against a model in
//! plexus-temporal's tests, and `latest_within`), queried by the same
//! Cypher without the qualifier. Every answer comes from one of the two
//! engines.

use plexus::temporal::{
    commit_versions, latest_within, EdgeState, Interval, Kind, NodeState, State, VersionWrite,
};
use plexus::{Database, Params, Props, Value};
use proptest::prelude::*;

const NODES: usize = 6;
const EDGES: usize = 8;
/// Valid instants are drawn from `0..SPAN`.
const SPAN: i64 = 24;

/// The queries, with `{AT}` where the qualifier goes (after the first
/// MATCH's patterns). Each orders its rows fully.
const QUERIES: &[&str] = &[
    "MATCH (n) {AT} RETURN elementId(n) AS id, labels(n) AS l, n.x AS x ORDER BY id",
    "MATCH (n:A) {AT} RETURN elementId(n) AS id ORDER BY id",
    "MATCH (n:A:B) {AT} RETURN elementId(n) AS id ORDER BY id",
    "MATCH (a)-[r]->(b) {AT} RETURN elementId(a) AS a, type(r) AS t, elementId(r) AS r, \
     elementId(b) AS b, r.w AS w ORDER BY r",
    "MATCH (a)-[r:T]-(b) {AT} RETURN elementId(a) AS a, elementId(b) AS b, elementId(r) AS r \
     ORDER BY a, b, r",
    "MATCH (a:B)-[:T|U*1..3]->(b) {AT} RETURN elementId(a) AS a, count(DISTINCT b) AS c ORDER BY a",
    "MATCH (n) {AT} WHERE n.x > 2 RETURN count(n) AS c",
    "MATCH (n:A) {AT} RETURN count(*) AS c",
    "MATCH ()-[r]->() {AT} RETURN count(r) AS c",
    "MATCH ()-[r:U]->() {AT} RETURN count(r) AS c",
    "MATCH (n) {AT} RETURN n.x AS x, count(*) AS c ORDER BY x",
    "MATCH (n {x: 3}) {AT} RETURN elementId(n) AS id ORDER BY id",
    "MATCH (n:A {x: 2.0}) {AT} RETURN elementId(n) AS id ORDER BY id",
    "MATCH (n:B) {AT} WHERE n.x = 4 RETURN elementId(n) AS id, n.x AS x ORDER BY id",
    "MATCH (n:A) {AT} WHERE n.x >= 1 AND n.x < 3.5 RETURN elementId(n) AS id, n.x AS x ORDER BY id",
    "MATCH (n) {AT} WHERE n.x <= 2 RETURN elementId(n) AS id ORDER BY id",
    "MATCH (a)-[r:T {w: 1}]->(b) {AT} RETURN elementId(r) AS r, elementId(a) AS a ORDER BY r",
    "MATCH ()-[r]-() {AT} WHERE r.w = 2.0 RETURN elementId(r) AS r ORDER BY r",
    "MATCH (a)-[r:T]->(b) {AT} WHERE r.w >= 1 AND r.w < 2.5 \
     RETURN elementId(r) AS r, r.w AS w, elementId(b) AS b ORDER BY r",
    "MATCH ()-[r]-() {AT} WHERE r.w > 0.5 RETURN elementId(r) AS r ORDER BY r",
    "MATCH (n) {AT} OPTIONAL MATCH (n)-[r]-() RETURN elementId(n) AS id, count(r) AS d ORDER BY id",
    "MATCH (a {x: 1}), (b) {AT} WHERE a <> b MATCH p = shortestPath((a)-[*..5]-(b)) \
     RETURN elementId(a) AS a, elementId(b) AS b, length(p) AS l ORDER BY a, b",
    "MATCH (a) {AT} WHERE elementId(a) = 'n1' MATCH (a)-[]->(b)<-[]-(c) \
     RETURN elementId(b) AS b, elementId(c) AS c ORDER BY b, c",
];

#[derive(Debug, Clone)]
enum Op {
    Node {
        id: usize,
        a: bool,
        b: bool,
        x: i64,
        from: i64,
        len: Option<i64>,
    },
    Edge {
        id: usize,
        src: usize,
        dst: usize,
        u: bool,
        w: i64,
        from: i64,
        len: Option<i64>,
    },
    Retract {
        node: bool,
        id: usize,
        from: i64,
        len: i64,
    },
    /// Corrects the `n`-th node version written so far (if any).
    Correct { n: usize, x: i64 },
}

fn op() -> impl Strategy<Value = Op> {
    let from = 0..SPAN;
    let len = proptest::option::weighted(0.7, 1..SPAN);
    prop_oneof![
        4 => (0..NODES, any::<bool>(), any::<bool>(), 0..5i64, from.clone(), len.clone())
            .prop_map(|(id, a, b, x, from, len)| Op::Node { id, a, b, x, from, len }),
        5 => (0..EDGES, 0..NODES, 0..NODES, any::<bool>(), 0..3i64, from.clone(), len)
            .prop_map(|(id, src, dst, u, w, from, len)| Op::Edge { id, src, dst, u, w, from, len }),
        2 => (any::<bool>(), 0..NODES.max(EDGES), from, 1..SPAN)
            .prop_map(|(node, id, from, len)| Op::Retract { node, id, from, len }),
        1 => (0..32usize, 0..5i64).prop_map(|(n, x)| Op::Correct { n, x }),
    ]
}

fn interval(from: i64, len: Option<i64>) -> Interval {
    Interval::new(from, len.map(|l| from + l)).unwrap()
}

fn node_state(a: bool, b: bool, x: i64) -> NodeState {
    let mut labels = Vec::new();
    if a {
        labels.push("A".to_string());
    }
    if b {
        labels.push("B".to_string());
    }
    NodeState {
        labels,
        props: [("x".to_string(), Value::Int(x))].into(),
    }
}

fn write(op: &Op, node_versions: &[String]) -> Option<VersionWrite> {
    Some(match *op {
        Op::Node {
            id,
            a,
            b,
            x,
            from,
            len,
        } => VersionWrite::assert_node(&format!("n{id}"), node_state(a, b, x), interval(from, len)),
        Op::Edge {
            id,
            src,
            dst,
            u,
            w,
            from,
            len,
        } => VersionWrite::assert_edge(
            &format!("e{id}"),
            EdgeState {
                src: format!("n{src}"),
                dst: format!("n{dst}"),
                rel_type: if u { "U" } else { "T" }.into(),
                props: [("w".to_string(), Value::Int(w))].into(),
            },
            interval(from, len),
        ),
        Op::Retract {
            node,
            id,
            from,
            len,
        } => {
            let (kind, name) = if node {
                (Kind::Node, format!("n{}", id % NODES))
            } else {
                (Kind::Edge, format!("e{}", id % EDGES))
            };
            VersionWrite::retract(kind, &name, interval(from, Some(len)))
        }
        Op::Correct { n, x } => {
            let v = node_versions.get(n % node_versions.len().max(1))?;
            VersionWrite::correct(v, State::Node(node_state(true, n % 2 == 0, x)))
        }
    })
}

/// Writes the ops, a commit each (a refused write is skipped: a
/// retraction of an entity never asserted, say).
fn history(ops: &[Op]) -> Database {
    let db = Database::in_memory().unwrap();
    let mut node_versions = Vec::new();
    for op in ops {
        let Some(w) = write(op, &node_versions) else {
            continue;
        };
        if let Ok(vs) = commit_versions(db.storage(), "default", &[w]) {
            for v in vs {
                if matches!(v.state, State::Node(_)) {
                    node_versions.push(v.id);
                }
            }
        }
    }
    db
}

/// What a query reads: an instant, or a range `[from, to)`.
#[derive(Debug, Clone, Copy)]
enum Read {
    At(i64),
    Within(i64, i64),
}

impl Read {
    /// The qualifier; a range as `BETWEEN` (inclusive) or `FROM … TO`.
    fn qualifier(self) -> String {
        match self {
            Read::At(t) => format!("FOR VALID_TIME AS OF {t}"),
            Read::Within(from, to) if to % 2 == 0 => {
                format!("FOR VALID_TIME BETWEEN {from} AND {}", to - 1)
            }
            Read::Within(from, to) => format!("FOR VALID_TIME FROM {from} TO {to}"),
        }
    }

    fn held(self, r: &plexus::ReadTxn, kind: Kind, id: &str) -> Option<State> {
        let v = match self {
            Read::At(t) => plexus::temporal::as_of(r, kind, id, t),
            Read::Within(from, to) => latest_within(r, kind, id, from, to),
        };
        v.unwrap().map(|v| v.state)
    }
}

fn read() -> impl Strategy<Value = Read> {
    prop_oneof![
        (-1..SPAN + 1).prop_map(Read::At),
        (-1..SPAN, 1..SPAN / 2).prop_map(|(from, len)| Read::Within(from, from + len)),
    ]
}

/// The graph `at` reads, written as an ordinary graph from point reads
/// (an entity's version at the instant, or its latest within the range).
fn reference(db: &Database, at: Read) -> Database {
    let r = db.read("default").unwrap();
    let plain = Database::in_memory().unwrap();
    let mut t = plain.write("default").unwrap();
    let mut made = std::collections::HashMap::new();
    for i in 0..NODES {
        let id = format!("n{i}");
        if let Some(State::Node(n)) = at.held(&r, Kind::Node, &id) {
            let labels: Vec<&str> = n.labels.iter().map(String::as_str).collect();
            made.insert(
                id.clone(),
                t.create_node(Some(&id), &labels, &n.props).unwrap(),
            );
        }
    }
    for i in 0..EDGES {
        let id = format!("e{i}");
        if let Some(State::Edge(e)) = at.held(&r, Kind::Edge, &id) {
            if let (Some(&s), Some(&d)) = (made.get(&e.src), made.get(&e.dst)) {
                t.create_edge(Some(&id), s, d, &e.rel_type, &e.props)
                    .unwrap();
            }
        }
    }
    t.commit().unwrap();
    plain
}

fn rows(db: &Database, text: &str) -> Vec<Vec<Value>> {
    match db.query("default", text, &Params::new()) {
        Ok(t) => t.rows,
        Err(e) => panic!("{text}: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn match_over_valid_time_equals_the_graph_it_reads(
        ops in proptest::collection::vec(op(), 1..40),
        reads in proptest::collection::vec(read(), 1..4),
    ) {
        let db = history(&ops);
        for at in reads {
            let plain = reference(&db, at);
            for q in QUERIES {
                let asked = q.replace("{AT}", &at.qualifier());
                let want = rows(&plain, &q.replace("{AT}", ""));
                prop_assert_eq!(rows(&db, &asked), want, "{} {:?}", q, at);
            }
        }
    }
}

/// `versionId`, `validFrom` and `validTo` name the version an entity is as
/// of the instant, `systemFrom` when its commit recorded it (history or
/// not); on the graph itself they are null.
#[test]
fn version_functions_name_the_version_read() {
    let db = Database::in_memory().unwrap();
    let vs = commit_versions(
        db.storage(),
        "default",
        &[
            VersionWrite::assert_node("ann", node_state(true, false, 1), interval(0, Some(10))),
            VersionWrite::assert_node("ann", node_state(true, false, 2), interval(10, None)),
            VersionWrite::assert_node("bob", node_state(false, true, 3), interval(0, None)),
            VersionWrite::assert_edge(
                "k",
                EdgeState {
                    src: "ann".into(),
                    dst: "bob".into(),
                    rel_type: "KNOWS".into(),
                    props: Props::new(),
                },
                interval(5, Some(20)),
            ),
        ],
    )
    .unwrap();
    let text = "MATCH (a:A)-[r]->(b) FOR VALID_TIME AS OF $t \
                RETURN a.x AS x, versionId(a) AS va, validFrom(a) AS fa, validTo(a) AS ta, \
                versionId(r) AS vr, validTo(r) AS tr, validTo(b) AS tb";
    let at = |t: i64| {
        db.query(
            "default",
            text,
            &Params::from([("t".into(), Value::Int(t))]),
        )
        .unwrap()
        .rows
    };
    let micros = |us: u64| Value::DateTime(plexus::DateTime::from_epoch_micros(us));
    let s = |v: &str| Value::String(v.into());
    assert_eq!(
        at(7),
        [[
            Value::Int(1),
            s(&vs[0].id),
            micros(0),
            micros(10),
            s(&vs[3].id),
            micros(25),
            Value::Null
        ]]
    );
    assert_eq!(at(12)[0][1], s(&vs[1].id));
    let recorded = db
        .query(
            "default",
            "MATCH (a:A) FOR VALID_TIME AS OF 12 RETURN systemFrom(a)",
            &Params::new(),
        )
        .unwrap();
    // The commit's stamp, though the graph keeps no history.
    let committed = db.system_time().unwrap();
    assert!(committed > 0);
    assert_eq!(
        recorded.rows,
        [[micros(committed)]],
        "stamped without history"
    );
    assert_eq!(at(12)[0][3], Value::Null, "an open interval");
    assert!(at(30).is_empty(), "the relationship ended at 25");
    assert!(at(3).is_empty(), "the relationship starts at 5");
    // Without the qualifier, the graph itself: no versions (and here no
    // nodes either: valid-time versions are their own records).
    db.query("default", "CREATE (:A {x: 1})", &Params::new())
        .unwrap();
    let plain = db
        .query(
            "default",
            "MATCH (a:A) RETURN versionId(a), validFrom(a)",
            &Params::new(),
        )
        .unwrap();
    assert_eq!(plain.rows, [[Value::Null, Value::Null]]);
}

/// What a valid-time MATCH refuses, and where it reads.
#[test]
fn valid_time_reads_refuse_writes_and_see_their_transaction() {
    let db = Database::in_memory().unwrap();
    let none = Params::new();
    let e = db
        .query(
            "default",
            "MATCH (n) FOR VALID_TIME AS OF 5 SET n.x = 1",
            &none,
        )
        .unwrap_err();
    assert!(e.to_string().contains("cannot write"), "{e}");
    let e = db
        .query(
            "default",
            "MATCH (n) FOR VALID_TIME AS OF 1 MATCH (m) FOR VALID_TIME AS OF 2 RETURN n",
            &none,
        )
        .unwrap_err();
    assert!(e.to_string().contains("different instants"), "{e}");
    let e = db
        .query(
            "default",
            "MATCH (n) FOR VALID_TIME AS OF true RETURN n",
            &none,
        )
        .unwrap_err();
    assert!(e.to_string().contains("FOR VALID_TIME AS OF"), "{e}");
    // Each names the qualifier's expression that is wrong.
    for (text, place) in [
        (
            "MATCH (n) FOR VALID_TIME AS OF 'garbage' RETURN n",
            "(line 1, column 32)",
        ),
        (
            "MATCH (n) FOR VALID_TIME BETWEEN 10 AND 0 RETURN n",
            "(line 1, column 34)",
        ),
        (
            "MATCH (n) FOR SYSTEM_TIME AS OF -1 RETURN n",
            "(line 1, column 33)",
        ),
        (
            "MATCH (n) FOR VALID_TIME AS OF 1 MATCH (m) FOR VALID_TIME AS OF 2 RETURN n",
            "(line 1, column 65)",
        ),
    ] {
        let e = db.query("default", text, &none).unwrap_err().to_string();
        assert!(e.ends_with(place), "{text}: {e}");
    }
    // Inside an explicit transaction, the view holds the transaction's
    // own versions, and only it does until the commit.
    let s = db.session("default").unwrap();
    let mut tx = s.begin().unwrap();
    tx.query(
        "CALL plexus.temporal.assertNode('ann', ['P'], {}, 0) YIELD versionId RETURN versionId",
        &none,
    )
    .unwrap();
    let count = "MATCH (n:P) FOR VALID_TIME AS OF 3 RETURN count(n) AS c";
    assert_eq!(tx.query(count, &none).unwrap().rows, [[Value::Int(1)]]);
    assert_eq!(
        db.query("default", count, &none).unwrap().rows,
        [[Value::Int(0)]]
    );
    tx.commit().unwrap();
    assert_eq!(
        db.query("default", count, &none).unwrap().rows,
        [[Value::Int(1)]]
    );
    // A property lookup as of a valid time seeks the valid-time property
    // index (EXPLAIN shows it), whether or not the graph itself has one.
    db.query("default", "CREATE INDEX FOR (n:P) ON (n.name)", &none)
        .unwrap();
    let found = db
        .query(
            "default",
            "MATCH (n:P) FOR VALID_TIME AS OF 3 WHERE n.name IS NULL RETURN elementId(n) AS id",
            &none,
        )
        .unwrap();
    assert_eq!(found.rows, [[Value::String("ann".into())]]);
    let plan = db
        .query(
            "default",
            "EXPLAIN MATCH (n:P {name: 'x'}) FOR VALID_TIME AS OF 3 RETURN n",
            &none,
        )
        .unwrap();
    let operator = plan.columns.iter().position(|c| c == "operator").unwrap();
    assert_eq!(
        plan.rows[0][operator],
        Value::from("NodeIndexSeek"),
        "{plan:?}"
    );
}

/// With the graph's history kept, both qualifiers together read the
/// valid-time graph as the database knew it at a system time.
#[test]
fn valid_and_system_time_together_are_bitemporal() {
    let db = Database::in_memory().unwrap();
    db.keep_history("default").unwrap();
    let vs = commit_versions(
        db.storage(),
        "default",
        &[VersionWrite::assert_node(
            "ann",
            node_state(true, false, 1),
            interval(0, None),
        )],
    )
    .unwrap();
    let known = db.system_time().unwrap();
    commit_versions(
        db.storage(),
        "default",
        &[VersionWrite::correct(
            &vs[0].id,
            State::Node(node_state(true, false, 2)),
        )],
    )
    .unwrap();
    let x = |text: &str| {
        let p = Params::from([("s".into(), Value::Int(known as i64))]);
        db.query("default", text, &p).unwrap().rows
    };
    assert_eq!(
        x("MATCH (n:A) FOR VALID_TIME AS OF 5 RETURN n.x"),
        [[Value::Int(2)]]
    );
    assert_eq!(
        x("MATCH (n:A) FOR VALID_TIME AS OF 5 FOR SYSTEM_TIME AS OF $s RETURN n.x"),
        [[Value::Int(1)]],
        "before the correction"
    );
    // systemFrom: the commit that recorded each version.
    let stamp = |t: u64| Value::DateTime(plexus::DateTime::from_epoch_micros(t));
    let corrected = db.system_time().unwrap();
    assert!(corrected > known);
    assert_eq!(
        x("MATCH (n:A) FOR VALID_TIME AS OF 5 FOR SYSTEM_TIME AS OF $s RETURN systemFrom(n)"),
        [[stamp(known)]]
    );
    assert_eq!(
        x("MATCH (n:A) FOR VALID_TIME AS OF 5 RETURN systemFrom(n)"),
        [[stamp(corrected)]]
    );
}

/// `WHERE id(n) = x` in a valid-time view: the view numbers its nodes as it
/// meets them, so an id it has not met yet is no proof that no node has it
/// (`GraphRead::stable_ids`); the query finds the node a scan numbers so.
#[test]
fn an_internal_id_in_a_valid_time_view_is_found_by_the_walk() {
    let db = Database::in_memory().unwrap();
    let writes: Vec<VersionWrite> = (0..4)
        .map(|i| {
            let state = NodeState {
                labels: vec![],
                props: Props::from([("x".to_string(), Value::Int(i))]),
            };
            VersionWrite::assert_node(&format!("n{i}"), state, Interval::from(0))
        })
        .collect();
    commit_versions(db.storage(), "default", &writes).unwrap();
    let all = "MATCH (n) FOR VALID_TIME AS OF 5 RETURN id(n) AS i ORDER BY i";
    let ids = db.query("default", all, &Params::new()).unwrap().rows;
    assert_eq!(ids.len(), 4);
    let q = "MATCH (n) FOR VALID_TIME AS OF 5 WHERE id(n) = $i RETURN n.x AS x";
    for row in ids {
        let params = Params::from([("i".to_string(), row[0].clone())]);
        assert_eq!(
            db.query("default", q, &params).unwrap().rows.len(),
            1,
            "{row:?}"
        );
    }
}
