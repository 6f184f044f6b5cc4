//! `plexus-bench`: Plexus's benchmark harness. For now one workload,
//! `insert-over-time`: single-node inserts, one transaction each, showing
//! that the cost of an insert (its existence check included) does not grow
//! with the size of the graph.

use clap::{Parser, Subcommand};
use plexus::{Backend, Database, Options, Props, Value};
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
    /// Insert nodes one transaction each; compare the first and last tenth.
    InsertOverTime {
        #[arg(long, default_value_t = 1_000_000)]
        nodes: u64,
        #[arg(long, default_value = "lmdb")]
        backend: String,
        /// Sync every commit to disk (default: relaxed, as the issue allows).
        #[arg(long)]
        durable: bool,
        /// Where to build the database (a temporary folder by default).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Append the JSON result line to this file too.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    match Cli::parse().command {
        Cmd::InsertOverTime {
            nodes,
            backend,
            durable,
            dir,
            out,
        } => {
            let backend = Backend::parse(&backend).ok_or("unknown backend (lmdb or fjall)")?;
            if nodes < 10 {
                return Err("--nodes must be at least 10".into());
            }
            let tmp = tempfile_dir()?;
            let path = dir.unwrap_or_else(|| tmp.join("db"));
            let db = Database::create(
                &path,
                Options {
                    backend: Some(backend),
                    durable,
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
    }
}

/// A fresh folder under the system's temporary directory.
fn tempfile_dir() -> std::io::Result<PathBuf> {
    let p = std::env::temp_dir().join(format!("plexus-bench-{}", std::process::id()));
    std::fs::create_dir_all(&p)?;
    Ok(p)
}
