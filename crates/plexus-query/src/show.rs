//! SHOW statements: the table each lists, and the query its tail runs.
//!
//! `SHOW VECTOR INDEXES YIELD name, options WHERE name = $n RETURN …` is
//! what neo4j-graphrag sends to learn an index's dimensions; Neo4j's
//! grammar lets every SHOW take `YIELD` (a WITH's projection: ORDER BY,
//! SKIP, LIMIT, WHERE) or a bare `WHERE`, then a `RETURN`. Rather than a
//! second evaluator for these, the tail becomes a query over the listed
//! rows, which arrive as a list parameter of maps:
//!
//! ```text
//! UNWIND $` shown` AS ` row`
//! WITH ` row`.name AS name, ` row`.state AS state, …   -- every column
//! WITH <the YIELD, or * for a bare WHERE>
//! RETURN <the RETURN, or the yielded columns>
//! ```
//!
//! so expressions, ordering, aggregation and errors are the engine's own,
//! and an error in the user's part points into the text they wrote (its
//! expressions keep their spans). The parameter and the row variable have
//! names with a space, which no unquoted name has.

use crate::error::QueryError;
use crate::exec::Table;
use plexus_common::Value;
use plexus_cypher::{
    Clause, Expr, ExprKind, Projection, ProjectionItem, Query, ShowTail, Shown, SingleQuery,
};
use plexus_storage::GraphRead;

/// The parameter that carries the listed rows into the tail's query.
pub(crate) const ROWS: &str = " shown";
const ROW: &str = " row";

/// The columns `what` lists, and how many of them (the first) it shows
/// without a YIELD; `YIELD *` gives them all.
pub(crate) fn columns(what: Shown) -> (&'static [&'static str], usize) {
    match what {
        Shown::Indexes { .. } => (
            crate::schema::INDEX_COLUMNS,
            crate::schema::INDEX_COLUMNS.len(),
        ),
        Shown::Constraints => (
            crate::schema::CONSTRAINT_COLUMNS,
            crate::schema::CONSTRAINT_COLUMNS.len(),
        ),
        Shown::Functions => (crate::functions::COLUMNS, crate::functions::SHOWN),
        Shown::Procedures => (crate::builtin::COLUMNS, crate::builtin::SHOWN),
    }
}

/// Every column of what `what` lists, on `g`; `None` when it needs a graph
/// and there is none.
pub(crate) fn table(what: Shown, g: Option<&dyn GraphRead>) -> Option<Result<Table, QueryError>> {
    let (cols, _) = columns(what);
    let rows = match (what, g) {
        (Shown::Functions, _) => Ok(by_name(crate::functions::rows())),
        (Shown::Procedures, _) => Ok(by_name(crate::builtin::rows())),
        (Shown::Constraints, Some(g)) => crate::schema::constraint_rows(g),
        (Shown::Indexes { only }, Some(g)) => crate::schema::index_rows(g, only),
        (_, None) => return None,
    };
    Some(rows.map(|rows| Table {
        columns: cols.iter().map(|c| c.to_string()).collect(),
        rows,
    }))
}

/// `rows`, whose first column is a name, in the order of the names
/// whatever their case, as Neo4j lists functions and procedures.
fn by_name(mut rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    rows.sort_by_cached_key(|r| match r.first() {
        Some(Value::String(name)) => name.to_ascii_lowercase(),
        _ => String::new(),
    });
    rows
}

/// `table` as a SHOW without a tail returns it: the columns shown by default.
pub(crate) fn by_default(what: Shown, mut table: Table) -> Table {
    let (_, shown) = columns(what);
    table.columns.truncate(shown);
    for r in &mut table.rows {
        r.truncate(shown);
    }
    table
}

/// The rows of `table` as the [`ROWS`] parameter: a list of maps.
pub(crate) fn rows_param(table: Table) -> Value {
    Value::List(
        table
            .rows
            .into_iter()
            .map(|r| Value::Map(table.columns.iter().cloned().zip(r).collect()))
            .collect(),
    )
}

/// The query `tail` runs over the rows `what` lists (see the module's
/// comment).
pub(crate) fn query(what: Shown, tail: &ShowTail) -> Query {
    let (cols, shown) = columns(what);
    let span = tail.yielded.span;
    let var = |name: &str| Expr {
        kind: ExprKind::Var(name.into()),
        span,
    };
    let item = |name: &str, expr: Expr| ProjectionItem {
        expr,
        alias: Some(name.into()),
        text: name.into(),
    };
    let unwind = Clause::Unwind {
        expr: Expr {
            kind: ExprKind::Param(ROWS.into()),
            span,
        },
        alias: ROW.into(),
        span,
    };
    let each = cols.iter().map(|c| {
        let value = ExprKind::Property(Box::new(var(ROW)), c.to_string());
        item(c, Expr { kind: value, span })
    });
    let bind = Clause::With(Projection::plain(false, each.collect(), span));
    let mut yielded = tail.yielded.clone();
    if yielded.star {
        // In the listing's order (a final star would sort them by name).
        yielded.star = false;
        let all = cols.iter().map(|c| item(c, var(c)));
        yielded.items = all.chain(yielded.items).collect();
    }
    let ret = match &tail.ret {
        Some(r) => r.clone(),
        None => {
            let names: Vec<&str> = match tail.explicit {
                true => yielded
                    .items
                    .iter()
                    .map(|i| i.alias.as_deref().unwrap_or(&i.text))
                    .collect(),
                false => cols[..shown].to_vec(),
            };
            Projection::plain(false, names.iter().map(|n| item(n, var(n))).collect(), span)
        }
    };
    let clauses = vec![unwind, bind, Clause::With(yielded), Clause::Return(ret)];
    Query {
        first: SingleQuery { clauses, span },
        unions: vec![],
        as_of: vec![],
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_cypher::{parse_statement, Statement};

    fn tail(text: &str) -> (Shown, ShowTail) {
        match parse_statement(text).unwrap() {
            Statement::Show {
                what,
                tail: Some(t),
            } => (what, *t),
            other => panic!("{other:?}"),
        }
    }

    fn names(p: &Projection) -> Vec<String> {
        p.items
            .iter()
            .map(|i| i.alias.clone().unwrap_or_else(|| i.text.clone()))
            .collect()
    }

    #[test]
    fn a_tail_reads_every_column_and_returns_what_it_yields() {
        let (what, t) = tail("SHOW FUNCTIONS WHERE aggregating");
        let q = query(what, &t);
        let [Clause::Unwind { .. }, Clause::With(bind), Clause::With(y), Clause::Return(r)] =
            &q.first.clauses[..]
        else {
            panic!("{:?}", q.first.clauses);
        };
        // Every column is bound, so a bare WHERE may read one not shown.
        assert_eq!(names(bind), crate::functions::COLUMNS);
        assert_eq!(names(y), crate::functions::COLUMNS);
        assert!(y.where_.is_some());
        assert_eq!(names(r), ["name", "category", "description"]);
        let (what, t) = tail("SHOW INDEXES YIELD *");
        let q = query(what, &t);
        let Some(Clause::Return(r)) = q.first.clauses.last() else {
            panic!()
        };
        assert_eq!(names(r), crate::schema::INDEX_COLUMNS);
        let (what, t) = tail("SHOW CONSTRAINTS YIELD type AS t, name");
        let Some(Clause::Return(r)) = query(what, &t).first.clauses.last().cloned() else {
            panic!()
        };
        assert_eq!(names(&r), ["t", "name"]);
    }

    #[test]
    fn without_a_yield_only_the_shown_columns_come() {
        let all = table(Shown::Functions, None).unwrap().unwrap();
        assert_eq!(all.columns.len(), crate::functions::COLUMNS.len());
        let shown = by_default(Shown::Functions, all.clone());
        assert_eq!(shown.columns, ["name", "category", "description"]);
        assert!(shown.rows.iter().all(|r| r.len() == 3));
        assert_eq!(shown.rows.len(), all.rows.len());
        // By name, whatever the case: `lTrim` between `log10` and `max`.
        let names: Vec<String> = shown.rows.iter().map(|r| r[0].to_string()).collect();
        let mut sorted = names.clone();
        sorted.sort_by_key(|n| n.to_ascii_lowercase());
        assert_eq!(names, sorted);
        assert!(table(Shown::Constraints, None).is_none());
        let Value::List(rows) = rows_param(all) else {
            panic!()
        };
        assert!(matches!(&rows[0], Value::Map(m) if m.len() == crate::functions::COLUMNS.len()));
    }
}
