//! Rewrites of a parsed query, before the binder checks it.
//!
//! After `WITH DISTINCT` or `RETURN DISTINCT` only the projected columns
//! remain, yet openCypher lets its WHERE and ORDER BY name a projected
//! expression as written (`WITH DISTINCT a.name AS name ORDER BY a.name`):
//! such an expression is the column. So it is replaced by the column's
//! name here, and everything after sees only columns.

use plexus_cypher::*;

/// Applies the rewrites to every part of `q`.
pub(crate) fn rewrite(q: &mut Query) {
    for part in q.parts_mut() {
        for c in &mut part.clauses {
            if let Clause::With(p) | Clause::Return(p) = c {
                distinct_columns(p);
            }
        }
    }
}

/// In a DISTINCT projection, the WHERE's and ORDER BY's copies of projected
/// expressions become the columns' names.
fn distinct_columns(p: &mut Projection) {
    if !p.distinct {
        return;
    }
    let items: Vec<(Expr, String)> = p
        .items
        .iter()
        .map(|i| {
            (
                i.expr.clone(),
                i.alias.clone().unwrap_or_else(|| i.text.clone()),
            )
        })
        .collect();
    for s in &mut p.order_by {
        crate::deep(|| to_columns(&mut s.expr, &items));
    }
    if let Some(w) = &mut p.where_ {
        crate::deep(|| to_columns(w, &items));
    }
}

/// Replaces each part of `e` written as one of `items`' expressions by a
/// reference to that item's column. Scopes of their own (comprehensions,
/// patterns, subqueries) are left as they are: a name there may mean
/// something else.
fn to_columns(e: &mut Expr, items: &[(Expr, String)]) {
    if let Some((_, name)) = items.iter().find(|(x, _)| x.same_as(e)) {
        e.kind = ExprKind::Var(name.clone());
        return;
    }
    let go = |x: &mut Expr| crate::deep(|| to_columns(x, items));
    match &mut e.kind {
        ExprKind::Property(x, _)
        | ExprKind::Unary(_, x)
        | ExprKind::IsNull(x, _)
        | ExprKind::HasLabels(x, _) => go(x),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            go(a);
            go(b);
        }
        ExprKind::Slice(a, b, c) => {
            go(a);
            b.iter_mut().chain(c.iter_mut()).for_each(|x| go(x));
        }
        ExprKind::List(items) | ExprKind::Call { args: items, .. } => items.iter_mut().for_each(go),
        ExprKind::Map(entries) => entries.iter_mut().for_each(|(_, x)| go(x)),
        ExprKind::Case {
            operand,
            whens,
            else_,
        } => {
            operand
                .iter_mut()
                .chain(else_.iter_mut())
                .for_each(|x| go(x));
            whens.iter_mut().for_each(|(a, b)| {
                go(a);
                go(b);
            });
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(q: &str) -> Query {
        let mut q = plexus_cypher::parse(q).expect("parses");
        rewrite(&mut q);
        q
    }

    fn projection(q: &Query, at: usize) -> &Projection {
        match &q.first.clauses[at] {
            Clause::With(p) | Clause::Return(p) => p,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_distinct_projection_names_its_columns_after_it() {
        let q = rewritten(
            "MATCH (a) WITH DISTINCT a.name AS name, a.age + 1 AS next \
             ORDER BY toUpper(a.name), a.age + 1 WHERE a.name <> 'x' RETURN name",
        );
        let p = projection(&q, 1);
        let var = |e: &Expr| match &e.kind {
            ExprKind::Var(v) => v.clone(),
            other => format!("{other:?}"),
        };
        let Some(ExprKind::Binary(BinOp::Neq, l, _)) = p.where_.as_ref().map(|w| &w.kind) else {
            panic!("{:?}", p.where_);
        };
        assert_eq!(var(l), "name");
        let ExprKind::Call { args, .. } = &p.order_by[0].expr.kind else {
            panic!("{:?}", p.order_by[0]);
        };
        assert_eq!(var(&args[0]), "name");
        assert_eq!(var(&p.order_by[1].expr), "next");
    }

    #[test]
    fn other_projections_are_left_alone() {
        let q = rewritten("MATCH (a) WITH a.name AS name ORDER BY a.name RETURN name");
        let p = projection(&q, 1);
        assert!(matches!(p.order_by[0].expr.kind, ExprKind::Property(..)));
    }
}
