//! Compaction beside readers and writers: a copy of a snapshot written
//! into the next generation, the batches committed meanwhile written again
//! into it, and the swap.
//!
//! The copy is made by appending each keyspace in key order into an empty
//! environment, so its pages are full: it gives back the free pages and
//! the room that deletes left inside pages, which LMDB's own compacting
//! copy (`MDB_CP_COMPACT`, page by page as they are) keeps. Writers go on
//! while it runs: each batch committed after the snapshot is logged under
//! the write lock, and replayed into the copy under that lock at the end,
//! in commit order, onto exactly the state the snapshot read — so counter
//! additions come out as they did in the live store. Writers wait only for
//! the replay and the swap. Sorted-run writes (bulk loads), too large to
//! keep, wait for the compaction instead.

use super::{backend_err, generation, Generation, LmdbStore, WriteErr};
use crate::{Compaction, KvError, Result, WriteBatch};
use heed::{EnvFlags, RoTxn, WithoutTls};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes of keys and values appended per write transaction of the copy:
/// large enough that commits are few, small enough that LMDB keeps a
/// transaction's dirty pages in memory.
const COPY_CHUNK: usize = 64 << 20;

impl LmdbStore {
    pub(super) fn compact_beside_writers(&self) -> Result<Compaction> {
        let (old, snapshot) = {
            let mut w = self.writer();
            if w.log.is_some() {
                return Err(KvError::Unsupported(
                    "a compaction of this store is running already".into(),
                ));
            }
            let old = self.live();
            let guard = old.gate.enter();
            let txn = old.env.clone().static_read_txn().map_err(backend_err)?;
            w.log = Some(Vec::new());
            (old, (txn, guard))
        };
        let result = self.copy_and_swap(&old, snapshot);
        let mut w = self.writer();
        w.log = None;
        self.compacted.notify_all();
        drop(w);
        result
    }

    /// Copies `snapshot` of `old` into the next generation, replays the
    /// log into it and swaps it in; on an error, removes it (nothing
    /// points at it) and leaves `old` live.
    fn copy_and_swap(
        &self,
        old: &Arc<Generation>,
        snapshot: (RoTxn<'static, WithoutTls>, super::GateGuard),
    ) -> Result<Compaction> {
        let bytes_before = old.env.real_disk_size().map_err(backend_err)?;
        let number = old.number.checked_add(1).ok_or_else(|| KvError::Backend {
            backend: "lmdb",
            message: "no generation number is left".into(),
        })?;
        generation::fresh(&self.folder, number)?;
        let swapped = self.fill_and_swap(old, number, snapshot);
        let (bytes_after, batches_replayed, writes_held) = match swapped {
            Ok(done) => done,
            Err(e) => {
                let _ = generation::remove(&self.folder, number);
                return Err(e);
            }
        };
        // Open snapshots keep the old files mapped; a failure here leaves
        // them for the next open to remove.
        let _ = generation::remove(&self.folder, old.number);
        retire(old.clone());
        Ok(Compaction {
            bytes_before,
            bytes_after,
            batches_replayed,
            writes_held,
        })
    }

    /// The copy's bytes, the batches replayed and how long writers waited.
    fn fill_and_swap(
        &self,
        old: &Generation,
        number: u64,
        (txn, guard): (RoTxn<'static, WithoutTls>, super::GateGuard),
    ) -> Result<(u64, u64, Duration)> {
        let names: Vec<&str> = self.keyspaces.iter().map(String::as_str).collect();
        let map_size = old.env.info().map_size;
        let new = Generation::open(&self.folder, number, &names, &self.opts, map_size)?;
        // The copy is synced once, at the end, not at each chunk's commit.
        // SAFETY: no other thread uses the new environment yet.
        unsafe {
            new.env
                .set_flags(EnvFlags::NO_SYNC, heed::FlagSetMode::Enable)
        }
        .map_err(backend_err)?;
        new.append_all(old, &txn)?;
        drop((txn, guard));
        // Synced before writers wait: the copy's gigabytes, not only the
        // replay's few pages, would otherwise be flushed under the lock.
        new.env.force_sync().map_err(backend_err)?;
        let mut w = self.writer();
        let held = Instant::now();
        let log = w.log.take().unwrap_or_default();
        // The writes replayed may need more room than the map has: it
        // grows as the live one would (nothing reads the copy yet).
        let mut size = map_size;
        loop {
            match new.replay(&log) {
                Ok(()) => break,
                Err(WriteErr::Heed(e)) if super::is_map_full(&e) => new.grow(&mut size)?,
                Err(e) => return Err(write_err(e)),
            }
        }
        new.env.force_sync().map_err(backend_err)?;
        if self.opts.durable {
            // SAFETY: as above; the swap below publishes it.
            unsafe {
                new.env
                    .set_flags(EnvFlags::NO_SYNC, heed::FlagSetMode::Disable)
            }
            .map_err(backend_err)?;
        }
        let bytes_after = new.env.real_disk_size().map_err(backend_err)?;
        generation::point_to(&self.folder, number)?;
        // Nothing fails past the pointer: the copy is the store now.
        *self.live.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(new);
        // Its kept read transactions would hold it open for good.
        old.idle.close();
        w.map_size = size;
        drop(w);
        Ok((bytes_after, log.len() as u64, held.elapsed()))
    }
}

impl Generation {
    /// Appends every keyspace of `src` as `txn` reads it into this empty
    /// generation, in chunks of about [`COPY_CHUNK`] bytes a transaction.
    fn append_all(&self, src: &Generation, txn: &RoTxn<'static, WithoutTls>) -> Result<()> {
        for (from, to) in src.dbs.iter().zip(self.dbs.iter()) {
            let mut pairs = from.iter(txn).map_err(backend_err)?.peekable();
            while pairs.peek().is_some() {
                let mut chunk = Vec::new();
                let mut bytes = 0;
                while bytes < COPY_CHUNK {
                    let Some(pair) = pairs.next() else { break };
                    let (k, v) = pair.map_err(backend_err)?;
                    bytes += k.len() + v.len();
                    chunk.push((k, v));
                }
                let mut wtxn = self.env.write_txn().map_err(backend_err)?;
                self.append_pairs(&mut wtxn, *to, &mut chunk.into_iter())
                    .map_err(write_err)?;
                wtxn.commit().map_err(backend_err)?;
            }
        }
        Ok(())
    }

    /// Writes the batches logged during the copy, in order, in one
    /// transaction.
    fn replay(&self, log: &[WriteBatch]) -> Result<(), WriteErr> {
        let mut wtxn = self.env.write_txn()?;
        for batch in log {
            self.apply(&mut wtxn, batch)?;
        }
        Ok(wtxn.commit()?)
    }
}

fn write_err(e: WriteErr) -> KvError {
    match e {
        WriteErr::Heed(e) => backend_err(e),
        WriteErr::Kv(e) => e,
    }
}

/// Closes a replaced generation once its last snapshot has ended, on a
/// thread of its own: closing unmaps the old file and frees its blocks,
/// which takes long for a large file (half a second at 2 GB was seen) and
/// would otherwise stall whichever reader happened to end last. Without a
/// thread, that reader closes it.
fn retire(old: Arc<Generation>) {
    let close = move || {
        // After the swap nothing new takes `old`: the count only falls. A
        // snapshot's guard outlives its transaction (field order).
        while Arc::strong_count(&old) > 1 || old.gate.readers() > 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(old);
    };
    let _ = std::thread::Builder::new()
        .name("plexus-lmdb-retire".into())
        .spawn(close);
}
