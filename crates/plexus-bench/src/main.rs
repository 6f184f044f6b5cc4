//! `plexus-bench`: generators, workloads and peers side by side.

use clap::{Parser, Subcommand};
use plexus::{Backend, Database, Options, Props, Value};
use plexus_bench::compare::{compare, cross_check, snb_suite, suite, CompareOptions, Reps};
use plexus_bench::home_cache;
use plexus_bench::{peak_rss_mb, report};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
#[command(name = "plexus-bench", about = "Plexus benchmark harness")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate a graph, load it into every engine, run the workloads, compare.
    Compare {
        /// gestalt (GestaltDB's shapes), skewed, or snb.
        #[arg(long, default_value = "skewed")]
        graph: String,
        #[arg(long, default_value_t = 100_000)]
        nodes: u64,
        /// Edges (gestalt only; default 5 per node).
        #[arg(long)]
        edges: Option<u64>,
        /// Scale factor of the SNB-like graph (persons = 2000 × SF).
        #[arg(long, default_value_t = 1.0)]
        sf: f64,
        /// Engines to run, comma-separated.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "plexus,plexus-cypher,kuzu,ladybug,gestaltdb"
        )]
        engines: Vec<String>,
        /// The files peers load: parquet or csv.
        #[arg(long, default_value = "parquet")]
        format: String,
        /// Repetitions of each workload (medians and p95 over these).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Imports per engine, each into a fresh database (median shown).
        #[arg(long, default_value_t = 1)]
        import_reps: usize,
        /// JSON lines output; a markdown table and an SVG chart are written beside it.
        #[arg(long)]
        out: Option<PathBuf>,
        /// `smoke`: tiny graphs of both kinds, every engine, counts checked (for CI).
        #[arg(long)]
        preset: Option<String>,
        /// Working folder for generated files and databases (default: a temporary one).
        #[arg(long)]
        work: Option<PathBuf>,
        /// The peers' Python virtualenv (created on first use).
        #[arg(long)]
        venv: Option<PathBuf>,
        /// A PostgreSQL server (`postgres://user@host:port/db`) for the
        /// engines `plexus-postgres` and `plexus-cypher-postgres`: Plexus on
        /// its postgres backend, with round trips per run counted (build
        /// with `--features postgres`).
        #[arg(long)]
        store: Option<String>,
    },
    /// Latency of a parameterised one-hop Cypher query from the Rust API
    /// (warm plan cache), on the skewed graph in an on-disk database.
    OneHop {
        #[arg(long, default_value_t = 100_000)]
        nodes: u64,
        /// Queries to time (each with another seed).
        #[arg(long, default_value_t = 20_000)]
        queries: usize,
        /// An in-memory database instead of one on disk.
        #[arg(long)]
        in_memory: bool,
        /// The query (default: the one-hop with rows); `$id` is a node id.
        #[arg(long, default_value = "MATCH (a {id: $id})-[:T0]->(b) RETURN b.id")]
        query: String,
    },
    /// The one-hop query in process and through Bolt: `plexus serve` and
    /// FalkorDB through the Neo4j Python driver, FalkorDB through its own
    /// client (needs root for a network namespace; peers pinned in a venv).
    Bolt {
        #[arg(long, default_value_t = 100_000)]
        nodes: u64,
        #[arg(long, default_value_t = 2_000)]
        queries: usize,
        /// The plexus binary to serve with (default: beside this one).
        #[arg(long)]
        plexus_bin: Option<PathBuf>,
        /// The virtualenv for the driver and FalkorDB (created on first use).
        #[arg(long)]
        venv: Option<PathBuf>,
        /// Markdown output (JSON lines beside it).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run the LDBC SNB Interactive reference queries on the SNB-like graph.
    Ldbc {
        /// Scale factor (persons = 2000 × SF).
        #[arg(long, default_value_t = 0.1)]
        sf: f64,
        /// The LDBC suite folder (default: ../shared/suites/ldbc beside the repository).
        #[arg(long)]
        ldbc_dir: Option<PathBuf>,
        /// Run on LDBC's own tiny data set (`v1/test-data` of the suite,
        /// 222 persons) with its substitution parameters, instead of the
        /// generated graph (side by side; `--sf` is ignored).
        #[arg(long)]
        tiny: bool,
        /// Engines: `plexus` alone runs every query once (reads, inserts,
        /// deletes); with `kuzu` or `ladybug` the reads run side by side.
        #[arg(long, value_delimiter = ',', default_value = "plexus")]
        engines: Vec<String>,
        /// Runs of each read per engine, side by side (the median is reported).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Side by side: rounds of every engine in turn, each round running
        /// every read `--reps` times on each engine (the median is over all
        /// rounds), so that a machine whose load drifts weighs on every
        /// engine alike.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// The peers' virtualenv (created on first use).
        #[arg(long)]
        venv: Option<PathBuf>,
        /// Where the peers' files and databases go (default: a temporary
        /// folder, removed afterwards).
        #[arg(long)]
        work: Option<PathBuf>,
        /// Write the markdown report here (JSON lines beside it, side by side).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Small write transactions from several threads at once, durable by
    /// default: commits per second, conflicts, commit latency, group sizes.
    ConcurrentWrites {
        /// Writer thread counts to run, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16")]
        threads: Vec<usize>,
        /// Seconds each workload runs at each thread count.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Runs of each workload at each thread count; the run with the
        /// median commits per second is reported.
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// transfer (between two of 100 accounts), hub_edge (a node and an
        /// edge to one shared hub), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "transfer,hub_edge")]
        workloads: Vec<String>,
        #[arg(long, default_value = "lmdb")]
        backend: String,
        /// Commits without syncing (durable is the default).
        #[arg(long)]
        relaxed: bool,
        /// Markdown output (JSON lines beside it).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Nearest-neighbour search on generated unit vectors: Plexus's HNSW
    /// beside faiss, hnswlib, usearch and pgvector (pinned in a virtualenv), recall@k against
    /// exact search, latency, QPS, build time and index size.
    Vectors(plexus_bench::vectors::Options),
    /// The AI-memory workload of the seed study (cognify's documents of 250
    /// nodes and 750 relationships with provenance, node sets and chunk
    /// vectors): loads with 1 and N writers, deleting a document, node-set
    /// filtered vector search, neighbourhood reads, space under churn.
    Memory(plexus_bench::memory::Options),
    /// GestaltDB's temporal smoke workload (node, edge and interval
    /// versions; as-of lookups) on Plexus's valid-time store and on
    /// GestaltDB; then one entity's history grown from 10k to 1M versions.
    Temporal(plexus_bench::temporal::Options),
    /// Claims, rules and modal entailment (status lookups, a rule run,
    /// truth maintenance, entailment questions) on Plexus and GestaltDB.
    Knowledge(plexus_bench::knowledge::Options),
    /// Insert nodes one transaction each; compare the first and last tenth.
    InsertOverTime {
        #[arg(long, default_value_t = 1_000_000)]
        nodes: u64,
        #[arg(long, default_value = "lmdb")]
        backend: String,
        /// Sync every commit to disk (default: relaxed, as the issue allows).
        #[arg(long)]
        durable: bool,
        /// Append the JSON result line to this file too.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// The allocator `plexus` (the command line) uses, so imports measure alike.
#[global_allocator]
static GLOBAL: plexus_alloc::Alloc = plexus_alloc::Alloc;

fn main() {
    if let Err(e) = run(Cli::parse().command) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(cmd: Cmd) -> Result<(), Box<dyn std::error::Error>> {
    match cmd {
        Cmd::Compare {
            graph,
            nodes,
            edges,
            sf,
            format,
            engines,
            reps,
            import_reps,
            out,
            preset,
            work,
            venv,
            store,
        } => {
            let tmp = std::env::temp_dir().join(format!("plexus-bench-{}", std::process::id()));
            let work = work.unwrap_or_else(|| tmp.clone());
            let (parts, reps) = match preset.as_deref() {
                Some("smoke") => {
                    let mut p = suite("gestalt", 1000, Some(5000))?;
                    p.extend(suite("skewed", 2000, None)?);
                    p.extend(snb_suite(0.1)?);
                    (p, 2)
                }
                Some(other) => return Err(format!("unknown preset '{other}' (smoke)").into()),
                None if graph == "snb" => (snb_suite(sf)?, reps.max(1)),
                None => (suite(&graph, nodes, edges)?, reps.max(1)),
            };
            let opts = CompareOptions {
                engines: engines.clone(),
                store,
                format,
                reps: Reps {
                    workloads: reps,
                    imports: import_reps.max(1),
                },
                work: work.clone(),
                venv: venv.unwrap_or_else(|| home_cache("venv")),
            };
            let started = chrono_free_now();
            let rows = compare(&parts, &opts)?;
            let table = report::markdown(&rows, &engines) + &report::remote_table(&rows);
            println!("{table}");
            if let Some(out) = out {
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&out)?;
                for r in &rows {
                    writeln!(f, "{}", r.to_json())?;
                }
                let title = format!("Plexus speed-up over the best peer ({started})");
                std::fs::write(
                    out.with_extension("md"),
                    format!("Run at {started} on {}.\n\n{table}", machine()),
                )?;
                std::fs::write(out.with_extension("svg"), report::svg(&rows, &title))?;
            }
            if work == tmp {
                std::fs::remove_dir_all(&tmp).ok();
            }
            let mismatches = cross_check(&rows);
            for m in &mismatches {
                eprintln!("{m}");
            }
            if !mismatches.is_empty() {
                return Err(format!(
                    "{} workload(s) returned different counts on different engines",
                    mismatches.len()
                )
                .into());
            }
            Ok(())
        }
        Cmd::OneHop {
            nodes,
            queries,
            in_memory,
            query,
        } => one_hop(nodes, queries, in_memory, &query),
        Cmd::Bolt {
            nodes,
            queries,
            plexus_bin,
            venv,
            out,
        } => {
            let here = std::env::current_exe()?;
            let o = plexus_bench::bolt::Options {
                nodes,
                queries,
                plexus_bin: plexus_bin.unwrap_or_else(|| here.with_file_name("plexus")),
                venv: venv.unwrap_or_else(|| home_cache("bolt-venv")),
            };
            let rows = plexus_bench::bolt::run(&o)?;
            let command = format!(
                "cargo run --release -p plexus-bench -- bolt --nodes {nodes} --queries {queries}{}",
                out.as_ref()
                    .map(|p| format!(" --out {}", p.display()))
                    .unwrap_or_default()
            );
            let md = plexus_bench::bolt::markdown(&rows, &command);
            println!("{md}");
            if let Some(out) = out {
                std::fs::write(&out, &md)?;
                let lines: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
                std::fs::write(out.with_extension("jsonl"), lines.join("\n") + "\n")?;
            }
            Ok(())
        }
        Cmd::Ldbc {
            sf,
            ldbc_dir,
            tiny,
            engines,
            reps,
            rounds,
            venv,
            work,
            out,
        } => {
            let dir = ldbc_dir.unwrap_or_else(plexus_bench::ldbc::default_dir);
            if tiny || engines.iter().any(|e| e != "plexus") {
                let side = LdbcSide {
                    sf: (!tiny).then_some(sf),
                    engines,
                    reps,
                    rounds,
                    venv,
                    work,
                    out,
                };
                return ldbc_side(&dir, side);
            }
            let start = Instant::now();
            let (db, graph) = plexus_bench::ldbc::load(sf, 42)?;
            eprintln!(
                "loaded SNB SF {sf} in {:.1} s",
                start.elapsed().as_secs_f64()
            );
            let outcomes = plexus_bench::ldbc::run(&db, &graph, &dir)?;
            let command = format!(
                "cargo run --release -p plexus-bench -- ldbc --sf {sf}{}",
                out.as_ref()
                    .map(|o| format!(" --out {}", o.display()))
                    .unwrap_or_default()
            );
            let md = plexus_bench::ldbc::markdown(&outcomes, sf, &command);
            println!("{md}");
            if let Some(out) = out {
                std::fs::write(out, &md)?;
            }
            let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
            if failed > 0 {
                return Err(format!("{failed} LDBC quer(ies) failed").into());
            }
            Ok(())
        }
        Cmd::ConcurrentWrites {
            threads,
            seconds,
            reps,
            workloads,
            backend,
            relaxed,
            out,
        } => {
            let o = WriterOptions {
                seconds,
                reps,
                backend,
                relaxed,
            };
            concurrent_writes(&threads, &workloads, &o, out)
        }
        Cmd::Vectors(o) => plexus_bench::vectors::main(&o),
        Cmd::Memory(o) => plexus_bench::memory::main(&o).map_err(|e| e.to_string().into()),
        Cmd::Temporal(o) => plexus_bench::temporal::main(&o).map_err(|e| e.to_string().into()),
        Cmd::Knowledge(o) => plexus_bench::knowledge::main(&o).map_err(|e| e.to_string().into()),
        Cmd::InsertOverTime {
            nodes,
            backend,
            durable,
            out,
        } => insert_over_time(nodes, &backend, durable, out),
    }
}

/// Cores, memory and processor of this machine, from /proc.
fn machine() -> String {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1048576.0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown processor".into());
    format!("{cores} cores, {mem_gib:.0} GiB, {cpu}")
}

/// UTC date and time from the system clock, without a date crate.
fn chrono_free_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let dt = plexus::LocalDateTime {
        secs: secs as i64,
        nanos: 0,
    };
    format!("{dt} UTC")
}

/// Times a parameterised query (by default `MATCH (a {id: $id})-[:T0]->(b)
/// RETURN b.id`) through `Database::query`, one seed after another, and
/// prints percentiles.
/// The options of `ldbc` side by side.
struct LdbcSide {
    /// The generated graph's scale factor; `None`: LDBC's tiny data set.
    sf: Option<f64>,
    engines: Vec<String>,
    reps: usize,
    rounds: usize,
    venv: Option<PathBuf>,
    work: Option<PathBuf>,
    out: Option<PathBuf>,
}

/// `ldbc` with peers or on the tiny set: the reads side by side
/// (`plexus_bench::ldbc::side`).
fn ldbc_side(dir: &std::path::Path, a: LdbcSide) -> Result<(), Box<dyn std::error::Error>> {
    use plexus_bench::ldbc::{self, side, tiny};
    let start = Instant::now();
    let (source, what, given): (Box<dyn plexus_bench::gen::Generator>, String, _) = match a.sf {
        Some(sf) => (
            Box::new(plexus_bench::snb::Snb::new(sf, 42)),
            format!("the SNB-like graph at SF {sf}, parameters picked from the graph"),
            Default::default(),
        ),
        None => {
            let data = dir.join("v1/test-data");
            let t = tiny::Tiny::read(&data.join("vanilla"))?;
            let what = format!(
                "LDBC's tiny data set (`v1/test-data`, {} persons), IC1–14 with every row of \
                 its substitution parameters (the rows of all compared, the median over every \
                 run of every row), IS parameters picked from the graph",
                t.persons()
            );
            let given = tiny::substitution_parameters(&data.join("substitution_parameters"))?;
            (Box::new(t), what, given)
        }
    };
    let (db, graph) = ldbc::load_from(source.as_ref())?;
    eprintln!(
        "loaded {} in {:.1} s",
        source.name(),
        start.elapsed().as_secs_f64()
    );
    let (work, temporary) = plexus_bench::work_dir(a.work.as_deref(), "ldbc")?;
    let o = side::Options {
        engines: a.engines.clone(),
        reps: a.reps,
        rounds: a.rounds,
        peer_threads: 0,
        venv: a.venv,
        work: work.clone(),
    };
    let data = side::Data {
        db: &db,
        graph: &graph,
        source: source.as_ref(),
        what,
        given,
    };
    let report = side::run(&data, dir, &o);
    if temporary {
        let _ = std::fs::remove_dir_all(&work);
    }
    let report = report?;
    let command = format!(
        "cargo run --release -p plexus-bench -- ldbc {} --engines {} --reps {} --rounds {}{}",
        a.sf.map_or_else(|| "--tiny".to_string(), |sf| format!("--sf {sf}")),
        a.engines.join(","),
        a.reps,
        a.rounds,
        a.out
            .as_ref()
            .map(|o| format!(" --out {}", o.display()))
            .unwrap_or_default()
    );
    let md = side::markdown(&report, &command);
    plexus_bench::report(a.out.as_deref(), &md, &side::lines(&report))?;
    Ok(())
}

fn one_hop(
    nodes: u64,
    queries: usize,
    in_memory: bool,
    text: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    use plexus_bench::gen::Skewed;
    let tmp = std::env::temp_dir().join(format!("plexus-bench-onehop-{}", std::process::id()));
    let db = if in_memory {
        Database::in_memory()?
    } else {
        plexus_bench::compare::fresh_db(&tmp.join("db"), None)?
    };
    plexus_bench::engine::load_with(&db, "bench", &Skewed { n: nodes, seed: 42 }, "grp", true)?;
    let mut lat = Vec::with_capacity(queries);
    let mut rows = 0usize;
    for i in 0..queries {
        let id = format!("v{}", (i as u64 * 7919) % nodes);
        let params = plexus::Params::from([("id".to_string(), Value::String(id))]);
        let start = Instant::now();
        rows += db.query("bench", text, &params)?.rows.len();
        lat.push(start.elapsed().as_secs_f64() * 1e6);
    }
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize];
    let result = json!({
        "workload": "one_hop_cypher",
        "query": text,
        "nodes": nodes,
        "queries": queries,
        "rows": rows,
        "median_us": pct(0.5),
        "p95_us": pct(0.95),
        "p99_us": pct(0.99),
        "cached_plans": db.cached_plans(),
        "storage": if in_memory { "memory" } else { "lmdb" },
    });
    println!("{result}");
    drop(db);
    std::fs::remove_dir_all(&tmp).ok();
    Ok(())
}

fn insert_over_time(
    nodes: u64,
    backend: &str,
    durable: bool,
    out: Option<PathBuf>,
) -> Result<(), Box<dyn std::error::Error>> {
    let backend = Backend::parse(backend).ok_or("unknown backend (lmdb or fjall)")?;
    if nodes < 10 {
        return Err("--nodes must be at least 10".into());
    }
    let tmp = std::env::temp_dir().join(format!("plexus-bench-{}", std::process::id()));
    let db = Database::create(
        tmp.join("db"),
        Options {
            backend: Some(backend),
            durable,
            ..Default::default()
        },
    )?;
    let tenth = nodes / 10;
    let mut tenths = Vec::with_capacity(10);
    for t in 0..10 {
        let start = Instant::now();
        for i in t * tenth..(t + 1) * tenth {
            let mut txn = db.write("default")?;
            let props = Props::from([("group".to_string(), Value::Int((i % 128) as i64))]);
            txn.create_node(Some(&format!("n{i}")), &["Node"], &props)?;
            txn.commit()?;
        }
        let mean_us = start.elapsed().as_secs_f64() * 1e6 / tenth as f64;
        eprintln!("tenth {}/10: {mean_us:.2} µs per insert", t + 1);
        tenths.push(mean_us);
    }
    let result = json!({
        "engine": "plexus",
        "engine_version": env!("CARGO_PKG_VERSION"),
        "workload": "insert_over_time",
        "backend": backend.name(),
        "durable": durable,
        "nodes": nodes,
        "tenths_mean_us": tenths,
        "first_tenth_mean_us": tenths[0],
        "last_tenth_mean_us": tenths[9],
        "ratio_last_to_first": tenths[9] / tenths[0],
        "peak_rss_mb": peak_rss_mb(),
        "disk_mb": db.disk_size()? as f64 / 1048576.0,
    });
    println!("{result}");
    if let Some(out) = out {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(out)?;
        writeln!(f, "{result}")?;
    }
    drop(db);
    std::fs::remove_dir_all(&tmp).ok();
    Ok(())
}

struct WriterOptions {
    seconds: f64,
    reps: usize,
    backend: String,
    relaxed: bool,
}

fn concurrent_writes(
    threads: &[usize],
    workloads: &[String],
    o: &WriterOptions,
    out: Option<PathBuf>,
) -> Result<(), Box<dyn std::error::Error>> {
    use plexus_bench::writers;
    let (seconds, relaxed) = (o.seconds, o.relaxed);
    let reps = o.reps.clamp(1, 100);
    let backend = Backend::parse(&o.backend).ok_or("unknown backend (lmdb or fjall)")?;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
        return Err("--seconds must be between 0 and 3600".into());
    }
    if threads.iter().any(|t| !(1..=256).contains(t)) {
        return Err("--threads must each be between 1 and 256".into());
    }
    let tmp = std::env::temp_dir().join(format!("plexus-bench-writers-{}", std::process::id()));
    let mut outcomes = Vec::new();
    for w in workloads {
        let workload = match w.as_str() {
            "transfer" => "transfer",
            "hub_edge" => "hub_edge",
            other => return Err(format!("unknown workload '{other}' (transfer, hub_edge)").into()),
        };
        for &n in threads {
            let run_for = std::time::Duration::from_secs_f64(seconds);
            let mut runs = (0..reps)
                .map(|_| writers::run(&tmp.join("db"), backend, !relaxed, workload, n, run_for))
                .collect::<Result<Vec<_>, _>>()?;
            runs.sort_by(|a, b| a.per_second().total_cmp(&b.per_second()));
            let o = runs.swap_remove(runs.len() / 2);
            eprintln!(
                "{workload} × {n}: {:.0} commits/s, {} conflicts, p50 {:.0} µs, p99 {:.0} µs",
                o.per_second(),
                o.conflicts,
                o.p50_us,
                o.p99_us
            );
            outcomes.push(o);
        }
    }
    std::fs::remove_dir_all(&tmp).ok();
    let list = |v: Vec<String>| v.join(",");
    let command = format!(
        "cargo run --release -p plexus-bench -- concurrent-writes --threads {} --seconds {seconds} --reps {reps} --workloads {} --backend {}{}",
        list(threads.iter().map(|t| t.to_string()).collect()),
        list(workloads.to_vec()),
        backend.name(),
        if relaxed { " --relaxed" } else { "" },
    );
    let md = format!(
        "Run at {} on {}.\n\n{}",
        chrono_free_now(),
        machine(),
        writers::markdown(&outcomes, &command)
    );
    println!("{md}");
    if let Some(out) = out {
        std::fs::write(&out, &md)?;
        let lines: Vec<String> = outcomes
            .iter()
            .map(|o| o.to_json(backend, !relaxed).to_string())
            .collect();
        std::fs::write(out.with_extension("jsonl"), lines.join("\n") + "\n")?;
    }
    Ok(())
}
