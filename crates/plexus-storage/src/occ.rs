//! Optimistic concurrency: what each write transaction wrote and read, and
//! backward validation at commit (first committer wins).
//!
//! A transaction records *conflict keys* (hashes of logical things such as
//! "node 7 of graph 2") in four sets:
//!
//! * `writes`: entities it changed. Two concurrent transactions that write
//!   the same entity conflict: this prevents lost updates.
//! * `shares`: entities it relies on without changing them, as an edge
//!   relies on its endpoints existing (Postgres's key-share lock). A share
//!   conflicts with a concurrent write of the same entity, not with another
//!   share: many writers may add edges to one hub at once, but never to a
//!   node being deleted.
//! * `touches`: predicates its changes affect (a label's member set, a
//!   node's adjacency, an index). Only serializable readers check them.
//! * `reads`: what it read, recorded only at the serializable level.
//!
//! Keys are 64-bit hashes; a collision can only cause a spurious conflict,
//! never a missed one.

use crate::error::{Result, StorageError};
use rustc_hash::FxHashSet;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The sets hash with Fx, not SipHash: their keys are hashes already, and
/// a delete of a thousand entities inserts a few thousand of them.
#[derive(Debug, Default, Clone)]
pub(crate) struct Footprint {
    pub writes: FxHashSet<u64>,
    pub shares: FxHashSet<u64>,
    pub touches: FxHashSet<u64>,
    pub reads: FxHashSet<u64>,
}

/// The logical things conflicts are detected on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subject<'a> {
    Node(u32, u64),
    Edge(u32, u64),
    NodeKey(u32, &'a str),
    EdgeKey(u32, &'a str),
    Adjacency(u32, u64),
    Label(u32, u32),
    Type(u32, u32),
    Index(u32, u32),
    UniqueValue(u32, u32, &'a [u8]),
    AllNodes(u32),
    AllEdges(u32),
    Schema(u32),
    /// What a valid-time write names as its subject (a logical entity).
    ValidTime(u32, &'a [u8]),
}

/// FNV-1a: stable, dependency-free, and good enough to spread these keys.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= *b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

impl Subject<'_> {
    pub fn hash(self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let (tag, g, a, b): (u8, u32, u64, &[u8]) = match self {
            Subject::Node(g, n) => (1, g, n, &[]),
            Subject::Edge(g, e) => (2, g, e, &[]),
            Subject::NodeKey(g, k) => (3, g, 0, k.as_bytes()),
            Subject::EdgeKey(g, k) => (4, g, 0, k.as_bytes()),
            Subject::Adjacency(g, n) => (5, g, n, &[]),
            Subject::Label(g, l) => (6, g, l as u64, &[]),
            Subject::Type(g, t) => (7, g, t as u64, &[]),
            Subject::Index(g, i) => (8, g, i as u64, &[]),
            Subject::UniqueValue(g, i, v) => (9, g, i as u64, v),
            Subject::AllNodes(g) => (10, g, 0, &[]),
            Subject::AllEdges(g) => (11, g, 0, &[]),
            Subject::Schema(g) => (12, g, 0, &[]),
            Subject::ValidTime(g, s) => (13, g, 0, s),
        };
        fnv(&mut h, &[tag]);
        fnv(&mut h, &g.to_le_bytes());
        fnv(&mut h, &a.to_le_bytes());
        fnv(&mut h, b);
        h
    }
}

impl Footprint {
    /// What another process needs to validate against this commit (its
    /// writes, shares and touches; reads matter only to the committer),
    /// for the shared store's commit log (`coord.rs`).
    pub(crate) fn encode(&self) -> Vec<u8> {
        let sets = [&self.writes, &self.shares, &self.touches];
        let mut out = Vec::with_capacity(12 + 8 * sets.iter().map(|s| s.len()).sum::<usize>());
        for set in sets {
            out.extend_from_slice(&(set.len() as u32).to_le_bytes());
            for k in set {
                out.extend_from_slice(&k.to_le_bytes());
            }
        }
        out
    }

    /// Reads [`Footprint::encode`]'s bytes; `None` when they are damaged.
    /// Sizes come from the bytes there are, never from a stored count.
    pub(crate) fn decode(mut bytes: &[u8]) -> Option<Footprint> {
        let mut set = || -> Option<FxHashSet<u64>> {
            let (n, rest) = bytes.split_first_chunk::<4>()?;
            let n = u32::from_le_bytes(*n) as usize;
            let len = n.checked_mul(8)?;
            if rest.len() < len {
                return None;
            }
            let (keys, rest) = rest.split_at(len);
            bytes = rest;
            Some(
                keys.chunks_exact(8)
                    .filter_map(|c| c.try_into().ok().map(u64::from_le_bytes))
                    .collect(),
            )
        };
        let fp = Footprint {
            writes: set()?,
            shares: set()?,
            touches: set()?,
            reads: FxHashSet::default(),
        };
        bytes.is_empty().then_some(fp)
    }

    /// Adds `other`'s writes, shares and touches to this one's.
    pub(crate) fn absorb(&mut self, other: &Footprint) {
        self.writes.extend(&other.writes);
        self.shares.extend(&other.shares);
        self.touches.extend(&other.touches);
    }

    /// The reason `self` (committing) cannot follow `other` (committed
    /// after `self` started), if any.
    pub(crate) fn conflict_with(
        &self,
        other: &Footprint,
        serializable: bool,
    ) -> Option<&'static str> {
        if !self.writes.is_disjoint(&other.writes) {
            return Some("a concurrent transaction changed the same node, edge or id");
        }
        if !self.writes.is_disjoint(&other.shares) || !self.shares.is_disjoint(&other.writes) {
            return Some("a concurrent transaction changed a node that an edge here depends on");
        }
        if serializable
            && (!self.reads.is_disjoint(&other.writes) || !self.reads.is_disjoint(&other.touches))
        {
            return Some(
                "a concurrent transaction changed data this serializable transaction read",
            );
        }
        None
    }
}

#[derive(Default)]
struct Inner {
    /// The sequence number of the latest published commit.
    seq: u64,
    /// Start sequence numbers of open write transactions, with counts.
    active: BTreeMap<u64, usize>,
    /// Open write transactions (the sum of `active`'s counts).
    open: usize,
    /// Footprints of commits that an open transaction may still conflict with.
    log: VecDeque<(u64, Arc<Footprint>)>,
}

#[derive(Default)]
pub(crate) struct Occ {
    inner: Mutex<Inner>,
    /// `Inner::seq`, stored after it moves: every read transaction asks
    /// for it, and taking the lock writers take for it was a tenth of
    /// opening one.
    published: AtomicU64,
}

impl Occ {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a new write transaction and returns its start sequence.
    /// Take the snapshot *after* this call: a snapshot newer than its
    /// sequence can only cause spurious conflicts, an older one lost writes.
    pub fn begin(&self) -> u64 {
        let mut i = self.lock();
        let s = i.seq;
        *i.active.entry(s).or_default() += 1;
        i.open += 1;
        s
    }

    /// How many write transactions are open now.
    pub fn open_writers(&self) -> usize {
        self.lock().open
    }

    /// The sequence number of the latest published commit.
    pub fn current(&self) -> u64 {
        self.published.load(Ordering::Acquire)
    }

    /// Forgets a transaction that ends (committed or not).
    pub fn end(&self, start: u64) {
        let mut i = self.lock();
        let inner = &mut *i;
        if let Some(c) = inner.active.get_mut(&start) {
            *c -= 1;
            inner.open -= 1;
            if *c == 0 {
                inner.active.remove(&start);
            }
        }
        Self::trim(inner);
    }

    fn trim(i: &mut Inner) {
        let oldest = i.active.keys().next().copied().unwrap_or(u64::MAX);
        while i.log.front().is_some_and(|(s, _)| *s <= oldest) {
            i.log.pop_front();
        }
    }

    /// Fails when a commit published after `start` conflicts with `fp`.
    /// Call with the storage's commit lock held.
    pub fn validate(&self, start: u64, fp: &Footprint, serializable: bool) -> Result<()> {
        let i = self.lock();
        for (s, other) in i.log.iter().rev() {
            if *s <= start {
                break;
            }
            if let Some(why) = fp.conflict_with(other, serializable) {
                return Err(StorageError::Conflict(why.into()));
            }
        }
        Ok(())
    }

    /// Publishes a commit written to the store. Call with the commit lock held.
    pub fn publish(&self, fp: Footprint) {
        let mut i = self.lock();
        i.seq += 1;
        let s = i.seq;
        self.published.store(s, Ordering::Release);
        if !i.active.is_empty() {
            i.log.push_back((s, Arc::new(fp)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(writes: &[u64], shares: &[u64]) -> Footprint {
        Footprint {
            writes: writes.iter().copied().collect(),
            shares: shares.iter().copied().collect(),
            ..Default::default()
        }
    }

    #[test]
    fn footprints_round_trip_and_damage_is_refused() {
        let mut f = fp(&[1, 2], &[3]);
        f.touches.insert(u64::MAX);
        f.reads.insert(9);
        let bytes = f.encode();
        let back = Footprint::decode(&bytes).unwrap_or_default();
        assert_eq!(back.writes, f.writes);
        assert_eq!(back.shares, f.shares);
        assert_eq!(back.touches, f.touches);
        assert!(back.reads.is_empty(), "reads are the committer's own");
        for cut in 0..bytes.len() {
            assert!(Footprint::decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        assert!(
            Footprint::decode(&[0xff; 4]).is_none(),
            "a count past the bytes"
        );
    }

    #[test]
    fn first_committer_wins() {
        let occ = Occ::default();
        let a = occ.begin();
        let b = occ.begin();
        occ.validate(a, &fp(&[1], &[]), false).unwrap();
        occ.publish(fp(&[1], &[]));
        occ.end(a);
        assert!(occ.validate(b, &fp(&[1], &[]), false).is_err());
        assert!(occ.validate(b, &fp(&[2], &[]), false).is_ok());
        // Shares conflict with writes but not with shares.
        assert!(occ.validate(b, &fp(&[], &[1]), false).is_err());
        occ.end(b);
        let c = occ.begin();
        occ.publish(fp(&[], &[5]));
        assert!(occ.validate(c, &fp(&[], &[5]), false).is_ok());
        assert!(occ.validate(c, &fp(&[5], &[]), false).is_err());
        occ.end(c);
        assert!(
            occ.lock().log.is_empty(),
            "log trimmed when nobody is active"
        );
    }
}
