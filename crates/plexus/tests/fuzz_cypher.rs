//! Structured fuzzing of the Cypher path on stable Rust: random token
//! sequences from Cypher's vocabulary, and mutations of real queries, run
//! on an in-memory database with a small graph, under a timeout and a
//! memory budget. Every input must end in a result or an error — never a
//! panic, an abort or a hang. proptest keeps any failing input in
//! `fuzz_cypher.proptest-regressions` beside this file, which is replayed
//! first on every run. A longer run: `PROPTEST_CASES=200000 cargo test
//! --release -p plexus --test fuzz_cypher`.

use plexus::{Database, Params, QueryOptions, Value};
use proptest::prelude::*;
use std::time::Duration;

const VOCABULARY: &[&str] = &[
    "MATCH",
    "OPTIONAL",
    "WHERE",
    "RETURN",
    "WITH",
    "UNWIND",
    "AS",
    "CREATE",
    "MERGE",
    "ON",
    "SET",
    "REMOVE",
    "DELETE",
    "DETACH",
    "ORDER",
    "BY",
    "SKIP",
    "LIMIT",
    "DISTINCT",
    "UNION",
    "ALL",
    "CALL",
    "YIELD",
    "FOREACH",
    "IN",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IS",
    "NULL",
    "TRUE",
    "FALSE",
    "EXISTS",
    "COUNT",
    "STARTS",
    "ENDS",
    "CONTAINS",
    "n",
    "m",
    "r",
    "p",
    "x",
    "`a b`",
    "$p",
    "$list",
    ":A",
    ":B",
    ":T",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "..",
    ":",
    "|",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "=",
    "<>",
    "<",
    ">",
    "<=",
    ">=",
    "=~",
    "->",
    "<-",
    "--",
    "-[",
    "]->",
    "0",
    "1",
    "-1",
    "2.5",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "'s'",
    "'é'",
    "\"x\"",
    "count(*)",
    "collect(",
    "sum(",
    "range(",
    "size(",
    "toInteger(",
    "date(",
    "datetime(",
    "duration(",
    "keys(",
    "labels(",
    "type(",
    "nodes(",
    "relationships(",
    "shortestPath(",
    "*1..3",
    "*",
    "$(",
    "IN TRANSACTIONS",
    "SHOW",
    "INDEXES",
    "FUNCTIONS",
    "YIELD",
    "PROFILE",
    "n.name",
    "r.w",
    ";",
];

const SEEDS: &[&str] = &[
    "MATCH (n:A)-[r:T]->(m) WHERE n.name = $p RETURN m.name, r.w ORDER BY m.name",
    "UNWIND range(1, 10) AS x WITH x WHERE x % 2 = 0 RETURN collect(x) AS xs",
    "MATCH p = shortestPath((a:A {name: 'a'})-[*..5]-(b:B)) RETURN length(p)",
    "MERGE (n:A {name: $p}) ON CREATE SET n.c = 1 ON MATCH SET n.c = n.c + 1 RETURN n.c",
    "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN labels(n), count(r)",
    "WITH [1, 2, 3] AS l RETURN [x IN l WHERE x > 1 | x * 2] AS y, l[1..], size(l)",
    "RETURN date('2020-01-01') + duration('P1M'), datetime({year: 2020, timezone: '+01:00'})",
    "MATCH (n:A) CALL (n) { MATCH (n)-->(m) RETURN count(m) AS c } RETURN n.name, c",
    "CREATE (a:A {name: 'z'})-[:T {w: 1}]->(b:B) WITH a, b MATCH (a)-[r]->(b) DELETE r",
    "MATCH (n) RETURN CASE WHEN n.name STARTS WITH 'a' THEN 1 ELSE 0 END AS k, count(*)",
    "UNWIND $list AS v RETURN v, toInteger(v) + 1, v =~ 'a.*'",
    "MATCH (n:A) WHERE EXISTS { MATCH (n)-[:T]->(:B) } RETURN n.name",
    "SHOW FUNCTIONS YIELD name, category AS c WHERE c = 'String' RETURN c, count(*) AS n",
    "SHOW VECTOR INDEXES YIELD name, options WHERE name = $p RETURN options.indexConfig AS o",
    "PROFILE MATCH (n:A)-[r:T*1..2]->(m) WHERE m.name <> $p RETURN count(DISTINCT m)",
    // A grouped count from the property's column (`exec/group_count.rs`).
    "MATCH (n:A) RETURN n.name AS k, count(*) AS c, max(n.name) ORDER BY c DESC, k LIMIT 2",
];

fn db() -> Database {
    let db = Database::in_memory().unwrap();
    db.query(
        "default",
        "CREATE (a:A {name: 'a'})-[:T {w: 1}]->(b:B {name: 'b'}), (a)-[:T {w: 2}]->(:A {name: 'c'})",
        &Params::new(),
    )
    .unwrap();
    db
}

/// Runs `text`; only a panic fails (it propagates out of the query).
fn run(db: &Database, text: &str) -> bool {
    let params = Params::from([
        ("p".to_string(), Value::String("a".into())),
        (
            "list".to_string(),
            Value::List(vec![Value::Int(1), Value::String("x".into()), Value::Null]),
        ),
    ]);
    let opts = QueryOptions {
        timeout: Some(Duration::from_millis(300)),
        memory_limit: Some(32 << 20),
        ..QueryOptions::default()
    };
    db.query_with("default", text, &params, &opts).is_ok()
}

/// Cases per property: `PROPTEST_CASES` for a longer run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500)
}

fn tokens() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(VOCABULARY), 1..30).prop_map(|t| t.join(" "))
}

/// A seed query with up to six edits: a token inserted, a character
/// deleted, or a span replaced by a token.
fn mutated() -> impl Strategy<Value = String> {
    let edit = (
        any::<prop::sample::Index>(),
        proptest::sample::select(VOCABULARY),
        0u8..3,
    );
    (
        proptest::sample::select(SEEDS),
        proptest::collection::vec(edit, 1..6),
    )
        .prop_map(|(seed, edits)| {
            let mut chars: Vec<char> = seed.chars().collect();
            for (at, tok, kind) in edits {
                let i = at.index(chars.len() + 1);
                match kind {
                    0 => {
                        let tail = chars.split_off(i);
                        chars.extend(format!(" {tok} ").chars());
                        chars.extend(tail);
                    }
                    1 if i < chars.len() => {
                        chars.remove(i);
                    }
                    _ => {
                        let end = (i + tok.len()).min(chars.len());
                        chars.splice(i..end, tok.chars());
                    }
                }
            }
            chars.into_iter().collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_token_sequences(text in tokens()) {
        run(&db(), &text);
    }

    #[test]
    fn mutated_queries(text in mutated()) {
        run(&db(), &text);
    }
}

#[test]
fn the_seeds_run() {
    let db = db();
    // The seeds are valid and run, so mutations start from queries that
    // reach the executor, not only the parser.
    for s in SEEDS {
        assert!(run(&db, s), "seed fails: {s}");
    }
}
