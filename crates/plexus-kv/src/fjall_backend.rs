//! The fjall backend: a pure-Rust LSM tree, for write-heavy data larger
//! than memory. Writes go through one cross-keyspace batch per commit.
//!
//! fjall has no read-modify-write inside a batch, so counter additions and
//! range deletes read a snapshot taken under this store's write lock, which
//! every write holds: nothing can change between that read and the commit.

use crate::batch::add_counter;
use crate::{
    Backend, KeyRange, Ks, KvError, KvIter, KvOptions, KvPair, KvStore, Op, Result, ScanOptions,
    Snapshot, SortedCheck, WriteBatch,
};
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode, Readable};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub(crate) struct FjallStore {
    db: Database,
    keyspaces: Arc<Vec<Keyspace>>,
    durable: bool,
    write_lock: Mutex<()>,
}

fn backend_err(e: fjall::Error) -> KvError {
    match e {
        fjall::Error::Io(io) => KvError::Io(io),
        other => KvError::Backend {
            backend: "fjall",
            message: other.to_string(),
        },
    }
}

impl FjallStore {
    pub(crate) fn open(path: &Path, names: &[&str], opts: &KvOptions) -> Result<Self> {
        std::fs::create_dir_all(path)?;
        let db = Database::builder(path).open().map_err(backend_err)?;
        let keyspaces = names
            .iter()
            .map(|n| {
                db.keyspace(n, KeyspaceCreateOptions::default)
                    .map_err(backend_err)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(FjallStore {
            db,
            keyspaces: Arc::new(keyspaces),
            durable: opts.durable,
            write_lock: Mutex::new(()),
        })
    }

    fn ks(&self, ks: Ks) -> Result<&Keyspace> {
        self.keyspaces
            .get(ks.0)
            .ok_or(KvError::NoSuchKeyspace(ks.0))
    }

    fn persist_mode(&self) -> PersistMode {
        if self.durable {
            PersistMode::SyncAll
        } else {
            PersistMode::Buffer
        }
    }
}

impl KvStore for FjallStore {
    fn snapshot(&self) -> Result<Box<dyn Snapshot>> {
        Ok(Box::new(FjallSnapshot {
            snap: self.db.snapshot(),
            keyspaces: self.keyspaces.clone(),
        }))
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        let _w = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        let snap = self.db.snapshot();
        let mut out = self.db.batch().durability(Some(self.persist_mode()));
        // What this batch has written so far, so later ops read their effect.
        let mut pending: HashMap<(usize, Vec<u8>), Option<Vec<u8>>> = HashMap::new();
        for op in batch.ops {
            match op {
                Op::Put { ks, key, value } => {
                    out.insert(self.ks(ks)?, key.clone(), value.clone());
                    pending.insert((ks.0, key), Some(value));
                }
                Op::Delete { ks, key } => {
                    out.remove(self.ks(ks)?, key.clone());
                    pending.insert((ks.0, key), None);
                }
                Op::DeleteRange { ks, start, end } => {
                    let space = self.ks(ks)?;
                    for guard in snap.range(space, start.clone()..end.clone()) {
                        let key = guard.key().map_err(backend_err)?.to_vec();
                        out.remove(space, key.clone());
                        pending.insert((ks.0, key), None);
                    }
                    let written: Vec<Vec<u8>> = pending
                        .keys()
                        .filter(|(k, key)| *k == ks.0 && *key >= start && *key < end)
                        .map(|(_, key)| key.clone())
                        .collect();
                    for key in written {
                        out.remove(space, key.clone());
                        pending.insert((ks.0, key), None);
                    }
                }
                Op::Add { ks, key, delta } => {
                    let space = self.ks(ks)?;
                    let old = match pending.get(&(ks.0, key.clone())) {
                        Some(v) => v.clone(),
                        None => snap
                            .get(space, &key)
                            .map_err(backend_err)?
                            .map(|v| v.to_vec()),
                    };
                    let new = add_counter(old.as_deref(), delta).map(|v| v.to_vec());
                    match &new {
                        Some(v) => out.insert(space, key.clone(), v.clone()),
                        None => out.remove(space, key.clone()),
                    }
                    pending.insert((ks.0, key), new);
                }
            }
        }
        out.commit().map_err(backend_err)
    }

    fn bulk_append(&self, ks: Ks, pairs: &mut dyn Iterator<Item = KvPair>) -> Result<u64> {
        let space = self.ks(ks)?.clone();
        let mut check = SortedCheck::new(pairs);
        let mut batch = self.db.batch().durability(Some(self.persist_mode()));
        let mut n = 0u64;
        for (k, v) in &mut check {
            batch.insert(&space, k, v);
            n += 1;
        }
        if check.out_of_order {
            return Err(KvError::NotSorted);
        }
        let _w = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        batch.commit().map_err(backend_err)?;
        Ok(n)
    }

    fn disk_size(&self) -> Result<u64> {
        self.db.disk_space().map_err(backend_err)
    }

    fn stored_sizes(&self) -> Result<Vec<u64>> {
        Ok(self.keyspaces.iter().map(Keyspace::disk_space).collect())
    }

    fn backend(&self) -> Backend {
        Backend::Fjall
    }
}

struct FjallSnapshot {
    snap: fjall::Snapshot,
    keyspaces: Arc<Vec<Keyspace>>,
}

impl Snapshot for FjallSnapshot {
    fn get(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let space = self
            .keyspaces
            .get(ks.0)
            .ok_or(KvError::NoSuchKeyspace(ks.0))?;
        let v = self.snap.get(space, key).map_err(backend_err)?;
        Ok(v.map(|v| v.to_vec()))
    }

    fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_> {
        let Some(space) = self.keyspaces.get(ks.0) else {
            return Box::new(std::iter::once(Err(KvError::NoSuchKeyspace(ks.0))));
        };
        if range.is_empty() {
            return Box::new(std::iter::empty());
        }
        let limit = opts.limit.unwrap_or(usize::MAX);
        let it = self
            .snap
            .range::<Vec<u8>, _>(space, (range.start.clone(), range.end.clone()));
        let owned = |g: fjall::Guard| {
            g.into_inner()
                .map(|(k, v)| (k.to_vec(), v.to_vec()))
                .map_err(backend_err)
        };
        if opts.reverse {
            Box::new(it.rev().take(limit).map(owned))
        } else {
            Box::new(it.take(limit).map(owned))
        }
    }
}
