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
    let space = json(d, &["stats", "--space"]);
    let row = |name: &str| {
        space
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["keyspace"] == name)
            .unwrap_or_else(|| panic!("no row {name}: {space}"))
            .clone()
    };
    assert_eq!(row("nodes")["entries"], 2);
    assert_eq!(row("adjacency")["entries"], 2, "the edge from both ends");
    assert_eq!(row("edge_keys")["entries"], 1);
    assert!(row("nodes")["per"].as_str().unwrap().ends_with("B/node"));
    assert!(row("total")["holds"]
        .as_str()
        .unwrap()
        .contains("2 nodes, 1 edges"));
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

#[test]
fn paths_bfs_and_samples() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["demo"]);
    let g = ["--db", "sample.plexus", "-g", "demo"];
    let run = |extra: &[&str]| json(d, &[&g[..], extra].concat());
    let p = run(&["path", "eli", "bob", "--direction", "both", "-t", "KNOWS"]);
    assert_eq!(p[0]["hops"], 3);
    assert_eq!(
        p[0]["path"],
        serde_json::json!(["eli", "cleo", "ann", "bob"])
    );
    let p = run(&["path", "ann", "dev", "--weight", "since", "-t", "KNOWS"]);
    assert_eq!(p[0]["cost"], 2015.0 + 2008.0);
    assert_eq!(
        run(&["path", "eli", "ann"]).as_array().unwrap().len(),
        0,
        "no directed path"
    );
    let all = run(&["path", "ann", "oslo", "--all", "--direction", "both"]);
    assert_eq!(all.as_array().unwrap().len(), 1);
    let b = run(&["bfs", "ann", "--depth", "1"]);
    let names: Vec<&str> = b
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["node"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["ann", "oslo", "bob", "cleo"]);
    let s1 = run(&[
        "sample",
        "neighbors",
        "ann",
        "--k",
        "2",
        "--direction",
        "both",
        "--seed",
        "9",
    ]);
    let s2 = run(&[
        "sample",
        "neighbors",
        "ann",
        "--k",
        "2",
        "--direction",
        "both",
        "--seed",
        "9",
    ]);
    assert_eq!(s1, s2, "same seed, same sample");
    assert_eq!(s1.as_array().unwrap().len(), 2);
    let w = run(&[
        "sample",
        "walk",
        "ann",
        "--length",
        "3",
        "--direction",
        "both",
    ]);
    assert_eq!(w.as_array().unwrap().len(), 4);
    let mut args = g.to_vec();
    args.extend(["path", "ann", "nobody"]);
    assert!(fails(d, &args).contains("no node with id 'nobody'"));
}

/// Imports `people.csv` (Person) and `knows.csv` (KNOWS) with `extra`
/// flags; the nodes and edges imported.
fn import_people(d: &Path, extra: &[&str]) -> (Option<u64>, Option<u64>) {
    let mut args = vec![
        "import",
        "--nodes",
        "Person=people.csv",
        "--edges",
        "KNOWS=knows.csv",
    ];
    args.extend_from_slice(extra);
    let r = json(d, &args);
    (r["nodes"].as_u64(), r["edges"].as_u64())
}

#[test]
fn import_from_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("people.csv"),
        "id:ID,name,age:INT\nann,Ann,34\nbob,Bob,41\n",
    )
    .unwrap();
    std::fs::write(
        d.join("knows.csv"),
        ":START_ID,:END_ID,since:INT\nann,bob,2015\n",
    )
    .unwrap();
    std::fs::write(d.join("bad.csv"), "id:ID,age:INT\nx,old\n").unwrap();
    ok(d, &["init"]);
    assert_eq!(import_people(d, &[]), (Some(2), Some(1)));
    let n = json(d, &["node", "get", "ann"]);
    assert_eq!(n["properties"]["age"], 34);
    assert!(fails(d, &["import", "--nodes", "Person=people.csv"]).contains("needs an empty graph"));
    let e = fails(d, &["-g", "other", "import", "--nodes", "bad.csv"]);
    assert!(
        e.contains("bad.csv:2:2: column 'age': 'old' is not a valid INT"),
        "{e}"
    );
    let s = json(d, &["-g", "other", "stats"]);
    assert_eq!(s["nodes"], 0, "a failed import leaves nothing");
}

#[test]
fn an_import_can_defer_its_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("people.csv"), "id:ID,age:INT\nann,34\nbob,41\n").unwrap();
    ok(d, &["init"]);
    ok(d, &["index", "create", "Person", "age"]);
    ok(
        d,
        &[
            "import",
            "--nodes",
            "Person=people.csv",
            "--index-mode",
            "defer",
        ],
    );
    let e = fails(d, &["index", "lookup", "Person", "age", "41"]);
    assert!(e.contains("stale"), "{e}");
    ok(d, &["index", "rebuild"]);
    assert!(ok(d, &["index", "lookup", "Person", "age", "41"]).contains("bob"));
}

#[test]
fn an_import_takes_a_quote_character_and_a_header_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("h.csv"), "id:ID|name\n").unwrap();
    std::fs::write(d.join("p.csv"), "ann|'Ann|A.'\n").unwrap();
    ok(d, &["init"]);
    let e = fails(d, &["import", "--nodes", "h.csv,p.csv", "--quote", "é"]);
    assert!(e.contains("must be a single ASCII character"), "{e}");
    let args = [
        "import",
        "--nodes",
        "P=h.csv,p.csv",
        "--delimiter",
        "|",
        "--quote",
        "'",
    ];
    assert_eq!(json(d, &args)["nodes"], 1);
    assert_eq!(
        json(d, &["node", "get", "ann"])["properties"]["name"],
        "Ann|A."
    );
}

#[test]
fn an_import_can_bound_its_memory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let people: String = (0..5000).map(|i| format!("p{i},{i}\n")).collect();
    std::fs::write(d.join("people.csv"), format!("id:ID,age:INT\n{people}")).unwrap();
    let knows: String = (0..5000)
        .map(|i| format!("p{i},p{}\n", (i * 7) % 5000))
        .collect();
    std::fs::write(d.join("knows.csv"), format!(":START_ID,:END_ID\n{knows}")).unwrap();
    ok(d, &["init"]);
    let e = fails(
        d,
        &["import", "--nodes", "people.csv", "--memory-limit", "lots"],
    );
    assert!(e.contains("'lots' is not a size"), "{e}");
    assert_eq!(
        import_people(d, &["--memory-limit", "64K"]),
        (Some(5000), Some(5000))
    );
    assert!(ok(d, &["check"]).contains("consistent"));
    assert!(
        !d.join("plexus-data").join("import-spill").exists(),
        "spill folder removed"
    );
    // `none` lifts the bound (a quarter of the machine's memory otherwise).
    let other = tempfile::tempdir().unwrap();
    for f in ["people.csv", "knows.csv"] {
        std::fs::copy(d.join(f), other.path().join(f)).unwrap();
    }
    ok(other.path(), &["init"]);
    assert_eq!(
        import_people(other.path(), &["--memory-limit", "none"]),
        (Some(5000), Some(5000))
    );
}

#[test]
fn import_can_leave_bad_rows_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p.csv"), "id:ID,age:INT\na,1\nb,old\nc,3\n").unwrap();
    std::fs::write(d.join("k.csv"), ":START_ID,:END_ID\na,c\na,nobody\n").unwrap();
    ok(d, &["init"]);
    let r = json(
        d,
        &[
            "import",
            "--nodes",
            "P=p.csv",
            "--edges",
            "K=k.csv",
            "--skip-bad-rows",
            "bad.txt",
        ],
    );
    assert_eq!(
        (
            r["nodes"].as_u64(),
            r["edges"].as_u64(),
            r["skipped"].as_u64()
        ),
        (Some(2), Some(1), Some(2))
    );
    let report = std::fs::read_to_string(d.join("bad.txt")).unwrap();
    assert!(
        report.contains("p.csv:3:2") && report.contains("k.csv:3") && report.lines().count() == 2,
        "{report}"
    );
}

#[test]
fn cypher_queries_and_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["init"]);
    ok(
        d,
        &[
            "query",
            "CREATE (:Person {name: 'Ann', age: 34})-[:KNOWS {since: 2015}]->(:Person {name: 'Bob', age: 41})",
        ],
    );
    let table = ok(
        d,
        &[
            "query",
            "MATCH (a:Person)-[k:KNOWS]->(b) WHERE a.age < $max RETURN a.name AS a, b.name AS b, k.since AS since",
            "--param",
            "max=40",
        ],
    );
    assert!(
        table.contains("Ann") && table.contains("Bob") && table.contains("1 row"),
        "{table}"
    );
    let csv = ok(
        d,
        &[
            "query",
            "MATCH (p:Person) RETURN p.name AS name, p.age AS age ORDER BY age",
            "--format",
            "csv",
        ],
    );
    assert_eq!(csv, "name,age\nAnn,34\nBob,41\n");
    let jsonl = ok(
        d,
        &["query", "MATCH (p:Person {name: 'Ann'}) RETURN p", "--json"],
    );
    let row: serde_json::Value = serde_json::from_str(jsonl.trim()).unwrap();
    assert_eq!(row["p"]["labels"][0], "Person");
    assert_eq!(row["p"]["properties"]["age"], 34);
    // A failing query names the problem and its place, and writes nothing.
    let err = fails(d, &["query", "CREATE (:Person {name: 'Cleo'}) RETURN 1 +"]);
    assert!(err.contains("line 1"), "{err}");
    let err = fails(
        d,
        &[
            "query",
            "MATCH (p:Person) CREATE (:Copy {n: p.name}) WITH p RETURN p.name / 0",
        ],
    );
    assert!(err.contains("TypeError"), "{err}");
    let n = ok(
        d,
        &["query", "MATCH (n) RETURN count(n) AS n", "--format", "csv"],
    );
    assert_eq!(n, "n\n2\n", "the failed query left nothing behind");

    let mut shell = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .current_dir(d)
        .env_remove("PLEXUS_DB")
        .env_remove("PLEXUS_GRAPH")
        .args(["shell", "--format", "csv"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    shell
        .stdin
        .take()
        .unwrap()
        .write_all(b":param who=\"Bob\"\n:params\nMATCH (p:Person)\nWHERE p.name = $who\nRETURN p.age AS age;\nRETURN nope;\n:quit\n")
        .unwrap();
    let o = shell.wait_with_output().unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(o.status.success());
    assert_eq!(out, "$who = 'Bob'\nage\n41\n", "{out}");
    assert!(err.contains("UndefinedVariable"), "{err}");
    assert!(
        err.contains("(line 1, column 8)"),
        "the place of the unknown variable: {err}"
    );
}

#[test]
fn import_upserts_into_a_graph_with_data() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("people.csv"),
        "id:ID,name,age:INT\nann,Ann,34\nbob,Bob,41\n",
    )
    .unwrap();
    std::fs::write(
        d.join("knows.csv"),
        ":START_ID,:END_ID,id:ID,since:INT\nann,bob,k1,2015\n",
    )
    .unwrap();
    ok(d, &["init"]);
    ok(
        d,
        &[
            "import",
            "--nodes",
            "Person=people.csv",
            "--edges",
            "KNOWS=knows.csv",
        ],
    );
    // Ann gets a label and a new age, keeps her name; Cleo is new; the
    // edge k1 gets a new `since`; a new edge joins an old and a new node.
    std::fs::write(d.join("more.csv"), "id:ID,age:INT\nann,35\ncleo,29\n").unwrap();
    std::fs::write(
        d.join("more_knows.csv"),
        ":START_ID,:END_ID,id:ID,since:INT\nann,bob,k1,2016\nbob,cleo,,2020\n",
    )
    .unwrap();
    let r = json(
        d,
        &[
            "import",
            "--upsert",
            "--nodes",
            "Employee=more.csv",
            "--edges",
            "KNOWS=more_knows.csv",
        ],
    );
    assert_eq!(
        (r["nodes"].as_u64(), r["edges"].as_u64()),
        (Some(2), Some(2))
    );
    let csv = ok(
        d,
        &[
            "query",
            "MATCH (p) RETURN p.name AS name, p.age AS age, size(labels(p)) AS labels ORDER BY age",
            "--format",
            "csv",
        ],
    );
    assert_eq!(csv, "name,age,labels\n,29,1\nAnn,35,2\nBob,41,1\n");
    let csv = ok(
        d,
        &[
            "query",
            "MATCH ()-[k:KNOWS]->() RETURN k.since AS s ORDER BY s",
            "--format",
            "csv",
        ],
    );
    assert_eq!(csv, "s\n2016\n2020\n");
    // A dangling edge fails the whole upsert: nothing of it is written.
    std::fs::write(d.join("bad_knows.csv"), ":START_ID,:END_ID\nann,zed\n").unwrap();
    std::fs::write(d.join("new.csv"), "id:ID\ndan\n").unwrap();
    let e = fails(
        d,
        &[
            "import",
            "--upsert",
            "--nodes",
            "new.csv",
            "--edges",
            "KNOWS=bad_knows.csv",
        ],
    );
    assert!(e.contains("bad_knows.csv:2") && e.contains("zed"), "{e}");
    let n = ok(
        d,
        &["query", "MATCH (n) RETURN count(n) AS n", "--format", "csv"],
    );
    assert_eq!(n, "n\n3\n");
}

#[test]
fn hostile_queries_get_clear_errors_and_the_process_lives() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["init"]);
    let nested = format!("RETURN {}1{} AS v", "({k:".repeat(24), "})".repeat(24));
    assert!(ok(d, &["query", &nested, "--format", "csv"]).contains("k"));
    let minus = format!("RETURN {}1", "-".repeat(60_000));
    assert!(fails(d, &["query", &minus]).contains("NestingTooDeep"));
    let plus = format!("RETURN {}", vec!["1"; 30_000].join("+"));
    assert!(fails(d, &["query", &plus]).contains("nested more than"));
    let count = "UNWIND range(1, 3000000) AS x RETURN count(x) AS n";
    assert_eq!(
        ok(
            d,
            &["query", count, "--memory-limit", "1M", "--format", "csv"]
        ),
        "n\n3000000\n"
    );
    let e = fails(d, &["query", "RETURN size(range(0, 9223372036854775807))"]);
    assert!(e.contains("memory") && e.contains("4 GiB"), "{e}");
    let e = fails(
        d,
        &[
            "query",
            "UNWIND range(1, 9000000000) AS x RETURN count(x)",
            "--timeout",
            "100ms",
        ],
    );
    assert!(e.contains("timeout of 100 ms"), "{e}");
    assert!(fails(d, &["query", "RETURN 1", "--timeout", "soon"]).contains("not a duration"));
    let sorted = ok(
        d,
        &[
            "query",
            "UNWIND [9007199254740993, 9007199254740992] AS x RETURN x ORDER BY x",
            "--format",
            "csv",
        ],
    );
    assert_eq!(sorted, "x\n9007199254740992\n9007199254740993\n");
    let f = ok(
        d,
        &[
            "query",
            "RETURN 'ab' =~ 'a.' AS r, timestamp() > 0 AS t, isEmpty([]) AS e, atan2(0, 1) AS a",
            "--format",
            "csv",
        ],
    );
    assert_eq!(f, "r,t,e,a\ntrue,true,true,0.0\n");
    ok(d, &["node", "put", "ann", "-l", "Person"]);
    let id = ok(
        d,
        &[
            "query",
            "MATCH (n:Person) RETURN elementId(n) AS id",
            "--format",
            "csv",
        ],
    );
    assert_eq!(id, "id\nann\n");
}

/// While another process has the database open for writing, the command
/// line opens it read-only: reads see the writer's commits (also of labels
/// it adds later), a write is refused with an error naming the writer, and
/// once the writer closes, the command line writes again.
#[test]
fn a_second_process_reads_while_one_writes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = d.join("live.plexus");
    let p = path.to_str().unwrap();
    let db = plexus::Database::create(&path, plexus::Options::default()).unwrap();
    let write = |text: &str| db.query("default", text, &Default::default()).unwrap();
    write("CREATE (:P {n: 1}), (:P {n: 2})");
    let query = |text: &str| -> serde_json::Value {
        let out = ok(d, &["--db", p, "query", text, "--json"]);
        serde_json::from_str(out.trim()).unwrap()
    };
    assert_eq!(query("MATCH (n:P) RETURN count(n) AS c")["c"], 2);
    write("CREATE (:Fresh {n: 3})");
    assert_eq!(query("MATCH (n:Fresh) RETURN n.n AS n")["n"], 3);
    assert_eq!(query("MATCH (n) RETURN count(n) AS c")["c"], 3);

    let o = plexus(d, &["--db", p, "node", "put", "x"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    assert!(err.contains("read-only"), "{err}");
    assert_eq!(query("MATCH (n) RETURN count(n) AS c")["c"], 3);

    drop(db);
    ok(d, &["--db", p, "node", "put", "x"]);
    assert_eq!(query("MATCH (n) RETURN count(n) AS c")["c"], 4);
}

#[test]
fn upgrade_converts_a_format_1_database() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../plexus/tests/fixtures/format-1/db");
    std::fs::create_dir_all(d.join("old/data")).unwrap();
    std::fs::copy(fixture.join("PLEXUS"), d.join("old/PLEXUS")).unwrap();
    std::fs::copy(fixture.join("data/data.mdb"), d.join("old/data/data.mdb")).unwrap();
    let advice = fails(d, &["--db", "old", "stats"]);
    assert!(
        advice.contains("format version 1") && advice.contains("plexus --db old upgrade"),
        "{advice}"
    );
    let report = json(d, &["--db", "old", "upgrade"]);
    assert_eq!(
        (report["from"].as_u64(), report["to"].as_u64()),
        (Some(1), Some(3)),
        "{report}"
    );
    assert_eq!(report["entries"].as_u64(), Some(614), "{report}");
    assert!(ok(d, &["--db", "old", "check"]).contains("41 nodes, 307 edges"));
    let again = ok(d, &["--db", "old", "upgrade"]);
    assert!(again.contains("format version 3 already"), "{again}");
}

#[test]
fn vector_indexes_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["init"]);
    for (id, v) in [
        ("a", "[1, 0, 0]"),
        ("b", "[0, 1, 0]"),
        ("c", "[0.9, 0.1, 0]"),
    ] {
        ok(
            d,
            &["node", "put", id, "-l", "Doc", "-p", &format!("emb={v}")],
        );
    }
    ok(
        d,
        &[
            "vector",
            "create",
            "Doc",
            "emb",
            "--dimensions",
            "3",
            "--name",
            "docs",
            "--similarity",
            "euclidean",
        ],
    );
    let list = json(d, &["vector", "list"]);
    assert_eq!(list[0]["name"], "docs");
    assert_eq!(list[0]["options"]["vector.dimensions"], 3);
    assert_eq!(
        list[0]["options"]["vector.similarity_function"],
        "euclidean"
    );
    assert_eq!(list[0]["options"]["vector.quantization.enabled"], true);
    assert!(ok(d, &["index", "list"]).contains("vector"));
    // Nearest first: a, then c; b last.
    let hits = json(d, &["vector", "search", "docs", "[1, 0, 0]", "-k", "3"]);
    let ids: Vec<&str> = (0..3).filter_map(|i| hits[i]["id"].as_str()).collect();
    assert_eq!(ids, ["a", "c", "b"], "{hits}");
    assert_eq!(hits[0]["score"], 1.0);
    assert!(ok(d, &["vector", "search", "docs", "[1, 0, 0]", "-k", "1"]).contains("Doc"));
    assert!(fails(d, &["vector", "search", "docs", "[1, 0]"]).contains("3"));
    assert!(fails(d, &["vector", "search", "docs", "[1, \"x\", 0]"]).contains("element 1"));
    assert!(fails(d, &["vector", "search", "nope", "[1, 0, 0]"]).contains("nope"));
    assert!(fails(
        d,
        &["vector", "create", "Doc", "other", "--dimensions", "0"]
    )
    .contains("dimensions"));
    assert!(fails(
        d,
        &[
            "vector",
            "create",
            "Doc",
            "other",
            "--dimensions",
            "3",
            "--similarity",
            "foo"
        ]
    )
    .contains("foo"));
    ok(d, &["index", "drop", "docs"]);
    assert!(fails(d, &["vector", "search", "docs", "[1, 0, 0]"]).contains("docs"));
}

/// `plexus init --store postgres://…`: the folder holds the manifest, the
/// server the data; every later command finds the store from the manifest.
#[cfg(feature = "postgres")]
#[test]
fn a_database_in_postgres() {
    let url = std::env::var("PLEXUS_TEST_POSTGRES")
        .expect("PLEXUS_TEST_POSTGRES names no PostgreSQL server: run the tests with scripts/test");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let created = json(d, &["init", "--store", &url]);
    assert_eq!(created["backend"], "postgres", "{created}");
    let folder = d.join("plexus-data");
    assert!(folder.join("PLEXUS").exists() && !folder.join("data").exists());
    ok(d, &["node", "put", "ann", "-l", "Person", "-p", "age=34"]);
    ok(d, &["node", "put", "bob", "-l", "Person", "-p", "age=40"]);
    ok(d, &["edge", "put", "ann", "KNOWS", "bob"]);
    let out = ok(
        d,
        &[
            "query",
            "MATCH (a:Person)-[:KNOWS]->(b) RETURN a.age + b.age AS s",
        ],
    );
    assert!(out.contains("74"), "{out}");
    let check = ok(d, &["check"]);
    assert!(check.contains("is consistent: 2 nodes, 1 edges"), "{check}");
    // A postgres database needs its store's URL.
    let other = tempfile::tempdir().unwrap();
    let e = fails(other.path(), &["init", "--backend", "postgres"]);
    assert!(e.contains("URL"), "{e}");
    // A store that does not answer is one clear line, and no database.
    let e = fails(
        other.path(),
        &["init", "--store", "postgres://postgres@127.0.0.1:1/none"],
    );
    assert!(e.contains("cannot connect to the store"), "{e}");
    assert!(!other.path().join("plexus-data/PLEXUS").exists());
    assert!(fails(other.path(), &["stats"]).contains("plexus init"));
}

#[test]
fn history_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["init"]);
    assert_eq!(json(d, &["history", "status"])["history"], "off");
    let e = fails(d, &["query", "MATCH (n) FOR SYSTEM_TIME AS OF 1 RETURN n"]);
    assert!(e.contains("keeps no history"), "{e}");
    let on = json(d, &["history", "on"]);
    assert_eq!(on["history"], "on");
    ok(d, &["query", "CREATE (:Person {name: 'Ann', age: 34})"]);
    let then = json(d, &["history", "status"])["latest"].as_u64().unwrap();
    ok(d, &["query", "MATCH (p:Person) SET p.age = 35"]);
    let at = |t: u64| {
        ok(
            d,
            &[
                "query",
                "MATCH (p:Person) FOR SYSTEM_TIME AS OF $t RETURN p.age AS age",
                "--param",
                &format!("t={t}"),
                "--format",
                "csv",
            ],
        )
    };
    assert_eq!(at(then), "age\n34\n");
    let now = json(d, &["history", "status"])["latest"].as_u64().unwrap();
    assert_eq!(at(now), "age\n35\n");
    let pruned = json(d, &["history", "prune", "--before", &now.to_string()]);
    assert!(pruned["removed"].as_u64().unwrap() >= 1, "{pruned}");
    let e = fails(
        d,
        &[
            "query",
            "MATCH (p) FOR SYSTEM_TIME AS OF $t RETURN p",
            "--param",
            &format!("t={then}"),
        ],
    );
    assert!(e.contains("keeps history from"), "{e}");
    ok(
        d,
        &[
            "query",
            "CALL plexus.temporal.assertNode('ann', ['Person'], {}, 0) YIELD versionId RETURN versionId",
        ],
    );
    assert_eq!(json(d, &["history", "reindex"])["versions"], 1);
    let e = fails(d, &["history", "prune", "--before", "yesterday"]);
    assert!(e.contains("--before yesterday"), "{e}");
    // A retention policy: shown by status, applied by prune without
    // --before, read in several forms, refused when it makes no sense.
    assert_eq!(
        json(d, &["history", "prune"])["pruned"],
        serde_json::json!([])
    );
    assert_eq!(
        json(d, &["history", "retain", "30d"])["retention_s"],
        2_592_000.0
    );
    assert!(ok(d, &["history", "status"]).contains("keeps 30d"));
    assert_eq!(
        json(d, &["history", "retain", "PT12H"])["retention_s"],
        43_200.0
    );
    assert_eq!(json(d, &["history", "status"])["retention_s"], 43_200.0);
    let pruned = json(d, &["history", "prune"]);
    assert_eq!(pruned["pruned"][0]["graph"], "default", "{pruned}");
    for (bad, says) in [
        ("P1M", "months"),
        ("0s", "longer than zero"),
        ("soon", "not `30d`"),
    ] {
        let e = fails(d, &["history", "retain", bad]);
        assert!(e.contains(says), "{bad}: {e}");
    }
    assert!(json(d, &["history", "retain", "off"])["retention_s"].is_null());
    assert!(json(d, &["history", "status"])["retention_s"].is_null());
    ok(d, &["history", "off"]);
    assert_eq!(json(d, &["history", "status"])["history"], "off");
}

#[test]
fn compact_gives_back_what_deletes_freed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["init"]);
    ok(
        d,
        &[
            "query",
            "UNWIND range(1, 2000) AS i CREATE (:Doc {i: i, text: reduce(s = '', x IN range(1, 200) | s + 'xxxxxxxxxx')})",
        ],
    );
    ok(d, &["query", "MATCH (n:Doc) WHERE n.i > 100 DELETE n"]);
    let report = json(d, &["compact"]);
    let (before, after) = (
        report["bytes_before"].as_u64().unwrap(),
        report["bytes_after"].as_u64().unwrap(),
    );
    assert!(after * 3 < before, "{report}");
    let rows = json(d, &["query", "MATCH (n:Doc) RETURN count(n) AS n"]);
    assert_eq!(rows["n"], 100, "{rows}");
    let text = ok(d, &["compact"]);
    assert!(text.contains("MiB -> "), "{text}");
    // A reader in another process (this one) would keep reading the old
    // copy: compaction waits for it to close.
    let reader = plexus::Database::open_read_only(d.join("plexus-data")).unwrap();
    assert!(fails(d, &["compact"]).contains("open read-only in another process"));
    drop(reader);
    ok(d, &["compact"]);
}
