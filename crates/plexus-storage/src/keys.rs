//! The key layout of the graph in the key-value store.
//!
//! Every graph-scoped key starts with the graph id (4 bytes, big-endian), so
//! one named graph is one key prefix in each keyspace: listed, exported and
//! dropped on its own. Internal ids are big-endian u64 so that key order is
//! id order.

use crate::ids::{EdgeId, GraphId, NodeId};
use plexus_common::{push_u32, push_u64};
use plexus_kv::Ks;

/// The keyspaces Plexus opens, in the order of the constants below.
pub(crate) const KEYSPACES: &[&str] = &[
    "meta",
    "catalog",
    "nodes",
    "node_keys",
    "edges",
    "edge_keys",
    "adjacency",
    "labels",
    "types",
    "prop_index",
    "stats",
    "schema",
    "index_data",
    "history",
    "valid_time",
    "valid_time_unversioned",
];

/// Manifest and id counters.
pub(crate) const META: Ks = Ks(0);
/// Interned names and the graph registry.
pub(crate) const CATALOG: Ks = Ks(1);
/// g|node → node record.
pub(crate) const NODES: Ks = Ks(2);
/// g|user id → node (the unique id index; existence checks are one lookup).
pub(crate) const NODE_KEYS: Ks = Ks(3);
/// g|edge → edge record.
pub(crate) const EDGES: Ks = Ks(4);
/// g|user id → edge.
pub(crate) const EDGE_KEYS: Ks = Ks(5);
/// g|node|dir → packed block; g|node|dir|type|neighbour|edge → delta (`adjacency.rs`).
pub(crate) const ADJ: Ks = Ks(6);
/// g|label|node → ().
pub(crate) const LABELS: Ks = Ks(7);
/// Format 1's type index (g|type|edge → ()): kept empty since format 2, so
/// that the keyspaces after it keep their places.
pub(crate) const TYPES_V1: Ks = Ks(8);
/// g|index|value key|node → ().
pub(crate) const PROP_INDEX: Ks = Ks(9);
/// g|kind|… → i64 counter.
pub(crate) const STATS: Ks = Ks(10);
/// g|kind|id → index or constraint definition.
pub(crate) const SCHEMA: Ks = Ks(11);
/// g|index|… → whatever the index's maintainer keeps (`maintain.rs`).
pub(crate) const INDEX_DATA: Ks = Ks(12);

/// g|ks|key|!time → versions of the graph's entries (`history.rs`).
pub(crate) const HISTORY: Ks = Ks(13);

/// g|… → valid-time entries, as `plexus-temporal` lays them out; kept in
/// the history like the graph (`WriteTxn::valid_time_write`,
/// [`crate::ValidPart::Versioned`]).
pub(crate) const VALID: Ks = Ks(14);

/// g|… → valid-time entries written once and never changed (version
/// records, their stamps, index entries): not versioned, so a read as of
/// a system time sees them as they are now ([`crate::ValidPart::Unversioned`]).
pub(crate) const VALID_UNVERSIONED: Ks = Ks(15);

pub(crate) const GRAPH_KEYSPACES: [Ks; 14] = [
    NODES,
    NODE_KEYS,
    EDGES,
    EDGE_KEYS,
    ADJ,
    LABELS,
    TYPES_V1,
    PROP_INDEX,
    STATS,
    SCHEMA,
    INDEX_DATA,
    HISTORY,
    VALID,
    VALID_UNVERSIONED,
];

pub(crate) const META_FORMAT: &[u8] = b"format_version";
pub(crate) const META_NEXT_NODE: &[u8] = b"next_node";
pub(crate) const META_NEXT_EDGE: &[u8] = b"next_edge";
pub(crate) const META_NEXT_SCHEMA: &[u8] = b"next_schema";
/// The sequence number of the last commit that changed a maintained
/// index: readers compare it with the stamps of indexed entries.
pub(crate) const META_INDEX_SEQ: &[u8] = b"index_seq";
/// The system clock of history (`history/`): the last stamp given, µs.
pub(crate) const META_SYSTEM_CLOCK: &[u8] = b"system_clock";

pub(crate) const STAT_NODES: u8 = 0;
pub(crate) const STAT_EDGES: u8 = 1;
pub(crate) const STAT_LABEL: u8 = 2;
pub(crate) const STAT_TYPE: u8 = 3;
// 4 held per (node, direction, type) degrees up to format 1; degrees now
// come from adjacency block headers (`adjacency.rs`). Not to be reused.
/// The graph's node version: grows with every commit that changes a node
/// record, so a property column built at one version is known current
/// (`columns.rs`). A version, not a count: the integrity check skips it.
pub(crate) const STAT_NODE_VERSION: u8 = 5;

pub(crate) const SCHEMA_INDEX: u8 = 0;
pub(crate) const SCHEMA_CONSTRAINT: u8 = 1;

pub(crate) const DIR_OUT: u8 = 0;
pub(crate) const DIR_IN: u8 = 1;

pub(crate) fn graph_prefix(g: GraphId) -> Vec<u8> {
    graph_prefix_bytes(g).to_vec()
}

/// The bytes of [`graph_prefix`], without an allocation.
pub(crate) fn graph_prefix_bytes(g: GraphId) -> [u8; 4] {
    g.0.to_be_bytes()
}

pub(crate) fn with_graph(g: GraphId, cap: usize) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + cap);
    push_u32(&mut k, g.0);
    k
}

pub(crate) fn node_key(g: GraphId, n: NodeId) -> Vec<u8> {
    record_key(g, n.0).to_vec()
}

pub(crate) fn edge_key(g: GraphId, e: EdgeId) -> Vec<u8> {
    record_key(g, e.0).to_vec()
}

/// The key of a node's or a relationship's record (`node_key`,
/// `edge_key`) on the stack: a read looks it up without an allocation
/// (one a property read of every reached node made).
pub(crate) fn record_key(g: GraphId, id: u64) -> [u8; 12] {
    let mut k = [0u8; 12];
    k[..4].copy_from_slice(&g.0.to_be_bytes());
    k[4..].copy_from_slice(&id.to_be_bytes());
    k
}

/// The value of an id map entry (user id → internal id): the id as a
/// varint (format 2; format 1 wrote 8 bytes big-endian).
pub(crate) fn id_value(id: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(4);
    plexus_common::write_varint(&mut v, id);
    v
}

/// The internal id an id map entry holds; `None` when the value is not
/// one varint exactly.
pub(crate) fn read_id_value(v: &[u8]) -> Option<u64> {
    let (id, len) = plexus_common::read_varint(v).ok()?;
    (len == v.len()).then_some(id)
}

/// Whether an id map value is format 1's 8-byte big-endian id. A varint of
/// 8 bytes starts with its continuation bit set; an id below 2^63 written
/// big-endian does not: the two never look alike.
pub(crate) fn is_v1_id_value(v: &[u8]) -> bool {
    v.len() == 8 && v[0] < 0x80
}

pub(crate) fn user_id_key(g: GraphId, id: &str) -> Vec<u8> {
    let mut k = with_graph(g, id.len());
    k.extend_from_slice(id.as_bytes());
    k
}

pub(crate) fn adj_key(g: GraphId, n: NodeId, dir: u8, t: u32, nbr: NodeId, e: EdgeId) -> Vec<u8> {
    let mut k = adj_prefix(g, n, Some(dir), Some(t));
    push_u64(&mut k, nbr.0);
    push_u64(&mut k, e.0);
    k
}

pub(crate) fn adj_prefix(g: GraphId, n: NodeId, dir: Option<u8>, t: Option<u32>) -> Vec<u8> {
    let mut k = node_key(g, n);
    if let Some(d) = dir {
        k.push(d);
        if let Some(t) = t {
            push_u32(&mut k, t);
        }
    }
    k
}

pub(crate) fn token_member_key(g: GraphId, token: u32, id: u64) -> Vec<u8> {
    let mut k = with_graph(g, 12);
    push_u32(&mut k, token);
    push_u64(&mut k, id);
    k
}

pub(crate) fn token_prefix(g: GraphId, token: u32) -> Vec<u8> {
    token_prefix_with_room(g, token, 0)
}

/// [`token_prefix`] with room for `more` bytes after it (an index seek's
/// value key: growing the buffer while it went in was an allocation).
pub(crate) fn token_prefix_with_room(g: GraphId, token: u32, more: usize) -> Vec<u8> {
    let mut k = with_graph(g, 4 + more);
    push_u32(&mut k, token);
    k
}

pub(crate) fn stat_key(g: GraphId, kind: u8, rest: &[u8]) -> Vec<u8> {
    let mut k = with_graph(g, 1 + rest.len());
    k.push(kind);
    k.extend_from_slice(rest);
    k
}

pub(crate) fn node_version_key(g: GraphId) -> Vec<u8> {
    stat_key(g, STAT_NODE_VERSION, &[])
}

pub(crate) fn schema_key(g: GraphId, kind: u8, id: u32) -> Vec<u8> {
    let mut k = with_graph(g, 5);
    k.push(kind);
    push_u32(&mut k, id);
    k
}
