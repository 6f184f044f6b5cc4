//! GestaltDB's temporal workload (7,000 versions) written as one batch,
//! RUNS times, each into a new database, for profiling what a one-commit
//! write costs (`plexus-bench temporal` reports its rate beside
//! GestaltDB's). Only `write_loop` is counted when callgrind is told so:
//!
//! ```sh
//! cargo build --release -p plexus-bench --example temporal_write
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='temporal_write::write_loop' \
//!     target/release/examples/temporal_write 5
//! perf record -g target/release/examples/temporal_write --disk /tmp/tw 50
//! ```
//!
//! In memory by default (valgrind cannot map LMDB's reservation);
//! `--disk DIR` writes LMDB stores under DIR, as the bench does.

use plexus::temporal::{commit_versions, VersionWrite};
use plexus::{Database, Options};
use std::path::Path;
use std::time::Instant;

#[global_allocator]
static GLOBAL: plexus_alloc::Alloc = plexus_alloc::Alloc;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// A new database keeping the default graph's history, in memory or at
/// `dir` (what was there removed).
fn fresh(dir: Option<&Path>) -> Res<Database> {
    let db = match dir {
        Some(d) => {
            let _ = std::fs::remove_dir_all(d);
            // Unsynced commits, as the bench runs (`--durable` syncs).
            let opts = Options {
                durable: false,
                ..Options::default()
            };
            Database::create(d, opts)?
        }
        None => Database::in_memory()?,
    };
    db.keep_history("default")?;
    Ok(db)
}

/// Writes `writes` in one commit into `db`; the seconds it took.
#[inline(never)]
fn write_loop(db: &Database, writes: &[VersionWrite]) -> Res<f64> {
    let t = Instant::now();
    commit_versions(db.storage(), "default", writes)?;
    Ok(t.elapsed().as_secs_f64())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, runs) = match args.as_slice() {
        [runs] => (None, runs),
        [flag, dir, runs] if flag == "--disk" => (Some(Path::new(dir)), runs),
        _ => return Err("usage: temporal_write [--disk DIR] RUNS".into()),
    };
    let runs: usize = runs.parse()?;
    let writes = plexus_bench::temporal::workload(1_000, 5_000, 1_000);
    let mut secs = Vec::with_capacity(runs);
    for run in 0..runs {
        let db = fresh(dir.map(|d| d.join(format!("run-{run}"))).as_deref())?;
        secs.push(write_loop(&db, &writes)?);
    }
    secs.sort_by(f64::total_cmp);
    let median = secs.get(secs.len() / 2).copied().unwrap_or(f64::NAN);
    println!(
        "{runs} writes of {} versions: median {:.2} ms, {:.0} versions/s",
        writes.len(),
        median * 1e3,
        writes.len() as f64 / median
    );
    Ok(())
}
