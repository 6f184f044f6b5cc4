//! The seam for indexes kept by code outside this crate: vector indexes
//! today, temporal and full-text ones next (DESIGN §2, "Seams for new
//! indexes").
//!
//! Storage knows such an index only by its definition (label, property,
//! kind, options) and a key prefix (graph | index id) in the `index_data`
//! keyspace. A maintainer registered for the index's kind
//! ([`IndexMaintainer`]) checks definitions and loads each index's live
//! state ([`MaintainedIndex`]); storage then calls that state from the one
//! write path every node change takes (`write_node`, which the bulk load's
//! refill also goes through):
//!
//! 1. `stage`, inside the transaction: the maintainer writes its entries
//!    through [`IndexEntries`] (buffered with the transaction's other
//!    writes, so they commit or vanish with it) and returns what the commit
//!    must make visible;
//! 2. `publish`, by the commit leader under the commit lock before the
//!    batch is written, stamped with the next index sequence number, which
//!    the same batch stores (`META_INDEX_SEQ`): a reader compares the number
//!    its own snapshot holds with those stamps, so it sees exactly the
//!    index changes its snapshot holds. `retract` undoes a publish whose
//!    write failed;
//! 3. `settle`, by the committing thread after its commit returned, outside
//!    every lock: the slow part (linking new vectors into a graph), which
//!    readers do not wait for;
//! 4. `checkpoint`, now and then after a settle and at close: derived
//!    entries (persisted links) written by a commit of their own, which
//!    conflicts with a concurrent drop of the index so that none outlives it.

use crate::error::{Result, StorageError};
use crate::ids::GraphId;
use crate::keys::{token_prefix, INDEX_DATA, META, META_INDEX_SEQ};
use crate::occ::{Footprint, Subject};
use crate::schema::{IndexDef, IndexInfo, IndexKind};
use crate::storage::{Shared, Storage};
use crate::view::TxnCore;
use plexus_common::Value;
use plexus_kv::{KeyRange, ScanOptions, WriteBatch};
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};

/// What one write of a maintained index leaves for its commit.
pub type Staged = Arc<dyn Any + Send + Sync>;

/// A key relative to an index's prefix, and its new value (`None`: deleted).
pub type EntryWrite = (Vec<u8>, Option<Vec<u8>>);

/// Why a maintainer refused something (kept as the error's cause).
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// One kind of maintained index: registered once per store
/// (`Storage::register_maintainer`).
pub trait IndexMaintainer: Send + Sync {
    /// Checks a new index's options; returns them completed with defaults.
    fn define(
        &self,
        options: &[(String, Value)],
    ) -> std::result::Result<Vec<(String, Value)>, Cause>;

    /// The live state of one index from its entries (keys without the
    /// index's prefix, in key order). `seq` is the index sequence number of
    /// the snapshot they come from.
    fn load(
        &self,
        index: &IndexInfo,
        entries: &mut dyn Iterator<Item = Result<(Vec<u8>, Vec<u8>)>>,
        seq: u64,
    ) -> Result<Arc<dyn MaintainedIndex>>;
}

/// The live state of one maintained index, shared by every transaction.
pub trait MaintainedIndex: Send + Sync {
    /// The indexed value of the node or relationship `id` (the index's
    /// kind says which: `IndexKind::on_relationships`) changes from `old`
    /// to `new` (`None`: no value) in a transaction: writes the entries
    /// through `entries`, and returns what the commit must publish.
    fn stage(
        &self,
        entries: &mut IndexEntries<'_>,
        id: u64,
        old: Option<&Value>,
        new: Option<&Value>,
    ) -> std::result::Result<Option<Staged>, Cause>;

    /// Makes staged changes visible to snapshots at index sequence `seq` or
    /// later. Under the commit lock, before the batch is written.
    fn publish(&self, staged: &[Staged], seq: u64);

    /// The batch was not written: as though `publish` never was.
    fn retract(&self, staged: &[Staged]);

    /// After the commit returned, outside every lock: the slow part.
    fn settle(&self, staged: &[Staged]);

    /// Entries that make reopening cheaper or the index smaller, when it is
    /// time to write them (always when `force`): a value to put, or `None`
    /// to delete the key. `None` when there is nothing to write. Storage
    /// runs one checkpoint at a time, from this call to its commit, so a
    /// checkpoint may rewrite entries an earlier one wrote.
    fn checkpoint(&self, force: bool) -> Option<Vec<EntryWrite>>;

    /// For the layer that knows the concrete type (the query engine's
    /// vector search).
    fn as_any(&self) -> &dyn Any;
}

/// A maintained index's entries as one transaction sees and writes them:
/// keys relative to the index's prefix.
pub struct IndexEntries<'a> {
    core: &'a mut TxnCore,
    prefix: Vec<u8>,
}

impl IndexEntries<'_> {
    fn key(&self, key: &[u8]) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.prefix.len() + key.len());
        k.extend_from_slice(&self.prefix);
        k.extend_from_slice(key);
        k
    }

    /// The entry under `key`, this transaction's own writes included.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.core.get(INDEX_DATA, &self.key(key))
    }

    pub fn put(&mut self, key: &[u8], value: Vec<u8>) {
        let k = self.key(key);
        if let Some(o) = self.core.overlay.as_mut() {
            o.put(INDEX_DATA, k, value);
        }
    }

    pub fn delete(&mut self, key: &[u8]) {
        let k = self.key(key);
        if let Some(o) = self.core.overlay.as_mut() {
            o.delete(INDEX_DATA, k);
        }
    }

    /// What this transaction itself wrote under `key` (`Some(None)`: a
    /// delete), without reading the snapshot.
    pub fn own(&self, key: &[u8]) -> Option<Option<&[u8]>> {
        self.core
            .overlay
            .as_ref()?
            .pending(INDEX_DATA, &self.key(key))
    }

    /// Drops this transaction's own write under `key`, as if never made:
    /// for keys the store cannot hold yet (the batch then carries nothing
    /// for them, not even a delete).
    pub fn forget(&mut self, key: &[u8]) {
        let k = self.key(key);
        if let Some(o) = self.core.overlay.as_mut() {
            o.forget(INDEX_DATA, k);
        }
    }
}

pub(crate) fn index_prefix(g: GraphId, index: u32) -> Vec<u8> {
    token_prefix(g, index)
}

pub(crate) fn entries_of<'a>(core: &'a mut TxnCore, index: u32) -> IndexEntries<'a> {
    let prefix = index_prefix(core.g, index);
    IndexEntries { core, prefix }
}

/// A maintained index's shared state.
pub(crate) type State = Arc<dyn MaintainedIndex>;

/// Live states by (graph, index), with the index sequence each was loaded at.
type Live = HashMap<(u32, u32), (State, u64)>;

/// One index's share of a commit.
#[derive(Clone)]
pub(crate) struct Changes {
    pub g: GraphId,
    pub index: u32,
    pub state: Arc<dyn MaintainedIndex>,
    pub staged: Vec<Staged>,
}

/// What a transaction does to maintained indexes, in the order it did it.
#[derive(Clone, Default)]
pub(crate) struct Effects {
    pub changes: Vec<Changes>,
    /// Indexes the transaction creates (with their new state) or drops.
    pub installs: Vec<(GraphId, u32, Option<State>)>,
}

impl Effects {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.installs.is_empty()
    }

    /// Records that the transaction creates (`Some`) or drops `index`; a
    /// rebuild does both, and only the last counts.
    pub fn install(&mut self, g: GraphId, index: u32, state: Option<Arc<dyn MaintainedIndex>>) {
        self.installs.retain(|(ig, i, _)| (*ig, *i) != (g, index));
        self.installs.push((g, index, state));
    }

    /// The state this transaction created for `index`, if it did.
    pub fn created(&self, g: GraphId, index: u32) -> Option<Option<Arc<dyn MaintainedIndex>>> {
        self.installs
            .iter()
            .rev()
            .find(|(ig, i, _)| *ig == g && *i == index)
            .map(|(_, _, s)| s.clone())
    }

    pub fn add(&mut self, g: GraphId, index: u32, state: &Arc<dyn MaintainedIndex>, s: Staged) {
        match self.changes.last_mut() {
            Some(c) if c.g == g && c.index == index => c.staged.push(s),
            _ => self.changes.push(Changes {
                g,
                index,
                state: state.clone(),
                staged: vec![s],
            }),
        }
    }

    /// Lengths to return to when an operation fails part-way.
    pub fn mark(&self) -> (usize, usize, usize) {
        (
            self.changes.len(),
            self.changes.last().map_or(0, |c| c.staged.len()),
            self.installs.len(),
        )
    }

    pub fn undo_to(&mut self, (changes, last, installs): (usize, usize, usize)) {
        self.changes.truncate(changes);
        if let Some(c) = self.changes.last_mut() {
            c.staged.truncate(last);
        }
        self.installs.truncate(installs);
    }

    /// This transaction's staged changes of one index (for its own reads).
    pub fn staged(&self, g: GraphId, index: u32) -> Vec<Staged> {
        self.changes
            .iter()
            .filter(|c| c.g == g && c.index == index)
            .flat_map(|c| c.staged.iter().cloned())
            .collect()
    }
}

/// The maintainers registered with a store and the live state of its
/// maintained indexes.
#[derive(Default)]
pub(crate) struct Registry {
    kinds: RwLock<HashMap<IndexKind, Arc<dyn IndexMaintainer>>>,
    /// (graph, index) → state, and the index sequence it was loaded at.
    live: Mutex<Live>,
    /// The last index sequence number given out (stored in `META`).
    pub seq: AtomicU64,
    /// Held by a checkpoint from computing its entries to committing them:
    /// two at once could commit out of order, an older rewrite of an entry
    /// over a newer one.
    checkpointing: Mutex<()>,
}

impl Registry {
    pub fn maintainer(&self, kind: IndexKind) -> Result<Arc<dyn IndexMaintainer>> {
        self.kinds
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&kind.maintainer_kind())
            .cloned()
            .ok_or_else(|| {
                StorageError::Unsupported(format!(
                    "{kind:?} indexes need their maintainer, which the plexus facade registers (this store was opened without it)"
                ))
            })
    }

    pub fn register(&self, kind: IndexKind, m: Arc<dyn IndexMaintainer>) {
        self.kinds
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(kind.maintainer_kind(), m);
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The state of an index and the sequence it was loaded at.
    pub fn get(&self, g: GraphId, index: u32) -> Option<(Arc<dyn MaintainedIndex>, u64)> {
        self.live().get(&(g.0, index)).cloned()
    }

    pub fn install(
        &self,
        g: GraphId,
        index: u32,
        state: Option<Arc<dyn MaintainedIndex>>,
        seq: u64,
    ) {
        let mut live = self.live();
        match state {
            Some(s) => live.insert((g.0, index), (s, seq)),
            None => live.remove(&(g.0, index)),
        };
    }

    pub fn forget_graph(&self, g: GraphId) {
        self.live().retain(|(lg, _), _| *lg != g.0);
    }

    pub fn all(&self) -> Vec<((u32, u32), Arc<dyn MaintainedIndex>)> {
        self.live()
            .iter()
            .map(|(k, (s, _))| (*k, s.clone()))
            .collect()
    }
}

/// The live state of `def` in the store as it is now: loaded from its
/// entries under the commit lock, so that no commit changes them meanwhile.
fn load_now(
    shared: &Shared,
    g: GraphId,
    def: &IndexDef,
) -> Result<(Arc<dyn MaintainedIndex>, u64)> {
    let _c = shared.lock_commits();
    let snap = shared.kv.snapshot()?;
    let seq = index_seq(&*snap)?;
    let state = load_from(shared, &*snap, g, def, seq)?;
    Ok((state, seq))
}

fn load_from(
    shared: &Shared,
    snap: &dyn plexus_kv::Snapshot,
    g: GraphId,
    def: &IndexDef,
    seq: u64,
) -> Result<Arc<dyn MaintainedIndex>> {
    let m = shared.maintained.maintainer(def.kind)?;
    let info = def.info(&shared.catalog)?;
    let prefix = index_prefix(g, def.id);
    let cut = prefix.len();
    let mut entries = snap
        .scan(
            INDEX_DATA,
            &KeyRange::prefix(&prefix),
            ScanOptions::default(),
        )
        .map(|p| {
            p.map(|(k, v)| (k[cut..].to_vec(), v))
                .map_err(StorageError::from)
        });
    m.load(&info, &mut entries, seq)
}

/// The index sequence number a snapshot holds.
pub(crate) fn index_seq(snap: &dyn plexus_kv::Snapshot) -> Result<u64> {
    Ok(match snap.get(META, META_INDEX_SEQ)? {
        Some(v) => u64::from_le_bytes(
            v.as_slice()
                .try_into()
                .map_err(|_| StorageError::Corrupt("index sequence number".into()))?,
        ),
        None => 0,
    })
}

/// The state a transaction uses for a maintained index: the one it created,
/// else the store's (loaded now if need be; in a read-only store, loaded
/// again when the writing process has moved past it).
pub(crate) fn state_for(core: &TxnCore, def: &IndexDef) -> Result<Arc<dyn MaintainedIndex>> {
    match core.effects.created(core.g, def.id) {
        Some(Some(s)) => return Ok(s),
        Some(None) => return Err(StorageError::NoIndex(format!("named '{}'", def.name))),
        None => {}
    }
    let reg = &core.shared.maintained;
    if let Some((s, loaded)) = reg.get(core.g, def.id) {
        let shared = &core.shared;
        let current = if shared.multi {
            shared.index_sync.current(loaded, index_seq(&*core.snap)?)
        } else {
            !shared.read_only || index_seq(&*core.snap)? <= loaded
        };
        if current {
            return Ok(s);
        }
    }
    let (s, seq) = load_now(&core.shared, core.g, def)?;
    reg.install(core.g, def.id, Some(s.clone()), seq);
    Ok(s)
}

/// Writes an index's checkpoint in a commit of its own, which a concurrent
/// drop of the index (or of its graph) refuses.
pub(crate) fn checkpoint(
    shared: &Arc<Shared>,
    g: GraphId,
    state: &dyn MaintainedIndex,
    index: u32,
    force: bool,
) -> Result<()> {
    if shared.read_only {
        return Ok(());
    }
    let _one = shared
        .maintained
        .checkpointing
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let start = shared.occ.begin();
    let r = (|| {
        let Some(entries) = state.checkpoint(force) else {
            return Ok(());
        };
        let prefix = index_prefix(g, index);
        let mut batch = WriteBatch::new();
        for (k, v) in entries {
            let mut key = prefix.clone();
            key.extend_from_slice(&k);
            match v {
                Some(v) => batch.put(INDEX_DATA, key, v),
                None => batch.delete(INDEX_DATA, key),
            }
        }
        let mut fp = Footprint::default();
        fp.shares.insert(Subject::Schema(g.0).hash());
        // Where other processes write, only a state that has all their
        // changes may be checkpointed.
        let (remote_start, index_loaded) = if shared.multi {
            let live = shared.maintained.get(g, index);
            let Some((_, loaded)) = live.filter(|(s, _)| {
                std::ptr::addr_eq(Arc::as_ptr(s), state as *const dyn MaintainedIndex)
            }) else {
                return Ok(());
            };
            let snap = shared.kv.snapshot()?;
            (crate::coord::commit_seq(&*snap)?, Some(loaded))
        } else {
            (0, None)
        };
        let req = crate::commit::Request {
            start,
            remote_start,
            index_loaded,
            merges: Vec::new(),
            fp,
            serializable: false,
            batch,
            effects: Effects::default(),
        };
        match shared.committer.commit(shared, req) {
            Err(StorageError::Conflict(_)) => Ok(()),
            r => r,
        }
    })();
    shared.occ.end(start);
    r
}

impl Storage {
    /// Registers the maintainer of one kind of index, and loads the live
    /// state of every index of that kind in every graph. The facade does
    /// this right after opening, before the store is shared.
    pub fn register_maintainer(&self, kind: IndexKind, m: Arc<dyn IndexMaintainer>) -> Result<()> {
        let shared = &self.shared;
        shared.maintained.register(kind, m);
        let _c = shared.lock_commits();
        let snap = crate::packed::Unpacked(shared.kv.snapshot()?);
        let seq = index_seq(&snap)?;
        for (_, g) in shared.catalog.graphs() {
            let schema = crate::storage::load_schema(&snap, g)?;
            for def in schema
                .indexes
                .iter()
                .filter(|d| d.kind.maintainer_kind() == kind)
            {
                let state = load_from(shared, &snap, g, def, seq)?;
                shared.maintained.install(g, def.id, Some(state), seq);
            }
        }
        Ok(())
    }

    /// Writes the checkpoint of every maintained index (vector links), so
    /// that the next open loads them instead of linking again: at close.
    pub fn checkpoint_indexes(&self) -> Result<()> {
        for ((g, index), state) in self.shared.maintained.all() {
            checkpoint(&self.shared, GraphId(g), &*state, index, true)?;
        }
        Ok(())
    }
}
