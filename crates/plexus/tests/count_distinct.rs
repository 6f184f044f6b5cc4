//! `MATCH … RETURN count(DISTINCT v)` is counted by identity as the
//! matches are found (`plexus-query/src/exec/count_distinct.rs`). The same
//! query with a second item goes through the projection's aggregate
//! instead: on random graphs both must give one count, for node and
//! relationship variables, fixed and variable-length hops (walked
//! breadth-first in both), WHERE clauses and self-loops. Likewise
//! `count(v)` of a variable the MATCH binds, counted as `count(*)` is
//! (`exec::count_shape`: from the counters, the degrees or the matches).
//! And a last variable-length hop that nothing reads, counted by its
//! trails (`Matcher::count_trails`).

use plexus::{Database, Params, Props, Value};
use proptest::prelude::*;

const QUERIES: &[&str] = &[
    "MATCH (a)-[*1..3]->(b) RETURN count(DISTINCT b)",
    "MATCH (a {x: 1})-[*1..3]->(b) WHERE b.x <> 1 RETURN count(DISTINCT b)",
    "MATCH (a:A)-[:T*1..2]-(b) RETURN count(DISTINCT b)",
    "MATCH (a)-[*0..2]-(b) RETURN count(DISTINCT b)",
    "MATCH (a)-[*2..2]-(b) RETURN count(DISTINCT b)",
    "MATCH (a)-[:T*1..2]-(b)-[:U]->(c) RETURN count(DISTINCT c)",
    "MATCH (a)-[r:T]->(b) RETURN count(DISTINCT r)",
    "MATCH (a)-[r]-(b) WHERE a.x < b.x RETURN count(DISTINCT a)",
    "MATCH (n)-[r]-(n) RETURN count(DISTINCT r)",
    "MATCH (a)-->(b)-->(c) RETURN count(DISTINCT c)",
    "MATCH (a:B), (b:A) RETURN count(DISTINCT b)",
    // A last step binding the counted node hands it over bare
    // (`pattern::Want::Nodes`): with labels and properties on it,
    // a WHERE the walk settles or leaves to the end, a relationship list
    // or a path the WHERE reads, an OR walked alternative by alternative,
    // and the counted node bound by an earlier pattern than the last.
    "MATCH (a)-[*1..2]-(b:A) RETURN count(DISTINCT b)",
    "MATCH (a)-[*1..2]-(b {x: 2}) RETURN count(DISTINCT b)",
    "MATCH (a)-[*1..2]->(b) WHERE a.x < b.x OR b:A RETURN count(DISTINCT b)",
    "MATCH (a)-[r*1..2]->(b) WHERE size(r) > 1 RETURN count(DISTINCT b)",
    "MATCH p = (a)-[*1..2]->(b) WHERE length(p) > 1 RETURN count(DISTINCT b)",
    "MATCH (a:A)-[:T*0..2]-(b:A) WHERE a.x = 1 OR b.x = 2 RETURN count(DISTINCT b)",
    "MATCH (c:B), (a)-[*1..2]->(b) WHERE b.x = c.x RETURN count(DISTINCT b)",
    "MATCH (a)-[*1..2]->(b), (c:A) WHERE c.x = b.x RETURN count(DISTINCT b)",
    "MATCH (a)-[:U]->(b)<-[:T]-(c) WHERE c.x <> a.x RETURN count(DISTINCT c)",
    // A conjunct reading no variable of the MATCH is checked on the whole
    // match, after the walk.
    "MATCH (a)-[*1..2]->(b) WHERE b.x > 0 AND size([]) > 0 RETURN count(DISTINCT b)",
    "MATCH (a)-[*1..2]->(b) WHERE b.x > 0 AND size([1]) > 0 RETURN count(DISTINCT b)",
    // One start (`k` is unique): the count is one reach's ends, listed
    // without a set (`DistinctNodes::add_in_run`) — directed, undirected
    // from depth 0, two steps exactly, filtered; and several reaches that
    // meet (rows, starts, OR alternatives), whose ends the set must merge.
    "MATCH (a {k: 1})-[*1..3]->(b) RETURN count(DISTINCT b)",
    "MATCH (a {k: 2})-[*0..2]-(b) RETURN count(DISTINCT b)",
    "MATCH (a {k: 3})-[*2..2]-(b) RETURN count(DISTINCT b)",
    "MATCH (a {k: 1})-[:T*1..3]->(b) WHERE b.k <> 1 RETURN count(DISTINCT b)",
    "UNWIND [1, 2, 1, 0] AS i MATCH (a {k: i})-[*1..2]->(b) RETURN count(DISTINCT b)",
    "MATCH (a) WHERE a.k IN [0, 1] MATCH (a)-[*1..2]-(b) RETURN count(DISTINCT b)",
    "MATCH (a:A {k: 0})-[*1..2]->(b) WHERE b.x = 1 OR b.x = 2 RETURN count(DISTINCT b)",
    "MATCH (c {k: 4}), (a {k: 1})-[*1..2]->(b) RETURN count(DISTINCT b)",
];

/// A graph of `n` nodes (labels `A` or `B`, a small `x`) and `edges` as
/// (source, target, type `T` or `U`), self-loops included.
fn graph(n: usize, edges: &[(usize, usize, bool)]) -> Database {
    let db = Database::in_memory().expect("opens");
    let mut t = db.write("default").expect("writes");
    let ids: Vec<_> = (0..n)
        .map(|i| {
            let label = if i % 3 == 0 { "A" } else { "B" };
            let props = Props::from([
                ("x".to_string(), Value::Int((i % 4) as i64)),
                ("k".to_string(), Value::Int(i as i64)),
            ]);
            t.create_node(None, &[label], &props).expect("node")
        })
        .collect();
    for &(s, d, typed) in edges {
        let ty = if typed { "T" } else { "U" };
        t.create_edge(None, ids[s % n], ids[d % n], ty, &Props::new())
            .expect("edge");
    }
    t.commit().expect("commits");
    // An index lets an OR of equalities on either end walk once per
    // alternative (`pattern/or_expand.rs`).
    db.query("default", "CREATE INDEX FOR (n:A) ON (n.x)", &Params::new())
        .expect("indexes");
    db
}

fn first(db: &Database, q: &str) -> Value {
    let t = db.query("default", q, &Params::new()).expect(q);
    t.rows
        .first()
        .and_then(|r| r.first())
        .cloned()
        .unwrap_or(Value::Null)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn counted_as_the_projection_counts(
        n in 1usize..12,
        edges in proptest::collection::vec((0usize..12, 0usize..12, any::<bool>()), 0..30),
    ) {
        let db = graph(n, &edges);
        for q in QUERIES.iter().chain(COUNTS_OF_A_VARIABLE) {
            // A second aggregate leaves the shape the count is pushed into.
            let projected = q.replacen("RETURN ", "RETURN count(*) AS z, ", 1);
            let t = db.query("default", &projected, &Params::new()).expect("runs");
            let want = t.rows.first().and_then(|r| r.get(1)).cloned().unwrap_or(Value::Null);
            prop_assert_eq!(first(&db, q), want, "{}", q);
        }
    }
}

/// `count(v)` of a variable the MATCH binds counts every match, as
/// `count(*)` does (`exec::count_shape`): nodes, relationships, a
/// variable-length relationship's list and a path.
const COUNTS_OF_A_VARIABLE: &[&str] = &[
    "MATCH (a) RETURN count(a)",
    "MATCH (a:A) RETURN count(a)",
    "MATCH (a)-[r]->(b) RETURN count(r)",
    "MATCH (a)-->(b) RETURN count(b)",
    "MATCH (a)-[:T]->(b) RETURN count(a)",
    "MATCH (a {x: 1})-->(b) RETURN count(b)",
    "MATCH (a)-->(b) WHERE b.x > 1 RETURN count(b)",
    "MATCH (a)-->(b)<--(c) RETURN count(c)",
    "MATCH (n)-[r]-(n) RETURN count(r)",
    "MATCH (a)-[r*1..2]->(b) RETURN count(r)",
    "MATCH p = (a)-[*1..2]->(b) RETURN count(p)",
    "MATCH ()-[r:U]->() RETURN count(r)",
];

/// The count's column is named as the projection names it, and a count
/// over no match is zero.
#[test]
fn named_and_zero_as_the_projection_has_them() {
    let db = graph(3, &[]);
    for (q, column, n) in [
        (
            "MATCH (a)-->(b) RETURN count(DISTINCT b)",
            "count(DISTINCT b)",
            0,
        ),
        (
            "MATCH (a:A)-[*0..1]-(b) RETURN count(DISTINCT b) AS n",
            "n",
            1,
        ),
    ] {
        let t = db.query("default", q, &Params::new()).expect("runs");
        assert_eq!(t.columns, vec![column.to_string()], "{q}");
        assert_eq!(t.rows, vec![vec![Value::Int(n)]], "{q}");
    }
}

/// A distinct count over long walks stays within the query's memory
/// budget (the walk's visited nodes and the distinct nodes it holds are
/// charged): past it the query fails with a resource-limit error, and the
/// same query within a larger budget answers.
#[test]
fn the_distinct_nodes_counted_are_held_within_the_memory_budget() {
    // A chain 0 -> 1 -> ... -> 199: 199 distinct ends from its first node.
    let edges: Vec<(usize, usize, bool)> = (0..199).map(|i| (i, i + 1, true)).collect();
    let db = graph(200, &edges);
    let q = "MATCH (a {x: 0})-[:T*1..300]->(b) WHERE b.x >= 0 RETURN count(DISTINCT b)";
    let run = |memory_limit| {
        let opts = plexus::QueryOptions {
            memory_limit: Some(memory_limit),
            ..Default::default()
        };
        db.query_with("default", q, &Params::new(), &opts)
    };
    let e = run(2_000).expect_err("past the budget");
    assert_eq!(e.kind(), plexus::ErrorKind::ResourceLimit, "{e}");
    // Nodes with x = 0 are 0, 4, 8, ...: the ends of each start's walk
    // along the chain, distinct over them all.
    let t = run(1 << 20).expect("within the budget");
    assert_eq!(t.rows, vec![vec![Value::Int(199)]]);
}

/// `{R}` is the relationship's variable: empty in the counted form, `r`
/// in the walked one; `{W}` is the walked form's `WITH *`.
const TRAILS: &[&str] = &[
    "MATCH (a {k: 1})-[{R}*1..3]->() {W} RETURN count(*) AS c",
    "MATCH (a {k: 2})-[{R}:T*0..2]-() {W} RETURN count(*) AS c",
    "MATCH (a {k: 3})-[{R}*2..2]-() {W} RETURN count(*) AS c",
    "MATCH (a {k: 1})-[{R}*0..0]->() {W} RETURN count(*) AS c",
    "MATCH (a)-[{R}:U*1..2]->() {W} RETURN count(*) AS c",
    "MATCH (a)-[{R}:T|U*1..3]-() {W} RETURN count(*) AS c",
    // Earlier relationships of the match are not taken again.
    "MATCH (a {k: 0})-[:T]->(b)-[{R}*1..2]->() {W} RETURN count(*) AS c",
    "MATCH (a {k: 0})<-[:U]-(b)-[{R}:T*1..3]-() {W} RETURN count(*) AS c",
    "MATCH (a)-[:T]-(b)-[{R}:T*1..2]-() {W} RETURN count(*) AS c",
    // Walked from the seek at the end: the hop counted is the first.
    "MATCH ()-[{R}*1..2]->(b:A {k: 0}) {W} RETURN count(*) AS c",
    // Starts from earlier rows and clauses.
    "MATCH (a {k: 1}) MATCH (a)-[{R}*1..2]-() {W} RETURN count(*) AS c",
    "UNWIND [1, 1, 2] AS i MATCH (a {k: i})-[{R}*1..2]->() {W} RETURN count(*) AS c",
    "OPTIONAL MATCH (a {k: 5})-[{R}:T*2..3]->() {W} RETURN count(*) AS c",
    // The weight through a grouping and through plain rows.
    "MATCH (a:A)-[{R}*1..3]->() {W} RETURN a.k AS k, count(*) AS c ORDER BY k",
    "MATCH (a {k: 1})-[{R}:T*1..2]-() {W} RETURN a.x AS x ORDER BY x",
];

/// `q` counted (`{R}` and `{W}` dropped) and walked (`r` named and every
/// variable handed to a `WITH *`, which reads `r`).
fn forms(q: &str) -> (String, String) {
    let counted = q.replace("{R}", "").replace("{W} ", "");
    let walked = q.replace("{R}", "r").replace("{W}", "WITH *");
    (counted, walked)
}

fn rows(db: &Database, q: &str) -> Vec<Vec<Value>> {
    db.query("default", q, &Params::new()).expect(q).rows
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A last variable-length hop that binds and checks nothing is
    /// counted, not matched trail by trail (`Matcher::count_trails`,
    /// EXPLAIN's `VarLengthCount`): one match stands for all of its trails,
    /// weighted by their number. Checked against the same query with the
    /// relationships named and handed to a `WITH`, walked trail by trail.
    #[test]
    fn trails_counted_as_the_walk_counts(
        n in 1usize..10,
        edges in proptest::collection::vec((0usize..10, 0usize..10, any::<bool>()), 0..24),
    ) {
        let db = graph(n, &edges);
        for q in TRAILS {
            let (counted, walked) = forms(q);
            prop_assert_eq!(rows(&db, &counted), rows(&db, &walked), "{}", counted);
        }
    }
}

/// The counted form is what runs (EXPLAIN names it), and the walked form
/// is not: the property test above compares two ways, not one twice.
#[test]
fn explain_shows_the_trails_counted() {
    let db = graph(3, &[(0, 1, true), (1, 2, true)]);
    let ops = |q: &str| {
        let t = db
            .query("default", &format!("EXPLAIN {q}"), &Params::new())
            .expect(q);
        let col = t
            .columns
            .iter()
            .position(|c| c == "operator")
            .expect("operator column");
        t.rows
            .iter()
            .filter_map(|r| r.get(col).and_then(Value::as_str).map(str::to_string))
            .collect::<Vec<_>>()
    };
    for q in TRAILS {
        let (counted, walked) = forms(q);
        assert!(
            ops(&counted).iter().any(|o| o.ends_with("VarLengthCount")),
            "{counted}"
        );
        assert!(
            !ops(&walked).iter().any(|o| o.ends_with("VarLengthCount")),
            "{walked}"
        );
    }
}

/// A count of trails stops at the query's timeout like any walk: a
/// complete graph's trails of any length are too many to count.
#[test]
fn counting_trails_honours_the_timeout() {
    let edges: Vec<(usize, usize, bool)> = (0..9)
        .flat_map(|s| (0..9).map(move |d| (s, d, true)))
        .collect();
    let db = graph(9, &edges);
    let opts = plexus::QueryOptions {
        timeout: Some(std::time::Duration::from_millis(200)),
        ..Default::default()
    };
    let e = db
        .query_with(
            "default",
            "MATCH (a {k: 0})-[*]->() RETURN count(*)",
            &Params::new(),
            &opts,
        )
        .expect_err("too many trails");
    assert_eq!(e.kind(), plexus::ErrorKind::ResourceLimit, "{e}");
}
