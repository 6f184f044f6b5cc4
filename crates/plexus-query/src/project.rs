//! The projection operator of WITH and RETURN: items, grouping and
//! aggregation, DISTINCT, ORDER BY, SKIP, LIMIT and WITH's WHERE.
//!
//! Rows are added one at a time. Aggregates fold as rows arrive, so a group
//! holds its running state (a count, a sum, the best value so far), not its
//! rows; only `collect`, the percentiles and the deviations keep values.
//! A projection that neither aggregates, deduplicates nor sorts never holds
//! a row: the pipeline calls [`project_row`] on each row as it passes.

use crate::error::QueryError;
use crate::eval::{eval, free_of, is_aggregate, order, visit_aggregates, Ctx, Row};
use crate::exec::RowSet;
use crate::limits::{row_size, value_size};
use crate::row::Name;
use plexus_common::Value;
use plexus_cypher::{Expr, ExprKind, Projection};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use top::TopN;

mod top;

pub(crate) fn has_aggregate(e: &Expr) -> bool {
    let mut found = false;
    visit_aggregates(e, &mut |_| found = true);
    found
}

/// Whether rows can pass this projection one by one (SKIP and LIMIT are
/// counted by the pipeline).
pub(crate) fn streams(p: &Projection) -> bool {
    !p.distinct && p.order_by.is_empty() && !p.items.iter().any(|i| has_aggregate(&i.expr))
}

/// Whether a projection gives the same result when each distinct input row
/// comes once instead of repeated: DISTINCT, or aggregating, and every
/// aggregate is `count(DISTINCT …)`, `min` or `max`. Then the MATCH before
/// it may skip repeats (`pattern::match_metered` with `distinct`). Aggregates whose result
/// depends on how many rows came (`count(*)`, `sum`) or on their order
/// (`collect`, even DISTINCT) do not qualify.
pub(crate) fn ignores_repeats(p: &Projection) -> bool {
    let mut aggregates = 0;
    let mut insensitive = true;
    let mut check = |e: &Expr| {
        aggregates += 1;
        insensitive &= match &e.kind {
            ExprKind::Call { name, distinct, .. } => {
                let name = name.to_ascii_lowercase();
                name == "min" || name == "max" || (*distinct && name == "count")
            }
            _ => false,
        };
    };
    for e in p
        .items
        .iter()
        .map(|i| &i.expr)
        .chain(p.order_by.iter().map(|o| &o.expr))
    {
        visit_aggregates(e, &mut check);
    }
    // A repeated row projects to the same row only when every expression
    // gives the same value each time: `RETURN DISTINCT b, rand()` keeps a
    // row per match.
    let repeatable = p
        .items
        .iter()
        .map(|i| &i.expr)
        .chain(p.order_by.iter().map(|o| &o.expr))
        .chain(p.where_.as_ref())
        .all(crate::eval::repeatable);
    insensitive && repeatable && (aggregates > 0 || p.distinct)
}

/// The names of a projection's items: the alias, a bare variable's name
/// (without the backticks that may quote it), else the expression's text;
/// shared, as every projected row binds them.
pub(crate) fn item_names(p: &Projection) -> Vec<Name> {
    p.items
        .iter()
        .map(|i| match (&i.alias, &i.expr.kind) {
            (Some(a), _) => Name::from(a.as_str()),
            (None, plexus_cypher::ExprKind::Var(v)) => Name::from(v.as_str()),
            (None, _) => Name::from(i.text.as_str()),
        })
        .collect()
}

/// The output columns: with `*`, the variables of the first row (sorted),
/// then the items.
pub(crate) fn columns(
    p: &Projection,
    names: &[Name],
    first: Option<&Row>,
) -> Result<Vec<String>, QueryError> {
    let mut columns: Vec<String> = Vec::with_capacity(names.len());
    if p.star {
        let mut vars: Vec<String> = first
            .map(|r| r.keys().map(|k| k.to_string()).collect())
            .unwrap_or_else(|| p.star_scope.clone());
        vars.sort();
        columns.extend(vars);
    }
    for n in names {
        if columns.iter().any(|c| **c == **n) && !p.star {
            return Err(QueryError::Semantic {
                code: "ColumnNameConflict",
                message: format!("column `{n}` appears twice"),
            });
        }
        // From the `str`, not through `Display` (a formatter per column
        // per query).
        columns.push(String::from(&**n));
    }
    Ok(columns)
}

/// One row through a projection that does not aggregate: its items (and
/// with `*` its variables).
pub(crate) fn project_row(
    p: &Projection,
    names: &[Name],
    row: &Row,
    ctx: &Ctx<'_>,
) -> Result<Row, QueryError> {
    project_row_given(p, names, row, std::iter::empty(), ctx)
}

/// [`project_row`] with the values of some items (by index, ascending)
/// given instead of evaluated.
fn project_row_given(
    p: &Projection,
    names: &[Name],
    row: &Row,
    given: impl IntoIterator<Item = (usize, Value)>,
    ctx: &Ctx<'_>,
) -> Result<Row, QueryError> {
    let mut given = given.into_iter().peekable();
    let mut o = match p.star {
        true => row.clone_with_room(p.items.len()),
        false => Row::with_capacity(p.items.len()),
    };
    for (i, (item, name)) in p.items.iter().zip(names).enumerate() {
        let v = match given.next_if(|(g, _)| *g == i) {
            Some((_, v)) => v,
            None => eval(&item.expr, row, ctx)?,
        };
        o.insert(name, v);
    }
    Ok(o)
}

/// The variables a projection's WHERE reads (`None`: it may read any, as
/// a pattern or a subquery may), found once per projection: walking the
/// expression for every row took as long as evaluating it.
pub(crate) struct WhereReads(Option<Vec<String>>);

impl WhereReads {
    pub(crate) fn new(p: &Projection) -> WhereReads {
        WhereReads(p.where_.as_ref().and_then(crate::eval::vars_read))
    }

    /// Whether the WHERE reads only variables `out` binds.
    fn within(&self, out: &Row) -> bool {
        self.0
            .as_ref()
            .is_some_and(|vs| vs.iter().all(|v| out.contains_key(v)))
    }
}

/// WITH ... WHERE: sees the incoming variables too, unless the projection
/// aggregates or is DISTINCT (then `input` is `None`). `reads` is
/// [`WhereReads::new`] of `p`.
pub(crate) fn where_holds(
    p: &Projection,
    reads: &WhereReads,
    out: &Row,
    input: Option<&Row>,
    ctx: &Ctx<'_>,
) -> Result<bool, QueryError> {
    let Some(w) = &p.where_ else {
        return Ok(true);
    };
    // The input row is in scope only for what the output does not bind
    // (`WITH a WHERE b.x = 1`); a WHERE over the output alone reads it as
    // it is, without merging the two rows.
    let v = match input {
        Some(r) if !p.distinct && !reads.within(out) => {
            let mut scope = r.clone();
            scope.extend(out.iter().map(|(k, v)| (k.clone(), v.clone())));
            eval(w, &scope, ctx)?
        }
        _ => eval(w, out, ctx)?,
    };
    Ok(v == Value::Bool(true))
}

/// SKIP or LIMIT's count, evaluated once.
pub(crate) fn bound(
    e: &Option<Expr>,
    what: &str,
    ctx: &Ctx<'_>,
) -> Result<Option<usize>, QueryError> {
    match e {
        None => Ok(None),
        Some(x) => match eval(x, &Row::new(), ctx)? {
            Value::Int(i) if i >= 0 => Ok(Some(usize::try_from(i).unwrap_or(usize::MAX))),
            // openCypher files a bad SKIP or LIMIT under SyntaxError even
            // when a parameter brings it at run time.
            Value::Int(_) => Err(QueryError::Compile {
                code: "NegativeIntegerArgument",
                message: format!("{what} must not be negative"),
            }),
            v => Err(QueryError::Compile {
                code: "InvalidArgumentType",
                message: format!("{what} takes an integer, not {}", v.value_type()),
            }),
        },
    }
}

/// A group of an aggregating projection.
struct Group<'p> {
    key: Vec<Value>,
    /// The group's first row: non-aggregate parts of an item that mixes
    /// both are evaluated on it.
    first: Row,
    states: Vec<Agg<'p>>,
}

/// A projection's output: its columns and rows.
pub(crate) type Projected = (Vec<String>, Vec<Row>);

/// Collects the rows of a projection that must see them all (aggregation,
/// DISTINCT, ORDER BY) and produces its output at the end.
pub(crate) struct Projector<'p> {
    p: &'p Projection,
    names: Vec<Name>,
    columns: Option<Vec<String>>,
    /// Indexes of the items without aggregates: the grouping key.
    keys: Vec<usize>,
    /// Every aggregate call of the items, in order.
    calls: Vec<&'p Expr>,
    aggregating: bool,
    groups: Vec<Group<'p>>,
    group_set: RowSet,
    /// Without aggregation: each output row, with its input row when ORDER
    /// BY or WHERE may read it.
    rows: Vec<(Row, Option<Row>)>,
    keep_input: bool,
    /// Whether ORDER BY or WHERE may read an input variable, by name: only
    /// those are kept with each row, not (say) a long list the row also
    /// carries.
    reads: FxHashMap<Name, bool>,
    /// Whether ORDER BY may read an input variable, by name: a top-k's
    /// sort keys are evaluated over those alone, and the rest of a row is
    /// copied only when the row is kept.
    order_reads: FxHashMap<Name, bool>,
    /// ORDER BY … LIMIT without aggregation or DISTINCT: the best rows,
    /// projected at the end (`top.rs`); decided at the first row, when
    /// the LIMIT's parameters can be read.
    top: Option<TopN<'p>>,
    top_decided: bool,
    /// The items ORDER BY reads by their names (aliases), for the keys of
    /// rows not projected yet.
    order_items: Vec<usize>,
    /// Bytes taken from the query's memory budget.
    charged: usize,
    where_reads: WhereReads,
}

impl<'p> Projector<'p> {
    pub(crate) fn new(p: &'p Projection) -> Projector<'p> {
        let mut calls = Vec::new();
        for item in &p.items {
            visit_aggregates(&item.expr, &mut |e| calls.push(e));
        }
        // ORDER BY may aggregate too, when the items do: `RETURN n.division,
        // max(n.age) ORDER BY max(n.age)` folds its own aggregates per group.
        if !calls.is_empty() {
            for s in &p.order_by {
                visit_aggregates(&s.expr, &mut |e| calls.push(e));
            }
        }
        Projector {
            p,
            names: item_names(p),
            columns: None,
            keys: (0..p.items.len())
                .filter(|i| !has_aggregate(&p.items[*i].expr))
                .collect(),
            aggregating: !calls.is_empty(),
            calls,
            groups: Vec::new(),
            group_set: RowSet::default(),
            rows: Vec::new(),
            keep_input: !p.order_by.is_empty() || p.where_.is_some(),
            reads: FxHashMap::default(),
            order_reads: FxHashMap::default(),
            top: None,
            top_decided: false,
            order_items: {
                let names = item_names(p);
                (0..p.items.len())
                    .filter(|i| p.order_by.iter().any(|s| !free_of(&s.expr, &names[*i])))
                    .collect()
            },
            charged: 0,
            where_reads: WhereReads::new(p),
        }
    }

    fn charge(&mut self, bytes: usize, ctx: &Ctx<'_>) -> Result<(), QueryError> {
        self.charged = self.charged.saturating_add(bytes);
        ctx.guard.charge(bytes)
    }

    pub(crate) fn add(&mut self, row: &Row, ctx: &Ctx<'_>) -> Result<(), QueryError> {
        self.add_times(row, 1, ctx)
    }

    /// Adds `row` as if it came `times` times: once to its group, and
    /// `times` times to each aggregate (`Agg::add_times`). An aggregating
    /// projection only: the grouped count of `exec/group_count.rs` adds one
    /// row per value of a property's column, with the nodes holding it.
    pub(crate) fn add_times(
        &mut self,
        row: &Row,
        times: u64,
        ctx: &Ctx<'_>,
    ) -> Result<(), QueryError> {
        if self.columns.is_none() {
            self.columns = Some(columns(self.p, &self.names, Some(row))?);
        }
        if !self.aggregating {
            debug_assert_eq!(times, 1, "only aggregates count a row more than once");
            if !self.top_decided {
                self.top_decided = true;
                self.top = self.top_n(ctx)?;
            }
            if self.top.is_some() {
                return self.rank(row, ctx);
            }
            let o = project_row(self.p, &self.names, row, ctx)?;
            let input = self.keep_input.then(|| self.what_order_reads(row));
            let bytes = row_size(&o) + input.as_ref().map_or(0, row_size);
            self.rows.push((o, input));
            return self.charge(bytes, ctx);
        }
        let key = self
            .keys
            .iter()
            .map(|i| eval(&self.p.items[*i].expr, row, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let groups = &self.groups;
        // Without grouping keys there is one group: no lookup per row.
        let found = if key.is_empty() && !groups.is_empty() {
            Some(0)
        } else {
            self.group_set
                .find_or_add(&key, groups.len(), |i| &groups[i].key)
        };
        let g = match found {
            Some(g) => g,
            None => {
                let first = self.what_order_reads(row);
                let bytes = key.iter().map(value_size).sum::<usize>() + row_size(&first);
                self.groups.push(Group {
                    key,
                    first,
                    states: self.calls.iter().map(|c| Agg::new(c)).collect(),
                });
                self.charge(bytes, ctx)?;
                self.groups.len() - 1
            }
        };
        let mut grew = 0;
        for s in &mut self.groups[g].states {
            grew += s.add_times(row, times, ctx)?;
        }
        // The pipeline checked the guard for this row already.
        if grew == 0 {
            return Ok(());
        }
        self.charge(grew, ctx)
    }

    /// A top-k of `skip + limit` rows, when this projection is ORDER BY …
    /// LIMIT without aggregation, DISTINCT or `*`.
    fn top_n(&self, ctx: &Ctx<'_>) -> Result<Option<TopN<'p>>, QueryError> {
        let p = self.p;
        if p.order_by.is_empty() || p.distinct || p.star {
            return Ok(None);
        }
        let Some(limit) = bound(&p.limit, "LIMIT", ctx)? else {
            return Ok(None);
        };
        let skip = bound(&p.skip, "SKIP", ctx)?.unwrap_or(0);
        Ok(Some(TopN::new(&p.order_by, skip.saturating_add(limit))))
    }

    /// A row for the top-k: its sort keys from its input row and the items
    /// ORDER BY names, kept (input and those items' values) if it is among
    /// the best so far. Keys are evaluated one at a time: a row whose first
    /// keys already rank it below the worst kept is dropped without the
    /// rest (IC9's `message.id` is read only for a tie on the date). A
    /// later key that would fail on such a row is not evaluated, as no
    /// order depends on it.
    fn rank(&mut self, row: &Row, ctx: &Ctx<'_>) -> Result<(), QueryError> {
        let p = self.p;
        let sees = self.order_scope(row, ctx)?;
        let Some(top) = self.top.as_ref() else {
            return Ok(());
        };
        let mut keys = Vec::with_capacity(p.order_by.len());
        for s in &p.order_by {
            keys.push(eval(&s.expr, &sees, ctx)?);
            if top.loses(&keys) {
                return Ok(());
            }
        }
        if !top.wants(&keys) {
            return Ok(());
        }
        // The items ORDER BY read are projected as the keys saw them (a
        // `rand()` evaluated again would no longer be in order).
        let items: Vec<Value> = self
            .order_items
            .iter()
            .map(|i| sees.get(&self.names[*i]).cloned().unwrap_or(Value::Null))
            .collect();
        drop(sees);
        let input = self.what_order_reads(row);
        let Some(top) = self.top.as_mut() else {
            return Ok(());
        };
        let size = |r: &top::Ranked<'_>| {
            r.keys.iter().chain(&r.items).map(value_size).sum::<usize>() + row_size(&r.input)
        };
        let ranked = top.rank(keys, items, input);
        let bytes = size(&ranked);
        if let Some(out) = top.push(ranked) {
            let freed = size(&out);
            self.charged = self.charged.saturating_sub(freed);
            ctx.guard.release(freed);
        }
        self.charge(bytes, ctx)
    }

    /// What a top-k's keys see: the variables ORDER BY reads, shadowed by
    /// the aliases of the items it names, as in the full sort.
    fn order_scope(&mut self, row: &Row, ctx: &Ctx<'_>) -> Result<Row, QueryError> {
        let p = self.p;
        let mut sees = Row::new();
        for (k, v) in row {
            let reads = match self.order_reads.get(&**k) {
                Some(r) => *r,
                None => {
                    let r = !p.order_by.iter().all(|s| free_of(&s.expr, k));
                    self.order_reads.insert(k.clone(), r);
                    r
                }
            };
            if reads {
                sees.insert(k, v.clone());
            }
        }
        for i in &self.order_items {
            let v = eval(&p.items[*i].expr, row, ctx)?;
            sees.insert(&self.names[*i], v);
        }
        Ok(sees)
    }

    /// The part of an input row that ORDER BY or WHERE may read — and the
    /// items too, for rows a top-k projects later; of an aggregating
    /// projection's group, the first row's part that ORDER BY and the
    /// aggregating items may read (a grouping key is evaluated on each row
    /// as it comes, and a row also carries what the query no longer reads:
    /// IC12's list of 2,000 tag ids was copied into every group).
    /// Conservatively: a variable is dropped only when no expression can
    /// read it (`eval::free_of`).
    fn what_order_reads(&mut self, row: &Row) -> Row {
        let p = self.p;
        let items_later = self.top.is_some();
        let aggregating = self.aggregating;
        let mut kept = Row::with_capacity(row.iter().len());
        for (k, v) in row {
            let reads = match self.reads.get(&**k) {
                Some(r) => *r,
                None => {
                    let item_free = |e: &Expr| match aggregating {
                        true => !has_aggregate(e) || free_of(e, k),
                        false => !items_later || free_of(e, k),
                    };
                    let free = p.order_by.iter().all(|s| free_of(&s.expr, k))
                        && (aggregating || p.where_.iter().all(|w| free_of(w, k)))
                        && p.items.iter().all(|i| item_free(&i.expr));
                    self.reads.insert(k.clone(), !free);
                    !free
                }
            };
            if reads {
                kept.insert(k.clone(), v.clone());
            }
        }
        kept
    }

    /// The projection's columns and rows, after every row was added.
    pub(crate) fn finish(mut self, ctx: &Ctx<'_>) -> Result<Projected, QueryError> {
        let columns = match self.columns.take() {
            Some(c) => c,
            None => columns(self.p, &self.names, None)?,
        };
        let p = self.p;
        if let Some(top) = self.top.take() {
            let skip = bound(&p.skip, "SKIP", ctx)?.unwrap_or(0);
            let mut rows = Vec::new();
            for r in top.into_sorted().into_iter().skip(skip) {
                ctx.guard.check()?;
                let given = self.order_items.iter().copied().zip(r.items);
                let o = project_row_given(p, &self.names, &r.input, given, ctx)?;
                if where_holds(p, &self.where_reads, &o, Some(&r.input), ctx)? {
                    rows.push(o);
                }
            }
            ctx.guard.release(self.charged);
            return Ok((columns, rows));
        }
        let mut out = std::mem::take(&mut self.rows);
        if self.aggregating {
            if self.groups.is_empty() && self.keys.is_empty() {
                self.groups.push(Group {
                    key: vec![],
                    first: Row::new(),
                    states: self.calls.iter().map(|c| Agg::new(c)).collect(),
                });
            }
            let mut keyed = Vec::with_capacity(self.groups.len());
            for g in std::mem::take(&mut self.groups) {
                let (o, keys) = self.group_row(g, ctx)?;
                keyed.push((keys, o));
            }
            if p.distinct {
                keyed = distinct_by(keyed, &columns, |(_, o)| o);
            }
            if !p.order_by.is_empty() {
                sort_keyed(&mut keyed, p);
            }
            out = keyed.into_iter().map(|(_, o)| (o, None)).collect();
        } else {
            if p.distinct {
                out = distinct_by(out, &columns, |(o, _)| o);
            }
            if !p.order_by.is_empty() {
                out = sort(out, p, ctx)?;
            }
        }
        let skip = bound(&p.skip, "SKIP", ctx)?.unwrap_or(0);
        let limit = bound(&p.limit, "LIMIT", ctx)?.unwrap_or(usize::MAX);
        // Sized for every row passing (they are built already: the room
        // costs no more than the growth would).
        let mut rows = Vec::with_capacity(out.len().saturating_sub(skip).min(limit));
        for (o, r) in out.into_iter().skip(skip).take(limit) {
            ctx.guard.check()?;
            if where_holds(p, &self.where_reads, &o, r.as_ref(), ctx)? {
                rows.push(o);
            }
        }
        ctx.guard.release(self.charged);
        Ok((columns, rows))
    }

    /// The output row of one group — its key values and the aggregates'
    /// results, with items that mix both evaluated on the group's first row —
    /// and its ORDER BY keys, evaluated over the output row, the group's
    /// first row (grouping keys are the same on every row of a group) and
    /// the group's aggregates.
    fn group_row(&self, g: Group<'_>, ctx: &Ctx<'_>) -> Result<(Row, Vec<Value>), QueryError> {
        let mut aggs = FxHashMap::default();
        for (call, state) in self.calls.iter().zip(g.states) {
            aggs.insert(*call as *const Expr as usize, state.finish(&g.first, ctx)?);
        }
        let actx = Ctx {
            params: ctx.params,
            graph: ctx.graph,
            aggregates: Some(&aggs),
            guard: ctx.guard,
            adjacent: ctx.adjacent,
            starts: ctx.starts,
            by_name: ctx.by_name,
        };
        let mut o = Row::with_capacity(self.p.items.len());
        let mut key = g.key.into_iter();
        for (i, (item, name)) in self.p.items.iter().zip(&self.names).enumerate() {
            let v = if self.keys.contains(&i) {
                key.next().unwrap_or(Value::Null)
            } else {
                eval(&item.expr, &g.first, &actx)?
            };
            o.insert(name.clone(), v);
        }
        let mut keys = Vec::with_capacity(self.p.order_by.len());
        if !self.p.order_by.is_empty() {
            let mut scope = if self.p.distinct {
                Row::with_capacity(o.iter().len())
            } else {
                g.first.clone_with_room(o.iter().len())
            };
            scope.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
            for s in &self.p.order_by {
                keys.push(eval(&s.expr, &scope, &actx)?);
            }
        }
        Ok((o, keys))
    }
}

/// DISTINCT: the first of each set of rows equal on `columns`; `row` finds
/// the output row in what is kept alongside it.
fn distinct_by<T>(items: Vec<T>, columns: &[String], row: impl Fn(&T) -> &Row) -> Vec<T> {
    let mut kept = Vec::new();
    let mut kept_vals: Vec<Vec<Value>> = Vec::new();
    let mut set = RowSet::default();
    for item in items {
        let o = row(&item);
        let vals: Vec<Value> = columns
            .iter()
            .map(|c| o.get(c).cloned().unwrap_or(Value::Null))
            .collect();
        if set
            .find_or_add(&vals, kept.len(), |i| &kept_vals[i])
            .is_none()
        {
            kept_vals.push(vals);
            kept.push(item);
        }
    }
    kept
}

/// Two rows' sort keys compared in ORDER BY's directions.
fn compare_keys(by: &[plexus_cypher::SortItem], a: &[Value], b: &[Value]) -> Ordering {
    for ((s, a), b) in by.iter().zip(a).zip(b) {
        let o = order(a, b);
        let o = if s.descending { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Sorts rows by keys evaluated beforehand, in ORDER BY's directions.
fn sort_keyed<T>(rows: &mut [(Vec<Value>, T)], p: &Projection) {
    rows.sort_by(|a, b| compare_keys(&p.order_by, &a.0, &b.0));
}

/// ORDER BY: keys evaluated once per row, over the output row and (unless
/// DISTINCT) the input row it came from.
fn sort(
    out: Vec<(Row, Option<Row>)>,
    p: &Projection,
    ctx: &Ctx<'_>,
) -> Result<Vec<(Row, Option<Row>)>, QueryError> {
    let mut keyed = Vec::with_capacity(out.len());
    for (o, r) in out {
        ctx.guard.check()?;
        let mut scope = match &r {
            Some(r) if !p.distinct => r.clone_with_room(o.iter().len()),
            _ => Row::with_capacity(o.iter().len()),
        };
        scope.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
        let keys = p
            .order_by
            .iter()
            .map(|s| eval(&s.expr, &scope, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        keyed.push((keys, (o, r)));
    }
    sort_keyed(&mut keyed, p);
    Ok(keyed.into_iter().map(|(_, out)| out).collect())
}

/// Projects materialised rows (the path of queries that write).
pub(crate) fn project(
    rows: &[Row],
    p: &Projection,
    ctx: &Ctx<'_>,
) -> Result<(Vec<String>, Vec<Row>), QueryError> {
    let mut pr = Projector::new(p);
    for r in rows {
        ctx.guard.check()?;
        pr.add(r, ctx)?;
    }
    pr.finish(ctx)
}

/// The running state of one aggregate call in one group.
enum Fold {
    Count(i64),
    /// Integers are summed exactly (i128 cannot overflow from i64 terms in
    /// any feasible count); a float makes the sum a float.
    Sum {
        ints: bool,
        int: i128,
        float: f64,
    },
    Avg {
        sum: f64,
        n: u64,
    },
    Best(Option<Value>),
    /// `collect`, the percentiles and the deviations need every value.
    Values(Vec<Value>),
}

struct Agg<'p> {
    call: &'p Expr,
    name: String,
    /// `None` for `count(*)`.
    arg: Option<&'p Expr>,
    /// For DISTINCT: the values seen.
    seen: Option<(RowSet, Vec<Value>)>,
    fold: Fold,
}

impl<'p> Agg<'p> {
    fn new(call: &'p Expr) -> Agg<'p> {
        let (name, distinct, arg) = match &call.kind {
            ExprKind::Call {
                name,
                distinct,
                args,
            } => (name.to_ascii_lowercase(), *distinct, args.first()),
            _ => ("count".to_string(), false, None),
        };
        debug_assert!(is_aggregate(call));
        let fold = match name.as_str() {
            "count" => Fold::Count(0),
            "sum" => Fold::Sum {
                ints: true,
                int: 0,
                float: 0.0,
            },
            "avg" => Fold::Avg { sum: 0.0, n: 0 },
            "min" | "max" => Fold::Best(None),
            _ => Fold::Values(Vec::new()),
        };
        Agg {
            call,
            name,
            arg,
            seen: distinct.then(|| (RowSet::default(), Vec::new())),
            fold,
        }
    }

    /// Folds `row` in `times` times; returns the bytes the state grew by.
    /// A count adds `times` at once; a DISTINCT aggregate, `min` and `max`
    /// fold it once, which is the same; the others fold it `times` times
    /// (a float sum rounds at each addition).
    fn add_times(&mut self, row: &Row, times: u64, ctx: &Ctx<'_>) -> Result<usize, QueryError> {
        let once = times == 1 || self.seen.is_some() || matches!(self.fold, Fold::Best(_));
        if once {
            return self.add(row, ctx);
        }
        if let Fold::Count(_) = self.fold {
            let counted = match self.arg {
                // `count()` without `*`: the error `add` gives.
                None if !matches!(self.call.kind, ExprKind::CountStar) => {
                    return self.add(row, ctx)
                }
                None => true,
                Some(arg) => !eval(arg, row, ctx)?.is_null(),
            };
            if let (true, Fold::Count(n)) = (counted, &mut self.fold) {
                *n = n.saturating_add(i64::try_from(times).unwrap_or(i64::MAX));
            }
            return Ok(0);
        }
        let mut grew = 0;
        for _ in 0..times {
            ctx.guard.check()?;
            grew += self.add(row, ctx)?;
        }
        Ok(grew)
    }

    /// Folds one row in; returns the bytes the state grew by.
    fn add(&mut self, row: &Row, ctx: &Ctx<'_>) -> Result<usize, QueryError> {
        let v = match self.arg {
            None => {
                if matches!(self.call.kind, ExprKind::CountStar) {
                    if let Fold::Count(n) = &mut self.fold {
                        *n += 1;
                    }
                    return Ok(0);
                }
                return Err(QueryError::Semantic {
                    code: "InvalidNumberOfArguments",
                    message: format!("{}() needs an argument", self.name),
                });
            }
            Some(arg) => eval(arg, row, ctx)?,
        };
        if v.is_null() {
            return Ok(0);
        }
        let mut grew = 0;
        if let Some((set, vals)) = &mut self.seen {
            let one = std::slice::from_ref(&v);
            if set
                .find_or_add(one, vals.len(), |i| std::slice::from_ref(&vals[i]))
                .is_some()
            {
                return Ok(0);
            }
            grew += value_size(&v);
            vals.push(v.clone());
        }
        let number = |v: &Value| number(&self.name, v);
        match &mut self.fold {
            Fold::Count(n) => *n += 1,
            Fold::Sum { ints, int, float } => {
                *float += number(&v)?;
                match v {
                    Value::Int(i) => *int += i128::from(i),
                    _ => *ints = false,
                }
            }
            Fold::Avg { sum, n } => {
                *sum += number(&v)?;
                *n += 1;
            }
            Fold::Best(best) => {
                let take = match best {
                    None => true,
                    Some(b) => {
                        let o = order(&v, b);
                        if self.name == "min" {
                            o == Ordering::Less
                        } else {
                            o == Ordering::Greater
                        }
                    }
                };
                if take {
                    *best = Some(v);
                }
            }
            Fold::Values(vals) => {
                grew += value_size(&v);
                vals.push(v);
            }
        }
        Ok(grew)
    }

    fn finish(self, first: &Row, ctx: &Ctx<'_>) -> Result<Value, QueryError> {
        Ok(match self.fold {
            Fold::Count(n) => Value::Int(n),
            Fold::Sum {
                ints: true, int, ..
            } => Value::Int(
                i64::try_from(int)
                    .map_err(|_| QueryError::Arithmetic("integer overflow".into()))?,
            ),
            Fold::Sum { float, .. } => Value::Float(float),
            Fold::Avg { n: 0, .. } => Value::Null,
            Fold::Avg { sum, n } => Value::Float(sum / n as f64),
            Fold::Best(b) => b.unwrap_or(Value::Null),
            Fold::Values(vals) => reduce(&self.name, self.call, vals, first, ctx)?,
        })
    }
}

/// The aggregates that need all their values: `collect`, `stdev`,
/// `stdevp`, `percentileCont` and `percentileDisc`.
fn reduce(
    name: &str,
    call: &Expr,
    vals: Vec<Value>,
    first: &Row,
    ctx: &Ctx<'_>,
) -> Result<Value, QueryError> {
    Ok(match name {
        "collect" => crate::eval::shallow(Value::List(vals))?,
        "stdev" | "stdevp" => {
            let n = numbers(name, &vals)?;
            let k = n.len() as f64;
            if n.len() < 2 && name == "stdev" || n.is_empty() {
                Value::Float(0.0)
            } else {
                let mean = n.iter().sum::<f64>() / k;
                let ss: f64 = n.iter().map(|x| (x - mean).powi(2)).sum();
                Value::Float((ss / if name == "stdev" { k - 1.0 } else { k }).sqrt())
            }
        }
        "percentilecont" | "percentiledisc" => percentile(name, call, vals, first, ctx)?,
        _ => return Err(QueryError::Unsupported(format!("aggregation {name}()"))),
    })
}

/// A value of a numeric aggregate as a float; anything else is a type error.
fn number(name: &str, v: &Value) -> Result<f64, QueryError> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::Float(f) => Ok(*f),
        other => Err(QueryError::type_error(format!(
            "{name}() takes numbers, not {}",
            other.value_type()
        ))),
    }
}

fn numbers(name: &str, vals: &[Value]) -> Result<Vec<f64>, QueryError> {
    vals.iter().map(|v| number(name, v)).collect()
}

fn percentile(
    name: &str,
    call: &Expr,
    vals: Vec<Value>,
    first: &Row,
    ctx: &Ctx<'_>,
) -> Result<Value, QueryError> {
    let ExprKind::Call { args, .. } = &call.kind else {
        return Ok(Value::Null);
    };
    let pe = args.get(1).ok_or_else(|| QueryError::Semantic {
        code: "InvalidNumberOfArguments",
        message: format!("{name}() takes a value and a percentile"),
    })?;
    let p = match eval(pe, first, ctx)? {
        Value::Int(i) => i as f64,
        Value::Float(f) => f,
        other => {
            return Err(QueryError::type_error(format!(
                "the percentile must be a number, not {}",
                other.value_type()
            )))
        }
    };
    if !(0.0..=1.0).contains(&p) {
        return Err(QueryError::Argument {
            code: "NumberOutOfRange",
            message: format!("the percentile must be between 0.0 and 1.0, not {p}"),
        });
    }
    let mut n = numbers(name, &vals)?;
    if n.is_empty() {
        return Ok(Value::Null);
    }
    let mut order_idx: Vec<usize> = (0..n.len()).collect();
    order_idx.sort_by(|a, b| n[*a].total_cmp(&n[*b]));
    Ok(if name == "percentiledisc" {
        let k = if p == 0.0 {
            0
        } else {
            ((p * n.len() as f64).ceil() as usize).saturating_sub(1)
        };
        vals[order_idx[k.min(n.len() - 1)]].clone()
    } else {
        n.sort_by(f64::total_cmp);
        let pos = p * (n.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        Value::Float(n[lo] + (n[hi] - n[lo]) * (pos - lo as f64))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{CancelHandle, Guard, QueryLimits};
    use plexus_cypher::{parse, Clause};

    /// A group keeps of its first row what its aggregating items and ORDER
    /// BY read, and all of it when one of them may read anything.
    #[test]
    fn a_group_keeps_of_its_first_row_what_it_reads() {
        let kept = |ret: &str| {
            let p = &returned(ret);
            let row = Row::from([
                ("x".to_string(), Value::Int(1)),
                ("p".to_string(), Value::Float(0.5)),
                ("big".to_string(), Value::List(vec![Value::Int(1); 100])),
            ]);
            let first = Projector::new(p).what_order_reads(&row);
            first.keys().map(|k| k.to_string()).collect::<Vec<_>>()
        };
        assert_eq!(
            kept("RETURN x AS k, count(*) AS c ORDER BY c"),
            Vec::<String>::new()
        );
        assert_eq!(kept("RETURN x AS k, percentileDisc(x, p) AS d"), ["p", "x"]);
        assert_eq!(kept("RETURN count(*) AS c ORDER BY size(big)"), ["big"]);
        assert_eq!(
            kept("RETURN count(*) AS c ORDER BY size([y IN big | y])"),
            ["big", "p", "x"]
        );
    }

    /// The RETURN of `RETURN …` text, projected over rows with `x` bound.
    #[test]
    fn projections_that_ignore_repeated_rows() {
        let ignores = |ret: &str| ignores_repeats(&returned(ret));
        for yes in [
            "RETURN DISTINCT x",
            "RETURN count(DISTINCT x) AS n",
            "RETURN x, min(x) AS lo, max(x) AS hi",
            "RETURN DISTINCT x ORDER BY x LIMIT 2",
        ] {
            assert!(ignores(yes), "{yes}");
        }
        for no in [
            "RETURN x",
            "RETURN x ORDER BY x",
            "RETURN count(*) AS n",
            "RETURN count(x) AS n",
            "RETURN sum(DISTINCT x) + count(x) AS n",
            "RETURN collect(DISTINCT x) AS xs",
            "RETURN max(x) AS m ORDER BY count(*)",
        ] {
            assert!(!ignores(no), "{no}");
        }
    }

    /// The RETURN of `WITH 1 AS x` followed by `ret`.
    fn returned(ret: &str) -> Projection {
        let q = parse(&format!("WITH 1 AS x {ret}")).unwrap();
        let Some(Clause::Return(p)) = q.first.clauses.last() else {
            panic!("no RETURN");
        };
        p.clone()
    }

    fn project_xs(ret: &str, xs: &[Value], guard: &Guard) -> Result<Vec<Row>, QueryError> {
        let p = &returned(ret);
        let params = Default::default();
        let ctx = Ctx::without_graph(&params, guard);
        let mut pr = Projector::new(p);
        for x in xs {
            pr.add(&Row::from([("x".to_string(), x.clone())]), &ctx)?;
        }
        Ok(pr.finish(&ctx)?.1)
    }

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().map(|i| Value::Int(*i)).collect()
    }

    #[test]
    fn aggregates_fold_as_rows_arrive() {
        let g = Guard::unlimited();
        let xs = ints(&[3, 1, 2, 3]);
        let r = project_xs(
            "RETURN count(x) AS c, sum(x) AS s, min(x) AS lo, max(x) AS hi, \
             count(DISTINCT x) AS d, collect(x) AS all",
            &xs,
            &g,
        )
        .unwrap();
        assert_eq!(r.len(), 1);
        let row = &r[0];
        assert_eq!(row["c"], Value::Int(4));
        assert_eq!(row["s"], Value::Int(9));
        assert_eq!(row["lo"], Value::Int(1));
        assert_eq!(row["hi"], Value::Int(3));
        assert_eq!(row["d"], Value::Int(3));
        assert_eq!(row["all"], Value::List(xs));
    }

    #[test]
    fn sums_are_exact_until_they_leave_the_integers() {
        let g = Guard::unlimited();
        let big = ints(&[i64::MAX, 1, -1]);
        let r = project_xs("RETURN sum(x) AS s", &big, &g).unwrap();
        assert_eq!(r[0]["s"], Value::Int(i64::MAX), "no overflow on the way");
        let over = ints(&[i64::MAX, 1]);
        assert!(matches!(
            project_xs("RETURN sum(x) AS s", &over, &g),
            Err(QueryError::Arithmetic(_))
        ));
        let mixed = vec![Value::Int(1), Value::Float(0.5)];
        let r = project_xs("RETURN sum(x) AS s, avg(x) AS a", &mixed, &g).unwrap();
        assert_eq!(r[0]["s"], Value::Float(1.5));
        assert_eq!(r[0]["a"], Value::Float(0.75));
    }

    #[test]
    fn groups_sort_by_their_aggregates() {
        let g = Guard::unlimited();
        let xs = ints(&[1, 2, 2, 3, 3, 3]);
        let r = project_xs(
            "RETURN x, count(*) AS n ORDER BY count(*) DESC LIMIT 2",
            &xs,
            &g,
        )
        .unwrap();
        let got: Vec<(Value, Value)> = r.iter().map(|r| (r["x"].clone(), r["n"].clone())).collect();
        assert_eq!(
            got,
            vec![
                (Value::Int(3), Value::Int(3)),
                (Value::Int(2), Value::Int(2))
            ]
        );
    }

    #[test]
    fn what_a_projection_holds_counts_against_the_budget() {
        let tight = Guard::new(
            QueryLimits {
                timeout: None,
                memory: Some(4096),
            },
            CancelHandle::new(),
        );
        let xs = ints(&(0..1000).collect::<Vec<_>>());
        // A count holds one number, whatever it counts, and gives it back.
        assert!(project_xs("RETURN count(x) AS c", &xs, &tight).is_ok());
        assert!(project_xs("RETURN x ORDER BY x LIMIT 3", &xs[..10], &tight).is_ok());
        assert_eq!(
            tight.held(),
            0,
            "a finished projection gives its budget back"
        );
        // Sorting holds every row (a failed query drops its guard whole).
        assert!(matches!(
            project_xs("RETURN x ORDER BY x", &xs, &tight),
            Err(QueryError::ResourceLimit(_))
        ));
    }
}
