//! What a transaction sees: its snapshot, plus (for a write transaction)
//! the writes it has buffered, merged so that it reads its own writes.
//!
//! The buffered writes (the overlay) are the whole write set: commit turns
//! them into one backend batch in key order. Each public write operation
//! runs with an undo log, so an operation that fails part-way leaves the
//! transaction exactly as it was before the operation.

use crate::error::Result;
use crate::ids::GraphId;
use crate::occ::Subject;
use crate::schema::Schema;
use crate::storage::Shared;
use plexus_kv::{decode_counter, KeyRange, Ks, KvIter, KvPair, ScanOptions, Snapshot, WriteBatch};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::iter::Peekable;
use std::sync::Arc;

type Entries = BTreeMap<Vec<u8>, Option<Vec<u8>>>;
/// A buffered write: a value, or `None` for a delete.
type Pending = (Vec<u8>, Option<Vec<u8>>);

enum Undo {
    Entry {
        ks: usize,
        key: Vec<u8>,
        prev: Option<Option<Vec<u8>>>,
    },
    Counter {
        ks: usize,
        key: Vec<u8>,
        delta: i64,
    },
}

/// [`Overlay::extend`] merges writes into the buffer's tree (rebuilding it)
/// when they are at least this fraction of it, and inserts each otherwise:
/// an insert costs a search of about log2(n) comparisons, a merge about
/// one comparison per key held and written.
const MERGE_AT: usize = 16;

/// Buffered writes of one transaction.
#[derive(Default)]
pub(crate) struct Overlay {
    maps: Vec<Entries>,
    counters: BTreeMap<(usize, Vec<u8>), i64>,
    undo: Vec<Undo>,
    recording: bool,
}

impl Overlay {
    pub fn new(keyspaces: usize) -> Self {
        Overlay {
            maps: (0..keyspaces).map(|_| Entries::new()).collect(),
            ..Default::default()
        }
    }

    fn set(&mut self, ks: Ks, key: Vec<u8>, v: Option<Vec<u8>>) {
        // The key is copied only for the undo record of an operation that
        // may still fail (`WriteTxn::op`).
        if !self.recording {
            self.maps[ks.0].insert(key, v);
            return;
        }
        let prev = self.maps[ks.0].insert(key.clone(), v);
        self.undo.push(Undo::Entry {
            ks: ks.0,
            key,
            prev,
        });
    }

    /// Many writes at once, a later one of a key winning. Many beside
    /// what the buffer holds are sorted together and merged into it in one
    /// pass, where an insert each would search the tree from its root,
    /// comparing long shared key prefixes at every level; a few are
    /// inserted, since a merge rebuilds the whole tree (a transaction
    /// writing one version at a time would pay for its buffer at each).
    pub fn extend(&mut self, ks: Ks, entries: Vec<Pending>) {
        let held = self.maps[ks.0].len();
        if self.recording || entries.len().saturating_mul(MERGE_AT) < held {
            for (k, v) in entries {
                self.set(ks, k, v);
            }
            return;
        }
        // Collecting sorts stably and keeps the last of equal keys.
        let mut more: Entries = entries.into_iter().collect();
        self.maps[ks.0].append(&mut more);
    }

    pub fn put(&mut self, ks: Ks, key: Vec<u8>, value: Vec<u8>) {
        self.set(ks, key, Some(value));
    }

    pub fn delete(&mut self, ks: Ks, key: Vec<u8>) {
        self.set(ks, key, None);
    }

    /// What the transaction wrote under `key`: a value, `Some(None)` for a
    /// delete, `None` when it did not write it.
    pub fn pending(&self, ks: Ks, key: &[u8]) -> Option<Option<&[u8]>> {
        self.maps[ks.0].get(key).map(Option::as_deref)
    }

    /// What the transaction wrote under keys starting with `prefix`, in key
    /// order: a value, or `None` for a delete.
    pub fn written_under<'a>(
        &'a self,
        ks: Ks,
        prefix: &[u8],
    ) -> impl Iterator<Item = (&'a [u8], Option<&'a [u8]>)> + 'a {
        let range = KeyRange::prefix(prefix);
        let (start, end) = (range.start.clone(), range.end.clone());
        self.maps[ks.0]
            .range::<Vec<u8>, _>((start, end))
            .map(|(k, v)| (k.as_slice(), v.as_deref()))
    }

    /// Drops what the transaction wrote under `key`, as if it never had.
    pub fn forget(&mut self, ks: Ks, key: Vec<u8>) {
        let prev = self.maps[ks.0].remove(&key);
        if self.recording && prev.is_some() {
            self.undo.push(Undo::Entry {
                ks: ks.0,
                key,
                prev,
            });
        }
    }

    pub fn add(&mut self, ks: Ks, key: Vec<u8>, delta: i64) {
        if delta == 0 {
            return;
        }
        // The key is cloned only for a counter the transaction has not
        // changed yet: every edge written adds to the same two.
        let k = (ks.0, key);
        match self.counters.get_mut(&k) {
            Some(d) => *d += delta,
            None => {
                self.counters.insert(k.clone(), delta);
            }
        }
        let (_, key) = k;
        if self.recording {
            self.undo.push(Undo::Counter {
                ks: ks.0,
                key,
                delta,
            });
        }
    }

    pub fn begin_op(&mut self) {
        self.undo.clear();
        self.recording = true;
    }

    pub fn end_op(&mut self) {
        self.undo.clear();
        self.recording = false;
    }

    pub fn rollback_op(&mut self) {
        while let Some(u) = self.undo.pop() {
            match u {
                Undo::Entry { ks, key, prev } => match prev {
                    Some(p) => {
                        self.maps[ks].insert(key, p);
                    }
                    None => {
                        self.maps[ks].remove(&key);
                    }
                },
                Undo::Counter { ks, key, delta } => {
                    let k = (ks, key);
                    let v = self.counters.get(&k).copied().unwrap_or(0) - delta;
                    if v == 0 {
                        self.counters.remove(&k);
                    } else {
                        self.counters.insert(k, v);
                    }
                }
            }
        }
        self.recording = false;
    }

    /// Whether the transaction changed anything in keyspace `ks`.
    pub fn has_writes(&self, ks: Ks) -> bool {
        !self.maps[ks.0].is_empty()
    }

    pub fn is_empty(&self) -> bool {
        self.maps.iter().all(BTreeMap::is_empty) && self.counters.values().all(|d| *d == 0)
    }

    /// The backend batch: keyspace by keyspace, keys ascending.
    pub fn into_batch(self) -> WriteBatch {
        // Sized once: a large transaction's ops would otherwise be copied
        // at each doubling, onto fresh pages the kernel must zero.
        let n = self.maps.iter().map(BTreeMap::len).sum::<usize>() + self.counters.len();
        let mut b = WriteBatch::with_capacity(n);
        for (i, m) in self.maps.into_iter().enumerate() {
            for (k, v) in m {
                match v {
                    Some(v) => b.put(Ks(i), k, v),
                    None => b.delete(Ks(i), k),
                }
            }
        }
        for ((ks, k), d) in self.counters {
            if d != 0 {
                b.add(Ks(ks), k, d);
            }
        }
        b
    }
}

/// Everything a transaction reads through. Shared by read and write
/// transactions so that every read method is written once.
#[doc(hidden)]
pub struct TxnCore {
    pub(crate) shared: Arc<Shared>,
    pub(crate) snap: Box<dyn Snapshot>,
    pub(crate) overlay: Option<Overlay>,
    pub(crate) g: GraphId,
    pub(crate) graph_name: String,
    pub(crate) schema: std::sync::Arc<Schema>,
    /// Conflict keys read, recorded only for serializable transactions.
    pub(crate) reads: Option<RefCell<rustc_hash::FxHashSet<u64>>>,
    /// The commit sequence number current when the snapshot was taken.
    pub(crate) version: u64,
    /// A writer in a store other processes write: the store's commit
    /// number its snapshot sees (`coord.rs`); 0 otherwise.
    pub(crate) remote_start: u64,
    /// What a write transaction did to maintained indexes (`maintain.rs`).
    pub(crate) effects: crate::maintain::Effects,
    /// Node records read ahead from a remote store
    /// (`GraphRead::prefetch_nodes`), by key; `None` for a node not there.
    pub(crate) fetched: RefCell<rustc_hash::FxHashMap<Vec<u8>, Option<Vec<u8>>>>,
    /// The committed edge block read last (`edge_blocks::BlockCache`).
    pub(crate) edge_block: RefCell<crate::edge_blocks::BlockCache>,
    /// The committed node records read last ([`NodeCache`]).
    pub(crate) node_cache: RefCell<NodeCache>,
    /// The adjacency groups read last ([`GroupCache`]).
    pub(crate) group_cache: RefCell<GroupCache>,
    /// The labels this transaction has checked and the properties it has
    /// read node by node, with the members and columns that serve them once
    /// held (`members.rs`).
    pub(crate) uses: RefCell<crate::members::Uses>,
    /// Names a read transaction on a store other processes write looked up
    /// and found missing (`TxnCore::lookup`).
    /// One set per kind of name (`Token as usize`). Fx sets: a std set
    /// seeds its hasher when made, and every transaction makes three.
    pub(crate) missing: RefCell<[rustc_hash::FxHashSet<String>; 3]>,
    /// Names this transaction looked up and found ([`KnownNames`]).
    pub(crate) known: RefCell<KnownNames>,
    /// The system time a read as of an earlier instant sees
    /// (`history.rs`); its snapshot is then a `history::AsOf`.
    pub(crate) as_of: Option<u64>,
}

/// Names a transaction looked up and found, with their ids (an id never
/// changes once given, so a hit is never stale): a query reads the same few
/// labels and property keys row after row, and a look through a handful of
/// names costs less than the catalog's lock and hash. Kept in place with
/// the catalog's copy of each name: a list of names of their own cost a
/// short query an allocation per name and one for the list.
#[derive(Default)]
pub(crate) struct KnownNames {
    names: [Option<(crate::catalog::Token, std::sync::Arc<str>, u32)>; KNOWN_NAMES],
    len: usize,
}

/// The most names [`KnownNames`] keeps (then it keeps what it has).
const KNOWN_NAMES: usize = 16;

impl KnownNames {
    fn get(&self, kind: crate::catalog::Token, name: &str) -> Option<u32> {
        self.names[..self.len]
            .iter()
            .flatten()
            .find(|(k, n, _)| *k == kind && **n == *name)
            .map(|(_, _, id)| *id)
    }

    fn put(&mut self, kind: crate::catalog::Token, name: std::sync::Arc<str>, id: u32) {
        if let Some(slot) = self.names.get_mut(self.len) {
            *slot = Some((kind, name, id));
            self.len += 1;
        }
    }
}

/// The most node records a transaction keeps read ahead (then it starts over).
pub(crate) const MAX_FETCHED: usize = 1 << 16;

impl TxnCore {
    /// The id of a name, or `None` when nothing has it. Where other
    /// processes write, a miss asks the store (`Catalog::lookup`); a read
    /// transaction then remembers it: a name missing now was missing at its
    /// snapshot, so nothing it can read carries it. (A writer may intern
    /// the name itself, so it asks each time.)
    pub(crate) fn lookup(&self, kind: crate::catalog::Token, name: &str) -> Option<u32> {
        if let Some(id) = self.known.borrow().get(kind, name) {
            return Some(id);
        }
        let remember = self.shared.multi && self.overlay.is_none();
        if remember && self.missing.borrow()[kind as usize].contains(name) {
            return None;
        }
        match self.shared.catalog.lookup_named(kind, name) {
            Some((id, interned)) => {
                self.known.borrow_mut().put(kind, interned, id);
                Some(id)
            }
            None => {
                if remember {
                    self.missing.borrow_mut()[kind as usize].insert(name.to_string());
                }
                None
            }
        }
    }

    pub(crate) fn get(&self, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.with_value(ks, key, |v| Ok(v.to_vec()))
    }

    /// `f` of the value under `key`, lent where the backend can (LMDB:
    /// straight from its pages): a read of one field of a record copies
    /// nothing else of it (a chunk's node carries its whole embedding).
    pub(crate) fn with_value<T>(
        &self,
        ks: Ks,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<Option<T>> {
        if let Some(v) = self.own_write(ks, key) {
            return v.map(f).transpose();
        }
        if ks == crate::keys::NODES {
            let fetched = self.fetched.borrow();
            // Empty but on a remote store: no key to hash.
            if !fetched.is_empty() {
                if let Some(v) = fetched.get(key) {
                    return v.as_deref().map(f).transpose();
                }
            }
        }
        if ks == crate::keys::NODES {
            return self.node_record(key, f);
        }
        let mut f = Some(f);
        let mut out = None;
        self.snap.get_with(ks, key, &mut |v| {
            if let Some(f) = f.take() {
                out = Some(f(v));
            }
            Ok(())
        })?;
        out.transpose()
    }

    /// A committed node record, through [`NodeCache`].
    fn node_record<T>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> Result<T>) -> Result<Option<T>> {
        if let Some(v) = self.node_cache.borrow().get(key) {
            return f(v).map(Some);
        }
        let mut found: Option<Vec<u8>> = None;
        self.snap.get_with(crate::keys::NODES, key, &mut |v| {
            found = Some(v.to_vec());
            Ok(())
        })?;
        let Some(v) = found else {
            return Ok(None);
        };
        let out = f(&v);
        self.node_cache.borrow_mut().put(key, v);
        out.map(Some)
    }

    /// This transaction's own write of `key`: `Some(None)` for a delete,
    /// `None` when it wrote nothing there.
    pub(crate) fn own_write(&self, ks: Ks, key: &[u8]) -> Option<Option<&[u8]>> {
        let o = self.overlay.as_ref()?;
        o.maps[ks.0].get(key).map(Option::as_deref)
    }

    pub(crate) fn counter(&self, ks: Ks, key: &[u8]) -> Result<i64> {
        let base = self
            .snap
            .get(ks, key)?
            .map(|v| decode_counter(&v))
            .unwrap_or(0);
        let delta = self
            .overlay
            .as_ref()
            .and_then(|o| o.counters.get(&(ks.0, key.to_vec())).copied())
            .unwrap_or(0);
        Ok(base + delta)
    }

    /// Counters under a prefix, merged with buffered deltas.
    pub(crate) fn counters(&self, ks: Ks, prefix: &[u8]) -> Result<Vec<(Vec<u8>, i64)>> {
        let mut out: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
        for pair in self
            .snap
            .scan(ks, &KeyRange::prefix(prefix), ScanOptions::default())
        {
            let (k, v) = pair?;
            out.insert(k, decode_counter(&v));
        }
        if let Some(o) = &self.overlay {
            let range = o.counters.range((ks.0, prefix.to_vec())..);
            for ((k_ks, k), d) in
                range.take_while(|((s, k), _)| *s == ks.0 && k.starts_with(prefix))
            {
                debug_assert_eq!(*k_ks, ks.0);
                *out.entry(k.clone()).or_default() += d;
            }
        }
        Ok(out.into_iter().filter(|(_, v)| *v != 0).collect())
    }

    /// [`plexus_kv::Snapshot::visit`] through the overlay: borrowed from
    /// the snapshot when this transaction wrote nothing in the range, else
    /// over the merged scan.
    pub(crate) fn visit(
        &self,
        ks: Ks,
        range: &KeyRange,
        f: &mut plexus_kv::PairVisitor<'_>,
    ) -> Result<(), plexus_kv::KvError> {
        if !self.pending(ks, range) {
            return self.snap.visit(ks, range, f);
        }
        for pair in self.scan(ks, range, ScanOptions::default()) {
            let (k, v) = pair?;
            if !f(&k, &v)? {
                break;
            }
        }
        Ok(())
    }

    /// Whether the transaction wrote anything in `range`.
    fn pending(&self, ks: Ks, range: &KeyRange) -> bool {
        self.overlay.as_ref().is_some_and(|o| {
            !range.is_empty()
                && o.maps[ks.0]
                    .range::<[u8], _>(range.as_slices())
                    .next()
                    .is_some()
        })
    }

    /// [`Snapshot::visit_ranges`] through the transaction's own writes: in
    /// one call to the snapshot when none lies in the ranges.
    pub(crate) fn visit_ranges(
        &self,
        ks: Ks,
        ranges: &[KeyRange],
        f: &mut plexus_kv::RangeVisitor<'_>,
    ) -> Result<(), plexus_kv::KvError> {
        if !ranges.iter().any(|r| self.pending(ks, r)) {
            return self.snap.visit_ranges(ks, ranges, f);
        }
        plexus_kv::each_range(ranges, f, &mut |r, g| self.visit(ks, r, g))
    }

    pub(crate) fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_> {
        let Some(o) = self.overlay.as_ref().filter(|_| self.pending(ks, range)) else {
            return self.snap.scan(ks, range, opts);
        };
        // The transaction's writes in the range, taken as the merge walks
        // (a seek back from a key reads one, not all before it).
        let writes = o.maps[ks.0].range::<[u8], _>(range.as_slices());
        let pending: PendingIter<'_> = if opts.reverse {
            Box::new(writes.rev().map(|(k, v)| (k.clone(), v.clone())))
        } else {
            Box::new(writes.map(|(k, v)| (k.clone(), v.clone())))
        };
        // Tombstones may hide snapshot pairs, so the limit applies after merging.
        let base = self.snap.scan(
            ks,
            range,
            ScanOptions {
                limit: None,
                ..opts
            },
        );
        let merged = Merge {
            base: base.peekable(),
            pending: pending.peekable(),
            reverse: opts.reverse,
        };
        Box::new(merged.take(opts.limit.unwrap_or(usize::MAX)))
    }

    /// Records a read for serializable validation.
    pub(crate) fn read(&self, s: Subject<'_>) {
        if let Some(r) = &self.reads {
            r.borrow_mut().insert(s.hash());
        }
    }
}

type PendingIter<'a> = Box<dyn Iterator<Item = Pending> + 'a>;

struct Merge<'a> {
    base: Peekable<KvIter<'a>>,
    pending: Peekable<PendingIter<'a>>,
    reverse: bool,
}

impl Iterator for Merge<'_> {
    type Item = Result<KvPair, plexus_kv::KvError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let order = match (self.base.peek(), self.pending.peek()) {
                (None, None) => return None,
                (Some(Err(_)), _) => return self.base.next(),
                (Some(Ok(_)), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(Ok((bk, _))), Some((pk, _))) => {
                    let o = bk.cmp(pk);
                    if self.reverse {
                        o.reverse()
                    } else {
                        o
                    }
                }
            };
            match order {
                Ordering::Less => return self.base.next(),
                Ordering::Equal => {
                    self.base.next();
                }
                Ordering::Greater => {}
            }
            let (k, v) = self.pending.next()?;
            if let Some(v) = v {
                return Some(Ok((k, v)));
            }
        }
    }
}

/// Stands in for a snapshot that a committing transaction has released.
pub(crate) struct Closed;

impl Snapshot for Closed {
    fn get(&self, _: Ks, _: &[u8]) -> Result<Option<Vec<u8>>, plexus_kv::KvError> {
        Err(plexus_kv::KvError::Unsupported(
            "the transaction has ended".into(),
        ))
    }

    fn scan(&self, _: Ks, _: &KeyRange, _: ScanOptions) -> KvIter<'_> {
        Box::new(std::iter::once(Err(plexus_kv::KvError::Unsupported(
            "the transaction has ended".into(),
        ))))
    }
}

/// The adjacency groups a transaction read last from its snapshot, by node,
/// stored direction, type and whether the block was decoded. A pattern
/// predicate per row (`NOT (friend)-[:KNOWS]-(person)` in LDBC IC10) walks
/// the same bound node's relationships for every row, and weighs both ends
/// by their degrees first; each was a range read and a decode. A group is
/// kept once it is read a second time while its key is among the last
/// ones read (a traversal reading each group once copies nothing), only a
/// small one (a hub's would be copied out whole on every hit), and only
/// while the transaction has written no adjacency.
#[derive(Default)]
pub(crate) struct GroupCache {
    kept: Ring<(GroupKey, crate::adjacency::Group)>,
    /// The keys of the groups read last, kept or not.
    read: Ring<GroupKey>,
}

/// A group's node, stored direction, type (`None`: all) and whether its
/// block was decoded (or only counted).
pub(crate) type GroupKey = (u64, u8, Option<u32>, bool);

/// The last few items, the oldest replaced first.
#[derive(Default)]
struct Ring<T> {
    items: Vec<T>,
    next: usize,
}

impl<T> Ring<T> {
    fn push(&mut self, cap: usize, item: T) {
        if self.items.len() < cap {
            self.items.push(item);
        } else {
            self.items[self.next] = item;
            self.next = (self.next + 1) % cap;
        }
    }
}

impl GroupCache {
    const SLOTS: usize = 8;
    /// Entries a kept group holds at most.
    pub(crate) const MAX_ENTRIES: usize = 1024;

    pub(crate) fn get(&self, key: GroupKey) -> Option<&crate::adjacency::Group> {
        self.kept
            .items
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, g)| g)
    }

    /// Notes a read of the group under `key`; true when it was read
    /// shortly before too (then it is worth keeping).
    pub(crate) fn read_again(&mut self, key: GroupKey) -> bool {
        if self.read.items.contains(&key) {
            return true;
        }
        self.read.push(Self::SLOTS * 2, key);
        false
    }

    /// Keeps a group, in place of the one kept longest.
    pub(crate) fn put(&mut self, key: GroupKey, group: crate::adjacency::Group) {
        self.kept.push(Self::SLOTS, (key, group));
    }
}

/// The node records a transaction read last from its snapshot, a few of
/// them. A row reads several properties of one node in a row (`friend.id,
/// friend.firstName, friend.lastName`), each a lookup of the same record:
/// kept, the second and third are a comparison of a short key. The snapshot
/// never changes, so what is kept stays right; the transaction's own writes
/// are read before it (`TxnCore::with_value`).
#[derive(Default)]
pub(crate) struct NodeCache {
    slots: [(Vec<u8>, Vec<u8>); NodeCache::SLOTS],
    next: usize,
}

impl NodeCache {
    const SLOTS: usize = 4;

    fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.slots
            .iter()
            .find(|(k, _)| !k.is_empty() && k == key)
            .map(|(_, v)| v.as_slice())
    }

    /// Keeps a record, in place of the one kept longest.
    fn put(&mut self, key: &[u8], value: Vec<u8>) {
        let slot = &mut self.slots[self.next];
        slot.0.clear();
        slot.0.extend_from_slice(key);
        slot.1 = value;
        self.next = (self.next + 1) % Self::SLOTS;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes given at once land as the same writes one by one would: the
    /// later of two to one key wins, a delete stays a delete, and what
    /// the buffer held before is kept unless written again; inside an
    /// operation they are undone with it.
    #[test]
    fn writes_given_at_once_land_as_one_by_one() {
        let ks = Ks(0);
        let b = |s: &str| s.as_bytes().to_vec();
        let mut o = Overlay::new(1);
        o.put(ks, b("a"), b("0"));
        o.put(ks, b("m"), b("0"));
        o.extend(
            ks,
            vec![
                (b("z"), Some(b("1"))),
                (b("m"), Some(b("1"))),
                (b("c"), None),
                (b("z"), Some(b("2"))),
            ],
        );
        let held: Vec<_> = o.written_under(ks, b"").collect();
        let want: Vec<(&[u8], Option<&[u8]>)> = vec![
            (b"a", Some(b"0")),
            (b"c", None),
            (b"m", Some(b"1")),
            (b"z", Some(b"2")),
        ];
        assert_eq!(held, want);
        o.begin_op();
        o.extend(ks, vec![(b("a"), None), (b("q"), Some(b("3")))]);
        o.rollback_op();
        assert_eq!(o.written_under(ks, b"").collect::<Vec<_>>(), want);
        // A few beside many are inserted one by one, to the same effect.
        let mut big = Overlay::new(1);
        for i in 0..100u8 {
            big.put(ks, vec![i], vec![i]);
        }
        big.extend(ks, vec![(vec![7], None), (vec![200], Some(vec![1]))]);
        assert_eq!(big.pending(ks, &[7]), Some(None));
        assert_eq!(big.pending(ks, &[200]), Some(Some(&[1][..])));
        assert_eq!(big.pending(ks, &[8]), Some(Some(&[8][..])));
        assert_eq!(big.written_under(ks, b"").count(), 101);
    }

    #[test]
    fn a_transaction_finds_names_created_after_it_looked_for_them() {
        use crate::catalog::Token;
        let db = crate::Storage::in_memory().unwrap();
        let core = db.core("default", false, false).unwrap();
        assert_eq!(core.lookup(Token::PropKey, "k"), None);
        let mut t = db.write("default").unwrap();
        let props = [("k".to_string(), plexus_common::Value::Int(1))].into();
        t.create_node(Some("a"), &["L"], &props).unwrap();
        t.commit().unwrap();
        let id = core.lookup(Token::PropKey, "k");
        assert!(id.is_some(), "a miss is not remembered");
        assert_eq!(core.lookup(Token::PropKey, "k"), id, "a hit is");
        // Past the names kept, lookups still answer from the catalog.
        let mut known = KnownNames::default();
        for n in 0..KNOWN_NAMES + 4 {
            known.put(Token::Label, format!("l{n}").into(), n as u32);
        }
        assert_eq!(known.get(Token::Label, "l3"), Some(3));
        assert_eq!(known.get(Token::PropKey, "l3"), None, "kinds apart");
        assert_eq!(
            known.get(Token::Label, &format!("l{}", KNOWN_NAMES + 1)),
            None
        );
    }

    #[test]
    fn a_group_is_kept_once_read_again_and_the_oldest_goes() {
        let mut c = GroupCache::default();
        let key = |n: u64| (n, 0, None, true);
        assert!(!c.read_again(key(1)), "a first read keeps nothing");
        assert!(c.read_again(key(1)));
        for n in 0..GroupCache::SLOTS as u64 {
            c.put(key(n), crate::adjacency::Group::default());
        }
        assert!(c.get(key(0)).is_some());
        c.put(key(99), crate::adjacency::Group::default());
        assert!(c.get(key(0)).is_none(), "the oldest went");
        assert!(c.get(key(1)).is_some() && c.get(key(99)).is_some());
        // Past twice the slots of other reads, a key is forgotten.
        for n in 100..100 + 2 * GroupCache::SLOTS as u64 {
            c.read_again(key(n));
        }
        assert!(!c.read_again(key(1)));
    }

    #[test]
    fn the_node_cache_keeps_the_last_records_and_forgets_the_oldest() {
        let mut c = NodeCache::default();
        assert_eq!(c.get(b""), None);
        for i in 0..NodeCache::SLOTS as u8 {
            c.put(&[i], vec![i, i]);
        }
        assert_eq!(c.get(&[0]), Some(&[0u8, 0][..]));
        c.put(&[9], vec![9]);
        assert_eq!(c.get(&[0]), None);
        assert_eq!(c.get(&[1]), Some(&[1u8, 1][..]));
        assert_eq!(c.get(&[9]), Some(&[9u8][..]));
    }
}
