//! `plexus-bench compare`: the suites, and running them on every engine.

use crate::gen::{write_csv, write_parquet, Generator, Gestalt, Shape, Skewed};
use crate::{engine, peak_rss_mb, peers, Case, Row};
use plexus::{Database, Options};
use std::path::PathBuf;
use std::time::Instant;

/// One generated graph and the workloads measured on it.
pub struct Part {
    pub gen: Box<dyn Generator>,
    pub cases: Vec<Case>,
    /// Relationship types the typed workloads follow, hop by hop.
    pub typed: Vec<&'static str>,
    /// The property-filtered count: `key = value`.
    pub filter: (&'static str, i64),
}

/// Single-node inserts after the load: new ids, a tenth of the graph's
/// nodes (at most 10,000), timed tenth by tenth. It runs last: it changes
/// the graph.
fn inserts(nodes: u64) -> Case {
    let ids: Vec<String> = (0..(nodes / 10).clamp(10, 10_000))
        .map(|i| format!("ins{i}"))
        .collect();
    Case {
        name: "insert_over_time",
        kind: "insert_over_time",
        seeds: ids,
    }
}

/// The user ids of the skewed graph's ten seeds among `nodes` nodes,
/// spread over the id range (`examples/query_loop.rs` runs from them too).
pub fn skewed_seeds(nodes: u64) -> Vec<String> {
    (0..10u64)
        .map(|k| format!("v{}", (k * 99_991 + 17) % nodes.max(1)))
        .collect()
}

fn case(name: &'static str, kind: &'static str, seeds: &[String]) -> Case {
    Case {
        name,
        kind,
        seeds: seeds.to_vec(),
    }
}

/// The parts of a suite: `gestalt` (GestaltDB's three shapes) or `skewed`.
pub fn suite(graph: &str, nodes: u64, edges: Option<u64>) -> Result<Vec<Part>, String> {
    if graph == "snb" {
        return Err("use snb_suite for the SNB-like graph".into());
    }
    if nodes < 20 {
        return Err("--nodes must be at least 20".into());
    }
    match graph {
        "gestalt" => {
            let e = edges.unwrap_or(5 * nodes);
            let seeds: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
            let n0 = vec!["n0".to_string()];
            let g = |shape| Box::new(Gestalt { shape, n: nodes, e }) as Box<dyn Generator>;
            Ok(vec![
                Part {
                    gen: g(Shape::Synthetic),
                    cases: vec![
                        case("gestalt_neighbors", "typed_neighbors", &seeds),
                        case("gestalt_sample_neighbors", "sample5", &seeds),
                        case("gestalt_bfs_depth", "reach3", &n0),
                        case("gestalt_deep_typed", "typed_path3", &seeds),
                    ],
                    typed: vec!["RelA", "RelB", "RelC"],
                    filter: ("grp", 7),
                },
                Part {
                    gen: g(Shape::Star),
                    cases: vec![case("gestalt_star", "star", &n0)],
                    typed: vec!["RelA"],
                    filter: ("grp", 7),
                },
                Part {
                    gen: g(Shape::TypedPath),
                    cases: vec![case("gestalt_typed_path", "typed_path2", &seeds)],
                    typed: vec!["RelA", "RelB"],
                    filter: ("grp", 7),
                },
            ])
        }
        "skewed" => {
            if edges.is_some() {
                return Err("the skewed graph always has 5 edges per node; drop --edges".into());
            }
            let seeds = skewed_seeds(nodes);
            Ok(vec![Part {
                gen: Box::new(Skewed { n: nodes, seed: 42 }),
                cases: [
                    "neighbors",
                    "typed_neighbors",
                    "reach3",
                    "typed_path2",
                    "count_paths3",
                    "count_trails3",
                    "shortest_path",
                    "lookup",
                    "filter_count",
                    "filter_count_unindexed",
                    "filter_prefix_unindexed",
                    "group_count_unindexed",
                ]
                .into_iter()
                .map(|k| case(k, k, &seeds))
                .chain(std::iter::once(inserts(nodes)))
                .collect(),
                typed: vec!["T0", "T1"],
                filter: ("grp", 7),
            }])
        }
        other => Err(format!("unknown graph '{other}' (gestalt, skewed or snb)")),
    }
}

/// The SNB-like social network at scale factor `sf`: friendship
/// traversals between pseudo-random persons (KNOWS in both directions, as
/// LDBC's interactive queries follow it).
pub fn snb_suite(sf: f64) -> Result<Vec<Part>, String> {
    if !(sf > 0.0 && sf <= 1000.0) {
        return Err("--sf must be between 0 and 1000".into());
    }
    let g = crate::snb::Snb::new(sf, 42);
    let p = g.persons();
    // 40 persons spread over the id range: 20 shortest-path pairs.
    let seeds: Vec<String> = (0..40u64)
        .map(|k| format!("p{}", (k * 7919 + 11) % p))
        .collect();
    let ten = seeds[..10].to_vec();
    Ok(vec![Part {
        gen: Box::new(g),
        cases: vec![
            case("knows_shortest_path", "knows_shortest", &seeds),
            case("knows_reach2", "knows_reach2", &ten),
            case("neighbors", "neighbors", &ten),
            case("lookup", "lookup", &ten),
        ],
        typed: vec!["KNOWS"],
        filter: ("length", 7),
    }])
}

/// How often each thing is measured.
#[derive(Debug, Clone, Copy)]
pub struct Reps {
    /// Runs of each workload.
    pub workloads: usize,
    /// Imports, each into a fresh database (the last one is queried): a
    /// single import on a shared machine is at the mercy of what ran
    /// before it.
    pub imports: usize,
}

pub struct CompareOptions {
    pub engines: Vec<String>,
    /// The PostgreSQL server of the `plexus-postgres` and
    /// `plexus-cypher-postgres` engines (Plexus on the postgres backend).
    pub store: Option<String>,
    /// The files peers load: `parquet` or `csv`.
    pub format: String,
    pub reps: Reps,
    pub work: PathBuf,
    pub venv: PathBuf,
}

/// Runs every part on every engine, one engine at a time.
pub fn compare(parts: &[Part], o: &CompareOptions) -> Result<Vec<Row>, String> {
    let peers: Vec<&String> = o.engines.iter().filter(|e| peers::is_python(e)).collect();
    let python = if peers.is_empty() {
        None
    } else {
        Some(peers::ensure_venv(&o.venv)?)
    };
    if let Some(python) = python
        .as_ref()
        .filter(|_| peers.iter().any(|e| *e == "plexus-py"))
    {
        peers::install_plexus_module(python)?;
    }
    let mut rows = Vec::new();
    for part in parts {
        let g = &*part.gen;
        let dir = o.work.join(g.name());
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        if python.is_some() {
            eprintln!("writing {} as {} ...", g.name(), o.format);
            match o.format.as_str() {
                "csv" => write_csv(g, &dir).map_err(|e| e.to_string())?,
                "parquet" => write_parquet(g, &dir).map_err(|e| e.to_string())?,
                other => return Err(format!("unknown format '{other}' (parquet or csv)")),
            }
        }
        // With Parquet files written for the peers, Plexus imports the
        // very same files (`plexus import`'s path), so import times compare.
        let files = (python.is_some() && o.format == "parquet").then_some(dir.as_path());
        for engine in ["plexus", "plexus-postgres"] {
            if let Some(target) = own_target(o, engine)? {
                eprintln!(
                    "{engine}: {} ({} nodes, {} edges)",
                    g.name(),
                    g.nodes(),
                    g.edges()
                );
                rows.extend(
                    run_plexus(
                        part,
                        &dir.join(format!("{engine}-db")),
                        files,
                        o.reps,
                        &target,
                    )
                    .map_err(|e| format!("{engine}: {e}"))?,
                );
            }
        }
        for engine in ["plexus-cypher", "plexus-cypher-postgres"] {
            if let Some(target) = own_target(o, engine)? {
                eprintln!("{engine}: {}", g.name());
                rows.extend(
                    run_plexus_cypher(
                        part,
                        &dir.join(format!("{engine}-db")),
                        o.reps.workloads,
                        &target,
                    )
                    .map_err(|e| format!("{engine}: {e}"))?,
                );
            }
        }
        for peer in &peers {
            eprintln!("{peer}: {}", g.name());
            let python = python.as_ref().expect("venv exists when peers run");
            rows.extend(peers::run(
                python,
                peer,
                g,
                &dir,
                &o.format,
                &part.cases,
                &part.typed,
                part.filter,
                o.reps,
            )?);
        }
    }
    Ok(rows)
}

/// One of Plexus's own engines: its name in the results, and the server
/// of its store when that is not a local LMDB.
pub struct Target {
    pub engine: String,
    pub store: Option<String>,
}

/// The target of `engine` when it was asked for.
fn own_target(o: &CompareOptions, engine: &str) -> Result<Option<Target>, String> {
    if !o.engines.iter().any(|e| e == engine) {
        return Ok(None);
    }
    let store = if engine.ends_with("-postgres") {
        Some(o.store.clone().ok_or_else(|| {
            format!("the {engine} engine needs a PostgreSQL server: --store postgres://…")
        })?)
    } else {
        None
    };
    Ok(Some(Target {
        engine: engine.to_string(),
        store,
    }))
}

/// A new database at `path` (whatever was there is removed, its schema on
/// a server too), with relaxed durability as every engine gets during the
/// benchmark; on `store`'s server when given.
pub fn fresh_db(path: &std::path::Path, store: Option<&str>) -> plexus::Result<Database> {
    let opts = Options {
        backend: store.map(|_| plexus::Backend::Postgres),
        store: store.map(String::from),
        durable: false,
        ..Default::default()
    };
    match Database::destroy(path, &opts) {
        Ok(()) | Err(plexus::Error::Missing(_)) => {}
        Err(e) => return Err(e),
    }
    let _ = std::fs::remove_dir_all(path);
    Database::create(path, opts)
}

/// What [`timed`] measured.
type Timed = (u64, Vec<f64>, Option<u64>);

/// Runs `f` `reps` times; its last count, the seconds of each run and
/// the round trips to `db`'s store in the last run (a remote store only).
fn timed(
    db: &Database,
    reps: usize,
    mut f: impl FnMut() -> Result<u64, Box<dyn std::error::Error>>,
) -> Result<Timed, Box<dyn std::error::Error>> {
    let mut secs = Vec::with_capacity(reps);
    let mut count = 0;
    let trips = || db.storage().kv().round_trips();
    let mut last = None;
    for _ in 0..reps {
        let before = trips();
        let t = Instant::now();
        count = f()?;
        secs.push(t.elapsed().as_secs_f64());
        last = trips().zip(before).map(|(a, b)| a - b);
    }
    Ok((count, secs, last))
}

/// The first read of an unindexed property builds its column, which later
/// reads use (`plexus-storage/src/columns.rs`): the first repetition's time
/// is noted beside the median, which is that of a warm column (the prefix
/// filter reads the column the equality built).
fn first_run_note(case: &Case, secs: &[f64]) -> Option<String> {
    let first = secs.first().filter(|_| {
        matches!(
            case.kind,
            "filter_count_unindexed" | "filter_prefix_unindexed" | "group_count_unindexed"
        )
    })?;
    Some(format!(
        "first run {:.2} ms (a property's first read builds its column)",
        first * 1e3
    ))
}

/// Where the database's bytes go, largest keyspace first:
/// `space: adjacency 52.1 MiB (48%), nodes …`.
fn space_note(db: &Database) -> Result<String, plexus::Error> {
    let r = db.space()?;
    let total = r.disk_bytes.max(1) as f64;
    let mut ks: Vec<_> = r.keyspaces.iter().filter(|k| k.stored_bytes > 0).collect();
    ks.sort_by_key(|k| std::cmp::Reverse(k.stored_bytes));
    let parts: Vec<String> = ks
        .iter()
        .map(|k| {
            format!(
                "{} {:.1} MiB ({:.0}%)",
                k.name,
                k.stored_bytes as f64 / 1048576.0,
                k.stored_bytes as f64 * 100.0 / total
            )
        })
        .collect();
    Ok(format!("space: {}", parts.join(", ")))
}

/// A result row of one of Plexus's own engines on `part`.
fn own_row(
    engine: &str,
    part: &Part,
    workload: &str,
    count: Option<u64>,
    seconds: Vec<f64>,
    db: &Database,
) -> Result<Row, plexus::Error> {
    let g = &*part.gen;
    Ok(Row {
        engine: engine.into(),
        engine_version: env!("CARGO_PKG_VERSION").into(),
        workload: workload.into(),
        graph: g.name(),
        nodes: g.nodes(),
        edges: g.edges(),
        count,
        seconds,
        peak_rss_mb: peak_rss_mb(),
        disk_mb: db.disk_size()? as f64 / 1048576.0,
        note: None,
        round_trips: None,
    })
}

fn run_plexus(
    part: &Part,
    path: &std::path::Path,
    files: Option<&std::path::Path>,
    reps: Reps,
    target: &Target,
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let g = &*part.gen;
    let engine = target.engine.as_str();
    let graph = "bench";
    let mut loads = Vec::with_capacity(reps.imports);
    let mut db = None;
    for _ in 0..reps.imports.max(1) {
        // The previous database is closed before its folder is removed.
        drop(db.take());
        let fresh = fresh_db(path, target.store.as_deref())?;
        loads.push(match files {
            Some(dir) => engine::load_files(&fresh, graph, dir, &g.types(), part.filter.0)?,
            None => engine::load(&fresh, graph, g, part.filter.0)?,
        });
        db = Some(fresh);
    }
    let db = db.expect("at least one import ran");
    let reps = reps.workloads;
    let mut import = own_row(
        engine,
        part,
        "import",
        Some(g.nodes() + g.edges()),
        loads,
        &db,
    )?;
    import.note = Some(space_note(&db)?);
    let mut rows = vec![import];
    for case in &part.cases {
        if case.kind == "insert_over_time" {
            let tenths = engine::insert_over_time(&db, graph, &case.seeds)?;
            let mut row = own_row(
                engine,
                part,
                case.name,
                Some(case.seeds.len() as u64),
                tenths.clone(),
                &db,
            )?;
            row.note = Some(format!(
                "per-insert mean of each tenth; last/first = {:.2}",
                tenths[9] / tenths[0]
            ));
            rows.push(row);
            continue;
        }
        // A read transaction per workload: one held across the inserts
        // would keep LMDB from reusing the pages they free, and the file
        // would grow by every page each insert copies.
        let r = db.read(graph)?;
        let (count, secs, trips) = timed(&db, reps, || {
            engine::run(&r, case, &part.typed, part.filter)
        })?;
        let note = first_run_note(case, &secs);
        let mut row = own_row(engine, part, case.name, Some(count), secs, &db)?;
        row.note = note;
        row.round_trips = trips;
        rows.push(row);
    }
    drop_remote(db, path, target)?;
    Ok(rows)
}

/// A database on a server is dropped once measured (a local one stays in
/// the working folder).
fn drop_remote(
    db: Database,
    path: &std::path::Path,
    target: &Target,
) -> Result<(), Box<dyn std::error::Error>> {
    if target.store.is_some() {
        drop(db);
        Database::destroy(path, &Options::default())?;
    }
    Ok(())
}

/// The workloads as Cypher in a read-only transaction (plan cache warm
/// after the first repetition), on an on-disk copy of the graph whose nodes also
/// carry their id as an indexed property, as the peers store them.
fn run_plexus_cypher(
    part: &Part,
    path: &std::path::Path,
    reps: usize,
    target: &Target,
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let db = fresh_db(path, target.store.as_deref())?;
    let graph = "bench";
    engine::load_with(&db, graph, &*part.gen, part.filter.0, true)?;
    let mut rows = Vec::new();
    for case in &part.cases {
        let Some(text) = engine::cypher_text(case, &part.typed, part.filter) else {
            continue;
        };
        // One read-only transaction per workload, opened before the clock
        // starts, as `run_plexus` holds one read transaction.
        let mut tx = db.session(graph)?.begin_read()?;
        let (count, secs, trips) = timed(&db, reps, || engine::run_cypher(&mut tx, case, &text))?;
        drop(tx);
        let note = first_run_note(case, &secs);
        let mut row = own_row(&target.engine, part, case.name, Some(count), secs, &db)?;
        row.note = Some(match note {
            Some(n) => format!("{text}; {n}"),
            None => text,
        });
        row.round_trips = trips;
        rows.push(row);
    }
    drop_remote(db, path, target)?;
    Ok(rows)
}

/// Workloads whose counts differ between engines, one line each.
pub fn cross_check(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    let mut keys: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.graph.as_str(), r.workload.as_str()))
        .collect();
    keys.sort();
    keys.dedup();
    for (graph, w) in keys {
        let counts: Vec<(&str, u64)> = rows
            .iter()
            .filter(|r| r.graph == graph && r.workload == w)
            .filter_map(|r| r.count.map(|c| (r.engine.as_str(), c)))
            .collect();
        if counts.windows(2).any(|p| p[0].1 != p[1].1) {
            let all: Vec<String> = counts.iter().map(|(e, c)| format!("{e}={c}")).collect();
            out.push(format!(
                "COUNT MISMATCH on {graph} / {w}: {}",
                all.join(", ")
            ));
        }
    }
    out
}
