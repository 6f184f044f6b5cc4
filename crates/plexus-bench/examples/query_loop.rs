//! One Cypher query run in a loop on an in-memory graph, for counting the
//! instructions it takes under callgrind: on a shared machine a change of
//! a few percent is lost in the timings' noise, an instruction count is
//! the same from run to run (docs/benchmarks/README.md, "Instruction
//! counts"). Only `query_loop` is counted when callgrind is told so:
//!
//! ```sh
//! cargo build --release -p plexus-bench --example query_loop
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='query_loop::query_loop' \
//!     target/release/examples/query_loop skewed 'MATCH (a {id: $id}) RETURN count(*)' 100
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='query_loop::query_loop' \
//!     target/release/examples/query_loop ldbc IC4 5
//! ```
//!
//! `skewed QUERY RUNS`: `compare`'s skewed graph of 100,000 nodes (ids
//! also an indexed `id` property, as its Cypher engine loads them), the
//! query run RUNS times for each of ten seeds bound to `$id`. `ldbc NAME
//! RUNS`: the SNB-like graph at SF 1 and the read NAME of the LDBC suite
//! beside the repository, with the parameters `plexus-bench ldbc` picks,
//! run RUNS times; or, given a QUERY after RUNS, that query with the
//! read's parameters (a part of the read, to see what each part costs).
//! Both run once before the counted loop (the plan cache warm), and print
//! what the loop returned and took. `api KIND RUNS`: the Rust API's side of
//! `compare`'s workload KIND (`lookup`, `neighbors`, `reach3`, …) on the
//! same skewed graph and seeds, counted in `api_loop`, so that a Cypher
//! query's count has the API's beside it. `--disk DIR` first: the graph in
//! a new database at DIR on the default store (LMDB), as `compare` runs
//! it, instead of in memory.

use plexus::{Database, Params, Value};
use plexus_bench::{engine, gen::Skewed, ldbc};
use std::time::Instant;

/// As the command line's, so that counts compare with what users run.
#[global_allocator]
static GLOBAL: plexus_alloc::Alloc = plexus_alloc::Alloc;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The skewed graph of `skewed QUERY RUNS`, with its ten seeds' user ids.
fn skewed(disk: Option<&str>) -> Res<(Database, Vec<String>)> {
    let n = 100_000;
    let db = match disk {
        Some(dir) => plexus_bench::compare::fresh_db(std::path::Path::new(dir), None)?,
        None => Database::in_memory()?,
    };
    engine::load_with(&db, "bench", &Skewed { n, seed: 42 }, "grp", true)?;
    Ok((db, plexus_bench::compare::skewed_seeds(n)))
}

/// `api KIND RUNS`: the Rust API's run of workload KIND, once warm and
/// then RUNS times in the counted `api_loop`.
fn api(kind: &str, runs: usize, disk: Option<&str>) -> Res<()> {
    let (db, seeds) = skewed(disk)?;
    // A case names its kind for the process's life; `engine::run` refuses
    // one it does not know.
    let kind: &'static str = Box::leak(kind.into());
    let case = plexus_bench::Case {
        name: kind,
        kind,
        seeds,
    };
    let r = db.read("bench")?;
    api_loop(&r, &case, 1)?;
    let started = Instant::now();
    let total = api_loop(&r, &case, runs)?;
    let per = started.elapsed().as_secs_f64() * 1e6 / runs.max(1) as f64;
    println!("{runs} runs of ten seeds: counts summing to {total}, {per:.2} µs a run");
    Ok(())
}

/// The API's runs of `case` (each one over its ten seeds); their counts' sum.
#[inline(never)]
fn api_loop(r: &plexus::ReadTxn, case: &plexus_bench::Case, runs: usize) -> Res<u64> {
    let mut total = 0;
    for _ in 0..runs {
        total += engine::run(r, case, &["T0", "T1"], ("grp", 7))?;
    }
    Ok(total)
}

/// The rows the runs returned (and the first column's sum, when integer).
#[inline(never)]
fn query_loop(
    db: &Database,
    graph: &str,
    text: &str,
    params: &[Params],
    runs: usize,
) -> Res<(usize, i64)> {
    let mut tx = db.session(graph)?.begin_read()?;
    let (mut rows, mut sum) = (0, 0);
    for _ in 0..runs {
        for p in params {
            let t = tx.query(text, p)?;
            rows += t.rows.len();
            sum += t
                .rows
                .iter()
                .filter_map(|r| r.first()?.as_int())
                .sum::<i64>();
        }
    }
    Ok((rows, sum))
}

fn main() -> Res<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let disk = match args.first().map(String::as_str) {
        Some("--disk") if args.len() > 1 => {
            let dir = args.remove(1);
            args.remove(0);
            Some(dir)
        }
        _ => None,
    };
    let (kind, what, runs, instead) =
        match args.as_slice() {
            [kind, what, runs] => (kind, what, runs, None),
            [kind, what, runs, instead] if kind == "ldbc" => (kind, what, runs, Some(instead)),
            _ => return Err(
                "usage: query_loop [--disk DIR] skewed QUERY RUNS | query_loop [--disk DIR] api \
                 KIND RUNS | query_loop ldbc IC4 RUNS [QUERY]"
                    .into(),
            ),
        };
    let runs: usize = runs.parse()?;
    if kind == "api" {
        return api(what, runs, disk.as_deref());
    }
    let (db, graph, text, params) = match kind.as_str() {
        "skewed" => {
            let (db, seeds) = skewed(disk.as_deref())?;
            let seeds = seeds
                .iter()
                .map(|id| Params::from([("id".to_string(), Value::from(id.as_str()))]));
            (db, "bench".to_string(), what.clone(), seeds.collect())
        }
        "ldbc" if disk.is_some() => return Err("--disk is for the skewed graph only".into()),
        "ldbc" => {
            let (db, graph) = ldbc::load(1.0, 42)?;
            let (text, params) = ldbc::read_query(&db, &graph, &ldbc::default_dir(), what)?;
            (db, graph, instead.cloned().unwrap_or(text), vec![params])
        }
        other => return Err(format!("unknown graph '{other}' (skewed or ldbc)").into()),
    };
    query_loop(&db, &graph, &text, &params, 1)?;
    let started = Instant::now();
    let (rows, sum) = query_loop(&db, &graph, &text, &params, runs)?;
    let per = started.elapsed().as_secs_f64() * 1e6 / (runs * params.len()).max(1) as f64;
    println!(
        "{} queries: {rows} rows, first column summing to {sum}, {per:.2} µs each",
        runs * params.len()
    );
    Ok(())
}
