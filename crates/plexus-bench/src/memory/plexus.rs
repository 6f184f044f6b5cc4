//! The memory workload on Plexus: embedded, LMDB, one transaction per
//! document; shared entities joined by list updates that commute, deletes
//! through the list-element indexes of nodes and relationships.

use super::{Doc, Engine, Res, Shape, Store};
use plexus::{
    Database, DeleteMode, GraphRead, NodeId, Options as DbOptions, Params, Props, StorageError,
    Value, WriteTxn,
};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

const GRAPH: &str = "default";

const SCHEMA: [&str; 6] = [
    "CREATE INDEX refs FOR (n) ON EACH (n.source_ref_keys)",
    "CREATE INDEX sets FOR (n:DocumentChunk) ON EACH (n.belongs_to_set)",
    "CREATE INDEX datasets FOR (n) ON EACH (n.source_dataset_ids)",
    "CREATE INDEX edge_refs FOR ()-[r]-() ON EACH (r.source_ref_keys)",
    "CREATE INDEX edge_text FOR ()-[r]-() ON (r.edge_text)",
    "CREATE VECTOR INDEX chunks FOR (n:DocumentChunk) ON (n.embedding) \
     OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}}",
];

pub(super) struct PlexusEngine {
    pub(super) work: PathBuf,
}

impl Engine for PlexusEngine {
    fn name(&self) -> &'static str {
        "plexus"
    }

    fn fresh(&self, name: &str, shape: Shape) -> Res<Arc<dyn Store>> {
        let dir = self.work.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        let db = Database::create(&dir, DbOptions::default())?;
        let p = Params::from([("dim".to_string(), Value::Int(shape.dim as i64))]);
        for s in SCHEMA {
            db.query(GRAPH, s, &p)?;
        }
        Ok(Arc::new(PlexusStore { db }))
    }
}

struct PlexusStore {
    db: Database,
}

fn strings(items: &[&str]) -> Value {
    Value::List(items.iter().map(|s| Value::from(*s)).collect())
}

fn floats(v: &[f32]) -> Value {
    Value::List(v.iter().map(|x| Value::Float(f64::from(*x))).collect())
}

impl PlexusStore {
    /// Runs `work` in a transaction until it commits (a conflict runs it
    /// again); returns the conflicts seen.
    fn retrying<T>(
        &self,
        work: &dyn Fn(&mut WriteTxn) -> Result<T, StorageError>,
    ) -> Res<(T, u64)> {
        let mut conflicts = 0;
        loop {
            let mut t = self.db.write(GRAPH)?;
            let done = work(&mut t).and_then(|v| t.commit().map(|()| v));
            match done {
                Ok(v) => return Ok((v, conflicts)),
                Err(StorageError::Conflict(_) | StorageError::AlreadyExists { .. }) => {
                    conflicts += 1
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn count(&self, text: &str, p: &Params) -> Res<i64> {
        match self
            .db
            .query(GRAPH, text, p)?
            .rows
            .first()
            .and_then(|r| r.first())
        {
            Some(Value::Int(n)) => Ok(*n),
            other => Err(format!("{text}: {other:?}").into()),
        }
    }
}

/// Writes `doc` in `t`.
fn write_doc(t: &mut WriteTxn, doc: &Doc) -> Result<(), StorageError> {
    let mut base = Props::new();
    base.insert("source_ref_keys".into(), strings(&[&doc.key]));
    base.insert("source_dataset_ids".into(), strings(&[&doc.dataset]));
    base.insert("belongs_to_set".into(), strings(&[&doc.set]));
    let mut ids: HashMap<&str, NodeId> = HashMap::with_capacity(doc.nodes.len() + doc.shared.len());
    for n in &doc.nodes {
        let mut p = base.clone();
        p.insert("name".into(), Value::from(n.key.as_str()));
        if let Some(v) = &n.embedding {
            p.insert("embedding".into(), floats(v));
        }
        ids.insert(&n.key, t.create_node(Some(&n.key), &[n.label], &p)?);
    }
    for key in &doc.shared {
        let id = match t.node_id(key)? {
            // The document's key and set join the shared entity's lists:
            // updates that commute with other writers' (`merge.rs`).
            Some(id) => {
                t.list_add(id, "source_ref_keys", Value::from(doc.key.as_str()))?;
                t.list_add(id, "belongs_to_set", Value::from(doc.set.as_str()))?;
                id
            }
            None => {
                let mut p = base.clone();
                p.insert("name".into(), Value::from(key.as_str()));
                t.create_node(Some(key), &["Entity"], &p)?
            }
        };
        ids.insert(key, id);
    }
    for (a, b, rel) in &doc.edges {
        let end = |k: &String| {
            ids.get(k.as_str())
                .copied()
                .ok_or_else(|| StorageError::NotFound {
                    what: "node of the document",
                    id: k.clone(),
                })
        };
        let (a, b) = (end(a)?, end(b)?);
        let mut p = base.clone();
        p.insert("edge_text".into(), Value::from(rel.as_str()));
        t.create_edge(None, a, b, rel, &p)?;
    }
    Ok(())
}

/// Deletes the document of `key` in `t`: relationships and nodes that carry
/// only its key go, the others lose the key; all found through the indexes.
/// The nodes it owns go first and together, with their relationships
/// (`WriteTxn::delete_nodes`: one between two of them is taken out of
/// neither's adjacency); then the relationships left that carry the key.
fn delete_doc(t: &mut WriteTxn, key: &str) -> Result<u64, StorageError> {
    let key = Value::from(key);
    let only = |v: Option<&Value>| matches!(v, Some(Value::List(l)) if l.len() == 1);
    // Only the owners are read, not whole records (a chunk's embedding
    // alone is 1,024 numbers).
    let mut owned = Vec::new();
    for n in t.find_nodes_with_element(None, "source_ref_keys", &key)? {
        if only(t.node_property(n, "source_ref_keys")?.as_ref()) {
            owned.push(n);
        } else {
            t.list_remove(n, "source_ref_keys", key.clone())?;
        }
    }
    t.delete_nodes(&owned, DeleteMode::Detach)?;
    for e in t.find_edges_with_element(None, "source_ref_keys", &key)? {
        let owners = t.edge_property(e, "source_ref_keys")?;
        if only(owners.as_ref()) {
            t.delete_edge(e)?;
        } else {
            t.list_remove(e, "source_ref_keys", key.clone())?;
        }
    }
    let c = t.counters();
    Ok(c.nodes_deleted + c.relationships_deleted)
}

impl Store for PlexusStore {
    fn write_doc(&self, doc: &Doc) -> Res<u64> {
        Ok(self.retrying(&|t| write_doc(t, doc))?.1)
    }

    fn delete_doc(&self, key: &str) -> Res<u64> {
        Ok(self.retrying(&|t| delete_doc(t, key))?.0)
    }

    fn nodes_with_key(&self, key: &str) -> Res<i64> {
        let p = Params::from([("k".to_string(), Value::from(key))]);
        self.count(
            "MATCH (n) WHERE $k IN n.source_ref_keys RETURN count(n)",
            &p,
        )
    }

    fn counts(&self) -> Res<(i64, i64)> {
        let p = Params::new();
        Ok((
            self.count("MATCH (n) RETURN count(n)", &p)?,
            self.count("MATCH ()-[r]->() RETURN count(r)", &p)?,
        ))
    }

    fn search(&self, q: &[f32], set: &str) -> Res<Vec<String>> {
        let text = "CALL db.index.vector.queryNodes('chunks', 10, $q) YIELD node, score \
                    WHERE $set IN node.belongs_to_set RETURN elementId(node) AS id";
        let p = Params::from([
            ("q".to_string(), floats(q)),
            ("set".to_string(), Value::from(set)),
        ]);
        let rows = self.db.query(GRAPH, text, &p)?.rows;
        Ok(rows
            .into_iter()
            .filter_map(|mut r| match r.swap_remove(0) {
                Value::String(s) => Some(s.to_string()),
                _ => None,
            })
            .collect())
    }

    fn neighbourhood(&self, ids: &[String]) -> Res<usize> {
        let text = "UNWIND $ids AS id MATCH (a)-[r]-(b) WHERE elementId(a) = id \
                    RETURN elementId(a), type(r), elementId(b), b.name";
        let list = Value::List(ids.iter().map(|s| Value::from(s.as_str())).collect());
        let rows = self
            .db
            .query(GRAPH, text, &Params::from([("ids".to_string(), list)]))?
            .rows;
        let distinct: BTreeSet<(String, String, String)> = rows
            .iter()
            .map(|r| {
                let s = |i: usize| match &r[i] {
                    Value::String(s) => s.to_string(),
                    v => format!("{v:?}"),
                };
                super::unordered(s(0), s(1), s(2))
            })
            .collect();
        Ok(distinct.len())
    }

    fn degree(&self, id: &str) -> Res<()> {
        let text = "MATCH (a)-[r]-(b) WHERE elementId(a) = $id RETURN count(b)";
        self.db.query(
            GRAPH,
            text,
            &Params::from([("id".to_string(), Value::from(id))]),
        )?;
        Ok(())
    }

    fn disk_size(&self) -> Res<u64> {
        Ok(self.db.disk_size()?)
    }

    /// A compacting copy swapped in while the reader goes on.
    fn reclaim(&self) -> Res<Option<String>> {
        let c = self.db.compact()?;
        Ok(Some(format!(
            "Database::compact (writes waited {:.1} ms for {} batches replayed)",
            c.writes_held.as_secs_f64() * 1e3,
            c.batches_replayed
        )))
    }
}
