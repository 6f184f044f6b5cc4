//! System-time history: reads as of earlier instants, bulk loads, pruning,
//! reopening. The random-operation check against the reference model is
//! `plexus-testkit/tests/model_vs_storage.rs`.

use plexus_common::Value;
use plexus_kv::{Backend, KvOptions};
use plexus_storage::{
    BulkEdge, BulkNode, DeleteMode, Direction, GraphRead, Origin, Props, Storage, StorageError,
    KEYSPACE_NAMES,
};

fn props(pairs: &[(&str, i64)]) -> Props {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Value::Int(*v)))
        .collect()
}

fn open(dir: &std::path::Path) -> Storage {
    let kv = plexus_kv::open(Backend::Lmdb, dir, KEYSPACE_NAMES, &KvOptions::default()).unwrap();
    Storage::open(kv).unwrap()
}

/// The value of `n.age` as of `t`, `None` when `ann` did not exist then.
fn age_as_of(db: &Storage, t: u64) -> Option<Value> {
    let r = db.read_as_of("default", t).unwrap();
    let id = r.node_id("ann").unwrap()?;
    r.node(id).unwrap().unwrap().props.get("age").cloned()
}

#[test]
fn reads_as_of_each_commit_see_that_commit() {
    let db = Storage::in_memory().unwrap();
    let start = db.keep_history("default").unwrap();
    let mut times = Vec::new();
    for age in 1..=5 {
        let mut t = db.write("default").unwrap();
        t.put_node("ann", &["Person"], &props(&[("age", age)]))
            .unwrap();
        t.commit().unwrap();
        times.push(db.system_time().unwrap());
    }
    let mut t = db.write("default").unwrap();
    let ann = t.node_id("ann").unwrap().unwrap();
    t.delete_node(ann, DeleteMode::Detach).unwrap();
    t.commit().unwrap();
    let deleted = db.system_time().unwrap();

    assert_eq!(age_as_of(&db, start), None, "ann did not exist yet");
    for (i, t) in times.iter().enumerate() {
        assert_eq!(age_as_of(&db, *t), Some(Value::Int(i as i64 + 1)));
    }
    assert_eq!(age_as_of(&db, deleted - 1), Some(Value::Int(5)));
    assert_eq!(age_as_of(&db, deleted), None);
    assert_eq!(db.read("default").unwrap().node_count().unwrap(), 0);
    let as_of = db.read_as_of("default", times[2]).unwrap();
    assert_eq!(as_of.as_of(), Some(times[2]));
    assert_eq!(as_of.node_count().unwrap(), 1);
    assert_eq!(as_of.label_count("Person").unwrap(), 1);

    let history = db.node_history("default", ann).unwrap();
    let ages: Vec<Option<Value>> = history
        .iter()
        .map(|(_, n)| n.as_ref().map(|n| n.props["age"].clone()))
        .collect();
    let mut want: Vec<Option<Value>> = (1..=5).rev().map(|a| Some(Value::Int(a))).collect();
    want.insert(0, None);
    assert_eq!(ages, want, "newest first, the deletion on top");
}

#[test]
fn reads_before_history_starts_are_refused() {
    let db = Storage::in_memory().unwrap();
    let err = db.read_as_of("default", 1).err().unwrap();
    assert!(matches!(err, StorageError::NoHistory { starts: None, .. }));
    assert!(err.to_string().contains("keeps no history"), "{err}");
    let start = db.keep_history("default").unwrap();
    assert_eq!(db.keep_history("default").unwrap(), start, "kept once");
    let err = db.read_as_of("default", start - 1).err().unwrap();
    assert!(err.to_string().contains("keeps history from"), "{err}");
    db.drop_history("default").unwrap();
    assert_eq!(db.history_start("default").unwrap(), None);
    assert!(db.read_as_of("default", start).is_err());
}

#[test]
fn history_kept_later_starts_with_what_the_graph_holds() {
    let db = Storage::in_memory().unwrap();
    let mut t = db.write("default").unwrap();
    let a = t.put_node("a", &["P"], &props(&[("v", 1)])).unwrap();
    let b = t.put_node("b", &["P"], &props(&[])).unwrap();
    t.create_edge(Some("ab"), a, b, "KNOWS", &props(&[("w", 7)]))
        .unwrap();
    t.commit().unwrap();
    let start = db.keep_history("default").unwrap();
    let mut t = db.write("default").unwrap();
    let e = t.edge_id("ab").unwrap().unwrap();
    t.delete_edge(e).unwrap();
    t.set_node_property(a, "v", Value::Int(2)).unwrap();
    t.commit().unwrap();

    let then = db.read_as_of("default", start).unwrap();
    assert_eq!(
        then.neighbors(a, Direction::Out, Some("KNOWS"))
            .unwrap()
            .len(),
        1
    );
    assert_eq!(then.degree(b, Direction::In, None).unwrap(), 1);
    let e = then.edge(e).unwrap().unwrap();
    assert_eq!(e.props["w"], Value::Int(7));
    assert_eq!(then.type_count("KNOWS").unwrap(), 1);
    assert_eq!(then.node(a).unwrap().unwrap().props["v"], Value::Int(1));
    let now = db.read_as_of("default", db.system_time().unwrap()).unwrap();
    assert!(now.neighbors(a, Direction::Out, None).unwrap().is_empty());
    assert_eq!(now.edge_count().unwrap(), 0);
    assert_eq!(now.node(a).unwrap().unwrap().props["v"], Value::Int(2));
}

#[test]
fn a_bulk_load_is_kept_and_pruning_keeps_what_later_reads_need() {
    let db = Storage::in_memory().unwrap();
    db.keep_history("default").unwrap();
    let nodes = (0..100).map(|i| {
        Ok(BulkNode {
            key: format!("n{i}"),
            labels: vec!["N".into()],
            props: props(&[("i", i)]),
            origin: Origin::new("test"),
        })
    });
    let edges = (1..100).map(|i| {
        Ok(BulkEdge {
            key: None,
            src: "n0".into(),
            dst: format!("n{i}"),
            rel_type: "E".into(),
            props: Props::new(),
            origin: Origin::new("test"),
        })
    });
    db.bulk_load("default", &mut nodes.into_iter(), &mut edges.into_iter())
        .unwrap();
    let loaded = db.system_time().unwrap();
    for round in 0..3 {
        let mut t = db.write("default").unwrap();
        let n0 = t.node_id("n0").unwrap().unwrap();
        t.set_node_property(n0, "round", Value::Int(round)).unwrap();
        t.commit().unwrap();
    }
    let last = db.system_time().unwrap();
    let r = db.read_as_of("default", loaded).unwrap();
    assert_eq!(r.node_count().unwrap(), 100);
    let n0 = r.node_id("n0").unwrap().unwrap();
    assert_eq!(r.degree(n0, Direction::Out, Some("E")).unwrap(), 99);
    assert_eq!(r.nodes_with_label("N").count(), 100);

    // Pruning before the last commit keeps every read from there on.
    let removed = db.prune_history("default", last - 1).unwrap();
    // The two older versions of n0, and of the graph's node-version counter.
    assert_eq!(removed, 4);
    assert!(db.read_as_of("default", loaded).is_err());
    let r = db.read_as_of("default", last - 1).unwrap();
    assert_eq!(r.node(n0).unwrap().unwrap().props["round"], Value::Int(1));
    assert_eq!(r.node_count().unwrap(), 100);
    let r = db.read_as_of("default", last).unwrap();
    assert_eq!(r.node(n0).unwrap().unwrap().props["round"], Value::Int(2));
}

#[test]
fn history_and_its_clock_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let db = open(dir.path());
        db.keep_history("default").unwrap();
        let mut t = db.write("default").unwrap();
        t.put_node("ann", &[], &props(&[("age", 1)])).unwrap();
        t.commit().unwrap();
        db.system_time().unwrap()
    };
    let db = open(dir.path());
    let mut t = db.write("default").unwrap();
    t.put_node("ann", &[], &props(&[("age", 2)])).unwrap();
    t.commit().unwrap();
    let second = db.system_time().unwrap();
    assert!(second > first, "the clock never goes back");
    assert_eq!(age_as_of(&db, first), Some(Value::Int(1)));
    assert_eq!(age_as_of(&db, second), Some(Value::Int(2)));
}

#[test]
fn graphs_without_history_write_no_versions() {
    let db = Storage::in_memory().unwrap();
    db.create_graph("other").unwrap();
    db.keep_history("other").unwrap();
    let mut t = db.write("default").unwrap();
    t.put_node("ann", &[], &Props::new()).unwrap();
    t.commit().unwrap();
    let space = db.space().unwrap();
    let history = space
        .keyspaces
        .iter()
        .find(|k| k.name == "history")
        .unwrap();
    // The start of `other`'s history and its empty counters only.
    assert!(history.entries <= 2, "{} entries", history.entries);
}

/// A key stamped at commit holds the commit's system time: pending inside
/// the transaction, the clock's stamp after, history or not, in either
/// part of the valid-time keyspace; in a graph keeping history, the same
/// stamp as the commit's versions. The unversioned part has no history: a
/// read as of an earlier system time sees what it holds now.
#[test]
fn keys_stamped_at_commit_hold_the_commits_system_time() {
    use plexus_storage::{ValidPart::*, PENDING_STAMP};
    let db = Storage::in_memory().unwrap();
    let stamped = |db: &Storage, key: &[u8]| -> Option<u64> {
        let v = db
            .read("default")
            .unwrap()
            .valid_time_get(Unversioned, key)
            .unwrap()?;
        Some(u64::from_be_bytes(<[u8; 8]>::try_from(&v[..]).unwrap()))
    };
    let refused = db.write("default").unwrap().valid_time_write(
        Unversioned,
        b"s",
        b"x",
        Some(PENDING_STAMP.to_vec()),
    );
    assert!(refused.is_err(), "the pending stamp is not a value");
    // Without history.
    let before = db.system_time().unwrap();
    let mut t = db.write("default").unwrap();
    t.valid_time_stamp(Unversioned, b"s", b"Ra").unwrap();
    t.valid_time_write(Versioned, b"s", b"Va", Some(b"version a".to_vec()))
        .unwrap();
    let pending = t.valid_time_get(Unversioned, b"Ra").unwrap().unwrap();
    assert_eq!(pending, PENDING_STAMP);
    assert_eq!(t.valid_time_get(Versioned, b"Ra").unwrap(), None);
    t.commit().unwrap();
    let a = stamped(&db, b"Ra").unwrap();
    assert!(a > before, "a stamp from the clock, past every earlier one");
    assert_eq!(a, db.system_time().unwrap());
    // A transaction rolled back stamps nothing.
    let mut t = db.write("default").unwrap();
    t.valid_time_stamp(Unversioned, b"s", b"Rgone").unwrap();
    t.rollback();
    assert_eq!(stamped(&db, b"Rgone"), None);
    // With history: the stamp of the commit's versions, in either part.
    db.keep_history("default").unwrap();
    let mut t = db.write("default").unwrap();
    t.valid_time_stamp(Unversioned, b"s", b"Rb").unwrap();
    t.valid_time_stamp(Versioned, b"s", b"Rv").unwrap();
    t.valid_time_write(Versioned, b"s", b"Vb", Some(b"version b".to_vec()))
        .unwrap();
    t.commit().unwrap();
    let b = stamped(&db, b"Rb").unwrap();
    assert!(b > a);
    let r = db.read("default").unwrap();
    let v = r.valid_time_get(Versioned, b"Rv").unwrap().unwrap();
    assert_eq!(v, b.to_be_bytes());
    assert_eq!(r.valid_time_recorded(b"Vb").unwrap(), Some(b));
    assert_eq!(r.valid_time_recorded(b"Rv").unwrap(), Some(b));
    // The unversioned part is not in the history.
    assert_eq!(r.valid_time_recorded(b"Rb").unwrap(), None);
    let earlier = db.read_as_of("default", b - 1).unwrap();
    assert_eq!(earlier.valid_time_get(Versioned, b"Rv").unwrap(), None);
    assert_eq!(earlier.valid_time_get(Versioned, b"Vb").unwrap(), None);
    let now = earlier.valid_time_get(Unversioned, b"Rb").unwrap().unwrap();
    assert_eq!(now, b.to_be_bytes());
}
