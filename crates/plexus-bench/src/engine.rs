//! Plexus as a benchmark engine: loading a generated graph through the
//! public API and running each workload through the Rust API.

use crate::gen::Generator;
use crate::Case;
use plexus::algo::{self, Filter, Hop, PathSemantics, Rng, SampleMode, StoreView};
use plexus::{
    BulkEdge, BulkNode, Database, Direction, GraphRead, IndexSpec, NodeId, Origin, Props, ReadTxn,
};
use std::io::IsTerminal;
use std::time::Instant;

/// The benchmark graph, with the index on the filter property that every
/// peer also gets, so that filtered queries compare like with like.
fn create_graph(db: &Database, graph: &str, keys: &[&str]) -> plexus::Result<()> {
    db.create_graph(graph)?;
    let mut t = db.write(graph)?;
    for key in keys {
        t.create_index(IndexSpec {
            label: None,
            ..IndexSpec::property("", key)
        })?;
    }
    Ok(t.commit()?)
}

/// Loads `g` into a new graph named `graph` with one bulk load (after
/// creating a label-less index on the filter property). Returns the seconds
/// it took.
pub fn load(
    db: &Database,
    graph: &str,
    g: &dyn Generator,
    filter_key: &str,
) -> plexus::Result<f64> {
    load_with(db, graph, g, filter_key, false)
}

/// [`load`], optionally also storing each node's user id as an indexed
/// `id` property, as the peers store it, for the workloads in Cypher.
pub fn load_with(
    db: &Database,
    graph: &str,
    g: &dyn Generator,
    filter_key: &str,
    id_property: bool,
) -> plexus::Result<f64> {
    let start = Instant::now();
    let keys: &[&str] = if id_property {
        &[filter_key, "id"]
    } else {
        &[filter_key]
    };
    create_graph(db, graph, keys)?;
    let total = g.nodes() + g.edges();
    let progress = std::io::stderr().is_terminal();
    let tick = move |done: u64| {
        if progress && done.is_multiple_of(1_000_000) {
            eprint!(
                "\r  preparing {}: {done}/{total} rows, {:.0} rows/s   ",
                g.name(),
                done as f64 / start.elapsed().as_secs_f64().max(1e-9)
            );
        }
    };
    let props = |p: Vec<(&'static str, plexus::Value)>| -> Props {
        p.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    };
    let mut nodes = (0..g.nodes()).map(|i| {
        tick(i);
        let r = g.node(i);
        let mut p = props(r.props);
        if id_property {
            p.insert("id".into(), plexus::Value::String(r.id.clone()));
        }
        Ok(BulkNode {
            key: r.id,
            labels: r.labels.iter().map(|l| l.to_string()).collect(),
            props: p,
            origin: Origin::new(format!("node #{i}")),
        })
    });
    let mut edges = (0..g.edges()).map(|i| {
        tick(g.nodes() + i);
        let e = g.edge(i);
        Ok(BulkEdge {
            key: Some(e.id),
            src: e.src,
            dst: e.dst,
            rel_type: e.rel_type.to_string(),
            props: props(e.props),
            origin: Origin::new(format!("edge #{i}")),
        })
    });
    db.storage().bulk_load(graph, &mut nodes, &mut edges)?;
    if progress {
        eprintln!();
    }
    Ok(start.elapsed().as_secs_f64())
}

/// Imports the Parquet files the peers load (`nodes.parquet`, one
/// `edges_<TYPE>.parquet` per type) into a new graph, through the same path
/// as `plexus import`. Returns the seconds it took.
pub fn load_files(
    db: &Database,
    graph: &str,
    dir: &std::path::Path,
    types: &[&str],
    filter_key: &str,
) -> Result<f64, Box<dyn std::error::Error>> {
    use plexus::ingest::{Format, ImportOptions, Input};
    let start = Instant::now();
    create_graph(db, graph, &[filter_key])?;
    let nodes = [Input {
        path: dir.join("nodes.parquet"),
        name: None,
        format: Format::Parquet,
        header: None,
    }];
    let edges: Vec<Input> = types
        .iter()
        .map(|t| Input {
            path: dir.join(format!("edges_{t}.parquet")),
            name: Some(t.to_string()),
            format: Format::Parquet,
            header: None,
        })
        .collect();
    db.import(
        graph,
        &nodes,
        &edges,
        &ImportOptions::default(),
        &mut |_| {},
        None,
    )?;
    Ok(start.elapsed().as_secs_f64())
}

/// Inserts the nodes `ids`, one transaction each, and returns the mean
/// seconds per insert of each tenth.
pub fn insert_over_time(db: &Database, graph: &str, ids: &[String]) -> plexus::Result<Vec<f64>> {
    let tenth = (ids.len() / 10).max(1);
    let mut out = Vec::with_capacity(10);
    for t in 0..10 {
        let start = Instant::now();
        for (i, id) in ids.iter().enumerate().skip(t * tenth).take(tenth) {
            let mut txn = db.write(graph)?;
            let props = Props::from([("grp".to_string(), plexus::Value::Int((i % 100) as i64))]);
            txn.create_node(Some(id), &["Node"], &props)?;
            txn.commit()?;
        }
        out.push(start.elapsed().as_secs_f64() / tenth as f64);
    }
    Ok(out)
}

fn ids(r: &ReadTxn, keys: &[String]) -> plexus::Result<Vec<NodeId>> {
    keys.iter()
        .map(|k| {
            r.node_id(k)?.ok_or_else(|| {
                plexus::StorageError::NotFound {
                    what: "node",
                    id: k.clone(),
                }
                .into()
            })
        })
        .collect()
}

/// Runs one workload once and returns its count. Seeds are looked up by
/// user id inside the timed run, as the peers' queries do.
pub fn run(
    r: &ReadTxn,
    case: &Case,
    typed: &[&str],
    filter: (&str, i64),
) -> Result<u64, Box<dyn std::error::Error>> {
    let v = StoreView(r);
    let seeds = ids(r, &case.seeds)?;
    let out = Filter::any(Direction::Out);
    let typed_hop = |k: usize| Hop::new(Filter::new(&v, Direction::Out, &[typed[k]]));
    let mut steps = Vec::new();
    let mut total = 0u64;
    match case.kind {
        "neighbors" | "typed_neighbors" => {
            let f = if case.kind == "neighbors" {
                out
            } else {
                typed_hop(0).filter
            };
            for s in seeds {
                steps.clear();
                algo::GraphView::steps(&v, s, &f, &mut steps)?;
                total += steps.len() as u64;
            }
        }
        "reach3" => {
            for s in seeds {
                total += algo::reach(&v, s, &out, 3)?;
            }
        }
        "typed_path2" | "typed_path3" => {
            let n = if case.kind == "typed_path2" { 2 } else { 3 };
            let hops: Vec<Hop> = (0..n).map(typed_hop).collect();
            for s in seeds {
                total += algo::count_paths(&v, s, &hops, PathSemantics::Walk)?;
            }
        }
        "count_paths3" | "count_trails3" => {
            let hops = vec![Hop::new(out); 3];
            let sem = if case.kind == "count_paths3" {
                PathSemantics::Walk
            } else {
                PathSemantics::Trail
            };
            for s in seeds {
                total += algo::count_paths(&v, s, &hops, sem)?;
            }
        }
        "shortest_path" => {
            for (k, &a) in seeds.iter().enumerate() {
                let b = seeds[(k + 1) % seeds.len()];
                if let Some(p) = algo::shortest_path(&v, a, b, &out, Some(30))? {
                    total += p.len() as u64;
                }
            }
        }
        "lookup" => total = seeds.len() as u64,
        "filter_count" => {
            total = r
                .find_nodes(None, filter.0, &plexus::Value::Int(filter.1))?
                .len() as u64
        }
        "filter_count_unindexed" => {
            let (key, value) = UNINDEXED_FILTER;
            total = r.nodes_equal(None, key, &plexus::Value::from(value))?.len() as u64
        }
        "filter_prefix_unindexed" => {
            let (key, prefix) = UNINDEXED_PREFIX;
            let starts =
                |v: &plexus::Value| matches!(v, plexus::Value::String(s) if s.starts_with(prefix));
            total = match r.nodes_where(None, key, &mut |v| starts(v))? {
                Some(ids) => ids.len() as u64,
                // No column (a remote store): every node's value.
                None => {
                    let mut n = 0;
                    for id in r.nodes() {
                        n += u64::from(r.node_property(id?, key)?.as_ref().is_some_and(starts));
                    }
                    n
                }
            }
        }
        "group_count_unindexed" => {
            // The property's column grouped (`column_groups`); without one
            // (a remote store), each node's value counted.
            let key = UNINDEXED_FILTER.0;
            total = match r.column_groups(None, key)? {
                Some(groups) => groups.iter().map(|(_, n)| *n).max().unwrap_or(0),
                None => {
                    let mut counts: std::collections::HashMap<String, u64> = Default::default();
                    for id in r.nodes() {
                        if let Some(plexus::Value::String(v)) = r.node_property(id?, key)? {
                            *counts.entry(v).or_default() += 1;
                        }
                    }
                    counts.into_values().max().unwrap_or(0)
                }
            }
        }
        "sample5" => {
            let f = typed_hop(0).filter;
            let mut rng = Rng::new(42);
            for s in seeds {
                total += algo::sample_neighbors(&v, s, &f, 5, &SampleMode::Uniform, &mut rng)?.len()
                    as u64;
            }
        }
        "star" => total = r.degree(seeds[0], Direction::Out, Some(typed[0]))?,
        "knows_reach2" => {
            let f = Filter::new(&v, Direction::Both, &[typed[0]]);
            for s in seeds {
                total += algo::reach(&v, s, &f, 2)?;
            }
        }
        "knows_shortest" => {
            // Seeds pair up: (0, 1), (2, 3), ...
            let f = Filter::new(&v, Direction::Both, &[typed[0]]);
            for pair in seeds.chunks_exact(2) {
                if let Some(p) = algo::shortest_path(&v, pair[0], pair[1], &f, Some(30))? {
                    total += p.len() as u64;
                }
            }
        }
        other => return Err(format!("unknown workload kind '{other}'").into()),
    }
    Ok(total)
}

/// The Cypher a workload runs as, with `$id` (or `$a`, `$b`) bound per
/// seed: the peers' queries in standard Cypher (trail semantics, so there
/// is no Cypher form of the walk count `count_paths3`).
/// The filter of `filter_count_unindexed`: a property no engine indexes
/// (the skewed graph's `kind`; `peers/peer.py` names the same).
pub const UNINDEXED_FILTER: (&str, &str) = ("kind", "delta");
/// The filter of `filter_prefix_unindexed`: a prefix of the same property
/// (`STARTS WITH`, which no engine's index answers here).
pub const UNINDEXED_PREFIX: (&str, &str) = ("kind", "del");

pub fn cypher_text(case: &Case, typed: &[&str], filter: (&str, i64)) -> Option<String> {
    let t = |k: usize| typed.get(k).copied().unwrap_or("");
    Some(match case.kind {
        "neighbors" => "MATCH (a {id: $id})-->(b) RETURN count(*)".into(),
        "typed_neighbors" | "star" => {
            format!("MATCH (a {{id: $id}})-[:{}]->(b) RETURN count(*)", t(0))
        }
        "reach3" => {
            "MATCH (a {id: $id})-[*1..3]->(b) WHERE b.id <> $id RETURN count(DISTINCT b)".into()
        }
        "typed_path2" => format!(
            "MATCH (a {{id: $id}})-[:{}]->()-[:{}]->() RETURN count(*)",
            t(0),
            t(1)
        ),
        "typed_path3" => format!(
            "MATCH (a {{id: $id}})-[:{}]->()-[:{}]->()-[:{}]->() RETURN count(*)",
            t(0),
            t(1),
            t(2)
        ),
        "count_trails3" => "MATCH (a {id: $id})-[*3..3]->(b) RETURN count(*)".into(),
        "shortest_path" => {
            "MATCH p = shortestPath((a {id: $a})-[*1..30]->(b {id: $b})) RETURN length(p)".into()
        }
        "lookup" => "MATCH (a {id: $id}) RETURN count(*)".into(),
        "filter_count_unindexed" => format!(
            "MATCH (n) WHERE n.{} = '{}' RETURN count(*)",
            UNINDEXED_FILTER.0, UNINDEXED_FILTER.1
        ),
        "filter_count" => format!(
            "MATCH (n) WHERE n.{} = {} RETURN count(*)",
            filter.0, filter.1
        ),
        "filter_prefix_unindexed" => format!(
            "MATCH (n) WHERE n.{} STARTS WITH '{}' RETURN count(*)",
            UNINDEXED_PREFIX.0, UNINDEXED_PREFIX.1
        ),
        // The largest group's size: a grouped count, sorted and cut.
        "group_count_unindexed" => format!(
            "MATCH (n) RETURN count(*) AS c, n.{} AS k ORDER BY c DESC LIMIT 1",
            UNINDEXED_FILTER.0
        ),
        "sample5" => format!("MATCH (a {{id: $id}})-[:{}]->(b) RETURN b.id LIMIT 5", t(0)),
        "knows_reach2" => format!(
            "MATCH (a {{id: $id}})-[:{}*1..2]-(b) WHERE b.id <> $id RETURN count(DISTINCT b)",
            t(0)
        ),
        "knows_shortest" => format!(
            "MATCH p = shortestPath((a {{id: $a}})-[:{}*1..30]-(b {{id: $b}})) RETURN length(p)",
            t(0)
        ),
        _ => return None,
    })
}

/// Runs one workload once as Cypher in `tx`, a read-only transaction
/// ([`plexus::Session::begin_read`]): queries on one snapshot, as the Rust
/// API's runs read one [`ReadTxn`].
pub fn run_cypher(
    tx: &mut plexus::Transaction,
    case: &Case,
    text: &str,
) -> Result<u64, Box<dyn std::error::Error>> {
    let id = |s: &str| plexus::Params::from([("id".to_string(), plexus::Value::from(s))]);
    let pair = |a: &str, b: &str| {
        plexus::Params::from([
            ("a".to_string(), plexus::Value::from(a)),
            ("b".to_string(), plexus::Value::from(b)),
        ])
    };
    let count = |t: plexus::Table| -> u64 {
        match t.rows.first().and_then(|r| r.first()) {
            Some(plexus::Value::Int(n)) => *n as u64,
            _ => 0,
        }
    };
    let mut total = 0;
    match case.kind {
        "filter_count"
        | "filter_count_unindexed"
        | "filter_prefix_unindexed"
        | "group_count_unindexed" => total = count(tx.query(text, &plexus::Params::new())?),
        "star" => total = count(tx.query(text, &id(&case.seeds[0]))?),
        "sample5" => {
            for s in &case.seeds {
                total += tx.query(text, &id(s))?.rows.len() as u64;
            }
        }
        "shortest_path" => {
            let n = case.seeds.len();
            for k in 0..n {
                total += count(tx.query(text, &pair(&case.seeds[k], &case.seeds[(k + 1) % n]))?);
            }
        }
        "knows_shortest" => {
            for p in case.seeds.chunks_exact(2) {
                total += count(tx.query(text, &pair(&p[0], &p[1]))?);
            }
        }
        _ => {
            for s in &case.seeds {
                total += count(tx.query(text, &id(s))?);
            }
        }
    }
    Ok(total)
}
