//! `x IN list` checked at every step of a walk, against a list the row held
//! before the MATCH: `WITH collect(tag.id) AS tags MATCH … WHERE tag.id IN
//! tags` (LDBC's IC12: 2,000 ids, checked 2,328 times a query, a third of
//! its instructions spent comparing). A matcher serves one input row, so
//! such a list is the same at every check: from the second check on, its
//! elements are looked up in a hash set built once.
//!
//! Only lists of integers, strings, booleans, nodes and relationships are
//! put in a set, where `equals` is equality of the members: no null (which
//! makes a miss unknown), no float (equal to an integer), no list or map
//! (compared element by element). A value of another kind is checked
//! against the list as `eval` checks it.

use crate::error::QueryError;
use crate::eval::{eval, member, Ctx, Row};
use plexus_common::Value;
use plexus_cypher::{BinOp, Expr, ExprKind};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::RefCell;

/// Lists shorter than this are scanned: a set would not pay for itself.
const SHORTEST: usize = 16;

/// An element of a list in a set, as `equals` tells elements apart.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Member {
    Int(i64),
    Bool(bool),
    Str(Box<str>),
    Node(u64),
    Rel(u64),
}

fn member_of(v: &Value) -> Option<Member> {
    Some(match v {
        Value::Int(i) => Member::Int(*i),
        Value::Bool(b) => Member::Bool(*b),
        Value::String(s) => Member::Str(s.as_str().into()),
        Value::Node(n) => Member::Node(n.id),
        Value::Relationship(r) => Member::Rel(r.id),
        _ => return None,
    })
}

/// What one conjunct's list came to.
enum Seen {
    /// Checked once, by scanning.
    Once,
    /// Its set; `None` when the list is short or holds what a set cannot.
    Set(Option<FxHashSet<Member>>),
}

/// The sets of one matcher's conjuncts, by the conjunct's address.
#[derive(Default)]
pub(super) struct InSets(RefCell<FxHashMap<usize, Seen>>);

impl InSets {
    /// The value of conjunct `c` in `row` when it is `x IN name`, `name`
    /// a variable no pattern of the MATCH binds (not in `deps`), and its
    /// set is built; `None` when the caller evaluates `c` itself.
    pub(super) fn answer(
        &self,
        c: &Expr,
        deps: &[&str],
        row: &Row,
        ctx: &Ctx<'_>,
    ) -> Result<Option<Value>, QueryError> {
        let ExprKind::Binary(BinOp::In, x, list) = &c.kind else {
            return Ok(None);
        };
        let ExprKind::Var(name) = &list.kind else {
            return Ok(None);
        };
        if deps.contains(&name.as_str()) {
            return Ok(None);
        }
        let Some(Value::List(items)) = row.get(name) else {
            return Ok(None);
        };
        let key = c as *const Expr as usize;
        let mut sets = self.0.borrow_mut();
        let seen = match sets.get_mut(&key) {
            None => {
                sets.insert(key, Seen::Once);
                return Ok(None);
            }
            Some(seen) => seen,
        };
        if let Seen::Once = seen {
            *seen = Seen::Set(set_of(items));
        }
        let Seen::Set(Some(set)) = seen else {
            return Ok(None);
        };
        let x = eval(x, row, ctx)?;
        Ok(Some(match member_of(&x) {
            Some(m) => Value::Bool(set.contains(&m)),
            // The list is not empty, and holds no null.
            None if x.is_null() => Value::Null,
            None => member(&x, items.iter()),
        }))
    }
}

/// The set of a list's elements, when it is long enough and every
/// element is a [`Member`].
fn set_of(items: &[Value]) -> Option<FxHashSet<Member>> {
    if items.len() < SHORTEST {
        return None;
    }
    items.iter().map(member_of).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Guard;
    use std::collections::BTreeMap;

    /// Every check through a set answers as `eval` does, for values of
    /// every kind against lists of every kind.
    #[test]
    fn sets_answer_as_scanning_does() {
        let params = BTreeMap::new();
        let guard = Guard::unlimited();
        let ctx = Ctx::without_graph(&params, &guard);
        let ints: Vec<Value> = (0..20).map(Value::Int).collect();
        let strings: Vec<Value> = (0..20)
            .map(|i| Value::from(format!("s{i}").as_str()))
            .collect();
        let mut with_null = ints.clone();
        with_null.push(Value::Null);
        let mut with_float = ints.clone();
        with_float.push(Value::Float(2.5));
        let lists = [ints, strings, with_null, with_float, vec![Value::Int(3)]];
        let xs = [
            Value::Int(3),
            Value::Int(99),
            Value::Float(3.0),
            Value::Float(2.5),
            Value::from("s4"),
            Value::from("s99"),
            Value::Bool(true),
            Value::Null,
            Value::List(vec![Value::Int(3)]),
        ];
        let c = plexus_cypher::parse_expression("x IN l").unwrap_or_else(|e| panic!("{e}"));
        for list in &lists {
            for x in &xs {
                let mut row = Row::new();
                row.insert("l", Value::List(list.clone()));
                row.insert("x", x.clone());
                let sets = InSets::default();
                let want = eval(&c, &row, &ctx).unwrap_or_else(|e| panic!("{e}"));
                // The first check scans; the later ones use the set.
                for _ in 0..3 {
                    let got = match sets.answer(&c, &[], &row, &ctx) {
                        Ok(Some(v)) => v,
                        Ok(None) => eval(&c, &row, &ctx).unwrap_or_else(|e| panic!("{e}")),
                        Err(e) => panic!("{e}"),
                    };
                    assert_eq!(got, want, "{x:?} IN a list of {}", list.len());
                }
            }
        }
    }

    /// A set is used from the second check on, and never for a list a
    /// pattern of the MATCH binds.
    #[test]
    fn a_set_is_built_at_the_second_check_of_a_list_bound_before() {
        let params = BTreeMap::new();
        let guard = Guard::unlimited();
        let ctx = Ctx::without_graph(&params, &guard);
        let c = plexus_cypher::parse_expression("x IN l").unwrap_or_else(|e| panic!("{e}"));
        let mut row = Row::new();
        row.insert("l", Value::List((0..20).map(Value::Int).collect()));
        row.insert("x", Value::Int(5));
        let sets = InSets::default();
        let answers = |deps: &[&str]| {
            (0..3)
                .map(|_| sets.answer(&c, deps, &row, &ctx).map(|v| v.is_some()))
                .collect::<Result<Vec<_>, _>>()
                .unwrap_or_else(|e| panic!("{e}"))
        };
        assert_eq!(answers(&["l"]), [false, false, false]);
        assert_eq!(answers(&["x"]), [false, true, true]);
    }
}
