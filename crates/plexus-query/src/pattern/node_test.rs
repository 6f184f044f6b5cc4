//! WHERE conjuncts that compare one property of the node a hop just bound
//! with a constant — `b.id <> $id`, `n.age > 30`, `$d >= m.date` — checked
//! at every node a walk reaches (a breadth-first reach checks one at each
//! node it reaches). A matcher serves one input row, so the constant side
//! is the same at every check: it is evaluated once, at the first check,
//! and each later check reads the node's property where the store holds it
//! and compares, without evaluating the expression anew. In a profile of
//! `MATCH (a {id: $id})-[*1..3]->(b) WHERE b.id <> $id RETURN count(DISTINCT
//! b)` that evaluation (its dispatch, its shape recognised again, the
//! parameter looked up by name) was a third of each node's check.
//!
//! A check answers only when the node holds the property: the caller
//! evaluates the conjunct otherwise, which gives null, or the error the
//! general path gives (a node the query deleted). The comparison is
//! `eval`'s own, with the sides as written, so an answer is the general
//! path's exactly.

use crate::error::QueryError;
use crate::eval::{comparison_holds, eval, is_constant_leaf, lent_shape, Ctx, Row};
use plexus_common::Value;
use plexus_cypher::{BinOp, Expr, ExprKind};
use plexus_storage::{GraphRead, NodeId};
use std::cell::RefCell;

/// A conjunct `var.key op value` (or `value op var.key` when `right`), its
/// constant side evaluated.
struct Test<'a> {
    key: &'a str,
    op: BinOp,
    value: Value,
    right: bool,
}

impl Test<'_> {
    /// Whether the comparison is true of a node holding `x`, the sides as
    /// written (`eval::comparison_holds`).
    fn holds(&self, x: &Value) -> Option<bool> {
        match self.right {
            false => comparison_holds(self.op, x, &self.value),
            true => comparison_holds(self.op, &self.value, x),
        }
    }
}

/// What a conjunct came to at its first check.
enum Slot<'a> {
    Unseen,
    /// Not such a comparison: evaluated by the caller.
    General,
    Test(Test<'a>),
}

/// The prepared conjuncts of one matcher, by the conjunct's index among
/// the WHERE's early conjuncts.
#[derive(Default)]
pub(super) struct NodeTests<'a>(RefCell<Vec<Slot<'a>>>);

impl<'a> NodeTests<'a> {
    /// Whether conjunct `c` (the `i`-th) is true of the node bound to
    /// `var` in `row`, when it compares a property of `var` with a
    /// constant and the node holds the property; `None` when the caller
    /// evaluates `c` itself.
    pub(super) fn answer(
        &self,
        i: usize,
        c: &'a Expr,
        var: &str,
        row: &Row,
        g: &dyn GraphRead,
        ctx: &Ctx<'_>,
    ) -> Result<Option<bool>, QueryError> {
        let mut slots = self.0.borrow_mut();
        if slots.len() <= i {
            slots.resize_with(i + 1, || Slot::Unseen);
        }
        if matches!(slots[i], Slot::Unseen) {
            slots[i] = prepare(c, var, ctx);
        }
        let Slot::Test(t) = &slots[i] else {
            return Ok(None);
        };
        let Some(Value::Node(n)) = row.get(var) else {
            return Ok(None);
        };
        let mut out = None;
        g.with_node_property(NodeId(n.id), t.key, &mut |x| {
            out = x.and_then(|x| t.holds(x));
        })?;
        Ok(out)
    }
}

/// `c` as a [`Test`] when it compares a property of `var` with a literal
/// or a parameter that evaluates; else [`Slot::General`] (an error is the
/// general path's to report).
fn prepare<'a>(c: &'a Expr, var: &str, ctx: &Ctx<'_>) -> Slot<'a> {
    let ExprKind::Binary(op, a, b) = &c.kind else {
        return Slot::General;
    };
    let Some((prop, other, right)) = lent_shape(*op, a, b) else {
        return Slot::General;
    };
    let Some((of, key)) = super::var_property(prop) else {
        return Slot::General;
    };
    if of != var || !is_constant_leaf(&other.kind) {
        return Slot::General;
    }
    match eval(other, &Row::new(), ctx) {
        Ok(value) => Slot::Test(Test {
            key,
            op: *op,
            value,
            right,
        }),
        Err(_) => Slot::General,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Guard;
    use std::collections::BTreeMap;

    /// Only a property of the variable compared with a constant is
    /// prepared, and its constant side is evaluated once, with its side.
    #[test]
    fn only_comparisons_of_the_variable_with_constants_are_prepared() {
        let params = BTreeMap::from([("p".to_string(), Value::Int(7))]);
        let guard = Guard::unlimited();
        let ctx = Ctx::without_graph(&params, &guard);
        let expr = |t: &str| plexus_cypher::parse_expression(t).unwrap();
        let prepared = |t: &str| {
            let e = expr(t);
            match prepare(&e, "b", &ctx) {
                Slot::Test(t) => Some((t.key.to_string(), t.op, t.value, t.right)),
                _ => None,
            }
        };
        assert_eq!(
            prepared("b.id <> $p"),
            Some(("id".into(), BinOp::Neq, Value::Int(7), false))
        );
        assert_eq!(
            prepared("30 <= b.age"),
            Some(("age".into(), BinOp::Le, Value::Int(30), true))
        );
        // Another variable, a variable on the other side, not a
        // comparison, a missing parameter: evaluated by the caller.
        for t in [
            "a.id <> $p",
            "b.id <> a.id",
            "b.id <> c",
            "b.id + 1",
            "b.id = $q",
        ] {
            assert!(prepared(t).is_none(), "{t}");
        }
    }
}
