//! Keyspaces of many small sorted entries, packed into blocks: the id maps
//! (user id → internal id), label members (g|label|node) and property
//! index entries (g|index|value key|node).
//!
//! One LMDB entry per key cost the key and about ten bytes of header for a
//! value of three bytes or none: 25 bytes an edge for an id map over ids
//! `e0`…`e4999999`, 26 a node for a label, 37 for an index entry. Sorted
//! neighbours share almost all of their key, so a block of up to 64 (16
//! where reads are point seeks) stores each in two to five bytes.
//!
//! A block's key is its first entry's key (the shape a single entry had;
//! a block never spans two graphs), its value [`MARK`], for an id map the
//! first entry's id as a varint, then per further entry its key (without
//! the graph) after the one before it (`prefix.rs`: a byte or two and the
//! differing suffix) and, for an id map, the id's difference from the
//! previous id as a zigzag varint. A point read is one cursor seek to the
//! last block key at most the key ([`lookup`]) and a walk of at most one
//! block; a scan starts at the block holding its start.
//!
//! Readers never see blocks: a transaction's snapshot is wrapped in
//! [`Unpacked`], which hands out one pair per entry (an id map's value is
//! the id as a varint, a set's is empty), so every reader, merging with its
//! overlay, works as with one key per entry. Transactions still write one
//! key per entry into their overlay; such keys never reach the store. The
//! commit leader folds them into the blocks they fall in against the
//! latest committed state ([`settle`], beside the adjacency's), splitting
//! a block that grows past twice its target size, so writers commute as
//! before (their conflicts are decided on user ids, labels and index
//! values, never on blocks).

use crate::error::{Result, StorageError};
use crate::keys::{id_value, read_id_value, EDGE_KEYS, LABELS, NODE_KEYS, PROP_INDEX};
use plexus_common::{write_varint, Reader};
use plexus_kv::{
    KeyRange, Ks, KvIter, KvPair, Op, PairVisitor, Run, ScanOptions, Snapshot, WriteBatch,
};
use std::collections::VecDeque;
use std::ops::Bound;

/// Every block value starts with these two bytes. Format 2's id map values
/// (one canonical varint: never 0xFF then 0x00), format 1's (eight bytes,
/// the first below 0x80) and single set entries (empty) never do, so a
/// half-done conversion is readable.
pub(crate) const MARK: [u8; 2] = [0xFF, 0x00];
/// Entries a packed block is cut at: a label's members are walked whole,
/// without decoding anything but their keys, so its blocks are long; an
/// id map's point reads also decode every id before the one wanted, and
/// most index reads are point seeks (an equality starts most queries)
/// that walk their block up to the entry, so theirs are shorter. A walk
/// of eight entries on average, for about 1.3 more bytes an entry: an
/// index equality seek at 64 took 0.46 µs against 0.38 µs at 16.
fn target(kind: Kind) -> usize {
    match kind {
        Kind::Ids | Kind::Index => 16,
        Kind::Set => 64,
    }
}
/// Encoded bytes a packed block is cut at: a block with its key (up to
/// 404 bytes) stays well inside an LMDB page, never on overflow pages.
const TARGET_BYTES: usize = 768;
/// The graph prefix of every key.
const G: usize = 4;

/// The packed keyspaces.
pub(crate) const PACKED: [Ks; 4] = [NODE_KEYS, EDGE_KEYS, LABELS, PROP_INDEX];

/// What a packed keyspace's entries carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An internal id (the id maps).
    Ids,
    /// Nothing: the key is the entry (label members).
    Set,
    /// Nothing, as [`Kind::Set`], in blocks cut shorter for point seeks
    /// (property index entries).
    Index,
}

/// How `ks` is packed, if it is.
pub(crate) fn kind(ks: Ks) -> Option<Kind> {
    match ks {
        NODE_KEYS | EDGE_KEYS => Some(Kind::Ids),
        LABELS => Some(Kind::Set),
        PROP_INDEX => Some(Kind::Index),
        _ => None,
    }
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt(format!("packed block {what}"))
}

/// Whether a value is a block (rather than a single entry of format 2 or
/// 1, which a conversion may still be packing).
pub(crate) fn is_block(v: &[u8]) -> bool {
    v.starts_with(&MARK)
}

/// The id a single entry's value holds (a set's entries hold none).
fn single(kind: Kind, v: &[u8]) -> Result<u64> {
    match kind {
        Kind::Ids => read_id_value(v).ok_or_else(|| corrupt("id value")),
        Kind::Set | Kind::Index if v.is_empty() => Ok(0),
        Kind::Set | Kind::Index => Err(corrupt("set value")),
    }
}

/// The value a reader sees for an entry.
fn value_of(kind: Kind, id: u64) -> Vec<u8> {
    match kind {
        Kind::Ids => id_value(id),
        Kind::Set | Kind::Index => Vec::new(),
    }
}

fn zigzag(d: u64) -> u64 {
    let d = d as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(z: u64) -> u64 {
    (z >> 1) ^ (z & 1).wrapping_neg()
}

/// Builds one block from entries given in ascending key order.
struct Encoder {
    kind: Kind,
    key: Vec<u8>,
    out: Vec<u8>,
    prev: Vec<u8>,
    id: u64,
    count: usize,
}

impl Encoder {
    /// A block starting with `key` (graph and the rest) for `id`.
    fn new(kind: Kind, key: &[u8], id: u64) -> Encoder {
        let mut out = MARK.to_vec();
        if kind == Kind::Ids {
            write_varint(&mut out, id);
        }
        Encoder {
            kind,
            key: key.to_vec(),
            out,
            prev: key[G.min(key.len())..].to_vec(),
            id,
            count: 1,
        }
    }

    /// Adds the next key (without its graph), larger than the last.
    fn push(&mut self, rest: &[u8], id: u64) {
        crate::prefix::push(&mut self.out, &mut self.prev, rest);
        if self.kind == Kind::Ids {
            write_varint(&mut self.out, zigzag(id.wrapping_sub(self.id)));
        }
        self.id = id;
        self.count += 1;
    }
}

/// Calls `f` with each (full key, id) of the block under `key`, in key
/// order, until `f` returns false. A set's ids are 0.
pub(crate) fn each(
    kind: Kind,
    key: &[u8],
    block: &[u8],
    f: &mut dyn FnMut(&[u8], u64) -> Result<bool>,
) -> Result<()> {
    walk(kind, key, block, None, &mut |e| f(e.key, e.id))
}

/// A reader past a block's mark and first id (a set's is 0).
fn open(kind: Kind, block: &[u8]) -> Result<(Reader<'_>, u64)> {
    let bad = |_| corrupt("entry");
    let mut r = Reader::new(block);
    if r.bytes(MARK.len()).map_err(bad)? != MARK {
        return Err(corrupt("mark"));
    }
    let id = match kind {
        Kind::Ids => r.varint().map_err(bad)?,
        Kind::Set | Kind::Index => 0,
    };
    Ok((r, id))
}

/// One entry of a block as [`walk`] hands it out.
struct Entry<'a> {
    /// The full key (graph and the rest).
    key: &'a [u8],
    id: u64,
    /// How many leading bytes of `key` are the entry before's (0 for a
    /// block's first).
    shared: usize,
    /// Bytes of the block after this entry.
    left: usize,
}

/// What [`walk`] calls per entry.
type EntryVisitor<'a> = dyn FnMut(Entry<'_>) -> Result<bool> + 'a;

/// [`each`], handing `f` each entry's [`Entry`]; with `from`, only the
/// entries from the first at or above it (the first handed out then has
/// `shared` 0).
fn walk(
    kind: Kind,
    key: &[u8],
    block: &[u8],
    from: Option<&[u8]>,
    f: &mut EntryVisitor<'_>,
) -> Result<()> {
    let bad = |_| corrupt("entry");
    if key.len() < G {
        return Err(corrupt("key"));
    }
    // The full key: the prefix code works on what follows the graph.
    let mut full = key.to_vec();
    let (mut r, mut id) = open(kind, block)?;
    if let Some(want) = from.filter(|s| s.get(..G) == key.get(..G)) {
        if !seek(kind, &mut full, &mut r, &mut id, &want[G..])? {
            return Ok(());
        }
    }
    let first = Entry {
        key: &full,
        id,
        shared: 0,
        left: r.remaining(),
    };
    if !f(first)? {
        return Ok(());
    }
    while !r.is_empty() {
        let shared = crate::prefix::next_after(&mut r, &mut full, G, true).map_err(bad)?;
        if kind == Kind::Ids {
            id = id.wrapping_add(unzigzag(r.varint().map_err(bad)?));
        }
        let e = Entry {
            key: &full,
            id,
            shared,
            left: r.remaining(),
        };
        if !f(e)? {
            return Ok(());
        }
    }
    Ok(())
}

/// Passes over the entries of a block below `want` (a key after its graph)
/// without rebuilding their keys ([`Toward`]): a seek's block is mostly
/// entries below it (half of 64 on average), and rebuilding and comparing
/// each was most of an index seek. `full` (the block's first key) becomes
/// the first entry at or above `want`, `id` its id, and `r` is left after
/// it. Returns false when every entry is below `want`.
fn seek(
    kind: Kind,
    full: &mut Vec<u8>,
    r: &mut Reader<'_>,
    id: &mut u64,
    want: &[u8],
) -> Result<bool> {
    let mut at = Toward::new(full.get(G..).unwrap_or_default(), want);
    let mut last = None;
    while at.below() {
        if r.is_empty() {
            return Ok(false);
        }
        let (shared, suffix) = next_entry(kind, r, id)?;
        at.step(shared, suffix)?;
        last = Some((shared, suffix));
    }
    // The entry that reached `want` shared no more than `same` with the
    // one before (else it would keep that one's lower byte): it is
    // `want[..shared]` and its suffix.
    if let Some((shared, suffix)) = last {
        full.truncate(G);
        full.extend_from_slice(&want[..shared]);
        full.extend_from_slice(suffix);
    }
    Ok(true)
}

/// The next entry of a block: the bytes it shares with the one before and
/// the rest of its key; an id map's id is added to `id`.
fn next_entry<'a>(kind: Kind, r: &mut Reader<'a>, id: &mut u64) -> Result<(usize, &'a [u8])> {
    let bad = |_| corrupt("entry");
    let (shared, suffix) = crate::prefix::read(r).map_err(bad)?;
    if kind == Kind::Ids {
        *id = id.wrapping_add(unzigzag(r.varint().map_err(bad)?));
    }
    Ok((shared, suffix))
}

/// Where the keys of a sorted, prefix-coded block, met in order, stand to
/// a wanted key, without rebuilding them: how many leading bytes the
/// current key shares with it (`same`), the current key's byte there and
/// its length tell below, equal or past.
struct Toward<'w> {
    want: &'w [u8],
    same: usize,
    at_same: Option<u8>,
    len: usize,
}

impl<'w> Toward<'w> {
    fn new(first: &[u8], want: &'w [u8]) -> Toward<'w> {
        let same = common(first, want);
        Toward {
            want,
            same,
            at_same: first.get(same).copied(),
            len: first.len(),
        }
    }

    /// Whether the current key is below `want`: a proper prefix of it, or
    /// lower at `same`.
    fn below(&self) -> bool {
        match (self.at_same, self.want.get(self.same)) {
            (None, Some(_)) => true,
            (Some(a), Some(w)) => a < *w,
            _ => false,
        }
    }

    fn equal(&self) -> bool {
        self.at_same.is_none() && self.same == self.want.len()
    }

    /// Moves to the next key: `shared` bytes of the current one, then
    /// `suffix`.
    fn step(&mut self, shared: usize, suffix: &[u8]) -> Result<()> {
        if shared > self.len {
            return Err(corrupt("entry"));
        }
        // Sharing more than `same`, the key keeps the current one's byte
        // at `same`; else it is `want[..shared]` and `suffix` (the current
        // key matched `want` that far).
        if shared <= self.same {
            let c = common(suffix, self.want.get(shared..).unwrap_or_default());
            self.same = shared + c;
            self.at_same = suffix.get(c).copied();
        }
        self.len = shared + suffix.len();
        Ok(())
    }
}

/// The committed entry under `key` in the packed keyspace `ks`: the last
/// block whose first key is at most `key`, then a walk of it.
pub(crate) fn lookup(snap: &dyn Snapshot, ks: Ks, kind: Kind, key: &[u8]) -> Result<Option<u64>> {
    let Some(g) = key.get(..G) else {
        return Ok(None);
    };
    let mut found = Ok(None);
    snap.floor(ks, g, key, &mut |k, v| {
        found = find(kind, k, v, &key[G..]);
        Ok(false)
    })?;
    found
}

/// The id of `want` (a key without its graph) in the block under `key`,
/// walked as [`Toward`] walks, never rebuilding the keys it passes.
fn find(kind: Kind, key: &[u8], block: &[u8], want: &[u8]) -> Result<Option<u64>> {
    let first = key.get(G..).ok_or_else(|| corrupt("key"))?;
    let (mut r, mut id) = open(kind, block)?;
    let mut at = Toward::new(first, want);
    while at.below() {
        if r.is_empty() {
            return Ok(None);
        }
        let (shared, suffix) = next_entry(kind, &mut r, &mut id)?;
        at.step(shared, suffix)?;
    }
    Ok(at.equal().then_some(id))
}

/// How many leading bytes `a` and `b` share.
fn common(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The key of the block holding `key`, if any: the last block key at most
/// it (for a scan starting there).
fn floor(snap: &dyn Snapshot, ks: Ks, key: &[u8]) -> Result<Option<Vec<u8>>> {
    let mut found = None;
    snap.floor(ks, &[], key, &mut |k, _| {
        found = Some(k.to_vec());
        Ok(false)
    })?;
    Ok(found)
}

/// The stored range holding every block with an entry in `range`: from the
/// block holding its start.
fn block_range(snap: &dyn Snapshot, ks: Ks, range: &KeyRange) -> Result<KeyRange> {
    let start = match &range.start {
        Bound::Included(s) | Bound::Excluded(s) => match floor(snap, ks, s)? {
            Some(b) => Bound::Included(b),
            None => range.start.clone(),
        },
        Bound::Unbounded => Bound::Unbounded,
    };
    Ok(KeyRange {
        start,
        end: range.end.clone(),
    })
}

/// What a walk in key order does with an entry of a block.
enum Step {
    /// Below the range's start.
    Skip,
    Take,
    /// Past its end: this and every later entry.
    Stop,
}

/// Where keys met in ascending order stand to one fixed key, followed
/// through the prefix code: how many leading bytes the current key shares
/// with the bound and its byte after them. A walk past many entries of a
/// block then compares the byte or two each entry changes, not two whole
/// keys per entry (an index seek's first block was most of its time).
struct Against<'a> {
    bound: &'a [u8],
    same: usize,
    /// The current key's byte at `same`, if it is that long.
    at_same: Option<u8>,
}

impl<'a> Against<'a> {
    fn new(bound: &'a [u8]) -> Against<'a> {
        Against {
            bound,
            same: 0,
            at_same: None,
        }
    }

    /// Moves to `key`, whose first `shared` bytes are the current key's
    /// (0 for a block's first entry).
    fn to(&mut self, key: &[u8], shared: usize) {
        // With more shared than `same`, the new key keeps the old one's
        // bytes up to and at `same`: nothing changes.
        if shared <= self.same {
            let suffix = key.get(shared..).unwrap_or_default();
            let rest = self.bound.get(shared..).unwrap_or_default();
            let c = common(suffix, rest);
            self.same = shared + c;
            self.at_same = suffix.get(c).copied();
        }
    }

    /// How the current key compares with the bound.
    fn cmp(&self) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        match (self.at_same, self.bound.get(self.same)) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) => a.cmp(b),
        }
    }
}

/// Where the entries of blocks, met in ascending order, stand to a range;
/// each bound is an [`Against`], and the start is dropped once passed.
struct Window<'a> {
    /// The start and whether it is included, until an entry reaches it.
    start: Option<(Against<'a>, bool)>,
    end: Option<(Against<'a>, bool)>,
}

impl<'a> Window<'a> {
    fn new(range: &'a KeyRange) -> Window<'a> {
        let bound = |b: &'a Bound<Vec<u8>>| match b {
            Bound::Included(k) => Some((Against::new(k), true)),
            Bound::Excluded(k) => Some((Against::new(k), false)),
            Bound::Unbounded => None,
        };
        Window {
            start: bound(&range.start),
            end: bound(&range.end),
        }
    }

    /// Where `e`, the entry after the last one stepped, stands. Below the
    /// start only the start is followed (entries below it are below the
    /// end too); the end is picked up, once, at the first entry taken.
    fn step(&mut self, e: &Entry<'_>) -> Step {
        use std::cmp::Ordering;
        let shared = match &mut self.start {
            Some((start, included)) => {
                start.to(e.key, e.shared);
                match start.cmp() {
                    Ordering::Less => return Step::Skip,
                    Ordering::Equal if !*included => return Step::Skip,
                    _ => self.start = None,
                }
                0
            }
            None => e.shared,
        };
        if let Some((end, included)) = &mut self.end {
            end.to(e.key, shared);
            match end.cmp() {
                Ordering::Greater => return Step::Stop,
                Ordering::Equal if !*included => return Step::Stop,
                _ => {}
            }
        }
        Step::Take
    }
}

/// A snapshot that shows the packed keyspaces one entry per key, as
/// transactions read them; other keyspaces pass through.
pub(crate) struct Unpacked(pub(crate) Box<dyn Snapshot>);

/// Visits the pairs of `range` of `ks` in the stored snapshot `snap` in key
/// order, a packed keyspace's one entry per key as [`Unpacked`] shows them:
/// for passes that run on a snapshot they are lent (inside a serialized
/// write), which cannot be wrapped.
pub(crate) fn visit_entries(
    snap: &dyn Snapshot,
    ks: Ks,
    range: &KeyRange,
    f: &mut PairVisitor<'_>,
) -> Result<()> {
    match kind(ks) {
        Some(kind) => visit_packed(snap, ks, kind, range, f),
        None => Ok(snap.visit(ks, range, f)?),
    }
}

/// Visits the entries of `range` of a packed keyspace of `snap` (stored
/// blocks) in key order. The block holding the start is found and walked
/// in one seek; the blocks after it cost a second only when the range goes
/// on past it (an equality seek's entries are mostly in one block).
fn visit_packed(
    snap: &dyn Snapshot,
    ks: Ks,
    kind: Kind,
    range: &KeyRange,
    f: &mut PairVisitor<'_>,
) -> Result<()> {
    if range.is_empty() {
        return Ok(());
    }
    let mut window = Window::new(range);
    let mut inner: Result<()> = Ok(());
    let mut more = true;
    let mut value = Vec::new();
    let from = match &range.start {
        Bound::Included(s) | Bound::Excluded(s) => Some(&s[..]),
        Bound::Unbounded => None,
    };
    let mut block = |k: &[u8], v: &[u8]| -> bool {
        inner = walk(kind, k, v, from, &mut |e| {
            match window.step(&e) {
                Step::Skip => {}
                Step::Stop => more = false,
                Step::Take => {
                    value.clear();
                    if kind == Kind::Ids {
                        write_varint(&mut value, e.id);
                    }
                    more = f(e.key, &value)?;
                }
            }
            Ok(more)
        });
        more && inner.is_ok()
    };
    // Copied only when the range goes on past the first block: an
    // equality seek mostly ends inside it.
    let mut rest = None;
    let mut on = true;
    if let Bound::Included(s) | Bound::Excluded(s) = &range.start {
        snap.floor(ks, &[], s, &mut |k, v| {
            on = block(k, v);
            if on {
                rest = Some(Bound::Excluded(k.to_vec()));
            }
            Ok(false)
        })?;
    }
    if on {
        let rest = KeyRange {
            start: rest.unwrap_or_else(|| range.start.clone()),
            end: range.end.clone(),
        };
        snap.visit(ks, &rest, &mut |k, v| Ok(block(k, v)))?;
    }
    inner
}

impl Snapshot for Unpacked {
    fn get(&self, ks: Ks, key: &[u8]) -> plexus_kv::Result<Option<Vec<u8>>> {
        match kind(ks) {
            Some(kind) => Ok(lookup(&*self.0, ks, kind, key)
                .map_err(kv_err)?
                .map(|id| value_of(kind, id))),
            None => self.0.get(ks, key),
        }
    }

    fn multi_get(&self, ks: Ks, keys: &[&[u8]]) -> plexus_kv::Result<Vec<Option<Vec<u8>>>> {
        match kind(ks) {
            Some(_) => keys.iter().map(|k| self.get(ks, k)).collect(),
            None => self.0.multi_get(ks, keys),
        }
    }

    fn get_with(
        &self,
        ks: Ks,
        key: &[u8],
        f: &mut dyn FnMut(&[u8]) -> plexus_kv::Result<()>,
    ) -> plexus_kv::Result<bool> {
        match kind(ks) {
            Some(_) => match self.get(ks, key)? {
                Some(v) => f(&v).map(|()| true),
                None => Ok(false),
            },
            None => self.0.get_with(ks, key, f),
        }
    }

    fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_> {
        let Some(kind) = kind(ks) else {
            return self.0.scan(ks, range, opts);
        };
        let limit = opts.limit.unwrap_or(usize::MAX);
        if opts.reverse {
            // Backwards scans of these keyspaces are rare: the entries in
            // range, gathered forwards.
            let mut all = Vec::new();
            let gathered = self.visit(ks, range, &mut |k, v| {
                all.push((k.to_vec(), v.to_vec()));
                Ok(true)
            });
            if let Err(e) = gathered {
                return Box::new(std::iter::once(Err(e)));
            }
            return Box::new(all.into_iter().rev().take(limit).map(Ok));
        }
        let blocks = match block_range(&*self.0, ks, range) {
            Ok(b) => b,
            Err(e) => return Box::new(std::iter::once(Err(kv_err(e)))),
        };
        let raw = self.0.scan(ks, &blocks, ScanOptions::default());
        Box::new(
            Expand {
                raw,
                kind,
                range: range.clone(),
                ready: VecDeque::new(),
                done: range.is_empty(),
                started: false,
            }
            .take(limit),
        )
    }

    fn visit(&self, ks: Ks, range: &KeyRange, f: &mut PairVisitor<'_>) -> plexus_kv::Result<()> {
        visit_entries(&*self.0, ks, range, f).map_err(kv_err)
    }

    fn visit_ranges(
        &self,
        ks: Ks,
        ranges: &[KeyRange],
        f: &mut plexus_kv::RangeVisitor<'_>,
    ) -> plexus_kv::Result<()> {
        match kind(ks) {
            Some(_) => plexus_kv::visit_ranges_one_by_one(self, ks, ranges, f),
            None => self.0.visit_ranges(ks, ranges, f),
        }
    }

    fn floor(
        &self,
        ks: Ks,
        min: &[u8],
        key: &[u8],
        f: &mut PairVisitor<'_>,
    ) -> plexus_kv::Result<()> {
        if kind(ks).is_none() {
            return self.0.floor(ks, min, key, f);
        }
        plexus_kv::floor_by_visit_rev(self, ks, min, key, f)
    }

    fn visit_rev(
        &self,
        ks: Ks,
        range: &KeyRange,
        f: &mut PairVisitor<'_>,
    ) -> plexus_kv::Result<()> {
        if kind(ks).is_none() {
            return self.0.visit_rev(ks, range, f);
        }
        for pair in self.scan(
            ks,
            range,
            ScanOptions {
                reverse: true,
                limit: None,
            },
        ) {
            let (k, v) = pair?;
            if !f(&k, &v)? {
                break;
            }
        }
        Ok(())
    }
}

/// A storage error as the key-value layer's (the snapshot trait's error).
/// A storage error as a snapshot reports it (for the wrappers that serve
/// a snapshot and decode what they read: this one, `history::AsOf`).
pub(crate) fn kv_err(e: StorageError) -> plexus_kv::KvError {
    match e {
        StorageError::Kv(e) => e,
        other => plexus_kv::KvError::Corrupt(other.to_string()),
    }
}

/// The entries of a forward scan, block by block.
struct Expand<'a> {
    raw: KvIter<'a>,
    kind: Kind,
    range: KeyRange,
    ready: VecDeque<KvPair>,
    done: bool,
    started: bool,
}

impl Iterator for Expand<'_> {
    type Item = plexus_kv::Result<KvPair>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(p) = self.ready.pop_front() {
                return Some(Ok(p));
            }
            if self.done {
                return None;
            }
            let (k, v) = match self.raw.next() {
                None => {
                    self.done = true;
                    continue;
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Some(Ok(pair)) => pair,
            };
            let Expand {
                kind,
                range,
                ready,
                done,
                started,
                ..
            } = self;
            let kind = *kind;
            // A window per block: its bounds' trackers start over at a
            // block's first entry anyway.
            let mut window = Window::new(range);
            if *started {
                window.start = None;
            }
            let walked = walk(kind, &k, &v, None, &mut |e| {
                match window.step(&e) {
                    Step::Skip => {}
                    Step::Stop => *done = true,
                    Step::Take => ready.push_back((e.key.to_vec(), value_of(kind, e.id))),
                }
                Ok(!*done)
            });
            *started |= window.start.is_none();
            if let Err(e) = walked {
                self.done = true;
                return Some(Err(kv_err(e)));
            }
        }
    }
}

/// Cuts entries given in ascending key order into blocks of at most
/// `max` entries and about `max_bytes` bytes each.
pub(crate) struct Packer {
    kind: Kind,
    block: Option<Encoder>,
    max: usize,
    max_bytes: usize,
}

impl Packer {
    pub fn new(kind: Kind) -> Packer {
        Packer::with_limits(kind, target(kind), TARGET_BYTES)
    }

    fn with_limits(kind: Kind, max: usize, max_bytes: usize) -> Packer {
        Packer {
            kind,
            block: None,
            max: max.max(1),
            max_bytes,
        }
    }

    /// Adds `key` (graph and the rest) for `id`; hands a block to `out`
    /// when one is full. Fails on a key not above the one before it.
    pub fn add(
        &mut self,
        key: &[u8],
        id: u64,
        out: &mut dyn FnMut(Vec<u8>, Vec<u8>),
    ) -> Result<()> {
        if key.len() < G {
            return Err(corrupt("key"));
        }
        if let Some(b) = &mut self.block {
            let same_graph = b.key[..G] == key[..G];
            if same_graph && b.prev.as_slice() >= &key[G..] {
                return Err(corrupt("order"));
            }
            if same_graph && b.count < self.max && b.out.len() < self.max_bytes {
                b.push(&key[G..], id);
                return Ok(());
            }
        }
        self.finish(out);
        self.block = Some(Encoder::new(self.kind, key, id));
        Ok(())
    }

    pub fn finish(&mut self, out: &mut dyn FnMut(Vec<u8>, Vec<u8>)) {
        if let Some(b) = self.block.take() {
            out(b.key, b.out);
        }
    }
}

/// Packs a sorted run of single entries of `ks` (as a bulk load collects
/// them) into a run of blocks.
pub(crate) fn pack_run(ks: Ks, run: &Run) -> Result<Run> {
    let kind = kind(ks).ok_or_else(|| corrupt("keyspace"))?;
    let mut packed = Run::new();
    let mut packer = Packer::new(kind);
    run.visit(&mut |k, v| -> Result<()> {
        packer.add(k, single(kind, v)?, &mut |k, v| packed.push(&k, &v))
    })?;
    packer.finish(&mut |k, v| packed.push(&k, &v));
    Ok(packed)
}

/// Turns a commit's single writes to the packed keyspaces into rewrites of
/// the blocks they fall in, read from `snap`, the latest committed state
/// (the commit leader calls it under the commit lock, right before the
/// batch is written).
pub(crate) fn settle(snap: &dyn Snapshot, batch: &mut WriteBatch) -> Result<()> {
    // One pass takes every packed keyspace's changes out of the batch.
    let mut changes: [Changes; PACKED.len()] = Default::default();
    let mut failed = None;
    batch.ops.retain_mut(|op| {
        let (ks, key, value) = match op {
            Op::Put { ks, key, value } => (*ks, key, Some(&*value)),
            Op::Delete { ks, key } => (*ks, key, None),
            _ => return true,
        };
        let (Some(i), Some(kind)) = (PACKED.iter().position(|p| *p == ks), kind(ks)) else {
            return true;
        };
        match value.map(|v| single(kind, v)).transpose() {
            Ok(change) => changes[i].push((std::mem::take(key), change)),
            Err(e) => {
                failed = Some(e);
                return true;
            }
        }
        false
    });
    if let Some(e) = failed {
        return Err(e);
    }
    for (ks, mut c) in PACKED.into_iter().zip(changes) {
        let Some(kind) = kind(ks) else { continue };
        if c.is_empty() {
            continue;
        }
        sort_changes(&mut c);
        apply(snap, ks, kind, c, batch)?;
    }
    Ok(())
}

/// Changes to a packed keyspace: key → id, or `None` to remove.
type Changes = Vec<(Vec<u8>, Option<u64>)>;

/// Orders changes by key, the last change to a key winning. A transaction's
/// batch comes sorted (its overlay is); a group commit's joins several.
fn sort_changes(c: &mut Changes) {
    if c.windows(2).all(|w| w[0].0 < w[1].0) {
        return;
    }
    c.reverse();
    c.sort_by(|a, b| a.0.cmp(&b.0)); // stable: the last change first
    c.dedup_by(|later, first| later.0 == first.0);
}

/// Whether a batch writes to a packed keyspace (and so needs settling).
pub(crate) fn touches(ks: Ks) -> bool {
    kind(ks).is_some()
}

/// Applies single changes (key → id, or `None` to remove) to the blocks of
/// `ks` in `snap`, adding the block rewrites to `batch`.
fn apply(
    snap: &dyn Snapshot,
    ks: Ks,
    kind: Kind,
    changes: Changes,
    batch: &mut WriteBatch,
) -> Result<()> {
    let mut rest = changes.into_iter().peekable();
    while let Some((first, _)) = rest.peek() {
        let g = first.get(..G).ok_or_else(|| corrupt("key"))?.to_vec();
        let found = holder(snap, ks, first)?;
        let old = found.as_ref().map(|(k, _)| k.clone());
        let end = next_block(snap, ks, &g, old.as_deref().unwrap_or(first))?;
        let mut mine: Vec<(Vec<u8>, Option<u64>)> = Vec::new();
        while let Some(c) =
            rest.next_if(|(k, _)| k.starts_with(&g) && end.as_ref().is_none_or(|e| k < e))
        {
            mine.push(c);
        }
        if let (Some((bk, block)), [(add, Some(id))]) = (&found, mine.as_slice()) {
            if let Some(grown) = appended(kind, bk, block, add, *id)? {
                batch.put(ks, bk.clone(), grown);
                continue;
            }
        }
        let entries = match &found {
            Some((k, v)) => entries(kind, k, v)?,
            None => Vec::new(),
        };
        // Both sorted: one merge pass, a change replacing an equal entry.
        let mut merged = Vec::with_capacity(entries.len() + 1);
        let mut entries = entries.into_iter().peekable();
        for (k, change) in mine {
            let k = k[G..].to_vec();
            while let Some(e) = entries.next_if(|(e, _)| *e < k) {
                merged.push(e);
            }
            entries.next_if(|(e, _)| *e == k);
            if let Some(id) = change {
                merged.push((k, id));
            }
        }
        merged.extend(entries);
        rewrite(batch, ks, kind, &g, old, &merged)?;
    }
    Ok(())
}

/// Entries (key without the graph, id) in ascending key order.
type Entries = Vec<(Vec<u8>, u64)>;

/// The block `key` falls in, key and value: the last at most it in its
/// graph, else the graph's first (`key` comes before every block).
fn holder(snap: &dyn Snapshot, ks: Ks, key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    let g = &key[..G];
    let mut found: Option<(Vec<u8>, Vec<u8>)> = None;
    snap.floor(ks, g, key, &mut |k, v| {
        found = Some((k.to_vec(), v.to_vec()));
        Ok(false)
    })?;
    if found.is_none() {
        let above = KeyRange {
            start: Bound::Excluded(key.to_vec()),
            end: KeyRange::prefix(g).end,
        };
        snap.visit(ks, &above, &mut |k, v| {
            found = Some((k.to_vec(), v.to_vec()));
            Ok(false)
        })?;
    }
    Ok(found)
}

/// A block's entries.
fn entries(kind: Kind, key: &[u8], block: &[u8]) -> Result<Entries> {
    let mut out = Vec::new();
    each(kind, key, block, &mut |full, id| {
        out.push((full[G..].to_vec(), id));
        Ok(true)
    })?;
    Ok(out)
}

/// `block` (under `key`) with `(add, id)` appended, when `add` sorts after
/// its last entry and the block has room; `None` otherwise. Most single
/// writes add the largest key of their block (ids in load order, a new
/// node's label and index entries), and skip decoding it into entries.
fn appended(kind: Kind, key: &[u8], block: &[u8], add: &[u8], id: u64) -> Result<Option<Vec<u8>>> {
    let mut last: Option<(Vec<u8>, u64)> = None;
    let mut count = 0;
    walk(kind, key, block, None, &mut |e| {
        count += 1;
        if e.left == 0 {
            last = Some((e.key[G..].to_vec(), e.id));
        }
        Ok(true)
    })?;
    let Some((mut prev, last_id)) = last else {
        return Ok(None);
    };
    if add.get(G..).is_none_or(|a| a <= prev.as_slice())
        || count >= 2 * target(kind)
        || block.len() + add.len() > 2 * TARGET_BYTES
    {
        return Ok(None);
    }
    let mut out = block.to_vec();
    crate::prefix::push(&mut out, &mut prev, &add[G..]);
    if kind == Kind::Ids {
        write_varint(&mut out, zigzag(id.wrapping_sub(last_id)));
    }
    Ok(Some(out))
}

/// The first block key after `key` in graph `g`, if any.
fn next_block(snap: &dyn Snapshot, ks: Ks, g: &[u8], key: &[u8]) -> Result<Option<Vec<u8>>> {
    let after = KeyRange {
        start: Bound::Excluded(key.to_vec()),
        end: KeyRange::prefix(g).end,
    };
    let mut next = None;
    snap.visit(ks, &after, &mut |k, _| {
        next = Some(k.to_vec());
        Ok(false)
    })?;
    Ok(next)
}

/// `entries` (key without graph → id) of graph `g` as blocks of at most
/// `max` entries and about `max_bytes` bytes.
fn pack(
    kind: Kind,
    g: &[u8],
    entries: &[(Vec<u8>, u64)],
    max: usize,
    max_bytes: usize,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut blocks = Vec::new();
    let mut packer = Packer::with_limits(kind, max, max_bytes);
    let mut key = Vec::new();
    for (rest, id) in entries {
        key.clear();
        key.extend_from_slice(g);
        key.extend_from_slice(rest);
        packer.add(&key, *id, &mut |k, v| blocks.push((k, v)))?;
    }
    packer.finish(&mut |k, v| blocks.push((k, v)));
    Ok(blocks)
}

/// Writes `entries` as the blocks that replace `old`: one block while it
/// stays under twice the target size, else even parts.
fn rewrite(
    batch: &mut WriteBatch,
    ks: Ks,
    kind: Kind,
    g: &[u8],
    old: Option<Vec<u8>>,
    entries: &[(Vec<u8>, u64)],
) -> Result<()> {
    let mut blocks = pack(kind, g, entries, usize::MAX, usize::MAX)?;
    let bytes = blocks.first().map_or(0, |(_, v)| v.len());
    if entries.len() > 2 * target(kind) || bytes > 2 * TARGET_BYTES {
        let parts = (entries.len().div_ceil(target(kind))).max(bytes.div_ceil(TARGET_BYTES));
        blocks = pack(
            kind,
            g,
            entries,
            entries.len().div_ceil(parts),
            bytes.div_ceil(parts),
        )?;
    }
    if let Some(old) = old {
        if blocks.first().is_none_or(|(k, _)| *k != old) {
            batch.delete(ks, old);
        }
    }
    for (k, v) in blocks {
        batch.put(ks, k, v);
    }
    Ok(())
}

/// Packs the single entries of a packed keyspace (format 1's 8-byte id
/// values, format 2's varints and empty set entries) into blocks, a step
/// of at most `step` entries at a time, each its own write. Blocks an
/// earlier, stopped run wrote stay; entries on either side of one go into
/// blocks of their own, so blocks never overlap. Returns the entries packed.
pub(crate) fn pack_singles(
    kv: &dyn plexus_kv::KvStore,
    ks: Ks,
    step: usize,
    progress: &mut dyn FnMut(u64),
) -> Result<u64> {
    let kind = kind(ks).ok_or_else(|| corrupt("keyspace"))?;
    let mut total = 0;
    crate::upgrade::in_steps(|range| {
        let snap = kv.snapshot()?;
        let mut packer = Packer::new(kind);
        let mut blocks = Vec::new();
        let mut singles = Vec::new();
        let mut last = None;
        for pair in snap.scan(ks, &range, ScanOptions::default()) {
            let (k, v) = pair?;
            if is_block(&v) {
                packer.finish(&mut |k, v| blocks.push((k, v)));
            } else {
                let id = if kind == Kind::Ids && crate::keys::is_v1_id_value(&v) {
                    plexus_common::read_u64(&v, 0).ok_or_else(|| corrupt("id value"))?
                } else {
                    single(kind, &v)?
                };
                packer.add(&k, id, &mut |k, v| blocks.push((k, v)))?;
                singles.push(k.clone());
            }
            last = Some(k);
            if singles.len() >= step {
                break;
            }
        }
        packer.finish(&mut |k, v| blocks.push((k, v)));
        drop(snap);
        let n = singles.len();
        if n > 0 {
            // A block's key is its first entry's: that entry is
            // overwritten, not deleted (a batch holds one op a key).
            let mut batch = WriteBatch::new();
            let firsts: std::collections::HashSet<&[u8]> =
                blocks.iter().map(|(k, _)| k.as_slice()).collect();
            for k in singles.iter().filter(|k| !firsts.contains(k.as_slice())) {
                batch.delete(ks, k.clone());
            }
            for (k, v) in blocks {
                batch.put(ks, k, v);
            }
            kv.write(batch)?;
            total += n as u64;
            progress(n as u64);
        }
        Ok(last.filter(|_| n >= step).map(Bound::Excluded))
    })?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_kv::{Backend, KvStore};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A group commit joins batches: their changes come unsorted, and the
    /// last change to a key is the one that counts.
    #[test]
    fn changes_sort_with_the_last_change_to_a_key_winning() {
        let k = |s: &str| s.as_bytes().to_vec();
        let mut c: Changes = vec![
            (k("b"), Some(1)),
            (k("a"), None),
            (k("b"), None),
            (k("c"), Some(3)),
            (k("a"), Some(2)),
        ];
        sort_changes(&mut c);
        assert_eq!(
            c,
            vec![(k("a"), Some(2)), (k("b"), None), (k("c"), Some(3))]
        );
        let sorted = c.clone();
        sort_changes(&mut c);
        assert_eq!(c, sorted);
    }

    fn store() -> std::sync::Arc<dyn KvStore> {
        plexus_kv::open(
            Backend::Memory,
            std::path::Path::new(""),
            crate::keys::KEYSPACES,
            &Default::default(),
        )
        .expect("open")
    }

    fn key(g: u32, rest: &[u8]) -> Vec<u8> {
        let mut k = g.to_be_bytes().to_vec();
        k.extend_from_slice(rest);
        k
    }

    fn unpacked(kv: &dyn KvStore) -> Unpacked {
        Unpacked(kv.snapshot().expect("snapshot"))
    }

    /// Every entry of `ks`, as readers see them.
    fn all(kv: &dyn KvStore, ks: Ks) -> BTreeMap<Vec<u8>, Vec<u8>> {
        let mut out = BTreeMap::new();
        for pair in unpacked(kv).scan(ks, &KeyRange::all(), ScanOptions::default()) {
            let (k, v) = pair.expect("scan");
            assert!(out.insert(k.clone(), v).is_none(), "{k:?} twice");
        }
        out
    }

    #[test]
    fn blocks_round_trip_long_and_shared_keys() {
        let mut keys: Vec<Vec<u8>> = vec![
            b"a".to_vec(),
            b"ab".to_vec(),
            vec![b'x'; 300],
            [vec![b'x'; 300], b"y".to_vec()].concat(),
            b"zz\xff".to_vec(),
        ];
        keys.sort();
        let ids = [5, 1 << 40, 0, 7, u64::MAX];
        let mut blocks = Vec::new();
        let mut p = Packer::new(Kind::Ids);
        for (k, id) in keys.iter().zip(ids) {
            p.add(&key(1, k), id, &mut |k, v| blocks.push((k, v)))
                .expect("add");
        }
        p.finish(&mut |k, v| blocks.push((k, v)));
        assert_eq!(blocks.len(), 1);
        let (k, v) = &blocks[0];
        let mut seen = Vec::new();
        each(Kind::Ids, k, v, &mut |full, id| {
            seen.push((full[G..].to_vec(), id));
            Ok(true)
        })
        .expect("each");
        let want: Vec<_> = keys.iter().cloned().zip(ids).collect();
        assert_eq!(seen, want);
        assert!(p.add(&key(1, b"b"), 1, &mut |_, _| {}).is_ok());
        assert!(
            p.add(&key(1, b"a"), 1, &mut |_, _| {}).is_err(),
            "keys go up"
        );
    }

    #[test]
    fn damaged_blocks_are_errors_not_panics() {
        for kind in [Kind::Ids, Kind::Set, Kind::Index] {
            let mut p = Packer::new(kind);
            let mut blocks = Vec::new();
            for i in 0..40u64 {
                p.add(&key(1, format!("k{i:03}").as_bytes()), i, &mut |k, v| {
                    blocks.push((k, v))
                })
                .expect("add");
            }
            p.finish(&mut |k, v| blocks.push((k, v)));
            let (k, v) = &blocks[0];
            for at in 0..v.len() {
                for b in [0u8, 0x0f, 0x7f, 0xff] {
                    let mut d = v.clone();
                    d[at] = b;
                    let _ = each(kind, k, &d, &mut |_, _| Ok(true));
                    let _ = each(kind, k, &d[..at], &mut |_, _| Ok(true));
                }
            }
            assert!(
                each(kind, &[1, 2], v, &mut |_, _| Ok(true)).is_err(),
                "short key"
            );
        }
    }

    /// A key of a small space with shared prefixes and several lengths.
    fn key_of(g: u32, n: u16) -> Vec<u8> {
        key(g, format!("n{}", n % 7 * 1000 + n / 7).as_bytes())
    }

    /// Bounds over the small key space, any kind.
    fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
        prop_oneof![
            Just(Bound::Unbounded),
            (0u32..2, 0u16..3000).prop_map(|(g, n)| Bound::Included(key_of(g, n))),
            (0u32..2, 0u16..3000).prop_map(|(g, n)| Bound::Excluded(key_of(g, n))),
            // Cut keys: bounds that are prefixes of entries (a prefix
            // scan's), down to part of the graph.
            (0u32..2, 0u16..3000, 0usize..8, any::<bool>()).prop_map(|(g, n, cut, inc)| {
                let mut k = key_of(g, n);
                k.truncate(k.len().saturating_sub(cut));
                if inc {
                    Bound::Included(k)
                } else {
                    Bound::Excluded(k)
                }
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Commits of single changes, settled into blocks, leave what a
        /// model holds; every key reads as the model says, and scans of
        /// any range, forwards, backwards and limited, list the model's.
        #[test]
        fn settled_blocks_read_as_a_model(
            which in 0usize..3,
            commits in proptest::collection::vec(
                proptest::collection::vec((0u32..2, 0u16..3000, proptest::option::of(0u64..100_000)), 1..120),
                1..8),
            ranges in proptest::collection::vec((bound(), bound(), any::<bool>(), 0usize..50), 6),
        ) {
            let kv = store();
            let (ks, kind) = [(LABELS, Kind::Set), (PROP_INDEX, Kind::Index), (NODE_KEYS, Kind::Ids)][which];
            let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
            for commit in commits {
                let mut batch = WriteBatch::default();
                for (g, n, id) in commit {
                    let k = key_of(g, n);
                    match id {
                        Some(id) => {
                            batch.put(ks, k.clone(), value_of(kind, id));
                            model.insert(k, value_of(kind, id));
                        }
                        None => {
                            batch.delete(ks, k.clone());
                            model.remove(&k);
                        }
                    }
                }
                let snap = kv.snapshot().expect("snapshot");
                settle(&*snap, &mut batch).expect("settle");
                drop(snap);
                kv.write(batch).expect("write");
                prop_assert_eq!(&all(&*kv, ks), &model);
            }
            let raw = kv.snapshot().expect("snapshot");
            let mut blocks = 0;
            raw.visit(ks, &KeyRange::all(), &mut |_, v| {
                blocks += 1;
                assert!(v.len() <= 2 * TARGET_BYTES + 64, "block of {} bytes", v.len());
                Ok(true)
            }).expect("visit");
            prop_assert!(blocks <= model.len().div_ceil(target(kind) / 4).max(1) + 2);
            let view = unpacked(&*kv);
            for g in 0..2u32 {
                for n in (0..3000u16).step_by(7) {
                    let k = key_of(g, n);
                    prop_assert_eq!(view.get(ks, &k).expect("get"), model.get(&k).cloned());
                }
            }
            for (start, end, reverse, limit) in ranges {
                let range = KeyRange { start, end };
                let mut want: Vec<_> = model
                    .iter()
                    .filter(|(k, _)| range.contains(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if reverse {
                    want.reverse();
                }
                want.truncate(limit);
                let opts = ScanOptions { reverse, limit: Some(limit) };
                let got: Vec<_> = view.scan(ks, &range, opts).map(|p| p.expect("scan")).collect();
                prop_assert_eq!(&got, &want, "{:?}", range);
                let mut visited = Vec::new();
                let visit = |k: &[u8], v: &[u8]| {
                    visited.push((k.to_vec(), v.to_vec()));
                    Ok(visited.len() < limit)
                };
                if reverse {
                    view.visit_rev(ks, &range, &mut { visit }).expect("visit_rev");
                } else {
                    view.visit(ks, &range, &mut { visit }).expect("visit");
                }
                if limit == 0 {
                    visited.clear();
                }
                prop_assert_eq!(&visited, &want);
            }
            prop_assert!(all(&*kv, EDGE_KEYS).is_empty());
        }
    }

    #[test]
    fn a_run_packs_into_blocks_of_the_target_size() {
        let mut run = Run::new();
        for i in 0..1000u64 {
            run.push(&key(2, format!("e{i}").as_bytes()), &id_value(i));
        }
        run.sort();
        let packed = pack_run(EDGE_KEYS, &run).expect("pack");
        assert_eq!(packed.len(), 1000usize.div_ceil(target(Kind::Ids)));
        let kv = store();
        let mut batch = WriteBatch::default();
        for (k, v) in packed.iter() {
            batch.put(EDGE_KEYS, k, v);
        }
        kv.write(batch).expect("write");
        let view = unpacked(&*kv);
        for i in [0u64, 1, 10, 63, 64, 500, 999] {
            let k = key(2, format!("e{i}").as_bytes());
            assert_eq!(view.get(EDGE_KEYS, &k).expect("get"), Some(id_value(i)));
        }
        assert_eq!(view.get(EDGE_KEYS, &key(2, b"e1000")).expect("get"), None);
        assert_eq!(view.get(EDGE_KEYS, &key(1, b"e1")).expect("get"), None);
        // About five bytes an entry, with the blocks' keys.
        let bytes: usize = packed.iter().map(|(k, v)| k.len() + v.len()).sum();
        assert!(bytes < 6 * 1000, "{bytes} bytes");
        // A set's entries (label members: g|label|node) take about two.
        let mut run = Run::new();
        for n in 0..1000u64 {
            let mut k = 7u32.to_be_bytes().to_vec();
            k.extend_from_slice(&(n * 3).to_be_bytes());
            run.push(&key(2, &k), &[]);
        }
        let packed = pack_run(LABELS, &run).expect("pack");
        let bytes: usize = packed.iter().map(|(k, v)| k.len() + v.len()).sum();
        assert!(bytes < 3 * 1000, "{bytes} bytes");
        let mut bad = Run::new();
        bad.push(&key(2, b"x"), &[1]);
        assert!(pack_run(LABELS, &bad).is_err(), "a set entry holds nothing");
    }
}
