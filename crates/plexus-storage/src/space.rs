//! Where the bytes go: the store broken down by keyspace, so every change
//! to the layout is judged by numbers (`plexus stats --space`).

use crate::error::Result;
use crate::keys::*;
use crate::Storage;
use plexus_kv::{KeyRange, Ks};

/// What a keyspace's size is best divided by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    Node,
    Edge,
    /// Bookkeeping whose size does not grow with the graph.
    Nothing,
}

/// One keyspace: what it holds and what that costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyspaceSpace {
    pub name: &'static str,
    /// What it holds, in words.
    pub holds: &'static str,
    pub per: Per,
    pub entries: u64,
    /// Bytes of its keys and of its values, as stored (before the
    /// backend's own overhead).
    pub key_bytes: u64,
    pub value_bytes: u64,
    /// Bytes it occupies in the store (LMDB's pages, fjall's tables).
    pub stored_bytes: u64,
}

/// The whole store, every graph together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceReport {
    pub keyspaces: Vec<KeyspaceSpace>,
    pub nodes: u64,
    pub edges: u64,
    /// The store's size on disk: the keyspaces, free pages and the
    /// backend's own files.
    pub disk_bytes: u64,
}

impl SpaceReport {
    /// Bytes the keyspaces occupy together.
    pub fn stored_bytes(&self) -> u64 {
        self.keyspaces.iter().map(|k| k.stored_bytes).sum()
    }

    /// `bytes` divided by what a keyspace's size is counted per.
    pub fn per(&self, per: Per, bytes: u64) -> Option<f64> {
        let n = match per {
            Per::Node => self.nodes,
            Per::Edge => self.edges,
            Per::Nothing => return None,
        };
        (n > 0).then(|| bytes as f64 / n as f64)
    }
}

/// What each keyspace holds and what it grows with, by keyspace.
fn describe(ks: Ks) -> (&'static str, Per) {
    match ks {
        META => ("format version and id counters", Per::Nothing),
        CATALOG => ("interned names and graphs", Per::Nothing),
        NODES => ("node records", Per::Node),
        NODE_KEYS => ("node id map (user id → node)", Per::Node),
        EDGES => ("edge records", Per::Edge),
        EDGE_KEYS => ("edge id map (user id → edge)", Per::Edge),
        ADJ => ("adjacency blocks and deltas, both directions", Per::Edge),
        LABELS => ("label members", Per::Node),
        TYPES_V1 => ("unused (format 1's type index)", Per::Edge),
        PROP_INDEX => ("property indexes", Per::Node),
        STATS => ("counts", Per::Nothing),
        SCHEMA => ("index and constraint definitions", Per::Nothing),
        HISTORY => ("versions kept by graphs with history on", Per::Nothing),
        VALID => ("valid-time timelines", Per::Nothing),
        VALID_UNVERSIONED => ("valid-time versions and their indexes", Per::Nothing),
        _ => ("", Per::Nothing),
    }
}

impl Storage {
    /// Every keyspace's entries, key and value bytes (one pass over all
    /// of them: this reads the whole store) and stored size.
    pub fn space(&self) -> Result<SpaceReport> {
        let kv = &self.shared.kv;
        let stored = kv.stored_sizes()?;
        let snap = kv.snapshot()?;
        let mut keyspaces = Vec::with_capacity(KEYSPACES.len());
        // Edge records sit in blocks of many (`edge_blocks.rs`): counted
        // one by one.
        let mut edges = 0u64;
        for (i, name) in KEYSPACES.iter().enumerate() {
            let ks = Ks(i);
            let (mut entries, mut key_bytes, mut value_bytes) = (0u64, 0u64, 0u64);
            let mut damaged = None;
            snap.visit(ks, &KeyRange::all(), &mut |k, v| {
                if ks == EDGES {
                    let counted = crate::edge_blocks::each_id(k, v, &mut |_| edges += 1);
                    if let Err(e) = counted {
                        damaged = Some(e);
                        return Ok(false);
                    }
                }
                entries += 1;
                key_bytes += k.len() as u64;
                value_bytes += v.len() as u64;
                Ok(true)
            })?;
            if let Some(e) = damaged {
                return Err(e);
            }
            let (holds, per) = describe(ks);
            keyspaces.push(KeyspaceSpace {
                name,
                holds,
                per,
                entries,
                key_bytes,
                value_bytes,
                stored_bytes: stored.get(i).copied().unwrap_or(0),
            });
        }
        Ok(SpaceReport {
            nodes: keyspaces[NODES.0].entries,
            edges,
            keyspaces,
            disk_bytes: kv.disk_size()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Props;

    #[test]
    fn space_counts_what_a_graph_holds() {
        let s = Storage::in_memory().unwrap();
        let mut t = s.write("default").unwrap();
        let a = t.create_node(Some("a"), &["P"], &Props::new()).unwrap();
        let b = t.create_node(Some("b"), &["P"], &Props::new()).unwrap();
        t.create_edge(None, a, b, "K", &Props::new()).unwrap();
        t.create_edge(Some("e2"), b, a, "K", &Props::new()).unwrap();
        t.commit().unwrap();
        let r = s.space().unwrap();
        assert_eq!((r.nodes, r.edges), (2, 2));
        let get = |name: &str| r.keyspaces.iter().find(|k| k.name == name).unwrap();
        assert_eq!(get("node_keys").entries, 1, "both user ids in one block");
        assert_eq!(
            get("edge_keys").entries,
            1,
            "the edge without an id has no entry"
        );
        assert_eq!(get("adjacency").entries, 4, "each edge from both ends");
        assert_eq!(get("labels").entries, 1, "both members in one block");
        // In memory, a keyspace's stored size is its keys and values.
        for k in &r.keyspaces {
            assert_eq!(k.stored_bytes, k.key_bytes + k.value_bytes, "{}", k.name);
        }
        let adj = get("adjacency");
        assert_eq!(
            r.per(adj.per, adj.stored_bytes),
            Some(adj.stored_bytes as f64 / 2.0)
        );
        assert_eq!(r.per(Per::Nothing, 10), None);
    }
}
