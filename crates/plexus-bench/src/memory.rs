//! `plexus-bench memory`: the AI-memory workload of the seed study
//! (`../shared/seeds/000_*`), as cognee's cognify writes it, on Plexus.
//!
//! A document is 250 nodes and 750 relationships: its own node, 24 chunks
//! (each with an embedding), 24 summaries, 201 entities of its own and 40
//! shared with other documents, and relations between them. Every node and
//! relationship carries provenance lists (`source_ref_keys`,
//! `source_dataset_ids`) and its node set (`belongs_to_set`); a shared
//! entity gains each document's key with a list update that commutes.
//!
//! Measured: the load with 1 and with N concurrent writers (one
//! transaction per document); deleting one document (its unowned nodes and
//! relationships deleted, its key stripped from the shared ones, in one
//! transaction through the list-element indexes); a node-set–filtered
//! vector search (recall@10 against the exact ranking of the set's members,
//! computed by Plexus); the one-hop neighbourhood of 300 seed ids; space
//! after three cycles of deleting and re-inserting 30% of the documents,
//! with the worst read latency seen meanwhile.

use plexus::{
    algo::Rng, Database, DeleteMode, GraphRead, NodeId, Options as DbOptions, Params, Props,
    StorageError, Value, WriteTxn,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const GRAPH: &str = "default";
const CHUNKS: usize = 24;
const OWN_ENTITIES: usize = 201;
const SHARED_PER_DOC: usize = 40;
const RELATIONS: usize = 461;
const SETS: usize = 20;
const DATASETS: usize = 10;

/// `plexus-bench memory`, as its flags give it.
#[derive(clap::Args)]
pub struct Options {
    /// Nodes to load (250 per document).
    #[arg(long, default_value_t = 100_000)]
    pub nodes: usize,
    /// Concurrent writers of the loads, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8")]
    pub writers: Vec<usize>,
    /// Dimensions of the chunk embeddings.
    #[arg(long, default_value_t = 1024)]
    pub dim: usize,
    /// Documents deleted one at a time (timed each).
    #[arg(long, default_value_t = 20)]
    pub deletes: usize,
    /// Filtered searches and neighbourhood reads, each.
    #[arg(long, default_value_t = 50)]
    pub queries: usize,
    /// Churn cycles (each deletes and re-inserts 30% of the documents).
    #[arg(long, default_value_t = 3)]
    pub churn: usize,
    /// Where the database folders go (a temporary folder by default).
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Also write the results here (markdown; JSON lines beside it).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The shape of the generated data.
#[derive(Clone, Copy)]
struct Shape {
    docs: usize,
    pool: usize,
    dim: usize,
}

fn key_of(doc: usize) -> String {
    format!("source_ref:v1:dataset-{}:doc-{doc}", doc % DATASETS)
}

fn set_of(doc: usize) -> String {
    format!("set{}", doc % SETS)
}

fn strings(items: &[String]) -> Value {
    Value::List(items.iter().map(|s| Value::from(s.as_str())).collect())
}

/// The properties every node and relationship of `doc` carries.
fn owned(doc: usize) -> Props {
    let mut p = Props::new();
    p.insert("source_ref_keys".into(), strings(&[key_of(doc)]));
    p.insert(
        "source_dataset_ids".into(),
        strings(&[format!("dataset-{}", doc % DATASETS)]),
    );
    p.insert("belongs_to_set".into(), strings(&[set_of(doc)]));
    p
}

/// Topics the chunk embeddings cluster around: text embeddings of one
/// subject point one way (a document's chunks share its topic). Uniform
/// random vectors, all nearly orthogonal, are no model of them.
const TOPICS: usize = 200;

/// A unit vector near topic `topic`'s centre.
fn topic_vector(r: &mut Rng, topic: usize, dim: usize) -> Value {
    let mut centre = Rng::new(0x7091c ^ topic as u64);
    let v: Vec<f64> = (0..dim)
        .map(|_| (centre.unit() * 2.0 - 1.0) + 0.6 * (r.unit() * 2.0 - 1.0))
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
    Value::List(v.into_iter().map(|x| Value::Float(x / norm)).collect())
}

/// Writes document `doc` in `t`.
fn write_doc(t: &mut WriteTxn, shape: Shape, doc: usize) -> Result<(), StorageError> {
    let mut r = Rng::new(0x5eed ^ doc as u64);
    let base = owned(doc);
    let node = |t: &mut WriteTxn, key: String, label: &str, extra: &[(&str, Value)]| {
        let mut p = base.clone();
        p.insert("name".into(), Value::from(key.as_str()));
        for (k, v) in extra {
            p.insert((*k).into(), v.clone());
        }
        t.create_node(Some(&key), &[label], &p)
    };
    let document = node(t, format!("doc-{doc}"), "Document", &[])?;
    let edge = |t: &mut WriteTxn, a: NodeId, b: NodeId, rel: &str| {
        let mut p = base.clone();
        p.insert("edge_text".into(), Value::from(rel));
        t.create_edge(None, a, b, rel, &p).map(|_| ())
    };
    let mut chunks = Vec::with_capacity(CHUNKS);
    for c in 0..CHUNKS {
        let v = topic_vector(&mut r, doc % TOPICS, shape.dim);
        let ch = node(
            t,
            format!("chunk-{doc}-{c}"),
            "DocumentChunk",
            &[("embedding", v)],
        )?;
        edge(t, ch, document, "is_part_of")?;
        let s = node(t, format!("summary-{doc}-{c}"), "TextSummary", &[])?;
        edge(t, s, ch, "made_from")?;
        chunks.push(ch);
    }
    let mut entities = Vec::with_capacity(OWN_ENTITIES + SHARED_PER_DOC);
    for e in 0..OWN_ENTITIES {
        entities.push(node(t, format!("ent-{doc}-{e}"), "Entity", &[])?);
    }
    let mut picked = std::collections::BTreeSet::new();
    while picked.len() < SHARED_PER_DOC.min(shape.pool) {
        picked.insert(r.below(shape.pool));
    }
    for j in picked {
        let key = format!("shared-{j}");
        let id = match t.node_id(&key)? {
            // The document's key and set join the shared entity's lists:
            // updates that commute with other writers' (`merge.rs`).
            Some(id) => {
                t.list_add(id, "source_ref_keys", Value::from(key_of(doc).as_str()))?;
                t.list_add(id, "belongs_to_set", Value::from(set_of(doc).as_str()))?;
                id
            }
            None => node(t, key, "Entity", &[])?,
        };
        entities.push(id);
    }
    for (i, &e) in entities.iter().enumerate() {
        edge(t, chunks[i % CHUNKS], e, "contains")?;
    }
    for _ in 0..RELATIONS {
        let (a, b) = (r.below(entities.len()), r.below(entities.len()));
        edge(t, entities[a], entities[b], &format!("rel{}", r.below(20)))?;
    }
    Ok(())
}

/// Runs `work` in a transaction until it commits (a conflict runs it
/// again); returns the conflicts seen.
fn retrying(db: &Database, work: &dyn Fn(&mut WriteTxn) -> Result<(), StorageError>) -> Res<u64> {
    let mut conflicts = 0;
    loop {
        let mut t = db.write(GRAPH)?;
        let done = work(&mut t).and_then(|()| t.commit());
        match done {
            Ok(()) => return Ok(conflicts),
            Err(StorageError::Conflict(_)) => conflicts += 1,
            Err(StorageError::AlreadyExists { .. }) => conflicts += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

const SCHEMA: [&str; 6] = [
    "CREATE INDEX refs FOR (n) ON EACH (n.source_ref_keys)",
    "CREATE INDEX sets FOR (n:DocumentChunk) ON EACH (n.belongs_to_set)",
    "CREATE INDEX datasets FOR (n) ON EACH (n.source_dataset_ids)",
    "CREATE INDEX edge_refs FOR ()-[r]-() ON EACH (r.source_ref_keys)",
    "CREATE INDEX edge_text FOR ()-[r]-() ON (r.edge_text)",
    "CREATE VECTOR INDEX chunks FOR (n:DocumentChunk) ON (n.embedding) \
     OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}}",
];

fn fresh(dir: &std::path::Path, shape: Shape) -> Res<Database> {
    let _ = std::fs::remove_dir_all(dir);
    let db = Database::create(dir, DbOptions::default())?;
    let p = Params::from([("dim".to_string(), Value::Int(shape.dim as i64))]);
    for s in SCHEMA {
        db.query(GRAPH, s, &p)?;
    }
    Ok(db)
}

/// Loads `docs` with `writers` threads; returns (seconds, conflicts).
fn load(db: &Arc<Database>, shape: Shape, docs: &[usize], writers: usize) -> Res<(f64, u64)> {
    let start = Instant::now();
    let docs = Arc::new(docs.to_vec());
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let (db, docs) = (db.clone(), docs.clone());
            std::thread::spawn(move || -> Res<u64> {
                let mut conflicts = 0;
                for &d in docs.iter().skip(w).step_by(writers) {
                    conflicts += retrying(&db, &|t| write_doc(t, shape, d))?;
                }
                Ok(conflicts)
            })
        })
        .collect();
    let mut conflicts = 0;
    for h in handles {
        conflicts += h.join().map_err(|_| "a writer panicked")??;
    }
    Ok((start.elapsed().as_secs_f64(), conflicts))
}

/// Deletes document `doc` in `t`: relationships and nodes that carry only
/// its key go, the others lose the key; all found through the indexes.
fn delete_doc(t: &mut WriteTxn, doc: usize) -> Result<(u64, u64), StorageError> {
    let key = Value::from(key_of(doc).as_str());
    let only = |v: Option<&Value>| matches!(v, Some(Value::List(l)) if l.len() == 1);
    let (mut deleted, mut stripped) = (0, 0);
    // Only the owners are read, not whole records (a chunk's embedding
    // alone is 1,024 numbers).
    for e in t.find_edges_with_element(None, "source_ref_keys", &key)? {
        let owners = t.edge_property(e, "source_ref_keys")?;
        if only(owners.as_ref()) {
            t.delete_edge(e)?;
            deleted += 1;
        } else if let Some(Value::List(l)) = owners {
            let kept = l.into_iter().filter(|k| *k != key).collect();
            t.set_edge_property(e, "source_ref_keys", Value::List(kept))?;
            stripped += 1;
        }
    }
    for n in t.find_nodes_with_element(None, "source_ref_keys", &key)? {
        if only(t.node_property(n, "source_ref_keys")?.as_ref()) {
            t.delete_node(n, DeleteMode::Detach)?;
            deleted += 1;
        } else {
            t.list_remove(n, "source_ref_keys", key.clone())?;
            stripped += 1;
        }
    }
    Ok((deleted, stripped))
}

fn count(db: &Database, text: &str, p: &Params) -> Res<i64> {
    match db
        .query(GRAPH, text, p)?
        .rows
        .first()
        .and_then(|r| r.first())
    {
        Some(Value::Int(n)) => Ok(*n),
        other => Err(format!("{text}: {other:?}").into()),
    }
}

fn median_ms(xs: Vec<f64>) -> f64 {
    crate::percentile(&xs, 0.5).unwrap_or(f64::NAN) * 1e3
}

/// Filtered vector search: recall@10 against the exact ranking (strict:
/// the same nodes; and as ann-benchmarks counts it: a result counts when its
/// exact cosine distance is within 1e-3 of the tenth true one, since the
/// chunks of one topic are near-ties that the index's f16 codes may order
/// differently), and p50 ms.
fn filtered_search(db: &Database, shape: Shape, queries: usize) -> Res<(f64, f64, f64)> {
    let ann = "CALL db.index.vector.queryNodes('chunks', 10, $q) YIELD node, score \
               WHERE $set IN node.belongs_to_set RETURN elementId(node) AS id";
    let exact = "MATCH (n:DocumentChunk) WHERE $set IN n.belongs_to_set \
                 WITH n, vector.similarity.cosine(n.embedding, $q) AS s \
                 RETURN elementId(n) AS id, s ORDER BY s DESC LIMIT 10";
    let rescore = "UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id \
                   RETURN vector.similarity.cosine(n.embedding, $q) AS s";
    let mut r = Rng::new(99);
    let (mut strict, mut close, mut wanted, mut times) = (0usize, 0usize, 0usize, Vec::new());
    for _ in 0..queries {
        let topic = r.below(TOPICS);
        let mut p = Params::from([
            ("q".to_string(), topic_vector(&mut r, topic, shape.dim)),
            (
                "set".to_string(),
                Value::from(set_of(r.below(SETS)).as_str()),
            ),
        ]);
        let start = Instant::now();
        let got: Vec<Value> = db
            .query(GRAPH, ann, &p)?
            .rows
            .into_iter()
            .map(|mut row| row.swap_remove(0))
            .collect();
        times.push(start.elapsed().as_secs_f64());
        let truth = db.query(GRAPH, exact, &p)?.rows;
        wanted += truth.len();
        strict += truth.iter().filter(|t| got.contains(&t[0])).count();
        // Scores are (1 + cos) / 2: a cosine distance of 1e-3 is 5e-4 here.
        let tenth = truth
            .last()
            .and_then(|t| float(&t[1]))
            .unwrap_or(f64::INFINITY);
        p.insert("ids".into(), Value::List(got));
        let scores = db.query(GRAPH, rescore, &p)?.rows;
        close += scores
            .iter()
            .filter(|s| float(&s[0]).is_some_and(|s| s >= tenth - 5e-4))
            .count()
            .min(truth.len());
    }
    let of = |n: usize| n as f64 / wanted.max(1) as f64;
    Ok((of(strict), of(close), median_ms(times)))
}

fn float(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// One-hop neighbourhoods of 300 random entity and chunk ids: p50 ms.
fn neighbourhood(db: &Database, live: &[usize], queries: usize) -> Res<f64> {
    let text = "UNWIND $ids AS id MATCH (a)-[r]-(b) WHERE elementId(a) = id \
                RETURN elementId(a), type(r), elementId(b), b.name";
    let mut r = Rng::new(7);
    let mut times = Vec::new();
    for _ in 0..queries {
        let ids: Vec<Value> = (0..300)
            .map(|_| {
                let d = live[r.below(live.len())];
                match r.below(2) {
                    0 => Value::from(format!("ent-{d}-{}", r.below(OWN_ENTITIES)).as_str()),
                    _ => Value::from(format!("chunk-{d}-{}", r.below(CHUNKS)).as_str()),
                }
            })
            .collect();
        let p = Params::from([("ids".to_string(), Value::List(ids))]);
        let start = Instant::now();
        let rows = db.query(GRAPH, text, &p)?.rows.len();
        times.push(start.elapsed().as_secs_f64());
        if rows == 0 {
            return Err("a neighbourhood read found nothing".into());
        }
    }
    Ok(median_ms(times))
}

/// One result line.
struct Line {
    what: String,
    value: String,
    json: serde_json::Value,
}

fn line(what: &str, value: String, json: serde_json::Value) -> Line {
    Line {
        what: what.into(),
        value,
        json,
    }
}

pub fn main(o: &Options) -> Res<()> {
    let (table, lines) = run(o)?;
    println!("{table}");
    if let Some(out) = &o.out {
        std::fs::write(out, &table)?;
        let json: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(out.with_extension("jsonl"), json)?;
    }
    Ok(())
}

fn shape_of(o: &Options) -> Shape {
    let docs = (o.nodes / 250).max(2);
    Shape {
        docs,
        pool: docs * 2,
        dim: o.dim,
    }
}

/// Runs every measure: the markdown table and one JSON object per result.
pub fn run(o: &Options) -> Res<(String, Vec<serde_json::Value>)> {
    let shape = shape_of(o);
    let work = o.work.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("plexus-memory-{}", std::process::id()))
    });
    std::fs::create_dir_all(&work)?;
    let result = run_in(o, shape, &work);
    if o.work.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    let lines = result?;
    let table = render(o, shape, &lines);
    Ok((table, lines.into_iter().map(|l| l.json).collect()))
}

fn run_in(o: &Options, shape: Shape, work: &std::path::Path) -> Res<Vec<Line>> {
    let docs: Vec<usize> = (0..shape.docs).collect();
    let mut lines = Vec::new();
    let mut db = None;
    for &w in &o.writers {
        let d = Arc::new(fresh(&work.join(format!("w{w}")), shape)?);
        let (secs, conflicts) = load(&d, shape, &docs, w.max(1))?;
        let nodes = count(&d, "MATCH (n) RETURN count(n)", &Params::new())?;
        let edges = count(&d, "MATCH ()-[r]->() RETURN count(r)", &Params::new())?;
        eprintln!("loaded {nodes} nodes, {edges} relationships with {w} writers in {secs:.1} s");
        lines.push(line(
            &format!("load, {w} writer(s)"),
            format!("{secs:.1} s ({nodes} nodes, {edges} relationships, {conflicts} conflicts retried)"),
            serde_json::json!({"workload": "memory_load", "writers": w, "seconds": secs, "nodes": nodes, "edges": edges, "conflicts": conflicts}),
        ));
        db = Some(d);
    }
    let db = db.ok_or("--writers names no run")?;
    lines.extend(measure(&db, shape, o)?);
    Ok(lines)
}

/// Deletes, searches, reads and churn on the loaded database.
fn measure(db: &Arc<Database>, shape: Shape, o: &Options) -> Res<Vec<Line>> {
    let mut lines = Vec::new();
    let mut r = Rng::new(3);
    let mut live: Vec<usize> = (0..shape.docs).collect();
    let mut times = Vec::new();
    let before = count(db, "MATCH (n) RETURN count(n)", &Params::new())?;
    let mut deleted_total = 0;
    for _ in 0..o.deletes.min(live.len().saturating_sub(1)) {
        let doc = live.swap_remove(r.below(live.len()));
        let start = Instant::now();
        let mut t = db.write(GRAPH)?;
        let (deleted, _) = delete_doc(&mut t, doc)?;
        t.commit()?;
        times.push(start.elapsed().as_secs_f64());
        deleted_total += deleted;
        let left = Params::from([("k".to_string(), Value::from(key_of(doc).as_str()))]);
        if count(
            db,
            "MATCH (n) WHERE $k IN n.source_ref_keys RETURN count(n)",
            &left,
        )? != 0
        {
            return Err(format!("document {doc} left nodes behind").into());
        }
    }
    let after = count(db, "MATCH (n) RETURN count(n)", &Params::new())?;
    let p50 = median_ms(times);
    lines.push(line(
        "delete one document, p50",
        format!("{p50:.2} ms ({} nodes gone, {deleted_total} nodes and relationships deleted)", before - after),
        serde_json::json!({"workload": "memory_delete_document", "p50_ms": p50, "documents": o.deletes}),
    ));
    let (strict, recall, p50) = filtered_search(db, shape, o.queries)?;
    lines.push(line(
        "node-set filtered vector search, k = 10",
        format!("recall {recall:.3} (same nodes: {strict:.3}), p50 {p50:.2} ms"),
        serde_json::json!({"workload": "memory_filtered_search", "recall_at_10": recall, "same_nodes_at_10": strict, "p50_ms": p50}),
    ));
    let p50 = neighbourhood(db, &live, o.queries)?;
    lines.push(line(
        "one-hop neighbourhood of 300 ids, p50",
        format!("{p50:.2} ms"),
        serde_json::json!({"workload": "memory_neighbourhood_300", "p50_ms": p50}),
    ));
    lines.extend(churn(db, shape, o, &live)?);
    Ok(lines)
}

/// Deletes and re-inserts 30% of the documents `o.churn` times, while a
/// reader thread reads neighbourhoods; the disk size after each cycle and
/// the worst read latency seen.
fn churn(db: &Arc<Database>, shape: Shape, o: &Options, live: &[usize]) -> Res<Vec<Line>> {
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (db, stop, live) = (db.clone(), stop.clone(), live.to_vec());
        std::thread::spawn(move || -> Res<(f64, u64)> {
            let text = "MATCH (a)-[r]-(b) WHERE elementId(a) = $id RETURN count(b)";
            let (mut worst, mut reads, mut r) = (Duration::ZERO, 0u64, Rng::new(11));
            while !stop.load(Ordering::Relaxed) {
                let d = live[r.below(live.len())];
                let p = Params::from([(
                    "id".to_string(),
                    Value::from(format!("chunk-{d}-{}", r.below(CHUNKS)).as_str()),
                )]);
                let start = Instant::now();
                db.query(GRAPH, text, &p)?;
                worst = worst.max(start.elapsed());
                reads += 1;
            }
            Ok((worst.as_secs_f64() * 1e3, reads))
        })
    };
    let mut lines = Vec::new();
    let mut sizes = vec![db.disk_size()?];
    let mut r = Rng::new(5);
    for cycle in 0..o.churn {
        let mut chosen: Vec<usize> = live.to_vec();
        let n = chosen.len();
        for i in 0..n {
            chosen.swap(i, i + r.below(n - i));
        }
        chosen.truncate(live.len() * 3 / 10);
        for &d in &chosen {
            retrying(db, &|t| delete_doc(t, d).map(|_| ()))?;
        }
        load(db, shape, &chosen, 1)?;
        sizes.push(db.disk_size()?);
        eprintln!(
            "churn cycle {}: {:.1} MiB",
            cycle + 1,
            sizes[sizes.len() - 1] as f64 / 1048576.0
        );
    }
    stop.store(true, Ordering::Relaxed);
    let (worst, reads) = reader.join().map_err(|_| "the reader panicked")??;
    let mib: Vec<String> = sizes
        .iter()
        .map(|s| format!("{:.1}", *s as f64 / 1048576.0))
        .collect();
    lines.push(line(
        "disk size before and after each churn cycle",
        format!("{} MiB", mib.join(" → ")),
        serde_json::json!({"workload": "memory_churn_disk", "bytes": sizes}),
    ));
    lines.push(line(
        "worst read during churn",
        format!("{worst:.1} ms over {reads} reads"),
        serde_json::json!({"workload": "memory_churn_worst_read", "ms": worst, "reads": reads}),
    ));
    Ok(lines)
}

fn render(o: &Options, shape: Shape, lines: &[Line]) -> String {
    let mut t = format!(
        "plexus-bench memory --nodes {} --dim {} ({} documents of 250 nodes and 750 relationships, \
         {} shared entities, {SETS} node sets)\n\n| measure | result |\n|---|---|\n",
        o.nodes, shape.dim, shape.docs, shape.pool
    );
    for l in lines {
        t.push_str(&format!("| {} | {} |\n", l.what, l.value));
    }
    t
}
