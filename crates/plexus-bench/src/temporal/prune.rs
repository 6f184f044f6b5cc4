//! The retention part of `plexus-bench temporal`: what a prune of
//! system-time history costs when the graph is large and little changed
//! since the last prune, as under a retention policy (which prunes every
//! tenth of its window).
//!
//! A graph of `nodes` nodes keeps history from its first write, under a
//! retention policy (of a year, so that its own prunes remove nothing
//! here; a policy starts the change log that later prunes read); then each
//! round commits ten transactions of ten random nodes' new values and
//! prunes before the end of the round before. The first prune reads the
//! whole history (the graph's first versions included); each later one
//! only what was written since the one before.

use super::Res;
use crate::percentile;
use plexus::algo::Rng;
use plexus::{Database, Options as DbOptions, Props, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// What the prunes cost.
pub(super) struct Pruned {
    /// The first prune: ms and versions removed.
    pub first: (f64, u64),
    /// The later prunes: median ms and median versions removed.
    pub later: (f64, u64),
    pub rounds: usize,
}

/// Nodes written per transaction while the graph is built.
const BUILD_CHUNK: usize = 10_000;

pub(super) fn run(dir: &Path, nodes: usize, rounds: usize, seed: u64) -> Res<Pruned> {
    let db = Database::create(dir, DbOptions::default())?;
    db.keep_history("default")?;
    db.set_history_retention("default", Some(Duration::from_secs(365 * 86_400)))?;
    let value = |v: i64| -> Props { [("v".to_string(), Value::Int(v))].into() };
    for first in (0..nodes).step_by(BUILD_CHUNK) {
        let mut t = db.write("default")?;
        for i in first..first.saturating_add(BUILD_CHUNK).min(nodes) {
            t.put_node(&format!("n{i}"), &["N"], &value(0))?;
        }
        t.commit()?;
    }
    let mut rng = Rng::new(seed);
    let mut times = Vec::new();
    let mut removed = Vec::new();
    let mut previous_end = db.system_time()?;
    for round in 1..=rounds.max(2) {
        for _ in 0..10 {
            let mut t = db.write("default")?;
            for _ in 0..10 {
                let i = rng.below(nodes.max(1));
                t.put_node(&format!("n{i}"), &["N"], &value(round as i64))?;
            }
            t.commit()?;
        }
        let started = Instant::now();
        removed.push(db.prune_history("default", previous_end)?);
        times.push(started.elapsed().as_secs_f64() * 1e3);
        previous_end = db.system_time()?;
    }
    let mut later_removed = removed[1..].to_vec();
    later_removed.sort_unstable();
    Ok(Pruned {
        first: (times[0], removed[0]),
        later: (
            percentile(&times[1..], 0.5).unwrap_or(f64::NAN),
            later_removed[later_removed.len() / 2],
        ),
        rounds: times.len(),
    })
}
