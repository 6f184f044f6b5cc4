//! JSON lines: one object per line. Nodes: `id`, optional `labels` (a
//! string or a list), every other key a property. Edges: `start` and `end`
//! (or `src`/`dst`), `type` unless the file names it, optional `id`, every
//! other key a property. JSON has no dates: temporal values arrive as strings.

use crate::error::{IngestError, Location};
use crate::Input;
use plexus_common::Value;
use plexus_storage::{BulkEdge, BulkNode, Origin, Props, StorageError};
use std::io::BufRead;

fn from_json(j: serde_json::Value) -> Value {
    match j {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(Value::Int)
            .unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN))),
        serde_json::Value::String(s) => Value::String(s),
        serde_json::Value::Array(a) => Value::List(a.into_iter().map(from_json).collect()),
        serde_json::Value::Object(o) => {
            Value::Map(o.into_iter().map(|(k, v)| (k, from_json(v))).collect())
        }
    }
}

type Object = serde_json::Map<String, serde_json::Value>;

fn objects(
    input: &Input,
) -> Result<impl Iterator<Item = Result<(u64, Object), IngestError>> + '_, IngestError> {
    let file = std::fs::File::open(&input.path).map_err(|error| IngestError::Io {
        file: input.path.clone(),
        error,
    })?;
    let mut lines = std::io::BufReader::new(file).lines().enumerate().peekable();
    if lines.peek().is_none() {
        return Err(IngestError::bad(input.at(1, None), "the file is empty"));
    }
    Ok(lines.filter_map(move |(i, line)| {
        let at = input.at(i as u64 + 1, None);
        let line = match line {
            Ok(l) => l,
            Err(error) => {
                return Some(Err(IngestError::Io {
                    file: input.path.clone(),
                    error,
                }))
            }
        };
        if line.trim().is_empty() {
            return None;
        }
        Some(match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(serde_json::Value::Object(o)) => Ok((at.line, o)),
            Ok(_) => Err(IngestError::bad(at, "each line must be a JSON object")),
            Err(e) => Err(IngestError::bad(
                Location {
                    column: Some(e.column()),
                    ..at
                },
                format!("malformed JSON: {e}"),
            )),
        })
    }))
}

fn text(o: &mut Object, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| o.remove(*k))
        .and_then(|v| match v {
            serde_json::Value::String(s) => Some(s),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
}

fn props(o: Object) -> Props {
    o.into_iter()
        .map(|(k, v)| (k, from_json(v)))
        .filter(|(_, v)| !v.is_null())
        .collect()
}

pub fn nodes(
    input: &Input,
) -> Result<impl Iterator<Item = Result<BulkNode, StorageError>> + '_, IngestError> {
    let source = input.source();
    Ok(objects(input)?.map(move |r| {
        let (line, mut o) = r.map_err(IngestError::into_row_error)?;
        let at = input.at(line, None);
        let key = text(&mut o, &["id"]).ok_or_else(|| {
            IngestError::bad(at.clone(), "the object has no \"id\"").into_row_error()
        })?;
        let mut labels: Vec<String> = input.name.iter().cloned().collect();
        match o.remove("labels") {
            Some(serde_json::Value::String(l)) => labels.push(l),
            Some(serde_json::Value::Array(ls)) => {
                labels.extend(ls.into_iter().filter_map(|l| l.as_str().map(String::from)))
            }
            Some(_) => {
                return Err(IngestError::bad(
                    at,
                    "\"labels\" must be a string or a list of strings",
                )
                .into_row_error())
            }
            None => {}
        }
        Ok(BulkNode {
            key,
            labels,
            props: props(o),
            origin: Origin::line(&source, line),
        })
    }))
}

pub fn edges(
    input: &Input,
) -> Result<impl Iterator<Item = Result<BulkEdge, StorageError>> + '_, IngestError> {
    let source = input.source();
    Ok(objects(input)?.map(move |r| {
        let (line, mut o) = r.map_err(IngestError::into_row_error)?;
        let at = input.at(line, None);
        let missing = |what: &str| {
            IngestError::bad(at.clone(), format!("the object has no \"{what}\"")).into_row_error()
        };
        let src = text(&mut o, &["start", "src"]).ok_or_else(|| missing("start"))?;
        let dst = text(&mut o, &["end", "dst"]).ok_or_else(|| missing("end"))?;
        let rel_type = text(&mut o, &["type"])
            .or_else(|| input.name.clone())
            .ok_or_else(|| missing("type"))?;
        let key = text(&mut o, &["id"]);
        Ok(BulkEdge {
            key,
            src,
            dst,
            rel_type,
            props: props(o),
            origin: Origin::line(&source, line),
        })
    }))
}
