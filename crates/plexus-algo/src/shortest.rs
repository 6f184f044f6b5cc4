//! Shortest paths: unweighted (bidirectional BFS), all shortest, and
//! weighted (Dijkstra on a numeric edge property).
//!
//! "No path" is `Ok(None)` (or an empty list), never an error.

use crate::error::{AlgoError, Result};
use crate::traverse::level_steps;
use crate::view::{Filter, GraphView, Path};
use plexus_storage::{EdgeId, NodeId};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// Where a search reached a node from: (previous node, edge, hops).
type Parents = HashMap<NodeId, (Option<(NodeId, EdgeId)>, u32)>;

/// One shortest path from `a` to `b` following `filter` (and `max_depth`
/// hops at most). Both ends search towards each other a whole level at a
/// time, the smaller frontier first; each node is expanded at most once.
pub fn shortest_path(
    v: &impl GraphView,
    a: NodeId,
    b: NodeId,
    filter: &Filter,
    max_depth: Option<u32>,
) -> Result<Option<Path>> {
    if a == b {
        return Ok(Some(Path::single(a)));
    }
    let backward = filter.reversed();
    let mut fwd: Parents = HashMap::from([(a, (None, 0))]);
    let mut bwd: Parents = HashMap::from([(b, (None, 0))]);
    let (mut f_front, mut b_front) = (vec![a], vec![b]);
    let (mut f_depth, mut b_depth) = (0u32, 0u32);
    while !f_front.is_empty() && !b_front.is_empty() {
        if max_depth.is_some_and(|m| f_depth + b_depth >= m) {
            return Ok(None);
        }
        let forward_side = f_front.len() <= b_front.len();
        let (front, mine, other, flt, depth) = if forward_side {
            (&mut f_front, &mut fwd, &bwd, filter, &mut f_depth)
        } else {
            (&mut b_front, &mut bwd, &fwd, &backward, &mut b_depth)
        };
        *depth += 1;
        let mut next = Vec::new();
        let mut best: Option<(u32, NodeId)> = None;
        let at = *depth;
        level_steps(v, front, flt, &mut |n, steps| {
            for s in steps {
                if mine.contains_key(&s.node) {
                    continue;
                }
                mine.insert(s.node, (Some((n, s.edge)), at));
                next.push(s.node);
                if let Some((_, d)) = other.get(&s.node) {
                    let total = at + d;
                    if best.is_none_or(|(t, _)| total < t) {
                        best = Some((total, s.node));
                    }
                }
            }
        })?;
        *front = next;
        if let Some((total, meet)) = best {
            if max_depth.is_some_and(|m| total > m) {
                return Ok(None);
            }
            return Ok(Some(join(&fwd, &bwd, meet)));
        }
    }
    Ok(None)
}

/// The path a → meet (from forward parents) then meet → b (backward parents).
fn join(fwd: &Parents, bwd: &Parents, meet: NodeId) -> Path {
    let mut nodes = vec![meet];
    let mut edges = vec![];
    let mut n = meet;
    while let Some((Some((prev, e)), _)) = fwd.get(&n) {
        nodes.push(*prev);
        edges.push(*e);
        n = *prev;
    }
    nodes.reverse();
    edges.reverse();
    let mut n = meet;
    while let Some((Some((next, e)), _)) = bwd.get(&n) {
        nodes.push(*next);
        edges.push(*e);
        n = *next;
    }
    Path { nodes, edges }
}

/// Every shortest path from `a` to `b` (parallel edges make distinct
/// paths), at most `limit` of them.
pub fn all_shortest_paths(
    v: &impl GraphView,
    a: NodeId,
    b: NodeId,
    filter: &Filter,
    max_depth: Option<u32>,
    limit: usize,
) -> Result<Vec<Path>> {
    if a == b {
        return Ok(vec![Path::single(a)]);
    }
    // Layered BFS keeping every parent edge of a node from the previous layer.
    let mut dist: HashMap<NodeId, u32> = HashMap::from([(a, 0)]);
    let mut parents: HashMap<NodeId, Vec<(NodeId, EdgeId)>> = HashMap::new();
    let mut front = vec![a];
    let mut depth = 0;
    while !front.is_empty() && !dist.contains_key(&b) {
        if max_depth.is_some_and(|m| depth >= m) {
            break;
        }
        depth += 1;
        let mut next = Vec::new();
        level_steps(v, &front, filter, &mut |n, steps| {
            for s in steps {
                match dist.get(&s.node) {
                    None => {
                        dist.insert(s.node, depth);
                        next.push(s.node);
                        parents.entry(s.node).or_default().push((n, s.edge));
                    }
                    Some(d) if *d == depth => parents.entry(s.node).or_default().push((n, s.edge)),
                    Some(_) => {}
                }
            }
        })?;
        front = next;
    }
    let mut out = Vec::new();
    if dist.contains_key(&b) {
        let mut rev = Path::single(b);
        unwind(&parents, a, &mut rev, &mut out, limit);
    }
    Ok(out)
}

fn unwind(
    parents: &HashMap<NodeId, Vec<(NodeId, EdgeId)>>,
    a: NodeId,
    rev: &mut Path,
    out: &mut Vec<Path>,
    limit: usize,
) {
    let n = rev.end();
    if n == a {
        let mut p = rev.clone();
        p.nodes.reverse();
        p.edges.reverse();
        out.push(p);
        return;
    }
    for &(prev, e) in parents.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
        if out.len() >= limit {
            return;
        }
        rev.nodes.push(prev);
        rev.edges.push(e);
        unwind(parents, a, rev, out, limit);
        rev.nodes.pop();
        rev.edges.pop();
    }
}

#[derive(PartialEq)]
struct Cost(f64, NodeId);

impl Eq for Cost {}

impl PartialOrd for Cost {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Cost {
    // Reversed: BinaryHeap is a max-heap and we want the cheapest first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .0
            .total_cmp(&self.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

/// The cheapest path from `a` to `b` when each edge costs its `weight_key`
/// property (Dijkstra). Weights must be numbers ≥ 0; an edge on the way
/// without one is an error naming the edge.
pub fn weighted_shortest_path(
    v: &impl GraphView,
    a: NodeId,
    b: NodeId,
    filter: &Filter,
    weight_key: &str,
) -> Result<Option<(f64, Path)>> {
    let mut best: HashMap<NodeId, (f64, Option<(NodeId, EdgeId)>)> =
        HashMap::from([(a, (0.0, None))]);
    let mut heap = BinaryHeap::from([Cost(0.0, a)]);
    let mut done = std::collections::HashSet::new();
    let mut buf = Vec::new();
    while let Some(Cost(cost, n)) = heap.pop() {
        if !done.insert(n) {
            continue;
        }
        if n == b {
            let mut nodes = vec![b];
            let mut edges = vec![];
            let mut cur = b;
            while let Some((_, Some((prev, e)))) = best.get(&cur) {
                nodes.push(*prev);
                edges.push(*e);
                cur = *prev;
            }
            nodes.reverse();
            edges.reverse();
            return Ok(Some((cost, Path { nodes, edges })));
        }
        buf.clear();
        v.steps(n, filter, &mut buf)?;
        for s in &buf {
            if done.contains(&s.node) {
                continue;
            }
            let w = v.weight(s.edge, weight_key)?.ok_or_else(|| {
                AlgoError::BadInput(format!("edge {} has no weight '{weight_key}'", s.edge))
            })?;
            if w.is_nan() || w < 0.0 {
                return Err(AlgoError::BadInput(format!(
                    "edge {} has weight {w}; weights must be numbers ≥ 0",
                    s.edge
                )));
            }
            let c = cost + w;
            if best.get(&s.node).is_none_or(|(old, _)| c < *old) {
                best.insert(s.node, (c, Some((n, s.edge))));
                heap.push(Cost(c, s.node));
            }
        }
    }
    Ok(None)
}
