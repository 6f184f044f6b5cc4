//! The commit pipeline: group commit.
//!
//! A durable commit costs one sync of the disk, which takes far longer than
//! everything else a small transaction does. So transactions that become
//! ready while a sync is in flight wait for it and then go together: the
//! first of them to find no group in progress leads the next group. The
//! leader takes every waiting request, validates them in arrival order under
//! the commit lock — each against the commits published since it started
//! *and* against the members accepted before it in the same group, none of
//! which it could have seen — writes the accepted ones as one backend batch
//! (one sync acknowledges them all), publishes their footprints in order and
//! hands each waiting thread its own outcome. A transaction is acknowledged
//! only after the write that holds it returned.
//!
//! A request refused by validation fails alone (a conflict). Should the
//! group's write fail, each accepted member is written again on its own, so
//! a member whose batch the backend refuses never takes the others down.
//!
//! What stays outside the commit lock: turning overlays into batches (the
//! committing thread, before it queues) and joining the group's batches into
//! one (the leader, before it locks). Under the lock: validation, the id
//! counters, the backend write and publication.

use crate::error::{Result, StorageError};
use crate::keys::{ADJ, EDGES};
use crate::maintain::Effects;
use crate::occ::Footprint;
use crate::storage::Shared;
use plexus_kv::WriteBatch;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A transaction ready to commit.
pub(crate) struct Request {
    pub start: u64,
    /// In a store other processes write: the store's commit number the
    /// transaction's snapshot saw (`coord.rs`).
    pub remote_start: u64,
    /// A checkpoint of a maintained index: the index sequence its state
    /// was loaded at. Refused if another process changed the index since.
    pub index_loaded: Option<u64>,
    /// Nodes changed only by list updates, merged at commit (`merge.rs`).
    pub merges: Vec<crate::merge::Merge>,
    pub fp: Footprint,
    pub serializable: bool,
    pub batch: WriteBatch,
    /// Changes to maintained indexes, published with the write (`maintain.rs`).
    pub effects: Effects,
}

/// Totals since the store was opened, for `plexus stats` and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Transactions written.
    pub commits: u64,
    /// Transactions refused at validation (conflicts).
    pub conflicts: u64,
    /// Backend writes that carried commits (each one sync when durable).
    pub groups: u64,
    /// The largest number of transactions one write carried.
    pub largest_group: u64,
    /// Time spent in the backend's writes, syncs included, in microseconds.
    pub write_micros: u64,
    /// Time the commit lock was held by groups, in microseconds.
    pub locked_micros: u64,
    /// Transactions queued now for the next group (a gauge, not a total).
    pub waiting: u64,
}

impl CommitStats {
    /// Transactions per backend write.
    pub fn mean_group(&self) -> f64 {
        if self.groups == 0 {
            0.0
        } else {
            self.commits as f64 / self.groups as f64
        }
    }
}

#[derive(Default)]
struct Queue {
    next_ticket: u64,
    /// Requests waiting for the next group, in arrival order.
    pending: Vec<(u64, Request)>,
    /// Outcomes not yet collected by their threads.
    done: HashMap<u64, Result<()>>,
    /// Whether a leader is gathering or writing a group now.
    leading: bool,
    /// Whether the leader waits for more requests to arrive.
    gathering: bool,
}

#[derive(Default)]
struct Totals {
    commits: AtomicU64,
    conflicts: AtomicU64,
    groups: AtomicU64,
    largest_group: AtomicU64,
    write_micros: AtomicU64,
    locked_micros: AtomicU64,
}

#[derive(Default)]
pub(crate) struct Committer {
    queue: Mutex<Queue>,
    /// Signalled when a group's outcomes are in and leadership is free.
    turn: Condvar,
    /// Signalled when a request arrives while the leader gathers.
    arrivals: Condvar,
    totals: Totals,
    /// A moving average of the backend write's time, in microseconds: how
    /// long a leader may wait for requests still being prepared.
    recent_write_micros: AtomicU64,
}

/// The longest a leader waits for more requests, whatever writes cost.
const MAX_PATIENCE: Duration = Duration::from_millis(2);

impl Committer {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Commits `req`, in a group with whatever else is ready, and returns
    /// once the write that holds it has returned.
    pub fn commit(&self, shared: &Shared, req: Request) -> Result<()> {
        let mut q = self.lock();
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        q.pending.push((ticket, req));
        if q.gathering {
            self.arrivals.notify_one();
        }
        loop {
            if let Some(outcome) = q.done.remove(&ticket) {
                return outcome;
            }
            if !q.leading {
                q.leading = true;
                q = self.gather(shared, q);
                let group = std::mem::take(&mut q.pending);
                drop(q);
                let mut lead = Lead {
                    committer: self,
                    tickets: group.iter().map(|(t, _)| *t).collect(),
                    outcomes: Vec::new(),
                };
                lead.outcomes = self.write_group(shared, group);
                drop(lead);
                q = self.lock();
                continue;
            }
            q = self.turn.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Lets the group grow before it is written: while other write
    /// transactions are open but not yet queued, waits for them, for at
    /// most half a recent write. Once every thread with a transaction
    /// waits for the same sync, they all arrive at once after it and the
    /// first to arrive would otherwise lead a group of one while the rest
    /// queue behind it: groups would alternate between large and tiny.
    /// Alone (one open transaction) a leader never waits.
    fn gather<'q>(&self, shared: &Shared, mut q: MutexGuard<'q, Queue>) -> MutexGuard<'q, Queue> {
        let patience = Duration::from_micros(self.recent_write_micros.load(Relaxed) / 2);
        let deadline = Instant::now() + patience.min(MAX_PATIENCE);
        while q.pending.len() < shared.occ.open_writers() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            q.gathering = true;
            q = self
                .arrivals
                .wait_timeout(q, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            q.gathering = false;
        }
        q
    }

    pub fn stats(&self) -> CommitStats {
        let t = &self.totals;
        CommitStats {
            commits: t.commits.load(Relaxed),
            conflicts: t.conflicts.load(Relaxed),
            groups: t.groups.load(Relaxed),
            largest_group: t.largest_group.load(Relaxed),
            write_micros: t.write_micros.load(Relaxed),
            locked_micros: t.locked_micros.load(Relaxed),
            waiting: self.lock().pending.len() as u64,
        }
    }

    /// Validates, writes and publishes one group; an outcome per ticket.
    fn write_group(&self, shared: &Shared, group: Vec<(u64, Request)>) -> Vec<(u64, Result<()>)> {
        if shared.multi {
            return self.write_group_multi(shared, group);
        }
        // Joined before the lock; a member refused later is cut out again.
        let joined = (group.len() > 1).then(|| join(&group));
        let _c = shared.lock_commits();
        let locked = Instant::now();
        let mut outcomes = Vec::with_capacity(group.len());
        let mut accepted: Vec<(u64, Request)> = Vec::with_capacity(group.len());
        let mut refused = Vec::new();
        for (i, (ticket, req)) in group.into_iter().enumerate() {
            match validate(shared, &req, &accepted) {
                Ok(()) => accepted.push((ticket, req)),
                Err(e) => {
                    self.totals.conflicts.fetch_add(1, Relaxed);
                    refused.push(i);
                    outcomes.push((ticket, Err(e)));
                }
            }
        }
        if !accepted.is_empty() {
            let batch = match joined {
                Some((mut batch, ranges)) => {
                    // Back to front, so earlier ranges keep their place.
                    for &i in refused.iter().rev() {
                        batch.ops.drain(ranges[i].clone());
                    }
                    batch
                }
                None => std::mem::take(&mut accepted[0].1.batch),
            };
            outcomes.extend(self.write_accepted(shared, batch, accepted));
        }
        let held = locked.elapsed().as_micros() as u64;
        self.totals.locked_micros.fetch_add(held, Relaxed);
        outcomes
    }

    /// Writes the accepted members' joined batch, or each member alone if
    /// that write fails, and publishes what landed.
    fn write_accepted(
        &self,
        shared: &Shared,
        mut batch: WriteBatch,
        accepted: Vec<(u64, Request)>,
    ) -> Vec<(u64, Result<()>)> {
        let published = publish(shared, accepted.iter().map(|(_, r)| &r.effects));
        shared.persist_counters(&mut batch);
        let n = accepted.len() as u64;
        let merges: Vec<&crate::merge::Merge> =
            accepted.iter().flat_map(|(_, r)| &r.merges).collect();
        let written = self.timed_write(shared, batch, &merges);
        if published {
            match &written {
                Ok(()) => accepted
                    .iter()
                    .for_each(|(_, r)| drop_indexes(shared, &r.effects)),
                Err(_) => accepted
                    .iter()
                    .for_each(|(_, r)| retract(shared, &r.effects)),
            }
        }
        match written {
            Ok(()) => {
                self.totals.commits.fetch_add(n, Relaxed);
                self.totals.largest_group.fetch_max(n, Relaxed);
                accepted
                    .into_iter()
                    .map(|(ticket, req)| {
                        shared.occ.publish(req.fp);
                        (ticket, Ok(()))
                    })
                    .collect()
            }
            Err(e) if n == 1 => vec![(accepted[0].0, Err(e))],
            // What reached the disk is unknown (a sync failed?): writing the
            // members again could apply them twice. Each gets the error; the
            // store takes no more writes until reopened (`FencedKv`).
            Err(StorageError::Kv(e)) if !e.wrote_nothing() => accepted
                .into_iter()
                .map(|(ticket, _)| (ticket, Err(StorageError::Kv(e.clone()))))
                .collect(),
            Err(_) => accepted
                .into_iter()
                .map(|(ticket, mut req)| {
                    let mut alone = std::mem::take(&mut req.batch);
                    let published = publish(shared, std::iter::once(&req.effects));
                    shared.persist_counters(&mut alone);
                    let merges: Vec<&crate::merge::Merge> = req.merges.iter().collect();
                    let outcome = self.timed_write(shared, alone, &merges);
                    if published {
                        match &outcome {
                            Ok(()) => drop_indexes(shared, &req.effects),
                            Err(_) => retract(shared, &req.effects),
                        }
                    }
                    let outcome = outcome.map(|()| {
                        self.totals.commits.fetch_add(1, Relaxed);
                        shared.occ.publish(req.fp);
                    });
                    (ticket, outcome)
                })
                .collect(),
        }
    }

    fn timed_write(
        &self,
        shared: &Shared,
        mut batch: WriteBatch,
        merges: &[&crate::merge::Merge],
    ) -> Result<()> {
        let started = Instant::now();
        // Under the commit lock the latest snapshot is what the batch lands on.
        let history = shared.history_kept.load(Relaxed);
        if history
            || needs_settling(&batch)
            || !merges.is_empty()
            || crate::history::has_pending_stamps(&batch)
        {
            let snap = shared.kv.snapshot()?;
            crate::merge::merge(&*snap, &mut batch, merges)?;
            let stamped = crate::history::stamp(&*snap, &mut batch)?;
            if history {
                crate::history::record(&*snap, &mut batch, stamped)?;
            }
            settle(&*snap, &mut batch)?;
        }
        let r = shared.kv.write(batch);
        self.timed(started);
        Ok(r?)
    }

    /// Counts a backend write that began at `started`.
    fn timed(&self, started: Instant) {
        let took = started.elapsed().as_micros() as u64;
        let t = &self.totals;
        t.write_micros.fetch_add(took, Relaxed);
        t.groups.fetch_add(1, Relaxed);
        // Only the leader writes, so a plain load and store do not race.
        let avg = self.recent_write_micros.load(Relaxed);
        self.recent_write_micros
            .store(avg - avg / 8 + took / 8, Relaxed);
    }
}

impl Committer {
    /// [`Committer::write_group`] for a store other processes write
    /// (`coord.rs`). Under the commit lock each member is validated as in
    /// one process; then, under the store's writer lock, against the
    /// commits every process logged since it began. What passes is
    /// settled against the store as it is, logged and written in one
    /// store transaction.
    fn write_group_multi(
        &self,
        shared: &Shared,
        group: Vec<(u64, Request)>,
    ) -> Vec<(u64, Result<()>)> {
        let _c = shared.lock_commits();
        let locked = Instant::now();
        let mut outcomes = Vec::with_capacity(group.len());
        let mut members: Vec<(u64, Request)> = Vec::with_capacity(group.len());
        for (ticket, req) in group {
            match validate(shared, &req, &members) {
                Ok(()) => members.push((ticket, req)),
                Err(e) => outcomes.push((ticket, Err(e))),
            }
        }
        let mut kept: Vec<(u64, Request)> = Vec::with_capacity(members.len());
        let mut published = false;
        let mut members = Some(members);
        let written = crate::coord::write_serialized(&*shared.kv, &mut |snap| {
            let members = members.take().unwrap_or_default();
            let seq = crate::coord::commit_seq(snap)?;
            let oldest = members.iter().map(|(_, r)| r.remote_start).min();
            let logged = crate::coord::logged_since(snap, oldest.unwrap_or(seq))?;
            let stored_index = crate::maintain::index_seq(snap)?;
            shared.index_sync.before_commit(stored_index);
            shared.maintained.seq.fetch_max(stored_index, Relaxed);
            for (ticket, req) in members {
                match validate_remote(shared, snap, &req, &logged, stored_index) {
                    Ok(()) => kept.push((ticket, req)),
                    Err(e) => outcomes.push((ticket, Err(e))),
                }
            }
            let mut batch = WriteBatch::new();
            if kept.is_empty() {
                return Ok(batch);
            }
            let mut fp = Footprint::default();
            for (_, r) in &mut kept {
                batch.ops.append(&mut r.batch.ops);
                fp.absorb(&r.fp);
            }
            published = publish(shared, kept.iter().map(|(_, r)| &r.effects));
            shared.persist_counters(&mut batch);
            let merges: Vec<&crate::merge::Merge> =
                kept.iter().flat_map(|(_, r)| &r.merges).collect();
            crate::merge::merge(snap, &mut batch, &merges)?;
            let stamped = crate::history::stamp(snap, &mut batch)?;
            crate::history::record(snap, &mut batch, stamped)?;
            settle(snap, &mut batch)?;
            crate::coord::log_commit(&mut batch, seq, &fp);
            Ok(batch)
        });
        self.timed(locked);
        let refused = outcomes.iter().filter(|(_, o)| o.is_err()).count() as u64;
        self.totals.conflicts.fetch_add(refused, Relaxed);
        match written {
            Ok(()) => {
                shared
                    .index_sync
                    .after_commit(shared.maintained.seq.load(Relaxed));
                let n = kept.len() as u64;
                self.totals.commits.fetch_add(n, Relaxed);
                self.totals.largest_group.fetch_max(n, Relaxed);
                for (ticket, req) in kept {
                    if published {
                        drop_indexes(shared, &req.effects);
                    }
                    shared.occ.publish(req.fp);
                    outcomes.push((ticket, Ok(())));
                }
            }
            Err(e) => {
                let mut e = Some(e);
                for (ticket, req) in kept {
                    if published {
                        retract(shared, &req.effects);
                    }
                    let err = match &e {
                        Some(StorageError::Kv(k)) => StorageError::Kv(k.clone()),
                        _ => e.take().unwrap_or_else(|| {
                            StorageError::Internal("the write of this commit's group failed".into())
                        }),
                    };
                    outcomes.push((ticket, Err(err)));
                }
            }
        }
        let held = locked.elapsed().as_micros() as u64;
        self.totals.locked_micros.fetch_add(held, Relaxed);
        outcomes
    }
}

/// Refuses `req` when a commit another process logged since it began
/// conflicts with it, or when it checkpoints an index state that another
/// process's change made stale.
fn validate_remote(
    shared: &Shared,
    snap: &dyn plexus_kv::Snapshot,
    req: &Request,
    logged: &[(u64, Footprint)],
    stored_index: u64,
) -> Result<()> {
    crate::coord::validate(snap, req.remote_start, &req.fp, req.serializable, logged)?;
    match req.index_loaded {
        Some(loaded) if !shared.index_sync.current(loaded, stored_index) => Err(
            StorageError::Conflict("another process changed the index since it was loaded".into()),
        ),
        _ => Ok(()),
    }
}

/// Whether a batch holds adjacency deltas, edge records or entries of
/// packed keyspaces, which must be settled against what the store holds.
fn needs_settling(batch: &WriteBatch) -> bool {
    batch.ops.iter().any(|op| {
        let ks = op.keyspace();
        ks == ADJ || ks == EDGES || crate::packed::touches(ks)
    })
}

/// Settles a batch against `snap`, the state it lands on (`adjacency.rs`,
/// `edge_blocks.rs`, `packed.rs`).
fn settle(snap: &dyn plexus_kv::Snapshot, batch: &mut WriteBatch) -> Result<()> {
    let (adj, edges, ids) = batch
        .ops
        .iter()
        .fold((false, false, false), |(a, e, i), op| {
            let ks = op.keyspace();
            (
                a || ks == ADJ,
                e || ks == EDGES,
                i || crate::packed::touches(ks),
            )
        });
    if adj {
        crate::adjacency::settle(snap, batch)?;
    }
    if edges {
        crate::edge_blocks::settle(snap, batch)?;
    }
    if ids {
        crate::packed::settle(snap, batch)?;
    }
    Ok(())
}

/// Makes the maintained-index changes of the members about to be written
/// visible at the next index sequence number (which `persist_counters`
/// then writes with them): readers whose snapshot lacks the write hold a
/// lower number and see none of it. Indexes created are installed now, so
/// that a reader of the written snapshot finds them; indexes dropped are
/// removed once the write landed (`drop_indexes`). False when there was
/// nothing to publish.
fn publish<'a>(shared: &Shared, members: impl Iterator<Item = &'a Effects> + Clone) -> bool {
    if members.clone().all(Effects::is_empty) {
        return false;
    }
    let seq = shared.maintained.seq.fetch_add(1, Relaxed) + 1;
    for e in members {
        for (g, index, state) in &e.installs {
            if state.is_some() {
                shared.maintained.install(*g, *index, state.clone(), seq);
            }
        }
        for c in &e.changes {
            c.state.publish(&c.staged, seq);
        }
    }
    true
}

/// The write failed: undoes `publish`.
fn retract(shared: &Shared, e: &Effects) {
    for c in e.changes.iter().rev() {
        c.state.retract(&c.staged);
    }
    for (g, index, state) in &e.installs {
        if state.is_some() {
            shared.maintained.install(*g, *index, None, 0);
        }
    }
}

fn drop_indexes(shared: &Shared, e: &Effects) {
    for (g, index, state) in &e.installs {
        if state.is_none() {
            shared.maintained.install(*g, *index, None, 0);
        }
    }
}

/// Every member's ops in one batch (copies: the members keep theirs for a
/// write on their own), and the range each member's ops occupy.
fn join(group: &[(u64, Request)]) -> (WriteBatch, Vec<std::ops::Range<usize>>) {
    let mut batch = WriteBatch::new();
    batch
        .ops
        .reserve(group.iter().map(|(_, r)| r.batch.ops.len()).sum());
    let mut ranges = Vec::with_capacity(group.len());
    for (_, req) in group {
        let from = batch.ops.len();
        batch.ops.extend(req.batch.ops.iter().cloned());
        ranges.push(from..batch.ops.len());
    }
    (batch, ranges)
}

/// Refuses `req` when a commit published since it started, or a member of
/// its group accepted before it, conflicts with it.
fn validate(shared: &Shared, req: &Request, accepted: &[(u64, Request)]) -> Result<()> {
    shared.occ.validate(req.start, &req.fp, req.serializable)?;
    for (_, earlier) in accepted {
        if let Some(why) = req.fp.conflict_with(&earlier.fp, req.serializable) {
            return Err(StorageError::Conflict(why.into()));
        }
    }
    Ok(())
}

/// A group's leadership: when it ends, normally or by a panic, every ticket
/// of the group gets an outcome and the next leader may start.
struct Lead<'a> {
    committer: &'a Committer,
    tickets: Vec<u64>,
    outcomes: Vec<(u64, Result<()>)>,
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        let mut q = self.committer.lock();
        for (ticket, outcome) in self.outcomes.drain(..) {
            q.done.insert(ticket, outcome);
        }
        for t in &self.tickets {
            q.done.entry(*t).or_insert_with(|| {
                Err(StorageError::Internal(
                    "the thread writing this commit's group failed".into(),
                ))
            });
        }
        q.leading = false;
        drop(q);
        self.committer.turn.notify_all();
    }
}
