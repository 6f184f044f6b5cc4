//! After a write whose outcome is unknown, no more writes.
//!
//! A write that fails with an I/O error may have failed in the sync after
//! its pages were written: some, all or none of it may be on disk, and the
//! kernel may have dropped the dirty pages it could not write, so a later
//! sync that succeeds proves nothing about them (PostgreSQL's "fsyncgate",
//! 2018). Going on writing would build on a state nobody knows. So, as
//! PostgreSQL does by crashing, a [`FencedKv`] refuses every write after
//! such a failure with [`KvError::Fenced`], naming the first error; reads go
//! on. Opening the database again reads what the disk holds and writes
//! from there. Failures that certainly wrote nothing (see
//! [`KvError::wrote_nothing`]) leave the store open for writes.

use crate::{Backend, Ks, KvError, KvPair, KvStore, Result, Run, Snapshot, WriteBatch};
use std::sync::{Arc, Mutex};

/// A store that stops taking writes after one fails with an unknown outcome.
pub struct FencedKv {
    inner: Arc<dyn KvStore>,
    /// The error of the write that fenced the store.
    fenced: Mutex<Option<String>>,
}

impl FencedKv {
    pub fn wrap(inner: Arc<dyn KvStore>) -> Arc<FencedKv> {
        Arc::new(FencedKv {
            inner,
            fenced: Mutex::new(None),
        })
    }

    /// Why writes are refused, if they are.
    pub fn fenced(&self) -> Option<String> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.fenced.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn guarded<T>(&self, write: impl FnOnce() -> Result<T>) -> Result<T> {
        if let Some(cause) = self.fenced() {
            return Err(KvError::Fenced(cause));
        }
        let out = write();
        if let Err(e) = &out {
            if !e.wrote_nothing() {
                let mut f = self.lock();
                if f.is_none() {
                    *f = Some(e.to_string());
                }
            }
        }
        out
    }
}

impl KvStore for FencedKv {
    fn snapshot(&self) -> Result<Box<dyn Snapshot>> {
        self.inner.snapshot()
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        self.guarded(|| self.inner.write(batch))
    }

    fn bulk_append(&self, ks: Ks, pairs: &mut dyn Iterator<Item = KvPair>) -> Result<u64> {
        self.guarded(|| self.inner.bulk_append(ks, pairs))
    }

    fn write_sorted(
        &self,
        runs: &mut dyn Iterator<Item = Result<(Ks, Arc<Run>)>>,
        batch: WriteBatch,
    ) -> Result<()> {
        self.guarded(|| self.inner.write_sorted(runs, batch))
    }

    fn reserve(&self, bytes: u64) -> Result<()> {
        self.inner.reserve(bytes)
    }

    fn disk_size(&self) -> Result<u64> {
        self.inner.disk_size()
    }

    fn compact(&self) -> Result<crate::Compaction> {
        self.guarded(|| self.inner.compact())
    }

    fn stored_sizes(&self) -> Result<Vec<u64>> {
        self.inner.stored_sizes()
    }

    fn backend(&self) -> Backend {
        self.inner.backend()
    }

    fn round_trips(&self) -> Option<u64> {
        self.inner.round_trips()
    }

    fn shared(&self) -> bool {
        self.inner.shared()
    }

    fn get_now(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.get_now(ks, key)
    }

    fn write_serialized(&self, prepare: &mut crate::Prepare<'_>) -> Result<()> {
        self.guarded(|| self.inner.write_serialized(prepare))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KvOptions, Op};

    /// A store whose writes land, then fail as a sync would, while `failing`.
    struct SyncFails {
        inner: Arc<dyn KvStore>,
        failing: Mutex<bool>,
    }

    impl KvStore for SyncFails {
        fn snapshot(&self) -> Result<Box<dyn Snapshot>> {
            self.inner.snapshot()
        }
        fn write(&self, batch: WriteBatch) -> Result<()> {
            let refuse = batch
                .ops
                .iter()
                .any(|op| matches!(op, Op::Put { key, .. } if key == b"long"));
            if refuse {
                return Err(KvError::KeyTooLong { len: 4, max: 3 });
            }
            self.inner.write(batch)?;
            match *self.failing.lock().unwrap() {
                true => Err(KvError::Io(std::io::Error::other("fsync: EIO"))),
                false => Ok(()),
            }
        }
        fn bulk_append(&self, ks: Ks, pairs: &mut dyn Iterator<Item = KvPair>) -> Result<u64> {
            self.inner.bulk_append(ks, pairs)
        }
        fn disk_size(&self) -> Result<u64> {
            Ok(0)
        }
        fn stored_sizes(&self) -> Result<Vec<u64>> {
            self.inner.stored_sizes()
        }
        fn backend(&self) -> Backend {
            Backend::Memory
        }
    }

    fn put(key: &[u8]) -> WriteBatch {
        let mut b = WriteBatch::new();
        b.put(Ks(0), key.to_vec(), b"v".to_vec());
        b
    }

    #[test]
    fn an_unknown_outcome_fences_writes_and_a_refusal_does_not() {
        let opts = KvOptions::default();
        let inner = crate::open(Backend::Memory, std::path::Path::new(""), &["a"], &opts).unwrap();
        let faulty = Arc::new(SyncFails {
            inner: inner.clone(),
            failing: Mutex::new(false),
        });
        let kv = FencedKv::wrap(faulty.clone());
        kv.write(put(b"one")).unwrap();
        // Refused before writing: nothing fenced.
        assert!(matches!(
            kv.write(put(b"long")),
            Err(KvError::KeyTooLong { .. })
        ));
        kv.write(put(b"two")).unwrap();
        *faulty.failing.lock().unwrap() = true;
        assert!(matches!(kv.write(put(b"three")), Err(KvError::Io(_))));
        *faulty.failing.lock().unwrap() = false;
        // Fenced from now on, with the cause named; reads go on.
        let e = kv.write(put(b"four")).unwrap_err();
        assert!(matches!(&e, KvError::Fenced(c) if c.contains("EIO")), "{e}");
        assert!(e.to_string().contains("opened again"), "{e}");
        let s = kv.snapshot().unwrap();
        assert!(s.get(Ks(0), b"three").unwrap().is_some(), "it landed");
        assert!(s.get(Ks(0), b"four").unwrap().is_none());
        // Opened again: writes are taken.
        FencedKv::wrap(inner).write(put(b"four")).unwrap();
    }
}
