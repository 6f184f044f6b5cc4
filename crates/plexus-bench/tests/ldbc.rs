//! Every LDBC SNB Interactive reference query (v1 IS/IC/IU, v2 DEL) runs
//! on a small SNB-like graph, with answers that fit the graph.

use plexus::{Params, Value};
use plexus_bench::ldbc;

#[test]
fn every_ldbc_query_runs_with_plausible_answers() {
    let dir = ldbc::default_dir();
    if !dir.is_dir() {
        panic!(
            "the LDBC suite is missing at {}: the tests need ../shared beside the repository",
            dir.display()
        );
    }
    let (db, g) = ldbc::load(0.05, 7).unwrap();
    let out = ldbc::run(&db, &g, &dir).unwrap();
    assert_eq!(out.len(), 37);
    for o in &out {
        assert!(o.error.is_none(), "{}: {:?}", o.name, o.error);
    }
    let rows = |name: &str| out.iter().find(|o| o.name == name).unwrap().rows;
    // Profile, creator and forum of a message: exactly one row each.
    for q in ["IS1", "IS4", "IS5", "IS6", "IC13"] {
        assert_eq!(rows(q), 1, "{q}");
    }
    // Top-k queries never exceed their LIMIT.
    for (q, k) in [
        ("IC1", 20),
        ("IC2", 20),
        ("IC4", 10),
        ("IC9", 20),
        ("IC10", 10),
    ] {
        assert!(rows(q) <= k, "{q}");
    }
    // IS3 lists the friends of the person: as many as the KNOWS degree.
    let p = |k: &str, v: Value| -> Params { [(k.to_string(), v)].into() };
    let person = db
        .query(
            &g,
            "MATCH (p:Person)-[:KNOWS]-() RETURN p.id AS id, count(*) AS c ORDER BY c DESC, id LIMIT 1",
            &Params::new(),
        )
        .unwrap();
    let (id, degree) = (person.rows[0][0].clone(), person.rows[0][1].clone());
    assert_eq!(Value::Int(rows("IS3") as i64), degree);
    // IC13 (shortest KNOWS path length) agrees with the traversal API.
    let t = db
        .query(
            &g,
            "MATCH (a:Person {id: $id})-[:KNOWS]-()-[:KNOWS]-(b:Person) WHERE a <> b AND NOT (a)-[:KNOWS]-(b) \
             RETURN b.id ORDER BY b.id LIMIT 1",
            &p("id", id.clone()),
        )
        .unwrap();
    let sp = db
        .query(
            &g,
            "MATCH p = shortestPath((a:Person {id: $a})-[:KNOWS*]-(b:Person {id: $b})) RETURN length(p)",
            &[("a".to_string(), id), ("b".to_string(), t.rows[0][0].clone())].into(),
        )
        .unwrap();
    assert_eq!(sp.rows, vec![vec![Value::Int(2)]]);
    // The inserts' graph is gone again after the deletes.
    let left = db
        .query(
            &g,
            "MATCH (n:Person {firstName: 'Ada'}) RETURN count(n)",
            &Params::new(),
        )
        .unwrap();
    assert_eq!(left.rows, vec![vec![Value::Int(0)]]);
    // `read_query` (what `examples/query_loop.rs` runs) hands out a read's
    // reference text with the parameters the run picked: the same rows as
    // the run's; a name that is no read is refused by name.
    for name in ["IS3", "IC4", "IC13"] {
        let (text, params) = ldbc::read_query(&db, &g, &dir, name).unwrap();
        let file = format!(
            "interactive-{}-{}.cypher",
            if name.starts_with("IS") {
                "short"
            } else {
                "complex"
            },
            &name[2..]
        );
        assert_eq!(
            text,
            std::fs::read_to_string(dir.join("v1/queries").join(file)).unwrap()
        );
        let rows = db.query(&g, &text, &params).unwrap().rows.len();
        let want = out.iter().find(|o| o.name == name).unwrap().rows;
        assert_eq!(rows, want, "{name}");
    }
    let err = ldbc::read_query(&db, &g, &dir, "IC15").unwrap_err();
    assert!(err.contains("IC15"), "{err}");
}

fn options(work: &std::path::Path) -> ldbc::side::Options {
    let venv = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/plexus-bench/venv");
    ldbc::side::Options {
        engines: ["plexus", "kuzu", "ladybug"].map(String::from).to_vec(),
        reps: 1,
        rounds: 1,
        peer_threads: 1,
        venv: Some(venv),
        work: work.to_path_buf(),
    }
}

/// Every read ran on all three engines and returned the same rows; most
/// returned some.
fn assert_all_agree(report: &ldbc::side::Report) {
    assert_eq!(report.queries.len(), 21);
    for q in &report.queries {
        let ran = q.runs.iter().filter(|(_, r)| r.missing.is_none()).count();
        assert_eq!(ran, 3, "{}: {:?}", q.name, q.runs);
        assert_eq!(q.agree(), Some(true), "{}: {:?}", q.name, q.difference());
    }
    // Not a vacuous agreement: most queries return rows.
    let with_rows = report
        .queries
        .iter()
        .filter(|q| !q.runs[0].1.rows.is_empty())
        .count();
    assert!(with_rows >= 18, "{with_rows}");
}

/// The reads on Plexus, Kuzu and LadybugDB over the same small generated
/// graph: each engine's rows, read back from each engine, agree on every
/// query the peers have a translation of (`ldbc-kuzu/`).
#[test]
fn the_reads_return_the_same_rows_on_plexus_kuzu_and_ladybug() {
    let dir = ldbc::default_dir();
    let (db, g) = ldbc::load(0.05, 7).unwrap();
    let work = tempfile::tempdir().unwrap();
    let source = plexus_bench::snb::Snb::new(0.05, 7);
    let data = ldbc::side::Data {
        db: &db,
        graph: &g,
        source: &source,
        what: "test".into(),
        given: Default::default(),
    };
    assert_all_agree(&ldbc::side::run(&data, &dir, &options(work.path())).unwrap());
}

/// The same on LDBC's own tiny data set (Datagen's output, 222 persons)
/// with its substitution parameters: a second computation of every
/// translated read, by two other engines, on real data.
#[test]
fn the_reads_agree_on_ldbc_tiny_data_with_its_parameters() {
    let dir = ldbc::default_dir();
    let data_dir = dir.join("v1/test-data");
    let source = ldbc::tiny::Tiny::read(&data_dir.join("vanilla")).unwrap();
    let (db, g) = ldbc::load_from(&source).unwrap();
    let work = tempfile::tempdir().unwrap();
    let given =
        ldbc::tiny::substitution_parameters(&data_dir.join("substitution_parameters")).unwrap();
    let data = ldbc::side::Data {
        db: &db,
        graph: &g,
        source: &source,
        what: "test".into(),
        given,
    };
    assert_all_agree(&ldbc::side::run(&data, &dir, &options(work.path())).unwrap());
}
