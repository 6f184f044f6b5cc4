//! Index seeks for a disjunction of equalities on one property:
//! `WHERE a.id = $x OR a.id = $y`, or `(a.id = $x AND b.id = $y) OR (a.id =
//! $y AND b.id = $x)` as LDBC's IC14 asks of every relationship on a path.
//! Every alternative pins `a.id` to a value, so a match has `a` among the
//! nodes an index finds for one of those values: the walk starts from
//! their union (each node once, in id order) instead of from every node
//! of the label. The WHERE is still evaluated on every match.

use super::{equality_hints, first_index, Matcher, Res, Seek, Start};
use crate::eval::Row;
use plexus_common::Value;
use plexus_cypher::{BinOp, Expr, ExprKind, NodePattern};
use plexus_storage::{NodeId, StorageError};

/// A conjunct of the WHERE that is an OR in each of whose alternatives
/// `var.key` equals a value: the values, one per alternative.
pub(crate) struct AnyOf<'e> {
    pub var: &'e str,
    pub key: &'e str,
    pub values: Vec<&'e Expr>,
}

/// The alternatives of an OR: `a OR (b OR c)` gives a, b, c (walked with a
/// stack of its own: OR chains can be long).
fn disjuncts(e: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    let mut todo = vec![e];
    while let Some(x) = todo.pop() {
        match &x.kind {
            ExprKind::Binary(BinOp::Or, a, b) => {
                todo.push(b);
                todo.push(a);
            }
            _ => out.push(x),
        }
    }
    out
}

/// The `var.key = value` equalities among an expression's conjuncts.
type Equalities<'e> = Vec<(&'e str, &'e str, &'e Expr)>;

/// An OR among a WHERE's conjuncts: each alternative with the equalities
/// among its own conjuncts. Found once per match, read by the seeks of
/// this module and by the walks of `or_expand.rs`.
pub(crate) struct Or<'e> {
    pub alternatives: Vec<(&'e Expr, Equalities<'e>)>,
}

/// The conjunct `c` as an OR, when it is one.
pub(crate) fn or_of(c: &Expr) -> Option<Or<'_>> {
    if !matches!(c.kind, ExprKind::Binary(BinOp::Or, ..)) {
        return None;
    }
    Some(Or {
        alternatives: disjuncts(c)
            .into_iter()
            .map(|a| {
                let mut h = Vec::new();
                equality_hints(a, &mut h);
                (a, h)
            })
            .collect(),
    })
}

/// Collects, for each of `ors`, every `var.key` that each of its
/// alternatives compares for equality.
pub(crate) fn hints<'e>(ors: &[Or<'e>], out: &mut Vec<AnyOf<'e>>) {
    for or in ors {
        let Some(((_, first), rest)) = or.alternatives.split_first() else {
            continue;
        };
        for &(var, key, v) in first {
            if out.iter().any(|h| h.var == var && h.key == key) {
                continue;
            }
            let mut values = vec![v];
            for (_, alt) in rest {
                match alt.iter().find(|(x, k, _)| *x == var && *k == key) {
                    Some(&(_, _, v)) => values.push(v),
                    None => break,
                }
            }
            if values.len() == or.alternatives.len() {
                out.push(AnyOf { var, key, values });
            }
        }
    }
}

impl Matcher<'_, '_> {
    /// The union of the index seeks of one [`AnyOf`] on the node's
    /// variable, when an index serves its key and every value can be
    /// evaluated here; `None` otherwise.
    pub(super) fn any_of_seek<'p>(
        &'p self,
        np: &NodePattern,
        labels: &[&'p str],
        row: &Row,
    ) -> Res<Option<Seek<'p>>> {
        let hints = self
            .an
            .any_of
            .iter()
            .filter(|h| np.var.as_deref() == Some(h.var));
        'hint: for h in hints {
            let mut values = Vec::with_capacity(h.values.len());
            for e in &h.values {
                // A value may read a variable bound only later: skip it then.
                let Ok(v) = super::start::hint_value(self, e, row, || Value::Int(0)) else {
                    continue 'hint;
                };
                match &*v {
                    // `x = null` is never true: that alternative adds nothing.
                    Value::Null => {}
                    _ if v.is_storable() => values.push(v.into_owned()),
                    _ => continue 'hint,
                }
            }
            let found = first_index(labels, |l| self.union_of(l, h.key, &values))?;
            if let Some((label, ids)) = found {
                let start = Start::Index {
                    label,
                    key: h.key,
                    any_of: Some(h.values.len()),
                };
                return Ok(Some(Seek::of(start, ids)));
            }
        }
        Ok(None)
    }

    fn union_of(
        &self,
        label: Option<&str>,
        key: &str,
        values: &[Value],
    ) -> Result<Vec<NodeId>, StorageError> {
        let mut ids = Vec::new();
        for v in values {
            ids.extend(self.g.find_nodes(label, key, v)?);
        }
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints_of(text: &str) -> Vec<(String, String, usize)> {
        let q =
            plexus_cypher::parse(&format!("MATCH (a), (b) WHERE {text} RETURN a")).expect("parses");
        let plexus_cypher::Clause::Match { where_, .. } =
            &q.parts().next().expect("a part").clauses[0]
        else {
            panic!("a MATCH first")
        };
        let ors: Vec<Or<'_>> = super::super::conjuncts(where_.as_ref().expect("a WHERE"))
            .into_iter()
            .filter_map(or_of)
            .collect();
        let mut out = Vec::new();
        hints(&ors, &mut out);
        out.iter()
            .map(|h| (h.var.to_string(), h.key.to_string(), h.values.len()))
            .collect()
    }

    #[test]
    fn every_alternative_must_pin_the_same_property() {
        assert_eq!(
            hints_of("a.id = 1 OR a.id = 2 OR 3 = a.id"),
            [("a".into(), "id".into(), 3)]
        );
        assert_eq!(
            hints_of("(a.id = 1 AND b.id = 2) OR (a.id = 2 AND b.id = 1)"),
            [("a".into(), "id".into(), 2), ("b".into(), "id".into(), 2)]
        );
        assert_eq!(
            hints_of("b.x > 0 AND (a.id = 1 OR a.name = 'x')"),
            Vec::<(String, String, usize)>::new()
        );
        assert_eq!(
            hints_of("a.id = 1 OR a.id = 2 AND b.id = 3 OR true"),
            Vec::<(String, String, usize)>::new()
        );
        assert_eq!(hints_of("a.id = 1"), Vec::<(String, String, usize)>::new());
    }
}
