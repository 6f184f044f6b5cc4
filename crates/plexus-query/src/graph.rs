//! What expressions read from the graph: properties, labels and types of
//! the entities in a row, the functions over nodes, relationships and
//! paths, and filling entities in when they leave a query.

use crate::error::QueryError;
use plexus_common::{NodeValue, PathValue, RelValue, Value};
use plexus_cypher::LabelExpr;
use plexus_storage::{EdgeId, Entity, GraphRead, NodeId};
use std::collections::BTreeMap;

type R = Result<Value, QueryError>;

/// A node for a row: identity only (see [`NodeValue`]).
pub fn node_value(id: NodeId) -> NodeValue {
    NodeValue {
        id: id.0,
        ..NodeValue::default()
    }
}

/// A relationship for a row: identity and endpoints.
pub fn rel_value(id: EdgeId, start: NodeId, end: NodeId) -> RelValue {
    RelValue {
        id: id.0,
        start: start.0,
        end: end.0,
        ..RelValue::default()
    }
}

/// [`node_value`] as a [`Value`].
pub fn node(id: NodeId) -> Value {
    Value::Node(std::sync::Arc::new(node_value(id)))
}

/// [`rel_value`] as a [`Value`].
pub fn rel(id: EdgeId, start: NodeId, end: NodeId) -> Value {
    Value::Relationship(std::sync::Arc::new(rel_value(id, start, end)))
}

/// `entity.key`, read from the transaction so the query sees its own writes.
pub fn property(g: &dyn GraphRead, v: &Value, key: &str) -> Option<R> {
    let found = match v {
        Value::Node(n) => g.node_property(NodeId(n.id), key),
        Value::Relationship(r) => g.edge_property(EdgeId(r.id), key),
        _ => return None,
    };
    // Whether the entity is gone is asked only when nothing was found: a
    // cheap look at the transaction's own writes.
    Some(match found {
        Ok(Some(x)) => Ok(x),
        Ok(None) if deleted_here(g, v) => Err(deleted(key)),
        Ok(None) => Ok(Value::Null),
        Err(e) => Err(e.into()),
    })
}

/// Whether the transaction deleted the node or relationship `v`.
fn deleted_here(g: &dyn GraphRead, v: &Value) -> bool {
    match v {
        Value::Node(n) => g.deleted_node(NodeId(n.id)),
        Value::Relationship(r) => g.deleted_edge(EdgeId(r.id)),
        _ => false,
    }
}

/// Reading `what` of an entity the query deleted (Neo4j's
/// `DeletedEntityAccess`).
fn deleted(what: &str) -> QueryError {
    QueryError::EntityNotFound {
        code: "DeletedEntityAccess",
        message: format!("cannot read {what} of an entity this query deleted"),
    }
}

/// Whether a node matches a label expression (`:A:B`, `:A|B`, `:!A`, `:%`).
pub fn labels_match(g: &dyn GraphRead, node: NodeId, e: &LabelExpr) -> Result<bool, QueryError> {
    Ok(match e {
        LabelExpr::Name(l) => g.node_has_label(node, l)?,
        LabelExpr::And(parts) => {
            for p in parts {
                if !labels_match(g, node, p)? {
                    return Ok(false);
                }
            }
            true
        }
        LabelExpr::Or(parts) => {
            for p in parts {
                if labels_match(g, node, p)? {
                    return Ok(true);
                }
            }
            false
        }
        LabelExpr::Not(x) => !labels_match(g, node, x)?,
        LabelExpr::Any => g.node(node)?.is_some_and(|n| !n.labels.is_empty()),
    })
}

/// Whether a relationship type matches a type expression (`:T`, `:A|B`, `:!T`).
pub fn type_matches(name: &str, e: &LabelExpr) -> bool {
    match e {
        LabelExpr::Name(t) => t == name,
        LabelExpr::And(parts) => parts.iter().all(|p| type_matches(name, p)),
        LabelExpr::Or(parts) => parts.iter().any(|p| type_matches(name, p)),
        LabelExpr::Not(x) => !type_matches(name, x),
        LabelExpr::Any => true,
    }
}

/// Whether [`type_names`] would list `e`'s types (without building the
/// list: the matcher asks for every relationship it follows).
pub fn are_type_names(e: &LabelExpr) -> bool {
    match e {
        LabelExpr::Name(_) => true,
        LabelExpr::Or(parts) => parts.iter().all(are_type_names),
        _ => false,
    }
}

/// The type names a type expression can only match, when it is a plain
/// name or an alternative of names: the adjacency lookups to make.
pub fn type_names(e: &LabelExpr) -> Option<Vec<&str>> {
    match e {
        LabelExpr::Name(t) => Some(vec![t.as_str()]),
        LabelExpr::Or(parts) => {
            // Each type once: `[:T|:T]` matches an edge once, not twice.
            let mut out: Vec<&str> = Vec::new();
            for p in parts {
                for t in type_names(p)? {
                    if !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
            Some(out)
        }
        _ => None,
    }
}

fn props_map(p: plexus_storage::Props) -> Value {
    Value::Map(p.into_iter().collect())
}

/// The type of a relationship in a row: the one the matcher named from the
/// adjacency entry it followed, else read from the record's head (`None`
/// when the relationship is gone).
pub fn rel_type(g: &dyn GraphRead, r: &RelValue) -> Result<Option<String>, QueryError> {
    if !r.rel_type.is_empty() {
        return Ok(Some(r.rel_type.clone()));
    }
    Ok(g.edge_key_and_type(EdgeId(r.id))?
        .map(|(_, t)| t.to_string()))
}

/// The functions that read the graph; `Ok(None)` when `name` is not one
/// of them (or its argument is not an entity), so the caller falls back to
/// the scalar functions.
pub fn call(g: &dyn GraphRead, name: &str, args: &[Value]) -> Result<Option<Value>, QueryError> {
    let [a] = args else {
        return Ok(None);
    };
    let lname = name.to_ascii_lowercase();
    Ok(Some(match (lname.as_str(), a) {
        ("id", Value::Node(n)) => Value::Int(n.id as i64),
        ("id", Value::Relationship(r)) => Value::Int(r.id as i64),
        // The user's id: what `plexus node put ann`, an import's `:ID` or
        // `create_node(Some("ann"))` gave, so Cypher can reach it. An edge
        // loaded without an id has none; it shows its internal one as `#N`.
        // Read without decoding the node's properties (a chunk's embedding
        // alone can be thousands of numbers).
        ("elementid", Value::Node(n)) => g
            .node_user_id(NodeId(n.id))?
            .map_or(Value::Null, Value::String),
        ("elementid", Value::Relationship(r)) => g
            .edge_key_and_type(EdgeId(r.id))?
            .map_or(Value::Null, |(key, _)| {
                Value::String(edge_element_id(r.id, key))
            }),
        // The valid-time version the entity is, under FOR VALID_TIME AS
        // OF; null on the graph itself.
        (f @ ("versionid" | "validfrom" | "validto" | "systemfrom"), Value::Node(n)) => {
            version_field(g, f, Entity::Node(NodeId(n.id)))?
        }
        (f @ ("versionid" | "validfrom" | "validto" | "systemfrom"), Value::Relationship(r)) => {
            version_field(g, f, Entity::Edge(EdgeId(r.id)))?
        }
        ("labels", v @ Value::Node(_)) if deleted_here(g, v) => return Err(deleted("the labels")),
        ("labels", Value::Node(n)) => Value::List(
            g.node(NodeId(n.id))?
                .map(|n| n.labels.into_iter().map(Value::String).collect())
                .unwrap_or_default(),
        ),
        ("type", Value::Relationship(r)) => match rel_type(g, r)? {
            Some(t) => Value::String(t),
            None => Value::Null,
        },
        ("properties", Value::Node(n)) => g
            .node(NodeId(n.id))?
            .map(|n| props_map(n.props))
            .unwrap_or_else(|| Value::Map(BTreeMap::new())),
        ("properties", Value::Relationship(r)) => g
            .edge(EdgeId(r.id))?
            .map(|e| props_map(e.props))
            .unwrap_or_else(|| Value::Map(BTreeMap::new())),
        ("keys", Value::Node(n)) => Value::List(
            g.node(NodeId(n.id))?
                .map(|n| n.props.into_keys().map(Value::String).collect())
                .unwrap_or_default(),
        ),
        ("keys", Value::Relationship(r)) => Value::List(
            g.edge(EdgeId(r.id))?
                .map(|e| e.props.into_keys().map(Value::String).collect())
                .unwrap_or_default(),
        ),
        ("startnode", Value::Relationship(r)) => node(NodeId(r.start)),
        ("endnode", Value::Relationship(r)) => node(NodeId(r.end)),
        ("nodes", Value::Path(p)) => Value::List(
            p.nodes
                .iter()
                .map(|n| Value::Node(std::sync::Arc::new(n.clone())))
                .collect(),
        ),
        ("relationships", Value::Path(p)) => Value::List(
            p.rels
                .iter()
                .map(|r| Value::Relationship(std::sync::Arc::new(r.clone())))
                .collect(),
        ),
        ("length", Value::Path(p)) => Value::Int(p.rels.len() as i64),
        _ => return Ok(None),
    }))
}

/// `versionId`, `validFrom`, `validTo` or `systemFrom` of an entity (see
/// [`GraphRead::valid_version`]): null when the read is not a valid-time
/// view, `validTo` null for an open interval, `systemFrom` null for a
/// version recorded before versions were stamped in a graph without history.
fn version_field(g: &dyn GraphRead, f: &str, e: Entity) -> R {
    let Some(v) = g.valid_version(e)? else {
        return Ok(Value::Null);
    };
    Ok(match f {
        "versionid" => Value::String(v.id),
        "validfrom" => crate::valid_time::instant_value(v.from),
        "systemfrom" => v.system_from.map_or(Value::Null, |t| {
            crate::valid_time::instant_value(i64::try_from(t).unwrap_or(i64::MAX))
        }),
        _ => v.to.map_or(Value::Null, crate::valid_time::instant_value),
    })
}

/// An edge's element id: its user id, or `#<id>` for one loaded without.
fn edge_element_id(id: u64, key: String) -> String {
    if key.is_empty() {
        format!("#{id}")
    } else {
        key
    }
}

fn fill_node(g: &dyn GraphRead, n: &mut NodeValue) -> Result<(), QueryError> {
    if let Some(full) = g.node(NodeId(n.id))? {
        n.key = full.key;
        n.labels = full.labels;
        n.props = full.props;
    }
    Ok(())
}

fn fill_rel(g: &dyn GraphRead, r: &mut RelValue) -> Result<(), QueryError> {
    if let Some(full) = g.edge(EdgeId(r.id))? {
        r.key = edge_element_id(r.id, full.key);
        r.rel_type = full.rel_type;
        r.props = full.props;
    }
    // Endpoints' element ids, so a client can join the relationship to its
    // nodes: the user id alone, not the whole record.
    let key_of = |id: u64| -> Result<String, QueryError> {
        Ok(g.node_user_id(NodeId(id))?.unwrap_or_default())
    };
    r.start_key = key_of(r.start)?;
    r.end_key = key_of(r.end)?;
    Ok(())
}

/// Fills in the labels, types and properties of every entity inside `v`,
/// for a result leaving the query. Entities deleted by the query keep
/// their identity only.
pub fn hydrate(g: &dyn GraphRead, v: &mut Value) -> Result<(), QueryError> {
    match v {
        // A result's entity is seldom shared with a row still alive, so
        // make_mut rarely copies.
        Value::Node(n) => fill_node(g, std::sync::Arc::make_mut(n)),
        Value::Relationship(r) => fill_rel(g, std::sync::Arc::make_mut(r)),
        Value::Path(p) => {
            let PathValue { nodes, rels } = std::sync::Arc::make_mut(p);
            nodes.iter_mut().try_for_each(|n| fill_node(g, n))?;
            rels.iter_mut().try_for_each(|r| fill_rel(g, r))
        }
        Value::List(items) => items.iter_mut().try_for_each(|x| hydrate(g, x)),
        Value::Map(m) => m.values_mut().try_for_each(|x| hydrate(g, x)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The adjacency lookups of a type alternative name each type once, so
    /// `[:T|:T]` matches an edge once.
    #[test]
    fn type_alternatives_name_each_type_once() {
        let name = |t: &str| LabelExpr::Name(t.to_string());
        let or = LabelExpr::Or(vec![name("T"), name("U"), name("T")]);
        assert_eq!(type_names(&or), Some(vec!["T", "U"]));
        assert_eq!(type_names(&LabelExpr::Not(Box::new(name("T")))), None);
    }
}
