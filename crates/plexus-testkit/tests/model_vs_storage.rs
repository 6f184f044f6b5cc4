//! Random operation sequences against the storage and the reference model,
//! on every backend: every outcome, every read and every index answer must
//! agree, inside transactions (read-your-writes) and after commits.

use plexus::{
    ConstraintKind, ConstraintSpec, DeleteMode, Direction, GraphRead, IndexKind, IndexMode,
    IndexSpec, Props, Value, ValueType, WriteTxn,
};
use plexus_kv::{Backend, KvOptions};
use plexus_storage::Storage;
use plexus_testkit::model::{MIndex, Model};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};

const LABELS: [&str; 3] = ["A", "B", "C"];
const KEYS: [&str; 2] = ["p", "q"];
const TYPES: [&str; 2] = ["R", "S"];

#[derive(Debug, Clone)]
enum Op {
    Create {
        node: u8,
        labels: Vec<usize>,
        props: Vec<(usize, Value)>,
    },
    Upsert {
        node: u8,
        labels: Vec<usize>,
        props: Vec<(usize, Value)>,
        merge: bool,
    },
    SetProp {
        node: u8,
        key: usize,
        value: Value,
    },
    Label {
        node: u8,
        label: usize,
        add: bool,
    },
    DeleteNode {
        node: u8,
        detach: bool,
    },
    /// Several nodes at once, with their edges (`WriteTxn::delete_nodes`).
    DeleteNodes(Vec<u8>),
    CreateEdge {
        edge: u8,
        src: u8,
        dst: u8,
        rel: usize,
    },
    DeleteEdge {
        edge: u8,
    },
    Index {
        name: u8,
        label: Option<usize>,
        key: usize,
        list: bool,
        typed: bool,
    },
    Unique {
        name: u8,
        label: usize,
        key: usize,
    },
    NotNull {
        name: u8,
        label: usize,
        key: usize,
    },
    DropIndex {
        name: u8,
    },
    DropConstraint {
        name: u8,
    },
    Mode(u8),
    Rebuild,
    Commit,
    Rollback,
}

fn value() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        (0i64..4).prop_map(Value::Int),
        prop::sample::select(vec![0.5, 1.0, 2.0, 3.5]).prop_map(Value::Float),
        prop::sample::select(vec!["a", "b", "c"]).prop_map(Value::from),
    ];
    prop_oneof![
        4 => scalar.clone(),
        2 => prop::collection::vec(scalar, 0..3).prop_map(Value::List),
        1 => Just(Value::Null),
    ]
}

fn props() -> impl Strategy<Value = Vec<(usize, Value)>> {
    prop::collection::vec((0..KEYS.len(), value()), 0..3)
}

fn labels() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..LABELS.len(), 0..3)
}

fn op() -> impl Strategy<Value = Op> {
    let node = 0u8..8;
    prop_oneof![
        6 => (node.clone(), labels(), props()).prop_map(|(node, labels, props)| Op::Create { node, labels, props }),
        3 => (node.clone(), labels(), props(), any::<bool>()).prop_map(|(node, labels, props, merge)| Op::Upsert { node, labels, props, merge }),
        5 => (node.clone(), 0..KEYS.len(), value()).prop_map(|(node, key, value)| Op::SetProp { node, key, value }),
        2 => (node.clone(), 0..LABELS.len(), any::<bool>()).prop_map(|(node, label, add)| Op::Label { node, label, add }),
        2 => (node.clone(), any::<bool>()).prop_map(|(node, detach)| Op::DeleteNode { node, detach }),
        1 => prop::collection::vec(node.clone(), 1..4).prop_map(Op::DeleteNodes),
        5 => (0u8..10, node.clone(), node, 0..TYPES.len()).prop_map(|(edge, src, dst, rel)| Op::CreateEdge { edge, src, dst, rel }),
        2 => (0u8..10).prop_map(|edge| Op::DeleteEdge { edge }),
        2 => (0u8..4, prop::option::of(0..LABELS.len()), 0..KEYS.len(), any::<bool>(), prop::bool::weighted(0.3)).prop_map(|(name, label, key, list, typed)| Op::Index { name, label, key, list, typed }),
        1 => (0u8..4, 0..LABELS.len(), 0..KEYS.len()).prop_map(|(name, label, key)| Op::Unique { name, label, key }),
        1 => (0u8..4, 0..LABELS.len(), 0..KEYS.len()).prop_map(|(name, label, key)| Op::NotNull { name, label, key }),
        1 => (0u8..4).prop_map(|name| Op::DropIndex { name }),
        1 => (0u8..4).prop_map(|name| Op::DropConstraint { name }),
        1 => (0u8..3).prop_map(Op::Mode),
        1 => Just(Op::Rebuild),
        4 => Just(Op::Commit),
        1 => Just(Op::Rollback),
    ]
}

fn to_props(p: &[(usize, Value)]) -> Props {
    p.iter()
        .map(|(k, v)| (KEYS[*k].to_string(), v.clone()))
        .collect()
}

fn names(l: &[usize]) -> Vec<&'static str> {
    l.iter().map(|i| LABELS[*i]).collect()
}

/// Every observable answer of the storage equals the model's.
fn compare(t: &impl GraphRead, m: &Model) {
    compare_graph(t, m);
    compare_lookups(t, m);
}

/// Nodes, edges, counts and adjacency.
fn compare_graph(t: &impl GraphRead, m: &Model) {
    let mut nodes = BTreeMap::new();
    for id in t.nodes() {
        let n = t.node(id.unwrap()).unwrap().unwrap();
        nodes.insert(n.key.clone(), (n.labels.iter().cloned().collect(), n.props));
    }
    let expected: BTreeMap<_, _> = m
        .nodes
        .iter()
        .map(|(k, n)| (k.clone(), (n.labels.clone(), n.props.clone())))
        .collect();
    assert_eq!(nodes, expected, "nodes differ");
    let mut edges = BTreeMap::new();
    for id in t.edges() {
        let e = t.edge(id.unwrap()).unwrap().unwrap();
        let s = t.node(e.src).unwrap().unwrap().key;
        let d = t.node(e.dst).unwrap().unwrap().key;
        edges.insert(e.key.clone(), (s, d, e.rel_type, e.props));
    }
    let expected: BTreeMap<_, _> = m
        .edges
        .iter()
        .map(|(k, e)| {
            (
                k.clone(),
                (
                    e.src.clone(),
                    e.dst.clone(),
                    e.rel_type.clone(),
                    e.props.clone(),
                ),
            )
        })
        .collect();
    assert_eq!(edges, expected, "edges differ");
    assert_eq!(t.node_count().unwrap(), m.nodes.len() as u64);
    assert_eq!(t.edge_count().unwrap(), m.edges.len() as u64);
    for l in LABELS {
        let want = m.nodes.values().filter(|n| n.labels.contains(l)).count() as u64;
        assert_eq!(t.label_count(l).unwrap(), want, "label count {l}");
        assert_eq!(t.nodes_with_label(l).count() as u64, want);
    }
    for ty in TYPES {
        assert_eq!(
            t.type_count(ty).unwrap(),
            m.edges.values().filter(|e| e.rel_type == ty).count() as u64
        );
    }
    for key in m.nodes.keys() {
        let id = t.node_id(key).unwrap().unwrap();
        assert_eq!(
            t.degree(id, Direction::Out, None).unwrap(),
            m.degree(key, true),
            "out-degree of {key}"
        );
        assert_eq!(
            t.degree(id, Direction::In, None).unwrap(),
            m.degree(key, false),
            "in-degree of {key}"
        );
        assert_eq!(
            t.neighbors(id, Direction::Out, None).unwrap().len() as u64,
            m.degree(key, true)
        );
    }
}

/// Index lookups and their refusals.
fn compare_lookups(t: &impl GraphRead, m: &Model) {
    let keys_of = |ids: Vec<plexus::NodeId>| -> Vec<String> {
        let mut v: Vec<String> = ids
            .into_iter()
            .map(|i| t.node(i).unwrap().unwrap().key)
            .collect();
        v.sort();
        v
    };
    let probes = [
        Value::Int(1),
        Value::Float(2.0),
        Value::from("a"),
        Value::Float(0.5),
    ];
    for l in LABELS {
        for k in KEYS {
            for list in [false, true] {
                for p in &probes {
                    let got = if list {
                        t.find_nodes_with_element(Some(l), k, p)
                    } else {
                        t.find_nodes(Some(l), k, p)
                    };
                    match m.lookup(l, k, p, list) {
                        Ok(want) => assert_eq!(
                            keys_of(got.unwrap()),
                            want,
                            "lookup :{l}.{k} = {p} (list {list})"
                        ),
                        Err(_) => assert!(got.is_err(), "lookup :{l}.{k} should be refused"),
                    }
                }
            }
            let (lo, hi) = (Value::Int(1), Value::Int(2));
            let got = t.find_nodes_in_range(Some(l), k, Bound::Included(&lo), Bound::Included(&hi));
            match m.range(l, k, 1, 2) {
                Ok(want) => assert_eq!(keys_of(got.unwrap()), want, "range :{l}.{k}"),
                Err(_) => assert!(got.is_err()),
            }
        }
    }
}

struct Run {
    db: Storage,
    committed: Model,
    model: Model,
    txn: Option<WriteTxn>,
    mode: IndexMode,
    /// The graph as each commit left it, with the commit's system time,
    /// when the store keeps history.
    history: Option<Vec<(u64, Model)>>,
}

impl Run {
    fn txn(&mut self) -> &mut WriteTxn {
        if self.txn.is_none() {
            self.txn = Some(self.db.write("default").unwrap());
        }
        self.txn.as_mut().unwrap()
    }

    fn apply(&mut self, op: &Op) {
        let defer = self.mode != IndexMode::Maintain;
        let nk = |n: &u8| format!("n{n}");
        macro_rules! agree {
            ($got:expr, $want:expr) => {{
                let (got, want) = ($got, $want);
                assert_eq!(
                    got.is_ok(),
                    want.is_ok(),
                    "{op:?}: storage {:?}, model {:?}",
                    got.as_ref().err().map(|e| e.to_string()),
                    want.as_ref().err()
                );
            }};
        }
        match op {
            Op::Create {
                node,
                labels,
                props,
            } => {
                let want =
                    self.model
                        .create_node(&nk(node), &names(labels), &to_props(props), defer);
                agree!(
                    self.txn()
                        .create_node(Some(&nk(node)), &names(labels), &to_props(props)),
                    want
                );
            }
            Op::Upsert {
                node,
                labels,
                props,
                merge,
            } => {
                let want = self.model.upsert_node(
                    &nk(node),
                    &names(labels),
                    &to_props(props),
                    *merge,
                    defer,
                );
                let t = self.txn();
                let got = if *merge {
                    t.merge_node(&nk(node), &names(labels), &to_props(props))
                } else {
                    t.put_node(&nk(node), &names(labels), &to_props(props))
                };
                agree!(got, want);
            }
            Op::SetProp { node, key, value } => {
                let want = self.model.set_prop(&nk(node), KEYS[*key], value, defer);
                let t = self.txn();
                match t.node_id(&nk(node)).unwrap() {
                    Some(id) => agree!(t.set_node_property(id, KEYS[*key], value.clone()), want),
                    None => assert!(want.is_err()),
                }
            }
            Op::Label { node, label, add } => {
                let want = self.model.set_label(&nk(node), LABELS[*label], *add, defer);
                let t = self.txn();
                match t.node_id(&nk(node)).unwrap() {
                    Some(id) if *add => agree!(t.add_label(id, LABELS[*label]), want),
                    Some(id) => agree!(t.remove_label(id, LABELS[*label]), want),
                    None => assert!(want.is_err()),
                }
            }
            Op::DeleteNode { node, detach } => {
                let want = self.model.delete_node(&nk(node), *detach, defer);
                let t = self.txn();
                match t.node_id(&nk(node)).unwrap() {
                    Some(id) => {
                        let got = t.delete_node(
                            id,
                            if *detach {
                                DeleteMode::Detach
                            } else {
                                DeleteMode::Refuse
                            },
                        );
                        agree!(&got, &want);
                        if let (Ok(g), Ok(w)) = (got, want) {
                            assert_eq!(g, w);
                        }
                    }
                    None => assert_eq!(want, Ok(false)),
                }
            }
            Op::DeleteNodes(nodes) => {
                let mut want = 0;
                let mut ids = Vec::new();
                for node in nodes {
                    if let Some(id) = self.txn().node_id(&nk(node)).unwrap() {
                        ids.push(id);
                    }
                    if self.model.delete_node(&nk(node), true, defer) == Ok(true) {
                        want += 1;
                    }
                }
                assert_eq!(
                    self.txn().delete_nodes(&ids, DeleteMode::Detach).unwrap(),
                    want
                );
            }
            Op::CreateEdge {
                edge,
                src,
                dst,
                rel,
            } => {
                let want = self.model.create_edge(
                    &format!("e{edge}"),
                    &nk(src),
                    &nk(dst),
                    TYPES[*rel],
                    &Props::new(),
                );
                let t = self.txn();
                let (s, d) = (t.node_id(&nk(src)).unwrap(), t.node_id(&nk(dst)).unwrap());
                match (s, d) {
                    (Some(s), Some(d)) => agree!(
                        t.create_edge(Some(&format!("e{edge}")), s, d, TYPES[*rel], &Props::new()),
                        want
                    ),
                    _ => assert!(want.is_err()),
                }
            }
            Op::DeleteEdge { edge } => {
                let want = self.model.delete_edge(&format!("e{edge}"));
                let t = self.txn();
                let got = match t.edge_id(&format!("e{edge}")).unwrap() {
                    Some(id) => t.delete_edge(id).unwrap(),
                    None => false,
                };
                assert_eq!(got, want);
            }
            Op::Index {
                name,
                label,
                key,
                list,
                typed,
            } => {
                let idx = MIndex {
                    name: format!("i{name}"),
                    label: label.map(|l| LABELS[l].to_string()),
                    key: KEYS[*key].into(),
                    list: *list,
                    typed: typed.then_some(ValueType::Int),
                    unique: false,
                    stale: false,
                };
                let spec = IndexSpec {
                    name: Some(idx.name.clone()),
                    label: idx.label.clone(),
                    key: idx.key.clone(),
                    kind: if *list {
                        IndexKind::ListElement
                    } else {
                        IndexKind::Property
                    },
                    value_type: idx.typed,
                    options: Vec::new(),
                };
                let want = self.model.create_index(idx);
                agree!(self.txn().create_index(spec), want);
            }
            Op::Unique { name, label, key } => {
                let idx = MIndex {
                    name: format!("i{name}"),
                    label: Some(LABELS[*label].into()),
                    key: KEYS[*key].into(),
                    list: false,
                    typed: None,
                    unique: true,
                    stale: false,
                };
                let want = self.model.create_index(idx);
                let spec = ConstraintSpec {
                    name: Some(format!("i{name}")),
                    label: LABELS[*label].into(),
                    key: KEYS[*key].into(),
                    kind: ConstraintKind::Unique,
                };
                agree!(self.txn().create_constraint(spec), want);
            }
            Op::NotNull { name, label, key } => {
                let want =
                    self.model
                        .create_not_null(&format!("i{name}"), LABELS[*label], KEYS[*key]);
                let spec = ConstraintSpec {
                    name: Some(format!("i{name}")),
                    label: LABELS[*label].into(),
                    key: KEYS[*key].into(),
                    kind: ConstraintKind::NotNull,
                };
                agree!(self.txn().create_constraint(spec), want);
            }
            Op::DropIndex { name } => {
                let want = self.model.drop_index(&format!("i{name}"));
                agree!(self.txn().drop_index(&format!("i{name}")), want);
            }
            Op::DropConstraint { name } => {
                let want = self.model.drop_constraint(&format!("i{name}"));
                agree!(self.txn().drop_constraint(&format!("i{name}")), want);
            }
            Op::Mode(m) => {
                self.mode = [
                    IndexMode::Maintain,
                    IndexMode::Defer,
                    IndexMode::DeferRebuild,
                ][*m as usize];
                let mode = self.mode;
                self.txn().set_index_mode(mode);
            }
            Op::Rebuild => {
                self.model.rebuild();
                self.txn().rebuild_indexes().unwrap();
            }
            Op::Commit => {
                if self.mode == IndexMode::DeferRebuild {
                    self.model.rebuild();
                }
                if let Some(t) = self.txn.take() {
                    t.commit().unwrap();
                }
                self.mode = IndexMode::Maintain;
                self.committed = self.model.clone();
                if let Some(h) = &mut self.history {
                    h.push((self.db.system_time().unwrap(), self.committed.clone()));
                }
                let report = self.db.check_integrity("default").unwrap();
                assert!(report.is_ok(), "{:?}", report.problems);
                compare(&self.db.read("default").unwrap(), &self.committed);
                return;
            }
            Op::Rollback => {
                if let Some(t) = self.txn.take() {
                    t.rollback();
                }
                self.mode = IndexMode::Maintain;
                self.model = self.committed.clone();
                compare(&self.db.read("default").unwrap(), &self.model);
                return;
            }
        }
        compare(self.txn.as_ref().unwrap(), &self.model);
    }
}

static OPS: AtomicUsize = AtomicUsize::new(0);

fn run(backend: Backend, ops: &[Op]) {
    let dir = tempfile::tempdir().unwrap();
    let opts = KvOptions {
        durable: false,
        ..Default::default()
    };
    #[cfg(feature = "postgres")]
    let schema = postgres_schema();
    let kv = match backend {
        #[cfg(feature = "postgres")]
        Backend::Postgres => plexus_kv::open_postgres(
            &postgres_url(),
            &schema,
            plexus_storage::KEYSPACE_NAMES,
            &opts,
        ),
        _ => plexus_kv::open(backend, dir.path(), plexus_storage::KEYSPACE_NAMES, &opts),
    }
    .unwrap();
    let db = Storage::open(kv).unwrap();
    // Every case keeps history, so that every commit also writes versions.
    let history = Some(vec![(
        db.keep_history("default").unwrap(),
        Model::default(),
    )]);
    let mut r = Run {
        db,
        committed: Model::default(),
        model: Model::default(),
        txn: None,
        mode: IndexMode::Maintain,
        history,
    };
    for op in ops {
        r.apply(op);
    }
    r.apply(&Op::Commit);
    if let Some(h) = &r.history {
        check_history(&r.db, h);
    }
    OPS.fetch_add(ops.len(), Ordering::Relaxed);
    #[cfg(feature = "postgres")]
    if backend == Backend::Postgres {
        drop(r);
        plexus_kv::destroy_postgres(&postgres_url(), &schema).unwrap();
    }
}

/// Reads as of each commit's system time, and just before it, see the
/// graph as the model held it then, its index lookups and their refusals
/// (an index not yet created, dropped, or stale then) included; before
/// history starts, none.
fn check_history(db: &Storage, h: &[(u64, Model)]) {
    let (start, _) = h[0];
    let err = db.read_as_of("default", start - 1).err().unwrap();
    assert!(err.to_string().contains("keeps history from"), "{err}");
    for (i, (t, m)) in h.iter().enumerate() {
        let r = db.read_as_of("default", *t).unwrap();
        compare(&r, m);
        if i > 0 && *t > h[i - 1].0 {
            compare(&db.read_as_of("default", t - 1).unwrap(), &h[i - 1].1);
        }
    }
}

/// The server the test command started (`scripts/postgres`).
#[cfg(feature = "postgres")]
fn postgres_url() -> String {
    std::env::var("PLEXUS_TEST_POSTGRES").expect(
        "PLEXUS_TEST_POSTGRES names no PostgreSQL server: run the tests with scripts/test, \
         which starts one (or start one and set it to its URL)",
    )
}

/// A schema of its own for each case.
#[cfg(feature = "postgres")]
fn postgres_schema() -> String {
    static CASE: AtomicUsize = AtomicUsize::new(0);
    format!(
        "model_{}_{}",
        std::process::id(),
        CASE.fetch_add(1, Ordering::Relaxed)
    )
}

/// 100 cases of 80-120 operations: at least 10,000 operations per backend.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 100,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn memory_backend_matches_the_model(ops in prop::collection::vec(op(), 100..=120)) {
        run(Backend::Memory, &ops);
    }

    #[test]
    fn lmdb_backend_matches_the_model(ops in prop::collection::vec(op(), 100..=120)) {
        run(Backend::Lmdb, &ops);
    }
}

#[cfg(feature = "fjall")]
proptest! {
    #![proptest_config(config())]

    #[test]
    fn fjall_backend_matches_the_model(ops in prop::collection::vec(op(), 100..=120)) {
        run(Backend::Fjall, &ops);
    }
}

// Against a server every operation is a round trip or more: 30 cases
// (about 3,300 operations) keep the run under a minute.
#[cfg(feature = "postgres")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 30, ..config() })]

    #[test]
    fn postgres_backend_matches_the_model(ops in prop::collection::vec(op(), 100..=120)) {
        run(Backend::Postgres, &ops);
    }
}
