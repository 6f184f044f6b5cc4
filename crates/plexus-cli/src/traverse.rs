//! `plexus path`, `plexus bfs` and `plexus sample`.

use crate::commands::{node_of, CliResult};
use crate::output::Out;
use crate::{DirectionArg, Follow, SampleCmd, SampleModeArg};
use plexus::algo::{self, Filter, Path, Rng, SampleMode, StoreView, WalkBias};
use plexus::{Database, Direction, GraphRead, NodeId, ReadTxn};
use serde_json::json;

fn filter(view: &StoreView<'_, ReadTxn>, f: &Follow) -> Filter {
    let dir = match f.direction {
        DirectionArg::Out => Direction::Out,
        DirectionArg::In => Direction::In,
        DirectionArg::Both => Direction::Both,
    };
    let names: Vec<&str> = f.types.iter().map(String::as_str).collect();
    Filter::new(view, dir, &names)
}

fn key(r: &ReadTxn, n: NodeId) -> String {
    r.node(n)
        .ok()
        .flatten()
        .map(|n| n.key)
        .unwrap_or_else(|| n.to_string())
}

/// A path as user ids: `ann -[KNOWS]-> bob`.
fn describe(r: &ReadTxn, p: &Path) -> (Vec<String>, String) {
    let nodes: Vec<String> = p.nodes.iter().map(|n| key(r, *n)).collect();
    let mut text = nodes[0].clone();
    for (i, e) in p.edges.iter().enumerate() {
        let t = r
            .edge(*e)
            .ok()
            .flatten()
            .map(|e| e.rel_type)
            .unwrap_or_default();
        text += &format!(" -[{t}]- {}", nodes[i + 1]);
    }
    (nodes, text)
}

#[expect(
    clippy::too_many_arguments,
    reason = "one function per subcommand, taking its options"
)]
pub fn path(
    db: &Database,
    g: &str,
    from: &str,
    to: &str,
    follow: &Follow,
    weight: Option<&str>,
    all: bool,
    max_depth: Option<u32>,
    limit: usize,
    out: &Out,
) -> CliResult {
    let r = db.read(g)?;
    let (a, b) = (node_of(&r, from)?, node_of(&r, to)?);
    let v = StoreView(&r);
    let f = filter(&v, follow);
    let mut rows = Vec::new();
    let mut push = |p: &Path, cost: Option<f64>| {
        let (nodes, text) = describe(&r, p);
        rows.push(vec![
            json!(p.len()),
            json!(cost),
            if out.json { json!(nodes) } else { json!(text) },
        ]);
    };
    if let Some(w) = weight {
        if let Some((cost, p)) = algo::weighted_shortest_path(&v, a, b, &f, w)? {
            push(&p, Some(cost));
        }
    } else if all {
        for p in algo::all_shortest_paths(&v, a, b, &f, max_depth, limit)? {
            push(&p, None);
        }
    } else if let Some(p) = algo::shortest_path(&v, a, b, &f, max_depth)? {
        push(&p, None);
    }
    if rows.is_empty() && !out.json {
        say!("no path from '{from}' to '{to}'");
        return Ok(());
    }
    out.table(&["hops", "cost", "path"], rows);
    Ok(())
}

pub fn bfs(db: &Database, g: &str, id: &str, depth: u32, follow: &Follow, out: &Out) -> CliResult {
    let r = db.read(g)?;
    let start = node_of(&r, id)?;
    let v = StoreView(&r);
    let rows = algo::bfs(&v, start, &filter(&v, follow), depth)?
        .into_iter()
        .map(|(n, d)| vec![json!(key(&r, n)), json!(d)])
        .collect();
    out.table(&["node", "depth"], rows);
    Ok(())
}

pub fn sample(db: &Database, g: &str, cmd: &SampleCmd, out: &Out) -> CliResult {
    let r = db.read(g)?;
    let v = StoreView(&r);
    match cmd {
        SampleCmd::Neighbors {
            id,
            k,
            mode,
            weight,
            seed,
            follow,
        } => {
            let n = node_of(&r, id)?;
            let mode = match mode {
                SampleModeArg::Uniform => SampleMode::Uniform,
                SampleModeArg::Replace => SampleMode::WithReplacement,
                SampleModeArg::Unique => SampleMode::UniqueNeighbors,
                SampleModeArg::Weighted => SampleMode::Weighted(weight.clone().unwrap_or_default()),
            };
            let steps = algo::sample_neighbors(
                &v,
                n,
                &filter(&v, follow),
                *k,
                &mode,
                &mut Rng::new(*seed),
            )?;
            let rows = steps
                .iter()
                .map(|s| {
                    Ok(vec![
                        json!(key(&r, s.node)),
                        json!(&*r.type_name(s.rel_type)?),
                        json!(if s.outgoing { "->" } else { "<-" }),
                    ])
                })
                .collect::<Result<Vec<_>, plexus::StorageError>>()?;
            out.table(&["node", "type", "dir"], rows);
        }
        SampleCmd::Walk {
            id,
            length,
            p,
            q,
            seed,
            follow,
        } => {
            let n = node_of(&r, id)?;
            let walk = algo::random_walk(
                &v,
                n,
                *length,
                &filter(&v, follow),
                WalkBias { p: *p, q: *q },
                &mut Rng::new(*seed),
            )?;
            let rows = walk
                .iter()
                .enumerate()
                .map(|(i, n)| vec![json!(i), json!(key(&r, *n))])
                .collect();
            out.table(&["step", "node"], rows);
        }
    }
    Ok(())
}
