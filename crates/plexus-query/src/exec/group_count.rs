//! `MATCH (n[:L]) RETURN n.key, count(*)` — a grouped count over one
//! property, ending in a RETURN or in a WITH that more clauses follow — from
//! the property's column: per distinct value, the first
//! node holding it and how many do (`GraphRead::column_groups`), each added
//! to the projection once with that many as its weight
//! (`Projector::add_times`), and the nodes lacking the key as one more
//! group (`n.key` is null for them), each group where its first node puts
//! it, so the rows come in the pipeline's order. Through the pipeline every node was
//! bound, its property read and its row grouped: at 100,000 nodes, tens of
//! milliseconds for what the column answers in one pass over an array.
//!
//! Taken only where a node's weight cannot change an answer: every item,
//! and every ORDER BY key, reads the node only as `n.key` (so every node of
//! a group gives the same values), and every aggregate is one that a
//! weight folds exactly — `count(*)`, `count(n)`, `count(n.key)`, `min`
//! and `max` of `n.key`, or any aggregate of `DISTINCT n.key` (each value
//! once). `sum(n.key)` is not: a float sum rounds at each addition.
//! Otherwise, or when no column serves (a transaction that changed nodes,
//! a read as of an earlier instant, a column past its budget), the query
//! runs through the pipeline as before. The projection is the one the
//! pipeline uses, so grouping (`1` and `1.0` in one group, shown as the
//! first node's), ORDER BY, SKIP, LIMIT and DISTINCT behave as there.

use super::Row;
use crate::error::QueryError;
use crate::eval::{admits, is_aggregate, repeatable, Ctx};
use crate::project::{item_names, Projector};
use plexus_cypher::{Clause, Expr, ExprKind, LabelExpr, PathKind, Projection, SingleQuery};
use plexus_storage::{GraphRead, NodeId};

/// A part that is a grouped count over one property.
#[derive(Clone, Copy)]
pub(crate) struct Shape<'q> {
    /// The MATCH.
    pub clause: &'q Clause,
    pub label: Option<&'q str>,
    pub var: &'q str,
    pub key: &'q str,
    pub projection: &'q Projection,
}

/// The grouped count that `q` starts with, if it does: `MATCH (n[:L])`
/// with one node pattern (no properties, WHERE or path), then a RETURN or
/// WITH that aggregates and reads the node only as `n.key` for one key
/// (see the module's comment).
pub(crate) fn shape(q: &SingleQuery) -> Option<Shape<'_>> {
    match q.clauses.as_slice() {
        [m, Clause::Return(p) | Clause::With(p), ..] => shape_of(m, p),
        _ => None,
    }
}

/// The grouped count that MATCH `m` then projection `p` are, if they are.
pub(crate) fn shape_of<'q>(m: &'q Clause, p: &'q Projection) -> Option<Shape<'q>> {
    let Clause::Match {
        optional: false,
        patterns,
        where_: None,
        ..
    } = m
    else {
        return None;
    };
    let [path] = patterns.as_slice() else {
        return None;
    };
    let np = &path.element.start;
    let plain = path.element.chain.is_empty()
        && path.var.is_none()
        && path.kind == PathKind::Normal
        && np.props.is_none()
        && np.where_.is_none()
        && !p.star;
    let label = match &np.labels {
        None => None,
        Some(LabelExpr::Name(l)) => Some(l.as_str()),
        Some(_) => return None,
    };
    let var = np.var.as_deref().filter(|_| plain)?;
    let key = p.items.iter().find_map(|i| key_read(&i.expr, var))?;
    let aggregates = p
        .items
        .iter()
        .any(|i| crate::project::has_aggregate(&i.expr));
    let names = item_names(p);
    let names: Vec<&str> = names.iter().map(|n| &**n).collect();
    let items = p.items.iter().all(|i| keyed(&i.expr, var, key, &[]));
    let order = p.order_by.iter().all(|s| keyed(&s.expr, var, key, &names));
    // A WITH's WHERE, after aggregating, sees the projected names only.
    let filter = p.where_.as_ref().is_none_or(|w| keyed(w, var, key, &names));
    (aggregates && items && order && filter).then_some(Shape {
        clause: m,
        label,
        var,
        key,
        projection: p,
    })
}

/// The key of the first `var.key` that `e` reads.
fn key_read<'e>(e: &'e Expr, var: &str) -> Option<&'e str> {
    let mut found = None;
    admits(e, &mut |x| match &x.kind {
        ExprKind::Property(b, k) if matches!(&b.kind, ExprKind::Var(v) if v == var) => {
            found.get_or_insert(k.as_str());
            Some(true)
        }
        _ => None,
    });
    found
}

/// Whether `e` is deterministic and reads no variable but `var` as
/// `var.key` and the names `names` (the items', for ORDER BY), with only
/// aggregates a weight folds exactly ([`weighs`]).
fn keyed(e: &Expr, var: &str, key: &str, names: &[&str]) -> bool {
    repeatable(e)
        && admits(e, &mut |x| match &x.kind {
            ExprKind::CountStar => Some(true),
            ExprKind::Call { .. } if is_aggregate(x) => Some(weighs(x, var, key)),
            ExprKind::Property(b, k) if matches!(&b.kind, ExprKind::Var(v) if v == var) => {
                Some(k == key)
            }
            ExprKind::Var(v) => Some(names.contains(&v.as_str())),
            _ => None,
        })
}

/// Whether aggregate `call` gives the same result over a group's nodes as
/// over its first node added with the group's size as weight.
fn weighs(call: &Expr, var: &str, key: &str) -> bool {
    let ExprKind::Call {
        name,
        distinct,
        args,
    } = &call.kind
    else {
        return false;
    };
    let [arg] = args.as_slice() else {
        return false;
    };
    let is_var = matches!(&arg.kind, ExprKind::Var(v) if v == var);
    let is_key = matches!(&arg.kind, ExprKind::Property(b, k)
        if k == key && matches!(&b.kind, ExprKind::Var(v) if v == var));
    match name.to_ascii_lowercase().as_str() {
        "count" => is_key || (is_var && !distinct),
        "min" | "max" => is_key,
        _ => is_key && *distinct,
    }
}

/// The rows of the projection `s` ends in (its columns and rows) and the
/// nodes the MATCH found, from the property's column; `None` when the row
/// binds the node's variable already or no column serves. The pipeline
/// asks, for a stage that is a grouped count (`pipeline.rs`).
pub(super) fn run(
    g: &dyn GraphRead,
    ctx: &Ctx<'_>,
    s: Shape<'_>,
    rows: &[Row],
) -> Result<Option<(crate::project::Projected, u64)>, QueryError> {
    let [row] = rows else {
        return Ok(None);
    };
    if row.contains_key(s.var) {
        return Ok(None);
    }
    let Some(mut groups) = g.column_groups(s.label, s.key)? else {
        return Ok(None);
    };
    let all = match s.label {
        Some(l) => g.label_count(l)?,
        None => g.node_count()?,
    };
    let held = groups.iter().fold(0u64, |t, (_, n)| t.saturating_add(*n));
    // The nodes lacking the key are a group too, in its place among the
    // others (ordered by their first nodes, as the pipeline meets them).
    if all > held {
        if let Some(node) = first_lacking(g, ctx, s)? {
            let at = groups.partition_point(|(first, _)| *first < node);
            groups.insert(at, (node, all - held));
        }
    }
    let mut pr = Projector::new(s.projection);
    for (node, times) in groups {
        ctx.guard.check()?;
        let mut r = row.clone();
        r.insert(s.var, crate::graph::node(node));
        pr.add_times(&r, times, ctx)?;
    }
    Ok(Some((pr.finish(ctx)?, all)))
}

/// The first node (with the label) that lacks the key: the group whose
/// `n.key` is null stands on it. Its value is read from the column just
/// built, so the walk costs an id and an array read a node.
fn first_lacking(
    g: &dyn GraphRead,
    ctx: &Ctx<'_>,
    s: Shape<'_>,
) -> Result<Option<NodeId>, QueryError> {
    let ids = match s.label {
        Some(l) => g.nodes_with_label(l),
        None => g.nodes(),
    };
    for id in ids {
        ctx.guard.check()?;
        let id = id?;
        let mut held = false;
        g.with_node_property(id, s.key, &mut |v| held = v.is_some())?;
        if !held {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(text: &str) -> SingleQuery {
        plexus_cypher::parse(text).expect("parses").first
    }

    #[test]
    fn a_grouped_count_reads_the_node_only_as_its_key() {
        let key = |text: &str| {
            let q = part(text);
            shape(&q).map(|s| (s.label.map(str::to_string), s.key.to_string()))
        };
        for (text, label) in [
            ("MATCH (n) RETURN n.k, count(*)", None),
            ("MATCH (n:L) RETURN n.k AS k, count(n) AS c", Some("L")),
            (
                "MATCH (n:L) RETURN count(n.k) AS c, n.k AS k ORDER BY c DESC, k LIMIT 3",
                Some("L"),
            ),
            (
                "MATCH (n) RETURN toUpper(n.k) AS k, max(n.k), min(n.k)",
                None,
            ),
            (
                "MATCH (n) RETURN n.k, collect(DISTINCT n.k), sum(DISTINCT n.k)",
                None,
            ),
            (
                "MATCH (n) RETURN DISTINCT n.k AS k, count(*) AS c ORDER BY n.k",
                None,
            ),
            ("MATCH (n) RETURN min(n.k), max(n.k)", None),
            (
                "MATCH (n:L) WITH n.k AS k, count(*) AS c WHERE c > 1 RETURN k",
                Some("L"),
            ),
        ] {
            assert_eq!(
                key(text),
                Some((label.map(str::to_string), "k".into())),
                "{text}"
            );
        }
        for other in [
            "MATCH (n) RETURN n.k, n.j, count(*)",
            "MATCH (n) RETURN n.k",
            "MATCH (n) RETURN n.k, sum(n.k)",
            "MATCH (n) RETURN n.k, collect(n.k)",
            "MATCH (n) RETURN n.k, count(DISTINCT n)",
            "MATCH (n) RETURN n.k, count(n.j)",
            "MATCH (n) RETURN n, count(*)",
            "MATCH (n) RETURN n.k, count(*) ORDER BY n.j",
            "MATCH (n) RETURN n.k + rand(), count(*)",
            "MATCH (n) WHERE n.k > 1 RETURN n.k, count(*)",
            "MATCH (n {j: 1}) RETURN n.k, count(*)",
            "MATCH (n:A:B) RETURN n.k, count(*)",
            "MATCH (n)-->(m) RETURN n.k, count(*)",
            "MATCH p = (n) RETURN n.k, count(*)",
            "OPTIONAL MATCH (n) RETURN n.k, count(*)",
            "MATCH (n) RETURN *, count(*)",
            "MATCH (n) WITH n, n.k AS k, count(*) AS c RETURN k, c",
            "MATCH (n) WITH n.k AS k, count(*) AS c WHERE n.j > 1 RETURN k, c",
            "MATCH (n) WITH n RETURN n.k, count(*)",
        ] {
            assert_eq!(key(other), None, "{other}");
        }
    }
}
