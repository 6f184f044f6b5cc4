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
        if self.shared.multi {
            return Err(StorageError::Unsupported(
                "history on a store that several processes write is not supported yet".into(),
            ));
        }
        let g = self.graph_id(graph)?;
        let _c = self.shared.lock_commits();
        let snap = crate::packed::Unpacked(self.shared.kv.snapshot()?);
        if let Some(start) = started(&snap, g)? {
            return Ok(start);
        }
        // Stale versions of an earlier, interrupted start lie before the
        // new start, where no read reaches.
        let t = baseline(&*self.shared.kv, &snap, g)?;
        self.shared
            .history_kept
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(t)
    }

    /// Stops keeping the history of `graph` and deletes what was kept.
    pub fn drop_history(&self, graph: &str) -> Result<()> {
        self.writable()?;
        let g = self.graph_id(graph)?;
        let _c = self.shared.lock_commits();
        let mut batch = WriteBatch::new();
        clear(&mut batch, g);
        self.shared.kv.write(batch)?;
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
    /// `at` left. Every read works on it as on a current snapshot, except
    /// that it uses no index (its plans scan labels instead). Fails with
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
        core.schema = Default::default();
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
