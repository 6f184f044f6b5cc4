//! Adjacency: the edges at each node, packed into one block per node and
//! direction, with small per-edge deltas on top that commits fold back in.
//!
//! Keyspace `adjacency` holds two kinds of keys:
//!
//! * a **block**, `g|node|dir` (13 bytes): every edge at the node in that
//!   direction, packed (format below). Bulk loads write only blocks.
//! * a **delta**, `g|node|dir|type|neighbour|edge` (33 bytes): an edge added
//!   since the block was written (value [`ADDED`], never in the block), or
//!   an edge of the block removed since (value [`REMOVED`], always in it).
//!
//! A block key is a prefix of its deltas' keys, so one seek reads a node's
//! block and then its deltas. Transactions write only deltas: two writers
//! adding edges at one hub write distinct keys and commute, as before. The
//! commit leader, which writes every commit in order under the commit lock,
//! then settles each touched (node, direction) against the latest committed
//! state ([`settle`]): a small block, or one whose deltas grew past a share
//! of its size, is rewritten with its deltas folded in; otherwise the
//! deltas are normalised so that the two invariants above hold. Degrees
//! are the block's header counts plus the deltas: no counters are kept.
//!
//! Block format: `varint sections`, then per section (one per relationship
//! type, ascending) `varint type, varint count, varint bytes`, then each
//! section's bytes: per edge, sorted by (neighbour, edge), `varint
//! (neighbour - previous neighbour)` and `zigzag varint (edge - previous
//! edge)`, both "previous" starting at 0 in each section. A typed read
//! jumps to its section; a degree reads only the header.

use crate::error::{Result, StorageError};
use crate::ids::{EdgeId, GraphId, NodeId, TypeId};
use crate::keys::{adj_prefix, record_key, ADJ, DIR_OUT, NODES};
use crate::read::Neighbor;
use plexus_common::{read_u32, read_u64};
use plexus_common::{write_varint, Reader};
use plexus_kv::{into_prefix_successor, prefix_successor, KeyRange, Op, Snapshot, WriteBatch};
use std::collections::BTreeMap;
use std::ops::Bound;

/// The length of a block key: graph (4), node (8), direction (1).
pub(crate) const BLOCK_KEY_LEN: usize = 13;
/// The length of a delta key: a block key, type (4), neighbour (8), edge (8).
pub(crate) const DELTA_KEY_LEN: usize = 33;
/// The value of a delta that adds an edge.
pub(crate) const ADDED: &[u8] = &[];
/// The value of a delta that removes an edge of the block.
pub(crate) const REMOVED: &[u8] = &[1];

/// Blocks this small are rewritten at every commit that touches them:
/// cheap, and most nodes then never hold a delta.
const SMALL_BLOCK: u64 = 64;

/// How many deltas a block of `size` edges may carry before a commit folds
/// them in: a share of its size, so that rewriting a hub's block is paid
/// for by many writes, capped so that a degree stays a short scan.
fn max_deltas(size: u64) -> usize {
    (size / 8).clamp(64, 1024) as usize
}

/// One edge at a node, as a block lists it. The order is the block's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Entry {
    pub rel_type: u32,
    pub node: u64,
    pub edge: u64,
}

impl Entry {
    pub fn neighbor(self, outgoing: bool) -> Neighbor {
        Neighbor {
            edge: EdgeId(self.edge),
            node: NodeId(self.node),
            rel_type: TypeId(self.rel_type),
            outgoing,
        }
    }
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt(format!("adjacency {what}"))
}

/// The key of the block of `node` in direction `dir`.
pub(crate) fn block_key(g: GraphId, node: NodeId, dir: u8) -> Vec<u8> {
    adj_prefix(g, node, Some(dir), None)
}

/// The key of the delta of `e` at `node` in direction `dir`.
pub(crate) fn delta_key(g: GraphId, node: NodeId, dir: u8, e: Entry) -> Vec<u8> {
    delta_key_under(&block_key(g, node, dir), e)
}

/// The key of the delta of `e` under the block key `block`.
pub(crate) fn delta_key_under(block: &[u8], e: Entry) -> Vec<u8> {
    let mut k = Vec::with_capacity(DELTA_KEY_LEN);
    k.extend_from_slice(block);
    k.extend_from_slice(&e.rel_type.to_be_bytes());
    k.extend_from_slice(&e.node.to_be_bytes());
    k.extend_from_slice(&e.edge.to_be_bytes());
    k
}

/// The entry a delta key names.
pub(crate) fn delta_entry(key: &[u8]) -> Result<Entry> {
    if key.len() != DELTA_KEY_LEN {
        return Err(corrupt("delta key"));
    }
    let bad = || corrupt("delta key");
    Ok(Entry {
        rel_type: read_u32(key, 13).ok_or_else(bad)?,
        node: read_u64(key, 17).ok_or_else(bad)?,
        edge: read_u64(key, 25).ok_or_else(bad)?,
    })
}

/// Whether a delta's value says the edge was added (else removed).
pub(crate) fn delta_added(value: &[u8]) -> Result<bool> {
    match value {
        ADDED => Ok(true),
        REMOVED => Ok(false),
        _ => Err(corrupt("delta value")),
    }
}

/// Packs `entries`, which must be sorted and distinct, into a block.
pub(crate) fn encode(entries: &[Entry], out: &mut Vec<u8>) {
    let sections: Vec<&[Entry]> = entries.chunk_by(|a, b| a.rel_type == b.rel_type).collect();
    let mut bodies = Vec::with_capacity(sections.len());
    let mut body = Vec::new();
    for s in &sections {
        let (mut node, mut edge) = (0u64, 0u64);
        let start = body.len();
        for e in *s {
            write_varint(&mut body, e.node.wrapping_sub(node));
            let d = e.edge.wrapping_sub(edge) as i64;
            write_varint(&mut body, ((d << 1) ^ (d >> 63)) as u64);
            (node, edge) = (e.node, e.edge);
        }
        bodies.push(body.len() - start);
    }
    write_varint(out, sections.len() as u64);
    for (s, len) in sections.iter().zip(&bodies) {
        write_varint(out, s[0].rel_type as u64);
        write_varint(out, s.len() as u64);
        write_varint(out, *len as u64);
    }
    out.extend_from_slice(&body);
}

/// One type's stretch of a block.
#[derive(Debug, Clone, Copy)]
struct Section {
    rel_type: u32,
    count: u64,
    start: usize,
    end: usize,
}

/// One section's header: its type, edge count and body length.
fn section_header(r: &mut Reader<'_>) -> Result<(u32, u64, u64)> {
    let bad = |_| corrupt("block header");
    let t = r.varint().map_err(bad)?;
    let count = r.varint().map_err(bad)?;
    let len = r.varint().map_err(bad)?;
    let rel_type = u32::try_from(t).map_err(|_| corrupt("block type"))?;
    Ok((rel_type, count, len))
}

/// Hands each section of a block to `f`, in order, once all of them are
/// checked to lie inside it. The header is read twice rather than kept:
/// a block is read at every expansion of a walk, and two vectors per read
/// were half the allocations of a breadth-first reach.
fn each_section(block: &[u8], mut f: impl FnMut(Section) -> Result<()>) -> Result<()> {
    let mut r = Reader::new(block);
    let n = r.varint().map_err(|_| corrupt("block header"))?;
    // Each section takes at least three header bytes and one edge two body
    // bytes: a damaged count cannot make the loops below run long.
    if n > block.len() as u64 / 3 {
        return Err(corrupt("block header"));
    }
    let mut bodies = 0u64;
    for _ in 0..n {
        let (_, count, len) = section_header(&mut r)?;
        // An edge takes at least two bytes.
        if count.saturating_mul(2) > len {
            return Err(corrupt("block section count"));
        }
        bodies = bodies.saturating_add(len);
    }
    let start = block.len() - r.remaining();
    match bodies.cmp(&(r.remaining() as u64)) {
        std::cmp::Ordering::Greater => return Err(corrupt("block section")),
        std::cmp::Ordering::Less => return Err(corrupt("block length")),
        std::cmp::Ordering::Equal => {}
    }
    let mut r = Reader::new(block);
    r.varint().map_err(|_| corrupt("block header"))?;
    let mut at = start;
    for _ in 0..n {
        let (rel_type, count, len) = section_header(&mut r)?;
        // Inside the block: the lengths sum to what follows the header.
        let end = at + len as usize;
        f(Section {
            rel_type,
            count,
            start: at,
            end,
        })?;
        at = end;
    }
    Ok(())
}

/// Appends the entries of one section to `out`.
fn decode_section(block: &[u8], s: &Section, out: &mut Vec<Entry>) -> Result<()> {
    let bad = |_| corrupt("block entry");
    let mut r = Reader::new(&block[s.start..s.end]);
    // Room made once (a walk decodes a section at every expansion, and
    // growing from nothing was a tenth of its allocations), for at most
    // as many entries as the section's bytes can hold (two bytes each at
    // least): the count is read from the store.
    let fits = s.end.saturating_sub(s.start) / 2;
    out.reserve(usize::try_from(s.count).map_or(fits, |n| n.min(fits)));
    let (mut node, mut edge) = (0u64, 0u64);
    for _ in 0..s.count {
        node = node.wrapping_add(r.varint().map_err(bad)?);
        edge = edge.wrapping_add(r.zigzag().map_err(bad)? as u64);
        out.push(Entry {
            rel_type: s.rel_type,
            node,
            edge,
        });
    }
    if !r.is_empty() {
        return Err(corrupt("block section length"));
    }
    Ok(())
}

/// Appends the block's entries (of type `t` only, with one) to `out`, in
/// block order.
pub(crate) fn decode(block: &[u8], t: Option<u32>, out: &mut Vec<Entry>) -> Result<()> {
    each_section(block, |s| match t.is_none_or(|t| t == s.rel_type) {
        true => decode_section(block, &s, out),
        false => Ok(()),
    })
}

/// [`decode`] and [`count`] in one pass over the headers (a walk reads a
/// block at every expansion, and the headers were a tenth of LDBC IC5's
/// instructions when each was read four times).
fn decode_counted(block: &[u8], t: Option<u32>, out: &mut Vec<Entry>) -> Result<u64> {
    let mut n = 0u64;
    each_section(block, |s| {
        if t.is_none_or(|t| t == s.rel_type) {
            n = n.saturating_add(s.count);
            decode_section(block, &s, out)?;
        }
        Ok(())
    })?;
    Ok(n)
}

/// The number of entries in the block (of type `t` only, with one), from
/// its header.
pub(crate) fn count(block: &[u8], t: Option<u32>) -> Result<u64> {
    let mut n = 0u64;
    each_section(block, |s| {
        if t.is_none_or(|t| t == s.rel_type) {
            n = n.saturating_add(s.count);
        }
        Ok(())
    })?;
    Ok(n)
}

/// A block's entries with deltas applied: `removed` taken out, `added`
/// merged in, in block order. Both lists must be sorted.
pub(crate) fn apply(block: Vec<Entry>, added: &[Entry], removed: &[Entry]) -> Vec<Entry> {
    if added.is_empty() && removed.is_empty() {
        return block;
    }
    let mut out = Vec::with_capacity(block.len() + added.len());
    let mut rm = removed.iter().peekable();
    let mut add = added.iter().peekable();
    for e in block {
        while rm.next_if(|r| **r < e).is_some() {}
        if rm.next_if(|r| **r == e).is_some() {
            continue;
        }
        while let Some(a) = add.next_if(|a| **a < e) {
            out.push(*a);
        }
        out.push(e);
    }
    out.extend(add);
    out
}

/// What one group (a node and direction) holds in a scan: its block and
/// its deltas, sorted as the keys are.
#[derive(Default, Clone)]
pub(crate) struct Group {
    pub entries: Vec<Entry>,
    pub added: Vec<Entry>,
    pub removed: Vec<Entry>,
    /// Header counts of the block (of the type asked for), before deltas.
    pub block_count: u64,
}

impl Group {
    /// Takes one pair of the group's key range: its block or a delta. With
    /// `t`, deltas of other types are skipped and only that section of the
    /// block is decoded; `decode_block` false reads only the header.
    pub fn take(
        &mut self,
        key: &[u8],
        value: &[u8],
        t: Option<u32>,
        decode_block: bool,
    ) -> Result<()> {
        if key.len() == BLOCK_KEY_LEN {
            self.block_count = match decode_block {
                true => decode_counted(value, t, &mut self.entries)?,
                false => count(value, t)?,
            };
            return Ok(());
        }
        let e = delta_entry(key)?;
        if t.is_some_and(|t| t != e.rel_type) {
            return Ok(());
        }
        if delta_added(value)? {
            self.added.push(e);
        } else {
            self.removed.push(e);
        }
        Ok(())
    }

    /// The number of edges: the block's count with the deltas applied.
    pub fn degree(&self) -> u64 {
        (self.block_count + self.added.len() as u64).saturating_sub(self.removed.len() as u64)
    }

    /// The edges, in block order.
    pub fn into_entries(self) -> Vec<Entry> {
        apply(self.entries, &self.added, &self.removed)
    }
}

/// The key range holding a group's block and its deltas (of type `t`
/// only, besides the block, with one — deltas of lower types between them
/// are skipped by [`Group::take`]).
pub(crate) fn group_range(g: GraphId, node: NodeId, dir: u8, t: Option<u32>) -> KeyRange {
    // Each end built at its size, the successor in its buffer: a walk reads a
    // group at every expansion, and growing, copying and succeeding the
    // keys were five allocations a read.
    let mut block = Vec::with_capacity(BLOCK_KEY_LEN);
    block.extend_from_slice(&record_key(g, node.0));
    block.push(dir);
    let mut end = Vec::with_capacity(BLOCK_KEY_LEN + 4);
    end.extend_from_slice(&block);
    if let Some(t) = t {
        end.extend_from_slice(&t.to_be_bytes());
    }
    KeyRange {
        end: into_prefix_successor(end).map_or(Bound::Unbounded, Bound::Excluded),
        start: Bound::Included(block),
    }
}

/// Whether the direction byte of a block or delta key is outgoing.
pub(crate) fn outgoing(key: &[u8]) -> bool {
    key.get(12) == Some(&DIR_OUT)
}

/// The edges of every group in a scan of the adjacency keyspace, group by
/// group, in key order: node, direction, then block order. One group is
/// held at a time.
pub(crate) struct Groups<'a> {
    pairs: std::iter::Peekable<plexus_kv::KvIter<'a>>,
    ready: std::vec::IntoIter<Entry>,
    node: NodeId,
    outgoing: bool,
}

impl<'a> Groups<'a> {
    pub fn new(pairs: plexus_kv::KvIter<'a>) -> Self {
        Groups {
            pairs: pairs.peekable(),
            ready: Vec::new().into_iter(),
            node: NodeId(0),
            outgoing: true,
        }
    }

    /// Reads the next group whole; false at the end.
    fn fill(&mut self) -> Result<bool> {
        let Some(first) = self.pairs.next() else {
            return Ok(false);
        };
        let (k, v) = first?;
        let head: Vec<u8> = k
            .get(..BLOCK_KEY_LEN)
            .ok_or_else(|| corrupt("key"))?
            .to_vec();
        let mut group = Group::default();
        group.take(&k, &v, None, true)?;
        while let Some(next) = self
            .pairs
            .next_if(|p| p.as_ref().map_or(true, |(k, _)| k.starts_with(&head)))
        {
            let (k, v) = next?;
            group.take(&k, &v, None, true)?;
        }
        self.node = NodeId(read_u64(&head, 4).ok_or_else(|| corrupt("key"))?);
        self.outgoing = outgoing(&head);
        self.ready = group.into_entries().into_iter();
        Ok(true)
    }
}

impl<'a> Iterator for Groups<'a> {
    type Item = Result<(NodeId, Neighbor)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.ready.next() {
                return Some(Ok((self.node, e.neighbor(self.outgoing))));
            }
            match self.fill() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    // Stop after an error: the rest of the group is unknown.
                    self.pairs = (Box::new(std::iter::empty()) as plexus_kv::KvIter<'a>).peekable();
                    return Some(Err(e));
                }
            }
        }
    }
}

/// Every edge the adjacency of graph `g` lists, as the delta key that would
/// name it (for comparison with the records), checking on the way that
/// every block decodes, is sorted and non-empty, that no added delta is
/// in its block and that every removed one is. Problems go to `problems`.
pub(crate) fn listed(
    pairs: impl Iterator<Item = (Vec<u8>, Vec<u8>)>,
    problems: &mut Vec<String>,
) -> std::collections::BTreeSet<Vec<u8>> {
    let mut out = std::collections::BTreeSet::new();
    let mut block: Option<(Vec<u8>, Vec<Entry>)> = None;
    let flush = |b: Option<(Vec<u8>, Vec<Entry>)>,
                 out: &mut std::collections::BTreeSet<Vec<u8>>| {
        if let Some((head, entries)) = b {
            out.extend(entries.into_iter().map(|e| delta_key_under(&head, e)));
        }
    };
    for (k, v) in pairs {
        if k.len() == BLOCK_KEY_LEN {
            flush(block.take(), &mut out);
            let mut entries = Vec::new();
            match decode(&v, None, &mut entries) {
                Err(e) => problems.push(format!("adjacency block {k:?}: {e}")),
                Ok(()) if entries.is_empty() => {
                    problems.push(format!("adjacency block {k:?} is empty"))
                }
                Ok(()) if !entries.is_sorted_by(|a, b| a < b) => {
                    problems.push(format!("adjacency block {k:?} is not sorted"))
                }
                Ok(()) => {}
            }
            block = Some((k, entries));
            continue;
        }
        let (Ok(e), Ok(added)) = (delta_entry(&k), delta_added(&v)) else {
            problems.push(format!("adjacency: damaged delta {k:?} = {v:?}"));
            continue;
        };
        let head = &k[..BLOCK_KEY_LEN];
        if block.as_ref().is_some_and(|(h, _)| h.as_slice() != head) {
            flush(block.take(), &mut out);
        }
        let (_, entries) = block.get_or_insert_with(|| (head.to_vec(), Vec::new()));
        match (added, entries.binary_search(&e)) {
            (true, Err(i)) => entries.insert(i, e),
            (false, Ok(i)) => {
                entries.remove(i);
            }
            (true, Ok(_)) => problems.push(format!("adjacency: added delta {k:?} is in its block")),
            (false, Err(_)) => problems.push(format!(
                "adjacency: removed delta {k:?} is not in its block"
            )),
        }
    }
    flush(block, &mut out);
    out
}

/// A change a commit makes to one edge of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Add,
    Remove,
    /// Remove an edge the transaction saw as a delta: the delta if it is
    /// still there, else from the block it was folded into since.
    RemoveDelta,
}

/// Settles a commit's adjacency writes against the latest committed state
/// `snap`: called by the commit leader under the commit lock, right before
/// the batch is written, so nothing lands in between. Each group the batch
/// touches is either rewritten with every delta folded in, or keeps its
/// deltas, normalised: a removal of a committed added delta deletes that
/// delta, any other removal marks a block entry.
pub(crate) fn settle(snap: &dyn Snapshot, batch: &mut WriteBatch) -> Result<()> {
    let mut groups: BTreeMap<Vec<u8>, BTreeMap<Entry, Change>> = BTreeMap::new();
    let mut take = |key: &[u8], change: Change| -> Result<()> {
        let e = delta_entry(key)?;
        groups
            .entry(key[..BLOCK_KEY_LEN].to_vec())
            .or_default()
            .insert(e, change);
        Ok(())
    };
    let mut failed = None;
    let mut dropped = std::collections::BTreeSet::new();
    batch.ops.retain(|op| {
        let change = match op {
            Op::Delete { ks, key } if *ks == ADJ && key.len() == NODE_KEY_LEN => {
                dropped.extend(<[u8; NODE_KEY_LEN]>::try_from(key.as_slice()));
                return false;
            }
            Op::Put { ks, key, value } if *ks == ADJ && key.len() == DELTA_KEY_LEN => {
                match delta_added(value) {
                    Ok(true) => Change::Add,
                    Ok(false) => Change::Remove,
                    Err(e) => {
                        failed = Some(e);
                        return true;
                    }
                }
            }
            Op::Delete { ks, key } if *ks == ADJ && key.len() == DELTA_KEY_LEN => {
                Change::RemoveDelta
            }
            _ => return true,
        };
        let key = match op {
            Op::Put { key, .. } | Op::Delete { key, .. } => key,
            _ => return true,
        };
        if let Err(e) = take(key, change) {
            failed = Some(e);
            return true;
        }
        false
    });
    if let Some(e) = failed {
        return Err(e);
    }
    // A node the batch deletes keeps no edge: an edge added at it
    // meanwhile would have conflicted with the delete (`occ.rs`: the edge
    // shares the node, the delete writes it). So its blocks and deltas go
    // without being read, whatever the batch says of them: a document's
    // delete settles the adjacency of its 250 nodes this way. The
    // transaction marks a node it deleted with edges ([`drop_marker`]),
    // since it took those edges out only at their other ends.
    let gone = deleted_nodes(batch);
    for (block, changes) in groups {
        let node: Option<[u8; NODE_KEY_LEN]> =
            block.get(..NODE_KEY_LEN).and_then(|k| k.try_into().ok());
        match node {
            Some(n) if gone.contains(&n) => {
                dropped.insert(n);
            }
            _ => settle_group(snap, &block, changes, batch)?,
        }
    }
    for node in dropped.into_iter().filter(|n| gone.contains(n)) {
        let end = prefix_successor(&node).unwrap_or_default();
        batch.delete_range(ADJ, node.to_vec(), end);
    }
    Ok(())
}

/// The key a transaction deletes in the adjacency keyspace to say that it
/// deleted `node`, which had edges: no adjacency key is this short, and
/// [`settle`] turns it into the removal of all the node's adjacency.
pub(crate) fn drop_marker(g: GraphId, node: NodeId) -> Vec<u8> {
    crate::keys::node_key(g, node)
}

/// The length of a node's key (`keys::node_key`): a block key starts with it.
const NODE_KEY_LEN: usize = 12;

/// The keys of the nodes `batch` deletes.
fn deleted_nodes(batch: &WriteBatch) -> rustc_hash::FxHashSet<[u8; NODE_KEY_LEN]> {
    batch
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::Delete { ks, key } if *ks == NODES => key.as_slice().try_into().ok(),
            _ => None,
        })
        .collect()
}

fn settle_group(
    snap: &dyn Snapshot,
    block: &[u8],
    changes: BTreeMap<Entry, Change>,
    batch: &mut WriteBatch,
) -> Result<()> {
    let range = KeyRange {
        start: Bound::Included(block.to_vec()),
        end: prefix_successor(block).map_or(Bound::Unbounded, Bound::Excluded),
    };
    // The committed deltas, and the block's size from its header only.
    let mut committed = Group::default();
    let mut failed = None;
    snap.visit(ADJ, &range, &mut |k, v| {
        if let Err(e) = committed.take(k, v, None, false) {
            failed = Some(e);
            return Ok(false);
        }
        Ok(true)
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    let pending = committed.added.len() + committed.removed.len() + changes.len();
    let fold = committed.block_count <= SMALL_BLOCK || pending > max_deltas(committed.block_count);
    let key_of = |e: &Entry| delta_key_under(block, *e);
    if !fold {
        for (e, change) in changes {
            let was_delta = committed.added.binary_search(&e).is_ok();
            match (change, was_delta) {
                (Change::Add, _) => batch.put(ADJ, key_of(&e), ADDED.to_vec()),
                (Change::Remove | Change::RemoveDelta, true) => batch.delete(ADJ, key_of(&e)),
                (Change::Remove | Change::RemoveDelta, false) => {
                    batch.put(ADJ, key_of(&e), REMOVED.to_vec())
                }
            }
        }
        return Ok(());
    }
    let mut entries = Vec::new();
    if let Some(b) = snap.get(ADJ, block)? {
        decode(&b, None, &mut entries)?;
    }
    for e in committed.added.iter().chain(&committed.removed) {
        batch.delete(ADJ, key_of(e));
    }
    let mut added = committed.added;
    let mut removed = committed.removed;
    for (e, change) in changes {
        match change {
            Change::Add => added.push(e),
            Change::Remove | Change::RemoveDelta => match added.binary_search(&e) {
                Ok(i) => {
                    added.remove(i);
                }
                Err(_) => removed.push(e),
            },
        }
    }
    added.sort_unstable();
    removed.sort_unstable();
    let entries = apply(entries, &added, &removed);
    if entries.is_empty() {
        batch.delete(ADJ, block.to_vec());
    } else {
        let mut value = Vec::new();
        encode(&entries, &mut value);
        batch.put(ADJ, block.to_vec(), value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entries(raw: &[(u32, u64, u64)]) -> Vec<Entry> {
        let mut v: Vec<Entry> = raw
            .iter()
            .map(|&(rel_type, node, edge)| Entry {
                rel_type,
                node,
                edge,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    proptest! {
        #[test]
        fn blocks_decode_to_what_was_encoded(raw in proptest::collection::vec((0u32..5, any::<u64>(), any::<u64>()), 0..200), t in 0u32..6) {
            let es = entries(&raw);
            let mut b = Vec::new();
            encode(&es, &mut b);
            let mut back = Vec::new();
            decode(&b, None, &mut back).unwrap();
            prop_assert_eq!(&back, &es);
            let typed: Vec<Entry> = es.iter().copied().filter(|e| e.rel_type == t).collect();
            let mut back = Vec::new();
            decode(&b, Some(t), &mut back).unwrap();
            prop_assert_eq!(count(&b, Some(t)).unwrap(), typed.len() as u64);
            prop_assert_eq!(&back, &typed);
            prop_assert_eq!(count(&b, None).unwrap(), es.len() as u64);
            // In one pass, the same entries and count.
            let mut once = Vec::new();
            prop_assert_eq!(decode_counted(&b, Some(t), &mut once).unwrap(), typed.len() as u64);
            prop_assert_eq!(once, typed);
        }

        #[test]
        fn damaged_blocks_fail_without_panicking(raw in proptest::collection::vec((0u32..3, 0u64..1000, 0u64..1000), 0..50), cut in 0usize..400, flip in any::<u8>()) {
            let es = entries(&raw);
            let mut b = Vec::new();
            encode(&es, &mut b);
            let mut damaged = b.clone();
            if !damaged.is_empty() {
                let i = cut % damaged.len();
                damaged[i] ^= flip;
            }
            let _ = decode(&damaged, None, &mut Vec::new());
            let _ = decode(&b[..cut.min(b.len())], None, &mut Vec::new());
            let _ = count(&damaged, Some(1));
            let _ = count(&b[..cut.min(b.len())], None);
            let _ = decode_counted(&damaged, Some(1), &mut Vec::new());
        }

        #[test]
        fn applying_deltas_agrees_with_sets(raw in proptest::collection::vec((0u32..3, 0u64..30, 0u64..30), 0..60), add in proptest::collection::vec((0u32..3, 0u64..30, 0u64..30), 0..20), rm in proptest::collection::vec(any::<prop::sample::Index>(), 0..20)) {
            let block = entries(&raw);
            let removed = entries(&rm.iter().filter(|_| !block.is_empty()).map(|i| { let e = block[i.index(block.len())]; (e.rel_type, e.node, e.edge) }).collect::<Vec<_>>());
            let added: Vec<Entry> = entries(&add).into_iter().filter(|e| block.binary_search(e).is_err()).collect();
            let mut want: std::collections::BTreeSet<Entry> = block.iter().copied().collect();
            for e in &removed { want.remove(e); }
            want.extend(added.iter().copied());
            let got = apply(block, &added, &removed);
            prop_assert_eq!(got, want.into_iter().collect::<Vec<_>>());
        }
    }

    /// A group's range as the block key and the successor of its prefix
    /// give it, ids and types ending in 0xff included.
    #[test]
    fn a_group_range_is_its_block_key_up_to_the_successor_of_its_prefix() {
        for (node, t) in [
            (0, None),
            (7, Some(3)),
            (0xff, Some(u32::MAX)),
            (u64::MAX, None),
            (u64::MAX, Some(u32::MAX)),
            (0x1ff, Some(0xff)),
        ] {
            for dir in [DIR_OUT, DIR_OUT.wrapping_add(1), 0xff] {
                let g = GraphId(0xffff_ffff);
                let block = adj_prefix(g, NodeId(node), Some(dir), None);
                let prefix = adj_prefix(g, NodeId(node), Some(dir), t);
                let want = KeyRange {
                    end: prefix_successor(&prefix).map_or(Bound::Unbounded, Bound::Excluded),
                    start: Bound::Included(block),
                };
                assert_eq!(
                    group_range(g, NodeId(node), dir, t),
                    want,
                    "{node} {dir} {t:?}"
                );
            }
        }
    }

    #[test]
    fn a_block_header_claiming_more_than_it_holds_is_refused() {
        // 100 sections claimed in a 4-byte block.
        assert!(decode(&[100, 0, 0, 0], None, &mut Vec::new()).is_err());
        // One section of a billion edges in three bytes of body.
        let mut b = Vec::new();
        write_varint(&mut b, 1);
        write_varint(&mut b, 0);
        write_varint(&mut b, 1 << 30);
        write_varint(&mut b, 3);
        b.extend_from_slice(&[1, 2, 3]);
        assert!(count(&b, None).is_err());
        assert!(decode(&b, None, &mut Vec::new()).is_err());
    }
}
