//! Where a walk starts: the one choice of a path pattern's first nodes,
//! made by [`Matcher::seek`] for the run and for EXPLAIN alike.
//!
//! EXPLAIN used to re-derive the start in `plan.rs` with rules of its own,
//! and the two had drifted (an equality no index serves is one pass over
//! the records, which EXPLAIN called a label scan; a range no index serves
//! reads the property's column). Now EXPLAIN runs the matcher's own seek
//! *dry* ([`planned`]): the same order of choices on the same hints, index
//! seeks done (they are point reads, and give the real number of starts),
//! scans named but not read. A value the seek needs from a variable bound
//! before the MATCH is not known until it runs: a dry seek takes a stand-in
//! of the right kind, so an index is still probed for it.

use super::{Analysis, Matcher, Mode};
use crate::eval::{Ctx, Row};
use plexus_common::Value;
use plexus_cypher::{Expr, NodePattern};
use plexus_storage::GraphRead;
use std::borrow::Cow;
use std::time::{Duration, Instant};

/// The access path of a walk's first node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Start<'p> {
    /// Bound by the row (an earlier clause or pattern).
    Bound,
    /// `WHERE elementId(n) = x`: the id map.
    ElementId,
    /// `WHERE id(n) = x`: one record.
    InternalId,
    /// A property index, for an equality; `any_of` alternatives of an OR.
    Index {
        label: Option<&'p str>,
        key: &'p str,
        any_of: Option<usize>,
    },
    /// A list-element index, for `x IN n.key`.
    ListElement {
        label: Option<&'p str>,
        key: &'p str,
    },
    /// A property index, for comparisons on one key.
    Range {
        label: Option<&'p str>,
        key: &'p str,
    },
    /// The property's column, for comparisons no index serves.
    RangeColumn {
        label: Option<&'p str>,
        key: &'p str,
    },
    /// The property's column, for conjuncts on that property alone that
    /// no index answers (`column_filter.rs`).
    ColumnFilter {
        label: Option<&'p str>,
        key: &'p str,
    },
    /// One pass over the records (or the column) for an equality no index
    /// serves.
    PropertyScan {
        label: Option<&'p str>,
        key: &'p str,
    },
    /// Every node with the label (the smallest of those required).
    Label(&'p str),
    /// Every node.
    All,
    /// A value the start needs is null, or of a kind no node holds: no
    /// node matches.
    Nothing,
}

impl Start<'_> {
    /// The operator's name, as Neo4j's plans call it where it has one.
    pub(crate) fn operator(&self) -> &'static str {
        match self {
            Start::Bound => "Argument",
            Start::ElementId => "NodeByElementIdSeek",
            Start::InternalId => "NodeByIdSeek",
            Start::Index { .. } => "NodeIndexSeek",
            Start::ListElement { .. } => "NodeListElementSeek",
            Start::Range { .. } => "NodeIndexSeekByRange",
            Start::RangeColumn { .. } => "NodePropertyRangeScan",
            Start::ColumnFilter { .. } => "NodePropertyFilterScan",
            Start::PropertyScan { .. } => "NodeByPropertyScan",
            Start::Label(_) => "NodeByLabelScan",
            Start::All => "AllNodesScan",
            Start::Nothing => "EmptyResult",
        }
    }

    /// What the operator reads, for the node `np`.
    pub(crate) fn details(&self, np: &NodePattern) -> String {
        let var = np.var.as_deref().unwrap_or("_");
        let node = |label: &Option<&str>| match label {
            Some(l) => format!("({var}:{l})"),
            None => format!("({var})"),
        };
        match self {
            Start::Bound => format!("({var}) bound earlier"),
            Start::ElementId => format!("({var}) by its user id"),
            Start::InternalId => format!("({var}) by its internal id"),
            Start::Index {
                label,
                key,
                any_of: None,
            } => format!("{} on .{key}", node(label)),
            Start::Index {
                label,
                key,
                any_of: Some(_),
            } => format!(
                "{} on .{key}, one seek per alternative of an OR",
                node(label)
            ),
            Start::ListElement { label, key } => format!("{} on each of .{key}", node(label)),
            Start::Range { label, key } => format!("{} on .{key}", node(label)),
            Start::RangeColumn { label, key } => {
                format!("{} by the column of .{key}", node(label))
            }
            Start::ColumnFilter { label, key } => format!(
                "{} by the column of .{key}, the WHERE on it once per value",
                node(label)
            ),
            Start::PropertyScan { label, key } => format!("{} where .{key} equals", node(label)),
            Start::Label(l) => format!("({var}:{l})"),
            Start::All => format!("({var})"),
            Start::Nothing => format!("({var}): a value it needs is null"),
        }
    }
}

/// A node or relationship pattern: what a profiled run's [`Taken`] counts
/// rows and time by.
pub(crate) trait Element {
    fn span(&self) -> plexus_cypher::Span;
}

impl Element for NodePattern {
    fn span(&self) -> plexus_cypher::Span {
        self.span
    }
}

impl Element for plexus_cypher::RelPattern {
    fn span(&self) -> plexus_cypher::Span {
        self.span
    }
}

/// A pattern element's address in the query: where its text starts, plus
/// one (0 is no element). Keyed by the text rather than by the element in
/// memory, so that a copy of a pattern — the count of `MATCH … RETURN
/// count(*)` walks one with the names nothing reads dropped, and EXPLAIN
/// makes its own — is counted as the element it copies. No two elements
/// of one query start at one place.
pub(crate) fn address(element: &impl Element) -> usize {
    element.span().start.saturating_add(1)
}

/// What a profiled run took: the starts, by node pattern (its address in
/// the query), which PROFILE shows in place of what EXPLAIN foresaw (all
/// of them when rows started differently); and the rows each start and
/// each hop produced, by node or relationship pattern, which PROFILE
/// shows beside each step.
#[derive(Default)]
pub(crate) struct Taken {
    starts: Vec<(usize, &'static str, String)>,
    rows: rustc_hash::FxHashMap<usize, u64>,
    /// The time each start and hop spent on its own work: the matcher
    /// walks them all together, depth first, so each switch from one to
    /// another charges the time since the last switch to the one left.
    time: rustc_hash::FxHashMap<usize, Duration>,
    /// The element being worked on (0: none), and since when.
    clock: Option<(usize, Instant)>,
}

impl Taken {
    /// Notes that a walk from `np` started at `start`.
    pub(crate) fn note(&mut self, np: &NodePattern, start: &Start<'_>) {
        let at = address(np);
        let op = start.operator();
        if !self.starts.iter().any(|(a, o, _)| *a == at && *o == op) {
            self.starts.push((at, op, start.details(np)));
        }
    }

    /// Counts `n` rows produced at the pattern element at address `at` (a
    /// start node's pattern, or a hop's relationship pattern).
    pub(crate) fn count(&mut self, at: usize, n: u64) {
        let r = self.rows.entry(at).or_default();
        *r = r.saturating_add(n);
    }

    /// The rows counted at pattern element `element` (a start's node
    /// pattern, a hop's relationship pattern) and the time it spent, if the
    /// run took it (a step the run took another way counts none).
    pub(crate) fn rows(&self, element: &impl Element) -> Option<(u64, Duration)> {
        let at = address(element);
        let time = self.time.get(&at).copied().unwrap_or_default();
        self.rows.get(&at).map(|n| (*n, time))
    }

    /// Work moves to the pattern element at address `to` (0: to none):
    /// the time since the last switch goes to the element left, which is
    /// returned so that it can be switched back to.
    pub(crate) fn switch(&mut self, to: usize) -> usize {
        let now = Instant::now();
        match self.clock.replace((to, now)) {
            Some((at, since)) => {
                if at != 0 {
                    *self.time.entry(at).or_default() += now.saturating_duration_since(since);
                }
                at
            }
            None => 0,
        }
    }

    /// The starts taken from `np`, in the order first taken: operators
    /// and details, each joined by " / ".
    pub(crate) fn of(&self, np: &NodePattern) -> Option<(String, String)> {
        let at = address(np);
        let mine: Vec<&(usize, &'static str, String)> =
            self.starts.iter().filter(|(a, _, _)| *a == at).collect();
        if mine.is_empty() {
            return None;
        }
        let ops: Vec<&str> = mine.iter().map(|(_, o, _)| *o).collect();
        let mut details: Vec<&str> = Vec::new();
        for (_, _, d) in &mine {
            if !details.contains(&d.as_str()) {
                details.push(d);
            }
        }
        Some((ops.join(" / "), details.join(" / ")))
    }
}

/// The value of a hint `e` the start needs: evaluated on the row, a
/// parameter or variable borrowed where it is (`eval::operand`: an equality
/// seek on `{id: $id}` starts most lookups, and cloning its string was an
/// allocation and a copy per query), or in a dry seek, when only the run
/// knows it — `e` reads a variable bound before the MATCH, or a parameter
/// EXPLAIN was not given — `stand_in`.
pub(super) fn hint_value<'v>(
    m: &'v Matcher<'_, '_>,
    e: &Expr,
    row: &'v Row,
    stand_in: fn() -> Value,
) -> Result<Cow<'v, Value>, crate::error::QueryError> {
    let Some(before) = m.dry else {
        // Blamed as `eval` blames: an inline property's error is the query's.
        return crate::eval::operand(e, row, m.ctx).map_err(|err| err.at(e.span.start));
    };
    let known = match before.iter().any(|v| !crate::eval::free_of(e, v)) {
        true => None,
        false => match m.eval(e, row) {
            Err(e) if e.is_parameter_missing() => None,
            other => Some(other),
        },
    };
    known
        .unwrap_or_else(|| {
            m.stood_in.set(true);
            Ok(stand_in())
        })
        .map(Cow::Owned)
}

/// How a walk from `np` starts, as the matcher would choose it for a row
/// binding `bound`: the operator, what it reads, and how many nodes it
/// starts from when a seek found them (a scan's count is the label's or
/// the graph's).
pub(crate) fn planned(
    g: &dyn GraphRead,
    ctx: &Ctx<'_>,
    np: &NodePattern,
    bound: &[String],
    where_: Option<&Expr>,
) -> (&'static str, String, Option<f64>) {
    let an = Analysis::new(&[], where_);
    let mut m = super::matcher(g, ctx, &an, &[], where_, Mode::All);
    m.dry = Some(bound);
    let row: Row = bound.iter().map(|v| (v.clone(), Value::Null)).collect();
    let (start, found) = match m.seek(np, &row) {
        // A seek for a stand-in found the stand-in's nodes: an equality
        // finds about one, other seeks an unknown number.
        Ok(s) if m.stood_in.get() => {
            let one = matches!(s.start, Start::Index { any_of: None, .. });
            (s.start, one.then_some(1.0))
        }
        Ok(s) => (s.start, Some(s.ids.len() as f64)),
        // A value that cannot be evaluated before the run (a type error in
        // it, say): the run reports it; the plan names the scan.
        Err(_) => (Start::All, None),
    };
    let estimate = match start {
        Start::Bound => Some(1.0),
        Start::Label(l) => g.label_count(l).ok().map(|n| n as f64),
        Start::All => g.node_count().ok().map(|n| n as f64),
        Start::PropertyScan { .. } | Start::RangeColumn { .. } | Start::ColumnFilter { .. } => None,
        _ => found,
    };
    (start.operator(), start.details(np), estimate)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::limits::Guard;
    use plexus_storage::{IndexSpec, Props, Storage, DEFAULT_GRAPH};
    use std::collections::BTreeMap;

    /// 200 `P` nodes (`k` indexed, `j` and `name` not, `tags` in a
    /// list-element index) and 20 `Q` nodes, with user ids `u0`…`u219`.
    pub(crate) fn graph() -> Storage {
        let db = Storage::in_memory().expect("a store");
        let mut t = db.write(DEFAULT_GRAPH).expect("a writer");
        t.create_index(IndexSpec::property("P", "k"))
            .expect("index");
        t.create_index(IndexSpec::list("P", "tags")).expect("index");
        for i in 0..220i64 {
            let label = if i < 200 { "P" } else { "Q" };
            let props = Props::from([
                ("k".to_string(), Value::Int(i % 50)),
                ("j".to_string(), Value::Int(i % 7)),
                ("name".to_string(), Value::from(format!("n{i}"))),
                (
                    "tags".to_string(),
                    Value::List(vec![Value::from(format!("t{}", i % 3))]),
                ),
            ]);
            t.create_node(Some(&format!("u{i}")), &[label], &props)
                .expect("a node");
        }
        t.commit().expect("commit");
        db
    }

    /// The first node pattern of the last MATCH of `q` and its WHERE.
    fn last_match(q: &plexus_cypher::Query) -> (&NodePattern, Option<&Expr>) {
        let part = q.parts().next().expect("a part");
        part.clauses
            .iter()
            .rev()
            .find_map(|c| match c {
                plexus_cypher::Clause::Match {
                    patterns, where_, ..
                } => Some((&patterns[0].element.start, where_.as_ref())),
                _ => None,
            })
            .expect("a MATCH")
    }

    /// EXPLAIN's start (a dry seek, with `m` bound before the MATCH) and
    /// the start the run takes with `m` bound to node `u3`, for the last
    /// MATCH of `text`.
    fn both(db: &Storage, text: &str) -> (&'static str, &'static str) {
        both_on(&db.read(DEFAULT_GRAPH).expect("a reader"), text)
    }

    fn both_on(r: &dyn GraphRead, text: &str) -> (&'static str, &'static str) {
        let q = plexus_cypher::parse(text).expect("parses");
        let (np, where_) = last_match(&q);
        // The run is given `$w`; EXPLAIN is not.
        let params = BTreeMap::from([("v".to_string(), Value::Int(4))]);
        let mut all = params.clone();
        all.insert("w".to_string(), Value::Int(2));
        let guard = Guard::unlimited();
        let ctx = Ctx::with_graph(&params, r, &guard);
        let bound = ["m".to_string()];
        let (planned, _, _) = planned(r, &ctx, np, &bound, where_);
        let an = Analysis::new(&[], where_);
        let ctx = Ctx::with_graph(&all, r, &guard);
        let m = super::super::matcher(r, &ctx, &an, &[], where_, Mode::All);
        let u3 = r.node_id("u3").expect("read").expect("u3");
        let mut row = Row::new();
        row.insert("m", crate::graph::node(u3));
        let ran = m.seek(np, &row).expect("a seek").start.operator();
        (planned, ran)
    }

    #[test]
    fn explain_names_the_start_the_run_takes() {
        let db = graph();
        let cases = [
            ("MATCH (n:P {k: 3}) RETURN n", "NodeIndexSeek"),
            ("MATCH (n:P) WHERE n.k = $v RETURN n", "NodeIndexSeek"),
            // A value only the run knows: the index is still the start.
            (
                "MATCH (m) MATCH (n:P) WHERE n.k = m.k RETURN n",
                "NodeIndexSeek",
            ),
            (
                "MATCH (n:P) WHERE n.k = 1 OR n.k = 2 RETURN n",
                "NodeIndexSeek",
            ),
            // A parameter EXPLAIN is not given.
            (
                "MATCH (n:P) WHERE n.k = 1 OR n.k = $w RETURN n",
                "NodeIndexSeek",
            ),
            (
                "MATCH (n:P) WHERE n.k > 45 RETURN n",
                "NodeIndexSeekByRange",
            ),
            (
                "MATCH (n:P) WHERE 't1' IN n.tags RETURN n",
                "NodeListElementSeek",
            ),
            (
                "MATCH (n) WHERE elementId(n) = 'u9' RETURN n",
                "NodeByElementIdSeek",
            ),
            (
                "MATCH (n) WHERE elementId(n) = m.name RETURN n",
                "NodeByElementIdSeek",
            ),
            ("MATCH (n) WHERE id(n) = 5 RETURN n", "NodeByIdSeek"),
            // No index on `j`: one pass over the records, not a label scan.
            ("MATCH (n:P) WHERE n.j = 2 RETURN n", "NodeByPropertyScan"),
            ("MATCH (n:P {j: $v}) RETURN n", "NodeByPropertyScan"),
            (
                "MATCH (n:P) WHERE n.j > 2 RETURN n",
                "NodePropertyRangeScan",
            ),
            // Any other conjunct on one unindexed key: its column, once per
            // value (`column_filter.rs`), a value of `m` or a parameter
            // EXPLAIN is not given included.
            (
                "MATCH (n:P) WHERE n.name STARTS WITH 'n1' RETURN n",
                "NodePropertyFilterScan",
            ),
            (
                "MATCH (m) MATCH (n:P) WHERE n.name STARTS WITH m.name RETURN n",
                "NodePropertyFilterScan",
            ),
            (
                "MATCH (n:P) WHERE n.name ENDS WITH $w RETURN n",
                "NodePropertyFilterScan",
            ),
            // Not when a node without the key passes, nor on a small label.
            (
                "MATCH (n:P) WHERE n.name IS NULL RETURN n",
                "NodeByLabelScan",
            ),
            (
                "MATCH (n:Q) WHERE n.name STARTS WITH 'n' RETURN n",
                "NodeByLabelScan",
            ),
            // `rand()` is drawn per node: no seek takes one draw for all.
            ("MATCH (n:P) WHERE n.k > rand() RETURN n", "NodeByLabelScan"),
            ("MATCH (n:P) WHERE n.k = rand() RETURN n", "NodeByLabelScan"),
            // A small label is read member by member.
            ("MATCH (n:Q) WHERE n.j = 2 RETURN n", "NodeByLabelScan"),
            ("MATCH (n:P) RETURN n", "NodeByLabelScan"),
            ("MATCH (n) RETURN n", "AllNodesScan"),
            ("MATCH (n:P {k: null}) RETURN n", "EmptyResult"),
            ("MATCH (m) RETURN m", "Argument"),
        ];
        for (text, want) in cases {
            assert_eq!(both(&db, text), (want, want), "{text}");
        }
        // The estimate: what a seek found, or about one for an equality
        // on a value only the run knows (not what its stand-in found).
        let estimate = |text: &str| {
            let q = plexus_cypher::parse(text).expect("parses");
            let (np, where_) = last_match(&q);
            let r = db.read(DEFAULT_GRAPH).expect("a reader");
            let (params, guard) = (BTreeMap::new(), Guard::unlimited());
            let ctx = Ctx::with_graph(&params, &r, &guard);
            planned(&r, &ctx, np, &["m".to_string()], where_).2
        };
        assert_eq!(estimate("MATCH (n:P {k: 3}) RETURN n"), Some(4.0));
        assert_eq!(estimate("MATCH (n:P) WHERE n.k = $k RETURN n"), Some(1.0));
        assert_eq!(estimate("MATCH (n:P) WHERE n.k > $k RETURN n"), None);
        assert_eq!(estimate("MATCH (n:Q) RETURN n"), Some(20.0));
        // A transaction that changed nodes reads them, not a column.
        let mut t = db.write(DEFAULT_GRAPH).expect("a writer");
        t.create_node(None, &["P"], &Props::new()).expect("a node");
        let text = "MATCH (n:P) WHERE n.j > 2 RETURN n";
        assert_eq!(both_on(&t, text), ("NodeByLabelScan", "NodeByLabelScan"));
    }
}
