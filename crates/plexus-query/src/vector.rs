//! Vectors in Cypher, as Neo4j 5 clients send them: the procedures
//! `db.index.vector.queryNodes`/`queryRelationships` and
//! `db.create.setNodeVectorProperty`/`setRelationshipVectorProperty`, the
//! functions `vector.similarity.cosine/euclidean`, and the rule that pushes
//! a `YIELD … WHERE` on the found node into the search itself.
//!
//! Pushed down, the predicate is the search's filter: the search returns
//! the `k` nearest nodes that pass it (exactly `k` whenever `k` pass),
//! where Neo4j returns the `k` nearest and then drops those that fail, so
//! a selective `WHERE` leaves fewer. A predicate that reads the score (or
//! anything this rule cannot see through) stays a filter after the search.

use crate::builtin::Graph;
use crate::error::QueryError;
use crate::eval::free_of;
use crate::graph::{node_value, rel};
use plexus_common::Value;
use plexus_cypher::{Expr, ExprKind};
use plexus_storage::{EdgeId, NodeId, StorageError, WriteTxn};
use plexus_vector_index::VectorIndexError;

/// The largest `k` a query may ask for.
pub const MAX_K: i64 = 10_000;

fn argument(message: String) -> QueryError {
    QueryError::Argument {
        code: "InvalidArgumentValue",
        message,
    }
}

/// A list of numbers as f32, or why not (naming the procedure's argument).
pub fn floats(v: &Value, what: &str) -> Result<Vec<f32>, QueryError> {
    plexus_vector_index::vector_of(v)
        .map_err(|e| QueryError::type_error(format!("{what} must be a vector: {e}")))
}

fn search_error(index: &str, e: VectorIndexError) -> QueryError {
    match e {
        VectorIndexError::Storage(StorageError::NoIndex(_)) => QueryError::Procedure {
            code: "ProcedureCallFailed",
            message: format!("there is no vector index named '{index}'"),
        },
        VectorIndexError::Storage(s) => s.into(),
        other => argument(format!("vector index '{index}': {other}")),
    }
}

/// The arguments of a query procedure `name`: the index's name, `k`, and
/// the query vector.
fn query_args<'a>(name: &str, args: &'a [Value]) -> Result<(&'a str, usize, Vec<f32>), QueryError> {
    let index = match &args[0] {
        Value::String(s) => s.as_str(),
        other => {
            return Err(QueryError::type_error(format!(
                "the index name of {name} must be a string, not {other}"
            )))
        }
    };
    let k = match &args[1] {
        Value::Int(k) if (1..=MAX_K).contains(k) => *k as usize,
        other => {
            return Err(argument(format!(
                "{name} takes a number of neighbours from 1 to {MAX_K}, not {other}"
            )))
        }
    };
    let query = floats(&args[2], &format!("the query vector of {name}"))?;
    Ok((index, k, query))
}

/// `db.index.vector.queryNodes(index, k, vector) YIELD node, score`: the
/// `k` nodes nearest `vector` (that `filter` passes, when a `WHERE` was
/// pushed down), nearest first, with Neo4j's scores.
pub(crate) fn query_nodes(
    g: &Graph<'_>,
    args: &[Value],
    filter: Option<&dyn Fn(NodeId) -> bool>,
    among: Option<&[NodeId]>,
) -> Result<Vec<Vec<Value>>, QueryError> {
    const NAME: &str = "db.index.vector.queryNodes";
    let (index, k, query) = query_args(NAME, args)?;
    let graph = g
        .read()
        .ok_or_else(|| QueryError::Unsupported(format!("{NAME} needs a graph")))?;
    let hits = match among {
        Some(nodes) => {
            plexus_vector_index::search_among(graph, index, &query, k, None, nodes, filter)
        }
        None => plexus_vector_index::search(graph, index, &query, k, None, filter),
    }
    .map_err(|e| search_error(index, e))?;
    Ok(hits
        .into_iter()
        .map(|h| {
            vec![
                Value::Node(std::sync::Arc::new(node_value(h.node))),
                Value::Float(h.score),
            ]
        })
        .collect())
}

/// `db.index.vector.queryRelationships(index, k, vector) YIELD
/// relationship, score`: as [`query_nodes`], in an index of relationships.
pub(crate) fn query_relationships(
    g: &Graph<'_>,
    args: &[Value],
    filter: Option<&dyn Fn(EdgeId) -> bool>,
) -> Result<Vec<Vec<Value>>, QueryError> {
    const NAME: &str = "db.index.vector.queryRelationships";
    let (index, k, query) = query_args(NAME, args)?;
    let graph = g
        .read()
        .ok_or_else(|| QueryError::Unsupported(format!("{NAME} needs a graph")))?;
    let hits = plexus_vector_index::search_relationships(graph, index, &query, k, None, filter)
        .map_err(|e| search_error(index, e))?;
    let mut out = Vec::with_capacity(hits.len());
    for h in hits {
        // The index saw the relationship in this snapshot: it is there.
        if let Some(e) = graph.edge(h.edge)? {
            out.push(vec![rel(h.edge, e.src, e.dst), Value::Float(h.score)]);
        }
    }
    Ok(out)
}

/// `db.create.setNodeVectorProperty(node, key, vector)`: sets the
/// property to the vector, checked to be a list of finite numbers.
pub(crate) fn set_node_vector_property(
    g: &mut Graph<'_>,
    args: &[Value],
) -> Result<Vec<Vec<Value>>, QueryError> {
    const NAME: &str = "db.create.setNodeVectorProperty";
    let node = match &args[0] {
        Value::Node(n) => NodeId(n.id),
        Value::Null => return Ok(vec![]),
        other => {
            return Err(QueryError::type_error(format!(
                "argument `node` of {NAME} must be a node, not {}",
                other.value_type()
            )))
        }
    };
    let (t, key, value) = vector_property(NAME, g, args)?;
    t.set_node_property(node, &key, value)?;
    Ok(vec![])
}

/// `db.create.setRelationshipVectorProperty(relationship, key, vector)`:
/// as [`set_node_vector_property`], on a relationship.
pub(crate) fn set_relationship_vector_property(
    g: &mut Graph<'_>,
    args: &[Value],
) -> Result<Vec<Vec<Value>>, QueryError> {
    const NAME: &str = "db.create.setRelationshipVectorProperty";
    let edge = match &args[0] {
        Value::Relationship(r) => EdgeId(r.id),
        Value::Null => return Ok(vec![]),
        other => {
            return Err(QueryError::type_error(format!(
                "argument `relationship` of {NAME} must be a relationship, not {}",
                other.value_type()
            )))
        }
    };
    let (t, key, value) = vector_property(NAME, g, args)?;
    t.set_edge_property(edge, &key, value)?;
    Ok(vec![])
}

/// The writing transaction, key and vector value of a procedure that sets
/// a vector property (arguments: the entity, the key, the vector).
fn vector_property<'g, 't>(
    name: &str,
    g: &'g mut Graph<'t>,
    args: &[Value],
) -> Result<(&'g mut WriteTxn, String, Value), QueryError> {
    let key = match &args[1] {
        Value::String(s) if !s.is_empty() => s.clone(),
        other => {
            return Err(argument(format!(
                "{name} needs a property key (a non-empty string), not {other}"
            )))
        }
    };
    let v = floats(&args[2], &format!("argument `vector` of {name}"))?;
    let value = Value::List(v.into_iter().map(|x| Value::Float(f64::from(x))).collect());
    let Graph::Write(t) = g else {
        return Err(QueryError::Unsupported(format!(
            "{name} writes, in a read-only query"
        )));
    };
    Ok((&mut **t, key, value))
}

/// The numbers of a list, for the similarity functions.
fn numbers(name: &str, v: &Value) -> Result<Vec<f64>, QueryError> {
    let Value::List(items) = v else {
        return Err(QueryError::type_error(format!(
            "{name}() takes two lists of numbers, not a {}",
            v.value_type()
        )));
    };
    items
        .iter()
        .map(|x| match x {
            Value::Int(i) => Ok(*i as f64),
            Value::Float(f) => Ok(*f),
            other => Err(QueryError::type_error(format!(
                "{name}() takes lists of numbers; this one holds a {}",
                other.value_type()
            ))),
        })
        .collect()
}

/// `vector.similarity.cosine(a, b)` and `vector.similarity.euclidean(a,
/// b)`, scored as the vector index scores (Neo4j's definitions): cosine
/// `(1 + cos) / 2`, Euclidean `1 / (1 + d²)`. Null with a null argument,
/// or a zero vector under cosine.
pub fn similarity(name: &str, a: &Value, b: &Value) -> Result<Value, QueryError> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let (x, y) = (numbers(name, a)?, numbers(name, b)?);
    if x.len() != y.len() || x.is_empty() {
        return Err(argument(format!(
            "{name}() takes two vectors of the same, non-zero length, not {} and {}",
            x.len(),
            y.len()
        )));
    }
    let score = if name.eq_ignore_ascii_case("vector.similarity.cosine") {
        let dot: f64 = x.iter().zip(&y).map(|(p, q)| p * q).sum();
        let norms = x.iter().map(|p| p * p).sum::<f64>().sqrt()
            * y.iter().map(|q| q * q).sum::<f64>().sqrt();
        if norms == 0.0 || !norms.is_finite() {
            return Ok(Value::Null);
        }
        (1.0 + (dot / norms).clamp(-1.0, 1.0)) / 2.0
    } else {
        let d2: f64 = x.iter().zip(&y).map(|(p, q)| (p - q) * (p - q)).sum();
        1.0 / (1.0 + d2)
    };
    if score.is_finite() {
        Ok(Value::Float(score))
    } else {
        Err(argument(format!(
            "{name}(): the vectors are too large to compare"
        )))
    }
}

/// A lookup that gives the candidates a pushed-down `WHERE` allows: a
/// conjunct `node.key = e` (a property index on `key`) or `e IN
/// node.key` (a list-element index), with `e` not reading the node.
pub(crate) enum Lookup<'e> {
    Equals(&'e str, &'e Expr),
    Element(&'e str, &'e Expr),
}

/// The first conjunct of `where_` that an index lookup can answer.
pub(crate) fn lookup<'e>(where_: &'e Expr, node: &str) -> Vec<Lookup<'e>> {
    let key_of = |e: &'e Expr| match &e.kind {
        ExprKind::Property(b, key) if matches!(&b.kind, ExprKind::Var(v) if v == node) => {
            Some(key.as_str())
        }
        _ => None,
    };
    match &where_.kind {
        ExprKind::Binary(plexus_cypher::BinOp::And, a, b) => {
            let mut out = lookup(a, node);
            out.extend(lookup(b, node));
            out
        }
        ExprKind::Binary(plexus_cypher::BinOp::Eq, a, b) => match (key_of(a), key_of(b)) {
            (Some(k), _) if free_of(b, node) => vec![Lookup::Equals(k, b)],
            (_, Some(k)) if free_of(a, node) => vec![Lookup::Equals(k, a)],
            _ => vec![],
        },
        ExprKind::Binary(plexus_cypher::BinOp::In, e, list) => match key_of(list) {
            Some(k) if free_of(e, node) => vec![Lookup::Element(k, e)],
            _ => vec![],
        },
        _ => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(xs: &[f64]) -> Value {
        Value::List(xs.iter().map(|x| Value::Float(*x)).collect())
    }

    #[test]
    fn similarities_as_neo4j_defines_them() {
        let cos = "vector.similarity.cosine";
        let euc = "vector.similarity.euclidean";
        assert_eq!(
            similarity(cos, &list(&[1.0, 0.0]), &list(&[2.0, 0.0])).unwrap(),
            Value::Float(1.0)
        );
        assert_eq!(
            similarity(cos, &list(&[1.0, 0.0]), &list(&[-1.0, 0.0])).unwrap(),
            Value::Float(0.0)
        );
        assert_eq!(
            similarity(euc, &list(&[0.0, 0.0]), &list(&[1.0, 1.0])).unwrap(),
            Value::Float(1.0 / 3.0)
        );
        assert_eq!(
            similarity(cos, &list(&[0.0]), &list(&[1.0])).unwrap(),
            Value::Null
        );
        assert_eq!(
            similarity(cos, &Value::Null, &list(&[1.0])).unwrap(),
            Value::Null
        );
        assert!(similarity(cos, &list(&[1.0]), &list(&[1.0, 2.0])).is_err());
        assert!(similarity(euc, &Value::String("x".into()), &list(&[1.0])).is_err());
        // Infinitely far scores 0; infinities compared give no number.
        assert_eq!(
            similarity(euc, &list(&[1e300]), &list(&[-1e300])).unwrap(),
            Value::Float(0.0)
        );
        assert!(similarity(euc, &list(&[f64::INFINITY]), &list(&[f64::INFINITY])).is_err());
    }
}
