//! What a projection that aggregates may read outside its aggregates
//! (openCypher's grouping rules). Each row of a group shares only its
//! grouping keys, so an item such as `me.age + count(you)` is well defined
//! only when `me.age` (or `me`) is itself an item; a compound item
//! (`me.age + you.age`) groups, but is not a key other items may reuse.
//! An ORDER BY after such a projection sees its columns, and the aggregates
//! it computes written again.

use super::{err, expr, Scope};
use crate::error::QueryError;
use crate::eval::is_aggregate;
use plexus_cypher::*;

/// The grouping of one aggregating projection.
pub(super) struct Grouping<'a> {
    /// Items that are a variable or a property of one: what other items
    /// may read outside their aggregates.
    keys: Vec<&'a Expr>,
    /// Every aggregate the items compute.
    aggregates: Vec<&'a Expr>,
    /// Variables the non-aggregating items read (to tell, in ORDER BY, a
    /// variable that is grouped over from one that is gone).
    read_by_keys: Vec<String>,
    /// With `*`, every incoming variable is a key.
    star: Vec<String>,
}

/// Where an expression stands: an item of the projection, or an ORDER BY
/// key that sees the projection's columns.
#[derive(Clone, Copy)]
enum Place<'s> {
    Item,
    OrderBy(&'s Scope),
}

impl<'a> Grouping<'a> {
    pub(super) fn of(p: &'a Projection, scope: &Scope) -> Self {
        let mut g = Grouping {
            keys: Vec::new(),
            aggregates: Vec::new(),
            read_by_keys: Vec::new(),
            star: if p.star {
                scope.keys().cloned().collect()
            } else {
                Vec::new()
            },
        };
        for item in &p.items {
            let e = &item.expr;
            if super::contains_aggregate(e) {
                crate::eval::visit_aggregates(e, &mut |a| g.aggregates.push(a));
                continue;
            }
            vars_in(e, &mut g.read_by_keys);
            let key = match &e.kind {
                ExprKind::Var(_) => true,
                ExprKind::Property(b, _) => matches!(b.kind, ExprKind::Var(_)),
                _ => false,
            };
            if key {
                g.keys.push(e);
            }
        }
        g
    }

    /// Checks an item that aggregates.
    pub(super) fn item(&self, e: &Expr) -> Result<(), QueryError> {
        crate::deep(|| self.walk(e, Place::Item, &mut Vec::new()))
    }

    /// Checks an ORDER BY key that aggregates; `columns` are the
    /// projection's.
    pub(super) fn order_key(&self, e: &Expr, columns: &Scope) -> Result<(), QueryError> {
        crate::deep(|| self.walk(e, Place::OrderBy(columns), &mut Vec::new()))
    }

    fn walk(&self, e: &Expr, place: Place<'_>, bound: &mut Vec<String>) -> Result<(), QueryError> {
        if is_aggregate(e) {
            return self.aggregate(e, place, bound);
        }
        if self.keys.iter().any(|k| k.same_as(e)) {
            return Ok(());
        }
        let go = |x: &Expr, bound: &mut Vec<String>| self.walk(x, place, bound);
        match &e.kind {
            ExprKind::Var(v) => self.variable(v, place, bound),
            ExprKind::Property(x, _)
            | ExprKind::Unary(_, x)
            | ExprKind::IsNull(x, _)
            | ExprKind::HasLabels(x, _) => go(x, bound),
            ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
                go(a, bound)?;
                go(b, bound)
            }
            ExprKind::Slice(a, b, c) => {
                go(a, bound)?;
                for x in b.iter().chain(c) {
                    go(x, bound)?;
                }
                Ok(())
            }
            ExprKind::List(items) | ExprKind::Call { args: items, .. } => {
                items.iter().try_for_each(|x| go(x, bound))
            }
            ExprKind::Map(entries) => entries.iter().try_for_each(|(_, x)| go(x, bound)),
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => {
                for x in operand.iter().chain(else_) {
                    go(x, bound)?;
                }
                whens.iter().try_for_each(|(a, b)| {
                    go(a, bound)?;
                    go(b, bound)
                })
            }
            ExprKind::ListComprehension {
                var,
                list,
                filter,
                map,
            } => {
                go(list, bound)?;
                bound.push(var.clone());
                let r = filter.iter().chain(map).try_for_each(|x| go(x, bound));
                bound.pop();
                r
            }
            ExprKind::Quantified {
                var, list, filter, ..
            } => {
                go(list, bound)?;
                bound.push(var.clone());
                let r = filter.iter().try_for_each(|x| go(x, bound));
                bound.pop();
                r
            }
            ExprKind::Reduce {
                acc,
                init,
                var,
                list,
                expr: body,
            } => {
                go(init, bound)?;
                go(list, bound)?;
                bound.extend([acc.clone(), var.clone()]);
                let r = go(body, bound);
                bound.truncate(bound.len() - 2);
                r
            }
            // Patterns, subqueries and map projections are left to the
            // checks that run after this one.
            _ => Ok(()),
        }
    }

    /// An aggregate: any inside an item; in ORDER BY, one the items
    /// compute, or one over the projection's columns.
    fn aggregate(&self, e: &Expr, place: Place<'_>, bound: &[String]) -> Result<(), QueryError> {
        let Place::OrderBy(columns) = place else {
            return Ok(());
        };
        if self.aggregates.iter().any(|a| a.same_as(e)) {
            return Ok(());
        }
        let ExprKind::Call { args, .. } = &e.kind else {
            return Ok(());
        };
        let mut seen = columns.clone();
        seen.extend(bound.iter().map(|v| (v.clone(), super::Kind::Value)));
        args.iter().try_for_each(|a| expr(a, &seen, false))
    }

    fn variable(&self, v: &str, place: Place<'_>, bound: &[String]) -> Result<(), QueryError> {
        if bound.iter().chain(&self.star).any(|b| b == v) {
            return Ok(());
        }
        let ambiguous = || {
            err(
                "AmbiguousAggregationExpression",
                format!("`{v}` is read beside an aggregation but is not a grouping key"),
            )
        };
        match place {
            Place::Item => Err(ambiguous()),
            Place::OrderBy(columns) if columns.contains_key(v) => Ok(()),
            Place::OrderBy(_) if self.read_by_keys.iter().any(|r| r == v) => Err(ambiguous()),
            Place::OrderBy(_) => Err(err(
                "UndefinedVariable",
                format!("variable `{v}` is not defined after the aggregation"),
            )),
        }
    }
}

/// The variables `e` reads, by name.
fn vars_in(e: &Expr, out: &mut Vec<String>) {
    if let ExprKind::Var(v) = &e.kind {
        out.push(v.clone());
        return;
    }
    match &e.kind {
        ExprKind::Property(x, _) | ExprKind::Unary(_, x) | ExprKind::IsNull(x, _) => {
            vars_in(x, out)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            vars_in(a, out);
            vars_in(b, out);
        }
        ExprKind::List(items) | ExprKind::Call { args: items, .. } => {
            items.iter().for_each(|x| vars_in(x, out))
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::error::QueryError;

    /// The detail code the binder gives `q`, or `None` when it passes.
    fn code(q: &str) -> Option<&'static str> {
        let parsed = plexus_cypher::parse(q).expect("parses");
        let mut e = match super::super::check(&parsed) {
            Ok(_) => return None,
            Err(e) => e,
        };
        // A located error wraps the one that names the code.
        while let QueryError::At { error, .. } = e {
            e = *error;
        }
        match e {
            QueryError::Compile { code, .. } => Some(code),
            e => panic!("{q}: {e}"),
        }
    }

    #[test]
    fn aggregates_refuse_rand_and_calls_refuse_patterns() {
        assert_eq!(code("RETURN count(rand())"), Some("NonConstantExpression"));
        assert_eq!(
            code("RETURN sum(1 + rand() * 2)"),
            Some("NonConstantExpression")
        );
        assert_eq!(code("RETURN rand() + count(*)"), None);
        assert_eq!(
            code("MATCH (n) SET n.p = head(nodes(head((n)-[:R]->())))"),
            Some("UnexpectedSyntax")
        );
        assert_eq!(code("MATCH (n) RETURN exists((n)-[:R]->())"), None);
    }

    /// An ambiguous ORDER BY key is reported before a WITH item's missing
    /// alias, as openCypher does; the alias still has to be there.
    #[test]
    fn an_ambiguous_order_key_is_reported_before_a_missing_alias() {
        assert_eq!(
            code(
                "MATCH (me)--(you) WITH me.age + you.age, count(*) AS cnt \
                 ORDER BY me.age + you.age + count(*) RETURN *"
            ),
            Some("AmbiguousAggregationExpression")
        );
        assert_eq!(
            code("MATCH (me)--(you) WITH me.age + you.age, count(*) AS cnt RETURN *"),
            Some("NoExpressionAlias")
        );
    }

    #[test]
    fn grouping_keys_may_be_read_beside_aggregates() {
        for q in [
            "MATCH (a)-->(b) RETURN a, count(*) + a.num AS c",
            "MATCH (a)-->(b) RETURN a.num AS n, a.num * count(b) AS c",
            "MATCH (a)-->(b) WITH a.num AS n, b RETURN n, n + count(b) AS c",
            "MATCH (a)-->(b) RETURN *, count(*) + size(labels(a)) AS c",
            "MATCH (a)-->(b) RETURN [x IN collect(b.num) WHERE x > 1] AS big",
            "MATCH (a)-->(b) RETURN reduce(s = 0, x IN collect(b.num) | s + x) AS total",
            "MATCH (a)-->(b) RETURN a.name AS name, count(b) AS c ORDER BY count(b) DESC, name",
            "MATCH (a)-->(b) RETURN a.name AS name, count(b) AS c ORDER BY c + count(*)",
            "MATCH (a)-->(b) RETURN count(*) + $p AS c",
        ] {
            assert_eq!(code(q), None, "{q}");
        }
    }

    #[test]
    fn other_reads_beside_aggregates_are_refused() {
        for (q, want) in [
            (
                "MATCH (a)-->(b) RETURN a.num + count(b)",
                "AmbiguousAggregationExpression",
            ),
            (
                "MATCH (a)-->(b) RETURN a.num + b.num AS k, a.num + b.num + count(*) AS c",
                "AmbiguousAggregationExpression",
            ),
            (
                "MATCH (a)-->(b) RETURN count(b) AS c ORDER BY a.num + count(b)",
                "UndefinedVariable",
            ),
            (
                "MATCH (a)-->(b) RETURN a.num + b.num AS k, count(*) AS c ORDER BY a.num + count(*)",
                "AmbiguousAggregationExpression",
            ),
            (
                "MATCH (a)-->(b) WITH a.num AS n, min(b.num) AS m ORDER BY max(b.num) RETURN n",
                "UndefinedVariable",
            ),
        ] {
            assert_eq!(code(q), Some(want), "{q}");
        }
    }
}
