//! The storage handle: opening a store, named graphs, and starting transactions.

use crate::catalog::{graph_registry_key, Catalog};
use crate::commit::{CommitStats, Committer};
use crate::coord::IdCounter;
use crate::error::{Result, StorageError};
use crate::ids::GraphId;
use crate::keys::*;
use crate::occ::{Footprint, Occ, Subject};
use crate::schema::{schema_entry_id, ConstraintDef, IndexDef, Schema};
use crate::upgrade::UpgradeReport;
use crate::view::{Overlay, TxnCore};
use crate::{ReadTxn, WriteTxn};
use plexus_common::read_u32;
use plexus_kv::{prefix_successor, KeyRange, KvStore, ScanOptions, Snapshot, WriteBatch};
use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// The on-disk format this build writes and reads.
/// Version 2 packs adjacency into blocks and keeps no degree counters.
pub const FORMAT_VERSION: u32 = 3;

/// The graph every new database starts with.
pub const DEFAULT_GRAPH: &str = "default";

/// How strictly write transactions are isolated from each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// Snapshot isolation: reads see the snapshot taken at start; a commit
    /// fails when a concurrent commit changed an entity it also changed
    /// (no lost updates). Write skew is possible.
    #[default]
    Snapshot,
    /// Also fails when a concurrent commit changed anything this
    /// transaction read, which rules out write skew.
    Serializable,
}

pub(crate) struct Shared {
    pub kv: Arc<dyn KvStore>,
    pub catalog: Catalog,
    pub occ: Occ,
    pub next_node: IdCounter,
    pub next_edge: IdCounter,
    pub next_schema: IdCounter,
    /// Other processes may write the store (`coord.rs`).
    pub multi: bool,
    /// What this process knows of other processes' index changes.
    pub index_sync: crate::coord::IndexSync,
    /// Held only while a commit validates and writes: never while caller
    /// code runs.
    pub commit_lock: Mutex<()>,
    /// Groups transactions that commit at the same time into one write.
    pub committer: Committer,
    /// Opened read-only beside a writing process.
    pub read_only: bool,
    /// Property columns for filters no index serves.
    pub columns: crate::columns::ColumnCache,
    /// Maintainers and the live state of maintained indexes.
    pub maintained: crate::maintain::Registry,
    /// Whether some graph may keep history (`history.rs`): commits then
    /// ask the store which graphs do. Set at open and when history is
    /// turned on; never cleared while open.
    pub history_kept: std::sync::atomic::AtomicBool,
    /// The graphs' history retention policies (`history/retention.rs`).
    pub retention: crate::history::Policies,
    /// The graphs' schemas between transactions (`schema_cache.rs`).
    pub schemas: crate::schema_cache::SchemaCache,
}

impl Shared {
    /// Holds the commit lock: no commit lands until the guard drops.
    pub fn lock_commits(&self) -> std::sync::MutexGuard<'_, ()> {
        self.commit_lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new id for an index or constraint.
    pub fn schema_id(&self) -> Result<u32> {
        let id = self.next_schema.take(&*self.kv)?;
        u32::try_from(id)
            .map_err(|_| StorageError::Unsupported("the schema id space is exhausted".into()))
    }

    /// Adds the id counters to a commit's batch. Called under the commit
    /// lock: the counters only grow, so later commits write larger values.
    /// (In a shared store the id counters are reserved in blocks instead.)
    pub fn persist_counters(&self, b: &mut WriteBatch) {
        use std::sync::atomic::Ordering::Relaxed;
        self.next_node.persist(b);
        self.next_edge.persist(b);
        self.next_schema.persist(b);
        b.put(
            META,
            META_INDEX_SEQ,
            self.maintained.seq.load(Relaxed).to_le_bytes().to_vec(),
        );
    }
}

/// A property graph store over a key-value store. Cheap to clone; share it
/// between threads.
#[derive(Clone)]
pub struct Storage {
    pub(crate) shared: Arc<Shared>,
}

fn meta_u64(snap: &dyn Snapshot, key: &[u8]) -> Result<u64> {
    crate::coord::meta_u64(snap, key, 1)
}

impl Storage {
    /// A store that lives in memory only, gone when dropped: for tests and
    /// scratch work.
    pub fn in_memory() -> Result<Storage> {
        let kv = plexus_kv::open(
            plexus_kv::Backend::Memory,
            std::path::Path::new(""),
            KEYSPACES,
            &plexus_kv::KvOptions::default(),
        )?;
        Storage::open(kv)
    }

    /// Opens the graph store in `kv`, initialising an empty store (with the
    /// `default` graph) and refusing a store of another format.
    pub fn open(kv: Arc<dyn KvStore>) -> Result<Storage> {
        Self::open_with(kv, false)
    }

    /// Opens the graph store in `kv`, opened read-only beside a process
    /// that may be writing it: nothing is written (transactions that write
    /// are refused), and names and graphs the writer adds later are found
    /// when asked for. The store must hold a Plexus database.
    pub fn open_read_only(kv: Arc<dyn KvStore>) -> Result<Storage> {
        Self::open_with(kv, true)
    }

    fn open_with(kv: Arc<dyn KvStore>, read_only: bool) -> Result<Storage> {
        // After a write whose outcome is unknown, no further write until
        // the store is opened again (`plexus_kv::FencedKv`).
        let kv: Arc<dyn KvStore> = plexus_kv::FencedKv::wrap(kv);
        let snap = kv.snapshot()?;
        let mut fresh = false;
        match snap.get(META, META_FORMAT)? {
            Some(v) => {
                let version = read_u32(&v, 0)
                    .ok_or_else(|| StorageError::Corrupt("format version".into()))?;
                if let Some(what) = crate::upgrade::convertible(version) {
                    return Err(StorageError::Unsupported(format!(
                        "this database has format version {version} ({what}); convert it in place with `plexus upgrade` (Database::upgrade), then open it"
                    )));
                }
                if version != FORMAT_VERSION {
                    return Err(StorageError::Unsupported(format!(
                        "this database has format version {version}; this build of Plexus reads version {FORMAT_VERSION}"
                    )));
                }
            }
            None if read_only => {
                return Err(StorageError::Corrupt(
                    "the store has no Plexus format version (not a database yet?)".into(),
                ))
            }
            None => {
                let any = snap
                    .scan(
                        CATALOG,
                        &KeyRange::all(),
                        ScanOptions {
                            limit: Some(1),
                            ..Default::default()
                        },
                    )
                    .next();
                match any {
                    // A failed read is the read's error, not a verdict on the data.
                    Some(Err(e)) => return Err(e.into()),
                    Some(Ok(_)) => {
                        return Err(StorageError::Corrupt(
                            "the store has data but no Plexus format version".into(),
                        ))
                    }
                    None => {}
                }
                let mut b = WriteBatch::new();
                b.put(META, META_FORMAT, FORMAT_VERSION.to_be_bytes().to_vec());
                kv.write(b)?;
                fresh = true;
            }
        }
        let multi = kv.shared();
        // Schema writes move the cache's epoch from here on.
        let (schemas, kv) = crate::schema_cache::SchemaCache::wrap(kv, !read_only && !multi);
        let index_seq = crate::coord::meta_u64(&*snap, META_INDEX_SEQ, 0)?;
        let counter =
            |key| -> Result<IdCounter> { Ok(IdCounter::new(key, meta_u64(&*snap, key)?, multi)) };
        let shared = Arc::new(Shared {
            next_node: counter(META_NEXT_NODE)?,
            next_edge: counter(META_NEXT_EDGE)?,
            next_schema: counter(META_NEXT_SCHEMA)?,
            multi,
            index_sync: crate::coord::IndexSync::new(index_seq),
            catalog: if read_only || multi {
                Catalog::load_shared(kv.clone(), multi)?
            } else {
                Catalog::load(kv.clone())?
            },
            read_only,
            columns: Default::default(),
            maintained: Default::default(),
            history_kept: Default::default(),
            retention: Default::default(),
            schemas,
            occ: Occ::default(),
            commit_lock: Mutex::new(()),
            committer: Committer::default(),
            kv,
        });
        shared.maintained.seq.store(index_seq, Ordering::Relaxed);
        let mut kept = Vec::new();
        for (_, g) in shared.catalog.graphs() {
            if crate::history::started(&*snap, g)?.is_some() {
                shared.history_kept.store(true, Ordering::Relaxed);
                kept.push(g);
                let ttl = crate::history::stored_retention(&*snap, g)?;
                shared.retention.set(g, ttl);
            }
        }
        drop(snap);
        // After the snapshot: LMDB grows its map only with none open.
        for g in kept.into_iter().filter(|_| !read_only) {
            crate::history::finish_load(&*shared.kv, g)?;
        }
        let s = Storage { shared };
        // A new store gets its default graph. So does one whose creation was
        // interrupted after the format version was written (no graph and
        // nothing ever allocated): opening it again finishes the job.
        // (Id counters start at 1.)
        let unfinished = !read_only
            && s.graphs().is_empty()
            && s.shared.next_node.floor() <= 1
            && s.shared.next_edge.floor() <= 1;
        if fresh || unfinished {
            s.create_graph(DEFAULT_GRAPH)?;
        }
        Ok(s)
    }

    /// Whether this store was opened read-only (beside a writing process).
    pub fn is_read_only(&self) -> bool {
        self.shared.read_only
    }

    /// Refuses a write before any work when the store is read-only.
    pub(crate) fn writable(&self) -> Result<()> {
        if self.shared.read_only {
            return Err(StorageError::Kv(plexus_kv::KvError::ReadOnly));
        }
        Ok(())
    }

    /// The key-value store underneath.
    pub fn kv(&self) -> &Arc<dyn KvStore> {
        &self.shared.kv
    }

    /// Names of the graphs in this database, sorted.
    pub fn graphs(&self) -> Vec<String> {
        self.shared
            .catalog
            .graphs()
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    pub fn has_graph(&self, name: &str) -> bool {
        self.shared.catalog.graph(name).is_some()
    }

    /// Converts the store in `kv`, written by an older format of Plexus,
    /// to this build's format, in place and in steps (an interrupted
    /// conversion finishes when run again); a store of this format is left
    /// as it is. `progress` hears the keys converted so far. Nothing else
    /// may have the store open.
    pub fn upgrade(kv: &dyn KvStore, progress: &mut dyn FnMut(u64)) -> Result<UpgradeReport> {
        crate::upgrade::upgrade(kv, progress)
    }

    /// Creates an empty named graph.
    pub fn create_graph(&self, name: &str) -> Result<()> {
        self.writable()?;
        let _c = self.shared.lock_commits();
        let catalog = &self.shared.catalog;
        let g = if self.shared.multi {
            let mut made = GraphId(0);
            crate::coord::write_serialized(&*self.shared.kv, &mut |snap| {
                let mut b = WriteBatch::new();
                made = catalog.create_graph_in(snap, name, &mut b)?;
                Ok(b)
            })?;
            made
        } else {
            let mut b = WriteBatch::new();
            let g = catalog.create_graph(name, &mut b)?;
            self.shared.kv.write(b)?;
            g
        };
        catalog.graph_created(name, g);
        Ok(())
    }

    /// Drops a graph and everything in it. The work is proportional to the
    /// graph's size; other graphs are not read. Transactions still open on
    /// the graph fail to commit.
    pub fn drop_graph(&self, name: &str) -> Result<()> {
        self.writable()?;
        let _c = self.shared.lock_commits();
        let g = self.graph_id(name)?;
        let mut b = WriteBatch::new();
        b.delete(CATALOG, graph_registry_key(name));
        let prefix = graph_prefix(g);
        let end = prefix_successor(&prefix)
            .ok_or_else(|| StorageError::Unsupported("graph id space exhausted".into()))?;
        for ks in GRAPH_KEYSPACES {
            b.delete_range(ks, prefix.clone(), end.clone());
        }
        let mut fp = Footprint::default();
        fp.writes.insert(Subject::Schema(g.0).hash());
        if self.shared.multi {
            // Logged, so that other processes' transactions on the graph fail.
            let mut b = Some(b);
            crate::coord::write_serialized(&*self.shared.kv, &mut |snap| {
                let mut b = b.take().unwrap_or_default();
                crate::coord::log_commit(&mut b, crate::coord::commit_seq(snap)?, &fp);
                Ok(b)
            })?;
        } else {
            self.shared.kv.write(b)?;
        }
        self.shared.occ.publish(fp);
        self.shared.catalog.graph_dropped(name);
        self.shared.columns.forget_graph(g.0);
        self.shared.maintained.forget_graph(g);
        self.shared.retention.set(g, None);
        Ok(())
    }

    pub(crate) fn graph_id(&self, name: &str) -> Result<GraphId> {
        self.shared
            .catalog
            .graph(name)
            .ok_or_else(|| StorageError::UnknownGraph(name.into()))
    }

    pub(crate) fn core(
        &self,
        graph: &str,
        overlay: bool,
        serializable: bool,
    ) -> Result<Box<TxnCore>> {
        let g = self.graph_id(graph)?;
        // Read before the snapshot: the snapshot then reflects at least this version.
        let version = self.shared.occ.current();
        let epoch = self.shared.schemas.epoch();
        // Readers see packed keyspaces one entry per key (`packed.rs`).
        let snap: Box<dyn plexus_kv::Snapshot> =
            Box::new(crate::packed::Unpacked(self.shared.kv.snapshot()?));
        let schema = self.shared.schemas.schema(&*snap, g, epoch)?;
        // Where several processes write, a writer starts from the store's
        // commit number, and on a graph that still exists.
        let remote_start = if self.shared.multi && overlay {
            if snap.get(CATALOG, &graph_registry_key(graph))?.as_deref()
                != Some(&g.0.to_be_bytes()[..])
            {
                self.shared.catalog.graph_dropped(graph);
                return Err(StorageError::UnknownGraph(graph.into()));
            }
            crate::coord::commit_seq(&*snap)?
        } else {
            0
        };
        Ok(Box::new(TxnCore {
            remote_start,
            shared: self.shared.clone(),
            snap,
            overlay: overlay.then(|| Overlay::new(KEYSPACES.len())),
            g,
            graph_name: graph.to_string(),
            schema,
            reads: serializable.then(|| RefCell::new(Default::default())),
            version,
            effects: Default::default(),
            fetched: Default::default(),
            edge_block: Default::default(),
            node_cache: Default::default(),
            group_cache: Default::default(),
            uses: Default::default(),
            missing: Default::default(),
            known: Default::default(),
            as_of: None,
        }))
    }

    /// A read-only transaction on a consistent snapshot of `graph`.
    pub fn read(&self, graph: &str) -> Result<ReadTxn> {
        Ok(ReadTxn {
            core: self.core(graph, false, false)?,
        })
    }

    /// `n` read transactions on `graph` that all see the same commit, for
    /// work split across threads (each thread needs its own transaction).
    pub fn read_consistent(&self, graph: &str, n: usize) -> Result<Vec<ReadTxn>> {
        // No commit can land while the commit lock is held.
        let _c = self.shared.lock_commits();
        (0..n.max(1)).map(|_| self.read(graph)).collect()
    }

    /// A write transaction on `graph` at snapshot isolation.
    pub fn write(&self, graph: &str) -> Result<WriteTxn> {
        self.write_with(graph, Isolation::Snapshot)
    }

    /// A write transaction on `graph` at the given isolation level.
    pub fn write_with(&self, graph: &str, isolation: Isolation) -> Result<WriteTxn> {
        self.writable()?;
        let start = self.shared.occ.begin();
        let core = match self.core(graph, true, isolation == Isolation::Serializable) {
            Ok(c) => c,
            Err(e) => {
                self.shared.occ.end(start);
                return Err(e);
            }
        };
        Ok(WriteTxn::new(core, start, isolation))
    }

    /// The sequence number of the latest commit in this process (in a
    /// store other processes write, the store's latest commit; `u64::MAX`
    /// when the store cannot be asked). A view built from a transaction
    /// whose `version()` is lower may be stale.
    pub fn version(&self) -> u64 {
        if self.shared.multi {
            return self
                .shared
                .kv
                .snapshot()
                .ok()
                .and_then(|s| crate::coord::commit_seq(&*s).ok())
                .unwrap_or(u64::MAX);
        }
        self.shared.occ.current()
    }

    /// Commits, conflicts, groups and time spent writing since the store
    /// was opened.
    pub fn commit_stats(&self) -> CommitStats {
        self.shared.committer.stats()
    }

    /// Rebuilds the stale indexes of `graph` and returns their names.
    pub fn rebuild_indexes(&self, graph: &str) -> Result<Vec<String>> {
        let mut t = self.write(graph)?;
        let names = t.rebuild_indexes()?;
        t.commit()?;
        Ok(names)
    }
}

pub(crate) fn load_schema(view: &dyn Snapshot, g: GraphId) -> Result<Schema> {
    parse_schema(view.scan(
        SCHEMA,
        &KeyRange::prefix(&graph_prefix(g)),
        ScanOptions::default(),
    ))
}

/// Reads index and constraint definitions from a scan of a graph's schema keys.
pub(crate) fn parse_schema(pairs: plexus_kv::KvIter<'_>) -> Result<Schema> {
    let mut s = Schema::default();
    for pair in pairs {
        let (k, v) = pair?;
        let id = schema_entry_id(&k)?;
        match k.get(4) {
            Some(&SCHEMA_INDEX) => s.indexes.push(IndexDef::decode(id, &v)?),
            Some(&SCHEMA_CONSTRAINT) => s.not_null.push(ConstraintDef::decode(id, &v)?),
            _ => return Err(StorageError::Corrupt("schema entry kind".into())),
        }
    }
    Ok(s)
}
