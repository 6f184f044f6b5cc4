//! Plexus as a benchmark engine: loading a generated graph through the
//! public API and running each workload through the Rust API.

use crate::gen::Generator;
use crate::Case;
use plexus::algo::{self, Filter, Hop, PathSemantics, Rng, SampleMode, StoreView};
use plexus::{Database, Direction, GraphRead, IndexSpec, NodeId, Props, ReadTxn};
use std::io::IsTerminal;
use std::time::Instant;

/// Rows per write transaction while loading.
const BATCH: u64 = 50_000;

/// Loads `g` into a new graph named `graph`, with a (label-less) index on
/// the filter property. Returns the seconds it took.
pub fn load(
    db: &Database,
    graph: &str,
    g: &dyn Generator,
    filter_key: &str,
) -> plexus::Result<f64> {
    let start = Instant::now();
    db.create_graph(graph)?;
    let mut t = db.write(graph)?;
    t.create_index(IndexSpec {
        label: None,
        ..IndexSpec::property("", filter_key)
    })?;
    t.commit()?;
    let total = g.nodes() + g.edges();
    let progress = std::io::stderr().is_terminal();
    let mut done = 0u64;
    let report = |done: u64| {
        if progress {
            let s = start.elapsed().as_secs_f64();
            eprint!(
                "\r  loading {}: {done}/{total} rows, {:.0} rows/s   ",
                g.name(),
                done as f64 / s.max(1e-9)
            );
        }
    };
    let mut i = 0;
    while i < g.nodes() {
        let mut t = db.write(graph)?;
        for j in i..(i + BATCH).min(g.nodes()) {
            let r = g.node(j);
            let props: Props = r
                .props
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            t.create_node(Some(&r.id), r.labels, &props)?;
        }
        t.commit()?;
        i += BATCH;
        done = i.min(g.nodes());
        report(done);
    }
    let mut i = 0;
    while i < g.edges() {
        let mut t = db.write(graph)?;
        for j in i..(i + BATCH).min(g.edges()) {
            let e = g.edge(j);
            let missing = |id: &str| plexus::StorageError::NotFound {
                what: "node",
                id: id.to_string(),
            };
            let s = t.node_id(&e.src)?.ok_or_else(|| missing(&e.src))?;
            let d = t.node_id(&e.dst)?.ok_or_else(|| missing(&e.dst))?;
            let props: Props = e
                .props
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            t.create_edge(Some(&e.id), s, d, e.rel_type, &props)?;
        }
        t.commit()?;
        i += BATCH;
        report(done + i.min(g.edges()));
    }
    if progress {
        eprintln!();
    }
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
