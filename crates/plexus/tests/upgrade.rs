//! Databases written by earlier formats (1: per-edge adjacency keys and
//! degree counters; 2: one id map entry per user id), made by the last
//! Plexus build of each (`tests/fixtures/format-N/README.md` says how):
//! opening one fails with advice, `Database::upgrade` converts it, and then
//! it answers as the old build answered (its answers were saved beside it).

use plexus::{Database, ErrorKind, GraphRead, Options, Params, Value};
use std::path::{Path, PathBuf};

fn fixture(format: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/format-{format}"))
}

/// A copy of the fixture database, to convert without touching the original.
fn copy_of_fixture(format: u32, into: &Path) -> PathBuf {
    let db = into.join("db");
    std::fs::create_dir_all(db.join("data")).unwrap();
    let from = fixture(format).join("db");
    std::fs::copy(from.join("PLEXUS"), db.join("PLEXUS")).unwrap();
    std::fs::copy(from.join("data/data.mdb"), db.join("data/data.mdb")).unwrap();
    db
}

/// Rows as the CLI's CSV output prints them: fields joined by commas.
fn csv(db: &Database, query: &str) -> Vec<String> {
    let t = db
        .query("default", query, &Params::new())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    t.rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::String(s) => s.to_string(),
                    Value::Int(i) => i.to_string(),
                    other => panic!("unexpected value {other:?}"),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// The old build's answer to a query: `expected/<name>.csv` without its
/// header line.
fn expected(format: u32, name: &str) -> Vec<String> {
    let path = fixture(format).join(format!("expected/{name}.csv"));
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().skip(1).map(str::to_string).collect()
}

const EDGES: &str = "MATCH (a)-[r]->(b) RETURN a.name AS a, type(r) AS t, b.name AS b, r.w AS w ORDER BY a, t, b, w";
const OUT_DEGREES: &str =
    "MATCH (n) OPTIONAL MATCH (n)-->(m) RETURN n.name AS n, count(m) AS out ORDER BY n";
const KNOWS_DEGREES: &str =
    "MATCH (n) OPTIONAL MATCH (n)-[:KNOWS]-(m) RETURN n.name AS n, count(m) AS knows ORDER BY n";

#[test]
fn a_format_1_database_is_refused_then_upgraded_and_answers_as_before() {
    let report = refused_then_upgraded(1);
    assert!(report.entries > 600 && report.blocks > 40, "{report:?}");
    assert!(report.counters > 40, "{report:?}");
    // The old build's `stats --space` counted 307 edge records, 41 node
    // ids and 305 edge ids.
    assert_eq!(report.edge_records, 307, "{report:?}");
    assert_eq!(report.id_values, 41 + 305, "{report:?}");
    assert_eq!(report.index_entries, 41, "one label member a node");
}

#[test]
fn a_format_2_database_is_refused_then_upgraded_and_answers_as_before() {
    let report = refused_then_upgraded(2);
    // The adjacency stays; 307 edge records are rewritten with their user
    // ids prefix-compressed, 41 node ids and 305 edge ids packed.
    assert_eq!(
        (report.entries, report.edge_records, report.counters),
        (0, 307, 0),
        "{report:?}"
    );
    assert_eq!(report.id_values, 41 + 305, "{report:?}");
    assert_eq!(report.index_entries, 41, "one label member a node");
}

/// Converts a copy of the format's fixture after checking that opening it
/// fails with advice; checks its answers, ids, writes and integrity.
fn refused_then_upgraded(format: u32) -> plexus::UpgradeReport {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_of_fixture(format, dir.path());
    let e = Database::open(&path, Options::default()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(
        e.to_string().contains(&format!("format version {format}")),
        "{e}"
    );
    assert!(e.to_string().contains("plexus --db"), "{e}");
    assert!(e.to_string().contains("upgrade"), "{e}");

    let mut seen = 0;
    let report = Database::upgrade(&path, &mut |n| seen = n).unwrap();
    assert_eq!((report.from, report.to), (format, plexus::FORMAT_VERSION));
    assert!(
        seen >= report.entries + report.id_values,
        "{seen} {report:?}"
    );

    let db = Database::open(&path, Options::default()).unwrap();
    let check = db.check("default").unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    assert_eq!(csv(&db, EDGES), expected(format, "edges"));
    assert_eq!(csv(&db, OUT_DEGREES), expected(format, "out-degrees"));
    assert_eq!(csv(&db, KNOWS_DEGREES), expected(format, "knows-degrees"));
    // User ids still find their nodes and edges (the id maps converted).
    let r = db.read("default").unwrap();
    let (p0, p7) = (
        r.node_id("p0").unwrap().unwrap(),
        r.node_id("p7").unwrap().unwrap(),
    );
    let e = r.edge_by_key("e20").unwrap().unwrap();
    assert_eq!((e.src, e.dst, e.rel_type.as_str()), (p0, p7, "KNOWS"));
    assert!(r.node_id("p77").unwrap().is_none());
    assert!(r.edge_by_key("e200").unwrap().is_none(), "deleted before");
    drop(r);
    // And it takes writes in the new format.
    db.query(
        "default",
        "MATCH (a {name: 'name0'}), (b {name: 'name9'}) CREATE (a)-[:KNOWS {w: -1}]->(b)",
        &Params::new(),
    )
    .unwrap();
    assert!(db.check("default").unwrap().is_ok());
    drop(db);

    // Run again: nothing left to do.
    let again = Database::upgrade(&path, &mut |_| {}).unwrap();
    assert_eq!((again.from, again.entries), (plexus::FORMAT_VERSION, 0));
    report
}
