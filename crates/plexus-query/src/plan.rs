//! EXPLAIN and PROFILE: the steps a query runs, one per clause (and per
//! path pattern of a MATCH), with the start each pattern takes as the
//! matcher chooses it and an estimate of the rows from the statistics.
//! PROFILE adds the rows each clause actually produced and its time, and
//! the starts the run took.

use crate::eval::Ctx;
use crate::pattern::start::Taken;
use plexus_cypher::{
    Clause, Expr, NodePattern, PathKind, PathPattern, Query, RelDirection, SingleQuery,
};
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
    /// Under PROFILE, the rows a pattern's start or hop produced and the
    /// time of its own work (measured by the matcher); a clause's rows and
    /// time are measured by the clause.
    pub actual: Option<Actual>,
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
    shape: Shape<'_>,
    out: &mut Vec<Planned>,
) {
    let Shape { single, trail, .. } = shape;
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
            out.push(("NodeIndexSeek".into(), described, None, None));
            None
        }
        (Some((op, described, _, found)), None) => {
            let rows = Some(*found as f64);
            out.push(((*op).into(), described.clone(), rows, None));
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
        // Under PROFILE, the starts the run took.
        let (op, details) = match shape.ran.and_then(|t| t.of(first)) {
            Some(taken) => taken,
            None => (op.into(), details),
        };
        let ran = shape.ran.and_then(|t| t.rows(first));
        out.push((op, details, estimate, ran));
        rows = estimate;
    }
    let nodes = g.node_count().unwrap_or(1).max(1) as f64;
    let is_bound = |np: &NodePattern, walked: &[&NodePattern]| {
        np.var
            .as_ref()
            .is_some_and(|v| bound.contains(v) || walked.iter().any(|w| w.var.as_ref() == Some(v)))
    };
    let mut walked = vec![first];
    let last = hops.len().saturating_sub(1);
    let in_order = hops.clone();
    for (i, (r, n, reversed)) in hops.into_iter().enumerate() {
        if seek.as_ref().is_some_and(|(_, _, hop, _)| *hop == i) {
            continue;
        }
        let per = fan_out(g, r, nodes);
        // A hop into a node bound already keeps only the relationships
        // that reach it (`Matcher::hops`); a one-hop path between two bound
        // nodes is walked from the end with fewer relationships.
        let into = r.length.is_none() && is_bound(n, &walked);
        let from_either = into && el.chain.len() == 1 && is_bound(first, &[]);
        // Into a bound node: the chance that one of `per` relationships
        // reaches that node.
        rows = rows.map(|x| x * if into { (per / nodes).min(1.0) } else { per });
        walked.push(n);
        let by_degree = i == last && !trail && crate::pattern::counted_by_degree(r, n);
        let by_trails = i == last && !trail && crate::pattern::trails_counted(r, n);
        let Shape {
            distinct,
            first: no_rels_before,
            later,
            ..
        } = shape;
        let breadth_first = own_start
            && crate::pattern::reach::planned(&in_order, i, distinct, no_rels_before, trail, later);
        out.push((
            match (r.length.is_some(), into, by_degree) {
                (true, ..) if by_trails => "VarLengthCount",
                (true, ..) => "VarLengthExpand",
                (false, true, _) => "ExpandInto",
                (false, false, true) => "ExpandByDegree",
                (false, false, false) => "Expand",
            }
            .into(),
            format!(
                "{}{}",
                hop_text(r, n, reversed),
                if from_either {
                    ", from the end with fewer relationships"
                } else if by_degree {
                    ", counted from the degree counters, not walked"
                } else if by_trails {
                    ", its trails counted, no match made of each"
                } else if breadth_first {
                    ", breadth-first: each end once"
                } else {
                    ""
                }
            ),
            rows,
            shape.ran.and_then(|t| t.rows(r)),
        ));
    }
}

/// The relationships a hop of `r`'s types and direction offers a node, on
/// average over the graph's `nodes`.
fn fan_out(g: &dyn GraphRead, r: &plexus_cypher::RelPattern, nodes: f64) -> f64 {
    let per = match r.types.as_ref().and_then(crate::graph::type_names) {
        Some(ts) => ts
            .iter()
            .map(|t| g.type_count(t).unwrap_or(0) as f64)
            .sum::<f64>(),
        None => g.edge_count().unwrap_or(0) as f64,
    } / nodes;
    if r.direction == RelDirection::Either {
        2.0 * per
    } else {
        per
    }
}

/// A hop as walked: `-[r:T*1..2]->(n)`, the arrow turned when walked
/// against its written direction.
fn hop_text(r: &plexus_cypher::RelPattern, n: &NodePattern, reversed: bool) -> String {
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
    format!(
        "{a}[{}{types}{len}]{b}({})",
        r.var.as_deref().unwrap_or(""),
        var(n)
    )
}

/// What shapes the steps of one pattern of a MATCH.
#[derive(Clone, Copy)]
struct Shape<'p> {
    /// The MATCH has one pattern.
    single: bool,
    /// A path variable needs the walked trail: no hop is counted from the
    /// degree counters.
    trail: bool,
    /// The pipeline asks the MATCH for each distinct row once.
    distinct: bool,
    /// No pattern before this one has a relationship.
    first: bool,
    /// The MATCH's patterns after this one.
    later: &'p [PathPattern],
    /// Under PROFILE: the starts the run took.
    ran: Option<&'p Taken>,
}

/// A step before it is placed in its part and clause: operator, details,
/// estimated rows, and under PROFILE what the step did when the run
/// measured it (a pattern's start and hops).
type Planned = (String, String, Option<f64>, Option<Actual>);

/// What a pattern's start or hop did under PROFILE: its rows, and the time
/// of its own work.
pub type Actual = (u64, std::time::Duration);

/// How a part that is `MATCH … RETURN count(*)` runs (`exec::count_only`):
/// its matches counted as they are found, with the names nothing reads
/// dropped, or the type counters' sum.
struct Counted<'q> {
    patterns: std::borrow::Cow<'q, [PathPattern]>,
    from_counters: Option<u64>,
}

impl<'q> Counted<'q> {
    fn of(part: &'q SingleQuery, g: Option<&dyn GraphRead>) -> Option<Counted<'q>> {
        let (patterns, where_, _) = crate::exec::count_shape(part)?;
        Some(Counted {
            patterns: match where_ {
                None => crate::exec::anonymise_ends(patterns, &[crate::eval::Row::new()]),
                Some(_) => std::borrow::Cow::Borrowed(patterns),
            },
            from_counters: g
                .and_then(|g| crate::pattern::counted_from_counters(g, patterns, where_)),
        })
    }
}

/// The plan of a query, clause by clause; under PROFILE, with the starts
/// the run took and the rows and time of each start and hop (`ran`).
/// PROFILE runs the plan EXPLAIN shows: the same steps.
pub fn explain(
    q: &Query,
    g: Option<&dyn GraphRead>,
    ctx: &Ctx<'_>,
    ran: Option<&Taken>,
) -> Vec<Step> {
    let mut steps = Vec::new();
    for (pi, part) in q.parts().enumerate() {
        let mut bound: Vec<String> = Vec::new();
        let counted = Counted::of(part, g);
        let column = ColumnCount::of(part, g);
        let grouped =
            crate::exec::group_count_shape(part).filter(|_| g.is_some_and(|g| g.columns_serve()));
        let distinct = crate::exec::distinct_clauses(part);
        for (ci, c) in part.clauses.iter().enumerate() {
            let mut out = Vec::new();
            let at = Clauses {
                g,
                ctx,
                part,
                counted: counted.as_ref(),
                column,
                grouped,
                distinct: distinct.get(ci).copied().unwrap_or(false),
                ran,
            };
            clause_steps(at, c, &mut bound, &mut out);
            steps.extend(
                out.into_iter()
                    .map(|(operator, details, estimate, actual)| Step {
                        part: pi,
                        clause: ci,
                        operator,
                        details,
                        estimate,
                        actual,
                    }),
            );
        }
    }
    steps
}

/// What the steps of a clause are planned on: the graph, the parameters,
/// the part the clause is in, and how that part counts.
#[derive(Clone, Copy)]
struct Clauses<'a, 'q> {
    g: Option<&'a dyn GraphRead>,
    ctx: &'a Ctx<'a>,
    part: &'q SingleQuery,
    counted: Option<&'a Counted<'q>>,
    /// The part is `MATCH (n[:L]) RETURN count(n.key)`, counted from the
    /// property's column ([`ColumnCount::of`]).
    column: Option<ColumnCount<'q>>,
    /// The part is a grouped count over one property, grouped from its
    /// column (`exec/group_count.rs`).
    grouped: Option<crate::exec::GroupShape<'q>>,
    /// The pipeline asks this clause for each distinct row once.
    distinct: bool,
    /// Under PROFILE: the starts the run took.
    ran: Option<&'a Taken>,
}

/// A part that is `MATCH (n[:L]) RETURN count(n.key)` where the run counts
/// the property's column (`exec/count_property.rs`): its label, key,
/// variable and item.
#[derive(Clone, Copy)]
struct ColumnCount<'q> {
    label: Option<&'q str>,
    key: &'q str,
    var: &'q str,
    item: &'q plexus_cypher::ProjectionItem,
}

impl<'q> ColumnCount<'q> {
    /// Not where no column serves.
    fn of(part: &'q SingleQuery, g: Option<&dyn GraphRead>) -> Option<Self> {
        let (label, key, var, item) = crate::exec::count_property_shape(part)?;
        let serves = g.is_some_and(|g| g.columns_serve());
        serves.then_some(ColumnCount {
            label,
            key,
            var,
            item,
        })
    }
}

/// The steps of clause `c`, after which `bound` holds the names bound.
fn clause_steps(at: Clauses<'_, '_>, c: &Clause, bound: &mut Vec<String>, out: &mut Vec<Planned>) {
    let mut push = |operator: &str, details: String, estimate: Option<f64>| {
        out.push((operator.into(), details, estimate, None))
    };
    if let Some(ColumnCount {
        label,
        key,
        var,
        item,
    }) = at.column
    {
        match c {
            Clause::Match { .. } => {
                let node = label.map_or_else(|| format!("({var})"), |l| format!("({var}:{l})"));
                let what = format!("{node} holding .{key}, listed by the property's column");
                return push("NodePropertyCountFromColumn", what, None);
            }
            Clause::Return(_) => {
                let name = item.alias.as_ref().unwrap_or(&item.text);
                let what = format!("{name}: the nodes the column lists, no rows built");
                return push("CountFromColumn", what, Some(1.0));
            }
            _ => {}
        }
    }
    if let Some(s) = at.grouped.filter(|s| std::ptr::eq(s.clause, c)) {
        let node = s
            .label
            .map_or_else(|| format!("({})", s.var), |l| format!("({}:{l})", s.var));
        let what = format!(
            "{node} by value of .{}: the property's column, each value once with its nodes counted",
            s.key
        );
        return push("NodePropertyGroupsFromColumn", what, None);
    }
    match c {
        Clause::Match { patterns, .. } if at.counted.is_some_and(|k| k.from_counters.is_some()) => {
            let counted = at.counted.and_then(|k| k.from_counters).map(|n| n as f64);
            if let Some(p) = patterns.first().filter(|p| p.element.chain.is_empty()) {
                let what = match &p.element.start.labels {
                    Some(plexus_cypher::LabelExpr::Name(l)) => {
                        format!("nodes with label {l}, counted by its counter")
                    }
                    _ => "every node, counted by the node counter".to_string(),
                };
                push("NodeCountFromCountStore", what, counted);
                return;
            }
            let what = patterns
                .first()
                .and_then(|p| p.element.chain.first())
                .and_then(|(r, _)| r.types.as_ref())
                .and_then(crate::graph::type_names)
                .map_or_else(
                    || "every relationship".to_string(),
                    |ts| format!("relationships of type {}", ts.join(", ")),
                );
            push(
                "RelationshipCountFromCountStore",
                format!("{what}, counted by the type counters"),
                counted,
            );
        }
        Clause::Match { .. } => match_steps(at, c, bound, out),
        Clause::Unwind { alias, .. } => {
            push("Unwind", format!("AS {alias}"), None);
            bound.push(alias.clone());
        }
        Clause::Return(p) if at.counted.is_some() => {
            let name = p
                .items
                .first()
                .map(|i| i.alias.clone().unwrap_or_else(|| i.text.clone()))
                .unwrap_or_default();
            push(
                "CountMatches",
                format!("{name}: the matches counted as they are found, no rows built"),
                Some(1.0),
            );
        }
        Clause::Return(p) => match crate::exec::count_distinct_shape(at.part) {
            Some((_, _, item, v)) => {
                let name = item.alias.as_ref().unwrap_or(&item.text);
                let what = "of the matches counted by identity, no rows built";
                push(
                    "CountDistinct",
                    format!("{name}: the distinct {v} {what}"),
                    Some(1.0),
                );
            }
            None => {
                projection_steps(p, out);
            }
        },
        Clause::With(p) => *bound = projection_steps(p, out),
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
        Clause::Remove { items, .. } => push("Remove", format!("{} item(s)", items.len()), None),
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

/// The steps of a MATCH: each pattern's, then its WHERE and a join.
fn match_steps(at: Clauses<'_, '_>, c: &Clause, bound: &mut Vec<String>, out: &mut Vec<Planned>) {
    let Clause::Match {
        optional,
        patterns,
        where_,
        ..
    } = c
    else {
        return;
    };
    let before = bound.clone();
    let patterns: &[PathPattern] = match at.counted {
        Some(counted) => &counted.patterns,
        None => patterns,
    };
    let trail = patterns.iter().any(|p| p.var.is_some());
    for (k, p) in patterns.iter().enumerate() {
        let shape = Shape {
            single: patterns.len() == 1,
            trail,
            distinct: at.distinct,
            first: patterns[..k].iter().all(|p| p.element.chain.is_empty()),
            later: &patterns[k + 1..],
            ran: at.ran,
        };
        let mut ps = Vec::new();
        if let Some(g) = at.g {
            pattern_steps(g, at.ctx, p, bound, where_.as_ref(), shape, &mut ps);
        }
        for (op, d, e, ran) in ps {
            // Each alternative a profiled start took.
            let op = match optional {
                true => op
                    .split(" / ")
                    .map(|o| format!("Optional{o}"))
                    .collect::<Vec<_>>()
                    .join(" / "),
                false => op,
            };
            out.push((op, d, e, ran));
        }
        bound.extend(crate::exec::pattern_vars(p));
    }
    if where_.is_some() {
        out.push(("Filter".into(), "WHERE".into(), None, None));
    }
    let joins = crate::exec::streamable(at.part)
        .then(|| crate::exec::join_planned(c, &before))
        .flatten();
    if let Some(details) = joins {
        out.push(("AdaptiveHashJoin".into(), details, None, None));
    }
}

/// The steps of a WITH or RETURN; the names it projects.
fn projection_steps(p: &plexus_cypher::Projection, out: &mut Vec<Planned>) -> Vec<String> {
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
    let mut push = |op: &str, details: String| out.push((op.into(), details, None, None));
    push(op, names.join(", "));
    if !p.order_by.is_empty() {
        push("Sort", format!("{} key(s)", p.order_by.len()));
    }
    if p.skip.is_some() {
        push("Skip", String::new());
    }
    if p.limit.is_some() {
        push("Limit", String::new());
    }
    if p.where_.is_some() {
        push("Filter", "WHERE".into());
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Guard;
    use plexus_storage::{Props, Storage, DEFAULT_GRAPH};
    use std::collections::BTreeMap;

    /// `start.rs`'s 200 `P` nodes (`k` indexed, `j` not) and 20 `Q`, each
    /// `P` with a `T` to the next.
    fn graph() -> Storage {
        let db = crate::pattern::start::tests::graph();
        let mut t = db.write(DEFAULT_GRAPH).expect("a writer");
        for i in 0..199 {
            let id = |i: i64| t.node_id(&format!("u{i}")).expect("read").expect("a node");
            let (a, b) = (id(i), id(i + 1));
            t.create_edge(None, a, b, "T", &Props::new())
                .expect("an edge");
        }
        t.commit().expect("commit");
        db
    }

    /// The (operator, details) of each step EXPLAIN gives `text`.
    fn steps(db: &Storage, text: &str) -> Vec<(String, String)> {
        let r = db.read(DEFAULT_GRAPH).expect("a reader");
        let q = plexus_cypher::parse(text).expect("parses");
        let params = BTreeMap::new();
        let guard = Guard::unlimited();
        let ctx = Ctx::with_graph(&params, &r, &guard);
        explain(&q, Some(&r), &ctx, None)
            .into_iter()
            .map(|s| (s.operator, s.details))
            .collect()
    }

    fn ops(db: &Storage, text: &str) -> Vec<String> {
        steps(db, text).into_iter().map(|(o, _)| o).collect()
    }

    #[test]
    fn each_clause_and_hop_is_a_step_in_the_order_they_run() {
        let db = graph();
        assert_eq!(
            ops(
                &db,
                "MATCH (a:P {k: 1})-[:T]->(b) WHERE b.k > 0 RETURN b.k ORDER BY b.k LIMIT 2"
            ),
            [
                "NodeIndexSeek",
                "Expand",
                "Filter",
                "Projection",
                "Sort",
                "Limit"
            ]
        );
        assert_eq!(
            ops(
                &db,
                "UNWIND [1, 2] AS x MATCH (a:P {k: x}) WITH DISTINCT a RETURN count(*)"
            ),
            ["Unwind", "NodeIndexSeek", "Distinct", "Aggregation"]
        );
        assert_eq!(
            ops(&db, "MATCH (a:P)<-[:T]-(b) RETURN a"),
            ["NodeByLabelScan", "Expand", "Projection"]
        );
    }

    #[test]
    fn a_hop_reads_as_written_in_the_direction_walked() {
        let db = graph();
        let hop = |text: &str| {
            steps(&db, text)
                .into_iter()
                .find(|(o, _)| o.contains("Expand"))
                .map(|(_, d)| d)
                .expect("a hop")
        };
        assert_eq!(hop("MATCH (a:P {k: 1})-[:T]->(b) RETURN b"), "-[:T]->(b)");
        assert_eq!(hop("MATCH (a:P {k: 1})<-[r]-(b) RETURN b"), "<-[r]-(b)");
        assert_eq!(
            hop("MATCH (a:P {k: 1})-[:T*1..3]-(b) RETURN b"),
            "-[:T*1..3]-(b)"
        );
    }

    #[test]
    fn counts_are_planned_as_they_run() {
        let db = graph();
        assert_eq!(
            ops(&db, "MATCH (n:P) RETURN count(*)"),
            ["NodeCountFromCountStore", "CountMatches"]
        );
        assert_eq!(
            ops(&db, "MATCH (a:P {k: 1})-[:T]->() RETURN count(*)"),
            ["NodeIndexSeek", "ExpandByDegree", "CountMatches"]
        );
        assert_eq!(
            ops(&db, "MATCH (a:P {k: 1})-[:T*1..2]->() RETURN count(*)"),
            ["NodeIndexSeek", "VarLengthCount", "CountMatches"]
        );
        assert_eq!(
            ops(
                &db,
                "MATCH (a:P {k: 1})-[:T*1..2]->(b) RETURN count(DISTINCT b)"
            ),
            ["NodeIndexSeek", "VarLengthExpand", "CountDistinct"]
        );
        assert_eq!(
            ops(
                &db,
                "MATCH (n:P) RETURN n.j AS k, count(*) AS c ORDER BY c DESC"
            ),
            ["NodePropertyGroupsFromColumn", "Aggregation", "Sort"]
        );
        assert_eq!(
            ops(&db, "MATCH (n:P) RETURN count(n.j)"),
            ["NodePropertyCountFromColumn", "CountFromColumn"]
        );
    }

    #[test]
    fn estimates_come_from_the_counters() {
        let db = graph();
        let r = db.read(DEFAULT_GRAPH).expect("a reader");
        let q = plexus_cypher::parse("MATCH (a:P)-[:T]->(b) RETURN b").expect("parses");
        let params = BTreeMap::new();
        let guard = Guard::unlimited();
        let ctx = Ctx::with_graph(&params, &r, &guard);
        let s = explain(&q, Some(&r), &ctx, None);
        // 200 P; 199 T over 220 nodes.
        assert_eq!(s[0].estimate, Some(200.0));
        let per = 199.0 / 220.0;
        assert!(s[1]
            .estimate
            .is_some_and(|e| (e - 200.0 * per).abs() < 1e-9));
    }
}
