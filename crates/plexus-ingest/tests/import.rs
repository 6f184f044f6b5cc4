//! Files in, graph out: round trips for each format, and bad input that is
//! refused with its file, line and column, leaving the database unchanged.

use plexus_common::{Date, Value};
use plexus_ingest::{import, ImportOptions, Input};
use plexus_storage::{Direction, GraphRead, Storage};
use std::path::Path;

fn db() -> Storage {
    Storage::in_memory().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    std::fs::write(dir.join(name), text).unwrap();
    dir.join(name).to_string_lossy().to_string()
}

fn run(
    s: &Storage,
    nodes: &[String],
    edges: &[String],
) -> Result<plexus_ingest::ImportReport, plexus_ingest::IngestError> {
    let n: Vec<Input> = nodes.iter().map(|a| Input::parse(a)).collect();
    let e: Vec<Input> = edges.iter().map(|a| Input::parse(a)).collect();
    import(
        s,
        "default",
        &n,
        &e,
        &ImportOptions::default(),
        &mut |_| {},
        None,
    )
}

#[test]
fn csv_round_trip_with_types_lists_and_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let people = write(
        dir.path(),
        "people.csv",
        "id:ID,name,age:INT,score:FLOAT,tags:STRING[],born:DATE,:LABEL\na,Ann,34,1.5,x;y,1990-05-01,Admin\nb,\"Bob, Jr\",,2,,,\n",
    );
    let knows = write(
        dir.path(),
        "knows.csv",
        ":START_ID,:END_ID,since:INT\na,b,2015\nb,a,\n",
    );
    let s = db();
    let r = run(
        &s,
        &[format!("Person={people}")],
        &[format!("KNOWS={knows}")],
    )
    .unwrap();
    assert_eq!((r.nodes, r.edges), (2, 2));
    assert_eq!(r.files.iter().map(|f| f.1).collect::<Vec<_>>(), vec![2, 2]);
    let t = s.read("default").unwrap();
    let a = t.node_by_key("a").unwrap().unwrap();
    assert_eq!(a.labels, vec!["Admin", "Person"]);
    assert_eq!(a.props["age"], Value::Int(34));
    assert_eq!(a.props["score"], Value::Float(1.5));
    assert_eq!(a.props["tags"], Value::from(vec!["x", "y"]));
    assert_eq!(
        a.props["born"],
        Value::Date(Date::from_ymd(1990, 5, 1).unwrap())
    );
    let b = t.node_by_key("b").unwrap().unwrap();
    assert_eq!(b.props["name"], Value::from("Bob, Jr"));
    assert!(
        !b.props.contains_key("age"),
        "an empty field is no property"
    );
    assert_eq!(b.props["score"], Value::Float(2.0));
    let out = t.neighbors(a.id, Direction::Out, Some("KNOWS")).unwrap();
    assert_eq!(out.len(), 1);
    let e = t.edge(out[0].edge).unwrap().unwrap();
    assert_eq!(e.props["since"], Value::Int(2015));
    assert_eq!(e.key, "", "edges without an id column have none");
    assert!(s.check_integrity("default").unwrap().is_ok());
}

#[test]
fn json_lines_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write(dir.path(), "n.jsonl", "{\"id\": \"a\", \"labels\": [\"P\"], \"x\": [1, 2], \"m\": {\"k\": null}}\n\n{\"id\": 7, \"labels\": \"Q\", \"z\": null}\n");
    let edges = write(
        dir.path(),
        "e.jsonl",
        "{\"start\": \"a\", \"end\": \"7\", \"type\": \"R\", \"id\": \"r1\", \"w\": 0.5}\n",
    );
    let s = db();
    let r = run(&s, &[nodes], &[edges]).unwrap();
    assert_eq!((r.nodes, r.edges), (2, 1));
    let t = s.read("default").unwrap();
    let a = t.node_by_key("a").unwrap().unwrap();
    assert_eq!(a.props["x"], Value::from(vec![1, 2]));
    let seven = t.node_by_key("7").unwrap().unwrap();
    assert_eq!(seven.labels, vec!["Q"]);
    assert!(seven.props.is_empty(), "null properties are not stored");
    assert_eq!(
        t.edge_by_key("r1").unwrap().unwrap().props["w"],
        Value::Float(0.5)
    );
}

#[test]
fn bad_input_names_its_place_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good_nodes = write(d, "good.csv", "id:ID,age:INT\na,1\nb,2\n");
    let cases: Vec<(Vec<String>, Vec<String>, &str)> = vec![
        (
            vec![write(d, "short.csv", "id:ID,age:INT\na,1\nb\n")],
            vec![],
            "short.csv:3: the row has 1 fields but the header has 2",
        ),
        (
            vec![write(d, "type.csv", "id:ID,age:INT\na,1\nb,old\n")],
            vec![],
            "type.csv:3:2: column 'age': 'old' is not a valid INT",
        ),
        (
            vec![good_nodes.clone()],
            vec![format!(
                "R={}",
                write(d, "dangling.csv", ":START_ID,:END_ID\na,zz\n")
            )],
            "dangling.csv:2: no node with id 'zz'",
        ),
        (
            vec![good_nodes.clone()],
            vec![format!(
                "R={}",
                write(
                    d,
                    "dupedge.csv",
                    ":START_ID,:END_ID,id:ID\na,b,e1\nb,a,e2\nb,b,e1\n"
                )
            )],
            "dupedge.csv:4: edge id 'e1' is already taken",
        ),
        (
            vec![write(d, "dup.csv", "id:ID\na\na\n")],
            vec![],
            "dup.csv:3: node id 'a' is already taken",
        ),
        (
            vec![write(d, "unknown.csv", "id:ID,x:COLOR\na,red\n")],
            vec![],
            "unknown.csv:1:2: unknown column type 'COLOR'",
        ),
        (
            vec![write(d, "empty.csv", "")],
            vec![],
            "empty.csv:1: the file is empty",
        ),
        (
            vec![write(d, "noid.csv", "name\nx\n")],
            vec![],
            "noid.csv:1: the header has no :ID column",
        ),
        (
            vec![good_nodes.clone()],
            vec![write(d, "notype.csv", ":START_ID,:END_ID\na,b\n")],
            "edges need a type",
        ),
        (
            vec![write(d, "bad.jsonl", "{\"id\": \"a\"}\n{\"id\": \n")],
            vec![],
            "bad.jsonl:2:",
        ),
        (
            // Cut short inside a quoted field: the rest is not one value.
            vec![write(d, "cut.csv", "id:ID,name\na,x\nb,\"Bo\nc,z\n")],
            vec![],
            "cut.csv:3: a quoted field opened on this row is never closed",
        ),
        (
            vec![write(d, "cutend.csv", "id:ID,name\na,\"x\"\"y")],
            vec![],
            "cutend.csv:2: a quoted field opened on this row is never closed",
        ),
        (
            vec![write(d, "twoids.csv", "id:ID,name,key:ID\na,x,k\n")],
            vec![],
            "twoids.csv:1:3: a second :ID column (field 1 is one already)",
        ),
        (
            vec![write(d, "twice.csv", "id:ID,name,age:INT,name\na,x,1,y\n")],
            vec![],
            "twice.csv:1:4: property 'name' is named twice (field 2 names it too)",
        ),
        (
            vec![d.join("missing.csv").to_string_lossy().to_string()],
            vec![],
            "missing.csv",
        ),
        (
            // Read after the nodes were handed to the loader: they go too.
            vec![good_nodes.clone()],
            vec![format!("R={}", d.join("gone.csv").display())],
            "gone.csv",
        ),
    ];
    let s = db();
    for (nodes, edges, expected) in cases {
        let e = run(&s, &nodes, &edges).unwrap_err();
        assert!(
            e.to_string().contains(expected),
            "'{e}' does not say '{expected}'"
        );
        let t = s.read("default").unwrap();
        assert_eq!(
            (t.node_count().unwrap(), t.edge_count().unwrap()),
            (0, 0),
            "nothing of a failed import lands"
        );
    }
    run(&s, &[good_nodes], &[]).unwrap();
}

/// A header in a file of its own (`header.csv,data.csv`, as neo4j-admin
/// takes it), and another quote character: data lines are numbered from 1
/// in the data file, and a bad header is named in the header file.
#[test]
fn header_files_and_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let header = write(d, "people-header.csv", "id:ID,name,age:INT\n");
    let data = write(
        d,
        "people-data.csv",
        // The last row's quoted field spans two lines and doubles its
        // quotes, and the file ends right after it: closed, not cut short.
        "ann,'Ann, the first',34\nbob,Bob,41\ncy,'Cy ''the''\nsecond',7",
    );
    let s = db();
    let opts = ImportOptions {
        csv: plexus_ingest::CsvOptions {
            quote: b'\'',
            ..Default::default()
        },
        ..Default::default()
    };
    let load = |s: &Storage, arg: String| {
        import(
            s,
            "default",
            &[Input::parse(&arg)],
            &[],
            &opts,
            &mut |_| {},
            None,
        )
    };
    let r = load(&s, format!("Person={header},{data}")).unwrap();
    assert_eq!(r.nodes, 3);
    let t = s.read("default").unwrap();
    let ann = t.node(t.node_id("ann").unwrap().unwrap()).unwrap().unwrap();
    assert_eq!(ann.props["name"], Value::from("Ann, the first"));
    let cy = t.node(t.node_id("cy").unwrap().unwrap()).unwrap().unwrap();
    assert_eq!(cy.props["name"], Value::from("Cy 'the'\nsecond"));
    assert_eq!(ann.props["age"], Value::Int(34));
    drop(t);
    let bad_data = write(d, "bad-data.csv", "cy,Cy,young\n");
    let e = load(&db(), format!("Person={header},{bad_data}")).unwrap_err();
    assert!(e.to_string().contains("bad-data.csv:1:3"), "{e}");
    let bad_header = write(d, "bad-header.csv", "id:ID,x:COLOR\n");
    let e = load(&db(), format!("Person={bad_header},{data}")).unwrap_err();
    assert!(e.to_string().contains("bad-header.csv:1:2"), "{e}");
}
