//! Queries that need no graph, and the checks made before running.

use plexus_common::Value;
use plexus_query::{run_standalone, QueryError};
use std::collections::BTreeMap;

fn run(q: &str) -> Result<plexus_query::Table, QueryError> {
    run_standalone(q, &BTreeMap::new())
}

fn one(q: &str) -> Value {
    run(q).unwrap().rows.remove(0).remove(0)
}

#[test]
fn three_valued_logic_and_numbers() {
    assert_eq!(one("RETURN null AND false AS x"), Value::Bool(false));
    assert_eq!(one("RETURN null OR false AS x"), Value::Null);
    assert_eq!(one("RETURN 1 = 1.0 AS x"), Value::Bool(true));
    assert_eq!(one("RETURN 7 / 2 AS x"), Value::Int(3));
    assert_eq!(one("RETURN 7 / 2.0 AS x"), Value::Float(3.5));
    assert_eq!(one("RETURN 2 IN [1, null] AS x"), Value::Null);
    assert_eq!(
        one("RETURN [1, 2] + 3 AS x"),
        Value::List(vec![1.into(), 2.into(), 3.into()])
    );
    assert!(matches!(
        run("RETURN 9223372036854775807 + 1 AS x"),
        Err(QueryError::Arithmetic(_))
    ));
    assert!(matches!(
        run("RETURN 1 / 0 AS x"),
        Err(QueryError::Arithmetic(_))
    ));
}

#[test]
fn clauses_without_a_graph() {
    let t = run("UNWIND [3, 1, 2, 1] AS x WITH DISTINCT x ORDER BY x DESC RETURN x, x * 10 AS y SKIP 1 LIMIT 1").unwrap();
    assert_eq!(t.columns, vec!["x", "y"]);
    assert_eq!(t.rows, vec![vec![Value::Int(2), Value::Int(20)]]);
    let t = run(
        "UNWIND [1, 2, 3, 4] AS x RETURN x % 2 AS k, count(*) AS n, collect(x) AS xs ORDER BY k",
    )
    .unwrap();
    assert_eq!(
        t.rows[0],
        vec![
            Value::Int(0),
            Value::Int(2),
            Value::List(vec![2.into(), 4.into()])
        ]
    );
    assert_eq!(one("UNWIND [] AS x RETURN count(x) AS n"), Value::Int(0));
    assert_eq!(
        one("RETURN [x IN range(1, 5) WHERE x % 2 = 1 | x * x] AS sq"),
        Value::List(vec![1.into(), 9.into(), 25.into()])
    );
    assert_eq!(
        one("RETURN reduce(s = 0, x IN [1, 2, 3] | s + x) AS s"),
        Value::Int(6)
    );
    assert!(
        run("MATCH (n) RETURN n").unwrap().rows.is_empty(),
        "the graph is empty"
    );
    let t = run("RETURN 1 AS a UNION RETURN 1 AS a").unwrap();
    assert_eq!(t.rows.len(), 1);
}

#[test]
fn semantic_errors_come_before_any_row() {
    let code = |q: &str| match run(q) {
        Err(QueryError::Compile { code, .. }) => code,
        other => panic!("{q}: expected a compile error, got {other:?}"),
    };
    assert_eq!(code("RETURN x"), "UndefinedVariable");
    assert_eq!(code("MATCH (a)-[a]->() RETURN a"), "VariableTypeConflict");
    assert_eq!(code("WITH 1 + 1 RETURN 1"), "NoExpressionAlias");
    assert_eq!(code("RETURN 1 AS a, 2 AS a"), "ColumnNameConflict");
    assert_eq!(
        code("MATCH (a) WHERE count(a) > 1 RETURN a"),
        "InvalidAggregation"
    );
    assert_eq!(code("RETURN count(count(*)) AS x"), "NestedAggregation");
    assert_eq!(code("CREATE (a)-[:R|S]->(b)"), "NoSingleRelationshipType");
    assert_eq!(code("CREATE (a)-[:R]-(b)"), "RequiresDirectedRelationship");
    assert_eq!(
        code("RETURN 1 AS a UNION RETURN 2 AS b"),
        "DifferentColumnsInUnion"
    );
    assert_eq!(
        code("RETURN 1 AS a UNION RETURN 1 AS a UNION ALL RETURN 1 AS a"),
        "InvalidClauseComposition"
    );
    assert_eq!(code("MATCH (n)"), "InvalidClauseComposition");
    assert_eq!(code("RETURN foo(1) AS x"), "UnknownFunction");
    assert_eq!(code("RETURN 1 AS x LIMIT -1"), "NegativeIntegerArgument");
    assert!(matches!(
        run("RETURN $p AS x"),
        Err(QueryError::ParameterMissing { .. })
    ));
}

#[test]
fn temporal_values_from_iso_strings() {
    let text = |q: &str| match one(q) {
        Value::String(s) => s,
        v => panic!("{q} gave {v:?}"),
    };
    assert_eq!(
        text("RETURN toString(date('2015-07-21')) AS x"),
        "2015-07-21"
    );
    assert_eq!(
        text("RETURN toString(localtime('12:31:14.5')) AS x"),
        "12:31:14.500"
    );
    assert_eq!(
        text("RETURN toString(datetime('2015-07-21T20:40Z')) AS x"),
        "2015-07-21T20:40Z"
    );
    assert_eq!(text("RETURN toString(time('14:30')) AS x"), "14:30Z");
    assert_eq!(
        text("RETURN toString(datetime('2015-07-21T21:40:32.142+0100')) AS x"),
        "2015-07-21T21:40:32.142+01:00"
    );
    assert_eq!(one("RETURN date(null) AS x"), Value::Null);
    assert_eq!(
        one("RETURN date('2015-07-21') < date('2016-01-01') AS x"),
        Value::Bool(true)
    );
    assert!(matches!(
        run("RETURN date('2015-13-01') AS x"),
        Err(QueryError::Argument { .. })
    ));
    assert!(matches!(
        run("RETURN date(42) AS x"),
        Err(QueryError::Type { .. })
    ));
}

#[test]
fn hostile_temporal_input_is_an_error_not_a_panic() {
    for q in [
        "RETURN date('123é')",
        "RETURN localtime('1é')",
        "RETURN datetime('2015W1é')",
        "RETURN duration('P1Yé')",
        "RETURN duration({years: 9223372036854775807})",
        "RETURN duration('P9223372036854775807Y')",
        "RETURN duration({days: 9223372036854775807}) + duration({days: 1})",
        "RETURN date('2015-01-01') - duration({months: -9223372036854775808})",
        "RETURN localdatetime({year: 1000000000, month: 1, day: 1})",
        "RETURN localdatetime({year: 999999999, month: 12, day: 31}) + duration({days: 1})",
    ] {
        let e = run(q).expect_err(q);
        assert!(
            matches!(
                e.type_name(),
                "ArgumentError" | "ArithmeticError" | "TypeError"
            ),
            "{q}: {e}"
        );
    }
    // Within range, the checked paths give the plain answers.
    assert_eq!(
        run("RETURN toString(duration({years: 1, months: 2})) AS d")
            .unwrap()
            .rows[0][0],
        Value::from("P1Y2M")
    );
}

#[test]
fn the_statement_clock_is_one_instant_for_the_whole_query() {
    // Neo4j: timestamp() and datetime() "return the same value during one
    // entire query, even for long-running queries".
    let t = run(
        "UNWIND range(1, 20000) AS i WITH timestamp() AS t, datetime() AS d \
         RETURN count(DISTINCT t) AS ts, count(DISTINCT d) AS ds, min(t) = max(t) AS same",
    )
    .unwrap();
    assert_eq!(
        t.rows,
        vec![vec![Value::Int(1), Value::Int(1), Value::Bool(true)]]
    );
    assert_eq!(
        one("RETURN timestamp() = datetime().epochMillis AS x"),
        Value::Bool(true)
    );
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let Value::Int(ms) = one("RETURN timestamp() AS x") else {
        panic!("timestamp() is an integer")
    };
    assert!(
        ms >= before && ms < before + 60_000,
        "{ms} against {before}"
    );
}

/// A run-time error names where the expression that failed starts, not
/// only its clause.
#[test]
fn run_time_errors_name_the_failing_expression() {
    let cases = [
        ("RETURN 1, 2 + 9223372036854775807", "(line 1, column 11)"),
        (
            "WITH 1 AS x RETURN x,\n  x + 9223372036854775807 AS y",
            "(line 2, column 3)",
        ),
        ("UNWIND [1, 0] AS d RETURN 10 / d", "(line 1, column 27)"),
        (
            "RETURN [1, abs(-9223372036854775808)]",
            "(line 1, column 12)",
        ),
        ("RETURN 'é', 'a' =~ '(('", "(line 1, column 13)"),
        (
            "RETURN toUpper('a') - 1",
            "cannot apply - to STRING and INT (line 1, column 8)",
        ),
    ];
    for (q, want) in cases {
        let e = run(q).expect_err(q).to_string();
        assert!(e.ends_with(want), "{q}: {e}");
    }
}
