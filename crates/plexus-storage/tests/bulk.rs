//! Bulk loads: the same graph as transactions would build, exact statistics,
//! and all-or-nothing on bad rows.

use plexus_common::{Value, ValueType};
use plexus_kv::{Backend, KvOptions};
use plexus_storage::*;

fn db(backend: Backend, dir: &tempfile::TempDir) -> Storage {
    let kv = plexus_kv::open(
        backend,
        dir.path(),
        KEYSPACE_NAMES,
        &KvOptions {
            durable: false,
            ..Default::default()
        },
    )
    .unwrap();
    Storage::open(kv).unwrap()
}

fn node(key: &str, labels: &[&str], props: &[(&str, Value)]) -> Result<BulkNode> {
    Ok(BulkNode {
        key: key.into(),
        labels: labels.iter().map(|s| s.to_string()).collect(),
        props: props
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        origin: Origin::new(format!("nodes:{key}")),
    })
}

fn edge(key: Option<&str>, src: &str, dst: &str, t: &str) -> Result<BulkEdge> {
    Ok(BulkEdge {
        key: key.map(String::from),
        src: src.into(),
        dst: dst.into(),
        rel_type: t.into(),
        props: Props::from([("w".to_string(), Value::Int(1))]),
        origin: Origin::new(format!("edges:{src}->{dst}")),
    })
}

/// Everything observable about a graph, by user ids.
fn observe(s: &Storage, g: &str) -> String {
    let r = s.read(g).unwrap();
    let mut out = Vec::new();
    for id in r.nodes() {
        let n = r.node(id.unwrap()).unwrap().unwrap();
        let (o, i) = (
            r.degree(n.id, Direction::Out, None).unwrap(),
            r.degree(n.id, Direction::In, None).unwrap(),
        );
        out.push(format!(
            "{} {:?} {:?} out={o} in={i}",
            n.key, n.labels, n.props
        ));
    }
    let mut edges = Vec::new();
    for id in r.edges() {
        let e = r.edge(id.unwrap()).unwrap().unwrap();
        let key = |n| r.node(n).unwrap().unwrap().key;
        edges.push(format!(
            "{}-{}->{} {:?}",
            key(e.src),
            e.rel_type,
            key(e.dst),
            e.props
        ));
    }
    edges.sort();
    out.extend(edges);
    out.push(format!(
        "{:?} {:?} {} {}",
        r.label_counts().unwrap(),
        r.type_counts().unwrap(),
        r.node_count().unwrap(),
        r.edge_count().unwrap()
    ));
    let report = s.check_integrity(g).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    out.join("\n")
}

fn sample_nodes() -> Vec<Result<BulkNode>> {
    vec![
        node(
            "a",
            &["P"],
            &[("age", 30.into()), ("tags", Value::from(vec!["x", "y"]))],
        ),
        node("b", &["P", "Q"], &[("age", 40.into())]),
        node("c", &[], &[]),
    ]
}

fn sample_edges() -> Vec<Result<BulkEdge>> {
    vec![
        edge(Some("e1"), "a", "b", "R"),
        edge(None, "a", "b", "R"),
        edge(None, "c", "c", "S"),
        edge(Some("e2"), "b", "a", "S"),
    ]
}

#[test]
fn a_bulk_load_equals_the_same_rows_written_by_transactions() {
    for backend in [Backend::Lmdb, Backend::Memory] {
        let dir = tempfile::tempdir().unwrap();
        let s = db(backend, &dir);
        s.create_graph("bulk").unwrap();
        let mut t = s.write("bulk").unwrap();
        t.create_index(IndexSpec::property("P", "age")).unwrap();
        t.create_index(IndexSpec::list("P", "tags")).unwrap();
        t.commit().unwrap();
        let report = s
            .bulk_load(
                "bulk",
                &mut sample_nodes().into_iter(),
                &mut sample_edges().into_iter(),
            )
            .unwrap();
        assert_eq!((report.nodes, report.edges), (3, 4));
        let mut t = s.write("default").unwrap();
        for n in sample_nodes() {
            let n = n.unwrap();
            let labels: Vec<&str> = n.labels.iter().map(String::as_str).collect();
            t.create_node(Some(&n.key), &labels, &n.props).unwrap();
        }
        for e in sample_edges() {
            let e = e.unwrap();
            let (a, b) = (
                t.node_id(&e.src).unwrap().unwrap(),
                t.node_id(&e.dst).unwrap().unwrap(),
            );
            t.create_edge(
                Some(e.key.as_deref().unwrap_or(&format!("{}{}", e.src, e.dst))),
                a,
                b,
                &e.rel_type,
                &e.props,
            )
            .unwrap();
        }
        t.commit().unwrap();
        assert_eq!(observe(&s, "bulk"), observe(&s, "default"), "{backend:?}");
        let r = s.read("bulk").unwrap();
        assert_eq!(r.find_nodes(Some("P"), "age", &40.into()).unwrap().len(), 1);
        assert_eq!(
            r.find_nodes_with_element(Some("P"), "tags", &"y".into())
                .unwrap()
                .len(),
            1
        );
        assert!(r.edge_by_key("e1").unwrap().is_some());
        drop(r);
        // The loaded graph takes ordinary writes, keyless edges included.
        let mut t = s.write("bulk").unwrap();
        let c = t.node_id("c").unwrap().unwrap();
        assert!(t.delete_node(c, DeleteMode::Detach).unwrap());
        let a = t.node_id("a").unwrap().unwrap();
        t.create_edge(None, a, a, "T", &Props::new()).unwrap();
        t.commit().unwrap();
        observe(&s, "bulk");
    }
}

#[test]
fn a_bad_row_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let s = db(Backend::Lmdb, &dir);
    s.create_graph("g").unwrap();
    let mut t = s.write("g").unwrap();
    t.create_constraint(ConstraintSpec {
        name: None,
        label: "P".into(),
        key: "age".into(),
        kind: ConstraintKind::Unique,
    })
    .unwrap();
    t.create_index(IndexSpec::property("Q", "n").typed(ValueType::Int))
        .unwrap();
    t.commit().unwrap();
    let before = observe(&s, "g");
    type Case = (Vec<Result<BulkNode>>, Vec<Result<BulkEdge>>, &'static str);
    let cases: Vec<Case> = vec![
        (
            vec![node("a", &[], &[]), node("a", &[], &[])],
            vec![],
            "nodes:a: node id 'a' is already taken",
        ),
        (
            sample_nodes(),
            vec![edge(None, "a", "zz", "R")],
            "no node with id 'zz'",
        ),
        (
            sample_nodes(),
            vec![
                edge(Some("e"), "a", "b", "R"),
                edge(Some("e"), "b", "a", "R"),
            ],
            "edges:b->a: edge id 'e' is already taken",
        ),
        (
            vec![
                node("a", &["P"], &[("age", 1.into())]),
                node("b", &["P"], &[("age", 1.into())]),
            ],
            vec![],
            "unique constraint",
        ),
        (
            vec![node("q", &["Q"], &[("n", "text".into())])],
            vec![],
            "holds INT values",
        ),
        (vec![node("", &[], &[])], vec![], "invalid node id"),
        (
            vec![Err(StorageError::Unsupported("row 7 is malformed".into()))],
            vec![],
            "row 7 is malformed",
        ),
    ];
    for (nodes, edges, expected) in cases {
        let e = s
            .bulk_load("g", &mut nodes.into_iter(), &mut edges.into_iter())
            .unwrap_err();
        assert!(
            e.to_string().contains(expected),
            "{e} does not say '{expected}'"
        );
        assert_eq!(observe(&s, "g"), before);
    }
    s.bulk_load(
        "g",
        &mut sample_nodes().into_iter(),
        &mut vec![].into_iter(),
    )
    .unwrap();
    let e = s
        .bulk_load(
            "g",
            &mut sample_nodes().into_iter(),
            &mut vec![].into_iter(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("needs an empty graph"), "{e}");
}

#[test]
fn bad_rows_can_be_left_out_instead() {
    let dir = tempfile::tempdir().unwrap();
    let s = db(Backend::Lmdb, &dir);
    s.create_graph("g").unwrap();
    let mut t = s.write("g").unwrap();
    t.create_index(IndexSpec::property("Q", "n").typed(ValueType::Int))
        .unwrap();
    t.commit().unwrap();
    let nodes = vec![
        node("a", &[], &[]),
        node("a", &[], &[]),
        node("", &[], &[]),
        Err(StorageError::Invalid("f.csv:9: malformed".into())),
        node("q", &["Q"], &[("n", "text".into())]),
        node("b", &[], &[]),
    ];
    let edges = vec![
        edge(None, "a", "b", "R"),
        edge(None, "a", "zz", "R"),
        edge(Some("e"), "b", "a", "R"),
        edge(Some("e"), "a", "a", "R"),
    ];
    let mut seen = Vec::new();
    let mut skip = |e: &StorageError| seen.push(e.to_string());
    let r = s
        .bulk_load_skipping(
            "g",
            &mut nodes.into_iter(),
            &mut edges.into_iter(),
            Some(&mut skip),
        )
        .unwrap();
    assert_eq!((r.nodes, r.edges, r.skipped), (2, 2, 6));
    assert_eq!(seen.len(), 6);
    assert!(
        seen.iter().any(|m| m.contains("f.csv:9: malformed"))
            && seen.iter().any(|m| m.contains("'zz'")),
        "{seen:?}"
    );
    let text = observe(&s, "g");
    assert!(
        !text.contains("\nq "),
        "a rejected row leaves no trace: {text}"
    );
    let r = s.read("g").unwrap();
    assert_eq!((r.node_count().unwrap(), r.edge_count().unwrap()), (2, 2));
    assert!(r.find_nodes(Some("Q"), "n", &1.into()).unwrap().is_empty());
}

/// Creates `graph` with `k` unique among `P` nodes.
fn unique_graph(s: &Storage, graph: &str) {
    s.create_graph(graph).unwrap();
    let mut t = s.write(graph).unwrap();
    t.create_constraint(ConstraintSpec {
        name: None,
        label: "P".into(),
        key: "k".into(),
        kind: ConstraintKind::Unique,
    })
    .unwrap();
    t.commit().unwrap();
}

/// Writes nodes (with `k` = their id) and edges (with `w` = 1, and ids)
/// into the default graph by transactions, to compare with a bulk load.
fn by_transactions<'a>(
    s: &Storage,
    nodes: impl Iterator<Item = (&'a str, &'a [&'a str])>,
    edges: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
) {
    let mut t = s.write("default").unwrap();
    for (k, labels) in nodes {
        let props = Props::from([("k".to_string(), k.into())]);
        t.create_node(Some(k), labels, &props).unwrap();
    }
    for (i, (a, b, ty)) in edges.enumerate() {
        let (a, b) = (
            t.node_id(a).unwrap().unwrap(),
            t.node_id(b).unwrap().unwrap(),
        );
        let w = Props::from([("w".to_string(), Value::Int(1))]);
        t.create_edge(Some(&format!("x{i}")), a, b, ty, &w).unwrap();
    }
    t.commit().unwrap();
}

/// A larger pseudo-random graph with hubs, several labels and types, self
/// loops and parallel edges: the sorted runs and the degrees counted off
/// them match what transactions build, and the integrity check (which
/// recounts every statistic) passes.
#[test]
fn a_skewed_random_load_matches_transactions() {
    let mut x = 0x9E3779B97F4A7C15u64;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let nodes: Vec<(String, Vec<&str>)> = (0..600)
        .map(|i| {
            let labels = match i % 3 {
                0 => vec!["A"],
                1 => vec!["A", "B"],
                _ => vec![],
            };
            (format!("n{i}"), labels)
        })
        .collect();
    let edges: Vec<(String, String, &str)> = (0..4000)
        .map(|_| {
            // Half the edges touch one of five hubs.
            let s = if next(2) == 0 { next(5) } else { next(600) };
            let d = next(600);
            let t = ["R", "S", "T"][next(3) as usize];
            (format!("n{s}"), format!("n{d}"), t)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let s = db(Backend::Lmdb, &dir);
    s.create_graph("bulk").unwrap();
    let report = s
        .bulk_load(
            "bulk",
            &mut nodes
                .iter()
                .map(|(k, l)| node(k, l, &[("k", k.as_str().into())])),
            &mut edges.iter().map(|(a, b, t)| edge(None, a, b, t)),
        )
        .unwrap();
    assert_eq!((report.nodes, report.edges), (600, 4000));
    by_transactions(
        &s,
        nodes.iter().map(|(k, l)| (k.as_str(), l.as_slice())),
        edges.iter().map(|(a, b, t)| (a.as_str(), b.as_str(), *t)),
    );
    assert_eq!(observe(&s, "bulk"), observe(&s, "default"));
    let r = s.read("bulk").unwrap();
    let hub = r.node_id("n0").unwrap().unwrap();
    let by_type: u64 = ["R", "S", "T"]
        .iter()
        .map(|t| r.degree(hub, Direction::Out, Some(t)).unwrap())
        .sum();
    assert_eq!(by_type, r.degree(hub, Direction::Out, None).unwrap());
}

/// `Defer` leaves non-unique indexes out of the load and stale until they
/// are rebuilt; unique ones are filled all the same. `Maintain` fills both.
#[test]
fn a_deferred_load_leaves_indexes_stale_until_rebuilt() {
    for mode in [
        IndexMode::Defer,
        IndexMode::Maintain,
        IndexMode::DeferRebuild,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let s = db(Backend::Lmdb, &dir);
        s.create_graph("g").unwrap();
        let mut t = s.write("g").unwrap();
        t.create_index(IndexSpec::property("P", "age")).unwrap();
        t.create_constraint(ConstraintSpec {
            name: None,
            label: "P".into(),
            key: "name".into(),
            kind: ConstraintKind::Unique,
        })
        .unwrap();
        t.commit().unwrap();
        let nodes = vec![
            node("a", &["P"], &[("age", 40.into()), ("name", "x".into())]),
            node("b", &["P"], &[("age", 41.into()), ("name", "y".into())]),
        ];
        s.bulk_load_with(
            "g",
            &mut nodes.into_iter(),
            &mut std::iter::empty(),
            BulkOptions {
                index_mode: mode,
                ..BulkOptions::default()
            },
        )
        .unwrap();
        let r = s.read("g").unwrap();
        assert_eq!(
            r.find_nodes(Some("P"), "name", &"y".into()).unwrap().len(),
            1
        );
        let by_age = r.find_nodes(Some("P"), "age", &40.into());
        drop(r);
        if mode == IndexMode::Defer {
            assert!(
                matches!(by_age, Err(StorageError::IndexStale(_))),
                "{by_age:?}"
            );
            assert_eq!(s.rebuild_indexes("g").unwrap().len(), 1);
            let r = s.read("g").unwrap();
            assert_eq!(r.find_nodes(Some("P"), "age", &40.into()).unwrap().len(), 1);
        } else {
            assert_eq!(by_age.unwrap().len(), 1, "{mode:?}");
        }
        assert!(s.check_integrity("g").unwrap().is_ok(), "{mode:?}");
    }
}

/// Ids longer than the id map keeps inline are found all the same, and a
/// duplicate among them is still caught.
#[test]
fn long_ids_resolve_and_clash() {
    let long = "a-rather-long-node-identifier-of-40-bytes";
    let dir = tempfile::tempdir().unwrap();
    let s = db(Backend::Lmdb, &dir);
    s.create_graph("g").unwrap();
    let r = s
        .bulk_load(
            "g",
            &mut vec![node(long, &["P"], &[]), node("short", &["P"], &[])].into_iter(),
            &mut vec![
                edge(None, long, "short", "R"),
                edge(None, "short", long, "R"),
            ]
            .into_iter(),
        )
        .unwrap();
    assert_eq!((r.nodes, r.edges), (2, 2));
    let t = s.read("g").unwrap();
    let n = t.node_id(long).unwrap().unwrap();
    assert_eq!(t.degree(n, Direction::Both, None).unwrap(), 2);
    s.create_graph("h").unwrap();
    let e = s
        .bulk_load(
            "h",
            &mut vec![node(long, &[], &[]), node(long, &[], &[])].into_iter(),
            &mut std::iter::empty(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("already taken"), "{e}");
}

/// A load bounded to a few kilobytes of keys spills to files many times
/// over, and still builds what transactions build; its files are gone
/// after it, also after a load that fails.
#[test]
fn a_bounded_load_spills_and_matches_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    let s = db(Backend::Lmdb, &dir);
    let limit = || SpillLimit {
        bytes: 16 << 10,
        dir: spill.clone(),
    };
    let nodes: Vec<String> = (0..500).map(|i| format!("n{}", (i * 7919) % 500)).collect();
    let edges: Vec<(String, String, String)> = (0..3000)
        .map(|i| {
            (
                format!("n{}", (i * 31) % 500),
                format!("n{}", (i * 17 + i / 7) % 500),
                ["R", "S"][i % 2].to_string(),
            )
        })
        .collect();
    unique_graph(&s, "bulk");
    let report = s
        .bulk_load_with(
            "bulk",
            &mut nodes
                .iter()
                .map(|k| node(k, &["P"], &[("k", k.as_str().into())])),
            &mut edges
                .iter()
                .enumerate()
                .map(|(i, (a, b, ty))| edge(Some(&format!("e{i}")), a, b, ty)),
            BulkOptions {
                spill: Some(limit()),
                ..BulkOptions::default()
            },
        )
        .unwrap();
    assert_eq!((report.nodes, report.edges), (500, 3000));
    assert_eq!(
        std::fs::read_dir(&spill).unwrap().count(),
        0,
        "no file left"
    );
    by_transactions(
        &s,
        nodes.iter().map(|k| (k.as_str(), &["P"][..])),
        edges
            .iter()
            .map(|(a, b, t)| (a.as_str(), b.as_str(), t.as_str())),
    );
    assert_eq!(observe(&s, "bulk"), observe(&s, "default"));
    // Repeats found across spilled parts: an edge id, a unique value.
    for (g, edges) in [
        (
            "h",
            vec![
                edge(Some("x"), "a", "b", "R"),
                edge(Some("x"), "b", "a", "R"),
            ],
        ),
        ("i", vec![]),
    ] {
        unique_graph(&s, g);
        // Over 4,096 nodes, so the load spills while reading them: "b"
        // lands in a later part than the node it clashes with.
        let mut rows: Vec<Result<BulkNode>> = (0..9000)
            .map(|i| node(&format!("m{i}"), &["P"], &[("k", Value::Int(i))]))
            .collect();
        rows.push(node("a", &["P"], &[("k", Value::Int(10000))]));
        rows.push(node(
            "b",
            &["P"],
            &[("k", Value::Int(if g == "i" { 7 } else { 10001 }))],
        ));
        let tiny = SpillLimit {
            bytes: 1 << 10,
            dir: spill.clone(),
        };
        let e = s
            .bulk_load_with(
                g,
                &mut rows.into_iter(),
                &mut edges.into_iter(),
                BulkOptions {
                    spill: Some(tiny),
                    ..BulkOptions::default()
                },
            )
            .unwrap_err();
        let want = if g == "h" {
            "edge id 'x' is already taken"
        } else {
            "unique"
        };
        assert!(e.to_string().contains(want), "{e}");
        assert_eq!(s.read(g).unwrap().node_count().unwrap(), 0, "nothing lands");
        assert_eq!(
            std::fs::read_dir(&spill).unwrap().count(),
            0,
            "no file left"
        );
    }
}
