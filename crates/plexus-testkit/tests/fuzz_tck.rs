//! Structured fuzzing of the Cypher path seeded with the openCypher TCK:
//! each case takes one scenario's query (about 3,000 distinct ones, every
//! clause and function the suite covers), sets up the scenario's own graph,
//! and runs the query with up to three edits — a number replaced by an
//! extreme one (which keeps the query valid, so the edit reaches the
//! executor), a span deleted or doubled, a span of another scenario's query
//! spliced in (crossover), a character or literal inserted — under a
//! timeout and a memory budget. Every
//! input must end in a result or an error: never a panic, an abort or a
//! hang. proptest keeps any failing input in `fuzz_tck.proptest-regressions`
//! beside this file, replayed first on every run. A longer run:
//! `PROPTEST_CASES=100000 cargo test --release -p plexus-testkit --test fuzz_tck`.

use plexus::{Database, Params, QueryOptions};
use plexus_testkit::tck;
use proptest::prelude::*;
use std::sync::OnceLock;
use std::time::Duration;

/// A scenario's setup and query.
struct Seed {
    setup: Vec<String>,
    query: Vec<char>,
}

fn seeds() -> &'static [Seed] {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = tck::default_dir();
        let scenarios = tck::load(&dir)
            .unwrap_or_else(|e| panic!("the TCK at {} (../shared beside): {e}", dir.display()));
        let mut seen = std::collections::HashSet::new();
        scenarios
            .iter()
            .filter_map(|s| {
                let q = tck::queries(s);
                let query = q.query.filter(|_| !q.named_graph)?;
                seen.insert(query.clone()).then(|| Seed {
                    setup: q.setup,
                    query: query.chars().collect(),
                })
            })
            .collect()
    })
}

/// Numbers a query's own numbers are replaced with.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "2",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967296",
    "1e308",
    "-0.0",
    "0.5",
    "100000000",
];

const INSERTS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    ":",
    "-",
    "<",
    ">",
    "=",
    "|",
    "*",
    "+",
    "'",
    "$",
    " ",
    "0",
    "-1",
    "null",
    "[]",
    "{}",
    "''",
    "'é'",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "0.0",
    "*..",
    "n",
    "WITH *",
    "RETURN *",
];

/// One edit: its kind, where, how long, and (for a splice) where from.
type Edit = (
    u8,
    prop::sample::Index,
    usize,
    prop::sample::Index,
    prop::sample::Index,
);

fn edit() -> impl Strategy<Value = Edit> {
    (
        0u8..6,
        any::<prop::sample::Index>(),
        1usize..8,
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
    )
}

fn apply(seeds: &[Seed], query: &mut Vec<char>, (kind, at, len, from, pos): Edit) {
    let i = at.index(query.len() + 1);
    let end = (i + len).min(query.len());
    match kind {
        0 => {
            query.drain(i..end);
        }
        1 => {
            let span: Vec<char> = query[i..end].to_vec();
            query.splice(i..i, span);
        }
        2 => {
            let other = &seeds[from.index(seeds.len())].query;
            let start = pos.index(other.len() + 1);
            let span = other[start..(start + len).min(other.len())].to_vec();
            query.splice(i..end, span);
        }
        3 => {
            let tok = INSERTS[pos.index(INSERTS.len())];
            query.splice(i..i, tok.chars());
        }
        _ => replace_number(query, i, NUMBERS[pos.index(NUMBERS.len())]),
    }
}

/// Replaces the first run of digits at or after `from` (wrapping around)
/// with `by`; a query without digits is left as it is.
fn replace_number(query: &mut Vec<char>, from: usize, by: &str) {
    let n = query.len();
    let Some(start) = (0..n)
        .map(|k| (from + k) % n)
        .find(|&k| query[k].is_ascii_digit() && (k == 0 || !query[k - 1].is_alphanumeric()))
    else {
        return;
    };
    let end = (start..n)
        .find(|&k| !query[k].is_ascii_digit())
        .unwrap_or(n);
    query.splice(start..end, by.chars());
}

/// A case: which seed, and the edits.
fn case() -> impl Strategy<Value = (prop::sample::Index, Vec<Edit>)> {
    (
        any::<prop::sample::Index>(),
        proptest::collection::vec(edit(), 1..4),
    )
}

fn run((seed, edits): (prop::sample::Index, Vec<Edit>)) {
    let seeds = seeds();
    let seed = &seeds[seed.index(seeds.len())];
    let mut query = seed.query.clone();
    for e in edits {
        apply(seeds, &mut query, e);
    }
    let query: String = query.into_iter().collect();
    let opts = QueryOptions {
        timeout: Some(Duration::from_millis(300)),
        memory_limit: Some(32 << 20),
        ..QueryOptions::default()
    };
    let db = Database::in_memory().expect("an in-memory database");
    for q in &seed.setup {
        // A setup that fails only leaves a smaller graph.
        let _ = db.query_with("default", q, &Params::new(), &opts);
    }
    // Only a panic fails the case (it propagates out of the query). EXPLAIN
    // first, while the setup's graph and indexes are as the query sees
    // them: its seeks run dry on them (`pattern/start.rs`).
    let _ = db.query_with(
        "default",
        &format!("EXPLAIN {query}"),
        &Params::new(),
        &opts,
    );
    let _ = db.query_with("default", &query, &Params::new(), &opts);
    // PROFILE last: it runs the query again (writes included), counting
    // and timing each step as the matcher walks (`start::Taken`).
    let _ = db.query_with(
        "default",
        &format!("PROFILE {query}"),
        &Params::new(),
        &opts,
    );
}

/// Cases: `PROPTEST_CASES` for a longer run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_tck_queries(c in case()) {
        run(c);
    }
}

#[test]
fn the_seeds_are_the_tck() {
    // Most of the suite's scenarios carry their own query and setup.
    let n = seeds().len();
    assert!(n > 2_000, "{n} seeds");
}
