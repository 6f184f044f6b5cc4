//! Bulk loading into an empty graph: every key of every keyspace is built in
//! memory, in one flat buffer per keyspace (`plexus_kv::Run`: no allocation
//! per key), sorted, and written in one atomic backend write as sorted runs
//! (LMDB appends them: no searching, full pages). Statistics are exact when
//! it returns: counters are computed from the rows, not maintained one by
//! one. The adjacency is written as packed blocks (`adjacency.rs`), built
//! off the sorted run of per-edge keys.
//!
//! The whole load is one commit: a failing row (bad id, dangling edge,
//! duplicate, constraint or type violation) leaves the database unchanged.
//! Memory grows with the load (about 100 bytes per key, 16 per edge for
//! the adjacency) unless a `SpillLimit` bounds it (runs sorted into files).

use crate::adjacency;
use crate::catalog::Token;
use crate::edge_blocks;
use crate::error::{Result, StorageError};
use crate::ids::{EdgeId, GraphId, NodeId};
use crate::keys::*;
use crate::occ::{Footprint, Subject};
use crate::read::Props;
use crate::record::{set_prop, EdgeRecord, NodeRecord};
use crate::schema::IndexMode;
use crate::storage::{load_schema, Storage};
use crate::write::MAX_ID_LEN;
use plexus_kv::{decode_counter, Ks, Run, WriteBatch};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// Where a bulk-load row came from, for messages: a source (a file) and a
/// line or row in it. Cheap to make for every row: the source is shared,
/// and the text is only formatted when a message needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    source: Arc<str>,
    at: At,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Nowhere,
    Line(u64),
    Row(u64),
}

impl Origin {
    /// An origin given as text (`people.csv:12`).
    pub fn new(text: impl Into<Arc<str>>) -> Origin {
        Origin {
            source: text.into(),
            at: At::Nowhere,
        }
    }

    /// A line of a text file: `source:line`.
    pub fn line(source: &Arc<str>, line: u64) -> Origin {
        Origin {
            source: source.clone(),
            at: At::Line(line),
        }
    }

    /// A row of a columnar file: `source: row n`.
    pub fn row(source: &Arc<str>, row: u64) -> Origin {
        Origin {
            source: source.clone(),
            at: At::Row(row),
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            At::Nowhere => write!(f, "{}", self.source),
            At::Line(n) => write!(f, "{}:{n}", self.source),
            At::Row(n) => write!(f, "{}: row {n}", self.source),
        }
    }
}

/// A node to load.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkNode {
    pub key: String,
    pub labels: Vec<String>,
    pub props: Props,
    /// Where the row came from (`people.csv:12`), for error messages.
    pub origin: Origin,
}

/// An edge to load, between nodes of the same load.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkEdge {
    /// The edge's id; without one, the edge has none (and no id index entry).
    pub key: Option<String>,
    pub src: String,
    pub dst: String,
    pub rel_type: String,
    pub props: Props,
    pub origin: Origin,
}

/// A bound on the memory a bulk load's keys take: past `bytes`, the load
/// sorts the keys it holds and writes them to files in `dir`, and merges
/// the files as it writes them to the store. (The map from user ids to
/// node ids stays in memory, about 50 bytes a node.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillLimit {
    pub bytes: usize,
    pub dir: std::path::PathBuf,
}

/// How a bulk load treats bad rows, indexes and memory.
#[derive(Default)]
pub struct BulkOptions<'a> {
    /// With it, a bad row (malformed, empty or duplicate id, dangling edge,
    /// type or not-null violation) is passed to it and left out instead of
    /// failing the load. Two rows clashing on a unique constraint still
    /// fail it.
    pub skip: Option<&'a mut dyn FnMut(&StorageError)>,
    /// `Maintain` fills every index from the rows, as one more sorted run
    /// (a sorted bulk fill, so `DeferRebuild`, which asks for just that,
    /// is the same here). `Defer` leaves non-unique indexes out and marks
    /// them stale, to be rebuilt later with `rebuild_indexes`; unique
    /// indexes are always filled, since they enforce a constraint.
    pub index_mode: IndexMode,
    /// Keys held in memory at most; unbounded without it.
    pub spill: Option<SpillLimit>,
}

/// What a bulk load wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BulkReport {
    pub nodes: u64,
    pub edges: u64,
    /// Rows left out (only with a skip callback).
    pub skipped: u64,
}

fn in_row(origin: &Origin, error: StorageError) -> StorageError {
    StorageError::InRow {
        origin: origin.to_string(),
        error: Box::new(error),
    }
}

fn check_id(what: &'static str, key: &str, origin: &Origin) -> Result<()> {
    if key.is_empty() || key.len() > MAX_ID_LEN {
        return Err(in_row(
            origin,
            StorageError::InvalidName {
                what,
                name: key.chars().take(40).collect(),
                why: "ids must be 1 to 400 bytes long",
            },
        ));
    }
    Ok(())
}

/// A node's user id as the load's id map holds it: up to 22 bytes inline
/// (most ids), longer ones on the heap. With a million nodes the map does
/// not fit the cache, and an inline key is compared in the slot's own cache
/// line instead of behind one more pointer (a miss per lookup, two lookups
/// an edge).
enum IdKey {
    Inline { len: u8, bytes: [u8; 22] },
    Heap(Box<str>),
}

impl IdKey {
    fn new(key: String) -> IdKey {
        let b = key.as_bytes();
        if b.len() <= 22 {
            let mut bytes = [0u8; 22];
            bytes[..b.len()].copy_from_slice(b);
            IdKey::Inline {
                len: b.len() as u8,
                bytes,
            }
        } else {
            IdKey::Heap(key.into_boxed_str())
        }
    }

    fn as_bytes(&self) -> &[u8] {
        match self {
            IdKey::Inline { len, bytes } => &bytes[..*len as usize],
            IdKey::Heap(s) => s.as_bytes(),
        }
    }
}

// Hashed and compared as its bytes, so the map is searched with a `&[u8]`.
impl std::hash::Hash for IdKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state)
    }
}

impl PartialEq for IdKey {
    fn eq(&self, other: &IdKey) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for IdKey {}

impl std::borrow::Borrow<[u8]> for IdKey {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Interned ids of the names seen in this load (one map per token kind,
/// looked up without allocating), to spare the catalog's lock.
struct Tokens<'a> {
    storage: &'a Storage,
    cache: [FxHashMap<String, u32>; 3],
}

impl Tokens<'_> {
    fn id(&mut self, kind: Token, name: &str) -> Result<u32> {
        if let Some(id) = self.cache[kind as usize].get(name) {
            return Ok(*id);
        }
        let id = self.storage.shared.catalog.intern(kind, name)?;
        self.cache[kind as usize].insert(name.to_string(), id);
        Ok(id)
    }

    fn props(&mut self, props: Props) -> Result<Vec<(u32, plexus_common::Value)>> {
        let mut out = Vec::with_capacity(props.len());
        for (k, v) in props {
            let id = self.id(Token::PropKey, &k)?;
            set_prop(&mut out, id, v);
        }
        crate::write::storable(&out)?;
        Ok(out)
    }
}

impl Storage {
    /// Loads nodes, then edges between them, into the empty graph `graph`
    /// in one atomic commit.
    pub fn bulk_load(
        &self,
        graph: &str,
        nodes: &mut dyn Iterator<Item = Result<BulkNode>>,
        edges: &mut dyn Iterator<Item = Result<BulkEdge>>,
    ) -> Result<BulkReport> {
        self.bulk_load_skipping(graph, nodes, edges, None)
    }

    /// As [`Storage::bulk_load`], but with `skip`, a bad row (malformed,
    /// empty or duplicate id, dangling edge, type or not-null violation) is
    /// passed to `skip` and left out instead of failing the load. Two rows
    /// clashing on a unique constraint still fail it.
    pub fn bulk_load_skipping(
        &self,
        graph: &str,
        nodes: &mut dyn Iterator<Item = Result<BulkNode>>,
        edges: &mut dyn Iterator<Item = Result<BulkEdge>>,
        skip: Option<&mut dyn FnMut(&StorageError)>,
    ) -> Result<BulkReport> {
        self.bulk_load_with(
            graph,
            nodes,
            edges,
            BulkOptions {
                skip,
                ..BulkOptions::default()
            },
        )
    }

    /// As [`Storage::bulk_load`], with options for bad rows, indexes and
    /// memory (see [`BulkOptions`]).
    pub fn bulk_load_with(
        &self,
        graph: &str,
        nodes: &mut dyn Iterator<Item = Result<BulkNode>>,
        edges: &mut dyn Iterator<Item = Result<BulkEdge>>,
        opts: BulkOptions<'_>,
    ) -> Result<BulkReport> {
        self.writable()?;
        let BulkOptions {
            skip,
            index_mode,
            spill,
        } = opts;
        if let Some(limit) = &spill {
            std::fs::create_dir_all(&limit.dir).map_err(|e| {
                StorageError::Invalid(format!("spill folder {}: {e}", limit.dir.display()))
            })?;
        }
        let g = self
            .shared
            .catalog
            .graph(graph)
            .ok_or_else(|| StorageError::UnknownGraph(graph.into()))?;
        let snap = self.shared.kv.snapshot()?;
        let mut schema = load_schema(&*snap, g)?;
        // Deferred indexes: stale from this load on, and not filled by it.
        let mut deferred = Vec::new();
        if index_mode == IndexMode::Defer {
            for def in schema.indexes.iter_mut().filter(|d| !d.unique && !d.stale) {
                def.stale = true;
                deferred.push(def.clone());
            }
        }
        // Maintained indexes (vector) and relationship indexes are filled
        // by a transaction right after the load; stale until it commits, so
        // that a crash between the two leaves an index that asks to be
        // rebuilt, never one that silently lacks the loaded values.
        let mut maintained = false;
        for def in schema
            .indexes
            .iter_mut()
            .filter(|d| (d.kind.is_maintained() || d.kind.on_relationships()) && !d.stale)
        {
            def.stale = true;
            deferred.push(def.clone());
            maintained = true;
        }
        let is_empty = |snap: &dyn plexus_kv::Snapshot| -> Result<bool> {
            let n = snap
                .get(STATS, &stat_key(g, STAT_NODES, &[]))?
                .map_or(0, |v| decode_counter(&v));
            Ok(n == 0)
        };
        if !is_empty(&*snap)? {
            return Err(StorageError::Unsupported(format!("a bulk load needs an empty graph, and '{graph}' has data; load into a new graph, or add rows with transactions")));
        }
        drop(snap);
        let mut tokens = Tokens {
            storage: self,
            cache: Default::default(),
        };
        let gk = g.0.to_be_bytes();
        let mut runs: Vec<Run> = (0..KEYSPACES.len()).map(|_| Run::new()).collect();
        let mut label_counts: FxHashMap<u32, i64> = FxHashMap::default();
        let mut type_counts: FxHashMap<u32, i64> = FxHashMap::default();
        // User ids are the load's own input: a fast hasher, as no one
        // attacks their own import with colliding ids.
        let mut ids: FxHashMap<IdKey, NodeId> = FxHashMap::default();
        // Room for the rows the inputs expect (a growing array copies what
        // it holds and touches fresh memory at every doubling). The count
        // is a file's own claim (a Parquet footer), so it reserves at most
        // MAX_RESERVED_ROWS: a crafted footer cannot ask for 100 GB, and a
        // larger real load grows its arrays as its rows arrive.
        let (n, e) = (
            reserved_rows(nodes.size_hint()),
            reserved_rows(edges.size_hint()),
        );
        ids.reserve(n);
        for (ks, rows) in [(NODES, n), (NODE_KEYS, n), (LABELS, n), (EDGES, e)] {
            // A bounded load spills long before it holds every row.
            if spill.is_none() {
                runs[ks.0].reserve(rows);
            }
        }
        // The adjacency: one compact row per edge, sorted twice to pack both
        // directions (a twentieth of the memory of a key per direction,
        // sorted with an entry each); a bounded load that outgrows its limit
        // turns them into keys in the run, which spills.
        let mut adj_rows: Option<AdjRows> = Some(AdjRows {
            rows: Vec::with_capacity(if spill.is_none() { e } else { 0 }),
            // Every id this load gives lies past these (the counters only grow).
            node_base: self.shared.next_node.floor(),
            edge_base: self.shared.next_edge.floor(),
        });
        let mut report = BulkReport::default();
        let mut record = Vec::new();
        // A row either passes every check and adds all its keys, or adds
        // nothing: with `skip`, it is then reported and the load goes on.
        let mut edge_ids = if skip.is_some() {
            EdgeIds::Exact(FxHashSet::default())
        } else {
            EdgeIds::Hashed {
                seen: FxHashSet::default(),
                noted: Vec::new(),
            }
        };
        let mut skip = skip;
        let mut reject = |e: StorageError| -> Result<()> {
            match (&mut skip, &e) {
                (Some(f), StorageError::InRow { .. } | StorageError::Invalid(_)) => {
                    f(&e);
                    report.skipped += 1;
                    Ok(())
                }
                _ => Err(e),
            }
        };
        for node in nodes {
            let n = match node {
                Ok(n) => n,
                Err(e) => {
                    reject(e)?;
                    continue;
                }
            };
            let checked = (|| -> Result<(NodeRecord, Vec<Vec<u8>>)> {
                check_id("node id", &n.key, &n.origin)?;
                if ids.contains_key(n.key.as_bytes()) {
                    return Err(in_row(
                        &n.origin,
                        StorageError::AlreadyExists {
                            what: "node",
                            id: n.key,
                        },
                    ));
                }
                let mut labels = n
                    .labels
                    .iter()
                    .map(|l| tokens.id(Token::Label, l))
                    .collect::<Result<Vec<u32>>>()?;
                labels.sort_unstable();
                labels.dedup();
                let rec = NodeRecord {
                    key: n.key,
                    labels,
                    props: tokens.props(n.props)?,
                };
                for c in &schema.not_null {
                    if rec.has_label(c.label) && crate::record::prop(&rec.props, c.key).is_none() {
                        let key = self.shared.catalog.name(Token::PropKey, c.key)?.to_string();
                        return Err(in_row(
                            &n.origin,
                            StorageError::NotNullViolation {
                                constraint: c.name.clone(),
                                node: rec.key,
                                key,
                            },
                        ));
                    }
                }
                // Index value keys, prefixed by their index; the node id is added below.
                let mut entries = Vec::new();
                for def in schema.indexes.iter().filter(|d| !d.stale) {
                    for vk in def.entries(&rec).map_err(|e| in_row(&n.origin, e))? {
                        let mut k = token_prefix(g, def.id);
                        k.extend_from_slice(&vk);
                        entries.push(k);
                    }
                }
                Ok((rec, entries))
            })();
            let (rec, entries) = match checked {
                Ok(x) => x,
                Err(e) => {
                    reject(e)?;
                    continue;
                }
            };
            let id = NodeId(self.shared.next_node.take(&*self.shared.kv)?);
            let ib = id.0.to_be_bytes();
            for k in entries {
                runs[PROP_INDEX.0].push_parts(&[&k, &ib], &[]);
            }
            for l in &rec.labels {
                runs[LABELS.0].push_parts(&[&gk, &l.to_be_bytes(), &ib], &[]);
                *label_counts.entry(*l).or_default() += 1;
            }
            record.clear();
            rec.encode_into(&mut record);
            runs[NODE_KEYS.0].push_parts(&[&gk, rec.key.as_bytes()], &id_value(id.0));
            runs[NODES.0].push_parts(&[&gk, &ib], &record);
            ids.insert(IdKey::new(rec.key), id);
            report.nodes += 1;
            if report.nodes.is_multiple_of(4096) {
                spill_if_over(&mut runs, &mut adj_rows, g, spill.as_ref())?;
            }
        }
        // Edges are checked and encoded on a thread of their own (endpoint
        // lookups, tokens, records; freeing the rows) while this one gives
        // them ids and keys: chunks in order, so ids follow the input.
        let next_edge = &self.shared.next_edge;
        let kv = &*self.shared.kv;
        // Edge records go into blocks of consecutive ids (`edge_blocks.rs`).
        let mut edge_packer = edge_blocks::Packer::default();
        let mut take = |chunk: Resolved| -> Result<()> {
            let mut bytes = &chunk.bytes[..];
            for row in chunk.rows {
                let e = match row {
                    Ok(e) => e,
                    Err(err) => {
                        reject(err)?;
                        continue;
                    }
                };
                let (record, rest) = bytes.split_at(e.record_len);
                let (key, rest) = rest.split_at(e.key_len);
                bytes = rest;
                let (src, dst) = (e.src.0.to_be_bytes(), e.dst.0.to_be_bytes());
                let id = EdgeId(next_edge.take(kv)?);
                let ib = id.0.to_be_bytes();
                let tb = e.rel_type.to_be_bytes();
                match &mut adj_rows {
                    Some(rows) => rows.push(e.src, e.dst, e.rel_type, id)?,
                    None => {
                        runs[ADJ.0].push_parts(&[&gk, &src, &[DIR_OUT], &tb, &dst, &ib], &[]);
                        runs[ADJ.0].push_parts(&[&gk, &dst, &[DIR_IN], &tb, &src, &ib], &[]);
                    }
                }
                *type_counts.entry(e.rel_type).or_default() += 1;
                edge_packer.add(g, id, record, &mut runs[EDGES.0])?;
                if !key.is_empty() {
                    runs[EDGE_KEYS.0].push_parts(&[&gk, key], &id_value(id.0));
                }
                report.edges += 1;
            }
            spill_if_over(&mut runs, &mut adj_rows, g, spill.as_ref())
        };
        std::thread::scope(|scope| -> Result<()> {
            let (to_check, checking) = std::sync::mpsc::sync_channel::<Vec<Result<BulkEdge>>>(2);
            let (to_take, checked) = std::sync::mpsc::channel::<Resolved>();
            let (ids, tokens, edge_ids) = (&ids, &mut tokens, &mut edge_ids);
            scope.spawn(move || {
                // A panic ends this thread quietly; the chunks it did not
                // hand back tell the loading thread (below).
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    for chunk in checking {
                        if to_take.send(resolve(chunk, ids, tokens, edge_ids)).is_err() {
                            break;
                        }
                    }
                }));
            });
            // The checker's output is unbounded, so it never waits on this
            // thread while this one waits to hand it a chunk.
            let (mut sent, mut taken) = (0usize, 0usize);
            let mut chunk = Vec::with_capacity(EDGE_CHUNK);
            for edge in edges {
                chunk.push(edge);
                if chunk.len() == EDGE_CHUNK {
                    let full = std::mem::replace(&mut chunk, Vec::with_capacity(EDGE_CHUNK));
                    if to_check.send(full).is_err() {
                        break;
                    }
                    sent += 1;
                    while let Ok(done) = checked.try_recv() {
                        taken += 1;
                        take(done)?;
                    }
                }
            }
            if !chunk.is_empty() && to_check.send(chunk).is_ok() {
                sent += 1;
            }
            drop(to_check);
            for done in checked {
                taken += 1;
                take(done)?;
            }
            // Fewer chunks back than handed over: the checker died, and what
            // it dropped must not pass for the end of the edges.
            if taken < sent {
                return Err(StorageError::Internal(
                    "the thread checking edges stopped before the last of them".into(),
                ));
            }
            Ok(())
        })?;
        edge_packer.finish(&mut runs[EDGES.0]);
        edge_ids.forget_seen();
        runs[PROP_INDEX.0].sort();
        self.check_unique(&schema, &runs[PROP_INDEX.0], &ids)?;
        drop(ids);
        let mut batch = WriteBatch::new();
        self.shared.persist_counters(&mut batch);
        // A new version of the graph's node records (`columns.rs`).
        batch.add(STATS, node_version_key(g), 1);
        for def in &deferred {
            batch.put(SCHEMA, schema_key(g, SCHEMA_INDEX, def.id), def.encode());
        }
        let _c = self.shared.lock_commits();
        // Nothing may have landed in the graph while the rows were prepared.
        // A graph that keeps history: the stamp of the load's versions, in
        // the load's own write.
        let load_stamp = {
            let snap = self.shared.kv.snapshot()?;
            if !is_empty(&*snap)? {
                return Err(StorageError::Conflict(
                    "the graph received data while the bulk load was prepared".into(),
                ));
            }
            match crate::history::started(&*snap, g)? {
                Some(_) => Some(crate::history::begin_load(&*snap, g, &mut batch)?),
                None => None,
            }
        };
        // The runs are sorted on two threads of their own (the adjacency
        // run, by far the largest, then packed into blocks, on
        // one; the others on the second) while this one writes each run as
        // it comes: the backend takes them in any order.
        let adj = std::mem::take(&mut runs[ADJ.0]);
        let mut others: Vec<(Ks, Run)> = runs
            .into_iter()
            .enumerate()
            .map(|(i, r)| (Ks(i), r))
            .filter(|(ks, r)| !r.is_empty() && *ks != ADJ && *ks != STATS)
            .collect();
        // Runs in id order come out sorted already: those first, the user
        // id runs (sorted by string) last.
        others.sort_by_key(|(ks, _)| *ks == NODE_KEYS || *ks == EDGE_KEYS);
        let kv = &self.shared.kv;
        // Room for the write up front (generously: packed, it is smaller
        // than the runs), so that the backend need not keep the runs to
        // write them again, and frees each once written.
        let runs_bytes: usize = others
            .iter()
            .map(|(_, r)| r.memory().saturating_mul(3).saturating_add(r.len() * 64))
            .sum();
        let adj_bytes = adj.memory().saturating_mul(3)
            + adj_rows
                .as_ref()
                .map_or(0, |a| a.rows.len().saturating_mul(64));
        kv.reserve(runs_bytes.saturating_add(adj_bytes) as u64)?;
        // An edge id given twice, as the sorted edge-id run shows it (the
        // backend then refuses that run, and the whole write).
        let repeated: std::sync::Mutex<Option<Vec<u8>>> = Default::default();
        let written = std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::channel::<Sorted>();
            let tx2 = tx.clone();
            // A send fails only when the writer stopped (its error wins).
            // Each sorting thread ends with `Done`; one that dies first (a
            // panic, caught so the scope does not raise it again) leaves
            // the channel closed without it, and the write stops on an
            // error instead of taking the runs so far for all of them.
            let (label_counts, type_counts, report) = (&label_counts, &type_counts, &report);
            scope.spawn(move || {
                let sorted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    sort_adjacency(adj, adj_rows, g, report, label_counts, type_counts, &tx)
                }));
                if sorted.is_ok() {
                    let _ = tx.send(Sorted::Done);
                }
            });
            let repeated = &repeated;
            scope.spawn(move || {
                let sorted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    sort_others(others, repeated, &tx2)
                }));
                if sorted.is_ok() {
                    let _ = tx2.send(Sorted::Done);
                }
            });
            kv.write_sorted(&mut until_done(rx, 2), batch)
        });
        if let Some(key) = repeated.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(edge_ids.repeated(&key));
        }
        written?;
        // A graph that keeps history gets a version of everything loaded,
        // with the stamp the load's write recorded. (Not in that write: it
        // would hold the graph twice. A crash or an error between the two
        // leaves the stamp, and the next open writes the versions.) Other
        // graphs do nothing more after the write, so an error still means
        // that nothing landed.
        if let Some(t) = load_stamp {
            crate::history::record_load(&**kv, g, t)?;
        }
        let mut fp = Footprint::default();
        fp.writes.insert(Subject::Schema(g.0).hash());
        if self.shared.multi {
            // Logged after the load (a sorted write cannot read the log
            // under the writer lock): other processes' transactions on the
            // graph that were open across it fail, and the store's commit
            // number moves on.
            crate::coord::write_serialized(&*self.shared.kv, &mut |snap| {
                let mut b = WriteBatch::new();
                crate::coord::log_commit(&mut b, crate::coord::commit_seq(snap)?, &fp);
                Ok(b)
            })?;
        }
        self.shared.occ.publish(fp);
        drop(_c);
        if maintained {
            let mut t = self.write(graph)?;
            t.rebuild_maintained_indexes()?;
            t.commit()?;
        }
        Ok(report)
    }

    /// Fails when two nodes of the load share a value of a unique index.
    fn check_unique(
        &self,
        schema: &crate::schema::Schema,
        entries: &Run,
        ids: &FxHashMap<IdKey, NodeId>,
    ) -> Result<()> {
        let unique: FxHashSet<u32> = schema
            .indexes
            .iter()
            .filter(|d| d.unique)
            .map(|d| d.id)
            .collect();
        if unique.is_empty() {
            return Ok(());
        }
        let node_of = |k: &[u8]| {
            let id = plexus_common::read_u64(k, k.len() - 8).unwrap_or(0);
            ids.iter()
                .find(|(_, v)| v.0 == id)
                .map(|(k, _)| String::from_utf8_lossy(k.as_bytes()).into_owned())
                .unwrap_or_default()
        };
        // Neighbours in the sorted run: equal but for the node id, a clash.
        let mut prev: Vec<u8> = Vec::new();
        entries.visit(&mut |b, _| -> Result<()> {
            let a = &prev;
            let iid = plexus_common::read_u32(a, 4).unwrap_or(u32::MAX);
            if unique.contains(&iid) && a.len() == b.len() && a[..a.len() - 8] == b[..b.len() - 8] {
                let index = schema
                    .indexes
                    .iter()
                    .find(|d| d.id == iid)
                    .map(|d| d.name.clone())
                    .unwrap_or_default();
                return Err(StorageError::UniqueViolation {
                    index,
                    value: format!("of node '{}'", node_of(b)),
                    existing: node_of(a),
                });
            }
            prev.clear();
            prev.extend_from_slice(b);
            Ok(())
        })?;
        Ok(())
    }
}

/// With a limit, writes the runs out to files once they and the adjacency
/// rows hold more memory than it allows (each run sorted first; later keys
/// start new parts; the rows become keys).
fn spill_if_over(
    runs: &mut [Run],
    adj_rows: &mut Option<AdjRows>,
    g: GraphId,
    limit: Option<&SpillLimit>,
) -> Result<()> {
    let Some(limit) = limit else {
        return Ok(());
    };
    let rows = adj_rows
        .as_ref()
        .map_or(0, |a| a.rows.capacity() * std::mem::size_of::<AdjRow>());
    if runs.iter().map(Run::memory).sum::<usize>() + rows <= limit.bytes {
        return Ok(());
    }
    for run in runs.iter_mut() {
        run.spill(&limit.dir)?;
    }
    // Past the limit, the rows go too, as keys in sorted files, and the
    // edges to come go straight to keys.
    if let Some(rows) = adj_rows.take() {
        rows.into_keys(g, &mut runs[ADJ.0], &limit.dir)?;
    }
    Ok(())
}

/// How a load finds an edge id given twice.
enum EdgeIds {
    /// Every id kept: a repeat is refused at its row, which can then be
    /// skipped (for loads that skip bad rows).
    Exact(FxHashSet<String>),
    /// Only a 32-bit hash of each id kept, and the rows whose hash was
    /// seen before noted: a repeat is found for sure once the edge-id run
    /// is sorted (two equal keys; the backend refuses the write), and named
    /// by its noted row. Millions of ids cost a set of integers, not of
    /// strings.
    Hashed {
        seen: FxHashSet<u32>,
        noted: Vec<(String, Origin)>,
    },
}

impl EdgeIds {
    /// Records an edge's id; fails (exact mode) when it was seen before.
    /// Called for rows that passed every other check.
    fn admit(&mut self, key: &str, origin: &Origin) -> Result<()> {
        match self {
            EdgeIds::Exact(keys) => {
                if keys.contains(key) {
                    return Err(in_row(
                        origin,
                        StorageError::AlreadyExists {
                            what: "edge",
                            id: key.to_string(),
                        },
                    ));
                }
                keys.insert(key.to_string());
            }
            EdgeIds::Hashed { seen, noted } => {
                let mut h = rustc_hash::FxHasher::default();
                std::hash::Hasher::write(&mut h, key.as_bytes());
                // 32 bits: five million ids note a few thousand rows that
                // only share a hash, and the set takes half the memory.
                let hash = (std::hash::Hasher::finish(&h) >> 32) as u32;
                if !seen.insert(hash) {
                    noted.push((key.to_string(), origin.clone()));
                }
            }
        }
        Ok(())
    }

    /// Frees the hashes once every edge is in: only the noted rows are
    /// needed after (to name a repeat).
    fn forget_seen(&mut self) {
        match self {
            EdgeIds::Exact(_) => {}
            EdgeIds::Hashed { seen, .. } => *seen = FxHashSet::default(),
        }
    }

    /// The error for an id found twice in the sorted run (hashed mode).
    fn repeated(&self, key: &[u8]) -> StorageError {
        let id = String::from_utf8_lossy(key).into_owned();
        let origin = match self {
            EdgeIds::Hashed { noted, .. } => noted
                .iter()
                .find(|(k, _)| k.as_bytes() == key)
                .map(|(_, o)| o.clone()),
            EdgeIds::Exact(_) => None,
        };
        let e = StorageError::AlreadyExists { what: "edge", id };
        match origin {
            Some(o) => in_row(&o, e),
            None => e,
        }
    }
}

/// What a thread sorting a bulk load's runs hands the writing thread.
enum Sorted {
    Run(std::result::Result<(Ks, Arc<Run>), plexus_kv::KvError>),
    /// The thread sent all it had.
    Done,
}

/// The runs sent on `rx` (empty ones left out) until every one of
/// `senders` threads said `Done`; if the channel closes before, an error
/// item that stops the write, so that nothing of it lands.
fn until_done(
    rx: std::sync::mpsc::Receiver<Sorted>,
    senders: usize,
) -> impl Iterator<Item = std::result::Result<(Ks, Arc<Run>), plexus_kv::KvError>> {
    let mut done = 0;
    let mut failed = false;
    std::iter::from_fn(move || loop {
        if failed {
            return None;
        }
        match rx.recv() {
            Ok(Sorted::Done) => done += 1,
            Ok(Sorted::Run(Ok((_, run)))) if run.is_empty() => {}
            Ok(Sorted::Run(r)) => return Some(r),
            Err(_) if done == senders => return None,
            Err(_) => {
                failed = true;
                return Some(Err(plexus_kv::KvError::Aborted(
                    "a thread sorting the load's keys stopped".into(),
                )));
            }
        }
    })
}

/// Sorts the adjacency run (one key per edge and direction), packs it
/// into blocks (`adjacency.rs`) and hands those over, then the counters.
fn sort_adjacency(
    mut adj: Run,
    rows: Option<AdjRows>,
    g: GraphId,
    report: &BulkReport,
    label_counts: &FxHashMap<u32, i64>,
    type_counts: &FxHashMap<u32, i64>,
    tx: &std::sync::mpsc::Sender<Sorted>,
) {
    let packed = match rows {
        Some(rows) => Ok(vec![rows.pack(g)]),
        None => {
            adj.sort();
            block_runs(&adj).map(Vec::from)
        }
    };
    drop(adj);
    match packed {
        Ok(runs) => {
            for blocks in runs {
                let _ = tx.send(Sorted::Run(Ok((ADJ, Arc::new(blocks)))));
            }
        }
        // Reading a spilled part failed: the write stops there, and nothing
        // of it lands.
        Err(e) => {
            let _ = tx.send(Sorted::Run(Err(e)));
            return;
        }
    }
    let stats = stats_run(g, report, label_counts, type_counts);
    let _ = tx.send(Sorted::Run(Ok((STATS, Arc::new(stats)))));
}

/// Sorts the other runs one by one and hands each over; notes an edge id
/// given twice, as the sorted edge-id run shows it.
fn sort_others(
    others: Vec<(Ks, Run)>,
    repeated: &std::sync::Mutex<Option<Vec<u8>>>,
    tx: &std::sync::mpsc::Sender<Sorted>,
) {
    for (ks, mut run) in others {
        run.sort();
        if ks == EDGE_KEYS {
            // A read error here is the write's to report.
            if let Ok(Some(key)) = run.first_duplicate() {
                let key = key[4..].to_vec();
                *repeated.lock().unwrap_or_else(|p| p.into_inner()) = Some(key);
                let _ = tx.send(Sorted::Run(Err(plexus_kv::KvError::Aborted(
                    "an edge id is given twice".into(),
                ))));
                break;
            }
        }
        // Id maps, label members and index entries are stored in blocks
        // of sorted keys (`packed.rs`).
        let sent = if crate::packed::touches(ks) {
            match crate::packed::pack_run(ks, &run) {
                Ok(packed) => Ok((ks, Arc::new(packed))),
                Err(e) => Err(plexus_kv::KvError::Aborted(e.to_string())),
            }
        } else {
            Ok((ks, Arc::new(run)))
        };
        if tx.send(Sorted::Run(sent)).is_err() {
            break;
        }
    }
}

/// The most rows a bulk load reserves room for up front from its inputs'
/// claims (about 0.4 GB of id map and keys); past it, arrays grow.
const MAX_RESERVED_ROWS: usize = 1 << 23;

/// How many rows to reserve room for, from an input's size hint.
fn reserved_rows(hint: (usize, Option<usize>)) -> usize {
    hint.1.unwrap_or(hint.0).min(MAX_RESERVED_ROWS)
}

/// Edges handed to the checking thread at a time.
const EDGE_CHUNK: usize = 1024;

/// A chunk of edges, checked and encoded: their records and ids back to
/// back in one buffer (one allocation a chunk, not several an edge).
#[derive(Default)]
struct Resolved {
    bytes: Vec<u8>,
    rows: Vec<Result<ResolvedEdge>>,
}

/// An edge whose endpoints and type are resolved, with the lengths of its
/// encoded record and its id in `Resolved::bytes`.
struct ResolvedEdge {
    src: NodeId,
    dst: NodeId,
    rel_type: u32,
    record_len: usize,
    key_len: usize,
}

/// Checks and encodes a chunk of edges: endpoints among the loaded nodes,
/// a valid id not seen before (`keys`), known tokens for type and property
/// keys, storable values. A bad row becomes its error, in place.
fn resolve(
    chunk: Vec<Result<BulkEdge>>,
    ids: &FxHashMap<IdKey, NodeId>,
    tokens: &mut Tokens<'_>,
    keys: &mut EdgeIds,
) -> Resolved {
    let mut out = Resolved {
        bytes: Vec::with_capacity(chunk.len() * 32),
        rows: Vec::with_capacity(chunk.len()),
    };
    for edge in chunk {
        let checked = edge.and_then(|e| {
            let endpoint = |key: &str| {
                ids.get(key.as_bytes()).copied().ok_or_else(|| {
                    in_row(
                        &e.origin,
                        StorageError::NotFound {
                            what: "node",
                            id: key.to_string(),
                        },
                    )
                })
            };
            let (src, dst) = (endpoint(&e.src)?, endpoint(&e.dst)?);
            let key = e.key.unwrap_or_default();
            if !key.is_empty() {
                check_id("edge id", &key, &e.origin)?;
                keys.admit(&key, &e.origin)?;
            }
            Ok(EdgeRecord {
                key,
                src,
                dst,
                rel_type: tokens.id(Token::Type, &e.rel_type)?,
                props: tokens.props(e.props)?,
            })
        });
        out.rows.push(checked.map(|rec| {
            let start = out.bytes.len();
            rec.encode_into(&mut out.bytes);
            let record_len = out.bytes.len() - start;
            out.bytes.extend_from_slice(rec.key.as_bytes());
            ResolvedEdge {
                src: rec.src,
                dst: rec.dst,
                rel_type: rec.rel_type,
                record_len,
                key_len: rec.key.len(),
            }
        }));
    }
    out
}

/// The load's counters, exact: node, edge, label and type counts.
fn stats_run(
    g: GraphId,
    report: &BulkReport,
    labels: &FxHashMap<u32, i64>,
    types: &FxHashMap<u32, i64>,
) -> Run {
    let mut run = Run::new();
    let mut put = |key: Vec<u8>, n: i64| run.push(&key, &n.to_le_bytes());
    if report.nodes > 0 {
        put(stat_key(g, STAT_NODES, &[]), report.nodes as i64);
    }
    if report.edges > 0 {
        put(stat_key(g, STAT_EDGES, &[]), report.edges as i64);
    }
    for (l, n) in labels {
        put(stat_key(g, STAT_LABEL, &l.to_be_bytes()), *n);
    }
    for (t, n) in types {
        put(stat_key(g, STAT_TYPE, &t.to_be_bytes()), *n);
    }
    run.sort();
    run
}

/// The blocks of a sorted adjacency run, where each block is one stretch
/// of keys sharing graph, node and direction: two runs in key order, split
/// at a block near the middle and packed on two threads.
fn block_runs(adj: &Run) -> plexus_kv::Result<[Run; 2]> {
    let mut first = Run::new();
    let mut second = Run::new();
    if adj.parted() {
        // Parts in files are merged as they are read: one pass, one thread.
        let mut packer = Packer::default();
        adj.visit(&mut |k, _| -> plexus_kv::Result<()> {
            packer.add(k, &mut first);
            Ok(())
        })?;
        packer.finish(&mut first);
        return Ok([first, second]);
    }
    let heads = || adj.iter().map(|(k, _)| k.get(..adjacency::BLOCK_KEY_LEN));
    let mut mid = adj.len() / 2;
    if mid > 0 {
        let mut from_middle = heads().skip(mid - 1);
        if let Some(before) = from_middle.next() {
            mid += from_middle.take_while(|h| *h == before).count();
        }
    }
    let pack = |keys: &mut dyn Iterator<Item = &[u8]>, run: &mut Run| {
        let mut packer = Packer::default();
        for k in keys {
            packer.add(k, run);
        }
        packer.finish(run);
    };
    std::thread::scope(|scope| {
        scope.spawn(|| pack(&mut adj.iter().skip(mid).map(|(k, _)| k), &mut second));
        pack(&mut adj.iter().take(mid).map(|(k, _)| k), &mut first);
    });
    Ok([first, second])
}

/// An edge as the adjacency of one of its ends lists it, in 16 bytes: ids
/// as offsets from the first this load gives (a load's rows are most of its
/// memory). Ordered as a block orders its entries, after the node.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct AdjRow {
    node: u32,
    rel_type: u32,
    other: u32,
    edge: u32,
}

/// One row per edge (source in `node`), and the ids the offsets count from.
struct AdjRows {
    rows: Vec<AdjRow>,
    node_base: u64,
    edge_base: u64,
}

impl AdjRows {
    fn push(&mut self, src: NodeId, dst: NodeId, rel_type: u32, edge: EdgeId) -> Result<()> {
        let offset = |id: u64, base: u64| {
            id.checked_sub(base)
                .and_then(|o| u32::try_from(o).ok())
                .ok_or_else(|| {
                    StorageError::Unsupported(
                        "a bulk load spans more than 2^32 node or edge ids; load it in parts"
                            .into(),
                    )
                })
        };
        self.rows.push(AdjRow {
            node: offset(src.0, self.node_base)?,
            rel_type,
            other: offset(dst.0, self.node_base)?,
            edge: offset(edge.0, self.edge_base)?,
        });
        Ok(())
    }

    /// The rows as adjacency keys (both directions) in `run`, spilled to
    /// `dir` a slice of rows at a time, so that the keys of only one slice
    /// are held beside the rows.
    fn into_keys(self, g: GraphId, run: &mut Run, dir: &std::path::Path) -> Result<()> {
        let gk = g.0.to_be_bytes();
        for slice in self.rows.chunks(1 << 18) {
            for r in slice {
                let src = (self.node_base + u64::from(r.node)).to_be_bytes();
                let dst = (self.node_base + u64::from(r.other)).to_be_bytes();
                let ib = (self.edge_base + u64::from(r.edge)).to_be_bytes();
                let tb = r.rel_type.to_be_bytes();
                run.push_parts(&[&gk, &src, &[DIR_OUT], &tb, &dst, &ib], &[]);
                run.push_parts(&[&gk, &dst, &[DIR_IN], &tb, &src, &ib], &[]);
            }
            run.spill(dir)?;
        }
        Ok(())
    }

    /// The blocks of both directions: sorted by source and packed, then
    /// turned around, sorted by target and packed; the two runs are read
    /// as one, in key order (a node's outgoing block before its incoming
    /// one).
    fn pack(self, g: GraphId) -> Run {
        let AdjRows {
            mut rows,
            node_base,
            edge_base,
        } = self;
        let mut by_dir = Vec::with_capacity(2);
        for dir in [DIR_OUT, DIR_IN] {
            if dir == DIR_IN {
                for r in &mut rows {
                    std::mem::swap(&mut r.node, &mut r.other);
                }
            }
            rows.sort_unstable();
            let mut run = Run::new();
            let mut key = Vec::with_capacity(adjacency::BLOCK_KEY_LEN);
            let (mut entries, mut block) = (Vec::new(), Vec::new());
            for stretch in rows.chunk_by(|a, b| a.node == b.node) {
                entries.clear();
                entries.extend(stretch.iter().map(|r| adjacency::Entry {
                    rel_type: r.rel_type,
                    node: node_base + u64::from(r.other),
                    edge: edge_base + u64::from(r.edge),
                }));
                block.clear();
                adjacency::encode(&entries, &mut block);
                key.clear();
                key.extend_from_slice(&g.0.to_be_bytes());
                key.extend_from_slice(&(node_base + u64::from(stretch[0].node)).to_be_bytes());
                key.push(dir);
                run.push(&key, &block);
            }
            by_dir.push(run);
        }
        Run::merged(by_dir)
    }
}

/// Packs stretches of adjacency keys sharing a block key into blocks,
/// appending each to a run as its stretch ends.
#[derive(Default)]
struct Packer {
    head: Vec<u8>,
    entries: Vec<adjacency::Entry>,
    block: Vec<u8>,
}

impl Packer {
    fn add(&mut self, k: &[u8], run: &mut Run) {
        // Keys come from this load, built as delta keys: never damaged.
        let Ok(e) = adjacency::delta_entry(k) else {
            return;
        };
        if k[..adjacency::BLOCK_KEY_LEN] != self.head[..] {
            self.finish(run);
            self.head.clear();
            self.head.extend_from_slice(&k[..adjacency::BLOCK_KEY_LEN]);
        }
        self.entries.push(e);
    }

    fn finish(&mut self, run: &mut Run) {
        if self.entries.is_empty() {
            return;
        }
        self.block.clear();
        adjacency::encode(&self.entries, &mut self.block);
        run.push(&self.head, &self.block);
        self.entries.clear();
    }
}

#[cfg(test)]
mod thread_tests {
    use super::*;

    fn run_of(key: &[u8]) -> Arc<Run> {
        let mut r = Run::new();
        r.push(key, b"v");
        Arc::new(r)
    }

    #[test]
    fn a_sorting_thread_that_dies_stops_the_write() {
        let (tx, rx) = std::sync::mpsc::channel();
        let tx2 = tx.clone();
        tx.send(Sorted::Run(Ok((ADJ, run_of(b"a"))))).unwrap();
        tx.send(Sorted::Done).unwrap();
        tx2.send(Sorted::Run(Ok((NODES, run_of(b"b"))))).unwrap();
        // The second thread goes away without saying Done.
        drop((tx, tx2));
        let items: Vec<_> = until_done(rx, 2).collect();
        assert_eq!(items.len(), 3);
        assert!(items[..2].iter().all(|i| i.is_ok()));
        assert!(matches!(items[2], Err(plexus_kv::KvError::Aborted(_))));
    }

    #[test]
    fn runs_end_when_every_thread_is_done() {
        let (tx, rx) = std::sync::mpsc::channel();
        tx.send(Sorted::Run(Ok((ADJ, run_of(b"a"))))).unwrap();
        tx.send(Sorted::Run(Ok((NODES, Arc::new(Run::new())))))
            .unwrap();
        tx.send(Sorted::Done).unwrap();
        tx.send(Sorted::Done).unwrap();
        drop(tx);
        let items: Vec<_> = until_done(rx, 2).collect();
        assert_eq!(items.len(), 1, "the empty run is left out");
        assert!(items[0].is_ok());
    }
}

#[cfg(test)]
mod reserve_tests {
    #[test]
    fn a_claimed_row_count_reserves_a_bounded_amount() {
        assert_eq!(super::reserved_rows((1000, None)), 1000);
        assert_eq!(
            super::reserved_rows((0, Some(usize::MAX))),
            super::MAX_RESERVED_ROWS
        );
    }
}
