//! The history's part of the storage handle: turning history on and off,
//! reading as of an instant, pruning, an entity's versions.

use super::{baseline, clear, clock, prune_graph, started, versions, AsOf};
use crate::error::{Result, StorageError};
use crate::ids::NodeId;
use crate::keys::NODES;
use plexus_kv::WriteBatch;

impl crate::Storage {
    /// Keeps the history of `graph` from now on: every later commit's
    /// changes are kept as versions, so that the graph can be read as it
    /// was at any instant since ([`crate::Storage::read_as_of`]). What the
    /// graph holds now is written as the first version of each entry, under
    /// the commit lock (writers wait while it is written). Returns the
    /// instant history starts (µs since the epoch); a graph that keeps
    /// history already keeps its start.
    pub fn keep_history(&self, graph: &str) -> Result<u64> {
        self.writable()?;
        let g = self.graph_id(graph)?;
        let _c = self.shared.lock_commits();
        let t = if self.shared.multi {
            self.keep_history_shared(g)?
        } else {
            let snap = self.shared.kv.snapshot()?;
            if let Some(start) = started(&*snap, g)? {
                return Ok(start);
            }
            // Stale versions of an earlier, interrupted start lie before
            // the new start, where no read reaches.
            baseline(&*self.shared.kv, &*snap, g)?
        };
        self.shared
            .history_kept
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(t)
    }

    /// [`crate::Storage::keep_history`] on a store that several processes
    /// write: the versions of what the graph holds and the start, in the
    /// serialized write that stamps them (one batch), so that no other
    /// process's commit lands between them; every commit after it, from
    /// any process, sees the start and keeps versions.
    fn keep_history_shared(&self, g: crate::ids::GraphId) -> Result<u64> {
        let mut start = 0;
        crate::coord::write_serialized(&*self.shared.kv, &mut |snap| {
            let mut batch = WriteBatch::new();
            start = match started(snap, g)? {
                Some(t) => t,
                None => super::baseline_in(snap, g, &mut batch)?,
            };
            Ok(batch)
        })?;
        Ok(start)
    }

    /// Stops keeping the history of `graph` and deletes what was kept.
    pub fn drop_history(&self, graph: &str) -> Result<()> {
        self.writable()?;
        let g = self.graph_id(graph)?;
        let _c = self.shared.lock_commits();
        // Serialized with every process's commits: none of them keeps a
        // version after the clear.
        crate::coord::write_serialized(&*self.shared.kv, &mut |_| {
            let mut batch = WriteBatch::new();
            clear(&mut batch, g);
            Ok(batch)
        })?;
        self.shared.retention.set(g, None);
        Ok(())
    }

    /// The instant (µs since the epoch) from which `graph`'s history is
    /// kept, or `None` when it keeps none.
    pub fn history_start(&self, graph: &str) -> Result<Option<u64>> {
        let g = self.graph_id(graph)?;
        started(&*self.shared.kv.snapshot()?, g)
    }

    /// The system time of the latest commit that kept history (µs since
    /// the epoch; 0 before any): reading as of it reads the current graph.
    pub fn system_time(&self) -> Result<u64> {
        clock(&*self.shared.kv.snapshot()?)
    }

    /// A read-only transaction that sees `graph` as it was at system time
    /// `at` (µs since the epoch): the state the last commit at or before
    /// `at` left. Every read works on it as on a current snapshot, with the
    /// property indexes the graph had at `at` (those whose definitions the
    /// history holds: created or rebuilt while it was kept, or there when
    /// it started); vector indexes are not versioned. Fails with
    /// [`StorageError::NoHistory`] when the history does not reach back to
    /// `at`.
    pub fn read_as_of(&self, graph: &str, at: u64) -> Result<crate::ReadTxn> {
        let mut core = self.core(graph, false, false)?;
        match started(&*core.snap, core.g)? {
            Some(start) if start <= at => {}
            starts => {
                return Err(StorageError::NoHistory {
                    graph: graph.into(),
                    starts,
                    asked: at,
                })
            }
        }
        // The transaction's own snapshot (unpacked) holds the history.
        let inner = std::mem::replace(&mut core.snap, Box::new(crate::view::Closed));
        core.snap = Box::new(AsOf {
            inner,
            g: core.g,
            t: at,
        });
        // The indexes as of `at`, read from the history like their entries.
        // Vector indexes keep their data apart (`index_data`), which is not
        // versioned: their definitions stay, but `maintained_index` refuses
        // them, and a search as of `at` scans (`GraphRead::system_time`).
        let schema = crate::storage::load_schema(&*core.snap, core.g)?;
        core.schema = std::sync::Arc::new(schema);
        core.as_of = Some(at);
        Ok(crate::ReadTxn { core })
    }

    /// Removes the versions of `graph` that no read as of `before` or later
    /// needs; history then starts at `before`. Readers are never blocked.
    /// Returns how many versions were removed.
    pub fn prune_history(&self, graph: &str, before: u64) -> Result<u64> {
        self.writable()?;
        let g = self.graph_id(graph)?;
        prune_graph(&self.shared, g, graph, before)
    }

    /// Every version of node `id` of `graph`, newest first: the system
    /// time of the commit that wrote it and the node it left (`None`:
    /// deleted, or not yet created).
    pub fn node_history(&self, graph: &str, id: NodeId) -> Result<Vec<(u64, Option<crate::Node>)>> {
        let r = self.read(graph)?;
        let c = &r.core;
        let key = crate::keys::node_key(c.g, id);
        versions(&*c.snap, NODES, &key)?
            .into_iter()
            .map(|(t, v)| {
                let node = match v {
                    Some(bytes) => Some(crate::read::to_node(
                        c,
                        id,
                        crate::record::NodeRecord::decode(&bytes)?,
                    )?),
                    None => None,
                };
                Ok((t, node))
            })
            .collect()
    }
}
