//! `plexus demo`: builds a small, fixed sample graph and shows reads, so a
//! new user sees the database work with one command.

use crate::commands::{neighbors, show_node, stats, CliResult};
use crate::output::Out;
use plexus::ingest::{Format, ImportOptions, Input};
use plexus::{
    ConstraintKind, ConstraintSpec, Database, Direction, GraphRead, IndexSpec, Options, Value,
};
use std::path::Path;

const GRAPH: &str = "demo";

const PEOPLE: &[(&str, &str, i64, &str, &[&str])] = &[
    ("ann", "Ann", 34, "oslo", &["graphs", "rust"]),
    ("bob", "Bob", 41, "oslo", &["databases"]),
    ("cleo", "Cleo", 29, "lyon", &["rust", "music"]),
    ("dev", "Dev", 52, "pune", &["graphs", "databases"]),
    ("eli", "Eli", 23, "lyon", &["music"]),
];
const CITIES: &[(&str, &str)] = &[("oslo", "Oslo"), ("lyon", "Lyon"), ("pune", "Pune")];
const KNOWS: &[(&str, &str, i64)] = &[
    ("ann", "bob", 2015),
    ("ann", "cleo", 2019),
    ("bob", "dev", 2008),
    ("cleo", "eli", 2021),
    ("dev", "ann", 2020),
];

/// Writes the sample graph as CSV files with typed headers, as a user
/// would bring them: one file per label and per relationship type.
fn write_files(dir: &Path) -> std::io::Result<Vec<(String, std::path::PathBuf)>> {
    std::fs::create_dir_all(dir)?;
    let mut people = String::from("id:ID,name,age:INT,interests:STRING[]\n");
    for (id, name, age, _, interests) in PEOPLE {
        people += &format!("{id},{name},{age},{}\n", interests.join(";"));
    }
    let mut cities = String::from("id:ID,name\n");
    for (id, name) in CITIES {
        cities += &format!("{id},{name}\n");
    }
    let mut lives = String::from(":START_ID,:END_ID\n");
    for (id, _, _, city, _) in PEOPLE {
        lives += &format!("{id},{city}\n");
    }
    let mut knows = String::from(":START_ID,:END_ID,since:INT\n");
    for (a, b, since) in KNOWS {
        knows += &format!("{a},{b},{since}\n");
    }
    let mut out = Vec::new();
    for (name, file, text) in [
        ("Person", "people.csv", people),
        ("City", "cities.csv", cities),
        ("LIVES_IN", "lives_in.csv", lives),
        ("KNOWS", "knows.csv", knows),
    ] {
        std::fs::write(dir.join(file), text)?;
        out.push((name.to_string(), dir.join(file)));
    }
    Ok(out)
}

pub fn run(path: &Path, out: &Out) -> CliResult {
    let db = Database::open_or_create(path, Options::default())?;
    if db.graphs().iter().any(|g| g == GRAPH) {
        db.drop_graph(GRAPH)?;
    }
    db.create_graph(GRAPH)?;
    let mut t = db.write(GRAPH)?;
    t.create_constraint(ConstraintSpec {
        name: None,
        label: "Person".into(),
        key: "name".into(),
        kind: ConstraintKind::Unique,
    })?;
    t.create_index(IndexSpec::property("Person", "age"))?;
    t.create_index(IndexSpec::list("Person", "interests"))?;
    t.commit()?;
    let files_dir = path.with_extension("files");
    let files = write_files(&files_dir)?;
    let input = |(name, path): &(String, std::path::PathBuf)| Input {
        path: path.clone(),
        name: Some(name.clone()),
        format: Format::Csv,
        header: None,
    };
    let (nodes, edges): (Vec<Input>, Vec<Input>) = (
        files[..2].iter().map(input).collect(),
        files[2..].iter().map(input).collect(),
    );
    let report = db.import(
        GRAPH,
        &nodes,
        &edges,
        &ImportOptions::default(),
        &mut |_| {},
        None,
    )?;
    if !out.json {
        say!(
            "\n== Imported {} nodes and {} edges from the CSV files in {}",
            report.nodes,
            report.edges,
            files_dir.display()
        );
    }

    let say = |s: &str| {
        if !out.json {
            say!("\n== {s}");
        }
    };
    say(&format!("Built graph '{GRAPH}' in {}", path.display()));
    stats(&db, GRAPH, out)?;
    say("Node 'ann'");
    show_node(&db, GRAPH, "ann", out)?;
    say("Everyone 'ann' is connected to");
    neighbors(&db, GRAPH, "ann", None, Direction::Both, out)?;
    let r = db.read(GRAPH)?;
    let names = |ids: Vec<plexus::NodeId>| -> Result<Vec<String>, plexus::StorageError> {
        ids.into_iter()
            .map(|i| Ok(r.node(i)?.map(|n| n.key).unwrap_or_default()))
            .collect()
    };
    let lo = Value::Int(30);
    let over_30 = names(r.find_nodes_in_range(
        Some("Person"),
        "age",
        std::ops::Bound::Included(&lo),
        std::ops::Bound::Unbounded,
    )?)?;
    let rust = names(r.find_nodes_with_element(Some("Person"), "interests", &"rust".into())?)?;
    let oslo = r.node_id("oslo")?.ok_or("oslo missing")?;
    let in_oslo = r.degree(oslo, Direction::In, Some("LIVES_IN"))?;
    say("Index lookups");
    out.table(
        &["question", "answer"],
        vec![
            vec![
                "people aged 30 or more (range index)".into(),
                over_30.join(", ").into(),
            ],
            vec![
                "people interested in rust (list index)".into(),
                rust.join(", ").into(),
            ],
            vec![
                "people living in Oslo (degree counter)".into(),
                in_oslo.into(),
            ],
        ],
    );
    for q in QUERIES {
        say(&format!("Cypher: {q}"));
        let t = db.query(GRAPH, q, &plexus::Params::new())?;
        crate::cypher::print(
            &t,
            if out.json {
                crate::cypher::Format::Jsonl
            } else {
                crate::cypher::Format::Table
            },
        );
    }
    Ok(())
}

/// The Cypher the demo runs on the imported graph.
const QUERIES: &[&str] = &[
    "MATCH (p:Person)-[:LIVES_IN]->(c:City) RETURN c.name AS city, count(p) AS people, collect(p.name) AS names ORDER BY people DESC, city",
    "MATCH (a:Person {name: 'Ann'})-[:KNOWS]->(f)-[:KNOWS]->(fof) WHERE fof <> a RETURN f.name AS friend, fof.name AS friend_of_friend",
    "MATCH p = shortestPath((a:Person {name: 'Eli'})-[:KNOWS*]-(b:Person {name: 'Bob'})) RETURN [n IN nodes(p) | n.name] AS path, length(p) AS hops",
];
