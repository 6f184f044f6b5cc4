//! A fault-injecting key-value store (DESIGN §1): wraps a real backend and
//! fails one chosen operation — a snapshot, a read, a write batch, a bulk
//! write — with an I/O error or a full disk. Counting operations first with
//! no fault, then failing each position in turn, reaches every place where
//! the storage talks to the disk.

use plexus_kv::{
    Backend, KeyRange, Ks, KvError, KvIter, KvPair, KvStore, PairVisitor, Result, Run, ScanOptions,
    Snapshot, WriteBatch,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The error an injected fault raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The operating system fails the call (EIO).
    Io,
    /// The disk is full.
    Full,
    /// A write reaches the store, then the sync after it fails (EIO): the
    /// writer cannot know what the disk holds; here it holds the write.
    /// Only writes are numbered for this fault.
    SyncFailed,
}

/// When to fail: operations are numbered from 1 as they happen.
#[derive(Debug)]
pub struct Plan {
    /// The operation that fails; 0: none.
    fail_at: u64,
    fault: Fault,
    seen: AtomicU64,
}

impl Plan {
    pub fn new(fail_at: u64, fault: Fault) -> Arc<Plan> {
        Arc::new(Plan {
            fail_at,
            fault,
            seen: AtomicU64::new(0),
        })
    }

    /// Operations so far.
    pub fn operations(&self) -> u64 {
        self.seen.load(Ordering::SeqCst)
    }

    /// Whether the fault was raised.
    pub fn fired(&self) -> bool {
        self.fail_at > 0 && self.operations() >= self.fail_at
    }

    /// A read: fails when it is the chosen operation.
    fn tick(&self) -> Result<()> {
        if self.fault == Fault::SyncFailed {
            return Ok(());
        }
        self.tick_write().map(|_| ())
    }

    /// A write: fails when it is the chosen operation, before it reaches the
    /// store; or, for [`Fault::SyncFailed`], returns true: write, then fail.
    fn tick_write(&self) -> Result<bool> {
        let n = self.seen.fetch_add(1, Ordering::SeqCst) + 1;
        if n != self.fail_at {
            return Ok(false);
        }
        Err(match self.fault {
            Fault::Io => KvError::Io(std::io::Error::other("injected I/O error")),
            Fault::Full => KvError::Full("injected: no space left on device".into()),
            Fault::SyncFailed => return Ok(true),
        })
    }

    /// Runs a write under the plan.
    fn write<T>(&self, write: impl FnOnce() -> Result<T>) -> Result<T> {
        let then_fail = self.tick_write()?;
        let out = write()?;
        if then_fail {
            return Err(KvError::Io(std::io::Error::other(
                "injected: fsync failed after the write (EIO)",
            )));
        }
        Ok(out)
    }
}

/// A store whose operations go through a [`Plan`].
pub struct FaultyKv {
    inner: Arc<dyn KvStore>,
    plan: Arc<Plan>,
}

impl FaultyKv {
    pub fn wrap(inner: Arc<dyn KvStore>, plan: Arc<Plan>) -> Arc<dyn KvStore> {
        Arc::new(FaultyKv { inner, plan })
    }
}

struct FaultySnapshot {
    inner: Box<dyn Snapshot>,
    plan: Arc<Plan>,
}

impl Snapshot for FaultySnapshot {
    fn get(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.plan.tick()?;
        self.inner.get(ks, key)
    }

    fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_> {
        if let Err(e) = self.plan.tick() {
            return Box::new(std::iter::once(Err(e)));
        }
        self.inner.scan(ks, range, opts)
    }

    fn visit(&self, ks: Ks, range: &KeyRange, f: &mut PairVisitor<'_>) -> Result<()> {
        self.plan.tick()?;
        self.inner.visit(ks, range, f)
    }

    fn visit_rev(&self, ks: Ks, range: &KeyRange, f: &mut PairVisitor<'_>) -> Result<()> {
        self.plan.tick()?;
        self.inner.visit_rev(ks, range, f)
    }

    fn floor(&self, ks: Ks, min: &[u8], key: &[u8], f: &mut PairVisitor<'_>) -> Result<()> {
        self.plan.tick()?;
        self.inner.floor(ks, min, key, f)
    }
}

impl KvStore for FaultyKv {
    fn snapshot(&self) -> Result<Box<dyn Snapshot>> {
        self.plan.tick()?;
        Ok(Box::new(FaultySnapshot {
            inner: self.inner.snapshot()?,
            plan: self.plan.clone(),
        }))
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        self.plan.write(|| self.inner.write(batch))
    }

    fn bulk_append(&self, ks: Ks, pairs: &mut dyn Iterator<Item = KvPair>) -> Result<u64> {
        self.plan.write(|| self.inner.bulk_append(ks, pairs))
    }

    fn reserve(&self, bytes: u64) -> Result<()> {
        self.inner.reserve(bytes)
    }

    fn write_sorted(
        &self,
        runs: &mut dyn Iterator<Item = Result<(Ks, Arc<Run>)>>,
        batch: WriteBatch,
    ) -> Result<()> {
        self.plan.write(|| self.inner.write_sorted(runs, batch))
    }

    fn disk_size(&self) -> Result<u64> {
        self.inner.disk_size()
    }

    fn stored_sizes(&self) -> Result<Vec<u64>> {
        self.inner.stored_sizes()
    }

    fn backend(&self) -> Backend {
        self.inner.backend()
    }
}
