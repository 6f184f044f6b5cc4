//! `plexus vector`: vector indexes from the command line (create, list,
//! search). Dropping one is `plexus index drop`, as for every index.

use crate::commands::CliResult;
use crate::output::Out;
use crate::values::parse_value;
use crate::VectorCmd;
use plexus::{Database, GraphRead, IndexKind, IndexSpec, Value};
use serde_json::json;

pub fn vector(db: &Database, g: &str, cmd: &VectorCmd, out: &Out) -> CliResult {
    match cmd {
        VectorCmd::Create {
            label,
            key,
            relationships,
            dimensions,
            similarity,
            f32,
            m,
            ef_construction,
            name,
        } => {
            let mut options = vec![
                (
                    "vector.dimensions".to_string(),
                    Value::Int(i64::try_from(*dimensions)?),
                ),
                (
                    "vector.similarity_function".to_string(),
                    Value::String(similarity.clone()),
                ),
                ("vector.quantization.enabled".to_string(), Value::Bool(!f32)),
            ];
            if let Some(m) = m {
                options.push(("vector.hnsw.m".to_string(), Value::Int(i64::try_from(*m)?)));
            }
            if let Some(ef) = ef_construction {
                options.push((
                    "vector.hnsw.ef_construction".to_string(),
                    Value::Int(i64::try_from(*ef)?),
                ));
            }
            let mut spec = if *relationships {
                IndexSpec::relationship_vector(label, key, options)
            } else {
                IndexSpec::vector(label, key, options)
            };
            spec.name = name.clone();
            let mut t = db.write(g)?;
            let name = t.create_index(spec)?;
            t.commit()?;
            out.changed("vector index", &name, "created");
        }
        VectorCmd::List => {
            let r = db.read(g)?;
            let rows = r
                .indexes()?
                .into_iter()
                .filter(|i| matches!(i.kind, IndexKind::Vector | IndexKind::RelationshipVector))
                .map(|i| {
                    let options: serde_json::Map<String, serde_json::Value> = i
                        .options
                        .iter()
                        .map(|(k, v)| (k.clone(), crate::values::to_json(v)))
                        .collect();
                    let of = if i.kind.on_relationships() {
                        "relationships"
                    } else {
                        "nodes"
                    };
                    vec![
                        json!(i.name),
                        json!(of),
                        json!(i.label.unwrap_or_default()),
                        json!(i.key),
                        if out.json {
                            json!(options)
                        } else {
                            json!(options
                                .iter()
                                .map(|(k, v)| format!("{k}: {v}"))
                                .collect::<Vec<_>>()
                                .join(", "))
                        },
                    ]
                })
                .collect();
            out.table(&["name", "of", "label", "key", "options"], rows);
        }
        VectorCmd::Search {
            name,
            vector,
            k,
            ef,
        } => {
            let query = numbers(vector)?;
            let r = db.read(g)?;
            let on_edges = r
                .indexes()?
                .iter()
                .any(|i| i.name == *name && i.kind.on_relationships());
            let mut rows = Vec::new();
            if on_edges {
                for h in plexus::vectors::search_relationships(&r, name, &query, *k, *ef, None)? {
                    if let Some(e) = r.edge(h.edge)? {
                        rows.push(vec![json!(e.key), json!(e.rel_type), json!(h.score)]);
                    }
                }
                out.table(&["id", "type", "score"], rows);
                return Ok(());
            }
            for h in plexus::vectors::search(&r, name, &query, *k, *ef, None)? {
                if let Some(n) = r.node(h.node)? {
                    rows.push(vec![
                        json!(n.key),
                        json!(n.labels.join(":")),
                        json!(h.score),
                    ]);
                }
            }
            out.table(&["id", "labels", "score"], rows);
        }
    }
    Ok(())
}

/// The query vector: a JSON list of numbers.
fn numbers(text: &str) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let Value::List(items) = parse_value(text) else {
        return Err(format!(
            "the vector must be a JSON list of numbers, like [0.1, 0.2], not '{text}'"
        )
        .into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Int(x) => Ok(*x as f32),
            Value::Float(x) => Ok(*x as f32),
            other => Err(format!("the vector's element {i} is not a number: {other:?}").into()),
        })
        .collect()
}
