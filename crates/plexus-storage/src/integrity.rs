//! A full consistency check of one graph: every derived key (id index,
//! label members, adjacency blocks and deltas, property index entries,
//! counters) recomputed from the records and compared with what is stored.
//!
//! It reads the whole graph, so it is for tests, crash recovery checks and
//! `plexus check`, never for a hot path.

use crate::error::Result;
use crate::keys::*;
use crate::read::GraphRead;
use crate::record::{EdgeRecord, NodeRecord};
use crate::view::TxnCore;
use crate::{ReadTxn, Storage};
use plexus_common::{read_u32, read_u64};
use plexus_kv::{decode_counter, KeyRange, Ks, ScanOptions};
use std::collections::{BTreeMap, BTreeSet};

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntegrityReport {
    pub nodes: u64,
    pub edges: u64,
    /// One line per inconsistency; empty when the graph is sound.
    pub problems: Vec<String>,
}

impl IntegrityReport {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Every pair of `ks` in the graph (packed keyspaces entry by entry); a
/// key not above the one before it (overlapping blocks) is damage.
fn keys_of(c: &TxnCore, ks: Ks) -> Result<BTreeMap<Vec<u8>, Vec<u8>>> {
    let prefix = graph_prefix(c.g);
    let mut out = BTreeMap::new();
    for pair in c.scan(ks, &KeyRange::prefix(&prefix), ScanOptions::default()) {
        let (k, v) = pair?;
        if out.last_key_value().is_some_and(|(last, _)| *last >= k) {
            return Err(crate::StorageError::Corrupt(format!(
                "keyspace {}: key {k:?} out of order",
                KEYSPACES[ks.0]
            )));
        }
        out.insert(k, v);
    }
    Ok(out)
}

fn compare(
    problems: &mut Vec<String>,
    what: &str,
    expected: &BTreeSet<Vec<u8>>,
    actual: &BTreeSet<Vec<u8>>,
) {
    for k in expected.difference(actual).take(5) {
        problems.push(format!("{what}: missing entry {k:?}"));
    }
    for k in actual.difference(expected).take(5) {
        problems.push(format!("{what}: entry without a record {k:?}"));
    }
}

impl Storage {
    /// Checks every invariant of `graph` on one snapshot.
    pub fn check_integrity(&self, graph: &str) -> Result<IntegrityReport> {
        let txn = self.read(graph)?;
        check(&txn)
    }
}

fn check(txn: &ReadTxn) -> Result<IntegrityReport> {
    let c = txn.core();
    let g = c.g;
    let mut rep = IntegrityReport::default();
    let p = &mut rep.problems;
    let mut exp_ids = BTreeSet::new();
    let mut exp_labels = BTreeSet::new();
    let mut exp_index = BTreeSet::new();
    let mut counters: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
    let mut nodes = BTreeMap::new();
    for (k, v) in keys_of(c, NODES)? {
        let id = read_u64(&k, 4).unwrap_or(0);
        match NodeRecord::decode(&v) {
            Ok(r) => {
                exp_ids.insert(user_id_key(g, &r.key));
                for l in &r.labels {
                    exp_labels.insert(token_member_key(g, *l, id));
                    *counters
                        .entry(stat_key(g, STAT_LABEL, &l.to_be_bytes()))
                        .or_default() += 1;
                }
                for def in c.schema.indexes.iter().filter(|d| !d.stale) {
                    match def.entries(&r) {
                        Ok(es) => exp_index.extend(es.into_iter().map(|vk| {
                            [token_prefix(g, def.id), vk, id.to_be_bytes().to_vec()].concat()
                        })),
                        Err(e) => p.push(format!("node {}: {e}", r.key)),
                    }
                }
                nodes.insert(id, r);
            }
            Err(e) => p.push(format!("node #{id}: {e}")),
        }
    }
    rep.nodes = nodes.len() as u64;
    *counters.entry(stat_key(g, STAT_NODES, &[])).or_default() += nodes.len() as i64;
    let node_map = keys_of(c, NODE_KEYS)?;
    for (k, v) in &node_map {
        let id = read_id_value(v).unwrap_or(u64::MAX);
        match nodes.get(&id) {
            Some(r) if k[4..] == *r.key.as_bytes() => {}
            _ => p.push(format!(
                "node id index entry {:?} points to missing node #{id}",
                String::from_utf8_lossy(&k[4..])
            )),
        }
    }
    let ids: BTreeSet<Vec<u8>> = node_map.into_keys().collect();
    compare(p, "node id index", &exp_ids, &ids);
    let labels: BTreeSet<Vec<u8>> = keys_of(c, LABELS)?.into_keys().collect();
    compare(p, "label index", &exp_labels, &labels);

    let mut exp_edge_ids = BTreeSet::new();
    let mut edge_keys = BTreeMap::new();
    let mut exp_adj = BTreeSet::new();
    let mut edges = 0u64;
    let mut records = Vec::new();
    for (k, v) in keys_of(c, EDGES)? {
        let each = crate::edge_blocks::each(&k, &v, &mut |id, r| {
            records.push((id.0, r.to_vec()));
            Ok(())
        });
        if let Err(e) = each {
            p.push(format!("edge block {k:?}: {e}"));
        }
    }
    for (id, v) in records {
        let r = match EdgeRecord::decode(&v) {
            Ok(r) => r,
            Err(e) => {
                p.push(format!("edge #{id}: {e}"));
                continue;
            }
        };
        edges += 1;
        for end in [r.src, r.dst] {
            if !nodes.contains_key(&end.0) {
                p.push(format!("edge {} points to missing node {end}", r.key));
            }
        }
        if !r.key.is_empty() {
            exp_edge_ids.insert(user_id_key(g, &r.key));
            edge_keys.insert(id, r.key.clone());
        }
        for def in c.schema.indexes.iter().filter(|d| !d.stale) {
            match def.edge_entries(&r) {
                Ok(es) => {
                    exp_index.extend(es.into_iter().map(|vk| {
                        [token_prefix(g, def.id), vk, id.to_be_bytes().to_vec()].concat()
                    }))
                }
                Err(e) => p.push(format!("edge {}: {e}", r.key)),
            }
        }
        let eid = crate::EdgeId(id);
        exp_adj.insert(adj_key(g, r.src, DIR_OUT, r.rel_type, r.dst, eid));
        exp_adj.insert(adj_key(g, r.dst, DIR_IN, r.rel_type, r.src, eid));
        *counters
            .entry(stat_key(g, STAT_TYPE, &r.rel_type.to_be_bytes()))
            .or_default() += 1;
    }
    rep.edges = edges;
    let index: BTreeSet<Vec<u8>> = keys_of(c, PROP_INDEX)?
        .into_keys()
        .filter(|k| {
            let iid = read_u32(k, 4).unwrap_or(u32::MAX);
            c.schema.indexes.iter().any(|d| d.id == iid && !d.stale)
        })
        .collect();
    compare(p, "property index", &exp_index, &index);
    *counters.entry(stat_key(g, STAT_EDGES, &[])).or_default() += edges as i64;
    let edge_map = keys_of(c, EDGE_KEYS)?;
    for (k, v) in &edge_map {
        let id = read_id_value(v).unwrap_or(u64::MAX);
        if edge_keys
            .get(&id)
            .is_none_or(|key| k[4..] != *key.as_bytes())
        {
            p.push(format!(
                "edge id index entry {:?} points to missing edge #{id}",
                String::from_utf8_lossy(&k[4..])
            ));
        }
    }
    let edge_ids: BTreeSet<Vec<u8>> = edge_map.into_keys().collect();
    compare(p, "edge id index", &exp_edge_ids, &edge_ids);
    // Format 2 keeps no type index; a store converted from format 1 must
    // have had it cleared.
    compare(
        p,
        "type index (unused)",
        &BTreeSet::new(),
        &keys_of(c, TYPES_V1)?.into_keys().collect(),
    );
    let adj = crate::adjacency::listed(keys_of(c, ADJ)?.into_iter(), p);
    compare(p, "adjacency", &exp_adj, &adj);

    counters.retain(|_, v| *v != 0);
    let stored: BTreeMap<Vec<u8>, i64> = keys_of(c, STATS)?
        .into_iter()
        // The node version is a version, not a count of anything.
        .filter(|(k, _)| k.get(4) != Some(&STAT_NODE_VERSION))
        .map(|(k, v)| (k, decode_counter(&v)))
        .collect();
    for (k, v) in &counters {
        let s = stored.get(k).copied().unwrap_or(0);
        if s != *v {
            p.push(format!("counter {k:?} is {s}, but the data holds {v}"));
        }
    }
    for (k, v) in &stored {
        if !counters.contains_key(k) {
            p.push(format!(
                "counter {k:?} is {v}, but nothing it counts exists"
            ));
        }
    }
    Ok(rep)
}
