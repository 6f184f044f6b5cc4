//! `MATCH … RETURN count(DISTINCT v)`, `v` a node or a relationship the
//! MATCH binds: counted as the matches are found, by identity — the
//! count/aggregate pushdown for the distinct count of an entity.
//!
//! Through the projection each match became a row folded into an
//! aggregate: `v` evaluated, its value cloned, its entity key looked up
//! and the value kept for the bucket's comparisons — a third of a
//! `count(DISTINCT b)` after a breadth-first reach in a profile. Here a
//! match adds its entity's identity to a set. The count needs each
//! distinct row once, so the matcher may give each once (`match_metered` with `distinct`:
//! a last variable-length hop walked breadth-first, as the projection
//! has it walked).

use super::RowSet;
use crate::error::QueryError;
use crate::eval::{Ctx, Row};
use crate::limits::value_size;
use crate::pattern;
use plexus_common::Value;
use plexus_cypher::{Expr, ExprKind, PathPattern, ProjectionItem, SingleQuery};
use plexus_storage::{GraphRead, NodeId};

/// What a distinct entity costs the query's memory budget: its entry in
/// the set.
const PER_ENTITY: usize = 32;

/// A query part that is one MATCH and `RETURN count(DISTINCT v)` alone,
/// `v` a node variable of its patterns or the variable of a relationship
/// of one hop (a variable-length one binds a list): its patterns, WHERE,
/// item and `v`.
pub(crate) fn shape(
    q: &SingleQuery,
) -> Option<(&[PathPattern], Option<&Expr>, &ProjectionItem, &str)> {
    let (patterns, where_, item) = super::match_then_one_item(q)?;
    let ExprKind::Var(v) = &super::count_argument(&item.expr, true)?.kind else {
        return None;
    };
    // A path variable of the same name would be a binder error.
    let rel = patterns.iter().any(|p| {
        p.element
            .chain
            .iter()
            .any(|(r, _)| r.length.is_none() && r.var.as_deref() == Some(v))
    });
    let entity = rel || super::node_vars(patterns).any(|n| n == v);
    entity.then_some((patterns, where_, item, v.as_str()))
}

/// The distinct values of one variable over the matches, told apart by
/// the set DISTINCT uses (`RowSet`: a node or relationship by identity,
/// without building a key or keeping the value).
#[derive(Default)]
struct Distinct {
    set: RowSet,
    /// Values other than nodes and relationships — none for a node or
    /// relationship variable, kept exact all the same: the set compares a
    /// bucket's values where they are kept.
    others: Vec<Value>,
    count: usize,
    charged: usize,
}

impl Distinct {
    fn add(&mut self, v: Option<&Value>, ctx: &Ctx<'_>) -> Result<(), QueryError> {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return Ok(());
        };
        let entity = matches!(v, Value::Node(_) | Value::Relationship(_));
        let others = &self.others;
        // An entity's index is never looked at: only values in buckets are.
        let known = self
            .set
            .find_or_add(std::slice::from_ref(v), others.len(), |i| {
                std::slice::from_ref(&others[i])
            });
        if known.is_some() {
            return Ok(());
        }
        self.count += 1;
        let bytes = match entity {
            true => PER_ENTITY,
            false => {
                self.others.push(v.clone());
                value_size(v)
            }
        };
        ctx.guard.charge(bytes)?;
        self.charged += bytes;
        Ok(())
    }
}

/// `count(DISTINCT var)` over the matches of `patterns` and `where_` from
/// each of `rows`.
pub(super) fn count(
    g: &dyn GraphRead,
    ctx: &Ctx<'_>,
    patterns: &[PathPattern],
    where_: Option<&Expr>,
    var: &str,
    rows: &[Row],
) -> Result<i64, QueryError> {
    let mut seen = Distinct::default();
    let an = pattern::Analysis::new(patterns, where_);
    // Uncapped: the meter only counts.
    let meter = pattern::Meter::new(u64::MAX);
    // A node variable's matches mostly come as bare nodes
    // (`pattern::Want::Nodes`); those that come as rows join them.
    let node_var = super::node_vars(patterns).any(|n| n == var);
    let nodes = pattern::DistinctNodes::default();
    let mut walk = || -> Result<(), QueryError> {
        for r in rows {
            let mut sink = |m: &Row, _| {
                match m.get(var) {
                    Some(Value::Node(n)) => nodes.add(NodeId(n.id), ctx.guard)?,
                    v => seen.add(v, ctx)?,
                }
                Ok(false)
            };
            let want = match node_var {
                true => pattern::Want::Nodes(var, &nodes),
                false => pattern::Want::Distinct,
            };
            pattern::match_metered(g, ctx, patterns, where_, &an, r, want, &meter, &mut sink)?;
        }
        Ok(())
    };
    let walked = walk();
    ctx.guard.release(seen.charged + nodes.charged());
    walked?;
    let count = seen.count.saturating_add(nodes.len());
    Ok(i64::try_from(count).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{Guard, QueryLimits};

    /// Values are told apart as `count(DISTINCT …)` tells them: an entity
    /// by identity (a node and a relationship of one id are two), any
    /// other value as DISTINCT compares rows (`1` and `1.0` are two), a
    /// null not at all; each new one is charged to the memory budget.
    #[test]
    fn distinct_values_are_told_apart_as_distinct_rows_are() {
        let (node, rel) = (
            super::super::row_set::test_node,
            super::super::row_set::test_rel,
        );
        let guard = Guard::unlimited();
        let params = Default::default();
        let ctx = Ctx::without_graph(&params, &guard);
        let mut d = Distinct::default();
        let values = [
            node(1),
            node(1),
            rel(1),
            Value::Int(1),
            Value::Float(1.0),
            Value::Int(1),
            Value::Null,
        ];
        for v in &values {
            d.add(Some(v), &ctx).expect("within the budget");
        }
        d.add(None, &ctx).expect("nothing to add");
        assert_eq!(d.count, 4);
        assert_eq!(guard.held(), d.charged);
        let tight = Guard::new(
            QueryLimits {
                memory: Some(PER_ENTITY),
                ..Default::default()
            },
            Default::default(),
        );
        let ctx = Ctx {
            guard: &tight,
            ..ctx
        };
        let mut d = Distinct::default();
        d.add(Some(&node(1)), &ctx).expect("one fits");
        assert!(
            d.add(Some(&node(2)), &ctx).is_err(),
            "the second is past the budget"
        );
    }

    fn part(text: &str) -> SingleQuery {
        plexus_cypher::parse(text).expect("parses").first
    }

    /// The shape takes a node or one-hop relationship variable of the
    /// MATCH, and nothing else.
    #[test]
    fn the_shape_is_a_distinct_count_of_an_entity() {
        let takes = |t: &str| shape(&part(t)).map(|(_, _, _, v)| v.to_string());
        assert_eq!(
            takes("MATCH (a)-[*1..3]->(b) RETURN count(DISTINCT b)").as_deref(),
            Some("b")
        );
        assert_eq!(
            takes("MATCH (a)-[r:T]->(b) WHERE a.x = 1 RETURN COUNT(distinct r) AS n").as_deref(),
            Some("r")
        );
        for other in [
            "MATCH (a)-[r*1..3]->(b) RETURN count(DISTINCT r)",
            "MATCH p = (a)-->(b) RETURN count(DISTINCT p)",
            "MATCH (a)-->(b) RETURN count(b)",
            "MATCH (a)-->(b) RETURN count(DISTINCT b.x)",
            "MATCH (a)-->(b) RETURN count(DISTINCT b), count(a)",
            "MATCH (a)-->(b) RETURN DISTINCT count(DISTINCT b)",
            "MATCH (a)-->(b) RETURN count(DISTINCT b) LIMIT 0",
            "OPTIONAL MATCH (a)-->(b) RETURN count(DISTINCT b)",
            "MATCH (a)-->(b) WITH b RETURN count(DISTINCT b)",
            "MATCH (a)-->(b) RETURN sum(DISTINCT b)",
        ] {
            assert_eq!(takes(other), None, "{other}");
        }
    }
}
