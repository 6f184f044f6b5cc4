//! The catalog: labels, relationship types and property keys interned to
//! small integers, and the registry of named graphs.
//!
//! Names are interned eagerly, each in its own tiny durable write, as Neo4j
//! creates tokens: a token is never rolled back, so concurrent transactions
//! that introduce the same name agree on its id without conflicting. Tokens
//! are not user data: which labels are *in use* is read from statistics.
//! The in-memory maps can never go stale: entries are immutable, and only
//! this process (which holds the database lock) writes them. In a store
//! several processes write (`coord.rs`), a name is interned under the
//! store's writer lock, the store asked first, and a name or id not known
//! here is looked for in the store again.

use crate::error::{Result, StorageError};
use crate::ids::GraphId;
use crate::keys::CATALOG;
use plexus_common::read_u32;
use plexus_kv::{KeyRange, KvStore, ScanOptions, WriteBatch};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

/// The kinds of interned names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Token {
    Label = 0,
    Type = 1,
    PropKey = 2,
}

impl Token {
    fn what(self) -> &'static str {
        match self {
            Token::Label => "label",
            Token::Type => "relationship type",
            Token::PropKey => "property key",
        }
    }
}

const TAG_NAME_TO_ID: u8 = 1;
const TAG_ID_TO_NAME: u8 = 2;
const TAG_GRAPH: u8 = 3;
const TAG_NEXT_GRAPH: u8 = 4;

/// Longest label, type or property key name, in bytes.
pub(crate) const MAX_NAME: usize = 255;

#[derive(Default)]
struct Inner {
    /// Name → id, one map per token kind (so a lookup borrows the name).
    /// Hashed with Fx: every property a query reads by name is looked up
    /// here, and SipHash was most of that lookup; the names are a schema's,
    /// few and not a flood an attacker controls the size of.
    ids: [FxHashMap<Arc<str>, u32>; 3],
    names: FxHashMap<(u8, u32), Arc<str>>,
    next: [u32; 3],
    graphs: BTreeMap<String, GraphId>,
    next_graph: u32,
}

pub(crate) struct Catalog {
    kv: Arc<dyn KvStore>,
    inner: RwLock<Inner>,
    write: Mutex<()>,
    /// Another process writes this store: names and graphs it adds appear
    /// only in the store, so a miss reads the catalog again.
    shared_reader: bool,
    /// Other processes write this store too: names are interned under the
    /// store's writer lock.
    multi: bool,
}

impl Catalog {
    pub fn load(kv: Arc<dyn KvStore>) -> Result<Catalog> {
        Ok(Catalog {
            inner: RwLock::new(Self::read_all(&*kv)?),
            kv,
            write: Mutex::new(()),
            shared_reader: false,
            multi: false,
        })
    }

    /// A catalog for a store that other processes may write: read-only
    /// beside them, or (`multi`) writing too.
    pub fn load_shared(kv: Arc<dyn KvStore>, multi: bool) -> Result<Catalog> {
        Ok(Catalog {
            shared_reader: true,
            multi,
            ..Self::load(kv)?
        })
    }

    /// For a shared reader, reads the catalog again after a miss; returns
    /// whether it did.
    fn refreshed(&self) -> Result<bool> {
        if !self.shared_reader {
            return Ok(false);
        }
        let fresh = Self::read_all(&*self.kv)?;
        *self.inner.write().unwrap_or_else(|p| p.into_inner()) = fresh;
        Ok(true)
    }

    fn read_all(kv: &dyn KvStore) -> Result<Inner> {
        let snap = kv.snapshot()?;
        let mut inner = Inner::default();
        for pair in snap.scan(CATALOG, &KeyRange::all(), ScanOptions::default()) {
            let (k, v) = pair?;
            let bad = || StorageError::Corrupt(format!("catalog entry {k:?}"));
            match k.first() {
                Some(&TAG_NAME_TO_ID) => {
                    let kind = *k.get(1).ok_or_else(bad)?;
                    let name: Arc<str> = std::str::from_utf8(&k[2..]).map_err(|_| bad())?.into();
                    let id = read_u32(&v, 0).ok_or_else(bad)?;
                    let slot = inner.next.get_mut(kind as usize).ok_or_else(bad)?;
                    *slot = (*slot).max(id + 1);
                    inner.names.insert((kind, id), name.clone());
                    inner
                        .ids
                        .get_mut(kind as usize)
                        .ok_or_else(bad)?
                        .insert(name, id);
                }
                Some(&TAG_GRAPH) => {
                    let name = std::str::from_utf8(&k[1..]).map_err(|_| bad())?;
                    let g = read_u32(&v, 0).ok_or_else(bad)?;
                    inner.graphs.insert(name.to_string(), GraphId(g));
                }
                Some(&TAG_NEXT_GRAPH) => inner.next_graph = read_u32(&v, 0).ok_or_else(bad)?,
                Some(&TAG_ID_TO_NAME) => {}
                _ => return Err(bad()),
            }
        }
        Ok(inner)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Every name of a kind ever interned, sorted.
    pub fn names(&self, kind: Token) -> Vec<String> {
        let mut out: Vec<String> = self.read().ids[kind as usize]
            .keys()
            .map(|k| k.to_string())
            .collect();
        out.sort();
        out
    }

    /// The id of a name, without creating it.
    pub fn lookup(&self, kind: Token, name: &str) -> Option<u32> {
        self.lookup_named(kind, name).map(|(id, _)| id)
    }

    /// [`Catalog::lookup`], with the catalog's own copy of the name: a
    /// transaction keeping it (`view::KnownNames`) shares it instead of
    /// allocating one per transaction.
    pub fn lookup_named(&self, kind: Token, name: &str) -> Option<(u32, Arc<str>)> {
        let found = |c: &Self| {
            c.read().ids[kind as usize]
                .get_key_value(name)
                .map(|(n, id)| (*id, n.clone()))
        };
        if let Some(hit) = found(self) {
            return Some(hit);
        }
        if self.multi {
            // Where other processes write, one point read asks the store
            // (a miss is common: a query naming what nothing has yet).
            let mut fwd = vec![TAG_NAME_TO_ID, kind as u8];
            fwd.extend_from_slice(name.as_bytes());
            let id = read_u32(&self.kv.get_now(CATALOG, &fwd).ok()??, 0)?;
            return Some((id, self.learned(kind, name, id)));
        }
        // A failed refresh answers as before it: the name is not known.
        self.refreshed().ok()?.then(|| found(self))?
    }

    /// Adds a name another process interned to the maps; returns the
    /// maps' copy of it.
    fn learned(&self, kind: Token, name: &str, id: u32) -> Arc<str> {
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        let name: Arc<str> = name.into();
        inner.names.insert((kind as u8, id), name.clone());
        inner.ids[kind as usize].insert(name.clone(), id);
        let next = &mut inner.next[kind as usize];
        *next = (*next).max(id.saturating_add(1));
        name
    }

    /// The id of a name, creating it durably when new.
    pub fn intern(&self, kind: Token, name: &str) -> Result<u32> {
        if let Some(id) = self.lookup(kind, name) {
            return Ok(id);
        }
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(StorageError::InvalidName {
                what: kind.what(),
                name: name.chars().take(40).collect(),
                why: "names must be 1 to 255 bytes long",
            });
        }
        let _w = self.write.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(id) = self.lookup(kind, name) {
            return Ok(id);
        }
        let mut fwd = vec![TAG_NAME_TO_ID, kind as u8];
        fwd.extend_from_slice(name.as_bytes());
        let put = |b: &mut WriteBatch, id: u32| {
            b.put(CATALOG, fwd.clone(), id.to_be_bytes().to_vec());
            let mut rev = vec![TAG_ID_TO_NAME, kind as u8];
            rev.extend_from_slice(&id.to_be_bytes());
            b.put(CATALOG, rev, name.as_bytes().to_vec());
        };
        let id = if self.multi {
            // Another process may have interned it since the lookup, or
            // taken the next id for another name.
            let mut id = 0;
            self.kv.write_serialized(&mut |snap| {
                let mut b = WriteBatch::new();
                id = match snap.get(CATALOG, &fwd)? {
                    Some(v) => read_u32(&v, 0)
                        .ok_or_else(|| plexus_kv::KvError::Corrupt("a catalog id".into()))?,
                    None => {
                        let next = stored_next(snap, kind)?;
                        put(&mut b, next);
                        next
                    }
                };
                Ok(b)
            })?;
            id
        } else {
            let id = self.read().next[kind as usize];
            let mut b = WriteBatch::new();
            put(&mut b, id);
            self.kv.write(b)?;
            id
        };
        self.learned(kind, name, id);
        Ok(id)
    }

    /// The name of an interned id; an unknown id means damaged data.
    pub fn name(&self, kind: Token, id: u32) -> Result<Arc<str>> {
        let found = |c: &Self| c.read().names.get(&(kind as u8, id)).cloned();
        let name = match found(self) {
            Some(n) => Some(n),
            None if self.multi => {
                let mut rev = vec![TAG_ID_TO_NAME, kind as u8];
                rev.extend_from_slice(&id.to_be_bytes());
                match self.kv.get_now(CATALOG, &rev)? {
                    Some(v) => {
                        let name = std::str::from_utf8(&v).map_err(|_| {
                            StorageError::Corrupt(format!("the name of {} {id}", kind.what()))
                        })?;
                        self.learned(kind, name, id);
                        found(self)
                    }
                    None => None,
                }
            }
            None if self.refreshed()? => found(self),
            None => None,
        };
        name.ok_or_else(|| StorageError::Corrupt(format!("unknown {} id {id}", kind.what())))
    }

    pub fn graph(&self, name: &str) -> Option<GraphId> {
        let found = |c: &Self| c.read().graphs.get(name).copied();
        found(self).or_else(|| self.refreshed().ok()?.then(|| found(self))?)
    }

    pub fn graphs(&self) -> Vec<(String, GraphId)> {
        // A shared reader lists what the writer has now.
        let _ = self.refreshed();
        self.read()
            .graphs
            .iter()
            .map(|(n, g)| (n.clone(), *g))
            .collect()
    }

    /// Adds the registry writes for a new graph to `b`; call
    /// [`Catalog::graph_created`] once the batch is written.
    pub fn create_graph(&self, name: &str, b: &mut WriteBatch) -> Result<GraphId> {
        if self.graph(name).is_some() {
            return Err(StorageError::GraphExists(name.into()));
        }
        let next = self.read().next_graph;
        Self::register_graph(name, next, b)
    }

    /// [`Catalog::create_graph`] for a store other processes write: the
    /// registry as `snap` (under the writer lock) holds it decides.
    pub fn create_graph_in(
        &self,
        snap: &dyn plexus_kv::Snapshot,
        name: &str,
        b: &mut WriteBatch,
    ) -> Result<GraphId> {
        if snap.get(CATALOG, &graph_registry_key(name))?.is_some() {
            return Err(StorageError::GraphExists(name.into()));
        }
        let next = snap
            .get(CATALOG, &[TAG_NEXT_GRAPH])?
            .and_then(|v| read_u32(&v, 0))
            .unwrap_or(0);
        Self::register_graph(name, next, b)
    }

    fn register_graph(name: &str, g: u32, b: &mut WriteBatch) -> Result<GraphId> {
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(StorageError::InvalidName {
                what: "graph name",
                name: name.chars().take(40).collect(),
                why: "names must be 1 to 255 bytes long",
            });
        }
        let after = g
            .checked_add(1)
            .ok_or_else(|| StorageError::Unsupported("graph ids exhausted".into()))?;
        b.put(CATALOG, graph_registry_key(name), g.to_be_bytes().to_vec());
        b.put(CATALOG, vec![TAG_NEXT_GRAPH], after.to_be_bytes().to_vec());
        Ok(GraphId(g))
    }

    pub fn graph_created(&self, name: &str, g: GraphId) {
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        inner.graphs.insert(name.to_string(), g);
        inner.next_graph = inner.next_graph.max(g.0 + 1);
    }

    pub fn graph_dropped(&self, name: &str) {
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        inner.graphs.remove(name);
    }
}

/// The next id of a kind of name, as the store holds them: one past the
/// largest id interned (ids are keys of the reverse entries, in order).
fn stored_next(snap: &dyn plexus_kv::Snapshot, kind: Token) -> plexus_kv::Result<u32> {
    let prefix = [TAG_ID_TO_NAME, kind as u8];
    let mut last = None;
    snap.visit_rev(CATALOG, &KeyRange::prefix(&prefix), &mut |k, _| {
        last = k.get(2..).and_then(|b| read_u32(b, 0));
        Ok(false)
    })?;
    match last {
        None => Ok(0),
        Some(id) => id
            .checked_add(1)
            .ok_or_else(|| plexus_kv::KvError::Unsupported("names exhausted".into())),
    }
}

pub(crate) fn graph_registry_key(name: &str) -> Vec<u8> {
    let mut k = vec![TAG_GRAPH];
    k.extend_from_slice(name.as_bytes());
    k
}
