//! The deterministic workload of the crash test: what step `i` writes, and
//! what the graph must hold after steps `0..=m` committed.

use plexus::{Backend, Options};
use plexus::{
    ConstraintKind, ConstraintSpec, Database, DeleteMode, GraphRead, IndexSpec, Props, ReadTxn,
    Value,
};
use std::collections::BTreeSet;
use std::io::Write;

/// Node steps, and edges as `(from step, to step)`.
pub type State = (BTreeSet<u64>, BTreeSet<(u64, u64)>);

/// Expected state after steps `0..=m`.
pub fn expected(m: Option<u64>) -> State {
    let mut nodes = BTreeSet::new();
    let mut edges = BTreeSet::new();
    let Some(m) = m else { return (nodes, edges) };
    for i in 0..=m {
        nodes.insert(i);
        if i > 0 && nodes.contains(&(i - 1)) {
            edges.insert((i - 1, i));
        }
        if let Some(victim) = doomed(i) {
            if nodes.remove(&victim) {
                edges.retain(|(a, b)| *a != victim && *b != victim);
            }
        }
    }
    (nodes, edges)
}

fn doomed(i: u64) -> Option<u64> {
    (i % 7 == 6).then(|| i - 3)
}

/// Creates the schema on a new database (idempotent).
pub fn prepare(db: &Database) -> plexus::Result<()> {
    let mut t = db.write("default")?;
    if t.constraints()?.is_empty() {
        t.create_constraint(ConstraintSpec {
            name: None,
            label: "L".into(),
            key: "step".into(),
            kind: ConstraintKind::Unique,
        })?;
        t.create_index(IndexSpec::list("L", "tags"))?;
        t.create_index(
            IndexSpec::vector(
                "L",
                "vec",
                vec![
                    ("vector.dimensions".into(), Value::Int(4)),
                    (
                        "vector.similarity_function".into(),
                        Value::String("euclidean".into()),
                    ),
                    ("vector.quantization.enabled".into(), Value::Bool(false)),
                ],
            )
            .named("steps"),
        )?;
        t.commit()?;
    }
    Ok(())
}

/// The last committed step, from the progress node.
pub fn progress(db: &Database) -> plexus::Result<Option<u64>> {
    progress_in(&db.read("default")?)
}

/// The last committed step that `r` sees. The checks after a crash read
/// one snapshot for everything: on PostgreSQL, the killed writer's last
/// COMMIT may still land after the checker opened the store (the server
/// finishes what it was sent), and two snapshots could then disagree.
pub fn progress_in(r: &ReadTxn) -> plexus::Result<Option<u64>> {
    Ok(r.node_by_key("progress")?
        .and_then(|n| n.props.get("step").and_then(Value::as_int))
        .map(|s| s as u64))
}

/// Writes step `i` in one transaction.
pub fn step(db: &Database, i: u64) -> plexus::Result<()> {
    let mut t = db.write("default")?;
    let props = Props::from([
        ("step".to_string(), Value::Int(i as i64)),
        (
            "tags".to_string(),
            Value::List(vec![Value::Int((i % 3) as i64), Value::Int((i % 5) as i64)]),
        ),
        (
            "payload".to_string(),
            Value::String("x".repeat((i % 50) as usize)),
        ),
        (
            "vec".to_string(),
            Value::List(
                step_vector(i)
                    .iter()
                    .map(|x| Value::Float(f64::from(*x)))
                    .collect(),
            ),
        ),
    ]);
    let n = t.create_node(Some(&format!("n{i}")), &["L"], &props)?;
    if i > 0 {
        if let Some(prev) = t.node_id(&format!("n{}", i - 1))? {
            t.create_edge(Some(&format!("e{i}")), prev, n, "NEXT", &Props::new())?;
        }
    }
    if let Some(victim) = doomed(i) {
        if let Some(v) = t.node_id(&format!("n{victim}"))? {
            t.delete_node(v, DeleteMode::Detach)?;
        }
    }
    t.merge_node(
        "progress",
        &["Meta"],
        &Props::from([("step".to_string(), Value::Int(i as i64))]),
    )?;
    t.commit()?;
    Ok(())
}

/// Step `i`'s vector in the `steps` index: its own point, exact in f32.
pub fn step_vector(i: u64) -> [f32; 4] {
    [i as f32, (i % 7) as f32, (i % 3) as f32, 1.0]
}

/// Checks the vector index against the graph: each node is the nearest
/// to its own step's vector, and a search for more than there are returns
/// exactly the nodes there are (no deleted or uncommitted one). The
/// problems found.
pub fn vector_problems(r: &ReadTxn) -> plexus::Result<Vec<String>> {
    let (nodes, _) = observed(r)?;
    let mut problems = Vec::new();
    // A power cut before the writer's first commit leaves no index yet:
    // right only while there is no step either.
    if !r.indexes()?.iter().any(|i| i.name == "steps") {
        if !nodes.is_empty() {
            problems.push(format!("no vector index, with {} steps", nodes.len()));
        }
        return Ok(problems);
    }
    for s in &nodes {
        let hits = plexus::vectors::search(r, "steps", &step_vector(*s), 1, None, None)?;
        let found = match hits.first() {
            Some(h) => r.node(h.node)?.map(|n| n.key),
            None => None,
        };
        if found.as_deref() != Some(&format!("n{s}")) {
            problems.push(format!("step {s}: its vector finds {found:?}"));
        }
    }
    let all = plexus::vectors::search(r, "steps", &[0.0; 4], nodes.len() + 5, None, None)?;
    if all.len() != nodes.len() {
        problems.push(format!("{} vectors for {} nodes", all.len(), nodes.len()));
    }
    Ok(problems)
}

/// What `r` sees: node steps and edges by step.
pub fn observed(r: &ReadTxn) -> plexus::Result<State> {
    let mut nodes = BTreeSet::new();
    let step_of = |id| -> plexus::Result<Option<u64>> {
        Ok(r.node(id)?
            .filter(|n| n.labels == ["L"])
            .and_then(|n| n.props.get("step").and_then(Value::as_int))
            .map(|s| s as u64))
    };
    for id in r.nodes_with_label("L") {
        if let Some(s) = step_of(id?)? {
            nodes.insert(s);
        }
    }
    let mut edges = BTreeSet::new();
    for id in r.edges() {
        let e = r.edge(id?)?.expect("listed edge exists");
        if let (Some(a), Some(b)) = (step_of(e.src)?, step_of(e.dst)?) {
            edges.insert((a, b));
        }
    }
    Ok((nodes, edges))
}

/// The concurrent workload: thread `t`'s step `i` creates node `c{t}-{i}`
/// with an edge to the shared hub and records `i` on the thread's own
/// progress node `p{t}`. Threads never conflict, so every commit of a
/// group lands or none does.
pub fn concurrent_step(db: &Database, t: u64, i: u64) -> plexus::Result<()> {
    let mut txn = db.write("default")?;
    let hub = match txn.node_id("hub")? {
        Some(h) => h,
        None => {
            return Err(plexus::Error::Storage(plexus::StorageError::Invalid(
                "the hub is missing: run concurrent_prepare first".into(),
            )))
        }
    };
    let props = Props::from([
        ("thread".to_string(), Value::Int(t as i64)),
        ("step".to_string(), Value::Int(i as i64)),
    ]);
    let n = txn.create_node(Some(&format!("c{t}-{i}")), &["C"], &props)?;
    txn.create_edge(None, n, hub, "TO", &Props::new())?;
    txn.merge_node(
        &format!("p{t}"),
        &["Meta"],
        &Props::from([("step".to_string(), Value::Int(i as i64))]),
    )?;
    txn.commit()?;
    Ok(())
}

/// Creates the hub of the concurrent workload (idempotent).
pub fn concurrent_prepare(db: &Database) -> plexus::Result<()> {
    let mut t = db.write("default")?;
    if t.node_id("hub")?.is_none() {
        t.create_node(Some("hub"), &["Hub"], &Props::new())?;
        t.commit()?;
    }
    Ok(())
}

/// Thread `t`'s last committed step, from its progress node.
pub fn concurrent_progress(r: &ReadTxn, t: u64) -> plexus::Result<Option<u64>> {
    Ok(r.node_by_key(&format!("p{t}"))?
        .and_then(|n| n.props.get("step").and_then(Value::as_int))
        .map(|s| s as u64))
}

/// Per thread, the steps whose nodes exist with an edge to the hub, and
/// the number of nodes of the workload (to catch one without its edge).
pub fn concurrent_observed(
    r: &ReadTxn,
) -> plexus::Result<(std::collections::BTreeMap<u64, BTreeSet<u64>>, usize)> {
    let mut steps: std::collections::BTreeMap<u64, BTreeSet<u64>> = Default::default();
    let Some(hub) = r.node_id("hub")? else {
        return Ok((steps, 0));
    };
    for nb in r.neighbors(hub, plexus::Direction::In, Some("TO"))? {
        let Some(n) = r.node(nb.node)? else { continue };
        let get = |k: &str| n.props.get(k).and_then(Value::as_int).map(|v| v as u64);
        if let (Some(t), Some(i)) = (get("thread"), get("step")) {
            steps.entry(t).or_default().insert(i);
        }
    }
    let nodes = r.nodes_with_label("C").count();
    Ok((steps, nodes))
}

/// The writers' main: `<database folder> <lmdb|fjall|postgres> [threads]` after the
/// program name; commits synced when `durable`. `opened` runs once the
/// database is open, before the first step.
pub fn writer_main(durable: bool, opened: &dyn Fn()) {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(backend)) = (args.get(1), args.get(2).and_then(|b| Backend::parse(b)))
    else {
        let me = args.first().map_or("writer", String::as_str);
        eprintln!("usage: {me} <database folder> <lmdb|fjall> [threads]");
        std::process::exit(2);
    };
    let opts = Options {
        backend: Some(backend),
        // The postgres backend's server: the one the test command started.
        store: std::env::var("PLEXUS_TEST_POSTGRES").ok(),
        durable,
        ..Default::default()
    };
    // The test that starts this writer runs others beside it, whose
    // writers it forks: a fork made while the test still held this
    // database's lock keeps a copy of that lock until it execs. So a lock
    // held by the test's own process is waited for, briefly.
    let mut tries = 0;
    let db = loop {
        match Database::open_or_create(path, opts.clone()) {
            Err(plexus::Error::Locked(_, holder))
                if tries < 100 && holder == Some(std::os::unix::process::parent_id()) =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.expect("open"),
        }
    };
    opened();
    match args.get(3).map(|t| t.parse::<u64>()) {
        None => sequential(&db),
        Some(Ok(threads)) if threads > 0 => concurrent(&db, threads),
        Some(_) => {
            eprintln!("threads must be a positive number");
            std::process::exit(2);
        }
    }
}

fn sequential(db: &Database) {
    prepare(db).expect("schema");
    let mut next = progress(db).expect("progress").map_or(0, |s| s + 1);
    let stdout = std::io::stdout();
    loop {
        if let Err(e) = step(db, next) {
            // On PostgreSQL the killed writer's last COMMIT can land after
            // this writer read its progress (the server finishes what it
            // was sent): go on after that step.
            match progress(db).expect("progress") {
                Some(p) if p >= next => next = p + 1,
                _ => panic!("step {next}: {e}"),
            }
            continue;
        }
        let mut o = stdout.lock();
        writeln!(o, "{next}").expect("stdout");
        o.flush().expect("stdout");
        next += 1;
    }
}

fn concurrent(db: &Database, threads: u64) {
    concurrent_prepare(db).expect("hub");
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut next = db
                    .read("default")
                    .and_then(|r| concurrent_progress(&r, t))
                    .expect("progress")
                    .map_or(0, |s| s + 1);
                loop {
                    if let Err(e) = concurrent_step(&db, t, next) {
                        // As in `sequential`: a killed writer's commit of
                        // this step may have landed since.
                        let done = db
                            .read("default")
                            .and_then(|r| concurrent_progress(&r, t))
                            .expect("progress");
                        match done {
                            Some(p) if p >= next => next = p + 1,
                            _ => panic!("thread {t}, step {next}: {e}"),
                        }
                        continue;
                    }
                    let mut o = std::io::stdout().lock();
                    writeln!(o, "{t} {next}").expect("stdout");
                    o.flush().expect("stdout");
                    next += 1;
                }
            })
        })
        .collect();
    for h in handles {
        if h.join().is_err() {
            std::process::exit(1);
        }
    }
}
