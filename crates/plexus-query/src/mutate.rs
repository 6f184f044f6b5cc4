//! The updating clauses: CREATE, MERGE's create half, SET, REMOVE and
//! DELETE, applied row by row to a write transaction.
//!
//! Expressions are evaluated against the transaction first (so they see the
//! query's earlier writes) and the write follows; a failing query leaves
//! nothing behind because the caller drops the transaction.

use crate::error::QueryError;
use crate::eval::{eval, Ctx, Row};
use crate::graph;
use plexus_common::Value;
use plexus_cypher::{Expr, ExprKind, LabelExpr, PathPattern, RelDirection, RemoveItem, SetItem};
use plexus_storage::{DeleteMode, EdgeId, GraphRead, NodeId, Props, WriteTxn};
use std::collections::BTreeMap;

type Res<T> = Result<T, QueryError>;
pub type Params = BTreeMap<String, Value>;

/// What a write clause evaluates its expressions with.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    pub params: &'a Params,
    pub guard: &'a crate::limits::Guard,
}

fn eval_in(txn: &WriteTxn, env: &Env<'_>, e: &Expr, row: &Row) -> Res<Value> {
    eval(e, row, &Ctx::with_graph(env.params, txn, env.guard))
}

/// A pattern's inline property map, evaluated; nulls are dropped (a null
/// property does not exist).
fn props_of(txn: &WriteTxn, env: &Env<'_>, e: &Option<Box<Expr>>, row: &Row) -> Res<Props> {
    let mut out = Props::new();
    if let Some(e) = e {
        if let ExprKind::Map(entries) = &e.kind {
            for (k, x) in entries {
                let v = eval_in(txn, env, x, row)?;
                check_storable(&v)?;
                if !v.is_null() {
                    out.insert(k.clone(), v);
                }
            }
        } else {
            match eval_in(txn, env, e, row)? {
                Value::Map(m) => {
                    for (k, v) in m {
                        check_storable(&v)?;
                        if !v.is_null() {
                            out.insert(k, v);
                        }
                    }
                }
                other => {
                    return Err(QueryError::type_error(format!(
                        "properties must be a map, not {}",
                        other.value_type()
                    )))
                }
            }
        }
    }
    Ok(out)
}

fn check_storable(v: &Value) -> Res<()> {
    let bad_list = matches!(v, Value::List(items) if items.iter().any(|i| matches!(i, Value::List(_) | Value::Map(_))));
    if !v.is_storable() || matches!(v, Value::Map(_)) || bad_list {
        return Err(QueryError::Type {
            code: "InvalidPropertyType",
            message: format!("a {} cannot be stored as a property value", v.value_type()),
        });
    }
    Ok(())
}

fn label_names(e: &Option<LabelExpr>) -> Res<Vec<&str>> {
    fn go<'e>(e: &'e LabelExpr, out: &mut Vec<&'e str>) -> Res<()> {
        match e {
            LabelExpr::Name(n) => out.push(n),
            LabelExpr::And(parts) => parts.iter().try_for_each(|p| go(p, out))?,
            _ => {
                return Err(QueryError::Compile {
                    code: "InvalidLabelExpression",
                    message: "only `:A:B` label lists can be created".into(),
                })
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    if let Some(e) = e {
        go(e, &mut out)?;
    }
    Ok(out)
}

/// Refuses to create a MERGE pattern with a property that is null: no later
/// MERGE could match what it wrote (Neo4j's `MergeReadOwnWrites`).
pub fn merge_refuses_nulls(
    txn: &WriteTxn,
    env: &Env<'_>,
    pattern: &PathPattern,
    row: &Row,
) -> Res<()> {
    let el = &pattern.element;
    let maps = std::iter::once(&el.start.props)
        .chain(el.chain.iter().flat_map(|(r, n)| [&r.props, &n.props]))
        .flatten();
    for m in maps {
        let ExprKind::Map(entries) = &m.kind else {
            continue;
        };
        for (k, x) in entries {
            if eval_in(txn, env, x, row)?.is_null() {
                return Err(QueryError::Semantic {
                    code: "MergeReadOwnWrites",
                    message: format!("MERGE cannot match or create a null property ({k})"),
                });
            }
        }
    }
    Ok(())
}

/// Creates what `patterns` describe that `row` does not bind yet, binding
/// the new variables in `row`.
pub fn create(
    txn: &mut WriteTxn,
    env: &Env<'_>,
    patterns: &[PathPattern],
    row: &mut Row,
) -> Res<()> {
    for p in patterns {
        let el = &p.element;
        let mut nodes = vec![create_node(txn, env, &el.start, row)?];
        let mut rels = Vec::new();
        for (rp, np) in &el.chain {
            let from = *nodes.last().unwrap_or(&NodeId(0));
            let to = create_node(txn, env, np, row)?;
            let rel_type = match &rp.types {
                Some(LabelExpr::Name(t)) => t.clone(),
                _ => {
                    return Err(QueryError::Compile {
                        code: "NoSingleRelationshipType",
                        message: "a relationship is created with exactly one type".into(),
                    })
                }
            };
            // Only MERGE gets here with no direction (the binder refuses
            // it in CREATE): it creates the relationship as written, left
            // to right, as Neo4j does.
            let (s, e) = match rp.direction {
                RelDirection::Right | RelDirection::Either => (from, to),
                RelDirection::Left => (to, from),
            };
            let props = props_of(txn, env, &rp.props, row)?;
            let id = txn.create_edge(None, s, e, &rel_type, &props)?;
            let r = graph::rel_value(id, s, e);
            if let Some(var) = &rp.var {
                row.insert(
                    var.clone(),
                    Value::Relationship(std::sync::Arc::new(r.clone())),
                );
            }
            rels.push(r);
            nodes.push(to);
        }
        if let Some(var) = &p.var {
            let nodes = nodes.into_iter().map(graph::node_value).collect();
            row.insert(
                var.clone(),
                Value::Path(std::sync::Arc::new(plexus_common::PathValue {
                    nodes,
                    rels,
                })),
            );
        }
    }
    Ok(())
}

fn create_node(
    txn: &mut WriteTxn,
    env: &Env<'_>,
    np: &plexus_cypher::NodePattern,
    row: &mut Row,
) -> Res<NodeId> {
    if let Some(var) = &np.var {
        match row.get(var) {
            Some(Value::Node(n)) => return Ok(NodeId(n.id)),
            Some(Value::Null) => {
                return Err(QueryError::Semantic {
                    code: "CreateNullNode",
                    message: format!("`{var}` is null; a relationship needs a node"),
                })
            }
            Some(other) => {
                return Err(QueryError::type_error(format!(
                    "`{var}` is a {}, not a node",
                    other.value_type()
                )))
            }
            None => {}
        }
    }
    let labels = label_names(&np.labels)?;
    let props = props_of(txn, env, &np.props, row)?;
    let id = txn.create_node(None, &labels, &props)?;
    if let Some(var) = &np.var {
        row.insert(var, graph::node(id));
    }
    Ok(id)
}

enum Entity {
    Node(NodeId),
    Rel(EdgeId),
}

fn entity(v: &Value) -> Res<Option<Entity>> {
    match v {
        Value::Null => Ok(None),
        Value::Node(n) => Ok(Some(Entity::Node(NodeId(n.id)))),
        Value::Relationship(r) => Ok(Some(Entity::Rel(EdgeId(r.id)))),
        other => Err(QueryError::type_error(format!(
            "expected a node or relationship, got {}",
            other.value_type()
        ))),
    }
}

fn set_prop(txn: &mut WriteTxn, target: &Entity, key: &str, v: Value) -> Res<()> {
    match target {
        Entity::Node(n) => txn.set_node_property(*n, key, v)?,
        Entity::Rel(r) => txn.set_edge_property(*r, key, v)?,
    }
    Ok(())
}

fn all_props(txn: &WriteTxn, e: &Entity) -> Res<Props> {
    Ok(match e {
        Entity::Node(n) => txn.node(*n)?.map(|n| n.props).unwrap_or_default(),
        Entity::Rel(r) => txn.edge(*r)?.map(|e| e.props).unwrap_or_default(),
    })
}

/// SET items, in order, for one row.
pub fn set(txn: &mut WriteTxn, env: &Env<'_>, items: &[SetItem], row: &Row) -> Res<()> {
    for item in items {
        match item {
            SetItem::Property { target, value } => {
                let ExprKind::Property(base, key) = &target.kind else {
                    return Err(QueryError::Compile {
                        code: "InvalidSetTarget",
                        message: "SET takes `x.key = value`".into(),
                    });
                };
                let b = eval_in(txn, env, base, row)?;
                let v = eval_in(txn, env, value, row)?;
                if let Some(e) = entity(&b)? {
                    if !v.is_null() {
                        check_storable(&v)?;
                    }
                    set_prop(txn, &e, key, v)?;
                }
            }
            SetItem::Replace { var, value, merge } => {
                let Some(target) = entity(row.get(var).unwrap_or(&Value::Null))? else {
                    continue;
                };
                let new: Props = match eval_in(txn, env, value, row)? {
                    Value::Map(m) => m.into_iter().collect(),
                    v @ (Value::Node(_) | Value::Relationship(_)) => match entity(&v)? {
                        Some(src) => all_props(txn, &src)?,
                        None => Props::new(),
                    },
                    Value::Null if *merge => continue,
                    other => {
                        return Err(QueryError::type_error(format!(
                            "SET {var} = takes a map, not {}",
                            other.value_type()
                        )))
                    }
                };
                if !merge {
                    for k in all_props(txn, &target)?.into_keys() {
                        if !new.contains_key(&k) {
                            set_prop(txn, &target, &k, Value::Null)?;
                        }
                    }
                }
                for (k, v) in new {
                    if !v.is_null() {
                        check_storable(&v)?;
                    }
                    set_prop(txn, &target, &k, v)?;
                }
            }
            SetItem::Labels { var, labels } => {
                if let Some(Entity::Node(n)) = entity(row.get(var).unwrap_or(&Value::Null))? {
                    for l in labels {
                        txn.add_label(n, l)?;
                    }
                }
            }
            SetItem::DynamicLabels { var, labels } => {
                if let Some(Entity::Node(n)) = entity(row.get(var).unwrap_or(&Value::Null))? {
                    for l in dynamic_labels(txn, env, labels, row)? {
                        txn.add_label(n, &l)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The labels `$(…)` expressions give: each a string or a list of strings.
fn dynamic_labels(txn: &WriteTxn, env: &Env<'_>, exprs: &[Expr], row: &Row) -> Res<Vec<String>> {
    let mut out = Vec::new();
    let bad = |v: &Value| {
        QueryError::type_error(format!(
            "a dynamic label must be a non-empty string or a list of them, not {v}"
        ))
    };
    for e in exprs {
        match eval_in(txn, env, e, row)? {
            Value::String(s) if !s.is_empty() => out.push(s),
            Value::List(items) => {
                for v in items {
                    match v {
                        Value::String(s) if !s.is_empty() => out.push(s),
                        other => return Err(bad(&other)),
                    }
                }
            }
            other => return Err(bad(&other)),
        }
    }
    Ok(out)
}

/// REMOVE items for one row.
pub fn remove(txn: &mut WriteTxn, env: &Env<'_>, items: &[RemoveItem], row: &Row) -> Res<()> {
    for item in items {
        match item {
            RemoveItem::Property(target) => {
                let ExprKind::Property(base, key) = &target.kind else {
                    continue;
                };
                if let Some(e) = entity(&eval_in(txn, env, base, row)?)? {
                    set_prop(txn, &e, key, Value::Null)?;
                }
            }
            RemoveItem::Labels { var, labels } => {
                if let Some(Entity::Node(n)) = entity(row.get(var).unwrap_or(&Value::Null))? {
                    for l in labels {
                        txn.remove_label(n, l)?;
                    }
                }
            }
            RemoveItem::DynamicLabels { var, labels } => {
                if let Some(Entity::Node(n)) = entity(row.get(var).unwrap_or(&Value::Null))? {
                    for l in dynamic_labels(txn, env, labels, row)? {
                        txn.remove_label(n, &l)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// DELETE over all rows of the clause: relationships first, then nodes,
/// so `DELETE n, r` works whatever the order written.
pub fn delete(
    txn: &mut WriteTxn,
    env: &Env<'_>,
    exprs: &[Expr],
    detach: bool,
    rows: &[Row],
) -> Res<()> {
    let mut nodes = Vec::new();
    let mut rels = Vec::new();
    for row in rows {
        for e in exprs {
            collect_deletes(eval_in(txn, env, e, row)?, &mut nodes, &mut rels)?;
        }
    }
    for r in rels {
        txn.delete_edge(r)?;
    }
    let mode = if detach {
        DeleteMode::Detach
    } else {
        DeleteMode::Refuse
    };
    // At once: an edge between two of them is taken out of neither's
    // adjacency (`WriteTxn::delete_nodes`).
    txn.delete_nodes(&nodes, mode)?;
    Ok(())
}

fn collect_deletes(v: Value, nodes: &mut Vec<NodeId>, rels: &mut Vec<EdgeId>) -> Res<()> {
    match v {
        Value::Null => {}
        Value::Node(n) => nodes.push(NodeId(n.id)),
        Value::Relationship(r) => rels.push(EdgeId(r.id)),
        Value::Path(p) => {
            rels.extend(p.rels.iter().map(|r| EdgeId(r.id)));
            nodes.extend(p.nodes.iter().map(|n| NodeId(n.id)));
        }
        Value::List(items) => {
            for i in items {
                collect_deletes(i, nodes, rels)?;
            }
        }
        other => {
            return Err(QueryError::type_error(format!(
                "DELETE takes nodes, relationships or paths, not {}",
                other.value_type()
            )))
        }
    }
    Ok(())
}
