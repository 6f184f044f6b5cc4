//! A retention policy for a graph's history: keep what reads as of the
//! last `ttl` microseconds need, prune the rest.
//!
//! The policy is stored at `g | 01` in the history keyspace (keyspace 1,
//! the catalog, is never versioned, so no version key starts so), beside
//! `g | 00`, the start: dropping the history drops the policy. It is
//! enforced after commits: a commit to a graph with a policy whose last
//! prune is older than a tenth of the ttl (at least a second, at most an
//! hour) starts a prune before `now - ttl` on a thread of its own, one at
//! a time per store. A prune writes in chunks and never blocks readers or
//! the commit that started it (`prune`); prunes (background or asked for)
//! run one at a time, so the start only moves forward. A background prune that fails is
//! tried again when next due; [`crate::Storage::enforce_history_retention`]
//! prunes at once and reports.

use super::{prune, start_log, started, wall_micros};
use crate::error::{Result, StorageError};
use crate::ids::GraphId;
use crate::keys::HISTORY;
use plexus_common::read_u64;
use plexus_kv::{Snapshot, WriteBatch};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `g | RETENTION`: the policy's ttl (µs), big-endian.
const RETENTION: u8 = 1;

fn retention_key(g: u32) -> Vec<u8> {
    super::setting_key(g, RETENTION)
}

/// The stored ttl of graph `g`'s history (µs), if it has a policy.
pub(crate) fn stored(snap: &dyn Snapshot, g: GraphId) -> Result<Option<u64>> {
    Ok(snap
        .get(HISTORY, &retention_key(g.0))?
        .and_then(|v| read_u64(&v, 0)))
}

/// How long after a prune the next is due: a tenth of the ttl, at least a
/// second and at most an hour. (A prune reads only what changed since the
/// last one, save the first after history starts: `prune.rs`.)
fn interval(ttl: u64) -> Duration {
    Duration::from_micros(ttl / 10).clamp(Duration::from_secs(1), Duration::from_secs(3600))
}

struct Policy {
    ttl: u64,
    /// When the last prune started (`None`: not since the store opened).
    last: Option<Instant>,
}

/// The policies of the open store's graphs.
#[derive(Default)]
pub(crate) struct Policies {
    by_graph: Mutex<HashMap<u32, Policy>>,
    /// A background prune runs.
    running: Arc<AtomicBool>,
    /// Held by every prune: two at once could move the start back over
    /// versions the other removed.
    pruning: Mutex<()>,
}

impl Policies {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Policy>> {
        self.by_graph.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set(&self, g: GraphId, ttl: Option<u64>) {
        let mut map = self.lock();
        match ttl {
            Some(ttl) => {
                map.insert(g.0, Policy { ttl, last: None });
            }
            None => {
                map.remove(&g.0);
            }
        }
    }

    /// The ttl of `g` when a prune is due (marking it started).
    fn due(&self, g: GraphId) -> Option<u64> {
        let mut map = self.lock();
        let p = map.get_mut(&g.0)?;
        if p.last.is_some_and(|t| t.elapsed() < interval(p.ttl)) {
            return None;
        }
        p.last = Some(Instant::now());
        Some(p.ttl)
    }

    /// Every graph with a policy, and its ttl.
    fn all(&self) -> Vec<(GraphId, u64)> {
        self.lock()
            .iter()
            .map(|(g, p)| (GraphId(*g), p.ttl))
            .collect()
    }
}

/// The instant before which a ttl lets history go.
fn cutoff(ttl: u64) -> u64 {
    wall_micros().saturating_sub(ttl)
}

/// Prunes graph `g`'s history before `before` (a graph that keeps it);
/// returns the versions removed.
pub(crate) fn prune_graph(
    shared: &crate::storage::Shared,
    g: GraphId,
    name: &str,
    before: u64,
) -> Result<u64> {
    let _one = shared
        .retention
        .pruning
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let snap = shared.kv.snapshot()?;
    let Some(start) = started(&*snap, g)? else {
        return Err(StorageError::NoHistory {
            graph: name.into(),
            starts: None,
            asked: before,
        });
    };
    if before <= start {
        return Ok(0);
    }
    drop(snap);
    // From the first prune on, commits log their keys, so that later
    // prunes read what changed rather than the whole history (`prune.rs`).
    {
        let _c = shared.lock_commits();
        start_log(shared, g)?;
    }
    prune(&*shared.kv, &*shared.kv.snapshot()?, g, before)
}

/// After a commit to `g`: starts a background prune when one is due.
pub(crate) fn after_commit(shared: &Arc<crate::storage::Shared>, g: GraphId) {
    if !shared.history_kept.load(Ordering::Relaxed) {
        return;
    }
    let Some(ttl) = shared.retention.due(g) else {
        return;
    };
    let running = shared.retention.running.clone();
    if running.swap(true, Ordering::AcqRel) {
        return;
    }
    let shared = shared.clone();
    let started = std::thread::Builder::new()
        .name("plexus-retention".into())
        .spawn({
            let running = running.clone();
            move || {
                // An error leaves the history as it was: tried again when
                // next due.
                let _ = prune_graph(&shared, g, "", cutoff(ttl));
                running.store(false, Ordering::Release);
            }
        });
    if started.is_err() {
        running.store(false, Ordering::Release);
    }
}

impl crate::Storage {
    /// Keeps `graph`'s history for `ttl` microseconds (`None`: for ever,
    /// the default): from now on, commits prune what no read as of the
    /// last `ttl` needs, in the background (see the module). The graph
    /// must keep history.
    pub fn set_history_retention(&self, graph: &str, ttl: Option<u64>) -> Result<()> {
        self.writable()?;
        let g = self.graph_id(graph)?;
        let _c = self.shared.lock_commits();
        let snap = self.shared.kv.snapshot()?;
        if started(&*snap, g)?.is_none() {
            return Err(StorageError::NoHistory {
                graph: graph.into(),
                starts: None,
                asked: ttl.map_or(0, cutoff),
            });
        }
        let mut batch = WriteBatch::new();
        match ttl {
            Some(0) => {
                return Err(StorageError::Unsupported(
                    "a history retention of zero keeps nothing: drop the history instead".into(),
                ))
            }
            Some(t) => batch.put(HISTORY, retention_key(g.0), t.to_be_bytes().to_vec()),
            None => batch.delete(HISTORY, retention_key(g.0)),
        }
        self.shared.kv.write(batch)?;
        if ttl.is_some() {
            // Its prunes will read only what changed since the last one.
            start_log(&self.shared, g)?;
        }
        self.shared.retention.set(g, ttl);
        Ok(())
    }

    /// How long `graph` keeps its history (µs), when a policy says.
    pub fn history_retention(&self, graph: &str) -> Result<Option<u64>> {
        let g = self.graph_id(graph)?;
        stored(&*self.shared.kv.snapshot()?, g)
    }

    /// Prunes now every graph whose history has a retention policy;
    /// returns each one's name and the versions removed.
    pub fn enforce_history_retention(&self) -> Result<Vec<(String, u64)>> {
        self.writable()?;
        let names: HashMap<GraphId, String> = self
            .shared
            .catalog
            .graphs()
            .into_iter()
            .map(|(n, g)| (g, n))
            .collect();
        let mut out = Vec::new();
        for (g, ttl) in self.shared.retention.all() {
            let Some(name) = names.get(&g) else { continue };
            out.push((
                name.clone(),
                prune_graph(&self.shared, g, name, cutoff(ttl))?,
            ));
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prune_is_due_once_per_interval() {
        assert_eq!(interval(1), Duration::from_secs(1));
        assert_eq!(interval(100_000_000), Duration::from_secs(10));
        assert_eq!(interval(u64::MAX), Duration::from_secs(3600));
        let p = Policies::default();
        assert_eq!(p.due(GraphId(1)), None, "no policy");
        p.set(GraphId(1), Some(5));
        assert_eq!(p.due(GraphId(1)), Some(5));
        assert_eq!(p.due(GraphId(1)), None, "not again within the interval");
        p.set(GraphId(1), None);
        assert_eq!(p.all(), vec![]);
    }
}
