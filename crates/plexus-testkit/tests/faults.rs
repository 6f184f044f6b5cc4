//! Fault injection: a workload of transactions, a graph creation and a
//! bulk load runs over a store that fails one operation (an I/O error or
//! a full disk before a write, or a sync that fails after the write
//! landed), for every operation position in turn, on LMDB and in memory
//! (and fjall with its feature). Every fault must surface as an error —
//! never a panic — and after reopening the store without faults exactly
//! the acknowledged commits are there, the failed one not at all or (when
//! only its sync failed) whole, and the integrity check passes.

use plexus_kv::{Backend, KvOptions, KvStore};
use plexus_storage::{
    BulkEdge, BulkNode, GraphRead, Origin, Props, Storage, StorageError, KEYSPACE_NAMES,
};
use plexus_testkit::faulty::{Fault, FaultyKv, Plan};
use std::sync::Arc;

const TXNS: i64 = 20;
const BULK_NODES: usize = 40;

/// How far the workload got: commits acknowledged (transactions, then the
/// graph creation and the bulk load as two more steps).
#[derive(Debug, Default)]
struct Outcome {
    acknowledged: i64,
    error: Option<StorageError>,
}

fn props(v: i64) -> Props {
    Props::from([("v".to_string(), plexus_common::Value::Int(v))])
}

/// The bulk load's nodes.
fn bulk_nodes() -> impl Iterator<Item = Result<BulkNode, StorageError>> {
    (0..BULK_NODES).map(|i| {
        Ok(BulkNode {
            key: format!("n{i}"),
            labels: vec!["N".into()],
            props: props(i as i64),
            origin: Origin::new("test"),
        })
    })
}

fn workload(kv: Arc<dyn KvStore>) -> Outcome {
    let mut out = Outcome::default();
    let run = |out: &mut Outcome| -> Result<(), StorageError> {
        let s = Storage::open(kv)?;
        for t in 0..TXNS {
            let mut w = s.write("default")?;
            let a = w.create_node(Some(&format!("t{t}a")), &["A"], &props(t))?;
            let b = w.create_node(Some(&format!("t{t}b")), &["B"], &props(-t))?;
            w.create_edge(None, a, b, "R", &props(t))?;
            if t > 0 {
                // Move the previous transaction's value: an update that a
                // failed commit must not leave half done.
                let prev = w
                    .node_id(&format!("t{}a", t - 1))?
                    .ok_or(StorageError::Internal("lost".into()))?;
                w.set_node_property(prev, "v", plexus_common::Value::Int(100 + t))?;
            }
            w.commit()?;
            out.acknowledged += 1;
        }
        s.create_graph("bulk")?;
        out.acknowledged += 1;
        let mut nodes = bulk_nodes();
        let mut edges = (1..BULK_NODES).map(|i| {
            Ok(BulkEdge {
                key: None,
                src: format!("n{}", i - 1),
                dst: format!("n{i}"),
                rel_type: "NEXT".into(),
                props: Props::new(),
                origin: Origin::new("test"),
            })
        });
        s.bulk_load("bulk", &mut nodes, &mut edges)?;
        out.acknowledged += 1;
        Ok(())
    };
    if let Err(e) = run(&mut out) {
        out.error = Some(e);
    }
    out
}

/// The workload's steps a store holds: transactions, then the bulk
/// graph's creation and its load.
fn steps_held(s: &Storage) -> i64 {
    let r = s.read("default").unwrap();
    let txns = (0..TXNS)
        .take_while(|t| r.node_id(&format!("t{t}a")).unwrap().is_some())
        .count() as i64;
    let bulk = match s.read("bulk") {
        Ok(b) => 1 + i64::from(b.node_count().unwrap() > 0),
        Err(_) => 0,
    };
    txns + bulk
}

/// Checks what a store holds against what the workload acknowledged; with
/// `landed`, the failed step's write reached the store (its sync failed),
/// so it may be there too — whole.
fn verify(kv: Arc<dyn KvStore>, acknowledged: i64, landed: bool, what: &str) {
    let s = Storage::open(kv).unwrap_or_else(|e| panic!("{what}: reopening failed: {e}"));
    let held = steps_held(&s);
    let acknowledged = if landed && held == acknowledged + 1 {
        held
    } else {
        acknowledged
    };
    let r = s.read("default").unwrap_or_else(|e| panic!("{what}: {e}"));
    let committed = acknowledged.min(TXNS);
    for t in 0..TXNS {
        let a = r.node_id(&format!("t{t}a")).unwrap();
        if t >= committed {
            assert!(a.is_none(), "{what}: transaction {t} failed but is visible");
            continue;
        }
        let a = a.unwrap_or_else(|| panic!("{what}: acknowledged transaction {t} lost"));
        // Updated by the next transaction when that one was acknowledged.
        let want = if t + 1 < committed { 100 + t + 1 } else { t };
        assert_eq!(
            r.node_property(a, "v").unwrap(),
            Some(plexus_common::Value::Int(want)),
            "{what}: node t{t}a"
        );
        assert_eq!(
            r.degree(a, plexus_storage::Direction::Out, None).unwrap(),
            1,
            "{what}"
        );
    }
    let report = s.check_integrity("default").unwrap();
    assert!(report.is_ok(), "{what}: {:?}", report.problems);
    let bulk_created = acknowledged > TXNS;
    assert_eq!(s.has_graph("bulk"), bulk_created, "{what}: the bulk graph");
    if bulk_created {
        let b = s.read("bulk").unwrap();
        let loaded = acknowledged > TXNS + 1;
        let want = if loaded { BULK_NODES as u64 } else { 0 };
        assert_eq!(b.node_count().unwrap(), want, "{what}: bulk nodes");
        assert_eq!(
            b.edge_count().unwrap(),
            want.saturating_sub(1),
            "{what}: bulk edges"
        );
        assert!(s.check_integrity("bulk").unwrap().is_ok(), "{what}");
    }
}

fn open(backend: Backend, dir: &std::path::Path) -> Arc<dyn KvStore> {
    plexus_kv::open(backend, dir, KEYSPACE_NAMES, &KvOptions::default()).unwrap()
}

/// Runs the workload once per operation position; the faults injected.
fn every_position(backend: Backend, fault: Fault) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let clean = Plan::new(0, fault);
    let out = workload(FaultyKv::wrap(
        open(backend, &dir.path().join("clean")),
        clean.clone(),
    ));
    assert!(
        out.error.is_none(),
        "the workload fails with no fault: {:?}",
        out.error
    );
    let total = clean.operations();
    eprintln!("{backend:?} {fault:?}: {total} positions");
    let mut injected = 0;
    for at in 1..=total {
        let path = dir.path().join(format!("at{at}"));
        let inner = open(backend, &path);
        let plan = Plan::new(at, fault);
        let out = workload(FaultyKv::wrap(inner.clone(), plan.clone()));
        assert!(plan.fired(), "operation {at} of {total} was never reached");
        let what = format!("{backend:?}, {fault:?} at operation {at} of {total}");
        let e = out
            .error
            .unwrap_or_else(|| panic!("{what}: the fault did not surface"));
        let kind = e.kind();
        assert!(
            matches!(
                kind,
                plexus_common::ErrorKind::Io | plexus_common::ErrorKind::ResourceLimit
            ),
            "{what}: surfaced as {kind:?}: {e}"
        );
        // Reopen without faults: from disk, or the same store in memory.
        let reopened = if backend == Backend::Memory {
            inner
        } else {
            drop(inner);
            open(backend, &path)
        };
        verify(
            reopened,
            out.acknowledged,
            fault == Fault::SyncFailed,
            &what,
        );
        injected += 1;
        std::fs::remove_dir_all(&path).ok();
    }
    injected
}

#[test]
fn every_fault_surfaces_and_loses_no_acknowledged_commit() {
    let mut injected = 0;
    let mut backends = vec![Backend::Lmdb, Backend::Memory];
    if cfg!(feature = "fjall") {
        backends.push(Backend::Fjall);
    }
    for backend in backends {
        for fault in [Fault::Io, Fault::Full, Fault::SyncFailed] {
            injected += every_position(backend, fault);
        }
    }
    eprintln!("{injected} faults injected");
    assert!(injected >= 700, "only {injected} faults injected");
}

/// A bulk load into a graph that keeps history, then a version of what it
/// loaded: a fault at any operation, then a reopen without faults, and
/// the history agrees with the graph — a load that landed is there as of
/// now, even when its versions were not written before the failure.
#[test]
fn a_bulk_load_that_landed_is_in_the_history_after_any_fault() {
    let load = |kv: Arc<dyn KvStore>| -> Result<(), StorageError> {
        let s = Storage::open(kv)?;
        s.create_graph("bulk")?;
        s.keep_history("bulk")?;
        let mut nodes = bulk_nodes();
        s.bulk_load("bulk", &mut nodes, &mut std::iter::empty())?;
        Ok(())
    };
    let dir = tempfile::tempdir().unwrap();
    let clean = Plan::new(0, Fault::Io);
    load(FaultyKv::wrap(
        open(Backend::Lmdb, &dir.path().join("clean")),
        clean.clone(),
    ))
    .unwrap();
    let mut landed_without_versions = 0;
    for at in 1..=clean.operations() {
        let path = dir.path().join(format!("at{at}"));
        let failed = load(FaultyKv::wrap(
            open(Backend::Lmdb, &path),
            Plan::new(at, Fault::Io),
        ));
        assert!(failed.is_err(), "operation {at}: no error");
        let s = Storage::open(open(Backend::Lmdb, &path)).unwrap();
        let Ok(now) = s.read("bulk") else { continue };
        let count = now.node_count().unwrap();
        if s.history_start("bulk").unwrap().is_none() {
            continue;
        }
        let past = s.read_as_of("bulk", s.system_time().unwrap()).unwrap();
        // The load landed and failed after: its versions were not written.
        if count > 0 {
            landed_without_versions += 1;
        }
        assert_eq!(
            past.node_count().unwrap(),
            count,
            "fault at operation {at}: the history disagrees with the graph"
        );
    }
    assert!(landed_without_versions > 0, "no fault fell after the load");
}
