//! Sessions, explicit transactions, cursors and per-query limits through
//! the facade, on LMDB and in memory.

use plexus::{
    Backend, CancelHandle, Database, Error, ErrorKind, Limit, Options, Params, QueryError,
    QueryKind, QueryOptions, Value,
};
use std::time::Duration;

fn databases() -> Vec<(tempfile::TempDir, Database)> {
    let mut out = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(
        dir.path().join("db"),
        Options {
            backend: Some(Backend::Lmdb),
            ..Default::default()
        },
    )
    .unwrap();
    out.push((dir, db));
    out.push((tempfile::tempdir().unwrap(), Database::in_memory().unwrap()));
    out
}

fn p() -> Params {
    Params::new()
}

fn count(db: &Database, q: &str) -> i64 {
    let t = db.query("default", q, &p()).unwrap();
    t.rows[0][0].as_int().unwrap()
}

#[test]
fn explicit_transactions_see_their_writes_and_commit_atomically() {
    for (_d, db) in databases() {
        let s = db.session("default").unwrap();
        let mut tx = s.begin().unwrap();
        tx.run("CREATE (:P {n: 1})", &p()).unwrap();
        tx.run("CREATE (:P {n: 2})", &p()).unwrap();
        let t = tx.query("MATCH (x:P) RETURN sum(x.n) AS s", &p()).unwrap();
        assert_eq!(t.rows, vec![vec![Value::Int(3)]]);
        assert_eq!(
            count(&db, "MATCH (x:P) RETURN count(x)"),
            0,
            "not visible before commit"
        );
        tx.commit().unwrap();
        assert_eq!(count(&db, "MATCH (x:P) RETURN count(x)"), 2);

        let mut tx = s.begin().unwrap();
        tx.run("MATCH (x:P) DETACH DELETE x", &p()).unwrap();
        tx.rollback();
        assert_eq!(count(&db, "MATCH (x:P) RETURN count(x)"), 2, "rolled back");

        // Dropping an open transaction rolls it back.
        {
            let mut tx = s.begin().unwrap();
            tx.run("CREATE (:P {n: 3})", &p()).unwrap();
        }
        assert_eq!(count(&db, "MATCH (x:P) RETURN count(x)"), 2);
    }
}

#[test]
fn a_failed_query_leaves_its_transaction_only_to_roll_back() {
    for (_d, db) in databases() {
        let s = db.session("default").unwrap();
        let mut tx = s.begin().unwrap();
        tx.run("CREATE (:P {n: 1})", &p()).unwrap();
        // A read that fails wrote nothing: the transaction goes on.
        assert!(tx.run("RETURN 1 / 0", &p()).is_err());
        assert!(!tx.is_failed());
        // A write that fails half-way may have written: only rollback remains.
        let e = tx
            .run("UNWIND [1, 0] AS d CREATE (:P {n: 1 / d})", &p())
            .unwrap_err();
        assert!(matches!(e, Error::Query(QueryError::Arithmetic(_))), "{e}");
        assert!(tx.is_failed());
        assert!(matches!(
            tx.run("RETURN 1", &p()),
            Err(Error::TransactionFailed(_))
        ));
        assert!(matches!(tx.commit(), Err(Error::TransactionFailed(_))));
        assert_eq!(count(&db, "MATCH (x:P) RETURN count(x)"), 0);
    }
}

#[test]
fn a_read_only_transaction_reads_one_snapshot_and_refuses_writes() {
    for (_d, db) in databases() {
        db.query("default", "CREATE (:P {n: 1})", &p()).unwrap();
        let s = db.session("default").unwrap();
        let mut tx = s.begin_read().unwrap();
        assert!(tx.is_read_only());
        let sum = |tx: &mut plexus::Transaction| {
            tx.query("MATCH (x:P) RETURN sum(x.n)", &p()).unwrap().rows[0][0].clone()
        };
        assert_eq!(sum(&mut tx), Value::Int(1));
        // A writer is not held up by the open read, and the read keeps
        // its snapshot: both of its queries see the graph as it began.
        let mut w = s.begin().unwrap();
        w.run("CREATE (:P {n: 2})", &p()).unwrap();
        w.commit().unwrap();
        assert_eq!(count(&db, "MATCH (x:P) RETURN sum(x.n)"), 3);
        assert_eq!(sum(&mut tx), Value::Int(1));
        // A write is refused before it runs, and leaves the transaction
        // usable: it wrote nothing.
        let e = tx.run("CREATE (:P {n: 10})", &p()).unwrap_err();
        assert!(matches!(e, Error::WriteInReadTransaction), "{e}");
        assert_eq!(e.kind(), ErrorKind::BadInput);
        assert!(e.to_string().contains("read access mode"), "{e}");
        assert!(!tx.is_failed());
        // So is reading history as of another instant.
        let e = tx
            .run("MATCH (x:P) FOR SYSTEM_TIME AS OF 1 RETURN x", &p())
            .unwrap_err();
        assert!(
            e.to_string().contains("outside an explicit transaction"),
            "{e}"
        );
        // A failing read leaves it usable too.
        assert!(tx.run("RETURN 1 / 0", &p()).is_err());
        let c = tx.run("MATCH (x:P) RETURN x.n AS n", &p()).unwrap();
        assert_eq!(c.columns(), ["n"]);
        assert_eq!(c.summary().kind, QueryKind::Read);
        tx.commit().unwrap();
        assert_eq!(count(&db, "MATCH (x:P) RETURN count(x)"), 2);
        // Rolling back a read-only transaction ends it the same way.
        s.begin_read().unwrap().rollback();
        // A transaction keeps its last plan: a query run again, or another
        // one in between, gets its own answer.
        let mut tx = s.begin_read().unwrap();
        for (q, want) in [
            ("RETURN 1 AS x", 1),
            ("RETURN 1 AS x", 1),
            ("RETURN 2 AS x", 2),
            ("RETURN 1 AS x", 1),
        ] {
            assert_eq!(
                tx.query(q, &p()).unwrap().rows,
                vec![vec![Value::Int(want)]],
                "{q}"
            );
        }
    }
}

#[test]
fn explain_and_profile_can_give_their_plan_apart_from_the_rows() {
    for (_d, db) in databases() {
        db.query(
            "default",
            "UNWIND range(1, 5) AS i CREATE (:P {n: i})",
            &p(),
        )
        .unwrap();
        let s = db.session("default").unwrap();
        let apart = QueryOptions {
            plan_apart: true,
            ..Default::default()
        };
        let q = "MATCH (x:P) WHERE x.n > 2 RETURN x.n AS n ORDER BY n";
        // By default the plan is the rows.
        let rows = s.run(&format!("EXPLAIN {q}"), &p()).unwrap();
        assert!(rows.plan().is_none());
        assert_eq!(rows.columns()[1], "operator");
        // Apart: EXPLAIN runs nothing and yields no rows.
        let mut c = s.run_with(&format!("EXPLAIN {q}"), &p(), &apart).unwrap();
        let plan = c.plan().cloned().expect("EXPLAIN's plan");
        assert!(!plan.profiled);
        assert!(plan.steps.rows.len() >= 2, "{plan:?}");
        assert_eq!(c.next_row().unwrap(), None);
        // PROFILE yields the query's own rows, and the steps with what
        // each did; streamed auto-commit gives the same.
        for c in [
            s.run_with(&format!("PROFILE {q}"), &p(), &apart).unwrap(),
            s.stream(&format!("PROFILE {q}"), &p(), &apart).unwrap(),
        ] {
            let plan = c.plan().cloned().expect("PROFILE's plan");
            assert!(plan.profiled);
            assert!(plan.steps.columns.iter().any(|c| c == "rows"));
            assert_eq!(c.columns(), ["n"]);
            let t = c.into_table().unwrap();
            assert_eq!(
                t.rows,
                vec![
                    vec![Value::Int(3)],
                    vec![Value::Int(4)],
                    vec![Value::Int(5)]
                ]
            );
        }
        // A profiled write writes once, in a transaction or not.
        let c = s
            .run_with("PROFILE CREATE (:Q {n: 1}) RETURN 1 AS one", &p(), &apart)
            .unwrap();
        assert!(c.plan().is_some_and(|p| p.profiled));
        assert_eq!(c.summary().counters.nodes_created, 1);
        let mut tx = s.begin().unwrap();
        let c = tx
            .run_with("PROFILE CREATE (:Q {n: 2})", &p(), &apart)
            .unwrap();
        assert!(c.plan().is_some());
        tx.commit().unwrap();
        let mut rtx = s.begin_read().unwrap();
        let c = rtx
            .run_with("EXPLAIN MATCH (q:Q) RETURN q", &p(), &apart)
            .unwrap();
        assert!(c.plan().is_some_and(|p| !p.profiled));
        assert_eq!(count(&db, "MATCH (q:Q) RETURN count(q)"), 2);
        // A query without EXPLAIN or PROFILE has no plan.
        let c = s.run_with(q, &p(), &apart).unwrap();
        assert!(c.plan().is_none());
    }
}

#[test]
fn cursors_give_columns_first_then_rows_in_pulls() {
    let db = Database::in_memory().unwrap();
    let s = db.session("default").unwrap();
    let mut c = s
        .run("UNWIND range(1, 10) AS x RETURN x, x * x AS sq", &p())
        .unwrap();
    assert_eq!(c.columns(), ["x", "sq"]);
    assert_eq!(c.summary().kind, QueryKind::Read);
    let first = c.fetch(3).unwrap();
    assert_eq!(first.len(), 3);
    assert_eq!(first[2], vec![Value::Int(3), Value::Int(9)]);
    assert!(c.has_more().unwrap());
    assert_eq!(
        c.next_row().unwrap(),
        Some(vec![Value::Int(4), Value::Int(16)])
    );
    assert_eq!(c.fetch(100).unwrap().len(), 6);
    assert!(!c.has_more().unwrap());
    assert_eq!(c.consume().unwrap().rows, 10);

    let c = s.run("CREATE (:Q)", &p()).unwrap();
    assert_eq!(c.summary().kind, QueryKind::Write);
    assert!(c.columns().is_empty());
    assert!(s
        .clone()
        .run("MATCH (q:Q) RETURN q", &p())
        .unwrap()
        .has_more()
        .unwrap());
    assert!(matches!(
        db.session("no-such-graph"),
        Err(Error::Storage(_))
    ));
}

fn limited(memory: Option<usize>, timeout: Option<Duration>) -> QueryOptions {
    QueryOptions {
        timeout,
        memory_limit: memory,
        ..Default::default()
    }
}

#[test]
fn a_count_over_a_long_range_streams_within_a_small_budget() {
    let db = Database::in_memory().unwrap();
    let opts = limited(Some(1 << 20), None);
    let t = db
        .query_with(
            "default",
            "UNWIND range(1, 3000000) AS x RETURN count(x) AS n, sum(x) AS s",
            &p(),
            &opts,
        )
        .unwrap();
    assert_eq!(
        t.rows,
        vec![vec![Value::Int(3_000_000), Value::Int(4_500_001_500_000)]]
    );
    // Building the list itself does not fit, and says so before allocating.
    let e = db
        .query_with(
            "default",
            "RETURN size(range(0, 9223372036854775807))",
            &p(),
            &opts,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ResourceLimit);
    assert!(matches!(
        e,
        Error::Query(QueryError::ResourceLimit(Limit::Memory(_)))
    ));
    assert!(e.to_string().contains("1 MiB"), "{e}");
    // Collecting what the count did not hold does not fit either.
    let e = db
        .query_with(
            "default",
            "UNWIND range(1, 3000000) AS x RETURN collect(x) AS all",
            &p(),
            &opts,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ResourceLimit);
}

#[test]
fn a_count_over_many_matches_never_builds_the_rows() {
    for (_d, db) in databases() {
        // A hub with 300 neighbours, each with 300 more: 90,000 two-hop
        // matches, counted through an aggregation the count shortcut does
        // not take.
        db.query(
            "default",
            "CREATE (h:Hub) WITH h UNWIND range(1, 300) AS i CREATE (h)-[:R]->(m:Mid {i: i}) \
             WITH m UNWIND range(1, 300) AS j CREATE (m)-[:R]->(:Leaf)",
            &p(),
        )
        .unwrap();
        let opts = limited(Some(256 << 10), None);
        let t = db
            .query_with(
                "default",
                "MATCH (h:Hub)-->(m)-->(l) RETURN count(l) AS n, max(m.i) AS top",
                &p(),
                &opts,
            )
            .unwrap();
        assert_eq!(t.rows, vec![vec![Value::Int(90_000), Value::Int(300)]]);
        // The same matches as rows do not fit in 256 KiB.
        let e = db
            .query_with(
                "default",
                "MATCH (h:Hub)-->(m)-->(l) RETURN l ORDER BY id(l)",
                &p(),
                &opts,
            )
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ResourceLimit, "{e}");
        // LIMIT stops the match early: no budget needed.
        let t = db
            .query_with(
                "default",
                "MATCH (h:Hub)-->(m)-->(l) RETURN l LIMIT 3",
                &p(),
                &opts,
            )
            .unwrap();
        assert_eq!(t.rows.len(), 3);
    }
}

/// A query that would run for minutes.
const ENDLESS: &str = "UNWIND range(1, 9000000000) AS x RETURN count(x)";

#[test]
fn timeouts_and_cancellation_stop_a_query() {
    let db = Database::in_memory().unwrap();
    let opts = limited(None, Some(Duration::from_millis(50)));
    let e = db.query_with("default", ENDLESS, &p(), &opts).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Query(QueryError::ResourceLimit(Limit::Timeout(_)))
        ),
        "{e}"
    );
    assert!(e.to_string().contains("50 ms"), "{e}");

    let cancel = CancelHandle::new();
    let opts = QueryOptions {
        cancel: Some(cancel.clone()),
        ..Default::default()
    };
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        cancel.cancel();
    });
    let e = db.query_with("default", ENDLESS, &p(), &opts).unwrap_err();
    stopper.join().unwrap();
    assert!(matches!(e, Error::Query(QueryError::Cancelled)), "{e}");

    // A write query that times out commits nothing.
    let opts = limited(None, Some(Duration::from_millis(50)));
    let e = db
        .query_with(
            "default",
            "UNWIND range(1, 100000000) AS x CREATE (:T {x: x})",
            &p(),
            &opts,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ResourceLimit);
    assert_eq!(count(&db, "MATCH (t:T) RETURN count(t)"), 0);
}

#[test]
fn database_defaults_apply_unless_a_query_sets_its_own() {
    let db = Database::in_memory_with(Options {
        query_memory_limit: Some(64 << 10),
        ..Default::default()
    })
    .unwrap();
    let q = "UNWIND range(1, 100000) AS x RETURN collect(x) AS c";
    let e = db.query("default", q, &p()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ResourceLimit);
    let opts = limited(Some(64 << 20), None);
    assert!(db.query_with("default", q, &p(), &opts).is_ok());
}

#[test]
fn hostile_query_texts_get_clear_errors_fast() {
    let db = Database::in_memory().unwrap();
    let started = std::time::Instant::now();
    // 24 levels of maps in parentheses: each level used to be parsed twice.
    let nested = format!("RETURN {}1{} AS v", "({k:".repeat(24), "})".repeat(24));
    let t = db.query("default", &nested, &p()).unwrap();
    assert_eq!(t.rows.len(), 1);
    for text in [
        format!("RETURN {}1", "-".repeat(100_000)),
        format!("RETURN {}", vec!["1"; 100_000].join(" + ")),
        format!("RETURN {}1{}", "[".repeat(100_000), "]".repeat(100_000)),
        format!("RETURN {}", vec!["true"; 100_000].join(" AND ")),
        format!("RETURN {{a: 1}}{}", ".a".repeat(100_000)),
    ] {
        let e = db.query("default", &text, &p()).unwrap_err();
        assert!(e.to_string().contains("NestingTooDeep"), "{e}");
    }
    // Within the limit, deep expressions evaluate on a test thread's stack.
    let deep = format!("RETURN {}1 AS v", "-".repeat(plexus_cypher_limit() - 10));
    let t = db.query("default", &deep, &p()).unwrap();
    assert_eq!(t.rows[0][0], Value::Int(1));
    assert!(started.elapsed() < Duration::from_secs(10));
}

fn plexus_cypher_limit() -> usize {
    // The parser's nesting limit, as its error message states it.
    let db = Database::in_memory().unwrap();
    let e = db
        .query("default", &format!("RETURN {}1", "-".repeat(10_000)), &p())
        .unwrap_err()
        .to_string();
    let digits: String = e
        .split("more than ")
        .nth(1)
        .unwrap_or("")
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().unwrap()
}

#[test]
fn a_variable_length_match_down_a_long_chain_does_not_overflow() {
    let db = Database::in_memory().unwrap();
    let n = 20_000;
    let mut t = db.write("default").unwrap();
    let mut prev = None;
    for i in 0..=n {
        let props = plexus::Props::from([("i".into(), Value::Int(i))]);
        let id = t.create_node(None, &["C"], &props).unwrap();
        if let Some(p) = prev {
            t.create_edge(None, p, id, "NEXT", &plexus::Props::new())
                .unwrap();
        }
        prev = Some(id);
    }
    t.commit().unwrap();
    let t = db
        .query(
            "default",
            "MATCH (a:C {i: 0})-[:NEXT*]->(b) RETURN count(b) AS n, max(b.i) AS last",
            &p(),
        )
        .unwrap();
    assert_eq!(t.rows, vec![vec![Value::Int(n), Value::Int(n)]]);
}

#[test]
fn element_id_is_the_user_id_and_a_point_lookup() {
    for (_d, db) in databases() {
        let mut t = db.write("default").unwrap();
        for i in 0..500 {
            let props = plexus::Props::from([("i".into(), Value::Int(i))]);
            t.create_node(Some(&format!("user-{i}")), &["U"], &props)
                .unwrap();
        }
        t.commit().unwrap();
        let params = Params::from([("id".into(), Value::from("user-417"))]);
        let q = "MATCH (n) WHERE elementId(n) = $id RETURN n.i AS i, elementId(n) AS e";
        let t = db.query("default", q, &params).unwrap();
        assert_eq!(t.rows, vec![vec![Value::Int(417), Value::from("user-417")]]);
        // The rest of the WHERE still applies to the node found.
        let q = "MATCH (n:U) WHERE $id = elementId(n) AND n.i > 500 RETURN n";
        assert!(db.query("default", q, &params).unwrap().rows.is_empty());
        let none = Params::from([("id".into(), Value::from("nobody"))]);
        let q = "MATCH (n) WHERE elementId(n) = $id RETURN n";
        assert!(db.query("default", q, &none).unwrap().rows.is_empty());
        // A WHERE that is the equality alone is answered by the id map (the
        // node is not read to compare its id again): the same answers, for
        // nodes with a user id and without one, counted or returned.
        let made = db
            .query("default", "CREATE (x:Anon) RETURN elementId(x) AS e", &p())
            .unwrap();
        let anon = Params::from([("id".into(), made.rows[0][0].clone())]);
        let count = "MATCH (n) WHERE elementId(n) = $id RETURN count(*) AS c";
        for (params, want) in [(&params, 1), (&anon, 1), (&none, 0)] {
            let t = db.query("default", count, params).unwrap();
            assert_eq!(t.rows, vec![vec![Value::Int(want)]], "{params:?}");
        }
        let labels = "MATCH (n) WHERE elementId(n) = $id RETURN labels(n) AS l";
        let t = db.query("default", labels, &anon).unwrap();
        assert_eq!(t.rows, vec![vec![Value::List(vec![Value::from("Anon")])]]);
        let wrong_type = Params::from([("id".into(), Value::Int(417))]);
        assert!(db.query("default", q, &wrong_type).unwrap().rows.is_empty());
        // Bound later in the same MATCH: the seek cannot use it, the WHERE
        // still decides.
        let later =
            "MATCH (n:U), (m:U {i: 3}) WHERE elementId(n) = 'user-' + toString(m.i) RETURN n.i";
        let t = db.query("default", later, &p()).unwrap();
        assert_eq!(t.rows, vec![vec![Value::Int(3)]]);
        // The plan says so: one lookup, not a scan.
        let plan = db.query("default", &format!("EXPLAIN {q}"), &none).unwrap();
        let ops: Vec<String> = plan.rows.iter().map(|r| r[1].to_string()).collect();
        assert!(
            ops.iter().any(|o| o.contains("NodeByElementIdSeek")),
            "{ops:?}"
        );
    }
}

/// `WHERE id(n) = x` reads the one node with that internal id: a WHERE
/// that fails on every other node (a division by its zero) runs only on it.
#[test]
fn internal_id_is_a_point_lookup() {
    for (_d, db) in databases() {
        let mut t = db.write("default").unwrap();
        for i in 0..500 {
            let props = plexus::Props::from([
                ("i".into(), Value::Int(i)),
                ("d".into(), Value::Int(i64::from(i == 417))),
            ]);
            t.create_node(Some(&format!("user-{i}")), &["U"], &props)
                .unwrap();
        }
        t.commit().unwrap();
        let by_user = Params::from([("id".into(), Value::from("user-417"))]);
        let q = "MATCH (n) WHERE elementId(n) = $id RETURN id(n)";
        let id = db.query("default", q, &by_user).unwrap().rows[0][0].clone();
        let Value::Int(n) = id else { panic!("{id:?}") };
        for at in [Value::Int(n), Value::Float(n as f64)] {
            let params = Params::from([("i".into(), at)]);
            for q in [
                "MATCH (n) WHERE 10 / n.d > 0 AND id(n) = $i RETURN n.i",
                "MATCH (n:U) WHERE $i = id(n) AND 10 / n.d > 0 RETURN n.i",
                "MATCH (n)-[*0..0]-(m) WHERE id(n) = $i AND 10 / n.d > 0 RETURN m.i",
            ] {
                let t = db.query("default", q, &params).unwrap();
                assert_eq!(t.rows, vec![vec![Value::Int(417)]], "{q}");
            }
        }
        // The rest of the WHERE still applies to the node found.
        let params = Params::from([("i".into(), Value::Int(n))]);
        let q = "MATCH (n) WHERE id(n) = $i AND n.i > 500 RETURN n";
        assert!(db.query("default", q, &params).unwrap().rows.is_empty());
        // No node has this id, or an id of another type: nothing, and no
        // scan either (the division would fail on the other nodes).
        for none in [
            Value::Int(1 << 40),
            Value::Int(-1),
            Value::from("7"),
            Value::Null,
        ] {
            let params = Params::from([("i".into(), none)]);
            let q = "MATCH (n) WHERE 10 / n.d > 0 AND id(n) = $i RETURN n";
            assert!(db.query("default", q, &params).unwrap().rows.is_empty());
        }
        let plan = db
            .query("default", &format!("EXPLAIN {q}"), &params)
            .unwrap();
        let ops: Vec<String> = plan.rows.iter().map(|r| r[1].to_string()).collect();
        assert!(ops.iter().any(|o| o.contains("NodeByIdSeek")), "{ops:?}");
    }
}

/// `WHERE id(r) = x` starts from the one relationship with that internal
/// id; its type and direction are still checked.
#[test]
fn internal_relationship_id_is_a_point_lookup() {
    for (_d, db) in databases() {
        let setup = "UNWIND range(0, 299) AS i CREATE (:V {i: i})-[:T {d: CASE i WHEN 123 THEN 1 ELSE 0 END}]->(:V {i: i + 1000})";
        db.query("default", setup, &Params::new()).unwrap();
        let q = "MATCH ()-[r:T]->() WHERE r.d = 1 RETURN id(r)";
        let id = db.query("default", q, &Params::new()).unwrap().rows[0][0].clone();
        let params = Params::from([("i".into(), id)]);
        let cases = [
            (
                "MATCH (a)-[r]->(b) WHERE 10 / r.d > 0 AND id(r) = $i RETURN a.i, b.i",
                Some([123, 1123]),
            ),
            (
                "MATCH (a)<-[r:T]-(b) WHERE id(r) = $i AND 10 / r.d > 0 RETURN a.i, b.i",
                Some([1123, 123]),
            ),
            (
                "MATCH (a)-[r:OTHER]->(b) WHERE id(r) = $i RETURN a.i, b.i",
                None,
            ),
            (
                "MATCH (a)<-[r:T]-(b) WHERE id(r) = $i AND a.i < 1000 RETURN a.i, b.i",
                None,
            ),
        ];
        for (q, want) in cases {
            let t = db.query("default", q, &params).unwrap();
            let want: Vec<Vec<Value>> = want
                .into_iter()
                .map(|w| w.iter().map(|x| Value::Int(*x)).collect())
                .collect();
            assert_eq!(t.rows, want, "{q}");
        }
        let q = "MATCH (a)-[r]->(b) WHERE id(r) = $i RETURN b";
        let plan = db
            .query("default", &format!("EXPLAIN {q}"), &params)
            .unwrap();
        let ops: Vec<String> = plan.rows.iter().map(|r| r[1].to_string()).collect();
        assert!(
            ops.iter().any(|o| o.contains("RelationshipByIdSeek")),
            "{ops:?}"
        );
    }
}

#[test]
fn a_streaming_cursor_holds_a_few_batches_not_the_result() {
    for (_d, db) in databases() {
        let s = db.session("default").unwrap();
        let huge = "UNWIND range(1, 5000000) AS x RETURN x, x * 2 AS y";
        // Held whole, the result does not fit in 1 MiB.
        let small = limited(Some(1 << 20), None);
        let e = s.run_with(huge, &p(), &small).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ResourceLimit);
        // Streamed, it does: rows leave as they are made.
        let mut c = s.stream(huge, &p(), &small).unwrap();
        assert_eq!(c.columns(), ["x", "y"]);
        let first = c.fetch(1000).unwrap();
        assert_eq!(first[999], vec![Value::Int(1000), Value::Int(2000)]);
        let mut last = 1000;
        while let Some(row) = c.next_row().unwrap() {
            last = row[0].as_int().unwrap();
            if last == 20_000 {
                break;
            }
        }
        assert_eq!(last, 20_000);
        // Asking whether more come (which may wait for the next batch)
        // loses none of them.
        for expect in 20_001..=20_600 {
            assert!(c.has_more().unwrap());
            assert!(c.has_more().unwrap());
            assert_eq!(c.next_row().unwrap().unwrap()[0], Value::Int(expect));
        }
        let summary = c.consume().unwrap();
        assert_eq!(summary.rows, 20_600);
        assert_eq!(summary.kind, QueryKind::Read);
        // Entities come filled in, and a count streams as one row.
        db.query("default", "CREATE (:S {n: 1})", &p()).unwrap();
        let mut c = s
            .stream(
                "MATCH (n:S) RETURN n, n.n AS v",
                &p(),
                &QueryOptions::default(),
            )
            .unwrap();
        let row = c.next_row().unwrap().unwrap();
        assert!(
            matches!(&row[0], Value::Node(n) if n.labels == ["S"]),
            "{row:?}"
        );
        assert_eq!(row[1], Value::Int(1));
        assert_eq!(c.next_row().unwrap(), None);
    }
}

#[test]
fn a_streaming_query_reports_errors_and_stops_when_dropped() {
    let db = Database::in_memory().unwrap();
    let s = db.session("default").unwrap();
    // Found before the first row: from stream() itself.
    assert!(s
        .stream("RETURN 1 / 0 AS x", &p(), &QueryOptions::default())
        .is_err());
    // Found later: from the cursor, after the rows before it.
    let mut c = s
        .stream(
            "UNWIND range(1000, -1, -1) AS x RETURN 10 / x AS y",
            &p(),
            &QueryOptions::default(),
        )
        .unwrap();
    let mut failed = false;
    for row in c.by_ref() {
        if row.is_err() {
            failed = true;
            break;
        }
    }
    assert!(failed, "division by zero surfaces from the cursor");
    // Dropping the cursor cancels the query still running.
    let cancel = CancelHandle::new();
    let opts = QueryOptions {
        cancel: Some(cancel.clone()),
        ..Default::default()
    };
    let mut c = s.stream(ENDLESS_ROWS, &p(), &opts).unwrap();
    assert_eq!(c.fetch(5).unwrap().len(), 5);
    drop(c);
    assert!(cancel.is_cancelled());
    // A write streams as run does: whole, then committed.
    let c = s
        .stream(
            "CREATE (:W) RETURN 1 AS one",
            &p(),
            &QueryOptions::default(),
        )
        .unwrap();
    assert_eq!(c.summary().kind, QueryKind::Write);
    assert_eq!(count(&db, "MATCH (w:W) RETURN count(w)"), 1);
}

/// Rows for minutes.
const ENDLESS_ROWS: &str = "UNWIND range(1, 9000000000) AS x RETURN x";

#[test]
fn summaries_count_what_a_query_changed() {
    let db = plexus::Database::in_memory().unwrap();
    let s = db.session("default").unwrap();
    let p = plexus::Params::new();
    let c = s
        .run("CREATE (a:A:B {x: 1, y: 2})-[:T {w: 3}]->(b:A)", &p)
        .unwrap()
        .consume()
        .unwrap()
        .counters;
    assert_eq!(
        (
            c.nodes_created,
            c.relationships_created,
            c.labels_added,
            c.properties_set
        ),
        (2, 1, 3, 3)
    );
    let c = s
        .run("MATCH (a:B) SET a.x = 1, a.z = 5 REMOVE a:B, a.y", &p)
        .unwrap()
        .consume()
        .unwrap()
        .counters;
    // x kept its value: not a change; z new, y removed.
    assert_eq!((c.properties_set, c.labels_removed), (2, 1));
    let c = s
        .run("MATCH (n) DETACH DELETE n", &p)
        .unwrap()
        .consume()
        .unwrap()
        .counters;
    assert_eq!((c.nodes_deleted, c.relationships_deleted), (2, 1));
    let read = s
        .run("MATCH (n) RETURN n", &p)
        .unwrap()
        .consume()
        .unwrap()
        .counters;
    assert!(!read.contains_updates());
    // In an explicit transaction each query counts its own changes; a
    // failed operation is not counted.
    let mut tx = s.begin().unwrap();
    let first = tx
        .run("CREATE (:K {id: 1})", &p)
        .unwrap()
        .consume()
        .unwrap()
        .counters;
    let second = tx
        .run("CREATE (:K), (:K)", &p)
        .unwrap()
        .consume()
        .unwrap()
        .counters;
    assert_eq!((first.nodes_created, second.nodes_created), (1, 2));
    let c = tx
        .run("CREATE INDEX FOR (k:K) ON (k.id)", &p)
        .unwrap()
        .consume()
        .unwrap()
        .counters;
    assert_eq!(c.indexes_added, 1);
    tx.commit().unwrap();
}

#[test]
fn a_started_query_is_polled_with_timeouts_and_can_be_cancelled() {
    let db = Database::in_memory().unwrap();
    let s = db.session("default").unwrap();
    let q = "UNWIND range(1, 10000000000) AS x RETURN count(x)";
    let mut started = s.start(q, &p(), &QueryOptions::default()).unwrap();
    // The count has no columns to give for a long while: polls time out.
    assert!(started
        .poll(Some(Duration::from_millis(20)))
        .unwrap()
        .is_none());
    started.cancel();
    let end = loop {
        match started.poll(Some(Duration::from_millis(20))) {
            Ok(None) => continue,
            other => break other,
        }
    };
    assert_eq!(end.unwrap_err().kind(), plexus::ErrorKind::ResourceLimit);

    // Rows pulled with a wait; a cancelled stream ends with an error.
    let mut started = s
        .start(
            "UNWIND range(1, 10000000000) AS x RETURN x",
            &p(),
            &QueryOptions::default(),
        )
        .unwrap();
    let mut cursor = loop {
        if let Some(c) = started.poll(Some(Duration::from_millis(20))).unwrap() {
            break c;
        }
    };
    assert_eq!(cursor.columns(), ["x"]);
    let first = cursor.poll_row(Duration::from_secs(5)).unwrap();
    assert_eq!(first, plexus::Polled::Row(vec![plexus::Value::Int(1)]));
    cursor.cancel();
    let outcome = loop {
        match cursor.poll_row(Duration::from_millis(20)) {
            Ok(plexus::Polled::Row(_)) => continue,
            other => break other,
        }
    };
    assert!(outcome.is_err(), "{outcome:?}");

    // A short result polls as its rows, then End; a write has run when
    // `start` returns and polls at once.
    let wait = Duration::from_secs(5);
    let mut c = s
        .start("RETURN 1 AS one", &p(), &QueryOptions::default())
        .unwrap();
    let mut c = c.poll(None).unwrap().unwrap();
    assert!(matches!(c.poll_row(wait).unwrap(), plexus::Polled::Row(_)));
    assert_eq!(c.poll_row(wait).unwrap(), plexus::Polled::End);
    let mut w = s
        .start("CREATE (n) RETURN 1 AS one", &p(), &QueryOptions::default())
        .unwrap();
    let mut w = w.poll(Some(Duration::ZERO)).unwrap().unwrap();
    assert!(matches!(
        w.poll_row(Duration::ZERO).unwrap(),
        plexus::Polled::Row(_)
    ));
    assert_eq!(w.poll_row(Duration::ZERO).unwrap(), plexus::Polled::End);
}
