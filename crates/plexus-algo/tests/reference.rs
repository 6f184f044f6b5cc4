//! Every algorithm against a naive reference on random graphs with parallel
//! edges, self-loops and a hub, through the storage view and through a CSR
//! snapshot (which must agree exactly, sample for sample).

use plexus_algo::*;
use plexus_common::Value;
use plexus_storage::{Direction, EdgeId, NodeId, Props, ReadTxn, Storage};
use proptest::prelude::{prop, prop_assert_eq, proptest, Just, ProptestConfig, Strategy};
use proptest::prop_oneof;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

#[derive(Debug, Clone)]
struct G {
    n: usize,
    /// (src, dst, type 0/1, weight)
    edges: Vec<(usize, usize, usize, i64)>,
}

fn graph() -> impl Strategy<Value = G> {
    (1usize..9).prop_flat_map(|n| {
        let end = prop_oneof![1 => Just(0usize), 3 => 0..n];
        let edge = (end.clone(), end, 0usize..2, 0i64..5);
        prop::collection::vec(edge, 0..24).prop_map(move |edges| G { n, edges })
    })
}

struct Built {
    db: Storage,
    nodes: Vec<NodeId>,
    /// Edge id → (src index, dst index, type, weight)
    edges: BTreeMap<EdgeId, (usize, usize, usize, i64)>,
}

const TYPES: [&str; 2] = ["T0", "T1"];

fn build(g: &G) -> Built {
    let db = Storage::in_memory().unwrap();
    let mut t = db.write("default").unwrap();
    let nodes: Vec<NodeId> = (0..g.n)
        .map(|i| {
            t.create_node(Some(&format!("v{i}")), &["V"], &Props::new())
                .unwrap()
        })
        .collect();
    let mut edges = BTreeMap::new();
    for &(s, d, ty, w) in &g.edges {
        let props = Props::from([("w".to_string(), Value::Int(w))]);
        let e = t
            .create_edge(None, nodes[s], nodes[d], TYPES[ty], &props)
            .unwrap();
        edges.insert(e, (s, d, ty, w));
    }
    t.commit().unwrap();
    Built { db, nodes, edges }
}

/// The filters every check runs under.
fn filters(v: &impl GraphView) -> Vec<(Filter, Direction, Option<usize>)> {
    vec![
        (Filter::any(Direction::Out), Direction::Out, None),
        (Filter::any(Direction::In), Direction::In, None),
        (Filter::any(Direction::Both), Direction::Both, None),
        (
            Filter::new(v, Direction::Out, &["T0"]),
            Direction::Out,
            Some(0),
        ),
        (
            Filter::new(v, Direction::Both, &["T1"]),
            Direction::Both,
            Some(1),
        ),
    ]
}

/// Naive steps: (neighbour index, edge) from node index `i`.
fn naive_steps(b: &Built, i: usize, dir: Direction, ty: Option<usize>) -> Vec<(usize, EdgeId)> {
    let mut out = Vec::new();
    for (&e, &(s, d, t, _)) in &b.edges {
        if ty.is_some_and(|x| x != t) {
            continue;
        }
        let fwd = s == i && dir != Direction::In;
        let bwd = d == i && dir != Direction::Out && !(dir == Direction::Both && s == d);
        if fwd {
            out.push((d, e));
        }
        if bwd {
            out.push((s, e));
        }
    }
    out
}

fn naive_dist(b: &Built, from: usize, dir: Direction, ty: Option<usize>) -> HashMap<usize, u32> {
    let mut dist = HashMap::from([(from, 0)]);
    let mut q = VecDeque::from([from]);
    while let Some(n) = q.pop_front() {
        let d = dist[&n];
        for (m, _) in naive_steps(b, n, dir, ty) {
            if let std::collections::hash_map::Entry::Vacant(v) = dist.entry(m) {
                v.insert(d + 1);
                q.push_back(m);
            }
        }
    }
    dist
}

fn valid(b: &Built, p: &Path, dir: Direction, ty: Option<usize>) -> bool {
    let idx = |n: NodeId| b.nodes.iter().position(|x| *x == n).unwrap();
    p.nodes.len() == p.edges.len() + 1
        && p.edges.iter().enumerate().all(|(k, e)| {
            naive_steps(b, idx(p.nodes[k]), dir, ty).contains(&(idx(p.nodes[k + 1]), *e))
        })
}

fn count_walks(
    b: &Built,
    i: usize,
    hops: usize,
    dir: Direction,
    ty: Option<usize>,
    used: &mut Vec<EdgeId>,
    trail: bool,
) -> u64 {
    if hops == 0 {
        return 1;
    }
    let mut c = 0;
    for (m, e) in naive_steps(b, i, dir, ty) {
        if trail && used.contains(&e) {
            continue;
        }
        used.push(e);
        c += count_walks(b, m, hops - 1, dir, ty, used, trail);
        used.pop();
    }
    c
}

fn naive_cost(b: &Built, from: usize, dir: Direction, ty: Option<usize>) -> HashMap<usize, i64> {
    // Bellman-Ford: obviously right, and weights are never negative here.
    let mut cost = HashMap::from([(from, 0i64)]);
    for _ in 0..b.nodes.len() {
        for n in 0..b.nodes.len() {
            let Some(&c) = cost.get(&n) else { continue };
            for (m, e) in naive_steps(b, n, dir, ty) {
                let c2 = c + b.edges[&e].3;
                if cost.get(&m).is_none_or(|old| c2 < *old) {
                    cost.insert(m, c2);
                }
            }
        }
    }
    cost
}

/// Number of shortest paths from `a` to every node (parallel edges distinct).
fn naive_shortest_counts(
    b: &Built,
    a: usize,
    dir: Direction,
    ty: Option<usize>,
) -> HashMap<usize, u64> {
    let dist = naive_dist(b, a, dir, ty);
    let mut order: Vec<usize> = dist.keys().copied().collect();
    order.sort_by_key(|n| dist[n]);
    let mut count = HashMap::from([(a, 1u64)]);
    for n in order {
        let c = count.get(&n).copied().unwrap_or(0);
        for (m, _) in naive_steps(b, n, dir, ty) {
            if dist.get(&m) == Some(&(dist[&n] + 1)) {
                *count.entry(m).or_default() += c;
            }
        }
    }
    count
}

/// All checks on one view; returns a transcript that must be identical for
/// every view of the same snapshot.
fn check_view(b: &Built, v: &impl GraphView) -> Vec<String> {
    let mut log = Vec::new();
    for (f, dir, ty) in filters(v) {
        for (ai, &a) in b.nodes.iter().enumerate() {
            let dist = naive_dist(b, ai, dir, ty);
            let got: BTreeMap<usize, u32> = bfs(v, a, &f, 3)
                .unwrap()
                .into_iter()
                .map(|(n, d)| (b.nodes.iter().position(|x| *x == n).unwrap(), d))
                .collect();
            let want: BTreeMap<usize, u32> = dist
                .iter()
                .filter(|(_, d)| **d <= 3)
                .map(|(n, d)| (*n, *d))
                .collect();
            assert_eq!(got, want, "bfs from {ai} {dir:?} {ty:?}");
            log.push(format!("{:?}", bfs(v, a, &f, 3).unwrap()));
            let counts = naive_shortest_counts(b, ai, dir, ty);
            let cost = naive_cost(b, ai, dir, ty);
            for (bi, &bn) in b.nodes.iter().enumerate() {
                let p = shortest_path(v, a, bn, &f, None).unwrap();
                assert_eq!(
                    p.as_ref().map(Path::len),
                    dist.get(&bi).map(|d| *d as usize),
                    "shortest {ai}->{bi} {dir:?} {ty:?}"
                );
                if let Some(p) = &p {
                    assert!(valid(b, p, dir, ty), "invalid path {p:?}");
                    assert_eq!((p.nodes[0], p.end()), (a, bn));
                }
                let capped = shortest_path(v, a, bn, &f, Some(2)).unwrap();
                assert_eq!(
                    capped.is_some(),
                    dist.get(&bi).is_some_and(|d| *d <= 2),
                    "max depth 2: {ai}->{bi}"
                );
                log.push(format!("{p:?}"));
                let all = all_shortest_paths(v, a, bn, &f, None, 100_000).unwrap();
                assert_eq!(
                    all.len() as u64,
                    counts.get(&bi).copied().unwrap_or(0),
                    "all shortest {ai}->{bi}"
                );
                assert_eq!(
                    all.iter().collect::<BTreeSet<_>>().len(),
                    all.len(),
                    "distinct"
                );
                assert!(all.iter().all(
                    |p| valid(b, p, dir, ty) && Some(p.len() as u32) == dist.get(&bi).copied()
                ));
                let w = weighted_shortest_path(v, a, bn, &f, "w").unwrap();
                assert_eq!(
                    w.as_ref().map(|(c, _)| *c as i64),
                    cost.get(&bi).copied(),
                    "dijkstra {ai}->{bi}"
                );
                if let Some((c, p)) = &w {
                    assert!(valid(b, p, dir, ty));
                    assert_eq!(p.edges.iter().map(|e| b.edges[e].3).sum::<i64>() as f64, *c);
                }
            }
            for hops in 1..=3 {
                let hs = vec![Hop::new(f.clone()); hops];
                for (sem, trail) in [(PathSemantics::Walk, false), (PathSemantics::Trail, true)] {
                    let want = count_walks(b, ai, hops, dir, ty, &mut vec![], trail);
                    assert_eq!(
                        count_paths(v, a, &hs, sem).unwrap(),
                        want,
                        "{sem:?} count {ai} hops {hops}"
                    );
                    let paths = expand_paths(v, a, &hs, sem, usize::MAX).unwrap();
                    assert_eq!(paths.len() as u64, want);
                    assert!(paths.iter().all(|p| valid(b, p, dir, ty)));
                    log.push(format!("{:?}", expand_paths(v, a, &hs, sem, 3).unwrap()));
                }
            }
            let degree = naive_steps(b, ai, dir, ty).len();
            let mut rng = Rng::new(ai as u64 + 7);
            let s = sample_neighbors(v, a, &f, 3, &SampleMode::Uniform, &mut rng).unwrap();
            assert_eq!(s.len(), degree.min(3));
            assert_eq!(
                s.iter().map(|x| x.edge).collect::<BTreeSet<_>>().len(),
                s.len(),
                "no edge twice"
            );
            let u = sample_neighbors(v, a, &f, 3, &SampleMode::UniqueNeighbors, &mut rng).unwrap();
            let distinct: BTreeSet<usize> =
                naive_steps(b, ai, dir, ty).iter().map(|x| x.0).collect();
            assert_eq!(u.len(), distinct.len().min(3));
            assert_eq!(
                u.iter().map(|x| x.node).collect::<BTreeSet<_>>().len(),
                u.len()
            );
            let r = sample_neighbors(v, a, &f, 4, &SampleMode::WithReplacement, &mut rng).unwrap();
            assert_eq!(r.len(), if degree == 0 { 0 } else { 4 });
            let wt =
                sample_neighbors(v, a, &f, 2, &SampleMode::Weighted("w".into()), &mut rng).unwrap();
            let positive = naive_steps(b, ai, dir, ty)
                .iter()
                .filter(|x| b.edges[&x.1].3 > 0)
                .count();
            assert_eq!(wt.len(), positive.min(2));
            assert!(wt.iter().all(|x| b.edges[&x.edge].3 > 0));
            let walk = random_walk(v, a, 5, &f, WalkBias { p: 0.5, q: 2.0 }, &mut rng).unwrap();
            let idx = |n: NodeId| b.nodes.iter().position(|x| *x == n).unwrap();
            assert!(walk.windows(2).all(|w| naive_steps(b, idx(w[0]), dir, ty)
                .iter()
                .any(|x| x.0 == idx(w[1]))));
            let layers = layerwise_sample(v, &[a], &[2, 2], &f, &mut rng).unwrap();
            let all_nodes: Vec<NodeId> = layers.iter().flat_map(|l| l.nodes.clone()).collect();
            assert_eq!(
                all_nodes.iter().collect::<BTreeSet<_>>().len(),
                all_nodes.len()
            );
            let paths = sample_paths(
                v,
                a,
                &[Hop::new(f.clone()), Hop::new(f.clone())],
                &[2, 2],
                &mut rng,
            )
            .unwrap();
            assert!(paths.iter().all(|p| valid(b, p, dir, ty) && p.len() == 2));
            log.push(format!(
                "{s:?} {u:?} {r:?} {wt:?} {walk:?} {layers:?} {paths:?}"
            ));
        }
    }
    log
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn algorithms_match_the_reference_and_csr_matches_storage(g in graph()) {
        let b = build(&g);
        let r: ReadTxn = b.db.read("default").unwrap();
        let from_store = check_view(&b, &StoreView(&r));
        let csr = Csr::build_with_weights(&r, "w").unwrap();
        prop_assert_eq!(csr.node_count(), g.n);
        prop_assert_eq!(csr.edge_count(), g.edges.len());
        let from_csr = check_view(&b, &csr);
        prop_assert_eq!(&from_store, &from_csr);
        let mut parallel = Csr::build_parallel(&b.db, "default", 3).unwrap();
        prop_assert_eq!(parallel.edge_count(), g.edges.len());
        parallel = parallel.with_weights(&r, "w").unwrap();
        prop_assert_eq!(&from_store, &check_view(&b, &parallel));
        // Saved and mapped back, the snapshot answers as it did: keys,
        // weights (weighted paths in `check_view`) and arrays.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("g.csr");
        let keyed = Csr::build_with_weights(&r, "w").unwrap().with_keys(&r).unwrap();
        keyed.save(&file).unwrap();
        let mapped = Csr::open(&file).unwrap();
        prop_assert_eq!(&from_store, &check_view(&b, &mapped));
        prop_assert_eq!(mapped.node_count(), g.n);
        prop_assert_eq!(mapped.edge_count(), g.edges.len());
        for i in 0..g.n {
            prop_assert_eq!(mapped.key(i), keyed.key(i));
            prop_assert_eq!(mapped.node_at(i), keyed.node_at(i));
        }
        for d in [Direction::Out, Direction::In] {
            prop_assert_eq!(mapped.arrays(d), keyed.arrays(d));
        }
        prop_assert_eq!(mapped.types(), keyed.types());
    }
}

#[test]
fn a_damaged_snapshot_file_is_an_error_never_a_panic() {
    let b = build(&G {
        n: 4,
        edges: vec![(0, 1, 0, 1), (1, 2, 1, 2), (2, 3, 0, 3), (3, 0, 1, 4)],
    });
    let r = b.db.read("default").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("g.csr");
    Csr::build_with_weights(&r, "w")
        .unwrap()
        .with_keys(&r)
        .unwrap()
        .save(&file)
        .unwrap();
    let good = std::fs::read(&file).unwrap();
    assert!(Csr::open(&file).is_ok());
    // A file of the first format names the remedy.
    let mut v1 = good.clone();
    v1[..8].copy_from_slice(b"PLXCSR01");
    let old = dir.path().join("old.csr");
    std::fs::write(&old, &v1).unwrap();
    let e = Csr::open(&old).unwrap_err().to_string();
    assert!(e.contains("save it again"), "{e}");
    let bad = dir.path().join("bad.csr");
    // Every truncation, and every byte set to 0xff in turn.
    for len in 0..good.len() {
        std::fs::write(&bad, &good[..len]).unwrap();
        assert!(Csr::open(&bad).is_err(), "truncated to {len} bytes");
    }
    for i in 0..good.len() {
        let mut b2 = good.clone();
        b2[i] = 0xff;
        std::fs::write(&bad, &b2).unwrap();
        if let Ok(c) = Csr::open(&bad) {
            // A flipped byte inside an edge id or a key's text may stay
            // well-formed; the snapshot must still answer without panicking.
            let mut out = Vec::new();
            for k in 0..c.node_count() {
                let _ = c.key(k);
                let n = c.node_at(k).unwrap();
                c.steps(n, &Filter::any(Direction::Both), &mut out).unwrap();
            }
        }
    }
    let e = Csr::open(&dir.path().join("missing.csr")).unwrap_err();
    assert!(e.to_string().contains("missing.csr"), "{e}");
}

#[test]
fn a_csr_knows_when_it_is_stale() {
    let b = build(&G {
        n: 2,
        edges: vec![(0, 1, 0, 1)],
    });
    let csr = Csr::build(&b.db.read("default").unwrap()).unwrap();
    csr.check_current(&b.db).unwrap();
    let mut t = b.db.write("default").unwrap();
    t.create_edge(None, b.nodes[1], b.nodes[0], "T0", &Props::new())
        .unwrap();
    t.commit().unwrap();
    assert!(csr.check_current(&b.db).is_err());
    assert!(csr.weight(EdgeId(1), "w").is_err(), "built without weights");
}

#[test]
fn bad_weights_are_named() {
    let b = build(&G {
        n: 2,
        edges: vec![(0, 1, 0, 1)],
    });
    let mut t = b.db.write("default").unwrap();
    t.create_edge(
        None,
        b.nodes[0],
        b.nodes[1],
        "T0",
        &Props::from([("w".to_string(), Value::Int(-3))]),
    )
    .unwrap();
    t.commit().unwrap();
    let r = b.db.read("default").unwrap();
    let v = StoreView(&r);
    let e = weighted_shortest_path(
        &v,
        b.nodes[0],
        b.nodes[1],
        &Filter::any(Direction::Out),
        "w",
    )
    .unwrap_err();
    assert!(e.to_string().contains("weights must be numbers"), "{e}");
    let e = weighted_shortest_path(
        &v,
        b.nodes[0],
        b.nodes[1],
        &Filter::any(Direction::Out),
        "missing",
    )
    .unwrap_err();
    assert!(e.to_string().contains("has no weight 'missing'"), "{e}");
    assert!(random_walk(
        &v,
        b.nodes[0],
        3,
        &Filter::any(Direction::Out),
        WalkBias { p: 0.0, q: 1.0 },
        &mut Rng::new(1)
    )
    .is_err());
    assert_eq!(
        shortest_path(
            &v,
            b.nodes[1],
            b.nodes[0],
            &Filter::any(Direction::Out),
            None
        )
        .unwrap(),
        None,
        "no path is not an error"
    );
}
