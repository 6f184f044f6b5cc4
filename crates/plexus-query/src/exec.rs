//! The row pipeline for queries that need no graph.

use crate::error::QueryError;
use crate::eval::{equals, eval, is_aggregate, order, visit_aggregates, Ctx, Row};
use plexus_common::Value;
use plexus_cypher::{Clause, Expr, ExprKind, Projection, SingleQuery};
use std::collections::{BTreeMap, HashMap};

/// A query's result: column names and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

/// Runs a query against an empty graph: MATCH finds nothing, OPTIONAL MATCH
/// binds nulls; clauses that write are not supported yet.
pub fn run_standalone(text: &str, params: &BTreeMap<String, Value>) -> Result<Table, QueryError> {
    let q = plexus_cypher::parse(text)?;
    crate::binder::check(&q)?;
    let ctx = Ctx {
        params,
        aggregates: None,
    };
    let mut table = single(&q.first, &ctx)?;
    for (all, part) in &q.unions {
        let t = single(part, &ctx)?;
        if t.columns != table.columns {
            return Err(QueryError::Semantic {
                code: "DifferentColumnsInUnion",
                message: "all parts of a UNION must return the same columns".into(),
            });
        }
        table.rows.extend(t.rows);
        if !all {
            dedupe(&mut table.rows);
        }
    }
    if !q.unions.is_empty() && q.unions.iter().all(|(all, _)| !all) {
        dedupe(&mut table.rows);
    }
    Ok(table)
}

fn same_row(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x == y
                || (x.is_null() && y.is_null())
                || equals(x, y) == Some(true) && x.value_type() == y.value_type()
        })
}

fn dedupe(rows: &mut Vec<Vec<Value>>) {
    let mut out: Vec<Vec<Value>> = Vec::with_capacity(rows.len());
    for r in rows.drain(..) {
        if !out.iter().any(|o| same_row(o, &r)) {
            out.push(r);
        }
    }
    *rows = out;
}

fn single(q: &SingleQuery, ctx: &Ctx<'_>) -> Result<Table, QueryError> {
    let mut rows: Vec<Row> = vec![Row::new()];
    let mut result = None;
    for clause in &q.clauses {
        match clause {
            Clause::Unwind { expr, alias, .. } => {
                let mut next = Vec::new();
                for r in rows {
                    match eval(expr, &r, ctx)? {
                        Value::Null => {}
                        Value::List(items) => {
                            for it in items {
                                let mut n = r.clone();
                                n.insert(alias.clone(), it);
                                next.push(n);
                            }
                        }
                        v => {
                            let mut n = r.clone();
                            n.insert(alias.clone(), v);
                            next.push(n);
                        }
                    }
                }
                rows = next;
            }
            Clause::Match {
                optional, patterns, ..
            } => {
                if *optional {
                    for r in &mut rows {
                        for p in patterns {
                            for v in pattern_vars(p) {
                                r.entry(v).or_insert(Value::Null);
                            }
                        }
                    }
                } else {
                    rows.clear();
                }
            }
            Clause::With(p) => {
                let (_, projected) = project(&rows, p, ctx)?;
                rows = projected;
                if let Some(w) = &p.where_ {
                    let mut kept = Vec::new();
                    for r in rows {
                        if eval(w, &r, ctx)? == Value::Bool(true) {
                            kept.push(r);
                        }
                    }
                    rows = kept;
                }
            }
            Clause::Return(p) => {
                let (columns, projected) = project(&rows, p, ctx)?;
                let rows = projected
                    .into_iter()
                    .map(|r| {
                        columns
                            .iter()
                            .map(|c| r.get(c).cloned().unwrap_or(Value::Null))
                            .collect()
                    })
                    .collect();
                result = Some(Table { columns, rows });
            }
            other => {
                return Err(QueryError::Unsupported(format!(
                    "clause at {}..{}",
                    other.span().start,
                    other.span().end
                )))
            }
        }
    }
    Ok(result.unwrap_or(Table {
        columns: vec![],
        rows: vec![],
    }))
}

fn pattern_vars(p: &plexus_cypher::PathPattern) -> Vec<String> {
    let mut out: Vec<String> = p.var.iter().cloned().collect();
    out.extend(p.element.start.var.clone());
    for (r, n) in &p.element.chain {
        out.extend(r.var.clone());
        out.extend(n.var.clone());
    }
    out
}

fn has_aggregate(e: &Expr) -> bool {
    let mut found = false;
    visit_aggregates(e, &mut |_| found = true);
    found
}

/// Projects rows through WITH/RETURN: items, aggregation, DISTINCT, ORDER BY, SKIP, LIMIT.
fn project(
    rows: &[Row],
    p: &Projection,
    ctx: &Ctx<'_>,
) -> Result<(Vec<String>, Vec<Row>), QueryError> {
    let mut columns: Vec<String> = Vec::new();
    if p.star {
        let mut names: Vec<String> = rows
            .first()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default();
        names.sort();
        columns.extend(names);
    }
    let names: Vec<String> = p
        .items
        .iter()
        .map(|i| i.alias.clone().unwrap_or_else(|| i.text.clone()))
        .collect();
    for n in &names {
        if columns.contains(n) && !p.star {
            return Err(QueryError::Semantic {
                code: "ColumnNameConflict",
                message: format!("column `{n}` appears twice"),
            });
        }
        columns.push(n.clone());
    }
    let aggregating = p.items.iter().any(|i| has_aggregate(&i.expr));
    // Each output row with the input row it came from (for ORDER BY on
    // variables that were not projected).
    let mut out: Vec<(Row, Row)> = Vec::new();
    if !aggregating {
        for r in rows {
            let mut o = Row::new();
            if p.star {
                o.extend(r.clone());
            }
            for (item, name) in p.items.iter().zip(&names) {
                o.insert(name.clone(), eval(&item.expr, r, ctx)?);
            }
            out.push((o, r.clone()));
        }
    } else {
        let keys: Vec<usize> = (0..p.items.len())
            .filter(|i| !has_aggregate(&p.items[*i].expr))
            .collect();
        let mut groups: Vec<(Vec<Value>, Vec<&Row>)> = Vec::new();
        for r in rows {
            let k = keys
                .iter()
                .map(|i| eval(&p.items[*i].expr, r, ctx))
                .collect::<Result<Vec<_>, _>>()?;
            match groups.iter_mut().find(|(g, _)| same_row(g, &k)) {
                Some((_, members)) => members.push(r),
                None => groups.push((k, vec![r])),
            }
        }
        if groups.is_empty() && keys.is_empty() {
            groups.push((vec![], vec![]));
        }
        for (k, members) in groups {
            let mut aggs = HashMap::new();
            for item in &p.items {
                let mut calls = Vec::new();
                visit_aggregates(&item.expr, &mut |e| calls.push(e));
                for c in calls {
                    aggs.insert(c as *const Expr as usize, aggregate(c, &members, ctx)?);
                }
            }
            let first = members.first().map(|r| (*r).clone()).unwrap_or_default();
            let actx = Ctx {
                params: ctx.params,
                aggregates: Some(&aggs),
            };
            let mut o = Row::new();
            let mut ki = k.into_iter();
            for (i, (item, name)) in p.items.iter().zip(&names).enumerate() {
                let v = if keys.contains(&i) {
                    ki.next().unwrap_or(Value::Null)
                } else {
                    eval(&item.expr, &first, &actx)?
                };
                o.insert(name.clone(), v);
            }
            out.push((o, Row::new()));
        }
    }
    if p.distinct {
        let mut kept: Vec<(Row, Row)> = Vec::new();
        for (o, r) in out {
            let vals: Vec<Value> = columns
                .iter()
                .map(|c| o.get(c).cloned().unwrap_or(Value::Null))
                .collect();
            if !kept.iter().any(|(k, _)| {
                same_row(
                    &columns
                        .iter()
                        .map(|c| k.get(c).cloned().unwrap_or(Value::Null))
                        .collect::<Vec<_>>(),
                    &vals,
                )
            }) {
                kept.push((o, r));
            }
        }
        out = kept;
    }
    if !p.order_by.is_empty() {
        let mut keyed = Vec::with_capacity(out.len());
        for (o, r) in out {
            let mut scope = if p.distinct || aggregating {
                Row::new()
            } else {
                r.clone()
            };
            scope.extend(o.clone());
            let keys = p
                .order_by
                .iter()
                .map(|s| eval(&s.expr, &scope, ctx))
                .collect::<Result<Vec<_>, _>>()?;
            keyed.push((keys, o, r));
        }
        keyed.sort_by(|a, b| {
            for (i, s) in p.order_by.iter().enumerate() {
                let o = order(&a.0[i], &b.0[i]);
                let o = if s.descending { o.reverse() } else { o };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        out = keyed.into_iter().map(|(_, o, r)| (o, r)).collect();
    }
    let bound = |e: &Option<Expr>, what: &str| -> Result<Option<usize>, QueryError> {
        match e {
            None => Ok(None),
            Some(x) => match eval(x, &Row::new(), ctx)? {
                Value::Int(i) if i >= 0 => Ok(Some(i as usize)),
                Value::Int(_) => Err(QueryError::Argument {
                    code: "NegativeIntegerArgument",
                    message: format!("{what} must not be negative"),
                }),
                v => Err(QueryError::Argument {
                    code: "InvalidArgumentType",
                    message: format!("{what} takes an integer, not {}", v.value_type()),
                }),
            },
        }
    };
    let skip = bound(&p.skip, "SKIP")?.unwrap_or(0);
    let limit = bound(&p.limit, "LIMIT")?.unwrap_or(usize::MAX);
    let rows = out
        .into_iter()
        .skip(skip)
        .take(limit)
        .map(|(o, _)| o)
        .collect();
    Ok((columns, rows))
}

fn aggregate(call: &Expr, rows: &[&Row], ctx: &Ctx<'_>) -> Result<Value, QueryError> {
    let (name, distinct, args) = match &call.kind {
        ExprKind::CountStar => return Ok(Value::Int(rows.len() as i64)),
        ExprKind::Call {
            name,
            distinct,
            args,
        } => (name.to_ascii_lowercase(), *distinct, args),
        _ => unreachable!("only aggregate calls are passed"),
    };
    debug_assert!(is_aggregate(call));
    let arg = args.first().ok_or_else(|| QueryError::Semantic {
        code: "InvalidNumberOfArguments",
        message: format!("{name}() needs an argument"),
    })?;
    let mut vals = Vec::new();
    for r in rows {
        let v = eval(arg, r, ctx)?;
        if !v.is_null() {
            vals.push(v);
        }
    }
    if distinct {
        let mut d: Vec<Value> = Vec::new();
        for v in vals {
            if !d
                .iter()
                .any(|x| same_row(std::slice::from_ref(x), std::slice::from_ref(&v)))
            {
                d.push(v);
            }
        }
        vals = d;
    }
    let numbers = |vals: &[Value]| -> Result<Vec<f64>, QueryError> {
        vals.iter()
            .map(|v| match v {
                Value::Int(i) => Ok(*i as f64),
                Value::Float(f) => Ok(*f),
                other => Err(QueryError::type_error(format!(
                    "{name}() takes numbers, not {}",
                    other.value_type()
                ))),
            })
            .collect()
    };
    Ok(match name.as_str() {
        "count" => Value::Int(vals.len() as i64),
        "collect" => Value::List(vals),
        "sum" => {
            if vals.iter().all(|v| matches!(v, Value::Int(_))) {
                let mut s = 0i64;
                for v in &vals {
                    s = s
                        .checked_add(v.as_int().unwrap_or(0))
                        .ok_or_else(|| QueryError::Arithmetic("integer overflow".into()))?;
                }
                Value::Int(s)
            } else {
                Value::Float(numbers(&vals)?.iter().sum())
            }
        }
        "avg" => {
            let n = numbers(&vals)?;
            if n.is_empty() {
                Value::Null
            } else {
                Value::Float(n.iter().sum::<f64>() / n.len() as f64)
            }
        }
        "min" | "max" => {
            let mut best: Option<Value> = None;
            for v in vals {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let o = order(&v, &b);
                        let take = if name == "min" {
                            o == std::cmp::Ordering::Less
                        } else {
                            o == std::cmp::Ordering::Greater
                        };
                        if take {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            best.unwrap_or(Value::Null)
        }
        "stdev" | "stdevp" => {
            let n = numbers(&vals)?;
            let k = n.len() as f64;
            if n.len() < 2 && name == "stdev" || n.is_empty() {
                Value::Float(0.0)
            } else {
                let mean = n.iter().sum::<f64>() / k;
                let ss: f64 = n.iter().map(|x| (x - mean).powi(2)).sum();
                Value::Float((ss / if name == "stdev" { k - 1.0 } else { k }).sqrt())
            }
        }
        _ => return Err(QueryError::Unsupported(format!("aggregation {name}()"))),
    })
}
