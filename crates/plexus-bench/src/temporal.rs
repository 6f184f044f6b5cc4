//! `plexus-bench temporal`: GestaltDB's temporal smoke workload (its
//! documented parameters: 1,000 node versions, 5,000 edge versions and
//! 1,000 adjacent intervals of one entity, 1,000 as-of lookups, seed 42)
//! on Plexus (`plexus::temporal`, in this process) and on GestaltDB (its
//! `commit_versions` and `get_node_as_of`, in a Python process of the
//! peers' virtualenv), side by side on the same versions and lookups.
//! GestaltDB runs on two stores: `gestaltdb` on RocksDB (pyrex), its
//! fastest, and `gestaltdb-leveldb` on LevelDB with the JSON serializer,
//! the store its smoke benchmark's documented command names.
//!
//! Measured: the write rate with all versions in one commit and with ten
//! per commit; the as-of lookup p50 of each engine (each lookup's answer
//! is compared across engines and with the generator's expectation: a
//! disagreement fails the run); storage per version; and, on Plexus alone,
//! how the lookup p50 moves as one entity's history grows from 10k to 1M
//! versions.

use crate::percentile;
use plexus::algo::Rng;
use plexus::temporal::{
    as_of, commit_versions, EdgeState, Interval, Kind, NodeState, State, VersionWrite,
};
use plexus::{Database, Options as DbOptions, Value};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod prune;

/// `plexus-bench temporal`, as its flags give it.
#[derive(clap::Args)]
pub struct Options {
    /// Node versions (one per node).
    #[arg(long, default_value_t = 1000)]
    pub nodes: usize,
    /// Edge versions (one per edge).
    #[arg(long, default_value_t = 5000)]
    pub edges: usize,
    /// Adjacent intervals of one entity (`hot`).
    #[arg(long, default_value_t = 1000)]
    pub interval_versions: usize,
    /// As-of lookups.
    #[arg(long, default_value_t = 1000)]
    pub queries: usize,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Versions per commit, comma-separated (0: all in one commit).
    #[arg(long, value_delimiter = ',', default_value = "0,10")]
    pub per_commit: Vec<usize>,
    /// Times each engine writes the versions, each into a new store; the
    /// write rate is the median run's (one write of 7,000 versions takes
    /// tens of milliseconds, which a busy moment of the machine can double).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub write_runs: u32,
    /// Histories of one entity for the flatness check (Plexus only);
    /// `--scale` without a value skips it.
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "10000,100000,1000000")]
    pub scale: Vec<usize>,
    /// Nodes of the graph whose history the retention check prunes
    /// (Plexus only); 0 to skip.
    #[arg(long, default_value_t = 1_000_000)]
    pub prune_nodes: usize,
    /// Rounds of the retention check: a hundred node writes, then a prune.
    #[arg(long, default_value_t = 20)]
    pub prune_rounds: usize,
    /// Engines, comma-separated: `plexus`, `gestaltdb` (on RocksDB),
    /// `gestaltdb-leveldb` (on LevelDB, as GestaltDB's smoke benchmark runs).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "plexus,gestaltdb,gestaltdb-leveldb"
    )]
    pub engines: Vec<String>,
    /// The most lookups GestaltDB makes in a run, and the seconds it may
    /// spend on them (its lookups can take seconds each).
    #[arg(long, default_value_t = 1000)]
    pub gestalt_queries: usize,
    #[arg(long, default_value_t = 300)]
    pub gestalt_budget_s: u64,
    /// Sync every Plexus commit to disk. Off by default, as GestaltDB's
    /// RocksDB store writes (RocksDB syncs no write unless asked).
    #[arg(long)]
    pub durable: bool,
    /// The peers' virtualenv (made on first use).
    #[arg(long)]
    pub venv: Option<PathBuf>,
    /// Where the databases go (a temporary folder by default).
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Also write the results here (markdown; JSON lines beside it).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub(crate) type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Valid times start here (µs: November 2023) and step by a millisecond.
const BASE: i64 = 1_700_000_000_000_000;
const STEP: i64 = 1000;

/// One lookup: the entity, the instant, and the value of `v` the version
/// holding it then has (`None`: no version holds it).
#[derive(Debug, Clone)]
struct Query {
    kind: Kind,
    id: String,
    at: i64,
    expect: Option<i64>,
}

/// One version of the workload: the entity, its endpoints when it is a
/// relationship, the value of `v`, and its interval.
#[derive(Debug, Clone)]
struct Spec {
    id: String,
    ends: Option<(String, String)>,
    v: i64,
    valid: Interval,
}

/// The versions GestaltDB's workload writes, in order.
fn specs(nodes: usize, edges: usize, intervals: usize) -> Vec<Spec> {
    let since = |i: usize| Interval::from(BASE + i as i64 * STEP);
    let mut out = Vec::with_capacity(nodes + edges + intervals);
    for i in 0..nodes {
        out.push(Spec {
            id: format!("n{i}"),
            ends: None,
            v: i as i64,
            valid: since(i),
        });
    }
    for j in 0..edges {
        let src = format!("n{}", j % nodes.max(1));
        let dst = format!("n{}", (j * 7 + 1) % nodes.max(1));
        out.push(Spec {
            id: format!("e{j}"),
            ends: Some((src, dst)),
            v: j as i64,
            valid: since(j),
        });
    }
    for k in 0..intervals {
        let from = BASE + k as i64 * STEP;
        out.push(Spec {
            id: "hot".into(),
            ends: None,
            v: k as i64,
            valid: Interval {
                from,
                to: Some(from + STEP),
            },
        });
    }
    out
}

/// GestaltDB's workload (`nodes`, `edges` and `intervals` versions) as
/// the Rust API writes it: for `examples/temporal_write.rs`, which counts
/// what one batch's write takes.
pub fn workload(nodes: usize, edges: usize, intervals: usize) -> Vec<VersionWrite> {
    versions(&specs(nodes, edges, intervals))
}

/// The versions as the Rust API writes them.
fn versions(specs: &[Spec]) -> Vec<VersionWrite> {
    specs
        .iter()
        .map(|s| {
            let props = [("v".to_string(), Value::Int(s.v))].into();
            match &s.ends {
                None => {
                    let state = NodeState {
                        labels: vec![],
                        props,
                    };
                    VersionWrite::assert_node(&s.id, state, s.valid)
                }
                Some((src, dst)) => {
                    let state = EdgeState {
                        src: src.clone(),
                        dst: dst.clone(),
                        rel_type: "LINK".into(),
                        props,
                    };
                    VersionWrite::assert_edge(&s.id, state, s.valid)
                }
            }
        })
        .collect()
}

/// The table of the writes through Cypher (`plexus_cypher_write`): per
/// commit size, the median run's rate; a JSON line each onto `lines`.
fn cypher_writes_table(
    runs: &[(usize, Vec<f64>)],
    total: usize,
    lines: &mut Vec<serde_json::Value>,
) -> String {
    let mut table = String::from(
        "\nWrites through Cypher on Plexus, the same versions into a new store, a query a \
         commit (`UNWIND $nodes AS r CALL plexus.temporal.assertNode(r.id, [], {v: r.v}, \
         r.from, r.to)`, then `assertRelationship` over `$edges`), and every lookup above \
         answered the same from it:\n\n\
         | versions per commit | write through Cypher (versions/s, median) |\n|---|---:|\n",
    );
    for (per, secs) in runs {
        let s = percentile(secs, 0.5).unwrap_or(f64::NAN);
        let rate = total as f64 / s;
        table.push_str(&format!("| {} | {rate:.0} |\n", commit_label(*per)));
        lines.push(json!({"bench": "temporal-cypher-write", "per_commit": per,
            "versions": total, "write_runs_s": secs, "versions_per_s": rate}));
    }
    table
}

/// Writes the versions through Cypher into a new database at `dir`, a
/// query of `per` versions (an auto-commit transaction) at a time: its
/// nodes, then its relationships, each an `UNWIND` of a parameter list
/// over `plexus.temporal.assertNode` or `assertRelationship` (the order of
/// one entity's versions is kept: each is in one list). The seconds taken.
fn plexus_cypher_write(
    dir: &Path,
    specs: &[Spec],
    per: usize,
    durable: bool,
) -> Res<(Database, f64)> {
    const WRITE: &str = "UNWIND $nodes AS r \
         CALL plexus.temporal.assertNode(r.id, [], {v: r.v}, r.from, r.to) YIELD versionId \
         WITH count(versionId) AS n \
         UNWIND $edges AS r \
         CALL plexus.temporal.assertRelationship(r.id, r.src, r.dst, 'LINK', {v: r.v}, r.from, r.to) \
         YIELD versionId RETURN n, count(versionId) AS m";
    let opts = DbOptions {
        durable,
        ..DbOptions::default()
    };
    let db = Database::create(dir, opts)?;
    db.keep_history("default")?;
    let row = |s: &Spec| {
        let mut m: std::collections::BTreeMap<String, Value> = [
            ("id".to_string(), Value::String(s.id.clone())),
            ("v".to_string(), Value::Int(s.v)),
            ("from".to_string(), Value::Int(s.valid.from)),
            ("to".to_string(), s.valid.to.map_or(Value::Null, Value::Int)),
        ]
        .into();
        if let Some((src, dst)) = &s.ends {
            m.insert("src".into(), Value::String(src.clone()));
            m.insert("dst".into(), Value::String(dst.clone()));
        }
        Value::Map(m)
    };
    let chunks: Vec<plexus::Params> = specs
        .chunks(if per == 0 { specs.len().max(1) } else { per })
        .map(|chunk| {
            let (edges, nodes): (Vec<&Spec>, Vec<&Spec>) =
                chunk.iter().partition(|s| s.ends.is_some());
            plexus::Params::from([
                (
                    "nodes".to_string(),
                    Value::List(nodes.into_iter().map(row).collect()),
                ),
                (
                    "edges".to_string(),
                    Value::List(edges.into_iter().map(row).collect()),
                ),
            ])
        })
        .collect();
    let started = Instant::now();
    for params in &chunks {
        db.query("default", WRITE, params)?;
    }
    Ok((db, started.elapsed().as_secs_f64()))
}

/// Lookups: half on `hot` (inside one of its intervals), the rest on
/// nodes and edges, one in ten just before the version starts.
fn queries(o: &Options, intervals: usize) -> Vec<Query> {
    let mut rng = Rng::new(o.seed);
    (0..o.queries)
        .map(|q| {
            if q % 2 == 0 && intervals > 0 {
                let k = rng.below(intervals);
                return Query {
                    kind: Kind::Node,
                    id: "hot".into(),
                    at: BASE + k as i64 * STEP + STEP / 2,
                    expect: Some(k as i64),
                };
            }
            let edge = q % 4 == 1 && o.edges > 0;
            let (kind, n, prefix) = match edge {
                true => (Kind::Edge, o.edges, "e"),
                false => (Kind::Node, o.nodes.max(1), "n"),
            };
            let i = rng.below(n);
            let before = rng.below(10) == 0;
            Query {
                kind,
                id: format!("{prefix}{i}"),
                at: BASE + i as i64 * STEP + if before { -1 } else { 3 },
                expect: (!before).then_some(i as i64),
            }
        })
        .collect()
}

/// What one engine did with the workload.
struct Outcome {
    /// The median of the write runs.
    write_s: f64,
    /// Every write run's seconds, in the order run.
    write_runs: Vec<f64>,
    answers: Vec<Option<i64>>,
    lookup_us: Vec<f64>,
    /// Node lookups through Cypher by id and by value (Plexus only).
    cypher_us: [Vec<f64>; 4],
    /// Plexus only: the seconds of each write of the versions through
    /// Cypher (`plexus_cypher_write`).
    cypher_write_runs: Vec<f64>,
    bytes: u64,
    version: String,
}

fn value_of(state: &State) -> Option<i64> {
    let props = match state {
        State::Node(n) => &n.props,
        State::Edge(e) => &e.props,
        State::None | State::Claim(_) => return None,
    };
    match props.get("v") {
        Some(Value::Int(v)) => Some(*v),
        _ => None,
    }
}

/// Writes `writes` into a new Plexus database at `dir` (the default graph
/// keeps its history, so reads are bitemporal), `per` to a commit.
fn plexus_write(
    dir: &Path,
    writes: &[VersionWrite],
    per: usize,
    durable: bool,
) -> Res<(Database, f64)> {
    let opts = DbOptions {
        durable,
        ..DbOptions::default()
    };
    let db = Database::create(dir, opts)?;
    db.keep_history("default")?;
    let started = Instant::now();
    for chunk in writes.chunks(if per == 0 { writes.len().max(1) } else { per }) {
        commit_versions(db.storage(), "default", chunk)?;
    }
    Ok((db, started.elapsed().as_secs_f64()))
}

/// Each lookup on a snapshot of its own, as a server would: its answer
/// and its time.
fn plexus_lookups(db: &Database, qs: &[Query]) -> Res<(Vec<Option<i64>>, Vec<f64>)> {
    let mut answers = Vec::with_capacity(qs.len());
    let mut times = Vec::with_capacity(qs.len());
    for q in qs {
        let t = Instant::now();
        let r = db.read("default")?;
        let v = as_of(&r, q.kind, &q.id, q.at)?;
        times.push(t.elapsed().as_secs_f64() * 1e6);
        answers.push(v.and_then(|v| value_of(&v.state)));
    }
    Ok((answers, times))
}

/// The node lookups again through Cypher, each an auto-commit query that
/// matches the valid-time graph as of the instant, first by the node's id,
/// then by its property (the valid-time property index): answers checked,
/// and each form's times.
fn plexus_cypher_lookups(db: &Database, qs: &[Query], nodes: usize) -> Res<[Vec<f64>; 4]> {
    const BY_ID: &str = "MATCH (n) FOR VALID_TIME AS OF $t WHERE elementId(n) = $id RETURN n.v";
    // The same, bitemporal: as the graph was at system time `$s`, the
    // moment the writes ended (so the answers are the same), read through
    // the history's versions of the valid-time timelines.
    const BY_ID_THEN: &str = "MATCH (n) FOR VALID_TIME AS OF $t FOR SYSTEM_TIME AS OF $s \
         WHERE elementId(n) = $id RETURN n.v";
    let then = Value::Int(i64::try_from(db.system_time()?)?);
    // `hot` may hold the same value then: the answer is checked for `id`.
    const BY_VALUE: &str =
        "MATCH (n {v: $v}) FOR VALID_TIME AS OF $t RETURN elementId(n) AS id, n.v";
    let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for q in qs.iter().filter(|q| q.kind == Kind::Node) {
        let v = match q.expect {
            Some(v) => v,
            // Not there then: look up the value it is to have.
            None => q.id.trim_start_matches('n').parse().unwrap_or(-1),
        };
        let params = plexus::Params::from([
            ("t".to_string(), Value::Int(q.at)),
            ("id".to_string(), Value::String(q.id.clone())),
            ("v".to_string(), Value::Int(v)),
            ("s".to_string(), then.clone()),
        ]);
        let t = Instant::now();
        let rows = db.query("default", BY_ID, &params)?.rows;
        times[0].push(t.elapsed().as_secs_f64() * 1e6);
        let got = rows.first().and_then(|r| r.first()).and_then(Value::as_int);
        let t = Instant::now();
        let rows = db.query("default", BY_ID_THEN, &params)?.rows;
        times[3].push(t.elapsed().as_secs_f64() * 1e6);
        let then_got = rows.first().and_then(|r| r.first()).and_then(Value::as_int);
        let t = Instant::now();
        let rows = db.query("default", BY_VALUE, &params)?.rows;
        times[1].push(t.elapsed().as_secs_f64() * 1e6);
        let found = value_in(&rows, &q.id);
        if got != q.expect || found != q.expect || then_got != q.expect {
            return Err(format!(
                "plexus through Cypher: {} as of {} gave {got:?} by id, {found:?} by value, \
                 {then_got:?} by id as of the system time the writes ended, expected {:?}",
                q.id, q.at, q.expect
            )
            .into());
        }
    }
    times[2] = edge_range_lookups(db, qs, nodes)?;
    Ok(times)
}

/// The integer of the row (`[id, value]`) whose first column is `id`.
fn value_in(rows: &[Vec<Value>], id: &str) -> Option<i64> {
    rows.iter()
        .find(|r| matches!(r.first(), Some(Value::String(s)) if s == id))
        .and_then(|r| r.get(1))
        .and_then(Value::as_int)
}

/// Relationship lookups through Cypher by a range of their value (the
/// valid-time property index, `RelationshipIndexSeek`), answers checked:
/// through Cypher a relationship holds only while both its nodes do.
fn edge_range_lookups(db: &Database, qs: &[Query], nodes: usize) -> Res<Vec<f64>> {
    const BY_RANGE: &str = "MATCH ()-[r:LINK]->() FOR VALID_TIME AS OF $t \
         WHERE r.v >= $v AND r.v < $v + 1 RETURN elementId(r) AS id, r.v";
    let since = |i: usize| BASE + i as i64 * STEP;
    let mut times = Vec::new();
    for q in qs.iter().filter(|q| q.kind == Kind::Edge) {
        let j: usize = q.id.trim_start_matches('e').parse().unwrap_or(0);
        let ends = [j % nodes.max(1), (j * 7 + 1) % nodes.max(1)];
        let expect = q.expect.filter(|_| ends.iter().all(|&n| since(n) <= q.at));
        let params = plexus::Params::from([
            ("t".to_string(), Value::Int(q.at)),
            ("v".to_string(), Value::Int(j as i64)),
        ]);
        let t = Instant::now();
        let rows = db.query("default", BY_RANGE, &params)?.rows;
        times.push(t.elapsed().as_secs_f64() * 1e6);
        let found = value_in(&rows, &q.id);
        if found != expect || rows.len() > 1 {
            return Err(format!(
                "plexus through Cypher: {} as of {} by range gave {rows:?}, expected {expect:?}",
                q.id, q.at
            )
            .into());
        }
    }
    Ok(times)
}

/// Bytes the valid-time versions and their history take in the store:
/// both parts of the valid-time keyspace, and the history.
fn plexus_bytes(db: &Database) -> Res<u64> {
    Ok(db
        .storage()
        .space()?
        .keyspaces
        .iter()
        .filter(|k| k.name.starts_with("valid_time") || k.name == "history")
        .map(|k| k.stored_bytes)
        .sum())
}

fn run_plexus(work: &Path, o: &Options, per: usize, qs: &[Query]) -> Res<Outcome> {
    let specs = specs(o.nodes, o.edges, o.interval_versions);
    let writes = versions(&specs);
    let mut write_runs = Vec::new();
    let mut db = None;
    for run in 0..o.write_runs {
        // The store of an earlier run is dropped before the next is
        // written, so runs do not share the page cache's pressure.
        drop(db.take());
        let dir = work.join(format!("plexus-{per}-{run}"));
        let (written, secs) = plexus_write(&dir, &writes, per, o.durable)?;
        write_runs.push(secs);
        db = Some(written);
    }
    let db = db.ok_or("no write run")?;
    let (answers, lookup_us) = plexus_lookups(&db, qs)?;
    let cypher_us = plexus_cypher_lookups(&db, qs, o.nodes)?;
    let mut cypher_write_runs = Vec::new();
    for run in 0..o.write_runs {
        let dir = work.join(format!("plexus-cypher-{per}-{run}"));
        let (written, secs) = plexus_cypher_write(&dir, &specs, per, o.durable)?;
        cypher_write_runs.push(secs);
        // What Cypher wrote answers every lookup as the API's writes do.
        let (through_cypher, _) = plexus_lookups(&written, qs)?;
        if through_cypher != answers {
            return Err("plexus: the versions written through Cypher answer otherwise".into());
        }
    }
    Ok(Outcome {
        write_s: percentile(&write_runs, 0.5).unwrap_or(f64::NAN),
        write_runs,
        cypher_write_runs,
        answers,
        lookup_us,
        cypher_us,
        bytes: plexus_bytes(&db)?,
        version: env!("CARGO_PKG_VERSION").into(),
    })
}

/// GestaltDB's engines: the name `--engines` takes, the store the peer
/// script opens and its name in the tables.
const GESTALT_STORES: [(&str, &str, &str); 2] = [
    ("gestaltdb", "rocksdb", "RocksDB"),
    ("gestaltdb-leveldb", "leveldb", "LevelDB"),
];

/// The store and table name of GestaltDB engine `engine`.
fn gestalt_store(engine: &str) -> Option<(&'static str, &'static str)> {
    GESTALT_STORES
        .iter()
        .find(|(e, ..)| *e == engine)
        .map(|&(_, store, label)| (store, label))
}

/// GestaltDB's run on `store`: `rocksdb` or `leveldb`.
fn run_gestalt(work: &Path, o: &Options, per: usize, qs: &[Query], store: &str) -> Res<Outcome> {
    let job = json!({
        "path": work.join(format!("gestalt-{store}-{per}")),
        "store": store,
        "base": BASE, "step": STEP,
        "nodes": o.nodes, "edges": o.edges, "intervals": o.interval_versions,
        "per_commit": per,
        "write_runs": o.write_runs,
        "queries": qs.iter().map(|q| json!([if q.kind == Kind::Node { "node" } else { "edge" }, q.id, q.at])).collect::<Vec<_>>(),
        "max_queries": o.gestalt_queries,
        "budget_s": o.gestalt_budget_s,
    });
    let script = include_str!("../peers/temporal.py");
    let r = crate::run_peer_script(o.venv.as_deref(), work, "temporal", script, &job)?;
    let floats = |k: &str| -> Vec<f64> {
        r[k].as_array()
            .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default()
    };
    let write_runs = floats("write_runs_s");
    Ok(Outcome {
        write_s: percentile(&write_runs, 0.5).unwrap_or(f64::NAN),
        write_runs,
        answers: r["answers"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_i64()).collect())
            .unwrap_or_default(),
        lookup_us: floats("lookup_us"),
        cypher_us: [Vec::new(), Vec::new(), Vec::new(), Vec::new()],
        cypher_write_runs: Vec::new(),
        bytes: r["bytes"].as_u64().unwrap_or(0),
        version: r["version"].as_str().unwrap_or("?").into(),
    })
}

/// The rows "each GestaltDB run ÷ Plexus" (write rate and lookup p50) of
/// one commit size, when Plexus ran.
fn ratios(p50s: &[(String, Option<f64>, f64)]) -> String {
    let Some((_, Some(ours), our_rate)) = p50s.iter().find(|(e, ..)| e == "plexus") else {
        return String::new();
    };
    let mut rows = String::new();
    for (engine, theirs, their_rate) in p50s.iter() {
        let Some((_, store)) = gestalt_store(engine) else {
            continue;
        };
        let lookups = theirs.map_or("—".to_string(), |t| format!("{:.0}×", t / ours));
        rows.push_str(&format!(
            "| | GestaltDB ({store}) ÷ Plexus | {:.0}× | {lookups} | | | |\n",
            our_rate / their_rate,
        ));
    }
    rows
}

/// Fails unless every answer an engine gave is the expected one.
fn check(engine: &str, qs: &[Query], answers: &[Option<i64>]) -> Res<()> {
    for (q, a) in qs.iter().zip(answers) {
        if *a != q.expect {
            return Err(format!(
                "{engine}: {:?} {} as of {} gave {a:?}, expected {:?}",
                q.kind, q.id, q.at, q.expect
            )
            .into());
        }
    }
    Ok(())
}

/// A latency: in µs below a millisecond, else in ms.
fn ms(us: Option<f64>) -> String {
    match us {
        None => "-".into(),
        Some(u) if u < 1000.0 => format!("{u:.1} µs"),
        Some(u) => format!("{:.1} ms", u / 1000.0),
    }
}

/// How a run's versions per commit are shown (0: all in one).
fn commit_label(per: usize) -> String {
    match per {
        0 => "all in one".into(),
        n => n.to_string(),
    }
}

/// Rounds of the flatness check's lookups: in each, one pass over every
/// history in turn, so that a slower minute of the machine weighs on every
/// history alike (measured one after another, a burst of load falls on one
/// history's few milliseconds of lookups).
const SCALE_ROUNDS: usize = 5;

/// The flatness check: one entity's history of each length in `sizes`,
/// then lookups inside each, in [`SCALE_ROUNDS`] rounds.
fn flatness(work: &Path, o: &Options, sizes: &[usize]) -> Res<Vec<Scale>> {
    let mut built = Vec::new();
    for &n in sizes {
        built.push(history(work, o, n)?);
    }
    let mut warm: Vec<Vec<f64>> = vec![Vec::new(); built.len()];
    for _ in 0..SCALE_ROUNDS {
        for (h, times) in built.iter().zip(&mut warm) {
            times.extend(plexus_lookups(&h.db, &h.qs)?.1);
        }
    }
    Ok(built
        .into_iter()
        .zip(warm)
        .map(|(h, w)| Scale {
            cold_us: h.cold_us,
            warm_us: percentile(&w, 0.5).unwrap_or(f64::NAN),
            rate: h.rate,
            bytes: h.bytes,
        })
        .collect())
}

/// One entity's history, written, with its lookups and what was measured
/// before the rounds.
struct History {
    db: Database,
    qs: Vec<Query>,
    cold_us: f64,
    rate: f64,
    bytes: u64,
}

/// One entity's history of `n` versions, its lookups checked once.
fn history(work: &Path, o: &Options, n: usize) -> Res<History> {
    let writes = versions(&specs(0, 0, n));
    let dir = work.join(format!("scale-{n}"));
    let (db, write_s) = plexus_write(&dir, &writes, 10_000, o.durable)?;
    let mut rng = Rng::new(o.seed);
    let qs: Vec<Query> = (0..o.queries.max(1))
        .map(|_| {
            let k = rng.below(n);
            Query {
                kind: Kind::Node,
                id: "hot".into(),
                at: BASE + k as i64 * STEP + 1,
                expect: Some(k as i64),
            }
        })
        .collect();
    // The first pass maps the pages it touches into the process (LMDB
    // reads through a memory map): at 1M versions nearly every lookup
    // touches pages not mapped yet. The rounds after it are the steady
    // state.
    let (answers, cold) = plexus_lookups(&db, &qs)?;
    check("plexus", &qs, &answers)?;
    Ok(History {
        cold_us: percentile(&cold, 0.5).unwrap_or(f64::NAN),
        rate: n as f64 / write_s,
        bytes: plexus_bytes(&db)? / n.max(1) as u64,
        db,
        qs,
    })
}

/// What the flatness check measured at one history length.
struct Scale {
    cold_us: f64,
    warm_us: f64,
    rate: f64,
    bytes: u64,
}

pub fn main(o: &Options) -> Res<()> {
    let (table, lines) = run(o)?;
    Ok(crate::report(o.out.as_deref(), &table, &lines)?)
}

/// Runs the workload: the markdown table and a JSON line per result.
pub fn run(o: &Options) -> Res<(String, Vec<serde_json::Value>)> {
    let (work, temporary) = crate::work_dir(o.work.as_deref(), "temporal")?;
    let total = o.nodes + o.edges + o.interval_versions;
    let qs = queries(o, o.interval_versions);
    let mut table = format!(
        "Temporal workload: {} node, {} edge and {} interval versions ({total}), {} lookups, seed {}; \
         Plexus commits {}\n\n\
         | versions per commit | engine | write (versions/s, median of {}) | as-of lookup p50 | p95 | lookups | bytes per version |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
        o.nodes,
        o.edges,
        o.interval_versions,
        o.queries,
        o.seed,
        if o.durable {
            "synced to disk (--durable)"
        } else {
            "without syncing each (as GestaltDB's RocksDB store; --durable syncs)"
        },
        o.write_runs,
    );
    let mut lines = Vec::new();
    // Plexus's node lookups through Cypher, per commit size.
    let mut cypher = Vec::new();
    let mut cypher_writes = Vec::new();
    for &per in &o.per_commit {
        let mut p50s = Vec::new();
        for engine in &o.engines {
            let r = match (engine.as_str(), gestalt_store(engine)) {
                ("plexus", _) => run_plexus(&work, o, per, &qs)?,
                (_, Some((store, _))) => run_gestalt(&work, o, per, &qs, store)?,
                (other, None) => {
                    return Err(format!(
                        "unknown engine '{other}' (plexus, gestaltdb, gestaltdb-leveldb)"
                    )
                    .into())
                }
            };
            check(engine, &qs, &r.answers)?;
            let p50 = percentile(&r.lookup_us, 0.5);
            let p95 = percentile(&r.lookup_us, 0.95);
            let rate = total as f64 / r.write_s;
            let per_label = commit_label(per);
            table.push_str(&format!(
                "| {per_label} | {engine} {} | {rate:.0} | {} | {} | {} | {} |\n",
                r.version,
                ms(p50),
                ms(p95),
                r.answers.len(),
                r.bytes / total.max(1) as u64
            ));
            lines.push(
                json!({"bench": "temporal", "engine": engine, "version": r.version,
                "per_commit": per, "versions": total, "write_s": r.write_s, "write_runs_s": r.write_runs,
                "versions_per_s": rate,
                "lookup_p50_us": p50, "lookup_p95_us": p95, "lookups": r.answers.len(),
                "bytes": r.bytes}),
            );
            p50s.push((engine.clone(), p50, rate));
            if !r.cypher_write_runs.is_empty() {
                cypher_writes.push((per, r.cypher_write_runs.clone()));
            }
            let forms = ["id", "value", "edge range", "id, bitemporal"];
            for (form, times) in forms.into_iter().zip(&r.cypher_us) {
                if !times.is_empty() {
                    let p = |q| percentile(times, q);
                    cypher.push((per, form, p(0.5), p(0.95), times.len()));
                }
            }
        }
        table.push_str(&ratios(&p50s));
    }
    if !cypher.is_empty() {
        table.push_str(
            "\nLookups through Cypher on Plexus, one auto-commit query each, answers \
             checked: by id (`MATCH (n) FOR VALID_TIME AS OF $t WHERE elementId(n) = $id RETURN \
             n.v`) and by value (`MATCH (n {v: $v}) FOR VALID_TIME AS OF $t RETURN elementId(n), \
             n.v`, the valid-time property index), and relationships by a range of their \
             value (`MATCH ()-[r:LINK]->() FOR VALID_TIME AS OF $t WHERE r.v >= $v AND r.v < \
             $v + 1 RETURN elementId(r), r.v`); and by id again, bitemporal (`… FOR VALID_TIME \
             AS OF $t FOR SYSTEM_TIME AS OF $s WHERE elementId(n) = $id …`, `$s` the system \
             time the writes ended, read through the history):\n\n\
             | versions per commit | lookup by | Cypher lookup p50 | p95 | lookups |\n\
             |---|---|---:|---:|---:|\n",
        );
        for (per, form, p50, p95, n) in cypher {
            let per_label = commit_label(per);
            table.push_str(&format!(
                "| {per_label} | {form} | {} | {} | {n} |\n",
                ms(p50),
                ms(p95)
            ));
            lines.push(
                json!({"bench": "temporal-cypher", "per_commit": per, "by": form,
                "lookup_p50_us": p50, "lookup_p95_us": p95, "lookups": n}),
            );
        }
    }
    if !cypher_writes.is_empty() {
        table.push_str(&cypher_writes_table(&cypher_writes, total, &mut lines));
    }
    if !o.scale.is_empty() {
        table.push_str(&format!(
            "\nOne entity's history growing (Plexus; 10,000 versions a commit; lookups after a \
             first pass over the same instants, which maps the pages, in {SCALE_ROUNDS} rounds \
             of a pass over each history in turn):\n\n\
             | versions | as-of lookup p50 | first pass p50 | write (versions/s) | bytes per version |\n\
             |---:|---:|---:|---:|---:|\n",
        ));
        let mut p50s = Vec::new();
        for (&n, s) in o.scale.iter().zip(flatness(&work, o, &o.scale)?) {
            table.push_str(&format!(
                "| {n} | {} | {} | {:.0} | {} |\n",
                ms(Some(s.warm_us)),
                ms(Some(s.cold_us)),
                s.rate,
                s.bytes
            ));
            lines.push(json!({"bench": "temporal-scale", "versions": n, "lookup_p50_us": s.warm_us,
                "first_pass_p50_us": s.cold_us, "versions_per_s": s.rate, "bytes_per_version": s.bytes}));
            p50s.push(s.warm_us);
        }
        let (lo, hi) = p50s
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &p| (lo.min(p), hi.max(p)));
        table.push_str(&format!("\nlargest p50 ÷ smallest: {:.2}\n", hi / lo));
    }
    if o.prune_nodes > 0 {
        let p = prune::run(&work.join("prune"), o.prune_nodes, o.prune_rounds, o.seed)?;
        table.push_str(&format!(
            "\nPruning history (Plexus; {} nodes with history and a retention policy, then {} rounds \
             of 100 node writes in 10 commits, each followed by a prune before the round before \
             it ended):\n\n\
             | prune | ms | versions removed |\n|---|---:|---:|\n\
             | first (reads the whole history) | {:.1} | {} |\n\
             | later (median; what changed since the last) | {:.2} | {} |\n",
            o.prune_nodes, p.rounds, p.first.0, p.first.1, p.later.0, p.later.1
        ));
        lines.push(
            json!({"bench": "temporal-prune", "nodes": o.prune_nodes, "rounds": p.rounds,
            "first_ms": p.first.0, "first_removed": p.first.1,
            "later_p50_ms": p.later.0, "later_p50_removed": p.later.1}),
        );
    }
    if temporary {
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok((table, lines))
}
