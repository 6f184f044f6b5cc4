//! A grouped count over one property (`MATCH (n:L) RETURN n.k, count(*)`)
//! is answered from the property's column, each distinct value once with
//! its nodes counted (`plexus-query/src/exec/group_count.rs`). The same
//! query with `WITH n` before its RETURN goes through the pipeline, every
//! node bound and grouped: on random graphs — values that group together
//! (`1` and `1.0`, `0.0` and `-0.0`), lists, NaN, nodes lacking the key,
//! nodes with several labels or none — both must give the same rows.

use plexus::{Database, Params, Props, Table, Value};
use proptest::prelude::*;

/// Grouped counts, each with `{m}` where the pipeline's form puts
/// `WITH n`.
const QUERIES: &[&str] = &[
    "MATCH (n) {m} RETURN n.k AS k, count(*) AS c",
    "MATCH (n:A) {m} RETURN n.k AS k, count(n) AS c",
    "MATCH (n:B) {m} RETURN count(n.k) AS c, n.k AS k",
    "MATCH (n:A) {m} RETURN n.k AS k, count(DISTINCT n.k) AS d, min(n.k) AS lo, max(n.k) AS hi",
    "MATCH (n) {m} RETURN coalesce(n.k, 'none') AS s, count(*) AS c",
    "MATCH (n) {m} RETURN min(n.k) AS lo, max(n.k) AS hi, count(*) AS c",
    "MATCH (n) {m} RETURN n.k AS k, collect(DISTINCT n.k) AS ks",
    // A WITH that groups, then more clauses.
    "MATCH (n) {m} WITH n.k AS k, count(*) AS c WHERE c > 1 RETURN k, c ORDER BY c DESC, k",
    "MATCH (n:A) {m} WITH min(n.k) AS lo, count(*) AS c UNWIND [lo, c] AS x RETURN x",
    // Not a grouped count (another property is read): the pipeline.
    "MATCH (n) {m} RETURN n.k AS k, sum(DISTINCT n.i) AS s",
    "MATCH (n:A) {m} RETURN n.k AS k, count(*) AS c ORDER BY c DESC, k LIMIT 2",
    // Ties left in the order the groups were met.
    "MATCH (n) {m} RETURN n.k AS k, count(*) AS c ORDER BY c DESC LIMIT 3",
    "MATCH (n) {m} RETURN n.k AS k, count(*) AS c ORDER BY n.k SKIP 1",
    "MATCH (n) {m} RETURN DISTINCT n.k IS NULL AS z, count(*) AS c",
    "MATCH (n:Nobody) {m} RETURN n.k AS k, count(*) AS c",
    "MATCH (n) {m} RETURN n.nothing AS k, count(*) AS c",
];

/// The values a node's `k` takes (`None`: it lacks the key).
fn value(pick: u8) -> Option<Value> {
    Some(match pick % 12 {
        0 => return None,
        1 => Value::Int(1),
        2 => Value::Float(1.0),
        3 => Value::Int(0),
        4 => Value::Float(0.0),
        5 => Value::Float(-0.0),
        6 => Value::from("a"),
        7 => Value::from("b"),
        8 => Value::Bool(true),
        9 => Value::List(vec![Value::Int(1), Value::Int(2)]),
        10 => Value::Float(f64::NAN),
        _ => Value::Float(2.5),
    })
}

/// A graph of one node per `(labels, k, i)`: labels none, `A`, `B` or
/// both; `k` from [`value`]; `i` a small integer.
fn graph(nodes: &[(u8, u8, u8)]) -> Database {
    let db = Database::in_memory().expect("opens");
    let mut t = db.write("default").expect("writes");
    for &(labels, k, i) in nodes {
        let labels: &[&str] = match labels % 4 {
            0 => &[],
            1 => &["A"],
            2 => &["B"],
            _ => &["A", "B"],
        };
        let mut props = Props::from([("i".to_string(), Value::Int(i64::from(i % 5)))]);
        if let Some(v) = value(k) {
            props.insert("k".to_string(), v);
        }
        t.create_node(None, labels, &props).expect("node");
    }
    t.commit().expect("commits");
    db
}

/// A query's rows, each as text, in their order: the column's groups come
/// in the order the pipeline meets them.
fn rows(t: &Table) -> Vec<String> {
    t.rows.iter().map(|r| format!("{r:?}")).collect()
}

fn run(db: &Database, q: &str) -> Table {
    db.query("default", q, &Params::new()).expect(q)
}

fn check(db: &Database) {
    for q in QUERIES {
        let fast = q.replace("{m} ", "");
        let slow = q.replace("{m}", "WITH n");
        let (a, b) = (run(db, &fast), run(db, &slow));
        assert_eq!(a.columns, b.columns, "{fast}");
        assert_eq!(rows(&a), rows(&b), "{fast}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_grouped_count_from_the_column_is_the_pipelines(
        nodes in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..40)
    ) {
        check(&graph(&nodes));
    }
}

/// The grouped counts take the column where one serves: EXPLAIN says so,
/// and PROFILE runs the same plan.
#[test]
fn explain_names_the_column_and_the_answer_is_exact() {
    let nodes: Vec<(u8, u8, u8)> = (0..60u8).map(|i| (i, i.wrapping_mul(7), i)).collect();
    let db = graph(&nodes);
    for q in QUERIES.iter().filter(|q| !q.contains("n.i")) {
        let fast = q.replace("{m} ", "");
        for how in ["EXPLAIN", "PROFILE"] {
            let plan = run(&db, &format!("{how} {fast}"));
            let ops: Vec<String> = plan.rows.iter().map(|r| format!("{:?}", r[1])).collect();
            assert!(
                ops.iter()
                    .any(|o| o.contains("NodePropertyGroupsFromColumn")),
                "{how} {fast}: {ops:?}"
            );
        }
    }
    let t = run(
        &db,
        "MATCH (n) RETURN n.k AS k, count(*) AS c ORDER BY c DESC, k",
    );
    // Every node counted once; 0.0 and -0.0 one group (apart from the
    // integer 0), each NaN a group of its own, as the pipeline groups them.
    let total: i64 = t
        .rows
        .iter()
        .map(|r| match r[1] {
            Value::Int(n) => n,
            _ => 0,
        })
        .sum();
    assert_eq!(total, 60, "{t:?}");
    let picked = |p: &[u8]| {
        nodes
            .iter()
            .filter(|(_, k, _)| p.contains(&(k % 12)))
            .count()
    };
    let count_of = |v: &Value| {
        t.rows
            .iter()
            .filter(|r| format!("{:?}", r[0]) == format!("{v:?}"))
            .map(|r| r[1].clone())
            .collect::<Vec<_>>()
    };
    let zero = i64::try_from(picked(&[4, 5])).unwrap();
    assert_eq!(count_of(&Value::Float(0.0)), [Value::Int(zero)], "{t:?}");
    assert_eq!(
        count_of(&Value::Float(f64::NAN)).len(),
        picked(&[10]),
        "{t:?}"
    );
    check(&db);
}

/// Inside a transaction that changed nodes no column serves: the grouped
/// count reads the nodes, its own writes included.
#[test]
fn a_transaction_counts_its_own_writes() {
    let db = graph(&[(1, 1, 0), (1, 6, 0), (1, 6, 1)]);
    let session = db.session("default").expect("session");
    let mut tx = session.begin().expect("begins");
    tx.query("CREATE (:A {k: 'a'}), (:A)", &Params::new())
        .expect("creates");
    let t = tx
        .query(
            "MATCH (n:A) RETURN n.k AS k, count(*) AS c ORDER BY c DESC",
            &Params::new(),
        )
        .expect("counts");
    assert_eq!(
        t.rows,
        vec![
            vec![Value::from("a"), Value::Int(3)],
            vec![Value::Int(1), Value::Int(1)],
            vec![Value::Null, Value::Int(1)],
        ]
    );
    tx.rollback();
}
