//! Property columns (`columns.rs`), label members (`members.rs`) and kept
//! adjacency (`GroupCache`). `nodes_equal` answers from a cached
//! column and must give what reading every node's property gives, after
//! any sequence of commits, for old snapshots, inside a transaction that
//! changed nodes itself, after a bulk load, and for a second store on the
//! same data (another process).

use plexus_common::Value;
use plexus_kv::{Backend, KvOptions};
use plexus_storage::*;

/// The answer by the slowest and plainest route: every node's property.
fn by_reading(r: &impl GraphRead, label: Option<&str>, key: &str, want: &Value) -> Vec<NodeId> {
    let ids: Vec<NodeId> = match label {
        Some(l) => r.nodes_with_label(l).map(Result::unwrap).collect(),
        None => r.nodes().map(Result::unwrap).collect(),
    };
    ids.into_iter()
        .filter(|n| {
            let have = r.node_property(*n, key).unwrap();
            match (have, want.clone()) {
                (Some(Value::Int(a)), Value::Float(b)) | (Some(Value::Float(b)), Value::Int(a)) => {
                    a as f64 == b
                }
                (Some(Value::Float(a)), Value::Float(b)) => a == b,
                (Some(h), w) => h == w,
                (None, _) => false,
            }
        })
        .collect()
}

const VALUES: [fn(u64) -> Value; 4] = [
    |x| Value::Int((x % 4) as i64),
    |x| Value::Float((x % 4) as f64),
    |x| Value::from(["a", "b", "c"][(x % 3) as usize]),
    |x| Value::Bool(x % 2 == 0),
];

fn check(r: &impl GraphRead, step: u64) {
    for label in [None, Some("A"), Some("B"), Some("Nope")] {
        for want in [
            Value::Int(1),
            Value::Float(2.0),
            Value::from("b"),
            Value::Bool(true),
        ] {
            assert_eq!(
                r.nodes_equal(label, "p", &want).unwrap(),
                by_reading(r, label, "p", &want),
                "step {step}, label {label:?}, value {want:?}"
            );
        }
    }
}

/// xorshift: reproducible steps without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn random_change(t: &mut WriteTxn, rng: &mut Rng, made: &mut Vec<NodeId>) {
    let x = rng.next();
    let value = VALUES[(x % 4) as usize](x >> 8);
    let some = |rng: &mut Rng, made: &Vec<NodeId>| made[(rng.next() as usize) % made.len()];
    match (x >> 4) % 6 {
        0 | 1 => {
            let label = ["A", "B"][(x >> 12) as usize % 2];
            let props = Props::from([("p".to_string(), value)]);
            made.push(t.create_node(None, &[label], &props).unwrap());
        }
        2 if !made.is_empty() => {
            let n = some(rng, made);
            t.set_node_property(n, "p", value).unwrap();
        }
        3 if !made.is_empty() => {
            let n = some(rng, made);
            t.set_node_property(n, "p", Value::Null).unwrap();
        }
        4 if !made.is_empty() => {
            let n = some(rng, made);
            t.add_label(n, "B").unwrap();
            t.remove_label(n, "A").unwrap();
        }
        5 if !made.is_empty() => {
            let n = some(rng, made);
            t.delete_node(n, DeleteMode::Detach).unwrap();
            made.retain(|m| *m != n);
        }
        _ => {}
    }
}

#[test]
fn columns_agree_with_the_records_after_every_commit() {
    let db = Storage::in_memory().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut made = Vec::new();
    let mut old: Option<(ReadTxn, Vec<Vec<NodeId>>)> = None;
    for step in 0..150 {
        let mut t = db.write(DEFAULT_GRAPH).unwrap();
        for _ in 0..(rng.next() % 6) {
            random_change(&mut t, &mut rng, &mut made);
        }
        // Inside the transaction: its own writes count.
        check(&t, step);
        t.commit().unwrap();
        let r = db.read(DEFAULT_GRAPH).unwrap();
        check(&r, step);
        check(&r, step); // the second time from the column
                         // A snapshot from earlier steps keeps its answers while newer
                         // columns replace the one it used.
        if let Some((o, answers)) = &old {
            assert_eq!(
                o.nodes_equal(None, "p", &Value::from("a")).unwrap(),
                answers[0]
            );
            assert_eq!(
                o.nodes_equal(Some("A"), "p", &Value::Int(2)).unwrap(),
                answers[1]
            );
        }
        if step % 25 == 0 {
            let answers = vec![
                r.nodes_equal(None, "p", &Value::from("a")).unwrap(),
                r.nodes_equal(Some("A"), "p", &Value::Int(2)).unwrap(),
            ];
            old = Some((r, answers));
        }
    }
    assert!(db.check_integrity(DEFAULT_GRAPH).unwrap().is_ok());
}

#[test]
fn a_bulk_load_is_a_new_version() {
    let db = Storage::in_memory().unwrap();
    db.create_graph("g").unwrap();
    // A node made and deleted: the key is known and the graph empty again
    // (a bulk load needs an empty graph), so a column is built and kept.
    let mut t = db.write("g").unwrap();
    let one = Props::from([("p".to_string(), Value::Int(1))]);
    let n = t.create_node(None, &["A"], &one).unwrap();
    t.commit().unwrap();
    let mut t = db.write("g").unwrap();
    t.delete_node(n, DeleteMode::Detach).unwrap();
    t.commit().unwrap();
    let r = db.read("g").unwrap();
    assert!(r.nodes_equal(None, "p", &Value::Int(1)).unwrap().is_empty());
    drop(r);
    let mut nodes = (0..10).map(|i| {
        Ok(BulkNode {
            key: format!("n{i}"),
            labels: vec!["A".into()],
            props: Props::from([("p".to_string(), Value::Int(i % 2))]),
            origin: Origin::new(format!("nodes:{i}")),
        })
    });
    db.bulk_load("g", &mut nodes, &mut std::iter::empty())
        .unwrap();
    let r = db.read("g").unwrap();
    assert_eq!(r.nodes_equal(None, "p", &Value::Int(1)).unwrap().len(), 5);
    assert_eq!(
        r.nodes_equal(None, "p", &Value::Int(1)).unwrap(),
        by_reading(&r, None, "p", &Value::Int(1))
    );
    assert!(db.check_integrity("g").unwrap().is_ok());
}

#[test]
fn a_second_store_on_the_same_data_sees_the_writers_commits() {
    let (path, opts) = (std::path::Path::new(""), KvOptions::default());
    let kv = plexus_kv::open(Backend::Memory, path, KEYSPACE_NAMES, &opts).unwrap();
    let writer = Storage::open(kv.clone()).unwrap();
    let reader = Storage::open_read_only(kv).unwrap();
    let one = Props::from([("p".to_string(), Value::Int(1))]);
    let mut t = writer.write(DEFAULT_GRAPH).unwrap();
    let n = t.create_node(Some("n"), &["A"], &one).unwrap();
    t.commit().unwrap();
    let seen = |s: &Storage| {
        s.read(DEFAULT_GRAPH)
            .unwrap()
            .nodes_equal(None, "p", &Value::Int(1))
            .unwrap()
    };
    assert_eq!(seen(&reader), vec![n]);
    // The reader's column is now at the writer's old version.
    let mut t = writer.write(DEFAULT_GRAPH).unwrap();
    t.set_node_property(n, "p", Value::Int(2)).unwrap();
    t.commit().unwrap();
    assert_eq!(seen(&reader), vec![]);
    assert_eq!(seen(&writer), vec![]);
}

/// Label checks and property reads node by node (`members.rs`): once a
/// label is checked, or a property read, often enough, a bitmap of its
/// members or the property's column answers, which must agree with the
/// records after every commit, for an old snapshot, and inside a
/// transaction that changed nodes itself.
#[test]
fn label_checks_and_property_reads_agree_with_the_records_after_every_commit() {
    let db = Storage::in_memory().unwrap();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut made = Vec::new();
    // Every node ever made, deleted ones too, in the order they were made.
    let mut all: Vec<NodeId> = Vec::new();
    let mut old: Option<(ReadTxn, Vec<bool>)> = None;
    let has = |r: &dyn GraphRead, n: NodeId, l: &str| {
        r.node(n)
            .unwrap()
            .is_some_and(|node| node.labels.iter().any(|x| x == l))
    };
    // Enough checks of each label and reads of the property that its
    // members and column are built and used.
    let check = |r: &dyn GraphRead, nodes: &[NodeId], step: u64| {
        for _ in 0..3 {
            for &n in nodes {
                let record = r
                    .node(n)
                    .unwrap()
                    .and_then(|node| node.props.get("p").cloned());
                assert_eq!(
                    r.node_property(n, "p").unwrap(),
                    record,
                    "step {step}, node {n:?}"
                );
            }
            for l in ["A", "B", "Nope"] {
                for &n in nodes {
                    assert_eq!(
                        r.node_has_label(n, l).unwrap(),
                        has(r, n, l),
                        "step {step}, node {n:?}, label {l}"
                    );
                }
            }
        }
    };
    for step in 0..120 {
        let mut t = db.write(DEFAULT_GRAPH).unwrap();
        for _ in 0..(rng.next() % 6) {
            random_change(&mut t, &mut rng, &mut made);
            if let Some(n) = made.last().filter(|n| !all.contains(n)) {
                all.push(*n);
            }
        }
        check(&t, &all, step);
        t.commit().unwrap();
        let r = db.read(DEFAULT_GRAPH).unwrap();
        check(&r, &all, step);
        if let Some((o, answers)) = &old {
            let now: Vec<bool> = all
                .iter()
                .map(|n| o.node_has_label(*n, "A").unwrap())
                .collect();
            assert_eq!(
                &now[..answers.len()],
                &answers[..],
                "an old snapshot, step {step}"
            );
        }
        if step % 20 == 0 {
            let answers = all.iter().map(|n| has(&r, *n, "A")).collect();
            old = Some((r, answers));
        }
    }
}

/// Adjacency groups read last are kept by the transaction (`GroupCache`):
/// a transaction that then writes relationships must see its own writes,
/// and a later snapshot the commit, in neighbours and degrees alike.
#[test]
fn kept_adjacency_never_hides_a_write() {
    let db = Storage::in_memory().unwrap();
    let mut t = db.write(DEFAULT_GRAPH).unwrap();
    let a = t.create_node(None, &["A"], &Props::new()).unwrap();
    let b = t.create_node(None, &["A"], &Props::new()).unwrap();
    t.create_edge(None, a, b, "T", &Props::new()).unwrap();
    t.commit().unwrap();
    let seen = |r: &dyn GraphRead, want: usize| {
        for _ in 0..2 {
            for (dir, ty) in [(Direction::Out, None), (Direction::Both, Some("T"))] {
                assert_eq!(
                    r.neighbors(a, dir, ty).unwrap().len(),
                    want,
                    "{dir:?} {ty:?}"
                );
                assert_eq!(r.degree(a, dir, ty).unwrap(), want as u64, "{dir:?} {ty:?}");
            }
        }
    };
    let before = db.read(DEFAULT_GRAPH).unwrap();
    seen(&before, 1);
    let mut t = db.write(DEFAULT_GRAPH).unwrap();
    seen(&t, 1);
    let e = t.create_edge(None, a, b, "T", &Props::new()).unwrap();
    seen(&t, 2);
    t.delete_edge(e).unwrap();
    t.create_edge(None, a, a, "T", &Props::new()).unwrap();
    t.create_edge(None, a, b, "T", &Props::new()).unwrap();
    seen(&t, 3);
    t.commit().unwrap();
    seen(&db.read(DEFAULT_GRAPH).unwrap(), 3);
    seen(&before, 1);
}
