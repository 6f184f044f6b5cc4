//! Property columns: one property of every node of a graph, held in memory
//! for the filters no index serves.
//!
//! A row store answers `MATCH (n) WHERE n.kind = 'delta'` by reading every
//! node record, as a column store reads one column. A [`Column`] is that
//! column, built by one pass over the records the first time a filter asks
//! for it: for each node that has the property, its id, its label set and
//! a code into the property's distinct values. A filter then evaluates its
//! predicate once per distinct value and walks an array of codes.
//!
//! **Never stale.** A column is built from one snapshot and tagged with the
//! graph's *node version*: a counter in `stats` that every commit changing
//! a node record of the graph increments (a bulk load too). A reader reads
//! the version its snapshot sees (one point read) and uses a column only
//! when the versions are equal. Committed states of a graph have distinct
//! versions, as the counter only grows, so an equal version means the same
//! node records. A write transaction that changed nodes of the graph sees
//! its own writes, which no column holds: it reads the records instead.
//!
//! **Bounded.** Columns share a memory budget ([`COLUMN_BUDGET`]); when a new
//! column does not fit, the least recently used ones are dropped, and a
//! column larger than the whole budget is answered from but not kept.

use crate::error::{Result, StorageError};
use crate::ids::NodeId;
use crate::keys::{graph_prefix, node_version_key, stat_key, NODES, STATS, STAT_NODES};
use crate::members::Members;
use crate::record::{label_section, node_labels_and_prop_raw};
use crate::view::TxnCore;
use plexus_common::{decode_value, read_u64, value_size, Reader, Value};
use plexus_kv::KeyRange;
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The memory all columns of a process may hold together.
pub const COLUMN_BUDGET: usize = 256 << 20;

/// One property over the nodes of a graph that have it, at one version.
pub(crate) struct Column {
    pub version: i64,
    /// Node ids, ascending.
    nodes: Vec<NodeId>,
    /// Per node: its label set, an index into `label_sets`.
    sets: Vec<u32>,
    label_sets: Vec<Vec<u32>>,
    /// Per node: its value, an index into `values`.
    codes: Vec<u32>,
    values: Vec<Value>,
    /// Codes by node id, for reads of one node's value.
    by_id: Option<ById>,
    bytes: usize,
}

/// A column's codes indexed by node id: a read of one node's value is one
/// array access, where a binary search of millions of ids misses the
/// processor's caches a dozen times (in memory that cost what reading the
/// record did). Kept when the ids are dense enough that it costs at most
/// twice the column's own per-node arrays.
struct ById {
    base: u64,
    /// Per id from `base`: its code, or [`ById::NONE`].
    codes: Vec<u32>,
}

impl ById {
    const NONE: u32 = u32::MAX;

    fn new(nodes: &[NodeId], codes: &[u32]) -> Option<ById> {
        let (first, last) = (nodes.first()?.0, nodes.last()?.0);
        let span = usize::try_from(last - first).ok()?.checked_add(1)?;
        if span > nodes.len().saturating_mul(8) {
            return None;
        }
        let mut by_id = vec![Self::NONE; span];
        for (n, c) in nodes.iter().zip(codes) {
            by_id[(n.0 - first) as usize] = *c;
        }
        Some(ById {
            base: first,
            codes: by_id,
        })
    }

    /// The code of node `n`; `None` when it has no value.
    fn code(&self, n: NodeId) -> Option<u32> {
        let i = usize::try_from(n.0.checked_sub(self.base)?).ok()?;
        self.codes.get(i).copied().filter(|c| *c != Self::NONE)
    }
}

impl Column {
    /// The nodes with `label` (with any labels for `None`) whose value
    /// satisfies `pred`, in id order. `pred` sees each distinct value once.
    pub fn select(&self, label: Option<u32>, mut pred: impl FnMut(&Value) -> bool) -> Vec<NodeId> {
        let hit: Vec<bool> = self.values.iter().map(&mut pred).collect();
        let in_set = self.in_label(label);
        let mut out = Vec::new();
        for ((n, c), s) in self.nodes.iter().zip(&self.codes).zip(&self.sets) {
            if hit[*c as usize] && in_set[*s as usize] {
                out.push(*n);
            }
        }
        out
    }

    /// Per distinct value held by nodes with `label` (any labels for
    /// `None`): the first such node and how many there are, in the order
    /// of those first nodes. A value not equal to itself (a NaN, or a list
    /// holding one) is a group of one node each: whether two are the same
    /// is the caller's to decide.
    pub fn groups(&self, label: Option<u32>) -> Vec<(NodeId, u64)> {
        let in_set = self.in_label(label);
        #[expect(clippy::eq_op, reason = "a NaN is not equal to itself")]
        let alone: Vec<bool> = self.values.iter().map(|v| v != v).collect();
        // Per code: its index in `out`, once a node holds it.
        let mut at: Vec<Option<usize>> = vec![None; self.values.len()];
        let mut out: Vec<(NodeId, u64)> = Vec::new();
        for ((n, c), s) in self.nodes.iter().zip(&self.codes).zip(&self.sets) {
            if !in_set[*s as usize] {
                continue;
            }
            if alone[*c as usize] {
                out.push((*n, 1));
                continue;
            }
            match &mut at[*c as usize] {
                Some(i) => out[*i].1 += 1,
                slot @ None => {
                    *slot = Some(out.len());
                    out.push((*n, 1));
                }
            }
        }
        out
    }

    /// Per label set: whether it holds `label` (every set does for `None`).
    fn in_label(&self, label: Option<u32>) -> Vec<bool> {
        self.label_sets
            .iter()
            .map(|s| label.is_none_or(|l| s.contains(&l)))
            .collect()
    }

    /// The value of node `n`, when it has the property.
    pub fn value_of(&self, n: NodeId) -> Option<&Value> {
        let code = match &self.by_id {
            Some(b) => b.code(n)?,
            None => *self.codes.get(self.nodes.binary_search(&n).ok()?)?,
        };
        self.values.get(code as usize)
    }

    /// The heap bytes the column holds (an estimate, as the budget counts).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Builds a column from records read in id order.
pub(crate) struct ColumnBuilder {
    version: i64,
    nodes: Vec<NodeId>,
    sets: Vec<u32>,
    codes: Vec<u32>,
    set_codes: FxHashMap<Box<[u8]>, u32>,
    label_sets: Vec<Box<[u8]>>,
    /// The last label section seen and its code: neighbours in id order
    /// mostly share their labels, so most records skip the hash.
    last_set: Option<u32>,
    /// The distinct values' encodings, end to end in one buffer (value
    /// `c` is `raw[ends[c - 1]..ends[c]]`), found by their hash: a column of
    /// a property every node holds a value of its own (a user id) has as
    /// many values as nodes, and a map of boxed encodings plus a list of
    /// them made two allocations a node and half the column's build.
    raw: Vec<u8>,
    ends: Vec<usize>,
    /// The first code of each hash; `same_hash[c]` the next code after `c`
    /// with `c`'s hash (`u32::MAX`: none).
    by_hash: FxHashMap<u64, u32>,
    same_hash: Vec<u32>,
}

impl ColumnBuilder {
    pub fn new(version: i64) -> Self {
        ColumnBuilder {
            version,
            nodes: Vec::new(),
            sets: Vec::new(),
            codes: Vec::new(),
            set_codes: FxHashMap::default(),
            label_sets: Vec::new(),
            last_set: None,
            raw: Vec::new(),
            ends: Vec::new(),
            by_hash: FxHashMap::default(),
            same_hash: Vec::new(),
        }
    }

    /// Room for `nodes` more nodes.
    pub fn reserve(&mut self, nodes: usize) {
        self.nodes.reserve(nodes);
        self.sets.reserve(nodes);
        self.codes.reserve(nodes);
    }

    /// Adds a node: its label section and its property's encoded value.
    pub fn push(&mut self, id: NodeId, labels: &[u8], raw: &[u8]) {
        let set = match self.last_set {
            Some(code) if *self.label_sets[code as usize] == *labels => code,
            _ => {
                // Graphs have few label sets: a short list beats hashing.
                let code = match self.label_sets.len() {
                    0..=16 => self.label_sets.iter().position(|s| **s == *labels),
                    _ => self.set_codes.get(labels).map(|c| *c as usize),
                };
                let code = match code {
                    Some(c) => c as u32,
                    None => {
                        let c = self.label_sets.len() as u32;
                        self.label_sets.push(labels.into());
                        self.set_codes.insert(labels.into(), c);
                        c
                    }
                };
                self.last_set = Some(code);
                code
            }
        };
        let code = self.value_code(raw);
        self.nodes.push(id);
        self.sets.push(set);
        self.codes.push(code);
    }

    /// The code of the value encoded as `raw`, new when no node had it.
    fn value_code(&mut self, raw: &[u8]) -> u32 {
        let hash = std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, raw);
        let mut at = self.by_hash.get(&hash).copied();
        while let Some(c) = at.filter(|c| *c != u32::MAX) {
            if self.value(c) == raw {
                return c;
            }
            at = self.same_hash.get(c as usize).copied();
        }
        let c = self.ends.len() as u32;
        self.raw.extend_from_slice(raw);
        self.ends.push(self.raw.len());
        let next = self.by_hash.insert(hash, c).unwrap_or(u32::MAX);
        self.same_hash.push(next);
        c
    }

    /// The encoding of value `c`.
    fn value(&self, c: u32) -> &[u8] {
        let c = c as usize;
        let start = c.checked_sub(1).map_or(0, |p| self.ends[p]);
        &self.raw[start..self.ends[c]]
    }

    /// The heap bytes the column will hold, before it is finished.
    pub fn bytes(&self) -> usize {
        self.nodes.len() * 16 + self.raw.len() * 2 + self.ends.len() * 48
    }

    pub fn finish(self) -> Result<Column> {
        // Sized once: collecting through `Result` grows by doubling, which
        // for a value per node (a user id) copied the list a dozen times
        // onto fresh pages the kernel zeroes.
        let mut values = Vec::with_capacity(self.ends.len());
        for c in 0..self.ends.len() as u32 {
            values.push(decode_value(&mut Reader::new(self.value(c))).map_err(StorageError::from)?);
        }
        let label_sets = self
            .label_sets
            .iter()
            .map(|s| label_section(s))
            .collect::<Result<Vec<_>>>()?;
        let by_id = ById::new(&self.nodes, &self.codes);
        let bytes = self.nodes.len() * 16
            + values.iter().map(value_size).sum::<usize>()
            + label_sets.iter().map(|s| 24 + s.len() * 4).sum::<usize>()
            + by_id.as_ref().map_or(0, |b| b.codes.len() * 4);
        Ok(Column {
            version: self.version,
            nodes: self.nodes,
            sets: self.sets,
            label_sets,
            codes: self.codes,
            values,
            by_id,
            bytes,
        })
    }
}

/// What the reads of an entry not held amount to ([`ColumnCache::demand`]).
pub(crate) enum Demand {
    Made(u64),
    Refused,
}

/// What a cache entry holds: a property's column or a label's members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Of {
    Property(u32),
    Label(u32),
}

enum Held {
    Column(Arc<Column>),
    Members(Arc<Members>),
}

impl Held {
    fn version(&self) -> i64 {
        match self {
            Held::Column(c) => c.version,
            Held::Members(m) => m.version,
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Held::Column(c) => c.bytes(),
            Held::Members(m) => m.bytes(),
        }
    }
}

/// The columns and label members of one process, keyed by graph and
/// property key or label, under one memory budget.
#[derive(Default)]
pub(crate) struct ColumnCache {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    held: HashMap<(u32, Of), (Held, u64)>,
    /// Label checks made without members, per graph and label, at the
    /// node version they were made at (`members.rs`).
    /// `None`: a build at that version was refused.
    demand: HashMap<(u32, Of), (i64, Option<u64>)>,
    bytes: usize,
    clock: u64,
}

impl ColumnCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get_held<T>(&self, key: (u32, Of), version: i64, f: impl FnOnce(&Held) -> T) -> Option<T> {
        let mut i = self.lock();
        i.clock += 1;
        let now = i.clock;
        match i.held.get_mut(&key) {
            Some((h, used)) if h.version() == version => {
                *used = now;
                Some(f(h))
            }
            _ => None,
        }
    }

    /// The column of property `key` in graph `g` at `version`, if held.
    pub fn get(&self, g: u32, key: u32, version: i64) -> Option<Arc<Column>> {
        self.get_held((g, Of::Property(key)), version, |h| match h {
            Held::Column(c) => Some(c.clone()),
            Held::Members(_) => None,
        })
        .flatten()
    }

    /// The members of label `l` in graph `g` at `version`, if held.
    pub fn members(&self, g: u32, l: u32, version: i64) -> Option<Arc<Members>> {
        self.get_held((g, Of::Label(l)), version, |h| match h {
            Held::Members(m) => Some(m.clone()),
            Held::Column(_) => None,
        })
        .flatten()
    }

    /// Counts `checks` more reads that `of` would have served at `version`
    /// (those at an earlier version no longer count): how many there were
    /// since the last build, or that a build at this version was refused
    /// (`members.rs`).
    pub fn demand(&self, g: u32, of: Of, version: i64, checks: u64) -> Demand {
        let mut i = self.lock();
        let d = i.demand.entry((g, of)).or_insert((version, Some(0)));
        if d.0 != version {
            *d = (version, Some(0));
        }
        match &mut d.1 {
            Some(made) => {
                *made = made.saturating_add(checks);
                Demand::Made(*made)
            }
            None => Demand::Refused,
        }
    }

    /// Notes a build for `of` at `version`: its reads are spent, or, when
    /// it was refused, no build is tried again at this version.
    pub fn built(&self, g: u32, of: Of, version: i64, kept: bool) {
        let mut i = self.lock();
        i.demand.insert((g, of), (version, kept.then_some(0)));
    }

    /// Keeps a column, replacing an older one of the same property and
    /// dropping the least recently used entries until it fits.
    pub fn insert(&self, g: u32, key: u32, column: Arc<Column>) {
        self.insert_held((g, Of::Property(key)), Held::Column(column));
    }

    /// Keeps the members of a label, as [`ColumnCache::insert`] a column.
    pub fn insert_members(&self, g: u32, l: u32, members: Arc<Members>) {
        self.insert_held((g, Of::Label(l)), Held::Members(members));
    }

    fn insert_held(&self, key: (u32, Of), held: Held) {
        if held.bytes() > COLUMN_BUDGET {
            return;
        }
        let mut i = self.lock();
        if let Some((old, _)) = i.held.remove(&key) {
            i.bytes -= old.bytes();
        }
        while i.bytes + held.bytes() > COLUMN_BUDGET {
            let Some(oldest) = i.held.iter().min_by_key(|(_, (_, u))| *u).map(|(k, _)| *k) else {
                break;
            };
            if let Some((old, _)) = i.held.remove(&oldest) {
                i.bytes -= old.bytes();
            }
        }
        i.clock += 1;
        let now = i.clock;
        i.bytes += held.bytes();
        i.held.insert(key, (held, now));
    }

    /// Drops the columns and members of a graph that no longer exists.
    pub fn forget_graph(&self, g: u32) {
        let mut i = self.lock();
        i.demand.retain(|k, _| k.0 != g);
        let gone: Vec<(u32, Of)> = i.held.keys().filter(|k| k.0 == g).copied().collect();
        for k in gone {
            if let Some((old, _)) = i.held.remove(&k) {
                i.bytes -= old.bytes();
            }
        }
    }

    /// The entries held and their bytes.
    #[cfg(test)]
    pub fn held(&self) -> (usize, usize) {
        let i = self.lock();
        (i.held.len(), i.bytes)
    }
}

/// The column of property `key` as the transaction sees its graph: held,
/// or built now by one pass over the node records and kept. `None` when the
/// transaction changed nodes itself (no column holds its own writes) or the
/// column would not fit the budget: the caller reads the records then.
/// Whether a column may serve `c`: columns hold the current records, so a
/// read as of an earlier instant reads the versions, and a transaction
/// that changed nodes reads its own.
pub(crate) fn may_serve(c: &TxnCore) -> bool {
    c.as_of.is_none() && !c.overlay.as_ref().is_some_and(|o| o.has_writes(NODES))
}

pub(crate) fn column(c: &TxnCore, key: u32) -> Result<Option<Arc<Column>>> {
    if !may_serve(c) {
        return Ok(None);
    }
    let version = c.counter(STATS, &node_version_key(c.g))?;
    if let Some(column) = c.shared.columns.get(c.g.0, key, version) {
        return Ok(Some(column));
    }
    let mut b = ColumnBuilder::new(version);
    // Sized once for every node the graph counts: grown by doubling, the
    // arrays were copied a dozen times and touched twice the fresh memory
    // they end with. The count is read from the store, so the reservation
    // is bounded by what a column may hold.
    let nodes = c.counter(STATS, &stat_key(c.g, STAT_NODES, &[]))?;
    b.reserve(usize::try_from(nodes).unwrap_or(0).min(COLUMN_BUDGET / 16));
    let mut bad: Option<StorageError> = None;
    let mut oversized = false;
    c.visit(
        NODES,
        &KeyRange::prefix(&graph_prefix(c.g)),
        &mut |k, record| {
            let (labels, raw) = match node_labels_and_prop_raw(record, key) {
                Ok(found) => found,
                Err(e) => {
                    bad = Some(e);
                    return Ok(false);
                }
            };
            if let Some(raw) = raw {
                match read_u64(k, k.len().saturating_sub(8)) {
                    Some(id) => b.push(NodeId(id), labels, raw),
                    None => {
                        bad = Some(StorageError::Corrupt(format!("short node key {k:?}")));
                        return Ok(false);
                    }
                }
                if b.bytes() > COLUMN_BUDGET {
                    oversized = true;
                    return Ok(false);
                }
            }
            Ok(true)
        },
    )?;
    if let Some(e) = bad {
        return Err(e);
    }
    if oversized {
        return Ok(None);
    }
    let column = Arc::new(b.finish()?);
    c.shared.columns.insert(c.g.0, key, column.clone());
    Ok(Some(column))
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_common::{encode_value, write_varint};

    fn labels(ids: &[u32]) -> Vec<u8> {
        let mut b = Vec::new();
        write_varint(&mut b, ids.len() as u64);
        ids.iter().for_each(|l| write_varint(&mut b, *l as u64));
        b
    }

    fn enc(v: &Value) -> Vec<u8> {
        let mut b = Vec::new();
        encode_value(v, &mut b);
        b
    }

    fn column(rows: &[(u64, &[u32], Value)]) -> Column {
        let mut b = ColumnBuilder::new(7);
        for (id, l, v) in rows {
            b.push(NodeId(*id), &labels(l), &enc(v));
        }
        b.finish().unwrap()
    }

    #[test]
    fn selects_by_value_and_label_with_one_call_per_distinct_value() {
        let c = column(&[
            (1, &[1], Value::from("a")),
            (2, &[1, 2], Value::from("b")),
            (3, &[2], Value::from("a")),
            (5, &[1], Value::from("a")),
            (8, &[], Value::Int(3)),
        ]);
        let mut calls = 0;
        let a = c.select(None, |v| {
            calls += 1;
            *v == Value::from("a")
        });
        assert_eq!(a, vec![NodeId(1), NodeId(3), NodeId(5)]);
        assert_eq!(calls, 3);
        assert_eq!(
            c.select(Some(2), |v| *v == Value::from("a")),
            vec![NodeId(3)]
        );
        assert_eq!(c.select(Some(9), |_| true), vec![]);
        assert_eq!(c.select(None, |v| *v == Value::Int(3)), vec![NodeId(8)]);
    }

    /// Many values, each held by several nodes: each distinct encoding gets
    /// one code (the select calls its predicate once per value) and every
    /// node reads back its own. `1` and `1.0` are two values.
    #[test]
    fn each_distinct_value_is_held_once() {
        let value = |i: u64| match i % 3 {
            0 => Value::from(format!("v{}", i % 3000)),
            1 => Value::Int((i % 3000) as i64),
            _ => Value::Float((i % 3000) as f64),
        };
        let rows: Vec<(u64, &[u32], Value)> = (0..30_000).map(|i| (i, &[][..], value(i))).collect();
        let c = column(&rows);
        for (id, _, v) in &rows {
            assert_eq!(c.value_of(NodeId(*id)), Some(v));
        }
        let mut calls = 0;
        let ones = c.select(None, |v| {
            calls += 1;
            *v == Value::Int(1)
        });
        assert_eq!(calls, 3000);
        assert_eq!(ones.len(), 10);
    }

    #[test]
    fn a_damaged_value_is_corruption_not_a_panic() {
        let mut b = ColumnBuilder::new(1);
        b.push(NodeId(1), &labels(&[]), &[0xff, 0xff]);
        assert!(matches!(b.finish(), Err(StorageError::Corrupt(_))));
    }

    #[test]
    fn groups_are_counted_per_distinct_value_in_the_order_first_held() {
        let c = column(&[
            (3, &[1], Value::Int(7)),
            (4, &[2], Value::from("a")),
            (5, &[1, 2], Value::from("a")),
            (9, &[1], Value::Int(7)),
            (12, &[1], Value::Float(7.0)),
        ]);
        assert_eq!(
            c.groups(None),
            [(NodeId(3), 2), (NodeId(4), 2), (NodeId(12), 1)]
        );
        assert_eq!(
            c.groups(Some(1)),
            [(NodeId(3), 2), (NodeId(5), 1), (NodeId(12), 1)]
        );
        assert_eq!(c.groups(Some(2)), [(NodeId(4), 2)]);
        assert!(c.groups(Some(3)).is_empty());
        let nan = column(&[
            (1, &[1], Value::Float(f64::NAN)),
            (2, &[1], Value::Float(f64::NAN)),
            (3, &[1], Value::Int(1)),
            (4, &[1], Value::Int(1)),
        ]);
        assert_eq!(
            nan.groups(None),
            [(NodeId(1), 1), (NodeId(2), 1), (NodeId(3), 2)]
        );
    }

    #[test]
    fn one_nodes_value_by_id_whether_ids_are_dense_or_not() {
        for ids in [[3u64, 4, 6, 9], [3, 4, 6, 1 << 40]] {
            let rows: Vec<(u64, &[u32], Value)> = ids
                .iter()
                .map(|n| (*n, &[1u32][..], Value::Int(*n as i64 % 5)))
                .collect();
            let c = column(&rows);
            assert_eq!(c.by_id.is_some(), ids[3] == 9, "dense only for the first");
            for n in [0, 3, 4, 5, 6, 7, 9, 10, 1 << 40, u64::MAX] {
                let want = ids.contains(&n).then_some(Value::Int(n as i64 % 5));
                assert_eq!(c.value_of(NodeId(n)), want.as_ref(), "{ids:?} {n}");
            }
        }
    }

    #[test]
    fn the_budget_holds_and_versions_must_match() {
        let cache = ColumnCache::default();
        let c = Arc::new(column(&[(1, &[1], Value::from("a"))]));
        cache.insert(1, 4, c.clone());
        assert!(cache.get(1, 4, 7).is_some());
        assert!(cache.get(1, 4, 8).is_none(), "another version");
        assert!(cache.get(2, 4, 7).is_none(), "another graph");
        cache.insert(1, 4, c.clone());
        assert_eq!(cache.held(), (1, c.bytes()), "replaced, not added");
        cache.forget_graph(1);
        assert_eq!(cache.held(), (0, 0));
    }
}
