//! A store opened read-only beside a writer of the same key-value store (as
//! another process opens an LMDB file): it sees every commit, names and
//! graphs the writer adds after it opened, and refuses to write.

use plexus_common::Value;
use plexus_kv::{Backend, KvError, KvOptions};
use plexus_storage::*;

/// One store that two `Storage`s share, as two processes share a file.
fn memory_kv() -> std::sync::Arc<dyn plexus_kv::KvStore> {
    let (path, opts) = (std::path::Path::new(""), KvOptions::default());
    plexus_kv::open(Backend::Memory, path, KEYSPACE_NAMES, &opts).unwrap()
}

#[test]
fn a_reader_follows_the_writer_and_refuses_to_write() {
    let kv = memory_kv();
    let writer = Storage::open(kv.clone()).unwrap();
    let reader = Storage::open_read_only(kv).unwrap();
    assert!(reader.is_read_only() && !writer.is_read_only());

    // Names and a graph the reader's catalog has never seen.
    let mut t = writer.write("default").unwrap();
    let props = Props::from([("fresh".to_string(), Value::Int(7))]);
    let n = t.create_node(Some("n"), &["New"], &props).unwrap();
    t.commit().unwrap();
    writer.create_graph("later").unwrap();

    let r = reader.read("default").unwrap();
    assert_eq!(r.label_count("New").unwrap(), 1);
    let node = r.node(n).unwrap().unwrap();
    assert_eq!(node.labels, vec!["New".to_string()]);
    assert_eq!(node.props.get("fresh"), Some(&Value::Int(7)));
    assert!(reader.graphs().contains(&"later".to_string()));
    assert!(reader.read("later").is_ok());

    let refused = |e: StorageError| matches!(e, StorageError::Kv(KvError::ReadOnly));
    assert!(refused(reader.write("default").err().unwrap()));
    assert!(refused(reader.create_graph("mine").unwrap_err()));
    let mut none = std::iter::empty();
    let mut no_edges = std::iter::empty();
    assert!(refused(
        reader
            .bulk_load("later", &mut none, &mut no_edges)
            .unwrap_err()
    ));
    assert!(!writer.has_graph("mine"));
}

#[test]
fn a_reader_needs_a_database() {
    let kv = memory_kv();
    let e = Storage::open_read_only(kv.clone()).err().unwrap();
    assert!(e.to_string().contains("format version"), "{e}");
    // Nothing was written: a writer still initialises it.
    Storage::open(kv).unwrap();
}
