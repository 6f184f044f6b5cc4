//! Breadth-first search, reachability, and typed path expansion and counting.

use crate::error::Result;
use crate::view::{GraphView, Hop, Path, Step};
use plexus_storage::NodeId;
use std::collections::{HashMap, HashSet};

/// Whether a path may use an edge twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSemantics {
    /// Any sequence of adjacent edges (what Kuzu and GestaltDB count).
    Walk,
    /// No edge twice in one path (openCypher's relationship isomorphism).
    Trail,
}

/// The distinct nodes within `max_depth` hops of `start` (itself included,
/// at depth 0), in breadth-first order, each with its hop distance. Every
/// node is expanded once, a level at a time: on a view that reads in
/// batches (a remote store), [`FRONTIER_BATCH`] nodes a read
/// ([`GraphView::steps_many`]: one round trip), else node by node.
pub fn bfs(
    v: &impl GraphView,
    start: NodeId,
    filter: &crate::Filter,
    max_depth: u32,
) -> Result<Vec<(NodeId, u32)>> {
    let mut seen: HashSet<NodeId> = HashSet::from([start]);
    let mut order = vec![(start, 0)];
    let mut frontier = vec![start];
    for depth in 1..=max_depth {
        let mut next = Vec::new();
        level_steps(v, &frontier, filter, &mut |_, steps| {
            for s in steps {
                if seen.insert(s.node) {
                    order.push((s.node, depth));
                    next.push(s.node);
                }
            }
        })?;
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    Ok(order)
}

/// Nodes of a breadth-first level read at once: large enough that a level
/// of a remote store costs few round trips, small enough that their steps
/// fit in memory together.
pub const FRONTIER_BATCH: usize = 1024;

/// Hands `f` each node of a breadth-first level with its steps, in order:
/// on a view that reads in batches (a remote store), [`FRONTIER_BATCH`]
/// nodes a read ([`GraphView::steps_many`]: one round trip), else node by
/// node.
pub(crate) fn level_steps(
    v: &impl GraphView,
    level: &[NodeId],
    filter: &crate::Filter,
    f: &mut dyn FnMut(NodeId, &[Step]),
) -> Result<()> {
    if v.reads_in_batches() {
        let mut many = Vec::new();
        for batch in level.chunks(FRONTIER_BATCH) {
            v.steps_many(batch, filter, &mut many)?;
            for (n, steps) in batch.iter().zip(&many) {
                f(*n, steps);
            }
        }
    } else {
        let mut buf = Vec::new();
        for &n in level {
            buf.clear();
            v.steps(n, filter, &mut buf)?;
            f(n, &buf);
        }
    }
    Ok(())
}

/// How many distinct nodes other than `start` lie within `max_depth` hops.
pub fn reach(
    v: &impl GraphView,
    start: NodeId,
    filter: &crate::Filter,
    max_depth: u32,
) -> Result<u64> {
    Ok(bfs(v, start, filter, max_depth)?.len() as u64 - 1)
}

fn hop_steps(v: &impl GraphView, n: NodeId, hop: &Hop, buf: &mut Vec<Step>) -> Result<()> {
    buf.clear();
    v.steps(n, &hop.filter, buf)?;
    if let Some(k) = hop.fanout {
        buf.truncate(k);
    }
    Ok(())
}

/// The number of paths from `start` that follow `hops`, without building
/// them. Walks are counted level by level with per-node multiplicities, so
/// branches that meet share their work; trails need a depth-first search.
pub fn count_paths(
    v: &impl GraphView,
    start: NodeId,
    hops: &[Hop],
    sem: PathSemantics,
) -> Result<u64> {
    let mut buf = Vec::new();
    match sem {
        PathSemantics::Walk => {
            let mut frontier: HashMap<NodeId, u64> = HashMap::from([(start, 1)]);
            for hop in hops {
                let mut next: HashMap<NodeId, u64> = HashMap::with_capacity(frontier.len());
                for (n, count) in frontier {
                    hop_steps(v, n, hop, &mut buf)?;
                    for s in &buf {
                        *next.entry(s.node).or_default() += count;
                    }
                }
                frontier = next;
            }
            Ok(frontier.values().sum())
        }
        PathSemantics::Trail => {
            let mut count = 0;
            let mut path = Path::single(start);
            walk(
                v,
                hops,
                &mut path,
                &mut |_| {
                    count += 1;
                    true
                },
                true,
            )?;
            Ok(count)
        }
    }
}

/// The paths from `start` that follow `hops`, at most `limit` of them.
pub fn expand_paths(
    v: &impl GraphView,
    start: NodeId,
    hops: &[Hop],
    sem: PathSemantics,
    limit: usize,
) -> Result<Vec<Path>> {
    let mut out = Vec::new();
    if limit == 0 {
        return Ok(out);
    }
    let mut path = Path::single(start);
    let mut emit = |p: &Path| {
        out.push(p.clone());
        out.len() < limit
    };
    walk(v, hops, &mut path, &mut emit, sem == PathSemantics::Trail)?;
    Ok(out)
}

/// Depth-first along `hops`, emitting each complete path; `emit` returns
/// false to stop. With `trail`, an edge already on the path is skipped.
fn walk(
    v: &impl GraphView,
    hops: &[Hop],
    path: &mut Path,
    emit: &mut dyn FnMut(&Path) -> bool,
    trail: bool,
) -> Result<bool> {
    let Some((hop, rest)) = hops.split_first() else {
        return Ok(emit(path));
    };
    let mut buf = Vec::new();
    hop_steps(v, path.end(), hop, &mut buf)?;
    for s in buf {
        if trail && path.edges.contains(&s.edge) {
            continue;
        }
        path.edges.push(s.edge);
        path.nodes.push(s.node);
        let go_on = walk(v, rest, path, emit, trail)?;
        path.edges.pop();
        path.nodes.pop();
        if !go_on {
            return Ok(false);
        }
    }
    Ok(true)
}
