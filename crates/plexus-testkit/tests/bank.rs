//! Several Plexus processes writing one database on a PostgreSQL server
//! (the one the test command starts): four processes move money between
//! accounts for a bounded time; every total any of them reads is checked,
//! and at the end the store must hold exactly the money there was and one
//! move per account side of every transfer the processes counted (a lost
//! update breaks one or the other). Then the same with two graphs of the
//! database written at once, which must not disturb each other.
#![cfg(feature = "postgres")]

use plexus::{Backend, Database, Options};
use plexus_testkit::bank::{self, Tally, OPENING_BALANCE};
use std::path::Path;
use std::process::{Command, Stdio};

const ACCOUNTS: i64 = 40;
const RUN_MILLIS: u64 = 6_000;

fn server() -> String {
    std::env::var("PLEXUS_TEST_POSTGRES")
        .expect("PLEXUS_TEST_POSTGRES names no PostgreSQL server: run scripts/test")
}

fn create(dir: &Path, graphs: &[&str]) -> Database {
    let db = Database::create(
        dir,
        Options {
            backend: Some(Backend::Postgres),
            store: Some(server()),
            ..Default::default()
        },
    )
    .unwrap();
    for g in graphs {
        bank::open_accounts(&db, g, ACCOUNTS).unwrap();
    }
    db
}

/// Runs one worker per entry of `graphs` at once; their tallies, in order.
fn run_workers(dir: &Path, graphs: &[&str]) -> Vec<Tally> {
    let children: Vec<_> = graphs
        .iter()
        .enumerate()
        .map(|(i, g)| {
            Command::new(env!("CARGO_BIN_EXE_bank_worker"))
                .arg(dir)
                .arg(g)
                .arg(ACCOUNTS.to_string())
                .arg(RUN_MILLIS.to_string())
                .arg((i as u64 + 1).to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "a worker failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Tally::parse(stdout.lines().last().unwrap_or(""))
                .unwrap_or_else(|| panic!("not a tally: {stdout}"))
        })
        .collect()
}

/// Checks one graph's books against the tallies of its workers.
fn audit(db: &Database, graph: &str, tallies: &[Tally]) {
    let transfers: u64 = tallies.iter().map(|t| t.transfers).sum();
    let checks: u64 = tallies.iter().map(|t| t.checks).sum();
    let conflicts: u64 = tallies.iter().map(|t| t.conflicts).sum();
    println!("{graph}: {transfers} transfers, {conflicts} conflicts, {checks} totals checked by {} processes", tallies.len());
    assert!(tallies.iter().all(|t| t.violations == 0), "{tallies:?}");
    assert!(
        tallies.iter().all(|t| t.transfers > 0 && t.checks > 0),
        "every process worked: {tallies:?}"
    );
    let (total, n, moves) = bank::books(db, graph).unwrap();
    assert_eq!(n, ACCOUNTS);
    assert_eq!(total, OPENING_BALANCE * ACCOUNTS, "money made or lost");
    assert_eq!(moves as u64, 2 * transfers, "a transfer's update was lost");
}

fn spawn_in_threads(dir: &Path, graphs: Vec<&'static str>) -> Vec<Tally> {
    let dir = dir.to_path_buf();
    std::thread::spawn(move || run_workers(&dir, &graphs))
        .join()
        .unwrap()
}

#[test]
fn four_processes_move_money_without_losing_an_update() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = create(&dir, &["bank"]);
    // This process keeps the database open while the workers run (they
    // need no lock of the folder), and audits what they wrote.
    let tallies = spawn_in_threads(&dir, vec!["bank"; 4]);
    audit(&db, "bank", &tallies);
    drop(db);
    Database::destroy(&dir, &Options::default()).unwrap();
    assert!(!dir.exists());
    assert!(
        tallies.iter().map(|t| t.conflicts).sum::<u64>() > 0,
        "four processes on {ACCOUNTS} accounts for {RUN_MILLIS} ms never collided: the test tests nothing"
    );
}

#[test]
fn two_graphs_written_at_once_do_not_disturb_each_other() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = create(&dir, &["east", "west"]);
    let tallies = spawn_in_threads(&dir, vec!["east", "east", "west", "west"]);
    audit(&db, "east", &tallies[..2]);
    audit(&db, "west", &tallies[2..]);
}

/// A new database on the server and two handles on it, each with its own
/// memory, as two processes have (and the folder, kept while they live).
fn two_handles() -> (tempfile::TempDir, Database, Database) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let one = create(&dir, &[]);
    let two = Database::open(&dir, Options::default()).unwrap();
    (tmp, one, two)
}

/// Two handles on one database stand for two processes (each has its own
/// memory): a transaction that read a node another handle changed and
/// committed since is refused, and one that did not is not.
#[test]
fn a_commit_that_lost_the_race_in_another_process_is_refused() {
    use plexus::{GraphRead, Props, Value};
    let (_tmp, one, two) = two_handles();
    let mut t = one.write("default").unwrap();
    let a = t.create_node(Some("a"), &["N"], &Props::new()).unwrap();
    let b = t.create_node(Some("b"), &["N"], &Props::new()).unwrap();
    t.commit().unwrap();
    let set = |t: &mut plexus::WriteTxn, n, v: i64| {
        t.set_node_property(n, "v", Value::Int(v)).unwrap();
    };
    let mut first = one.write("default").unwrap();
    let mut second = two.write("default").unwrap();
    let mut third = two.write("default").unwrap();
    set(&mut first, a, 1);
    set(&mut second, a, 2);
    set(&mut third, b, 3);
    first.commit().unwrap();
    let e = second.commit().unwrap_err();
    assert_eq!(e.kind(), plexus::ErrorKind::Conflict, "{e}");
    third.commit().unwrap();
    // Each handle reads what the other wrote.
    let r = one.read("default").unwrap();
    assert_eq!(r.node_property(b, "v").unwrap(), Some(Value::Int(3)));
    let r = two.read("default").unwrap();
    assert_eq!(r.node_property(a, "v").unwrap(), Some(Value::Int(1)));
    // Ids given by the two handles never collide.
    let mut t1 = one.write("default").unwrap();
    let mut t2 = two.write("default").unwrap();
    let x = t1.create_node(None, &["M"], &Props::new()).unwrap();
    let y = t2.create_node(None, &["M"], &Props::new()).unwrap();
    assert_ne!(x, y);
    t1.commit().unwrap();
    t2.commit().unwrap();
    assert_eq!(
        two.query(
            "default",
            "MATCH (m:M) RETURN count(m) AS n",
            &Default::default()
        )
        .unwrap()
        .rows,
        vec![vec![Value::Int(2)]]
    );
}

/// Two handles (two processes' memories) share a vector index: what one
/// adds or deletes, the other's searches find or miss, and its own
/// additions on top of the other's are found too (a handle whose index
/// state another changed loads it again).
#[test]
fn a_vector_index_follows_writes_from_another_process() {
    use plexus::{Params, Value};
    let (_tmp, one, two) = two_handles();
    let run = |db: &Database, text: &str, p: &Params| db.query("default", text, p).unwrap().rows;
    let none = Params::new();
    run(
        &one,
        "CREATE VECTOR INDEX docs FOR (d:Doc) ON d.v \
         OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}",
        &none,
    );
    let add = |db: &Database, id: i64, v: [f64; 3]| {
        let p = Params::from([
            ("id".to_string(), Value::Int(id)),
            (
                "v".to_string(),
                Value::List(v.iter().map(|x| Value::Float(*x)).collect()),
            ),
        ]);
        run(db, "CREATE (:Doc {id: $id, v: $v})", &p);
    };
    let nearest = |db: &Database, v: [f64; 3]| -> Vec<Vec<Value>> {
        let p = Params::from([(
            "q".to_string(),
            Value::List(v.iter().map(|x| Value::Float(*x)).collect()),
        )]);
        run(
            db,
            "CALL db.index.vector.queryNodes('docs', 1, $q) YIELD node RETURN node.id",
            &p,
        )
    };
    add(&one, 1, [1.0, 0.0, 0.0]);
    // The second handle loaded the index before or after: either way it
    // finds what the first added.
    assert_eq!(nearest(&two, [1.0, 0.1, 0.0]), vec![vec![Value::Int(1)]]);
    add(&two, 2, [0.0, 1.0, 0.0]);
    assert_eq!(nearest(&one, [0.0, 1.0, 0.1]), vec![vec![Value::Int(2)]]);
    add(&one, 3, [0.0, 0.0, 1.0]);
    for db in [&one, &two] {
        assert_eq!(nearest(db, [0.1, 0.0, 1.0]), vec![vec![Value::Int(3)]]);
        assert_eq!(nearest(db, [0.0, 1.0, 0.1]), vec![vec![Value::Int(2)]]);
    }
    run(&two, "MATCH (d:Doc {id: 3}) DETACH DELETE d", &none);
    assert_eq!(nearest(&one, [0.1, 0.0, 1.0]).len(), 1);
    assert_ne!(
        nearest(&one, [0.1, 0.0, 1.0]),
        vec![vec![Value::Int(3)]],
        "deleted elsewhere"
    );
}

/// List updates from two processes to one node commute on a server store
/// too: both commit, and the list holds both.
#[test]
fn list_updates_from_two_processes_both_land() {
    use plexus::{GraphRead, Props, Value};
    let (_tmp, one, two) = two_handles();
    let mut t = one.write("default").unwrap();
    let n = t.create_node(Some("doc"), &["Doc"], &Props::new()).unwrap();
    t.commit().unwrap();
    let mut a = one.write("default").unwrap();
    let mut b = two.write("default").unwrap();
    a.list_add(n, "refs", Value::from("a")).unwrap();
    b.list_add(n, "refs", Value::from("b")).unwrap();
    b.commit().unwrap();
    a.commit().unwrap();
    let r = two.read("default").unwrap();
    assert_eq!(
        r.node_property(n, "refs").unwrap(),
        Some(Value::List(vec![Value::from("b"), Value::from("a")]))
    );
}

/// A node `doc` with `v`, then history on: the node and the start.
fn doc_with_history(db: &Database, v: plexus::Value) -> (plexus::NodeId, u64) {
    let mut t = db.write("default").unwrap();
    let props = plexus::Props::from([("v".into(), v)]);
    let n = t.create_node(Some("doc"), &["Doc"], &props).unwrap();
    t.commit().unwrap();
    (n, db.keep_history("default").unwrap())
}

/// History on a store two processes write: one turns it on, both commit,
/// and each reads the graph as of every commit, the other's too; the
/// commits' system times rise across the processes.
#[test]
fn history_kept_from_two_processes() {
    use plexus::{GraphRead, Props, Value};
    let (_tmp, one, two) = two_handles();
    let (n, start) = doc_with_history(&one, Value::from("a"));
    assert_eq!(two.keep_history("default").unwrap(), start, "already on");
    let mut times = vec![(start, "a")];
    for (db, v) in [(&two, "b"), (&one, "c"), (&two, "d")] {
        let mut t = db.write("default").unwrap();
        t.set_node_property(n, "v", Value::from(v)).unwrap();
        t.commit().unwrap();
        let at = db.system_time().unwrap();
        assert!(
            at > times.last().map_or(0, |(t, _)| *t),
            "{at} after {times:?}"
        );
        times.push((at, v));
    }
    let mut t = two.write("default").unwrap();
    let late = t
        .create_node(Some("late"), &["Doc"], &Props::new())
        .unwrap();
    t.commit().unwrap();
    for db in [&one, &two] {
        for (at, v) in &times {
            let r = db.read_as_of("default", *at).unwrap();
            assert_eq!(
                r.node_property(n, "v").unwrap(),
                Some(Value::from(*v)),
                "as of {at}"
            );
            assert!(r.node_property(late, "v").unwrap().is_none());
            assert_eq!(r.node_id("late").unwrap(), None, "as of {at}");
        }
        assert!(db.read_as_of("default", start - 1).is_err());
    }
    two.drop_history("default").unwrap();
    assert!(one.read_as_of("default", start).is_err());
}

/// Prunes on a store that two processes write: a retention policy set by
/// one starts the change log for both, prunes read it (the third prune
/// only what changed since the second), and every read as of a cutoff or
/// later agrees from either handle, with exactly the versions that need
/// keeping left.
#[test]
fn history_pruned_from_two_processes() {
    use plexus::{GraphRead, Value};
    use std::time::Duration;
    let (_tmp, one, two) = two_handles();
    let (n, _) = doc_with_history(&one, Value::Int(0));
    // A year: its own prunes remove nothing here.
    two.set_history_retention("default", Some(Duration::from_secs(365 * 86_400)))
        .unwrap();
    let mut times = Vec::new();
    let mut removed = Vec::new();
    for round in 1..=4i64 {
        for (k, db) in [&one, &two].into_iter().enumerate() {
            let mut t = db.write("default").unwrap();
            t.set_node_property(n, "v", Value::Int(round * 10 + k as i64))
                .unwrap();
            t.commit().unwrap();
            times.push((db.system_time().unwrap(), round * 10 + k as i64));
        }
        // The last commit of the round before: from it on, reads stay.
        let cutoff = match times.len().checked_sub(3) {
            Some(i) => times[i].0,
            None => 0,
        };
        if round > 1 {
            removed.push(one.prune_history("default", cutoff).unwrap());
        }
        for db in [&one, &two] {
            for (at, v) in times.iter().filter(|(at, _)| *at >= cutoff) {
                let r = db.read_as_of("default", *at).unwrap();
                assert_eq!(r.node_property(n, "v").unwrap(), Some(Value::Int(*v)));
            }
            if round > 1 {
                assert!(db.read_as_of("default", cutoff - 1).is_err());
                // The version holding at the cutoff, and the two after it.
                let kept = db.storage().node_history("default", n).unwrap();
                assert_eq!(kept.len(), 3, "{kept:?}");
            }
        }
    }
    // Each prune gave back the node's two versions of the round before
    // (and the counters' as they changed): none came back empty.
    assert!(removed.iter().all(|r| *r >= 2), "{removed:?}");
}
