//! Structured fuzzing of the importers on stable Rust: CSV and JSON-lines
//! node and edge files mutated from valid seeds, and Parquet and Arrow IPC
//! files whose bytes are mutated (footers, page headers, metadata and
//! data alike), imported into a fresh store. Every input ends in a report or an error — never a panic — and
//! an import that fails leaves nothing behind; one that succeeds passes the
//! integrity check. Failing inputs are kept by proptest beside this file.
//! Longer: `PROPTEST_CASES=100000 cargo test --release -p plexus-ingest --test fuzz_import`.

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use plexus_ingest::{import, ImportOptions, Input};
use plexus_storage::{GraphRead, Storage};
use proptest::prelude::*;
use std::sync::{Arc, OnceLock};

const NODES_CSV: &str = "id:ID,name,age:INT,score:FLOAT,tags:STRING[],born:DATE,:LABEL\n\
a,Ann,34,1.5,x;y,1990-05-01,Admin\nb,\"Bob, Jr\",,2,,,\nc,Cy,7,,z,,Admin;User\n";
const EDGES_CSV: &str =
    ":START_ID,:END_ID,:TYPE,since:INT\na,b,KNOWS,2015\nb,c,KNOWS,\nc,a,LIKES,3\n";
const NODES_JSONL: &str = "{\"id\": \"a\", \"labels\": [\"P\"], \"name\": \"Ann\", \"n\": 1}\n\
{\"id\": \"b\", \"labels\": [\"P\", \"Q\"], \"tags\": [\"x\", \"y\"], \"f\": 1.5}\n\
{\"id\": \"c\", \"nested\": {\"k\": [1, 2]}, \"t\": true}\n";
const EDGES_JSONL: &str = "{\"src\": \"a\", \"dst\": \"b\", \"type\": \"KNOWS\", \"w\": 2}\n\
{\"src\": \"b\", \"dst\": \"c\", \"type\": \"KNOWS\"}\n";

/// Bytes that matter to the formats, for insertion.
const PIECES: &[&str] = &[
    ",",
    "\"",
    "\n",
    "\r\n",
    ";",
    ":",
    "{",
    "}",
    "[",
    "]",
    "\\",
    "é",
    "\u{0}",
    "-1",
    "99999999999999999999",
    "1e999",
    "NaN",
    "null",
    ":ID",
    ":INT",
    ":LABEL",
    ":START_ID",
    "x",
];

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600)
}

/// `seed` with up to five edits: a piece inserted, a byte removed, or a
/// byte replaced.
fn mutate(seed: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let edit = (
        any::<prop::sample::Index>(),
        proptest::sample::select(PIECES),
        0u8..3,
        any::<u8>(),
    );
    proptest::collection::vec(edit, 0..5).prop_map(move |edits| {
        let mut b = seed.as_bytes().to_vec();
        for (at, piece, kind, byte) in edits {
            let i = at.index(b.len() + 1);
            match kind {
                0 => {
                    let tail = b.split_off(i);
                    b.extend_from_slice(piece.as_bytes());
                    b.extend(tail);
                }
                1 if i < b.len() => {
                    b.remove(i);
                }
                _ if i < b.len() => b[i] = byte,
                _ => {}
            }
        }
        b
    })
}

/// A node batch (ids, labels, a string, an integer, a float with a null)
/// and an edge batch over it.
fn batches() -> (RecordBatch, RecordBatch) {
    let mut labels = ListBuilder::new(StringBuilder::new());
    for l in [&["P"][..], &["P", "Q"], &[]] {
        for x in l {
            labels.values().append_value(x);
        }
        labels.append(true);
    }
    let col = |a: ArrayRef| a;
    let nodes = RecordBatch::try_from_iter([
        ("id", col(Arc::new(StringArray::from(vec!["a", "b", "c"])))),
        ("labels", col(Arc::new(labels.finish()))),
        (
            "name",
            col(Arc::new(StringArray::from(vec![
                Some("Ann"),
                None,
                Some("Cy"),
            ]))),
        ),
        ("n", col(Arc::new(Int64Array::from(vec![1, -2, 3])))),
        (
            "f",
            col(Arc::new(Float64Array::from(vec![
                Some(1.5),
                None,
                Some(0.0),
            ]))),
        ),
    ])
    .unwrap();
    let edges = RecordBatch::try_from_iter([
        ("src", col(Arc::new(StringArray::from(vec!["a", "b"])))),
        ("dst", col(Arc::new(StringArray::from(vec!["b", "c"])))),
        ("type", col(Arc::new(StringArray::from(vec!["R", "S"])))),
        ("w", col(Arc::new(Int64Array::from(vec![7, 8])))),
    ])
    .unwrap();
    (nodes, edges)
}

/// Valid Parquet and Arrow IPC files of [`batches`], as bytes: (nodes, edges).
fn binary_seeds(ext: &str) -> &'static (Vec<u8>, Vec<u8>) {
    static PARQUET: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    static IPC: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    let encode = |b: &RecordBatch| -> Vec<u8> {
        let mut out = Vec::new();
        if ext == "parquet" {
            let mut w = ArrowWriter::try_new(&mut out, b.schema(), None).unwrap();
            w.write(b).unwrap();
            w.close().unwrap();
        } else {
            let mut w = arrow_ipc::writer::FileWriter::try_new(&mut out, &b.schema()).unwrap();
            w.write(b).unwrap();
            w.finish().unwrap();
        }
        out
    };
    let make = || {
        let (n, e) = batches();
        (encode(&n), encode(&e))
    };
    if ext == "parquet" {
        PARQUET.get_or_init(make)
    } else {
        IPC.get_or_init(make)
    }
}

/// `seed` with up to eight byte edits.
fn mutate_bytes(seed: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    plexus_common::fuzzing::byte_edits(Just(seed.to_vec()))
}

/// Writes the two files and imports them into a fresh store.
fn import_pair(
    nodes: &[u8],
    edges: &[u8],
    ext: &str,
) -> (
    Storage,
    Result<plexus_ingest::ImportReport, plexus_ingest::IngestError>,
) {
    let dir = tempfile::tempdir().unwrap();
    let (n, e) = (
        dir.path().join(format!("n.{ext}")),
        dir.path().join(format!("e.{ext}")),
    );
    std::fs::write(&n, nodes).unwrap();
    std::fs::write(&e, edges).unwrap();
    let s = Storage::in_memory().unwrap();
    let inputs = |p: &std::path::Path| vec![Input::parse(&p.to_string_lossy())];
    let r = import(
        &s,
        "default",
        &inputs(&n),
        &inputs(&e),
        &ImportOptions::default(),
        &mut |_| {},
        None,
    );
    (s, r)
}

/// Imports the two files; checks the all-or-nothing outcome.
fn check(nodes: &[u8], edges: &[u8], ext: &str) {
    let (s, r) = import_pair(nodes, edges, ext);
    let g = s.read("default").unwrap();
    match r {
        Ok(_) => assert!(s.check_integrity("default").unwrap().is_ok()),
        Err(err) => {
            assert_eq!(
                g.node_count().unwrap(),
                0,
                "a failed import left nodes: {err}"
            );
            assert_eq!(
                g.edge_count().unwrap(),
                0,
                "a failed import left edges: {err}"
            );
            assert!(!err.to_string().is_empty());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn csv_files(nodes in mutate(NODES_CSV), edges in mutate(EDGES_CSV)) {
        check(&nodes, &edges, "csv");
    }

    #[test]
    fn json_lines_files(nodes in mutate(NODES_JSONL), edges in mutate(EDGES_JSONL)) {
        check(&nodes, &edges, "jsonl");
    }

    #[test]
    fn parquet_files(
        nodes in mutate_bytes(&binary_seeds("parquet").0),
        edges in mutate_bytes(&binary_seeds("parquet").1),
    ) {
        check(&nodes, &edges, "parquet");
    }

    #[test]
    fn arrow_ipc_files(
        nodes in mutate_bytes(&binary_seeds("arrow").0),
        edges in mutate_bytes(&binary_seeds("arrow").1),
    ) {
        check(&nodes, &edges, "arrow");
    }
}

#[test]
fn the_seeds_import() {
    for (n, e, ext) in [
        (NODES_CSV, EDGES_CSV, "csv"),
        (NODES_JSONL, EDGES_JSONL, "jsonl"),
    ] {
        let (s, r) = import_pair(n.as_bytes(), e.as_bytes(), ext);
        r.unwrap_or_else(|e| panic!("{ext} seed: {e}"));
        assert_eq!(s.read("default").unwrap().node_count().unwrap(), 3, "{ext}");
    }
    for ext in ["parquet", "arrow"] {
        let (n, e) = binary_seeds(ext);
        let (s, r) = import_pair(n, e, ext);
        let report = r.unwrap_or_else(|e| panic!("{ext} seed: {e}"));
        assert_eq!((report.nodes, report.edges), (3, 2), "{ext}");
        assert!(s.check_integrity("default").unwrap().is_ok());
    }
}
