//! EXPLAIN and PROFILE: the steps a query runs, one per clause (and per
//! path pattern of a MATCH), with the start each pattern takes as the
//! matcher chooses it and an estimate of the rows from the statistics.
//! PROFILE adds the rows each clause actually produced.

use crate::eval::Ctx;
use plexus_cypher::{Clause, Expr, NodePattern, PathKind, PathPattern, Query, RelDirection};
use plexus_storage::GraphRead;

/// One step of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Which part of a UNION (0 for the first).
    pub part: usize,
    /// Which clause of the part.
    pub clause: usize,
    pub operator: String,
    pub details: String,
    /// Rows estimated from the label, type and node counts.
    pub estimate: Option<f64>,
}

fn var(np: &NodePattern) -> &str {
    np.var.as_deref().unwrap_or("_")
}

fn arrow(d: RelDirection) -> (&'static str, &'static str) {
    match d {
        RelDirection::Right => ("-", "->"),
        RelDirection::Left => ("<-", "-"),
        RelDirection::Either => ("-", "-"),
    }
}

/// The steps of a MATCH pattern: its start, then one expansion per hop
/// with the rows multiplied by the average degree of the hop's types.
fn pattern_steps(
    g: &dyn GraphRead,
    ctx: &Ctx<'_>,
    p: &PathPattern,
    bound: &[String],
    where_: Option<&Expr>,
    single: bool,
    out: &mut Vec<(String, String, Option<f64>)>,
) {
    let el = &p.element;
    if p.kind != PathKind::Normal {
        let what = if p.kind == PathKind::Shortest {
            "ShortestPath"
        } else {
            "AllShortestPaths"
        };
        out.push((
            what.into(),
            "bidirectional breadth-first search".into(),
            None,
        ));
        return;
    }
    let split = crate::pattern::or_expand::planned(g, ctx, p, bound, where_, single);
    let seek = match split {
        Some(_) => None,
        None => crate::pattern::rel_seek::planned(g, ctx, p, bound, where_),
    };
    let own_start = seek.is_none() && split.is_none();
    let mut rows = match (&seek, split) {
        // Each walk takes the pattern's hops, forward or back.
        (_, Some(described)) => {
            out.push(("NodeIndexSeek".into(), described, None));
            None
        }
        (Some((op, described, _, found)), None) => {
            let rows = Some(*found as f64);
            out.push(((*op).into(), described.clone(), rows));
            rows
        }
        (None, None) => None,
    };
    let bound_before = |np: &NodePattern| np.var.as_ref().is_some_and(|v| bound.contains(v));
    // The end the matcher starts from, as it decides (`pattern::from_end`);
    // a seek or a split keeps the written order.
    let reverse =
        own_start && !bound_before(&el.start) && crate::pattern::from_end(el, bound_before);
    let (first, hops) = crate::pattern::walked(el, reverse);
    if own_start {
        let (op, details, estimate) = crate::pattern::start::planned(g, ctx, first, bound, where_);
        out.push((op.into(), details, estimate));
        rows = estimate;
    }
    let nodes = g.node_count().unwrap_or(1).max(1) as f64;
    let is_bound = |np: &NodePattern, walked: &[&NodePattern]| {
        np.var
            .as_ref()
            .is_some_and(|v| bound.contains(v) || walked.iter().any(|w| w.var.as_ref() == Some(v)))
    };
    let mut walked = vec![first];
    for (i, (r, n, reversed)) in hops.into_iter().enumerate() {
        if seek.as_ref().is_some_and(|(_, _, hop, _)| *hop == i) {
            continue;
        }
        let per = match r.types.as_ref().and_then(crate::graph::type_names) {
            Some(ts) => ts
                .iter()
                .map(|t| g.type_count(t).unwrap_or(0) as f64)
                .sum::<f64>(),
            None => g.edge_count().unwrap_or(0) as f64,
        } / nodes;
        let per = if r.direction == RelDirection::Either {
            2.0 * per
        } else {
            per
        };
        let (a, b) = arrow(match (r.direction, reversed) {
            (RelDirection::Right, true) => RelDirection::Left,
            (RelDirection::Left, true) => RelDirection::Right,
            (d, _) => d,
        });
        let types = match &r.types {
            Some(plexus_cypher::LabelExpr::Name(t)) => format!(":{t}"),
            Some(_) => ":…".into(),
            None => String::new(),
        };
        let len = match r.length {
            Some((lo, hi)) => format!(
                "*{}..{}",
                lo.map(|x| x.to_string()).unwrap_or_default(),
                hi.map(|x| x.to_string()).unwrap_or_default()
            ),
            None => String::new(),
        };
        // A hop into a node bound already keeps only the relationships
        // that reach it (`Matcher::hops`); a one-hop path between two bound
        // nodes is walked from the end with fewer relationships.
        let into = r.length.is_none() && is_bound(n, &walked);
        let from_either = into && el.chain.len() == 1 && is_bound(first, &[]);
        // Into a bound node: the chance that one of `per` relationships
        // reaches that node.
        rows = rows.map(|x| x * if into { (per / nodes).min(1.0) } else { per });
        walked.push(n);
        out.push((
            match (r.length.is_some(), into) {
                (true, _) => "VarLengthExpand",
                (false, true) => "ExpandInto",
                (false, false) => "Expand",
            }
            .into(),
            format!(
                "{a}[{}{types}{len}]{b}({}){}",
                r.var.as_deref().unwrap_or(""),
                var(n),
                if from_either {
                    ", from the end with fewer relationships"
                } else {
                    ""
                }
            ),
            rows,
        ));
    }
}

/// The plan of a query, clause by clause.
pub fn explain(q: &Query, g: Option<&dyn GraphRead>, ctx: &Ctx<'_>) -> Vec<Step> {
    let mut steps = Vec::new();
    for (pi, part) in q.parts().enumerate() {
        let mut bound: Vec<String> = Vec::new();
        for (ci, c) in part.clauses.iter().enumerate() {
            let mut push = |operator: &str, details: String, estimate: Option<f64>| {
                steps.push(Step {
                    part: pi,
                    clause: ci,
                    operator: operator.into(),
                    details,
                    estimate,
                })
            };
            match c {
                Clause::Match {
                    optional,
                    patterns,
                    where_,
                    ..
                } => {
                    let before = bound.clone();
                    for p in patterns {
                        let mut ps = Vec::new();
                        if let Some(g) = g {
                            let single = patterns.len() == 1;
                            pattern_steps(g, ctx, p, &bound, where_.as_ref(), single, &mut ps);
                        }
                        for (op, d, e) in ps {
                            let op = if *optional {
                                format!("Optional{op}")
                            } else {
                                op
                            };
                            push(&op, d, e);
                        }
                        bound.extend(crate::exec::pattern_vars(p));
                    }
                    if where_.is_some() {
                        push("Filter", "WHERE".into(), None);
                    }
                    let joins = crate::exec::streamable(part)
                        .then(|| crate::exec::join_planned(c, &before))
                        .flatten();
                    if let Some(details) = joins {
                        push("AdaptiveHashJoin", details, None);
                    }
                }
                Clause::Unwind { alias, .. } => {
                    push("Unwind", format!("AS {alias}"), None);
                    bound.push(alias.clone());
                }
                Clause::With(p) | Clause::Return(p) => {
                    let agg = p.items.iter().any(|i| {
                        let mut f = false;
                        crate::eval::visit_aggregates(&i.expr, &mut |_| f = true);
                        f
                    });
                    let names: Vec<String> = p
                        .items
                        .iter()
                        .map(|i| i.alias.clone().unwrap_or_else(|| i.text.clone()))
                        .collect();
                    let op = match (agg, p.distinct) {
                        (true, _) => "Aggregation",
                        (false, true) => "Distinct",
                        _ => "Projection",
                    };
                    push(op, names.join(", "), None);
                    if !p.order_by.is_empty() {
                        push("Sort", format!("{} key(s)", p.order_by.len()), None);
                    }
                    if p.skip.is_some() {
                        push("Skip", String::new(), None);
                    }
                    if p.limit.is_some() {
                        push("Limit", String::new(), None);
                    }
                    if p.where_.is_some() {
                        push("Filter", "WHERE".into(), None);
                    }
                    if matches!(c, Clause::With(_)) {
                        bound = names;
                    }
                }
                Clause::Create { patterns, .. } => {
                    push("Create", format!("{} pattern(s)", patterns.len()), None);
                    bound.extend(patterns.iter().flat_map(crate::exec::pattern_vars));
                }
                Clause::Merge { pattern, .. } => {
                    push("Merge", "match, else create".into(), None);
                    bound.extend(crate::exec::pattern_vars(pattern));
                }
                Clause::Set { items, .. } => {
                    push("SetProperties", format!("{} item(s)", items.len()), None)
                }
                Clause::Remove { items, .. } => {
                    push("Remove", format!("{} item(s)", items.len()), None)
                }
                Clause::Delete { detach, .. } => push(
                    if *detach { "DetachDelete" } else { "Delete" },
                    String::new(),
                    None,
                ),
                Clause::Foreach { var, .. } => push("Foreach", var.clone(), None),
                Clause::Call { procedure, .. } => push("ProcedureCall", procedure.clone(), None),
                Clause::Subquery { .. } => push("SubqueryApply", String::new(), None),
            }
        }
    }
    steps
}
