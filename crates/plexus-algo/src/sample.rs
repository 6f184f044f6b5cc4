//! Seeded, reproducible sampling: neighbours, typed paths, random walks
//! (uniform and node2vec), and layer-wise neighbourhoods for GNN minibatches.

use crate::error::{AlgoError, Result};
use crate::rng::Rng;
use crate::view::{Filter, GraphView, Hop, Path, Step};
use plexus_storage::{EdgeId, NodeId};
use std::collections::HashSet;

/// How to pick `k` of a node's edges.
#[derive(Debug, Clone, PartialEq)]
pub enum SampleMode {
    /// Uniformly without replacement; all edges when there are at most `k`.
    Uniform,
    /// `k` independent uniform draws (an edge may come twice).
    WithReplacement,
    /// Uniformly among distinct neighbours (parallel edges count once).
    UniqueNeighbors,
    /// Without replacement, each edge with probability proportional to the
    /// numeric edge property named here (weight 0: never).
    Weighted(String),
}

fn pick_k(mut steps: Vec<Step>, k: usize, rng: &mut Rng) -> Vec<Step> {
    if steps.len() <= k {
        return steps;
    }
    // Partial Fisher-Yates: the first k slots become a uniform sample.
    for i in 0..k {
        let j = i + rng.below(steps.len() - i);
        steps.swap(i, j);
    }
    steps.truncate(k);
    steps
}

/// Samples up to `k` steps from `node`.
pub fn sample_neighbors(
    v: &impl GraphView,
    node: NodeId,
    filter: &Filter,
    k: usize,
    mode: &SampleMode,
    rng: &mut Rng,
) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    v.steps(node, filter, &mut steps)?;
    Ok(match mode {
        SampleMode::Uniform => pick_k(steps, k, rng),
        SampleMode::WithReplacement if steps.is_empty() => steps,
        SampleMode::WithReplacement => (0..k).map(|_| steps[rng.below(steps.len())]).collect(),
        SampleMode::UniqueNeighbors => {
            let mut seen = HashSet::new();
            steps.retain(|s| seen.insert(s.node));
            pick_k(steps, k, rng)
        }
        SampleMode::Weighted(key) => {
            // Efraimidis-Spirakis: key u^(1/w), keep the k largest.
            let mut keyed = Vec::with_capacity(steps.len());
            for s in steps {
                let w = weight_of(v, s.edge, key)?;
                if w > 0.0 {
                    keyed.push((rng.unit().powf(1.0 / w), s));
                }
            }
            keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
            keyed.into_iter().take(k).map(|(_, s)| s).collect()
        }
    })
}

fn weight_of(v: &impl GraphView, e: EdgeId, key: &str) -> Result<f64> {
    let w = v
        .weight(e, key)?
        .ok_or_else(|| AlgoError::BadInput(format!("edge {e} has no weight '{key}'")))?;
    if w.is_nan() || w < 0.0 {
        return Err(AlgoError::BadInput(format!(
            "edge {e} has weight {w}; weights must be numbers ≥ 0"
        )));
    }
    Ok(w)
}

/// Samples typed paths from `start`: at hop `i`, up to `sizes[i]` edges
/// (uniformly, without replacement) from the end of each path so far.
pub fn sample_paths(
    v: &impl GraphView,
    start: NodeId,
    hops: &[Hop],
    sizes: &[usize],
    rng: &mut Rng,
) -> Result<Vec<Path>> {
    if hops.len() != sizes.len() {
        return Err(AlgoError::BadInput(format!(
            "{} hops but {} sample sizes",
            hops.len(),
            sizes.len()
        )));
    }
    let mut paths = vec![Path::single(start)];
    for (hop, &k) in hops.iter().zip(sizes) {
        let mut next = Vec::new();
        for p in &paths {
            for s in sample_neighbors(v, p.end(), &hop.filter, k, &SampleMode::Uniform, rng)? {
                let mut q = p.clone();
                q.nodes.push(s.node);
                q.edges.push(s.edge);
                next.push(q);
            }
        }
        paths = next;
    }
    Ok(paths)
}

/// node2vec's return (`p`) and in-out (`q`) parameters; 1 and 1 is a
/// uniform random walk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalkBias {
    pub p: f64,
    pub q: f64,
}

impl Default for WalkBias {
    fn default() -> Self {
        WalkBias { p: 1.0, q: 1.0 }
    }
}

/// A random walk of up to `length` steps from `start` (shorter when it
/// reaches a node with no way on). With a bias, the next node is weighted
/// 1/p for going back, 1 for staying near the previous node, 1/q for
/// moving away (node2vec).
pub fn random_walk(
    v: &impl GraphView,
    start: NodeId,
    length: usize,
    filter: &Filter,
    bias: WalkBias,
    rng: &mut Rng,
) -> Result<Vec<NodeId>> {
    if !(bias.p > 0.0 && bias.q > 0.0) {
        return Err(AlgoError::BadInput(
            "node2vec p and q must be greater than 0".into(),
        ));
    }
    let uniform = bias.p == 1.0 && bias.q == 1.0;
    let mut walk = vec![start];
    let mut prev: Option<(NodeId, HashSet<NodeId>)> = None;
    let mut steps = Vec::new();
    for _ in 0..length {
        let cur = *walk.last().expect("walk is never empty");
        steps.clear();
        v.steps(cur, filter, &mut steps)?;
        if steps.is_empty() {
            break;
        }
        let chosen = match &prev {
            Some((p, near)) if !uniform => {
                let w: Vec<f64> = steps
                    .iter()
                    .map(|s| {
                        if s.node == *p {
                            1.0 / bias.p
                        } else if near.contains(&s.node) {
                            1.0
                        } else {
                            1.0 / bias.q
                        }
                    })
                    .collect();
                let mut x = rng.unit() * w.iter().sum::<f64>();
                let mut i = 0;
                while i + 1 < w.len() && x >= w[i] {
                    x -= w[i];
                    i += 1;
                }
                steps[i].node
            }
            _ => steps[rng.below(steps.len())].node,
        };
        if !uniform {
            prev = Some((cur, steps.iter().map(|s| s.node).collect()));
        }
        walk.push(chosen);
    }
    Ok(walk)
}

/// One layer of a sampled neighbourhood: the nodes new in this layer, and
/// the sampled edges (from a node of the previous layer) that reached them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub nodes: Vec<NodeId>,
    pub edges: Vec<(NodeId, NodeId, EdgeId)>,
}

/// GraphSAGE-style layer-wise sampling for a minibatch: layer 0 is the
/// seeds; layer `i+1` samples up to `fanouts[i]` edges from every node of
/// layer `i`. A node appears in the first layer that reaches it.
pub fn layerwise_sample(
    v: &impl GraphView,
    seeds: &[NodeId],
    fanouts: &[usize],
    filter: &Filter,
    rng: &mut Rng,
) -> Result<Vec<Layer>> {
    let mut seen: HashSet<NodeId> = seeds.iter().copied().collect();
    let mut layers = vec![Layer {
        nodes: seeds.to_vec(),
        edges: vec![],
    }];
    for &k in fanouts {
        let prev = &layers[layers.len() - 1];
        let mut layer = Layer {
            nodes: vec![],
            edges: vec![],
        };
        for &n in &prev.nodes {
            for s in sample_neighbors(v, n, filter, k, &SampleMode::Uniform, rng)? {
                layer.edges.push((n, s.node, s.edge));
                if seen.insert(s.node) {
                    layer.nodes.push(s.node);
                }
            }
        }
        layers.push(layer);
    }
    Ok(layers)
}
