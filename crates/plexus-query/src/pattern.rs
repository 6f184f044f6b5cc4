//! Matching patterns against the graph: the MATCH operator, also used by
//! MERGE, pattern predicates and pattern comprehensions.
//!
//! A match is found by backtracking: each path pattern starts from its most
//! selective end (a bound variable, else an index seek on an inline
//! property, else the smallest label, else every node) and follows the
//! adjacency index hop by hop. Relationships are isomorphic within one
//! MATCH: no relationship appears twice in one match.

use crate::error::QueryError;
use crate::eval::{compare, equals, eval, repeatable, Ctx, Row};
use crate::graph::{self, labels_match, node_value, rel_value, type_matches, type_names};
use crate::row::Names;
use plexus_common::{NodeValue, PathValue, RelValue, Value};
use plexus_cypher::{
    Expr, ExprKind, LabelExpr, NodePattern, PathKind, PathPattern, PatternElement, RelDirection,
    RelPattern,
};
use plexus_storage::{Direction, EdgeId, GraphRead, Neighbor, NodeId, StorageError, TypeId};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::collections::VecDeque;

pub(crate) mod adjacent;
pub(crate) mod any_of;
mod column_filter;
mod in_set;
mod node_test;
pub(crate) mod or_expand;
pub(crate) mod reach;
pub(crate) mod rel_seek;
pub(crate) mod start;

use start::{address, Start};

type Res<T> = Result<T, QueryError>;

/// Receives each match with its multiplicity (how many matches it stands
/// for: more than one when the last hop was counted, not walked); returns
/// true to stop the search.
pub type Sink<'s> = dyn FnMut(&Row, u64) -> Res<bool> + 's;

/// Finds every way `patterns` match with `row`'s bindings and satisfy
/// `where_`, handing each extended row to `sink`. Returns true when the sink
/// stopped the search.
pub fn match_all(
    g: &dyn GraphRead,
    ctx: &Ctx<'_>,
    patterns: &[PathPattern],
    where_: Option<&Expr>,
    row: &Row,
    sink: &mut Sink<'_>,
) -> Res<bool> {
    let an = Analysis::new(patterns, where_);
    matcher(g, ctx, &an, patterns, where_, Mode::All).run(patterns, row, sink)
}

/// What a metered search's consumer needs.
#[derive(Clone, Copy)]
pub(crate) enum Want<'a> {
    /// Every match, bound.
    All,
    /// Each distinct row once (a DISTINCT projection, `count(DISTINCT …)`):
    /// rows may come once however many matches share them, so a last
    /// variable-length hop whose relationships nothing reads is walked
    /// breadth-first, visiting each node once, instead of enumerating every
    /// trail (see `Matcher::reach`).
    Distinct,
    /// As `Distinct`, for a consumer of only the distinct values of node
    /// variable `var`: a match whose last step binds it adds its node to
    /// the set ([`Ends`]); any other match reaches the sink with its row.
    Nodes(&'a str, &'a DistinctNodes),
}

impl Want<'_> {
    pub(crate) fn rows(distinct: bool) -> Want<'static> {
        if distinct {
            Want::Distinct
        } else {
            Want::All
        }
    }
}

/// [`match_all`], counting its work on `meter`: a search that spends the
/// meter's cap stops early and its matches are incomplete
/// ([`Meter::spent`]), so a caller trying a cheaper plan can give up on it
/// at a bounded cost.
#[expect(
    clippy::too_many_arguments,
    reason = "match_all's arguments, the clause's analysis, the consumer's need and the meter"
)]
pub(crate) fn match_metered(
    g: &dyn GraphRead,
    ctx: &Ctx<'_>,
    patterns: &[PathPattern],
    where_: Option<&Expr>,
    an: &Analysis<'_>,
    row: &Row,
    want: Want<'_>,
    meter: &Meter,
    sink: &mut Sink<'_>,
) -> Res<bool> {
    let mode = match want {
        Want::All => Mode::All,
        Want::Distinct | Want::Nodes(..) => Mode::Distinct,
    };
    let mut m = matcher(g, ctx, an, patterns, where_, mode);
    m.meter = Some(meter);
    if let Want::Nodes(var, nodes) = want {
        m.ends = Some(Ends {
            var,
            nodes,
            in_run: false,
        });
    }
    m.run(patterns, row, sink)
}

/// The work of a search: start candidates and relationships read. A
/// search past `cap` reads nothing more and finds no more matches.
#[derive(Debug)]
pub(crate) struct Meter {
    used: std::cell::Cell<u64>,
    cap: u64,
}

impl Meter {
    pub(crate) fn new(cap: u64) -> Meter {
        Meter {
            used: std::cell::Cell::new(0),
            cap,
        }
    }

    pub(crate) fn used(&self) -> u64 {
        self.used.get()
    }

    /// Whether the meter stops a search (else it only counts).
    fn capped(&self) -> bool {
        self.cap != u64::MAX
    }

    /// Whether the search went past its cap (its matches are incomplete).
    pub(crate) fn spent(&self) -> bool {
        self.used.get() > self.cap
    }

    /// Counts `n` units; whether the search may go on.
    fn charge(&self, n: u64) -> bool {
        self.used.set(self.used.get().saturating_add(n));
        !self.spent()
    }
}

/// What the consumer of the matches needs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Every match, bound.
    All,
    /// How many matches: it reads no variable of the row.
    Count,
    /// Each distinct row once.
    Distinct,
}

/// How many ways `patterns` match with `row`'s bindings and satisfy
/// `where_`: [`match_all`] for a caller that only counts, so a last
/// pattern that is one node whose candidates need no check (an index seek
/// or column scan answered the WHERE) is counted without binding each.
pub fn count_all(
    g: &dyn GraphRead,
    ctx: &Ctx<'_>,
    patterns: &[PathPattern],
    where_: Option<&Expr>,
    row: &Row,
) -> Res<u64> {
    if let Some(n) = count_from_counters(g, patterns, where_, row)? {
        return Ok(n);
    }
    let mut n = 0u64;
    let an = Analysis::new(patterns, where_);
    matcher(g, ctx, &an, patterns, where_, Mode::Count).run(patterns, row, &mut |_, times| {
        n = n.saturating_add(times);
        Ok(false)
    })?;
    Ok(n)
}

/// The count of `MATCH ()-[:T]->() RETURN count(*)` (one directed hop
/// between unconstrained, unbound nodes, the relationship constrained by
/// type at most, no WHERE), read from the type counters instead of walking
/// every node: "does any relationship still have type T" costs a lookup.
/// Likewise `MATCH (n) RETURN count(*)` and `MATCH (n:L) RETURN count(*)`
/// from the node and label counters, which listed every node (5 ms at
/// 100k nodes).
fn count_from_counters(
    g: &dyn GraphRead,
    patterns: &[PathPattern],
    where_: Option<&Expr>,
    row: &Row,
) -> Res<Option<u64>> {
    let [p] = patterns else { return Ok(None) };
    if where_.is_some() || p.kind != PathKind::Normal || p.var.is_some() {
        return Ok(None);
    }
    let unconstrained = |np: &NodePattern| {
        np.props.is_none() && np.where_.is_none() && bound_node(row, &np.var).is_none()
    };
    let free = |np: &NodePattern| np.labels.is_none() && unconstrained(np);
    let (rel, end) = match p.element.chain.as_slice() {
        // `MATCH (n) RETURN count(*)`, `MATCH (n:L) …`: the node counter
        // or the label's.
        [] => {
            let np = &p.element.start;
            if !unconstrained(np) || np.var.as_ref().is_some_and(|v| row.contains_key(v)) {
                return Ok(None);
            }
            return Ok(match &np.labels {
                None => Some(g.node_count()?),
                Some(LabelExpr::Name(l)) => Some(g.label_count(l)?),
                Some(_) => None,
            });
        }
        [(rel, end)] => (rel, end),
        _ => return Ok(None),
    };
    // `(n)-[r]->(n)` asks for self-loops only: not every relationship.
    let one_node = p.element.start.var.is_some() && p.element.start.var == end.var;
    let simple = free(&p.element.start)
        && free(end)
        && !one_node
        && rel.length.is_none()
        && rel.props.is_none()
        && rel.where_.is_none()
        && rel.direction != RelDirection::Either
        && rel.var.as_ref().is_none_or(|v| !row.contains_key(v));
    if !simple {
        return Ok(None);
    }
    let n = match rel.types.as_ref() {
        None => g.edge_count()?,
        Some(t) => match type_names(t) {
            Some(mut names) => {
                // `[:T|T]` matches each relationship once.
                names.sort_unstable();
                names.dedup();
                let mut n = 0u64;
                for name in names {
                    n = n.saturating_add(g.type_count(name)?);
                }
                n
            }
            None => return Ok(None),
        },
    };
    Ok(Some(n))
}

/// What a MATCH's patterns and WHERE give every one of its searches: the
/// seeks the WHERE offers and the conjuncts checked on the way. The same
/// for every input row, so a MATCH run once per row (IC5's per friend, after
/// a `WITH DISTINCT`) works it out once (`exec/pipeline.rs` keeps one per
/// clause) instead of walking its WHERE again for each.
pub(crate) struct Analysis<'a> {
    /// `var.key = expr` conjuncts of the WHERE clause: index seeks for a
    /// start node, besides its inline properties. The WHERE is still
    /// evaluated on every match; a hint only narrows the candidates.
    hints: Vec<(&'a str, &'a str, &'a Expr)>,
    /// `var.key < expr` (and `<=`, `>`, `>=`) conjuncts: range seeks when
    /// no equality serves; the WHERE is still evaluated on every match.
    ranges: Vec<RangeHint<'a>>,
    /// `elementId(var) = expr` conjuncts: the node by its user id, one
    /// point lookup; the WHERE is still evaluated on the match.
    ids: Vec<(&'a str, &'a Expr)>,
    /// `id(var) = expr` conjuncts: the node by its internal id, one record
    /// read; the WHERE is still evaluated on the match.
    internal_ids: Vec<(&'a str, &'a Expr)>,
    /// `x IN var.key` conjuncts: seeks in a list-element index; the WHERE
    /// is still evaluated on every candidate.
    elements: Vec<(&'a str, &'a str, &'a Expr)>,
    /// `var.key = a OR var.key = b …` conjuncts: one index seek per
    /// alternative (`any_of.rs`); the WHERE is still evaluated.
    any_of: Vec<any_of::AnyOf<'a>>,
    /// The WHERE's ORs, each alternative with its equalities: the source
    /// of `any_of`, and of the walks per alternative (`or_expand.rs`).
    ors: Vec<any_of::Or<'a>>,
    /// The conjuncts checked during the walk ([`Early`]).
    conjuncts: Vec<(&'a Expr, Vec<&'a str>)>,
    /// Every conjunct reads a variable the MATCH binds.
    all: bool,
    /// The WHERE is one conjunct (no AND at its top).
    one_conjunct: bool,
    /// The variables' names, shared by every row that binds them.
    names: Names,
}

impl<'a> Analysis<'a> {
    pub(crate) fn new(patterns: &'a [PathPattern], where_: Option<&'a Expr>) -> Analysis<'a> {
        let mut an = Analysis {
            hints: Vec::new(),
            ranges: Vec::new(),
            ids: Vec::new(),
            internal_ids: Vec::new(),
            elements: Vec::new(),
            any_of: Vec::new(),
            ors: Vec::new(),
            conjuncts: Vec::new(),
            all: where_.is_some(),
            one_conjunct: false,
            names: Names::default(),
        };
        let Some(w) = where_ else {
            return an;
        };
        // One walk of the WHERE's conjuncts gives every kind of hint (this
        // runs for every MATCH of every query; a walk per kind was a third
        // of a point lookup by element id).
        let mut count = 0;
        each_conjunct(w, |c| {
            count += 1;
            for (x, v) in equality_sides(c).into_iter().flatten() {
                an.hints.extend(property_hint(x, v));
                an.ids.extend(id_hint(x, v, "elementid"));
                an.internal_ids.extend(id_hint(x, v, "id"));
            }
            range_hints(c, &mut an.ranges);
            an.elements.extend(element_hint(c));
            an.ors.extend(any_of::or_of(c));
            let deps: Vec<&str> = patterns
                .iter()
                .flat_map(crate::exec::pattern_var_names)
                .filter(|v| !crate::eval::free_of(c, v))
                .collect();
            if deps.is_empty() {
                an.all = false;
            } else {
                an.conjuncts.push((c, deps));
            }
        });
        an.one_conjunct = count == 1;
        any_of::hints(&an.ors, &mut an.any_of);
        an
    }
}

fn matcher<'a, 'c>(
    g: &'a dyn GraphRead,
    ctx: &'a Ctx<'c>,
    an: &'a Analysis<'a>,
    patterns: &'a [PathPattern],
    where_: Option<&'a Expr>,
    mode: Mode,
) -> Matcher<'a, 'c> {
    Matcher {
        g,
        ctx,
        where_,
        where_answered: std::cell::Cell::new(false),
        used: Vec::new(),
        weight: 1,
        trail_needed: patterns.iter().any(|p| p.var.is_some()),
        an,
        mode,
        all_patterns: patterns,
        patterns_after: 0,
        single: patterns.len() == 1,
        ahead: crate::ahead::ReadAhead::new(g),
        only: Vec::new(),
        early: Early {
            conjuncts: &an.conjuncts,
            all: an.all,
            passed: 0,
        },
        meter: None,
        dry: None,
        stood_in: std::cell::Cell::new(false),
        spares: Spares::default(),
        in_sets: in_set::InSets::default(),
        node_tests: node_test::NodeTests::default(),
        ends: None,
    }
}

/// The storage direction of a hop written `d`, walked against its written
/// direction when `reversed`.
fn hop_direction(d: RelDirection, reversed: bool) -> Direction {
    match (d, reversed) {
        (RelDirection::Right, false) | (RelDirection::Left, true) => Direction::Out,
        (RelDirection::Left, false) | (RelDirection::Right, true) => Direction::In,
        (RelDirection::Either, _) => Direction::Both,
    }
}

/// One hop of a path as it is walked: the relationship pattern, the node it
/// leads to, and whether the hop is walked against its written direction.
struct Hop<'p> {
    rel: &'p RelPattern,
    node: &'p NodePattern,
    reversed: bool,
}

struct Matcher<'a, 'c> {
    g: &'a dyn GraphRead,
    ctx: &'a Ctx<'c>,
    /// The MATCH's WHERE, checked on each complete match.
    where_: Option<&'a Expr>,
    /// Set when the start's seek answered the whole WHERE exactly for every
    /// candidate (an index equality, the column's range or filter): it
    /// need not be evaluated.
    where_answered: std::cell::Cell<bool>,
    /// Relationships already part of the current match.
    used: Vec<Used>,
    /// How many matches the one being built stands for (see [`Sink`]).
    weight: u64,
    /// Whether a path variable needs the walked trail; without one, a
    /// final unconstrained hop is counted from the degree counters.
    trail_needed: bool,
    /// What the WHERE offers every search of this MATCH ([`Analysis`]).
    an: &'a Analysis<'a>,
    /// What the consumer needs.
    mode: Mode,
    /// The MATCH's patterns, and how many come after the one being
    /// matched (none: it is the last).
    all_patterns: &'a [PathPattern],
    patterns_after: usize,
    /// Whether the MATCH has one pattern: then its WHERE reads only that
    /// pattern's variables and the row's, all bound once a path matched.
    single: bool,
    /// Adjacency read ahead on a remote store (`ahead.rs`).
    ahead: crate::ahead::ReadAhead,
    /// Hops restricted to the relationships a relationship seek found
    /// (`rel_seek.rs`).
    only: rel_seek::Only,
    /// The WHERE's conjuncts with the variables of this MATCH each may
    /// read: a conjunct is checked as soon as the walk has bound them all,
    /// so a partial match that fails it is not walked further ([`Early`]).
    early: Early<'a>,
    /// Counts the search's work; once spent, nothing more is read.
    meter: Option<&'a Meter>,
    /// A dry seek for EXPLAIN (`start.rs`), with the variables bound
    /// before the MATCH: scans are named, not read.
    dry: Option<&'a [String]>,
    /// Set when a dry seek took a stand-in for a value only the run knows:
    /// what it found then says nothing of the run's count.
    stood_in: std::cell::Cell<bool>,
    /// Node values a hop unbound, for its next binding.
    spares: Spares,
    /// The lists of `x IN list` conjuncts as sets (`in_set.rs`).
    in_sets: in_set::InSets,
    /// Conjuncts comparing a node's property with a constant, their
    /// constant evaluated once (`node_test.rs`).
    node_tests: node_test::NodeTests<'a>,
    /// Where a consumer of one node variable's distinct values takes them
    /// ([`Want::Nodes`]).
    ends: Option<Ends<'a>>,
}

/// Where the matches of node variable `var` go for a consumer that needs
/// only its distinct values (`count(DISTINCT v)`): a match whose last step
/// binds `var` adds its node to `nodes` instead of going through the
/// walk's closures, the final WHERE and the sink with its whole row — a
/// fifth of a breadth-first reach's distinct count.
struct Ends<'a> {
    var: &'a str,
    nodes: &'a DistinctNodes,
    /// Inside a reach whose ends are the matches' (`reach.rs`): each comes
    /// once ([`DistinctNodes::add_in_run`]).
    in_run: bool,
}

/// Distinct nodes, each charged to the query's memory budget as it is
/// added (the caller releases them: [`DistinctNodes::charged`]).
///
/// A breadth-first reach hands out each of its ends once (`reach.rs`), so
/// when the whole count is one reach from one start (`MATCH (a {id:
/// $id})-[*1..3]->(b) RETURN count(DISTINCT b)`), hashing every end again
/// here was a tenth of the query. The ends of a *run* ([`Self::begin_run`])
/// are pushed on a list while they are the only nodes held; a second run
/// or any other node moves them into the set first, so the two never hold
/// the same node.
#[derive(Default)]
pub(crate) struct DistinctNodes(std::cell::RefCell<Held>);

#[derive(Default)]
struct Held {
    set: rustc_hash::FxHashSet<NodeId>,
    /// The first run's ends, while the set is empty.
    run: Vec<NodeId>,
    /// Runs begun.
    runs: u32,
}

impl Held {
    /// Moves the first run's ends into the set.
    fn settle(&mut self) {
        if !self.run.is_empty() {
            let run = std::mem::take(&mut self.run);
            self.set.extend(run);
        }
    }
}

impl DistinctNodes {
    /// What a distinct node costs the budget: its entry in the set.
    const PER_NODE: usize = 32;

    /// Adds `n`, charging it when it is new. A charge past the budget fails
    /// but stays taken (the guard counts it), so the node stays too: what
    /// the set holds is always what it charged, and [`Self::charged`] gives
    /// back exactly that.
    pub(crate) fn add(&self, n: NodeId, guard: &crate::limits::Guard) -> Res<()> {
        let mut held = self.0.borrow_mut();
        held.settle();
        if held.set.insert(n) {
            guard.charge(Self::PER_NODE)?;
        }
        Ok(())
    }

    /// Starts a run of ends each added once ([`Self::add_in_run`]).
    pub(crate) fn begin_run(&self) {
        let mut held = self.0.borrow_mut();
        held.settle();
        held.runs = held.runs.saturating_add(1);
    }

    /// Adds `n`, an end of the current run that the run has not added
    /// before: listed without a hash while it is the first run and nothing
    /// else was added, else as [`Self::add`] adds.
    pub(crate) fn add_in_run(&self, n: NodeId, guard: &crate::limits::Guard) -> Res<()> {
        let mut held = self.0.borrow_mut();
        if held.runs == 1 && held.set.is_empty() {
            held.run.push(n);
            return guard.charge(Self::PER_NODE);
        }
        drop(held);
        self.add(n, guard)
    }

    pub(crate) fn len(&self) -> usize {
        let held = self.0.borrow();
        held.set.len() + held.run.len()
    }

    /// What the nodes held are charged.
    pub(crate) fn charged(&self) -> usize {
        self.len() * Self::PER_NODE
    }
}

/// Node values given back when a hop unbinds its node and nothing else
/// holds them, for the next binding to reuse: a walk binds a node value
/// per step and drops it on the way back, one allocation and free each
/// (the largest group of a breadth-first reach's allocations).
#[derive(Default)]
struct Spares(Vec<std::sync::Arc<NodeValue>>);

impl Spares {
    /// Enough for the depth of the walks that rebind at every step.
    const KEPT: usize = 8;

    /// A value of node `id`, a spare one when there is one.
    fn node(&mut self, id: NodeId) -> Value {
        while let Some(mut spare) = self.0.pop() {
            if let Some(n) = std::sync::Arc::get_mut(&mut spare) {
                *n = node_value(id);
                return Value::Node(spare);
            }
        }
        graph::node(id)
    }

    /// Keeps `v` when it is a node value nothing else holds.
    fn give_back(&mut self, v: Option<Value>) {
        if let Some(Value::Node(n)) = v {
            if self.0.len() < Self::KEPT && std::sync::Arc::strong_count(&n) == 1 {
                self.0.push(n);
            }
        }
    }
}

/// WHERE conjuncts checked during the walk. Each is checked once on a
/// partial match, when the last of the variables it reads is bound; the
/// whole WHERE is checked again on a complete match unless every conjunct
/// was checked on the way (`all` and `passed`).
struct Early<'a> {
    conjuncts: &'a [(&'a Expr, Vec<&'a str>)],
    /// Every conjunct reads a variable this MATCH binds.
    all: bool,
    /// How many conjuncts the current partial match passed.
    passed: usize,
}

impl Early<'_> {
    /// Whether the complete match passed every conjunct on the way.
    fn settled(&self) -> bool {
        self.all && self.passed == self.conjuncts.len()
    }
}

/// One bound on a property, from a comparison in WHERE.
pub(crate) struct RangeHint<'e> {
    pub var: &'e str,
    pub key: &'e str,
    pub value: &'e Expr,
    /// True for a lower bound (`var.key > value`).
    pub lower: bool,
    pub inclusive: bool,
}

/// The bounds on one property that a WHERE's comparisons give.
pub(super) enum Bounds<'k> {
    /// A bound is null: nothing passes.
    Empty,
    Range {
        key: &'k str,
        lo: std::ops::Bound<Value>,
        hi: std::ops::Bound<Value>,
    },
}

/// A `var.key <op> expr` conjunct (either way round) as range hints.
fn range_hints<'e>(c: &'e Expr, out: &mut Vec<RangeHint<'e>>) {
    use plexus_cypher::BinOp;
    let ExprKind::Binary(op, a, b) = &c.kind else {
        return;
    };
    let (lower, inclusive) = match op {
        BinOp::Gt => (true, false),
        BinOp::Ge => (true, true),
        BinOp::Lt => (false, false),
        BinOp::Le => (false, true),
        _ => return,
    };
    // `n.k > v` bounds from below; `v > n.k` from above. A bound is
    // evaluated once for every node: not `rand()`, drawn per node.
    for (p, v, lower) in [(a, b, lower), (b, a, !lower)] {
        if let (Some((var, key)), true) = (var_property(p), repeatable(v)) {
            out.push(RangeHint {
                var,
                key,
                value: v,
                lower,
                inclusive,
            });
        }
    }
}

/// `function(var) = expr` (either way round) among the conjuncts of `e`,
/// for `function` `elementid` or `id` (lower case).
pub(crate) fn id_hints<'e>(e: &'e Expr, function: &str, out: &mut Vec<(&'e str, &'e Expr)>) {
    each_equality(e, |x, v| out.extend(id_hint(x, v, function)));
}

/// `function(var)` compared with `v`, as (var, v).
fn id_hint<'e>(call: &'e Expr, v: &'e Expr, function: &str) -> Option<(&'e str, &'e Expr)> {
    let ExprKind::Call { name, args, .. } = &call.kind else {
        return None;
    };
    match (args.as_slice(), name.eq_ignore_ascii_case(function)) {
        ([arg], true) => match &arg.kind {
            ExprKind::Var(var) => Some((var, v)),
            _ => None,
        },
        _ => None,
    }
}

/// An `x IN var.key` conjunct, as (var, key, x): a seek in a list-element
/// index of `key`.
fn element_hint(c: &Expr) -> Option<(&str, &str, &Expr)> {
    let ExprKind::Binary(plexus_cypher::BinOp::In, x, list) = &c.kind else {
        return None;
    };
    match (var_property(list), repeatable(x)) {
        (Some((var, key)), true) => Some((var, key, x)),
        _ => None,
    }
}

/// Collects the `var.key = expr` conjuncts of a predicate.
pub(crate) fn equality_hints<'e>(e: &'e Expr, out: &mut Vec<(&'e str, &'e str, &'e Expr)>) {
    each_equality(e, |x, v| out.extend(property_hint(x, v)));
}

/// `var.key` compared with `v`, as (var, key, v).
fn property_hint<'e>(x: &'e Expr, v: &'e Expr) -> Option<(&'e str, &'e str, &'e Expr)> {
    var_property(x).map(|(var, key)| (var, key, v))
}

/// The conjuncts of a WHERE: `a AND (b AND c)` gives a, b, c.
pub(crate) fn conjuncts(e: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    each_conjunct(e, |c| out.push(c));
    out
}

/// Calls `f` with each conjunct of `e` in order, walked with a stack of its
/// own (AND chains can be long) that is never allocated for a WHERE of one
/// conjunct: this runs for every MATCH of every query.
pub(crate) fn each_conjunct<'e>(e: &'e Expr, mut f: impl FnMut(&'e Expr)) {
    let mut rest: Vec<&'e Expr> = Vec::new();
    let mut at = e;
    loop {
        if let ExprKind::Binary(plexus_cypher::BinOp::And, a, b) = &at.kind {
            rest.push(b);
            at = a;
            continue;
        }
        f(at);
        match rest.pop() {
            Some(next) => at = next,
            None => return,
        }
    }
}

/// Calls `f` with each `x = y` conjunct, both ways round: (x, y) and
/// (y, x), where the second can be evaluated once for every node. A value
/// such as `rand()` cannot: a seek would take one draw for all the nodes
/// the WHERE draws for one by one.
fn each_equality<'e>(e: &'e Expr, mut f: impl FnMut(&'e Expr, &'e Expr)) {
    each_conjunct(e, |c| {
        for (x, v) in equality_sides(c).into_iter().flatten() {
            f(x, v);
        }
    });
}

/// [`each_equality`] of one conjunct.
fn equality_sides(c: &Expr) -> [Option<(&Expr, &Expr)>; 2] {
    match &c.kind {
        ExprKind::Binary(plexus_cypher::BinOp::Eq, a, b) => [
            repeatable(b).then_some((&**a, &**b)),
            repeatable(a).then_some((&**b, &**a)),
        ],
        _ => [None, None],
    }
}

/// The first of `labels` (then no label) that has an index `find` can
/// use, and what it answers; `None` when none has.
fn first_index<'l, T>(
    labels: &[&'l str],
    mut find: impl FnMut(Option<&str>) -> Result<T, StorageError>,
) -> Res<Option<(Option<&'l str>, T)>> {
    for l in labels.iter().map(|l| Some(*l)).chain([None]) {
        match find(l) {
            Ok(found) => return Ok(Some((l, found))),
            Err(StorageError::NoIndex(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

/// `var.key`, as (var, key).
fn var_property(e: &Expr) -> Option<(&str, &str)> {
    match &e.kind {
        ExprKind::Property(base, key) => match &base.kind {
            ExprKind::Var(var) => Some((var.as_str(), key.as_str())),
            _ => None,
        },
        _ => None,
    }
}

/// A relationship of the current match, with what the isomorphism check
/// of a counted hop needs to know without reading it again.
#[derive(Clone, Copy)]
struct Used {
    edge: EdgeId,
    start: NodeId,
    end: NodeId,
    rel_type: plexus_storage::TypeId,
}

impl Used {
    fn of(from: NodeId, n: &Neighbor) -> Used {
        let (start, end) = rel_of(from, n);
        Used {
            edge: n.edge,
            start,
            end,
            rel_type: n.rel_type,
        }
    }
}

/// The nodes a walk starts from, and how they were found.
struct Seek<'p> {
    ids: Vec<NodeId>,
    /// The inline property (its place among the node pattern's) an index
    /// seek or a pass answered exactly: its check need not read the node
    /// again.
    answered: Option<usize>,
    start: Start<'p>,
}

impl<'p> Seek<'p> {
    fn of(start: Start<'p>, ids: Vec<NodeId>) -> Seek<'p> {
        Seek {
            ids,
            answered: None,
            start,
        }
    }
}

/// The path built so far: nodes and relationships in walking order.
#[derive(Default, Clone)]
struct Trail {
    nodes: Vec<NodeValue>,
    rels: Vec<RelValue>,
}

fn bound_node(row: &Row, var: &Option<String>) -> Option<Option<NodeId>> {
    let v = var.as_ref()?;
    match row.get(v)? {
        Value::Node(n) => Some(Some(NodeId(n.id))),
        _ => Some(None),
    }
}

/// Binds `var` to `v` in `row` unless it is bound already; says whether it
/// bound (so the caller unbinds on the way back) and whether the existing
/// binding agrees.
/// The value is made only for a named variable: an unnamed node or
/// relationship of a pattern binds nothing, and allocates nothing.
fn bind(
    names: &Names,
    row: &mut Row,
    var: &Option<String>,
    v: impl FnOnce() -> Value,
) -> (bool, bool) {
    match var {
        None => (false, true),
        Some(name) => match row.insert_absent(names.of(name), v()) {
            Some((old, v)) => (false, *old == v),
            None => (true, true),
        },
    }
}

/// Undoes what [`bind`] did; returns the value it bound, if it bound one.
fn unbind(row: &mut Row, var: &Option<String>, did: bool) -> Option<Value> {
    match (did, var) {
        (true, Some(name)) => row.remove(name),
        _ => None,
    }
}

/// A hop that binds and checks nothing: an unnamed relationship of given
/// types (or any) to an unnamed node without labels, properties or WHERE.
fn unconstrained(hop: &Hop<'_>) -> bool {
    let (r, n) = (hop.rel, hop.node);
    r.var.is_none()
        && r.props.is_none()
        && r.where_.is_none()
        && r.types.as_ref().is_none_or(|t| type_names(t).is_some())
        && n.var.is_none()
        && n.labels.is_none()
        && n.props.is_none()
        && n.where_.is_none()
}

/// Whether the matcher counts a last hop `-[r]->(n)` of a walk that needs
/// no trail from the degree counters instead of walking it
/// ([`Matcher::hops`]; EXPLAIN's `ExpandByDegree`).
pub(crate) fn counted_by_degree(r: &RelPattern, n: &NodePattern) -> bool {
    r.length.is_none() && unconstrained_pair(r, n)
}

/// Whether the matcher counts a last variable-length hop `-[*m..n]->()`
/// that binds and checks nothing of a walk that needs no trail by counting
/// its trails instead of matching each ([`Matcher::count_trails`];
/// EXPLAIN's `VarLengthCount`).
pub(crate) fn trails_counted(r: &RelPattern, n: &NodePattern) -> bool {
    r.length.is_some() && unconstrained_pair(r, n)
}

/// [`unconstrained`] of the hop `r` to `n`, as the plan sees it.
fn unconstrained_pair(r: &RelPattern, n: &NodePattern) -> bool {
    unconstrained(&Hop {
        rel: r,
        node: n,
        reversed: false,
    })
}

/// The count of a top-level `MATCH … RETURN count(*)` when the type
/// counters answer it ([`count_from_counters`]; EXPLAIN's
/// `RelationshipCountFromCountStore`).
pub(crate) fn counted_from_counters(
    g: &dyn GraphRead,
    patterns: &[PathPattern],
    where_: Option<&Expr>,
) -> Option<u64> {
    count_from_counters(g, patterns, where_, &Row::new())
        .ok()
        .flatten()
}

/// The labels a label expression requires (`:A:B` → A and B).
fn required_labels(e: &LabelExpr) -> Vec<&str> {
    match e {
        LabelExpr::Name(l) => vec![l.as_str()],
        LabelExpr::And(parts) => parts.iter().flat_map(required_labels).collect(),
        _ => vec![],
    }
}

fn map_entries(e: &Expr) -> &[(String, Expr)] {
    match &e.kind {
        ExprKind::Map(entries) => entries,
        _ => &[],
    }
}

impl Matcher<'_, '_> {
    fn run(mut self, patterns: &[PathPattern], row: &Row, sink: &mut Sink<'_>) -> Res<bool> {
        let mut row = row.clone();
        self.patterns(patterns, &mut row, sink)
    }

    fn eval(&self, e: &Expr, row: &Row) -> Res<Value> {
        eval(e, row, self.ctx)
    }

    fn patterns(
        &mut self,
        patterns: &[PathPattern],
        row: &mut Row,
        sink: &mut Sink<'_>,
    ) -> Res<bool> {
        let Some((first, rest)) = patterns.split_first() else {
            if let (Some(w), false) = (self.where_, self.where_answered.get()) {
                if !self.early.settled() && self.eval(w, row)? != Value::Bool(true) {
                    return Ok(false);
                }
            }
            return sink(row, self.weight);
        };
        self.patterns_after = rest.len();
        self.path(first, row, &mut |m: &mut Self, row: &mut Row| {
            let stop = m.patterns(rest, row, sink);
            // Back in `first`'s walk, which the later patterns' calls
            // marked as theirs.
            m.patterns_after = rest.len();
            stop
        })
    }

    /// Matches one path pattern, calling `next` for each way it matches.
    fn path(
        &mut self,
        p: &PathPattern,
        row: &mut Row,
        next: &mut dyn FnMut(&mut Self, &mut Row) -> Res<bool>,
    ) -> Res<bool> {
        if p.kind != PathKind::Normal {
            return self.shortest(p, row, next);
        }
        if let Some(branches) = self.or_branches(p, row)? {
            return self.walk_branches(p, &branches, row, next);
        }
        let el = &p.element;
        let reverse = match bound_node(row, &el.start.var).is_some() {
            true => self.cheaper_from_end(el, row)?,
            false => from_end(el, |n| bound_node(row, &n.var).is_some()),
        };
        let via_edges = self.rel_seek(el, row)?;
        let reverse = via_edges.as_ref().map_or(reverse, |s| s.reverse);
        let (start, hops) = walk_order(el, reverse);
        let (ids, seeked) = match (&via_edges, hops.first()) {
            (Some(s), Some(first)) => (self.rel_seek_starts(first, &s.edges)?, None),
            _ => {
                let s = self.seek(start, row)?;
                let props = start.props.as_deref().map(map_entries).unwrap_or_default();
                let answered = s.answered.and_then(|i| props.get(i));
                (s.ids, answered.map(|(k, _)| k.as_str()))
            }
        };
        let stop = self.walk(p, start, &hops, reverse, &ids, seeked, row, next);
        if let (Some(_), Some(first)) = (&via_edges, hops.first()) {
            self.rel_seek_done(first);
        }
        stop
    }

    /// Whether a one-hop path whose ends are both bound to nodes — `(a)-[:T]-(b)`
    /// as a pattern predicate — is cheaper walked from its end: the walk
    /// reads the adjacency of the node it starts from, so it starts from
    /// the one with fewer relationships of the hop's types (degree counters,
    /// no adjacency read). A hub's friend asking whether it knows the hub
    /// reads its own list, not the hub's.
    fn cheaper_from_end(&self, el: &PatternElement, row: &Row) -> Res<bool> {
        let [(rel, end)] = el.chain.as_slice() else {
            return Ok(false);
        };
        let ends = (bound_node(row, &el.start.var), bound_node(row, &end.var));
        let (Some(Some(a)), Some(Some(b))) = ends else {
            return Ok(false);
        };
        if rel.length.is_some() || a == b {
            return Ok(false);
        }
        let hop = |node, reversed| Hop {
            rel,
            node,
            reversed,
        };
        // A short list is cheap to read whatever the other end has: the
        // other end's counters are asked only when the start's list is long.
        const SHORT: u64 = 64;
        let from_start = self.rough_degree(a, self.direction(&hop(end, false)), rel)?;
        Ok(from_start > SHORT
            && from_start > self.rough_degree(b, self.direction(&hop(&el.start, true)), rel)?)
    }

    /// How many relationships of `rel`'s types `at` has in `dir`, from the
    /// counters alone: both directions are added, so a self-loop counts
    /// twice (the exact count decodes the adjacency to find loops).
    fn rough_degree(&self, at: NodeId, dir: Direction, rel: &RelPattern) -> Res<u64> {
        let names = rel.types.as_ref().and_then(type_names);
        let mut n = 0u64;
        for d in match dir {
            Direction::Both => &[Direction::Out, Direction::In][..],
            Direction::Out => &[Direction::Out],
            Direction::In => &[Direction::In],
        } {
            n = n.saturating_add(self.typed_degree(at, *d, names.as_deref())?);
        }
        Ok(n)
    }

    /// The degree counters of `at` in `dir`, summed over `names` (every
    /// type without them).
    fn typed_degree(&self, at: NodeId, dir: Direction, names: Option<&[&str]>) -> Res<u64> {
        let Some(names) = names else {
            return Ok(self.g.degree(at, dir, None)?);
        };
        let mut n = 0u64;
        for t in names {
            n = n.saturating_add(self.g.degree(at, dir, Some(t))?);
        }
        Ok(n)
    }

    /// Walks a path from each of its start candidates `ids`.
    #[expect(
        clippy::too_many_arguments,
        reason = "the walk's state, split from `path` which chooses it"
    )]
    fn walk(
        &mut self,
        p: &PathPattern,
        start: &NodePattern,
        hops: &[Hop<'_>],
        reverse: bool,
        ids: &[NodeId],
        seeked: Option<&str>,
        row: &mut Row,
        next: &mut dyn FnMut(&mut Self, &mut Row) -> Res<bool>,
    ) -> Res<bool> {
        // Under PROFILE a start taken shows its rows, none found included,
        // and the time of its own work; what comes after the pattern is
        // the clause's. (An error ends the query, clock and all.)
        self.profiled(address(start), 0);
        let left = self.clock(address(start));
        let mut after = |m: &mut Self, row: &mut Row| {
            let back = m.clock(0);
            let stop = next(m, row);
            m.clock(back);
            stop
        };
        let stop = 'walk: {
            if self.counts_candidates(p, start, hops, row, seeked) {
                // Each candidate is a match, and nothing reads which: one
                // call stands for all of them.
                if ids.is_empty() {
                    break 'walk Ok(false);
                }
                self.ctx.guard.check()?;
                self.profiled(address(start), ids.len() as u64);
                let outer = self.weight;
                self.weight = outer.saturating_mul(ids.len() as u64);
                let stop = after(self, row);
                self.weight = outer;
                break 'walk stop;
            }
            if !self.charge(ids.len() as u64) {
                break 'walk Ok(false);
            }
            for (i, &id) in ids.iter().enumerate() {
                if i % crate::ahead::BATCH == 0 && self.ahead.on() {
                    let batch: Vec<NodeId> = ids
                        .iter()
                        .skip(i)
                        .take(crate::ahead::BATCH)
                        .copied()
                        .collect();
                    if seeked.is_none() {
                        self.read_nodes_ahead(start, &batch)?;
                    }
                    self.read_ahead_chain(hops, batch)?;
                }
                let (did, ok) = bind(&self.an.names, row, &start.var, || graph::node(id));
                let early = match ok && self.node_ok_but(start, id, row, seeked)? {
                    true => {
                        // What the pattern finds, before the WHERE's filter.
                        self.profiled(address(start), 1);
                        self.early_ok(&start.var, did, row)?
                    }
                    false => None,
                };
                if let Some(n) = early {
                    // Only a path variable reads the trail: without one it
                    // stays empty, and a start costs no allocation for it.
                    let mut trail = Trail {
                        nodes: match self.trail_needed {
                            true => vec![node_value(id)],
                            false => Vec::new(),
                        },
                        rels: vec![],
                    };
                    self.early.passed += n;
                    let stop = self.hops(hops, id, row, &mut trail, &mut |m, row, trail| {
                        let (did, ok) = match &p.var {
                            Some(_) => {
                                bind(&m.an.names, row, &p.var, || path_value(trail, reverse))
                            }
                            None => (false, true),
                        };
                        let stop = ok && after(m, row)?;
                        unbind(row, &p.var, did);
                        Ok(stop)
                    });
                    self.early.passed -= n;
                    if stop? {
                        unbind(row, &start.var, did);
                        break 'walk Ok(true);
                    }
                }
                unbind(row, &start.var, did);
            }
            Ok(false)
        };
        self.clock(left);
        stop
    }

    /// Whether every start candidate of a one-node pattern is a match that
    /// only needs counting: the sink counts, this is the last pattern, the
    /// node is not bound (so a candidate cannot disagree with a binding),
    /// the node pattern has nothing the seek left unchecked, and the WHERE
    /// is absent or was answered by the seek.
    fn counts_candidates(
        &self,
        p: &PathPattern,
        np: &NodePattern,
        hops: &[Hop<'_>],
        row: &Row,
        seeked: Option<&str>,
    ) -> bool {
        let props_seeked = np.props.as_deref().is_none_or(|props| {
            map_entries(props)
                .iter()
                .all(|(k, _)| Some(k.as_str()) == seeked)
        });
        self.mode == Mode::Count
            && self.patterns_after == 0
            && hops.is_empty()
            && p.var.is_none()
            && bound_node(row, &np.var).is_none()
            && np.labels.is_none()
            && np.where_.is_none()
            && props_seeked
            && (self.where_.is_none() || self.where_answered.get())
    }

    /// The node an `id(var) = expr` conjunct names ([`Matcher::internal_id`]).
    fn by_internal_id(&self, np: &NodePattern, row: &Row) -> Res<Option<Vec<NodeId>>> {
        let held = |id: u64| Ok(self.g.node_user_id(NodeId(id))?.is_some());
        let found = self.internal_id(np.var.as_deref(), row, &held)?;
        Ok(found.map(|ids| ids.into_iter().map(NodeId).collect()))
    }

    /// The entity an `id(var) = expr` conjunct names, when `held` says the
    /// graph has it; none when the value is no id (no entity's id equals
    /// it) or no entity has it; `None` when no conjunct names one, or the
    /// graph does not know the id then but may later (a valid-time view
    /// numbers its entities as it meets them, so an id it has not met yet
    /// is left to the other starts).
    pub(super) fn internal_id(
        &self,
        var: Option<&str>,
        row: &Row,
        held: &dyn Fn(u64) -> Res<bool>,
    ) -> Res<Option<Vec<u64>>> {
        for (_, e) in self.an.internal_ids.iter().filter(|(v, _)| var == Some(*v)) {
            // As for element ids: a value reading a later variable is skipped.
            let id = match start::hint_value(self, e, row, || Value::Int(0)).as_deref() {
                Ok(Value::Int(i)) => u64::try_from(*i).ok(),
                Ok(Value::Float(f)) if f.fract() == 0.0 && (0.0..1.8e19).contains(f) => {
                    Some(*f as u64)
                }
                Ok(_) => return Ok(Some(vec![])),
                Err(_) => continue,
            };
            let Some(id) = id else {
                return Ok(Some(vec![]));
            };
            if held(id)? {
                return Ok(Some(vec![id]));
            }
            if self.g.stable_ids() {
                return Ok(Some(vec![]));
            }
        }
        Ok(None)
    }

    /// The nodes a walk may start from.
    fn candidates(&self, np: &NodePattern, row: &Row) -> Res<Vec<NodeId>> {
        Ok(self.seek(np, row)?.ids)
    }

    /// Where a walk from `np` starts ([`Start`]) and its first nodes; a dry
    /// seek (EXPLAIN, `start.rs`) names a scan without reading it. Under
    /// PROFILE the start taken is noted.
    fn seek<'p>(&'p self, np: &'p NodePattern, row: &Row) -> Res<Seek<'p>> {
        let left = self.clock(address(np));
        let found = self.seek_here(np, row);
        self.clock(left);
        let found = found?;
        if let Some(taken) = self.taken() {
            taken.borrow_mut().note(np, &found.start);
        }
        Ok(found)
    }

    /// What a profiled run took, when this is one (never a dry seek).
    fn taken(&self) -> Option<&std::cell::RefCell<start::Taken>> {
        self.ctx.starts.filter(|_| self.dry.is_none())
    }

    /// Under PROFILE, counts `n` rows (times the weight a count gives
    /// the current match) produced at the pattern element at `at`.
    fn profiled(&self, at: usize, n: u64) {
        if let Some(taken) = self.taken() {
            taken.borrow_mut().count(at, n.saturating_mul(self.weight));
        }
    }

    /// Under PROFILE, work moves to the pattern element at `to` (0: out of
    /// the pattern); returns the element left (`start::Taken::switch`).
    fn clock(&self, to: usize) -> usize {
        self.taken().map_or(0, |t| t.borrow_mut().switch(to))
    }

    fn seek_here<'p>(&'p self, np: &'p NodePattern, row: &Row) -> Res<Seek<'p>> {
        if let Some(b) = bound_node(row, &np.var) {
            return Ok(Seek::of(Start::Bound, b.into_iter().collect()));
        }
        let string = || Value::String(String::new());
        for (_, e) in self
            .an
            .ids
            .iter()
            .filter(|(v, _)| np.var.as_deref() == Some(*v))
        {
            // The value may read a variable bound only later: skip it then.
            match start::hint_value(self, e, row, string).as_deref() {
                Ok(Value::String(key)) => {
                    let ids = self.g.node_id(key)?.into_iter().collect();
                    if self.where_is_element_id_of(np, e) {
                        // The id map answered it exactly: the node found
                        // has that element id, so it is not read again.
                        self.where_answered.set(true);
                    }
                    return Ok(Seek::of(Start::ElementId, ids));
                }
                Ok(_) => return Ok(Seek::of(Start::Nothing, vec![])),
                Err(_) => {}
            }
        }
        if let Some(found) = self.by_internal_id(np, row)? {
            return Ok(Seek::of(Start::InternalId, found));
        }
        let labels = np.labels.as_ref().map(required_labels).unwrap_or_default();
        let (found, unindexed) = self.equality_seek(np, &labels, row)?;
        if let Some(found) = found {
            return Ok(found);
        }
        if let Some(found) = self.any_of_seek(np, &labels, row)? {
            return Ok(found);
        }
        if let Some(found) = self.element_seek(np, &labels, row)? {
            return Ok(found);
        }
        if let Some(found) = self.range_seek(np, &labels, row)? {
            return Ok(found);
        }
        let mut best: Option<(&str, u64)> = None;
        for l in &labels {
            let n = self.g.label_count(l)?;
            if best.is_none_or(|(_, b)| n < b) {
                best = Some((l, n));
            }
        }
        // One sequential pass over the records or a property's column
        // beats a lookup per member unless the label holds a small share of
        // the nodes (a lookup costs about what reading eight records in
        // order does).
        let whole = match best {
            None => true,
            Some((_, n)) => n.saturating_mul(8) >= self.g.node_count()?,
        };
        let label = best.map(|(l, _)| l);
        if let (Some((key, v, inline_at)), true) = (unindexed, whole) {
            let start = Start::PropertyScan { label, key };
            if self.dry.is_some() {
                return Ok(Seek::of(start, vec![]));
            }
            // The pass applies Cypher's equality, as an index seek does.
            let ids = self.g.nodes_equal(label, key, &v)?;
            return Ok(self.answered_by(np, key, &v, inline_at, start, ids));
        }
        if whole {
            if let Some(found) = self.column_filter_seek(np, label, row)? {
                return Ok(found);
            }
        }
        let start = match best {
            Some((l, _)) => Start::Label(l),
            None => Start::All,
        };
        if self.dry.is_some() {
            return Ok(Seek::of(start, vec![]));
        }
        let ids = match best {
            Some((l, _)) => self.g.nodes_with_label(l),
            None => self.g.nodes(),
        };
        Ok(Seek::of(start, ids.collect::<Result<Vec<_>, _>>()?))
    }

    /// The nodes a seek or a pass found by an equality of `key` to `v`
    /// (the node pattern's inline property at `inline_at`, else a WHERE
    /// conjunct), from `start`. What it answered exactly (the index's
    /// equality is Cypher's for these types; floats differ on NaN, lists
    /// and maps are rechecked) is not checked again: the inline property,
    /// or the WHERE when it is that equality alone.
    fn answered_by<'p>(
        &self,
        np: &NodePattern,
        key: &str,
        v: &Value,
        inline_at: Option<usize>,
        start: Start<'p>,
        ids: Vec<NodeId>,
    ) -> Seek<'p> {
        let exact = matches!(v, Value::Int(_) | Value::String(_) | Value::Bool(_));
        if exact && inline_at.is_none() && self.answers_where(np, key) {
            self.where_answered.set(true);
        }
        Seek {
            ids,
            answered: inline_at.filter(|_| exact),
            start,
        }
    }

    /// An index seek on an inline property equality or a WHERE equality on
    /// `np`'s variable, when an index serves (or a null value, which no
    /// node holds); else the first scalar equality, for one pass over the
    /// records when no better start is found.
    #[expect(
        clippy::type_complexity,
        reason = "a seek, or the pass's key, value and inline place"
    )]
    fn equality_seek<'p>(
        &'p self,
        np: &'p NodePattern,
        labels: &[&'p str],
        row: &Row,
    ) -> Res<(Option<Seek<'p>>, Option<(&'p str, Value, Option<usize>)>)> {
        let inline = np
            .props
            .as_deref()
            .map(map_entries)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, (k, e))| (k.as_str(), e, Some(i)));
        let from_where = self
            .an
            .hints
            .iter()
            .filter(|(v, _, _)| np.var.as_deref() == Some(*v))
            .map(|(_, k, e)| (*k, *e, None));
        let mut unindexed: Option<(&str, Value, Option<usize>)> = None;
        for (key, e, inline_at) in inline.chain(from_where) {
            // A hint may name variables bound only later: skip it then.
            let v = match start::hint_value(self, e, row, || Value::Int(0)) {
                Ok(v) => v,
                Err(_) if inline_at.is_none() => continue,
                Err(err) => return Err(err),
            };
            if v.is_null() {
                return Ok((Some(Seek::of(Start::Nothing, vec![])), None));
            }
            if !v.is_storable() {
                continue;
            }
            if let Some((label, ids)) = first_index(labels, |l| self.g.find_nodes(l, key, &v))? {
                let start = Start::Index {
                    label,
                    key,
                    any_of: None,
                };
                return Ok((
                    Some(self.answered_by(np, key, &v, inline_at, start, ids)),
                    None,
                ));
            }
            // Scalars only: the pass compares stored encodings, which
            // for lists and maps would miss `[1] = [1.0]`.
            let scalar = matches!(
                *v,
                Value::Int(_) | Value::Float(_) | Value::String(_) | Value::Bool(_)
            );
            if unindexed.is_none() && scalar {
                unindexed = Some((key, v.into_owned(), inline_at));
            }
        }
        Ok((None, unindexed))
    }

    /// Whether the WHERE is nothing but `var.key = value` for this node's
    /// variable and this key.
    fn answers_where(&self, np: &NodePattern, key: &str) -> bool {
        // One conjunct with one property equality: the WHERE is that
        // equality (the analysis found it; the WHERE is not walked again).
        self.an.one_conjunct
            && matches!(self.an.hints.as_slice(), [(v, k, _)] if np.var.as_deref() == Some(*v) && *k == key)
    }

    /// The nodes whose list `key` holds `x`, for a WHERE conjunct
    /// `x IN var.key`, when a list-element index serves; `None` otherwise.
    fn element_seek<'p>(
        &'p self,
        np: &NodePattern,
        labels: &[&'p str],
        row: &Row,
    ) -> Res<Option<Seek<'p>>> {
        let hints = self
            .an
            .elements
            .iter()
            .filter(|(v, _, _)| np.var.as_deref() == Some(*v));
        for (_, key, e) in hints {
            // The element may read a variable bound only later: skip it then.
            let Ok(x) = start::hint_value(self, e, row, || Value::Int(0)) else {
                continue;
            };
            if x.is_null() {
                // `null IN list` is never true.
                return Ok(Some(Seek::of(Start::Nothing, vec![])));
            }
            if !x.is_storable() {
                continue;
            }
            let found = first_index(labels, |l| self.g.find_nodes_with_element(l, key, &x))?;
            if let Some((label, ids)) = found {
                return Ok(Some(Seek::of(Start::ListElement { label, key }, ids)));
            }
        }
        Ok(None)
    }

    /// The bounds the WHERE puts on the first property of `var` that it
    /// compares: `Ok(None)` when it puts none that can be evaluated here,
    /// [`Bounds::Empty`] when one is null (no value passes).
    pub(super) fn range_bounds<'p>(&'p self, var: &str, row: &Row) -> Res<Option<Bounds<'p>>> {
        use std::ops::Bound;
        let mine: Vec<&RangeHint<'_>> = self.an.ranges.iter().filter(|h| h.var == var).collect();
        let Some(key) = mine.first().map(|h| h.key) else {
            return Ok(None);
        };
        // Each bound: its value and whether it is inclusive.
        type Side = Option<(Value, bool)>;
        let (mut lo, mut hi): (Side, Side) = (None, None);
        for h in mine.iter().filter(|h| h.key == key) {
            let v = match start::hint_value(self, h.value, row, || Value::Int(0)) {
                Ok(v) if v.is_storable() && !v.is_null() => v.into_owned(),
                Ok(v) if v.is_null() => return Ok(Some(Bounds::Empty)),
                _ => continue,
            };
            let slot = if h.lower { &mut lo } else { &mut hi };
            if slot.is_none() {
                *slot = Some((v, h.inclusive));
            }
        }
        if lo.is_none() && hi.is_none() {
            return Ok(None);
        }
        let bound = |b: Side| -> Bound<Value> {
            match b {
                Some((v, true)) => Bound::Included(v),
                Some((v, false)) => Bound::Excluded(v),
                None => Bound::Unbounded,
            }
        };
        Ok(Some(Bounds::Range {
            key,
            lo: bound(lo),
            hi: bound(hi),
        }))
    }

    /// A range seek for the node's variable from WHERE comparisons on one
    /// key, when an index or the property's column serves; `None`
    /// otherwise. The WHERE still checks every candidate.
    fn range_seek<'p>(
        &'p self,
        np: &NodePattern,
        labels: &[&'p str],
        row: &Row,
    ) -> Res<Option<Seek<'p>>> {
        let Some(var) = np.var.as_deref() else {
            return Ok(None);
        };
        let (key, lo, hi) = match self.range_bounds(var, row)? {
            None => return Ok(None),
            Some(Bounds::Empty) => return Ok(Some(Seek::of(Start::Nothing, vec![]))),
            Some(Bounds::Range { key, lo, hi }) => (key, lo, hi),
        };
        for l in labels.iter().map(|l| Some(*l)).chain([None]) {
            match self.g.find_nodes_in_range(l, key, lo.as_ref(), hi.as_ref()) {
                Ok(ids) => return Ok(Some(Seek::of(Start::Range { label: l, key }, ids))),
                Err(StorageError::NoIndex(_)) => {}
                // Bounds of types an index cannot range over.
                Err(StorageError::Invalid(_) | StorageError::Unsupported(_)) => break,
                Err(e) => return Err(e.into()),
            }
        }
        let label = labels.first().copied();
        let start = Start::RangeColumn { label, key };
        if self.dry.is_some() {
            // Named, not read: a column is built when first read.
            return Ok(self.g.columns_serve().then(|| Seek::of(start, vec![])));
        }
        // No index: the property's column, every bound on the key compared
        // once per distinct value, with Cypher's comparison. When the WHERE
        // is nothing but these bounds, the candidates are its answer.
        let mut bounds = Vec::new();
        let mut all_known = true;
        for h in self
            .an
            .ranges
            .iter()
            .filter(|h| h.var == var && h.key == key)
        {
            match self.eval(h.value, row) {
                Ok(v) => bounds.push((v, h.lower, h.inclusive)),
                Err(_) => all_known = false,
            }
        }
        let holds = |v: &Value| {
            bounds.iter().all(|(b, lower, inclusive)| {
                let want = if *lower {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                compare(v, b).is_some_and(|o| o == want || (*inclusive && o.is_eq()))
            })
        };
        let ids = self.g.nodes_where(label, key, &mut |v| holds(v))?;
        if ids.is_some() && all_known && self.where_is_ranges_on(var, key) {
            self.where_answered.set(true);
        }
        Ok(ids.map(|ids| Seek::of(start, ids)))
    }

    /// Whether the WHERE is `elementId(var) = e` alone, `var` being
    /// `np`'s variable.
    fn where_is_element_id_of(&self, np: &NodePattern, e: &Expr) -> bool {
        self.an.one_conjunct
            && matches!(self.an.ids.as_slice(), [(v, x)] if np.var.as_deref() == Some(*v) && std::ptr::eq(*x, e))
    }

    /// Whether the WHERE is nothing but comparisons of `var.key` with
    /// values (`var.key > 3 AND var.key <= 9`).
    fn where_is_ranges_on(&self, var: &str, key: &str) -> bool {
        self.where_.is_some_and(|w| {
            conjuncts(w).iter().all(|c| {
                let mut hints = Vec::new();
                range_hints(c, &mut hints);
                matches!(hints.as_slice(), [h] if h.var == var && h.key == key)
            })
        })
    }

    /// Checks the WHERE conjuncts `var`, just bound (`did`), completes:
    /// `None` when one is not true, else how many passed (the caller adds
    /// them to `early.passed` while it walks on, and takes them off after).
    fn early_ok(&self, var: &Option<String>, did: bool, row: &Row) -> Res<Option<usize>> {
        let Some(var) = var.as_deref().filter(|_| did) else {
            return Ok(Some(0));
        };
        if self.where_answered.get() {
            return Ok(Some(0));
        }
        let mut n = 0;
        for (i, (c, deps)) in self.early.conjuncts.iter().enumerate() {
            // `var` was just bound: only the others are looked up.
            if deps.contains(&var) && deps.iter().all(|d| *d == var || row.contains_key(d)) {
                let tested = self.node_tests.answer(i, c, var, row, self.g, self.ctx)?;
                let holds = match tested {
                    Some(holds) => holds,
                    None => match self.in_sets.answer(c, deps, row, self.ctx)? {
                        Some(v) => v == Value::Bool(true),
                        None => self.eval(c, row)? == Value::Bool(true),
                    },
                };
                if !holds {
                    return Ok(None);
                }
                n += 1;
            }
        }
        Ok(Some(n))
    }

    /// Whether node `id` satisfies the node pattern's labels, properties and
    /// inline WHERE (its variable is bound in `row` already).
    fn node_ok(&self, np: &NodePattern, id: NodeId, row: &Row) -> Res<bool> {
        self.ctx.guard.check()?;
        self.node_ok_but(np, id, row, None)
    }

    /// [`Matcher::node_ok`] without checking the property `seeked`, which an
    /// index seek matched already.
    fn node_ok_but(
        &self,
        np: &NodePattern,
        id: NodeId,
        row: &Row,
        seeked: Option<&str>,
    ) -> Res<bool> {
        if let Some(l) = &np.labels {
            if !labels_match(self.g, id, l)? {
                return Ok(false);
            }
        }
        if let Some(props) = &np.props {
            for (key, e) in map_entries(props)
                .iter()
                .filter(|(k, _)| Some(k.as_str()) != seeked)
            {
                let want = self.eval(e, row)?;
                let have = self.g.node_property(id, key)?.unwrap_or_default();
                if equals(&have, &want) != Some(true) {
                    return Ok(false);
                }
            }
        }
        self.where_ok(&np.where_, row)
    }

    fn where_ok(&self, w: &Option<Box<Expr>>, row: &Row) -> Res<bool> {
        match w {
            Some(w) => Ok(self.eval(w, row)? == Value::Bool(true)),
            None => Ok(true),
        }
    }

    fn rel_ok(&self, rp: &RelPattern, n: &Neighbor, row: &Row) -> Res<bool> {
        // Types given as names were looked up in the adjacency index by
        // type already; other type expressions are checked here.
        if let Some(t) = rp.types.as_ref().filter(|t| !graph::are_type_names(t)) {
            if !type_matches(&self.g.type_name(n.rel_type)?, t) {
                return Ok(false);
            }
        }
        if let Some(props) = &rp.props {
            for (key, e) in map_entries(props) {
                let want = self.eval(e, row)?;
                let have = self.g.edge_property(n.edge, key)?.unwrap_or_default();
                if equals(&have, &want) != Some(true) {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// How many relationships a hop may follow from `at`, less those this
    /// match used already (relationship isomorphism).
    fn degree(&self, hop: &Hop<'_>, at: NodeId) -> Res<u64> {
        let dir = self.direction(hop);
        let names = hop.rel.types.as_ref().and_then(type_names);
        let mut n = match self.ahead.get(self.hop_key(hop), at) {
            // Read ahead: the list's length is the degree.
            Some(kept) => kept.len() as u64,
            None => self.typed_degree(at, dir, names.as_deref())?,
        };
        for u in &self.used {
            let leaves = match dir {
                Direction::Out => u.start == at,
                Direction::In => u.end == at,
                Direction::Both => u.start == at || u.end == at,
            };
            let typed = names
                .as_ref()
                .is_none_or(|ns| ns.iter().any(|t| self.g.type_id(t) == Some(u.rel_type)));
            if leaves && typed {
                n = n.saturating_sub(1);
            }
        }
        Ok(n)
    }

    /// Counts `n` units of work on the meter, if any; whether the search
    /// may go on.
    fn charge(&self, n: u64) -> bool {
        self.meter.is_none_or(|m| m.charge(n))
    }

    fn is_used(&self, e: EdgeId) -> bool {
        self.used.iter().any(|u| u.edge == e)
    }

    fn direction(&self, hop: &Hop<'_>) -> Direction {
        hop_direction(hop.rel.direction, hop.reversed)
    }

    /// The relationships leaving `from` that a hop may follow.
    fn steps(&self, hop: &Hop<'_>, from: NodeId) -> Res<Vec<Neighbor>> {
        // A capped search asks the degree counters first, so a hub's list
        // past the cap is never read.
        let counted = match self.meter {
            Some(m) if m.capped() => self.rough_degree(from, self.direction(hop), hop.rel)?,
            _ => 0,
        };
        if !self.charge(1 + counted) {
            return Ok(Vec::new());
        }
        let mut out = self.all_steps(hop, from)?;
        if counted == 0 && !self.charge(out.len() as u64) {
            return Ok(Vec::new());
        }
        if let Some(only) = self.only_edges(hop) {
            out.retain(|n| only.contains(&n.edge));
        }
        Ok(out)
    }

    fn all_steps(&self, hop: &Hop<'_>, from: NodeId) -> Res<Vec<Neighbor>> {
        self.ctx.guard.check()?;
        if let Some(kept) = self.ahead.get(self.hop_key(hop), from) {
            return Ok(kept);
        }
        let dir = self.direction(hop);
        let mut out = Vec::new();
        match hop.rel.types.as_ref().and_then(type_names) {
            Some(names) => {
                for t in names {
                    if let Some(t) = self.g.type_id(t) {
                        self.g.neighbors_into(from, dir, Some(t), &mut out)?;
                    }
                }
            }
            None => self.g.neighbors_into(from, dir, None, &mut out)?,
        }
        Ok(out)
    }

    fn hop_key(&self, hop: &Hop<'_>) -> crate::ahead::HopKey {
        (std::ptr::from_ref(hop.rel) as usize, self.direction(hop))
    }

    /// On a remote store, reads the adjacency over `hop` of `nodes` (the
    /// nodes the walk will expand next) at once (`ahead.rs`).
    fn read_ahead(&self, hop: &Hop<'_>, nodes: impl Iterator<Item = NodeId>) -> Res<()> {
        let types: Option<Vec<TypeId>> = hop
            .rel
            .types
            .as_ref()
            .and_then(type_names)
            .map(|names| names.iter().filter_map(|t| self.g.type_id(t)).collect());
        let key = self.hop_key(hop);
        Ok(self.ahead.fill(self.g, key, types.as_deref(), nodes)?)
    }

    /// On a remote store, reads the records of the nodes a walk arrives at
    /// through `np`, when the match will read them: the pattern constrains
    /// the node, or names it and the MATCH has a WHERE (which may read it).
    /// A node only counted, or read by a later clause, is not read ahead.
    fn read_nodes_ahead(&self, np: &NodePattern, nodes: &[NodeId]) -> Res<()> {
        let reads = (np.var.is_some() && self.where_.is_some())
            || np.labels.is_some()
            || np.props.is_some()
            || np.where_.is_some();
        if self.ahead.on() && reads {
            self.g.prefetch_nodes(nodes)?;
        }
        Ok(())
    }

    /// [`Matcher::read_ahead`] along a chain of fixed hops: the first
    /// hop's adjacency of `nodes`, then the next hop's of the nodes that
    /// reaches, and so on: one read per hop for the whole chain.
    fn read_ahead_chain(&self, hops: &[Hop<'_>], nodes: Vec<NodeId>) -> Res<()> {
        let mut nodes = nodes;
        for (i, hop) in hops.iter().enumerate() {
            if !self.ahead.on() || nodes.is_empty() {
                break;
            }
            self.read_ahead(hop, nodes.iter().copied())?;
            let key = self.hop_key(hop);
            let ends = nodes.iter().filter_map(|n| self.ahead.get(key, *n));
            let ends: Vec<NodeId> = ends.flatten().map(|n| n.node).collect();
            self.read_nodes_ahead(hop.node, &ends)?;
            match hops.get(i + 1) {
                Some(next) if next.rel.length.is_none() => nodes = ends,
                // A variable-length hop reads ahead as it walks.
                Some(next) => return self.read_ahead(next, ends.into_iter()),
                None => break,
            }
        }
        Ok(())
    }

    fn hops(
        &mut self,
        hops: &[Hop<'_>],
        at: NodeId,
        row: &mut Row,
        trail: &mut Trail,
        done: &mut dyn FnMut(&mut Self, &mut Row, &Trail) -> Res<bool>,
    ) -> Res<bool> {
        let Some((hop, rest)) = hops.split_first() else {
            return done(self, row, trail);
        };
        // Every way of taking a hop counts what it finds (`arrive`, or the
        // degree below): one taken shows its rows, none found included,
        // and the time of its own work.
        self.profiled(address(hop.rel), 0);
        let left = self.clock(address(hop.rel));
        let stop = self.hop(hop, rest, at, row, trail, done);
        self.clock(left);
        stop
    }

    /// The first hop of [`Matcher::hops`], `rest` after it.
    fn hop(
        &mut self,
        hop: &Hop<'_>,
        rest: &[Hop<'_>],
        at: NodeId,
        row: &mut Row,
        trail: &mut Trail,
        done: &mut dyn FnMut(&mut Self, &mut Row, &Trail) -> Res<bool>,
    ) -> Res<bool> {
        match hop.rel.length {
            None if rest.is_empty()
                && !self.trail_needed
                && counted_by_degree(hop.rel, hop.node) =>
            {
                // The last hop to an unconstrained, unnamed node: how many
                // relationships there are is all a match can tell, and the
                // degree counters know it without reading the adjacency.
                let n = self.degree(hop, at)?;
                self.weighted(hop, n, row, trail, done)
            }
            None => {
                let steps = self.steps(hop, at)?;
                // A hop into a node the row binds already ("expand into"):
                // only relationships that reach it can match, so the others
                // are dropped before anything is bound or checked.
                let into = match bound_node(row, &hop.node.var) {
                    Some(Some(id)) => Some(id),
                    _ => None,
                };
                if self.ahead.on() {
                    let ends: Vec<NodeId> = steps.iter().map(|n| n.node).collect();
                    self.read_nodes_ahead(hop.node, &ends)?;
                    if !rest.is_empty() {
                        self.read_ahead_chain(rest, ends)?;
                    }
                }
                for n in steps {
                    if into.is_some_and(|id| id != n.node)
                        || self.is_used(n.edge)
                        || !self.rel_ok(hop.rel, &n, row)?
                    {
                        continue;
                    }
                    let (did_r, ok) = match &hop.rel.var {
                        None => (false, true),
                        Some(_) => {
                            let r = rel_of(at, &n);
                            let mut rv = graph::rel_value(n.edge, r.0, r.1);
                            // The adjacency entry names the type: `type(r)`
                            // then reads no edge record.
                            rv.rel_type = self.g.type_name(n.rel_type)?.to_string();
                            let rv = Value::Relationship(std::sync::Arc::new(rv));
                            bind(&self.an.names, row, &hop.rel.var, || rv)
                        }
                    };
                    let early = match ok && self.where_ok(&hop.rel.where_, row)? {
                        true => self.early_ok(&hop.rel.var, did_r, row)?,
                        false => None,
                    };
                    if let Some(k) = early {
                        self.used.push(Used::of(at, &n));
                        self.early.passed += k;
                        let stop = self.arrive(hop, rest, at, &[n], row, trail, done);
                        self.early.passed -= k;
                        self.used.pop();
                        if stop? {
                            unbind(row, &hop.rel.var, did_r);
                            return Ok(true);
                        }
                    }
                    unbind(row, &hop.rel.var, did_r);
                }
                Ok(false)
            }
            Some((min, max)) => {
                let min = min.unwrap_or(1) as usize;
                let max = max.map_or(usize::MAX, |m| m as usize);
                if rest.is_empty() && !self.trail_needed && trails_counted(hop.rel, hop.node) {
                    // As the degree above: every trail ends in a match
                    // that differs from the others in nothing bound.
                    let n = self.count_trails(hop, at, min, max, 0)?;
                    return self.weighted(hop, n, row, trail, done);
                }
                if self.reaches(hop, rest, min, max) {
                    let run = self.begin_run(hop, rest);
                    let walked = self.reach(hop, rest, at, min, max, row, trail, done);
                    self.end_run(run);
                    return walked;
                }
                let mut stack = Vec::new();
                self.var_length(hop, rest, at, at, min, max, &mut stack, row, trail, done)
            }
        }
    }

    /// Whether a match that ends by binding `var` on the last hop of the
    /// last pattern goes to [`Ends`]: what comes after it would only check
    /// the WHERE and hand the row to the sink, which reads `var` alone (a
    /// path variable would be bound after the hop, and the WHERE may read
    /// it: then every match goes the long way).
    fn takes_end(&self, var: &Option<String>) -> bool {
        self.patterns_after == 0
            && !self.trail_needed
            && self
                .ends
                .as_ref()
                .is_some_and(|e| var.as_deref() == Some(e.var))
    }

    /// [`Matcher::patterns`]' end of a match, for a match whose node `to`
    /// goes to [`Ends`]: the WHERE unless the walk or the seek settled it.
    fn take_end(&mut self, to: NodeId, row: &Row) -> Res<bool> {
        if let (Some(w), false) = (self.where_, self.where_answered.get()) {
            if !self.early.settled() && self.eval(w, row)? != Value::Bool(true) {
                return Ok(false);
            }
        }
        if let Some(e) = &self.ends {
            match e.in_run {
                true => e.nodes.add_in_run(to, self.ctx.guard)?,
                false => e.nodes.add(to, self.ctx.guard)?,
            }
        }
        Ok(false)
    }

    /// Having followed `edges` from `from`, checks and binds the hop's end
    /// node and goes on with the remaining hops.
    #[allow(clippy::too_many_arguments)]
    fn arrive(
        &mut self,
        hop: &Hop<'_>,
        rest: &[Hop<'_>],
        from: NodeId,
        edges: &[Neighbor],
        row: &mut Row,
        trail: &mut Trail,
        done: &mut dyn FnMut(&mut Self, &mut Row, &Trail) -> Res<bool>,
    ) -> Res<bool> {
        let to = edges.last().map_or(from, |n| n.node);
        let spares = &mut self.spares;
        let (did, ok) = bind(&self.an.names, row, &hop.node.var, || spares.node(to));
        let mut stop = Ok(false);
        let early = match ok && self.node_ok(hop.node, to, row)? {
            true => {
                // What the hop finds, before the WHERE's filter.
                self.profiled(address(hop.rel), 1);
                self.early_ok(&hop.node.var, did, row)
            }
            false => Ok(None),
        };
        if let Ok(Some(k)) = early {
            self.early.passed += k;
            stop = if rest.is_empty() && self.takes_end(&hop.node.var) {
                self.take_end(to, row)
            } else {
                let mark = (trail.nodes.len(), trail.rels.len());
                // Only a path variable reads the trail.
                let mut at = from;
                for n in edges.iter().filter(|_| self.trail_needed) {
                    let (s, e) = rel_of(at, n);
                    trail.rels.push(rel_value(n.edge, s, e));
                    trail.nodes.push(node_value(n.node));
                    at = n.node;
                }
                let stop = self.hops(rest, to, row, trail, done);
                trail.nodes.truncate(mark.0);
                trail.rels.truncate(mark.1);
                stop
            };
            self.early.passed -= k;
        }
        self.spares.give_back(unbind(row, &hop.node.var, did));
        early?;
        stop
    }

    /// The rest of the match once, standing for the `n` matches of a last
    /// hop that differ in nothing bound (none: no match).
    fn weighted(
        &mut self,
        hop: &Hop<'_>,
        n: u64,
        row: &mut Row,
        trail: &mut Trail,
        done: &mut dyn FnMut(&mut Self, &mut Row, &Trail) -> Res<bool>,
    ) -> Res<bool> {
        if n == 0 {
            return Ok(false);
        }
        self.profiled(address(hop.rel), n);
        let outer = self.weight;
        self.weight = outer.saturating_mul(n);
        let stop = done(self, row, trail);
        self.weight = outer;
        stop
    }

    /// How many trails of `min..=max` relationships a variable-length hop
    /// that binds and checks nothing follows from `at`, `depth` taken
    /// already: the walk of [`Matcher::var_length`] (the same steps, none
    /// used twice in the match), without a match made of each.
    fn count_trails(
        &mut self,
        hop: &Hop<'_>,
        at: NodeId,
        min: usize,
        max: usize,
        depth: usize,
    ) -> Res<u64> {
        let mut n = u64::from(depth >= min);
        if depth >= max {
            return Ok(n);
        }
        self.ctx.guard.check()?;
        let steps = self.steps(hop, at)?;
        if depth + 1 < max {
            self.read_ahead(hop, steps.iter().map(|s| s.node))?;
        }
        // The hop checks nothing `steps` did not (types given as names,
        // no properties): only relationship isomorphism is left.
        for s in steps {
            if self.is_used(s.edge) {
                continue;
            }
            self.used.push(Used::of(at, &s));
            let below = crate::deep(|| self.count_trails(hop, s.node, min, max, depth + 1));
            self.used.pop();
            n = n.saturating_add(below?);
        }
        Ok(n)
    }

    /// Variable-length hop: every trail of `min..=max` relationships from
    /// `start`, none repeated.
    #[allow(clippy::too_many_arguments)]
    fn var_length(
        &mut self,
        hop: &Hop<'_>,
        rest: &[Hop<'_>],
        start: NodeId,
        at: NodeId,
        min: usize,
        max: usize,
        stack: &mut Vec<Neighbor>,
        row: &mut Row,
        trail: &mut Trail,
        done: &mut dyn FnMut(&mut Self, &mut Row, &Trail) -> Res<bool>,
    ) -> Res<bool> {
        if stack.len() >= min && hop.rel.var.is_none() {
            // Nothing binds the relationships: no list to build (building
            // it at every depth would cost the square of the path length).
            if self.arrive(hop, rest, start, stack, row, trail, done)? {
                return Ok(true);
            }
        } else if stack.len() >= min {
            let mut from = start;
            let rels: Vec<Value> = stack
                .iter()
                .map(|n| {
                    let (s, e) = rel_of(from, n);
                    from = n.node;
                    graph::rel(n.edge, s, e)
                })
                .collect();
            let list = Value::List(if hop.reversed {
                rels.into_iter().rev().collect()
            } else {
                rels
            });
            let (did, ok) = bind(&self.an.names, row, &hop.rel.var, || list);
            let early = match ok {
                true => self.early_ok(&hop.rel.var, did, row),
                false => Ok(None),
            };
            let mut stop = Ok(false);
            if let Ok(Some(k)) = early {
                self.early.passed += k;
                stop = self.arrive(hop, rest, start, stack, row, trail, done);
                self.early.passed -= k;
            }
            unbind(row, &hop.rel.var, did);
            early?;
            if stop? {
                return Ok(true);
            }
        }
        if stack.len() >= max {
            return Ok(false);
        }
        let steps = self.steps(hop, at)?;
        if stack.len() + 1 < max {
            self.read_ahead(hop, steps.iter().map(|n| n.node))?;
        }
        for n in steps {
            if self.is_used(n.edge) || !self.rel_ok(hop.rel, &n, row)? {
                continue;
            }
            self.used.push(Used::of(at, &n));
            stack.push(n);
            let stop = crate::deep(|| {
                self.var_length(hop, rest, start, n.node, min, max, stack, row, trail, done)
            })?;
            stack.pop();
            self.used.pop();
            if stop {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `shortestPath(...)` / `allShortestPaths(...)` between two bound or
    /// matched end nodes, by breadth-first search over the one hop pattern.
    fn shortest(
        &mut self,
        p: &PathPattern,
        row: &mut Row,
        next: &mut dyn FnMut(&mut Self, &mut Row) -> Res<bool>,
    ) -> Res<bool> {
        let el = &p.element;
        let [(rp, end)] = el.chain.as_slice() else {
            return Err(QueryError::Semantic {
                code: "InvalidShortestPath",
                message: "shortestPath takes a pattern of exactly one relationship".into(),
            });
        };
        let (min, max) = rp.length.unwrap_or((Some(1), Some(1)));
        let min = min.unwrap_or(1) as usize;
        let max = max.map_or(usize::MAX, |m| m as usize);
        let hop = Hop {
            rel: rp,
            node: end,
            reversed: false,
        };
        for a in self.candidates(&el.start, row)? {
            let (did_a, ok_a) = bind(&self.an.names, row, &el.start.var, || graph::node(a));
            if ok_a && self.node_ok(&el.start, a, row)? {
                for b in self.candidates(end, row)? {
                    let (did_b, ok_b) = bind(&self.an.names, row, &end.var, || graph::node(b));
                    let mut stop = false;
                    if ok_b && self.node_ok(end, b, row)? {
                        let all = p.kind == PathKind::AllShortest;
                        for path in self.shortest_paths(&hop, a, b, (min, max), all, row)? {
                            let mut binds = vec![];
                            let rels = path_rels(a, &path);
                            binds.push(bind(&self.an.names, row, &rp.var, || Value::List(rels)));
                            let trail = trail_of(a, &path);
                            binds.push(bind(&self.an.names, row, &p.var, || {
                                path_value(&trail, false)
                            }));
                            if binds.iter().all(|b| b.1) {
                                stop = next(self, row)?;
                            }
                            unbind(row, &p.var, binds[1].0);
                            unbind(row, &rp.var, binds[0].0);
                            if stop {
                                break;
                            }
                        }
                    }
                    unbind(row, &end.var, did_b);
                    if stop {
                        unbind(row, &el.start.var, did_a);
                        return Ok(true);
                    }
                }
            }
            unbind(row, &el.start.var, did_a);
        }
        Ok(false)
    }

    /// The shortest paths from `a` to `b`: the traversal library's
    /// bidirectional search when the hop filters on types only, else a
    /// breadth-first search here that checks every filter.
    fn shortest_paths(
        &self,
        hop: &Hop<'_>,
        a: NodeId,
        b: NodeId,
        (min, max): (usize, usize),
        all: bool,
        row: &Row,
    ) -> Res<Vec<Vec<Neighbor>>> {
        let simple = min <= 1
            && a != b
            && hop.rel.props.is_none()
            && hop.rel.where_.is_none()
            && self.used.is_empty();
        let names = match &hop.rel.types {
            None => Some(vec![]),
            Some(t) => type_names(t),
        };
        let (true, Some(names)) = (simple, names) else {
            return self.bfs(hop, a, b, min, max, all, row);
        };
        let dir = self.direction(hop);
        let v = plexus_algo::StoreView(self.g);
        let f = if names.is_empty() {
            plexus_algo::Filter::any(dir)
        } else {
            plexus_algo::Filter::new(&v, dir, &names)
        };
        let depth = u32::try_from(max).ok();
        let paths = if all {
            plexus_algo::all_shortest_paths(&v, a, b, &f, depth, usize::MAX)?
        } else {
            plexus_algo::shortest_path(&v, a, b, &f, depth)?
                .into_iter()
                .collect()
        };
        let mut out = Vec::with_capacity(paths.len());
        for p in paths {
            let mut steps = Vec::with_capacity(p.edges.len());
            for (i, e) in p.edges.iter().enumerate() {
                let Some(edge) = self.g.edge(*e)? else {
                    continue;
                };
                steps.push(Neighbor {
                    edge: *e,
                    node: p.nodes[i + 1],
                    rel_type: self
                        .g
                        .type_id(&edge.rel_type)
                        .unwrap_or(plexus_storage::TypeId(0)),
                    outgoing: edge.src == p.nodes[i],
                });
            }
            out.push(steps);
        }
        Ok(out)
    }

    /// The shortest trails from `a` to `b` (all of them when `all`).
    #[allow(clippy::too_many_arguments)]
    fn bfs(
        &self,
        hop: &Hop<'_>,
        a: NodeId,
        b: NodeId,
        min: usize,
        max: usize,
        all: bool,
        row: &Row,
    ) -> Res<Vec<Vec<Neighbor>>> {
        if a == b && min == 0 {
            return Ok(vec![vec![]]);
        }
        // Predecessor edges per node at its first (shortest) depth.
        let mut depth: FxHashMap<NodeId, usize> = FxHashMap::from_iter([(a, 0)]);
        let mut preds: FxHashMap<NodeId, Vec<(NodeId, Neighbor)>> = FxHashMap::default();
        let mut queue = VecDeque::from([a]);
        let mut found: Option<usize> = None;
        while let Some(x) = queue.pop_front() {
            let d = depth[&x];
            if found.is_some_and(|f| d >= f) || d >= max {
                continue;
            }
            if !self.ahead.has(self.hop_key(hop), x) {
                // The queue holds this depth's rest and the next's start.
                self.read_ahead(hop, std::iter::once(x).chain(queue.iter().copied()))?;
            }
            for n in self.steps(hop, x)? {
                if !self.rel_ok(hop.rel, &n, row)? || self.is_used(n.edge) {
                    continue;
                }
                let nd = d + 1;
                match depth.get(&n.node) {
                    None => {
                        depth.insert(n.node, nd);
                        preds.entry(n.node).or_default().push((x, n));
                        queue.push_back(n.node);
                    }
                    Some(&od) if od == nd && all => {
                        preds.entry(n.node).or_default().push((x, n));
                    }
                    _ => {}
                }
                if n.node == b && nd >= min {
                    found = Some(nd);
                }
            }
        }
        if found.is_none() {
            return Ok(vec![]);
        }
        // Unwind predecessors from b back to a.
        let mut out = Vec::new();
        let mut partial: Vec<(NodeId, Vec<Neighbor>)> = vec![(b, vec![])];
        while let Some((x, suffix)) = partial.pop() {
            if x == a {
                let mut path = suffix;
                path.reverse();
                out.push(path);
                if !all {
                    break;
                }
                continue;
            }
            for (prev, n) in preds.get(&x).into_iter().flatten() {
                let mut s = suffix.clone();
                s.push(*n);
                partial.push((*prev, s));
                if !all {
                    break;
                }
            }
        }
        Ok(out)
    }
}

/// `start` and `end` of the relationship reached from `from` through `n`.
fn rel_of(from: NodeId, n: &Neighbor) -> (NodeId, NodeId) {
    if n.outgoing {
        (from, n.node)
    } else {
        (n.node, from)
    }
}

fn path_rels(a: NodeId, steps: &[Neighbor]) -> Vec<Value> {
    let mut at = a;
    steps
        .iter()
        .map(|n| {
            let (s, e) = rel_of(at, n);
            at = n.node;
            graph::rel(n.edge, s, e)
        })
        .collect()
}

fn trail_of(a: NodeId, steps: &[Neighbor]) -> Trail {
    let mut t = Trail {
        nodes: vec![node_value(a)],
        rels: vec![],
    };
    let mut at = a;
    for n in steps {
        let (s, e) = rel_of(at, n);
        t.rels.push(rel_value(n.edge, s, e));
        t.nodes.push(node_value(n.node));
        at = n.node;
    }
    t
}

fn path_value(t: &Trail, reversed: bool) -> Value {
    let (mut nodes, mut rels) = (t.nodes.clone(), t.rels.clone());
    if reversed {
        nodes.reverse();
        rels.reverse();
    }
    Value::Path(std::sync::Arc::new(PathValue { nodes, rels }))
}

/// The pattern's start node and hops in the order they are walked.
/// Whether a path whose start is not bound is walked from its end: when
/// the end is bound, or labelled while the start has neither labels nor
/// properties. The matcher and EXPLAIN both decide by it (a bound start
/// is walked from the end only when that end has fewer relationships,
/// which only the run can tell).
pub(crate) fn from_end(el: &PatternElement, bound: impl Fn(&NodePattern) -> bool) -> bool {
    el.chain.last().is_some_and(|(_, n)| {
        bound(n) || (el.start.labels.is_none() && el.start.props.is_none() && n.labels.is_some())
    })
}

/// The nodes and relationships of a path in the order a walk from its
/// start (or, `reverse`, from its end) takes them: the first node, then
/// each relationship with the node it leads to and whether it is walked
/// against its written direction.
pub(crate) fn walked(
    el: &PatternElement,
    reverse: bool,
) -> (&NodePattern, Vec<(&RelPattern, &NodePattern, bool)>) {
    let (start, hops) = walk_order(el, reverse);
    (
        start,
        hops.into_iter()
            .map(|h| (h.rel, h.node, h.reversed))
            .collect(),
    )
}

fn walk_order(el: &PatternElement, reverse: bool) -> (&NodePattern, Vec<Hop<'_>>) {
    if !reverse {
        let hops = el
            .chain
            .iter()
            .map(|(rel, node)| Hop {
                rel,
                node,
                reversed: false,
            })
            .collect();
        return (&el.start, hops);
    }
    let mut nodes: Vec<&NodePattern> = vec![&el.start];
    nodes.extend(el.chain.iter().map(|(_, n)| n));
    let start = nodes.pop().unwrap_or(&el.start);
    let hops = el
        .chain
        .iter()
        .rev()
        .zip(nodes.into_iter().rev())
        .map(|((rel, _), node)| Hop {
            rel,
            node,
            reversed: true,
        })
        .collect();
    (start, hops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn node_of(v: &Value) -> &Arc<NodeValue> {
        match v {
            Value::Node(n) => n,
            other => panic!("not a node: {other:?}"),
        }
    }

    /// Each distinct node is charged once; a node past the budget fails the
    /// query, and what the set holds is still what it charged (released
    /// in full afterwards).
    #[test]
    fn a_runs_ends_are_listed_once_and_merged_when_another_node_comes() {
        let guard = crate::limits::Guard::unlimited();
        let held = |d: &DistinctNodes| {
            let h = d.0.borrow();
            (h.set.len(), h.run.len())
        };
        // One run: listed, not hashed.
        let one = DistinctNodes::default();
        one.begin_run();
        for n in [5, 1, 9] {
            one.add_in_run(NodeId(n), &guard).expect("no budget");
        }
        assert_eq!((one.len(), held(&one)), (3, (0, 3)));
        assert_eq!(one.charged(), 3 * DistinctNodes::PER_NODE);
        // A node from elsewhere merges the run first: 9 counts once.
        one.add(NodeId(9), &guard).expect("no budget");
        one.add(NodeId(2), &guard).expect("no budget");
        assert_eq!((one.len(), held(&one)), (4, (4, 0)));
        // A second run meeting the first: its ends go through the set.
        let two = DistinctNodes::default();
        two.begin_run();
        two.add_in_run(NodeId(1), &guard).expect("no budget");
        two.add_in_run(NodeId(2), &guard).expect("no budget");
        two.begin_run();
        two.add_in_run(NodeId(2), &guard).expect("no budget");
        two.add_in_run(NodeId(3), &guard).expect("no budget");
        assert_eq!((two.len(), held(&two)), (3, (3, 0)));
        assert_eq!(two.charged(), 3 * DistinctNodes::PER_NODE);
        // A run after other nodes goes through the set from the start.
        let after = DistinctNodes::default();
        after.add(NodeId(7), &guard).expect("no budget");
        after.begin_run();
        after.add_in_run(NodeId(7), &guard).expect("no budget");
        assert_eq!((after.len(), held(&after)), (1, (1, 0)));
    }

    #[test]
    fn distinct_nodes_are_charged_once_each_within_the_budget() {
        use crate::limits::{Guard, QueryLimits};
        let guard = Guard::unlimited();
        let nodes = DistinctNodes::default();
        for n in [1, 2, 1, 3, 2] {
            nodes.add(NodeId(n), &guard).expect("no budget");
        }
        assert_eq!(nodes.len(), 3);
        assert_eq!(guard.held(), nodes.charged());
        let tight = Guard::new(
            QueryLimits {
                memory: Some(2 * DistinctNodes::PER_NODE),
                ..Default::default()
            },
            Default::default(),
        );
        let nodes = DistinctNodes::default();
        nodes.add(NodeId(1), &tight).expect("fits");
        nodes.add(NodeId(2), &tight).expect("fits");
        nodes
            .add(NodeId(1), &tight)
            .expect("seen: nothing more to charge");
        assert!(nodes.add(NodeId(3), &tight).is_err(), "past the budget");
        assert_eq!(tight.held(), nodes.charged());
        tight.release(nodes.charged());
        assert_eq!(tight.held(), 0);
    }

    /// A node value given back is reused, reset to the new node, only
    /// when nothing else holds it: a row that kept it keeps what it saw.
    #[test]
    fn a_node_value_is_reused_only_when_nothing_else_holds_it() {
        let mut spares = Spares::default();
        let mut a = spares.node(NodeId(1));
        let first = Arc::as_ptr(node_of(&a));
        if let Value::Node(n) = &mut a {
            Arc::get_mut(n)
                .expect("unique")
                .labels
                .push("Person".into());
        }
        spares.give_back(Some(a));
        let b = spares.node(NodeId(2));
        assert_eq!(Arc::as_ptr(node_of(&b)), first);
        assert_eq!(node_of(&b).id, 2);
        assert!(node_of(&b).labels.is_empty(), "reset, not only renumbered");
        let held = b.clone();
        spares.give_back(Some(b));
        spares.give_back(Some(Value::Int(1)));
        spares.give_back(None);
        let c = spares.node(NodeId(3));
        assert_ne!(Arc::as_ptr(node_of(&c)), first);
        assert_eq!((node_of(&held).id, node_of(&c).id), (2, 3));
    }
}
