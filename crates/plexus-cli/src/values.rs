//! Values on the command line and in JSON output.

use plexus::{Node, Value};
use serde_json::{json, Map, Number};

/// Parses `key=value`. The value is read as JSON when it is valid JSON
/// (`42`, `1.5`, `true`, `null`, `"text"`, `[1,2]`, `{"a":1}`), otherwise
/// taken as a plain string, so `name=Ann` works without quotes.
pub fn parse_assignment(s: &str) -> Result<(String, Value), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("property '{s}' must be written key=value"))?;
    if k.is_empty() {
        return Err(format!("property '{s}' has an empty key"));
    }
    Ok((k.to_string(), parse_value(v)))
}

pub fn parse_value(v: &str) -> Value {
    match serde_json::from_str::<serde_json::Value>(v) {
        Ok(j) => from_json(&j),
        Err(_) => Value::String(v.to_string()),
    }
}

pub fn from_json(j: &serde_json::Value) -> Value {
    match j {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(a) => Value::List(a.iter().map(from_json).collect()),
        serde_json::Value::Object(o) => {
            Value::Map(o.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

/// JSON for a value; temporal values become ISO 8601 strings, bytes hex.
pub fn to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(f) => Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .unwrap_or_else(|| json!(v.to_string())),
        Value::String(s) => json!(s),
        Value::List(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Map(m) => {
            serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
        Value::Bytes(_) => json!(v.to_string()),
        Value::Date(d) => json!(d.to_string()),
        Value::LocalTime(t) => json!(t.to_string()),
        Value::Time(t) => json!(t.to_string()),
        Value::LocalDateTime(t) => json!(t.to_string()),
        Value::DateTime(t) => json!(t.to_string()),
        Value::Duration(d) => json!(d.to_string()),
        Value::Node(n) => {
            json!({"id": n.id, "labels": n.labels, "properties": props_json(&n.props)})
        }
        Value::Relationship(r) => json!({"id": r.id, "type": r.rel_type, "start": r.start,
            "end": r.end, "properties": props_json(&r.props)}),
        Value::Path(p) => json!({
            "nodes": p.nodes.iter().map(|n| to_json(&Value::Node(std::sync::Arc::new(n.clone())))).collect::<Vec<_>>(),
            "relationships": p.rels.iter().map(|r| to_json(&Value::Relationship(std::sync::Arc::new(r.clone())))).collect::<Vec<_>>(),
        }),
    }
}

/// A value as a table cell: strings bare, everything else as a literal.
pub fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub fn props_json(props: &plexus::Props) -> serde_json::Value {
    serde_json::Value::Object(
        props
            .iter()
            .map(|(k, v)| (k.clone(), to_json(v)))
            .collect::<Map<_, _>>(),
    )
}

pub fn node_json(n: &Node) -> serde_json::Value {
    json!({"id": n.key, "labels": n.labels, "properties": props_json(&n.props)})
}

pub fn props_text(props: &plexus::Props) -> String {
    props
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_read_json_or_plain_text() {
        assert_eq!(
            parse_assignment("age=42").unwrap(),
            ("age".into(), Value::Int(42))
        );
        assert_eq!(
            parse_assignment("name=Ann").unwrap().1,
            Value::String("Ann".into())
        );
        assert_eq!(
            parse_assignment("s=\"42\"").unwrap().1,
            Value::String("42".into())
        );
        assert_eq!(
            parse_assignment("t=[1,\"a\"]").unwrap().1,
            Value::List(vec![1.into(), "a".into()])
        );
        assert_eq!(
            parse_assignment("x=").unwrap().1,
            Value::String(String::new())
        );
        assert!(parse_assignment("novalue").is_err());
        assert!(parse_assignment("=3").is_err());
    }
}
