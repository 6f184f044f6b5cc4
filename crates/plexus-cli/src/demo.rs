//! `plexus demo`: builds a small, fixed sample graph and shows reads, so a
//! new user sees the database work with one command.

use crate::commands::{neighbors, show_node, stats, CliResult};
use crate::output::Out;
use plexus::{
    ConstraintKind, ConstraintSpec, Database, Direction, GraphRead, IndexSpec, Options, Props,
    Value,
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
    for (id, name) in CITIES {
        t.create_node(
            Some(id),
            &["City"],
            &Props::from([("name".into(), Value::from(*name))]),
        )?;
    }
    for (id, name, age, city, interests) in PEOPLE {
        let props = Props::from([
            ("name".into(), Value::from(*name)),
            ("age".into(), Value::Int(*age)),
            ("interests".into(), Value::from(interests.to_vec())),
        ]);
        let p = t.create_node(Some(id), &["Person"], &props)?;
        let c = t.node_id(city)?.ok_or("city missing")?;
        t.create_edge(None, p, c, "LIVES_IN", &Props::new())?;
    }
    for (a, b, since) in KNOWS {
        let (a, b) = (
            t.node_id(a)?.ok_or("person missing")?,
            t.node_id(b)?.ok_or("person missing")?,
        );
        t.create_edge(
            None,
            a,
            b,
            "KNOWS",
            &Props::from([("since".into(), Value::Int(*since))]),
        )?;
    }
    t.commit()?;

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
    Ok(())
}
