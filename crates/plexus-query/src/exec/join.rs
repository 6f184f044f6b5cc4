//! A streamed MATCH joined to its input rows through a hash table, when
//! that costs less than matching row by row.
//!
//! In a pipeline a MATCH extends each input row on its own, from the node
//! the row binds. LDBC IC6 unwinds 1,941 friends and, for each, walks its
//! posts to test them for one tag: 9,691 posts read to keep 16, which the
//! tag reaches in one hop. When the pattern's only link to the row is one
//! bound node (the key) and whatever else it reads from the row is the same
//! on every row (IC6's tag id), all of its matches can be found once, from
//! the pattern's own anchored start with the key left free, and grouped by
//! the key's node; each row then takes its node's matches from the table.
//! The rows come out in the same order, each row's matches together.
//!
//! Whether that pays is not known up front: rows stream in, and the
//! counters cannot tell how much of the anchored side a walk will read. So
//! the first [`JOIN_AFTER`] rows are matched one by one on a meter
//! (`pattern::Meter`: candidates and relationships read), then the table is
//! built on a meter capped at the work those rows took. A build that goes
//! past its cap is dropped and tried again when the rows seen have doubled,
//! with the cap of the work done by then: the work thrown away is at most
//! twice what the rows themselves cost, and a join that pays is found
//! within a doubling of the rows that show it. When the number of rows is
//! known (the MATCH opens its stage, whose input rows are all collected),
//! the cap is the work the rows still to come would take at the rate
//! measured, so one try decides.

use crate::error::QueryError;
use crate::eval::{Ctx, Row};
use crate::limits::row_size;
use crate::pattern::{self, Meter};
use plexus_common::Value;
use plexus_cypher::{Clause, Expr, NodePattern, PathKind, PathPattern};
use plexus_storage::NodeId;
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// Rows matched one by one before a table is first tried.
pub(super) const JOIN_AFTER: u64 = 64;

/// The matches of one build, by the key's node: each match's bindings of
/// the pattern's variables other than the key, with its multiplicity.
pub(super) struct Table {
    /// The values of the row variables the pattern reads, as built.
    inputs: Vec<Value>,
    by_key: FxHashMap<NodeId, Vec<(Row, u64)>>,
    /// Bytes charged to the query's memory budget for it.
    bytes: usize,
}

impl Table {
    /// The matches of the row whose key is `key`.
    pub(super) fn matches(&self, key: NodeId) -> &[(Row, u64)] {
        self.by_key.get(&key).map_or(&[], Vec::as_slice)
    }
}

/// How a MATCH may be joined: its key, the row variables it reads besides,
/// and its patterns in the order a build walks them (the anchored one
/// first).
struct Shape {
    key: String,
    /// Every other variable the patterns bind: a row that binds one is
    /// linked to the pattern by more than the key and is matched itself.
    others: Vec<String>,
    inputs: Vec<String>,
    order: Vec<PathPattern>,
}

/// One MATCH clause's join state over a stage's rows.
pub(super) struct Join {
    /// `None` until the first row is seen; then whether the clause joins.
    shape: Option<Option<Shape>>,
    /// Rows that came in, and the work matching them one by one took.
    rows: u64,
    work: u64,
    next_try: u64,
    /// How many rows will come in, when known (a stage's first clause).
    expected: Option<u64>,
    table: Option<Rc<Table>>,
}

impl Default for Join {
    fn default() -> Self {
        Join {
            shape: None,
            rows: 0,
            work: 0,
            next_try: JOIN_AFTER,
            expected: None,
            table: None,
        }
    }
}

/// A row the table answers: the table and the row's key.
pub(super) struct Hit {
    pub(super) table: Rc<Table>,
    pub(super) key: NodeId,
}

impl Join {
    /// The join of a clause that will see `rows` rows.
    pub(super) fn expecting(rows: usize) -> Join {
        Join {
            expected: Some(rows as u64),
            ..Join::default()
        }
    }

    /// The table's answer for `row` (the MATCH `clause`, its rows pruned as
    /// the pipeline passes them), building or rebuilding the table when
    /// the rows seen say it is time; `None` when the row is to be matched
    /// on its own (then report its work with [`Join::record`]).
    pub(super) fn lookup(
        &mut self,
        clause: &Clause,
        row: &Row,
        ctx: &Ctx<'_>,
        distinct: bool,
    ) -> Result<Option<Hit>, QueryError> {
        let Clause::Match {
            patterns, where_, ..
        } = clause
        else {
            return Ok(None);
        };
        if self.shape.is_none() && row.keys().len() == 0 {
            // Nothing bound, nothing to join on (`shape` would say so):
            // the first MATCH of most queries.
            return Ok(None);
        }
        let shape = self.shape.get_or_insert_with(|| {
            let bound: Vec<&str> = row.keys().map(|k| &**k).collect();
            shape(clause, patterns, where_.as_ref(), &bound)
        });
        let Some(shape) = shape.as_ref() else {
            return Ok(None);
        };
        let key = match row.get(&shape.key) {
            Some(Value::Node(n)) => NodeId(n.id),
            _ => return Ok(None),
        };
        if shape.others.iter().any(|v| row.contains_key(v)) {
            return Ok(None);
        }
        self.rows += 1;
        // Compared where the row keeps them; copied only for a build.
        let built_for = |t: &Table| {
            shape
                .inputs
                .iter()
                .zip(&t.inputs)
                .all(|(v, x)| row.get(v) == Some(x))
        };
        if let Some(t) = self.table.as_ref().filter(|t| built_for(t)) {
            return Ok(Some(Hit {
                table: Rc::clone(t),
                key,
            }));
        }
        if self.rows < self.next_try {
            return Ok(None);
        }
        let Some(inputs) = shape.inputs.iter().map(|v| row.get(v).cloned()).collect() else {
            return Ok(None);
        };
        self.next_try = self.rows.saturating_mul(2);
        // With the number of rows known, the build may cost what the rows
        // still to come would at the rate measured; else what those seen
        // did.
        let cap = match self.expected {
            Some(total) => {
                let left = total.saturating_sub(self.rows);
                (self.work.saturating_mul(left) / self.rows).max(self.work)
            }
            None => self.work,
        };
        let built = build(shape, where_.as_ref(), row, inputs, ctx, distinct, cap)?;
        if let Some(old) = self.table.take() {
            ctx.guard.release(old.bytes);
        }
        self.table = built.map(Rc::new);
        Ok(self.table.as_ref().map(|t| Hit {
            table: Rc::clone(t),
            key,
        }))
    }

    /// The work of matching one row on its own.
    pub(super) fn record(&mut self, work: u64) {
        self.work = self.work.saturating_add(work);
    }

    /// Gives the table's bytes back to the query's budget.
    pub(super) fn release(&mut self, ctx: &Ctx<'_>) {
        if let Some(t) = self.table.take() {
            ctx.guard.release(t.bytes);
        }
    }
}

/// Whether (and how) a MATCH joins on rows shaped like `row`: one of its
/// node variables is bound in the row and none of its other variables is,
/// its patterns are plain (no shortest path), and one of them can start a
/// build from an anchored node (see [`anchored_first`]).
fn shape(
    clause: &Clause,
    patterns: &[PathPattern],
    where_: Option<&Expr>,
    bound: &[&str],
) -> Option<Shape> {
    if patterns.iter().any(|p| p.kind != PathKind::Normal) {
        return None;
    }
    let mut names: Vec<String> = patterns.iter().flat_map(super::pattern_vars).collect();
    names.sort();
    names.dedup();
    let [key] = names
        .iter()
        .filter(|v| bound.contains(&v.as_str()))
        .collect::<Vec<_>>()[..]
    else {
        return None;
    };
    let key = key.clone();
    if !super::node_vars(patterns).any(|v| v == key) {
        return None;
    }
    let inputs = bound
        .iter()
        .filter(|v| **v != key && super::live::read_by(std::slice::from_ref(clause), v))
        .map(|v| v.to_string())
        .collect();
    let order = anchored_first(patterns, where_, &key)?;
    names.retain(|v| *v != key);
    Some(Shape {
        key,
        others: names,
        inputs,
        order,
    })
}

/// What EXPLAIN says of a MATCH `clause` of a streamed part that may be
/// joined through a table, given the variables bound before it.
pub(crate) fn planned(clause: &Clause, bound: &[String]) -> Option<String> {
    let Clause::Match {
        patterns, where_, ..
    } = clause
    else {
        return None;
    };
    let bound: Vec<&str> = bound.iter().map(String::as_str).collect();
    let s = shape(clause, patterns, where_.as_ref(), &bound)?;
    let first = s.order.first().map(|p| super::pattern_vars(p).join(", "));
    Some(format!(
        "on ({}): after {JOIN_AFTER} rows, all matches found once from the pattern of {} \
         and looked up by ({}), when that reads less than the rows did",
        s.key,
        first.unwrap_or_default(),
        s.key
    ))
}

/// A labelled node that a seek can find: inline properties, or an
/// equality or `elementId` conjunct of the WHERE on its variable.
fn anchored(np: &NodePattern, where_: Option<&Expr>, key: &str) -> bool {
    if np.labels.is_none() || np.var.as_deref() == Some(key) {
        return false;
    }
    if np.props.is_some() {
        return true;
    }
    let (Some(w), Some(v)) = (where_, np.var.as_deref()) else {
        return false;
    };
    let mut eq = Vec::new();
    pattern::equality_hints(w, &mut eq);
    let mut ids = Vec::new();
    pattern::id_hints(w, "elementid", &mut ids);
    pattern::id_hints(w, "id", &mut ids);
    eq.iter().any(|(x, _, _)| *x == v) || ids.iter().any(|(x, _)| *x == v)
}

/// The patterns in the order a build walks them: first one that the
/// matcher, with nothing bound, starts from an anchored node
/// (`pattern::from_end`), then each next one sharing a variable with those
/// before it where one does. `None` when no pattern starts
/// anchored: a build would scan a label or every node.
fn anchored_first(
    patterns: &[PathPattern],
    where_: Option<&Expr>,
    key: &str,
) -> Option<Vec<PathPattern>> {
    // Nothing is bound in a build: the matcher's own rule says which end
    // it starts from.
    let starts_anchored = |p: &PathPattern| {
        let (first, _) = pattern::walked(&p.element, pattern::from_end(&p.element, |_| false));
        anchored(first, where_, key)
    };
    let first = patterns.iter().position(starts_anchored)?;
    let mut left: Vec<&PathPattern> = patterns.iter().collect();
    let mut order = vec![left.remove(first).clone()];
    while !left.is_empty() {
        let bound: Vec<String> = order.iter().flat_map(super::pattern_vars).collect();
        let next = left
            .iter()
            .position(|p| super::pattern_vars(p).iter().any(|v| bound.contains(v)))
            .unwrap_or(0);
        order.push(left.remove(next).clone());
    }
    Some(order)
}

/// All matches of `shape`'s patterns with the key free and the row's
/// inputs bound, grouped by the key's node; `None` when the build went past
/// `cap` units of work.
fn build(
    shape: &Shape,
    where_: Option<&Expr>,
    row: &Row,
    inputs: Vec<Value>,
    ctx: &Ctx<'_>,
    distinct: bool,
    cap: u64,
) -> Result<Option<Table>, QueryError> {
    let Some(g) = ctx.graph else {
        return Ok(None);
    };
    let seed: Row = shape
        .inputs
        .iter()
        .filter_map(|v| row.get(v).map(|x| (v.clone(), x.clone())))
        .collect();
    let meter = Meter::new(cap);
    let mut by_key: FxHashMap<NodeId, Vec<(Row, u64)>> = FxHashMap::default();
    let mut bytes = 0usize;
    let patterns = &shape.order;
    let an = pattern::Analysis::new(patterns, where_);
    pattern::match_metered(
        g,
        ctx,
        patterns,
        where_,
        &an,
        &seed,
        pattern::Want::rows(distinct),
        &meter,
        &mut |m, times| {
            let Some(Value::Node(k)) = m.get(&shape.key) else {
                return Ok(false);
            };
            let part: Row = m
                .iter()
                .filter(|(v, _)| shape.others.iter().any(|o| o.as_str() == &***v))
                .map(|(v, x)| (v.clone(), x.clone()))
                .collect();
            let size = row_size(&part);
            ctx.guard.charge(size)?;
            bytes = bytes.saturating_add(size);
            by_key.entry(NodeId(k.id)).or_default().push((part, times));
            Ok(false)
        },
    )?;
    if meter.spent() {
        ctx.guard.release(bytes);
        return Ok(None);
    }
    Ok(Some(Table {
        inputs,
        by_key,
        bytes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clause(q: &str) -> Clause {
        plexus_cypher::parse(q).unwrap().first.clauses.remove(0)
    }

    fn shape_of(q: &str, vars: &[&str]) -> Option<Shape> {
        let c = clause(q);
        let Clause::Match {
            patterns, where_, ..
        } = &c
        else {
            panic!("not a MATCH")
        };
        shape(&c, patterns, where_.as_ref(), vars)
    }

    #[test]
    fn the_anchored_pattern_is_walked_first_and_the_rest_by_shared_variables() {
        let s = shape_of(
            "MATCH (f)<-[:C]-(p:Post), (q)-[:T]->(x:Tag), (p)-[:T]->(t:Tag {id: k}) RETURN 1",
            &["f", "k", "unread"],
        )
        .unwrap();
        assert_eq!(s.key, "f");
        assert_eq!(s.inputs, vec!["k".to_string()]);
        let firsts: Vec<_> = s
            .order
            .iter()
            .map(|p| p.element.start.var.clone().unwrap())
            .collect();
        // The tag's pattern, then the post's (shares p), then the rest.
        assert_eq!(firsts, ["p", "f", "q"]);
        assert_eq!(s.others, ["p", "q", "t", "x"]);
    }

    #[test]
    fn no_join_without_one_bound_node_or_an_anchor() {
        let q = "MATCH (f)<-[:C]-(p:Post)-[:T]->(t:Tag {id: 1}) RETURN 1";
        assert!(shape_of(q, &["f"]).is_some());
        // Two links to the row, or none.
        assert!(shape_of(q, &["f", "p"]).is_none());
        assert!(shape_of(q, &[]).is_none());
        // The end is anchored but the matcher would start from the labelled
        // start; an unlabelled node with properties is no anchor.
        let q = "MATCH (f:Person)-[:C]->(p)-[:T]->(t:Tag {id: 1}) RETURN 1";
        assert!(shape_of(q, &["p"]).is_none());
        assert!(shape_of("MATCH (f)-[:C]->(t {id: 1}) RETURN 1", &["f"]).is_none());
        // An equality in the WHERE anchors; a shortest path never joins.
        assert!(shape_of("MATCH (f)-[:C]->(t:Tag) WHERE t.id = 1 RETURN 1", &["f"]).is_some());
        assert!(shape_of(
            "MATCH p = shortestPath((f)-[:C*]->(t:Tag {id: 1})) RETURN 1",
            &["f"]
        )
        .is_none());
    }
}
