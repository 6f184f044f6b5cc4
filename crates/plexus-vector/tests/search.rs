//! The HNSW graph against exact search on the same vectors: recall on
//! clustered data, filters that return exactly `k`, removals never
//! returned, f16 storage beside f32.

use plexus_vector::{exact_search, Hnsw, Metric, Params, Precision, Scratch};
use proptest::prelude::*;

/// A deterministic Gaussian mixture, a vector per row.
fn mixture(n: usize, dim: usize, clusters: usize, seed: u64) -> Vec<Vec<f32>> {
    plexus_vector::sample::gaussian_mixture(n, dim, clusters, seed)
        .chunks(dim)
        .map(<[f32]>::to_vec)
        .collect()
}

fn build(vs: &[Vec<f32>], metric: Metric, precision: Precision) -> Hnsw {
    let mut h = Hnsw::new(metric, vs[0].len(), precision, Params::default());
    for v in vs {
        h.insert(v).unwrap();
    }
    h
}

/// Mean share of the exact top `k` that the graph search returns.
fn recall(h: &Hnsw, queries: &[Vec<f32>], k: usize, ef: usize) -> f64 {
    let mut s = Scratch::default();
    let mut hit = 0usize;
    for q in queries {
        let got: Vec<u32> = h
            .search(q, k, ef, None, &mut s)
            .unwrap()
            .iter()
            .map(|r| r.0)
            .collect();
        let want = exact_search(h, q, k, None).unwrap();
        hit += want.iter().filter(|w| got.contains(&w.0)).count();
    }
    hit as f64 / (queries.len() * k) as f64
}

#[test]
fn recall_on_clustered_vectors() {
    // Queries from the same clusters, left out of the index.
    let mut vs = mixture(4100, 48, 20, 7);
    let queries = vs.split_off(4000);
    for metric in [Metric::Cosine, Metric::Euclidean, Metric::Dot] {
        for precision in [Precision::F32, Precision::F16] {
            let h = build(&vs, metric, precision);
            let r = recall(&h, &queries, 10, 64);
            eprintln!("{metric:?} {precision:?}: recall@10 {r:.3} at ef 64");
            assert!(r >= 0.95, "{metric:?} {precision:?}: recall {r}");
        }
    }
}

/// A build linking on several threads finds what one inserting in turn
/// finds; rows of the wrong length are refused.
#[test]
fn a_parallel_build_keeps_the_recall() {
    let mut vs = mixture(4100, 48, 20, 11);
    let queries = vs.split_off(4000);
    let rows: Vec<f32> = vs.iter().flatten().copied().collect();
    for threads in [1, 3] {
        let h = Hnsw::build(
            Metric::Cosine,
            48,
            Precision::F16,
            Params::default(),
            &rows,
            threads,
        )
        .unwrap();
        assert_eq!((h.len(), h.live()), (4000, 4000));
        let r = recall(&h, &queries, 10, 64);
        eprintln!("build on {threads} threads: recall@10 {r:.3} at ef 64");
        assert!(r >= 0.95, "{threads} threads: recall {r}");
    }
    let e = Hnsw::build(
        Metric::Cosine,
        48,
        Precision::F16,
        Params::default(),
        &rows[..47],
        2,
    );
    assert!(e.is_err());
}

#[test]
fn f16_storage_halves_the_vectors_and_keeps_the_order() {
    let vs = mixture(2000, 64, 10, 3);
    let h32 = build(&vs, Metric::Cosine, Precision::F32);
    let h16 = build(&vs, Metric::Cosine, Precision::F16);
    assert_eq!(h16.codes().bytes() * 2, h32.codes().bytes());
    let q = &mixture(2001, 64, 10, 3)[2000];
    let a = exact_search(&h32, q, 10, None).unwrap();
    let b = exact_search(&h16, q, 10, None).unwrap();
    let same = a.iter().filter(|x| b.iter().any(|y| y.0 == x.0)).count();
    assert!(same >= 9, "{a:?} {b:?}");
    for (x, y) in a.iter().zip(&b) {
        assert!((x.1 - y.1).abs() < 2e-3, "{x:?} {y:?}");
    }
}

#[test]
fn bad_vectors_are_refused() {
    let mut h = Hnsw::new(Metric::Cosine, 3, Precision::F32, Params::default());
    assert!(h
        .insert(&[1.0, 2.0])
        .unwrap_err()
        .to_string()
        .contains("2 dimensions"));
    assert!(h.insert(&[0.0, 0.0, 0.0]).is_err());
    assert!(h
        .insert(&[1.0, f32::NAN, 0.0])
        .unwrap_err()
        .to_string()
        .contains("component 1"));
    assert_eq!(h.len(), 0);
    let mut s = Scratch::default();
    assert!(h
        .search(&[1.0, 0.0, 0.0], 5, 10, None, &mut s)
        .unwrap()
        .is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Whatever the data, filter and removals: results are distinct live
    /// slots the filter passes, closest first, exactly `min(k, passing)`
    /// of them, and never closer than the exact answer allows.
    #[test]
    fn searches_keep_their_promises(
        n in 1usize..300,
        seed in any::<u64>(),
        k in 0usize..20,
        modulus in 1u32..12,
        removed in proptest::collection::vec(any::<u32>(), 0..40),
    ) {
        let vs = mixture(n, 8, 4, seed);
        let mut h = Hnsw::new(Metric::Euclidean, 8, Precision::F32, Params { m: 4, ef_construction: 16, seed });
        for v in &vs {
            h.insert(v).unwrap();
        }
        for r in &removed {
            h.remove(r % n as u32);
        }
        let filter = |s: u32| s.is_multiple_of(modulus);
        let passing = (0..n as u32).filter(|s| filter(*s) && !h.is_deleted(*s)).count();
        let mut s = Scratch::default();
        let got = h.search(&vs[0], k, 8, Some(&filter), &mut s).unwrap();
        let want = exact_search(&h, &vs[0], k, Some(&filter)).unwrap();
        prop_assert_eq!(got.len(), k.min(passing));
        prop_assert_eq!(want.len(), k.min(passing));
        let mut seen = std::collections::HashSet::new();
        for (i, (slot, d)) in got.iter().enumerate() {
            prop_assert!(filter(*slot) && !h.is_deleted(*slot));
            prop_assert!(seen.insert(*slot));
            prop_assert!(*d >= want[i].1 - 1e-4);
            if i > 0 {
                prop_assert!(got[i - 1].1 <= *d);
            }
        }
    }
}

/// Points on a line keep two links each (the heuristic prunes the rest),
/// so a link lost between threads linking at once cuts the line. A
/// parallel build once lost them (a slot storing its own links over those
/// another thread had just added to it; later, a slot that began just
/// after its neighbour ended, while the line was cut at itself, and never
/// met it; then, on a loaded machine, a slot whose thread was descheduled
/// mid-link, or between claiming the slot and beginning its link); every
/// point must link both its neighbours and stay reachable.
#[test]
fn a_parallel_build_keeps_every_link_back() {
    let rows: Vec<f32> = (0..2000).flat_map(|i| [i as f32, 0.0]).collect();
    for _ in 0..12 {
        let h = Hnsw::build(
            Metric::Euclidean,
            2,
            Precision::F32,
            Params::default(),
            &rows,
            4,
        )
        .unwrap();
        for i in 0..2000u32 {
            let links = &h.links_of(i)[0];
            for n in [i.checked_sub(1), Some(i + 1).filter(|n| *n < 2000)] {
                assert!(n.is_none_or(|n| links.contains(&n)), "{i} links {links:?}");
            }
        }
        let mut s = Scratch::default();
        for i in (0..2000).step_by(37) {
            let q = [i as f32 + 0.3, 0.0];
            let got = h.search(&q, 2, 32, None, &mut s).unwrap();
            let slots: Vec<u32> = got.iter().map(|r| r.0).collect();
            assert_eq!(slots, [i, i + 1], "query {q:?}");
        }
    }
}

/// Sign codes about the mean rank vectors well enough that the nearest
/// by exact distance are among the best by sign codes, even when every
/// vector lies on one side of the origin (where signs about the origin
/// would all be equal).
#[test]
fn sign_codes_shortlist_the_nearest() {
    let dim = 128;
    let shifted: Vec<Vec<f32>> = mixture(3000, dim, 30, 7)
        .into_iter()
        .map(|v| v.iter().map(|x| x + 20.0).collect())
        .collect();
    for metric in [Metric::Euclidean, Metric::Cosine] {
        let mut h = Hnsw::new(metric, dim, Precision::F16, Params::default());
        for v in &shifted {
            h.place(
                h.len() as u32,
                &plexus_vector::prepare(metric, dim, v).unwrap(),
            );
        }
        let codes = h.codes();
        assert!(!codes.has_signs());
        let all: Vec<u32> = (0..shifted.len() as u32).collect();
        let q = plexus_vector::prepare(metric, dim, &shifted[5]).unwrap();
        // No sign codes yet: everything is kept.
        assert_eq!(codes.shortlist(&q, &all, 100).len(), all.len());
        h.center_signs();
        let codes = h.codes();
        let (mut hit, mut total) = (0, 0);
        for qi in (0..shifted.len()).step_by(100) {
            let q = plexus_vector::prepare(metric, dim, &shifted[qi]).unwrap();
            let keep: Vec<u32> = codes
                .shortlist(&q, &all, 100)
                .into_iter()
                .map(|i| all[i])
                .collect();
            assert_eq!(keep.len(), 100);
            let want = exact_search(&h, &shifted[qi], 10, None).unwrap();
            hit += want.iter().filter(|w| keep.contains(&w.0)).count();
            total += want.len();
        }
        let share = hit as f64 / total as f64;
        assert!(share >= 0.95, "{metric:?}: {share}");
    }
}
