//! Parquet files in: typed columns, lists, dates, timestamps, nulls; a
//! truncated file is refused with nothing written.

use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, Date32Array, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use parquet::arrow::ArrowWriter;
use plexus_common::{Date, LocalDateTime, Value};
use plexus_ingest::{import, ImportOptions, Input};
use plexus_storage::{GraphRead, Storage};
use std::path::Path;
use std::sync::Arc;

/// Record batches imported into the default graph: the node batches as one
/// input, the edge batches (if any) as another.
fn import_batches(
    s: &Storage,
    nodes: Vec<RecordBatch>,
    edges: Vec<RecordBatch>,
) -> Result<plexus_ingest::ImportReport, plexus_ingest::IngestError> {
    let input = |batches: Vec<RecordBatch>| {
        (!batches.is_empty())
            .then(|| plexus_ingest::BatchInput {
                name: None,
                batches,
            })
            .into_iter()
            .collect()
    };
    plexus_ingest::import_batches(
        s,
        "default",
        input(nodes),
        input(edges),
        &Default::default(),
        &mut |_| {},
    )
}

fn db() -> Storage {
    Storage::in_memory().unwrap()
}

fn write(path: &Path, cols: Vec<(&str, ArrayRef)>) {
    let batch = RecordBatch::try_from_iter(cols).unwrap();
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn parquet_round_trip_and_truncated_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut labels = ListBuilder::new(StringBuilder::new());
    labels.values().append_value("P");
    labels.values().append_value("Q");
    labels.append(true);
    labels.append(true);
    let mut nums = ListBuilder::new(Int64Builder::new());
    nums.values().append_value(1);
    nums.values().append_value(2);
    nums.append(true);
    nums.append(false);
    let nodes = dir.path().join("n.parquet");
    write(
        &nodes,
        vec![
            (
                "id",
                Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
            ),
            ("labels", Arc::new(labels.finish())),
            ("score", Arc::new(Float64Array::from(vec![Some(1.5), None]))),
            ("nums", Arc::new(nums.finish())),
            ("born", Arc::new(Date32Array::from(vec![0, 365]))),
            (
                "seen",
                Arc::new(TimestampMicrosecondArray::from(vec![1_500_000, 0])),
            ),
        ],
    );
    let edges = dir.path().join("e.parquet");
    write(
        &edges,
        vec![
            ("src", Arc::new(StringArray::from(vec!["a"])) as ArrayRef),
            ("dst", Arc::new(StringArray::from(vec!["b"]))),
            ("eid", Arc::new(StringArray::from(vec!["e1"]))),
            ("w", Arc::new(Float64Array::from(vec![0.25]))),
        ],
    );
    let s = db();
    let n = [Input::parse(&nodes.to_string_lossy())];
    let e = [Input::parse(&format!("R={}", edges.to_string_lossy()))];
    let r = import(
        &s,
        "default",
        &n,
        &e,
        &ImportOptions::default(),
        &mut |_| {},
        None,
    )
    .unwrap();
    assert_eq!((r.nodes, r.edges), (2, 1));
    let t = s.read("default").unwrap();
    let a = t.node_by_key("a").unwrap().unwrap();
    assert_eq!(a.labels, vec!["P", "Q"]);
    assert_eq!(a.props["score"], Value::Float(1.5));
    assert_eq!(a.props["nums"], Value::from(vec![1, 2]));
    assert_eq!(
        a.props["born"],
        Value::Date(Date::from_ymd(1970, 1, 1).unwrap())
    );
    assert_eq!(
        a.props["seen"],
        Value::LocalDateTime(LocalDateTime {
            secs: 1,
            nanos: 500_000_000
        })
    );
    let b = t.node_by_key("b").unwrap().unwrap();
    assert!(
        b.labels.is_empty() && !b.props.contains_key("score") && !b.props.contains_key("nums"),
        "nulls are no properties"
    );
    assert_eq!(
        t.edge_by_key("e1").unwrap().unwrap().props["w"],
        Value::Float(0.25)
    );
    drop(t);

    let bytes = std::fs::read(&nodes).unwrap();
    let cut = dir.path().join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let s = db();
    let e = import(
        &s,
        "default",
        &[Input::parse(&cut.to_string_lossy())],
        &[],
        &ImportOptions::default(),
        &mut |_| {},
        None,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("cut.parquet:1: not a readable Parquet file"),
        "{e}"
    );
    assert_eq!(s.read("default").unwrap().node_count().unwrap(), 0);
}

#[test]
fn arrow_ipc_files_and_record_batches() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = RecordBatch::try_from_iter(vec![
        (
            "id",
            Arc::new(StringArray::from(vec!["a", "b", "c"])) as ArrayRef,
        ),
        ("label", Arc::new(StringArray::from(vec!["P", "P", "Q"]))),
        (
            "w",
            Arc::new(Float64Array::from(vec![Some(1.0), None, Some(3.0)])),
        ),
    ])
    .unwrap();
    let edges = RecordBatch::try_from_iter(vec![
        (
            "src",
            Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
        ),
        ("dst", Arc::new(StringArray::from(vec!["b", "c"]))),
        ("type", Arc::new(StringArray::from(vec!["R", "S"]))),
    ])
    .unwrap();
    // From Rust: record batches straight in.
    let s = db();
    let r = import_batches(&s, vec![nodes.clone()], vec![edges.clone()]).unwrap();
    assert_eq!((r.nodes, r.edges), (3, 2));
    let t = s.read("default").unwrap();
    assert_eq!(
        t.label_counts().unwrap(),
        vec![("P".to_string(), 2), ("Q".to_string(), 1)]
    );
    assert_eq!(
        t.type_counts().unwrap(),
        vec![("R".to_string(), 1), ("S".to_string(), 1)]
    );
    drop(t);
    // From an Arrow IPC file.
    let path = dir.path().join("n.arrow");
    let mut w = arrow_ipc::writer::FileWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        &nodes.schema(),
    )
    .unwrap();
    w.write(&nodes).unwrap();
    w.finish().unwrap();
    let s = db();
    let r = import(
        &s,
        "default",
        &[Input::parse(&path.to_string_lossy())],
        &[],
        &ImportOptions::default(),
        &mut |_| {},
        None,
    )
    .unwrap();
    assert_eq!(r.nodes, 3);
    assert_eq!(
        s.read("default")
            .unwrap()
            .node_by_key("c")
            .unwrap()
            .unwrap()
            .props["w"],
        Value::Float(3.0)
    );
    let bad = dir.path().join("bad.arrow");
    std::fs::write(&bad, b"not arrow").unwrap();
    let e = import(
        &db(),
        "default",
        &[Input::parse(&bad.to_string_lossy())],
        &[],
        &ImportOptions::default(),
        &mut |_| {},
        None,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("not a readable Arrow IPC file"),
        "{e}"
    );
    // A schema may name a column twice; an import refuses it, leaving
    // nothing behind.
    let twice = RecordBatch::try_from_iter(vec![
        ("id", Arc::new(StringArray::from(vec!["a"])) as ArrayRef),
        ("w", Arc::new(Float64Array::from(vec![1.0]))),
        ("w", Arc::new(Float64Array::from(vec![2.0]))),
    ])
    .unwrap();
    let s = db();
    let e = import_batches(&s, vec![twice], vec![]).unwrap_err();
    assert!(
        e.to_string()
            .contains("column 'w' appears twice (columns 2 and 3)"),
        "{e}"
    );
    assert_eq!(s.read("default").unwrap().node_count().unwrap(), 0);
}
