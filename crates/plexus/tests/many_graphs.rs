//! Many small named graphs in one database — AI-memory tools keep one per
//! dataset: each is isolated from the others, creating and dropping one
//! touches only it, and the space a dropped graph held is used again.
//! Run with `--release -- --nocapture` to see the cost of each step
//! (docs/ai-memory.md quotes it; times are never asserted).

use plexus::{Database, Options, Params, Value};
use std::time::Instant;

const GRAPHS: u32 = 600;

fn fill(db: &Database, g: &str, i: u32) {
    let p = Params::from([("i".to_string(), Value::Int(i64::from(i)))]);
    db.query(
        g,
        "UNWIND range(1, 50) AS x CREATE (:C {x: x, ds: $i})-[:R]->(:D)",
        &p,
    )
    .unwrap();
}

fn count(db: &Database, g: &str) -> Vec<Vec<Value>> {
    db.query(
        g,
        "MATCH (c:C)-->(d) RETURN count(*) AS n, min(c.ds) AS lo, max(c.ds) AS hi",
        &Params::new(),
    )
    .unwrap()
    .rows
}

#[test]
fn graphs_are_cheap_isolated_and_their_space_is_used_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db"), Options::default()).unwrap();
    let name = |i: u32| format!("dataset_{i}");
    let t = Instant::now();
    for i in 0..GRAPHS {
        db.create_graph(&name(i)).unwrap();
    }
    let created = t.elapsed();
    for i in 0..GRAPHS {
        fill(&db, &name(i), i);
    }
    assert_eq!(
        db.graphs().len(),
        GRAPHS as usize + 1,
        "and the default graph"
    );
    for i in [0, GRAPHS / 2, GRAPHS - 1] {
        let ds = Value::Int(i64::from(i));
        assert_eq!(
            count(&db, &name(i)),
            vec![vec![Value::Int(50), ds.clone(), ds]]
        );
    }
    let full = db.disk_size().unwrap();
    // Drop every other graph: the rest stay as they were.
    let t = Instant::now();
    for i in (0..GRAPHS).step_by(2) {
        db.drop_graph(&name(i)).unwrap();
    }
    let dropped = t.elapsed();
    assert_eq!(db.graphs().len(), GRAPHS as usize / 2 + 1);
    assert!(
        db.query(&name(0), "RETURN 1", &Params::new()).is_err(),
        "gone"
    );
    let ds = Value::Int(1);
    assert_eq!(
        count(&db, &name(1)),
        vec![vec![Value::Int(50), ds.clone(), ds]]
    );
    // The same names again, as new graphs: empty, then filled. A second
    // round of dropping and refilling half runs in the space the first
    // left: LMDB reuses the pages a dropped graph freed (the first round
    // grows the file, its freed pages not yet all reusable).
    let refill = |round: u32| {
        for i in (0..GRAPHS).step_by(2) {
            db.create_graph(&name(i)).unwrap();
            assert_eq!(
                count(&db, &name(i)),
                vec![vec![Value::Int(0), Value::Null, Value::Null]]
            );
            fill(&db, &name(i), i + round * GRAPHS);
        }
    };
    refill(1);
    let first = db.disk_size().unwrap();
    for i in (0..GRAPHS).step_by(2) {
        db.drop_graph(&name(i)).unwrap();
    }
    refill(2);
    let again = db.disk_size().unwrap();
    assert!(
        again <= first + first / 50,
        "grew from {first} to {again} bytes: a dropped graph's space was not used again"
    );
    let ds = Value::Int(i64::from(2 * GRAPHS));
    assert_eq!(
        count(&db, &name(0)),
        vec![vec![Value::Int(50), ds.clone(), ds]]
    );
    let n = GRAPHS / 2;
    println!(
        "{GRAPHS} graphs: create {:?} each, drop {:?} each (50 nodes and 50 edges), file {} KiB full, {} KiB after dropping and refilling half, {} KiB after doing it again",
        created / GRAPHS,
        dropped / n,
        full / 1024,
        first / 1024,
        again / 1024
    );
}
