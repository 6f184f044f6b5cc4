//! The schema commands: CREATE/DROP INDEX and CONSTRAINT, SHOW INDEXES
//! and SHOW CONSTRAINTS, on the storage's own indexes and constraints.

use crate::error::QueryError;
use crate::exec::Table;
use plexus_common::Value;
use plexus_cypher::Statement;
use plexus_storage::{
    ConstraintKind, ConstraintSpec, GraphRead, IndexKind, IndexSpec, StorageError, WriteTxn,
};

fn done(what: &str, name: String) -> Table {
    Table {
        columns: vec!["result".into(), "name".into()],
        rows: vec![vec![Value::String(what.into()), Value::String(name)]],
    }
}

/// Applies a schema change in the transaction.
pub fn apply(txn: &mut WriteTxn, st: &Statement) -> Result<Table, QueryError> {
    match st {
        Statement::CreateIndex {
            name,
            label,
            key,
            if_not_exists,
        } => {
            let same = txn.indexes()?.into_iter().find(|i| {
                name.as_ref().is_some_and(|n| *n == i.name)
                    || (i.label.as_deref() == Some(label)
                        && i.key == *key
                        && i.kind == IndexKind::Property)
            });
            if let (true, Some(i)) = (*if_not_exists, &same) {
                return Ok(done("exists", i.name.clone()));
            }
            let mut spec = IndexSpec::property(label, key);
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

/// SHOW INDEXES / SHOW CONSTRAINTS.
pub fn show(g: &dyn GraphRead, constraints: bool) -> Result<Table, QueryError> {
    let s = |x: &str| Value::String(x.to_string());
    if constraints {
        return Ok(Table {
            columns: ["name", "label", "property", "type"]
                .map(String::from)
                .to_vec(),
            rows: g
                .constraints()?
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
                .collect(),
        });
    }
    Ok(Table {
        columns: ["name", "label", "property", "type", "unique", "state"]
            .map(String::from)
            .to_vec(),
        rows: g
            .indexes()?
            .into_iter()
            .map(|i| {
                vec![
                    s(&i.name),
                    i.label.as_deref().map_or(Value::Null, s),
                    s(&i.key),
                    s(match i.kind {
                        IndexKind::Property => "PROPERTY",
                        IndexKind::ListElement => "LIST ELEMENT",
                    }),
                    Value::Bool(i.unique),
                    s(if i.stale { "STALE" } else { "ONLINE" }),
                ]
            })
            .collect(),
    })
}
