//! The `plexus` binary, driven as a user would.

use std::path::Path;
use std::process::{Command, Output};

fn plexus(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(dir)
        .env_remove("PLEXUS_DB")
        .env_remove("PLEXUS_GRAPH")
        .args(args)
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let o = plexus(dir, args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn fails(dir: &Path, args: &[&str]) -> String {
    let o = plexus(dir, args);
    assert!(!o.status.success(), "{args:?} should fail");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "one clear line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

fn json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.push("--json");
    serde_json::from_str(&ok(dir, &a)).unwrap()
}

#[test]
fn a_session_of_commands() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(fails(d, &["stats"]).contains("plexus init"));
    ok(d, &["init"]);
    assert!(fails(d, &["init"]).contains("already"));
    ok(
        d,
        &[
            "node", "put", "ann", "-l", "Person", "-p", "age=34", "-p", "name=Ann",
        ],
    );
    ok(d, &["node", "put", "bob", "-l", "Person"]);
    ok(
        d,
        &[
            "edge",
            "put",
            "ann",
            "KNOWS",
            "bob",
            "--id",
            "k1",
            "-p",
            "since=2015",
        ],
    );
    let n = json(d, &["node", "get", "ann"]);
    assert_eq!(n["properties"]["age"], 34);
    assert_eq!(n["labels"][0], "Person");
    let nb = json(d, &["neighbors", "bob", "--direction", "in"]);
    assert_eq!(nb[0]["node"], "ann");
    assert_eq!(nb[0]["type"], "KNOWS");
    let s = json(d, &["stats"]);
    assert_eq!(
        (s["nodes"].as_u64(), s["edges"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(s["labels"]["Person"], 2);
    assert!(
        fails(d, &["edge", "put", "ann", "KNOWS", "nobody"]).contains("no node with id 'nobody'")
    );
    assert!(fails(d, &["node", "delete", "ann"]).contains("still has 1 edge"));
    assert!(fails(d, &["-g", "missing", "stats"]).contains("no graph named 'missing'"));
    ok(d, &["graph", "create", "g2"]);
    ok(d, &["-g", "g2", "node", "put", "x"]);
    let gl = json(d, &["graph", "list"]);
    assert_eq!(gl.as_array().unwrap().len(), 2);
    ok(d, &["constraint", "create", "Person", "name", "--unique"]);
    assert!(
        fails(d, &["node", "put", "cat", "-l", "Person", "-p", "name=Ann"])
            .contains("unique constraint")
    );
    ok(d, &["index", "create", "Person", "age", "--type", "int"]);
    let hits = json(d, &["index", "lookup", "Person", "age", "34"]);
    assert_eq!(hits[0]["id"], "ann");
    assert!(fails(d, &["node", "put", "eve", "-l", "Person", "-p", "age=old"]).contains("INT"));
    ok(d, &["node", "delete", "ann", "--detach"]);
    let s = json(d, &["stats"]);
    assert_eq!(
        (s["nodes"].as_u64(), s["edges"].as_u64()),
        (Some(1), Some(0))
    );
    ok(d, &["check"]);
    ok(d, &["graph", "drop", "g2"]);
    assert!(fails(d, &["node", "put", "y", "-p", "novalue"]).contains("key=value"));
}

#[test]
fn refuses_a_folder_that_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("plexus-data")).unwrap();
    std::fs::write(dir.path().join("plexus-data/notes.txt"), "mine").unwrap();
    assert!(fails(dir.path(), &["stats"]).contains("not a Plexus database"));
    assert!(fails(dir.path(), &["init"]).contains("not a Plexus database"));
}

#[test]
fn the_demo_builds_and_reads_its_sample() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(dir.path(), &["demo"]);
    assert!(out.contains("ann, bob, dev"), "{out}");
    // Running it twice rebuilds the sample rather than failing.
    ok(dir.path(), &["demo"]);
    let s = json(
        dir.path(),
        &["--db", "sample.plexus", "-g", "demo", "stats"],
    );
    assert_eq!(s["nodes"], 8);
}
