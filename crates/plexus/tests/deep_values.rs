//! Values nested without bound would overflow the stack of whatever walks
//! them (dropping one is recursive); the engine refuses them instead.

use plexus::{Database, ErrorKind, Params, QueryOptions};

fn run_streamed(db: &Database, q: &str) -> plexus::Result<Vec<Vec<plexus::Value>>> {
    // Streaming runs the query on a worker thread, whose stack is smaller
    // than the main thread's.
    let s = db.session("default")?;
    let cursor = s.stream(q, &Params::new(), &QueryOptions::default())?;
    cursor.collect()
}

#[test]
fn a_value_nested_beyond_the_limit_is_an_error_not_a_crash() {
    let db = Database::in_memory().unwrap();
    for q in [
        "RETURN reduce(a = [], i IN range(1, 200000) | [a]) AS v",
        "RETURN reduce(a = {}, i IN range(1, 200000) | {k: a}) AS v",
        "RETURN reduce(a = {}, i IN range(1, 200000) | a{.*, k: a}) AS v",
        "RETURN reduce(a = [], i IN range(1, 200000) | [x IN [a] | x]) AS v",
        "UNWIND range(1, 3) AS i WITH reduce(a = [], j IN range(1, 999) | [a]) AS v \
         RETURN collect(v) AS vs",
    ] {
        let e = run_streamed(&db, q).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadInput, "{q}");
        assert!(e.to_string().contains("NestingTooDeep"), "{q}: {e}");
    }
}

#[test]
fn values_nested_up_to_the_limit_work() {
    let db = Database::in_memory().unwrap();
    let rows = run_streamed(
        &db,
        "WITH reduce(a = [], i IN range(1, 999) | [a]) AS v RETURN v, size(v) AS n",
    )
    .unwrap();
    assert_eq!(rows[0][1], plexus::Value::Int(1));
    assert!(!rows[0][0].nests_deeper_than(1000));
    assert!(rows[0][0].nests_deeper_than(998));
}
