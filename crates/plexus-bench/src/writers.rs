//! Concurrent writers: small transactions from 1 to N threads for a fixed
//! time on a fresh database each, with commits per second, conflicts and
//! commit latency (the time `commit()` takes, for commits that succeed).
//!
//! Two workloads: `transfer` moves an amount between two of 100 accounts
//! (read both balances, write both: concurrent transfers on the same account
//! conflict and are retried), and `hub_edge` creates a node and an edge from
//! it to one shared hub (writers never conflict, but all touch one node).

use plexus::{Backend, Database, GraphRead, NodeId, Options, Props, StorageError, Value};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ACCOUNTS: usize = 100;

/// What one run of a workload at one thread count measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub workload: &'static str,
    pub threads: usize,
    pub commits: u64,
    pub conflicts: u64,
    pub seconds: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    /// The database's commit statistics over the run: groups (backend
    /// writes), time in those writes and time the commit lock was held.
    pub stats: plexus::CommitStats,
    /// Bytes the process wrote during the run (the backend's pages and log).
    pub written: u64,
}

impl Outcome {
    pub fn per_second(&self) -> f64 {
        self.commits as f64 / self.seconds
    }

    /// Mean microseconds per group of a total.
    fn per_group(&self, micros: u64) -> f64 {
        micros as f64 / self.stats.groups.max(1) as f64
    }

    pub fn to_json(&self, backend: Backend, durable: bool) -> serde_json::Value {
        json!({
            "engine": "plexus",
            "engine_version": env!("CARGO_PKG_VERSION"),
            "workload": format!("concurrent_{}", self.workload),
            "backend": backend.name(),
            "durable": durable,
            "threads": self.threads,
            "commits": self.commits,
            "conflicts": self.conflicts,
            "seconds": self.seconds,
            "commits_per_second": self.per_second(),
            "p50_commit_us": self.p50_us,
            "p99_commit_us": self.p99_us,
            "groups": self.stats.groups,
            "commits_per_group": self.stats.mean_group(),
            "largest_group": self.stats.largest_group,
            "write_us_per_group": self.per_group(self.stats.write_micros),
            "locked_us_per_group": self.per_group(self.stats.locked_micros),
            "kib_written_per_group": self.per_group(self.written) / 1024.0,
        })
    }
}

/// What each thread counts while it runs.
#[derive(Default)]
struct Tally {
    commits: u64,
    conflicts: u64,
    latencies_us: Vec<f64>,
}

/// Runs `workload` (`transfer` or `hub_edge`) with `threads` writers for
/// `run_for` on a fresh database at `path`.
pub fn run(
    path: &Path,
    backend: Backend,
    durable: bool,
    workload: &'static str,
    threads: usize,
    run_for: Duration,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    let _ = std::fs::remove_dir_all(path);
    let db = Database::create(
        path,
        Options {
            backend: Some(backend),
            durable,
            ..Default::default()
        },
    )?;
    let targets = Arc::new(prepare(&db, workload)?);
    let before = db.commit_stats();
    let written = crate::written_bytes();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|w| {
            let (db, targets, stop) = (db.clone(), targets.clone(), stop.clone());
            std::thread::spawn(move || writer(&db, workload, &targets, w as u64, &stop))
        })
        .collect();
    std::thread::sleep(run_for);
    stop.store(true, Ordering::Relaxed);
    let mut all = Tally::default();
    for h in handles {
        let t = h
            .join()
            .map_err(|_| "a writer thread panicked")?
            .map_err(|e| e.to_string())?;
        all.commits += t.commits;
        all.conflicts += t.conflicts;
        all.latencies_us.extend(t.latencies_us);
    }
    let seconds = started.elapsed().as_secs_f64();
    let after = db.commit_stats();
    let written = crate::written_bytes() - written;
    let stats = plexus::CommitStats {
        commits: after.commits - before.commits,
        conflicts: after.conflicts - before.conflicts,
        groups: after.groups - before.groups,
        largest_group: after.largest_group,
        write_micros: after.write_micros - before.write_micros,
        locked_micros: after.locked_micros - before.locked_micros,
        waiting: 0,
    };
    let report = db.check("default")?;
    if !report.is_ok() {
        return Err(format!("integrity check failed: {:?}", report.problems).into());
    }
    if workload == "transfer" {
        let r = db.read("default")?;
        let mut total = 0;
        for n in targets.iter() {
            total += balance(&r, *n).map_err(|e| e.to_string())?;
        }
        if total != (ACCOUNTS as i64) * 1000 {
            return Err(format!("transfers changed the total to {total}").into());
        }
    }
    drop(db);
    let _ = std::fs::remove_dir_all(path);
    all.latencies_us.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        let l = &all.latencies_us;
        l.get(((l.len().saturating_sub(1)) as f64 * p) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Ok(Outcome {
        workload,
        threads,
        commits: all.commits,
        conflicts: all.conflicts,
        seconds,
        p50_us: pct(0.5),
        p99_us: pct(0.99),
        stats,
        written,
    })
}

/// The accounts (transfer) or the hub (hub_edge), committed durably.
fn prepare(db: &Database, workload: &str) -> plexus::Result<Vec<NodeId>> {
    let mut t = db.write("default")?;
    let ids = if workload == "transfer" {
        let props = Props::from([("balance".to_string(), Value::Int(1000))]);
        (0..ACCOUNTS)
            .map(|i| t.create_node(Some(&format!("a{i}")), &["Account"], &props))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        vec![t.create_node(Some("hub"), &["Hub"], &Props::new())?]
    };
    t.commit()?;
    Ok(ids)
}

type BoxErr = Box<dyn std::error::Error + Send + Sync>;

fn balance(t: &impl GraphRead, n: NodeId) -> Result<i64, BoxErr> {
    match t.node_property(n, "balance")? {
        Some(Value::Int(b)) => Ok(b),
        other => Err(format!("account balance is {other:?}").into()),
    }
}

type Thread = Result<Tally, BoxErr>;

fn writer(db: &Database, workload: &str, targets: &[NodeId], w: u64, stop: &AtomicBool) -> Thread {
    let mut tally = Tally::default();
    let mut seed = w.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        i += 1;
        loop {
            let mut t = db.write("default")?;
            if workload == "transfer" {
                let a = targets[(seed % ACCOUNTS as u64) as usize];
                let b = targets[((seed >> 20) % ACCOUNTS as u64) as usize];
                if a == b {
                    break;
                }
                let amount = ((seed >> 40) % 50) as i64;
                let (ba, bb) = (balance(&t, a)?, balance(&t, b)?);
                t.set_node_property(a, "balance", Value::Int(ba - amount))?;
                t.set_node_property(b, "balance", Value::Int(bb + amount))?;
            } else {
                let n = t.create_node(Some(&format!("w{w}-{i}")), &["Leaf"], &Props::new())?;
                t.create_edge(None, n, targets[0], "TO", &Props::new())?;
            }
            let start = Instant::now();
            match t.commit() {
                Ok(()) => {
                    tally.latencies_us.push(start.elapsed().as_secs_f64() * 1e6);
                    tally.commits += 1;
                    break;
                }
                Err(StorageError::Conflict(_)) => tally.conflicts += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(tally)
}

/// A markdown table of outcomes, with each thread count's speed-up over
/// the single-thread figure of its workload.
pub fn markdown(outcomes: &[Outcome], command: &str) -> String {
    let mut s = format!(
        "`{command}`\n\n| workload | threads | commits/s | × 1 thread | conflicts | commits per group | p50 commit µs | p99 commit µs | write µs per group | lock held µs per group | KiB written per group |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for o in outcomes {
        let single = outcomes
            .iter()
            .find(|b| b.workload == o.workload && b.threads == 1)
            .map_or(f64::NAN, Outcome::per_second);
        s += &format!(
            "| {} | {} | {:.0} | {:.2} | {} | {:.2} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} |\n",
            o.workload,
            o.threads,
            o.per_second(),
            o.per_second() / single,
            o.conflicts,
            o.stats.mean_group(),
            o.p50_us,
            o.p99_us,
            o.per_group(o.stats.write_micros),
            o.per_group(o.stats.locked_micros),
            o.per_group(o.written) / 1024.0,
        );
    }
    s
}
