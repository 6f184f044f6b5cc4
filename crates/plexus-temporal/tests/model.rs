//! Random valid-time writes over several commits against a reference
//! model: every read as of every (valid instant, system time) agrees, on
//! every backend.

use plexus_common::Value;
use plexus_kv::{Backend, KvOptions};
use plexus_storage::{GraphRead, Storage, KEYSPACE_NAMES};
use plexus_temporal::{
    as_of, commit_versions, latest_within, neighbors_as_of, nodes_as_of, shortest_path_as_of,
    version, versions, Direction, EdgeState, Interval, Kind, NodeState, Op, Snapshot, State,
    VersionWrite,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum W {
    Assert {
        edge: bool,
        entity: u8,
        valid: (i64, Option<i64>),
        val: i64,
    },
    Retract {
        edge: bool,
        entity: u8,
        valid: (i64, Option<i64>),
    },
    /// Corrects the `target`-th version written so far (modulo), over its
    /// interval or another.
    Correct {
        target: usize,
        valid: Option<(i64, Option<i64>)>,
        val: i64,
    },
    /// Corrects a version that does not exist: the whole commit fails.
    CorrectMissing,
}

fn valid() -> impl Strategy<Value = (i64, Option<i64>)> {
    (-2i64..18, proptest::option::of(1i64..8)).prop_map(|(f, l)| (f, l.map(|l| f + l)))
}

fn w() -> impl Strategy<Value = W> {
    prop_oneof![
        5 => (any::<bool>(), 0u8..3, valid(), 0i64..100)
            .prop_map(|(edge, entity, valid, val)| W::Assert { edge, entity, valid, val }),
        2 => (any::<bool>(), 0u8..3, valid())
            .prop_map(|(edge, entity, valid)| W::Retract { edge, entity, valid }),
        2 => (any::<usize>(), proptest::option::of(valid()), 0i64..100)
            .prop_map(|(target, valid, val)| W::Correct { target, valid, val }),
        1 => Just(W::CorrectMissing),
    ]
}

/// A version as the model keeps it.
#[derive(Debug, Clone)]
struct MV {
    id: String,
    kind: Kind,
    lid: String,
    op: Op,
    valid: Interval,
    val: Option<i64>,
    commit: usize,
}

fn state(kind: Kind, val: i64) -> State {
    let props = [("v".to_string(), Value::Int(val))].into();
    match kind {
        Kind::Node => State::Node(NodeState {
            labels: vec!["L".into()],
            props,
        }),
        Kind::Claim => unreachable!("the model writes nodes and edges"),
        Kind::Edge => State::Edge(EdgeState {
            src: "a".into(),
            dst: "b".into(),
            rel_type: "R".into(),
            props,
        }),
    }
}

fn interval((from, to): (i64, Option<i64>)) -> Interval {
    Interval::new(from, to).unwrap()
}

fn kind(edge: bool) -> Kind {
    if edge {
        Kind::Edge
    } else {
        Kind::Node
    }
}

/// The model's answer: the latest version committed by `commit` whose
/// interval holds `at`, unless it retracts.
fn resolve(model: &[MV], k: Kind, lid: &str, at: i64, commit: usize) -> Option<(String, i64)> {
    let v = model
        .iter()
        .rev()
        .find(|v| v.commit <= commit && v.kind == k && v.lid == lid && v.valid.contains(at))?;
    v.val.map(|val| (v.id.clone(), val))
}

fn value_of(v: &plexus_temporal::Version) -> i64 {
    let props = match &v.state {
        State::Node(n) => &n.props,
        State::Edge(e) => &e.props,
        State::None | State::Claim(_) => {
            panic!("a retraction holds nothing; the model writes no claims")
        }
    };
    match props["v"] {
        Value::Int(i) => i,
        ref other => panic!("{other:?}"),
    }
}

fn check(r: &impl GraphRead, model: &[MV], commit: usize) {
    // A version by its id: there once its commit is.
    for v in model {
        let found = version(r, &v.id).unwrap();
        assert_eq!(
            found.is_some(),
            v.commit <= commit,
            "{} after {commit}",
            v.id
        );
    }
    // The valid-time graph: label members and adjacency as of each instant
    // (every node version has label L; every edge goes a → b, type R).
    for at in -3..27 {
        let holding = |k: Kind| -> Vec<String> {
            (0..3)
                .map(|e| format!("x{e}"))
                .filter(|lid| resolve(model, k, lid, at, commit).is_some())
                .collect()
        };
        let lids = |vs: Vec<plexus_temporal::Version>| -> Vec<String> {
            vs.into_iter().map(|v| v.logical_id).collect()
        };
        assert_eq!(
            lids(nodes_as_of(r, "L", at).unwrap()),
            holding(Kind::Node),
            "label L at {at}"
        );
        let steps = |id: &str, dir, t: Option<&str>| -> Vec<String> {
            let mut ids: Vec<String> = neighbors_as_of(r, id, dir, t, at)
                .unwrap()
                .into_iter()
                .map(|s| s.edge.logical_id)
                .collect();
            ids.sort();
            ids
        };
        let edges = holding(Kind::Edge);
        let mut snap = Snapshot::as_of(r, at).unwrap().edges;
        snap.sort();
        assert_eq!(snap, edges, "snapshot at {at}");
        assert_eq!(
            steps("a", Direction::Out, Some("R")),
            edges,
            "out of a at {at}"
        );
        assert_eq!(steps("b", Direction::In, None), edges, "into b at {at}");
        assert_eq!(steps("b", Direction::Both, None), edges, "around b at {at}");
        assert!(steps("a", Direction::In, None).is_empty());
        assert!(steps("a", Direction::Out, Some("Q")).is_empty());
        let path = shortest_path_as_of(r, "a", "b", Direction::Out, None, at, 3).unwrap();
        assert_eq!(
            path.map(|p| p.len()),
            (!edges.is_empty()).then_some(1),
            "path at {at}"
        );
    }
    for k in [Kind::Node, Kind::Edge] {
        for e in 0..3 {
            let lid = format!("x{e}");
            for at in -3..27 {
                let got = as_of(r, k, &lid, at)
                    .unwrap()
                    .map(|v| (v.id.clone(), value_of(&v)));
                let want = resolve(model, k, &lid, at, commit);
                assert_eq!(got, want, "{k:?} {lid} at {at} after commit {commit}");
            }
            // Its versions: those recorded by then, in the order written.
            let got: Vec<String> = versions(r, k, &lid)
                .unwrap()
                .into_iter()
                .map(|v| v.id)
                .collect();
            let want: Vec<String> = model
                .iter()
                .filter(|v| v.commit <= commit && v.kind == k && v.lid == lid)
                .map(|v| v.id.clone())
                .collect();
            assert_eq!(got, want, "versions of {k:?} {lid} after commit {commit}");
            // Over a range: the version holding at the last instant of it
            // that any holds (instants are integers here).
            for (from, len) in [(-3, 2), (0, 5), (3, 9), (10, 17), (-3, 30)] {
                let got = latest_within(r, k, &lid, from, from + len)
                    .unwrap()
                    .filter(|v| !matches!(v.state, State::None))
                    .map(|v| (v.id.clone(), value_of(&v)));
                let want = (from..from + len)
                    .rev()
                    .find_map(|t| resolve(model, k, &lid, t, commit));
                assert_eq!(
                    got, want,
                    "{k:?} {lid} within [{from}, +{len}) after {commit}"
                );
            }
        }
    }
}

/// The PostgreSQL server the test command started (`scripts/postgres`),
/// and a schema of its own for each case.
#[cfg(feature = "postgres")]
fn postgres() -> (String, String) {
    static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let url = std::env::var("PLEXUS_TEST_POSTGRES")
        .expect("PLEXUS_TEST_POSTGRES names no PostgreSQL server: run the tests with scripts/test");
    let case = CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    (url, format!("temporal_{}_{case}", std::process::id()))
}

fn run(backend: Backend, commits: &[Vec<W>]) {
    let dir = tempfile::tempdir().unwrap();
    let opts = KvOptions {
        durable: false,
        ..Default::default()
    };
    #[cfg(feature = "postgres")]
    let (url, schema) = postgres();
    let kv = match backend {
        #[cfg(feature = "postgres")]
        Backend::Postgres => plexus_kv::open_postgres(&url, &schema, KEYSPACE_NAMES, &opts),
        _ => plexus_kv::open(backend, dir.path(), KEYSPACE_NAMES, &opts),
    }
    .unwrap();
    let db = Storage::open(kv).unwrap();
    check_run(&db, commits);
    #[cfg(feature = "postgres")]
    if backend == Backend::Postgres {
        drop(db);
        plexus_kv::destroy_postgres(&url, &schema).unwrap();
    }
}

fn check_run(db: &Storage, commits: &[Vec<W>]) {
    db.keep_history("default").unwrap();
    let mut model: Vec<MV> = Vec::new();
    let mut times = Vec::new();
    let mut n = 0;
    for (c, ws) in commits.iter().enumerate() {
        let mut writes = Vec::new();
        let mut pending = Vec::new();
        let mut fails = false;
        for w in ws {
            n += 1;
            let id = format!("v{n}");
            let (write, mv) = match w {
                W::Assert {
                    edge,
                    entity,
                    valid,
                    val,
                } => {
                    let (k, lid) = (kind(*edge), format!("x{entity}"));
                    let write = match k {
                        Kind::Claim => unreachable!("the model writes nodes and edges"),
                        Kind::Node => VersionWrite::assert_node(
                            &lid,
                            NodeState {
                                labels: vec!["L".into()],
                                props: [("v".to_string(), Value::Int(*val))].into(),
                            },
                            interval(*valid),
                        ),
                        Kind::Edge => VersionWrite::assert_edge(
                            &lid,
                            EdgeState {
                                src: "a".into(),
                                dst: "b".into(),
                                rel_type: "R".into(),
                                props: [("v".to_string(), Value::Int(*val))].into(),
                            },
                            interval(*valid),
                        ),
                    };
                    (
                        write,
                        MV {
                            id: id.clone(),
                            kind: k,
                            lid,
                            op: Op::Assert,
                            valid: interval(*valid),
                            val: Some(*val),
                            commit: c,
                        },
                    )
                }
                W::Retract {
                    edge,
                    entity,
                    valid,
                } => {
                    let (k, lid) = (kind(*edge), format!("x{entity}"));
                    let write = VersionWrite::retract(k, &lid, interval(*valid)).reason("test");
                    (
                        write,
                        MV {
                            id: id.clone(),
                            kind: k,
                            lid,
                            op: Op::Retract,
                            valid: interval(*valid),
                            val: None,
                            commit: c,
                        },
                    )
                }
                W::Correct { target, valid, val } => {
                    let known: Vec<&MV> = model
                        .iter()
                        .chain(pending.iter())
                        .filter(|v| v.op != Op::Retract)
                        .collect();
                    if known.is_empty() {
                        continue;
                    }
                    let t = known[target % known.len()].clone();
                    let mut write = VersionWrite::correct(&t.id, state(t.kind, *val));
                    let iv = match valid {
                        Some(v) => {
                            write = write.valid(interval(*v));
                            interval(*v)
                        }
                        None => t.valid,
                    };
                    (
                        write,
                        MV {
                            id: id.clone(),
                            kind: t.kind,
                            lid: t.lid.clone(),
                            op: Op::Correct,
                            valid: iv,
                            val: Some(*val),
                            commit: c,
                        },
                    )
                }
                W::CorrectMissing => {
                    fails = true;
                    (
                        VersionWrite::correct("no-such-version", state(Kind::Node, 0)),
                        MV {
                            id: id.clone(),
                            kind: Kind::Node,
                            lid: String::new(),
                            op: Op::Correct,
                            valid: Interval::from(0),
                            val: None,
                            commit: c,
                        },
                    )
                }
            };
            writes.push(write.id(&id));
            pending.push(mv);
        }
        let result = commit_versions(db, "default", &writes);
        if fails {
            let e = result.unwrap_err();
            assert!(e.to_string().contains("no version with id"), "{e}");
        } else {
            let written = result.unwrap();
            assert_eq!(written.len(), pending.len());
            model.extend(pending);
        }
        times.push(db.system_time().unwrap());
    }
    let now = db.read("default").unwrap();
    check(&now, &model, commits.len());
    for (c, t) in times.iter().enumerate() {
        check(&db.read_as_of("default", *t).unwrap(), &model, c);
    }
}

fn commits() -> impl Strategy<Value = Vec<Vec<W>>> {
    proptest::collection::vec(proptest::collection::vec(w(), 1..6), 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn memory_backend_matches_the_model(commits in commits()) {
        run(Backend::Memory, &commits);
    }

    #[test]
    fn lmdb_backend_matches_the_model(commits in commits()) {
        run(Backend::Lmdb, &commits);
    }
}

#[cfg(feature = "fjall")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn fjall_backend_matches_the_model(commits in commits()) {
        run(Backend::Fjall, &commits);
    }
}

// Against a server every read is a round trip: 40 cases.
#[cfg(feature = "postgres")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn postgres_backend_matches_the_model(commits in commits()) {
        run(Backend::Postgres, &commits);
    }
}
