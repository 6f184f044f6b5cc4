//! The schema commands: CREATE/DROP INDEX and CONSTRAINT, SHOW INDEXES
//! and SHOW CONSTRAINTS, on the storage's own indexes and constraints.

use crate::error::QueryError;
use crate::eval::Ctx;
use crate::exec::Table;
use crate::limits::Guard;
use std::collections::BTreeMap;
type Params = BTreeMap<String, Value>;
use plexus_common::Value;
use plexus_cypher::{IndexType, Statement};
use plexus_storage::{
    ConstraintKind, ConstraintSpec, GraphRead, IndexKind, IndexSpec, StorageError, WriteTxn,
};

fn done(what: &str, name: String) -> Table {
    Table {
        columns: vec!["result".into(), "name".into()],
        rows: vec![vec![Value::String(what.into()), Value::String(name)]],
    }
}

fn bad_option(message: String) -> QueryError {
    QueryError::Argument {
        code: "InvalidArgumentValue",
        message,
    }
}

/// The options of `CREATE … INDEX … OPTIONS {indexConfig: {…}}` as
/// storage takes them: the `indexConfig` entries (Neo4j's other option,
/// `indexProvider`, names an implementation and is ignored).
fn index_options(
    options: Option<&plexus_cypher::Expr>,
    params: &Params,
    guard: &Guard,
) -> Result<Vec<(String, Value)>, QueryError> {
    let Some(e) = options else {
        return Ok(vec![]);
    };
    let ctx = Ctx::without_graph(params, guard);
    let Value::Map(m) = crate::eval::eval(e, &Default::default(), &ctx)? else {
        return Err(bad_option("OPTIONS takes a map".into()));
    };
    let mut out = Vec::new();
    for (k, v) in m {
        match (k.as_str(), v) {
            ("indexConfig", Value::Map(config)) => out.extend(config),
            ("indexConfig", Value::Null) | ("indexProvider", _) => {}
            ("indexConfig", other) => {
                return Err(bad_option(format!(
                    "OPTIONS indexConfig takes a map, not {other}"
                )))
            }
            (other, _) => {
                return Err(bad_option(format!(
                    "unknown index option `{other}` (known: indexConfig, indexProvider)"
                )))
            }
        }
    }
    Ok(out)
}

/// Applies a schema change in the transaction.
pub fn apply(
    txn: &mut WriteTxn,
    st: &Statement,
    params: &Params,
    guard: &Guard,
) -> Result<Table, QueryError> {
    match st {
        Statement::CreateIndex {
            name,
            label,
            relationship,
            key,
            if_not_exists,
            vector,
            each,
            options,
        } => {
            let kind = match (*vector, *each) {
                (true, _) => IndexKind::Vector,
                (false, true) => IndexKind::ListElement,
                (false, false) => IndexKind::Property,
            };
            let kind = if *relationship {
                kind.for_relationships()
            } else {
                kind
            };
            let same = txn.indexes()?.into_iter().find(|i| {
                name.as_ref().is_some_and(|n| *n == i.name)
                    || (i.label == *label && i.key == *key && i.kind == kind)
            });
            if let (true, Some(i)) = (*if_not_exists, &same) {
                return Ok(done("exists", i.name.clone()));
            }
            let options = index_options(options.as_ref(), params, guard)?;
            // A relationship index's label is its type (none: every type).
            let mut spec = IndexSpec {
                name: None,
                label: label.clone(),
                key: key.clone(),
                kind,
                value_type: None,
                options,
            };
            if let Some(n) = name {
                spec = spec.named(n);
            }
            Ok(done("created", txn.create_index(spec)?))
        }
        Statement::CreateConstraint {
            name,
            label,
            key,
            unique,
            if_not_exists,
        } => {
            let kind = if *unique {
                ConstraintKind::Unique
            } else {
                ConstraintKind::NotNull
            };
            let same = txn.constraints()?.into_iter().find(|c| {
                name.as_ref().is_some_and(|n| *n == c.name)
                    || (c.label == *label && c.key == *key && c.kind == kind)
            });
            if let (true, Some(c)) = (*if_not_exists, &same) {
                return Ok(done("exists", c.name.clone()));
            }
            Ok(done(
                "created",
                txn.create_constraint(ConstraintSpec {
                    name: name.clone(),
                    label: label.clone(),
                    key: key.clone(),
                    kind,
                })?,
            ))
        }
        Statement::Drop {
            constraint,
            name,
            if_exists,
        } => {
            let r = if *constraint {
                txn.drop_constraint(name)
            } else {
                txn.drop_index(name)
            };
            match r {
                Ok(()) => Ok(done("dropped", name.clone())),
                Err(StorageError::NoIndex(_) | StorageError::NotFound { .. }) if *if_exists => {
                    Ok(done("absent", name.clone()))
                }
                Err(e) => Err(e.into()),
            }
        }
        _ => Err(QueryError::Unsupported("not a schema command".into())),
    }
}

/// The columns of SHOW CONSTRAINTS.
pub(crate) const CONSTRAINT_COLUMNS: &[&str] = &["name", "label", "property", "type"];

/// The columns of SHOW [VECTOR] INDEXES: Neo4j's names where they exist
/// (`labelsOrTypes`, `properties`, `options`), so clients that read them
/// work.
pub(crate) const INDEX_COLUMNS: &[&str] = &[
    "name",
    "state",
    "type",
    "entityType",
    "labelsOrTypes",
    "properties",
    "unique",
    "options",
];

/// SHOW CONSTRAINTS: a row per constraint, in [`CONSTRAINT_COLUMNS`]' order.
pub(crate) fn constraint_rows(g: &dyn GraphRead) -> Result<Vec<Vec<Value>>, QueryError> {
    let s = |x: &str| Value::String(x.to_string());
    Ok(g.constraints()?
        .into_iter()
        .map(|c| {
            vec![
                s(&c.name),
                s(&c.label),
                s(&c.key),
                s(match c.kind {
                    ConstraintKind::Unique => "UNIQUE",
                    ConstraintKind::NotNull => "NOT NULL",
                }),
            ]
        })
        .collect())
}

/// SHOW [<type>] INDEXES: a row per index (of the type `only` names, when
/// given), in [`INDEX_COLUMNS`]' order.
pub(crate) fn index_rows(
    g: &dyn GraphRead,
    only: Option<IndexType>,
) -> Result<Vec<Vec<Value>>, QueryError> {
    let s = |x: &str| Value::String(x.to_string());
    let type_of = |k: IndexKind| match k {
        IndexKind::Property | IndexKind::RelationshipProperty => "RANGE",
        IndexKind::ListElement | IndexKind::RelationshipListElement => "LIST ELEMENT",
        IndexKind::Vector | IndexKind::RelationshipVector => "VECTOR",
    };
    Ok(g.indexes()?
        .into_iter()
        .filter(|i| only.is_none_or(|t| t.name() == type_of(i.kind)))
        .map(|i| {
            let config: BTreeMap<String, Value> = i.options.iter().cloned().collect();
            let options = BTreeMap::from([("indexConfig".to_string(), Value::Map(config))]);
            vec![
                s(&i.name),
                s(if i.stale { "STALE" } else { "ONLINE" }),
                s(type_of(i.kind)),
                s(if i.kind.on_relationships() {
                    "RELATIONSHIP"
                } else {
                    "NODE"
                }),
                i.label
                    .as_deref()
                    .map_or(Value::Null, |l| Value::List(vec![s(l)])),
                Value::List(vec![s(&i.key)]),
                Value::Bool(i.unique),
                Value::Map(options),
            ]
        })
        .collect())
}
