//! Streaming execution of a query part that only reads: rows are pushed
//! one at a time through UNWIND, MATCH and the projections that can pass a
//! row on its own, and collected only where a projection must see them all
//! (aggregation, DISTINCT, ORDER BY) — so a count over millions of matches
//! or of a long `range()` holds one row and one counter, and a LIMIT stops
//! the clauses before it as soon as it has its rows.
//!
//! Parts that write stay on the clause-at-a-time path in `exec.rs`: a
//! write must see every row of the clause before it (openCypher's eager
//! semantics), and a MATCH after a CREATE must see all of its writes.

use super::join::Join;
use super::{Exec, RowSink, Table};
use crate::error::QueryError;
use crate::eval::{eval, Ctx, Row};
use crate::pattern;
use crate::project::{self, Projector};
use crate::row::Name;
use plexus_common::Value;
use plexus_cypher::{Clause, Expr, ExprKind, Projection, SingleQuery};
use rustc_hash::FxHashMap;
use std::cell::{Cell, RefCell};
use std::time::Instant;

/// Whether the rows before a stage are still wanted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    More,
    Stop,
}

type Sink<'s> = dyn FnMut(&Row) -> Result<Flow, QueryError> + 's;

/// Whether a part can run as a pipeline: only clauses that read, and it
/// ends in RETURN.
pub(crate) fn streamable(q: &SingleQuery) -> bool {
    matches!(q.clauses.last(), Some(Clause::Return(_)))
        && q.clauses.iter().all(|c| {
            matches!(
                c,
                Clause::Unwind { .. } | Clause::Match { .. } | Clause::With(_) | Clause::Return(_)
            )
        })
}

/// Whether clause `c` of a stage (before a projection that ignores
/// repeats) turns each copy of a row into the same rows, so that copies
/// coming in only make copies going out: UNWIND, MATCH and a WITH without
/// SKIP or LIMIT (which count rows), each with expressions that give the
/// same value every time (`eval::repeatable`: no `rand()`). LDBC IC10's
/// `-[:KNOWS*2..2]-(friend)` passes through such a WITH to a `WITH
/// DISTINCT friend, …`: its 7,918 trails end at 1,932 nodes.
fn repeats_pass_through(c: &Clause) -> bool {
    match c {
        Clause::Unwind { expr, .. } => crate::eval::repeatable(expr),
        Clause::Match {
            patterns, where_, ..
        } => {
            where_.as_ref().is_none_or(crate::eval::repeatable)
                && patterns.iter().all(|p| {
                    let el = &p.element;
                    std::iter::once(&el.start)
                        .chain(el.chain.iter().map(|(_, n)| n))
                        .all(|n| {
                            n.props.as_deref().is_none_or(crate::eval::repeatable)
                                && n.where_.is_none()
                        })
                        && el.chain.iter().all(|(r, _)| {
                            r.props.as_deref().is_none_or(crate::eval::repeatable)
                                && r.where_.is_none()
                        })
                })
        }
        Clause::With(p) => {
            p.skip.is_none()
                && p.limit.is_none()
                && p.order_by.is_empty()
                && p.items.iter().all(|i| crate::eval::repeatable(&i.expr))
                && p.where_.as_ref().is_none_or(crate::eval::repeatable)
        }
        _ => false,
    }
}

/// For each clause of a stage, whether each distinct row it yields is
/// enough, once: the stage ends in a projection that ignores repeats and
/// every clause after it up to there treats each copy of a row alike
/// ([`repeats_pass_through`]). Decided once per stage, not per row.
/// `out` holds one flag per clause.
fn distinct_from(clauses: &[Clause], breaker: Option<&Clause>, out: &mut [bool]) {
    let mut holds = matches!(
        breaker,
        Some(Clause::With(p) | Clause::Return(p)) if project::ignores_repeats(p)
    );
    for (c, flag) in clauses.iter().zip(out.iter_mut()).rev() {
        *flag = holds;
        holds &= repeats_pass_through(c);
    }
}

/// For each clause of `part`, whether the pipeline asks it for each
/// distinct row once ([`distinct_from`], stage by stage, each ending at a
/// projection that [`breaks`] the pipeline): what [`Exec::stream_part`]
/// runs by, and EXPLAIN shows (a variable-length hop walked breadth-first).
/// None for a part that does not stream.
pub(crate) fn distinct_clauses(part: &SingleQuery) -> Vec<bool> {
    let clauses = &part.clauses;
    let mut out = vec![false; clauses.len()];
    if !streamable(part) {
        return out;
    }
    let mut start = 0;
    while start < clauses.len() {
        let end = (start..clauses.len())
            .find(|i| breaks(&clauses[*i]))
            .unwrap_or(clauses.len());
        distinct_from(&clauses[start..end], clauses.get(end), &mut out[start..end]);
        start = end + 1;
    }
    out
}

/// A projection that must see all its rows before it yields any.
fn breaks(c: &Clause) -> bool {
    match c {
        Clause::With(p) | Clause::Return(p) => !project::streams(p),
        _ => false,
    }
}

/// A streamed projection's item names and its SKIP and LIMIT, counted as
/// rows pass.
struct Window {
    names: Vec<Name>,
    where_reads: project::WhereReads,
    skip: usize,
    limit: usize,
    seen: Cell<usize>,
    passed: Cell<usize>,
}

impl Exec<'_, '_> {
    /// Runs a streamable part (see [`streamable`]) from `input`.
    pub(super) fn stream_part(
        &self,
        q: &SingleQuery,
        input: Vec<Row>,
        out: Option<&mut dyn RowSink>,
    ) -> Result<Table, QueryError> {
        let clauses = &q.clauses;
        let ctx = self.ctx();
        let mut rows = input;
        let mut start = 0;
        // A top-level part's were prepared with the plan.
        let prepared = self
            .distinct
            .get(self.part)
            .filter(|d| self.nesting == 0 && d.len() == clauses.len());
        let own;
        let distinct: &[bool] = match prepared {
            Some(d) => d,
            None => {
                own = distinct_clauses(q);
                &own
            }
        };
        loop {
            let end = (start..clauses.len())
                .find(|i| breaks(&clauses[*i]))
                .unwrap_or(clauses.len());
            let began = self.clock();
            if let Some((columns, out)) =
                self.grouped(start, &clauses[start..end], clauses.get(end), &rows, &ctx)?
            {
                // A grouped count from the property's column: the MATCH
                // found every node (with the label), the projection made `out`.
                let breaker = clauses.get(end);
                if let Some(Clause::Return(_)) = breaker {
                    return Ok(Table::of_rows(columns, out));
                }
                rows = out;
                start = end + 1;
                continue;
            }
            let windows = self.windows(&clauses[start..end], &ctx)?;
            let stage = Stage {
                clauses: &clauses[start..end],
                windows: &windows,
                distinct: &distinct[start..end],
                breaker: clauses.get(end),
                live: RefCell::default(),
                joins: (start..end)
                    .map(|c| match c == start {
                        true => RefCell::new(Join::expecting(rows.len())),
                        false => RefCell::default(),
                    })
                    .collect(),
                analyses: (start..end).map(|_| Default::default()).collect(),
                profile: began.map(|b| StageProfile::new(end - start, b)),
            };
            let Some(breaker) = clauses.get(end) else {
                // No breaker left: the last clause is a streamed RETURN.
                let Some(Clause::Return(p)) = clauses.last() else {
                    return Ok(Table {
                        columns: vec![],
                        rows: vec![],
                    });
                };
                let table = match out {
                    Some(sink) => self.stream_to_sink(&stage, rows, p, &ctx, sink),
                    None => self.stream_to_table(&stage, rows, p, &ctx),
                };
                stage.release(&ctx);
                self.record_stage(&stage, start, None);
                return table;
            };
            let (Clause::With(p) | Clause::Return(p)) = breaker else {
                unreachable!("only projections break a pipeline");
            };
            let mut pr = Projector::new(p);
            // The breaker's errors are its own, not the clause before's.
            let here = |e: QueryError| e.at(breaker.span().start);
            for r in &rows {
                let flow = self.push(&stage, 0, r, &ctx, &mut |row| {
                    pr.add(row, &ctx).map_err(here)?;
                    Ok(Flow::More)
                })?;
                if flow == Flow::Stop {
                    break;
                }
            }
            stage.release(&ctx);
            let finishing = self.clock();
            let (columns, out) = pr.finish(&ctx).map_err(here)?;
            let finished = finishing.map(|f| (out.len(), f.elapsed()));
            self.record_stage(&stage, start, finished);
            if let Clause::Return(_) = breaker {
                return Ok(Table::of_rows(columns, out));
            }
            rows = out;
            start = end + 1;
        }
    }

    /// The last stretch of a part: rows pushed through to the final,
    /// streamed RETURN and into the result table.
    fn stream_to_table(
        &self,
        stage: &Stage<'_>,
        rows: Vec<Row>,
        p: &Projection,
        ctx: &Ctx<'_>,
    ) -> Result<Table, QueryError> {
        let mut table = Collect {
            table: Table {
                columns: vec![],
                rows: vec![],
            },
            guard: ctx.guard,
        };
        table.table.columns = self.stream_rows(stage, rows, p, ctx, &mut table, false)?;
        Ok(table.table)
    }

    /// The last stretch of a top-level part, into a [`RowSink`]: each row
    /// with its entities filled in, as it passes the final RETURN.
    fn stream_to_sink(
        &self,
        stage: &Stage<'_>,
        rows: Vec<Row>,
        p: &Projection,
        ctx: &Ctx<'_>,
        sink: &mut dyn RowSink,
    ) -> Result<Table, QueryError> {
        let columns = self.stream_rows(stage, rows, p, ctx, sink, true)?;
        self.streamed.set(true);
        Ok(Table {
            columns,
            rows: vec![],
        })
    }

    /// Pushes `rows` through a stage ending in the final RETURN `p`, each
    /// result row to `sink` (its columns first, once); `hydrate` fills in
    /// entities on the way. Returns the columns.
    fn stream_rows(
        &self,
        stage: &Stage<'_>,
        rows: Vec<Row>,
        p: &Projection,
        ctx: &Ctx<'_>,
        sink: &mut dyn RowSink,
        hydrate: bool,
    ) -> Result<Vec<String>, QueryError> {
        // `p` ends the stage: its window named its items already.
        let own;
        let names: &[Name] = match stage.windows.last() {
            Some(Some(w)) => &w.names,
            _ => {
                own = project::item_names(p);
                &own
            }
        };
        let mut columns: Option<Vec<String>> = None;
        for r in &rows {
            let flow = self.push(stage, 0, r, ctx, &mut |row| {
                let cols = match &columns {
                    Some(c) => c,
                    None => {
                        let c = columns.insert(project::columns(p, names, Some(row))?);
                        sink.columns(c)?;
                        c
                    }
                };
                let mut vals: Vec<Value> = cols
                    .iter()
                    .map(|c| row.get(c).cloned().unwrap_or(Value::Null))
                    .collect();
                if let (true, Some(g)) = (hydrate, ctx.graph) {
                    for v in &mut vals {
                        crate::graph::hydrate(g, v)?;
                    }
                }
                sink.row(vals)?;
                Ok(Flow::More)
            })?;
            if flow == Flow::Stop {
                break;
            }
        }
        match columns {
            Some(c) => Ok(c),
            None => {
                let c = project::columns(p, names, None)?;
                sink.columns(&c)?;
                Ok(c)
            }
        }
    }

    fn windows(
        &self,
        clauses: &[Clause],
        ctx: &Ctx<'_>,
    ) -> Result<Vec<Option<Window>>, QueryError> {
        let window = |p: &Projection| -> Result<Window, QueryError> {
            Ok(Window {
                names: project::item_names(p),
                where_reads: project::WhereReads::new(p),
                skip: project::bound(&p.skip, "SKIP", ctx)?.unwrap_or(0),
                limit: project::bound(&p.limit, "LIMIT", ctx)?.unwrap_or(usize::MAX),
                seen: Cell::new(0),
                passed: Cell::new(0),
            })
        };
        clauses
            .iter()
            .map(|c| match c {
                Clause::With(p) | Clause::Return(p) => {
                    window(p).map(Some).map_err(|e| e.at(c.span().start))
                }
                _ => Ok(None),
            })
            .collect()
    }

    /// Pushes one row into clause `i` of a stage; what comes out goes on
    /// to the next clause, and past the last one to `sink`.
    fn push(
        &self,
        stage: &Stage<'_>,
        i: usize,
        row: &Row,
        ctx: &Ctx<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, QueryError> {
        ctx.guard.check()?;
        let mut here = || match stage.clauses.get(i) {
            None => sink(row),
            Some(clause) => self
                .push_into(stage, i, clause, row, ctx, sink)
                .map_err(|e| e.at(clause.span().start)),
        };
        match &stage.profile {
            Some(p) => p.entering(i, ctx, here),
            None => here(),
        }
    }

    /// The columns and rows of the part's first stage (`start` 0) when it is
    /// one MATCH of a grouped count and the projection ending it
    /// (`group_count.rs`), from the property's column; `None` for any other
    /// stage (EXPLAIN foresees only the first), or when no column serves.
    fn grouped(
        &self,
        start: usize,
        stage: &[Clause],
        breaker: Option<&Clause>,
        rows: &[Row],
        ctx: &Ctx<'_>,
    ) -> Result<Option<crate::project::Projected>, QueryError> {
        let ([m], Some(b @ (Clause::With(p) | Clause::Return(p))), Some(g), 0) =
            (stage, breaker, ctx.graph, start)
        else {
            return Ok(None);
        };
        let Some(shape) = super::group_count::shape_of(m, p) else {
            return Ok(None);
        };
        let began = self.clock();
        let Some(((columns, out), nodes)) =
            super::group_count::run(g, ctx, shape, rows).map_err(|e| e.at(b.span().start))?
        else {
            return Ok(None);
        };
        if let Some(began) = began {
            let nodes = usize::try_from(nodes).unwrap_or(usize::MAX);
            self.record_time(start, nodes, began.elapsed());
            self.record_time(start + 1, out.len(), std::time::Duration::ZERO);
        }
        Ok(Some((columns, out)))
    }

    /// Under PROFILE, what each clause of a stage that started at clause
    /// `start` did; `breaker`: the rows the projection ending it made and
    /// the time it took to make them from all it was given.
    fn record_stage(
        &self,
        stage: &Stage<'_>,
        start: usize,
        breaker: Option<(usize, std::time::Duration)>,
    ) {
        let Some(p) = &stage.profile else {
            return;
        };
        p.stop();
        let n = stage.clauses.len();
        for k in 0..n {
            let mut time = p.time[k].get();
            if breaker.is_none() && k + 1 == n {
                // The final RETURN: collecting its rows is its own work.
                time += p.time[n].get();
            }
            let rows = usize::try_from(p.rows[k].get()).unwrap_or(usize::MAX);
            self.record_time(start + k, rows, time);
        }
        if let Some((rows, finishing)) = breaker {
            self.record_time(start + n, rows, p.time[n].get() + finishing);
        }
    }

    /// [`Exec::push`] into `clause`, clause `i` of `stage`.
    fn push_into<'s>(
        &self,
        stage: &Stage<'s>,
        i: usize,
        clause: &'s Clause,
        row: &Row,
        ctx: &Ctx<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, QueryError> {
        match clause {
            Clause::Unwind { expr, alias, .. } => {
                self.unwind(stage, i, expr, alias, row, ctx, sink)
            }
            Clause::Match {
                optional,
                patterns,
                where_,
                ..
            } => {
                // Each match clones the row: without what nothing reads.
                let pruned = stage.prune(i, row);
                let row = pruned.as_ref().unwrap_or(row);
                let mut found = false;
                let mut flow = Flow::More;
                let distinct = stage.distinct[i];
                let mut each = |m: &Row, times: u64| -> Result<bool, QueryError> {
                    found = true;
                    let times = if distinct { 1 } else { times };
                    for _ in 0..times {
                        if self.push(stage, i + 1, m, ctx, sink)? == Flow::Stop {
                            flow = Flow::Stop;
                            return Ok(true);
                        }
                    }
                    Ok(false)
                };
                let join = &stage.joins[i];
                let hit = join.borrow_mut().lookup(clause, row, ctx, distinct)?;
                match (hit, ctx.graph) {
                    (Some(hit), _) => {
                        for (part, times) in hit.table.matches(hit.key) {
                            let mut m = row.clone();
                            m.extend(part.iter().map(|(k, v)| (k.clone(), v.clone())));
                            if each(&m, *times)? {
                                break;
                            }
                        }
                    }
                    (None, Some(g)) => {
                        let meter = pattern::Meter::new(u64::MAX);
                        let w = where_.as_ref();
                        let an =
                            stage.analyses[i].get_or_init(|| pattern::Analysis::new(patterns, w));
                        pattern::match_metered(
                            g,
                            ctx,
                            patterns,
                            w,
                            an,
                            row,
                            pattern::Want::rows(distinct),
                            &meter,
                            &mut each,
                        )?;
                        join.borrow_mut().record(meter.used());
                    }
                    (None, None) => {}
                }
                if *optional && !found {
                    let mut n = row.clone();
                    for p in patterns {
                        for v in super::pattern_vars(p) {
                            n.insert_absent(v, Value::Null);
                        }
                    }
                    return self.push(stage, i + 1, &n, ctx, sink);
                }
                Ok(flow)
            }
            Clause::With(p) | Clause::Return(p) => {
                let Some(w) = &stage.windows[i] else {
                    return Ok(Flow::More);
                };
                if w.passed.get() >= w.limit {
                    return Ok(Flow::Stop);
                }
                let o = project::project_row(p, &w.names, row, ctx)?;
                // SKIP and LIMIT count rows before WITH's WHERE filters them,
                // as the projection body comes before WHERE in the grammar.
                let seen = w.seen.get();
                w.seen.set(seen + 1);
                if seen < w.skip {
                    return Ok(Flow::More);
                }
                w.passed.set(w.passed.get() + 1);
                let flow = if project::where_holds(p, &w.where_reads, &o, Some(row), ctx)? {
                    self.push(stage, i + 1, &o, ctx, sink)?
                } else {
                    Flow::More
                };
                Ok(if w.passed.get() >= w.limit {
                    Flow::Stop
                } else {
                    flow
                })
            }
            _ => Err(QueryError::Unsupported(
                "a clause that cannot stream in a streamed part".into(),
            )),
        }
    }

    /// UNWIND: each element in turn, in one row whose alias is overwritten;
    /// `range(…)` is walked without building the list.
    #[allow(clippy::too_many_arguments)]
    fn unwind(
        &self,
        stage: &Stage<'_>,
        i: usize,
        expr: &Expr,
        alias: &str,
        row: &Row,
        ctx: &Ctx<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, QueryError> {
        // The rows it passes on need only what later clauses read (not,
        // say, the list being walked).
        let mut n = stage.prune(i + 1, row).unwrap_or_else(|| row.clone());
        let mut emit = |v: Value| -> Result<Flow, QueryError> {
            match n.get_mut(alias) {
                Some(slot) => *slot = v,
                None => {
                    n.insert(alias.to_string(), v);
                }
            }
            self.push(stage, i + 1, &n, ctx, sink)
        };
        if let Some((from, to, step)) = lazy_range(expr, row, ctx)? {
            let mut x = from;
            while (step > 0 && x <= to) || (step < 0 && x >= to) {
                if emit(Value::Int(x))? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                match x.checked_add(step) {
                    Some(next) => x = next,
                    None => break,
                }
            }
            return Ok(Flow::More);
        }
        match eval(expr, row, ctx)? {
            Value::Null => Ok(Flow::More),
            Value::List(items) => {
                for it in items {
                    if emit(it)? == Flow::Stop {
                        return Ok(Flow::Stop);
                    }
                }
                Ok(Flow::More)
            }
            v => emit(v),
        }
    }
}

/// A sink that keeps the result as a table, charging the query's memory
/// budget for each row.
struct Collect<'g> {
    table: Table,
    guard: &'g crate::limits::Guard,
}

impl RowSink for Collect<'_> {
    /// Taken from what [`Exec::stream_rows`] returns, not copied here.
    fn columns(&mut self, _: &[String]) -> Result<(), QueryError> {
        Ok(())
    }

    fn row(&mut self, row: Vec<Value>) -> Result<(), QueryError> {
        self.guard
            .charge(row.iter().map(crate::limits::value_size).sum())?;
        self.table.rows.push(row);
        Ok(())
    }
}

/// The clauses between two breakers, with their SKIP/LIMIT counters.
struct Stage<'a> {
    clauses: &'a [Clause],
    windows: &'a [Option<Window>],
    /// By clause: whether what comes after it gives the same result with
    /// each distinct row it yields once ([`distinct_from`]).
    distinct: &'a [bool],
    /// The projection that ends the stage and collects its rows, if any.
    breaker: Option<&'a Clause>,
    /// Whether a variable is read from clause `i` on: one map per clause,
    /// by name (looked up without building a key for every row).
    live: RefCell<Vec<FxHashMap<Name, bool>>>,
    /// Each MATCH's join of its rows through a table (`join.rs`), by
    /// clause.
    joins: Vec<RefCell<Join>>,
    /// Each MATCH's seeks and early conjuncts, worked out at its first row
    /// (`pattern::Analysis`), by clause.
    analyses: Vec<std::cell::OnceCell<pattern::Analysis<'a>>>,
    /// Under PROFILE: the rows each clause passed on and its time.
    profile: Option<StageProfile>,
}

/// What the clauses of a stage did under PROFILE. A row goes through the
/// clauses depth first, so each clause's own time is kept as the pattern
/// matcher keeps its steps' (`pattern::start::Taken`): at each move from
/// one clause to another, the time since the last move goes to the clause
/// left. Index `n` (one past the last clause) is the projection that ends
/// the stage, or the result's rows.
struct StageProfile {
    rows: Vec<Cell<u64>>,
    time: Vec<Cell<std::time::Duration>>,
    /// The clause working, and since when.
    clock: Cell<(usize, Instant)>,
}

impl StageProfile {
    /// For a stage of `n` clauses, whose work starts at its first clause.
    fn new(n: usize, began: Instant) -> Self {
        StageProfile {
            rows: (0..n).map(|_| Cell::new(0)).collect(),
            time: (0..=n).map(|_| Cell::default()).collect(),
            clock: Cell::new((0, began)),
        }
    }

    /// Charges the time since the last move to the clause working, and
    /// makes `to` the one working; returns the one left.
    fn switch(&self, to: usize) -> usize {
        let now = Instant::now();
        let (at, since) = self.clock.replace((to, now));
        if let Some(t) = self.time.get(at) {
            t.set(t.get() + now.saturating_duration_since(since));
        }
        at
    }

    /// The stage is done: the last stretch goes to the clause working.
    fn stop(&self) {
        self.switch(usize::MAX);
    }

    /// Runs `f`, which pushes a row into clause `i` (`n`: past the last):
    /// a row the clause before passed on, counted, and time charged to
    /// clause `i` while it works — and not to the pattern step that
    /// found the row, whose own clock stops meanwhile.
    fn entering<T>(&self, i: usize, ctx: &Ctx<'_>, f: impl FnOnce() -> T) -> T {
        if let Some(before) = i.checked_sub(1).and_then(|b| self.rows.get(b)) {
            before.set(before.get().saturating_add(1));
        }
        let step = ctx.starts.map(|t| t.borrow_mut().switch(0));
        let left = self.switch(i);
        let out = f();
        self.switch(left);
        if let (Some(t), Some(step)) = (ctx.starts, step) {
            t.borrow_mut().switch(step);
        }
        out
    }
}

impl Stage<'_> {
    /// Gives what the stage's joins hold back to the memory budget.
    fn release(&self, ctx: &Ctx<'_>) {
        for j in &self.joins {
            j.borrow_mut().release(ctx);
        }
    }

    /// `row` without the variables that neither clause `i` nor anything
    /// after it reads (`live.rs`); `None` when it needs them all.
    fn prune(&self, i: usize, row: &Row) -> Option<Row> {
        let mut live = self.live.borrow_mut();
        if live.len() <= i {
            live.resize_with(i + 1, FxHashMap::default);
        }
        let known = &mut live[i];
        let mut reads = |k: &Name| match known.get(&**k) {
            Some(r) => *r,
            None => {
                let r = super::live::read_by(self.clauses[i..].iter().chain(self.breaker), k);
                known.insert(k.clone(), r);
                r
            }
        };
        if row.keys().all(&mut reads) {
            return None;
        }
        Some(
            row.iter()
                .filter(|(k, _)| reads(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }
}

/// `range(from, to[, step])` with integer arguments, as bounds to walk;
/// `None` for any other expression (or arguments `range` would refuse,
/// which its evaluation then reports).
fn lazy_range(
    expr: &Expr,
    row: &Row,
    ctx: &Ctx<'_>,
) -> Result<Option<(i64, i64, i64)>, QueryError> {
    let ExprKind::Call { name, args, .. } = &expr.kind else {
        return Ok(None);
    };
    if !name.eq_ignore_ascii_case("range") || !(2..=3).contains(&args.len()) {
        return Ok(None);
    }
    let mut ints = Vec::with_capacity(3);
    for a in args {
        match eval(a, row, ctx)? {
            Value::Int(i) => ints.push(i),
            _ => return Ok(None),
        }
    }
    let step = ints.get(2).copied().unwrap_or(1);
    if step == 0 {
        return Ok(None);
    }
    Ok(Some((ints[0], ints[1], step)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(text: &str) -> SingleQuery {
        plexus_cypher::parse(text).unwrap().first
    }

    #[test]
    fn only_reading_parts_that_return_stream() {
        assert!(streamable(&part(
            "MATCH (n) WITH n.x AS x RETURN x LIMIT 3"
        )));
        assert!(streamable(&part("UNWIND [1, 2] AS x RETURN count(x)")));
        assert!(!streamable(&part("MATCH (n) SET n.x = 1 RETURN n")));
        assert!(!streamable(&part("CREATE (n) RETURN n")));
        assert!(!streamable(&part(
            "MATCH (n) CALL { WITH n RETURN 1 AS one } RETURN one"
        )));
    }

    #[test]
    fn projections_that_need_every_row_break_the_pipeline() {
        let q = part(
            "MATCH (n) WITH n LIMIT 5 WITH DISTINCT n.x AS x WITH x ORDER BY x RETURN count(*)",
        );
        let breaks: Vec<bool> = q.clauses.iter().map(breaks).collect();
        assert_eq!(breaks, [false, false, true, true, true]);
    }
}
